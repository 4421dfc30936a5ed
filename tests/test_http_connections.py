"""The HTTP port's connections: bounded in number, in the time and size of a request's head, and
served in HTTP/1.1 or HTTP/2 (ALPN, prior knowledge, `Upgrade: h2c`), before any request reaches
the application."""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import select
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import hpack
import hyperframe.frame
import pytest
from grpc_health.v1 import health_pb2

from pi_proto.grpc.server import ModelServer, Tls
from pi_proto.models.scripted import ScriptedModel
from pi_proto.web import SSE_PATH, HttpServer
from pi_proto.web.connections import PREFACE, HttpLimits

from .certs import server_context
from .helpers import HANG_SECONDS, eventually, health_status

QUICK = HttpLimits(header_timeout=0.5, idle_timeout=0.5, max_header_bytes=4096, max_headers=10)
LIST_MODELS = "/pi.ai.v1.ModelService/ListModels?encoding=json&message=%7B%7D"
PI_CONTEXT = json.dumps({"messages": [{"role": "user", "content": "hi", "timestamp": 1}]})


@pytest.fixture
async def servers() -> AsyncIterator[tuple[ModelServer, HttpServer]]:
    async with ModelServer(ScriptedModel.readme()) as grpc_server, HttpServer(grpc_server, limits=QUICK) as web:
        yield grpc_server, web


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(60)  # a bound for a broken server only, far above every timeout under test
    return sock


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _body(answer: bytes) -> dict[str, str]:
    return json.loads(answer.partition(b"\r\n\r\n")[2])  # type: ignore[no-any-return]


async def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(
    servers: tuple[ModelServer, HttpServer],
) -> None:
    _, web = servers
    sock = _connect(web.port)
    assert await asyncio.to_thread(_read_all, sock) == b""  # closed without a word
    sock.close()


async def test_a_head_that_does_not_finish_in_time_is_answered_408(servers: tuple[ModelServer, HttpServer]) -> None:
    _, web = servers

    def dribble() -> bytes:
        """A byte every 50 ms, each well within the timeout, the whole head never."""
        sock = _connect(web.port)
        sock.sendall(b"POST /v1/stream HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        with sock:
            for _ in range(200):
                sock.sendall(b"x")
                if select.select([sock], [], [], 0.05)[0]:
                    return _read_all(sock)
        return b""

    answer = await asyncio.to_thread(dribble)
    assert _status(answer) == 408
    assert _body(answer)["message"] == "the request's head took longer than this server's 0.5 s"


async def test_the_next_request_on_a_kept_alive_connection_has_the_same_time(
    servers: tuple[ModelServer, HttpServer],
) -> None:
    _, web = servers

    def two() -> tuple[bytes, bytes]:
        sock = _connect(web.port)
        sock.sendall(f"GET {LIST_MODELS} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n".encode())
        first = b""
        while not first.endswith(b"\r\n0\r\n\r\n"):  # the whole first answer, to its last chunk
            first += sock.recv(65536)
        sock.sendall(b"GET / HTTP/1.1\r\n")  # and no more
        return first, _read_all(sock)

    first, second = await asyncio.to_thread(two)
    assert (_status(first), _status(second)) == (200, 408)


async def test_a_head_above_the_size_limit_is_refused_before_it_ends(servers: tuple[ModelServer, HttpServer]) -> None:
    _, web = servers

    def send_big() -> tuple[bytes, int]:
        sock = _connect(web.port)
        sock.sendall(b"POST /v1/stream HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ")
        sent = 0
        try:
            for _ in range(1024):  # up to 64 MiB, 64 KiB at a time, never ending the header
                sock.sendall(b"y" * 65536)
                sent += 65536
        except (BrokenPipeError, ConnectionResetError):
            pass
        return _read_all(sock), sent

    answer, sent = await asyncio.to_thread(send_big)
    assert _status(answer) == 431
    assert _body(answer)["message"] == "the request's head has more than this server's 4096 bytes"
    assert sent < 64 * 1024 * 1024  # cut off long before the client was done


async def test_more_headers_than_the_limit_are_refused(servers: tuple[ModelServer, HttpServer]) -> None:
    _, web = servers

    def send() -> bytes:
        sock = _connect(web.port)
        headers = "".join(f"x-{number}: 1\r\n" for number in range(11))
        sock.sendall(f"GET {LIST_MODELS} HTTP/1.1\r\nhost: 127.0.0.1\r\n{headers}\r\n".encode())
        return _read_all(sock)

    answer = await asyncio.to_thread(send)
    assert _status(answer) == 431
    assert _body(answer)["message"] == "the request has more than this server's 10 headers"


async def test_connections_above_the_limit_get_503_and_the_grpc_port_keeps_answering() -> None:
    limits = HttpLimits(max_connections=3)
    async with ModelServer(ScriptedModel.readme()) as grpc_server, HttpServer(grpc_server, limits=limits) as web:
        held = [_connect(web.port) for _ in range(3)]
        while web.open_connections < 3:
            await asyncio.sleep(0.01)
        extra = _connect(web.port)
        answer = await asyncio.to_thread(_read_all, extra)
        health = await health_status(grpc_server.target)
        held.pop().close()
        while web.open_connections > 2:
            await asyncio.sleep(0.01)
        served = await asyncio.to_thread(_get, web.port, LIST_MODELS)
        for sock in [*held, extra]:
            sock.close()
    assert _status(answer) == 503
    assert _body(answer) == {"code": "unavailable", "message": "this server has too many connections open"}
    assert health == health_pb2.HealthCheckResponse.SERVING
    assert _status(served) == 200


def _get(port: int, path: str) -> bytes:
    sock = _connect(port)
    sock.sendall(f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n".encode())
    with sock:
        return _read_all(sock)


# --- HTTP/2 ---------------------------------------------------------------------------------------


def _curl(*args: str) -> tuple[str, str]:
    """curl's HTTP version and body for a request."""
    done = subprocess.run(
        ["curl", "-sS", "--max-time", "20", "-w", "\n%{http_version}", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    body, _, version = done.stdout.rpartition("\n")
    return version, body


def _last_event(body: str) -> dict[str, object]:
    data = [line.removeprefix("data: ") for line in body.splitlines() if line.startswith("data: ")]
    return json.loads(data[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("ask", ["--http2-prior-knowledge", "--http1.1"])
async def test_sse_streams_over_http2_in_clear_text_with_prior_knowledge(
    servers: tuple[ModelServer, HttpServer], ask: str
) -> None:
    _, web = servers
    version, body = await asyncio.to_thread(
        _curl, ask, "-H", "content-type: application/json", "-d", PI_CONTEXT, web.url + SSE_PATH
    )
    assert version == ("2" if ask == "--http2-prior-knowledge" else "1.1")
    assert _last_event(body)["type"] == "done"


async def test_a_clear_text_client_may_upgrade_to_h2c(servers: tuple[ModelServer, HttpServer]) -> None:
    _, web = servers
    version, body = await asyncio.to_thread(_curl, "--http2", web.url + LIST_MODELS)
    assert version == "2"
    assert json.loads(body)["models"][0]["id"] == "scripted-v1"


async def test_tls_offers_http2_by_alpn(tmp_path: Path) -> None:
    chain, key, context = server_context(tmp_path, ["h2", "http/1.1"])
    async with (
        ModelServer(ScriptedModel.readme(), tls=Tls.from_files(chain, key)) as grpc_server,
        HttpServer(grpc_server, ssl_context=context) as web,
    ):
        trust = ["--cacert", str(chain)]
        json_body = ["-H", "content-type: application/json", "-d", PI_CONTEXT]
        h2_version, body = await asyncio.to_thread(_curl, "--http2", *trust, *json_body, web.url + SSE_PATH)
        h1_version, _ = await asyncio.to_thread(_curl, "--http1.1", *trust, web.url + LIST_MODELS)
    assert (h2_version, h1_version) == ("2", "1.1")
    assert _last_event(body)["type"] == "done"


async def test_an_http2_header_list_above_the_limit_ends_the_connection(
    servers: tuple[ModelServer, HttpServer],
) -> None:
    _, web = servers

    def send() -> list[type]:
        sock = _connect(web.port)
        client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        client.initiate_connection()
        sock.sendall(client.data_to_send())
        block = hpack.Encoder().encode(
            [
                (":method", "GET"),
                (":path", LIST_MODELS),
                (":scheme", "http"),
                (":authority", "127.0.0.1"),
                ("x-big", "y" * 65536),
            ],
            huffman=False,
        )
        frames: list[hyperframe.frame.Frame] = [hyperframe.frame.HeadersFrame(1, data=block[:16384])]
        frames += [
            hyperframe.frame.ContinuationFrame(1, data=block[start : start + 16384])
            for start in range(16384, len(block), 16384)
        ]
        frames[-1].flags.add("END_HEADERS")
        frames[0].flags.add("END_STREAM")
        seen: list[type] = []
        try:
            sock.sendall(b"".join(frame.serialize() for frame in frames))
            while data := sock.recv(65536):
                seen += [type(event) for event in client.receive_data(data)]
        except (BrokenPipeError, ConnectionResetError):
            pass
        return seen

    seen = await asyncio.to_thread(send)
    assert h2.events.ResponseReceived not in seen  # the request never reached the application


async def test_an_idle_http2_connection_is_closed(servers: tuple[ModelServer, HttpServer]) -> None:
    _, web = servers
    sock = _connect(web.port)
    sock.sendall(PREFACE + hyperframe.frame.SettingsFrame(0).serialize())
    assert (await asyncio.to_thread(_read_all, sock)) != b""  # its settings, then the close
    sock.close()
    while web.open_connections:
        await asyncio.sleep(0.01)


# --- at the process's file limit --------------------------------------------------------------------


@contextlib.contextmanager
def _serve_with_files(limit: int, *flags: str) -> Iterator[tuple[str, str, Path]]:
    """`pi-proto serve` with an HTTP port, allowed `limit` open files: its gRPC target, its HTTP
    address, and the file its stderr goes to."""
    with tempfile.TemporaryDirectory() as folder:
        errors = Path(folder) / "stderr"
        with errors.open("w") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "pi_proto.cli", "serve", "--port", "0", "--http-port", "0", *flags],
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit)),
            )
        try:
            assert process.stdout is not None
            target = process.stdout.readline().removeprefix("listening on ").strip()
            address = process.stdout.readline().removeprefix("http on ").strip()
            yield target, address, errors
        finally:
            process.kill()
            process.communicate()


def _flood(address: str, count: int) -> list[socket.socket]:
    host, _, port = address.rpartition(":")
    return [socket.create_connection((host, int(port))) for _ in range(count)]


async def _served_again(address: str) -> int:
    """The status of a request once the server takes connections again (after its pause, which
    grows to 5 s); 0 if it never does (the deadline only guards against a hang)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_SECONDS
    while loop.time() < deadline:
        try:
            return _status(await asyncio.to_thread(_get, int(address.rpartition(":")[2]), LIST_MODELS))
        except (ConnectionError, IndexError, TimeoutError):
            await asyncio.sleep(0.2)
    return 0


async def test_idle_connections_at_the_file_limit_leave_the_grpc_port_answering() -> None:
    with _serve_with_files(512, "--header-timeout", "60") as (target, address, errors):
        held = await asyncio.to_thread(_flood, address, 600)  # the cap, (512 - 256) / 2, then 503s
        health = await health_status(target)
        refused = await asyncio.to_thread(_get, int(address.rpartition(":")[2]), LIST_MODELS)
        for sock in held:
            sock.close()
        served = await _served_again(address)
        logged = errors.read_text()
    assert health == health_pb2.HealthCheckResponse.SERVING
    assert (_status(refused), served) == (503, 200)
    # One line a minute, so at most five within pytest's limit of 300 s, not one for each of the
    # hundreds of connections refused.
    assert 1 <= logged.count("HTTP connections refused") <= 5, logged[:2000]
    assert len(logged) < 2000, logged[:2000]


async def test_accepts_failing_at_the_file_limit_pause_with_one_line_not_a_flood() -> None:
    with _serve_with_files(256, "--max-connections", "10000", "--header-timeout", "60") as (_, address, errors):
        held = await asyncio.to_thread(_flood, address, 400)  # beyond what the process can accept
        await eventually(lambda: "HTTP connections not accepted" in errors.read_text(), "accepting fails")
        await asyncio.sleep(2)  # it pauses and tries again meanwhile, saying nothing more (asserted below)
        for sock in held:
            sock.close()
        served = await _served_again(address)
        logged = errors.read_text()
    assert served == 200
    assert 1 <= logged.count("HTTP connections not accepted") <= 5, logged[:2000]  # as above
    assert len(logged) < 2000, logged[:2000]


async def test_pipelined_requests_are_each_measured_against_the_head_limit(
    servers: tuple[ModelServer, HttpServer],
) -> None:
    # 2,000 heads of about 100 bytes in one write: the server's reads end in the middle of a head,
    # and each read holds far more than the 4,096-byte limit.
    _, web = servers
    head = f"GET {LIST_MODELS} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"

    def pipelined() -> bytes:
        sock = _connect(web.port)
        last = head.replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n")
        sock.sendall((head * 1999 + last).encode())
        return _read_all(sock)

    answers = await asyncio.to_thread(pipelined)
    assert answers.count(b"HTTP/1.1 200 ") == 2000, answers[-500:]
    assert b"HTTP/1.1 431" not in answers
