"""A loopback HTTP server that replays recorded provider responses to the real SDKs.

A recording is a file holding one HTTP response as the provider sends it: a status line, headers,
a blank line, and the body. Lines starting with `#` before the status line say where the format
comes from and are not sent. A chunked (streamed) body goes out one server-sent event per chunk,
as providers stream it; any other body goes out whole with its length.

A body of content type application/vnd.amazon.eventstream (Bedrock's) is written in the recording
as one JSON line per message, kept readable, and sent as the binary frames of the AWS event stream
encoding, one frame per chunk, with their CRCs: `{"event": <event type>, "payload": {...}}` for an
event, `{"exception": <exception type>, "payload": {...}}` for a modeled exception.

Each request takes the next planned reply. A reply can stop early: `cut_after=n` sends n events
and then drops the connection without ending the body (a connection cut mid-stream);
`hang_after=n` sends n events and then waits, recording when the client closes the connection.
Every request is kept (method, path, headers, JSON body) so tests can check what the SDK sent.
"""

from __future__ import annotations

import asyncio
import json
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

RECORDINGS = Path(__file__).parent / "recordings"
EVENT_STREAM = b"application/vnd.amazon.eventstream"


@dataclass(frozen=True)
class Reply:
    recording: Path
    cut_after: int | None = None
    hang_after: int | None = None


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Recording:
    """A recorded response split into what the server writes."""

    head: bytes  # status line and headers, without the framing headers the server adds
    events: list[bytes]  # the body: one entry per server-sent event (or one for a plain body)
    chunked: bool

    @classmethod
    def read(cls, path: Path) -> Recording:
        data = path.read_bytes()
        while data.startswith(b"#"):
            data = data.split(b"\n", 1)[1]
        head, _, body = data.partition(b"\n\n")
        lines = [
            line
            for line in head.split(b"\n")
            if not line.lower().startswith((b"content-length:", b"transfer-encoding:"))
        ]
        chunked = any(line.lower().startswith(b"transfer-encoding: chunked") for line in head.split(b"\n"))
        if any(line.lower().startswith(b"content-type: " + EVENT_STREAM) for line in lines):
            events = [event_stream_frame(json.loads(line)) for line in body.split(b"\n") if line.strip()]
        elif chunked:
            events = [event + b"\n\n" for event in body.split(b"\n\n") if event.strip()]
        else:
            events = [body]
        return cls(b"\r\n".join(lines) + b"\r\n", events, chunked)


def event_stream_frame(message: dict[str, Any]) -> bytes:
    """One message of a recording as an AWS event stream frame: the prelude (total length,
    headers length, their CRC32), the headers (string values), the JSON payload, the CRC32 of it all."""
    if "exception" in message:
        headers = {":exception-type": message["exception"], ":content-type": "application/json"}
        headers[":message-type"] = "exception"
    else:
        headers = {":event-type": message["event"], ":content-type": "application/json", ":message-type": "event"}
    encoded = b"".join(
        struct.pack("!B", len(name)) + name.encode() + struct.pack("!BH", 7, len(value.encode())) + value.encode()
        for name, value in headers.items()
    )
    payload = json.dumps(message.get("payload", {}), separators=(",", ":"), ensure_ascii=False).encode()
    prelude = struct.pack("!II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    frame = prelude + encoded + payload
    return frame + struct.pack("!I", zlib.crc32(frame))


@dataclass
class ReplayServer:
    """`async with ReplayServer() as server:` serves on 127.0.0.1; `server.base_url` is its URL."""

    replies: list[Reply] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    client_closed: asyncio.Event = field(default_factory=asyncio.Event)  # a hung reply's client left
    _server: asyncio.Server | None = None
    _connections: dict[asyncio.StreamWriter, asyncio.Task[None]] = field(default_factory=dict)

    def reply(self, recording: Path, *, cut_after: int | None = None, hang_after: int | None = None) -> None:
        """Plan the reply to the next request."""
        self.replies.append(Reply(recording, cut_after, hang_after))

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def __aenter__(self) -> ReplayServer:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._connections:
            writer.transport.abort()
        await asyncio.gather(*self._connections.values(), return_exceptions=True)
        await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[writer] = task
        try:
            while (request := await _read_request(reader)) is not None:
                self.requests.append(request)
                if not self.replies:
                    writer.write(b"HTTP/1.1 599 No Reply Planned\r\ncontent-length: 0\r\n\r\n")
                    break
                if not await self._send(self.replies.pop(0), reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._connections.pop(writer, None)
            writer.close()

    async def _send(self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Write one reply; False when the connection must end after it."""
        recording = Recording.read(reply.recording)
        if not recording.chunked:
            body = recording.events[0]
            writer.write(recording.head + b"content-length: %d\r\n\r\n" % len(body) + body)
            await writer.drain()
            return True
        writer.write(recording.head + b"transfer-encoding: chunked\r\n\r\n")
        stop = reply.cut_after if reply.cut_after is not None else reply.hang_after
        for event in recording.events[:stop]:
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
            await writer.drain()
        if reply.hang_after is not None:
            await reader.read()  # until the client closes its end
            self.client_closed.set()
            return False
        if reply.cut_after is not None:
            writer.transport.abort()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None  # the client closed the connection between requests
    request_line, *lines = head.decode("latin-1").split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers = {}
    for line in lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Request(method, path, headers, json.loads(body) if body else None)
