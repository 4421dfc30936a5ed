"""Web pages of other origins (CORS): the preflight and the headers of an allowed origin's calls,
a refused origin, and a server that allows none (`pi-proto serve --cors-origin`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pyqwest
import pytest

import pi_proto as pp
from pi_proto.scripted import ScriptedModel
from pi_proto.server import ModelServer
from pi_proto.web import SSE_PATH, HttpServer, checked_origin, read_sse

from .helpers import readme_context

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
    async with pyqwest.Client().stream("POST", allowing + SSE_PATH, headers={"origin": PAGE}, content=request) as sse:
        assert sse.headers["access-control-allow-origin"] == PAGE
        assert "grpc-status" in sse.headers["access-control-expose-headers"]
        events = [event async for event in read_sse(sse.content)]
    assert events[-1]["type"] == "done"


async def test_another_origin_is_refused_at_the_preflight_and_granted_nothing(allowing: str) -> None:
    other = {"origin": "https://elsewhere.example"}
    preflight = await pyqwest.Client().options(allowing + SSE_PATH, headers={**other, **PREFLIGHT})
    assert preflight.status == 403
    assert json.loads(preflight.content)["message"] == f"this origin may not call; allowed: {PAGE}"
    body = pp.to_json(pp.StreamRequest(context=readme_context())).encode()
    async with pyqwest.Client().stream("POST", allowing + SSE_PATH, headers=other, content=body) as reply:
        assert reply.status == 200  # the browser, not the server, keeps the page from reading it
        assert "access-control-allow-origin" not in reply.headers


async def test_any_origin_with_a_star() -> None:
    async with ModelServer(ScriptedModel.readme()) as grpc_server, HttpServer(grpc_server, cors_origins=["*"]) as web:
        reply = await pyqwest.Client().options(web.url + STREAM, headers={"origin": PAGE, **PREFLIGHT})
    assert (reply.status, reply.headers["access-control-allow-origin"]) == (204, "*")


async def test_without_origins_a_server_grants_none() -> None:
    async with ModelServer(ScriptedModel.readme()) as grpc_server, HttpServer(grpc_server) as web:
        reply = await pyqwest.Client().options(web.url + SSE_PATH, headers={"origin": PAGE, **PREFLIGHT})
    assert reply.status == 405
    assert "access-control-allow-origin" not in reply.headers


@pytest.mark.parametrize("text", ["app.example", "https://app.example/", "ftp://app.example", "https://a:port"])
def test_an_origin_is_a_scheme_and_a_host(text: str) -> None:
    with pytest.raises(ValueError, match="not an origin"):
        checked_origin(text)
