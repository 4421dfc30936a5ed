"""The gRPC interop cases, adapted to ModelService: one small test per case, named after it."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_health.v1 import health_pb2

import pi_proto as pp
from pi_proto.grpc.client import ModelClient
from pi_proto.grpc.requests import ServerLimits
from pi_proto.grpc.server import ECHO_INITIAL, ECHO_TRAILING, ModelServer
from pi_proto.models.scripted import ScriptedModel
from pi_proto.stream.event_stream import AssistantMessageEventStream, ModelRefused

from .helpers import (
    README_TURN,
    RecordingModel,
    WatchedModel,
    drain,
    health_status,
    kind,
    raw_status,
    readme_context,
)


class RefusingModel:
    """A model that refuses every call with one gRPC status."""

    info = pp.Model(id="refusing", provider="tests")

    def __init__(self, code: str, message: str) -> None:
        self.code, self.message = code, message

    def stream(
        self, context: pp.AgentContext, options: pp.GenerationOptions | None = None
    ) -> AssistantMessageEventStream:
        raise ModelRefused(self.code, self.message)


async def test_server_streaming() -> None:
    async with ModelServer(ScriptedModel.readme()) as server, ModelClient(server.target) as client:
        seen, message = await drain(client.stream(readme_context()))
    assert kind(seen[0]) == "start"
    assert kind(seen[-1]) == "done"
    assert message.stop_reason == pp.StopReason.TOOL_USE


async def test_cancel_after_first_response() -> None:
    model = RecordingModel(pp.assistant_message("x" * 10_000, timestamp=1), hold_after=1)  # never ends by itself
    async with ModelServer(model) as server, ModelClient(server.target) as client:
        events = client.stream(readme_context())
        assert kind(await anext(events)) == "start"
        events.cancel()
        await asyncio.wait(model.producers)  # only the server's cancel can end it
        _, message = await drain(events)
    assert message.stop_reason == pp.StopReason.ABORTED
    assert model.producers[0].cancelled()
    assert [task for task in asyncio.all_tasks() if task in model.producers] == []


async def test_timeout_on_sleeping_server() -> None:
    async with ModelServer(ScriptedModel.readme(delay=5)) as server, ModelClient(server.target) as client:
        seen, message = await drain(client.stream(readme_context(), timeout=0.2))
    assert kind(seen[-1]) == "error"
    assert (message.stop_reason, message.error_message) == (pp.StopReason.ERROR, "Deadline Exceeded")


@pytest.mark.parametrize(
    "status_message",
    [
        "test status message",
        "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n",  # special_status_message
    ],
    ids=["status_code_and_message", "special_status_message"],
)
async def test_status_code_and_message(status_message: str) -> None:
    async with ModelServer(RefusingModel("UNKNOWN", status_message)) as server:
        error = await raw_status(server.target, pp.encode(pp.StreamRequest(context=readme_context())))
        assert error.code() == grpc.StatusCode.UNKNOWN
        async with ModelClient(server.target) as client:
            seen, message = await drain(client.stream(readme_context()))
    assert [kind(event) for event in seen] == ["error"]
    assert message.stop_reason == pp.StopReason.ERROR
    assert message.error_message == status_message


async def test_custom_metadata() -> None:
    echo = ((ECHO_INITIAL, "test_initial_metadata_value"), (ECHO_TRAILING, b"\xab\xab\xab"))
    async with ModelServer(ScriptedModel.readme()) as server, ModelClient(server.target) as client:
        events = client.stream(readme_context(), metadata=echo)
        _, message = await drain(events)
        initial, trailing = await events.initial_metadata(), await events.trailing_metadata()
    assert message.stop_reason == pp.StopReason.TOOL_USE
    assert (ECHO_INITIAL, "test_initial_metadata_value") in initial
    assert (ECHO_TRAILING, b"\xab\xab\xab") in trailing


async def test_max_message_size_exceeded() -> None:
    limits = ServerLimits(max_request_bytes=64 * 1024)
    big = pp.AgentContext(messages=[pp.agent_message(pp.user_message("x" * 100_000))])
    async with ModelServer(ScriptedModel.readme(), limits=limits) as server:
        error = await raw_status(server.target, pp.encode(pp.StreamRequest(context=big)))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert await health_status(server.target) == health_pb2.HealthCheckResponse.SERVING
        async with ModelClient(server.target) as client:
            _, refused = await drain(client.stream(big))
            _, served = await drain(client.stream(readme_context()))
    assert refused.stop_reason == pp.StopReason.ERROR
    assert refused.error_message
    assert served.stop_reason == pp.StopReason.TOOL_USE


async def test_a_slow_reader_does_not_grow_server_memory() -> None:
    long_turn = pp.assistant_message("y" * 50_000, timestamp=1)
    model = WatchedModel([long_turn], delta_size=1)  # 50,000 deltas
    # A fixed HTTP/2 window: grpc's automatic window growth depends on timing, and would make the
    # bound below depend on how busy the machine is.
    fixed_window = [("grpc.http2.bdp_probe", 0)]
    async with ModelServer(model) as server, ModelClient(server.target, channel_options=fixed_window) as client:
        events = client.stream(readme_context())
        deepest = 0
        for _ in range(40):
            await anext(events)
            await asyncio.sleep(0.01)
            deepest = max(deepest, model.streams[0].queued)
        produced = model.streams[0]._accumulator.count
        events.cancel()
        await drain(events)
    assert deepest <= model.streams[0].high_water
    # The model was held back: what it produced is bounded by the transport's buffers (about 100 KiB:
    # some 14,000 one-character deltas, batched), not by the turn's 50,000.
    assert produced < 20_000, produced


async def _consume(
    events: AssistantMessageEventStream, first_seen: asyncio.Event
) -> tuple[list[str], pp.AssistantMessage]:
    """Iterate `events`, setting `first_seen` once an event has arrived: the consumer then waits
    for the call's next message, where a test can cut the call; any exception reaches the test."""
    seen: list[str] = []
    async for event in events:
        seen.append(kind(event))
        first_seen.set()
    return seen, await events.result()


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "plain"])
@pytest.mark.parametrize("when", ["mid-stream", "before-iterating"])
async def test_closing_the_client_ends_open_streams_with_one_aborted_event(batched: bool, when: str) -> None:
    async with ModelServer(RecordingModel(README_TURN, hold_after=1)) as server:
        client = ModelClient(server.target, batched=batched)
        events = client.stream(readme_context())
        if when == "before-iterating":
            await client.close()
            seen, message = await _consume(events, asyncio.Event())
        else:
            first_seen = asyncio.Event()
            consumer = asyncio.create_task(_consume(events, first_seen))
            await first_seen.wait()
            await client.close()
            seen, message = await consumer  # the consumer's task is not cancelled: it raises nothing
    assert seen[-1] == "error"
    assert seen.count("error") == 1
    assert (message.stop_reason, message.error_message) == (pp.StopReason.ABORTED, "the client was closed")
    assert events.failure is None  # the caller's doing, as with cancel()
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]  # close() spared this task


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "plain"])
async def test_a_stream_started_after_close_ends_with_one_aborted_event(batched: bool) -> None:
    async with ModelServer(ScriptedModel.readme()) as server:
        client = ModelClient(server.target, batched=batched)
        await client.close()
        seen, message = await drain(client.stream(readme_context()))
    assert [kind(event) for event in seen] == ["error"]
    assert (message.stop_reason, message.error_message) == (pp.StopReason.ABORTED, "the client was closed")


async def test_the_catalog_calls_after_close_raise_call_error() -> None:
    async with ModelServer(ScriptedModel.readme()) as server:
        client = ModelClient(server.target)
        await client.close()
        with pytest.raises(pp.CallError) as listing:
            await client.list_models()
        with pytest.raises(pp.CallError) as getting:
            await client.get_model("scripted-v1")
    assert (listing.value.status_code, listing.value.detail) == ("CANCELLED", "the client was closed")
    assert getting.value.status_code == "CANCELLED"


async def test_cancel_from_another_task_ends_a_waiting_consumer_without_raising() -> None:
    async with ModelServer(RecordingModel(README_TURN, hold_after=1)) as server, ModelClient(server.target) as client:
        events = client.stream(readme_context())
        first_seen = asyncio.Event()
        consumer = asyncio.create_task(_consume(events, first_seen))
        await first_seen.wait()
        events.cancel()
        seen, message = await consumer
    assert seen[-1] == "error"
    assert message.stop_reason == pp.StopReason.ABORTED
    assert events.failure is None  # a cancel is the caller's, not a failure of the stream


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "plain"])
async def test_cancelling_the_consumers_task_propagates_and_aborts_the_stream(batched: bool) -> None:
    async with (
        ModelServer(RecordingModel(README_TURN, hold_after=1)) as server,
        ModelClient(server.target, batched=batched) as client,
    ):
        events = client.stream(readme_context())
        first_seen = asyncio.Event()
        consumer = asyncio.create_task(_consume(events, first_seen))
        await first_seen.wait()
        consumer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await consumer
        message = await events.result()
    assert (message.stop_reason, message.error_message) == (pp.StopReason.ABORTED, "cancelled")


async def test_cancelling_a_task_waiting_for_trailers_propagates() -> None:
    async with ModelServer(RecordingModel(README_TURN, hold_after=1)) as server, ModelClient(server.target) as client:
        events = client.stream(readme_context())
        waiting = asyncio.create_task(events.trailing_metadata())
        await asyncio.sleep(0.1)  # the trailers come with the status, which the held stream never sends
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting  # not swallowed into "no trailers"
        events.cancel()
