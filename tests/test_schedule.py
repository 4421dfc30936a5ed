"""AssistantMessageEventStream.play(): events pushed on a schedule from the start, by callbacks
instead of a task, with a driven stream's contract (limits, failures, cancel → ABORTED)."""

from __future__ import annotations

import asyncio
import gc
import math
import time
import weakref
from collections.abc import Iterator

import pytest

import pi_proto as pp
from pi_proto.ir.events import events_of
from pi_proto.models.scripted import ScriptedModel
from pi_proto.stream.event_stream import AssistantMessageEventStream
from pi_proto.stream.schedule import Player, pacer

from .helpers import readme_context

pytestmark = pytest.mark.timeout(30)
TURN = pp.assistant_message("abcdefghij", timestamp=1)  # start, text start, 10 deltas, end, done


async def arrivals(stream: AssistantMessageEventStream) -> tuple[list[pp.ModelEvent], list[float]]:
    loop = asyncio.get_running_loop()
    events, times = [], []
    async for event in stream:
        events.append(event)
        times.append(loop.time())
    return events, times


async def test_events_are_due_on_a_schedule_from_the_start_so_a_late_timer_delays_only_itself() -> None:
    loop = asyncio.get_running_loop()
    interval = 0.02
    stream = AssistantMessageEventStream()
    started = loop.time()
    stream.play(events_of(TURN, 1), interval)
    loop.call_at(started + 2.5 * interval, time.sleep, 3 * interval)  # the loop stalls for three events
    events, times = await arrivals(stream)
    assert len(events) == 14
    assert events[-1].done is not None
    assert (await stream.result()) is events[-1].done.message
    # Events 3 to 5 came late, together; the ones after them are back on their own times.
    late = [at - (started + (number + 1) * interval) for number, at in enumerate(times)]
    assert late[2] > interval
    assert all(delay < interval for delay in late[6:]), late  # relative waits would keep them 0.05 s late


async def test_with_no_interval_the_events_come_at_once_with_their_partials() -> None:
    stream = AssistantMessageEventStream()
    stream.play(events_of(TURN, 1))
    assert stream.queued == 0  # nothing is pushed before the loop runs, as with a producer task
    events, _ = await arrivals(stream)
    assert [event.partial is not None for event in events] == [True] * 14
    assert pp.text_of(await stream.result()) == "abcdefghij"


async def test_a_full_queue_holds_the_player_until_a_take_leaves_room() -> None:
    stream = AssistantMessageEventStream()
    stream.high_water = 4
    stream.play(events_of(TURN, 1))
    await asyncio.sleep(0.01)
    assert stream.queued == 4  # full: the player waits
    stream.take()
    stream.take()  # half empty: it is called back
    await asyncio.sleep(0.01)
    assert stream.queued == 4
    events, _ = await arrivals(stream)
    assert events[-1].done is not None


async def test_cancel_stops_the_player_and_ends_with_aborted() -> None:
    stream = AssistantMessageEventStream()
    stream.play(events_of(TURN, 1), 0.01)
    first = await anext(stream)
    assert first.start is not None
    stream.cancel()
    rest, _ = await arrivals(stream)
    assert [event.error is not None for event in rest] == [True]
    assert (await stream.result()).stop_reason == pp.StopReason.ABORTED
    await asyncio.sleep(0.03)  # its timer came due and pushed nothing
    assert stream.queued == 0


def broken() -> Iterator[pp.ModelEvent]:
    yield pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1)))
    raise RuntimeError("the script broke")


@pytest.mark.parametrize(
    ("events", "detail", "rule"),
    [
        (broken(), "RuntimeError: the script broke", None),
        (iter([pp.ModelEvent(text_start=pp.TextStartEvent(content_index=0))]), "start-first", "start-first"),
        (iter(list(events_of(TURN, 4))[:-1]), "terminal event", "terminal-missing"),
    ],
)
async def test_failures_end_the_stream_as_a_driven_one_would(
    events: Iterator[pp.ModelEvent], detail: str, rule: str | None
) -> None:
    stream = AssistantMessageEventStream()
    stream.play(events)
    await arrivals(stream)
    message = await stream.result()
    assert message.stop_reason == pp.StopReason.ERROR
    assert detail in (message.error_message or "")
    assert (stream.failure.rule_id if stream.failure else None) == rule


async def test_the_players_of_a_loop_share_one_timer() -> None:
    streams = [AssistantMessageEventStream() for _ in range(50)]
    for stream in streams:
        stream.play(events_of(TURN, 1), 0.005)
    loop_timers = len(asyncio.get_running_loop()._scheduled)  # type: ignore[attr-defined]
    assert loop_timers <= 2  # the Pacer's, and perhaps one left cancelled
    assert len(pacer()._due) == 50
    done = await asyncio.gather(*(arrivals(stream) for stream in streams))
    assert all(len(events) == 14 for events, _ in done)


async def test_a_scripted_model_paces_its_events_to_its_delay() -> None:
    model = ScriptedModel.readme(delay=0.01)
    started = asyncio.get_running_loop().time()
    events, times = await arrivals(model.stream(readme_context()))
    assert events[-1].done is not None
    late = [at - (started + (number + 1) * 0.01) for number, at in enumerate(times)]
    assert all(-0.002 < delay < 0.01 for delay in late), late


def test_a_loop_and_its_pacer_are_freed_together() -> None:
    async def play_one() -> None:
        stream = AssistantMessageEventStream()
        stream.play(events_of(TURN, 1), 10.0)  # still due when the loop closes

    loop = asyncio.new_event_loop()
    loop.run_until_complete(play_one())
    loop.close()
    gone = weakref.ref(loop)
    del loop
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize("interval", [math.nan, math.inf, -0.01])
async def test_an_interval_that_is_negative_or_not_finite_is_refused(interval: float) -> None:
    with pytest.raises(ValueError, match=rf"^interval must be a finite number of seconds, 0 or more, got {interval}$"):
        AssistantMessageEventStream().play(events_of(TURN, 1), interval)


async def test_the_pacer_refuses_a_non_finite_due_time_so_the_other_players_keep_their_pace() -> None:
    # A NaN in the shared heap breaks its order: the Players due after it would never run.
    paced = AssistantMessageEventStream()
    paced.play(events_of(TURN, 1), 0.005)
    player = Player(AssistantMessageEventStream(), events_of(TURN, 1), 0.005)
    for when in (math.nan, math.inf):
        with pytest.raises(ValueError, match=r"^a due time must be a finite loop time, got (nan|inf)$"):
            pacer().at(when, player)
    player.stop()
    events, _ = await asyncio.wait_for(arrivals(paced), 5)
    assert events[-1].done is not None
