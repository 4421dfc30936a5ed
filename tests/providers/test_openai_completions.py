"""openai-completions: the official SDK against recorded Chat Completions streams (api.openai.com and
the servers that speak its format: llama.cpp, Ollama, vLLM, OpenRouter, Azure, Gemini), through
our server."""

from __future__ import annotations

import dataclasses
import json
from functools import partial
from typing import Any

import pytest

import pi_proto as pp
from pi_proto.models.providers.call import Call
from pi_proto.models.providers.catalog import ModelConfig
from pi_proto.models.providers.openai_completions import Compat, body, detect_compat, normalize_id
from pi_proto.stream.event_stream import AssistantMessageEventStream

from .expect import NO_USAGE, Expected, Response, text, thinking, tool_call
from .harness import (
    CLOCK_MS,
    READ,
    READ_SCHEMA,
    RETRYING,
    SECRET,
    ProviderCase,
    by_name,
    call_through_server,
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
    served_model,
)
from .hostile import Exchange, HostileServer
from .replay import RECORDINGS

API = "openai-completions"
INFO = pp.Model(
    id="gpt-5-mini",
    name="GPT-5 mini",
    api=API,
    provider="openai",
    base_url="http://replaced-by-the-replay-server",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=0.25, output=2, cache_read=0.025, cache_write=0),
    context_window=400_000,
    max_tokens=128_000,
)
# A model on a local server (llama.cpp): no image input, free, a small output limit.
LOCAL = pp.Model(
    id="qwen3-8b",
    name="Qwen3 8B (local)",
    api=API,
    provider="llama-cpp",
    base_url="http://replaced-by-the-replay-server",
    reasoning=True,
    input=[pp.InputKind.TEXT],
    cost=pp.ModelCost(),
    context_window=32_768,
    max_tokens=8192,
)
ENCRYPTED = (
    '{"type":"reasoning.encrypted","data":"CiQB0e2Kb3mXq8YpLz4RtVw7NcJd1Hs6Ua9Gf2Ek5Bi0Oy3TnEiwBAdHtSbqJ",'
    '"id":"tool_read_Xk2pQ9","format":"google-gemini-v1","index":0}'
)
# The compat switches of a models.json entry for a local server (llama.cpp), all but one set.
LOCAL_COMPAT = {
    "supportsStore": False,
    "supportsDeveloperRole": False,
    "supportsUsageInStreaming": False,
    "maxTokensField": "max_tokens",
    "supportsStrictMode": False,
    "requiresToolResultName": True,
    "requiresAssistantAfterToolResult": True,
    "requiresThinkingAsText": True,
    "thinkingFormat": "qwen-chat-template",
    "requiresMistralToolIds": True,  # a switch of an older pi: ignored
}


def local_transcript() -> pp.AgentContext:
    """A turn of the local model with thinking, text and a tool call, whose result has an image."""
    own: dict[str, Any] = {"api": API, "provider": "llama-cpp", "model": "qwen3-8b"}
    return pp.AgentContext(
        system_prompt="Be brief.",
        messages=[
            pp.agent_message(message)
            for message in (
                pp.user_message("hi", timestamp=CLOCK_MS - 1000),
                pp.assistant_message(
                    pp.thinking("Greet, then read.", signature="reasoning_content"),
                    pp.text("Hello."),
                    pp.tool_call("call_1", "read", {"path": "README.md"}),
                    stop_reason=pp.StopReason.TOOL_USE,
                    timestamp=CLOCK_MS - 900,
                    **own,
                ),
                pp.tool_result_message(
                    "call_1", "read", "# pi-proto", pp.image(b"\x89PNG", "image/png"), timestamp=CLOCK_MS - 800
                ),
                pp.user_message("Thanks", timestamp=CLOCK_MS - 700),
            )
        ],
        tools=[READ],
    )


case = partial(provider_case, API)
CASES = [
    case("text"),
    case("reasoning-content", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)),
    case("reasoning-no-usage"),
    case("reasoning-duplicated"),
    case("reasoning-text"),
    case("encrypted-reasoning"),
    case("tool-call-fragments"),
    case("two-tool-calls"),
    case("tool-calls-reused-index"),
    case("tool-calls-no-index"),
    case("cache-usage"),
    case("usage-on-choice"),
    case("length"),
    case("length-in-tool-call"),
    case("content-filter"),
    case("invalid-tool-arguments"),
    case("error-mid-stream"),
    case("cut-mid-stream", "text.http", cut_after=3),
    case("error-401"),
    case("error-404"),
    case("error-400-vllm"),
    case("error-400-openrouter"),
    case("error-429-long", options=RETRYING),
    case("error-429-then-text", "error-429-short.http", "text.http", options=RETRYING),
    case("error-500", "error-500.http", "error-500.http", "error-500.http"),
    case(
        "compat-local-server",
        "reasoning-content.http",
        model=LOCAL,
        config={"compat": LOCAL_COMPAT},
        context=local_transcript(),
        options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.HIGH),
    ),
    ProviderCase(f"{API}/compat-wrong-type", API, (), config={"compat": {"supportsStore": "no"}}),  # no request
    *output_limit_cases(API, INFO),
]
BY_NAME = by_name(CASES)
usage, message = Expected(INFO).usage, Expected(INFO).message
# The model OpenAI's chunks name: a dated snapshot of the one asked for, which pi keeps as responseModel.
SNAPSHOT = "gpt-5-mini-2025-08-07"


def request_body(
    info: pp.Model, context: pp.AgentContext, options: pp.GenerationOptions | None = None, **compat: Any
) -> dict[str, Any]:
    """The body `body()` builds for a call, without sending it."""
    config = ModelConfig(info=info, api_key=SECRET, compat=compat)
    return body(Call(config, context, options, AssistantMessageEventStream()))


def ended(call_id: str, name: str, arguments: str, **more: str) -> str:
    """The outline's payload of a toolcallEnd event."""
    fields = {"id": call_id, "name": name, "argumentsJson": arguments, **more}
    return f"toolCall={fields!r}"


# --- streams ------------------------------------------------------------------------------------------


async def test_text_streams_each_delta_and_takes_usage_from_the_last_chunk() -> None:
    events, final = await run(BY_NAME["text"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Hello'",
        "textDelta 0 delta='! 你好，'",
        "textDelta 0 delta='how can I help?'",
        "textEnd 0 usage=25/15/0/0",  # the usage chunk came after finish_reason; the block ends at the stream's end
        "done STOP",
    ]
    assert final == message(
        text("Hello! 你好，how can I help?"),
        usage=usage(25, 15, reasoning=0),
        stop=pp.StopReason.STOP,
        response=Response("chatcmpl-CbX1tq9v0mWgYpB3ZrLk2Hs8aQeJd", SNAPSHOT, "stop"),
    )


async def test_llama_cpp_reasoning_content_is_thinking_signed_with_its_field_and_usage_rides_the_finish() -> None:
    events, final = await run(BY_NAME["reasoning-content"], INFO)
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        "thinkingDelta 0 delta='27 * 453: 27 * 400 = 10800, '",
        "thinkingDelta 0 delta='27 * 53 = 1431; total 12231.'",
        "thinkingEnd 0 thinkingSignature='reasoning_content'",
        "textStart 1",
        "textDelta 1 delta='27 × 453 = 12231.'",
        "textEnd 1 usage=40/61/0/0",
        "done STOP",
    ]
    assert final == message(
        thinking("27 * 453: 27 * 400 = 10800, 27 * 53 = 1431; total 12231.", "reasoning_content"),
        text("27 × 453 = 12231."),
        usage=usage(40, 61, reasoning=0),  # llama.cpp gives no reasoning count: 0, as pi counts it
        stop=pp.StopReason.STOP,
        response=Response("chatcmpl-ZVQ3Wm3xYk8bS0jPq1N5tLrA7uCdEf2g", "qwen3-8b", "stop"),
    )


async def test_ollama_reasoning_without_a_usage_chunk_leaves_usage_at_zero() -> None:
    events, final = await run(BY_NAME["reasoning-no-usage"], INFO)
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        "thinkingDelta 0 delta='The user greets me. '",
        "thinkingDelta 0 delta='I greet back.'",
        "thinkingEnd 0 thinkingSignature='reasoning'",
        "textStart 1",
        "textDelta 1 delta='Hi! How can I help?'",
        "textEnd 1",
        "done STOP",
    ]
    assert final == message(
        thinking("The user greets me. I greet back.", "reasoning"),
        text("Hi! How can I help?"),
        usage=NO_USAGE,  # no usage chunk: no reasoning count either
        stop=pp.StopReason.STOP,
        response=Response("chatcmpl-412", "qwen3:8b", "stop"),
    )


async def test_reasoning_sent_in_two_fields_is_read_once_from_the_first() -> None:
    events, final = await run(BY_NAME["reasoning-duplicated"], INFO)
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        "thinkingDelta 0 delta='Short question.'",
        "thinkingEnd 0 thinkingSignature='reasoning_content'",
        "textStart 1",
        "textDelta 1 delta='Yes.'",
        "textEnd 1 usage=12/9/0/0",
        "done STOP",
    ]
    assert final.content == [thinking("Short question.", "reasoning_content"), text("Yes.")]


async def test_reasoning_text_is_the_third_reasoning_field() -> None:
    events, final = await run(BY_NAME["reasoning-text"], INFO)
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        "thinkingDelta 0 delta='Greeting.'",
        "thinkingEnd 0 thinkingSignature='reasoning_text' usage=10/5/0/0",  # usage and text share the last chunk
        "textStart 1",
        "textDelta 1 delta='Hello.'",
        "textEnd 1",
        "done STOP",
    ]
    assert final == message(
        thinking("Greeting.", "reasoning_text"),
        text("Hello."),
        usage=usage(10, 5, reasoning=0),
        stop=pp.StopReason.STOP,
        response=Response("chatcmpl-rt1", "claude-sonnet-4.5", "stop"),
    )


async def test_openrouter_encrypted_reasoning_becomes_the_thought_signature_of_its_tool_call() -> None:
    events, final = await run(BY_NAME["encrypted-reasoning"], INFO)
    reasoning = "**Planning the read**\nI should read the README first."
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        f"thinkingDelta 0 delta={reasoning!r}",
        "thinkingEnd 0 thinkingSignature='reasoning'",
        "toolcallStart 1 id='tool_read_Xk2pQ9' name='read'",
        """toolcallDelta 1 delta='{"path":"README.md"}'""",
        "toolcallEnd 1 "
        + ended("tool_read_Xk2pQ9", "read", '{"path":"README.md"}', thoughtSignature=ENCRYPTED)
        + " usage=120/48/0/0",
        "done TOOL_USE",
    ]
    assert final == message(
        thinking(reasoning, "reasoning"),
        tool_call("tool_read_Xk2pQ9", "read", '{"path":"README.md"}', thought_signature=ENCRYPTED),
        usage=usage(120, 48, reasoning=30),  # completion_tokens count the 30 reasoning tokens already
        stop=pp.StopReason.TOOL_USE,
        response=Response("gen-1764000000-AbCdEfGhIjKlMnOpQrSt", "google/gemini-3-pro-preview", "tool_calls"),
    )


async def test_tool_call_arguments_stream_fragment_by_fragment() -> None:
    events, final = await run(BY_NAME["tool-call-fragments"], INFO)
    arguments = '{"location":"San Francisco, CA","unit":"fahrenheit","days":[1,2]}'
    fragments = [
        '{"lo',
        "cation",
        '":"San',
        " Francisco",
        ', CA","',
        'unit":"',
        "fahrenheit",
        '","days":[',
        "1,2",
        "]}",
    ]
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Let me check the weather.'",
        "textEnd 0",
        "toolcallStart 1 id='call_DdmO9pD3xa9XTPNJ32zg2hcA' name='get_weather'",
        *[f"toolcallDelta 1 delta={fragment!r}" for fragment in fragments],
        "toolcallEnd 1 " + ended("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", arguments) + " usage=472/89/0/0",
        "done TOOL_USE",
    ]
    assert final == message(
        text("Let me check the weather."),
        tool_call("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", arguments),
        usage=usage(472, 89, reasoning=0),
        stop=pp.StopReason.TOOL_USE,
        response=Response("chatcmpl-CbX4Nt8eY3pZjSc6AuOm5Kv1dThMg", SNAPSHOT, "tool_calls"),
    )


async def test_two_tool_calls_whose_fragments_interleave_each_take_their_own_by_index() -> None:
    events, final = await run(BY_NAME["two-tool-calls"], INFO)
    first, second = "call_A1b2C3d4E5f6G7h8I9j0K1l2", "call_M3n4O5p6Q7r8S9t0U1v2W3x4"
    assert outline(events) == [
        "start",
        f"toolcallStart 0 id={first!r} name='read'",
        f"toolcallStart 1 id={second!r} name='read'",
        """toolcallDelta 0 delta='{"path":'""",
        """toolcallDelta 1 delta='{"path":'""",
        """toolcallDelta 1 delta='"Makefile"}'""",
        """toolcallDelta 0 delta='"README.md"}'""",
        "toolcallEnd 0 " + ended(first, "read", '{"path":"README.md"}') + " usage=480/74/0/0",
        "toolcallEnd 1 " + ended(second, "read", '{"path":"Makefile"}'),
        "done TOOL_USE",
    ]
    assert final == message(
        tool_call(first, "read", '{"path":"README.md"}'),
        tool_call(second, "read", '{"path":"Makefile"}'),
        usage=usage(480, 74, reasoning=0),
        stop=pp.StopReason.TOOL_USE,
        response=Response("chatcmpl-CbX7Qw1hB6sCmVf9DxRp8Ny4gWkPj", SNAPSHOT, "tool_calls"),
    )


async def test_a_new_id_at_a_used_index_is_a_second_call() -> None:
    events, final = await run(BY_NAME["tool-calls-reused-index"], INFO)  # Ollama numbers every call 0
    assert outline(events) == [
        "start",
        "toolcallStart 0 id='call_k2x8mwq1' name='read'",
        """toolcallDelta 0 delta='{"path":"README.md"}'""",
        "toolcallStart 1 id='call_p7r3zt5v' name='read'",
        """toolcallDelta 1 delta='{"path":"Makefile"}'""",
        "toolcallEnd 0 " + ended("call_k2x8mwq1", "read", '{"path":"README.md"}') + " usage=210/38/0/0",
        "toolcallEnd 1 " + ended("call_p7r3zt5v", "read", '{"path":"Makefile"}'),
        "done TOOL_USE",
    ]
    assert final.content == [
        tool_call("call_k2x8mwq1", "read", '{"path":"README.md"}'),
        tool_call("call_p7r3zt5v", "read", '{"path":"Makefile"}'),
    ]


async def test_tool_calls_without_index_are_told_apart_by_id_and_name_and_one_without_id_gets_one() -> None:
    events, final = await run(BY_NAME["tool-calls-no-index"], INFO)  # Gemini's OpenAI endpoint
    assert outline(events) == [
        "start",
        "toolcallStart 0 id='function-call-11422813926226541539' name='read' usage=95/30/0/0",
        """toolcallDelta 0 delta='{"path":"README.md"}'""",
        "toolcallStart 1 id='call_1' name='read'",
        """toolcallDelta 1 delta='{"path":"Makefile"}'""",
        "toolcallEnd 0 " + ended("function-call-11422813926226541539", "read", '{"path":"README.md"}'),
        "toolcallEnd 1 " + ended("call_1", "read", '{"path":"Makefile"}'),
        "done TOOL_USE",
    ]
    assert final == message(
        tool_call("function-call-11422813926226541539", "read", '{"path":"README.md"}'),
        tool_call("call_1", "read", '{"path":"Makefile"}'),
        usage=usage(95, 30, reasoning=0),
        stop=pp.StopReason.TOOL_USE,
        response=Response("Qm4kaPXqM9S3-uQPq8bYAQ", "gemini-2.5-flash", "tool_calls"),
    )


async def test_cached_tokens_leave_the_input_and_the_output_counts_reasoning_once() -> None:
    events, final = await run(BY_NAME["cache-usage"], INFO)
    assert outline(events)[-2:] == ["textEnd 0 usage=128/64/1920/0", "done STOP"]
    # prompt 2048 of which 1920 cached; completion 64, its 40 reasoning tokens included
    assert final.usage == usage(128, 64, cache_read=1920, reasoning=40)
    assert final.usage.total_tokens == 2112


async def test_usage_on_the_choice_counts_when_the_chunk_has_none() -> None:
    events, final = await run(BY_NAME["usage-on-choice"], INFO)  # Moonshot
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Hi there.'",
        "textEnd 0 usage=19/13/0/0",
        "done STOP",
    ]
    assert final == message(
        text("Hi there."),
        usage=usage(19, 13, reasoning=0),
        stop=pp.StopReason.STOP,
        response=Response("chatcmpl-6910a1b2c3d4e5f6", "kimi-k2-0905-preview", "stop"),
    )


async def test_finish_reason_length_is_a_length_stop() -> None:
    events, final = await run(BY_NAME["length"], INFO)
    assert outline(events)[-1] == "done LENGTH"
    assert final == message(
        text("Once upon a time, in a"),
        usage=usage(18, 8, reasoning=0),
        stop=pp.StopReason.LENGTH,
        response=Response("chatcmpl-CbX3Ms7dX2oYiRb5ZtNl4Ju0cSgLf", SNAPSHOT, "length"),
    )


async def test_a_tool_call_cut_by_length_keeps_its_raw_arguments() -> None:
    events, final = await run(BY_NAME["length-in-tool-call"], INFO)
    assert outline(events)[-2:] == [
        "toolcallEnd 0 "
        + ended("call_Hq7WbN2kLm4PxR8sTv1yZc3D", "read", '{"path":"READ"}', rawArguments='{"path":"READ')
        + " usage=310/4/0/0",
        "done LENGTH",
    ]
    assert final == message(
        tool_call("call_Hq7WbN2kLm4PxR8sTv1yZc3D", "read", '{"path":"READ"}', raw='{"path":"READ'),
        usage=usage(310, 4, reasoning=0),
        stop=pp.StopReason.LENGTH,
        response=Response("chatcmpl-CbX5Ou9fZ4qAkTd7BvPn6Lw2eUiNh", SNAPSHOT, "length"),
    )


async def test_a_content_filter_ends_with_an_error_that_keeps_the_text() -> None:
    # Azure: prompt filter results first, in a chunk without choices
    events, final = await run(BY_NAME["content-filter"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        """textDelta 0 delta="I can't help\"""",
        "textEnd 0 usage=22/4/0/0",
        "error ERROR",
    ]
    assert final == message(
        text("I can't help"),
        usage=usage(22, 4, reasoning=0),
        stop=pp.StopReason.ERROR,
        error="the provider stopped with finish_reason 'content_filter'",
        # The prompt filter chunk's id and model are empty: the first chunk that names them counts.
        response=Response("chatcmpl-AzF1lT3r", "gpt-4o-2024-11-20", "content_filter"),
    )


async def test_tool_arguments_that_are_not_json_end_with_an_error_that_keeps_them_raw() -> None:
    events, final = await run(BY_NAME["invalid-tool-arguments"], INFO)
    assert outline(events)[-1] == "error ERROR"
    raw = '{"path": "README.md", oops}'
    assert final == message(
        tool_call("call_Kp3RzV8nQw2YtL6mXc9bJd4F", "read", "{}", raw=raw),
        usage=usage(301, 12, reasoning=0),
        stop=pp.StopReason.ERROR,
        error="tool call 'call_Kp3RzV8nQw2YtL6mXc9bJd4F' (read) has arguments that are not a JSON object",
        response=Response("chatcmpl-CbX6Pv0gA5rBlUe8CwQo7Mx3fVjOi", SNAPSHOT, "tool_calls"),
    )


async def test_an_error_chunk_mid_stream_keeps_what_came_before() -> None:
    events, final = await run(BY_NAME["error-mid-stream"], INFO)
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Partial answer'", "error ERROR"]
    assert final == message(
        text("Partial answer"),
        usage=NO_USAGE,
        stop=pp.StopReason.ERROR,
        error="the provider failed mid-stream with server_error: Provider disconnected unexpectedly",
        # The SDK raises at the error chunk, before its finish_reason "error" is read.
        response=Response("gen-1764000000-AbCdEfGhIjKlMnOpQrSt", "google/gemini-3-pro-preview"),
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
        response=Response("chatcmpl-CbX1tq9v0mWgYpB3ZrLk2Hs8aQeJd", SNAPSHOT),
    )


@pytest.mark.parametrize(
    ("name", "error"),
    [
        (
            "error-401",
            "the provider answered 401 invalid_request_error (invalid_api_key): Incorrect API key provided: ***. "
            "You can find your API key at https://platform.openai.com/account/api-keys.",
        ),
        (
            "error-404",
            "the provider answered 404 invalid_request_error (model_not_found): The model `gpt-5-nonexistent` does "
            "not exist or you do not have access to it.",
        ),
        (
            "error-400-vllm",
            "the provider answered 400 BadRequestError: This model's maximum context length is 32768 tokens. "
            "However, you requested 40000 tokens (8000 in the messages, 32000 in the completion). Please reduce the "
            "length of the messages or completion.",
        ),
        (
            "error-400-openrouter",  # the upstream provider's error follows OpenRouter's
            "the provider answered 400: Provider returned error\n"
            '{"error":{"message":"messages.1.content: tool_use ids must be unique","type":"invalid_request_error"}}',
        ),
        (
            "error-429-long",
            "the provider answered 429 requests (rate_limit_exceeded): Rate limit reached for gpt-5-mini in "
            "organization org-Xq2Lm8Rt on requests per day (RPD): Limit 10000, Used 10000, Requested 1. Please try "
            "again in 2m0s.; the provider asks to retry after 120 s, longer than max_retry_delay_ms (60000 ms)",
        ),
        (
            "error-500",
            "the provider answered 500 server_error: The server had an error while processing your request. "
            "Sorry about that!",
        ),
    ],
)
async def test_an_error_status_ends_with_one_error_event_that_names_the_model(name: str, error: str) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final == message(usage=NO_USAGE, stop=pp.StopReason.ERROR, error=error)


async def test_a_client_cancel_closes_the_provider_connection_and_ends_aborted() -> None:
    events, closed = await cancel_while_streaming(
        INFO, RECORDINGS / API / "text.http", provider_events=2, client_events=3
    )
    assert closed, "the provider never saw its connection close"
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Hello'", "error ABORTED"]


# --- requests -----------------------------------------------------------------------------------------


async def test_the_request_carries_the_call_options_as_pi_maps_them() -> None:
    options = pp.GenerationOptions(
        temperature=0.5,
        max_tokens=1000,
        reasoning=pp.ThinkingLevel.LOW,
        tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read"),
        cache_retention=pp.CacheRetention.LONG,  # a server pi does not know keeps a long cache
        session_id="session-7",  # so the session is the cache key
        metadata_json='{"user_id": "user-7"}',  # pi sends no metadata to this API
        headers={"x-trace": "abc"},
        provider_options_json='{"parallel_tool_calls": false, "service_tier": "flex"}',
    )
    png = b"\x89PNG\r\n\x1a\n"
    context = pp.AgentContext(
        system_prompt="Be brief.",
        messages=[pp.agent_message(pp.user_message("hi", pp.image(png, "image/png")))],
        tools=[READ],
    )
    _, replay = await play(case("options", "text.http", context=context, options=options), INFO)
    request = replay.requests[0]
    assert request.path == "/chat/completions"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.headers["x-trace"] == "abc"
    assert "session_id" not in request.headers  # session headers are OpenRouter's by default
    assert request.body == {
        "model": "gpt-5-mini",
        "stream": True,
        "prompt_cache_key": "session-7",
        "prompt_cache_retention": "24h",
        "stream_options": {"include_usage": True},
        "store": False,
        "max_completion_tokens": 1000,
        "temperature": 0.5,
        "messages": [
            {"role": "developer", "content": "Be brief."},  # a reasoning model on a server with the role
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                ],
            },
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "read", "description": "Read a file", "parameters": READ_SCHEMA, "strict": False},
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": "read"}},
        "reasoning_effort": "low",
        "parallel_tool_calls": False,
        "service_tier": "flex",
    }


def anthropic_turn() -> pp.AssistantMessage:
    """What Claude answered, with signed and redacted thinking and an Anthropic tool call id."""
    return pp.assistant_message(
        pp.thinking("I should read it.", signature="EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYdsRgk8s"),
        pp.thinking("", signature="EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8c", redacted=True),
        pp.text("Reading it now."),
        pp.tool_call("toolu_01A09q90qw90lq917835lq9", "read", {"path": "README.md"}),
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        stop_reason=pp.StopReason.TOOL_USE,
        timestamp=CLOCK_MS - 900,
    )


def responses_turn() -> pp.AssistantMessage:
    """What an OpenAI Responses model answered: a reasoning item and a `call_id|item_id` tool call id."""
    return pp.assistant_message(
        pp.thinking("Check the Makefile too.", signature='{"type":"reasoning","id":"rs_68d1c0ffee","summary":[]}'),
        pp.tool_call("call_Q1w2E3r4T5y6|fc_68d1c0ffee0a1b2c+/=xyz", "read", {"path": "Makefile"}),
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason=pp.StopReason.TOOL_USE,
        timestamp=CLOCK_MS - 700,
    )


async def test_a_context_other_models_wrote_is_replayed_as_pi_transforms_it() -> None:
    context = pp.AgentContext(
        messages=[
            pp.agent_message(message)
            for message in (
                pp.user_message("Read the README.", timestamp=CLOCK_MS - 1000),
                anthropic_turn(),
                pp.tool_result_message("toolu_01A09q90qw90lq917835lq9", "read", "# pi-proto", timestamp=CLOCK_MS - 800),
                responses_turn(),
                pp.tool_result_message(
                    "call_Q1w2E3r4T5y6|fc_68d1c0ffee0a1b2c+/=xyz", "read", "all: test", timestamp=CLOCK_MS - 600
                ),
                pp.user_message("Thanks. Summarize.", timestamp=CLOCK_MS - 500),
            )
        ]
    )
    events, replay = await play(case("replay", "text.http", context=context), INFO)
    assert outline(events)[-1] == "done STOP"
    assert replay.requests[0].body == {
        "model": "gpt-5-mini",
        "stream": True,
        "stream_options": {"include_usage": True},
        "store": False,
        "max_completion_tokens": 128_000,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Read the README."}]},
            {
                # Claude's thinking, signed and redacted, is left out: it is Claude's, and as text it
                # would read as the reply; the id fits OpenAI's rules as it is.
                "role": "assistant",
                "content": "Reading it now.",
                "tool_calls": [
                    {
                        "id": "toolu_01A09q90qw90lq917835lq9",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path":"README.md"}'},
                    }
                ],
            },
            {"role": "tool", "content": "# pi-proto", "tool_call_id": "toolu_01A09q90qw90lq917835lq9"},
            {
                # The Responses reasoning item is left out too, which leaves no text; the call id
                # keeps its call part, and its result follows it.
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_Q1w2E3r4T5y6",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path":"Makefile"}'},
                    }
                ],
            },
            {"role": "tool", "content": "all: test", "tool_call_id": "call_Q1w2E3r4T5y6"},
            {"role": "user", "content": [{"type": "text", "text": "Thanks. Summarize."}]},
        ],
        "tools": [],  # tool history without tools: proxies in front of Anthropic want the field
    }


async def test_our_own_reasoning_goes_back_in_the_field_it_came_in_with_its_encrypted_details() -> None:
    own: dict[str, Any] = {"api": API, "provider": "openai", "model": "gpt-5-mini"}
    context = pp.AgentContext(
        messages=[
            pp.agent_message(message)
            for message in (
                pp.user_message("What is 27 × 453?", timestamp=CLOCK_MS - 1000),
                pp.assistant_message(
                    pp.thinking("27 * 453 = 12231.", signature="reasoning_content"),
                    pp.text("12231."),
                    timestamp=CLOCK_MS - 900,
                    **own,
                ),
                pp.user_message("Read the README.", timestamp=CLOCK_MS - 800),
                pp.assistant_message(
                    pp.thinking("Plan.", signature="reasoning"),
                    pp.tool_call("tool_read_Xk2pQ9", "read", {"path": "README.md"}, thought_signature=ENCRYPTED),
                    stop_reason=pp.StopReason.TOOL_USE,
                    timestamp=CLOCK_MS - 700,
                    **own,
                ),
                pp.tool_result_message("tool_read_Xk2pQ9", "read", "# pi-proto", timestamp=CLOCK_MS - 600),
            )
        ],
        tools=[READ],
    )
    _, replay = await play(case("own", "text.http", context=context), INFO)
    assert replay.requests[0].body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is 27 × 453?"}]},
        {"role": "assistant", "content": "12231.", "reasoning_content": "27 * 453 = 12231."},
        {"role": "user", "content": [{"type": "text", "text": "Read the README."}]},
        {
            "role": "assistant",
            "content": None,
            "reasoning": "Plan.",
            "tool_calls": [
                {
                    "id": "tool_read_Xk2pQ9",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"README.md"}'},
                }
            ],
            "reasoning_details": [json.loads(ENCRYPTED)],
        },
        {"role": "tool", "content": "# pi-proto", "tool_call_id": "tool_read_Xk2pQ9"},
    ]


async def test_the_compat_switches_of_models_json_shape_the_request_for_a_local_server() -> None:
    events, replay = await play(BY_NAME["compat-local-server"], INFO)
    assert not leaks(events)
    assert outline(events)[-1] == "done STOP"
    final = final_message(events)
    free = pp.Cost(input=0, output=0, cache_read=0, cache_write=0, total=0, total_from_provider=False)  # no rates
    assert final.usage == pp.Usage(
        input=40, output=61, cache_read=0, cache_write=0, total_tokens=101, cost=free, reasoning=0
    )
    assert final.response_model is None  # the server names the model asked for
    assert replay.requests[0].body == {
        "model": "qwen3-8b",
        "stream": True,  # no stream_options, no store
        "max_tokens": 8192,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "Greet, then read."}, {"type": "text", "text": "Hello."}],
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path":"README.md"}'},
                    }
                ],
            },
            # the model takes no images: pi's placeholder says one was there
            {
                "role": "tool",
                "content": "# pi-proto\n(tool image omitted: model does not support images)",
                "tool_call_id": "call_1",
                "name": "read",
            },
            {"role": "assistant", "content": "I have processed the tool results."},
            {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
        ],
        "tools": [
            {"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": READ_SCHEMA}}
        ],
        "chat_template_kwargs": {"enable_thinking": True, "preserve_thinking": True},
    }


OPENAI_API = "https://api.openai.com/v1"
PROXY = "https://llm-proxy.example.com/v1"
SHORT, LONG, NONE = pp.CacheRetention.SHORT, pp.CacheRetention.LONG, pp.CacheRetention.NONE


@pytest.mark.parametrize(
    ("base_url", "retention", "compat", "expected"),
    [
        (OPENAI_API, SHORT, {}, {"prompt_cache_key": "session-7"}),  # OpenAI's own API always takes the key
        (OPENAI_API, pp.CacheRetention.UNSPECIFIED, {}, {"prompt_cache_key": "session-7"}),  # short, as in pi
        (PROXY, SHORT, {}, {}),  # a server pi does not know gets none for a short cache
        (PROXY, LONG, {}, {"prompt_cache_key": "session-7", "prompt_cache_retention": "24h"}),
        (PROXY, LONG, {"supportsLongCacheRetention": False}, {}),
        ("https://api.together.xyz/v1", LONG, {}, {}),  # Together keeps no long cache (detected)
        (PROXY, SHORT, {"promptCacheKeyMode": "enabled"}, {"prompt_cache_key": "session-7"}),
        (OPENAI_API, SHORT, {"promptCacheKeyMode": "disabled"}, {}),
        (OPENAI_API, LONG, {"promptCacheKeyMode": "disabled"}, {"prompt_cache_retention": "24h"}),
        (OPENAI_API, NONE, {}, {}),
    ],
)
def test_the_session_id_is_the_prompt_cache_key_and_long_retention_24_hours_where_pi_sends_them(
    base_url: str, retention: pp.CacheRetention, compat: dict[str, Any], expected: dict[str, Any]
) -> None:
    info = dataclasses.replace(INFO, base_url=base_url)
    options = pp.GenerationOptions(session_id="session-7", cache_retention=retention)
    sent = request_body(info, hi(), options, **compat)
    assert {key: sent[key] for key in ("prompt_cache_key", "prompt_cache_retention") if key in sent} == expected


def test_a_prompt_cache_key_is_at_most_64_characters_of_the_session_id() -> None:
    info = dataclasses.replace(INFO, base_url=OPENAI_API)
    session = "ü" * 63 + "🙂" + "tail"  # characters, not bytes
    sent = request_body(info, hi(), pp.GenerationOptions(session_id=session))
    assert sent["prompt_cache_key"] == "ü" * 63 + "🙂"


OPENROUTER = dataclasses.replace(INFO, id="openai/gpt-5", provider="openrouter")


@pytest.mark.parametrize(
    ("compat", "retention", "expected"),
    [
        ({}, SHORT, {"x-session-id": "session-7"}),  # OpenRouter's, detected
        (
            {"sessionAffinityFormat": "openai"},
            SHORT,
            {"session_id": "session-7", "x-client-request-id": "session-7", "x-session-affinity": "session-7"},
        ),
        (
            {"sessionAffinityFormat": "openai-nosession"},
            LONG,
            {"x-client-request-id": "session-7", "x-session-affinity": "session-7"},
        ),
        ({"sendSessionAffinityHeaders": False}, SHORT, {}),
        ({}, NONE, {}),  # no caching: no session either
    ],
)
async def test_openrouter_gets_the_session_as_affinity_headers(
    compat: dict[str, Any], retention: pp.CacheRetention, expected: dict[str, str]
) -> None:
    options = pp.GenerationOptions(session_id="session-7", cache_retention=retention, headers={"x-trace": "abc"})
    _, replay = await play(case("session", "text.http", options=options, config={"compat": compat}), OPENROUTER)
    headers = replay.requests[0].headers
    names = ("x-session-id", "session_id", "x-client-request-id", "x-session-affinity")
    assert {name: headers[name] for name in names if name in headers} == expected
    assert headers["x-trace"] == "abc"


async def test_a_call_header_overrides_a_session_header() -> None:
    options = pp.GenerationOptions(session_id="session-7", headers={"x-session-id": "mine"})
    _, replay = await play(case("session", "text.http", options=options), OPENROUTER)
    assert replay.requests[0].headers["x-session-id"] == "mine"


async def test_images_a_model_cannot_see_leave_pis_placeholder_text() -> None:
    png = pp.image(b"\x89PNG", "image/png")
    placeholder = pp.text("(image omitted: model does not support images)")
    context = pp.AgentContext(
        messages=[
            pp.agent_message(pp.user_message("Look:", png, png, "and", placeholder, png, "", timestamp=1)),
            pp.agent_message(
                pp.assistant_message(
                    pp.tool_call("call_1", "screenshot"), api=API, provider="llama-cpp", model=LOCAL.id, timestamp=2
                )
            ),
            pp.agent_message(pp.tool_result_message("call_1", "screenshot", png, timestamp=3)),
        ]
    )
    _, replay = await play(case("no-vision", "text.http", context=context), LOCAL)
    assert replay.requests[0].body["messages"] == [
        {
            # a run of images is one placeholder, none after a text that says it already; empty texts go
            "role": "user",
            "content": [
                {"type": "text", "text": "Look:"},
                {"type": "text", "text": "(image omitted: model does not support images)"},
                {"type": "text", "text": "and"},
                {"type": "text", "text": "(image omitted: model does not support images)"},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}],
        },
        {
            "role": "tool",
            "content": "(tool image omitted: model does not support images)",
            "tool_call_id": "call_1",
        },
    ]


def test_a_tool_result_without_text_or_images_says_so() -> None:
    context = pp.AgentContext(
        messages=[
            pp.agent_message(
                pp.assistant_message(pp.tool_call("call_1", "touch"), api=API, provider="openai", model=INFO.id)
            ),
            pp.agent_message(pp.tool_result_message("call_1", "touch", "  ", timestamp=3)),
        ]
    )
    assert request_body(INFO, context)["messages"][-1]["content"] == "(no tool output)"


async def test_sampling_params_of_the_model_and_the_call_go_over_the_named_fields() -> None:
    info = dataclasses.replace(LOCAL, sampling_params_json='{"top_k":20,"temperature":0.7,"min_p":0.05}')
    options = pp.GenerationOptions(temperature=0.2, sampling_params_json='{"top_k":40,"repetition_penalty":1.1}')
    _, replay = await play(case("sampling", "text.http", options=options), info)
    sent = replay.requests[0].body
    assert {key: sent[key] for key in ("temperature", "top_k", "min_p", "repetition_penalty")} == {
        "temperature": 0.7,  # the model's own, over the call's named field, as pi merges them
        "top_k": 40,  # the call's, over the model's
        "min_p": 0.05,
        "repetition_penalty": 1.1,
    }


async def test_the_calls_max_retries_replace_the_two_retries() -> None:
    for retries, requests in ((0, 1), (1, 2)):
        options = pp.GenerationOptions(max_retries=retries)
        _, replay = await play(case("retries", "error-500.http", "error-500.http", options=options), INFO)
        assert len(replay.requests) == requests


@pytest.mark.usefixtures("patient_connect")
async def test_the_calls_timeout_ms_is_the_idle_timeout() -> None:
    async def silent(exchange: Exchange) -> None:
        await exchange.hang()

    async with HostileServer(silent) as provider:
        model = served_model(dataclasses.replace(INFO, base_url=provider.base_url), timeout_ms=60_000)
        events = await call_through_server(model, hi(), pp.GenerationOptions(timeout_ms=300))
    assert final_message(events).error_message == (
        "the provider 'openai' sent nothing for 0.3 s (the idle timeout; timeoutMs in models.json sets it)"
    )


async def test_a_compat_switch_of_the_wrong_type_fails_the_call_before_any_request() -> None:
    events, replay = await play(BY_NAME["compat-wrong-type"], INFO)
    assert replay.requests == []
    assert not leaks(events)
    assert outline(events) == ["start", "error ERROR"]
    assert final_message(events).error_message == "compat.supportsStore of model 'gpt-5-mini' must be true or false"


def test_tool_result_images_follow_in_a_user_turn_after_the_bridge() -> None:
    context = pp.AgentContext(
        messages=[
            pp.agent_message(pp.user_message("Look.", timestamp=1)),
            pp.agent_message(
                pp.assistant_message(
                    pp.tool_call("call_1", "screenshot"), api=API, provider="openai", model="gpt-5-mini", timestamp=2
                )
            ),
            pp.agent_message(
                pp.tool_result_message("call_1", "screenshot", pp.image(b"\x89PNG", "image/png"), timestamp=3)
            ),
            pp.agent_message(pp.user_message("And?", timestamp=4)),
        ]
    )
    sent = request_body(INFO, context, requiresAssistantAfterToolResult=True)["messages"]
    assert sent[2:] == [
        {"role": "tool", "content": "(see attached image)", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "I have processed the tool results."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Attached image(s) from tool result:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "And?"}]},  # the images' turn was a user's: no bridge
    ]
    assert sent[1] == {
        "role": "assistant",
        "content": "",  # requiresAssistantAfterToolResult servers refuse null content
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}],
    }


REASONING_KEYS = ("reasoning_effort", "enable_thinking", "chat_template_kwargs", "reasoning", "thinking")
# pi 1.6's own thinkingLevelMaps (its generated catalog) for models it knows.
GPT_5_MINI = {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None}
GPT_5_4 = {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh"}
GROQ_QWEN3 = {"off": "none", "minimal": None, "low": None, "medium": None, "high": "default", "xhigh": None}


@pytest.mark.parametrize(
    ("model_id", "levels", "level", "compat", "expected"),
    [
        ("gpt-5-mini", {}, pp.ThinkingLevel.HIGH, {}, {"reasoning_effort": "high"}),
        ("gpt-5-mini", {}, pp.ThinkingLevel.MINIMAL, {}, {"reasoning_effort": "minimal"}),
        ("gpt-5-mini", {}, pp.ThinkingLevel.XHIGH, {}, {"reasoning_effort": "high"}),  # xhigh only where mapped
        ("gpt-5-mini", {}, pp.ThinkingLevel.MAX, {}, {"reasoning_effort": "high"}),  # and max too
        ("gpt-5-mini", {}, pp.ThinkingLevel.UNSPECIFIED, {}, {}),
        ("gpt-5-mini", GPT_5_MINI, pp.ThinkingLevel.UNSPECIFIED, {}, {}),  # off is unsupported: nothing to send
        ("gpt-5.4", GPT_5_4, pp.ThinkingLevel.XHIGH, {}, {"reasoning_effort": "xhigh"}),
        ("gpt-5.4", GPT_5_4, pp.ThinkingLevel.MAX, {}, {"reasoning_effort": "xhigh"}),  # clamped down to xhigh
        ("gpt-5.4", GPT_5_4, pp.ThinkingLevel.MINIMAL, {}, {"reasoning_effort": "low"}),  # clamped up to low
        ("gpt-5.4", GPT_5_4, pp.ThinkingLevel.UNSPECIFIED, {}, {"reasoning_effort": "none"}),  # the map's off
        ("qwen/qwen3-32b", GROQ_QWEN3, pp.ThinkingLevel.LOW, {}, {"reasoning_effort": "default"}),  # up to high
        ("gpt-5-mini", {}, pp.ThinkingLevel.HIGH, {"supportsReasoningEffort": False}, {}),
        # reasoningEffortMap is an older pi's switch; pi 1.6 ignores it for thinkingLevelMap.
        (
            "gpt-5-mini",
            {},
            pp.ThinkingLevel.HIGH,
            {"reasoningEffortMap": {"high": "max"}},
            {"reasoning_effort": "high"},
        ),
        (
            "glm-4.6",
            {},
            pp.ThinkingLevel.HIGH,
            {"thinkingFormat": "zai"},
            {"thinking": {"type": "enabled", "clear_thinking": False}, "reasoning_effort": "high"},
        ),
        ("glm-4.6", {}, pp.ThinkingLevel.UNSPECIFIED, {"thinkingFormat": "zai"}, {"thinking": {"type": "disabled"}}),
        (
            "glm-4.6",
            {},
            pp.ThinkingLevel.HIGH,
            {"thinkingFormat": "zai", "supportsReasoningEffort": False},
            {"thinking": {"type": "enabled", "clear_thinking": False}},
        ),
        (
            "qwen3-max",
            {},
            pp.ThinkingLevel.LOW,
            {"thinkingFormat": "qwen"},
            {"enable_thinking": True, "reasoning_effort": "low"},
        ),
        (
            "qwen3-8b",
            {},
            pp.ThinkingLevel.UNSPECIFIED,
            {"thinkingFormat": "qwen-chat-template"},
            {"chat_template_kwargs": {"enable_thinking": False, "preserve_thinking": True}},
        ),
        (
            "openai/gpt-5",
            {"medium": "low"},
            pp.ThinkingLevel.MEDIUM,
            {"thinkingFormat": "openrouter"},
            {"reasoning": {"effort": "low"}},
        ),
        (
            "openai/gpt-5",
            {},
            pp.ThinkingLevel.UNSPECIFIED,
            {"thinkingFormat": "openrouter"},
            {"reasoning": {"effort": "none"}},
        ),
        (
            "openai/gpt-5",
            {"off": "minimal"},
            pp.ThinkingLevel.UNSPECIFIED,
            {"thinkingFormat": "openrouter"},
            {"reasoning": {"effort": "minimal"}},
        ),
        ("openai/gpt-5", GPT_5_MINI, pp.ThinkingLevel.UNSPECIFIED, {"thinkingFormat": "openrouter"}, {}),
    ],
)
def test_the_reasoning_level_clamped_to_the_models_map_becomes_the_fields_of_the_servers_thinking_format(
    model_id: str, levels: dict[str, str | None], level: pp.ThinkingLevel, compat: dict[str, Any], expected: Any
) -> None:
    info = dataclasses.replace(INFO, id=model_id, thinking_level_map=level_map(levels))
    sent = request_body(info, hi(), pp.GenerationOptions(reasoning=level), **compat)
    assert {key: sent[key] for key in REASONING_KEYS if key in sent} == expected


def test_a_model_without_reasoning_gets_no_reasoning_fields_whatever_its_format() -> None:
    info = dataclasses.replace(INFO, reasoning=False, thinking_level_map=level_map(GPT_5_4))
    for compat in ({}, {"thinkingFormat": "zai"}, {"thinkingFormat": "openrouter"}):
        sent = request_body(info, hi(), pp.GenerationOptions(reasoning=pp.ThinkingLevel.HIGH), **compat)
        assert not any(key in sent for key in REASONING_KEYS)


OPENROUTER_CLAUDE = dataclasses.replace(
    INFO, id="anthropic/claude-sonnet-4.5", provider="openrouter", base_url="https://openrouter.ai/api/v1"
)


def test_openrouter_claude_gets_cache_marks_as_pi_places_them_and_the_routing_of_its_compat() -> None:
    context = pp.AgentContext(
        system_prompt="Be brief.",
        messages=[
            pp.agent_message(pp.user_message("hi", timestamp=1)),
            pp.agent_message(
                pp.assistant_message("Hello.", api=API, provider="openrouter", model=OPENROUTER_CLAUDE.id, timestamp=2)
            ),
            pp.agent_message(pp.user_message("again", timestamp=3)),
        ],
        tools=[READ],
    )
    routing = {"only": ["anthropic"], "allow_fallbacks": False}
    sent = request_body(OPENROUTER_CLAUDE, context, openRouterRouting=routing)
    mark = {"type": "ephemeral"}
    assert sent["messages"] == [
        {"role": "developer", "content": [{"type": "text", "text": "Be brief.", "cache_control": mark}]},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": [{"type": "text", "text": "again", "cache_control": mark}]},
    ]
    assert sent["tools"][-1]["cache_control"] == mark
    assert sent["provider"] == {"only": ["anthropic"], "allow_fallbacks": False}
    assert sent["reasoning"] == {"effort": "none"}  # detected: openrouter's format, and no level asked
    long = request_body(OPENROUTER_CLAUDE, context, pp.GenerationOptions(cache_retention=pp.CacheRetention.LONG))
    assert long["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "prompt_cache_retention" in long  # and OpenAI's field, as pi sends both
    short = request_body(
        OPENROUTER_CLAUDE,
        context,
        pp.GenerationOptions(cache_retention=pp.CacheRetention.LONG),
        supportsLongCacheRetention=False,
    )
    assert short["tools"][-1]["cache_control"] == mark
    none = request_body(OPENROUTER_CLAUDE, context, pp.GenerationOptions(cache_retention=pp.CacheRetention.NONE))
    assert "cache_control" not in json.dumps(none)


def test_vercel_ai_gateway_gets_its_routing_as_provider_options() -> None:
    info = dataclasses.replace(
        INFO, id="moonshotai/kimi-k2.5", provider="vercel", base_url="https://ai-gateway.vercel.sh/v1"
    )
    routing = {"only": ["fireworks"], "order": ["fireworks", "novita"]}
    assert request_body(info, hi(), vercelGatewayRouting=routing)["providerOptions"] == {"gateway": routing}
    assert "providerOptions" not in request_body(info, hi(), vercelGatewayRouting={})
    assert "provider" not in request_body(INFO, hi(), openRouterRouting={"only": ["x"]})  # not openrouter.ai


@pytest.mark.parametrize(
    ("provider", "base_url", "model_id", "expected"),
    [
        ("openai", "https://api.openai.com/v1", "gpt-5-mini", Compat()),
        ("llama-cpp", "http://localhost:8080/v1", "qwen3-8b", Compat()),
        (
            "xai",
            "https://api.x.ai/v1",
            "grok-4",
            Compat(supports_store=False, supports_developer_role=False, supports_reasoning_effort=False),
        ),
        (
            "custom",
            "https://api.z.ai/api/coding/paas/v4",
            "glm-4.6",
            Compat(
                supports_store=False,
                supports_developer_role=False,
                supports_reasoning_effort=False,
                thinking_format="zai",
            ),
        ),
        (
            "cerebras",
            "https://api.cerebras.ai/v1",
            "gpt-oss-120b",
            Compat(supports_store=False, supports_developer_role=False),
        ),
        (
            "deepseek",
            "https://api.deepseek.com",
            "deepseek-reasoner",
            Compat(supports_store=False, supports_developer_role=False),
        ),
        (
            "chutes",
            "https://llm.chutes.ai/v1",
            "deepseek-ai/DeepSeek-R1",
            Compat(supports_store=False, supports_developer_role=False, max_tokens_field="max_tokens"),
        ),
        (
            "my-router",
            "https://openrouter.ai/api/v1",
            "openai/gpt-5",
            Compat(
                thinking_format="openrouter", send_session_affinity_headers=True, session_affinity_format="openrouter"
            ),
        ),
        (
            "openrouter",
            "https://openrouter.ai/api/v1",
            "anthropic/claude-sonnet-4.5",
            Compat(
                thinking_format="openrouter",
                send_session_affinity_headers=True,
                session_affinity_format="openrouter",
                cache_control_format="anthropic",
            ),
        ),
        # pi 1.6 gives Groq's Qwen3 32B its "default" effort by a thinkingLevelMap, not by detection.
        ("groq", "https://api.groq.com/openai/v1", "qwen/qwen3-32b", Compat()),
        (
            "together",
            "https://api.together.xyz/v1",
            "deepseek-ai/DeepSeek-R1",
            Compat(supports_long_cache_retention=False),
        ),
        ("nim", "https://integrate.api.nvidia.com/v1", "nvidia/nemotron", Compat(supports_long_cache_retention=False)),
    ],
)
def test_switches_a_model_leaves_out_are_detected_from_its_provider_and_base_url(
    provider: str, base_url: str, model_id: str, expected: Compat
) -> None:
    info = dataclasses.replace(INFO, id=model_id, provider=provider, base_url=base_url)
    assert detect_compat(ModelConfig(info=info, api_key=SECRET)) == expected


@pytest.mark.parametrize(
    ("provider", "call_id", "expected"),
    [
        ("openai", "call_Q1w2E3r4T5y6|fc_68d1c0ffee+/=", "call_Q1w2E3r4T5y6"),
        ("ollama", "call.1:a|fc_x", "call_1_a"),  # cleaned to letters, digits, _ and -
        ("ollama", "c" * 45 + "|fc", "c" * 40),
        ("openai", "toolu_" + "x" * 50, "toolu_" + "x" * 34),  # OpenAI takes at most 40 characters
        ("ollama", "toolu_" + "x" * 50, "toolu_" + "x" * 50),  # other servers take the id as it is
    ],
)
def test_foreign_tool_call_ids_are_rewritten_as_pi_rewrites_them(provider: str, call_id: str, expected: str) -> None:
    config = ModelConfig(info=dataclasses.replace(INFO, provider=provider), api_key=SECRET)
    rewrite = normalize_id(Call(config, hi(), None, AssistantMessageEventStream()))
    assert rewrite(call_id) == expected
