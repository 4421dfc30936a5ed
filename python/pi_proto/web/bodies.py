"""The request bodies still arriving, bounded together and in time: each protocol reads a body
whole before it decodes it, so unfinished bodies are memory a client holds for as long as it
sends slowly.

BodyBudget counts the bytes of every body not yet complete, on every path; a piece that would
take the total past the budget ends its request with 503 (the server is busy: another time the
same request passes), and the application reading it sees the client gone. A body must also be
complete within the stream timeout of its first read (408 after it, plus a second's grace, so a
path that times its own body, as SSE does, answers first). A finished body is the call's,
bounded by the request size limit and the concurrent streams.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import MutableMapping
from typing import Any

from .sse import App, Receive, Scope, Send

GONE = {"type": "http.disconnect"}
GRACE_SECONDS = 1.0


class BodyBudget:
    """ASGI middleware: the bodies arriving through `app` hold at most `max_bytes` together, and
    each arrives within `max_seconds` of its first read."""

    def __init__(self, app: App, max_bytes: int, max_seconds: float = math.inf) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_seconds = max_seconds
        self.arriving = 0  # bytes of bodies not yet complete

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held = 0  # this request's bytes counted in `arriving`
        complete = False
        refused = False
        answering = False  # the application has begun its answer
        loop = asyncio.get_running_loop()
        deadline: float | None = None  # for the body, from its first read

        async def counted() -> MutableMapping[str, Any]:
            nonlocal held, complete, refused, deadline
            if refused:
                return GONE
            if complete:  # the application waits for the client to go: no time limit
                return await receive()
            if deadline is None:
                deadline = loop.time() + self.max_seconds + GRACE_SECONDS  # inf: no limit
            try:
                async with asyncio.timeout_at(None if deadline == math.inf else deadline):
                    message = await receive()
            except TimeoutError:
                refused = True
                if not answering:
                    await _answer(
                        send,
                        408,
                        "deadline_exceeded",
                        f"the request body took longer to arrive than the server's limit of {self.max_seconds:g} s",
                    )
                return GONE
            if message["type"] != "http.request":
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
                    busy = f"the server is receiving {self.max_bytes} bytes of request bodies already; try again"
                    await _answer(send, 503, "unavailable", busy, retry=True)
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


async def _answer(send: Send, status: int, code: str, message: str, *, retry: bool = False) -> None:
    """An error in Connect's JSON shape, and the connection closed after it."""
    body = json.dumps({"code": code, "message": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    if retry:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
