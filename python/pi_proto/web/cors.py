"""Calls from web pages of other origins (CORS): the preflight, and the headers that let a page read
an answer, for the origins a server allows (`pi-proto serve --cors-origin`).

A browser asks first (`OPTIONS` with `Origin` and `Access-Control-Request-Method`); an allowed
origin gets 204 with the methods and the request headers it asked for, any other a 403 saying
which origins are allowed. An allowed origin's calls then carry `Access-Control-Allow-Origin` and
expose gRPC-web's status headers, which a trailers-only answer puts among the headers.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping, Sequence
from typing import Any
from urllib.parse import urlsplit

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
    """ASGI middleware: `app` answered for the `origins` allowed (`*`: any)."""

    def __init__(self, app: App, origins: Sequence[str]) -> None:
        self.app = app
        self.origins = frozenset(checked_origin(origin) for origin in origins)

    def allows(self, origin: str) -> bool:
        return ANY in self.origins or origin in self.origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", ()))
        origin = headers.get(b"origin")
        if scope["type"] != "http" or origin is None:
            await self.app(scope, receive, send)
            return
        allowed = self.allows(origin.decode("latin-1"))
        granted = [(b"access-control-allow-origin", b"*" if ANY in self.origins else origin), (b"vary", b"origin")]
        if scope["method"] == "OPTIONS" and b"access-control-request-method" in headers:
            await self._preflight(send, allowed, granted, headers.get(b"access-control-request-headers"))
            return
        if not allowed:
            await self.app(scope, receive, send)
            return

        async def send_granted(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                extra = [*granted, (b"access-control-expose-headers", EXPOSED)]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, send_granted)

    async def _preflight(
        self, send: Send, allowed: bool, granted: list[tuple[bytes, bytes]], asked: bytes | None
    ) -> None:
        if not allowed:
            listed = ", ".join(sorted(self.origins))
            body = json.dumps({"code": "permission_denied", "message": f"this origin may not call; allowed: {listed}"})
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 403, "headers": headers})
            await send({"type": "http.response.body", "body": body.encode()})
            return
        headers = [
            *granted,
            (b"access-control-allow-methods", b"GET, POST"),
            (b"access-control-max-age", str(MAX_AGE_SECONDS).encode()),
        ]
        if asked:
            headers.append((b"access-control-allow-headers", asked))
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
