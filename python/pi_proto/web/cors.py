"""Calls from web pages (CORS): which pages may call, the preflight, and the headers that let an
allowed page read an answer (`pi-proto serve --cors-origin`).

A browser names the page's origin in `Origin` on every call that is not a plain navigation. A
request with an `Origin` that is neither the server's own nor one of the `origins` allowed is
refused with 403 before anything else happens, whatever its method or content type: a "simple"
cross-origin POST is sent without a preflight, and even though the browser would hide the answer,
the model would have run. The server's own origin is the one the request was sent to when its
host is an IP address or `localhost`; a page under any other name must be allowed by name, since
a DNS name can be pointed at this server by a page of someone else's (DNS rebinding). A request
without `Origin` (curl, a program) is not a page's and passes.

An allowed origin's preflight (`OPTIONS` with `Access-Control-Request-Method`) gets 204 with the
methods and the request headers it asked for; its calls then carry `Access-Control-Allow-Origin`
and expose gRPC-web's status headers, which a trailers-only answer puts among the headers.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from .hosts import is_address, is_local_name
from .sse import App, Receive, Scope, Send

ANY = "*"
MAX_AGE_SECONDS = 7200  # how long a browser may reuse a preflight's answer
EXPOSED = b"grpc-status, grpc-message, grpc-status-details-bin"


def checked_origin(text: str) -> str:
    """An origin as browsers send it (`scheme://host[:port]`, nothing after), or `*`; raises
    ValueError saying what is wrong."""
    if text == ANY:
        return text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query or parts.fragment:
        raise ValueError(f"not an origin (scheme://host[:port], or *): {text!r}")
    try:
        parts.port  # noqa: B018  # raises ValueError for a port that is not one
    except ValueError:
        raise ValueError(f"not an origin (scheme://host[:port], or *): {text!r}") from None
    return text


class Cors:
    """ASGI middleware: `app` answered for requests of no page, of the server's own origin, and of
    the `origins` allowed (`*`: any); every other page's request gets 403."""

    def __init__(self, app: App, origins: Sequence[str] = ()) -> None:
        self.app = app
        self.origins = frozenset(checked_origin(origin) for origin in origins)

    def allows(self, origin: str, scope: Scope | None = None) -> bool:
        """Whether a page of `origin` may call: allowed by name, or the origin the request was
        sent to (its scheme and `Host`), which is the server's own."""
        if ANY in self.origins or origin in self.origins:
            return True
        return scope is not None and origin.lower() == _own_origin(scope)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        origin = headers.get(b"origin")
        if origin is None:
            await self.app(scope, receive, send)
            return
        if not self.allows(origin.decode("latin-1"), scope):
            await self._refuse(send)
            return
        granted = [(b"access-control-allow-origin", b"*" if ANY in self.origins else origin), (b"vary", b"origin")]
        if scope["method"] == "OPTIONS" and b"access-control-request-method" in headers:
            await self._preflight(send, granted, headers.get(b"access-control-request-headers"))
            return

        async def send_granted(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                extra = [*granted, (b"access-control-expose-headers", EXPOSED)]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, send_granted)

    async def _refuse(self, send: Send) -> None:
        listed = ", ".join(sorted(self.origins)) or "none (pages of this server only)"
        body = json.dumps({"code": "permission_denied", "message": f"this origin may not call; allowed: {listed}"})
        headers = [(b"content-type", b"application/json"), (b"vary", b"origin")]
        await send({"type": "http.response.start", "status": 403, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})

    async def _preflight(self, send: Send, granted: list[tuple[bytes, bytes]], asked: bytes | None) -> None:
        headers = [
            *granted,
            (b"access-control-allow-methods", b"GET, POST"),
            (b"access-control-max-age", str(MAX_AGE_SECONDS).encode()),
        ]
        if asked:
            headers.append((b"access-control-allow-headers", asked))
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


def _own_origin(scope: Scope) -> str | None:
    """The origin a request was sent to (its scheme and `Host`, HTTP/2's `:authority`) when its
    host is an IP address, localhost or a name under .localhost, which no other site's page can
    be served from (the Host check has let it in; see hosts.py)."""
    host = next((value for key, value in scope.get("headers", ()) if key == b"host"), None)
    if not host:
        return None
    origin = f"{scope.get('scheme', 'http')}://{host.decode('latin-1')}".lower()
    try:
        name = urlsplit(origin).hostname
    except ValueError:
        return None
    if name is None or not (is_local_name(name) or is_address(name)):
        return None
    return origin
