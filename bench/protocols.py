"""A protocol under comparison: how to start its server, and how a client reads one stream.

bench/versus.py measures any list of these side by side on the same workload, so comparing another
protocol of ours (or another peer) takes one more Protocol object. This module holds our gRPC
server (`pi-proto serve` and ModelClient) and plain grpc.aio (bench/floor.py), the transport
reference; bench/web.py holds our HTTP endpoints (SSE and Connect, `pi-proto serve --http-port`);
bench/sse.py holds the peer users would pick instead of us.

Every stream is one user: a client (and so a connection) of its own, created before the clock
starts, as an application holds one for all its calls; the connection opens with the first call.
gRPC would otherwise put every channel of a process on one shared connection, which no two real
users share.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import grpc

import pi_proto as pp
from pi_proto._gen.pb2.pi.ai.v1 import service_pb2
from pi_proto.grpc.methods import BATCHED_METHOD, STREAM_METHOD

from .workloads import our_server, serving, text_turn

Session = TypeVar("Session")
CONTEXT = pp.AgentContext(messages=[pp.agent_message(pp.user_message("go", timestamp=1))])
REQUEST = pp.encode(pp.StreamRequest(context=CONTEXT))
GRPC_PREFIX = 5  # gRPC's framing: a compressed flag and a 4-byte length before every message
OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)  # a channel that shares no connection


@dataclass(frozen=True)
class Workload:
    """What every call to a server streams: `events` events (start, text start, deltas, text end,
    done: bench/workloads.py text_turn), `delay` seconds before each when paced."""

    events: int
    delay: float = 0.0


@dataclass(frozen=True)
class Served:
    pid: int  # the server process, whose CPU time /proc/<pid>/stat gives
    target: str  # HOST:PORT


@dataclass(frozen=True)
class Client(Generic[Session]):
    """`connect` opens what one user holds (a client object, a channel); `read` runs one call on
    it to the end, checks what arrived, returns the number of events, and appends each event's
    arrival time (time.perf_counter) to `arrivals` when given a list."""

    connect: Callable[[str], AbstractAsyncContextManager[Session]]
    read: Callable[[Session, list[float] | None], Awaitable[int]]


@dataclass(frozen=True)
class Protocol:
    """One contender: its server, in a process of its own, and two clients.

    `client` is what users run: it decodes every event. `probe` is the lightest reader that still
    sees each event arrive; the capacity search uses it, so that it finds the server's limit rather
    than that of a client process sharing the server's machine (as far as it can: a grpc.aio
    reader costs about what a grpc.aio server does per event). `wire_bytes` reads one call and
    returns the bytes of it that `counted` says it counts.
    """

    name: str
    serve: Callable[[Workload], AbstractContextManager[Served]]
    client: Client[Any]
    probe: Client[Any]
    wire_bytes: Callable[[str], Coroutine[Any, Any, int]]
    counted: str


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, all its threads, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- gRPC, either server --------------------------------------------------------------------------------


@asynccontextmanager
async def _channel(target: str) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(target, options=OWN_CONNECTION) as channel:
        yield channel


@dataclass
class Tally:
    """What the readers of one probe received, over all its calls."""

    messages: int = 0
    events: int = 0


def _raw_read(
    method: str, events: Callable[[bytes], int], tally: Tally | None = None
) -> Callable[[grpc.aio.Channel, list[float] | None], Awaitable[int]]:
    """A reader of `method` that decodes nothing: it counts `events(message)` per message (and
    adds the messages and events to `tally` when given one)."""

    async def read(channel: grpc.aio.Channel, arrivals: list[float] | None) -> int:
        call: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(method)
        count = messages = 0
        async for message in call(REQUEST):
            arrived = events(message)
            count += arrived
            messages += 1
            if arrivals is not None:
                arrivals.extend([time.perf_counter()] * arrived)
        if tally is not None:
            tally.messages += messages
            tally.events += count
        return count

    return read


async def _raw_bytes(target: str, method: str) -> int:
    """The bytes of one call's messages as they arrive, each with gRPC's 5-byte prefix."""
    async with _channel(target) as channel:
        call: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(method)
        return sum([len(message) + GRPC_PREFIX async for message in call(REQUEST)])


def batch_events(batch: bytes) -> int:
    """The events in a StreamBatchedResponse, read through StreamBatchedView: none is decoded."""
    return len(service_pb2.StreamBatchedView.FromString(batch).events)


# --- ours: `pi-proto serve` and ModelClient ------------------------------------------------------------


def _our_serve(*extra: str) -> Callable[[Workload], AbstractContextManager[Served]]:
    """`pi-proto serve` playing the workload, with `extra` flags."""

    @contextmanager
    def serve(workload: Workload) -> Iterator[Served]:
        flags = ["--max-streams", "100000", *extra]  # the capacity search goes past the default of 256
        if workload.delay:
            flags += ["--delay", f"{workload.delay:.6f}"]
        with our_server(text_turn(workload.events), *flags) as (process, target):
            yield Served(process.pid, target)

    return serve


def _our_connect(batched: bool) -> Callable[[str], AbstractAsyncContextManager[pp.ModelClient]]:
    @asynccontextmanager
    async def connect(target: str) -> AsyncIterator[pp.ModelClient]:
        async with pp.ModelClient(target, channel_options=OWN_CONNECTION, batched=batched) as client:
            yield client

    return connect


async def _our_read(client: pp.ModelClient, arrivals: list[float] | None) -> int:
    count = 0
    events = client.stream(CONTEXT)
    async for event in events:
        if arrivals is not None:
            arrivals.append(time.perf_counter())
        count += 1
        assert event.partial is not None  # the accumulator ran
    message = await events.result()
    assert message.stop_reason == pp.StopReason.STOP, message.error_message
    return count


def ours_grpc(
    name: str = "pi-proto gRPC", *, batched: bool = True, flush_ms: float = 0.0, tally: Tally | None = None
) -> Protocol:
    """Our gRPC server and ModelClient on StreamBatched (the events waiting together in one
    message; with `flush_ms`, `serve --flush-ms`: a batch waits that long for more), or on Stream
    (one event per message) when not `batched`; the probe adds what it reads to `tally`."""
    method = BATCHED_METHOD if batched else STREAM_METHOD
    flags = ["--flush-ms", f"{flush_ms:g}"] if flush_ms else []

    async def wire_bytes(target: str) -> int:
        return await _raw_bytes(target, method)  # the method ModelClient calls

    return Protocol(
        name=name,
        serve=_our_serve(*flags),
        client=Client(_our_connect(batched), _our_read),
        probe=Client(_channel, _raw_read(method, batch_events if batched else _one, tally)),
        wire_bytes=wire_bytes,
        counted=f"{'StreamBatched' if batched else 'Stream'} messages + 5 B prefix each",
    )


def _one(_: bytes) -> int:
    return 1


OURS = ours_grpc()


# --- plain grpc.aio: pre-serialized events, a client that only counts them ------------------------------


@contextmanager
def _floor_serve(workload: Workload) -> Iterator[Served]:
    command = ["-m", "bench.floor", "--events", str(workload.events), "--delay", f"{workload.delay:.6f}"]
    with serving(command) as (process, target):
        yield Served(process.pid, target)


async def _floor_bytes(target: str) -> int:
    return await _raw_bytes(target, STREAM_METHOD)


_FLOOR_CLIENT = Client(_channel, _raw_read(STREAM_METHOD, _one))

GRPC_AIO = Protocol(
    name="grpc.aio",
    serve=_floor_serve,
    client=_FLOOR_CLIENT,  # the floor's client decodes nothing either
    probe=_FLOOR_CLIENT,
    wire_bytes=_floor_bytes,
    counted="messages + 5 B prefix each",
)
