"""gRPC-web's text form (base64 bodies both ways), as grpc-web's browser clients send it by default:
the same stream as the binary form, and its refusals as gRPC-web statuses."""

from __future__ import annotations

import base64
import socket
import struct
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyqwest
import pytest

import pi_proto as pp
from pi_proto.grpc.requests import ServerLimits
from pi_proto.grpc.server import ModelServer
from pi_proto.models.scripted import ScriptedModel
from pi_proto.web import HttpServer

from .helpers import HANG_SECONDS, readme_context, serve_process

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


def answer_to_an_unfinished_body(address: str, token: str | None) -> bytes:
    """The head of what `pi-proto serve` answers a text-form Stream whose body never finishes: 10
    of the 1,000 bytes it announces are sent, and the connection stays open."""
    host, _, port = address.rpartition(":")
    head = [
        f"POST {STREAM} HTTP/1.1",
        f"host: {address}",
        "content-type: application/grpc-web-text",
        "x-grpc-web: 1",
        "content-length: 1000",
        *([f"authorization: Bearer {token}"] if token else []),
    ]
    with socket.create_connection((host, int(port)), timeout=HANG_SECONDS) as connection:
        connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + b"A" * 10)
        answer = b""
        while b"\r\n\r\n" not in answer:
            piece = connection.recv(65536)
            assert piece, f"the server closed the connection without an answer: {answer!r}"
            answer += piece
    return answer.lower()


@contextmanager
def served(tmp_path: Path, *flags: str) -> Iterator[str]:
    """`pi-proto serve` as users run it, with a token: yields its HTTP address."""
    token = tmp_path / "token"
    token.write_text("s3cret\n", encoding="utf-8")
    with serve_process("--http-port", "0", "--token-file", str(token), *flags) as (process, _):
        assert process.stdout is not None
        yield process.stdout.readline().removeprefix("http on ").strip()


def test_a_text_form_call_without_the_token_is_refused_before_its_body_is_read(tmp_path: Path) -> None:
    with served(tmp_path) as address:
        answer = answer_to_an_unfinished_body(address, None)
    assert b"grpc-status: 16" in answer, answer


def test_a_text_form_body_that_never_finishes_ends_at_the_stream_timeout(tmp_path: Path) -> None:
    with served(tmp_path, "--stream-timeout", "2") as address:
        answer = answer_to_an_unfinished_body(address, "s3cret")
    assert b"grpc-status: 4" in answer, answer
