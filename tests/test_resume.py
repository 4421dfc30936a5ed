"""Kept streams: numbered events, the content digest, Resume and Cancel, over real connections."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc
import pyqwest
import pytest

import pi_proto as pp
from pi_proto.grpc.server import ModelServer
from pi_proto.ir.events import events_of
from pi_proto.models.scripted import ScriptedModel
from pi_proto.resume import MemoryStore
from pi_proto.stream.digest import content_sha256
from pi_proto.stream.event_stream import ServedModel
from pi_proto.web import HttpModelClient, HttpServer
from pi_proto.web.sse import SSE_PATH

from .helpers import (
    README_TURN,
    Lockstep,
    RecordingModel,
    Rpc,
    WatchedModel,
    eventually,
    next_event,
    read_events,
    readme_context,
    stream_id_of,
    terminal_of,
)
from .proxy import CuttingProxy, read_cutting


def request(background: bool = False) -> bytes:
    """A request of a client that resumes, as every client of ours is."""
    return pp.encode(pp.StreamRequest(context=readme_context(), background=background, resumable=True))


@asynccontextmanager
async def kept(
    delay: float = 0.0, store: MemoryStore | None = None, token: str | None = None, model: ServedModel | None = None
) -> AsyncIterator[ModelServer]:
    model = ScriptedModel.readme(delta_size=2, delay=delay) if model is None else model
    async with ModelServer(model, streams=MemoryStore() if store is None else store, token=token) as server:
        yield server


async def test_a_kept_stream_numbers_its_events_names_itself_and_digests_its_content() -> None:
    async with kept() as server, grpc.aio.insecure_channel(server.target) as channel:
        events = await read_events(Rpc(channel).stream(request()))
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    assert len(stream_id_of(events[0])) == 22
    done = terminal_of(events[-1])
    assert events[-1].done is not None
    assert done.message is not None
    assert done.content_sha256 == content_sha256(done.message.content)


async def test_resume_sends_what_followed_the_last_event_with_the_same_numbers_and_bytes() -> None:
    async with kept() as server, grpc.aio.insecure_channel(server.target) as channel:
        first = [data async for data in Rpc(channel).stream(request())]
        stream_id = stream_id_of(pp.decode(pp.ModelEvent, first[0]))
        for after in (0, 1, 7, len(first) - 1, len(first)):
            asked = pp.encode(pp.ResumeRequest(stream_id=stream_id, after_seq=after))
            assert [data async for data in Rpc(channel).resume(asked)] == first[after:]


async def test_a_client_cut_off_mid_stream_resumes_through_a_new_connection_with_one_stream_for_its_consumer() -> None:
    # The model plays each event once the client has read the one before: when the proxy cuts, the
    # events after the cut are not played yet, and the client resumes to get them.
    model = Lockstep(README_TURN, delta_size=2)
    async with (
        kept(model=model) as server,
        CuttingProxy(server.target) as proxy,
        pp.ModelClient(proxy.target) as client,
    ):
        events = client.stream(readme_context())
        seen = []
        async for event in events:
            seen.append(event)
            if len(seen) in (5, 20):
                proxy.cut()
            model.read.release()
        message = await events.result()
    assert proxy.connections == 3  # the first call, and one for each resume
    assert events.failure is None
    assert message.stop_reason == pp.StopReason.TOOL_USE
    assert [event.seq for event in seen] == list(range(1, len(list(events_of(README_TURN, 2))) + 1))
    assert message == README_TURN


async def test_an_http_client_cut_off_mid_stream_resumes_too() -> None:
    model = Lockstep(README_TURN, delta_size=2)  # at the cut, the events after it are not played yet
    async with (
        kept(model=model) as server,
        HttpServer(server) as http,
        CuttingProxy(http.target) as proxy,
        HttpModelClient(f"http://{proxy.target}") as client,
    ):
        events = client.stream(readme_context())
        seen = []
        async for event in events:
            seen.append(event)
            if len(seen) == 6:
                proxy.cut()
            model.read.release()
        message = await events.result()
    assert events.failure is None
    assert message.stop_reason == pp.StopReason.TOOL_USE
    assert [event.seq for event in seen] == list(range(1, len(seen) + 1))
    assert proxy.connections >= 2


async def test_a_stream_whose_client_went_away_waits_for_a_resume_then_is_cancelled() -> None:
    store = MemoryStore(unattended=0.2)
    model = RecordingModel(README_TURN, hold_after=1)  # in flight until cancelled
    async with kept(store=store, model=model) as server, grpc.aio.insecure_channel(server.target) as channel:
        call = Rpc(channel).stream(request())
        start = await next_event(call)
        call.cancel()
        await model.streams[0].result()  # no client read it for 0.2 s: the store cancelled it
        asked = pp.encode(pp.ResumeRequest(stream_id=stream_id_of(start), after_seq=1))
        rest = await read_events(Rpc(channel).resume(asked))
    assert rest[-1].error is not None
    assert rest[-1].error.reason == pp.StopReason.ABORTED
    message = terminal_of(rest[-1]).message
    assert message is not None
    assert "no client read the stream for 0.2 s" in (message.error_message or "")


async def test_a_background_stream_runs_to_its_end_without_a_reader() -> None:
    store = MemoryStore(unattended=0.05)
    model = WatchedModel(ScriptedModel.readme().turns, delta_size=2, delay=0.005)
    async with kept(store=store, model=model) as server, grpc.aio.insecure_channel(server.target) as channel:
        call = Rpc(channel).stream(request(background=True))
        start = await next_event(call)
        call.cancel()
        assert (await model.streams[0].result()).stop_reason == pp.StopReason.TOOL_USE  # to its end, unread
        asked = pp.encode(pp.ResumeRequest(stream_id=stream_id_of(start)))
        events = await read_events(Rpc(channel).resume(asked))
    assert events[0] == start
    assert events[-1].done is not None


async def test_cancel_stops_a_running_stream_for_every_reader_and_says_whether_it_did() -> None:
    model = RecordingModel(README_TURN, hold_after=1)  # in flight until cancelled
    async with kept(model=model) as server, grpc.aio.insecure_channel(server.target) as channel:
        call = Rpc(channel).stream(request())
        stream_id = stream_id_of(await next_event(call))
        cancel = Rpc(channel).cancel
        answer = pp.decode(pp.CancelResponse, await cancel(pp.encode(pp.CancelRequest(stream_id=stream_id))))
        rest = await read_events(call)
        again = pp.decode(pp.CancelResponse, await cancel(pp.encode(pp.CancelRequest(stream_id=stream_id))))
        with pytest.raises(grpc.aio.AioRpcError) as unknown:
            await cancel(pp.encode(pp.CancelRequest(stream_id="nope")))
    assert answer.cancelled
    assert not again.cancelled
    assert rest[-1].error is not None
    assert rest[-1].error.reason == pp.StopReason.ABORTED
    assert unknown.value.code() == grpc.StatusCode.NOT_FOUND


async def test_a_client_that_cancels_tells_the_server_which_stops_the_model_at_once() -> None:
    model = RecordingModel(README_TURN, hold_after=1)  # in flight until cancelled
    async with (
        # Unattended, the stream would wait an hour for a resume: only the client's word ends it.
        ModelServer(model, streams=MemoryStore(unattended=3600)) as server,
        pp.ModelClient(server.target) as client,
    ):
        events = client.stream(readme_context())
        await anext(aiter(events))
        events.cancel()
        ended = await model.streams[0].result()
    assert ended.stop_reason == pp.StopReason.ABORTED


async def test_an_ended_stream_is_kept_for_the_retention_time_then_not_found() -> None:
    async with kept(store=MemoryStore(retention=0.1)) as server, grpc.aio.insecure_channel(server.target) as channel:
        events = await read_events(Rpc(channel).stream(request()))
        asked = pp.encode(pp.ResumeRequest(stream_id=stream_id_of(events[0])))
        assert len(await read_events(Rpc(channel).resume(asked))) == len(events)
        await asyncio.sleep(0.3)
        with pytest.raises(grpc.aio.AioRpcError) as gone:
            await read_events(Rpc(channel).resume(asked))
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND
    assert "is not kept here" in (gone.value.details() or "")


async def test_over_the_byte_bound_ended_streams_go_first_then_a_running_one_drops_what_was_read() -> None:
    store = MemoryStore(max_bytes=800)
    async with kept(delay=0.1, store=store) as server, grpc.aio.insecure_channel(server.target) as channel:
        ended = await read_events(Rpc(channel).stream(request()))
        call = Rpc(channel).stream(request())
        running = [await next_event(call) for _ in range(15)]
        stream_id = stream_id_of(running[0])
        assert store.size <= store.max_bytes
        with pytest.raises(grpc.aio.AioRpcError) as evicted:
            await read_events(Rpc(channel).resume(pp.encode(pp.ResumeRequest(stream_id=stream_id_of(ended[0])))))
        with pytest.raises(grpc.aio.AioRpcError) as trimmed:
            await read_events(Rpc(channel).resume(pp.encode(pp.ResumeRequest(stream_id=stream_id))))
        tail = await read_events(Rpc(channel).resume(pp.encode(pp.ResumeRequest(stream_id=stream_id, after_seq=14))))
    assert evicted.value.code() == grpc.StatusCode.NOT_FOUND
    assert trimmed.value.code() == grpc.StatusCode.OUT_OF_RANGE
    assert "dropped to stay within the server's byte bound" in (trimmed.value.details() or "")
    # every event after 14, to the terminal one; the first stream, read live, had every event too
    # (its own terminal event, over the bound, must not have dropped it while its client read it)
    assert [event.seq for event in tail] == list(range(15, len(ended) + 1))
    assert terminal_of(ended[-1]).message is not None


async def test_a_resume_after_an_event_not_yet_sent_is_out_of_range() -> None:
    async with kept() as server, grpc.aio.insecure_channel(server.target) as channel:
        events = await read_events(Rpc(channel).stream(request()))
        asked = pp.ResumeRequest(stream_id=stream_id_of(events[0]), after_seq=len(events) + 1)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await read_events(Rpc(channel).resume(pp.encode(asked)))
    assert refused.value.code() == grpc.StatusCode.OUT_OF_RANGE


async def test_resume_and_cancel_need_the_token_like_every_call() -> None:
    async with kept(token="s3cret") as server, grpc.aio.insecure_channel(server.target) as channel:
        asked = pp.encode(pp.ResumeRequest(stream_id="x"))
        with pytest.raises(grpc.aio.AioRpcError) as resumed:
            await read_events(Rpc(channel).resume(asked))
        with pytest.raises(grpc.aio.AioRpcError) as cancelled:
            await Rpc(channel).cancel(pp.encode(pp.CancelRequest(stream_id="x")))
    assert resumed.value.code() == cancelled.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_a_malformed_resume_request_is_invalid_argument_naming_the_field() -> None:
    async with kept() as server, grpc.aio.insecure_channel(server.target) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await read_events(Rpc(channel).resume(pp.encode(pp.ResumeRequest())))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "stream_id" in (refused.value.details() or "")


async def test_a_server_that_keeps_no_streams_numbers_nothing_and_resumes_nothing() -> None:
    async with ModelServer(ScriptedModel.readme()) as server, grpc.aio.insecure_channel(server.target) as channel:
        events = await read_events(Rpc(channel).stream(request()))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await read_events(Rpc(channel).resume(pp.encode(pp.ResumeRequest(stream_id="x"))))
    assert {event.seq for event in events} == {0}
    assert stream_id_of(events[0]) == ""
    assert terminal_of(events[-1]).content_sha256 == b""
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND


async def test_sse_events_carry_their_id_and_last_event_id_resumes_after_it() -> None:
    body = json.dumps({"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}).encode()
    async with kept() as server, HttpServer(server) as http:
        url = f"http://{http.target}{SSE_PATH}"
        headers = {"content-type": "application/json"}
        whole = (await pyqwest.Client().post(url, headers=headers, content=body)).content.decode()
        blocks = whole.split("\n\n")[:-1]
        last_id = blocks[4].splitlines()[0].removeprefix("id: ")
        resumed = await pyqwest.Client().post(url, headers={**headers, "last-event-id": last_id}, content=b"{}")
        bad = await pyqwest.Client().post(url, headers={**headers, "last-event-id": "no-number"}, content=b"{}")
    assert [block.splitlines()[0] for block in blocks] == [
        f"id: {last_id.rpartition(':')[0]}:{seq}" for seq in range(1, len(blocks) + 1)
    ]
    assert resumed.status == 200
    assert resumed.content.decode().split("\n\n")[:-1] == blocks[5:]
    done = json.loads(blocks[-1].partition("data: ")[2])
    assert len(done["contentSha256"]) == 44  # 32 bytes in base64
    assert bad.status == 400
    assert "Last-Event-ID" in json.loads(bad.content)["message"]


async def test_a_coalescing_client_resumes_and_accepts_merged_deltas() -> None:
    async with (
        kept(delay=0.002) as server,
        CuttingProxy(server.target) as proxy,
        pp.ModelClient(proxy.target) as client,
    ):
        events = client.stream(readme_context(), coalesce_deltas=True)
        seen, message = await read_cutting(events, proxy, lambda count: count == 4)
    assert events.failure is None
    assert message.stop_reason == pp.StopReason.TOOL_USE
    numbers = [event.seq for event in seen]
    assert numbers == sorted(set(numbers))
    assert numbers[0] == 1


async def test_a_client_whose_ended_stream_is_dropped_over_the_bound_is_told_so() -> None:
    store = MemoryStore()
    model = ScriptedModel([pp.assistant_message("x" * 3 * 2**20, timestamp=1)], delta_size=2**15)
    # Without BDP probing, the connection holds 64 KiB for a client that does not read.
    narrow = [("grpc.http2.bdp_probe", 0)]
    async with kept(store=store, model=model) as server, grpc.aio.insecure_channel(server.target, narrow) as channel:
        stalled = Rpc(channel).stream(request())
        await next_event(stalled)  # then it stops reading, its stream already past what the connection holds
        await eventually(lambda: store.size > 6 * 2**20, "the first model ran to its end")
        store.max_bytes = store.size  # the bound: what the first stream holds
        await read_events(Rpc(channel).stream(request()))  # a second stream takes the store over it
        with pytest.raises(grpc.aio.AioRpcError) as dropped:
            await read_events(stalled)
    assert dropped.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "dropped to stay within the server's byte bound" in (dropped.value.details() or "")
