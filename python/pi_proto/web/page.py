"""The web page at `/`: the playground and transcript viewer (built from ui/ into web/ui/).

The page is static: it calls the server's own Connect endpoints with the token the user gives
it, as a header. It is served with a Content-Security-Policy that lets it load and call only its
own origin. With a file to view (`pi-proto view FILE`), `GET /ui/file` answers that file's bytes (its
name, percent-encoded, in `x-file-name`), which the page opens when its URL ends in `#view`.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from ..wire.files import read_regular_file
from .sse import Receive, Scope, Send

FILE_PATH = "/ui/file"
# What the page is, by path: the file of web/ui/ and its media type.
ASSETS = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/ui/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/ui/app.css": ("app.css", "text/css; charset=utf-8"),
}
PATHS = frozenset([*ASSETS, FILE_PATH])
MAX_VIEW_BYTES = 1024 * 1024 * 1024  # a session file to view is read whole, at most this
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
            data = read_regular_file(self.view, MAX_VIEW_BYTES)
            named = [(b"x-file-name", quote(self.view.name).encode())]  # percent-encoded UTF-8
            await _answer(send, 200, b"application/octet-stream", data, named, head=scope["method"] == "HEAD")
            return
        name, media_type = ASSETS[path]
        try:
            data = resources.files("pi_proto.web").joinpath("ui", name).read_bytes()
        except FileNotFoundError:
            await _answer(send, 404, b"text/plain; charset=utf-8", b"the page is not built: run `make ui`")
            return
        await _answer(send, 200, media_type.encode(), data, head=scope["method"] == "HEAD")


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
