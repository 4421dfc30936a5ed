"""anthropic-messages: the official SDK against recorded Messages streams, through our server."""

from __future__ import annotations

import dataclasses
import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import pi_proto as pp
from pi_proto.models.providers.anthropic_messages import adaptive_thinking
from pi_proto.models.providers.catalog import ModelConfig

from .expect import NO_USAGE, Expected, Response, text, thinking, tool_call
from .harness import (
    CLOCK_MS,
    READ,
    READ_SCHEMA,
    RETRYING,
    SECRET,
    by_name,
    cancel_while_streaming,
    crowded,
    final_message,
    hi,
    outline,
    output_limit_cases,
    play,
    provider_case,
    run,
)
from .replay import RECORDINGS

API = "anthropic-messages"
INFO = pp.Model(
    id="claude-sonnet-4-5",
    name="Claude Sonnet 4.5",
    api=API,
    provider="anthropic",
    base_url="http://replaced-by-the-replay-server",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
    context_window=200_000,
    max_tokens=64_000,
)


def options_context() -> pp.AgentContext:
    """A call with a system prompt and a tool, for the request options."""
    return pp.AgentContext(
        system_prompt="Be brief.",
        messages=[pp.agent_message(pp.user_message("hi", timestamp=CLOCK_MS - 1000))],
        tools=[READ],
    )


# Every option pi maps onto the Messages request.
OPTIONS = pp.GenerationOptions(
    temperature=0.5,
    max_tokens=1000,
    reasoning=pp.ThinkingLevel.LOW,
    tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read"),
    cache_retention=pp.CacheRetention.LONG,
    metadata_json='{"user_id": "user-7"}',
    headers={"x-trace": "abc"},
)


def replayed_context() -> pp.AgentContext:
    """A turn of openai-responses (its reasoning, a text signature, a tool call id of its own) replayed."""
    openai_turn = pp.assistant_message(
        pp.thinking("The user wants a file.", signature='{"type":"reasoning","id":"rs_1","encrypted_content":"gAAA"}'),
        pp.text("Reading it.", signature="msg_1"),
        pp.tool_call("call_abc|fc_123", "read", {"path": "README.md"}),
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason=pp.StopReason.TOOL_USE,
        timestamp=1,
    )
    return pp.AgentContext(
        messages=[
            pp.agent_message(pp.user_message("read the readme", timestamp=1)),
            pp.agent_message(openai_turn),
            pp.agent_message(pp.tool_result_message("call_abc|fc_123", "read", "# pi-proto", "line 2", timestamp=1)),
            pp.agent_message(pp.user_message("summarise it", timestamp=1)),
        ]
    )


# Claude Sonnet 4.6, which thinks adaptively; pi's catalog marks it with compat.forceAdaptiveThinking.
SONNET_4_6 = dataclasses.replace(INFO, id="claude-sonnet-4-6", name="Claude Sonnet 4.6", max_tokens=128_000)
ADAPTIVE = {"compat": {"forceAdaptiveThinking": True}}
WITH_TOOLS = pp.AgentContext(
    messages=[pp.agent_message(pp.user_message("hi", timestamp=CLOCK_MS - 1000))], tools=[READ]
)


case = partial(provider_case, API)
CASES = [
    case("text"),
    case("thinking", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)),
    case("redacted-thinking"),
    case("tool-call-fragments"),
    case("two-tool-calls"),
    case("cache-usage"),
    case("response-details"),
    case("length"),
    case("refusal"),
    case("invalid-tool-arguments"),
    case("overloaded-mid-stream"),
    case("overloaded-before-content"),
    case("cut-mid-stream", "text.http", cut_after=4),
    case("error-401"),
    case("error-404"),
    case("error-429-long", options=RETRYING),
    case("error-429-then-text", "error-429-short.http", "text.http", options=RETRYING),
    case("error-500", "error-500.http", "error-500.http", "error-500.http"),
    case("request-options", "text.http", context=options_context(), options=OPTIONS),
    case("replayed-context", "text.http", context=replayed_context()),
    case(
        "adaptive-thinking",
        "thinking.http",
        model=SONNET_4_6,
        config=ADAPTIVE,
        options=pp.GenerationOptions(temperature=0.5, max_tokens=2000, reasoning=pp.ThinkingLevel.HIGH),
    ),
    case(
        "eager-streaming-off",
        "tool-call-fragments.http",
        context=WITH_TOOLS,
        config={"compat": {"supportsEagerToolInputStreaming": False}},
    ),
    *output_limit_cases(API, INFO),
    case(  # a reasoning budget on top of the output limit, fitted into the window with it
        "thinking-budget-fitted",
        "thinking.http",
        model=dataclasses.replace(INFO, context_window=8_000),
        context=crowded(),
        options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM),
    ),
]
BY_NAME = by_name(CASES)
message = Expected(INFO).message
# pi counts the one-hour cache writes from message_start on: 0 when the split is not given.
usage = partial(Expected(INFO).usage, cache_write_1h=0)


def response(message_id: str, stop: str | None) -> Response:
    """The recording's message id (from message_start) and stop_reason (from message_delta)."""
    return Response(id=message_id, raw_stop_reason=stop)


async def test_text_streams_each_delta_with_usage_and_cost() -> None:
    events, final = await run(BY_NAME["text"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0 usage=25/1/0/0",
        "textDelta 0 delta='Hello'",
        "textDelta 0 delta='! 你好，'",
        "textDelta 0 delta='how can I help?'",
        "textEnd 0",
        "done STOP",
    ]
    assert final == message(
        text("Hello! 你好，how can I help?"),
        usage=usage(25, 15),
        stop=pp.StopReason.STOP,
        response=response("msg_01XFDUDYJgAACzvnptvVoYEL", "end_turn"),
    )


async def test_thinking_keeps_its_signature_from_signature_deltas() -> None:
    events, final = await run(BY_NAME["thinking"], INFO)
    signature = (
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYdsRgk8sKZdA9O8w1jrCCbMp7PBIOH0dn7gQYlVOebZSUbFZgGmk0LY"
    )
    assert outline(events) == [
        "start",
        "thinkingStart 0 usage=40/3/0/0",
        "thinkingDelta 0 delta='27 * 453: 27 * 400 = 10800, '",
        "thinkingDelta 0 delta='27 * 53 = 1431; total 12231.'",
        f"thinkingEnd 0 thinkingSignature={signature!r}",
        "textStart 1",
        "textDelta 1 delta='27 × 453 = 12231.'",
        "textEnd 1",
        "done STOP",
    ]
    assert final == message(
        thinking("27 * 453: 27 * 400 = 10800, 27 * 53 = 1431; total 12231.", signature),
        text("27 × 453 = 12231."),
        usage=usage(40, 61),
        stop=pp.StopReason.STOP,
        response=response("msg_01Ab8KnHcxBxU9sUvGMRjBqD", "end_turn"),
    )


async def test_redacted_thinking_is_a_whole_block_with_pis_placeholder_and_the_encrypted_data_as_signature() -> None:
    events, final = await run(BY_NAME["redacted-thinking"], INFO)
    data = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB4URj"
    assert outline(events) == [
        "start",
        "thinkingStart 0 usage=31/2/0/0",
        "thinkingDelta 0 delta='[Reasoning redacted]'",  # pi's placeholder, so the block reads as pi's
        f"thinkingEnd 0 thinkingSignature={data!r} redacted=True",
        "textStart 1",
        "textDelta 1 delta='Done.'",
        "textEnd 1",
        "done STOP",
    ]
    redacted = pp.AssistantContent(
        thinking=pp.ThinkingContent(thinking="[Reasoning redacted]", thinking_signature=data, redacted=True)
    )
    assert final == message(
        redacted,
        text("Done."),
        usage=usage(31, 20),
        stop=pp.StopReason.STOP,
        response=response("msg_01QxT6ZzWrfnGSGoTnwX7Kp2", "end_turn"),
    )


async def test_tool_call_arguments_stream_fragment_by_fragment() -> None:
    events, final = await run(BY_NAME["tool-call-fragments"], INFO)
    arguments = '{"location": "San Francisco, CA", "unit": "fahrenheit", "days": [1, 2]}'
    assert outline(events) == [
        "start",
        "textStart 0 usage=472/2/0/0",
        "textDelta 0 delta='Let me check the weather.'",
        "textEnd 0",
        "toolcallStart 1 id='toolu_01T1x1fJ34qAmk2tNTrN7Up6' name='get_weather'",
        *[
            f"toolcallDelta 1 delta={fragment!r}"
            for fragment in (
                '{"loc',
                'ation": "San',
                " Francisc",
                'o, CA", ',
                '"unit": "fah',
                'renheit", "days": [',
                "1, 2",
                "]}",
            )
        ],
        "toolcallEnd 1 toolCall={'id': 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'name': 'get_weather', "
        f"'argumentsJson': {arguments!r}}}",
        "done TOOL_USE",
    ]
    assert final == message(
        text("Let me check the weather."),
        tool_call("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", arguments),
        usage=usage(472, 89),
        stop=pp.StopReason.TOOL_USE,
        response=response("msg_014p7gG3wDgGV9EUtLvnow3U", "tool_use"),
    )


async def test_two_tool_calls_in_one_turn() -> None:
    events, final = await run(BY_NAME["two-tool-calls"], INFO)
    assert [line.split(" usage")[0] for line in outline(events)] == [
        "start",
        "toolcallStart 0 id='toolu_01A09q90qw90lq917835lq9' name='read'",
        'toolcallDelta 0 delta=\'{"path": "README.md"}\'',
        "toolcallEnd 0 toolCall={'id': 'toolu_01A09q90qw90lq917835lq9', 'name': 'read', "
        "'argumentsJson': '{\"path\": \"README.md\"}'}",
        "toolcallStart 1 id='toolu_01B19r91rx91mr928946mr0' name='read'",
        'toolcallDelta 1 delta=\'{"path": "Make\'',
        "toolcallDelta 1 delta='file\"}'",
        "toolcallEnd 1 toolCall={'id': 'toolu_01B19r91rx91mr928946mr0', 'name': 'read', "
        "'argumentsJson': '{\"path\": \"Makefile\"}'}",
        "done TOOL_USE",
    ]
    assert final == message(
        tool_call("toolu_01A09q90qw90lq917835lq9", "read", '{"path": "README.md"}'),
        tool_call("toolu_01B19r91rx91mr928946mr0", "read", '{"path": "Makefile"}'),
        usage=usage(472, 74),
        stop=pp.StopReason.TOOL_USE,
        response=response("msg_014p7gG3wDgGV9EUtLvnow3U", "tool_use"),
    )


async def test_cache_read_and_write_are_counted_and_priced() -> None:
    events, final = await run(BY_NAME["cache-usage"], INFO)
    assert outline(events)[1] == "textStart 0 usage=12/1/24000/1800"
    assert final.usage == usage(12, 9, cache_read=24000, cache_write=1800)  # none of it for an hour
    assert final.usage.total_tokens == 25821


async def test_a_dated_model_one_hour_cache_writes_and_thinking_tokens_are_kept_as_pi_keeps_them() -> None:
    events, final = await run(BY_NAME["response-details"], INFO)
    assert outline(events)[1] == "textStart 0 usage=20/1/0/3000"
    partial = events[1].partial
    assert partial is not None
    assert partial.usage is not None
    assert partial.usage.cache_write_1h == 2000  # from message_start's split
    assert partial.usage.reasoning is None  # not said until message_delta
    assert final.response_model == "claude-sonnet-4-5-20250929"  # not the model asked for: kept
    assert final.response_id == "msg_01Dt5kW3nQ8rX2vB7mJ4pL9s"
    assert final.raw_stop_reason == "end_turn"
    assert final.usage is not None
    # message_delta leaves the split out, so the write keeps it; its thinking tokens are a part of the 30.
    assert (final.usage.cache_write, final.usage.cache_write_1h, final.usage.reasoning) == (3000, 2000, 22)
    assert (final.usage.output, final.usage.total_tokens) == (30, 3050)
    # The hour's writes cost twice the input rate, as pi prices them.
    assert final.usage == usage(20, 30, cache_write=3000, cache_write_1h=2000, reasoning=22)


async def test_max_tokens_is_a_length_stop() -> None:
    events, final = await run(BY_NAME["length"], INFO)
    assert outline(events)[-1] == "done LENGTH"
    assert final == message(
        text("Once upon a time, in a"),
        usage=usage(18, 8),
        stop=pp.StopReason.LENGTH,
        response=response("msg_01Hc2sWgXjB2nE8mD6rPf4Lq", "max_tokens"),
    )


async def test_a_refusal_ends_with_an_error_that_keeps_the_text() -> None:
    events, final = await run(BY_NAME["refusal"], INFO)
    assert outline(events)[-1] == "error ERROR"
    assert final == message(
        text("I can't help"),
        usage=usage(22, 4),
        stop=pp.StopReason.ERROR,
        error="the model stopped with stop reason 'refusal'",
        response=response("msg_01Rf7uJ3mQ9pW2xK5vT8sN1c", "refusal"),
    )


async def test_tool_arguments_that_are_not_json_end_with_an_error_that_keeps_them_raw() -> None:
    events, final = await run(BY_NAME["invalid-tool-arguments"], INFO)
    assert outline(events)[-1] == "error ERROR"
    raw = '{"path": "README.md", oops}'
    assert final.content == [tool_call("toolu_01C29s92sy92ns939057ns1", "read", "{}", raw=raw)]
    assert (
        final.error_message
        == "tool call 'toolu_01C29s92sy92ns939057ns1' (read) has arguments that are not a JSON object"
    )


async def test_an_error_event_mid_stream_keeps_what_came_before() -> None:
    events, final = await run(BY_NAME["overloaded-mid-stream"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0 usage=30/1/0/0",
        "textDelta 0 delta='Partial answer'",
        "error ERROR",
    ]
    assert final == message(
        text("Partial answer"),
        usage=usage(30, 1),
        stop=pp.StopReason.ERROR,
        error="the provider failed mid-stream with overloaded_error: Overloaded",
        response=response("msg_01Mp4nE8sR2tY6wQ9zX3cV7b", None),
    )


async def test_an_overloaded_stream_before_any_content_ends_with_the_providers_words() -> None:
    events, final = await run(BY_NAME["overloaded-before-content"], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final.error_message == "the provider failed mid-stream with overloaded_error: Overloaded"


async def test_a_connection_cut_mid_stream_keeps_what_came_before() -> None:
    events, final = await run(BY_NAME["cut-mid-stream"], INFO)
    assert outline(events) == ["start", "textStart 0 usage=25/1/0/0", "textDelta 0 delta='Hello'", "error ERROR"]
    assert final.content == [text("Hello")]
    assert final.error_message == (
        "the connection to the provider broke: peer closed connection without sending complete message body "
        "(incomplete chunked read)"
    )


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("error-401", "the provider answered 401 authentication_error: invalid x-api-key: ***"),
        ("error-404", "the provider answered 404 not_found_error: model: claude-nonexistent"),
        (
            "error-429-long",
            "the provider answered 429 rate_limit_error: Number of request tokens has exceeded your per-minute "
            "rate limit; the provider asks to retry after 120 s, longer than max_retry_delay_ms (60000 ms)",
        ),
        ("error-500", "the provider answered 500 api_error: Internal server error"),
    ],
)
async def test_an_error_status_ends_with_one_error_event_that_names_the_model(name: str, error: str) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final == message(usage=NO_USAGE, stop=pp.StopReason.ERROR, error=error)


async def test_a_client_cancel_closes_the_provider_connection_and_ends_aborted() -> None:
    events, closed = await cancel_while_streaming(
        INFO, RECORDINGS / API / "text.http", provider_events=4, client_events=3
    )
    assert closed, "the provider never saw its connection close"
    assert outline(events) == ["start", "textStart 0 usage=25/1/0/0", "textDelta 0 delta='Hello'", "error ABORTED"]


async def test_the_request_carries_the_call_options_as_pi_maps_them() -> None:
    _, replay = await play(BY_NAME["request-options"], INFO)
    request = replay.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.headers["x-trace"] == "abc"
    assert request.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    one_hour = {"type": "ephemeral", "ttl": "1h"}  # `long`, which the model's compat does not refuse
    assert request.body == {
        "model": "claude-sonnet-4-5",
        "stream": True,
        "max_tokens": 1000 + 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1000 + 2048 - 1024, "display": "summarized"},
        # no temperature: extended thinking takes none
        "system": [{"type": "text", "text": "Be brief.", "cache_control": one_hour}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": one_hour}]}],
        "tools": [
            {
                "name": "read",
                "description": "Read a file",
                "eager_input_streaming": True,
                "input_schema": READ_SCHEMA,
                "cache_control": one_hour,
            }
        ],
        "tool_choice": {"type": "tool", "name": "read"},
        "metadata": {"user_id": "user-7"},
    }


async def test_a_context_another_provider_wrote_is_replayed_as_pi_replays_it() -> None:
    _, replay = await play(BY_NAME["replayed-context"], INFO)
    assert replay.requests[0].body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "read the readme"}]},
        {
            "role": "assistant",
            "content": [
                # the other model's reasoning is left out; its text and call go back without signatures
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "call_abc_fc_123", "name": "read", "input": {"path": "README.md"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_abc_fc_123",
                    "content": "# pi-proto\nline 2",
                    "is_error": False,
                }
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "summarise it", "cache_control": {"type": "ephemeral"}}]},
    ]


# --- the request as pi 1.6 builds it ----------------------------------------------------------------

WRITE = pp.Tool(name="write", description="Write a file", parameters_json=READ.parameters_json)


async def sent(
    options: pp.GenerationOptions | None = None,
    *,
    model: pp.Model = INFO,
    tools: tuple[pp.Tool, ...] = (READ,),
    **compat: object,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The body and headers of the request a call to `model` sends, its models.json compat given."""
    context = pp.AgentContext(messages=hi().messages, tools=list(tools))
    played = case("request", "text.http", context=context, options=options, model=model, config={"compat": compat})
    _, replay = await play(played, INFO)
    request = replay.requests[0]
    return request.body, request.headers


def named(model_id: str, **fields: Any) -> pp.Model:
    return dataclasses.replace(INFO, id=model_id, **fields)


async def test_temperature_goes_without_thinking_and_never_where_compat_refuses_it() -> None:
    body, _ = await sent(pp.GenerationOptions(temperature=0.5))
    assert body["temperature"] == 0.5
    body, _ = await sent(pp.GenerationOptions(temperature=0.5, reasoning=pp.ThinkingLevel.LOW))
    assert "temperature" not in body
    body, _ = await sent(pp.GenerationOptions(temperature=0.5), supportsTemperature=False)
    assert "temperature" not in body
    body, _ = await sent(pp.GenerationOptions(temperature=0.5), supportsMidConvoEffort=True)
    assert "temperature" not in body


@pytest.mark.parametrize(
    "model_id",
    [
        *("claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-7", "claude-sonnet-5", "claude-haiku-5-5"),
        *("claude-fable-5", "anthropic/claude-sonnet-4.6", "claude-sonnet-4-6-20260101"),
    ],
)
async def test_claude_4_6_and_later_think_adaptively_with_the_max_tokens_asked_for(model_id: str) -> None:
    body, headers = await sent(
        pp.GenerationOptions(max_tokens=1000, reasoning=pp.ThinkingLevel.MEDIUM), model=named(model_id)
    )
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "medium"}
    assert body["max_tokens"] == 1000  # no budget to make room for
    assert "anthropic-beta" not in headers  # interleaved thinking is for budgets


@pytest.mark.parametrize(
    "model_id",
    ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1", "claude-sonnet-4-20250514", "claude-3-7-sonnet"],
)
async def test_older_claude_models_think_within_a_budget_added_to_max_tokens(model_id: str) -> None:
    body, headers = await sent(
        pp.GenerationOptions(max_tokens=1000, reasoning=pp.ThinkingLevel.MEDIUM), model=named(model_id)
    )
    # pi's budget, less what keeps 1024 tokens for the answer.
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1000 + 8192 - 1024, "display": "summarized"}
    assert "output_config" not in body
    assert body["max_tokens"] == 1000 + 8192
    assert headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"


async def test_compat_force_adaptive_thinking_decides_over_the_model_id() -> None:
    options = pp.GenerationOptions(reasoning=pp.ThinkingLevel.HIGH)
    body, _ = await sent(options, model=named("my-proxy-model"), forceAdaptiveThinking=True)
    assert body["thinking"]["type"] == "adaptive"
    body, _ = await sent(options, model=named("claude-opus-4-6"), forceAdaptiveThinking=False)
    assert body["thinking"]["type"] == "enabled"


@pytest.mark.parametrize(
    ("level", "effort"),
    [
        (pp.ThinkingLevel.MINIMAL, "low"),
        (pp.ThinkingLevel.HIGH, "high"),
        (pp.ThinkingLevel.XHIGH, "high"),
        (pp.ThinkingLevel.MAX, "max"),
    ],
)
async def test_an_effort_is_the_models_name_for_the_level_else_pis(level: pp.ThinkingLevel, effort: str) -> None:
    # claude-opus-4-6 as pi's catalog has it: max is "max"; xhigh, not named, is pi's "high".
    levels = [pp.ThinkingLevelMapping(level=pp.ModelThinkingLevel.MAX, value="max")]
    body, _ = await sent(
        pp.GenerationOptions(reasoning=level), model=named("claude-opus-4-6", thinking_level_map=levels)
    )
    assert body["output_config"] == {"effort": effort}


async def test_no_reasoning_level_turns_thinking_off_explicitly_where_the_model_can_turn_it_off() -> None:
    body, _ = await sent()
    assert body["thinking"] == {"type": "disabled"}
    body, _ = await sent(model=named("claude-3-5-haiku", reasoning=False))
    assert "thinking" not in body
    # A model whose level map has no "off" (pi's null) always thinks: nothing is said.
    always = [pp.ThinkingLevelMapping(level=pp.ModelThinkingLevel.OFF)]
    body, _ = await sent(model=named("claude-fable-5", thinking_level_map=always))
    assert "thinking" not in body


async def test_tools_stream_their_input_eagerly_instead_of_through_the_beta() -> None:
    body, headers = await sent()
    assert [tool.get("eager_input_streaming") for tool in body["tools"]] == [True]
    assert "anthropic-beta" not in headers
    body, headers = await sent(supportsEagerToolInputStreaming=False)
    assert "eager_input_streaming" not in body["tools"][0]
    assert headers["anthropic-beta"] == "fine-grained-tool-streaming-2025-05-14"
    body, headers = await sent(tools=())
    assert "tools" not in body
    assert "anthropic-beta" not in headers


async def test_the_last_tool_carries_the_cache_breakpoint() -> None:
    body, _ = await sent(tools=(READ, WRITE))
    assert [tool.get("cache_control") for tool in body["tools"]] == [None, {"type": "ephemeral"}]
    body, _ = await sent(pp.GenerationOptions(cache_retention=pp.CacheRetention.NONE), tools=(READ, WRITE))
    assert [tool.get("cache_control") for tool in body["tools"]] == [None, None]
    body, _ = await sent(tools=(READ, WRITE), supportsCacheControlOnTools=False)
    assert [tool.get("cache_control") for tool in body["tools"]] == [None, None]
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}  # the prompt still is


async def test_long_retention_is_an_hour_unless_compat_refuses_it() -> None:
    options = pp.GenerationOptions(cache_retention=pp.CacheRetention.LONG)
    body, _ = await sent(options)
    assert body["tools"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    body, _ = await sent(options, supportsLongCacheRetention=False)
    assert body["tools"][0]["cache_control"] == {"type": "ephemeral"}


async def test_a_compat_switch_of_the_wrong_type_ends_the_call_before_any_request() -> None:
    played = case("request", "text.http", config={"compat": {"supportsTemperature": "no"}})
    events, replay = await play(played, INFO)
    assert replay.requests == []
    assert (
        final_message(events).error_message
        == "compat.supportsTemperature of model 'claude-sonnet-4-5' must be true or false"
    )


async def test_replayed_thinking_keeps_a_signed_blank_block_and_empty_signatures_where_compat_allows() -> None:
    turn = pp.assistant_message(
        pp.thinking("", signature="sig-1"),
        pp.thinking("unsigned", signature=""),
        pp.text("Done."),
        api=API,
        provider="anthropic",
        model=INFO.id,
        timestamp=1,
    )
    messages = [*hi().messages, pp.agent_message(turn), pp.agent_message(pp.user_message("more", timestamp=1))]

    async def replayed(**compat: object) -> list[dict[str, Any]]:
        played = case("replayed", "text.http", context=pp.AgentContext(messages=messages), config={"compat": compat})
        _, replay = await play(played, INFO)
        content: list[dict[str, Any]] = replay.requests[0].body["messages"][1]["content"]
        return content

    assert await replayed() == [
        {"type": "thinking", "thinking": "", "signature": "sig-1"},
        {"type": "text", "text": "unsigned"},
        {"type": "text", "text": "Done."},
    ]
    assert (await replayed(allowEmptySignature=True))[1] == {
        "type": "thinking",
        "thinking": "unsigned",
        "signature": "",
    }


async def test_an_adaptive_model_asks_for_an_effort_without_temperature_or_budget() -> None:
    _, replay = await play(BY_NAME["adaptive-thinking"], INFO)
    request = replay.requests[0]
    assert "anthropic-beta" not in request.headers
    assert request.body == {
        "model": "claude-sonnet-4-6",
        "stream": True,
        "max_tokens": 2000,
        "thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "high"},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
        ],
    }


async def test_a_model_that_cannot_stream_tool_input_eagerly_asks_for_the_fine_grained_beta() -> None:
    _, replay = await play(BY_NAME["eager-streaming-off"], INFO)
    request = replay.requests[0]
    assert request.headers["anthropic-beta"] == "fine-grained-tool-streaming-2025-05-14"
    assert request.body["tools"] == [
        {
            "name": "read",
            "description": "Read a file",
            "input_schema": READ_SCHEMA,
            "cache_control": {"type": "ephemeral"},
        }
    ]


PI_CATALOG = Path(__file__).parent.parent / "pi" / "node_modules" / "@earendil-works" / "pi-ai" / "dist" / "providers"


def test_the_adaptive_rule_is_the_one_pis_catalog_follows() -> None:
    """Every Claude model of pi's own catalog (for any provider) thinks adaptively here exactly when
    pi marks it with compat.forceAdaptiveThinking."""
    assert PI_CATALOG.exists(), f"{PI_CATALOG} is missing: `make pi-setup` installs pi's packages"
    wrong = []
    for path in sorted((PI_CATALOG / "data").glob("*.json")):
        models = json.loads(path.read_text(encoding="utf-8")).get(API, {}).values()
        for entry in models:
            if "claude" not in entry["id"] or not entry.get("reasoning"):
                continue
            marked = bool(entry.get("compat", {}).get("forceAdaptiveThinking"))
            ours = adaptive_thinking(ModelConfig(info=dataclasses.replace(INFO, id=entry["id"]), api_key=SECRET))
            if ours != marked and not entry["id"].endswith("-latest"):  # an alias: no version to read
                wrong.append(f"{path.stem}/{entry['id']}: pi {marked}, ours {ours}")
    assert not wrong, wrong
