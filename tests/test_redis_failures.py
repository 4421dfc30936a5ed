"""`pi-proto serve --redis` when Redis fails or holds what no replica wrote: every stream ends
with an ERROR event saying so (or a call is refused with a clear status), never a hang, never
Redis's address or password, never a repeated event.

Each test starts Debian's redis-server on a free loopback port and `pi-proto serve` processes as
users run them. No test measures time: a call that hangs meets its gRPC deadline (CALL_SECONDS),
and pytest's own limit guards the rest."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
import redis

import pi_proto as pp
from pi_proto.resume.redis import events_key, owner_key

from .helpers import Rpc, endless_script, next_event, readme_context, serve_process, stream_id_of
from .redis_server import free_port, redis_process

LOST = "the server lost its Redis"  # how every stream that lost Redis ends
CALL_SECONDS = 120.0  # a guard against a hang, never a measure
MOST_EVENTS = 1000  # more than any stream here holds: more is events repeated


@pytest.fixture
def redis_up() -> Iterator[tuple[subprocess.Popen[str], str]]:
    with redis_process() as (process, url):
        yield process, url


@contextlib.asynccontextmanager
async def rpc(target: str) -> AsyncIterator[Rpc]:
    async with grpc.aio.insecure_channel(target) as channel:
        yield Rpc(channel)


def stream(service: Rpc) -> grpc.aio.UnaryStreamCall[bytes, bytes]:
    return service.stream(pp.encode(pp.StreamRequest(context=readme_context())), timeout=CALL_SECONDS)


def resume(service: Rpc, stream_id: str, after_seq: int = 0) -> grpc.aio.UnaryStreamCall[bytes, bytes]:
    return service.resume(pp.encode(pp.ResumeRequest(stream_id=stream_id, after_seq=after_seq)), timeout=CALL_SECONDS)


async def rest_of(call: grpc.aio.UnaryStreamCall[bytes, bytes]) -> list[pp.ModelEvent]:
    """The rest of a call's events, up to MOST_EVENTS."""
    events = []
    while isinstance(data := await call.read(), bytes):
        events.append(pp.decode(pp.ModelEvent, data))
        assert len(events) <= MOST_EVENTS, f"more than {MOST_EVENTS} events: {[event.seq for event in events[-5:]]}"
    return events


def checked(events: list[pp.ModelEvent]) -> pp.AssistantMessage:
    """The message a whole stream's events build (each gets its `partial`), each numbered the
    next, its terminal event's blocks and digest checked as clients check them; the stream must
    end with that event."""
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    accumulator = pp.Accumulator()
    for event in events:
        accumulator.apply(event)  # raises on a broken rule: a wrong digest, blocks that differ
    last = events[-1]
    assert last.done is not None or last.error is not None, f"no terminal event: the last is {last}"
    return accumulator.partial


def says_nothing_of_redis(text: str, url: str) -> None:
    """`text` shows a client neither Redis's address nor its password."""
    host_port = url.removeprefix("redis://").split("/")[0].rpartition("@")[2]
    for secret in (host_port, host_port.partition(":")[2], "Error ", "Timeout "):
        assert secret not in text, f"{secret!r} in {text!r}"


def endless_flags(url: str, folder: Path) -> tuple[str, ...]:
    # A turn still streaming when Redis fails, however slow the machine.
    return ("--redis", url, "--script", str(endless_script(folder)), "--delay", "0.1", "--delta-size", "1")


async def fail_mid_stream(redis_server: subprocess.Popen[str], url: str, folder: Path, fail: signal.Signals) -> None:
    """A stream in flight on one replica and resumed on another when Redis gets `fail`: both
    calls end with an ERROR event saying the server lost its Redis; then a new stream ends so
    too, and a new Resume is refused with UNAVAILABLE."""
    flags = endless_flags(url, folder)
    with serve_process(*flags) as (_, producing), serve_process(*flags) as (_, reading):
        async with rpc(producing) as producer, rpc(reading) as reader:
            call = stream(producer)
            first = [await next_event(call) for _ in range(3)]
            stream_id = stream_id_of(first[0])
            resumed = resume(reader, stream_id, after_seq=3)
            followed = [await next_event(resumed)]  # the other replica follows it from Redis
            redis_server.send_signal(fail)
            produced = first + await rest_of(call)
            followed += await rest_of(resumed)
            fresh = await rest_of(stream(producer))
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await rest_of(resume(reader, stream_id))
    for events in (produced, first + followed, fresh):
        message = checked(events)
        assert message.stop_reason == pp.StopReason.ERROR
        said = message.error_message or ""
        assert said.startswith(LOST), said
        says_nothing_of_redis(said, url)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, refused.value
    assert LOST in (refused.value.details() or "")
    says_nothing_of_redis(refused.value.details() or "", url)


async def test_redis_killed_mid_stream_ends_every_stream_with_an_error_event(
    redis_up: tuple[subprocess.Popen[str], str], tmp_path: Path
) -> None:
    process, url = redis_up
    await fail_mid_stream(process, url, tmp_path, signal.SIGKILL)


async def test_redis_paused_mid_stream_ends_every_stream_with_an_error_event(
    redis_up: tuple[subprocess.Popen[str], str], tmp_path: Path
) -> None:
    process, url = redis_up
    try:
        await fail_mid_stream(process, url, tmp_path, signal.SIGSTOP)
    finally:
        process.send_signal(signal.SIGCONT)


def test_serve_refuses_an_unreachable_redis_without_showing_its_password() -> None:
    port = free_port()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pi_proto.cli",
            "serve",
            "--port",
            "0",
            "--redis",
            f"redis://pi:s3cret@127.0.0.1:{port}/0",
        ],
        capture_output=True,
        text=True,
        timeout=CALL_SECONDS,
    )
    assert done.returncode == 2
    assert f"cannot reach Redis at redis://pi:***@127.0.0.1:{port}/0" in done.stderr, done.stderr
    assert "s3cret" not in done.stderr + done.stdout


# --- what Redis holds, checked --------------------------------------------------------------------


async def entries_of_a_stream(url: str, target: str) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """The Redis entries of one README stream `target` served to its end."""
    async with rpc(target) as service:
        events = await rest_of(stream(service))
    with redis.Redis.from_url(url) as client:
        entries: list[tuple[bytes, dict[bytes, bytes]]] = client.xrange(events_key(stream_id_of(events[0])))
    assert len(entries) == len(events) > 5
    return entries


# Each corruption of a running stream whose producer is gone (no owner key): the entries written,
# as (entry id, number of the stream's entry whose fields it holds, or fields), and the entry id
# the error names. Events 1 to 3 are sound.
CORRUPTIONS: dict[str, tuple[list[tuple[str, int | dict[bytes, bytes]]], str]] = {
    "number not its id": ([("1-0", 1), ("2-0", 2), ("3-0", 3), ("4-0", 3), ("5-0", 5)], "4-0"),
    "no event field": ([("1-0", 1), ("2-0", 2), ("3-0", 3), ("4-0", {b"x": b"1"}), ("5-0", 5)], "4-0"),
    "undecodable": ([("1-0", 1), ("2-0", 2), ("3-0", 3), ("4-0", {b"e": b"\xff\xff\xff"}), ("5-0", 5)], "4-0"),
    "gap": ([("1-0", 1), ("2-0", 2), ("3-0", 3), ("5-0", 5)], "5-0"),
    "id not an event's": ([("1-0", 1), ("2-0", 2), ("3-0", 3), ("3-1", 4)], "3-1"),
}


def write_stream(
    url: str,
    stream_id: str,
    entries: list[tuple[bytes, dict[bytes, bytes]]],
    written: list[tuple[str, int | dict[bytes, bytes]]],
) -> None:
    with redis.Redis.from_url(url) as client:
        for entry_id, held in written:
            fields = entries[held - 1][1] if isinstance(held, int) else held
            client.xadd(events_key(stream_id), fields, id=entry_id)


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
async def test_a_corrupted_entry_ends_the_resume_with_an_error_event_naming_it(
    redis_up: tuple[subprocess.Popen[str], str], corruption: str
) -> None:
    _, url = redis_up
    written, named = CORRUPTIONS[corruption]
    stream_id = "corrupted-" + corruption.replace(" ", "-").replace("'", "")
    with serve_process("--redis", url) as (_, target):
        entries = await entries_of_a_stream(url, target)
        write_stream(url, stream_id, entries, written)
        async with rpc(target) as service:
            events = await rest_of(resume(service, stream_id))
    assert [pp.encode(event) for event in events[:3]] == [fields[b"e"] for _, fields in entries[:3]]
    message = checked(events)  # events 1 to 3, then the error event, numbered 4
    assert len(events) == 4
    said = message.error_message or ""
    assert message.stop_reason == pp.StopReason.ERROR
    assert stream_id in said, said
    assert f"entry {named}" in said, said


async def test_a_corrupted_entry_the_client_already_has_refuses_the_resume_with_data_loss(
    redis_up: tuple[subprocess.Popen[str], str],
) -> None:
    _, url = redis_up
    with serve_process("--redis", url) as (_, target):
        entries = await entries_of_a_stream(url, target)
        write_stream(url, "early", entries, [("1-0", 1), ("2-0", 1), ("3-0", 3), ("4-0", 4), ("5-0", 5)])
        async with rpc(target) as service:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await rest_of(resume(service, "early", after_seq=3))
    assert refused.value.code() == grpc.StatusCode.DATA_LOSS, refused.value
    assert "stream early" in (refused.value.details() or "")
    assert "entry 2-0" in (refused.value.details() or "")


async def test_a_resume_waits_for_an_event_no_longer_than_the_stream_timeout(
    redis_up: tuple[subprocess.Popen[str], str],
) -> None:
    # A producer that holds its owner key but publishes nothing more: the reader stops waiting
    # once no stream could still be running.
    _, url = redis_up
    with serve_process("--redis", url) as (_, producing):
        entries = await entries_of_a_stream(url, producing)
    write_stream(url, "stalled", entries, [("1-0", 1), ("2-0", 2), ("3-0", 3)])
    with redis.Redis.from_url(url) as client:
        client.set(owner_key("stalled"), b"1")  # no expiry: the producer seems alive for ever
    with serve_process("--redis", url, "--stream-timeout", "2") as (_, target):
        async with rpc(target) as service:
            events = await rest_of(resume(service, "stalled"))
    message = checked(events)
    assert len(events) == 4
    said = message.error_message or ""
    assert message.stop_reason == pp.StopReason.ERROR
    assert "stream stalled" in said, said
    assert "event 4" in said, said
    assert "2 s" in said, said
