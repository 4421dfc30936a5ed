"""Web pages of other origins (CORS): the preflight and the headers of an allowed origin's calls,
a refused origin's preflight and requests, the server's own origin, and a server that allows none
(`pi-proto serve --cors-origin`)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import pyqwest
import pytest

import pi_proto as pp
from pi_proto.grpc.server import ModelServer
from pi_proto.models.scripted import ScriptedModel
from pi_proto.web import SSE_PATH, HttpServer, checked_origin, read_sse

from .helpers import RecordingModel, readme_context

PAGE = "https://app.example"
STREAM = "/pi.ai.v1.ModelService/Stream"
PREFLIGHT = {"access-control-request-method": "POST", "access-control-request-headers": "content-type,authorization"}


@pytest.fixture
async def allowing() -> AsyncIterator[str]:
    async with ModelServer(ScriptedModel.readme()) as grpc_server, HttpServer(grpc_server, cors_origins=[PAGE]) as web:
        yield web.url


@pytest.mark.parametrize("path", [SSE_PATH, STREAM])
async def test_an_allowed_origin_passes_the_preflight(allowing: str, path: str) -> None:
    reply = await pyqwest.Client().options(allowing + path, headers={"origin": PAGE, **PREFLIGHT})
    assert reply.status == 204
    assert reply.headers["access-control-allow-origin"] == PAGE
    assert reply.headers["access-control-allow-methods"] == "GET, POST"
    assert reply.headers["access-control-allow-headers"] == "content-type,authorization"


async def test_an_allowed_origin_reads_the_stream_and_grpc_webs_status(allowing: str) -> None:
    request = json.dumps({"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}).encode()
    headers = {"origin": PAGE, "content-type": "application/json"}
    async with pyqwest.Client().stream("POST", allowing + SSE_PATH, headers=headers, content=request) as sse:
        assert sse.headers["access-control-allow-origin"] == PAGE
        assert "grpc-status" in sse.headers["access-control-expose-headers"]
        events = [event async for event in read_sse(sse.content)]
    assert events[-1]["type"] == "done"


async def test_another_origin_is_refused_at_the_preflight(allowing: str) -> None:
    other = {"origin": "https://elsewhere.example"}
    preflight = await pyqwest.Client().options(allowing + SSE_PATH, headers={**other, **PREFLIGHT})
    assert preflight.status == 403
    assert json.loads(preflight.content)["message"] == f"this origin may not call; allowed: {PAGE}"
    assert "access-control-allow-origin" not in preflight.headers


# What a page of another origin can send without asking first (a CORS "simple" request), one per
# way in; the browser would hide each answer, but the model would run.
SIMPLE = [
    ("POST", SSE_PATH, "text/plain;charset=UTF-8"),
    ("POST", SSE_PATH, "application/x-www-form-urlencoded"),
    ("POST", STREAM, "text/plain"),
    ("POST", "/pi.ai.v1.ModelService/StreamBatched", "multipart/form-data; boundary=x"),
    ("GET", "/pi.ai.v1.ModelService/ListModels?encoding=json&message=%7B%7D", ""),
]


@pytest.mark.parametrize("allowed", [[], [PAGE]], ids=["no-origins", "another-allowed"])
@pytest.mark.parametrize(("method", "path", "content_type"), SIMPLE)
async def test_another_origins_simple_request_is_refused_before_the_model_runs(
    allowed: list[str], method: str, path: str, content_type: str
) -> None:
    model = RecordingModel(pp.assistant_message("hi", timestamp=1))
    body = pp.to_json(pp.StreamRequest(context=readme_context())).encode()
    headers = {"origin": "https://elsewhere.example", **({"content-type": content_type} if content_type else {})}
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server, cors_origins=allowed) as web:
        reply = await pyqwest.Client().execute(
            method, web.url + path, headers=headers, content=body if method == "POST" else None
        )
    assert reply.status == 403
    assert json.loads(reply.content)["code"] == "permission_denied"
    assert model.streams == []


async def test_without_origins_a_preflight_is_refused() -> None:
    async with ModelServer(ScriptedModel.readme()) as grpc_server, HttpServer(grpc_server) as web:
        reply = await pyqwest.Client().options(web.url + SSE_PATH, headers={"origin": PAGE, **PREFLIGHT})
    assert reply.status == 403
    assert json.loads(reply.content)["message"] == "this origin may not call; allowed: none (pages of this server only)"
    assert "access-control-allow-origin" not in reply.headers


async def test_a_page_of_the_servers_own_address_may_call_without_being_allowed() -> None:
    async with ModelServer(ScriptedModel.readme()) as grpc_server, HttpServer(grpc_server) as web:
        headers = {"origin": web.url, "content-type": "application/json"}
        request = json.dumps({"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}).encode()
        async with pyqwest.Client().stream("POST", web.url + SSE_PATH, headers=headers, content=request) as sse:
            events = [event async for event in read_sse(sse.content)]
    assert events[-1]["type"] == "done"


async def test_a_page_under_a_name_is_not_the_servers_own_unless_allowed() -> None:
    """DNS rebinding: a page of someone else's name, pointed at this server's address, sends its
    requests with that name as both its origin and its Host, which the server does not answer
    (421, before the origin is looked at: tests/test_http_hosts.py); the same request sent to the
    address itself is the server's own."""
    model = RecordingModel(pp.assistant_message("hi", timestamp=1))
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as web:
        rebound = await asyncio.to_thread(_status_of, web.port, f"rebound.example:{web.port}")
        own = await asyncio.to_thread(_status_of, web.port, f"127.0.0.1:{web.port}")
        # A name under .localhost is this machine's alone (RFC 6761): its page is the server's own.
        local = await asyncio.to_thread(_status_of, web.port, f"app.localhost:{web.port}")
    assert (rebound, own, local) == (421, 200, 200)
    assert len(model.streams) == 2


def _status_of(port: int, host: str) -> int:
    """The status of an SSE call sent to `port` with `host` as both its Host and its origin."""
    body = json.dumps({"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}).encode()
    head = (
        f"POST {SSE_PATH} HTTP/1.1\r\nhost: {host}\r\norigin: http://{host}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode() + body)
        return int(sock.recv(64).split(b" ")[1])


@pytest.mark.parametrize("text", ["app.example", "https://app.example/", "ftp://app.example", "https://a:port"])
def test_an_origin_is_a_scheme_and_a_host(text: str) -> None:
    with pytest.raises(ValueError, match="not an origin"):
        checked_origin(text)
