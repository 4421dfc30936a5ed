"""`pi-proto convert`: transcripts between pi-JSON lines, ProtoJSON and binary, by file extension.

- `.jsonl`: a pi session file, or pi-JSON messages one per line; a line that is not one JSON entry
  is kept as it is (an `unparsed_line`), with a warning naming it;
- `.json`: a JSON array of TranscriptEntry objects in ProtoJSON;
- `.binpb`: a binary transcript (length-delimited TranscriptEntry records).

Every format is read as a stream, so memory stays near the size of the largest message; a line,
item or record above MAX_ENTRY_BYTES is refused, naming it, once that much is read. Output
goes to a temporary file beside the target and is renamed over it only when everything
converted, so a failure or an interrupt never leaves a half-written file; the output keeps the
mode of the file it replaces, and a new file takes the umask's. An entry that cannot be written is
blamed on where it was read: the line, item or record of the input.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from .._gen.types.pi.ai.v1 import TranscriptEntry
from ..ir.events import utf8_size
from ..ir.messages import JS_DECODER, role_of
from ..wire.codec import DecodeError, EncodeError, decode_json, to_json
from .binpb import delimited, read_transcript
from .pi_json import PiJsonError
from .pi_session import session_line_from_pi, session_line_to_pi

FORMATS = (".jsonl", ".json", ".binpb")
PROGRESS_BYTES = 4 * 1024 * 1024
# The most bytes one entry may take in any format (a .jsonl line without its newline, a .json
# item, a .binpb record). Reading holds it whole, a few times over once parsed, so without a
# bound a line that never ends (a .jsonl linked to /dev/zero) grows until memory runs out.
MAX_ENTRY_BYTES = 64 * 1024 * 1024


class ConvertError(ValueError):
    """Input that cannot be converted, naming the file and the line, item or byte offset."""


@dataclass
class Report:
    """What a conversion read and wrote."""

    input_bytes: int = 0
    output_bytes: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    # What was kept but not understood, each naming where: "file:line: not one JSON entry (...); ...".
    warnings: list[str] = field(default_factory=list)


# A reader yields each entry with where it was read ("file:line", "file: item 3", ...), for errors.
Located = tuple[str, TranscriptEntry]
# It is given the function that takes the offset read so far, and the one that takes a warning.
Reader = Callable[[BinaryIO, Path, Callable[[int], None], Callable[[str], None]], Iterator[Located]]


def convert(source: Path, target: Path, console: Console | None = None) -> Report:
    """Convert `source` to `target`, the formats given by their extensions."""
    read = _READERS.get(source.suffix)
    write = _WRITERS.get(target.suffix)
    for path, known in ((source, read), (target, write)):
        if known is None:
            raise ConvertError(f"{path}: unknown format {path.suffix!r}; use one of {', '.join(FORMATS)}")
    assert read is not None
    assert write is not None
    report = Report(input_bytes=source.stat().st_size)
    show = console is not None and report.input_bytes > PROGRESS_BYTES
    progress = Progress(
        TextColumn("converting"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not show,
    )
    with progress, source.open("rb") as stream:
        task = progress.add_task("convert", total=report.input_bytes)

        def advance(offset: int) -> None:
            progress.update(task, completed=offset)

        entries = _counted(read(stream, source, advance, report.warnings.append), report)
        report.output_bytes = _write_atomically(target, lambda emit: write.write(emit, entries))
    return report


def kind_of(entry: TranscriptEntry) -> str:
    """What an entry holds: a message's role ("user", "assistant", ...), "session_entry" or "unparsed_line"."""
    if entry.message is not None:
        return role_of(entry.message)
    return "unparsed_line" if entry.unparsed_line is not None else "session_entry"


def _counted(entries: Iterator[Located], report: Report) -> Iterator[Located]:
    for where, entry in entries:
        report.kinds[kind_of(entry)] += 1
        yield where, entry


# --- readers -------------------------------------------------------------------------------------


def _read_jsonl(
    stream: BinaryIO, path: Path, advance: Callable[[int], None], warn: Callable[[str], None]
) -> Iterator[Located]:
    offset = 0
    number = 0
    limit = MAX_ENTRY_BYTES
    # At most the limit and a newline at a time, so a longer line is refused having read that much.
    while raw := stream.readline(limit + 1):
        number += 1
        offset += len(raw)
        where = f"{path}:{number}"
        if len(raw) > limit and not raw.endswith(b"\n"):
            raise ConvertError(f"{where}: the line is longer than {limit:,} bytes, the most an entry may take")
        try:
            # Every line is an entry, a blank one too: one skipped would be missing from the output.
            entry, unparsed = session_line_from_pi(raw.removesuffix(b"\n").decode())
        except UnicodeDecodeError as error:  # a protobuf string holds UTF-8 only
            raise ConvertError(f"{where}: not UTF-8 text: {error}") from None
        except PiJsonError as error:
            raise ConvertError(f"{where}: {error}") from None
        if unparsed:
            warn(f"{where}: not one JSON entry ({unparsed}); kept as it is")
        yield where, entry
        advance(offset)


def _read_json(
    stream: BinaryIO, path: Path, advance: Callable[[int], None], warn: Callable[[str], None]
) -> Iterator[Located]:
    for index, (offset, item) in enumerate(_array_items(stream, path)):
        where = f"{path}: item {index}"
        # Only an object: decode_json would take a string as ProtoJSON text, and fail on anything else.
        if not isinstance(item, dict):
            raise ConvertError(f"{where}: expected a TranscriptEntry object, got {_json_kind(item)}")
        try:
            entry = decode_json(TranscriptEntry, item)
        except DecodeError as error:
            raise ConvertError(f"{where}: {error}") from None
        yield where, entry
        advance(offset)


def _json_kind(value: Any) -> str:
    kinds = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number")


def _array_items(stream: BinaryIO, path: Path) -> Iterator[tuple[int, Any]]:
    """The items of a JSON array, parsed, read a little at a time: (byte offset after the item, item)."""
    array = _Streamed(stream, path)
    array.expect("[", "the start of an array")
    if array.peek() == "]":
        return
    while True:
        yield array.item()
        if array.expect(",]", "',' or ']' after an item") == "]":
            return


class _Streamed:
    """Text decoded from a byte stream as it is needed; JSON values taken from its front."""

    def __init__(self, stream: BinaryIO, path: Path) -> None:
        self.stream = stream
        self.path = path
        self.text = ""
        self.at = 0  # where the unread text starts
        self.offset = 0  # the byte offset of self.text[self.at] in the file
        self.read = 0  # the bytes read from the file
        self.items = 0
        self.ended = False
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._json = JS_DECODER

    def unread(self) -> int:
        """The bytes read and not yet taken (those of the item being parsed)."""
        return self.read - self.offset

    def more(self) -> bool:
        """Read more text, as much again as is unread (so a long item costs linear time), but no
        more than one byte past the limit of an entry; False at the end."""
        if self.ended:
            return False
        size = max(1 << 16, self.unread())
        data = self.stream.read(max(1, min(size, MAX_ENTRY_BYTES + 1 - self.unread())))
        self.read += len(data)
        self.ended = not data
        try:
            self.text = self.text[self.at :] + self._decoder.decode(data, final=self.ended)
        except UnicodeDecodeError as error:
            raise ConvertError(f"{self.path}: not UTF-8 text: {error}") from None
        self.at = 0
        return not self.ended

    def advance(self, end: int) -> None:
        self.offset += utf8_size(self.text[self.at : end])
        self.at = end

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end)."""
        while True:
            self.advance(_WHITESPACE.match(self.text, self.at).end())  # type: ignore[union-attr]
            if self.at < len(self.text) or not self.more():
                return self.text[self.at : self.at + 1]

    def expect(self, signs: str, what: str) -> str:
        sign = self.peek()
        if not sign or sign not in signs:
            found = repr(sign) if sign else "the end of the file"
            raise ConvertError(f"{self.path}: at byte {self.offset}: expected {what}, found {found}")
        self.advance(self.at + 1)
        return sign

    def item(self) -> tuple[int, Any]:
        where = f"{self.path}: item {self.items}"
        self.peek()
        while True:
            try:
                value, end = self._json.raw_decode(self.text, self.at)
                break
            except json.JSONDecodeError as error:
                if not _cut_short(error, self.text):
                    raise ConvertError(f"{where}: not valid JSON: {error}") from None
                if self.unread() > MAX_ENTRY_BYTES:
                    raise ConvertError(
                        f"{where}: longer than {MAX_ENTRY_BYTES:,} bytes, the most an entry may take"
                    ) from None
                if not self.more():
                    raise ConvertError(f"{where}: not valid JSON: {error}") from None
            except RecursionError:
                raise ConvertError(f"{where}: JSON nested too deep to read") from None
            except ValueError as error:  # NaN/Infinity, or an integer too long for int()
                raise ConvertError(f"{where}: {error}") from None
        self.advance(end)
        self.items += 1
        return self.offset, value


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _cut_short(error: json.JSONDecodeError, text: str) -> bool:
    """Whether a parse error may only mean that the text stops before the value ends."""
    return error.msg.startswith("Unterminated string") or error.pos >= len(text) - 6


def _read_binpb(
    stream: BinaryIO, path: Path, advance: Callable[[int], None], warn: Callable[[str], None]
) -> Iterator[Located]:
    start = 0
    try:
        for record, (offset, entry) in enumerate(read_transcript(stream, max_record_bytes=MAX_ENTRY_BYTES)):
            yield f"{path}: record {record} at byte {start}", entry
            advance(offset)
            start = offset
    except ValueError as error:
        raise ConvertError(f"{path}: {error}") from None


_READERS: dict[str, Reader] = {".jsonl": _read_jsonl, ".json": _read_json, ".binpb": _read_binpb}


# --- writers: the bytes of each message, and what goes around them -------------------------------


def _jsonl_record(entry: TranscriptEntry, index: int) -> bytes:
    return session_line_to_pi(entry).encode() + b"\n"


def _json_record(message: TranscriptEntry, index: int) -> bytes:
    return (",\n" if index else "\n").encode() + to_json(message).encode()


@dataclass(frozen=True)
class _Writer:
    record: Callable[[TranscriptEntry, int], bytes]
    head: bytes = b""
    tail: bytes = b""

    def write(self, emit: Callable[[bytes], None], entries: Iterator[Located]) -> None:
        emit(self.head)
        for index, (where, entry) in enumerate(entries):
            try:
                record = self.record(entry, index)
            except (EncodeError, PiJsonError) as error:  # what the input holds, e.g. an empty entry
                raise ConvertError(f"{where}: {error}") from None
            emit(record)
        emit(self.tail)


_WRITERS = {
    ".jsonl": _Writer(_jsonl_record),
    ".json": _Writer(_json_record, head=b"[", tail=b"\n]\n"),
    ".binpb": _Writer(lambda message, _: delimited(message)),
}


def _write_atomically(target: Path, write: Callable[[Callable[[bytes], None]], None]) -> int:
    """Call `write` with a function that appends to a temporary file, then rename that over `target`.

    An error of the output names `target`, not the temporary file, which the user never sees;
    errors of the input, read while `write` runs, pass as they are.
    """
    with _output_of(target):
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    out = os.fdopen(handle, "wb")

    def emit(data: bytes) -> None:
        try:
            out.write(data)
        except OSError as error:
            raise _about(error, target) from None

    try:
        with _output_of(target):
            os.fchmod(handle, _mode_for(target))
        write(emit)
        with _output_of(target):
            out.close()  # writes what is buffered: a full disk may show only here
            os.replace(temporary, target)
    except BaseException:  # an error, Ctrl-C or SIGTERM: the target stays as it was
        with contextlib.suppress(OSError):  # failing already: the rest of the buffer is not needed
            out.close()
        os.unlink(temporary)
        raise
    return target.stat().st_size


@contextlib.contextmanager
def _output_of(target: Path) -> Iterator[None]:
    """OSErrors raised inside, told about `target`."""
    try:
        yield
    except OSError as error:
        raise _about(error, target) from None


def _about(error: OSError, target: Path) -> OSError:
    """The same error about `target` (OSError picks the class from errno: FileNotFoundError, ...)."""
    if error.errno is None:
        return error
    return OSError(error.errno, error.strerror, str(target))


def _mode_for(target: Path) -> int:
    """The mode of the file being replaced, or for a new file what the umask leaves of 0o666."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
