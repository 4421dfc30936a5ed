"""Small files named on the command line (a token, a certificate), read with a bound.

A path may name something that is not a file at all: a FIFO, whose opening waits for a writer
that may never come, or a device such as /dev/zero, which never ends. Only a regular file is
read, and only up to a limit, so neither can hang or exhaust the process.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

CHUNK_BYTES = 64 * 1024


def check_regular_file(path: Path, limit: int) -> None:
    """Raise ValueError as read_regular_file would for the file at `path`, without reading it:
    the file opens for reading, is a regular file and holds at most `limit` bytes now."""
    fd = _open_regular(path)
    try:
        if os.fstat(fd).st_size > limit:
            raise ValueError(f"larger than {limit:,} bytes")
    finally:
        os.close(fd)


def _open_regular(path: Path) -> int:
    """A descriptor of the regular file at `path`, open for reading; ValueError saying why not."""
    try:
        # Non-blocking, so that opening a FIFO returns at once; a regular file reads as usual.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise ValueError(error.strerror or str(error)) from None
    try:
        is_regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError as error:
        os.close(fd)
        raise ValueError(error.strerror or str(error)) from None
    if not is_regular:
        os.close(fd)
        raise ValueError("not a regular file")
    return fd


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; ValueError saying why not
    (the system's reason, "not a regular file", or "larger than N bytes"), without the path."""
    fd = _open_regular(path)
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # one byte past the limit tells a file that is too large
            chunk = os.read(fd, min(CHUNK_BYTES, limit + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        raise ValueError(f"larger than {limit:,} bytes")
    except OSError as error:
        raise ValueError(error.strerror or str(error)) from None
    finally:
        os.close(fd)
