"""`make bench`: how close pi-proto comes to what grpcio and upb allow.

Every figure is a ratio against a baseline measured in the same run, on the same machine:
1. one stream of 10,000 text deltas through our client ÷ raw grpc.aio with pre-serialized bytes;
2. 64 concurrent streams against one server process ÷ the same on the raw server, and the
   inter-event gaps at half the saturation rate;
3. the bytes of a stream: growth with its length, overhead per delta, and the partial resent;
4. the codec on a real pi session: ours ÷ upb or json alone, both directions;
5. the client's peak memory over a 100,000-delta stream ÷ the final message's size;
6. 64 consumers slower than the model, with adaptive coalescing on and off;
7. a provider-backed stream (`serve --models` on a recorded Anthropic stream) ÷ the same recording
   read by the provider's SDK alone.
Servers run in processes of their own. Results go to bench/results/ as JSON and a PNG chart.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import grpc

import pi_proto as pp
from pi_proto._gen.pb2.pi.ai.v1 import event_pb2, service_pb2, transcript_pb2
from pi_proto.events import events_of
from pi_proto.pi_json import entry_from_pi, entry_to_pi
from pi_proto.server import STREAM_METHOD, TooLarge, parse_request, wire_event
from pi_proto.wire import to_upb

from .providers import provider_stream
from .workloads import ROOT, our_server, serving, text_turn

SESSION = ROOT / "tests" / "fixtures" / "pi-sessions" / "before-compaction.jsonl"
RESULTS = ROOT / "bench" / "results"
CONTEXT = pp.AgentContext(messages=[pp.agent_message(pp.user_message("go", timestamp=1))])


@dataclass
class Figure:
    section: str
    name: str
    value: float
    unit: str
    baseline: float | None  # the same quantity for the baseline, in the same unit
    ratio: float | None
    target: str  # e.g. ">= 0.7"; empty when the figure is reported only
    met: bool | None


def figure(section: str, name: str, value: float, unit: str, baseline: float | None, target: str = "") -> Figure:
    ratio = value / baseline if baseline else None
    met = None
    if target and ratio is not None:
        op, bound = target.split()
        met = ratio >= float(bound) if op == ">=" else ratio <= float(bound)
    return Figure(section, name, value, unit, baseline, ratio, target, met)


@contextmanager
def floor_server(events: int) -> Iterator[str]:
    with serving(["-m", "bench.floor", "--events", str(events)]) as (_, target):
        yield target


@contextmanager
def our_target(turn: pp.AssistantMessage, *flags: str) -> Iterator[str]:
    with our_server(turn, *flags) as (_, target):
        yield target


# --- clients -------------------------------------------------------------------------------------------


REQUEST = pp.encode(pp.StreamRequest(context=CONTEXT))


async def raw_stream(channel: grpc.aio.Channel, gaps: list[float] | None = None) -> int:
    call: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(STREAM_METHOD)
    count, last = 0, None
    async for _ in call(REQUEST):
        count += 1
        now = time.perf_counter()
        if gaps is not None and last is not None:
            gaps.append(now - last)
        last = now
    return count


async def our_stream(
    client: pp.ModelClient, gaps: list[float] | None = None, *, pause: float = 0.0, coalesce: bool = False
) -> int:
    count, last = 0, None
    events = client.stream(CONTEXT, coalesce_deltas=coalesce)
    async for event in events:
        count += 1
        assert event.partial is not None  # the accumulator ran
        if pause:
            await asyncio.sleep(pause)  # a consumer with work of its own to do per event
        now = time.perf_counter()
        if gaps is not None and last is not None:  # from the first event on: the call's setup is not a gap
            gaps.append(now - last)
        last = now
    message = await events.result()
    assert message.stop_reason == pp.StopReason.STOP, message.error_message
    return count


async def events_per_second(target: str, streams: int, ours: bool, gaps: list[float] | None = None) -> float:
    """Aggregate events per second of `streams` concurrent calls, each on its own channel."""
    channels = [grpc.aio.insecure_channel(target) for _ in range(streams)]
    clients = [pp.ModelClient(target) for _ in range(streams)]
    try:
        started = time.perf_counter()
        if ours:
            counts = await asyncio.gather(*(our_stream(client, gaps) for client in clients))
        else:
            counts = await asyncio.gather(*(raw_stream(channel, gaps) for channel in channels))
        return sum(counts) / (time.perf_counter() - started)
    finally:
        for channel in channels:
            await channel.close()
        for client in clients:
            await client.close()


def best_of(runs: int, measure: Callable[[], float]) -> float:
    return max(measure() for _ in range(runs))


# --- 1 and 2: streaming ------------------------------------------------------------------------------


def single_stream(events: int = 10_004) -> list[Figure]:
    with floor_server(events) as target:
        floor = best_of(3, lambda: asyncio.run(events_per_second(target, 1, ours=False)))
    with our_target(text_turn(events)) as target:
        ours = best_of(3, lambda: asyncio.run(events_per_second(target, 1, ours=True)))
    return [figure("1 single stream", "events/s, our client ÷ raw grpc.aio", ours, "events/s", floor, ">= 0.7")]


def concurrent_streams(streams: int = 64, events: int = 2_000, paced_events: int = 500) -> list[Figure]:
    with floor_server(events) as target:
        floor = asyncio.run(events_per_second(target, streams, ours=False))
    with our_target(text_turn(events)) as target:
        ours = asyncio.run(events_per_second(target, streams, ours=True))
    # Half the saturation rate: each stream paced so that all together send ours / 2 events/s.
    delay = streams / (ours / 2)
    gaps: list[float] = []
    with our_target(text_turn(paced_events), "--delay", f"{delay:.6f}") as target:
        paced = asyncio.run(events_per_second(target, streams, ours=True, gaps=gaps))
    gaps.sort()
    p50, p99 = percentile(gaps, 50), percentile(gaps, 99)
    return [
        figure("2 concurrent", f"{streams} streams, aggregate events/s ÷ raw", ours, "events/s", floor, ">= 0.7"),
        figure("2 concurrent", f"paced at {paced:,.0f} events/s: gap p50", p50, "ms", delay * 1000),
        figure("2 concurrent", "paced: gap p99 ÷ 50 ms", p99, "ms", 50.0, "<= 1.0"),
    ]


def slow_consumers(streams: int = 64, events: int = 500, pause: float = 0.01) -> list[Figure]:
    """Consumers that spend `pause` per event: how coalescing changes what they get and when."""
    text = len(pp.text_of(text_turn(events)))
    results = {}
    with our_target(text_turn(events)) as target:
        for coalesce in (False, True):

            async def run(coalesce: bool = coalesce) -> tuple[float, list[float]]:
                gaps: list[float] = []
                clients = [pp.ModelClient(target) for _ in range(streams)]
                started = time.perf_counter()
                await asyncio.gather(*(our_stream(c, gaps, pause=pause, coalesce=coalesce) for c in clients))
                seconds = time.perf_counter() - started
                for client in clients:
                    await client.close()
                return streams * text / seconds, sorted(gaps)

            results[coalesce] = asyncio.run(run())
    (plain, plain_gaps), (merged, merged_gaps) = results[False], results[True]
    name = f"{streams} consumers at {pause * 1000:g} ms/event: chars/s, on ÷ off"
    return [
        figure("6 coalescing", name, merged, "chars/s", plain),
        figure("6 coalescing", "gap p99, on ÷ off", percentile(merged_gaps, 99), "ms", percentile(plain_gaps, 99)),
    ]


def percentile(sorted_seconds: list[float], percent: int) -> float:
    """The given percentile of sorted durations, in milliseconds."""
    return sorted_seconds[min(len(sorted_seconds) - 1, len(sorted_seconds) * percent // 100)] * 1000


# --- 3: bytes on the wire ------------------------------------------------------------------------------


def stream_bytes(deltas: int, with_partial: bool = False) -> int:
    total = 0
    accumulator = pp.Accumulator()
    for event in events_of(text_turn(deltas + 4), 8):
        accumulator.apply(event)
        if with_partial:  # what an in-process pi event carries: the whole message so far
            kind, body = pp.event_kind(event)
            fields: dict[str, Any] = {kind: to_upb(body), "partial": to_upb(event.partial or pp.AssistantMessage())}
            total += len(event_pb2.ModelEvent(**fields).SerializeToString())
        else:
            total += len(wire_event(event))
    return total


def wire_bytes() -> list[Figure]:
    small, large = stream_bytes(10_000), stream_bytes(20_000)
    delta = pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=0, delta="0000001,"))
    overhead = len(wire_event(delta)) - len(b"0000001,")
    resent = stream_bytes(10_000, with_partial=True)
    # A provider reports usage about three times a call (Anthropic: message_start, then message_delta).
    usage = pp.Usage(input=48_213, output=1_024, cache_read=40_960, cache_write=7_253, total_tokens=97_450)
    live_usage = 3 * (len(wire_event(pp.ModelEvent(text_delta=delta.text_delta, usage=usage))) - len(wire_event(delta)))
    return [
        figure("3 wire bytes", "20,000 deltas ÷ 10,000 deltas", large, "bytes", small, "<= 2.05"),
        figure("3 wire bytes", "bytes per delta event beyond the delta ÷ 12", overhead, "bytes", 12.0, "<= 1.0"),
        figure("3 wire bytes", "partial resent on every event ÷ ours", resent, "bytes", small),
        figure("3 wire bytes", "live usage (three updates) ÷ the 10,000-delta stream", live_usage, "bytes", small),
    ]


# --- 4: the codec on a real session ----------------------------------------------------------------------


def timed(work: Callable[[], object], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def codec() -> list[Figure]:
    lines = SESSION.read_bytes().splitlines()
    messages = [entry_from_pi(json.loads(line)) for line in lines]
    records = [pp.encode(message) for message in messages]
    parsed = [json.loads(line) for line in lines]

    upb_parse = timed(lambda: [transcript_pb2.TranscriptEntry.FromString(data) for data in records])
    ours_decode = timed(lambda: [pp.decode(pp.TranscriptEntry, data) for data in records])
    upb_serialize = timed(
        lambda: [upb.SerializeToString() for upb in [transcript_pb2.TranscriptEntry.FromString(d) for d in records]]
    )
    ours_encode = timed(lambda: [pp.encode(message) for message in messages])
    loads = timed(lambda: [json.loads(line) for line in lines])
    from_pi = timed(lambda: [pp.encode(entry_from_pi(json.loads(line))) for line in lines])
    dumps = timed(lambda: [json.dumps(value) for value in parsed])
    to_pi = timed(lambda: [pp.dump_json(entry_to_pi(pp.decode(pp.TranscriptEntry, data))) for data in records])
    size = SESSION.stat().st_size / 1e6
    in_context = [entry.message for entry in messages if entry.message is not None]
    request = pp.encode(pp.StreamRequest(context=pp.AgentContext(messages=in_context)))
    upb_request = timed(lambda: service_pb2.StreamRequest.FromString(request))
    served = timed(lambda: parse_request(request))
    hostile = b"\x12\x02\x0a\x00" * 4_190_000  # 16 MiB of empty user messages, inside the context
    hostile = b"\x12" + _varint(len(hostile)) + hostile
    upb_hostile = timed(lambda: service_pb2.StreamRequest.FromString(hostile), runs=2)
    refused = timed(lambda: _refused(hostile), runs=2)
    kib = len(request) / 1024
    return [
        figure(
            "4 codec",
            f"a request of the session ({kib:,.0f} KiB): parsed, counted, checked, converted, µs per KiB ÷ upb parse",
            served / kib * 1e6,
            "µs/KiB",
            upb_request / kib * 1e6,
        ),
        figure(
            "4 codec",
            "a hostile 16 MiB request of 4.19 M empty messages: refused, ns per byte ÷ upb parse alone",
            refused / len(hostile) * 1e9,
            "ns/B",
            upb_hostile / len(hostile) * 1e9,
        ),
        figure(
            "4 codec", "binary → public types ÷ upb parse alone", ours_decode * 1000, "ms", upb_parse * 1000, "<= 10"
        ),
        figure("4 codec", "pi-JSON → proto → binary ÷ json.loads alone", from_pi * 1000, "ms", loads * 1000, "<= 3"),
        figure(
            "4 codec", "public types → binary ÷ upb serialize alone", ours_encode * 1000, "ms", upb_serialize * 1000
        ),
        figure("4 codec", "binary → proto → pi-JSON ÷ json.dumps alone", to_pi * 1000, "ms", dumps * 1000),
        figure("4 codec", f"session file size ({len(lines):,} lines)", size, "MB", None),
    ]


def _refused(request: bytes) -> None:
    try:
        parse_request(request)
    except TooLarge:
        return
    raise AssertionError("the hostile request was not refused")


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# --- 5: memory ---------------------------------------------------------------------------------------------


def memory(deltas: int = 100_000) -> list[Figure]:
    with our_target(text_turn(deltas + 4)) as target:
        run = subprocess.run(
            [sys.executable, "-m", "bench.memory", "--target", target], capture_output=True, text=True, cwd=ROOT
        )
    if run.returncode != 0:
        raise RuntimeError(run.stderr)
    result = json.loads(run.stdout)
    return [
        figure(
            "5 memory",
            f"client peak RSS growth over {result['events']:,} events ÷ final message",
            result["peak_growth_bytes"] / 1e6,
            "MB",
            result["final_bytes"] / 1e6,
            "<= 3",
        )
    ]


# --- report ----------------------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": f"{cpu}, {os.cpu_count()} cores",
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "protobuf": __import__("google.protobuf").protobuf.__version__,
    }


def table(figures: list[Figure]) -> str:
    rows = [("", "figure", "ours", "baseline", "ratio", "target")]
    for f in figures:
        ratio = "" if f.ratio is None else f"{f.ratio:.2f}"
        baseline = "" if f.baseline is None else f"{f.baseline:,.2f} {f.unit}"
        verdict = "" if f.met is None else ("met" if f.met else "NOT MET")
        rows.append((f.section, f.name, f"{f.value:,.2f} {f.unit}", baseline, ratio, f"{f.target} {verdict}".strip()))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows)


def chart(figures: list[Figure], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    shown = [f for f in figures if f.ratio is not None and f.target]
    labels = [f"{f.section}\n{f.name}" for f in shown]
    ratios = [f.ratio or 0 for f in shown]
    bounds = [float(f.target.split()[1]) for f in shown]
    figure_, axes = pyplot.subplots(figsize=(11, 0.7 * len(shown) + 1.5))
    colors = ["tab:green" if f.met else "tab:red" for f in shown]
    axes.barh(range(len(shown)), ratios, color=colors)
    axes.scatter(bounds, range(len(shown)), marker="|", s=400, color="black", label="target")
    axes.set_yticks(range(len(shown)), labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("ratio (ours ÷ baseline)")
    axes.set_title("pi-proto bench: ratios against baselines measured in the same run")
    axes.legend()
    figure_.tight_layout()
    figure_.savefig(path, dpi=110)


def provider_backed(deltas: int = 10_000) -> list[Figure]:
    ours, alone = provider_stream(deltas)
    return [figure("7 provider-backed", "events/s, serve --models ÷ the provider's SDK alone", ours, "events/s", alone)]


def main() -> int:
    started = time.perf_counter()
    figures: list[Figure] = []
    for section in (wire_bytes, codec, single_stream, concurrent_streams, slow_consumers, memory, provider_backed):
        figures.extend(section())
        print(f"  {section.__name__} done ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    info = machine()
    print("\n".join(f"{key}: {value}" for key, value in info.items()))
    print(table(figures))
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (RESULTS / f"bench-{stamp}.json").write_text(
        json.dumps({"machine": info, "figures": [asdict(f) for f in figures]}, indent=2) + "\n", encoding="utf-8"
    )
    chart(figures, RESULTS / f"bench-{stamp}.png")
    print(f"wrote bench/results/bench-{stamp}.json and .png in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
