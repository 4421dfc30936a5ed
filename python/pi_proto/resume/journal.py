"""A journal: the numbered events of one kept stream, which any number of readers follow.

The server records a call's events into a journal as the model produces them, whoever reads
them: the first client, clients that resume (ModelService.Resume), or none for a while. Each event
gets its number (ModelEvent.seq, from 1) and the terminal event the digest of the content the
stream built (content_sha256), so a reader that resumes after event n rebuilds the same message.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from .._gen.types.pi.ai.v1 import ModelEvent
from ..ir.events import delta_of, is_terminal, utf8_size, without_partial
from ..stream.digest import content_sha256
from ..stream.event_stream import AssistantMessageEventStream
from ..wire.codec import encode

# What an event costs in memory beyond its delta: its objects (the event, its body, the delta's
# string) and the journal's bookkeeping. Measured with tracemalloc on streams of 1- to 4-character
# deltas: 490 to 590 bytes an event (tests/test_resume_memory.py holds the count to it).
EVENT_OVERHEAD_BYTES = 512


# Publishes the events of a journal that arrived together, before any reader sees them.
Publish = Callable[["Journal", list[ModelEvent]], Awaitable[None]]


class Gone(Exception):
    """A reader asked for events the journal no longer holds: `after_seq` is older than the
    first it keeps."""


class Journal:
    """The events of one stream, numbered from 1, kept until the store lets it go.

    `record()` fills it from the model's events; `reader(after_seq)` follows it from any point.
    `size` counts the memory it holds as tracemalloc sees it (a delta's UTF-8 twice, four times
    when it is not ASCII, another event's encoding, and EVENT_OVERHEAD_BYTES each), for the
    store's bound; `trim()` drops the events every reader
    has passed.
    """

    def __init__(self, stream_id: str, events: AssistantMessageEventStream, *, background: bool) -> None:
        self.stream_id = stream_id
        self.events = events  # the model's stream: cancel() stops the call
        self.background = background
        self.first_seq = 1  # the number of entries[0]
        self.entries: deque[ModelEvent] = deque()
        self._sizes: deque[int] = deque()
        self.size = 0
        self._delta_bytes = 0  # of the deltas recorded
        self.done = False
        self.readers: set[JournalReader] = set()
        self._waiters: list[asyncio.Future[None]] = []
        self.on_size: Callable[[Journal, int], None] = lambda journal, grown: None
        self.on_readers: Callable[[Journal], None] = lambda journal: None
        self.on_end: list[Callable[[], None]] = []  # called once the terminal event is in

    @property
    def last_seq(self) -> int:
        """The number of the last event recorded; 0 before the first."""
        return self.first_seq + len(self.entries) - 1

    async def record(self, publish: Publish | None = None) -> None:
        """Number and keep each event of the model's stream until its terminal event; with
        `publish`, the events that arrived together are published first, and readers see only
        events published (so a reader elsewhere never lacks one a reader here was sent)."""
        numbered = 0
        async for event in self.events:
            batch = [event]
            while publish is not None and self.events.peek() is not None:
                batch.append(self.events.take())
            for each in batch:
                numbered += 1
                self.number(each, numbered)
            if publish is not None:
                await publish(self, batch)
            for each in batch:
                self.append(each)

    def number(self, event: ModelEvent, seq: int) -> None:
        """Give `event` its number, the start event the stream's id, the terminal event the digest
        of the content the stream built."""
        event.seq = seq
        if event.start is not None:
            event.start.stream_id = self.stream_id
        elif (terminal := event.done if event.done is not None else event.error) is not None:
            terminal.content_sha256 = content_sha256(self.events.built_content)

    def append(self, event: ModelEvent) -> None:
        """Keep `event`, numbered, as the next one."""
        if self.done:
            return
        self.done = is_terminal(event)
        # A delta is held twice: in its event, and in the content the stream builds, which the
        # terminal event's message holds (so its encoding counts without what the deltas did).
        # Text that is not ASCII is held as Python's characters (2 or 4 bytes each for most) and,
        # once encoded for the wire, as the UTF-8 Python keeps beside them: about twice its UTF-8.
        body = delta_of(event)
        if body is not None and body.delta:
            text = body.delta
            delta = utf8_size(text)  # equal to its characters only when it is ASCII
            self._delta_bytes += delta
            size = (2 if delta == len(text) else 4) * delta + EVENT_OVERHEAD_BYTES
        else:
            encoded = len(encode(without_partial(event)))
            size = EVENT_OVERHEAD_BYTES + (max(0, encoded - self._delta_bytes) if self.done else encoded)
        self.entries.append(event)
        self._sizes.append(size)
        self.size += size
        self.wake()
        self.on_size(self, size)
        if self.done:
            for callback in self.on_end:
                callback()

    def reader(self, after_seq: int = 0) -> JournalReader:
        """A reader of the events numbered after `after_seq`; raises Gone when the journal no
        longer holds the first of them, or has no event `after_seq` yet (no client can have
        applied an event not recorded: events are recorded before any reader sends them)."""
        if after_seq > self.last_seq:
            raise Gone(f"stream {self.stream_id} has {self.last_seq} events so far, not {after_seq}")
        if after_seq + 1 < self.first_seq:
            raise Gone(
                f"stream {self.stream_id} keeps its events from number {self.first_seq} on; "
                f"those up to {after_seq + 1} were dropped to stay within the server's byte bound"
            )
        reader = JournalReader(self, after_seq)
        self.readers.add(reader)
        self.on_readers(self)
        return reader

    def leave(self, reader: JournalReader) -> None:
        """A reader stops reading."""
        if reader in self.readers:
            self.readers.discard(reader)
            self.on_readers(self)

    def trim(self) -> int:
        """Drop the events every reader has passed (all but the terminal event's), and return the
        bytes freed."""
        keep_from = min((reader.next_seq for reader in self.readers), default=self.last_seq + 1)
        freed = 0
        while self.entries and self.first_seq < keep_from and not is_terminal(self.entries[0]):
            self.entries.popleft()
            freed += self._sizes.popleft()
            self.first_seq += 1
        self.size -= freed
        return freed

    def wake(self) -> None:
        """Wake the readers waiting for the next event."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self) -> None:
        """Wait for the next event."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)


class JournalReader:
    """One reader's place in a journal: iterate it for the events from there on, live ones
    included, ending after the terminal event. `peek()` and `take()` reach the events already
    recorded without waiting, so the server batches and merges them as it does a model's."""

    def __init__(self, journal: Journal, after_seq: int) -> None:
        self.journal = journal
        self.next_seq = after_seq + 1
        self._ended = False
        self._dropped = ""  # why the store dropped the stream before this reader reached its end

    def __aiter__(self) -> JournalReader:
        return self

    async def __anext__(self) -> ModelEvent:
        while self.peek() is None:
            if self._dropped:
                raise Gone(self._dropped)
            if self._ended or (self.next_seq > self.journal.last_seq and self.journal.done):
                raise StopAsyncIteration
            await self.journal.wait()
        return self.take()

    def peek(self) -> ModelEvent | None:
        """The next event already recorded; None when none is, or after the terminal event."""
        journal = self.journal
        at = self.next_seq - journal.first_seq
        if self._ended or at >= len(journal.entries):
            return None
        if at < 0:
            raise Gone(f"stream {journal.stream_id} no longer holds event {self.next_seq}")
        return journal.entries[at]

    def take(self) -> ModelEvent:
        """Take the next event already recorded; raises IndexError when none is."""
        event = self.peek()
        if event is None:
            raise IndexError("no event is waiting")
        self.next_seq += 1
        if is_terminal(event):
            self._ended = True
        return event

    def close(self) -> None:
        """Stop reading: iteration ends, and the journal no longer keeps events for this reader."""
        self._ended = True
        self.journal.leave(self)
        self.journal.wake()

    def drop(self, why: str) -> None:
        """The store let the stream go before this reader reached its terminal event: iteration
        raises Gone saying `why`, so the client is told, not left with a stream cut short."""
        if not self._ended:
            self._dropped = why
        self.close()
