"""The web page at `/`: the playground and transcript viewer (built from ui/ into web/ui/).

The page is static: it calls the server's own Connect endpoints with the token the user gives
it, as a header. It is served with a Content-Security-Policy that lets it load and call only its
own origin. With a file to view (`pi-proto view FILE`), `GET /ui/file` answers that file's bytes (its
name, percent-encoded, in `x-file-name`), which the page opens when its URL ends in `#view`. The
file is sent in pieces as the client takes them, so a reader holds a piece of it, not all of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from .sse import Receive, Scope, Send

FILE_PATH = "/ui/file"
# What the page is, by path: the file of web/ui/ and its media type.
ASSETS = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/ui/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/ui/app.css": ("app.css", "text/css; charset=utf-8"),
}
PATHS = frozenset([*ASSETS, FILE_PATH])
MAX_VIEW_BYTES = 1024 * 1024 * 1024  # the page loads the file whole: at most this
PIECE_BYTES = 256 * 1024  # read and sent at a time; the transport waits for the client between sends
HEADERS = [
    (b"cache-control", b"no-cache"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
        b"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    ),
]


@dataclass(frozen=True)
class Page:
    """The ASGI endpoint of the page's paths (PATHS); `view` is the file `GET /ui/file` answers."""

    view: Path | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            await _answer(send, 405, b"text/plain; charset=utf-8", b"the page is read with GET", [(b"allow", b"GET")])
            return
        path = scope["path"]
        if path == FILE_PATH:
            if self.view is None:
                await _answer(send, 404, b"text/plain; charset=utf-8", b"no file to view: see `pi-proto view FILE`")
                return
            await _send_file(self.view, receive, send, head=scope["method"] == "HEAD")
            return
        name, media_type = ASSETS[path]
        try:
            data = resources.files("pi_proto.web").joinpath("ui", name).read_bytes()
        except FileNotFoundError:
            await _answer(send, 404, b"text/plain; charset=utf-8", b"the page is not built: run `make ui`")
            return
        await _answer(send, 200, media_type.encode(), data, head=scope["method"] == "HEAD")


async def _send_file(path: Path, receive: Receive, send: Send, *, head: bool) -> None:
    """The regular file at `path`, as long as it was when opened, a piece at a time; an error the
    client can read when it cannot be opened or is too large. Pieces are read in a worker thread,
    so a slow disk holds up no other call, and reading stops when the client goes away."""
    try:
        # Non-blocking, so that a FIFO put in the file's place does not hang the open.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        message = f"cannot open the file to view: {error.strerror or error}"
        await _answer(send, 404, b"text/plain; charset=utf-8", message.encode())
        return
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            await _answer(send, 500, b"text/plain; charset=utf-8", b"the file to view is no longer a regular file")
            return
        size = info.st_size  # what is appended after the open is not sent: the length is said first
        if size > MAX_VIEW_BYTES:
            message = f"the file to view has more than the page's {MAX_VIEW_BYTES:,} bytes"
            await _answer(send, 413, b"text/plain; charset=utf-8", message.encode())
            return
        headers = [
            (b"content-type", b"application/octet-stream"),
            (b"content-length", str(size).encode()),
            *HEADERS,
            (b"x-file-name", quote(path.name).encode()),  # percent-encoded UTF-8
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if head:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        gone = asyncio.create_task(_gone(receive))
        try:
            left = size
            while left > 0 and not gone.done():
                piece = await asyncio.to_thread(os.read, fd, min(PIECE_BYTES, left))
                if not piece:
                    # Cut short since the open: the answer ends short of its length, and the
                    # server closes the connection, so the client cannot take it for the whole.
                    return
                left -= len(piece)
                await send({"type": "http.response.body", "body": piece, "more_body": left > 0})
        finally:
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone
    finally:
        os.close(fd)


async def _gone(receive: Receive) -> None:
    """Return once the client has gone away."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _answer(
    send: Send,
    status: int,
    media_type: bytes,
    body: bytes,
    extra: list[tuple[bytes, bytes]] | None = None,
    *,
    head: bool = False,
) -> None:
    headers = [(b"content-type", media_type), (b"content-length", str(len(body)).encode()), *HEADERS, *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body, "more_body": False})
