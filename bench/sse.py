"""The peer users would pick instead of us: JSON events over Server-Sent Events.

The server is a Starlette StreamingResponse on uvicorn as `uvicorn[standard]` runs it (uvloop and
httptools), in a process of its own like ours: POST /v1/stream with the context as pi-JSON, and it
streams the same turn as our scripted server (bench/workloads.py text_turn) as pi-JSON-ish event
objects, one `data:` line each: start, text_start, the text deltas, text_end, done. Like our wire,
text_end does not repeat the text and only done carries the final message. Each event is built and
`json.dumps`ed per call, as a server relaying a model would.

The client is what the AI SDK and OpenAI clients do, on httpx and httpx-sse: per event, parse the
SSE lines and the JSON, and append the text. Each user holds an AsyncClient of its own (so a
connection of its own); one pool shared by hundreds of calls would measure httpcore's pool, which
walks all its connections whenever a response closes. The probe for the capacity search reads raw
HTTP/1.1 and only counts the blank lines that end events.

Run as a process (python -m bench.sse --events N [--delay S]); it prints `listening on HOST:PORT`
like `pi-proto serve`. Paced, event n is due S x n seconds after the call starts, as with
`pi-proto serve --delay` (a late timer delays one event, not all that follow), and its pace does
not hang on the writes: uvicorn's send only blocks past its buffer's high-water mark.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import ssl
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from httpx_sse import aconnect_sse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from pi_proto.transcripts.pi_json import assistant_to_pi

from .protocols import Client, Protocol, Served, Workload
from .workloads import DELTA_SIZE, serving, text_turn

PATH = "/v1/stream"
REQUEST = {"messages": [{"role": "user", "content": "go", "timestamp": 1}]}  # the context, as pi-JSON


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))  # compact, as JSON.stringify writes it


def pi_events(turn: dict[str, Any], delta_size: int = DELTA_SIZE) -> Iterator[dict[str, Any]]:
    """The events that stream a text-only pi-JSON assistant message, built afresh for each call."""
    header = {key: value for key, value in turn.items() if key != "stopReason"} | {"content": []}
    yield {"type": "start", "partial": header}
    for index, block in enumerate(turn["content"]):
        assert block["type"] == "text", "the peer streams text blocks only"
        text = block["text"]
        yield {"type": "text_start", "contentIndex": index}
        for start in range(0, len(text), delta_size):
            yield {"type": "text_delta", "contentIndex": index, "delta": text[start : start + delta_size]}
        yield {"type": "text_end", "contentIndex": index}
    yield {"type": "done", "reason": turn["stopReason"], "message": turn}


def app(events: int, delay: float) -> Starlette:
    turn = assistant_to_pi(text_turn(events))

    async def stream(request: Request) -> Response:
        context = json.loads(await request.body())
        if not isinstance(context, dict) or not isinstance(context.get("messages"), list):
            return Response("the body is a pi-JSON context", status_code=400)

        async def lines() -> AsyncIterator[str]:
            loop = asyncio.get_running_loop()
            started = loop.time()
            for number, event in enumerate(pi_events(turn), 1):
                if delay and (wait := started + number * delay - loop.time()) > 0:
                    await asyncio.sleep(wait)  # on a schedule from the start, as our server paces
                yield f"data: {dumps(event)}\n\n"

        return StreamingResponse(lines(), media_type="text/event-stream", headers={"cache-control": "no-cache"})

    return Starlette(routes=[Route(PATH, stream, methods=["POST"])])


def serve(events: int, delay: float) -> None:
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4096)  # connections wait in the backlog until uvicorn accepts them
    config = uvicorn.Config(
        app(events, delay),
        loop="uvloop",
        http="httptools",
        log_level="warning",
        access_log=False,
        backlog=4096,
        timeout_keep_alive=75,  # as long as a pooled client keeps idle connections (a common setting)
        timeout_graceful_shutdown=1,
    )
    print(f"listening on 127.0.0.1:{listener.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[listener])  # until SIGTERM


# --- the protocol ---------------------------------------------------------------------------------------


@contextmanager
def _serve(workload: Workload) -> Iterator[Served]:
    command = ["-m", "bench.sse", "--events", str(workload.events), "--delay", f"{workload.delay:.6f}"]
    with serving(command) as (process, target):
        yield Served(process.pid, target)


# Made once, as an application makes its client once: httpx would otherwise load the CA bundle for
# every client (about 18 ms), though plain-HTTP calls never use it.
_TLS = ssl.create_default_context()


@asynccontextmanager
async def connect(target: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=f"http://{target}", verify=_TLS, timeout=60.0) as client:
        yield client


@dataclass(frozen=True)
class Endpoint:
    """Where an SSE stream of pi events is asked for: the path and the JSON body of the POST."""

    path: str
    body: dict[str, Any]


PEER = Endpoint(PATH, REQUEST)


async def read_stream(
    client: httpx.AsyncClient, arrivals: list[float] | None = None, endpoint: Endpoint = PEER
) -> tuple[int, int]:
    """One call: (events, bytes of the response body). Every event's JSON is parsed and the text
    appended; the final text (done's message, or text_end's `content` where done carries none)
    must equal the deltas'."""
    count, parts = 0, []
    final: str | None = None
    async with aconnect_sse(client, "POST", endpoint.path, json=endpoint.body) as source:
        async for sse in source.aiter_sse():
            if arrivals is not None:
                arrivals.append(time.perf_counter())
            count += 1
            event = json.loads(sse.data)
            kind = event["type"]
            if kind == "text_delta":
                parts.append(event["delta"])
            elif kind == "text_end" and "content" in event:
                final = event["content"]
            elif kind == "done" and "message" in event:
                final = event["message"]["content"][0]["text"]
            elif kind == "error":
                raise AssertionError(f"the stream failed: {event}")
        body: int = source.response.num_bytes_downloaded
    assert final is not None, "the stream ended without its final text"
    assert final == "".join(parts), "the deltas differ from the final text"
    return count, body


def sse_client(endpoint: Endpoint) -> Client[httpx.AsyncClient]:
    """The user's client for `endpoint`: httpx and httpx-sse, parsing every event."""

    async def read(client: httpx.AsyncClient, arrivals: list[float] | None) -> int:
        events, _ = await read_stream(client, arrivals, endpoint)
        return events

    return Client(connect, read)


def body_bytes_of(endpoint: Endpoint) -> Callable[[str], Coroutine[Any, Any, int]]:
    async def body_bytes(target: str) -> int:
        async with connect(target) as client:
            _, body = await read_stream(client, None, endpoint)
        return body

    return body_bytes


# --- the probe: raw HTTP/1.1 on an asyncio protocol, counting the blank lines that end events ---------


class _Counter(asyncio.Protocol):
    """Counts the events of one response as its bytes arrive: each ends with a blank line, and the
    last chunk of a chunked body (0 CRLF CRLF) ends the response."""

    def __init__(self, arrivals: list[float] | None) -> None:
        self.arrivals = arrivals
        self.events = 0
        self.tail = b""  # the last bytes seen, for a blank line or end split between two reads
        self.done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        if not self.events and not self.tail and not data.startswith(b"HTTP/1.1 200"):
            self.done.set_exception(AssertionError(f"the server answered {data[:40]!r}"))
        seen = (self.tail[-1:] + data).count(b"\n\n")
        self.events += seen
        if self.arrivals is not None:
            self.arrivals.extend([now] * seen)
        self.tail = (self.tail + data)[-5:]
        if self.tail == b"0\r\n\r\n" and not self.done.done():
            self.done.set_result(self.events)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(exc or ConnectionError("the server closed the connection mid-response"))


@asynccontextmanager
async def address(target: str) -> AsyncIterator[tuple[str, int]]:
    host, port = target.rsplit(":", 1)
    yield host, int(port)


def sse_probe(endpoint: Endpoint) -> Client[tuple[str, int]]:
    """The capacity probe for `endpoint`: one call read raw, its events counted as they arrive."""
    body = dumps(endpoint.body).encode()

    async def probe(host_port: tuple[str, int], arrivals: list[float] | None) -> int:
        host, port = host_port
        head = f"POST {endpoint.path} HTTP/1.1\r\nhost: {host}\r\naccept: text/event-stream\r\n"
        head += f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
        loop = asyncio.get_running_loop()
        transport, counter = await loop.create_connection(lambda: _Counter(arrivals), host, port)
        try:
            transport.write(head.encode() + body)
            return await counter.done
        finally:
            transport.close()

    return Client(address, probe)


SSE = Protocol(
    name="SSE",
    serve=_serve,
    client=sse_client(PEER),
    probe=sse_probe(PEER),
    wire_bytes=body_bytes_of(PEER),
    counted="HTTP response body",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each event")
    args = parser.parse_args()
    serve(args.events, args.delay)


if __name__ == "__main__":
    main()
