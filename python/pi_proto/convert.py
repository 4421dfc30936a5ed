"""`pi-proto convert`: transcripts between pi-JSON lines, ProtoJSON and binary, by file extension.

- `.jsonl`: a pi session file, or pi-JSON messages one per line;
- `.json`: a JSON array of AgentMessages in ProtoJSON;
- `.binpb`: a binary transcript (length-delimited AgentMessages).

Output goes to a temporary file beside the target and is renamed over it only when everything
converted, so a failure never leaves a half-written file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from ._gen.types.pi.ai.v1 import AgentMessage
from .messages import role_of
from .pi_json import PiJsonError, entry_from_pi, entry_to_pi
from .transcript import delimited, read_transcript
from .wire import DecodeError, EncodeError, decode_json, to_json

FORMATS = (".jsonl", ".json", ".binpb")
PROGRESS_BYTES = 4 * 1024 * 1024


class ConvertError(ValueError):
    """Input that cannot be converted, naming the file and the line, item or byte offset."""


@dataclass
class Report:
    """What a conversion read and wrote."""

    input_bytes: int = 0
    output_bytes: int = 0
    kinds: Counter[str] = field(default_factory=Counter)


Reader = Callable[[BinaryIO, Path, Callable[[int], None]], Iterator[AgentMessage]]


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

        messages = _counted(read(stream, source, advance), report)
        report.output_bytes = _write_atomically(target, lambda out: write.write(out, messages, target))
    return report


def _counted(messages: Iterator[AgentMessage], report: Report) -> Iterator[AgentMessage]:
    for message in messages:
        report.kinds[role_of(message)] += 1
        yield message


# --- readers -------------------------------------------------------------------------------------


def _read_jsonl(stream: BinaryIO, path: Path, advance: Callable[[int], None]) -> Iterator[AgentMessage]:
    offset = 0
    for number, raw in enumerate(stream, 1):
        offset += len(raw)
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            value = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ConvertError(f"{where}: not valid JSON: {error}") from None
        try:
            yield entry_from_pi(value, "entry")
        except PiJsonError as error:
            raise ConvertError(f"{where}: {error}") from None
        advance(offset)


def _read_json(stream: BinaryIO, path: Path, advance: Callable[[int], None]) -> Iterator[AgentMessage]:
    try:
        items = json.load(stream)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ConvertError(f"{path}: not valid JSON: {error}") from None
    if not isinstance(items, list):
        raise ConvertError(f"{path}: expected a JSON array of AgentMessages in ProtoJSON")
    for index, item in enumerate(items):
        try:
            yield decode_json(AgentMessage, json.dumps(item))
        except DecodeError as error:
            raise ConvertError(f"{path}: item {index}: {error}") from None
    advance(stream.tell())


def _read_binpb(stream: BinaryIO, path: Path, advance: Callable[[int], None]) -> Iterator[AgentMessage]:
    try:
        for offset, message in read_transcript(stream):
            yield message
            advance(offset)
    except ValueError as error:
        raise ConvertError(f"{path}: {error}") from None


_READERS: dict[str, Reader] = {".jsonl": _read_jsonl, ".json": _read_json, ".binpb": _read_binpb}


# --- writers: the bytes of each message, and what goes around them -------------------------------


def _jsonl_record(message: AgentMessage, index: int) -> bytes:
    return json.dumps(entry_to_pi(message), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _json_record(message: AgentMessage, index: int) -> bytes:
    return (",\n" if index else "\n").encode() + to_json(message).encode()


@dataclass(frozen=True)
class _Writer:
    record: Callable[[AgentMessage, int], bytes]
    head: bytes = b""
    tail: bytes = b""

    def write(self, out: BinaryIO, messages: Iterator[AgentMessage], path: Path) -> None:
        out.write(self.head)
        for index, message in enumerate(messages):
            try:
                out.write(self.record(message, index))
            except (EncodeError, PiJsonError) as error:
                raise ConvertError(f"{path}: message {index} cannot be written: {error}") from None
        out.write(self.tail)


_WRITERS = {
    ".jsonl": _Writer(_jsonl_record),
    ".json": _Writer(_json_record, head=b"[", tail=b"\n]\n"),
    ".binpb": _Writer(lambda message, _: delimited(message)),
}


def _write_atomically(target: Path, write: Callable[[BinaryIO], None]) -> int:
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    try:
        with os.fdopen(handle, "wb") as out:
            write(out)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    return target.stat().st_size
