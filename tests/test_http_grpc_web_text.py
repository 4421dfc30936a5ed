"""gRPC-web's text form (base64 bodies both ways), as grpc-web's browser clients send it by default:
the same stream as the binary form, and its refusals as gRPC-web statuses."""

from __future__ import annotations

import base64
import struct
from collections.abc import AsyncIterator

import pyqwest
import pytest

import pi_proto as pp
from pi_proto.grpc.requests import ServerLimits
from pi_proto.grpc.server import ModelServer
from pi_proto.models.scripted import ScriptedModel
from pi_proto.web import HttpServer

from .helpers import readme_context

STREAM = "/pi.ai.v1.ModelService/Stream"
TEXT = {"content-type": "application/grpc-web-text", "x-grpc-web": "1"}


@pytest.fixture
async def url() -> AsyncIterator[str]:
    limits = ServerLimits(max_request_bytes=4096)
    async with ModelServer(ScriptedModel.readme(), limits=limits) as grpc_server, HttpServer(grpc_server) as web:
        yield web.url


def framed(message: bytes) -> bytes:
    return struct.pack(">BI", 0, len(message)) + message


def decoded(text: bytes) -> bytes:
    """A text-form answer: base64 chunks, each padded on its own, read four characters at a time."""
    return b"".join(base64.b64decode(text[start : start + 4]) for start in range(0, len(text), 4))


def frames(body: bytes) -> list[tuple[int, bytes]]:
    found = []
    while body:
        flags, size = struct.unpack(">BI", body[:5])
        found.append((flags, body[5 : 5 + size]))
        body = body[5 + size :]
    return found


async def test_the_text_form_streams_what_the_binary_form_does(url: str) -> None:
    request = framed(pp.encode(pp.StreamRequest(context=readme_context())))
    text = await pyqwest.Client().post(url + STREAM, headers=TEXT, content=base64.b64encode(request))
    binary_headers = {**TEXT, "content-type": "application/grpc-web+proto"}
    binary = await pyqwest.Client().post(url + STREAM, headers=binary_headers, content=request)
    assert text.status == 200
    assert text.headers["content-type"] == "application/grpc-web-text+proto"
    received = frames(decoded(text.content))
    events = [pp.decode(pp.ModelEvent, data) for flags, data in received if flags == 0]
    assert events[-1].done is not None
    assert [pp.event_kind(event)[0] for event in events] == [
        pp.event_kind(pp.decode(pp.ModelEvent, data))[0] for flags, data in frames(binary.content) if flags == 0
    ]
    flags, trailers = received[-1]
    assert flags == 0x80
    assert b"grpc-status: 0" in trailers


async def test_the_text_form_refuses_what_is_not_base64_or_too_big(url: str) -> None:
    garbage = await pyqwest.Client().post(url + STREAM, headers=TEXT, content=b"not*base64")
    too_big = await pyqwest.Client().post(url + STREAM, headers=TEXT, content=b"QUFB" * 2000)
    assert (garbage.headers["grpc-status"], too_big.headers["grpc-status"]) == ("3", "8")
    assert garbage.headers["grpc-message"].startswith("the grpc-web-text body is not base64")
    assert too_big.headers["grpc-message"] == "the request has more than this server%27s limit of 4096 bytes"
