"""A stream timeout reached before the model has answered still keeps the stream contract: `start`
(the model's header), then one `error` whose message names the model's api, provider and id; over
gRPC, Connect and SSE alike, for a provider that never answers or sends its headers slowly, a
model that never starts, and the scripted model."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pyqwest
import pytest

import pi_proto as pp
from pi_proto.grpc.client import ModelClient
from pi_proto.grpc.requests import ServerLimits
from pi_proto.grpc.server import ModelServer
from pi_proto.models.providers import ProviderModel
from pi_proto.models.providers.catalog import ModelConfig
from pi_proto.models.scripted import ScriptedModel
from pi_proto.stream.event_stream import AssistantMessageEventStream, ServedModel
from pi_proto.web import SSE_PATH, HttpModelClient, HttpServer, read_sse

from .helpers import readme_context
from .providers.harness import SECRET
from .providers.hostile import Exchange, HostileServer
from .providers.test_anthropic_messages import INFO as ANTHROPIC
from .providers.test_openai_completions import INFO as OPENAI

LIMITS = ServerLimits(stream_timeout=0.3)
TOO_LONG = "the stream ran longer than the server's limit of 0.3 s"


class NeverStarts:
    """A model whose stream never sends an event."""

    info = pp.Model(id="never", name="Never", api="tests-api", provider="tests")

    def stream(
        self, context: pp.AgentContext, options: pp.GenerationOptions | None = None
    ) -> AssistantMessageEventStream:
        events = AssistantMessageEventStream()
        events.drive(asyncio.Event().wait())  # type: ignore[arg-type]
        return events


async def never_answers(exchange: Exchange) -> None:
    await exchange.hang()


async def slow_headers(exchange: Exchange) -> None:
    """Headers a byte at a time, never done: each byte is news, so no idle timeout fires."""
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" + b"x-slow: " + b"z" * 10_000
    for byte in head:
        exchange.writer.write(bytes([byte]))
        await exchange.writer.drain()
        await asyncio.sleep(0.02)


async def over_each_protocol(model: ServedModel) -> dict[str, tuple[list[str], pp.AssistantMessage]]:
    """The kinds of the events a call gets, and its final message, over gRPC, Connect and SSE."""
    seen: dict[str, tuple[list[str], pp.AssistantMessage]] = {}
    async with ModelServer(model, limits=LIMITS) as grpc_server, HttpServer(grpc_server) as http_server:
        async with ModelClient(grpc_server.target) as client:
            seen["grpc"] = await kinds_and_result(client.stream(readme_context()))
        async with HttpModelClient(http_server.url) as http_client:
            seen["connect"] = await kinds_and_result(http_client.stream(readme_context()))
        events = [event async for event in sse_events(http_server.url)]
    last = events[-1]
    assert last["type"] == "error", last
    seen["sse"] = ([event["type"] for event in events], pp.assistant_from_pi(last["error"], "error"))
    return seen


async def kinds_and_result(events: AssistantMessageEventStream) -> tuple[list[str], pp.AssistantMessage]:
    kinds = [pp.event_kind(event)[0] async for event in events]
    return kinds, await events.result()


async def sse_events(url: str) -> AsyncIterator[Any]:
    body = pp.to_json(pp.StreamRequest(context=readme_context())).encode()
    headers = {"content-type": "application/json"}
    async with pyqwest.Client().stream("POST", url + SSE_PATH, headers=headers, content=body) as response:
        assert response.status == 200
        async for event in read_sse(response.content):
            yield event


def check(seen: dict[str, tuple[list[str], pp.AssistantMessage]], info: pp.Model) -> None:
    for protocol, (kinds, message) in seen.items():
        assert kinds[0] == "start", protocol
        assert kinds[-1] == "error", protocol
        assert (message.api, message.provider, message.model) == (info.api, info.provider, info.id), protocol
        assert message.stop_reason == pp.StopReason.ERROR, protocol
        assert message.error_message == TOO_LONG, protocol


@pytest.mark.parametrize("answer", [never_answers, slow_headers], ids=["no-answer", "slow-headers"])
@pytest.mark.parametrize("info", [ANTHROPIC, OPENAI], ids=lambda info: info.api)
async def test_a_provider_that_has_not_answered_gets_start_then_error(answer: Any, info: pp.Model) -> None:
    async with HostileServer(answer) as provider:
        served = dataclasses.replace(info, base_url=provider.base_url)
        seen = await over_each_protocol(ProviderModel(ModelConfig(info=served, api_key=SECRET)))
    check(seen, served)
    for kinds, _ in seen.values():
        assert kinds == ["start", "error"]


async def test_a_model_that_never_starts_gets_start_then_error() -> None:
    seen = await over_each_protocol(NeverStarts())
    check(seen, NeverStarts.info)
    for kinds, _ in seen.values():
        assert kinds == ["start", "error"]


async def test_the_scripted_model_does_the_same() -> None:
    model = ScriptedModel.readme(delay=10)  # starts at once, then waits longer than the timeout
    seen = await over_each_protocol(model)
    check(seen, model.info)
