"""AssistantMessageEventStream.play(): events pushed on a schedule from the start, by callbacks
instead of a task, with a driven stream's contract (limits, failures, cancel → ABORTED)."""

from __future__ import annotations

import asyncio
import gc
import math
import selectors
import weakref
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import pytest

import pi_proto as pp
from pi_proto.grpc.outgoing import wire_event
from pi_proto.ir.events import events_of
from pi_proto.models.scripted import ScriptedModel
from pi_proto.resume import MemoryStore
from pi_proto.stream.event_stream import AssistantMessageEventStream
from pi_proto.stream.schedule import BURST, Player, pacer

from .helpers import readme_context

TURN = pp.assistant_message("abcdefghij", timestamp=1)  # start, text start, 10 deltas, end, done
T = TypeVar("T")


async def arrivals(stream: AssistantMessageEventStream) -> tuple[list[pp.ModelEvent], list[float]]:
    loop = asyncio.get_running_loop()
    events, times = [], []
    async for event in stream:
        events.append(event)
        times.append(loop.time())
    return events, times


class VirtualClock(selectors.DefaultSelector):
    """A selector that never waits: where the loop would sleep until its next timer, the clock
    jumps there. On it, a schedule plays the same on any machine, however busy."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        assert timeout is not None, "the loop would wait for ever: nothing is due"
        self.now += timeout
        return super().select(0)


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop on a VirtualClock: its time moves only by its timers and by `stall()`."""

    def __init__(self) -> None:
        self.clock = VirtualClock()
        super().__init__(self.clock)

    def time(self) -> float:
        return self.clock.now

    def stall(self, seconds: float) -> None:
        """A callback that holds the loop for `seconds`, as a slow one does."""
        self.clock.now += seconds


def on_virtual_time(play: Callable[[VirtualTimeLoop], Awaitable[T]]) -> T:
    loop = VirtualTimeLoop()
    try:
        return loop.run_until_complete(play(loop))
    finally:
        loop.close()


def test_events_are_due_on_a_schedule_from_the_start_so_a_late_timer_delays_only_itself() -> None:
    interval = 0.02

    async def play(loop: VirtualTimeLoop) -> tuple[list[pp.ModelEvent], list[float], pp.AssistantMessage]:
        stream = AssistantMessageEventStream()
        stream.play(events_of(TURN, 1), interval)
        loop.call_at(2.5 * interval, loop.stall, 3 * interval)  # the loop stalls for three events
        events, times = await arrivals(stream)
        return events, times, await stream.result()

    events, times, message = on_virtual_time(play)
    assert len(events) == 14
    assert events[-1].done is not None
    assert message is events[-1].done.message
    # Events 3 to 5 came when the stall ended, together; the ones after them are back on their own
    # times (relative waits would keep them 0.05 s late).
    due = [number * interval for number in range(1, 15)]
    assert times == pytest.approx([*due[:2], 5.5 * interval, 5.5 * interval, 5.5 * interval, *due[5:]], abs=1e-9)


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
    # On the real clock: in order, and none before its time (how late depends on the machine).
    model = ScriptedModel.readme(delay=0.01)
    started = asyncio.get_running_loop().time()
    events, times = await arrivals(model.stream(readme_context()))
    assert [wire_event(event) for event in events] == [wire_event(event) for event in events_of(model.turns[0], 8)]
    early = [(number, at - started) for number, at in enumerate(times, 1) if at < started + number * 0.01 - 1e-6]
    assert early == []


def test_a_scripted_model_plays_each_event_on_its_time() -> None:
    # On a virtual clock, which no load delays: each event exactly on its time.
    model = ScriptedModel.readme(delay=0.01)

    async def play(loop: VirtualTimeLoop) -> tuple[list[pp.ModelEvent], list[float]]:
        return await arrivals(model.stream(readme_context()))

    events, times = on_virtual_time(play)
    assert events[-1].done is not None
    assert times == pytest.approx([number * 0.01 for number in range(1, len(events) + 1)], abs=1e-9)


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
    events, _ = await arrivals(paced)
    assert events[-1].done is not None


async def test_a_player_whose_consumer_never_makes_it_wait_lets_other_work_run_between_bursts() -> None:
    events = ScriptedModel([pp.assistant_message("x" * 1_000, timestamp=1)], delta_size=1).stream(pp.AgentContext())
    journal = MemoryStore().keep(events)  # takes each event as it is pushed
    seen: list[int] = []
    asyncio.get_running_loop().call_soon(lambda: seen.append(journal.last_seq))  # after the Player's first run
    await events.result()
    assert seen == [BURST]
    assert journal.last_seq == 1_004  # start, text start, 1,000 deltas, text end, done
