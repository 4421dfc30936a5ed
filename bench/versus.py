"""Protocols side by side: the same workload against each one's server, in alternating rounds.

A round runs every protocol once, one after the other (ours over gRPC, SSE and Connect, the SSE
peer, grpc.aio, then ours again, ...), so a slow spell of this shared machine hits all of them
rather than one; bench.py reports the median and the least and greatest over the rounds. The
servers stay up for all the rounds of a workload, each in a process of its own, and only one
protocol streams at a time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field

import grpc

from .protocols import Client, Protocol, Served, Workload, cpu_seconds


@dataclass(frozen=True)
class Run:
    """One protocol's share of a round: `streams` concurrent calls, each on a client of its own."""

    events: int  # received, over all the streams
    seconds: float  # wall time from the first call to the last event
    server_cpu: float  # seconds of the server process's CPU over the run
    client_cpu: float  # seconds of this (the client) process's CPU over the run

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds

    @property
    def server_us_per_event(self) -> float:
        return self.server_cpu / self.events * 1e6

    @property
    def client_us_per_event(self) -> float:
        return self.client_cpu / self.events * 1e6


async def run_streams(client: Client[object], served: Served, streams: int, events: int) -> Run:
    """`streams` users, each with its client opened before the clock starts, read one call at once."""
    async with AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(client.connect(served.target)) for _ in range(streams)]
        server, own, started = cpu_seconds(served.pid), time.process_time(), time.perf_counter()
        counts = await asyncio.gather(*(client.read(session, None) for session in sessions))
        seconds = time.perf_counter() - started
        run = Run(sum(counts), seconds, cpu_seconds(served.pid) - server, time.process_time() - own)
    if counts != [events] * streams:
        raise AssertionError(f"expected {events} events per stream, got {sorted(set(counts))}")
    return run


def rounds(protocols: Sequence[Protocol], workload: Workload, streams: int, count: int) -> dict[str, list[Run]]:
    """`count` alternating rounds of `streams` concurrent calls per protocol, after one warm-up call
    each (first-call costs: imports, connection setup, caches)."""
    runs: dict[str, list[Run]] = {protocol.name: [] for protocol in protocols}
    with ExitStack() as stack:
        served = [stack.enter_context(protocol.serve(workload)) for protocol in protocols]
        for protocol, server in zip(protocols, served, strict=True):
            asyncio.run(run_streams(protocol.client, server, 1, workload.events))
        for _ in range(count):
            for protocol, server in zip(protocols, served, strict=True):
                runs[protocol.name].append(asyncio.run(run_streams(protocol.client, server, streams, workload.events)))
    return runs


def wire_bytes(protocols: Sequence[Protocol], workload: Workload) -> dict[str, int]:
    """The bytes of one call, as each protocol counts them."""
    counted: dict[str, int] = {}
    for protocol in protocols:
        with protocol.serve(workload) as served:
            counted[protocol.name] = asyncio.run(protocol.wire_bytes(served.target))
    return counted


# --- live capacity ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Live:
    """Streams at `rate` events/s each, started evenly over `ramp` seconds, each `events` long."""

    rate: float = 50.0
    events: int = 100
    ramp: float = 0.5
    limit_ms: float = 100.0  # the p99 extra delay a server must stay under

    @property
    def seconds(self) -> float:
        return self.ramp + self.events / self.rate


@dataclass(frozen=True)
class Call:
    started: float  # time.perf_counter() when the call began
    arrivals: list[float]  # of each event


@dataclass(frozen=True)
class Probe:
    streams: int
    p99_ms: float  # of every event's extra delay; infinite when a stream failed or the probe ran out of time
    server_cpu: float  # share of one core the server process used over the probe
    client_cpu: float  # share of one core the probing (this) process used
    server_us_per_event: float  # the server's CPU over the probe ÷ the events it sent
    client_us_per_event: float

    def held(self, live: Live) -> bool:
        return self.p99_ms < live.limit_ms


@dataclass
class Search:
    """Doubling, then bisecting, the number of streams one server process holds. A probe that
    fails is run once more before it counts: a slow spell of this shared machine should not end a
    search, and a server that cannot hold the load fails both."""

    protocol: Protocol
    served: Served
    live: Live
    probes: list[Probe] = field(default_factory=list)
    held: int = 0  # the most streams held so far
    failed: int | None = None  # the fewest streams not held so far (twice)
    next: int = 64
    interval: float = 0.0  # seconds between events the server keeps when idle (see `pace`)

    @property
    def done(self) -> bool:
        return self.failed is not None and (self.failed - self.held) <= max(1, self.held // 8)

    def record(self, probe: Probe) -> None:
        self.probes.append(probe)
        if probe.held(self.live):
            self.held = max(self.held, probe.streams)
        elif sum(1 for done in self.probes if done.streams == probe.streams) == 1:
            return  # run it once more
        else:
            self.failed = probe.streams if self.failed is None else min(self.failed, probe.streams)
        self.next = self.held * 2 if self.failed is None else (self.held + self.failed) // 2


async def _paced(client: Client[object], served: Served, streams: int, live: Live) -> tuple[list[Call], Run]:
    """`streams` paced calls, started evenly over the ramp, each on a client of its own: each call's
    start and arrivals, and the run's totals. Raises TimeoutError past twice the time they should
    take."""
    calls: list[Call] = []

    async def one(index: int, session: object) -> None:
        await asyncio.sleep(index * live.ramp / streams)
        arrivals: list[float] = []
        started = time.perf_counter()
        count = await client.read(session, arrivals)
        if count != live.events:
            raise AssertionError(f"a stream got {count} of {live.events} events")
        calls.append(Call(started, arrivals))

    async with AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(client.connect(served.target)) for _ in range(streams)]
        server, own, started = cpu_seconds(served.pid), time.process_time(), time.perf_counter()
        work = asyncio.gather(*(one(index, session) for index, session in enumerate(sessions)))
        await asyncio.wait_for(work, timeout=live.seconds * 2 + 2)
        seconds = time.perf_counter() - started
        return calls, Run(streams * live.events, seconds, cpu_seconds(served.pid) - server, time.process_time() - own)


async def pace(client: Client[object], served: Served, live: Live) -> float:
    """The interval a server paced with a wait of 1 / rate before each event keeps when idle: the
    wait, plus what the server does between two waits (timer overshoot, building the event), which
    adds up over a stream. The least of 4 light streams: this machine's hiccups only add."""
    calls, _ = await _paced(client, served, 4, live)
    return min((call.arrivals[-1] - call.arrivals[0]) / (len(call.arrivals) - 1) for call in calls)


async def probe(client: Client[object], served: Served, streams: int, live: Live, interval: float) -> Probe:
    """The p99 of every event's extra delay: its arrival minus its schedule, which for event i is
    the call's start plus (i + 1) x the interval the same server keeps when idle."""
    try:
        calls, run = await _paced(client, served, streams, live)
    except (TimeoutError, AssertionError, OSError, grpc.aio.AioRpcError):
        return Probe(streams, float("inf"), *[float("nan")] * 4)
    late = sorted(
        arrival - call.started - (i + 1) * interval for call in calls for i, arrival in enumerate(call.arrivals)
    )
    p99 = late[min(len(late) - 1, len(late) * 99 // 100)] * 1000
    shares = run.server_cpu / run.seconds, run.client_cpu / run.seconds
    return Probe(streams, p99, *shares, run.server_us_per_event, run.client_us_per_event)


def capacity(
    protocols: Sequence[Protocol], live: Live, budget: float, paced_like: Mapping[str, str] | None = None
) -> list[Search]:
    """Each protocol's search, one probe per protocol in turn, until each is bracketed within an
    eighth or `budget` seconds have passed. `paced_like` maps a protocol's name to another's whose
    interval (see `pace`) its arrivals are judged against: a server that holds events back on
    purpose (a flush window) keeps its model's pace, but its arrivals would make `pace` read a
    different one."""
    started = time.perf_counter()
    with ExitStack() as stack:
        workload = Workload(live.events, 1 / live.rate)
        searches = [Search(protocol, stack.enter_context(protocol.serve(workload)), live) for protocol in protocols]
        for search in searches:  # also the warm-up: first calls, connections, caches
            search.interval = asyncio.run(pace(search.protocol.probe, search.served, live))
        intervals = {search.protocol.name: search.interval for search in searches}
        for search in searches:
            if paced_like and search.protocol.name in paced_like:
                search.interval = intervals[paced_like[search.protocol.name]]
        while time.perf_counter() - started < budget:
            pending = [search for search in searches if not search.done]
            if not pending:
                break
            for search in pending:
                client, served = search.protocol.probe, search.served
                search.record(asyncio.run(probe(client, served, search.next, live, search.interval)))
    return searches
