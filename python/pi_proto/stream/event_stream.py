"""Event streams: an async-iterable queue of events that also yields a final result.

`EventStream` is generic. `AssistantMessageEventStream` carries ModelEvents: it rebuilds each
event's `partial`, ends at the first `done` or `error` event, and turns any failure of the task
that feeds it into an `error` event, so iterating it never raises and `result()` always resolves.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from .._gen.types.pi.ai.v1 import (
    AgentContext,
    AssistantContent,
    AssistantMessage,
    ErrorEvent,
    GenerationOptions,
    Model,
    ModelEvent,
    StopReason,
    StreamRule,
)
from ..ir.events import is_terminal, terminal_message, utf8_size
from ..wire.validate import Violation
from .accumulator import DEFAULT_MAX_MESSAGE_BYTES, Accumulator, StreamProtocolError, stream_rule_id
from .schedule import Player

T = TypeVar("T")
R = TypeVar("R")

_UNSET: Any = object()


class EventStream(Generic[T, R]):
    """An async-iterable queue of events plus the final result they lead to.

    `push()` hands an event to the consumer that has waited longest, or queues it when none
    waits, as pi's EventStream does: two consumers of one stream take turns. `send()` first
    waits for room below `high_water` events and, when `size_of` measures events, below
    `high_water_bytes` of them. A terminal event, as `is_terminal` says, resolves
    `result()` with `extract_result(event)` and ends iteration once it has been consumed, with no
    `end()` needed; anything pushed after it is ignored. `end(result)` ends the stream early and
    releases every waiting consumer; without a result, `result()` keeps waiting.

    With a `sink`, every event goes to it as it is pushed, instead of to a queue: a consumer that
    takes each event as it comes (a kept stream's journal) costs no queue and no task switch.
    """

    def __init__(
        self,
        is_terminal: Callable[[T], bool],
        extract_result: Callable[[T], R],
        *,
        high_water: int = 64,
        size_of: Callable[[T], int] | None = None,
        high_water_bytes: int = 256 * 1024,
    ) -> None:
        self.high_water = high_water
        self.high_water_bytes = high_water_bytes
        self._size_of = size_of
        self._queued_bytes = 0
        self._is_terminal = is_terminal
        self._extract_result = extract_result
        self._queue: deque[T] = deque()
        self._sizes: deque[int] = deque()  # of each queued event, by size_of, when it measures
        self._readers: deque[asyncio.Future[Any]] = deque()  # consumers waiting for an event, longest first
        self._result_waiters: list[asyncio.Future[None]] = []
        self._writers: list[asyncio.Future[None]] = []  # producers waiting for room
        self._done = False
        self._result: R = _UNSET
        self.sink: Callable[[T], None] | None = None

    @property
    def queued(self) -> int:
        """Events pushed but not yet taken by a consumer."""
        return len(self._queue)

    @property
    def done(self) -> bool:
        """Whether the stream has ended: nothing pushed from now on is delivered."""
        return self._done

    def push(self, event: T) -> None:
        """Hand an event to the longest-waiting consumer, or queue it; a no-op once the stream has ended."""
        if self._done:
            return
        self._push(event, 0 if self._size_of is None else self._size_of(event))

    def _push(self, event: T, size: int) -> None:
        """push() of an event whose size_of is already known (measured once, not at every step)."""
        if self._is_terminal(event):
            self._done = True
            self._resolve(self._extract_result(event))
            _wake(self._writers)
        self._deliver(event, size)
        if self._done:
            self._release_readers()

    async def send(self, event: T) -> None:
        """Push, but first let a full queue drain to half: a producer that awaits this runs at the
        pace of its consumer instead of filling memory, and wakes once per half queue, not per event."""
        if len(self._queue) >= self.high_water or self._queued_bytes >= self.high_water_bytes:
            while not self._done and not self._half_empty():
                await _wait(self._writers)
        self.push(event)

    @property
    def full(self) -> bool:
        """Whether send() would wait for room before pushing."""
        return len(self._queue) >= self.high_water or self._queued_bytes >= self.high_water_bytes

    def on_room(self, callback: Callable[[object], None]) -> None:
        """Call `callback` once the queue has drained to half (or the stream ended), as send()
        would wake, without a task waiting."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiter.add_done_callback(callback)
        self._writers.append(waiter)

    def _half_empty(self) -> bool:
        return len(self._queue) <= self.high_water // 2 and self._queued_bytes <= self.high_water_bytes // 2

    def end(self, result: R | None = None) -> None:
        """End the stream, optionally with a result, and release every waiting consumer."""
        self._done = True
        if result is not None:
            self._resolve(result)
        self._release_readers()
        _wake(self._writers)

    async def result(self) -> R:
        """The final result, once a terminal event or `end(result)` has provided it."""
        while self._result is _UNSET:
            await _wait(self._result_waiters)
        return self._result

    def __aiter__(self) -> AsyncIterator[T]:
        return self

    async def __anext__(self) -> T:
        if self._queue:
            return self.take()
        if self._done:
            raise StopAsyncIteration
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._readers.append(waiter)
        try:
            item = await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.result() is not _END:
                item = waiter.result()  # handed over just as this consumer left
                self._deliver(item, 0 if self._size_of is None else self._size_of(item), first=True)
            elif waiter in self._readers:
                self._readers.remove(waiter)
            raise
        if item is _END:
            raise StopAsyncIteration
        return item  # type: ignore[no-any-return]

    def peek(self) -> T | None:
        """The next queued event, left in the queue; None when none is waiting."""
        return self._queue[0] if self._queue else None

    def take(self) -> T:
        """Take the next queued event without waiting; raises IndexError when none is waiting."""
        event = self._queue.popleft()
        if self._size_of is not None:
            self._queued_bytes -= self._sizes.popleft()
        if self._writers and self._half_empty():
            _wake(self._writers)
        return event

    def _deliver(self, event: T, size: int, *, first: bool = False) -> None:
        if self.sink is not None:
            self.sink(event)
            return
        while self._readers:
            reader = self._readers.popleft()
            if not reader.done():
                reader.set_result(event)
                return
        if self._size_of is not None:
            self._queued_bytes += size
            if first:
                self._sizes.appendleft(size)
            else:
                self._sizes.append(size)
        if first:
            self._queue.appendleft(event)
        else:
            self._queue.append(event)

    def _release_readers(self) -> None:
        while self._readers:
            reader = self._readers.popleft()
            if not reader.done():
                reader.set_result(_END)

    def _resolve(self, result: R) -> None:
        if self._result is _UNSET:
            self._result = result
            _wake(self._result_waiters)


_END: Any = object()  # what a waiting consumer receives when the stream ends


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


@dataclass(frozen=True)
class StreamFailure:
    """Why a receiver ended a stream itself, with an `error` event of its own making.

    Either a gRPC status ended the call (`status_code`, e.g. "UNAVAILABLE"), or an event broke a
    stream rule (`event_index`, `rule`, and for `terminal-valid` the `violations`); `detail` says
    it in words.
    """

    detail: str
    status_code: str | None = None
    event_index: int | None = None
    rule: StreamRule | None = None
    violations: tuple[Violation, ...] = ()

    @property
    def rule_id(self) -> str | None:
        """The broken rule's text id, e.g. "block-open"; None when a status ended the call."""
        return None if self.rule is None else stream_rule_id(self.rule)

    @classmethod
    def of_rule(cls, error: StreamProtocolError) -> StreamFailure:
        """The failure of a broken stream rule."""
        return cls(str(error), event_index=error.event_index, rule=error.rule, violations=error.violations)


class AssistantMessageEventStream(EventStream[ModelEvent, AssistantMessage]):
    """The events of one model call, each with `partial` filled in, ending in its final message.

    A producer feeds it by calling `push()`, by handing a coroutine to `drive()`, or by handing
    events it already has to `play()`. A driven or played stream that stops without a terminal
    event is ended with an `error` event carrying everything received so far: ABORTED when
    `cancel()` stopped it, ERROR otherwise. When the stream ends itself like that, `failure` says
    why in structured form.
    """

    def __init__(self, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        super().__init__(is_terminal, terminal_message, size_of=delta_bytes)
        self._accumulator = Accumulator(max_message_bytes)
        self.failure: StreamFailure | None = None
        self._producer: asyncio.Task[None] | None = None
        self._player: Player | None = None
        self._cancel_message = "cancelled"
        self._cancel_reason = StopReason.ABORTED

    @property
    def partial(self) -> AssistantMessage:
        """The message as rebuilt from the events pushed so far."""
        return self._accumulator.partial

    @property
    def built_content(self) -> list[AssistantContent]:
        """The content the block events built, once the terminal event has arrived (the digest
        its content_sha256 is of); before it, the partial's content."""
        return self._accumulator.built if self.done else self._accumulator.partial.content

    @property
    def started(self) -> bool:
        """Whether an event has been pushed (a stream opens with `start`)."""
        return self._accumulator.count > 0

    @property
    def received_bytes(self) -> int:
        """The bytes the events so far count toward the size limit (rule `size-limit`)."""
        return self._accumulator.received_bytes

    @property
    def max_message_bytes(self) -> int:
        """The stream's size limit, in bytes."""
        return self._accumulator.max_message_bytes

    def push(self, event: ModelEvent) -> None:
        """Rebuild the partial from `event`, attach it, and queue the event.

        Raises StreamProtocolError, before queueing anything, if the event does not fit the
        stream so far (a driven stream turns that into its `error` event).
        """
        if self.done:
            return
        accumulator = self._accumulator
        before = accumulator.received_bytes
        accumulator.apply(event)
        self._push(event, accumulator.received_bytes - before)  # what the accumulator counted for it

    def fail(self, reason: StopReason, error_message: str, failure: StreamFailure | None = None) -> None:
        """End the stream with an `error` event that keeps everything received so far."""
        if self.done:
            return
        self.failure = failure
        message = self._accumulator.partial
        message.stop_reason = reason
        message.error_message = error_message
        super().push(self._accumulator.close(ModelEvent(error=ErrorEvent(reason=reason, message=message))))

    def drive(self, producer: Coroutine[Any, Any, None]) -> None:
        """Run `producer` as the task feeding this stream; `cancel()` stops it."""
        self._producer = asyncio.ensure_future(producer)
        self._producer.add_done_callback(self._producer_finished)

    def play(self, events: Iterable[ModelEvent], interval: float = 0.0) -> None:
        """Push `events`, one every `interval` seconds from now, or as fast as the consumers take
        them when 0; `cancel()` stops them.

        Event n is due at the start + n x `interval`: on a schedule from the start, a late timer
        delays one event, not every event after it, and events already due go out together. Timer
        callbacks push them instead of a task, so a stream costs no task switch per event; the
        queue's limits hold as with `send()`. An event that breaks a stream rule, or `events`
        raising or ending without a terminal event, ends the stream as with `drive()`.
        """
        self._player = Player(self, iter(events), interval)

    def cancel(self, message: str = "cancelled", reason: StopReason = StopReason.ABORTED) -> None:
        """Stop the producing task; the stream then ends with an `error` event (ABORTED unless
        another reason is given, e.g. ERROR for a deadline)."""
        if self.done:
            return
        self._cancel_message, self._cancel_reason = message, reason
        if self._player is not None:
            self._player.stop()
        if self._producer is not None and not self._producer.done():
            self._producer.cancel()
        else:
            self.fail(reason, message)

    def _producer_finished(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            self.fail(self._cancel_reason, self._cancel_message)
        elif (error := task.exception()) is not None:
            self.fail_with(error)
        else:
            self.end_without_terminal()

    def fail_with(self, error: BaseException) -> None:
        """End the stream with the `error` event of what its producer raised."""
        if isinstance(error, StreamProtocolError):
            self.fail(StopReason.ERROR, str(error), StreamFailure.of_rule(error))
        else:
            self.fail(StopReason.ERROR, f"{type(error).__name__}: {error}")

    def end_without_terminal(self) -> None:
        """End a stream whose events stopped before a terminal event (rule `terminal-missing`)."""
        self.fail(
            StopReason.ERROR,
            "stream ended without a terminal event",
            StreamFailure.of_rule(
                StreamProtocolError(
                    self._accumulator.count, StreamRule.TERMINAL_MISSING, "the events ended without one"
                )
            ),
        )


def delta_bytes(event: ModelEvent) -> int:
    """The bytes of UTF-8 an event's delta holds; 0 for events without one."""
    for body in (event.text_delta, event.thinking_delta, event.toolcall_delta):
        if body is not None:
            return utf8_size(body.delta)
    return 0


class ModelRefused(Exception):
    """Raised by `Model.stream` to refuse a call before it starts, with the gRPC status to answer.

    `code` is a status code name such as "RESOURCE_EXHAUSTED"; once a stream has started,
    failures travel as its `error` event instead.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ServedModel(Protocol):
    """Anything a server plays as a model: its catalog entry, and calls that stream events."""

    @property
    def info(self) -> Model:
        """The model as ListModels shows it: id, provider, limits and rates."""
        ...

    def stream(self, context: AgentContext, options: GenerationOptions | None = None) -> AssistantMessageEventStream:
        """Start one call; may raise ModelRefused before anything is streamed."""
        ...
