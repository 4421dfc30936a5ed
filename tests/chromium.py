"""One chromium for every browser test of a process (tests/browser/chromium.mjs): each scenario
connects to it instead of starting a browser of its own."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

SERVER = Path(__file__).parent / "browser" / "chromium.mjs"


@functools.cache
def endpoint() -> str:
    """The WebSocket endpoint of the shared browser, started on first use. It closes when this
    process ends: its stdin, a pipe from here, ends then."""
    process = subprocess.Popen(["node", str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    assert line.startswith("ws://"), f"{SERVER.name} printed {line!r} instead of its endpoint"
    return line
