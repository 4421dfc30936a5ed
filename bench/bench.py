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
   read by the provider's SDK alone;
8-13. our gRPC, SSE, pi-messages (pi's own protocol) and Connect endpoints against the peer users
   would pick instead of us, JSON over Server-Sent Events (bench/sse.py), with plain grpc.aio as
   the transport reference, side by side in alternating rounds: one stream, 64 streams, server
   and client CPU per event, bytes on the wire, and live capacity;
14. the accumulator alone (bench/accumulation.py): 1 MB and 4 MB of tool-call argument deltas ÷ the
   same bytes as text deltas, the growth from 1 MB to 4 MB, and the corpus's partial-JSON cases
   fed one character at a time ÷ the same characters as text;
15. kept streams (bench/resume.py): resume latency ÷ a fresh stream's first event, events lost or
   repeated across 1,000 forced disconnects, Redis-kept ÷ memory-kept throughput, and the bytes
   and server CPU per event of numbered, digested streams ÷ --no-resume.
Servers run in processes of their own. Results go to bench/results/ as JSON and a PNG chart.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import time
import timeit
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import grpc

import pi_proto as pp
from pi_proto._gen.pb2.pi.ai.v1 import event_pb2, service_pb2, transcript_pb2
from pi_proto.grpc import outgoing
from pi_proto.grpc.methods import STREAM_METHOD
from pi_proto.grpc.outgoing import wire_event
from pi_proto.grpc.requests import TooLarge, parse_request
from pi_proto.ir.events import events_of
from pi_proto.transcripts.pi_session import entry_from_pi, entry_to_pi
from pi_proto.wire import codec as wire
from pi_proto.wire import varint
from pi_proto.wire.codec import to_upb
from pi_proto.wire.validate import check

from . import accumulation as accumulated
from . import resume, versus
from .protocols import GRPC_AIO, OURS, Protocol, Workload
from .providers import provider_stream
from .sse import SSE
from .timing import timed
from .web import OURS_CONNECT, OURS_PI_MESSAGES, OURS_SSE
from .workloads import ROOT, our_server, serving, text_turn

SESSION = ROOT / "tests" / "fixtures" / "pi-sessions" / "before-compaction.jsonl"
RESULTS = ROOT / "bench" / "results"
CONTEXT = pp.AgentContext(messages=[pp.agent_message(pp.user_message("go", timestamp=1))])
# Sections 8-13: every protocol in this order in each round, each as a ratio against REFERENCE.
PEERS: list[Protocol] = [OURS, OURS_SSE, OURS_PI_MESSAGES, OURS_CONNECT, SSE, GRPC_AIO]
REFERENCE = SSE
SSE_STACK = ("starlette", "uvicorn", "uvloop", "httptools", "httpx", "httpx-sse")

Span = tuple[float, float]


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
    # Figures measured over rounds: value, baseline and ratio are medians, these the least and
    # greatest over the rounds (for live capacity, the search's bracket: most held, fewest not).
    value_span: Span | None = None
    baseline_span: Span | None = None
    ratio_span: Span | None = None
    better: str = ""  # "higher" or "lower": which way a ratio above 1 points, for the chart


def figure(
    section: str, name: str, value: float, unit: str, baseline: float | None, target: str = "", better: str = ""
) -> Figure:
    ratio = value / baseline if baseline else None
    met = None
    if target and ratio is not None:
        op, bound = target.split()
        met = ratio >= float(bound) if op == ">=" else ratio <= float(bound)
    return Figure(section, name, value, unit, baseline, ratio, target, met, better=better)


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


def paired(section: str, name: str, ours: Sequence[float], theirs: Sequence[float], unit: str, better: str) -> Figure:
    """A figure over rounds: the medians, and the ratio as the median of each round's ratio."""
    ratios = [mine / other for mine, other in zip(ours, theirs, strict=True)]
    return Figure(
        section,
        name,
        statistics.median(ours),
        unit,
        statistics.median(theirs),
        statistics.median(ratios),
        "",
        None,
        (min(ours), max(ours)),
        (min(theirs), max(theirs)),
        (min(ratios), max(ratios)),
        better,
    )


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
    direct, general = _delta_encoders(delta)
    return [
        figure("3 wire bytes", "20,000 deltas ÷ 10,000 deltas", large, "bytes", small, "<= 2.05"),
        figure("3 wire bytes", "bytes per delta event beyond the delta ÷ 12", overhead, "bytes", 12.0, "<= 1.0"),
        figure("3 wire bytes", "partial resent on every event ÷ ours", resent, "bytes", small),
        figure("3 wire bytes", "live usage (three updates) ÷ the 10,000-delta stream", live_usage, "bytes", small),
        figure("3 wire bytes", "a text delta by the server's direct encoder ÷ through upb", direct, "ns", general),
    ]


def _delta_encoders(delta: pp.ModelEvent) -> tuple[float, float]:
    """ns per event: the server's direct delta encoder (outgoing._delta_wire, the one user of a
    hand-written varint in the server), against what it saves: filling and serializing a upb
    ModelEvent. The best of five runs of 100,000 each."""
    body = delta.text_delta
    assert body is not None

    def through_upb() -> bytes:
        upb = event_pb2.ModelEvent()
        wire.fill_upb(upb.text_delta, body)
        return upb.SerializeToString()

    assert outgoing._delta_wire(b"\x1a", body) == through_upb() == wire_event(delta)
    runs = 100_000
    direct = min(timeit.repeat(lambda: outgoing._delta_wire(b"\x1a", body), number=runs, repeat=5))
    general = min(timeit.repeat(through_upb, number=runs, repeat=5))
    return direct / runs * 1e9, general / runs * 1e9


# --- 4: the codec on a real session ----------------------------------------------------------------------


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
    # The path before the rules read the parsed upb message: converted to the public types, then
    # back to upb for protovalidate, then converted again.
    converted_first = timed(lambda: _converted_first(request))
    hostile = b"\x12\x02\x0a\x00" * 4_190_000  # 16 MiB of empty user messages, inside the context
    hostile = b"\x12" + varint.encode(len(hostile)) + hostile
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
            "the same request checked as parsed, converted once ÷ converted, then back to upb for the rules",
            served * 1000,
            "ms",
            converted_first * 1000,
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


def _converted_first(request: bytes) -> pp.StreamRequest:
    public = wire.from_upb(wire.parse(pp.StreamRequest, request), pp.StreamRequest)
    check(wire.to_upb(public))
    return public


def _refused(request: bytes) -> None:
    try:
        parse_request(request)
    except TooLarge:
        return
    raise AssertionError("the hostile request was not refused")


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


# --- 8 to 13: against JSON over SSE, with plain grpc.aio as the transport reference --------------------------


def _against(section: str, name: str, values: dict[str, list[float]], unit: str, better: str) -> list[Figure]:
    """One figure per protocol other than the reference: its values ÷ the reference's, round by round."""
    theirs = values[REFERENCE.name]
    return [
        paired(section, f"{name}, {protocol} ÷ {REFERENCE.name}", ours, theirs, unit, better)
        for protocol, ours in values.items()
        if protocol != REFERENCE.name
    ]


def _each(runs: dict[str, list[versus.Run]], measure: Callable[[versus.Run], float]) -> dict[str, list[float]]:
    return {protocol: [measure(run) for run in done] for protocol, done in runs.items()}


def versus_streams(
    single: int = 10_004, single_rounds: int = 7, streams: int = 64, events: int = 2_000, rounds: int = 3
) -> list[Figure]:
    """8 and 9: events/s at the client; 10 and 11: CPU per event of the server process and of the
    client (this process), over the concurrent runs (long enough for /proc's 10 ms ticks)."""
    one = versus.rounds(PEERS, Workload(single), 1, single_rounds)
    many = versus.rounds(PEERS, Workload(events), streams, rounds)
    cpu: list[tuple[str, Callable[[versus.Run], float]]] = [
        ("10 server CPU", lambda run: run.server_us_per_event),
        ("11 client CPU", lambda run: run.client_us_per_event),
    ]
    figures = [
        *_against(
            "8 vs SSE: one stream",
            f"{single - 4:,} deltas, events/s",
            _each(one, lambda run: run.events_per_second),
            "events/s",
            "higher",
        ),
        *_against(
            "9 vs SSE: concurrent",
            f"{streams} streams x {events - 4:,} deltas, aggregate events/s",
            _each(many, lambda run: run.events_per_second),
            "events/s",
            "higher",
        ),
    ]
    for section, measure in cpu:
        figures += _against(section, f"{streams} streams, µs per event", _each(many, measure), "µs/event", "lower")
    return figures


def versus_bytes(events: int = 10_004) -> list[Figure]:
    """12: the bytes of one stream as each protocol's client reads them."""
    counted = versus.wire_bytes(PEERS, Workload(events))
    return [
        figure(
            "12 wire bytes",
            f"a {events - 4:,}-delta stream, {protocol.name} ({protocol.counted}) ÷ {REFERENCE.name} "
            f"({REFERENCE.counted})",
            counted[protocol.name],
            "bytes",
            counted[REFERENCE.name],
            better="lower",
        )
        for protocol in PEERS
        if protocol is not REFERENCE
    ]


def versus_capacity(budget: float = 300.0) -> tuple[list[Figure], list[dict[str, Any]]]:
    """13: the most streams at 50 events/s one server process holds with p99 extra delay under
    100 ms (spans: the search's bracket); and every probe, for the JSON results."""
    live = versus.Live()
    searches = {search.protocol.name: search for search in versus.capacity(PEERS, live, budget)}
    reference = searches.pop(REFERENCE.name)
    name = f"streams at {live.rate:g} events/s, p99 extra delay < {live.limit_ms:g} ms"
    figures = [
        Figure(
            "13 live capacity",
            f"{name}, {protocol} ÷ {REFERENCE.name}",
            search.held,
            "streams",
            reference.held,
            search.held / reference.held if reference.held else None,
            "",
            None,
            value_span=_bracket(search),
            baseline_span=_bracket(reference),
            better="higher",
        )
        for protocol, search in searches.items()
    ]
    probes = [
        {"protocol": search.protocol.name, "interval_ms": search.interval * 1000, **asdict(probe)}
        for search in (reference, *searches.values())
        for probe in search.probes
    ]
    return figures, probes


def _bracket(search: versus.Search) -> Span | None:
    """Most streams held, fewest not held; None when the search found no limit in its time."""
    return None if search.failed is None else (search.held, search.failed)


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
        "load average": " ".join(Path("/proc/loadavg").read_text().split()[:3]),  # other work on the machine
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "protobuf": __import__("google.protobuf").protobuf.__version__,
        "peer": ", ".join(f"{name} {version(name)}" for name in SSE_STACK),
    }


def _span(span: Span | None) -> str:
    """A span as the table shows it after a median, or nothing."""
    if span is None:
        return ""
    low, high = (f"{bound:,.0f}" if abs(bound) >= 100 else f"{bound:.2f}" for bound in span)
    return f" ({low}–{high})"


def table(figures: list[Figure], before: dict[tuple[str, str], float] | None = None) -> str:
    """The figures, each ratio beside the one of the run `before` (by section and name), if any."""
    rows = [("", "figure", "ours", "baseline", "ratio", "before", "target")]
    for f in figures:
        ratio = "" if f.ratio is None else f"{f.ratio:.2f}{_span(f.ratio_span)}"
        baseline = "" if f.baseline is None else f"{f.baseline:,.2f}{_span(f.baseline_span)} {f.unit}"
        verdict = "" if f.met is None else ("met" if f.met else "NOT MET")
        value = f"{f.value:,.2f}{_span(f.value_span)} {f.unit}"
        was = (before or {}).get((f.section, f.name))
        change = "" if was is None or f.ratio is None or not was else f"{was:.2f} ({f.ratio / was - 1:+.0%})"
        rows.append((f.section, f.name, value, baseline, ratio, change, f"{f.target} {verdict}".strip()))
    return columns(rows)


def previous_ratios() -> tuple[str, dict[tuple[str, str], float]]:
    """The newest earlier run in bench/results/ (its file name) and its ratios by section and name."""
    runs = sorted(RESULTS.glob("bench-*.json"))
    if not runs:
        return "", {}
    figures = json.loads(runs[-1].read_text(encoding="utf-8"))["figures"]
    return runs[-1].name, {(f["section"], f["name"]): f["ratio"] for f in figures if f.get("ratio") is not None}


def columns(rows: Sequence[Sequence[str]]) -> str:
    """Rows of cells as text, each column as wide as its widest cell."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows)


def chart(figures: list[Figure], path: Path) -> None:
    """Above, the ratios with targets; below, each protocol ÷ SSE (sections 8 on), with the spread
    over the rounds, green where it is ahead of SSE."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    shown = [f for f in figures if f.ratio is not None and f.target]
    versus_ = [f for f in figures if f.ratio is not None and f.better]
    figure_, (axes, lower) = pyplot.subplots(
        2,
        1,
        figsize=(12, 0.7 * (len(shown) + len(versus_)) + 3),
        height_ratios=[len(shown) + 1, len(versus_) + 1],
    )
    labels = [textwrap.fill(f"{f.section}: {f.name}", 70) for f in shown]
    ratios = [f.ratio or 0 for f in shown]
    bounds = [float(f.target.split()[1]) for f in shown]
    colors = ["tab:green" if f.met else "tab:red" for f in shown]
    axes.barh(range(len(shown)), ratios, color=colors)
    axes.scatter(bounds, range(len(shown)), marker="|", s=400, color="black", label="target")
    axes.set_yticks(range(len(shown)), labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("ratio (ours ÷ baseline)")
    axes.set_title("pi-proto bench: ratios against baselines measured in the same run")
    axes.legend()

    ratios = [f.ratio or 1 for f in versus_]
    spans = [f.ratio_span or (ratio, ratio) for f, ratio in zip(versus_, ratios, strict=True)]
    errors = [
        [ratio - low for ratio, (low, _) in zip(ratios, spans, strict=True)],
        [high - ratio for ratio, (_, high) in zip(ratios, spans, strict=True)],
    ]
    ahead = [(ratio > 1) == (f.better == "higher") for f, ratio in zip(versus_, ratios, strict=True)]
    colors = ["tab:green" if a else "tab:red" for a in ahead]
    # From parity outwards: a bar to the right is more of the quantity than SSE, to the left less.
    lower.barh(range(len(versus_)), [ratio - 1 for ratio in ratios], left=1, xerr=errors, color=colors)
    lower.axvline(1, color="black", linewidth=1)
    lower.set_xscale("log")
    ticks = [
        tick
        for tick in (0.1, 0.2, 0.5, 1, 2, 5, 10)
        if min(low for low, _ in spans) / 2 <= tick <= max(high for _, high in spans) * 2
    ]
    lower.set_xticks(ticks, [f"{tick:g}" for tick in ticks])
    lower.minorticks_off()
    labels = [textwrap.fill(f"{f.section}: {f.name} ({f.better} is better)", 70) for f in versus_]
    lower.set_yticks(range(len(versus_)), labels, fontsize=8)
    lower.invert_yaxis()
    lower.set_xlabel(f"ratio ÷ {REFERENCE.name}: median over the rounds, whiskers least to greatest")
    lower.set_title(f"against JSON over SSE: green where ahead of {REFERENCE.name}")
    figure_.tight_layout()
    figure_.savefig(path, dpi=110)


def finite(value: Any) -> Any:
    """`value` with every infinite or NaN float made null, which JSON has no other word for."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def provider_backed(deltas: int = 10_000) -> list[Figure]:
    ours, alone = provider_stream(deltas)
    return [figure("7 provider-backed", "events/s, serve --models ÷ the provider's SDK alone", ours, "events/s", alone)]


def accumulation(sizes: tuple[int, int] = (1_000_000, 4_000_000)) -> list[Figure]:
    """14: the accumulator alone, tool-call argument deltas against the same bytes as text deltas;
    linear in what was received, so 4x the bytes takes about 4x the time (quadratic: 16x; the
    target leaves room for a busy machine)."""
    section = "14 accumulation"
    small, large = (accumulated.deltas(size) for size in sizes)
    figures = [
        figure(
            section,
            f"{each.size / 1e6:g} MB in 20-byte deltas, tool call ÷ text",
            each.arguments * 1e3,
            "ms",
            each.text * 1e3,
        )
        for each in (small, large)
    ]
    growth = f"tool call, {large.size / 1e6:g} MB ÷ {small.size / 1e6:g} MB"
    figures.append(figure(section, growth, large.arguments * 1e3, "ms", small.arguments * 1e3, "<= 6"))
    calls, text, characters = accumulated.partial_json_cases()
    name = f"the corpus's partial-JSON cases, {characters:,} characters one per delta, tool call ÷ text"
    figures.append(figure(section, name, calls * 1e3, "ms", text * 1e3))
    ours, library = accumulated.versus_library()
    name = "50 KB of arguments in 20-byte deltas, each partial shown: ours ÷ partial-json-parser"
    figures.append(figure(section, name, ours * 1e3, "ms", library * 1e3, better="lower"))
    return figures


def resumable() -> list[Figure]:
    section = "15 kept streams"
    got = resume.measure()
    figures = [
        figure(section, f"new connection to first event, p{p}: Resume ÷ a fresh Stream", percentile(got.resumed, p),
               "ms", percentile(got.fresh, p), better="lower")
        for p in (50, 99)
    ]  # fmt: skip
    bad = got.lost + got.repeated + got.failed
    name = f"events lost or repeated, and streams failed, across {got.cuts:,} forced disconnects"
    figures.append(Figure(section, name, bad, "events", None, None, "= 0", bad == 0))
    figures.append(
        figure(section, "one stream's events/s, kept in Redis ÷ in memory", got.redis, "events/s", got.memory)
    )
    (kept_bytes, kept_cpu, kept_events), (plain_bytes, plain_cpu, plain_events) = got.kept, got.plain
    figures.append(
        figure(section, "bytes per event, numbered and digested ÷ --no-resume", kept_bytes / got.events, "bytes",
               plain_bytes / got.events, better="lower")
    )  # fmt: skip
    figures.append(
        figure(section, "server CPU per event, kept ÷ --no-resume", kept_cpu / kept_events * 1e6, "µs",
               plain_cpu / plain_events * 1e6, better="lower")
    )  # fmt: skip
    return figures


def main() -> int:
    started = time.perf_counter()
    figures: list[Figure] = []
    sections = (wire_bytes, codec, single_stream, concurrent_streams, slow_consumers, memory, provider_backed)
    for section in (*sections, accumulation, resumable, versus_streams, versus_bytes):
        figures.extend(section())
        print(f"  {section.__name__} done ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    capacity, probes = versus_capacity()
    figures.extend(capacity)
    print(f"  versus_capacity done ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    info = machine()
    print("\n".join(f"{key}: {value}" for key, value in info.items()))
    RESULTS.mkdir(parents=True, exist_ok=True)
    previous, before = previous_ratios()
    if previous:
        print(f"before: the ratios of {previous}, and each one's change")
    print(table(figures, before))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (RESULTS / f"bench-{stamp}.json").write_text(
        json.dumps(
            finite({"machine": info, "figures": [asdict(f) for f in figures], "capacity_probes": probes}), indent=2
        )
        + "\n",
        encoding="utf-8",
    )
    chart(figures, RESULTS / f"bench-{stamp}.png")
    print(f"wrote bench/results/bench-{stamp}.json and .png in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
