"""HttpServer: pi.ai.v1.ModelService over HTTP, beside a ModelServer and from its models.

One ASGI application serves Connect (proto and JSON), gRPC-web, the SSE endpoint
(`POST /v1/stream`) and pi's own protocols (`POST /messages`, `POST /api/stream`), on uvicorn
inside the running event loop, so the HTTP protocols share the gRPC server's models, limits,
bearer token, concurrent-stream slots and in-flight streams.

Every request's `Host` is checked before anything else (hosts.py).
"""

from __future__ import annotations

import asyncio
import math
import socket
import ssl
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import uvicorn

from ..grpc.server import ModelServer
from .bodies import BodyBudget
from .connections import DEFAULT_LIMITS, HttpLimits, Listener
from .cors import Cors
from .grpc_web_text import GrpcWebText
from .hosts import AllowedHosts, HostCheck
from .page import PATHS as PAGE_PATHS
from .page import Page
from .pi_protocols import MESSAGES_PATH, PROXY_PATH, PiMessagesSse, ProxySse
from .service import ConnectApp, GateInterceptor, ModelService
from .sse import SSE_PATH, App, Receive, Scope, Send, SseEndpoint

# --- the application -------------------------------------------------------------------------------


class HttpApp:
    """The ASGI application: SSE at SSE_PATH, pi-messages at MESSAGES_PATH, pi-agent-core's
    streamProxy at PROXY_PATH, connectrpc's protocols at /pi.ai.v1.ModelService/*, and unless
    `ui` is False the web page at / (page.py, `view` the file it opens); web pages of its own
    origin and of `cors_origins` may call it, no other page (see cors.py). Requests for a host
    that is not one of `hosts` (loopback names unless told) are refused first (HostCheck), and
    the bodies still arriving are bounded together by `limits` (BodyBudget)."""

    def __init__(
        self,
        server: ModelServer,
        cors_origins: Sequence[str] = (),
        *,
        ui: bool = True,
        view: Path | None = None,
        hosts: AllowedHosts | None = None,
        limits: HttpLimits = DEFAULT_LIMITS,
    ) -> None:
        self.service = ModelService(server)
        self._page: App | None = Page(view) if ui else None
        budget = BodyBudget(Cors(self._routed, cors_origins), limits.max_arriving_bytes, server.limits.stream_timeout)
        self._route: App = HostCheck(budget, hosts if hosts is not None else AllowedHosts())
        self._sse: dict[str, App] = {
            SSE_PATH: SseEndpoint(self.service),
            MESSAGES_PATH: SseEndpoint(self.service, PiMessagesSse()),
            PROXY_PATH: SseEndpoint(self.service, ProxySse()),
        }
        connect = ConnectApp(
            self.service.endpoints(),
            read_max_bytes=server.limits.max_request_bytes,
            interceptors=[GateInterceptor(server.gate)],
            defer_json=True,
        )
        self._connect = GrpcWebText(connect, server.limits, server.gate)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._route(scope, receive, send)

    async def _routed(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (endpoint := self._sse.get(scope["path"])) is not None:
            await endpoint(scope, receive, send)
        elif scope["type"] == "http" and self._page is not None and scope["path"] in PAGE_PATHS:
            await self._page(scope, receive, send)
        else:
            await self._connect(scope, receive, send)


class AsgiServer:
    """An ASGI application served in the running event loop: HTTP/1.1 by uvicorn (httptools),
    HTTP/2 by hypercorn, over connections bounded by `limits` (see connections.py).

    `port` 0 picks a free port. Unlike uvicorn.run, it leaves signal handling and logging
    configuration to the program. With `reuse_port`, other processes may listen on the same port
    (SO_REUSEPORT: `pi-proto serve --workers`), and the kernel spreads connections across them.
    With `ssl_context`, HTTP/2 is offered by ALPN beside HTTP/1.1; in clear text a client speaks it
    with prior knowledge or `Upgrade: h2c`.
    """

    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        ssl_context: ssl.SSLContext | None = None,
        reuse_port: bool = False,
        limits: HttpLimits = DEFAULT_LIMITS,
    ) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.reuse_port = reuse_port
        self.limits = limits
        self._ssl = ssl_context
        self._server: uvicorn.Server | None = None
        self._listener: Listener | None = None
        self._ticking: asyncio.Task[None] | None = None

    @property
    def target(self) -> str:
        """HOST:PORT, as `pi-proto serve` prints it."""
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The base URL clients call, e.g. http://127.0.0.1:8080."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self._ssl else 'http'}://{host}:{self.port}"

    @property
    def open_connections(self) -> int:
        """The connections open now, whatever HTTP they speak."""
        return 0 if self._listener is None else self._listener.open

    async def start(self) -> str:
        """Bind, start serving, and return the target; raises OSError when the address is taken."""
        sock = _bind(self.host, self.port, reuse_port=self.reuse_port)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            http="httptools",
            ws="none",
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            server_header=False,
            proxy_headers=False,
            timeout_keep_alive=math.ceil(self.limits.idle_timeout),
        )
        config.load()
        self._server = uvicorn.Server(config)
        self._listener = Listener(sock, self.app, config, self._server.server_state, self.limits, self._ssl)
        self._listener.start()
        self._ticking = asyncio.create_task(_tick(self._server))
        return self.target

    async def stop(self, grace: float = 5.0) -> None:
        """Stop accepting, let the responses in flight end within `grace` seconds, then cut them."""
        if self._server is None or self._listener is None or self._ticking is None:
            return
        server, listener, self._server, self._listener = self._server, self._listener, None, None
        self._ticking.cancel()
        listener.close()
        state = server.server_state
        for connection in list(state.connections):
            connection.shutdown()  # closes idle connections; busy ones close after their response
        _, _, h2_context = listener.h2
        await h2_context.terminated.set()  # HTTP/2: no new streams, and idle connections close
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while (state.connections or state.tasks or listener.h2_tasks) and loop.time() < deadline:
            await asyncio.sleep(0.01)
        for task in [*state.tasks, *listener.h2_tasks]:
            task.cancel()
        for connection in list(state.connections):
            connection.transport.close()
        await asyncio.gather(*listener.h2_tasks, return_exceptions=True)

    async def __aenter__(self) -> AsgiServer:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()


async def _tick(server: uvicorn.Server) -> None:
    """uvicorn's main loop without its exit check: keeps the Date header current."""
    counter = 0
    while True:
        await server.on_tick(counter)
        counter = (counter + 1) % 864000
        await asyncio.sleep(0.1)


def _bind(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A TCP socket bound to host:port (not listening yet: the event loop's server listens)."""
    try:
        family, kind, protocol, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, protocol)
    except OSError as error:
        raise OSError(f"cannot listen on {host}:{port}: {error}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except OSError as error:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    return sock


class HttpServer(AsgiServer):
    """pi.ai.v1.ModelService over HTTP: Connect, gRPC-web and SSE, for the models of `server`.

    The calls share everything with the gRPC server: its models, its limits (request size and
    counts, stream timeout, queued bytes), its token and concurrent-stream slots (counted for the
    process), and its in-flight streams, which `server.stop()` aborts as it aborts gRPC's. The gRPC
    server need not be started: an HttpServer alone serves its models. Web pages of
    `cors_origins` (`*`: any) may call it from their own origin. It answers requests for the
    hosts its bind allows and for `allowed_hosts` (see AllowedHosts; ValueError for a value that
    is not a host). It serves the web page at `/` unless `ui` is False; `view` is a file the page
    opens (`pi-proto view`).

        async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
            print(http_server.url)  # http://127.0.0.1:PORT
    """

    def __init__(
        self,
        server: ModelServer,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        ssl_context: ssl.SSLContext | None = None,
        reuse_port: bool = False,
        cors_origins: Sequence[str] = (),
        limits: HttpLimits = DEFAULT_LIMITS,
        ui: bool = True,
        view: Path | None = None,
        allowed_hosts: Sequence[str] = (),
    ) -> None:
        self.model_server = server
        hosts = AllowedHosts(host, allowed_hosts)
        self.http_app = HttpApp(server, cors_origins, ui=ui, view=view, hosts=hosts, limits=limits)
        super().__init__(
            self.http_app, host=host, port=port, ssl_context=ssl_context, reuse_port=reuse_port, limits=limits
        )

    @property
    def active_streams(self) -> int:
        """The model streams served over HTTP now."""
        return len(self.http_app.service.calls)

    async def stop(self, grace: float = 5.0) -> None:
        """End in-flight streams with an ABORTED event, then stop within `grace` seconds."""
        service = self.http_app.service
        service.stopping = True
        for call in list(service.calls):
            call.events.cancel("the server is shutting down")
        await super().stop(grace)

    async def __aenter__(self) -> HttpServer:
        await self.start()
        return self
