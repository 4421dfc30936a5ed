"""Base-128 varints, the one place pi_proto writes or reads them by hand.

upb encodes and decodes messages, but it has no public call for the length prefix of a
size-delimited stream (binary transcripts, the conformance executor's pipe), and the server's
direct delta encoder (server.py) writes a few tags and lengths itself because that beats filling
a upb message for the commonest event (`make bench` measures it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

_SMALL = [bytes([value]) for value in range(0x80)]
MAX_BYTES = 10  # a 64-bit value


class VarintError(ValueError):
    """A varint that is cut short (`cut_short`) or longer than a 64-bit one."""

    def __init__(self, message: str, *, cut_short: bool) -> None:
        super().__init__(message)
        self.cut_short = cut_short


def encode(value: int) -> bytes:
    """The varint of a non-negative integer."""
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read(stream: BinaryIO) -> tuple[int, int] | None:
    """The next varint of `stream` and how many bytes it took; None when the stream ends before it."""
    value = shift = count = 0
    while True:
        byte = stream.read(1)
        if not byte:
            if count == 0:
                return None
            raise VarintError("the stream ends inside a varint", cut_short=True)
        count += 1
        value |= (byte[0] & 0x7F) << shift
        if byte[0] < 0x80:
            return value, count
        shift += 7
        if count == MAX_BYTES:
            raise VarintError(f"a varint longer than {MAX_BYTES} bytes", cut_short=False)


def read_delimited(stream: BinaryIO) -> Iterator[bytes]:
    """The messages of a size-delimited stream (each a varint length, then its bytes), as bytes."""
    while (prefix := read(stream)) is not None:
        data = stream.read(prefix[0])
        if len(data) != prefix[0]:
            raise VarintError(f"a message claims {prefix[0]} bytes but only {len(data)} remain", cut_short=True)
        yield data


def write_delimited(stream: BinaryIO, data: bytes) -> None:
    """Write one message of a size-delimited stream."""
    stream.write(encode(len(data)) + data)
