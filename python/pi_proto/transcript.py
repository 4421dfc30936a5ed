"""Binary transcripts (.binpb): TranscriptEntry records, each preceded by its length as a varint.

This is protobuf's delimited format (Java's writeDelimitedTo, C++'s
SerializeDelimitedToOstream, Go's protodelim), so every language reads these files with its
own protobuf library.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO

from ._gen.types.pi.ai.v1 import TranscriptEntry
from .wire import DecodeError, decode, encode

MAX_RECORD_BYTES = 2**31 - 1  # protobuf's own limit on one message


class TranscriptError(ValueError):
    """A binary transcript that cannot be read, with the record and byte offset where it breaks."""


def delimited(entry: TranscriptEntry) -> bytes:
    """One record: the varint length of the entry, then its bytes."""
    data = encode(entry)
    return _varint(len(data)) + data


def write_transcript(stream: BinaryIO, entries: Iterable[TranscriptEntry]) -> int:
    """Write entries as records; return the number of bytes written."""
    written = 0
    for entry in entries:
        written += stream.write(delimited(entry))
    return written


def read_transcript(
    stream: BinaryIO, *, max_record_bytes: int = MAX_RECORD_BYTES
) -> Iterator[tuple[int, TranscriptEntry]]:
    """Yield (byte offset after the record, message) for each record, strictly decoded; a record
    claiming more than `max_record_bytes` is refused before it is read."""
    offset = 0
    record = 0
    while True:
        start = offset
        size, length_bytes = _read_varint(stream, start, record)
        if size is None:
            return
        offset += length_bytes
        if size > max_record_bytes:
            limit = (
                "protobuf's 2 GiB limit"
                if max_record_bytes == MAX_RECORD_BYTES
                else f"the limit of {max_record_bytes:,} bytes"
            )
            raise TranscriptError(f"record {record} at byte {start}: claims {size} bytes, above {limit}")
        data = stream.read(size)
        if len(data) < size:
            raise TranscriptError(
                f"record {record} at byte {start}: claims {size} bytes but only {len(data)} remain (truncated file?)"
            )
        offset += size
        try:
            message = decode(TranscriptEntry, data)
        except DecodeError as error:
            raise TranscriptError(f"record {record} at byte {start}: {error}") from None
        yield offset, message
        record += 1


def _read_varint(stream: BinaryIO, offset: int, record: int) -> tuple[int | None, int]:
    value = shift = count = 0
    while True:
        byte = stream.read(1)
        if not byte:
            if count == 0:
                return None, 0
            raise TranscriptError(f"record {record} at byte {offset}: the file ends inside a length prefix")
        count += 1
        value |= (byte[0] & 0x7F) << shift
        if byte[0] < 0x80:
            return value, count
        shift += 7
        if count == 10:
            raise TranscriptError(f"record {record} at byte {offset}: the length prefix is not a valid varint")


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
