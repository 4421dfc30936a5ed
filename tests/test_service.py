"""The gRPC service end to end: server, client, failures, cancellation, health and reflection."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

import pi_proto as pp
from pi_proto.grpc.client import CallError, ModelClient
from pi_proto.grpc.methods import SERVICE
from pi_proto.grpc.outgoing import wire_event
from pi_proto.grpc.server import ModelServer
from pi_proto.models.scripted import ScriptedModel

from .helpers import (
    README_TURN,
    RecordingModel,
    drain,
    endless_script,
    health_status,
    kind,
    raw_status,
    readme_context,
    serve_process,
)


async def test_server_streams_the_readme_round_trip_end_to_end() -> None:
    async with (
        ModelServer(ScriptedModel.readme(delta_size=5)) as server,
        ModelClient(server.target) as client,
    ):
        seen, message = await drain(client.stream(readme_context()))
    assert [kind(event) for event in seen] == [
        "start", "text_start", "text_delta", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_end",
        "done",
    ]  # fmt: skip
    assert all(event.partial is not None for event in seen)
    assert seen[-1].done is not None
    assert seen[-1].done.message is message
    assert message.stop_reason == pp.StopReason.TOOL_USE
    assert pp.text_of(message) == "我先读取项目说明。"
    call = message.content[1].tool_call
    assert call is not None
    assert pp.tool_call_arguments(call) == {"path": "README.md"}


async def test_client_partial_equals_server_partial_at_every_event() -> None:
    from .conformance.wire_cases import ASSISTANT

    model = RecordingModel(ASSISTANT)
    async with ModelServer(model) as server, ModelClient(server.target) as client:
        client_partials = [
            pp.encode(event.partial or pp.AssistantMessage()) async for event in client.stream(readme_context())
        ]
    assert len(client_partials) > 20
    assert client_partials == model.partials


def test_an_event_with_two_kinds_never_reaches_the_wire() -> None:
    event = pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x"))
    event.done = pp.DoneEvent(reason=pp.StopReason.STOP, message=pp.assistant_message(timestamp=1))
    with pytest.raises(pp.EncodeError, match="found text_delta, done"):
        wire_event(event)
    with pytest.raises(pp.EncodeError, match="found none"):
        wire_event(pp.ModelEvent())


async def test_events_are_sent_without_partial() -> None:
    event = pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x"), partial=pp.assistant_message("big", timestamp=1))
    assert pp.decode(pp.ModelEvent, wire_event(event)) == pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x"))


async def test_cancel_after_first_event_aborts_and_stops_the_server_side_model() -> None:
    model = RecordingModel(pp.assistant_message("x" * 1000, timestamp=1), hold_after=1)  # never ends by itself
    async with ModelServer(model) as server, ModelClient(server.target) as client:
        events = client.stream(readme_context())
        first = await anext(events)
        assert kind(first) == "start"
        events.cancel()
        rest, message = await drain(events)
        assert [kind(event) for event in rest][-1] == "error"
        assert message.stop_reason == pp.StopReason.ABORTED

        await asyncio.wait(model.producers)  # the server notices the cancelled RPC and cancels the model's task
        assert model.producers[0].cancelled()
        server_side = await model.streams[0].result()
        assert server_side.stop_reason == pp.StopReason.ABORTED
        assert not [task for task in asyncio.all_tasks() if task in model.producers and not task.done()]


async def test_deadline_exceeded_becomes_an_error_event() -> None:
    model = ScriptedModel.readme(delay=0.5)
    async with ModelServer(model) as server, ModelClient(server.target) as client:
        seen, message = await drain(client.stream(readme_context(), timeout=0.2))
    assert kind(seen[-1]) == "error"
    assert message.stop_reason == pp.StopReason.ERROR
    assert message.error_message == "Deadline Exceeded"


async def test_a_status_error_becomes_an_error_event_with_the_status_message() -> None:
    async with ModelServer(ScriptedModel.readme()) as server, ModelClient(server.target) as client:
        _, message = await drain(client.stream(readme_context(), model="gpt-9"))
    assert message.stop_reason == pp.StopReason.ERROR
    assert message.error_message == "model 'gpt-9' is not served: this server serves scripted/scripted-v1"


async def test_no_server_is_an_error_event_not_an_exception() -> None:
    async with ModelServer(ScriptedModel.readme()) as server:
        target = server.target
    async with ModelClient(target) as client:
        seen, message = await drain(client.stream(readme_context(), timeout=5))
    assert [kind(event) for event in seen] == ["error"]
    assert message.stop_reason == pp.StopReason.ERROR
    assert message.error_message


async def test_server_killed_mid_stream_gives_the_client_an_error_event(tmp_path: Path) -> None:
    flags = ("--script", str(endless_script(tmp_path)), "--delta-size", "1", "--delay", "0.05")
    with serve_process(*flags) as (process, target):
        async with ModelClient(target) as client:
            events = client.stream(readme_context())
            first = await anext(events)
            assert kind(first) == "start"
            os.kill(process.pid, signal.SIGKILL)
            rest, message = await drain(events)
    assert kind(rest[-1]) == "error"
    assert message.stop_reason == pp.StopReason.ERROR
    assert message.error_message


async def test_graceful_shutdown_ends_in_flight_streams_with_aborted() -> None:
    server = ModelServer(RecordingModel(README_TURN, hold_after=1))  # in flight until stopped
    await server.start()
    async with ModelClient(server.target) as client:
        events = client.stream(readme_context())
        await anext(events)
        await server.stop(grace=5)
        _, message = await drain(events)
    assert message.stop_reason == pp.StopReason.ABORTED
    assert message.error_message == "the server is shutting down"


async def test_server_restarted_serves_new_calls() -> None:
    async with ModelServer(ScriptedModel.readme()) as first:
        port = first.port
    async with ModelServer(ScriptedModel.readme(), port=port) as second, ModelClient(second.target) as client:
        _, message = await drain(client.stream(readme_context()))
    assert message.stop_reason == pp.StopReason.TOOL_USE


@pytest.mark.parametrize(
    ("request_bytes", "message"),
    [
        (b"\x12\x05ab", "cannot decode StreamRequest from 4 bytes"),
        (pp.encode(pp.StreamRequest(model="scripted-v1")), r"^context: .*\[required\]$"),
        (b"\x12\x02\x12\x00", r"^context.messages\[0\].role: .*\[required\]$"),  # a message with no role
    ],
)
async def test_malformed_requests_are_invalid_argument_naming_the_field(request_bytes: bytes, message: str) -> None:
    async with ModelServer(ScriptedModel.readme()) as server:
        error = await raw_status(server.target, request_bytes)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert re.search(message, error.details() or "")


def reflection_call(channel: grpc.aio.Channel) -> grpc.aio.StreamStreamMultiCallable[Any, Any]:
    return channel.stream_stream(
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )


async def test_health_and_reflection_are_served() -> None:
    async with ModelServer(ScriptedModel.readme()) as server, grpc.aio.insecure_channel(server.target) as channel:
        for service in ("", SERVICE):
            assert await health_status(server.target, service) == health_pb2.HealthCheckResponse.SERVING

        requests = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE),
        ]
        replies = [reply async for reply in reflection_call(channel)(iter(requests))]
    services = {service.name for service in replies[0].list_services_response.service}
    assert SERVICE in services
    assert any(b"pi/ai/v1/service.proto" in data for data in replies[1].file_descriptor_response.file_descriptor_proto)


async def test_reflection_can_be_turned_off() -> None:
    server = ModelServer(ScriptedModel.readme(), reflection=False)
    async with server, grpc.aio.insecure_channel(server.target) as channel:
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            async for _ in reflection_call(channel)(iter([request])):
                pass
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED


class UsageModel:
    """Streams one text, reporting usage as a provider does: on the first event and the last delta."""

    info = pp.Model(id="usage", provider="tests")

    def stream(
        self, context: pp.AgentContext, options: pp.GenerationOptions | None = None
    ) -> pp.AssistantMessageEventStream:
        first, last = (
            pp.Usage(input=2000, output=0, total_tokens=2000),
            pp.Usage(input=2000, output=2, total_tokens=2002),
        )
        final = pp.assistant_message("Hi", usage=last, timestamp=1)
        events = pp.AssistantMessageEventStream()
        events.push(pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1)), usage=first))
        events.push(pp.ModelEvent(text_start=pp.TextStartEvent()))
        events.push(pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="H")))
        events.push(pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="i"), usage=last))
        events.push(pp.ModelEvent(text_end=pp.TextEndEvent()))
        events.push(pp.ModelEvent(done=pp.DoneEvent(reason=pp.StopReason.STOP, message=final)))
        return events


async def test_usage_changes_reach_the_client_partial_as_they_happen() -> None:
    async with ModelServer(UsageModel()) as server, ModelClient(server.target) as client:
        usage = [
            (event.partial.usage.input, event.partial.usage.output)
            async for event in client.stream(readme_context())
            if event.partial is not None and event.partial.usage is not None
        ]
    assert usage == [(2000, 0), (2000, 0), (2000, 0), (2000, 2), (2000, 2), (2000, 2)]


async def test_a_catalog_is_listed_and_each_model_found_by_provider_and_id() -> None:
    first = ScriptedModel.readme()
    second = ScriptedModel.readme(id="scripted-v2")
    async with ModelServer([first, second, UsageModel()]) as server, ModelClient(server.target) as client:
        listed = await client.list_models()
        assert [(model.provider, model.id) for model in listed] == [
            ("scripted", "scripted-v1"),
            ("scripted", "scripted-v2"),
            ("tests", "usage"),
        ]
        assert [model.id for model in await client.list_models("tests")] == ["usage"]
        assert (await client.get_model("scripted-v2")).name == "Scripted turns"
        with pytest.raises(CallError) as missing:
            await client.get_model("gpt-9", "openai")
        assert missing.value.status_code == "NOT_FOUND"
        served = "scripted/scripted-v1, scripted/scripted-v2, tests/usage"
        assert missing.value.detail == f"model openai/gpt-9 is not served: this server serves {served}"
        _, message = await drain(client.stream(readme_context(), provider="tests", model="usage"))
        assert pp.text_of(message) == "Hi"
        _, message = await drain(client.stream(readme_context(), model="scripted-v2"))
        assert message.stop_reason == pp.StopReason.TOOL_USE


def test_calculate_cost_is_pis_arithmetic() -> None:
    rates = pp.ModelCost(input=5, output=25, cache_read=0.5, cache_write=6.25)
    cost = pp.calculate_cost(rates, pp.Usage(input=1, output=114, cache_write=33637))
    assert (cost.input, cost.output, cost.cache_write, cost.total) == (0.000005, 0.00285, 0.21023125, 0.21308625)
    assert pp.calculate_cost(pp.Model(cost=rates), pp.Usage(input=1)).input == 0.000005
