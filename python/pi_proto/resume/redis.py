"""Kept streams in Redis Streams: a stream one replica produces, any replica resumes.

Each stream is a Redis stream whose entry ids are the events' numbers (`<seq>-0`, field `e` the
event's encoding), so a replica resumes after event n with XRANGE and follows it live with
XREAD, and only one terminal event can ever be added after the last (XADD with an id not above
the last fails). The producing replica publishes each batch of events before its own readers
see them, so no reader elsewhere lacks an event a client here was sent. While it runs, it keeps
the stream's owner key alive; a replica reading a stream whose owner key expired (the producer
was killed) ends it with an ERROR event of its own, after the last event published. Cancel
reaches the producing replica over a pub/sub channel; a replica reading a stream for a client
keeps its readers key alive, so the producer does not cancel it as unattended.

Redis is not trusted to answer, nor to hold what replicas wrote. Every command has a time limit;
a Redis that fails ends each stream it concerns with an ERROR event saying the server lost its
Redis (never its address, password or exception, which only the server's log shows), and a call
that needs Redis to begin is refused with UNAVAILABLE. A reader checks every entry it reads (its
id, its field, its event and its number, the stream's rules), and ends its stream with an ERROR
event naming the entry that is wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import re
import sys
import urllib.parse
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

from .._gen.types.pi.ai.v1 import ErrorEvent, ModelEvent, StopReason
from ..ir.events import is_terminal, without_partial
from ..stream.accumulator import Accumulator, StreamProtocolError
from ..stream.digest import content_sha256
from ..stream.event_stream import AssistantMessageEventStream
from ..wire.codec import DecodeError, decode, encode
from .journal import Gone, Journal, JournalReader
from .memory import MAX_BYTES, RETENTION_SECONDS, UNATTENDED_SECONDS, MemoryStore, NotKept

PREFIX = "pi-proto:"
CANCELS = PREFIX + "cancel"  # the channel of stream ids to cancel
OWNER_TTL_MS = 3000  # how long a producer that stopped refreshing still counts as alive
REFRESH_SECONDS = 1.0
RUNNING_TTL_MS = 3600 * 1000  # a running stream's key outlives a producer killed by this much
BLOCK_MS = 1000  # how long a reader waits for an event before it checks the producer
READ_COUNT = 512  # entries read at once
# How long a Redis command may take before Redis counts as lost: above BLOCK_MS, which a reader's
# XREAD waits by itself.
TIMEOUT_SECONDS = 3.0
# The longest a reader waits for the next event of a stream another replica produces: no stream
# runs longer than the server's stream timeout (600 s unless set), so no event can come after that.
WAIT_SECONDS = 600.0
STOPPED = "the server producing this stream stopped before its end"
LOST = "the server lost its Redis"  # how a stream that lost Redis ends, followed by why

log = logging.getLogger("pi_proto.resume")


def events_key(stream_id: str) -> str:
    return f"{PREFIX}stream:{stream_id}"


def owner_key(stream_id: str) -> str:
    return f"{PREFIX}owner:{stream_id}"


def readers_key(stream_id: str) -> str:
    return f"{PREFIX}readers:{stream_id}"


_QUERY_PASSWORD = re.compile(r"(?i)([?&;]password=)[^&;#]*")


def redacted(url: str) -> str:
    """`url` with its password, if it has one, written `***`: for messages and logs. A URL too odd
    to parse (a raw `/` in its password, say) keeps only its user name before its last `@`."""
    scheme, sep, rest = url.partition("://")
    if sep:
        try:
            netloc = urllib.parse.urlsplit(url).netloc
        except ValueError:  # e.g. an unclosed IPv6 bracket
            netloc = ""
        userinfo, at, host = (netloc if "@" in netloc else rest).rpartition("@")
        if at and ":" in userinfo:
            hidden = f"{userinfo.partition(':')[0]}:***@{host}"
            rest = hidden + rest.removeprefix(netloc) if "@" in netloc else hidden
    return scheme + sep + _QUERY_PASSWORD.sub(r"\1***", rest)


class RedisRefusal(Exception):
    """A call refused for what Redis does or holds: `code` names the gRPC status it calls for,
    UNAVAILABLE (Redis does not answer; clients try again) or DATA_LOSS (Redis holds a corrupted
    event the client already has)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# How a store refuses a call: an exception made of a gRPC status code name and a message. A server
# passes its own (pi_proto.grpc's Refused, answered with that status by every protocol): this
# layer lies below the server's.
Refuse = Callable[[str, str], Exception]


class Corrupt(Exception):
    """A Redis entry that no replica wrote as it is: the message names the stream and the entry."""


class RedisStore(MemoryStore):
    """MemoryStore's streams, published to Redis at `url` so every replica can resume them.

    This replica's own readers read its memory, within `max_bytes`; other replicas read Redis,
    where an ended stream stays `retention` seconds. Each Redis command may take `timeout`
    seconds; a reader waits at most `max_wait` seconds for a stream's next event. A call Redis
    cannot serve is refused with `refuse(code, message)`. Call start() before serving,
    close_redis() after.
    """

    def __init__(
        self,
        url: str,
        *,
        max_bytes: int = MAX_BYTES,
        retention: float = RETENTION_SECONDS,
        unattended: float = UNATTENDED_SECONDS,
        timeout: float = TIMEOUT_SECONDS,
        max_wait: float = WAIT_SECONDS,
        refuse: Refuse = RedisRefusal,
    ) -> None:
        super().__init__(max_bytes=max_bytes, retention=retention, unattended=unattended)
        for name, value in (("timeout", timeout), ("max_wait", max_wait)):
            if not 0 < value < float("inf"):
                raise ValueError(f"{name} must be more than 0 seconds, not {value!r}")
        # The `redis` extra: imported only when asked for.
        from redis import asyncio as aioredis
        from redis import exceptions
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        self.url = url
        self.timeout = timeout
        self.max_wait = max_wait
        self.refuse = refuse
        # One retry on a broken connection (Redis restarted, an idle connection closed), none on
        # a timeout: a Redis that does not answer counts as lost after `timeout`, not ten of them.
        self.redis: Any = aioredis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 1, supported_errors=(exceptions.ConnectionError,)),
        )
        self._password: str | None = self.redis.connection_pool.connection_kwargs.get("password")
        # What a Redis command raises when Redis fails; a ResponseError is Redis refusing a command.
        self.errors: tuple[type[BaseException], ...] = (exceptions.RedisError, OSError, asyncio.TimeoutError)
        self.command_refused: type[Exception] = exceptions.ResponseError
        self._timeouts = (exceptions.TimeoutError, asyncio.TimeoutError)
        self._unpublished: weakref.WeakSet[Journal] = weakref.WeakSet()  # ended for want of Redis
        self._down = False  # whether the log says Redis is lost
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Check that Redis answers (raises OSError saying so), then listen for cancels and keep
        this replica's streams alive."""
        pubsub = self.redis.pubsub()
        try:
            await self.redis.ping()
            await pubsub.subscribe(CANCELS)
        except self.errors as error:
            with contextlib.suppress(Exception):
                await pubsub.aclose()
            raise OSError(f"cannot reach Redis at {redacted(self.url)}: {self._described(error)}") from None
        self._tasks = [asyncio.ensure_future(self._listen(pubsub)), asyncio.ensure_future(self._refresh())]

    async def close_redis(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.redis.aclose()

    async def publish(self, journal: Journal, events: list[ModelEvent]) -> None:
        """Add `events` to the stream's Redis stream; its owner key says this replica produces it.
        When Redis fails, the stream ends with an ERROR event saying so, kept here only."""
        if journal in self._unpublished:
            return
        key, pipe = events_key(journal.stream_id), self.redis.pipeline(transaction=False)
        for event in events:
            pipe.xadd(key, {"e": encode(without_partial(event))}, id=f"{event.seq}-0")
        ended = is_terminal(events[-1])
        pipe.pexpire(key, int(self.retention * 1000) if ended else RUNNING_TTL_MS + int(self.retention * 1000))
        if ended:
            pipe.delete(owner_key(journal.stream_id))
        elif events[0].start is not None:
            pipe.set(owner_key(journal.stream_id), b"1", px=OWNER_TTL_MS)
        try:
            await pipe.execute()
        except self.errors as error:
            self.failed(error, f"adding events of stream {journal.stream_id}")
            self._lose(journal, error)
        else:
            self.answered()

    async def reader(self, stream_id: str, after_seq: int) -> JournalReader | RedisReader:  # type: ignore[override]
        """This replica's reader of a stream it produces, else a reader of Redis; raises NotKept,
        Gone, or a refusal: UNAVAILABLE when Redis does not answer, DATA_LOSS when an event the
        client already has is corrupted in Redis (no terminal event could then agree with what the
        client built)."""
        with contextlib.suppress(NotKept):
            return await super().reader(stream_id, after_seq)
        reader = RedisReader(self, stream_id, after_seq)
        try:
            await reader.open()
        except self.errors as error:
            self.failed(error, f"resuming stream {stream_id}")
            raise self.refuse("UNAVAILABLE", f"{self.lost(error)}: stream {stream_id} cannot be resumed now") from None
        return reader

    async def cancel(self, stream_id: str) -> bool:
        """Cancel a stream, here or on the replica producing it; raises NotKept, or a refusal:
        UNAVAILABLE when Redis does not answer, DATA_LOSS when the stream's last entry is
        corrupted."""
        with contextlib.suppress(NotKept):
            return await super().cancel(stream_id)
        try:
            last = await self.redis.xrevrange(events_key(stream_id), count=1)
            if not last:
                raise NotKept(f"stream {stream_id} is not kept here or in Redis")
            try:
                ended = is_terminal(entry_event(stream_id, *last[0]))
            except Corrupt as problem:
                raise self.refuse("DATA_LOSS", str(problem)) from None
            if ended:
                return False
            await self.redis.publish(CANCELS, stream_id)
            self.answered()
        except self.errors as error:
            self.failed(error, f"cancelling stream {stream_id}")
            raise self.refuse(
                "UNAVAILABLE", f"{self.lost(error)}: stream {stream_id} cannot be cancelled now"
            ) from None
        return True

    def lost(self, error: BaseException) -> str:
        """What a client is told of a failed Redis: why, in words that show neither its address
        nor its password."""
        if isinstance(error, self._timeouts):
            why = f"no answer within {self.timeout:g} s"
        elif isinstance(error, self.command_refused):
            why = "it refused a command"
        else:
            why = "no connection"
        return f"{LOST} ({why})"

    def failed(self, error: BaseException, doing: str) -> None:
        """Log, once until Redis answers again, that Redis failed; the server's log only."""
        if not self._down:
            self._down = True
            log.warning("lost Redis at %s while %s: %s", redacted(self.url), doing, self._described(error))

    def answered(self) -> None:
        if self._down:
            self._down = False
            log.warning("Redis at %s answers again", redacted(self.url))

    def _described(self, error: BaseException) -> str:
        text = f"{type(error).__name__}: {error}"
        return text.replace(self._password, "***") if self._password else text

    def _lose(self, journal: Journal, error: BaseException) -> None:
        """End a running stream Redis failed: an ERROR event, kept here only."""
        self._unpublished.add(journal)
        journal.events.cancel(f"{self.lost(error)}: the stream cannot go on", StopReason.ERROR)

    def _abandon(self, journal: Journal) -> None:
        """Cancel an unattended stream unless a replica reads it for a client elsewhere."""
        task = asyncio.ensure_future(self._abandon_unless_read(journal))
        self._recorders.add(task)  # held until done, as the recorders are
        task.add_done_callback(self._recorders.discard)

    async def _abandon_unless_read(self, journal: Journal) -> None:
        try:
            read_elsewhere = await self.redis.exists(readers_key(journal.stream_id))
        except self.errors as error:  # no replica can read it without Redis
            self.failed(error, f"looking for readers of stream {journal.stream_id}")
            read_elsewhere = False
        if read_elsewhere:
            self._set_timer(journal, self.unattended, self._abandon)
        else:
            super()._abandon(journal)

    async def _listen(self, pubsub: Any) -> None:
        """Cancel the streams the channel names, subscribing again after Redis failed."""
        while True:
            try:
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        journal = self._journals.get(message["data"].decode(errors="replace"))
                        if journal is not None:
                            journal.events.cancel("cancelled by ModelService.Cancel")
            except Exception as error:  # the listener outlives whatever Redis does
                self.failed(error, "listening for cancels")
            with contextlib.suppress(Exception):
                await pubsub.aclose()
            await asyncio.sleep(REFRESH_SECONDS)
            pubsub = self.redis.pubsub()
            with contextlib.suppress(*self.errors):  # Redis still away: the next round tries again
                await pubsub.subscribe(CANCELS)
                self.answered()

    async def _refresh(self) -> None:
        """Keep the owner keys of this replica's running streams alive; when Redis fails, end
        them: their owner keys expire meanwhile, and other replicas end them for their readers."""
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            running = [
                journal for journal in self._journals.values() if not journal.done and journal not in self._unpublished
            ]
            if running:
                pipe = self.redis.pipeline(transaction=False)
                for journal in running:
                    pipe.set(owner_key(journal.stream_id), b"1", px=OWNER_TTL_MS)
                try:
                    await pipe.execute()
                except self.errors as error:
                    self.failed(error, "keeping its streams' owner keys alive")
                    for journal in running:
                        self._lose(journal, error)
                else:
                    self.answered()


def entry_event(stream_id: str, entry_id: bytes, fields: dict[bytes, bytes]) -> ModelEvent:
    """The event a Redis entry holds; raises Corrupt when it holds none."""
    where = f"stream {stream_id}: Redis entry {entry_id.decode(errors='replace')}"
    data = fields.get(b"e")
    if data is None:
        raise Corrupt(f"{where} has no field 'e', the event")
    try:
        return decode(ModelEvent, data)
    except DecodeError as error:
        raise Corrupt(f"{where} does not hold an event: {error}") from None


class RedisReader:
    """A reader of a stream another replica produces, from Redis: what its client missed, then
    the rest as it is published. Iterate it as a JournalReader, after open().

    It reads the stream from its first event, checking each entry and rebuilding the message, so
    an ERROR event of its own (its producer gone, Redis lost, an entry corrupted, an event that
    never comes) carries what the client built and its digest."""

    def __init__(self, store: RedisStore, stream_id: str, after_seq: int) -> None:
        self.store = store
        self.stream_id = stream_id
        self.after_seq = after_seq
        self.next_seq = after_seq + 1
        self.events = AssistantMessageEventStream()  # none of this replica's: cancel() ends nothing
        self._key = events_key(stream_id)
        self._read_seq = 0  # the number of the last event read, checked, and built
        # The producer bounded the message already: the reader only rebuilds it.
        self._built = Accumulator(max_message_bytes=sys.maxsize)
        self._waiting: deque[ModelEvent] = deque()
        self._finished = False  # nothing more is read: the terminal event was read, or made here
        self._closed = False
        self._waiting_since: float | None = None  # when the reader began to wait for its next event
        self._heartbeat: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Read and check the stream up to the client's last event; raises NotKept, Gone, the
        store's DATA_LOSS refusal for a corrupted entry the client already has, or what Redis
        raised."""
        while await self._fetch(block=False) and self._read_seq < self.after_seq and not self._finished:
            pass
        if self._read_seq == 0 and not self._finished:
            raise NotKept(
                f"stream {self.stream_id} is not kept here or in Redis: it ended more than "
                f"{self.store.retention:g} s ago, or never existed"
            )
        if self._read_seq < self.after_seq and not self._finished:
            raise Gone(f"stream {self.stream_id} has {self._read_seq} events so far, not {self.after_seq}")
        if not self._finished:
            self._heartbeat = asyncio.ensure_future(self._attend())

    def __aiter__(self) -> RedisReader:
        return self

    async def __anext__(self) -> ModelEvent:
        while not self._waiting:
            if self._finished or self._closed:
                raise StopAsyncIteration
            await self._follow()
        return self.take()

    def peek(self) -> ModelEvent | None:
        return self._waiting[0] if self._waiting and not self._closed else None

    def take(self) -> ModelEvent:
        event = self._waiting.popleft()
        self.next_seq = event.seq + 1
        if is_terminal(event):
            self._stop_attending()
        return event

    def close(self) -> None:
        self._closed = True
        self._waiting.clear()
        self._stop_attending()

    def _stop_attending(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()

    async def _fetch(self, *, block: bool) -> bool:
        """Read the entries after the last one read (waiting up to BLOCK_MS for one with `block`),
        checking each; whether any came. A corrupted one ends the stream here; raises what Redis
        raised, or the store's DATA_LOSS refusal when the client already has the corrupted event."""
        found = await self.store.redis.xread(
            {self._key: f"{self._read_seq}-0"}, count=READ_COUNT, block=BLOCK_MS if block else None
        )
        entries = [entry for _, stream_entries in found for entry in stream_entries]
        for entry_id, fields in entries:
            try:
                event = self._checked(entry_id, fields)
            except Corrupt as problem:
                if self._read_seq < self.after_seq:
                    raise self.store.refuse("DATA_LOSS", str(problem)) from None
                self._end(str(problem))
                break
            self._read_seq = event.seq
            if event.seq > self.after_seq:
                self._waiting.append(event)
            if is_terminal(event):
                self._finished = True
                break
        if entries:
            self.store.answered()
        return bool(entries)

    def _checked(self, entry_id: bytes, fields: dict[bytes, bytes]) -> ModelEvent:
        """The event an entry holds, when it is the next one, sound and fitting the stream so far
        (then built); raises Corrupt saying what is wrong."""
        expected = self._read_seq + 1
        where = f"stream {self.stream_id}: Redis entry {entry_id.decode(errors='replace')}"
        number, dash, sequence = entry_id.partition(b"-")
        if not (dash and number.isdigit() and sequence == b"0"):
            raise Corrupt(f"{where} is not numbered <seq>-0 as events are")
        if int(number) != expected:
            raise Corrupt(f"{where} comes where event {expected} should: event {expected} is missing")
        event = entry_event(self.stream_id, entry_id, fields)
        if event.seq != expected:
            raise Corrupt(f"{where} holds event {event.seq}, not event {expected}")
        try:
            self._built.apply(event)
        except StreamProtocolError as error:
            raise Corrupt(f"{where} does not fit the stream (rule '{error.rule_id}'): {error.detail}") from None
        return event

    async def _follow(self) -> None:
        """Wait for the next events; end the stream here when its producer is gone, Redis fails,
        or no event comes within the store's max_wait."""
        redis, loop = self.store.redis, asyncio.get_running_loop()
        if self._waiting_since is None:
            self._waiting_since = loop.time()
        try:
            if await self._fetch(block=True):
                self._waiting_since = None
                return
            if self._finished:
                return
            if not await redis.exists(owner_key(self.stream_id)):
                await self._end_orphan()
                return
        except self.store.errors as error:
            self.store.failed(error, f"reading stream {self.stream_id}")
            self._end(f"{self.store.lost(error)}: the stream cannot go on here")
            return
        if loop.time() - self._waiting_since > self.store.max_wait:
            self._end(
                f"stream {self.stream_id}: event {self._read_seq + 1} did not come within {self.store.max_wait:g} s, "
                "longer than any stream runs (the server's stream timeout)"
            )

    async def _end_orphan(self) -> None:
        """End a stream whose producer is gone, after its last event published: an ERROR event
        with what the events built, added to Redis unless another replica added one first."""
        event = self._error(STOPPED)
        pipe = self.store.redis.pipeline(transaction=False)
        pipe.xadd(self._key, {"e": encode(event)}, id=f"{event.seq}-0")
        pipe.pexpire(self._key, int(self.store.retention * 1000))
        try:
            await pipe.execute()
        except self.store.command_refused:  # an entry came meanwhile (another replica's end): read it
            if await self._fetch(block=False):
                return
        self._waiting.append(event)  # also when Redis refused it for no entry it holds
        self._finished = True

    def _end(self, why: str) -> None:
        """End the stream here, after the events read: an ERROR event saying `why`."""
        self._waiting.append(self._error(why))
        self._finished = True

    def _error(self, why: str) -> ModelEvent:
        """The ERROR event after the last event read: what the events built, and its digest."""
        message = copy.copy(self._built.partial)  # the builder's own is left as the events made it
        message.stop_reason, message.error_message = StopReason.ERROR, why
        error = ErrorEvent(reason=StopReason.ERROR, message=message, content_sha256=content_sha256(message.content))
        return ModelEvent(error=error, seq=self._read_seq + 1)

    async def _attend(self) -> None:
        """Say, while this reader reads, that the stream has a reader."""
        while True:
            with contextlib.suppress(*self.store.errors):
                await self.store.redis.set(readers_key(self.stream_id), b"1", px=OWNER_TTL_MS)
            await asyncio.sleep(REFRESH_SECONDS)
