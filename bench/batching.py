"""What each step of our gRPC path buys a live stream: Stream (one event per message), StreamBatched
(the events waiting together in one message), and StreamBatched with a flush window (`pi-proto
serve --flush-ms N`: a message waits N ms for more events after its first).

Every variant is `pi-proto serve` in a process of its own, paced at 50 events/s per stream as in
row 13 (bench/versus.py), read by the same raw probe (grpc.aio, counting events without decoding
them; for StreamBatched, the events of each message). Two measurements, both in alternating
rounds (one probe per variant in turn, so a slow spell of this shared machine hits all of them):

- a fixed load below every variant's limit: the server's CPU per event, the p99 of every event's
  extra delay (its arrival minus its schedule), and the events per message;
- live capacity: the most streams one server process holds with p99 extra delay under 100 ms.

And for a client that falls behind, coalescing on and off now that StreamBatched exists (section
6 of `make bench`): consumers that take 10 ms per event of a model that streams at once, read by
ModelClient's own stream class with the call's messages counted (time to finish, events
delivered, bytes), and consumers that keep up with a model at 50 events/s (events delivered).

`make bench-batching` runs it at 50 and at 200 events/s per stream (about 8 minutes) and prints
the tables the README quotes; `python -m bench.batching --help` lists the knobs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field, replace
from typing import Any, cast

import grpc

import pi_proto as pp
from pi_proto.grpc.client import ModelCallStream
from pi_proto.grpc.methods import BATCHED_METHOD, STREAM_METHOD

from . import versus
from .bench import RESULTS, columns, finite, machine, percentile
from .protocols import CONTEXT, GRPC_PREFIX, OWN_CONNECTION, Protocol, Served, Tally, Workload, cpu_seconds, ours_grpc
from .workloads import our_server, text_turn

LIVE = versus.Live()  # 50 events/s per stream, as row 13
FIXED_STREAMS = 128  # about a third of what the weakest variant holds at 50 events/s


@dataclass(frozen=True)
class Variant:
    """One step: its protocol, the tally its probe adds what it reads to, and with a flush window,
    the variant without one, whose pace (versus.pace) its arrivals are judged against: the model
    keeps the same schedule, and the window's delay is what it adds to it. (Read from its own
    arrivals, the pace would come out faster, since the terminal event skips the window.)"""

    label: str
    protocol: Protocol
    tally: Tally
    paced_like: str | None = None

    @property
    def name(self) -> str:
        return self.protocol.name


BATCHED = "StreamBatched"
NAME = "pi-proto gRPC, {}"  # a variant's protocol name, from its label


def variant(label: str, *, batched: bool = True, flush_ms: float = 0.0) -> Variant:
    tally = Tally()
    protocol = ours_grpc(NAME.format(label), batched=batched, flush_ms=flush_ms, tally=tally)
    return Variant(label, protocol, tally, NAME.format(BATCHED) if flush_ms else None)


def variants(windows: Sequence[float]) -> list[Variant]:
    """Stream, StreamBatched, then StreamBatched with each flush window (ms)."""
    return [
        variant("Stream", batched=False),
        variant(BATCHED),
        *(variant(f"{BATCHED} + {ms:g} ms flush", flush_ms=ms) for ms in windows),
    ]


@dataclass
class Fixed:
    """One variant's probes at the fixed load, round by round."""

    interval_ms: float = 0.0  # the schedule its arrivals are judged against (versus.pace)
    p99_ms: list[float] = field(default_factory=list)
    server_us_per_event: list[float] = field(default_factory=list)
    events_per_message: list[float] = field(default_factory=list)


def fixed_load(
    steps: Sequence[Variant], live: versus.Live = LIVE, streams: int = FIXED_STREAMS, rounds: int = 3
) -> dict[str, Fixed]:
    """`rounds` alternating rounds of `streams` streams at `live`'s pace against each variant's
    server, after one light run each that also finds the interval it keeps (versus.pace)."""
    found = {step.name: Fixed() for step in steps}
    with ExitStack() as stack:
        workload = Workload(live.events, 1 / live.rate)
        served = [stack.enter_context(step.protocol.serve(workload)) for step in steps]
        paces = {
            step.name: asyncio.run(versus.pace(step.protocol.probe, server, live))
            for step, server in zip(steps, served, strict=True)
        }
        intervals = [paces[step.paced_like or step.name] for step in steps]
        for step, interval in zip(steps, intervals, strict=True):
            found[step.name].interval_ms = interval * 1000
        for _ in range(rounds):
            for step, server, interval in zip(steps, served, intervals, strict=True):
                step.tally.messages = step.tally.events = 0
                probe = asyncio.run(versus.probe(step.protocol.probe, server, streams, live, interval))
                into = found[step.name]
                into.p99_ms.append(probe.p99_ms)
                into.server_us_per_event.append(probe.server_us_per_event)
                into.events_per_message.append(step.tally.events / max(1, step.tally.messages))
    return found


def capacity(steps: Sequence[Variant], budget: float, live: versus.Live = LIVE) -> dict[str, versus.Search]:
    """Each variant's capacity search, one probe per variant in turn (versus.capacity)."""
    paced_like = {step.name: step.paced_like for step in steps if step.paced_like}
    searches = versus.capacity([step.protocol for step in steps], live, budget, paced_like)
    return {search.protocol.name: search for search in searches}


# --- coalescing, for a client that falls behind -------------------------------------------------------


class CountedCall:
    """A StreamBatched call whose messages and bytes (with gRPC's prefix) are counted as the
    client reads them; everything else is the call's."""

    def __init__(self, call: grpc.aio.UnaryStreamCall[bytes, bytes]) -> None:
        self.call = call
        self.messages = 0
        self.bytes = 0

    async def read(self) -> Any:
        data = await self.call.read()
        if isinstance(data, bytes):
            self.messages += 1
            self.bytes += len(data) + GRPC_PREFIX
        return data

    def __getattr__(self, name: str) -> Any:  # cancel, initial_metadata, trailing_metadata, ...
        return getattr(self.call, name)


@dataclass(frozen=True)
class Consumed:
    """What `streams` consumers of one server got, over all of them."""

    seconds: float  # from the first call to the end of the last stream
    events: int  # delivered to the consumers, terminal events included
    chars: int  # of the final messages' text
    messages: int  # StreamBatched messages
    bytes: int  # of those messages, with gRPC's 5-byte prefix each
    gaps: list[float]  # between a consumer's events, sorted, in seconds
    server_cpu: float  # seconds of the server process's CPU over the run

    @property
    def server_us_per_event(self) -> float:
        return self.server_cpu / self.events * 1e6


async def consume(served: Served, streams: int, *, pause: float, coalesce: bool) -> Consumed:
    """`streams` consumers, each on a connection of its own, each spending `pause` seconds per
    event (work of its own), reading one call through ModelClient's stream class."""
    request = pp.encode(pp.StreamRequest(context=CONTEXT, coalesce_deltas=coalesce))
    channels = [grpc.aio.insecure_channel(served.target, options=OWN_CONNECTION) for _ in range(streams)]
    gaps: list[float] = []

    async def one(channel: grpc.aio.Channel) -> tuple[int, int, CountedCall]:
        batched: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(BATCHED_METHOD)
        plain: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(STREAM_METHOD)
        call = CountedCall(batched(request))
        events = ModelCallStream(cast(grpc.aio.UnaryStreamCall[bytes, bytes], call), fallback=lambda: plain(request))
        count, last = 0, None
        async for event in events:
            count += 1
            assert event.partial is not None  # the accumulator ran
            if pause:
                await asyncio.sleep(pause)
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
        message = await events.result()
        assert message.stop_reason == pp.StopReason.STOP, message.error_message
        return count, len(pp.text_of(message)), call

    try:
        server, started = cpu_seconds(served.pid), time.perf_counter()
        done = await asyncio.gather(*(one(channel) for channel in channels))
        seconds, server = time.perf_counter() - started, cpu_seconds(served.pid) - server
    finally:
        for channel in channels:
            await channel.close()
    return Consumed(
        seconds,
        sum(count for count, _, _ in done),
        sum(chars for _, chars, _ in done),
        sum(call.messages for _, _, call in done),
        sum(call.bytes for _, _, call in done),
        sorted(gaps),
        server,
    )


@dataclass(frozen=True)
class Coalescing:
    """Coalescing off and on, round by round: slow consumers of a model that streams at once, and
    consumers that keep up with a paced one."""

    streams: int
    events: int  # per stream, as the model plays them
    pause: float
    slow: dict[bool, list[Consumed]]
    keeping_up: dict[bool, list[Consumed]]


def coalescing(
    streams: int = 64, events: int = 500, pause: float = 0.01, rounds: int = 3, paced_events: int = 100
) -> Coalescing:
    """`rounds` alternating rounds of off then on: `streams` consumers taking `pause` per event of
    an `events`-event turn played at once; then one round of consumers with no work of their own
    against the same turn of `paced_events` events played at LIVE's rate."""
    slow: dict[bool, list[Consumed]] = {False: [], True: []}
    keeping_up: dict[bool, list[Consumed]] = {False: [], True: []}
    with our_server(text_turn(events)) as (process, target):
        served = Served(process.pid, target)
        asyncio.run(consume(served, 1, pause=0.0, coalesce=False))  # warm-up
        for _ in range(rounds):
            for coalesce in (False, True):
                slow[coalesce].append(asyncio.run(consume(served, streams, pause=pause, coalesce=coalesce)))
    with our_server(text_turn(paced_events), "--delay", f"{1 / LIVE.rate:.6f}") as (process, target):
        served = Served(process.pid, target)
        asyncio.run(consume(served, 1, pause=0.0, coalesce=False))  # warm-up
        for coalesce in (False, True):
            keeping_up[coalesce].append(asyncio.run(consume(served, streams, pause=0.0, coalesce=coalesce)))
    return Coalescing(streams, events, pause, slow, keeping_up)


def _median_span(values: Sequence[float], digits: int = 1) -> str:
    low, middle, high = (f"{value:,.{digits}f}" for value in (min(values), statistics.median(values), max(values)))
    return middle if low == high else f"{middle} ({low}–{high})"


def added_p99(fixed: dict[str, Fixed], name: str, reference: str) -> list[float]:
    """Round by round, `name`'s p99 extra delay minus `reference`'s (ms)."""
    return [mine - theirs for mine, theirs in zip(fixed[name].p99_ms, fixed[reference].p99_ms, strict=True)]


def report(steps: Sequence[Variant], fixed: dict[str, Fixed], searches: dict[str, versus.Search], streams: int) -> str:
    """Each variant's figures: medians over the rounds, in brackets the least and greatest (for
    capacity, the search's bracket: the most streams held and the fewest not held)."""
    reference = NAME.format(BATCHED)
    rows = [
        (
            "variant",
            f"server µs/event, {streams} streams",
            "p99 extra delay, ms",
            f"p99 added vs {BATCHED}",
            "events/message",
            "streams held",
        )
    ]
    for step in steps:
        done = fixed[step.name]
        search = searches.get(step.name)
        held = "" if search is None else f"{search.held} ({search.held}–{search.failed or '?'})"
        rows.append(
            (
                step.label,
                _median_span(done.server_us_per_event),
                _median_span(done.p99_ms),
                _median_span(added_p99(fixed, step.name, reference)),
                _median_span(done.events_per_message, 2),
                held,
            )
        )
    return columns(rows)


def coalescing_report(done: Coalescing) -> str:
    """Off and on, per stream: medians over the rounds, in brackets the least and greatest."""
    rows: list[tuple[str, ...]] = [("", "coalescing off", "coalescing on")]

    def row(name: str, runs: dict[bool, list[Consumed]], measure: Callable[[Consumed], float], digits: int) -> None:
        rows.append((name, *(_median_span([measure(run) for run in runs[on]], digits) for on in (False, True))))

    slow, paced = done.slow, done.keeping_up
    each = f"{done.streams} consumers at {done.pause * 1000:g} ms/event, {done.events}-event turn played at once"
    rows.append((each, "", ""))
    row("  time to finish, s", slow, lambda run: run.seconds, 2)
    row("  events delivered per stream", slow, lambda run: run.events / done.streams, 1)
    row("  messages per stream", slow, lambda run: run.messages / done.streams, 1)
    row("  bytes per stream", slow, lambda run: run.bytes / done.streams, 0)
    row("  characters/s, all streams", slow, lambda run: run.chars / run.seconds, 0)
    row("  gap p99, ms", slow, lambda run: percentile(run.gaps, 99), 1)
    row("  server µs per event delivered", slow, lambda run: run.server_us_per_event, 1)
    rows.append((f"{done.streams} consumers keeping up with a model at {LIVE.rate:g} events/s", "", ""))
    row("  events delivered per stream", paced, lambda run: run.events / done.streams, 1)
    row("  bytes per stream", paced, lambda run: run.bytes / done.streams, 0)
    row("  server µs per event", paced, lambda run: run.server_us_per_event, 1)
    return columns(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--windows", type=float, nargs="*", default=[5.0, 10.0, 20.0], help="flush windows, ms")
    parser.add_argument("--rate", type=float, default=LIVE.rate, help="events/s per stream (default: %(default)g)")
    parser.add_argument("--streams", type=int, default=FIXED_STREAMS, help="streams at the fixed load")
    parser.add_argument("--rounds", type=int, default=3, help="rounds at the fixed load and of coalescing")
    parser.add_argument("--budget", type=float, default=300.0, help="seconds for the capacity searches (0: none)")
    parser.add_argument("--no-coalescing", dest="coalescing", action="store_false", help="skip the coalescing study")
    args = parser.parse_args()

    started = time.perf_counter()
    live = replace(LIVE, rate=args.rate, events=round(LIVE.events * args.rate / LIVE.rate))  # streams as long
    steps = variants(args.windows)
    fixed = fixed_load(steps, live, args.streams, args.rounds)
    print(f"  fixed load done ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    searches = capacity(steps, args.budget, live) if args.budget > 0 else {}
    print(f"  capacity done ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    merged = None
    if args.coalescing:
        merged = coalescing(rounds=args.rounds)
        print(f"  coalescing done ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    info = machine()
    print("\n".join(f"{key}: {value}" for key, value in info.items()))
    print(f"{live.rate:g} events/s per stream, {live.events} events each")
    print(report(steps, fixed, searches, args.streams))
    if merged is not None:
        print(coalescing_report(merged))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    RESULTS.mkdir(parents=True, exist_ok=True)
    results = {
        "machine": info,
        "live": asdict(live),
        "fixed_streams": args.streams,
        "fixed": {name: asdict(done) for name, done in fixed.items()},
        "capacity": {
            name: {
                "held": search.held,
                "failed": search.failed,
                "interval_ms": search.interval * 1000,
                "probes": [asdict(probe) for probe in search.probes],
            }
            for name, search in searches.items()
        },
        "coalescing": {
            kind: {
                "on" if on else "off": [{**asdict(run), "gaps": len(run.gaps)} for run in runs[on]]
                for on in (False, True)
            }
            for kind, runs in (("slow", merged.slow), ("keeping_up", merged.keeping_up))
        }
        if merged is not None
        else None,
    }
    (RESULTS / f"batching-{stamp}.json").write_text(json.dumps(finite(results), indent=2) + "\n", encoding="utf-8")
    print(f"wrote bench/results/batching-{stamp}.json in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
