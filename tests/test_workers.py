"""`pi-proto serve --workers N`: the workers live and die with their supervisor, and own their ports."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

import pi_proto as pp
from pi_proto.grpc.methods import STREAM_METHOD

from .helpers import HANG_SECONDS, endless_script, serve_process

ROOT = Path(__file__).resolve().parents[1]


def worker_pids(supervisor: subprocess.Popen[str]) -> list[int]:
    """The worker processes the supervisor names on stderr once they all listen."""
    assert supervisor.stderr is not None
    line = supervisor.stderr.readline()
    while "workers, processes" not in line:
        assert line, "the supervisor ended before its workers listened"
        line = supervisor.stderr.readline()
    return [int(pid) for pid in line.split("processes")[1].split()]


def alive(pid: int) -> bool:
    """Whether `pid` runs. A zombie has ended: an orphan's new parent may never reap it (PID 1 in
    a container often does not), so where there is /proc its state is read."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def wait_until_ended(pids: list[int]) -> list[int]:
    """The processes of `pids` still running after up to HANG_SECONDS (a guard against a hang)."""
    deadline = time.monotonic() + HANG_SECONDS
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


async def code_on_a_new_connection(target: str, request: bytes, token: str = "") -> grpc.StatusCode:
    """The status a Stream call ends with, on a connection of its own, so that the kernel picks
    the listener anew (channels to one target share connections unless told not to)."""
    options = (("grpc.use_local_subchannel_pool", 1),)
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    async with grpc.aio.insecure_channel(target, options=options) as channel:
        stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(STREAM_METHOD)
        try:
            async for _ in stream(request, metadata=metadata):
                pass
        except grpc.aio.AioRpcError as error:
            return error.code()
    return grpc.StatusCode.OK


def serve(*flags: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pi_proto.cli", "serve", *flags]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_workers_end_their_streams_and_exit_when_their_supervisor_is_killed(tmp_path: Path) -> None:
    # A turn still being played when the supervisor is killed, however slow the machine.
    flags = ("--script", str(endless_script(tmp_path)), "--delta-size", "1", "--delay", "0.2")
    with serve_process("--workers", "2", *flags) as (supervisor, target):
        pids = worker_pids(supervisor)
        client = subprocess.Popen(
            [sys.executable, "-m", "pi_proto.cli", "stream", "--target", target, "--json", "hi"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert client.stdout is not None
        assert '"start"' in client.stdout.readline()
        supervisor.kill()  # SIGKILL: nothing of the supervisor runs to stop them
        supervisor.wait()
        # As on SIGTERM: the stream in flight ends with its ABORTED event.
        last = pp.decode_json(pp.ModelEvent, client.stdout.read().splitlines()[-1])
        assert client.wait(timeout=60) == 1
        assert last.error is not None
        assert last.error.reason == pp.StopReason.ABORTED
        assert last.error.message is not None
        assert last.error.message.error_message == "the server is shutting down"
        assert wait_until_ended(pids) == []

    # Nothing of the old server answers on its port: every call reaches the new one, which wants a token.
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    port = target.rpartition(":")[2]
    with serve_process("--port", port, "--workers", "2", "--token-file", str(token)) as (_, again):
        assert again == target
        request = pp.encode(
            pp.StreamRequest(context=pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi"))]))
        )

        async def calls() -> list[grpc.StatusCode]:
            return [await code_on_a_new_connection(again, request) for _ in range(30)]

        assert set(asyncio.run(calls())) == {grpc.StatusCode.UNAUTHENTICATED}


@pytest.fixture
def running() -> Iterator[tuple[str, str]]:
    """A `serve --workers 2 --http-port 0`: its gRPC and HTTP ports."""
    with serve_process("--workers", "2", "--http-port", "0") as (supervisor, target):
        assert supervisor.stdout is not None
        http = supervisor.stdout.readline().removeprefix("http on ").strip()
        yield target.rpartition(":")[2], http.rpartition(":")[2]


@pytest.mark.parametrize("workers", ["2", "1"])
def test_a_second_server_on_the_grpc_port_of_workers_is_refused(running: tuple[str, str], workers: str) -> None:
    port, _ = running
    second = serve("--port", port, "--workers", workers)
    assert second.returncode == 2, second.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in second.stderr
    assert "Traceback" not in second.stderr


@pytest.mark.parametrize("workers", ["2", "1"])
def test_a_second_server_on_the_http_port_of_workers_is_refused(running: tuple[str, str], workers: str) -> None:
    _, http_port = running
    second = serve("--port", "0", "--http-port", http_port, "--workers", workers)
    assert second.returncode == 2, second.stderr
    assert f"cannot listen on 127.0.0.1:{http_port}" in second.stderr
    assert "Traceback" not in second.stderr


def test_workers_on_the_port_of_a_single_server_are_refused() -> None:
    with serve_process("--http-port", "0") as (single, target):
        assert single.stdout is not None
        http_port = single.stdout.readline().removeprefix("http on ").strip().rpartition(":")[2]
        port = target.rpartition(":")[2]
        on_grpc = serve("--port", port, "--workers", "2")
        on_http = serve("--port", "0", "--http-port", http_port, "--workers", "2")
    assert (on_grpc.returncode, on_http.returncode) == (2, 2)
    assert f"cannot listen on 127.0.0.1:{port}" in on_grpc.stderr
    assert f"cannot listen on 127.0.0.1:{http_port}" in on_http.stderr
