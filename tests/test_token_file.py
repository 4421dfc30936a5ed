"""Files named on the command line (`--token-file`, `--ca-file`): read with a bound, only when regular,
and the token read again on SIGHUP."""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest

import pi_proto as pp
from pi_proto.cli.main import MAX_TOKEN_FILE_BYTES, read_token

from .helpers import HANG_SECONDS, raw_call, readme_context, serve_process
from .test_workers import code_on_a_new_connection

ROOT = Path(__file__).resolve().parents[1]
REQUEST = pp.encode(pp.StreamRequest(context=readme_context()))
ONE_WORD = "the token must be one word of printable characters"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    def bounded() -> None:  # a file read whole would otherwise take every byte it can
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    command = [sys.executable, "-m", "pi_proto.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=ROOT, preexec_fn=bounded)


def not_regular(tmp_path: Path, kind: str) -> Path:
    if kind == "fifo":
        os.mkfifo(tmp_path / "fifo")  # opening it to read would wait for a writer that never comes
        return tmp_path / "fifo"
    if kind == "directory":
        return tmp_path
    return Path("/dev/zero")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory"])
@pytest.mark.parametrize("command", ["serve", "stream", "models"])
def test_a_token_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str, command: str) -> None:
    path = not_regular(tmp_path, kind)
    flags = (
        ["--port", "0"] if command == "serve" else ["--target", "127.0.0.1:1"] + (["hi"] if command == "stream" else [])
    )
    result = run(command, *flags, "--token-file", str(path))
    assert result.returncode == 2, result.stderr
    assert f"pi-proto {command}: --token-file {path}: not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_token_file_above_the_limit_is_refused(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("a" * (MAX_TOKEN_FILE_BYTES + 1))
    result = run("serve", "--port", "0", "--token-file", str(token))
    assert result.returncode == 2, result.stderr
    assert f"--token-file {token}: larger than {MAX_TOKEN_FILE_BYTES:,} bytes" in result.stderr
    token.write_text("a" * MAX_TOKEN_FILE_BYTES)
    assert read_token(token) == "a" * MAX_TOKEN_FILE_BYTES


def test_a_large_token_file_is_refused_having_read_no_more_than_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tmp_path / "token"
    with token.open("wb") as out:
        out.truncate(1 << 30)  # sparse: 1 GiB that takes no disk
    reads: list[int] = []
    read = os.read

    def counted(fd: int, size: int) -> bytes:
        data = read(fd, size)
        reads.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counted)  # files.py reads through os.read
    with pytest.raises(ValueError, match="larger than"):
        read_token(token)
    assert sum(reads) <= MAX_TOKEN_FILE_BYTES + 1


def write_token(path: Path, token: str) -> None:
    """Replace the token file as an editor or a secret manager does: a new file renamed over it."""
    fresh = path.with_suffix(".new")
    fresh.write_text(token + "\n")
    fresh.replace(path)


class Stderr:
    """A server's stderr (its workers' too), read as it comes and kept, so that what never comes
    fails saying what came instead (a hang would say nothing)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        self.fd = process.stderr.fileno()  # read here alone, never through the text wrapper
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.text = ""
        self.lines_read = 0  # of self.text, by wait_for

    def wait_for(self, words: str) -> str:
        """The next line that holds `words` (the lines before it passed over)."""
        deadline = time.monotonic() + HANG_SECONDS
        while True:
            lines = self.text.splitlines(keepends=True)
            for number in range(self.lines_read, len(lines)):
                if not lines[number].endswith("\n"):
                    break
                self.lines_read = number + 1
                if words in lines[number]:
                    return lines[number]
            self._read(words, deadline)

    def wait_for_count(self, words: str, count: int) -> None:
        """Until `words` has come `count` times in all, wherever the lines break: processes that
        write at once interleave their lines (with PYTHONUNBUFFERED, print() writes a line's text
        and its newline apart, so that two lines can come as both texts, then both newlines)."""
        deadline = time.monotonic() + HANG_SECONDS
        while self.text.count(words) < count:
            self._read(words, deadline)

    def _read(self, words: str, deadline: float) -> None:
        left = deadline - time.monotonic()
        assert left > 0, f"not enough {words!r} after {HANG_SECONDS:g} s; stderr: {self.text}"
        if select.select([self.fd], [], [], left)[0]:
            chunk = os.read(self.fd, 65536)
            assert chunk, f"the server ended before saying {words!r} enough; stderr: {self.text}"
            self.text += self.decoder.decode(chunk)


def sse_status(http: str, token: str) -> int:
    body = json.dumps({"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}).encode()
    request = urllib.request.Request(
        f"http://{http}/v1/stream",
        data=body,
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def grpc_code(target: str, token: str) -> grpc.StatusCode:
    async def call() -> grpc.StatusCode:
        metadata = (("authorization", f"Bearer {token}"),)
        try:
            await raw_call(target, REQUEST, metadata)
        except grpc.aio.AioRpcError as error:
            return error.code()
        return grpc.StatusCode.OK

    return asyncio.run(call())


def test_sighup_reloads_the_token_for_grpc_and_http(tmp_path: Path) -> None:
    path = tmp_path / "token"
    write_token(path, "first-token")
    with serve_process("--token-file", str(path), "--http-port", "0") as (server, target):
        assert server.stdout is not None
        http = server.stdout.readline().removeprefix("http on ").strip()
        assert (grpc_code(target, "first-token"), sse_status(http, "first-token")) == (grpc.StatusCode.OK, 200)

        write_token(path, "second-token")
        server.send_signal(signal.SIGHUP)
        line = Stderr(server).wait_for("SIGHUP")
        assert line == f"pi-proto serve: SIGHUP: reloaded the token from {path}\n"  # never the token itself
        assert (grpc_code(target, "second-token"), sse_status(http, "second-token")) == (grpc.StatusCode.OK, 200)
        assert grpc_code(target, "first-token") == grpc.StatusCode.UNAUTHENTICATED
        assert sse_status(http, "first-token") == 401


def test_a_reload_that_fails_keeps_the_token_and_says_so_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "token"
    write_token(path, "kept-token")
    with serve_process("--token-file", str(path)) as (server, target):
        stderr, lines = Stderr(server), []
        for change in (lambda: path.write_text("two words\n"), path.unlink, lambda: write_token(path, "new-token")):
            change()
            server.send_signal(signal.SIGHUP)
            lines.append(stderr.wait_for("SIGHUP"))
            if len(lines) < 3:
                assert grpc_code(target, "kept-token") == grpc.StatusCode.OK
        assert server.stderr is not None
        assert lines[0] == f"pi-proto serve: SIGHUP: kept the previous token: --token-file {path}: {ONE_WORD}\n"
        assert lines[1].startswith(f"pi-proto serve: SIGHUP: kept the previous token: --token-file {path}: No such")
        assert lines[2] == f"pi-proto serve: SIGHUP: reloaded the token from {path}\n"
        assert grpc_code(target, "new-token") == grpc.StatusCode.OK
        assert grpc_code(target, "kept-token") == grpc.StatusCode.UNAUTHENTICATED


def test_sighup_to_the_supervisor_reloads_the_token_in_every_worker(tmp_path: Path) -> None:
    path = tmp_path / "token"
    write_token(path, "first-token")
    with serve_process("--workers", "2", "--token-file", str(path)) as (supervisor, target):
        write_token(path, "second-token")
        # At once, as the supervisor goes from its `listening on` line to waiting for its workers:
        # a SIGHUP that came just before that wait blocked once waited for a worker to exit.
        supervisor.send_signal(signal.SIGHUP)
        stderr = Stderr(supervisor)
        stderr.wait_for_count("SIGHUP: reloaded the token", 2)  # one each, however their lines interleave
        assert "kept the previous token" not in stderr.text

        async def codes(token: str) -> set[grpc.StatusCode]:
            return {await code_on_a_new_connection(target, b"\xff", token) for _ in range(20)}

        # The kernel spreads new connections over both workers; a bad request with a good token is
        # INVALID_ARGUMENT, with a bad token UNAUTHENTICATED.
        assert asyncio.run(codes("second-token")) == {grpc.StatusCode.INVALID_ARGUMENT}
        assert asyncio.run(codes("first-token")) == {grpc.StatusCode.UNAUTHENTICATED}
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=60) == 0


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory"])
@pytest.mark.parametrize("command", ["stream", "models"])
def test_a_ca_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str, command: str) -> None:
    path = not_regular(tmp_path, kind)
    flags = ["--target", "127.0.0.1:1", *(["hi"] if command == "stream" else [])]
    result = run(command, *flags, "--ca-file", str(path))
    assert result.returncode == 2, result.stderr
    assert f"pi-proto {command}: --ca-file {path}: not a regular file" in result.stderr
    assert "Traceback" not in result.stderr
