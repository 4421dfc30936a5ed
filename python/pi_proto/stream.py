"""Event streams: an async-iterable queue of events that also yields a final result.

`EventStream` is generic. `AssistantMessageEventStream` carries ModelEvents: it rebuilds each
event's `partial`, ends at the first `done` or `error` event, and turns any failure of the task
that feeds it into an `error` event, so iterating it never raises and `result()` always resolves.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, Generic, Protocol, TypeVar

from ._gen.types.pi.ai.v1 import AgentContext, AssistantMessage, ErrorEvent, GenerationOptions, ModelEvent, StopReason
from .accumulator import Accumulator
from .events import is_terminal, terminal_message

T = TypeVar("T")
R = TypeVar("R")

_UNSET: Any = object()


class EventStream(Generic[T, R]):
    """An async-iterable queue of events plus the final result they lead to.

    `push()` queues an event (`send()` first waits for room below `high_water`); a terminal event,
    as `is_terminal` says, resolves `result()` with `extract_result(event)` and ends iteration
    once it has been consumed, with no `end()` needed.
    Anything pushed after a terminal event is ignored. `end(result)` ends the stream early and
    releases every waiting consumer; without a result, `result()` keeps waiting.
    """

    def __init__(
        self, is_terminal: Callable[[T], bool], extract_result: Callable[[T], R], *, high_water: int = 64
    ) -> None:
        self.high_water = high_water
        self._is_terminal = is_terminal
        self._extract_result = extract_result
        self._queue: deque[T] = deque()
        self._readers: list[asyncio.Future[None]] = []  # consumers waiting for an event or the result
        self._writers: list[asyncio.Future[None]] = []  # producers waiting for room
        self._done = False
        self._result: R = _UNSET

    @property
    def queued(self) -> int:
        """Events pushed but not yet taken by a consumer."""
        return len(self._queue)

    @property
    def done(self) -> bool:
        """Whether the stream has ended: nothing pushed from now on is delivered."""
        return self._done

    def push(self, event: T) -> None:
        """Queue an event for the consumers; a no-op once the stream has ended."""
        if self._done:
            return
        if self._is_terminal(event):
            self._done = True
            self._resolve(self._extract_result(event))
            _wake(self._writers)
        self._queue.append(event)
        _wake(self._readers)

    async def send(self, event: T) -> None:
        """Push, but first let a full queue drain to half: a producer that awaits this runs at the
        pace of its consumer instead of filling memory, and wakes once per half queue, not per event."""
        if len(self._queue) >= self.high_water:
            while len(self._queue) > self.high_water // 2 and not self._done:
                await _wait(self._writers)
        self.push(event)

    def end(self, result: R | None = None) -> None:
        """End the stream, optionally with a result, and release every waiting consumer."""
        self._done = True
        if result is not None:
            self._resolve(result)
        _wake(self._readers)
        _wake(self._writers)

    async def result(self) -> R:
        """The final result, once a terminal event or `end(result)` has provided it."""
        while self._result is _UNSET:
            await _wait(self._readers)
        return self._result

    def __aiter__(self) -> AsyncIterator[T]:
        return self

    async def __anext__(self) -> T:
        while not self._queue:
            if self._done:
                raise StopAsyncIteration
            await _wait(self._readers)
        return self.take()

    def peek(self) -> T | None:
        """The next queued event, left in the queue; None when none is waiting."""
        return self._queue[0] if self._queue else None

    def take(self) -> T:
        """Take the next queued event without waiting; raises IndexError when none is waiting."""
        event = self._queue.popleft()
        if self._writers and len(self._queue) <= self.high_water // 2:
            _wake(self._writers)
        return event

    def _resolve(self, result: R) -> None:
        if self._result is _UNSET:
            self._result = result


async def _wait(waiters: list[asyncio.Future[None]]) -> None:
    waiter = asyncio.get_running_loop().create_future()
    waiters.append(waiter)
    try:
        await waiter
    finally:
        if waiter in waiters:
            waiters.remove(waiter)


def _wake(waiters: list[asyncio.Future[None]]) -> None:
    pending = list(waiters)
    waiters.clear()
    for waiter in pending:
        if not waiter.done():
            waiter.set_result(None)


class AssistantMessageEventStream(EventStream[ModelEvent, AssistantMessage]):
    """The events of one model call, each with `partial` filled in, ending in its final message.

    A producer feeds it either by calling `push()` or by handing a coroutine to `drive()`. A
    driven stream that stops without a terminal event is ended with an `error` event carrying
    everything received so far: ABORTED when `cancel()` stopped it, ERROR otherwise.
    """

    def __init__(self) -> None:
        super().__init__(is_terminal, terminal_message)
        self._accumulator = Accumulator()
        self._producer: asyncio.Task[None] | None = None
        self._cancel_message = "cancelled"
        self._cancel_reason = StopReason.ABORTED

    @property
    def partial(self) -> AssistantMessage:
        """The message as rebuilt from the events pushed so far."""
        return self._accumulator.partial

    def push(self, event: ModelEvent) -> None:
        """Rebuild the partial from `event`, attach it, and queue the event.

        Raises StreamProtocolError, before queueing anything, if the event does not fit the
        stream so far (a driven stream turns that into its `error` event).
        """
        if self.done:
            return
        super().push(self._accumulator.apply(event))

    def fail(self, reason: StopReason, error_message: str) -> None:
        """End the stream with an `error` event that keeps everything received so far."""
        if self.done:
            return
        message = self._accumulator.partial
        message.stop_reason = reason
        message.error_message = error_message
        super().push(self._accumulator.close(ModelEvent(error=ErrorEvent(reason=reason, message=message))))

    def drive(self, producer: Coroutine[Any, Any, None]) -> None:
        """Run `producer` as the task feeding this stream; `cancel()` stops it."""
        self._producer = asyncio.ensure_future(producer)
        self._producer.add_done_callback(self._producer_finished)

    def cancel(self, message: str = "cancelled", reason: StopReason = StopReason.ABORTED) -> None:
        """Stop the producing task; the stream then ends with an `error` event (ABORTED unless
        another reason is given, e.g. ERROR for a deadline)."""
        if self.done:
            return
        self._cancel_message, self._cancel_reason = message, reason
        if self._producer is not None and not self._producer.done():
            self._producer.cancel()
        else:
            self.fail(reason, message)

    def _producer_finished(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            self.fail(self._cancel_reason, self._cancel_message)
        elif (error := task.exception()) is not None:
            self.fail(StopReason.ERROR, f"{type(error).__name__}: {error}")
        else:
            self.fail(StopReason.ERROR, "stream ended without a terminal event")


class ModelRefused(Exception):
    """Raised by `Model.stream` to refuse a call before it starts, with the gRPC status to answer.

    `code` is a status code name such as "RESOURCE_EXHAUSTED"; once a stream has started,
    failures travel as its `error` event instead.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Model(Protocol):
    """Anything that plays a model: one call turns a context into one event stream."""

    id: str

    def stream(self, context: AgentContext, options: GenerationOptions | None = None) -> AssistantMessageEventStream:
        """Start one call; may raise ModelRefused before anything is streamed."""
        ...
