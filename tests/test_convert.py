"""`pi-proto convert`: every direction, real sessions both ways, and bad input without half-written files."""

from __future__ import annotations

import errno
import io
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
from typing import Any, BinaryIO

import pytest

import pi_proto as pp
from pi_proto.transcripts import convert as convert_module
from pi_proto.transcripts.binpb import delimited, read_transcript
from pi_proto.transcripts.convert import ConvertError, convert

from .helpers import with_default_signals
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
    report = convert(source, tmp_path / "m.binpb")
    assert report.warnings == [f"{source}:3: not one JSON entry (a blank line); kept as it is"]
    convert(tmp_path / "m.binpb", tmp_path / "back.jsonl")
    back = (tmp_path / "back.jsonl").read_text(encoding="utf-8")
    assert back.endswith("}\n\n")  # the blank line, kept
    assert same_json([json.loads(line) for line in back.splitlines() if line], messages)


# Excerpts of the two session files pi committed to its own repository with a line that holds two
# entries and no newline between them (fixtures/pi-sessions/README.md), a line that stopped the
# whole conversion before it was kept as an unparsed line.
RUN_TOGETHER = [
    (SESSION.parent / "entries-run-together-message.jsonl", 4),
    (SESSION.parent / "entries-run-together-compaction.jsonl", 5),
]


@pytest.mark.parametrize(("source", "bad"), RUN_TOGETHER, ids=[source.name for source, _ in RUN_TOGETHER])
def test_a_session_pi_wrote_with_entries_run_together_converts_back_byte_for_byte(
    tmp_path: Path, source: Path, bad: int
) -> None:
    binary, back = tmp_path / "s.binpb", tmp_path / "back.jsonl"
    cli = [sys.executable, "-m", "pi_proto.cli", "convert"]
    there = subprocess.run([*cli, str(source), str(binary)], capture_output=True, text=True)
    assert there.returncode == 0, there.stderr
    # The line is named as a compiler names one, and kept.
    assert there.stderr.startswith(f"{source}:{bad}: not one JSON entry (not JSON: Extra data: line 1 column ")
    assert there.stderr.endswith("); kept as it is\n")
    assert there.stderr.count("\n") == 1
    assert "1 unparsed_line" in there.stdout
    with binary.open("rb") as stream:
        entries = [entry for _, entry in read_transcript(stream)]
    assert entries[bad - 1].unparsed_line == source.read_text(encoding="utf-8").splitlines()[bad - 1]
    again = subprocess.run([*cli, str(binary), str(back)], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert again.stderr == ""  # read from the binary transcript: nothing left to warn about
    assert back.read_bytes() == source.read_bytes()


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"", "a blank line"),
        (b" \t\r", "a blank line"),
        (b'{"role": "user", "content": []}{"role": "user", "content": []}', "not JSON: Extra data"),
        (b"{oops", "not JSON: Expecting property name"),
        (b'{"role": "user", "content": [], "timestamp": NaN}', "NaN is not JSON"),
        (b'{"n": ' + b"9" * 5000 + b"}", "Exceeds the limit"),  # JSON Python cannot read, kept all the same
        (b"[" * 100_000 + b"]" * 100_000, "JSON nested too deep to read"),
        (b'[{"role": "user", "content": []}]', "JSON that is not an object: list"),
        (b'"text"', "JSON that is not an object: string"),
        (b"null", "JSON that is not an object: null"),
        ("日本語 🤔 \\ud83d".encode(), "not JSON: Expecting value"),
    ],
)
def test_a_line_that_is_not_one_json_entry_is_kept_as_it_is_and_named(tmp_path: Path, line: bytes, why: str) -> None:
    source, binary, back = tmp_path / "in.jsonl", tmp_path / "s.binpb", tmp_path / "back.jsonl"
    entry = b'{"role":"user","content":"hi","timestamp":1}\n'
    source.write_bytes(entry + line + b"\n" + entry)
    report = convert(source, binary)
    assert len(report.warnings) == 1
    assert report.warnings[0].startswith(f"{source}:2: not one JSON entry ({why}")
    assert report.kinds["unparsed_line"] == 1
    convert(binary, back)
    assert back.read_bytes() == source.read_bytes()


TORN = "starting at: line 1 column 9 (char 8)"


def test_a_last_line_cut_short_is_kept_and_written_with_the_newline_pi_would_add(tmp_path: Path) -> None:
    source, back = tmp_path / "in.jsonl", tmp_path / "back.jsonl"
    source.write_bytes(b'{"role":"user","content":"hi","timestamp":1}\n{"role":"assist')
    report = convert(source, back)
    assert report.warnings == [f"{source}:2: not one JSON entry (not JSON: Unterminated string {TORN}); kept as it is"]
    assert back.read_bytes() == source.read_bytes() + b"\n"  # as pi's loader repairs such a file


def test_an_unparsed_line_with_a_newline_inside_is_not_written_as_two(tmp_path: Path) -> None:
    source = tmp_path / "in.binpb"
    source.write_bytes(delimited(pp.TranscriptEntry(unparsed_line="a\nb")))
    with pytest.raises(
        ConvertError, match=r"in\.binpb: record 0 at byte 0: TranscriptEntry\.unparsed_line: holds a newline"
    ):
        convert(source, tmp_path / "out.jsonl")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "bad.jsonl",
            b'{"role": "user", "content": []}\n{"role": "user", "content": 5}\n',
            r"bad\.jsonl:2: entry\.content",
        ),
        ("bad.jsonl", b'{"id": 1}\n', r"bad\.jsonl:1: entry: neither a message"),
        ("bad.json", b'{"user": {}}', r"bad\.json: at byte 0: expected the start of an array, found '{'"),
        (
            "bad.json",
            b'[{"message": {"user": {}}}, {"message": {"user": {"timestamp": "x"}}}]',
            r"bad\.json: item 1: cannot",
        ),
        ("bad.binpb", b"\x04\x0a\x02\x0a\x00\x09", r"bad\.binpb: record 1 at byte 5: claims 9 bytes"),
        ("latin1.jsonl", b'{"role": "user", "content": []}\n"\xe9"\n', r"latin1\.jsonl:2: not UTF-8 text"),
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


def open_to_write(fifo: Path, reader: subprocess.Popen[str]) -> BinaryIO:
    """The writing end of `fifo`, once `reader` has opened it to read (until then there is no
    reader, and a non-blocking open fails with ENXIO). pytest's per-test limit guards a hang."""
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if error.errno != errno.ENXIO:
                raise
            assert reader.poll() is None, f"the reader ended first: {reader.communicate()[1]}"
            time.sleep(0.01)
            continue
        os.set_blocking(fd, True)
        return os.fdopen(fd, "wb")


def wait_for_output(directory: Path, process: subprocess.Popen[str]) -> Path:
    """The temporary output of the conversion `process` runs in `directory`, once it holds bytes
    (pytest's per-test limit guards a hang)."""
    while True:
        partial = [path for path in directory.iterdir() if path.name.endswith(".partial")]
        if partial and partial[0].stat().st_size > 0:
            return partial[0]
        assert process.poll() is None, f"the conversion ended first: {process.communicate()[1]}"
        time.sleep(0.01)


@pytest.mark.parametrize(("signal_number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_stops_at_once_and_leaves_the_output_as_it_was(
    tmp_path: Path, signal_number: int, code: int
) -> None:
    # The input is a FIFO this test holds open: the conversion cannot reach its end, so it ends
    # only because of the signal, and the signal comes once it has written part of its output.
    source = tmp_path / "session.jsonl"
    os.mkfifo(source)
    target = tmp_path / "out.binpb"
    target.write_bytes(b"previous")
    command = [sys.executable, "-m", "pi_proto.cli", "convert", str(source), str(target)]
    process = subprocess.Popen(with_default_signals(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with open_to_write(source, process) as feed:
            # More than the output's buffer: the conversion writes to its temporary file, then
            # waits for the rest of its input.
            feed.write(SESSION.read_bytes())
            feed.flush()
            wait_for_output(tmp_path, process)
            process.send_signal(signal_number)
            _, errors = process.communicate(timeout=60)  # the input is still open: only the signal ends it
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == code, errors
    assert errors == f"pi-proto convert: interrupted; {target} is unchanged\n"
    assert target.read_bytes() == b"previous"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.binpb", "session.jsonl"]


# --- entries above the size limit ----------------------------------------------------------------

LIMIT = 1000  # the limit these tests set, so that an entry above it is small to write


def user_line(text_size: int) -> bytes:
    return json.dumps({"role": "user", "content": "x" * text_size, "timestamp": 1}).encode() + b"\n"


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(convert_module, "MAX_ENTRY_BYTES", LIMIT)
    return LIMIT


def test_a_line_up_to_the_limit_converts_and_a_longer_one_is_refused_naming_it(
    tmp_path: Path, small_limit: int
) -> None:
    fits = user_line(0)
    fits = user_line(small_limit - len(fits) + 1)  # the limit counts the line without its newline
    assert len(fits) == small_limit + 1
    source, target = tmp_path / "long.jsonl", tmp_path / "out.binpb"
    source.write_bytes(fits + fits)
    convert(source, target)
    source.write_bytes(fits + user_line(5 * small_limit) + fits)
    target.write_bytes(b"previous")
    with pytest.raises(ConvertError, match=rf"^{re.escape(str(source))}:2: the line is longer than 1,000 bytes"):
        convert(source, target)
    assert target.read_bytes() == b"previous"


class Endless(io.RawIOBase):
    """A file that never ends (as /dev/zero): `fill` repeated after `head`, counting what it gives."""

    def __init__(self, head: bytes, fill: bytes, most: int) -> None:
        self.data = head
        self.fill = fill
        self.given = 0
        self.most = most  # giving more than this means the reader buffers without bound

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        assert self.given <= self.most, f"read {self.given:,} bytes of one entry without stopping"
        while len(self.data) < len(buffer):
            self.data += self.fill * 1024
        size = len(buffer)
        buffer[:size] = self.data[:size]
        self.data = self.data[size:]
        self.given += size
        return size


@pytest.mark.parametrize(
    ("name", "head", "fill", "error"),
    [
        ("zero.jsonl", b"", b"\0", r"zero\.jsonl:1: the line is longer than 1,000 bytes"),
        ("second.jsonl", user_line(10), b"x", r"second\.jsonl:2: the line is longer than 1,000 bytes"),
        ("item.json", b'[{"message": {"user": {}}}, "', b"x", r"item\.json: item 1: longer than 1,000 bytes"),
        ("space.json", b'[{"message": {"user": {}}}, [', b" ", r"space\.json: item 1: longer than 1,000 bytes"),
    ],
)
def test_an_endless_entry_is_refused_having_read_a_bounded_amount(
    small_limit: int, name: str, head: bytes, fill: bytes, error: str
) -> None:
    endless = Endless(head, fill, most=100 * small_limit + (1 << 16))
    reader = convert_module._READERS[Path(name).suffix]
    with pytest.raises(ConvertError, match=error):
        for _ in reader(io.BufferedReader(endless), Path(name), lambda offset: None, lambda warning: None):
            pass
    # What was read is all the reader could hold: the limit, and one buffer's worth.
    assert endless.given <= small_limit + len(head) + (1 << 16)


def test_a_record_claiming_more_than_the_limit_is_refused_before_it_is_read(tmp_path: Path, small_limit: int) -> None:
    large = pp.TranscriptEntry(message=pp.agent_message(pp.user_message("x" * 5 * small_limit, timestamp=1)))
    source = tmp_path / "large.binpb"
    source.write_bytes(delimited(large))
    size = len(pp.encode(large))
    with pytest.raises(ConvertError, match=rf"large\.binpb: record 0 at byte 0: claims {size} bytes, above the limit"):
        convert(source, tmp_path / "out.jsonl")


def test_the_command_refuses_a_line_from_dev_zero(tmp_path: Path) -> None:
    source = tmp_path / "zero.jsonl"
    source.symlink_to("/dev/zero")

    def bounded() -> None:  # before the limit, reading /dev/zero grew until the machine ran out of memory
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    done = subprocess.run(
        [sys.executable, "-m", "pi_proto.cli", "convert", str(source), str(tmp_path / "out.binpb")],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=bounded,
    )
    assert done.returncode == 2, done.stderr
    assert f"{source}:1: the line is longer than {convert_module.MAX_ENTRY_BYTES:,} bytes" in done.stderr
    assert "Traceback" not in done.stderr
