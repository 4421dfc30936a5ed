"""The request bodies still arriving, bounded together: each protocol reads a body whole before
it decodes it, so unfinished bodies are memory a client holds for as long as it sends slowly.

BodyBudget counts the bytes of every body not yet complete, on every path; a piece that would
take the total past the budget ends its request with 503 (the server is busy: another time the
same request passes), and the application reading it sees the client gone. A finished body is
the call's, bounded by the request size limit and the concurrent streams.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

from .sse import App, Receive, Scope, Send

GONE = {"type": "http.disconnect"}


class BodyBudget:
    """ASGI middleware: the bodies arriving through `app` hold at most `max_bytes` together."""

    def __init__(self, app: App, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.arriving = 0  # bytes of bodies not yet complete

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held = 0  # this request's bytes counted in `arriving`
        complete = False
        refused = False
        answering = False  # the application has begun its answer

        async def counted() -> MutableMapping[str, Any]:
            nonlocal held, complete, refused
            if refused:
                return GONE
            message = await receive()
            if message["type"] != "http.request" or complete:
                return message
            if not message.get("more_body", False):
                complete = True
                self.arriving -= held
                held = 0
                return message
            size = len(message.get("body", b""))
            if self.arriving + size > self.max_bytes:
                refused = True
                if not answering:
                    await _busy(send, self.max_bytes)
                return GONE
            held += size
            self.arriving += size
            return message

        async def unless_refused(message: MutableMapping[str, Any]) -> None:
            nonlocal answering
            if not refused:  # else the answer was sent: what the application says after is dropped
                answering = True
                await send(message)

        try:
            await self.app(scope, counted, unless_refused)
        finally:
            self.arriving -= held


async def _busy(send: Send, max_bytes: int) -> None:
    message = f"the server is receiving {max_bytes} bytes of request bodies already; try again"
    body = json.dumps({"code": "unavailable", "message": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        (b"retry-after", b"1"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
