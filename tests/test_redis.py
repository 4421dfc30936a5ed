"""Kept streams in Redis: resumed on another replica, cancelled from one, outliving one killed.

Each test starts Debian's redis-server on a free loopback port (`make pytest` installs it)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

import pi_proto as pp
from pi_proto.grpc.server import ModelServer
from pi_proto.models.scripted import ScriptedModel
from pi_proto.resume.redis import STOPPED, RedisStore, events_key
from pi_proto.stream.event_stream import ServedModel

from .helpers import (
    README_TURN,
    RecordingModel,
    Rpc,
    endless_script,
    next_event,
    read_events,
    readme_context,
    serve_process,
    stream_id_of,
    terminal_of,
)
from .proxy import CuttingProxy
from .redis_server import free_port, redis_server


@pytest.fixture
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@contextlib.asynccontextmanager
async def replica(url: str, delay: float = 0.0, model: ServedModel | None = None) -> AsyncIterator[ModelServer]:
    store = RedisStore(url)
    await store.start()
    try:
        model = ScriptedModel.readme(delta_size=2, delay=delay) if model is None else model
        async with ModelServer(model, streams=store) as server:
            yield server
    finally:
        await store.close_redis()


async def test_a_stream_one_replica_produces_resumes_on_another_as_it_goes_on(redis_url: str) -> None:
    async with replica(redis_url, delay=0.02) as first, replica(redis_url) as second:
        async with grpc.aio.insecure_channel(first.target) as channel:
            whole = [
                pp.decode(pp.ModelEvent, data)
                async for data in Rpc(channel).stream(pp.encode(pp.StreamRequest(context=readme_context())))
            ]
        async with CuttingProxy(first.target) as proxy, pp.ModelClient(proxy.target) as client:
            events = client.stream(readme_context())
            seen = []
            async for event in events:
                seen.append(event)
                if len(seen) == 5:
                    proxy.retarget(second.target)
                    proxy.cut()
            message = await events.result()
    assert events.failure is None
    assert [event.seq for event in seen] == list(range(1, len(whole) + 1))
    assert message == terminal_of(whole[-1]).message


async def test_cancel_on_one_replica_stops_the_stream_another_produces(redis_url: str) -> None:
    async with (
        replica(redis_url, model=RecordingModel(README_TURN, hold_after=1)) as first,  # in flight until cancelled
        replica(redis_url) as second,
        grpc.aio.insecure_channel(first.target) as one,
        grpc.aio.insecure_channel(second.target) as other,
    ):
        call = Rpc(one).stream(pp.encode(pp.StreamRequest(context=readme_context(), background=True)))
        stream_id = stream_id_of(await next_event(call))
        answer = await Rpc(other).cancel(pp.encode(pp.CancelRequest(stream_id=stream_id)))
        rest = await read_events(call)
        again = await Rpc(other).cancel(pp.encode(pp.CancelRequest(stream_id=stream_id)))
    assert pp.decode(pp.CancelResponse, answer).cancelled
    assert not pp.decode(pp.CancelResponse, again).cancelled
    assert rest[-1].error is not None
    assert rest[-1].error.reason == pp.StopReason.ABORTED


async def test_an_ended_stream_stays_in_redis_for_the_retention_time(redis_url: str) -> None:
    async with replica(redis_url) as server, grpc.aio.insecure_channel(server.target) as channel:
        first = [data async for data in Rpc(channel).stream(pp.encode(pp.StreamRequest(context=readme_context())))]
        stream_id = stream_id_of(pp.decode(pp.ModelEvent, first[0]))
        assert server.streams is not None
        ttl = await server.streams.redis.pttl(events_key(stream_id))  # type: ignore[attr-defined]
        entries = await server.streams.redis.xlen(events_key(stream_id))  # type: ignore[attr-defined]
    assert 0 < ttl <= 600_000
    assert entries == len(first)


async def test_a_replica_killed_mid_stream_leaves_its_stream_resumable_from_another(
    redis_url: str, tmp_path: Path
) -> None:
    # A turn the doomed replica is still playing when it is killed, however slow the machine.
    flags = ("--redis", redis_url, "--script", str(endless_script(tmp_path)), "--delay", "0.1", "--delta-size", "1")
    with serve_process(*flags) as (doomed, doomed_target), serve_process(*flags) as (_, survivor_target):
        async with CuttingProxy(doomed_target) as proxy, pp.ModelClient(proxy.target) as client:
            events = client.stream(readme_context())
            seen = []
            async for event in events:
                seen.append(event)
                if len(seen) == 6:
                    doomed.send_signal(signal.SIGKILL)
                    doomed.wait()
                    proxy.retarget(survivor_target)
                    proxy.cut()
            message = await events.result()
    assert events.failure is None  # the stream ended in-band: its events and digest checked
    numbers = [event.seq for event in seen]
    assert numbers == list(range(1, len(seen) + 1))
    assert message.stop_reason == pp.StopReason.ERROR
    assert message.error_message == STOPPED
    assert pp.text_of(message)  # what was published before the kill is kept


async def test_serve_refuses_a_redis_it_cannot_reach() -> None:
    port = free_port()
    done = subprocess.run(
        [sys.executable, "-m", "pi_proto.cli", "serve", "--port", "0", "--redis", f"redis://127.0.0.1:{port}/0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"cannot reach Redis at redis://127.0.0.1:{port}/0" in done.stderr
