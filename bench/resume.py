"""Section 15 of `make bench`: what keeping streams for Resume costs, and what it buys.

- resume latency: a new connection's Resume to its first replayed event, against a new
  connection's Stream to its first event;
- 1,000 forced disconnects (20 concurrent streams through proxies that cut every connection
  every 100 events): events lost or repeated at the consumer, which must be 0;
- one stream's events/s with streams kept in Redis ÷ kept in memory;
- the bytes and server CPU per event of numbered, digested streams ÷ `--no-resume`.

Servers are `pi-proto serve` processes; Redis is Debian's redis-server, started here.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import grpc

import pi_proto as pp
from pi_proto.grpc.methods import RESUME_METHOD, STREAM_METHOD
from tests.proxy import CuttingProxy, read_cutting
from tests.redis_server import redis_server

from .protocols import cpu_seconds
from .workloads import our_server, text_turn

CONTEXT = pp.AgentContext(messages=[pp.agent_message(pp.user_message("go", timestamp=1))])
REQUEST = pp.encode(pp.StreamRequest(context=CONTEXT))


async def first_event_seconds(target: str, method: str, request: bytes) -> float:
    """From opening a connection to the first message of `method`'s call on it."""
    started = time.perf_counter()
    async with grpc.aio.insecure_channel(target) as channel:
        call: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(method)
        stream = call(request)
        await stream.read()
        elapsed = time.perf_counter() - started
        stream.cancel()
    return elapsed


async def resume_latency(target: str, samples: int) -> tuple[list[float], list[float]]:
    """Seconds to the first event: a Resume after event 3 of a running stream, and a fresh Stream."""
    resumed, fresh = [], []
    async with grpc.aio.insecure_channel(target) as channel:
        stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(STREAM_METHOD)
        for _ in range(samples):
            call = stream(REQUEST)
            events = [pp.decode(pp.ModelEvent, await call.read()) for _ in range(3)]  # type: ignore[arg-type]
            call.cancel()
            assert events[0].start is not None
            asked = pp.encode(pp.ResumeRequest(stream_id=events[0].start.stream_id, after_seq=3))
            resumed.append(await first_event_seconds(target, RESUME_METHOD, asked))
            fresh.append(await first_event_seconds(target, STREAM_METHOD, REQUEST))
    return sorted(resumed), sorted(fresh)


async def cut_stream(target: str, every: int) -> tuple[int, int, int, bool]:
    """One stream through its own proxy, every connection cut after each `every` events: the cuts,
    events lost and events repeated at the consumer, and whether it ended as the model did."""
    async with CuttingProxy(target) as proxy, pp.ModelClient(proxy.target) as client:
        events = client.stream(CONTEXT)
        seen, message = await read_cutting(events, proxy, lambda count: count % every == 0)
    numbers = [event.seq for event in seen]
    cuts = len(seen) // every
    repeated = len(numbers) - len(set(numbers))
    lost = max(numbers) - len(set(numbers))
    return cuts, lost, repeated, events.failure is None and message.stop_reason == pp.StopReason.STOP


async def forced_disconnects(target: str, streams: int, every: int) -> tuple[int, int, int, int]:
    """`streams` cut streams at once: cuts, events lost, events repeated, streams that failed."""
    results = await asyncio.gather(*(cut_stream(target, every) for _ in range(streams)))
    return (
        sum(cuts for cuts, _, _, _ in results),
        sum(lost for _, lost, _, _ in results),
        sum(repeated for _, _, repeated, _ in results),
        sum(not ended for _, _, _, ended in results),
    )


async def events_per_second(target: str) -> float:
    async with pp.ModelClient(target) as client:
        started, count = time.perf_counter(), 0
        events = client.stream(CONTEXT)
        async for _ in events:
            count += 1
        assert (await events.result()).stop_reason == pp.StopReason.STOP
        return count / (time.perf_counter() - started)


async def wire_bytes_and_cpu(target: str, pid: int, runs: int) -> tuple[int, float, int]:
    """A stream's bytes on the wire (Stream, one event per message), and the server's CPU seconds
    over `runs` of them, with their event count."""
    async with grpc.aio.insecure_channel(target) as channel:
        call: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(STREAM_METHOD)
        size = sum([len(message) async for message in call(REQUEST)])
        before, events = cpu_seconds(pid), 0
        for _ in range(runs):
            events += len([message async for message in call(REQUEST)])
        return size, cpu_seconds(pid) - before, events


@dataclass
class Measured:
    """Section 15's numbers; bench.py makes its rows."""

    resumed: list[float]  # seconds, sorted
    fresh: list[float]
    cuts: int
    lost: int
    repeated: int
    failed: int  # streams that did not end as the model did
    redis: float  # events/s
    memory: float
    kept: tuple[int, float, int]  # bytes of one stream, server CPU seconds, events of the CPU runs
    plain: tuple[int, float, int]
    events: int  # of one stream


def measure(samples: int = 200, streams: int = 20, cuts_per_stream: int = 50, events: int = 10_004) -> Measured:
    every = 100
    with our_server(text_turn(2_000), "--delay", "0.001") as (_, target):
        resumed, fresh = asyncio.run(resume_latency(target, samples))
    with our_server(text_turn(every * cuts_per_stream + 4), "--delay", "0.0002") as (_, target):
        cuts, lost, repeated, failed = asyncio.run(forced_disconnects(target, streams, every))
    with redis_server() as url:
        with our_server(text_turn(events), "--redis", url) as (_, target):
            redis = max(asyncio.run(events_per_second(target)) for _ in range(3))
        with our_server(text_turn(events)) as (_, target):
            memory = max(asyncio.run(events_per_second(target)) for _ in range(3))
    costs = []
    for flags in ((), ("--no-resume",)):
        with our_server(text_turn(events), *flags) as (process, target):
            costs.append(asyncio.run(wire_bytes_and_cpu(target, process.pid, 5)))
    return Measured(resumed, fresh, cuts, lost, repeated, failed, redis, memory, costs[0], costs[1], events)
