"""`--resume-bytes` bounds memory: the store's count of a kept stream is what the stream holds as
tracemalloc sees it, whatever its deltas, and nothing the store stops counting stays alive."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

import pytest

import pi_proto as pp
from pi_proto.models.scripted import ScriptedModel
from pi_proto.resume import MemoryStore
from pi_proto.resume.journal import Gone, Journal


async def recorded(store: MemoryStore, text: str, delta_size: int) -> Journal:
    """A stream of `text` in deltas of `delta_size` characters, kept by `store` to its end."""
    events = ScriptedModel([pp.assistant_message(text, timestamp=1)], delta_size=delta_size).stream(pp.AgentContext())
    journal = store.keep(events)
    await events.result()
    while not journal.done:
        await asyncio.sleep(0)
    return journal


@pytest.mark.parametrize(
    ("character", "delta_size", "deltas"),
    [
        ("x", 1, 40_000),
        ("x", 4, 20_000),
        ("中", 4, 20_000),
        ("x", 1024, 1_000),
        ("中", 1024, 1_000),
        ("🙂", 256, 1_000),
    ],
)
async def test_the_count_of_a_kept_stream_is_the_memory_it_holds(character: str, delta_size: int, deltas: int) -> None:
    store = MemoryStore(max_bytes=2**40)
    text = character * (delta_size * deltas)  # the script's own, made before measuring
    gc.collect()
    tracemalloc.start()
    try:
        journal = await recorded(store, text, delta_size)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert journal.last_seq > deltas
    assert 0.8 <= held / store.size <= 1.25, (held, store.size)


async def test_a_stream_dropped_over_the_bound_ends_its_readers_and_holds_nothing() -> None:
    store = MemoryStore(max_bytes=1_000_000)
    ended = await recorded(store, "x" * 6_000, 1)  # about 0.5 MB
    stalled = ended.reader(0)  # a client that stopped reading at once
    running = ScriptedModel([pp.assistant_message("y" * 8_500, timestamp=1)], delta_size=1)  # about 0.7 MB
    events = running.stream(pp.AgentContext())
    reader = store.keep(events).reader(0)  # read only at the end: nothing it holds can be dropped
    await events.result()
    with pytest.raises(Gone, match="dropped to stay within the server's byte bound"):
        await anext(stalled)  # ended where it was, told that the stream was dropped
    assert ended.held == 0
    assert store.size == reader.journal.size  # the other stream's alone
    assert len([event async for event in reader]) == reader.journal.last_seq


async def test_a_stream_that_ends_over_the_bound_still_reaches_the_client_reading_it() -> None:
    store = MemoryStore(max_bytes=100)  # less than any one event
    events = ScriptedModel([pp.assistant_message("z" * 50, timestamp=1)], delta_size=1).stream(pp.AgentContext())
    reader = store.keep(events).reader(0)
    read = [event async for event in reader]  # reading behind the model: every event waits for it
    assert [event.seq for event in read] == list(range(1, len(read) + 1))
    assert read[-1].done is not None
