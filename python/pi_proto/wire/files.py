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


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; ValueError saying why not
    (the system's reason, "not a regular file", or "larger than N bytes"), without the path."""
    try:
        # Non-blocking, so that opening a FIFO returns at once; a regular file reads as usual.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise ValueError(error.strerror or str(error)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
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
