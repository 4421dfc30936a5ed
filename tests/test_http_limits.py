"""The gRPC server's gate and limits hold over HTTP too: the bearer token, concurrent streams
(counted for the process), request size and counts, the stream timeout, the bytes queued for a
slow client; and a client that leaves, or a server that stops, ends the model's stream."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
from collections.abc import AsyncIterator
from typing import Any

import pyqwest
import pytest
from google.protobuf import json_format

import pi_proto as pp
from pi_proto.grpc.requests import ServerLimits
from pi_proto.grpc.server import ModelServer
from pi_proto.models.scripted import ScriptedModel
from pi_proto.web import SSE_PATH, HttpModelClient, HttpServer, read_sse
from pi_proto.web import service as service_module
from pi_proto.web import sse as sse_module

from .helpers import (
    README_TURN,
    RecordingModel,
    WatchedModel,
    drain,
    eventually,
    held_when_timed_out,
    kind,
    readme_context,
)

TOKEN = "s3cret-token"
JSON = {"content-type": "application/json"}
REQUEST = json.loads(pp.to_json(pp.StreamRequest(context=readme_context())))


async def sse_status(url: str, body: Any = REQUEST, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """The status of an SSE call and its error body (or its last event)."""
    async with pyqwest.Client().stream(
        "POST", url + SSE_PATH, headers={**JSON, **(headers or {})}, content=json.dumps(body).encode()
    ) as response:
        if response.status != 200:
            return response.status, json.loads(b"".join([bytes(chunk) async for chunk in response.content]))
        return 200, [event async for event in read_sse(response.content)][-1]


@pytest.fixture
async def guarded() -> AsyncIterator[tuple[ModelServer, HttpServer]]:
    async with ModelServer(ScriptedModel.readme(), token=TOKEN) as grpc_server, HttpServer(grpc_server) as http_server:
        yield grpc_server, http_server


@pytest.mark.parametrize("protocol", ["connect", "grpc-web"])
async def test_the_bearer_token_is_required(guarded: tuple[ModelServer, HttpServer], protocol: str) -> None:
    _, http_server = guarded
    async with HttpModelClient(http_server.url, protocol=protocol) as client:
        denied = client.stream(readme_context())
        _, message = await drain(denied)
        with pytest.raises(pp.CallError) as listing:
            await client.list_models()
    assert message.error_message == "missing or invalid bearer token"
    assert denied.failure is not None
    assert denied.failure.status_code == "UNAUTHENTICATED"
    assert listing.value.status_code == "UNAUTHENTICATED"
    async with HttpModelClient(http_server.url, protocol=protocol, token=TOKEN) as client:
        _, message = await drain(client.stream(readme_context()))
        assert [model.id for model in await client.list_models()] == ["scripted-v1"]
    assert message.stop_reason == pp.StopReason.TOOL_USE


async def test_sse_needs_the_bearer_token_with_grpcs_rules(guarded: tuple[ModelServer, HttpServer]) -> None:
    _, http_server = guarded
    assert await sse_status(http_server.url) == (
        401,
        {"code": "unauthenticated", "message": "missing or invalid bearer token"},
    )
    assert (await sse_status(http_server.url, headers={"authorization": f"Basic {TOKEN}"}))[0] == 401
    status, last = await sse_status(http_server.url, headers={"authorization": f"bEaReR {TOKEN}"})
    assert (status, last["type"]) == (200, "done")


async def test_concurrent_streams_are_counted_for_the_process() -> None:
    limits = ServerLimits(max_concurrent_streams=2)
    model = RecordingModel(README_TURN, hold_after=1)  # the first two are in flight until cancelled
    async with (
        ModelServer(model, limits=limits) as grpc_server,
        HttpServer(grpc_server) as http_server,
        pp.ModelClient(grpc_server.target) as grpc_client,
        HttpModelClient(http_server.url) as client,
    ):
        first, second = grpc_client.stream(readme_context()), client.stream(readme_context())
        await anext(first)
        await anext(second)
        assert grpc_server.open_streams == 2
        refused = client.stream(readme_context())
        _, third = await drain(refused)
        status, error = await sse_status(http_server.url)
        _, over_grpc = await drain(grpc_client.stream(readme_context()))
        first.cancel()
        second.cancel()
        await asyncio.gather(drain(first), drain(second))
        await eventually(lambda: grpc_server.open_streams == 0, "the cancelled calls give their slots back")
        model.release.set()
        _, fourth = await drain(client.stream(readme_context()))
    full = "too many concurrent streams: this server serves 2 at once"
    assert third.error_message == full
    assert refused.failure is not None
    assert refused.failure.status_code == "RESOURCE_EXHAUSTED"
    assert (status, error) == (429, {"code": "resource_exhausted", "message": full})
    assert over_grpc.error_message == full
    assert fourth.stop_reason == pp.StopReason.TOOL_USE


async def test_requests_above_the_size_and_count_limits_are_refused() -> None:
    limits = ServerLimits(max_request_bytes=4096, max_messages=3)
    big = pp.AgentContext(messages=[pp.agent_message(pp.user_message("x" * 5000, timestamp=1))])
    many = pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi", timestamp=1))] * 4)
    async with (
        ModelServer(ScriptedModel.readme(), limits=limits) as grpc_server,
        HttpServer(grpc_server) as http_server,
    ):
        for protocol in ("connect", "grpc-web"):
            async with HttpModelClient(http_server.url, protocol=protocol) as client:
                too_big, too_many = client.stream(big), client.stream(many)
                await drain(too_big)
                _, second = await drain(too_many)
            assert too_big.failure is not None
            assert too_big.failure.status_code == "RESOURCE_EXHAUSTED", protocol
            assert too_many.failure is not None
            assert too_many.failure.status_code == "RESOURCE_EXHAUSTED", protocol
            assert second.error_message == "the context has 4 messages, above this server's limit of 3"
        size_status, size_error = await sse_status(
            http_server.url, json.loads(pp.to_json(pp.StreamRequest(context=big)))
        )
        count_status, count_error = await sse_status(
            http_server.url, json.loads(pp.to_json(pp.StreamRequest(context=many)))
        )
    assert (size_status, size_error["code"]) == (413, "resource_exhausted")
    assert size_error["message"] == "the request has more than this server's limit of 4096 bytes"
    assert (count_status, count_error["message"]) == (413, second.error_message)  # cannot succeed as it is


async def test_a_stream_longer_than_the_server_limit_ends_with_an_error_event() -> None:
    limits = ServerLimits(stream_timeout=0.3)
    model = RecordingModel(README_TURN, hold_after=3)  # three events, then nothing until the limit
    async with ModelServer(model, limits=limits) as grpc_server, HttpServer(grpc_server) as http_server:
        async with HttpModelClient(http_server.url) as client:
            seen, message = await drain(client.stream(readme_context()))
        status, last = await sse_status(http_server.url)
    too_long = "the stream ran longer than the server's limit of 0.3 s"
    assert message.stop_reason == pp.StopReason.ERROR
    assert message.error_message == too_long
    assert [kind(event) for event in seen] == ["start", "text_start", "text_delta", "error"]
    assert (status, last["type"], last["reason"], last["error"]["errorMessage"]) == (200, "error", "error", too_long)


def _stalled(port: int, path: str, content_type: str, body: bytes) -> socket.socket:
    """A client that sends its request and never reads, with a small receive window."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    head = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
    sock.sendall(head.encode() + b"\r\n" + body)
    return sock


@pytest.mark.parametrize("protocol", ["connect", "sse"])
async def test_a_stalled_stream_holds_a_bounded_number_of_bytes(protocol: str) -> None:
    limits = ServerLimits(max_queued_bytes=256 * 1024)
    # 256 deltas of 64 KiB: HTTP/1.1 has no flow control of its own, so the kernel's socket buffers
    # (a few MB on loopback) take some before the server's writes wait, and the model with them.
    model = WatchedModel([pp.assistant_message("w" * 16 * 1024 * 1024, timestamp=1)], delta_size=64 * 1024)
    request = pp.StreamRequest(context=readme_context())
    async with ModelServer(model, limits=limits) as grpc_server, HttpServer(grpc_server) as http_server:
        if protocol == "sse":
            sock = _stalled(http_server.port, SSE_PATH, "application/json", pp.to_json(request).encode())
        else:
            data = pp.encode(request)
            body = struct.pack(">BI", 0, len(data)) + data
            sock = _stalled(http_server.port, "/pi.ai.v1.ModelService/Stream", "application/connect+proto", body)
        # Until the model waits for room (a full queue drained only to above half keeps it waiting).
        await eventually(lambda: model.streams and model.streams[0]._writers, "the model waits for the client")
        stream = model.streams[0]
        held = stream._queued_bytes
        produced = stream._accumulator.count
        sock.close()
        # The server sees the client leave and cancels the model.
        assert (await stream.result()).stop_reason == pp.StopReason.ABORTED
    assert held <= limits.max_queued_bytes
    assert produced < 128, produced  # of 256 deltas: the model waited for the client


async def test_a_cancelled_connect_call_cancels_the_model() -> None:
    model = RecordingModel(pp.assistant_message("x" * 1000, timestamp=1), hold_after=1)  # never ends by itself
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
        async with HttpModelClient(http_server.url) as client:
            events = client.stream(readme_context())
            assert kind(await anext(events)) == "start"
            events.cancel()
            rest, message = await drain(events)
        assert kind(rest[-1]) == "error"
        assert message.stop_reason == pp.StopReason.ABORTED
        await _model_cancelled(model, http_server, grpc_server)


async def test_an_sse_client_that_leaves_cancels_the_model() -> None:
    model = RecordingModel(pp.assistant_message("x" * 1000, timestamp=1), hold_after=1)  # never ends by itself
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
        async with pyqwest.Client().stream(
            "POST", http_server.url + SSE_PATH, headers=JSON, content=json.dumps(REQUEST).encode()
        ) as response:
            first = await anext(aiter(read_sse(response.content)))
            assert first["type"] == "start"
        await _model_cancelled(model, http_server, grpc_server)


async def _model_cancelled(model: RecordingModel, http_server: HttpServer, grpc_server: ModelServer) -> None:
    """The model's one stream ends ABORTED, its task cancelled, and the call gives its slot back."""
    await asyncio.wait(model.producers)
    assert model.producers[0].cancelled()
    assert (await model.streams[0].result()).stop_reason == pp.StopReason.ABORTED
    await eventually(lambda: http_server.active_streams == 0, "the HTTP call ends")
    await eventually(lambda: grpc_server.open_streams == 0, "the HTTP call gives its slot back")


@pytest.mark.parametrize("stopping", ["http", "grpc"])
async def test_stopping_ends_in_flight_http_streams_with_aborted(stopping: str) -> None:
    grpc_server = ModelServer(RecordingModel(README_TURN, hold_after=1))  # in flight until stopped
    http_server = HttpServer(grpc_server)
    await grpc_server.start()
    await http_server.start()
    try:
        async with HttpModelClient(http_server.url) as client:
            events = client.stream(readme_context())
            await anext(events)
            await (http_server.stop(grace=5) if stopping == "http" else grpc_server.stop(grace=5))
            _, message = await drain(events)
    finally:
        await http_server.stop()
        await grpc_server.stop()
    assert message.stop_reason == pp.StopReason.ABORTED
    assert message.error_message == "the server is shutting down"


@pytest.mark.parametrize("protocol", ["connect", "sse"])
async def test_a_client_that_never_reads_loses_its_slot_after_the_timeout(protocol: str) -> None:
    limits = ServerLimits(max_concurrent_streams=2, stream_timeout=0.5)
    model = ScriptedModel([pp.assistant_message("z" * 16 * 1024 * 1024, timestamp=1)], delta_size=64 * 1024)
    request = pp.StreamRequest(context=readme_context())
    async with ModelServer(model, limits=limits) as grpc_server, HttpServer(grpc_server) as http_server:
        held = held_when_timed_out(grpc_server)
        if protocol == "sse":
            stalled = [
                _stalled(http_server.port, SSE_PATH, "application/json", pp.to_json(request).encode()) for _ in range(2)
            ]
        else:
            data = pp.encode(request)
            body = struct.pack(">BI", 0, len(data)) + data
            path = "/pi.ai.v1.ModelService/Stream"
            stalled = [_stalled(http_server.port, path, "application/connect+proto", body) for _ in range(2)]
        # The timeout (0.5 s) and its grace (1 s) free every slot, whatever the clients do.
        await eventually(
            lambda: len(held) == 2 and grpc_server.open_streams == http_server.active_streams == 0,
            "the stalled calls lose their slots",
        )
        assert held == [True] * 2  # each call held its slot until its time ran out: its client read nothing
        async with HttpModelClient(http_server.url) as client:
            seen, _ = await drain(client.stream(readme_context(), timeout=10))
        assert kind(seen[0]) == "start"  # served again, not refused
        for sock in stalled:
            sock.close()


def _slow_body(port: int, path: str, content_type: str, declared: int) -> socket.socket:
    """A client that declares a body of `declared` bytes and sends none of it."""
    sock = socket.create_connection(("127.0.0.1", port))
    head = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: {content_type}\r\ncontent-length: {declared}\r\n"
    sock.sendall(head.encode() + b"\r\n")
    return sock


async def _answer(sock: socket.socket) -> bytes:
    """What the server answers on `sock`, up to its last chunk (read off the event loop)."""
    sock.settimeout(5)

    def read() -> bytes:
        data = b""
        with contextlib.suppress(TimeoutError):
            while chunk := sock.recv(65536):
                data += chunk
                if data.endswith(b"\r\n0\r\n\r\n"):  # the last chunk of the error body
                    break
        return data

    return await asyncio.to_thread(read)


@pytest.mark.parametrize(
    ("path", "content_type"),
    [(SSE_PATH, "application/json"), ("/pi.ai.v1.ModelService/Stream", "application/connect+proto")],
    ids=["sse", "connect"],
)
async def test_a_request_still_arriving_holds_no_stream_slot(path: str, content_type: str) -> None:
    limits = ServerLimits(max_concurrent_streams=1)
    model = ScriptedModel.readme()
    async with ModelServer(model, limits=limits) as grpc_server, HttpServer(grpc_server) as http_server:
        slow = _slow_body(http_server.port, path, content_type, 500)
        await eventually(lambda: http_server.open_connections == 1, "the server takes the connection")
        assert grpc_server.open_streams == 0
        status, last = await sse_status(http_server.url)
        async with HttpModelClient(http_server.url) as client:
            _, message = await drain(client.stream(readme_context()))
        slow.close()
    assert (status, last["type"]) == (200, "done")
    assert message.stop_reason == pp.StopReason.TOOL_USE


async def test_sse_refuses_a_declared_length_above_the_limit_at_once() -> None:
    limits = ServerLimits(max_request_bytes=4096)
    model = ScriptedModel.readme()
    async with ModelServer(model, limits=limits) as grpc_server, HttpServer(grpc_server) as http_server:
        sock = _slow_body(http_server.port, SSE_PATH, "application/json", 100_000_000)
        answer = await _answer(sock)
        sock.close()
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert b"the request has more than this server's limit of 4096 bytes" in answer


async def test_sse_refuses_a_request_slower_than_the_stream_timeout() -> None:
    limits = ServerLimits(stream_timeout=0.3)
    model = ScriptedModel.readme()
    async with ModelServer(model, limits=limits) as grpc_server, HttpServer(grpc_server) as http_server:
        sock = _slow_body(http_server.port, SSE_PATH, "application/json", 500)
        answer = await _answer(sock)
        sock.close()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"the request took longer to arrive than the server's limit of 0.3 s" in answer


async def test_sse_names_the_scheme_it_wants_when_refusing(guarded: tuple[ModelServer, HttpServer]) -> None:
    _, http_server = guarded
    async with pyqwest.Client().stream("POST", http_server.url + SSE_PATH, content=b"{}") as response:
        assert response.status == 401
        assert response.headers["www-authenticate"] == "Bearer"


def _connect_json(context: pp.AgentContext) -> bytes:
    """A Connect server-streaming request in JSON: one enveloped ProtoJSON message."""
    message = pp.to_json(pp.StreamRequest(context=context)).encode()
    return struct.pack(">BI", 0, len(message)) + message


async def _connect_json_status(url: str, context: pp.AgentContext) -> tuple[int, bytes]:
    async with pyqwest.Client().stream(
        "POST",
        url + "/pi.ai.v1.ModelService/Stream",
        headers={"content-type": "application/connect+json"},
        content=_connect_json(context),
    ) as response:
        return response.status, b"".join([bytes(chunk) async for chunk in response.content])


COUNTED = {"max_messages": 3, "max_blocks": 5}


def _sse_body(way: str, context: pp.AgentContext) -> Any:
    """The context as a pi-JSON body, or as a StreamRequest's ProtoJSON."""
    if way == "sse-pi-json":
        return {"messages": [pp.message_to_pi(message) for message in context.messages]}
    return json.loads(pp.to_json(pp.StreamRequest(context=context)))


@pytest.mark.parametrize(
    ("way", "context"),
    [
        ("sse-pi-json", pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi", timestamp=1))] * 4)),
        ("sse-proto-json", pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi", timestamp=1))] * 4)),
        ("connect-json", pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi", timestamp=1))] * 4)),
        ("sse-pi-json", pp.AgentContext(messages=[pp.agent_message(pp.user_message(*["a"] * 6, timestamp=1))])),
        (
            "connect-json",
            pp.AgentContext(messages=[pp.agent_message(pp.user_message(*["a"] * 6, timestamp=1))]),
        ),
    ],
)
async def test_a_context_over_a_count_is_refused_before_it_is_converted(
    monkeypatch: pytest.MonkeyPatch, way: str, context: pp.AgentContext
) -> None:
    converted: list[str] = []
    monkeypatch.setattr(sse_module, "context_from_pi", lambda *_: converted.append("pi-json"))
    real_parse = json_format.ParseDict

    def parse(value: Any, message: Any, **options: Any) -> Any:
        if message.DESCRIPTOR.name == "StreamRequest":
            converted.append("proto-json")
        return real_parse(value, message, **options)

    monkeypatch.setattr(json_format, "ParseDict", parse)
    limits = ServerLimits(**COUNTED)
    async with ModelServer(ScriptedModel.readme(), limits=limits) as grpc_server, HttpServer(grpc_server) as web:
        if way == "connect-json":
            status, body = await _connect_json_status(web.url, context)
            code = json.loads(body[5:])["error"]["code"]  # the end-of-stream message
        else:
            value = _sse_body(way, context)
            status, error = await sse_status(web.url, value)
            code = error["code"]
    assert (status, code) == ((200 if way == "connect-json" else 413), "resource_exhausted")
    assert converted == []


@pytest.mark.parametrize("way", ["sse-pi-json", "sse-proto-json", "connect-json"])
async def test_a_large_request_is_decoded_off_the_event_loop(monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    threads: list[bool] = []
    for module, name in ((sse_module, "request_bytes"), (service_module, "from_proto_json")):
        real = getattr(module, name)

        def spy(*args: Any, real: Any = real) -> Any:
            threads.append(threading.current_thread() is threading.main_thread())
            return real(*args)

        monkeypatch.setattr(module, name, spy)
    context = pp.AgentContext(messages=[pp.agent_message(pp.user_message("x" * 300_000, timestamp=1))])
    async with ModelServer(ScriptedModel.readme()) as grpc_server, HttpServer(grpc_server) as web:
        if way == "connect-json":
            status, body = await _connect_json_status(web.url, context)
            assert b'"done"' in body
        else:
            value = _sse_body(way, context)
            status, last = await sse_status(web.url, value)
            assert last["type"] == "done"
    assert status == 200
    assert threads == [False]  # decoded once, not on the event loop's thread
