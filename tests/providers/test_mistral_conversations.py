"""mistral-conversations: the official `mistralai` SDK against recorded chat completion streams of
Mistral's API, through our server."""

from __future__ import annotations

import dataclasses
import json
import re
from functools import partial
from typing import Any

import httpx2
import pytest
from mistralai.client import errors, models

import pi_proto as pp
from pi_proto._gen.types.pi.ai.v1 import SystemMessage, SystemSection
from pi_proto.models.providers.call import Call, ProviderError
from pi_proto.models.providers.catalog import ModelConfig
from pi_proto.models.providers.mistral_conversations import (
    body,
    cached_tokens,
    derive_id,
    describe,
    short_hash,
    strict_schema,
    tool_call_ids,
)
from pi_proto.stream.event_stream import AssistantMessageEventStream

from .expect import NO_USAGE, Expected, Response, text, tool_call
from .harness import (
    READ,
    READ_SCHEMA,
    RETRYING,
    SECRET,
    by_name,
    cancel_while_streaming,
    final_message,
    hi,
    leaks,
    level_map,
    outline,
    output_limit_cases,
    play,
    provider_case,
    run,
)
from .replay import RECORDINGS

API = "mistral-conversations"
# pi 1.6's thinkingLevelMaps (its generated catalog, providers/data/mistral.json).
MEDIUM_LEVELS = {
    "off": "none",
    "minimal": None,
    "low": None,
    "medium": None,
    "high": "high",
    "xhigh": None,
    "max": None,
}
LARGE_4_LEVELS = {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None}
INFO = pp.Model(
    id="mistral-medium-latest",
    name="Mistral Medium (latest)",
    api=API,
    provider="mistral",
    base_url="http://replaced-by-the-replay-server",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=1.5, output=7.5, cache_read=0.15, cache_write=0),
    context_window=262_144,
    max_tokens=262_144,
    thinking_level_map=level_map(MEDIUM_LEVELS),
)
# Mistral Large 4 as pi 1.6's catalog has it: low, medium and high, and no way to stop reasoning.
LARGE_4 = dataclasses.replace(
    INFO,
    id="mistral-large-4",
    name="Mistral Large 4",
    cost=pp.ModelCost(input=0.7, output=2.1, cache_read=0.07, cache_write=0),
    context_window=1_048_576,
    thinking_level_map=level_map(LARGE_4_LEVELS),
)
# A reasoning model of a models.json that gives no thinkingLevelMap (Magistral, as pi once listed it).
MAGISTRAL = dataclasses.replace(
    INFO, id="magistral-medium-2509", name="Magistral Medium", max_tokens=40_000, thinking_level_map=[]
)
# Codestral: text only, no reasoning.
CODESTRAL = dataclasses.replace(
    INFO,
    id="codestral-2508",
    name="Codestral 25.08",
    reasoning=False,
    input=[pp.InputKind.TEXT],
    cost=pp.ModelCost(input=0.3, output=0.9, cache_read=0.03, cache_write=0),
    context_window=256_000,
    max_tokens=8192,
    thinking_level_map=[],
)
PNG = b"\x89PNG\r\n\x1a\n"
PNG_URL = "data:image/png;base64,iVBORw0KGgo="
ANOTHER: dict[str, Any] = {"api": "openai-responses", "provider": "openai", "model": "gpt-5"}
OWN: dict[str, Any] = {"api": API, "provider": "mistral", "model": INFO.id}


def options_context() -> pp.AgentContext:
    """A call with a system prompt, a tool and an image."""
    return pp.AgentContext(
        system_prompt="Be brief.",
        messages=[pp.agent_message(pp.user_message("What is this?", pp.image(PNG, "image/png"), timestamp=1))],
        tools=[READ],
    )


# Every option pi maps onto the request.
OPTIONS = pp.GenerationOptions(
    temperature=0.3,
    max_tokens=1000,
    reasoning=pp.ThinkingLevel.LOW,  # clamped up to high, the model's next level
    tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read"),
    session_id="session-7",
    headers={"x-trace": "abc"},
    metadata_json='{"user_id": "user-7"}',  # pi sends no metadata to this API
)


def replayed_context() -> pp.AgentContext:
    """This model's own turn (its reasoning), then turns of two other models (reasoning, text, tool
    calls with their own ids) and their results, one an error with an image."""
    messages: list[pp.UserMessage | pp.AssistantMessage | pp.ToolResultMessage] = [
        pp.user_message("What is 27 × 453?", timestamp=1),
        pp.assistant_message(
            pp.thinking("27 * 453 = 12231."), pp.text("12231."), pp.thinking("   "), timestamp=2, **OWN
        ),
        pp.user_message("Read the readme.", timestamp=3),
        pp.assistant_message(
            pp.thinking("The user wants a file.", signature='{"type":"reasoning","id":"rs_1"}'),
            pp.text("Reading it."),
            pp.tool_call("call_abc|fc_123", "read", {"path": "README.md"}),
            stop_reason=pp.StopReason.TOOL_USE,
            timestamp=4,
            **ANOTHER,
        ),
        pp.tool_result_message("call_abc|fc_123", "read", "# pi-proto", "line 2", timestamp=5),
        pp.assistant_message(
            pp.thinking("Screenshot it.", signature="EqQBCgIYAhIM"),
            pp.tool_call("toolu_01A09q90qw90lq917835lq9", "screenshot"),
            api="anthropic-messages",
            provider="anthropic",
            model="claude-sonnet-4-5",
            stop_reason=pp.StopReason.TOOL_USE,
            timestamp=6,
        ),
        pp.tool_result_message(
            "toolu_01A09q90qw90lq917835lq9", "screenshot", pp.image(PNG, "image/png"), is_error=True, timestamp=7
        ),
        pp.assistant_message("Half an ans", stop_reason=pp.StopReason.ERROR, timestamp=8, **OWN),  # left out
        pp.user_message("Summarise it.", timestamp=9),
    ]
    return pp.AgentContext(messages=[pp.agent_message(message) for message in messages])


def mid_conversation_context() -> pp.AgentContext:
    """System messages where they stand: the first, one with section changes, and one that comes
    between a tool call and its result."""
    sections = [SystemSection(name="style", text="Use lists."), SystemSection(name="tone")]
    messages: list[Any] = [
        SystemMessage(content=[pp.TextContent(text="You are terse.")], string_content=True, tools_added=[READ]),
        pp.user_message("hi", timestamp=1),
        pp.assistant_message(
            pp.tool_call("kZ2qX7rLm", "read", {"path": "README.md"}),
            stop_reason=pp.StopReason.TOOL_USE,
            timestamp=2,
            **OWN,
        ),
        SystemMessage(content=[pp.TextContent(text="Mind the time.")], sections=sections, timestamp=3),
        pp.tool_result_message("kZ2qX7rLm", "read", "# pi-proto", timestamp=4),
        pp.user_message("and?", timestamp=5),
    ]
    return pp.AgentContext(messages=[pp.agent_message(message) for message in messages])


STRICT = pp.ConstrainedSampling(json_schema=pp.JsonSchemaSampling(strict=pp.Strictness.PREFER))
FIND = pp.Tool(
    name="find",
    description="Find files",
    parameters_json='{"type":"object","properties":{"pattern":{"type":"string"},"limit":{"type":"integer"}},'
    '"required":["pattern"]}',
    constrained_sampling=STRICT,
)
WITH_STRICT_TOOLS = pp.AgentContext(messages=hi().messages, tools=[READ, FIND])


case = partial(provider_case, API)
CASES = [
    case("text"),
    case("thinking", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)),
    case("tool-call-fragments"),
    case("two-tool-calls"),
    case("cache-usage"),
    case("length"),
    case("guardrail-blocked"),
    case("error-mid-stream"),
    case("cut-mid-stream", "text.http", cut_after=3),
    case("error-401"),
    case("error-404"),
    case("error-400-invalid-model"),
    case("error-429-long", options=RETRYING),
    case("error-429-then-text", "error-429-short.http", "text.http", options=RETRYING),
    case("error-500", "error-500.http", "error-500.http", "error-500.http"),
    case("request-options", "text.http", context=options_context(), options=OPTIONS),
    case("replayed-context", "text.http", context=replayed_context()),
    case(
        "large-4-levels",
        "thinking.http",
        model=LARGE_4,
        options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MINIMAL),  # clamped up to low
    ),
    case(
        "prompt-mode", "thinking.http", model=MAGISTRAL, options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.HIGH)
    ),
    case("text-only-model", "text.http", model=CODESTRAL, context=replayed_context()),
    case(
        "mid-conversation-system",
        "text.http",
        context=mid_conversation_context(),
        config={"compat": {"supportsMidConvoSystemMessages": True}},
    ),
    case("strict-tools", "text.http", context=WITH_STRICT_TOOLS, config={"compat": {"supportsStrictMode": True}}),
    *output_limit_cases(API, INFO),
]
BY_NAME = by_name(CASES)
usage, message = Expected(INFO).usage, Expected(INFO).message


def response(chunk_id: str, stop: str | None) -> Response:
    """The recording's chunk id and finish_reason."""
    return Response(id=chunk_id, raw_stop_reason=stop)


def request_body(
    info: pp.Model, context: pp.AgentContext, options: pp.GenerationOptions | None = None, **compat: Any
) -> dict[str, Any]:
    """The body `body()` builds for a call, without sending it."""
    config = ModelConfig(info=info, api_key=SECRET, compat=compat)
    return body(Call(config, context, options, AssistantMessageEventStream()))


def ended(call_id: str, name: str, arguments: str) -> str:
    """The outline's payload of a toolcallEnd event."""
    return f"toolCall={ {'id': call_id, 'name': name, 'argumentsJson': arguments}!r}"


# --- streams ------------------------------------------------------------------------------------------


async def test_text_streams_each_delta_and_takes_usage_from_the_last_chunk() -> None:
    events, final = await run(BY_NAME["text"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Hello'",
        "textDelta 0 delta='! 你好，'",
        "textDelta 0 delta='how can I help?'",
        "textEnd 0 usage=25/15/0/0",  # the last chunk brought usage and the finish; the block ends with the stream
        "done STOP",
    ]
    assert final == message(
        text("Hello! 你好，how can I help?"),
        usage=usage(25, 15),
        stop=pp.StopReason.STOP,
        response=response("a3f1c2d4e5b6478a9c0d1e2f3a4b5c6d", "stop"),
    )


async def test_thinking_chunks_stream_as_thinking_before_the_text() -> None:
    events, final = await run(BY_NAME["thinking"], INFO)
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        "thinkingDelta 0 delta='27 * 453: 27 * 400 = 10800, '",
        "thinkingDelta 0 delta='27 * 53 = 1431; total 12231.'",
        "thinkingEnd 0",  # Mistral's thinking has no signature to keep
        "textStart 1",
        "textDelta 1 delta='27 × 453 = 12231.'",
        "textEnd 1 usage=40/61/0/0",
        "done STOP",
    ]
    assert final == message(
        pp.AssistantContent(
            thinking=pp.ThinkingContent(thinking="27 * 453: 27 * 400 = 10800, 27 * 53 = 1431; total 12231.")
        ),
        text("27 × 453 = 12231."),
        usage=usage(40, 61),
        stop=pp.StopReason.STOP,
        response=response("b4e2d3f5a6c7489b0d1e2f3a4b5c6d7e", "stop"),
    )


async def test_tool_call_arguments_stream_fragment_by_fragment_under_the_first_fragments_id() -> None:
    events, final = await run(BY_NAME["tool-call-fragments"], INFO)
    arguments = '{"location": "San Francisco, CA", "unit": "fahrenheit", "days": [1, 2]}'
    fragments = [
        '{"lo',
        "cation",
        '": "San',
        " Francisco",
        ', CA", "',
        'unit": "',
        "fahrenheit",
        '", "days": [',
        "1, 2",
        "]}",
    ]
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Let me check the weather.'",
        "textEnd 0",  # a tool call ends the text before it
        "toolcallStart 1 id='D681PevKs' name='get_weather'",
        *[f"toolcallDelta 1 delta={fragment!r}" for fragment in fragments],  # each later fragment's id is "null"
        "toolcallEnd 1 " + ended("D681PevKs", "get_weather", arguments) + " usage=472/89/0/0",
        "done TOOL_USE",
    ]
    assert final == message(
        text("Let me check the weather."),
        tool_call("D681PevKs", "get_weather", arguments),
        usage=usage(472, 89),
        stop=pp.StopReason.TOOL_USE,
        response=response("c5f3e4a6b7d8490c1e2f3a4b5c6d7e8f", "tool_calls"),
    )


async def test_two_tool_calls_in_one_delta_each_take_their_index() -> None:
    events, final = await run(BY_NAME["two-tool-calls"], INFO)
    assert outline(events) == [
        "start",
        "toolcallStart 0 id='kZ2qX7rLm' name='read'",
        """toolcallDelta 0 delta='{"path": "README.md"}'""",
        "toolcallStart 1 id='Wp4nB8sTv' name='read'",
        """toolcallDelta 1 delta='{"path": "Makefile"}'""",
        "toolcallEnd 0 " + ended("kZ2qX7rLm", "read", '{"path": "README.md"}') + " usage=480/74/0/0",
        "toolcallEnd 1 " + ended("Wp4nB8sTv", "read", '{"path": "Makefile"}'),
        "done TOOL_USE",
    ]
    assert final == message(
        tool_call("kZ2qX7rLm", "read", '{"path": "README.md"}'),
        tool_call("Wp4nB8sTv", "read", '{"path": "Makefile"}'),
        usage=usage(480, 74),
        stop=pp.StopReason.TOOL_USE,
        response=response("d6a4f5b7c8e9401d2f3a4b5c6d7e8f9a", "tool_calls"),
    )


async def test_cached_prompt_tokens_are_cache_reads_and_not_input() -> None:
    events, final = await run(BY_NAME["cache-usage"], INFO)
    assert outline(events)[-2:] == ["textEnd 0 usage=128/64/1920/0", "done STOP"]
    assert final == message(
        text("Yes, the notes say so."),
        usage=usage(128, 64, cache_read=1920),  # prompt 2048, of which 1920 cached
        stop=pp.StopReason.STOP,
        response=response("e7b5a6c8d9f0412e3a4b5c6d7e8f9a0b", "stop"),
    )
    assert final.usage is not None
    assert final.usage.total_tokens == 2112


@pytest.mark.parametrize(
    ("extra", "prompt", "cached"),
    [
        ({"prompt_tokens_details": {"cached_tokens": 1920}}, 2048, 1920),
        ({"num_cached_tokens": 512}, 2048, 512),
        ({"prompt_tokens_details": {"cached_tokens": 0}, "num_cached_tokens": 512}, 2048, 0),  # the first found wins
        ({"promptTokensDetails": {"cachedTokens": 7}}, 2048, 7),
        ({"num_cached_tokens": 5000}, 2048, 2048),  # never more than the prompt
        ({"num_cached_tokens": -3}, 2048, 0),
        ({"num_cached_tokens": "12"}, 2048, 0),  # not a number
        ({}, 2048, 0),
    ],
)
def test_cached_tokens_are_read_where_pi_reads_them(extra: dict[str, Any], prompt: int, cached: int) -> None:
    assert cached_tokens(extra, prompt) == cached


async def test_finish_reason_length_is_a_length_stop() -> None:
    events, final = await run(BY_NAME["length"], INFO)
    assert outline(events)[-1] == "done LENGTH"
    assert final == message(
        text("Once upon a time, in a"),
        usage=usage(18, 8),
        stop=pp.StopReason.LENGTH,
        response=response("f8c6b7d9e0a1423f4b5c6d7e8f9a0b1c", "length"),
    )


async def test_a_guardrail_that_blocks_the_request_ends_with_its_words() -> None:
    events, final = await run(BY_NAME["guardrail-blocked"], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final == message(
        usage=NO_USAGE,
        stop=pp.StopReason.ERROR,
        error="the provider answered 403 guardrail_triggered: Request blocked due to: violence_and_threats",
    )


async def test_finish_reason_error_ends_with_an_error_that_keeps_what_came_before() -> None:
    events, final = await run(BY_NAME["error-mid-stream"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Partial answer'",
        "textEnd 0 usage=30/2/0/0",
        "error ERROR",
    ]
    assert final == message(
        text("Partial answer"),
        usage=usage(30, 2),
        stop=pp.StopReason.ERROR,
        error="the provider stopped with finish_reason 'error' (a server error)",
        response=response("a9d7c8e0f1b2434a5c6d7e8f9a0b1c2d", "error"),
    )


async def test_a_connection_cut_mid_stream_keeps_what_came_before() -> None:
    events, final = await run(BY_NAME["cut-mid-stream"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Hello'",
        "textDelta 0 delta='! 你好，'",
        "error ERROR",
    ]
    assert final == message(
        text("Hello! 你好，"),
        usage=NO_USAGE,
        stop=pp.StopReason.ERROR,
        error="the connection to the provider broke: peer closed connection without sending complete message body "
        "(incomplete chunked read)",
        response=response("a3f1c2d4e5b6478a9c0d1e2f3a4b5c6d", None),
    )


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("error-401", "the provider answered 401: Unauthorized"),
        ("error-404", "the provider answered 404: Not Found"),
        (
            "error-400-invalid-model",
            "the provider answered 400 invalid_model (1500): Invalid model: mistral-nonexistent",
        ),
        (
            "error-429-long",
            "the provider answered 429: Requests rate limit exceeded; the provider asks to retry after 120 s, longer "
            "than max_retry_delay_ms (60000 ms)",
        ),
        ("error-500", "the provider answered 500 internal_server_error (1000): Internal server error"),
    ],
)
async def test_an_error_status_ends_with_one_error_event_that_names_the_model(name: str, error: str) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final == message(usage=NO_USAGE, stop=pp.StopReason.ERROR, error=error)


async def test_a_429_is_retried_and_the_retry_streams() -> None:
    events, replay = await play(BY_NAME["error-429-then-text"], INFO)
    assert len(replay.requests) == 2
    assert replay.requests[0].body == replay.requests[1].body
    assert outline(events)[-1] == "done STOP"
    assert final_message(events).content == [text("Hello! 你好，how can I help?")]


async def test_three_500s_are_the_first_try_and_both_retries() -> None:
    _, replay = await play(BY_NAME["error-500"], INFO)
    assert len(replay.requests) == 3


async def test_a_client_cancel_closes_the_provider_connection_and_ends_aborted() -> None:
    events, closed = await cancel_while_streaming(
        INFO, RECORDINGS / API / "text.http", provider_events=2, client_events=3
    )
    assert closed, "the provider never saw its connection close"
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Hello'", "error ABORTED"]


async def test_a_model_without_an_api_key_fails_before_any_request() -> None:
    played = case("no-key", "text.http", config={"api_key": ""})
    events, replay = await play(played, INFO)
    assert replay.requests == []  # the SDK would have taken MISTRAL_API_KEY from the server's environment
    assert outline(events) == ["start", "error ERROR"]
    assert final_message(events).error_message == "model 'mistral-medium-latest' has no API key (apiKey in models.json)"


# --- requests -----------------------------------------------------------------------------------------


async def test_the_request_carries_the_call_options_as_pi_maps_them() -> None:
    _, replay = await play(BY_NAME["request-options"], INFO)
    request = replay.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["x-trace"] == "abc"
    assert request.headers["x-affinity"] == "session-7"  # the session's calls go to the replica that caches it
    assert request.body == {
        "model": "mistral-medium-latest",
        "stream": True,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": PNG_URL}],
            },
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "read", "description": "Read a file", "parameters": READ_SCHEMA, "strict": False},
            }
        ],
        "temperature": 0.3,
        "max_tokens": 1000,
        "tool_choice": {"type": "function", "function": {"name": "read"}},
        "reasoning_effort": "high",
        "prompt_cache_key": "session-7",
    }


async def test_a_transcript_of_other_models_is_replayed_as_pi_transforms_it() -> None:
    _, replay = await play(BY_NAME["replayed-context"], INFO)
    assert replay.requests[0].body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is 27 × 453?"}]},
        {
            # this model's own reasoning goes back as a thinking chunk; a blank one does not
            "role": "assistant",
            "prefix": False,
            "content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": "27 * 453 = 12231."}]},
                {"type": "text", "text": "12231."},
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "Read the readme."}]},
        {
            # another model's reasoning is left out, and its call ids become Mistral's nine letters and digits
            "role": "assistant",
            "prefix": False,
            "content": [{"type": "text", "text": "Reading it."}],
            "tool_calls": [
                {
                    "id": derive_id("call_abc|fc_123"),
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"README.md"}'},
                    "index": 0,
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": derive_id("call_abc|fc_123"),
            "name": "read",
            "content": [{"type": "text", "text": "# pi-proto\nline 2"}],
        },
        {
            "role": "assistant",
            "prefix": False,
            "tool_calls": [
                {
                    "id": derive_id("toolu_01A09q90qw90lq917835lq9"),
                    "type": "function",
                    "function": {"name": "screenshot", "arguments": "{}"},
                    "index": 0,
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": derive_id("toolu_01A09q90qw90lq917835lq9"),
            "name": "screenshot",
            "content": [
                {"type": "text", "text": "[tool error] (see attached image)"},
                {"type": "image_url", "image_url": PNG_URL},
            ],
        },
        # the failed turn is left out
        {"role": "user", "content": [{"type": "text", "text": "Summarise it."}]},
    ]


def test_other_models_tool_call_ids_become_pis_nine_character_ids() -> None:
    assert (derive_id("call_abc|fc_123"), derive_id("toolu_01A09q90qw90lq917835lq9")) == ("18g6kob34", "1q2i7qh1x")
    assert derive_id("call-D681PevKs") != "D681PevKs"  # nine letters and digits only when the id has no more
    assert derive_id("D681-Pev-Ks") == "D681PevKs"
    assert derive_id("toolcall:0") == "toolcall0"  # what a streamed call without an id gets
    # pi's shortHash of JavaScript's UTF-16 code units (checked against pi's own).
    assert [short_hash(seed) for seed in ("toolcall:1", "é🦀z", "")] == [
        "so4jux1synmjc",
        "1cee572gb4i69",
        "k4n83c7h0j2b",
    ]
    rewrite = tool_call_ids()
    first = rewrite("call_a|fc_1")
    assert rewrite("call_a|fc_1") == first
    assert rewrite("call_a-fc-1") != first  # the same letters and digits: a clash takes the next attempt's id


async def test_a_text_only_model_gets_pis_placeholders_where_the_images_were() -> None:
    _, replay = await play(BY_NAME["text-only-model"], INFO)
    sent = replay.requests[0].body
    assert "reasoning_effort" not in sent
    assert sent["max_tokens"] == 8192
    assert sent["messages"][6] == {
        "role": "tool",
        "tool_call_id": derive_id("toolu_01A09q90qw90lq917835lq9"),
        "name": "screenshot",
        "content": [{"type": "text", "text": "[tool error] (tool image omitted: model does not support images)"}],
    }
    image_only = pp.AgentContext(messages=[pp.agent_message(pp.user_message(pp.image(PNG, "image/png"), timestamp=1))])
    assert request_body(CODESTRAL, image_only)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "(image omitted: model does not support images)"}]}
    ]


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (pp.tool_result_message("c", "t", "  out  ", timestamp=1), "out"),
        (pp.tool_result_message("c", "t", "", timestamp=1), "(no tool output)"),
        (pp.tool_result_message("c", "t", "", is_error=True, timestamp=1), "[tool error] (no tool output)"),
        (pp.tool_result_message("c", "t", "bad", is_error=True, timestamp=1), "[tool error] bad"),
        (pp.tool_result_message("c", "t", pp.image(PNG, "image/png"), timestamp=1), "(see attached image)"),
    ],
)
def test_a_tool_results_text_is_pis(result: pp.ToolResultMessage, expected: str) -> None:
    turn = pp.assistant_message(pp.tool_call("c", "t"), stop_reason=pp.StopReason.TOOL_USE, timestamp=1, **OWN)
    context = pp.AgentContext(messages=[pp.agent_message(message) for message in (hi().messages[0], turn, result)])
    sent = request_body(INFO, context)["messages"][-1]
    assert sent["content"][0] == {"type": "text", "text": expected}


def test_a_string_user_content_goes_as_a_string() -> None:
    user = pp.UserMessage(content=[pp.UserContent(text=pp.TextContent(text="hi"))], string_content=True, timestamp=1)
    assert request_body(INFO, pp.AgentContext(messages=[pp.agent_message(user)]))["messages"] == [
        {"role": "user", "content": "hi"}
    ]


async def test_system_messages_stay_in_place_where_the_model_takes_them_mid_conversation() -> None:
    _, replay = await play(BY_NAME["mid-conversation-system"], INFO)
    sent = replay.requests[0].body
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["read"]
    assert sent["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "prefix": False,
            "tool_calls": [
                {
                    "id": "kZ2qX7rLm",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"README.md"}'},
                    "index": 0,
                }
            ],
        },
        # the result first: a system message between a call and its result waits for it
        {
            "role": "tool",
            "tool_call_id": "kZ2qX7rLm",
            "name": "read",
            "content": [{"type": "text", "text": "# pi-proto"}],
        },
        {
            "role": "system",
            "content": 'Mind the time.\n\nUpdated system prompt section "style":\n\nUse lists.\n\n'
            'Removed system prompt section "tone".',
        },
        {"role": "user", "content": [{"type": "text", "text": "and?"}]},
    ]
    # Without the switch, every system message goes into the prompt, first.
    collapsed = request_body(INFO, mid_conversation_context())["messages"]
    assert collapsed[0] == {"role": "system", "content": "You are terse.\n\nMind the time.\n\nUse lists."}
    assert [turn["role"] for turn in collapsed[1:]] == ["user", "assistant", "tool", "user"]


@pytest.mark.parametrize(
    ("info", "level", "expected"),
    [
        (INFO, pp.ThinkingLevel.HIGH, {"reasoning_effort": "high"}),
        (INFO, pp.ThinkingLevel.MINIMAL, {"reasoning_effort": "high"}),  # clamped up to high
        (INFO, pp.ThinkingLevel.MAX, {"reasoning_effort": "high"}),  # clamped down to high
        (INFO, pp.ThinkingLevel.UNSPECIFIED, {"reasoning_effort": "none"}),  # the map's off
        (LARGE_4, pp.ThinkingLevel.MINIMAL, {"reasoning_effort": "low"}),
        (LARGE_4, pp.ThinkingLevel.MEDIUM, {"reasoning_effort": "medium"}),
        (LARGE_4, pp.ThinkingLevel.XHIGH, {"reasoning_effort": "high"}),
        (LARGE_4, pp.ThinkingLevel.UNSPECIFIED, {}),  # it cannot stop reasoning: nothing to say
        (MAGISTRAL, pp.ThinkingLevel.LOW, {"prompt_mode": "reasoning"}),  # no map: the reasoning prompt
        (MAGISTRAL, pp.ThinkingLevel.UNSPECIFIED, {}),
        (CODESTRAL, pp.ThinkingLevel.HIGH, {}),
        # A level the map leaves out is "high".
        (
            dataclasses.replace(INFO, thinking_level_map=level_map({"off": "none"})),
            pp.ThinkingLevel.LOW,
            {"reasoning_effort": "high"},
        ),
    ],
)
def test_the_reasoning_level_clamped_to_the_models_map_is_its_effort_else_the_reasoning_prompt(
    info: pp.Model, level: pp.ThinkingLevel, expected: dict[str, str]
) -> None:
    sent = request_body(info, hi(), pp.GenerationOptions(reasoning=level))
    assert {key: sent[key] for key in ("reasoning_effort", "prompt_mode") if key in sent} == expected


async def test_a_level_of_large_4_and_the_prompt_mode_of_a_model_without_a_map_go_as_pi_sends_them() -> None:
    _, large = await play(BY_NAME["large-4-levels"], INFO)
    assert large.requests[0].body["reasoning_effort"] == "low"
    events, magistral = await play(BY_NAME["prompt-mode"], INFO)
    assert magistral.requests[0].body["prompt_mode"] == "reasoning"
    assert "reasoning_effort" not in magistral.requests[0].body
    assert final_message(events).model == "magistral-medium-2509"


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (pp.ToolChoiceMode.AUTO, "auto"),
        (pp.ToolChoiceMode.NONE, "none"),
        (pp.ToolChoiceMode.REQUIRED, "any"),  # Mistral's word for it
    ],
)
def test_tool_choice_is_mistrals(mode: pp.ToolChoiceMode, expected: str) -> None:
    options = pp.GenerationOptions(tool_choice=pp.ToolChoice(mode=mode))
    assert request_body(INFO, pp.AgentContext(messages=hi().messages, tools=[READ]), options)["tool_choice"] == expected


def test_the_session_is_the_cache_key_and_affinity_unless_caching_is_off() -> None:
    options = pp.GenerationOptions(session_id="s-1", cache_retention=pp.CacheRetention.LONG)
    assert request_body(INFO, hi(), options)["prompt_cache_key"] == "s-1"
    off = pp.GenerationOptions(session_id="s-1", cache_retention=pp.CacheRetention.NONE)
    assert "prompt_cache_key" not in request_body(INFO, hi(), off)


async def test_an_x_affinity_header_of_the_call_is_kept_over_the_session() -> None:
    options = pp.GenerationOptions(session_id="s-1", headers={"X-Affinity": "mine"})
    _, replay = await play(case("affinity", "text.http", options=options), INFO)
    assert replay.requests[0].headers["x-affinity"] == "mine"
    off = pp.GenerationOptions(session_id="s-1", cache_retention=pp.CacheRetention.NONE)
    _, replay = await play(case("affinity-off", "text.http", options=off), INFO)
    assert "x-affinity" not in replay.requests[0].headers


async def test_a_header_of_the_catalog_replaces_the_sdks_instead_of_doubling_it() -> None:
    played = case("auth-header", "text.http", config={"headers": {"authorization": "Bearer gateway-token"}})
    _, replay = await play(played, INFO)
    assert replay.requests[0].headers["authorization"] == "Bearer gateway-token"


async def test_strict_tools_take_pis_strict_schema_where_the_model_takes_them() -> None:
    _, replay = await play(BY_NAME["strict-tools"], INFO)
    tools = replay.requests[0].body["tools"]
    assert tools[0]["function"] == {
        "name": "read",
        "description": "Read a file",
        "parameters": READ_SCHEMA,
        "strict": False,
    }
    assert tools[1]["function"] == {
        "name": "find",
        "description": "Find files",
        "parameters": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
            "required": ["pattern", "limit"],
            "additionalProperties": False,
        },
        "strict": True,
    }
    # Without the switch, every tool goes as written, not strict.
    sent = request_body(INFO, WITH_STRICT_TOOLS)["tools"]
    assert [tool["function"]["strict"] for tool in sent] == [False, False]
    assert sent[1]["function"]["parameters"] == json.loads(FIND.parameters_json or "")


def test_a_tool_that_requires_strict_sampling_fails_where_it_cannot_have_it() -> None:
    required = pp.ConstrainedSampling(json_schema=pp.JsonSchemaSampling(strict=pp.Strictness.REQUIRE))
    tool = dataclasses.replace(FIND, constrained_sampling=required)
    context = pp.AgentContext(messages=hi().messages, tools=[tool])
    with pytest.raises(ProviderError, match="strict tools are unsupported"):
        request_body(INFO, context)
    loose = dataclasses.replace(tool, parameters_json='{"type":"object","properties":{"a":{"oneOf":[]}}}')
    with pytest.raises(ProviderError, match="oneOf schemas are unsupported"):
        request_body(INFO, pp.AgentContext(messages=hi().messages, tools=[loose]), supportsStrictMode=True)
    preferred = dataclasses.replace(loose, constrained_sampling=STRICT)  # only preferred: it goes as written
    sent = request_body(INFO, pp.AgentContext(messages=hi().messages, tools=[preferred]), supportsStrictMode=True)
    assert sent["tools"][0]["function"]["strict"] is False


@pytest.mark.parametrize(
    ("schema", "error"),
    [
        ({"type": "string"}, "root schema must have type object"),
        ({"type": "object", "additionalProperties": True}, "additionalProperties is unsupported"),
        ({"type": "object", "properties": {"a": {}}}, "schemas without a type are unsupported"),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}, "unknown property"),
        ({"type": "object", "properties": {"a": {"anyOf": [{"type": "object"}]}}}, "unions are unsupported"),
        ({"type": "object", "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}}, "tuple"),
    ],
)
def test_a_schema_outside_the_strict_subset_is_refused_with_pis_reason(schema: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        strict_schema(schema)


def test_a_nullable_optional_property_is_not_wrapped_again() -> None:
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"enum": ["x", None]}}}
    assert strict_schema(schema) == {
        "type": "object",
        "properties": {"a": {"type": ["string", "null"]}, "b": {"enum": ["x", None]}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }


def test_provider_options_go_on_top_when_they_are_fields_of_the_request() -> None:
    options = pp.GenerationOptions(provider_options_json='{"safe_prompt": true, "random_seed": 7}')
    sent = request_body(INFO, hi(), options)
    assert (sent["safe_prompt"], sent["random_seed"]) == (True, 7)


async def test_a_provider_option_the_sdk_cannot_send_fails_the_call_before_any_request() -> None:
    options = pp.GenerationOptions(provider_options_json='{"frobnicate": 1}')
    events, replay = await play(case("bad-option", "text.http", options=options), INFO)
    assert replay.requests == []
    assert not leaks(events)
    assert final_message(events).error_message == (
        "provider option 'frobnicate' is not a field of Mistral's chat completion request"
    )


def test_no_metadata_and_no_sampling_parameters_go_as_in_pi() -> None:
    info = dataclasses.replace(INFO, sampling_params_json='{"top_p":0.9}')
    options = pp.GenerationOptions(metadata_json='{"user_id":"u"}', sampling_params_json='{"top_k":5}')
    sent = request_body(info, hi(), options)
    assert not {"metadata", "top_p", "top_k"} & set(sent)


def test_a_compat_switch_of_the_wrong_type_fails_the_call() -> None:
    with pytest.raises(
        ProviderError,
        match=re.escape("compat.supportsStrictMode of model 'mistral-medium-latest' must be true or false"),
    ):
        request_body(INFO, pp.AgentContext(messages=hi().messages, tools=[READ]), supportsStrictMode="yes")


async def test_the_calls_max_retries_replace_the_two_retries() -> None:
    for retries, requests in ((0, 1), (1, 2)):
        options = pp.GenerationOptions(max_retries=retries)
        _, replay = await play(case("retries", "error-500.http", "error-500.http", options=options), INFO)
        assert len(replay.requests) == requests


def unreadable(data: Any) -> str:
    """Our words for a streamed event whose data the SDK cannot read as a chunk."""
    raw = json.dumps({"data": data})
    try:
        models.CompletionEvent.model_validate_json(raw)
    except ValueError as cause:
        response = httpx2.Response(200, request=httpx2.Request("POST", "http://mistral.test/v1/chat/completions"))
        error = errors.ResponseValidationError("Response validation failed", response, cause, raw)
        error.__cause__ = cause
        return describe(error, ModelConfig(info=INFO, api_key=SECRET))
    raise AssertionError("the SDK read it")


def test_an_event_that_is_not_a_chunk_is_named_and_an_error_object_mid_stream_gives_its_words() -> None:
    assert unreadable({"id": "x", "model": "m"}) == (
        "the provider sent an event that is not a chat completion chunk (data.choices: Field required)"
    )
    error = {"object": "error", "message": f"Upstream failed for key {SECRET}", "type": "internal_server_error"}
    assert unreadable(error) == "the provider failed mid-stream with internal_server_error: Upstream failed for key ***"
