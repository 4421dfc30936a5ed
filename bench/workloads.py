"""What the benchmarks stream, and the server processes that stream it."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pi_proto as pp
from pi_proto.transcripts.pi_json import assistant_to_pi

ROOT = Path(__file__).resolve().parents[1]
DELTA_SIZE = 8


def text_turn(events: int, delta_size: int = DELTA_SIZE) -> pp.AssistantMessage:
    """A one-block answer that streams as exactly `events` events (start, text start, deltas, end,
    done); each delta is one numbered chunk, so every delta is distinct and its order checkable."""
    deltas = events - 4
    text = "".join(f"{index:0{delta_size - 1}d}," for index in range(deltas))
    return pp.assistant_message(text, timestamp=1_000)


@contextmanager
def serving(command: list[str]) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Run `python COMMAND` (a server printing `listening on HOST:PORT`); yield it and its target."""
    process = subprocess.Popen([sys.executable, *command], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert process.stdout is not None
        yield process, process.stdout.readline().removeprefix("listening on ").strip()
    finally:
        process.terminate()
        process.wait(timeout=30)


@contextmanager
def our_server(turn: pp.AssistantMessage, *flags: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`pi-proto serve` playing `turn` in deltas of DELTA_SIZE characters."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "script.json"
        script.write_text(json.dumps([assistant_to_pi(turn)]), encoding="utf-8")
        command = ["-m", "pi_proto.cli", "serve", "--port", "0", "--script", str(script)]
        with serving([*command, "--delta-size", str(DELTA_SIZE), *flags]) as served:
            yield served


@contextmanager
def our_http_server(turn: pp.AssistantMessage, *flags: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`pi-proto serve --http-port 0` playing `turn`; yields it and its HTTP target (the line
    `http on HOST:PORT` that follows the gRPC one)."""
    with our_server(turn, "--http-port", "0", *flags) as (process, _):
        assert process.stdout is not None
        yield process, process.stdout.readline().removeprefix("http on ").strip()
