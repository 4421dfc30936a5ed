"""A journal: the numbered events of one kept stream, which any number of readers follow.

The server records a call's events into a journal as the model produces them, whoever reads
them: the first client, clients that resume (ModelService.Resume), or none for a while. Each event
gets its number (ModelEvent.seq, from 1) and the terminal event the digest of the content the
stream built (content_sha256), so a reader that resumes after event n rebuilds the same message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from .._gen.types.pi.ai.v1 import ModelEvent
from ..ir.events import DELTA_KINDS, delta_event, delta_of, is_terminal, utf8_size, without_partial
from ..stream.digest import content_sha256
from ..stream.event_stream import AssistantMessageEventStream
from ..wire.codec import encode

# What an event costs in memory beyond its delta: its objects and the journal's bookkeeping. A
# delta without usage is kept as a tuple (kind, content index, text), not as the event's four
# objects: a quarter of the memory, and nothing the garbage collector keeps walking (it stops
# tracking a tuple of strings and numbers), where a server keeping millions of events made every
# full collection walk them all. tracemalloc sees 136 bytes a delta (80 when Python shares its
# one-character string); the count takes more, for what the allocator keeps beside it: `pi-proto
# serve` at its bound, 2,000 streams of 8-character deltas at a time, grew 1.23 times the bound in
# RSS (tests/test_resume_memory.py holds the count within tracemalloc's 0.8 to 1.25).
DELTA_OVERHEAD_BYTES = 160
SHARED_DELTA_OVERHEAD_BYTES = 96  # a delta of one Latin-1 character, whose string Python shares
EVENT_OVERHEAD_BYTES = 512
Entry = ModelEvent | tuple[str, int, str]


# Publishes the events of a journal that arrived together, before any reader sees them.
Publish = Callable[["Journal", list[ModelEvent]], Awaitable[None]]


def _kept_delta(event: ModelEvent) -> tuple[str, int, str] | None:
    """A delta without usage as the journal keeps it: (kind, content index, text); None for any
    other event, kept as it is."""
    members = event.__dict__
    if members["usage"] is None:
        for kind in DELTA_KINDS:
            if (body := members[kind]) is not None:
                values = body.__dict__
                text = values["delta"]
                return (kind, values["content_index"], text) if type(text) is str else None
    return None


class Gone(Exception):
    """A reader asked for events the journal no longer holds: `after_seq` is older than the
    first it keeps."""


class Journal:
    """The events of one stream, numbered from 1, kept until the store lets it go.

    `follow()` (or `publish_and_record()`) fills it from the model's events; `reader(after_seq)`
    follows it from any point.
    `size` counts the memory it holds (a delta's UTF-8 twice, four times when it is not ASCII,
    and DELTA_OVERHEAD_BYTES; another event's encoding and EVENT_OVERHEAD_BYTES), for the store's
    bound; `trim()` drops the events every reader has passed.
    """

    def __init__(self, stream_id: str, events: AssistantMessageEventStream, *, background: bool) -> None:
        self.stream_id = stream_id
        self.events = events  # the model's stream: cancel() stops the call
        self.background = background
        self.first_seq = 1  # the number of the first event held
        # The events held are _entries[_head:] (a list, so a reader anywhere reaches its event at
        # once), each with its size; trim() frees those before _head.
        self._entries: list[Entry | None] = []
        self._sizes: list[int] = []
        self._head = 0
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
        return self.first_seq + len(self._entries) - self._head - 1

    @property
    def held(self) -> int:
        """How many events the journal holds."""
        return len(self._entries) - self._head

    def follow(self) -> None:
        """Number and keep each event of the model's stream as the model pushes it, until its
        terminal event: the journal is the stream's one consumer, so it needs no task."""
        events = self.events
        while events.peek() is not None:  # pushed before the journal followed
            self._keep(events.take())
        events.sink = self._keep

    def _keep(self, event: ModelEvent) -> None:
        """The model's next event: numbered, then kept (a kept delta's number is its place)."""
        kept = _kept_delta(event)
        if kept is None:
            self.number(event, self.last_seq + 1)
        self._append(event, kept)

    async def publish_and_record(self, publish: Publish) -> None:
        """Number each event of the model's stream until its terminal event, publish the events
        that arrived together, then keep them: readers see only events published (so a reader
        elsewhere never lacks one a reader here was sent)."""
        numbered = 0
        async for event in self.events:
            batch = [event]
            while self.events.peek() is not None:
                batch.append(self.events.take())
            for each in batch:
                numbered += 1
                self.number(each, numbered)
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
        self._append(event, _kept_delta(event))

    def _append(self, event: ModelEvent, kept: tuple[str, int, str] | None) -> None:
        if self.done:
            return
        entry: Entry
        if kept is not None:
            entry = kept
            text = kept[2]
            # A delta is held twice: here, and in the content the stream builds, which the
            # terminal event's message holds (so its encoding counts without what the deltas
            # did). Text that is not ASCII is held as Python's characters (2 or 4 bytes each for
            # most), and once encoded, as the UTF-8 Python keeps beside them: twice its UTF-8.
            if text.isascii():
                delta = len(text)
                size = 2 * delta
            else:
                delta = len(text.encode())
                size = 4 * delta
            self._delta_bytes += delta
            size += SHARED_DELTA_OVERHEAD_BYTES if len(text) <= 1 and text <= "\xff" else DELTA_OVERHEAD_BYTES
        else:
            entry = event
            self.done = is_terminal(event)
            if (body := delta_of(event)) is not None and type(body.delta) is str:
                self._delta_bytes += utf8_size(body.delta)
            encoded = len(encode(without_partial(event)))
            size = EVENT_OVERHEAD_BYTES + (max(0, encoded - self._delta_bytes) if self.done else encoded)
        self._entries.append(entry)
        self._sizes.append(size)
        self.size += size
        if self._waiters:
            self.wake()
        self.on_size(self, size)
        if self.done:
            for callback in self.on_end:
                callback()

    def event(self, seq: int) -> ModelEvent | None:
        """Event `seq`, as it was recorded; None when it is not recorded yet. Raises Gone when it
        was dropped."""
        at = seq - self.first_seq
        if at < 0:
            raise Gone(f"stream {self.stream_id} no longer holds event {seq}")
        at += self._head
        if at >= len(self._entries):
            return None
        entry = self._entries[at]
        if type(entry) is tuple:
            kind, index, text = entry
            event = delta_event[kind](index, text)
            event.seq = seq
            return event
        return entry  # type: ignore[return-value]

    def deltas(self, seq: int, limit: int) -> list[tuple[str, int, str]]:
        """The kept deltas from event `seq` on, as (kind, content index, text), up to `limit` of
        them, stopping at the first other event: a writer that takes a run of them at once makes
        no event object for each. Raises Gone when event `seq` was dropped."""
        at = seq - self.first_seq
        if at < 0:
            raise Gone(f"stream {self.stream_id} no longer holds event {seq}")
        entries = self._entries
        start = stop = self._head + at
        end = min(len(entries), start + limit)
        while stop < end and type(entries[stop]) is tuple:
            stop += 1
        return entries[start:stop]  # type: ignore[return-value]

    def release(self) -> None:
        """Let go of every event held (the store dropped the stream)."""
        self.first_seq = self.last_seq + 1
        self._entries, self._sizes, self._head = [], [], 0

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
        entries, sizes, head = self._entries, self._sizes, self._head
        last = len(entries) - 1 if self.done else len(entries)  # the terminal event stays
        stop = min(last, head + keep_from - self.first_seq)
        freed = sum(sizes[head:stop]) if stop > head else 0
        for at in range(head, stop):
            entries[at] = None
        if stop > head:
            self.first_seq += stop - head
            self._head = head = stop
        if head > 1024 and head * 2 > len(entries):  # the freed slots themselves, once they are most
            del entries[:head], sizes[:head]
            self._head = 0
        self.size -= freed
        return freed

    def wake(self) -> None:
        """Wake the readers waiting for the next event."""
        if not self._waiters:  # the common case while readers are behind: nothing to do
            return
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
        self._peeked: ModelEvent | None = None  # the next event, once peek() has made it

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
        if self._peeked is None and not self._ended:
            self._peeked = self.journal.event(self.next_seq)
        return self._peeked

    def take(self) -> ModelEvent:
        """Take the next event already recorded; raises IndexError when none is."""
        event = self.peek()
        if event is None:
            raise IndexError("no event is waiting")
        self._peeked = None
        self.next_seq += 1
        if is_terminal(event):
            self._ended = True
        return event

    def take_deltas(self, limit: int) -> tuple[int, list[tuple[str, int, str]]]:
        """Take the kept deltas waiting from the next event on (Journal.deltas), with the number
        of the first; none when the next event is another or not recorded yet."""
        seq = self.next_seq
        if self._peeked is not None or self._ended:
            return seq, []
        run = self.journal.deltas(seq, limit)
        self.next_seq += len(run)
        return seq, run

    def close(self) -> None:
        """Stop reading: iteration ends, and the journal no longer keeps events for this reader."""
        self._ended = True
        self._peeked = None
        self.journal.leave(self)
        self.journal.wake()

    def drop(self, why: str) -> None:
        """The store let the stream go before this reader reached its terminal event: iteration
        raises Gone saying `why`, so the client is told, not left with a stream cut short."""
        if not self._ended:
            self._dropped = why
        self.close()
