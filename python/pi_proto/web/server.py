"""HttpServer: pi.ai.v1.ModelService over HTTP, beside a ModelServer and from its models.

One ASGI application serves Connect (proto and JSON), gRPC-web, the SSE endpoint
(`POST /v1/stream`) and pi's own protocols (`POST /messages`, `POST /api/stream`), on uvicorn
inside the running event loop, so the HTTP protocols share the gRPC server's models, limits,
bearer token, concurrent-stream slots and in-flight streams.

Every request's `Host` (HTTP/2's `:authority`) is checked before anything else (HostCheck): a
page of someone else's DNS name pointed at this server's address (DNS rebinding) sends that name,
and is answered 421 without a byte of the server's. A loopback bind answers loopback names only;
another bind its own address, and on a wildcard bind any IP address; `allowed_hosts` add names.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import math
import re
import socket
import ssl
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import uvicorn

from ..grpc.server import ModelServer
from .connections import DEFAULT_LIMITS, HttpLimits, Listener
from .cors import Cors
from .grpc_web_text import GrpcWebText
from .page import PATHS as PAGE_PATHS
from .page import Page
from .pi_protocols import MESSAGES_PATH, PROXY_PATH, PiMessagesSse, ProxySse
from .service import ConnectApp, GateInterceptor, ModelService
from .sse import SSE_PATH, App, Receive, Scope, Send, SseEndpoint

# --- which names the server answers to ------------------------------------------------------------

# A Host value: a bracketed IPv6 address, or a name or IPv4 address; then perhaps a port.
_HOST_VALUE = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9_.-]+))(?::[0-9]{0,5})?")
_LABELS = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*")
LOOPBACK_NAME = "localhost"


def _address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address `name` spells, or None for a DNS name."""
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def _canonical(name: str) -> str | None:
    """A host as compared: an IP address in its short form, a DNS name in lower case without a
    final dot; None for text that is neither."""
    if (address := _address(name)) is not None:
        return str(address)
    name = name.lower().removesuffix(".")
    return name if _LABELS.fullmatch(name) else None


def host_of(value: str) -> str | None:
    """The host a `Host` value names (`name[:port]`, `[v6][:port]`), as _canonical gives it;
    None for a value that is not one."""
    found = _HOST_VALUE.fullmatch(value)
    if found is None:
        return None
    if found["v6"] is not None:
        return _canonical(found["v6"]) if isinstance(_address(found["v6"]), ipaddress.IPv6Address) else None
    return _canonical(found["name"])


def allowed_host(text: str) -> str:
    """A host to answer to (`pi-proto serve --allowed-host NAME`): a DNS name or an IP address
    (IPv6 with or without brackets), without a port; raises ValueError saying what is wrong."""
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    name = _canonical(bare)
    if name is None:
        raise ValueError(f"not a host name or IP address (without a port or a scheme): {text!r}")
    return name


def _is_loopback(name: str) -> bool:
    """Whether host `name` can only mean this machine: localhost, a name under .localhost (RFC
    6761: browsers answer those with a loopback address themselves, and the DNS root delegates
    none, so no one can point one elsewhere), or a loopback address."""
    if name == LOOPBACK_NAME or name.endswith("." + LOOPBACK_NAME):
        return True
    address = _address(name)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address is not None and address.is_loopback


class AllowedHosts:
    """The hosts a server bound to `bind` answers to, and `names` (checked by allowed_host,
    ValueError). A loopback bind answers loopback names (localhost, 127.0.0.1, [::1], names
    under .localhost); a wildcard bind (0.0.0.0, ::) those and any IP address, which only a
    page of that address can send (rebinding needs a DNS name); any other bind its own address.
    `pi-proto view` serves on loopback; behind a proxy or under a DNS name, give the name."""

    def __init__(self, bind: str = "127.0.0.1", names: Iterable[str] = ()) -> None:
        self.names = frozenset(allowed_host(name) for name in names)
        bare = bind[1:-1] if bind.startswith("[") and bind.endswith("]") else bind
        self.bind = _canonical(bare) or bare.lower()
        address = _address(self.bind)
        self.wildcard = not bind or (address is not None and address.is_unspecified)
        self.loopback = _is_loopback(self.bind)

    def allows(self, host: str) -> bool:
        """Whether a request for `host` (as host_of gives it) is answered."""
        if host in self.names or host == self.bind:
            return True
        if self.wildcard:
            return _is_loopback(host) or _address(host) is not None
        return self.loopback and _is_loopback(host)

    def described(self) -> str:
        """What the server answers to, in words, for a refusal."""
        if self.wildcard:
            known = "an IP address or a loopback name (localhost)"
        elif self.loopback:
            known = "loopback names only (localhost, 127.0.0.1, [::1])"
        else:
            known = f"[{self.bind}]" if ":" in self.bind else self.bind
        return f"{known}; `pi-proto serve --allowed-host NAME` adds a name"


class HostCheck:
    """ASGI middleware: `app` answers requests whose `Host` (HTTP/2: `:authority`, which hypercorn
    gives as `host`) is one of `hosts`; any other gets 421 (400 for a missing or malformed Host),
    before a byte of its body is read or anything is served."""

    def __init__(self, app: App, hosts: AllowedHosts) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = [value for key, value in scope.get("headers", ()) if key == b"host"]
        if len(given) != 1:
            many = "no Host header" if not given else "more than one Host header"
            await _refuse_host(send, 400, "invalid_argument", f"the request has {many}")
            return
        shown = given[0].decode("latin-1")
        name = host_of(shown)
        if name is None:
            await _refuse_host(send, 400, "invalid_argument", f"the Host header {shown[:100]!r} is not a host[:port]")
        elif not self.hosts.allows(name):
            message = f"this server does not answer to the host {name[:100]!r}; it answers to {self.hosts.described()}"
            await _refuse_host(send, 421, "permission_denied", message)
        else:
            await self.app(scope, receive, send)


async def _refuse_host(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"code": code, "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


# --- the application -------------------------------------------------------------------------------


class HttpApp:
    """The ASGI application: SSE at SSE_PATH, pi-messages at MESSAGES_PATH, pi-agent-core's
    streamProxy at PROXY_PATH, connectrpc's protocols at /pi.ai.v1.ModelService/*, and unless
    `ui` is False the web page at / (page.py, `view` the file it opens); web pages of its own
    origin and of `cors_origins` may call it, no other page (see cors.py). Requests for a host
    that is not one of `hosts` (loopback names unless told) are refused first (HostCheck)."""

    def __init__(
        self,
        server: ModelServer,
        cors_origins: Sequence[str] = (),
        *,
        ui: bool = True,
        view: Path | None = None,
        hosts: AllowedHosts | None = None,
    ) -> None:
        self.service = ModelService(server)
        self._page: App | None = Page(view) if ui else None
        self._route: App = HostCheck(Cors(self._routed, cors_origins), hosts if hosts is not None else AllowedHosts())
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
        self.http_app = HttpApp(server, cors_origins, ui=ui, view=view, hosts=hosts)
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
