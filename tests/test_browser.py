"""A web page in Debian's chromium (tests/browser, driven by playwright-core) against the HTTP port:
over HTTP/2 a page holds more streams at once than the six connections a browser opens to one
origin over HTTP/1.1, and its seventh call does not wait for one of them to end."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import pi_proto as pp
from pi_proto.grpc.server import ModelServer
from pi_proto.web import HttpServer

from . import chromium
from .certs import server_context
from .helpers import README_TURN, RecordingModel, eventually

BROWSER_TESTS = Path(__file__).parent / "browser"
STREAMS = 8  # more than a browser's six HTTP/1.1 connections per origin


def _page(url: str) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(BROWSER_TESTS / "concurrent.mjs"), url, str(STREAMS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "CHROMIUM_ENDPOINT": chromium.endpoint()},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


async def _seen_by_a_page(tmp_path: Path, alpn: list[str], *, held: bool) -> dict[str, Any]:
    """What the page saw. `held`: every stream stops after its first event until all of them and
    the page's ListModels call have reached the server at once, which only a page that needs no
    connection of its own per call does; otherwise each stream plays at once to its end."""
    _, _, context = server_context(tmp_path, alpn)
    model = RecordingModel(README_TURN, hold_after=1 if held else None)
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server, ssl_context=context) as web:
        listed = 0
        catalog = grpc_server.catalog

        def counted(provider: str = "") -> list[pp.Model]:
            nonlocal listed
            listed += 1
            return catalog(provider)

        grpc_server.catalog = counted  # type: ignore[method-assign]
        seen = asyncio.create_task(asyncio.to_thread(_page, web.url))
        if held:  # the page's first ListModels is its navigation; the second, its call
            await eventually(
                lambda: (len(model.streams) == STREAMS and listed == 2) or seen.done(), "every call at once"
            )
            model.release.set()
        return await seen


async def test_a_page_streams_more_than_six_at_once_over_http2(tmp_path: Path) -> None:
    seen = await _seen_by_a_page(tmp_path, ["h2", "http/1.1"], held=True)
    streams = seen["streams"]
    assert all(stream["done"] for stream in streams)
    assert set(seen["protocols"]) == {"h2"}
    first_end = min(stream["end"] for stream in streams)
    assert max(stream["first"] for stream in streams) < first_end  # all were streaming at once
    assert seen["listedAt"] < first_end  # and ListModels did not wait for one to end


async def test_over_http11_the_seventh_call_waits(tmp_path: Path) -> None:
    """What a server without HTTP/2 gives a page: the check above fails against it."""
    seen = await _seen_by_a_page(tmp_path, ["http/1.1"], held=False)
    streams = seen["streams"]
    assert set(seen["protocols"]) == {"http/1.1"}
    first_end = min(stream["end"] for stream in streams)
    assert max(stream["first"] for stream in streams) > first_end


@pytest.fixture(autouse=True)
def _browser_installed() -> None:
    """`make browser-setup` installs chromium and playwright-core; without them the tests fail."""
    assert Path("/usr/bin/chromium").exists(), "chromium is missing: run `make browser-setup`"
    assert (BROWSER_TESTS / "node_modules" / "playwright-core").is_dir(), "run `make browser-setup`"
