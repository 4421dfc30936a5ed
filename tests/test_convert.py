"""`pi-proto convert`: every direction, real sessions both ways, and bad input without half-written files."""

from __future__ import annotations

import json
import os
import re
import resource
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
        # An item is a TranscriptEntry object: anything else is refused, a string of ProtoJSON text too.
        (
            "number.json",
            b'[{"message": {"user": {}}}, 1]',
            r"number\.json: item 1: expected a TranscriptEntry object, got a number",
        ),
        ("null.json", b"[null]", r"null\.json: item 0: expected a TranscriptEntry object, got null"),
        ("array.json", b"[[]]", r"array\.json: item 0: expected a TranscriptEntry object, got an array"),
        (
            "text.json",
            b'["{\\"message\\": {\\"user\\": {}}}"]',
            r"text\.json: item 0: expected a TranscriptEntry object, got a string",
        ),
        # An entry that holds nothing is blamed on where it was read, not on the output.
        (
            "empty.json",
            b'[{"message": {"user": {}}}, {}]',
            r"empty\.json: item 1: TranscriptEntry: oneof 'entry' .* found none",
        ),
        ("norole.json", b'[{"message": {}}]', r"norole\.json: item 0: TranscriptEntry\.message: oneof 'role'"),
        (
            "empty.binpb",
            b"\x04\x0a\x02\x0a\x00\x00",
            r"empty\.binpb: record 1 at byte 5: TranscriptEntry: oneof 'entry'",
        ),
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


@pytest.mark.parametrize("output", ["out.jsonl", "out.json", "out.binpb"])
def test_an_entry_that_cannot_be_written_is_blamed_on_the_input_whatever_the_output(
    tmp_path: Path, output: str
) -> None:
    source = tmp_path / "in.json"
    source.write_text('[{"message": {"user": {}}}, {}]', encoding="utf-8")
    with pytest.raises(ConvertError, match=rf"^{re.escape(str(source))}: item 1: TranscriptEntry: "):
        convert(source, tmp_path / output)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in.json"]


def test_an_output_that_cannot_be_written_is_named_as_given_not_by_its_temporary_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "out.binpb"
    with pytest.raises(FileNotFoundError) as caught:
        convert(SESSION, missing)
    assert str(caught.value) == f"[Errno 2] No such file or directory: '{missing}'"
    directory = tmp_path / "directory.binpb"
    directory.mkdir()
    with pytest.raises(IsADirectoryError) as caught_directory:
        convert(SESSION, directory)
    assert str(caught_directory.value) == f"[Errno 21] Is a directory: '{directory}'"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["directory.binpb"]


def test_a_write_that_fails_midway_names_the_output_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    # A file size limit fails a write the way a full disk does; Python ignores SIGXFSZ, so write() raises.
    target = tmp_path / "out.binpb"
    target.write_bytes(b"previous")

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    failed = subprocess.run(
        [sys.executable, "-m", "pi_proto.cli", "convert", str(SESSION), str(target)],
        capture_output=True,
        text=True,
        preexec_fn=limit_file_size,
    )
    assert failed.returncode == 2, failed.stderr
    assert failed.stderr == f"pi-proto convert: [Errno 27] File too large: '{target}'\n"
    assert target.read_bytes() == b"previous"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.binpb"]


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
