"""A loopback provider that misbehaves on purpose, for the real SDKs to meet.

Each request is read as the replay server reads it, then answered by the test's `Answer`: a
coroutine that writes whatever bytes it likes (nothing at all, headers one byte at a time, an HTML
page, an event that never ends, a gzip bomb). Bodies are made lazily, so a test that sends
hundreds of megabytes holds only the piece being written; `sent` counts the body bytes written.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from types import TracebackType

from .replay import Request, _read_request

Answer = Callable[["Exchange"], Awaitable[None]]
PIECE = 64 * 1024
SSE = "text/event-stream"
BEDROCK_STREAM = "application/vnd.amazon.eventstream"  # for Bedrock's ConverseStream path


@dataclass
class Exchange:
    """One request and the connection to answer it on."""

    request: Request
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    server: HostileServer

    @property
    def stream_type(self) -> str:
        """The content type of the event stream the request asks for: Bedrock's binary one for its
        ConverseStream path, else server-sent events."""
        return BEDROCK_STREAM if self.request.path.split("?")[0].endswith("/converse-stream") else SSE

    async def head(self, status: str = "200 OK", content_type: str | None = None, *extra: str) -> None:
        """A status line and headers for a chunked body (an event stream of the API's type unless
        `content_type` says otherwise)."""
        content_type = content_type or self.stream_type
        lines = [f"HTTP/1.1 {status}", f"content-type: {content_type}", "transfer-encoding: chunked", *extra]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await self.writer.drain()

    async def body(self, pieces: Iterable[bytes], *, end: bool = True) -> None:
        """Chunks of a chunked body, each written when the client has taken the one before."""
        for piece in pieces:
            if piece:
                self.writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.server.sent += len(piece)
                await self.writer.drain()
        if end:
            self.writer.write(b"0\r\n\r\n")
            await self.writer.drain()

    async def whole(self, status: str, content_type: str, body: bytes) -> None:
        """A response with a body of known length."""
        head = f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n\r\n"
        self.writer.write(head.encode() + body)
        await self.writer.drain()

    async def hang(self) -> None:
        """Send nothing more; wait until the client closes the connection."""
        await self.reader.read()
        self.server.client_closed.set()


@dataclass
class HostileServer:
    """`async with HostileServer(answer) as server:` serves on 127.0.0.1; `server.base_url` is its URL."""

    answer: Answer
    requests: list[Request] = field(default_factory=list)
    sent: int = 0  # body bytes written, over every request
    client_closed: asyncio.Event = field(default_factory=asyncio.Event)
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def __aenter__(self) -> HostileServer:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            request = await _read_request(reader)
            if request is not None:
                self.requests.append(request)
                await self.answer(Exchange(request, reader, writer, self))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # the server is closing: the connection task ends here, quietly
        finally:
            self._tasks.discard(task)
            writer.close()


def repeat(piece: bytes, total: int) -> Iterator[bytes]:
    """`total` bytes of `piece` over and over, in pieces of at most PIECE bytes."""
    block = piece * max(1, PIECE // len(piece))
    while total > 0:
        yield block[:total]
        total -= len(block)


def gzipped(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """The gzip stream of `pieces`, as it is made."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    for piece in pieces:
        if out := compressor.compress(piece):
            yield out
    yield compressor.flush()


def sse(*events: str) -> Iterator[bytes]:
    """Server-sent events, one chunk each."""
    for event in events:
        yield event.encode() + b"\n\n"
