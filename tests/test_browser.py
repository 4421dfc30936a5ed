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

from pi_proto.grpc.server import ModelServer
from pi_proto.models.scripted import ScriptedModel
from pi_proto.web import HttpServer

from . import chromium
from .certs import server_context

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


async def _seen_by_a_page(tmp_path: Path, alpn: list[str]) -> dict[str, Any]:
    _, _, context = server_context(tmp_path, alpn)
    model = ScriptedModel.readme(delay=0.05)  # each stream lasts about a second
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server, ssl_context=context) as web:
        return await asyncio.to_thread(_page, web.url)


async def test_a_page_streams_more_than_six_at_once_over_http2(tmp_path: Path) -> None:
    seen = await _seen_by_a_page(tmp_path, ["h2", "http/1.1"])
    streams = seen["streams"]
    assert all(stream["done"] for stream in streams)
    assert set(seen["protocols"]) == {"h2"}
    first_end = min(stream["end"] for stream in streams)
    assert max(stream["first"] for stream in streams) < first_end  # all were streaming at once
    assert seen["listedAt"] < first_end  # and ListModels did not wait for one to end


async def test_over_http11_the_seventh_call_waits(tmp_path: Path) -> None:
    """What a server without HTTP/2 gives a page: the check above fails against it."""
    seen = await _seen_by_a_page(tmp_path, ["http/1.1"])
    streams = seen["streams"]
    assert set(seen["protocols"]) == {"http/1.1"}
    first_end = min(stream["end"] for stream in streams)
    assert max(stream["first"] for stream in streams) > first_end


@pytest.fixture(autouse=True)
def _browser_installed() -> None:
    """`make browser-setup` installs chromium and playwright-core; without them the tests fail."""
    assert Path("/usr/bin/chromium").exists(), "chromium is missing: run `make browser-setup`"
    assert (BROWSER_TESTS / "node_modules" / "playwright-core").is_dir(), "run `make browser-setup`"
