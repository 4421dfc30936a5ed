"""`pi-proto serve --workers N`: N server processes on one port, so one machine's every core serves.

Each worker is a `pi-proto serve` of its own, with the same flags; the kernel spreads new
connections across them (SO_REUSEPORT, which gRPC sets on its listening sockets, and the HTTP
server sets on its own for a worker). This process only
starts them, says where they listen once they all do, passes SIGINT/SIGTERM on, and stops them all
when one dies, so a failure is never half-hidden.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from types import FrameType

STOP_SECONDS = 30.0  # how long workers get to finish their streams once told to stop


class Stop(BaseException):
    """SIGINT or SIGTERM reached the supervisor."""


def run_workers(argv: Sequence[str], host: str, port: int, http_port: int | None, count: int) -> int:
    """Run `count` workers of `pi-proto serve ARGV` on host:port (and host:http_port) until a signal
    or a worker's exit."""
    # Port 0: the kernel picks one, which every worker then binds too.
    reserved = [_reserve(host, port), *([] if http_port is None else [_reserve(host, http_port)])]
    port = reserved[0].getsockname()[1]
    command = [sys.executable, "-m", "pi_proto.cli", *argv, "--port", str(port), "--workers", "1", "--worker"]
    if http_port is not None:
        http_port = reserved[1].getsockname()[1]
        command += ["--http-port", str(http_port)]
    workers: list[subprocess.Popen[str]] = []
    previous = {signum: signal.signal(signum, _stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        for _ in range(count):
            worker = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
            workers.append(worker)
            assert worker.stdout is not None
            lines = [worker.stdout.readline() for _ in range(1 if http_port is None else 2)]
            if not lines[0].startswith("listening on ") or not lines[-1].startswith(("listening on ", "http on ")):
                # It said why on stderr; its exit code says what kind of failure (2: the flags).
                print(f"pi-proto serve: worker {len(workers)} did not start", file=sys.stderr)
                return worker.wait() or 1
        print(f"listening on {host}:{port}", flush=True)
        if http_port is not None:
            print(f"http on {host}:{http_port}", flush=True)
        print(f"pi-proto serve: {count} workers, processes {' '.join(str(w.pid) for w in workers)}", file=sys.stderr)
        pid, status = os.wait()  # until a worker exits or a signal raises Stop
        print(f"pi-proto serve: worker {pid} exited ({status}); stopping the others", file=sys.stderr)
        return 1
    except Stop:
        return 0
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _stop_all(workers)
        for held in reserved:
            held.close()


def _reserve(host: str, port: int) -> socket.socket:
    """A bound, non-listening socket holding the port (it takes no connections itself)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    reserved = socket.socket(family, socket.SOCK_STREAM)
    reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    reserved.bind((host, port))
    return reserved


def _stop(signum: int, frame: FrameType | None) -> None:
    raise Stop


def _stop_all(workers: list[subprocess.Popen[str]]) -> None:
    for worker in workers:
        if worker.poll() is None:
            worker.terminate()  # each worker ends its streams with ABORTED events, then exits
    for worker in workers:
        try:
            worker.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
