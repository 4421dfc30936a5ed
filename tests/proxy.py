"""A loopback TCP proxy that can cut every connection through it, as a network failure does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from pi_proto import AssistantMessage, ModelEvent
from pi_proto.stream.event_stream import AssistantMessageEventStream


class CuttingProxy:
    """Forwards connections on its own port to `target` (host:port) until cut().

    cut() closes both sides of every open connection at once (the client sees a connection lost,
    not an answer); the proxy goes on accepting new ones, so a client can reconnect through it.
    """

    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self._host, self._port = host, int(port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._pumps: set[asyncio.Task[None]] = set()
        self.connections = 0  # accepted so far

    @property
    def target(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"{host}:{port}"

    async def __aenter__(self) -> CuttingProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        self.cut()
        for pump in list(self._pumps):
            pump.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)
        await self._server.wait_closed()

    def retarget(self, target: str) -> None:
        """Send connections from now on to `target` (another replica)."""
        host, _, port = target.rpartition(":")
        self._host, self._port = host, int(port)

    def cut(self) -> None:
        """Drop every open connection, abruptly."""
        for writer in list(self._writers):
            transport = writer.transport
            if transport is not None:
                transport.abort()
        self._writers.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(self._host, self._port)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, upstream_writer}
        for source, sink in ((reader, upstream_writer), (upstream_reader, writer)):
            pump = asyncio.ensure_future(_pump(source, sink))
            self._pumps.add(pump)
            pump.add_done_callback(self._pumps.discard)


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    with contextlib.suppress(OSError, RuntimeError):
        sink.transport.abort()


async def read_cutting(
    events: AssistantMessageEventStream, proxy: CuttingProxy, cut: Callable[[int], bool], then: str | None = None
) -> tuple[list[ModelEvent], AssistantMessage]:
    """Consume `events`, cutting the proxy's connections after each event count `cut` is true of
    (sending later connections to `then`, when given); the events and the final message."""
    seen = []
    async for event in events:
        seen.append(event)
        if cut(len(seen)):
            if then is not None:
                proxy.retarget(then)
            proxy.cut()
    return seen, await events.result()
