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
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Any

from .._gen.types.pi.ai.v1 import ErrorEvent, ModelEvent, StopReason
from ..ir.events import is_terminal, without_partial
from ..stream.accumulator import Accumulator
from ..stream.digest import content_sha256
from ..stream.event_stream import AssistantMessageEventStream
from ..wire.codec import decode, encode
from .journal import Gone, Journal, JournalReader
from .memory import MAX_BYTES, RETENTION_SECONDS, UNATTENDED_SECONDS, MemoryStore, NotKept

PREFIX = "pi-proto:"
CANCELS = PREFIX + "cancel"  # the channel of stream ids to cancel
OWNER_TTL_MS = 3000  # how long a producer that stopped refreshing still counts as alive
REFRESH_SECONDS = 1.0
RUNNING_TTL_MS = 3600 * 1000  # a running stream's key outlives a producer killed by this much
BLOCK_MS = 1000  # how long a reader waits for an event before it checks the producer
STOPPED = "the server producing this stream stopped before its end"


def events_key(stream_id: str) -> str:
    return f"{PREFIX}stream:{stream_id}"


def owner_key(stream_id: str) -> str:
    return f"{PREFIX}owner:{stream_id}"


def readers_key(stream_id: str) -> str:
    return f"{PREFIX}readers:{stream_id}"


class RedisStore(MemoryStore):
    """MemoryStore's streams, published to Redis at `url` so every replica can resume them.

    This replica's own readers read its memory, within `max_bytes`; other replicas read Redis,
    where an ended stream stays `retention` seconds. Call start() before serving, close_redis()
    after.
    """

    def __init__(
        self,
        url: str,
        *,
        max_bytes: int = MAX_BYTES,
        retention: float = RETENTION_SECONDS,
        unattended: float = UNATTENDED_SECONDS,
    ) -> None:
        super().__init__(max_bytes=max_bytes, retention=retention, unattended=unattended)
        from redis import asyncio as aioredis  # the `redis` extra: imported only when asked for

        self.url = url
        self.redis: Any = aioredis.from_url(url)
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Check that Redis answers (raises OSError saying so), then listen for cancels and keep
        this replica's streams alive."""
        from redis.exceptions import RedisError

        try:
            await self.redis.ping()
        except (RedisError, OSError) as error:
            raise OSError(f"cannot reach Redis at {self.url}: {error}") from None
        pubsub = self.redis.pubsub()
        await pubsub.subscribe(CANCELS)
        self._tasks = [asyncio.ensure_future(self._listen(pubsub)), asyncio.ensure_future(self._refresh())]

    async def close_redis(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.redis.aclose()

    async def publish(self, journal: Journal, events: list[ModelEvent]) -> None:
        """Add `events` to the stream's Redis stream; its owner key says this replica produces it."""
        key, pipe = events_key(journal.stream_id), self.redis.pipeline(transaction=False)
        for event in events:
            pipe.xadd(key, {"e": encode(without_partial(event))}, id=f"{event.seq}-0")
        ended = is_terminal(events[-1])
        pipe.pexpire(key, int(self.retention * 1000) if ended else RUNNING_TTL_MS + int(self.retention * 1000))
        if ended:
            pipe.delete(owner_key(journal.stream_id))
        elif events[0].start is not None:
            pipe.set(owner_key(journal.stream_id), b"1", px=OWNER_TTL_MS)
        await pipe.execute()

    async def reader(self, stream_id: str, after_seq: int) -> JournalReader | RedisReader:  # type: ignore[override]
        """This replica's reader of a stream it produces, else a reader of Redis; raises NotKept
        or Gone."""
        with contextlib.suppress(NotKept):
            return await super().reader(stream_id, after_seq)
        last = await self.redis.xrevrange(events_key(stream_id), count=1)
        if not last:
            raise NotKept(
                f"stream {stream_id} is not kept here or in Redis: it ended more than {self.retention:g} s ago, "
                "or never existed"
            )
        last_seq = int(last[0][0].split(b"-")[0])
        if after_seq > last_seq:
            raise Gone(f"stream {stream_id} has {last_seq} events so far, not {after_seq}")
        return RedisReader(self, stream_id, after_seq)

    async def cancel(self, stream_id: str) -> bool:
        """Cancel a stream, here or on the replica producing it; raises NotKept."""
        with contextlib.suppress(NotKept):
            return await super().cancel(stream_id)
        last = await self.redis.xrevrange(events_key(stream_id), count=1)
        if not last:
            raise NotKept(f"stream {stream_id} is not kept here or in Redis")
        if is_terminal(decode(ModelEvent, last[0][1][b"e"])):
            return False
        await self.redis.publish(CANCELS, stream_id)
        return True

    def _abandon(self, journal: Journal) -> None:
        """Cancel an unattended stream unless a replica reads it for a client elsewhere."""
        task = asyncio.ensure_future(self._abandon_unless_read(journal))
        self._recorders.add(task)  # held until done, as the recorders are
        task.add_done_callback(self._recorders.discard)

    async def _abandon_unless_read(self, journal: Journal) -> None:
        if await self.redis.exists(readers_key(journal.stream_id)):
            self._set_timer(journal, self.unattended, self._abandon)
        else:
            super()._abandon(journal)

    async def _listen(self, pubsub: Any) -> None:
        async for message in pubsub.listen():
            if message.get("type") == "message":
                journal = self._journals.get(message["data"].decode())
                if journal is not None:
                    journal.events.cancel("cancelled by ModelService.Cancel")

    async def _refresh(self) -> None:
        """Keep the owner keys of this replica's running streams alive."""
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            running = [stream_id for stream_id, journal in self._journals.items() if not journal.done]
            if running:
                pipe = self.redis.pipeline(transaction=False)
                for stream_id in running:
                    pipe.set(owner_key(stream_id), b"1", px=OWNER_TTL_MS)
                with contextlib.suppress(Exception):  # Redis away for a moment: the next round tries again
                    await pipe.execute()


class RedisReader:
    """A reader of a stream another replica produces, from Redis: what its client missed, then
    the rest as it is published. Iterate it as a JournalReader."""

    def __init__(self, store: RedisStore, stream_id: str, after_seq: int) -> None:
        self.store = store
        self.stream_id = stream_id
        self.next_seq = after_seq + 1
        self.events = AssistantMessageEventStream()  # none of this replica's: cancel() ends nothing
        self._waiting: deque[ModelEvent] = deque()
        self._ended = False
        self._heartbeat = asyncio.ensure_future(self._attend())

    def __aiter__(self) -> RedisReader:
        return self

    async def __anext__(self) -> ModelEvent:
        while not self._waiting:
            if self._ended:
                raise StopAsyncIteration
            await self._read()
        return self.take()

    def peek(self) -> ModelEvent | None:
        return self._waiting[0] if self._waiting else None

    def take(self) -> ModelEvent:
        event = self._waiting.popleft()
        self.next_seq = event.seq + 1
        if is_terminal(event):
            self._ended = True
            self._waiting.clear()
            self._heartbeat.cancel()
        return event

    def close(self) -> None:
        self._ended = True
        self._heartbeat.cancel()

    async def _read(self) -> None:
        redis, key = self.store.redis, events_key(self.stream_id)
        found = await redis.xread({key: f"{self.next_seq - 1 + len(self._waiting)}-0"}, block=BLOCK_MS, count=512)
        for _, entries in found:
            self._waiting.extend(decode(ModelEvent, fields[b"e"]) for _, fields in entries)
        if not found and not self._ended and not await redis.exists(owner_key(self.stream_id)):
            await self._end_orphan()

    async def _end_orphan(self) -> None:
        """End a stream whose producer is gone, after its last event published: an ERROR event
        with what the events built, added to Redis unless another replica added one first."""
        redis, key = self.store.redis, events_key(self.stream_id)
        accumulator = Accumulator()
        entries = await redis.xrange(key)
        for _, fields in entries:
            event = decode(ModelEvent, fields[b"e"])
            if is_terminal(event):
                return  # ended meanwhile: the next read gets it
            accumulator.apply(event)
        message = accumulator.partial
        message.stop_reason, message.error_message = StopReason.ERROR, STOPPED
        error = ErrorEvent(reason=StopReason.ERROR, message=message, content_sha256=content_sha256(message.content))
        seq = len(entries) + 1
        with contextlib.suppress(Exception):  # another replica ended it first: read theirs
            await redis.xadd(key, {"e": encode(ModelEvent(error=error, seq=seq))}, id=f"{seq}-0")
            await redis.pexpire(key, int(self.store.retention * 1000))

    async def _attend(self) -> None:
        """Say, while this reader reads, that the stream has a reader."""
        while True:
            with contextlib.suppress(Exception):
                await self.store.redis.set(readers_key(self.stream_id), b"1", px=OWNER_TTL_MS)
            await asyncio.sleep(REFRESH_SECONDS)
