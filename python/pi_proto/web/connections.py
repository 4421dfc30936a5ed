"""The HTTP port's connections: how many are open, how long a request may take to arrive, how big
its head may be, and which HTTP each one speaks.

The event loop's own accept loop is not used: at the file limit it logs a traceback for every
failed accept and schedules a retry for each, so stderr floods and a core spins. Here:

- at most `HttpLimits.max_connections` are open at once, well below the process's file limit, so
  the gRPC port keeps its share; one more is answered 503 (in clear text) and closed at once;
- an accept that fails for want of file descriptors or memory pauses accepting, with backoff,
  and says so in one log line per minute at most;
- a request's head (request line and headers) must arrive within `header_timeout` seconds of the
  connection or of the previous response (408, or a silent close when nothing came), and hold at
  most `max_header_bytes` in `max_headers` headers (431), before any of it reaches the
  application: the token is checked only once the head is in;
- HTTP/2, chosen by ALPN over TLS or by its preface or `Upgrade: h2c` in clear text, is served by
  hypercorn; HTTP/1.1 by uvicorn on httptools, which costs half the CPU per write.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import math
import re
import resource
import socket
import ssl
from dataclasses import dataclass
from typing import Any, cast

import uvicorn
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.asyncio.worker_context import WorkerContext
from hypercorn.config import Config as HypercornConfig
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("pi_proto.web")
_QUIET = logging.getLogger("pi_proto.web.http1")
_QUIET.setLevel(logging.ERROR)  # what uvicorn logs per request below that would flood stderr

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"  # how an HTTP/2 client with prior knowledge begins
_UPGRADE_H2C = re.compile(rb"\r\nupgrade:[^\r\n]*\bh2c\b", re.IGNORECASE)
# Accepting stops for want of these; anything else is the one connection's problem.
_SCARCE = frozenset((errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM))
ACCEPTS_PER_WAKE = 64  # connections accepted per readiness of the listening socket
BACKOFF_SECONDS = (0.1, 5.0)  # the first pause after a failed accept, and the longest
LOG_EVERY_SECONDS = 60.0  # one line per minute at most about connections refused or unaccepted
FILES_KEPT = 256  # file descriptors left beside the HTTP connections: gRPC, files, providers
CONNECTIONS_CAP = 10_000


def default_max_connections() -> int:
    """Half the file descriptors beyond FILES_KEPT, at most CONNECTIONS_CAP: the other half and
    FILES_KEPT stay for the gRPC port, model providers and files."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return CONNECTIONS_CAP
    return max(16, min(CONNECTIONS_CAP, (soft - FILES_KEPT) // 2))


@dataclass(frozen=True)
class HttpLimits:
    """What the HTTP port accepts before a request reaches the application; `pi-proto serve`
    sets `max_connections` and `header_timeout` from its flags."""

    # Open connections at once (None: default_max_connections()); one more gets 503.
    max_connections: int | None = None
    # Seconds for a request's head to arrive, from the connection or the previous response.
    header_timeout: float = 10.0
    # Seconds a connection with no request in flight stays open (HTTP/1.1 keep-alive, HTTP/2).
    idle_timeout: float = 5.0
    # The request line and headers together, in bytes (HTTP/2: the header list).
    max_header_bytes: int = 64 * 1024
    max_headers: int = 100
    # The request bodies still arriving, together (see bodies.py): four at the request size limit.
    max_arriving_bytes: int = 64 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.max_connections is not None and self.max_connections < 1:
            raise ValueError(f"HttpLimits.max_connections must be 1 or more, not {self.max_connections!r}")
        for name in ("header_timeout", "idle_timeout"):
            if not 0 < getattr(self, name) < math.inf:  # NaN fails too
                raise ValueError(f"HttpLimits.{name} must be more than 0 seconds, not {getattr(self, name)!r}")
        for name in ("max_header_bytes", "max_headers", "max_arriving_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"HttpLimits.{name} must be 1 or more, not {getattr(self, name)!r}")

    @property
    def connections(self) -> int:
        return default_max_connections() if self.max_connections is None else self.max_connections


DEFAULT_LIMITS = HttpLimits()


class Slot:
    """One open connection's place in the count; given back once, whoever closes it."""

    __slots__ = ("_listener",)

    def __init__(self, listener: Listener) -> None:
        self._listener: Listener | None = listener
        listener.open += 1

    def release(self) -> None:
        if self._listener is not None:
            self._listener.open -= 1
            self._listener = None


class Listener:
    """Accepts the connections of a bound socket and serves each with the HTTP it speaks.

    `uvicorn_config` (loaded) and `state` are uvicorn's, for HTTP/1.1; HTTP/2 runs hypercorn's
    connection handling on the same application.
    """

    def __init__(
        self,
        sock: socket.socket,
        app: Any,
        uvicorn_config: uvicorn.Config,
        state: Any,
        limits: HttpLimits,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.sock = sock
        self.limits = limits
        self.max_connections = limits.connections
        self.open = 0
        self.h2_tasks: set[asyncio.Task[None]] = set()
        self._uvicorn_config = uvicorn_config
        self._state = state
        self._ssl = ssl_context
        self._loop = asyncio.get_running_loop()
        self._accepting = False
        self._backoff = BACKOFF_SECONDS[0]
        self._resume: asyncio.TimerHandle | None = None
        self._refused = _Tally("HTTP connections refused: %d, at the limit of %d open at once", LOG_EVERY_SECONDS)
        self._unaccepted = _Tally("HTTP connections not accepted: %d times, %s; pausing", LOG_EVERY_SECONDS)
        self.h2 = _h2_server(app, limits)
        self._connecting: set[asyncio.Task[None]] = set()

    def start(self, backlog: int = 2048) -> None:
        self.sock.setblocking(False)
        self.sock.listen(backlog)
        self._listen()

    def close(self) -> None:
        """Stop accepting (connections already open go on)."""
        if self._resume is not None:
            self._resume.cancel()
        if self._accepting:
            self._loop.remove_reader(self.sock.fileno())
            self._accepting = False
        self.sock.close()
        for connecting in list(self._connecting):
            connecting.cancel()

    def _listen(self) -> None:
        self._resume = None
        if not self._accepting and self.sock.fileno() != -1:
            self._loop.add_reader(self.sock.fileno(), self._accept)
            self._accepting = True

    def _accept(self) -> None:
        for _ in range(ACCEPTS_PER_WAKE):
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError as error:
                if error.errno in _SCARCE:
                    self._pause(error)
                    return
                log.warning("HTTP accept failed: %s", error)
                return
            self._backoff = BACKOFF_SECONDS[0]
            if self.open >= self.max_connections:
                self._turn_away(conn)
                continue
            conn.setblocking(False)
            slot = Slot(self)
            task = self._loop.create_task(self._connect(conn, slot))
            self._connecting.add(task)
            task.add_done_callback(self._connecting.discard)

    async def _connect(self, conn: socket.socket, slot: Slot) -> None:
        """The connection's transport (after the TLS handshake, within the header timeout)."""
        timeout = None if self._ssl is None else self.limits.header_timeout
        try:
            await self._loop.connect_accepted_socket(
                lambda: FirstBytes(self, slot), conn, ssl=self._ssl, ssl_handshake_timeout=timeout
            )
        except (OSError, ssl.SSLError, TimeoutError, asyncio.CancelledError):
            slot.release()  # the handshake failed or timed out: asyncio closed the socket
            conn.close()

    def _pause(self, error: OSError) -> None:
        """Out of descriptors or memory: stop accepting for a while, longer each time in a row."""
        self._loop.remove_reader(self.sock.fileno())
        self._accepting = False
        self._unaccepted.add(log, error.strerror or str(error))
        self._resume = self._loop.call_later(self._backoff, self._listen)
        self._backoff = min(self._backoff * 2, BACKOFF_SECONDS[1])

    def _turn_away(self, conn: socket.socket) -> None:
        """A connection beyond the limit: a 503 it can read (in clear text), then closed."""
        if self._ssl is None:
            conn.setblocking(False)
            with contextlib.suppress(OSError):
                conn.send(_TOO_MANY)
        conn.close()
        self._refused.add(log, self.max_connections)

    # --- handing a connection to its HTTP ---------------------------------------------------------

    def http1(self, transport: asyncio.Transport, data: bytes, slot: Slot, deadline: float) -> None:
        protocol = Http1(self._uvicorn_config, self._state, self.limits, slot, deadline)
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        if data:
            protocol.data_received(data)

    def http2(self, transport: asyncio.Transport, data: bytes, slot: Slot) -> None:
        reader = asyncio.StreamReader(limit=2**16)
        protocol = asyncio.StreamReaderProtocol(reader)
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        if data:
            protocol.data_received(data)
        writer = asyncio.StreamWriter(transport, protocol, reader, self._loop)
        app, config, context = self.h2
        server = TCPServer(app, self._loop, config, context, {}, reader, writer)
        task = self._loop.create_task(server.run())
        watchdog = self._loop.create_task(self._close_when_idle(server, writer))
        self.h2_tasks.add(task)
        task.add_done_callback(self.h2_tasks.discard)
        task.add_done_callback(lambda _: slot.release())
        task.add_done_callback(lambda _: watchdog.cancel())

    async def _close_when_idle(self, server: TCPServer, writer: asyncio.StreamWriter) -> None:
        """Close an HTTP/2 connection found without a stream twice in a row, `idle_timeout` apart:
        hypercorn's own idle timer stops for good on a connection that begins with the preface."""
        was_idle = False
        while True:
            await asyncio.sleep(self.limits.idle_timeout)
            wrapper = getattr(server, "protocol", None)
            idle = bool(getattr(getattr(wrapper, "protocol", None), "idle", False))
            if idle and was_idle:
                writer.close()
                return
            was_idle = idle


_TOO_MANY_BODY = json.dumps({"code": "unavailable", "message": "this server has too many connections open"}).encode()
_TOO_MANY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"retry-after: 1\r\ncontent-length: %d\r\n\r\n%s" % (len(_TOO_MANY_BODY), _TOO_MANY_BODY)
)


class _Tally:
    """Counts an event and logs it at most once per `every` seconds, with the count since."""

    def __init__(self, message: str, every: float) -> None:
        self.message = message
        self.every = every
        self.count = 0
        self._last = -math.inf

    def add(self, logger: logging.Logger, *args: object) -> None:
        self.count += 1
        now = asyncio.get_running_loop().time()
        if now - self._last >= self.every:
            logger.warning(self.message, self.count, *args)
            self._last, self.count = now, 0


def _h2_server(app: Any, limits: HttpLimits) -> tuple[Any, HypercornConfig, WorkerContext]:
    """hypercorn's application wrapper, configuration and context for HTTP/2 connections."""
    config = HypercornConfig()
    config.h2_max_header_list_size = limits.max_header_bytes
    config.h11_max_incomplete_size = limits.max_header_bytes  # the request before `Upgrade: h2c`
    config.keep_alive_timeout = limits.idle_timeout
    config.include_server_header = False
    config.accesslog = None
    config.errorlog = logging.getLogger("pi_proto.web.h2")
    return ASGIWrapper(app), config, WorkerContext(None)


class FirstBytes(asyncio.Protocol):
    """A new connection until it shows which HTTP it speaks: ALPN over TLS; in clear text, the
    HTTP/2 preface, or a first request asking to upgrade to h2c, or else HTTP/1.1."""

    def __init__(self, listener: Listener, slot: Slot) -> None:
        self._listener = listener
        self._slot = slot
        self._data = b""
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream socket's transport; uvloop's is one without subclassing asyncio.Transport.
        self._transport = stream = cast(asyncio.Transport, transport)
        loop = asyncio.get_running_loop()
        self._deadline = loop.time() + self._listener.limits.header_timeout
        tls = transport.get_extra_info("ssl_object")
        if tls is not None:
            if tls.selected_alpn_protocol() == "h2":
                self._listener.http2(stream, b"", self._slot)
            else:
                self._listener.http1(stream, b"", self._slot, self._deadline)
            return
        self._timer = loop.call_at(self._deadline, self._late)

    def data_received(self, data: bytes) -> None:
        assert self._transport is not None
        self._data += data
        head = self._data
        if PREFACE.startswith(head[: len(PREFACE)]):
            if len(head) < len(PREFACE):
                return  # perhaps the preface: wait for the rest of it
            self._hand_over(http2=True)
            return
        end = head.find(b"\r\n\r\n")
        if end < 0 and len(head) <= self._listener.limits.max_header_bytes:
            return  # the first head is not in yet
        upgrade = end >= 0 and _UPGRADE_H2C.search(head, 0, end + 2) is not None
        self._hand_over(http2=upgrade)

    def _late(self) -> None:
        """No head in time: closed when nothing came; else HTTP/1.1 answers 408 for what did."""
        self._timer = None
        if self._data:
            self._hand_over(http2=False)
        elif self._transport is not None:
            self._transport.close()

    def _hand_over(self, *, http2: bool) -> None:
        assert self._transport is not None
        if self._timer is not None:
            self._timer.cancel()
        data, self._data = self._data, b""
        if http2:
            self._listener.http2(self._transport, data, self._slot)
        else:
            self._listener.http1(self._transport, data, self._slot, self._deadline)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._slot.release()


class Http1(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol, with the head of each request bounded in time and size."""

    def __init__(self, config: uvicorn.Config, state: Any, limits: HttpLimits, slot: Slot, deadline: float) -> None:
        super().__init__(config, state, app_state={})
        self.logger = _QUIET  # a malformed request is the client's problem: no line on stderr each
        self._limits = limits
        self._refused = False
        self._slot = slot
        self._in_head = False  # between a request's first byte and the end of its headers
        self._began_here = False  # whether the request in its head began in the read at hand
        self._head_bytes = 0
        self._headers = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._deadline = deadline

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._head_timer = self.loop.call_at(self._deadline, self._head_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)
        self._slot.release()

    def data_received(self, data: bytes) -> None:
        self._began_here = False
        super().data_received(data)
        if self._in_head and not self.transport.is_closing():
            # A head that began in an earlier read has all of this one; one that began in this
            # read has what its callbacks counted (a read can hold whole requests before it).
            # Either way the parser holds at most one read beyond the limit.
            if not self._began_here:
                self._head_bytes += len(data)
            if self._head_bytes > self._limits.max_header_bytes:
                limit = self._limits.max_header_bytes
                self._refuse(431, f"the request's head has more than this server's {limit} bytes")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head, self._head_bytes, self._headers, self._began_here = True, 0, 0, True

    def on_url(self, url: bytes) -> None:
        if self._began_here:
            self._head_bytes += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._began_here:
            self._head_bytes += len(name) + len(value) + 4  # ": " and the line's end
        self._headers += 1
        if self._headers > self._limits.max_headers:
            # Raised through the parser, which stops at once; data_received's caller sees a 400
            # unless this protocol answers first.
            self._refuse(431, f"the request has more than this server's {self._limits.max_headers} headers")
            raise _HeadRefused
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._stop_head_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._stop_head_timer()
            self._head_timer = self.loop.call_later(self._limits.header_timeout, self._head_late)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        """The head did not arrive in time: 408 when part of it did, else a quiet close."""
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self._in_head:
            self._refuse(408, f"the request's head took longer than this server's {self._limits.header_timeout:g} s")
        elif self.cycle is None or self.cycle.response_complete:
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        if not self._refused:  # the parser stopped because this protocol refused the head
            super().send_400_response(msg)

    def _refuse(self, status: int, message: str) -> None:
        if self.transport.is_closing():
            return
        self._refused = True
        body = json.dumps({"code": "resource_exhausted" if status == 431 else "deadline_exceeded", "message": message})
        reason = b"Request Header Fields Too Large" if status == 431 else b"Request Timeout"
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s"
            % (status, reason, len(body), body.encode())
        )
        self.transport.close()


class _HeadRefused(Exception):
    """A request's head broke a limit; its answer has been written."""
