"""pi-messages: recorded streams of a pi-messages backend (a gateway, another pi-proto), through our
server, and the requests pi sends it."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import pi_proto as pp
from pi_proto._gen.types.pi.ai.v1 import Diagnostic, SystemMessage, SystemSection, ToolReference
from pi_proto.grpc.server import ModelServer
from pi_proto.models.providers import ProviderModel, load_models, pi_messages
from pi_proto.models.providers.call import Call, ProviderError
from pi_proto.models.providers.catalog import ModelConfig
from pi_proto.models.providers.pi_messages import _Reader, event_data, url
from pi_proto.models.seed import readme_transcript
from pi_proto.stream.event_stream import AssistantMessageEventStream
from pi_proto.web import HttpServer

from .expect import Expected, Response, text, thinking, tool_call
from .harness import (
    CLOCK_MS,
    READ,
    READ_SCHEMA,
    SECRET,
    by_name,
    call_through_server,
    cancel_while_streaming,
    final_message,
    hi,
    outline,
    play,
    provider_case,
    run,
    still,
)
from .replay import RECORDINGS

API = "pi-messages"
# A model behind a gateway, which prices its own calls: the catalog gives no rates.
INFO = pp.Model(
    id="claude-sonnet-4-5",
    name="Claude Sonnet 4.5 (gateway)",
    api=API,
    provider="gateway",
    base_url="http://replaced-by-the-replay-server",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(),
    context_window=200_000,
    max_tokens=64_000,
)
RETRIED = False  # pi's pi-messages retries nothing: the backend retries its own provider

case = partial(provider_case, API)
CASES = [
    case("text"),
    case("thinking", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)),
    case("tool-call"),
    case("error-event"),
    case("aborted"),
    case("no-terminal"),
    case("invalid-content-index"),
    case("cut-mid-stream", "text.http", cut_after=3),
    case("error-401"),
    case("error-429"),
    case("error-500"),
]
BY_NAME = by_name(CASES)
message = Expected(INFO).message


def usage(input: int, output: int, cost: tuple[float, float, float], reasoning: int | None = None) -> pp.Usage:
    """The backend's usage: its counts, and its cost (input, output, total) as it priced them."""
    return pp.Usage(
        input=input,
        output=output,
        cache_read=0,
        cache_write=0,
        total_tokens=input + output,
        reasoning=reasoning,
        cost=pp.Cost(input=cost[0], output=cost[1], cache_read=0, cache_write=0, total=cost[2]),
    )


# --- streams ------------------------------------------------------------------------------------------


async def test_text_streams_each_delta_and_ends_with_the_backend_s_usage_and_response() -> None:
    events, final = await run(BY_NAME["text"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Hello'",
        "textDelta 0 delta='! 你好，'",
        "textDelta 0 delta='how can I help?'",
        "textEnd 0",
        "done STOP",
    ]
    assert final == message(
        text("Hello! 你好，how can I help?"),
        usage=usage(25, 15, (0.00007500000000000001, 0.000225, 0.00030000000000000003)),  # the catalog has no rates
        stop=pp.StopReason.STOP,
        response=Response("msg_01XFDUDYJgAACzvnptvVoYEL", "claude-sonnet-4-5-20250929"),
    )


async def test_thinking_keeps_its_signature_effort_and_the_backend_s_rewrite() -> None:
    events, final = await run(BY_NAME["thinking"], INFO)
    signature = (
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYdsRgk8sKZdA9O8w1jrCCbMp7PBIOH0dn7gQYlVOebZSUbFZgGmk0LY"
    )
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        "thinkingDelta 0 delta='27 * 453: 27 * 400 = 10800, '",
        "thinkingDelta 0 delta='27 * 53 = 1431; total 12231.'",
        f"thinkingEnd 0 thinkingSignature={signature!r}",
        "textStart 1",
        "textDelta 1 delta='27 × 453 = 12231.'",
        "textEnd 1",
        "done STOP",
    ]
    rewrite = (
        '{"policyId":"trim-history","policyVersion":3,"changed":false,"tokenCountChange":0,'
        '"messageCountChange":0,"systemPromptChanged":false}'
    )
    expected = message(
        thinking("27 * 453: 27 * 400 = 10800, 27 * 53 = 1431; total 12231.", signature),
        text("27 × 453 = 12231."),
        usage=usage(40, 61, (0.00012, 0.000915, 0.0010350000000000001), reasoning=30),
        stop=pp.StopReason.STOP,
        response=Response("msg_01Ab8KnHcxBxU9sUvGMRjBqD", thinking_level="medium"),
    )
    expected.diagnostics = [Diagnostic(type="pi_messages_rewrite", timestamp=CLOCK_MS, details_json=rewrite)]
    assert final == expected


async def test_a_tool_call_opens_with_its_id_and_name_and_ends_with_the_backend_s_parsed_call() -> None:
    events, final = await run(BY_NAME["tool-call"], INFO)
    arguments = '{"location":"San Francisco, CA","days":[1,2]}'  # the toolCall's arguments, as pi-JSON writes them
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Let me check the weather.'",
        "textEnd 0",
        "toolcallStart 1 id='toolu_01T1x1fJ34qAmk2tNTrN7Up6' name='get_weather'",
        """toolcallDelta 1 delta='{"location": "San'""",
        """toolcallDelta 1 delta=' Francisco, CA", "days": ['""",
        "toolcallDelta 1 delta='1, 2]}'",
        "toolcallEnd 1 toolCall={'id': 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'name': 'get_weather', "
        f"'argumentsJson': {arguments!r}}}",
        "done TOOL_USE",
    ]
    assert final == message(
        text("Let me check the weather."),
        tool_call("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", arguments),
        usage=usage(472, 89, (0.001416, 0.001335, 0.002751)),
        stop=pp.StopReason.TOOL_USE,
        response=Response("msg_014p7gG3wDgGV9EUtLvnow3U"),
    )


async def test_an_error_event_keeps_what_came_before_with_the_backend_s_message_and_usage() -> None:
    events, final = await run(BY_NAME["error-event"], INFO)
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Partial answer'", "error ERROR"]
    assert final == message(
        text("Partial answer"),
        usage=usage(30, 1, (0.00009, 0.000015, 0.000105)),
        stop=pp.StopReason.ERROR,
        error="the provider failed mid-stream with overloaded_error: Overloaded",  # the backend's words
        response=Response("msg_01Mp4nE8sR2tY6wQ9zX3cV7b"),
    )


async def test_an_aborted_error_event_ends_aborted() -> None:
    events, final = await run(BY_NAME["aborted"], INFO)
    assert outline(events)[-1] == "error ABORTED"
    assert final.content == [text("Hel")]
    assert final.error_message == "Request was aborted"
    assert final.usage == usage(25, 1, (0, 0, 0))


@pytest.mark.parametrize(
    ("name", "content", "error"),
    [
        ("no-terminal", [text("Hello")], "the provider 'gateway' ended its event stream without a terminal event"),
        (
            "invalid-content-index",
            [text("Hello")],
            "the provider 'gateway' sent an invalid contentIndex 3 in a text_delta event",
        ),
        (
            "cut-mid-stream",
            [text("Hello")],
            "the connection to the provider broke: peer closed connection without sending complete message body "
            "(incomplete chunked read)",
        ),
    ],
)
async def test_a_stream_cut_short_or_broken_is_an_error_that_keeps_what_came_before(
    name: str, content: list[pp.AssistantContent], error: str
) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events)[-1] == "error ERROR"
    assert final == message(*content, usage=pp.zero_usage(), stop=pp.StopReason.ERROR, error=error)


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("error-401", "the provider answered 401 Unauthorized: invalid API key: *** (invalid_api_key)"),
        (
            "error-429",
            "the provider answered 429 Too Many Requests: Rate limit exceeded: 60 requests per minute (rate_limited)",
        ),
        ("error-500", "the provider answered 500 Internal Server Error: The gateway failed to reach its provider"),
    ],
)
async def test_an_http_error_is_one_error_event_and_is_not_retried(name: str, error: str) -> None:
    events, replay = await play(BY_NAME[name], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert events[-1].error is not None
    assert events[-1].error.message == message(usage=pp.zero_usage(), stop=pp.StopReason.ERROR, error=error)
    assert len(replay.requests) == 1


async def test_a_client_cancel_closes_the_backend_connection_and_ends_aborted() -> None:
    events, closed = await cancel_while_streaming(
        INFO, RECORDINGS / API / "text.http", provider_events=3, client_events=3
    )
    assert closed, "the backend never saw its connection close"
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Hello'", "error ABORTED"]


async def test_a_model_without_a_key_fails_before_calling() -> None:
    keyless = ProviderModel(ModelConfig(info=INFO, api_key=""), clock=lambda: CLOCK_MS, monotonic=still)
    events = await call_through_server(keyless, hi())
    assert outline(events) == ["start", "error ERROR"]
    assert final_message(events).error_message == "no API key for provider 'gateway'"


# --- requests -----------------------------------------------------------------------------------------


def system_update() -> pp.AgentMessage:
    """A later system message: a section replaced, `read` removed."""
    update = SystemMessage(
        content=[pp.TextContent(text="The user is Ada.")],
        string_content=True,
        sections=[SystemSection(name="style", text="Be thorough.")],
        tools_removed=[ToolReference(name="read")],
        timestamp=CLOCK_MS - 500,
    )
    return pp.AgentMessage(system=update)


async def test_the_request_is_pi_s_model_context_and_options_with_the_system_messages_kept_in_place() -> None:
    options = pp.GenerationOptions(
        temperature=0.5,
        max_tokens=1000,
        reasoning=pp.ThinkingLevel.HIGH,
        tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read"),
        cache_retention=pp.CacheRetention.LONG,
        session_id="session-7",
        metadata_json='{"user_id": "user-7"}',  # pi sends no metadata to this API
        headers={"x-trace": "abc"},
        provider_options_json='{"debug": true, "priority": "low"}',
    )
    context = pp.AgentContext(
        system_prompt="Be brief.",
        tools=[READ],
        messages=[
            pp.agent_message(pp.user_message("hi", timestamp=CLOCK_MS - 1000)),
            system_update(),
            pp.AgentMessage(custom=pp.CustomMessage(role="bashExecution", fields_json='{"command":"ls"}')),
            pp.agent_message(pp.user_message("go on", timestamp=CLOCK_MS - 400)),
        ],
    )
    _, replay = await play(case("options", "text.http", context=context, options=options), INFO)
    request = replay.requests[0]
    assert (request.method, request.path) == ("POST", "/messages?debug=1")
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-trace"] == "abc"
    assert request.body == {
        "model": "claude-sonnet-4-5",
        "context": {
            "messages": [
                # The shorthand, folded into a leading system message as pi's normalizeContext does.
                {
                    "role": "system",
                    "content": "Be brief.",
                    "toolsAdded": [{"name": "read", "description": "Read a file", "parameters": READ_SCHEMA}],
                    "timestamp": 0,
                },
                {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": CLOCK_MS - 1000},
                {
                    "role": "system",
                    "content": "The user is Ada.",
                    "sections": {"style": "Be thorough."},
                    "toolsRemoved": [{"name": "read"}],
                    "timestamp": CLOCK_MS - 500,
                },
                # The custom message is left out: pi never sends a provider one.
                {"role": "user", "content": [{"type": "text", "text": "go on"}], "timestamp": CLOCK_MS - 400},
            ]
        },
        "options": {
            "temperature": 0.5,
            "maxTokens": 1000,
            "reasoning": "high",
            "cacheRetention": "long",
            "sessionId": "session-7",
            "toolChoice": {"type": "function", "function": {"name": "read"}},
            "priority": "low",
        },
    }


async def test_a_call_without_options_sends_none_and_a_context_without_a_prompt_no_system_message() -> None:
    _, replay = await play(case("plain", "text.http", context=hi()), INFO)
    request = replay.requests[0]
    assert request.path == "/messages"
    assert request.body == {
        "model": "claude-sonnet-4-5",
        "context": {
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": CLOCK_MS - 1000}]
        },
        "options": {},
    }


@pytest.mark.parametrize(
    ("mode", "sent"),
    [(pp.ToolChoiceMode.AUTO, "auto"), (pp.ToolChoiceMode.NONE, "none"), (pp.ToolChoiceMode.REQUIRED, "required")],
)
async def test_tool_choices_are_pi_s_words(mode: pp.ToolChoiceMode, sent: str) -> None:
    options = pp.GenerationOptions(tool_choice=pp.ToolChoice(mode=mode))
    _, replay = await play(case("tool-choice", "text.http", options=options), INFO)
    assert replay.requests[0].body["options"] == {"toolChoice": sent}


def test_a_base_url_with_trailing_slashes_posts_to_its_messages() -> None:
    for base_url in ("https://gateway.example/v1", "https://gateway.example/v1//"):
        config = ModelConfig(info=dataclasses.replace(INFO, base_url=base_url), api_key=SECRET)
        assert url(Call(config, hi(), None, AssistantMessageEventStream())) == "https://gateway.example/v1/messages"


# --- the reader, event by event -------------------------------------------------------------------


def reader() -> _Reader:
    config = ModelConfig(info=INFO, api_key=SECRET)
    return _Reader(Call(config, hi(), None, AssistantMessageEventStream()))


async def started(*events: dict[str, Any]) -> _Reader:
    """A reader whose stream has started and applied `events`."""
    read = reader()
    await read.call.start()
    for event in events:
        await read.apply(event)
    return read


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_events_end_at_a_blank_line_of_lf_or_crlf_even_across_chunks() -> None:
    body = chunks(
        b'data: {"a":1}\r\n\r',
        b'\ndata: {"b":2}\n',
        b'\n: a comment\n\nevent: x\ndata: [DONE]\n\ndata:  {"c":3} \n',
        b"data: ignored second line\n\n",
        b'data: {"d":4}',  # the last event needs no blank line
    )
    data = [item async for item in event_data(body, reader().call)]
    assert data == ['{"a":1}', '{"b":2}', '{"c":3}', '{"d":4}']


async def test_an_event_that_never_ends_counts_toward_the_size_limit() -> None:
    call = Call(ModelConfig(info=INFO, api_key=SECRET), hi(), None, AssistantMessageEventStream(max_message_bytes=100))
    with pytest.raises(ProviderError, match="limit of 100 bytes"):
        async for _ in event_data(chunks(b"data: ", b"x" * 200), call):
            pass


TEXT_START = {"type": "text_start", "contentIndex": 0}


@pytest.mark.parametrize(
    ("before", "event", "error"),
    [
        ([], {"type": "text_start", "contentIndex": 1}, "sent an invalid contentIndex 1 in a text_start event"),
        ([], {"type": "text_start", "contentIndex": "0"}, 'sent an invalid contentIndex "0" in a text_start event'),
        ([], {"type": "text_start", "contentIndex": -1}, "sent an invalid contentIndex -1 in a text_start event"),
        (
            [],
            {"type": "text_delta", "contentIndex": 0, "delta": "x"},
            "sent an invalid contentIndex 0 in a text_delta event",
        ),
        ([], {"type": "text_delta", "delta": "x"}, "sent a text_delta event without a contentIndex"),
        # pi would replace block 0; our events cannot say that.
        ([TEXT_START], {"type": "thinking_start", "contentIndex": 0}, "started block 0 again in a thinking_start"),
        (
            [TEXT_START],
            {"type": "thinking_delta", "contentIndex": 0, "delta": "x"},
            "sent a thinking_delta event for block 0, which is no open thinking block",
        ),
        (
            [TEXT_START, {"type": "text_end", "contentIndex": 0}],
            {"type": "text_delta", "contentIndex": 0, "delta": "x"},
            "sent a text_delta event for block 0, which is no open text block",
        ),
        (
            [TEXT_START],
            {"type": "text_delta", "contentIndex": 0, "delta": 7},
            "sent a text_delta event whose delta is not a string",
        ),
        (
            [],
            {"type": "toolcall_start", "contentIndex": 0, "id": "c1"},
            "sent a toolcall_start event whose toolName is not a string",
        ),
        ([], {"contentIndex": 0}, "sent an event without a type"),
        ([], {"type": "done", "reason": "error"}, 'sent a done event with the reason "error"'),
        ([], {"type": "done", "reason": ["stop"]}, 'sent a done event with the reason ["stop"]'),
        ([], {"type": "error", "reason": "stop"}, 'sent an error event with the reason "stop"'),
        (
            [],
            {"type": "done", "reason": "stop", "usage": {"input": "many"}},
            "sent a done event that is not valid pi-JSON: done.usage.input: expected a 64-bit integer",
        ),
    ],
)
async def test_events_pi_would_refuse_or_our_events_cannot_say_are_errors(
    before: list[dict[str, Any]], event: dict[str, Any], error: str
) -> None:
    read = await started(*before)
    with pytest.raises(ProviderError, match=re.escape(f"the provider 'gateway' {error}")):
        await read.apply(event)


async def test_an_integral_float_index_is_an_index_and_unknown_events_are_ignored() -> None:
    read = await started(
        {"type": "start"},
        {"type": "text_start", "contentIndex": 0.0},  # JSON has one number type, as JavaScript does
        {"type": "text_delta", "contentIndex": 0, "delta": "a"},
        {"type": "usage_hint", "tokens": 3},  # a later version's event
    )
    assert read.call.events.partial.content == [text("a")]


async def test_an_end_s_content_that_adds_to_the_deltas_is_sent_as_one_more_delta() -> None:
    read = await started(
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "Think"},
        {"type": "thinking_end", "contentIndex": 0, "content": "Thinking done.", "redacted": False},
    )
    assert read.call.events.partial.content == [
        pp.AssistantContent(thinking=pp.ThinkingContent(thinking="Thinking done.", redacted=False))
    ]
    await read.apply({"type": "text_start", "contentIndex": 1})
    await read.apply({"type": "text_delta", "contentIndex": 1, "delta": "Hello"})
    with pytest.raises(ProviderError, match="ended block 1 with other text than its deltas"):
        await read.apply({"type": "text_end", "contentIndex": 1, "content": "Goodbye"})


async def test_events_that_are_not_json_objects_are_errors() -> None:
    for body, error in [
        (b"data: {oops\n\n", "not JSON: {oops"),
        (b'data: {"type": "text_start", "contentIndex": NaN}\n\n', "not JSON: {"),  # JSON.parse takes no NaN
        (b"data: [1, 2]\n\n", "not a JSON object: [1, 2]"),
    ]:
        with pytest.raises(ProviderError, match=re.escape(f"sent an event that is {error}")):
            await reader().read(chunks(body))


def test_models_json_takes_a_pi_messages_provider(tmp_path: Path) -> None:
    provider = {"baseUrl": "https://gateway.example/v1", "api": API, "apiKey": "k", "models": [{"id": "claude-x"}]}
    catalog = tmp_path / "models.json"
    catalog.write_text(json.dumps({"providers": {"gateway": provider}}), encoding="utf-8")
    (model,) = load_models(catalog)
    assert (model.info.api, model.info.provider, model.info.base_url) == (API, "gateway", "https://gateway.example/v1")
    assert model.api.stream is pi_messages.stream


async def test_pi_proto_fronts_another_pi_proto_over_pi_messages(tmp_path: Path) -> None:
    # The backend is a real pi-proto serving the seed's README model on its HTTP port, behind a token.
    backend_model = pp.ScriptedModel.readme()
    async with (
        ModelServer(backend_model, token="backend-token") as backend,
        HttpServer(backend) as http,
    ):
        provider = {
            "baseUrl": http.url,
            "api": API,
            "apiKey": "backend-token",
            "models": [{"id": "scripted-v1"}],
        }
        catalog = tmp_path / "models.json"
        catalog.write_text(json.dumps({"providers": {"backend": provider}}), encoding="utf-8")
        (front,) = load_models(catalog)
        context = pp.AgentContext(system_prompt="You are pi.", messages=readme_transcript()[:1])
        first = await call_through_server(front, context)
        context.messages += [pp.agent_message(final_message(first))]
        # The second turn, after the tool ran: the backend plays the script's second answer.
        context.messages += readme_transcript()[2:]
        second = await call_through_server(front, context)
    for events, turn in zip((first, second), backend_model.turns, strict=True):
        message = final_message(events)
        # Event for event what the backend streamed: same kinds, same deltas.
        streamed = list(pp.events_of(turn, backend_model.delta_size))
        assert [pp.event_kind(event)[0] for event in events] == [pp.event_kind(event)[0] for event in streamed]
        assert [_delta(event) for event in events] == [_delta(event) for event in streamed]
        assert message.content == turn.content
        assert message.usage is not None
        assert turn.usage is not None
        assert (message.stop_reason, message.usage.input, message.usage.output) == (
            turn.stop_reason,
            turn.usage.input,
            turn.usage.output,
        )
        assert (message.api, message.provider, message.model) == (API, "backend", "scripted-v1")
    call = final_message(first).content[1].tool_call
    assert call is not None
    assert (call.name, json.loads(call.arguments_json or "")) == ("read", {"path": "README.md"})


def _delta(event: pp.ModelEvent) -> str | None:
    return getattr(pp.event_kind(event)[1], "delta", None)
