"""Load: many concurrent streams against one server process, checking that nothing is lost.

Run: python -m bench.load [--streams 64] [--events 2000]. Every stream must receive every event
in order and a final message equal to the script; the run prints the inter-event gaps the
clients saw and the server process's peak memory.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pi_proto as pp

from .workloads import DELTA_SIZE, our_server, text_turn


@dataclass
class StreamResult:
    deltas: list[str]
    message: pp.AssistantMessage
    gaps: list[float]
    received: int


@dataclass
class LoadReport:
    streams: int
    events_per_stream: int
    received: int  # events the clients received, terminal events included
    lost: int
    reordered: int
    wrong_final: int
    seconds: float
    gap_p50_ms: float
    gap_p99_ms: float
    server_peak_rss_kib: int

    @property
    def ok(self) -> bool:
        return self.lost == 0 and self.reordered == 0 and self.wrong_final == 0

    def table(self) -> str:
        events = self.streams * self.events_per_stream
        rows = [
            ("streams x events", f"{self.streams} x {self.events_per_stream} = {events:,}"),
            ("events received", f"{self.received:,}"),
            ("lost / reordered / wrong final", f"{self.lost} / {self.reordered} / {self.wrong_final}"),
            ("wall time", f"{self.seconds:.2f} s ({events / self.seconds:,.0f} events/s)"),
            ("inter-event gap p50 / p99", f"{self.gap_p50_ms:.2f} ms / {self.gap_p99_ms:.2f} ms"),
            ("server peak RSS", f"{self.server_peak_rss_kib / 1024:.1f} MiB"),
        ]
        return "\n".join(f"{name:<32} {value}" for name, value in rows)


async def one_stream(target: str, context: pp.AgentContext) -> StreamResult:
    deltas: list[str] = []
    gaps: list[float] = []
    async with pp.ModelClient(target) as client:
        events = client.stream(context)
        last = time.perf_counter()
        async for event in events:
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
            if event.text_delta is not None:
                deltas.append(event.text_delta.delta)
        return StreamResult(deltas, await events.result(), gaps[1:], len(gaps))


async def run_load(streams: int, events_per_stream: int) -> LoadReport:
    turn = text_turn(events_per_stream)
    text = pp.text_of(turn)
    expected = [text[start : start + DELTA_SIZE] for start in range(0, len(text), DELTA_SIZE)]
    with our_server(turn, "--max-streams", str(max(streams, 256))) as (server, target):
        context = pp.AgentContext(messages=[pp.agent_message(pp.user_message("go", timestamp=1))])
        started = time.perf_counter()
        results = await asyncio.gather(*(one_stream(target, context) for _ in range(streams)))
        seconds = time.perf_counter() - started
        peak = _peak_rss_kib(server.pid)
    gaps = sorted(gap for result in results for gap in result.gaps)
    lost, reordered, wrong_final = compare(results, expected, turn)
    return LoadReport(
        streams=streams,
        events_per_stream=events_per_stream,
        received=sum(result.received for result in results),
        lost=lost,
        reordered=reordered,
        wrong_final=wrong_final,
        seconds=seconds,
        gap_p50_ms=statistics.median(gaps) * 1000,
        gap_p99_ms=gaps[int(len(gaps) * 0.99)] * 1000,
        server_peak_rss_kib=peak,
    )


def compare(results: list[StreamResult], expected: list[str], turn: pp.AssistantMessage) -> tuple[int, int, int]:
    """Deltas lost, streams whose deltas came out of order (or doubled), and final messages that differ."""
    lost = sum(max(0, len(expected) - len(result.deltas)) for result in results)
    reordered = sum(1 for result in results if result.deltas != expected[: len(result.deltas)])
    wrong_final = sum(1 for result in results if pp.encode(result.message) != pp.encode(turn))
    return lost, reordered, wrong_final


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=64)
    parser.add_argument("--events", type=int, default=2000, help="events per stream (at least 5)")
    args = parser.parse_args()
    report = asyncio.run(run_load(args.streams, args.events))
    print(report.table())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
