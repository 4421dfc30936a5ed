"""Playing events a stream already has on a schedule, without a task: what
AssistantMessageEventStream.play() runs (ScriptedModel's turns, for one).

A Player pushes its stream's events from callbacks: each is due at the start + n x the interval
(a late timer delays one event, not every event after it), and the events already due go out
together. The Players of an event loop share one Pacer, a heap of due times behind a single
loop timer: thousands of paced streams cost one timer callback per moment that something is due,
not a timer object, a task switch and a heap of Python comparisons per event.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from .._gen.types.pi.ai.v1 import ModelEvent


class Stream(Protocol):
    """What a Player needs of the stream it plays into (AssistantMessageEventStream has it): the
    scheduler knows no stream type, so the two modules do not import each other."""

    @property
    def done(self) -> bool: ...
    @property
    def full(self) -> bool: ...
    def on_room(self, callback: Callable[[object], None]) -> None: ...
    def push(self, event: ModelEvent) -> None: ...
    def fail_with(self, error: BaseException) -> None: ...
    def end_without_terminal(self) -> None: ...


# asyncio runs a timer once the clock is within its resolution of it; so does the Pacer.
_RESOLUTION = time.get_clock_info("monotonic").resolution


class Pacer:
    """Due times of the Players of one event loop, in a heap, behind one loop timer."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._due: list[tuple[float, int, Player]] = []  # the order breaks ties: Players never compare
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._running = False  # in _run, which arms the timer once the due Players have run

    def at(self, when: float, player: Player) -> None:
        """Run `player` at loop time `when`, which must be finite: a NaN would break the heap's
        order, and with it the pace of every Player of the loop."""
        if not math.isfinite(when):
            raise ValueError(f"a due time must be a finite loop time, got {when}")
        heapq.heappush(self._due, (when, next(self._order), player))
        if not self._running and (self._timer is None or when < self._timer.when()):
            self._arm(when)

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.loop.call_at(when, self._run)

    def _run(self) -> None:
        self._timer = None
        self._running = True
        due, now = self._due, self.loop.time() + _RESOLUTION
        try:
            while due and due[0][0] <= now:
                heapq.heappop(due)[2].run()
        finally:
            self._running = False
        if due:
            self._arm(due[0][0])


_ATTRIBUTE = "_pi_proto_pacer"


def check_interval(seconds: float, name: str = "interval") -> None:
    """Raise ValueError unless `seconds` is a pace a Player can keep: finite, and 0 or more."""
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"{name} must be a finite number of seconds, 0 or more, got {seconds}")


def pacer() -> Pacer:
    """The running loop's Pacer, kept on the loop itself: a registry beside it would keep every
    loop alive through its Pacer's references, which lead back to the loop."""
    loop = asyncio.get_running_loop()
    found: Pacer | None = getattr(loop, _ATTRIBUTE, None)
    if found is None:
        found = Pacer(loop)
        # A loop that takes no attributes leaves this Player a Pacer of its own.
        with contextlib.suppress(AttributeError, TypeError):
            setattr(loop, _ATTRIBUTE, found)
    return found


# The most events a Player pushes before it lets the loop run other work: what a queue holds.
BURST = 64


class Player:
    """Pushes `events` into `stream`, the n-th due `interval` x n seconds after it was made (all
    at once when 0), until the queue is full (the next take() that leaves room calls it back),
    the terminal event, or stop(). An event that breaks a stream rule, or `events` raising or
    ending without a terminal event, ends the stream as its producer task would."""

    def __init__(self, stream: Stream, events: Iterator[ModelEvent], interval: float) -> None:
        check_interval(interval)
        self.stream = stream
        self.events = events
        self.interval = interval
        self.played = 0
        self.stopped = False
        self.pacer = pacer()
        self.started = self.pacer.loop.time()
        # Even the first event waits for the loop, as a driven stream's producer task would.
        if interval:
            self.pacer.at(self.started + interval, self)
        else:
            self.pacer.loop.call_soon(self.run)

    def stop(self) -> None:
        """Push nothing more (the Pacer drops it when it comes due)."""
        self.stopped = True

    def run(self, _: object = None) -> None:
        stream = self.stream
        burst = BURST
        try:
            while not self.stopped and not stream.done:
                if stream.full:
                    stream.on_room(self.run)
                    return
                if not burst:  # a consumer that takes every event at once (a journal) gets them
                    self.pacer.loop.call_soon(self.run)  # in bursts: other streams run between
                    return
                burst -= 1
                if self.interval:
                    due = self.started + (self.played + 1) * self.interval
                    if due > self.pacer.loop.time() + _RESOLUTION:
                        self.pacer.at(due, self)
                        return
                event = next(self.events, None)
                if event is None:
                    stream.end_without_terminal()
                    return
                self.played += 1
                stream.push(event)
        except Exception as error:  # what a driven stream's producer raising would be
            stream.fail_with(error)
