"""Binary transcripts (.binpb): TranscriptEntry records, each preceded by its length as a varint.

This is protobuf's delimited format (Java's writeDelimitedTo, C++'s
SerializeDelimitedToOstream, Go's protodelim), so every language reads these files with its
own protobuf library.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO

from .._gen.types.pi.ai.v1 import TranscriptEntry
from ..wire import varint
from ..wire.codec import DecodeError, decode, encode

MAX_RECORD_BYTES = 2**31 - 1  # protobuf's own limit on one message


class TranscriptError(ValueError):
    """A binary transcript that cannot be read, with the record and byte offset where it breaks."""


def delimited(entry: TranscriptEntry) -> bytes:
    """One record: the varint length of the entry, then its bytes."""
    data = encode(entry)
    return varint.encode(len(data)) + data


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
        try:
            prefix = varint.read(stream)
        except varint.VarintError as error:
            why = (
                "the file ends inside a length prefix" if error.cut_short else "the length prefix is not a valid varint"
            )
            raise TranscriptError(f"record {record} at byte {start}: {why}") from None
        if prefix is None:
            return
        size, length_bytes = prefix
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
