"""Our HTTP endpoints as protocols under comparison: SSE of pi-JSON events and Connect.

Both are served by `pi-proto serve --http-port`, the same command, models and per-call code as our
gRPC server (bench/protocols.py), in a process of its own.

- SSE (`POST /v1/stream`): the user's client is the very httpx + httpx-sse reader of the peer
  (bench/sse.py), parsing every event's JSON and appending the text, since our events have pi's
  shape too; the probe is the peer's raw HTTP/1.1 reader that counts blank lines. So the two SSE
  rows differ only by their server.
- pi-messages (`POST /messages`): pi's own protocol, its events without `partial`; read by the
  same httpx + httpx-sse reader, whose final text is text_end's `content` there.
- Connect (proto, StreamBatched): the user's client is pi_proto.web's HttpModelClient on
  connectrpc's client, which decodes every event and rebuilds its partial as ModelClient does; the
  probe reads raw HTTP/1.1 and counts the events of each batch without decoding them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import pi_proto as pp
from pi_proto.web import HttpModelClient

from . import sse
from .protocols import CONTEXT, REQUEST, Client, Protocol, Served, Workload, batch_events
from .workloads import our_http_server, text_turn

CONNECT_PATH = "/pi.ai.v1.ModelService/StreamBatched"
SCRIPTED_MODEL = "scripted-v1"  # the id of the model `pi-proto serve --script` plays
END_STREAM = 0x02  # Connect's flag on the envelope that ends a stream (its status, as JSON)


@contextmanager
def _serve(workload: Workload) -> Iterator[Served]:
    flags = ["--max-streams", "100000"]  # the capacity search goes past the default of 256
    if workload.delay:
        flags += ["--delay", f"{workload.delay:.6f}"]
    with our_http_server(text_turn(workload.events), *flags) as (process, target):
        yield Served(process.pid, target)


OURS_SSE = Protocol(
    name="pi-proto SSE",
    serve=_serve,
    client=sse.SSE.client,
    probe=sse.SSE.probe,
    wire_bytes=sse.SSE.wire_bytes,
    counted="HTTP response body",
)

# pi's own protocol, as pi's pi-messages API asks: the model by id, the context and options.
PI_MESSAGES = sse.Endpoint("/messages", {"model": SCRIPTED_MODEL, "context": sse.REQUEST, "options": {}})

OURS_PI_MESSAGES = Protocol(
    name="pi-proto pi-messages",
    serve=_serve,
    client=sse.sse_client(PI_MESSAGES),
    probe=sse.sse_probe(PI_MESSAGES),
    wire_bytes=sse.body_bytes_of(PI_MESSAGES),
    counted="HTTP response body",
)


# --- Connect ---------------------------------------------------------------------------------------------


@asynccontextmanager
async def _connect(target: str) -> AsyncIterator[HttpModelClient]:
    async with HttpModelClient(f"http://{target}", protocol="connect", codec="proto") as client:
        yield client


async def _read(client: HttpModelClient, arrivals: list[float] | None) -> int:
    count = 0
    events = client.stream(CONTEXT)
    async for event in events:
        if arrivals is not None:
            arrivals.append(time.perf_counter())
        count += 1
        assert event.partial is not None  # the accumulator ran
    message = await events.result()
    assert message.stop_reason == pp.StopReason.STOP, message.error_message
    return count


class ConnectReader(asyncio.Protocol):
    """One Connect streaming response read raw: the HTTP head, the chunked body, and in it the
    envelopes (a flag byte and a 4-byte length before each message); counts the events of each
    StreamBatchedResponse as it arrives, and the body's bytes."""

    def __init__(self, arrivals: list[float] | None) -> None:
        self.arrivals = arrivals
        self.events = 0
        self.body_bytes = 0
        self.done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._raw = b""  # received, not yet de-chunked
        self._head = True
        self._chunk_left = 0  # bytes of the current chunk still to come, then its CRLF
        self._body = b""  # de-chunked, not yet a whole envelope

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        self._raw += data
        try:
            self._dechunk()
            self._envelopes(now)
        except AssertionError as error:
            if not self.done.done():
                self.done.set_exception(error)

    def _dechunk(self) -> None:
        if self._head:
            end = self._raw.find(b"\r\n\r\n")
            if end < 0:
                return
            head, self._raw, self._head = self._raw[:end].lower(), self._raw[end + 4 :], False
            assert head.startswith(b"http/1.1 200"), f"the server answered {head[:40]!r}"
            assert b"transfer-encoding: chunked" in head, "expected a chunked response"
        while self._raw:
            if self._chunk_left:
                part = self._raw[: self._chunk_left]
                self._body += part
                self.body_bytes += len(part)
                self._chunk_left -= len(part)
                self._raw = self._raw[len(part) :]
                continue
            line_end = self._raw.find(b"\r\n", 2 if self._raw.startswith(b"\r\n") else 0)
            if line_end < 0:
                return
            self._chunk_left = int(self._raw[:line_end].strip(), 16)
            self._raw = self._raw[line_end + 2 :]

    def _envelopes(self, now: float) -> None:
        while len(self._body) >= 5:
            size = int.from_bytes(self._body[1:5], "big")
            if len(self._body) < 5 + size:
                return
            flags, message, self._body = self._body[0], self._body[5 : 5 + size], self._body[5 + size :]
            if flags & END_STREAM:
                assert message in (b"{}", b""), f"the stream ended with {message[:200]!r}"
                if not self.done.done():
                    self.done.set_result(self.events)
                return
            arrived = batch_events(message)
            self.events += arrived
            if self.arrivals is not None:
                self.arrivals.extend([now] * arrived)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(exc or ConnectionError("the server closed the connection mid-response"))


async def _raw_call(host_port: tuple[str, int], arrivals: list[float] | None) -> ConnectReader:
    host, port = host_port
    body = b"\x00" + len(REQUEST).to_bytes(4, "big") + REQUEST
    head = f"POST {CONNECT_PATH} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/connect+proto\r\n"
    head += f"connect-protocol-version: 1\r\ncontent-length: {len(body)}\r\n\r\n"
    transport, reader = await asyncio.get_running_loop().create_connection(lambda: ConnectReader(arrivals), host, port)
    try:
        transport.write(head.encode() + body)
        await reader.done
        return reader
    finally:
        transport.close()


async def _probe(host_port: tuple[str, int], arrivals: list[float] | None) -> int:
    return (await _raw_call(host_port, arrivals)).events


async def _connect_bytes(target: str) -> int:
    async with sse.address(target) as host_port:
        return (await _raw_call(host_port, None)).body_bytes


OURS_CONNECT = Protocol(
    name="pi-proto Connect",
    serve=_serve,
    client=Client(_connect, _read),
    probe=Client(sse.address, _probe),
    wire_bytes=_connect_bytes,
    counted="HTTP response body: envelopes, 5 B prefix each, and the end of stream",
)
