"""`pi-proto convert`: every direction, real sessions both ways, and bad input without half-written files."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_proto.convert import ConvertError, convert

from .jsonstrict import same_json
from .test_pi_json import SESSION


def lines(path: Path) -> list[object]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_real_session_converts_through_every_format_and_back(tmp_path: Path) -> None:
    binary, proto_json, again, back = (tmp_path / name for name in ("s.binpb", "s.json", "again.binpb", "back.jsonl"))
    report = convert(SESSION, binary)
    assert report.kinds.total() == 1003
    assert report.input_bytes == SESSION.stat().st_size
    assert report.output_bytes == binary.stat().st_size
    convert(binary, proto_json)
    assert len(json.loads(proto_json.read_text(encoding="utf-8"))) == 1003
    convert(proto_json, again)
    assert again.read_bytes() == binary.read_bytes()
    convert(again, back)
    assert same_json(lines(back), lines(SESSION))


def test_pi_messages_one_per_line_convert_too(tmp_path: Path) -> None:
    source = tmp_path / "messages.jsonl"
    messages = [
        {"role": "user", "content": "hi", "timestamp": 1},
        {"role": "bashExecution", "command": "ls", "exitCode": 0, "timestamp": 2},
    ]
    source.write_text("\n".join(json.dumps(message) for message in messages) + "\n\n", encoding="utf-8")
    convert(source, tmp_path / "m.binpb")
    convert(tmp_path / "m.binpb", tmp_path / "back.jsonl")
    assert same_json(lines(tmp_path / "back.jsonl"), messages)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "bad.jsonl",
            b'{"role": "user", "content": []}\n{"role": "user", "content": 5}\n',
            r"bad\.jsonl:2: entry\.content",
        ),
        ("bad.jsonl", b'{"role": "user", "content": []}\n{oops\n', r"bad\.jsonl:2: not valid JSON"),
        ("bad.jsonl", b'{"id": 1}\n', r"bad\.jsonl:1: entry: neither a message"),
        ("bad.json", b'{"user": {}}', r"bad\.json: at byte 0: expected the start of an array, found '{'"),
        (
            "bad.json",
            b'[{"message": {"user": {}}}, {"message": {"user": {"timestamp": "x"}}}]',
            r"bad\.json: item 1: cannot",
        ),
        ("bad.binpb", b"\x04\x0a\x02\x0a\x00\x09", r"bad\.binpb: record 1 at byte 5: claims 9 bytes"),
        ("deep.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n", r"deep\.jsonl:1: JSON nested too deep to read"),
        ("huge.jsonl", b'{"n": ' + b"9" * 5000 + b"}\n", r"huge\.jsonl:1: .*integer string conversion"),
        ("nan.jsonl", b'{"role": "user", "content": [], "timestamp": NaN}\n', r"nan\.jsonl:1: NaN is not JSON"),
        ("deep.json", b"[" + b"[" * 100_000 + b"]" * 100_000 + b"]", r"deep\.json: item 0: JSON nested too deep"),
        ("cut.json", b'[{"message": {"user": {}}}, {"message": {"user": {"cont', r"cut\.json: item 1: not valid JSON"),
        (
            "tail.json",
            b'[{"message": {"user": {}}} {"message": {}}]',
            r"tail\.json: at byte 27: expected ',' or '\]' after",
        ),
        ("bad.txt", b"", r"bad\.txt: unknown format '\.txt'"),
    ],
)
def test_bad_input_names_where_and_leaves_no_output(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    source = tmp_path / name
    source.write_bytes(content)
    target = tmp_path / "out.binpb"
    target.write_bytes(b"previous")
    with pytest.raises(ConvertError, match=message):
        convert(source, target)
    assert target.read_bytes() == b"previous"
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([name, "out.binpb"])


def test_the_command_prints_sizes_and_fails_cleanly(tmp_path: Path) -> None:
    target = tmp_path / "s.binpb"
    done = subprocess.run(
        [sys.executable, "-m", "pi_proto.cli", "convert", str(SESSION), str(target)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert f"({SESSION.stat().st_size:,} bytes)" in done.stdout
    assert f"({target.stat().st_size:,} bytes)" in done.stdout
    assert "1003 entries (484 assistant, 448 tool_result, 55 user, 13 session_entry, 3 custom)" in done.stdout

    failed = subprocess.run(
        [sys.executable, "-m", "pi_proto.cli", "convert", str(tmp_path / "missing.jsonl"), str(target)],
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 2
    assert "missing.jsonl" in failed.stderr


def test_a_json_array_is_read_as_a_stream(tmp_path: Path) -> None:
    # Items of every size, split across reads wherever they fall, in an array laid out any way.
    items = [
        {"message": {"user": {"content": [{"text": {"text": "x" * size}}], "timestamp": str(size)}}}
        for size in range(1, 300_000, 7001)
    ]
    source = tmp_path / "many.json"
    source.write_text(" [ " + " ,\n".join(json.dumps(item) for item in items) + " ] \n", encoding="utf-8")
    convert(source, tmp_path / "many.binpb")
    convert(tmp_path / "many.binpb", tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text(encoding="utf-8")) == items
    (tmp_path / "empty.json").write_text("[]")
    convert(tmp_path / "empty.json", tmp_path / "empty.binpb")
    assert (tmp_path / "empty.binpb").read_bytes() == b""


def test_the_output_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "kept.binpb"
    target.write_bytes(b"old")
    target.chmod(0o644)
    convert(SESSION, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    previous = os.umask(0o027)
    try:
        convert(SESSION, tmp_path / "new.binpb")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.binpb").stat().st_mode) == 0o640


@pytest.mark.parametrize(("signal_number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_stops_at_once_and_leaves_the_output_as_it_was(
    tmp_path: Path, signal_number: int, code: int
) -> None:
    big = tmp_path / "big.jsonl"
    line = SESSION.read_bytes()
    with big.open("wb") as out:
        for _ in range(60):  # about 120 MB: long enough to interrupt
            out.write(line)
    target = tmp_path / "out.binpb"
    target.write_bytes(b"previous")
    command = [sys.executable, "-m", "pi_proto.cli", "convert", str(big), str(target)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(100):  # until the temporary output exists: the conversion is under way
        if any(path.name.endswith(".partial") for path in tmp_path.iterdir()):
            break
        time.sleep(0.05)
    process.send_signal(signal_number)
    started = time.monotonic()
    _, errors = process.communicate(timeout=20)
    assert time.monotonic() - started < 3
    assert process.returncode == code
    assert "Traceback" not in errors
    assert target.read_bytes() == b"previous"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["big.jsonl", "out.binpb"]
