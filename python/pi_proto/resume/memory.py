"""Kept streams in this process's memory: resumable from this process, within a byte bound."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable

from ..stream.event_stream import AssistantMessageEventStream
from .journal import Journal, JournalReader, Publish

# Defaults, as `pi-proto serve` documents them.
MAX_BYTES = 256 * 1024 * 1024
RETENTION_SECONDS = 600.0  # how long an ended stream can still be resumed
UNATTENDED_SECONDS = 30.0  # how long a running stream waits for a client that went away


class NotKept(Exception):
    """The store does not keep the stream asked for: it ended longer ago than the retention time,
    or never existed."""


class MemoryStore:
    """The streams of this process, each in a Journal, resumable by their stream id.

    A stream is kept while it runs and for `retention` seconds after its terminal event. One that
    did not ask for `background` and has had no reader for `unattended` seconds is cancelled, so
    a client that went away for good does not keep its model running. The journals hold at most
    `max_bytes` together: over it, the ended streams nobody reads go first, oldest first, then the
    running ones drop the events every reader has passed (resuming from before them is refused),
    then the ended streams still being read, but for the stream that just grew (its readers are
    told: their iteration raises Gone).
    """

    def __init__(
        self,
        *,
        max_bytes: int = MAX_BYTES,
        retention: float = RETENTION_SECONDS,
        unattended: float = UNATTENDED_SECONDS,
    ) -> None:
        for name, value in (("max_bytes", max_bytes), ("retention", retention), ("unattended", unattended)):
            if not value >= 0:
                raise ValueError(f"{name} must be 0 or more, not {value!r}")
        self.max_bytes = max_bytes
        self.retention = retention
        self.unattended = unattended
        self.size = 0
        self._journals: dict[str, Journal] = {}  # oldest first
        self._timers: dict[str, asyncio.TimerHandle] = {}  # per stream: its expiry or its cancel
        self._recorders: set[asyncio.Task[None]] = set()

    # Where a subclass publishes each journal's events before its readers see them; None here.
    publish: Publish | None = None

    def __len__(self) -> int:
        return len(self._journals)

    def keep(self, events: AssistantMessageEventStream, *, background: bool = False) -> Journal:
        """Start keeping a call's events under a new stream id."""
        stream_id = secrets.token_urlsafe(16)
        journal = Journal(stream_id, events, background=background)
        journal.on_size = self._grew
        journal.on_readers = self._attendance
        self._journals[stream_id] = journal
        if self.publish is None:
            journal.follow()
        else:
            recorder = asyncio.ensure_future(journal.publish_and_record(self.publish))
            self._recorders.add(recorder)
            recorder.add_done_callback(self._recorders.discard)
        return journal

    async def reader(self, stream_id: str, after_seq: int) -> JournalReader:
        """A reader of a kept stream after event `after_seq`; raises NotKept, or Gone when the
        stream no longer holds the events after `after_seq`."""
        journal = self._journals.get(stream_id)
        if journal is None:
            raise NotKept(
                f"stream {stream_id} is not kept here: it ended more than {self.retention:g} s ago, "
                "was dropped to stay within the server's byte bound, or never existed"
            )
        return journal.reader(after_seq)

    async def cancel(self, stream_id: str) -> bool:
        """Cancel a kept stream: True when it was running and now ends ABORTED, False when it had
        already ended; raises NotKept."""
        journal = self._journals.get(stream_id)
        if journal is None:
            raise NotKept(f"stream {stream_id} is not kept here")
        if journal.done or journal.events.done:
            return False
        journal.events.cancel("cancelled by ModelService.Cancel")
        return True

    def close(self) -> None:
        """Forget every stream and stop the timers (the server is stopping)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._journals.clear()
        self.size = 0

    def _grew(self, journal: Journal, grown: int) -> None:
        self.size += grown
        if journal.done:
            self._set_timer(journal, self.retention, self._expire)
        if self.size > self.max_bytes:
            self._shrink(journal)

    def _attendance(self, journal: Journal) -> None:
        if journal.done or journal.background:
            return
        if journal.readers:
            self._cancel_timer(journal)
        else:
            self._set_timer(journal, self.unattended, self._abandon)

    def _shrink(self, grown: Journal) -> None:
        # Ended streams nobody reads, then what running streams' readers have passed, then ended
        # streams that are still being read (their readers end where they are), but for the one
        # that grew: a stream's own terminal event must not cut off the client reading it live.
        for stream_id, journal in list(self._journals.items()):
            if self.size <= self.max_bytes:
                return
            if journal.done and not journal.readers:
                self._forget(stream_id, "to stay within the server's byte bound")
        for journal in self._journals.values():
            if self.size <= self.max_bytes:
                return
            self.size -= journal.trim()
        for stream_id, journal in list(self._journals.items()):
            if self.size <= self.max_bytes:
                return
            if journal.done and journal is not grown:
                self._forget(stream_id, "to stay within the server's byte bound")

    def _expire(self, journal: Journal) -> None:
        self._forget(journal.stream_id, f"{self.retention:g} s after it ended")

    def _abandon(self, journal: Journal) -> None:
        self._timers.pop(journal.stream_id, None)
        if not journal.readers:
            journal.events.cancel(f"no client read the stream for {self.unattended:g} s")

    def _forget(self, stream_id: str, why: str) -> None:
        self._cancel_timer_of(stream_id)
        journal = self._journals.pop(stream_id, None)
        if journal is not None:
            self.size -= journal.size
            # Its readers end where they are, told so: a client that stopped reading must not
            # keep memory alive that the store no longer counts.
            for reader in list(journal.readers):
                reader.drop(f"stream {stream_id} was dropped {why} before this client read its end")
            journal.release()

    def _set_timer(self, journal: Journal, delay: float, action: Callable[[Journal], None]) -> None:
        self._cancel_timer(journal)
        loop = asyncio.get_running_loop()
        self._timers[journal.stream_id] = loop.call_later(delay, action, journal)

    def _cancel_timer(self, journal: Journal) -> None:
        self._cancel_timer_of(journal.stream_id)

    def _cancel_timer_of(self, stream_id: str) -> None:
        if (timer := self._timers.pop(stream_id, None)) is not None:
            timer.cancel()
