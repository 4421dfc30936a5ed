"""`pi-proto serve --workers N`: N server processes on one port, so one machine's every core serves.

Each worker is a `pi-proto serve` of its own, with the same flags; the kernel spreads new
connections across them (SO_REUSEPORT, which gRPC sets on its listening sockets, and the HTTP
server sets on its own for a worker). This process only
starts them, says where they listen once they all do, passes SIGINT/SIGTERM (and, with a token
file, SIGHUP) on, and stops them all when one dies, so a failure is never half-hidden.

The ports are ours alone: a second server on them is refused, as a single-process server is
(see _reserve). The workers end with their supervisor however it ends, `kill -9` included: each
watches a pipe whose only writing end the supervisor holds, and the kernel closes it when the
supervisor exits. A pipe rather than Linux's PR_SET_PDEATHSIG: it works wherever SO_REUSEPORT
does (macOS and the BSDs too), it cannot miss a supervisor that died before the worker started
watching (the end is already closed), and it follows the process, where the death signal
follows the thread that started the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from types import FrameType

STOP_SECONDS = 30.0  # how long workers get to finish their streams once told to stop


class Stop(BaseException):
    """SIGINT or SIGTERM reached the supervisor."""


def run_workers(
    argv: Sequence[str], host: str, port: int, http_port: int | None, count: int, *, forward_hangup: bool = False
) -> int:
    """Run `count` workers of `pi-proto serve ARGV` on host:port (and host:http_port) until a signal
    or a worker's exit; with `forward_hangup`, SIGHUP is passed on to every worker."""
    # Port 0: the kernel picks one, which every worker then binds too.
    reserved = [_reserve(host, port)]
    try:
        if http_port is not None:
            reserved.append(_reserve(host, http_port))
    except OSError:
        reserved[0].close()
        raise
    port = reserved[0].getsockname()[1]
    watched, held = os.pipe()  # the workers get `watched`; `held` closes when this process ends
    command = [sys.executable, "-m", "pi_proto.cli", *argv, "--port", str(port), "--workers", "1"]
    command += ["--worker", str(watched)]
    if http_port is not None:
        http_port = reserved[1].getsockname()[1]
        command += ["--http-port", str(http_port)]
    workers: list[subprocess.Popen[str]] = []
    previous = {signum: signal.signal(signum, _stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    if forward_hangup:
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, lambda signum, frame: _hang_up(workers))
    try:
        for _ in range(count):
            worker = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, pass_fds=(watched,))
            workers.append(worker)
            assert worker.stdout is not None
            lines = [worker.stdout.readline() for _ in range(1 if http_port is None else 2)]
            if not lines[0].startswith("listening on ") or not lines[-1].startswith(("listening on ", "http on ")):
                # It said why on stderr; its exit code says what kind of failure (2: the flags).
                print(f"pi-proto serve: worker {len(workers)} did not start", file=sys.stderr)
                return worker.wait() or 1
        os.close(watched)
        watched = -1
        print(f"listening on {host}:{port}", flush=True)
        if http_port is not None:
            print(f"http on {host}:{http_port}", flush=True)
        print(f"pi-proto serve: {count} workers, processes {' '.join(str(w.pid) for w in workers)}", file=sys.stderr)
        pid, status = _wait_for_a_worker()  # until a worker exits or a signal raises Stop
        print(f"pi-proto serve: worker {pid} exited ({status}); stopping the others", file=sys.stderr)
        return 1
    except Stop:
        return 0
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _stop_all(workers)
        for fd in (watched, held):
            if fd >= 0:
                os.close(fd)
        for held_port in reserved:
            held_port.close()


def watch_supervisor(fd: int, stop: Callable[[], None]) -> None:
    """In a worker: call `stop` (as SIGTERM does) once the supervisor's end of the pipe `fd`
    closes. Nothing is ever written to it, so it turns readable only at its end."""
    loop = asyncio.get_running_loop()

    def ended() -> None:
        loop.remove_reader(fd)
        os.close(fd)
        stop()

    loop.add_reader(fd, ended)


def _reserve(host: str, port: int) -> socket.socket:
    """A bound, non-listening socket holding the port for our workers alone (it takes no
    connections itself); OSError naming the address when anything else holds it.

    It binds without SO_REUSEPORT, which fails while any socket is bound there (a server's
    listener, or another supervisor's reservation), and only then turns SO_REUSEPORT on, which
    lets the workers' listeners, which set it too, join. SO_REUSEADDR while binding lets a port
    whose old connections linger in TIME_WAIT be taken again; it is turned off once bound, or a
    second reservation could bind beside this one (Linux lets two unlistening sockets share a
    port when both set it). Linux checks these options of every socket on the port at each
    bind, so setting them after this one's bind is what a later bind sees.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    reserved = socket.socket(family, socket.SOCK_STREAM)
    try:
        reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        reserved.bind((host, port))
        reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0)
        reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    except OSError as error:
        reserved.close()
        raise OSError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    return reserved


def _wait_for_a_worker() -> tuple[int, int]:
    """os.wait(), woken by every signal whenever it arrives. A Python signal handler runs only
    between bytecodes, or when the signal interrupts a blocking call: a signal that came just
    before os.wait() blocked (a SIGHUP or SIGTERM sent as soon as the supervisor says it listens)
    would wait for a worker to exit, that is for ever. Here each signal also writes its number on
    a pipe (signal.set_wakeup_fd) that select() watches, SIGCHLD included, so the wait wakes and
    the handlers run (SIGINT and SIGTERM raise Stop through it), or a worker that exited is reaped."""
    woken, wake = os.pipe()
    for fd in (woken, wake):
        os.set_blocking(fd, False)
    previous_fd = signal.set_wakeup_fd(wake, warn_on_full_buffer=False)
    previous_child = signal.signal(signal.SIGCHLD, _child_exited)
    try:
        while True:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid:
                return pid, status
            select.select([woken], [], [])
            with contextlib.suppress(BlockingIOError):
                while os.read(woken, 512):
                    pass
    finally:
        signal.signal(signal.SIGCHLD, previous_child)
        signal.set_wakeup_fd(previous_fd)
        os.close(woken)
        os.close(wake)


def _child_exited(signum: int, frame: FrameType | None) -> None:
    """SIGCHLD, handled so that it writes to the wakeup pipe (ignored, it would not)."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise Stop


def _hang_up(workers: list[subprocess.Popen[str]]) -> None:
    """SIGHUP: each worker reads its token file again. os.kill, not Popen.send_signal, which
    reaps a worker that has exited, so the os.wait() this interrupts would never see it."""
    for worker in workers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker.pid, signal.SIGHUP)  # an exited worker is a zombie until reaped: its pid is not reused


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
