"""Request bodies still arriving are bounded together (`HttpLimits.max_arriving_bytes`, 64 MiB):
against `pi-proto serve` as users run it, clients that send large bodies and never finish them
cannot make the server hold more; the one that would is answered 503 at once."""

from __future__ import annotations

import select
import socket

import pytest

from .helpers import HANG_SECONDS, serve_process

PIECE = b"x" * (1024 * 1024)


def opened(address: str) -> socket.socket:
    """A connection that announces a body of 16 MiB (the request limit)."""
    host, _, port = address.rpartition(":")
    connection = socket.create_connection((host, int(port)), timeout=HANG_SECONDS)
    head = (
        f"POST /v1/stream HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n"
        f"content-length: {16 * 1024 * 1024}\r\n\r\n"
    )
    connection.sendall(head.encode())
    return connection


def first_answer(connections: list[socket.socket], megabytes: int) -> bytes:
    """Send `megabytes` of each body in turn, a MiB at a time, never finishing one; the first
    answer any connection gets (a connection answered is sent no more)."""
    for connection in connections:
        for _ in range(megabytes):
            if select.select([connection], [], [], 0)[0]:
                return whole_answer(connection)
            try:
                connection.sendall(PIECE)
            except (BrokenPipeError, ConnectionResetError):
                return whole_answer(connection)
    answered, _, _ = select.select(connections, [], [], HANG_SECONDS)
    assert answered, "no connection was answered"
    return whole_answer(answered[0])


def whole_answer(connection: socket.socket) -> bytes:
    """An answer's head and its whole body (`content-length`), which may come in several reads."""
    answer = b""
    while True:
        head, _, body = answer.partition(b"\r\n\r\n")
        length = next(
            (int(line.split(b":")[1]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")),
            None,
        )
        if length is not None and len(body) >= length:
            return answer
        try:
            piece = connection.recv(65536)
        except ConnectionResetError:
            return answer
        if not piece:
            return answer
        answer += piece


def test_bodies_arriving_past_the_budget_are_refused_503() -> None:
    with serve_process("--http-port", "0") as (process, _):
        assert process.stdout is not None
        address = process.stdout.readline().removeprefix("http on ").strip()
        connections = [opened(address) for _ in range(5)]
        try:
            answer = first_answer(connections, 15)  # 75 MiB in all, no body finished
        finally:
            for connection in connections:
                connection.close()
    assert answer.startswith(b"HTTP/1.1 503 "), answer[:200]
    assert b"request bodies already" in answer


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/pi.ai.v1.ModelService/Stream", "application/connect+proto"),
        ("/pi.ai.v1.ModelService/Stream", "application/grpc-web+proto"),
        ("/v1/stream", "application/json"),
    ],
)
def test_a_body_that_does_not_finish_within_the_stream_timeout_is_refused_408(path: str, content_type: str) -> None:
    with serve_process("--http-port", "0", "--stream-timeout", "1") as (process, _):
        assert process.stdout is not None
        address = process.stdout.readline().removeprefix("http on ").strip()
        host, _, port = address.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=HANG_SECONDS) as connection:
            head = f"POST {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: {content_type}\r\n"
            head += "content-length: 100\r\n\r\n"
            connection.sendall(head.encode() + b"\x00\x00")  # two bytes of a hundred, and no more
            answer = whole_answer(connection)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b'"deadline_exceeded"' in answer
