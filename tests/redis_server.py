"""Debian's redis-server, started on a free loopback port for the tests and the bench."""

from __future__ import annotations

import contextlib
import socket
import subprocess
from collections.abc import Iterator


def free_port() -> int:
    """A loopback port nothing listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@contextlib.contextmanager
def redis_process() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A redis-server persisting nothing, until the block ends; yields the process (to kill or
    pause it, SIGKILL ends it even while paused) and its URL."""
    port = free_port()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "Ready to accept connections" in line:
                break
        else:
            raise RuntimeError("redis-server ended before it was ready")
        yield process, f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.communicate()


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A redis-server persisting nothing, until the block ends; yields its URL."""
    with redis_process() as (_, url):
        yield url
