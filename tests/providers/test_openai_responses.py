"""openai-responses: the official SDK against recorded Responses streams, through our server."""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import pytest

import pi_proto as pp
from pi_proto.models.providers import openai_responses
from pi_proto.models.providers.call import Call, ProviderError
from pi_proto.models.providers.catalog import ModelConfig

from .expect import NO_USAGE, Expected, Response, text, thinking, tool_call
from .harness import (
    READ,
    READ_SCHEMA,
    RETRYING,
    SECRET,
    by_name,
    cancel_while_streaming,
    final_message,
    level_map,
    outline,
    output_limit_cases,
    play,
    provider_case,
    run,
)
from .replay import RECORDINGS

API = "openai-responses"
# pi 1.6's thinkingLevelMaps (its generated catalog) for the models these tests serve.
GPT_5_2 = {
    "off": "none",
    "minimal": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": None,
}
GPT_5_MINI = {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None}
INFO = pp.Model(
    id="gpt-5.2",
    name="GPT-5.2",
    api=API,
    provider="openai",
    base_url="http://replaced-by-the-replay-server",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=1.75, output=14, cache_read=0.175, cache_write=0),
    context_window=400_000,
    max_tokens=128_000,
    thinking_level_map=level_map(GPT_5_2),
)


case = partial(provider_case, API)
CASES = [
    case("text"),
    case("thinking", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)),
    case("encrypted-reasoning", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)),
    case("tool-call-fragments"),
    case("two-tool-calls"),
    case("cache-usage"),
    case("flex-tier"),
    case("length"),
    case("content-filter"),
    case("refusal"),
    case("phase"),
    case("invalid-tool-arguments"),
    case("failed-mid-stream"),
    case("error-event-mid-stream"),
    case("cut-mid-stream", "text.http", cut_after=5),
    case("error-401"),
    case("error-404"),
    case("error-429-long", options=RETRYING),
    case("error-429-then-text", "error-429-short.http", "text.http", options=RETRYING),
    case("error-500", "error-500.http", "error-500.http", "error-500.http"),
    *output_limit_cases(API, INFO),
]
BY_NAME = by_name(CASES)
message = Expected(INFO).message
# A final response's usage always has output_tokens_details.reasoning_tokens in these recordings.
usage = partial(Expected(INFO).usage, reasoning=0)
RESPONSE_ID = "resp_0a1b2c3d4e5f60718293a4b5c6d7e8f901234567890abcde"  # every recording's response.created


def response(status: str | None = "completed") -> Response:
    """The recordings' response id, with the raw stop reason pi writes from the final status."""
    return Response(id=RESPONSE_ID, raw_stop_reason=status)


# The ids the recordings give their items.
MESSAGE_ID = "msg_0a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcd{:02d}"
CALL_ITEM_ID = "fc_0a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcd{:02d}"


def signed(number: int, phase: str | None = None) -> str:
    """The text signature of the recordings' message item `number`: pi's TextSignatureV1."""
    item_id = MESSAGE_ID.format(number)
    return f'{{"v":1,"id":"{item_id}","phase":"{phase}"}}' if phase else f'{{"v":1,"id":"{item_id}"}}'


async def test_text_streams_each_delta_and_keeps_the_message_id_as_signature() -> None:
    events, final = await run(BY_NAME["text"], INFO)
    signature = '{"v":1,"id":"msg_0a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcdef"}'  # pi's TextSignatureV1
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Hello'",
        "textDelta 0 delta='! 你好，'",
        "textDelta 0 delta='how can I help?'",
        f"textEnd 0 textSignature={signature!r}",
        "done STOP",
    ]
    assert final == message(
        text("Hello! 你好，how can I help?", signature),
        usage=usage(25, 15),
        stop=pp.StopReason.STOP,
        response=response(),
    )


async def test_reasoning_summaries_stream_as_thinking_signed_with_the_whole_reasoning_item() -> None:
    events, final = await run(BY_NAME["thinking"], INFO)
    # The reasoning item of output_item.done, as compact JSON (fields in the SDK's order).
    signature = (
        '{"id":"rs_0a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcd01","summary":['
        '{"text":"**Multiplying 27 by 453**\\n\\n27 × 400 = 10800 and 27 × 53 = 1431.","type":"summary_text"},'
        '{"text":"**Adding up**\\n\\n10800 + 1431 = 12231.","type":"summary_text"}],"type":"reasoning",'
        '"encrypted_content":"gAAAAABpJx2kR7n0Qm3vXw9T1bLc8yFhZ4sUaD6eKqN2oPjW5rGtHiVx3MzYf0lCdE7uB1nSaQ8wT2kJ4hG6pL9mV0cX"}'
    )
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        "thinkingDelta 0 delta='**Multiplying 27 by 453**\\n\\n'",
        "thinkingDelta 0 delta='27 × 400 = 10800 and 27 × 53 = 1431.'",
        "thinkingDelta 0 delta='\\n\\n'",  # between summary parts, as pi joins them
        "thinkingDelta 0 delta='**Adding up**\\n\\n10800 + 1431 = 12231.'",
        f"thinkingEnd 0 thinkingSignature={signature!r}",
        "textStart 1",
        "textDelta 1 delta='27 × 453 = 12231.'",
        f"textEnd 1 textSignature={signed(2)!r}",
        "done STOP",
    ]
    summary = (
        "**Multiplying 27 by 453**\n\n27 × 400 = 10800 and 27 × 53 = 1431.\n\n**Adding up**\n\n10800 + 1431 = 12231."
    )
    assert final == message(
        thinking(summary, signature),
        text("27 × 453 = 12231.", signed(2)),
        usage=usage(40, 61, reasoning=44),
        stop=pp.StopReason.STOP,
        response=response(),
    )


async def test_reasoning_without_a_summary_is_an_empty_thinking_block_keeping_the_encrypted_item() -> None:
    events, final = await run(BY_NAME["encrypted-reasoning"], INFO)
    signature = (
        '{"id":"rs_0a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcd03","summary":[],"type":"reasoning",'
        '"encrypted_content":"gAAAAABpJx2lT4e8Wq1nXz5R2cMd9uGiA7tVbE3fLrO1pQkX6sHuJwY4NaZg2mDeF8vC1oTbR9xU3lK5iH7qM0nW"}'
    )
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        f"thinkingEnd 0 thinkingSignature={signature!r}",
        "textStart 1",
        "textDelta 1 delta='Done.'",
        f"textEnd 1 textSignature={signed(4)!r}",
        "done STOP",
    ]
    assert final == message(
        thinking("", signature),
        text("Done.", signed(4)),
        usage=usage(31, 20, reasoning=16),
        stop=pp.StopReason.STOP,
        response=response(),
    )


async def test_function_call_arguments_stream_fragment_by_fragment_under_the_call_and_item_id() -> None:
    events, final = await run(BY_NAME["tool-call-fragments"], INFO)
    call_id = f"call_Qh7xW2mZ9kP4rT1vB8nL3sYd|{CALL_ITEM_ID.format(6)}"
    arguments = '{"location": "San Francisco, CA", "unit": "fahrenheit", "days": [1, 2]}'
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Let me check the weather.'",
        f"textEnd 0 textSignature={signed(5)!r}",
        f"toolcallStart 1 id={call_id!r} name='get_weather'",
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
        f"toolcallEnd 1 toolCall={{'id': {call_id!r}, 'name': 'get_weather', 'argumentsJson': {arguments!r}}}",
        "done TOOL_USE",
    ]
    assert final == message(
        text("Let me check the weather.", signed(5)),
        tool_call(call_id, "get_weather", arguments),
        usage=usage(472, 89),
        response=response(),
        stop=pp.StopReason.TOOL_USE,
    )


async def test_two_function_calls_in_one_turn() -> None:
    events, final = await run(BY_NAME["two-tool-calls"], INFO)
    first = f"call_A1b2C3d4E5f6G7h8I9j0K1l2|{CALL_ITEM_ID.format(7)}"
    second = f"call_M3n4O5p6Q7r8S9t0U1v2W3x4|{CALL_ITEM_ID.format(8)}"
    assert outline(events) == [
        "start",
        f"toolcallStart 0 id={first!r} name='read'",
        'toolcallDelta 0 delta=\'{"path": "README.md"}\'',
        f"toolcallEnd 0 toolCall={{'id': {first!r}, 'name': 'read', 'argumentsJson': '{{\"path\": \"README.md\"}}'}}",
        f"toolcallStart 1 id={second!r} name='read'",
        'toolcallDelta 1 delta=\'{"path": "Make\'',
        "toolcallDelta 1 delta='file\"}'",
        f"toolcallEnd 1 toolCall={{'id': {second!r}, 'name': 'read', 'argumentsJson': '{{\"path\": \"Makefile\"}}'}}",
        "done TOOL_USE",
    ]
    assert final == message(
        tool_call(first, "read", '{"path": "README.md"}'),
        tool_call(second, "read", '{"path": "Makefile"}'),
        usage=usage(472, 74),
        response=response(),
        stop=pp.StopReason.TOOL_USE,
    )


async def test_cached_tokens_are_the_cache_read_and_not_input() -> None:
    _, final = await run(BY_NAME["cache-usage"], INFO)
    # input_tokens 24012 of which 24000 cached: 12 input, 24000 cache read, 9 output.
    assert final == message(
        text("Cached hello.", signed(9)),
        usage=usage(12, 9, cache_read=24000),
        stop=pp.StopReason.STOP,
        response=response(),
    )
    assert final.usage is not None
    assert final.usage.total_tokens == 24021


async def test_a_flex_response_costs_half() -> None:
    _, final = await run(BY_NAME["flex-tier"], INFO)
    assert final.usage == usage(1000, 100, factor=0.5)
    assert final.usage.cost == pp.Cost(
        input=0.000875, output=0.0007, cache_read=0, cache_write=0, total=0.001575, total_from_provider=False
    )


async def test_incomplete_for_max_output_tokens_is_a_length_stop() -> None:
    events, final = await run(BY_NAME["length"], INFO)
    assert outline(events)[-2:] == [f"textEnd 0 textSignature={signed(11)!r}", "done LENGTH"]
    assert final == message(
        text("Once upon a time, in a", signed(11)),
        usage=usage(18, 8),
        stop=pp.StopReason.LENGTH,
        response=response("incomplete.max_output_tokens"),
    )


async def test_incomplete_for_the_content_filter_ends_with_an_error_that_keeps_the_text() -> None:
    events, final = await run(BY_NAME["content-filter"], INFO)
    assert outline(events)[-1] == "error ERROR"
    assert final == message(
        text("Here is how to", signed(12)),
        usage=usage(22, 4),
        response=response("incomplete.content_filter"),
        stop=pp.StopReason.ERROR,
        error="the response is incomplete: content_filter",
    )


async def test_a_refusal_streams_as_the_text_of_a_stop() -> None:
    events, final = await run(BY_NAME["refusal"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        'textDelta 0 delta="I\'m sorry, "',
        'textDelta 0 delta="but I can\'t help with that."',
        f"textEnd 0 textSignature={signed(13)!r}",
        "done STOP",
    ]
    assert final == message(
        text("I'm sorry, but I can't help with that.", signed(13)),
        usage=usage(22, 11),
        response=response(),
        stop=pp.StopReason.STOP,
    )


async def test_arguments_that_are_not_json_end_with_an_error_that_keeps_them_raw() -> None:
    events, final = await run(BY_NAME["invalid-tool-arguments"], INFO)
    call_id = f"call_C2d3E4f5G6h7I8j9K0l1M2n3|{CALL_ITEM_ID.format(14)}"
    assert outline(events)[-1] == "error ERROR"
    assert final == message(
        tool_call(call_id, "read", "{}", raw='{"path": "README.md", oops}'),
        usage=usage(472, 40),
        response=response(),
        stop=pp.StopReason.ERROR,
        error=f"tool call {call_id!r} (read) has arguments that are not a JSON object",
    )


@pytest.mark.parametrize(
    ("name", "error"),
    [
        (
            "failed-mid-stream",
            "the response failed with server_error: The server had an error processing your request. "
            "Sorry about that! You can retry your request.",
        ),
        (
            "error-event-mid-stream",
            "the provider failed mid-stream with server_error: An error occurred while processing your request.",
        ),
    ],
)
async def test_a_failure_mid_stream_keeps_what_came_before(name: str, error: str) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Partial answer'", "error ERROR"]
    # response.failed gives its status as the raw stop reason; an `error` event gives none.
    said = response("failed" if name == "failed-mid-stream" else None)
    assert final == message(
        text("Partial answer"), usage=NO_USAGE, stop=pp.StopReason.ERROR, error=error, response=said
    )


async def test_a_connection_cut_mid_stream_keeps_what_came_before() -> None:
    events, final = await run(BY_NAME["cut-mid-stream"], INFO)
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Hello'", "error ERROR"]
    assert final == message(
        text("Hello"),
        usage=NO_USAGE,
        stop=pp.StopReason.ERROR,
        response=response(None),  # cut after response.created
        error="the connection to the provider broke: peer closed connection without sending complete message body "
        "(incomplete chunked read)",
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
            "the provider answered 404 invalid_request_error (model_not_found): The model `gpt-nonexistent` does "
            "not exist or you do not have access to it.",
        ),
        (
            "error-429-long",
            "the provider answered 429 tokens (rate_limit_exceeded): Rate limit reached for gpt-5.2 in organization "
            "org-Xb2kQ9 on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2m0s.; "
            "the provider asks to retry after 120 s, longer than max_retry_delay_ms (60000 ms)",
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
        INFO, RECORDINGS / API / "text.http", provider_events=5, client_events=3
    )
    assert closed, "the provider never saw its connection close"
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Hello'", "error ABORTED"]


# --- the request --------------------------------------------------------------------------------


def user(value: str, *media: pp.ImageContent) -> pp.AgentMessage:
    return pp.agent_message(pp.user_message(value, *media, timestamp=1))


def turn(*content: Any, provider: str, api: str, model: str, stop: pp.StopReason) -> pp.AgentMessage:
    message = pp.assistant_message(*content, provider=provider, api=api, model=model, stop_reason=stop, timestamp=2)
    return pp.agent_message(message)


def result(call_id: str, name: str, *content: Any) -> pp.AgentMessage:
    return pp.agent_message(pp.tool_result_message(call_id, name, *content, timestamp=3))


def reply(value: str, item_id: str) -> dict[str, Any]:
    """An assistant text as the message item it replays as."""
    content = [{"type": "output_text", "text": value, "annotations": []}]
    return {"type": "message", "role": "assistant", "content": content, "status": "completed", "id": item_id}


PNG = "data:image/png;base64,iVBORw=="


def input_text(value: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "input_text", "text": value}]}


async def test_the_request_carries_the_call_options_as_pi_maps_them() -> None:
    options = pp.GenerationOptions(
        temperature=0.5,
        max_tokens=1000,
        reasoning=pp.ThinkingLevel.XHIGH,  # gpt-5.2's map takes xhigh
        tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read"),
        cache_retention=pp.CacheRetention.LONG,  # 24 h: pi assumes a Responses server keeps it
        session_id="session-42",
        metadata_json='{"user_id": "user-7"}',  # pi sends no metadata to the Responses API
        headers={"x-trace": "abc"},
        provider_options_json='{"service_tier": "priority", "text": {"verbosity": "low"}}',
    )
    context = pp.AgentContext(system_prompt="Be brief.", messages=[user("hi")], tools=[READ])
    events, replay = await play(case("options", "text.http", context=context, options=options), INFO)
    request = replay.requests[0]
    assert request.path == "/responses"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.headers["x-trace"] == "abc"
    assert (request.headers["session-id"], request.headers["x-client-request-id"]) == ("session-42", "session-42")
    assert request.body == {
        "model": "gpt-5.2",
        "stream": True,
        "input": [{"role": "developer", "content": "Be brief."}, input_text("hi")],
        "max_output_tokens": 1000,
        "store": False,
        "prompt_cache_key": "session-42",
        "prompt_cache_retention": "24h",
        "temperature": 0.5,
        "tools": [
            {
                "type": "function",
                "name": "read",
                "description": "Read a file",
                "parameters": READ_SCHEMA,  # no `strict`: pi's default model does not take it
            }
        ],
        "tool_choice": {"type": "function", "name": "read"},
        "reasoning": {"effort": "xhigh", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "service_tier": "priority",
        "text": {"verbosity": "low"},
    }
    # The response says it ran on the default tier, so the priority price does not apply.
    assert events[-1].done is not None
    assert final_message(events).usage == usage(25, 15)


@pytest.mark.parametrize(
    ("provider", "compat", "retention", "expected"),
    [
        ("openai", {}, pp.CacheRetention.SHORT, {"session-id": "s-1", "x-client-request-id": "s-1"}),
        ("openrouter", {}, pp.CacheRetention.SHORT, {"x-session-id": "s-1"}),  # detected by provider
        (
            "openai",
            {"sessionAffinityFormat": "openai-nosession"},
            pp.CacheRetention.LONG,
            {"x-client-request-id": "s-1"},
        ),
        ("openai", {"sessionAffinityFormat": "openrouter"}, pp.CacheRetention.SHORT, {"x-session-id": "s-1"}),
        ("openai", {}, pp.CacheRetention.NONE, {}),  # no caching: no session either
    ],
)
async def test_the_session_id_goes_as_pis_session_headers(
    provider: str, compat: dict[str, Any], retention: pp.CacheRetention, expected: dict[str, str]
) -> None:
    options = pp.GenerationOptions(session_id="s-1", cache_retention=retention)
    model = dataclasses.replace(INFO, provider=provider)
    _, replay = await play(case("session", "text.http", options=options, config={"compat": compat}), model)
    headers = replay.requests[0].headers
    names = ("session-id", "x-client-request-id", "x-session-id")
    assert {name: headers[name] for name in names if name in headers} == expected


def body(
    options: pp.GenerationOptions | None = None,
    context: pp.AgentContext | None = None,
    compat: dict[str, Any] | None = None,
    **model: Any,
) -> dict[str, Any]:
    """The request body for a call to INFO changed by `model`, without sending it."""
    config = ModelConfig(info=dataclasses.replace(INFO, **model), api_key=SECRET, compat=compat or {})
    context = context or pp.AgentContext(messages=[user("hi")])
    return openai_responses.body(Call(config, context, options, pp.AssistantMessageEventStream()))


@pytest.mark.parametrize(
    ("retention", "compat", "expected"),
    [
        (pp.CacheRetention.SHORT, {}, {"prompt_cache_key": "s-1"}),
        (pp.CacheRetention.LONG, {}, {"prompt_cache_key": "s-1", "prompt_cache_retention": "24h"}),
        (pp.CacheRetention.LONG, {"supportsLongCacheRetention": False}, {"prompt_cache_key": "s-1"}),
        (pp.CacheRetention.LONG, {"promptCacheKeyMode": "disabled"}, {"prompt_cache_retention": "24h"}),
        (pp.CacheRetention.NONE, {}, {}),
        # GPT-5.6 and later take prompt_cache_options instead of a retention
        (
            pp.CacheRetention.LONG,
            {"supportsExplicitPromptCacheMode": True},
            {"prompt_cache_key": "s-1", "prompt_cache_options": {"ttl": "30m"}},
        ),
        (pp.CacheRetention.SHORT, {"supportsExplicitPromptCacheMode": True}, {"prompt_cache_key": "s-1"}),
        (
            pp.CacheRetention.NONE,
            {"supportsExplicitPromptCacheMode": True},
            {"prompt_cache_options": {"mode": "explicit"}},
        ),
    ],
)
def test_the_session_is_the_prompt_cache_key_and_long_retention_is_asked_for_as_pi_asks(
    retention: pp.CacheRetention, compat: dict[str, Any], expected: dict[str, Any]
) -> None:
    sent = body(pp.GenerationOptions(cache_retention=retention, session_id="s-1"), compat=compat)
    names = ("prompt_cache_key", "prompt_cache_retention", "prompt_cache_options")
    assert {name: sent[name] for name in names if name in sent} == expected


def test_a_compat_switch_of_the_wrong_type_fails_the_call() -> None:
    with pytest.raises(
        ProviderError, match=r"compat\.supportsLongCacheRetention of model 'gpt-5\.2' must be true or false"
    ):
        body(pp.GenerationOptions(cache_retention=pp.CacheRetention.LONG), compat={"supportsLongCacheRetention": "yes"})


@pytest.mark.parametrize(
    ("levels", "level", "effort"),
    [
        (GPT_5_2, pp.ThinkingLevel.MINIMAL, "low"),  # gpt-5.2 has no minimal: clamped up
        (GPT_5_2, pp.ThinkingLevel.LOW, "low"),
        (GPT_5_2, pp.ThinkingLevel.MEDIUM, "medium"),
        (GPT_5_2, pp.ThinkingLevel.HIGH, "high"),
        (GPT_5_2, pp.ThinkingLevel.XHIGH, "xhigh"),
        (GPT_5_2, pp.ThinkingLevel.MAX, "xhigh"),  # no max: clamped down
        (GPT_5_MINI, pp.ThinkingLevel.MINIMAL, "minimal"),
        (GPT_5_MINI, pp.ThinkingLevel.XHIGH, "high"),
        ({}, pp.ThinkingLevel.XHIGH, "high"),  # without a map, xhigh and max are unsupported
        ({}, pp.ThinkingLevel.MAX, "high"),
        ({"high": "HIGH-EFFORT"}, pp.ThinkingLevel.HIGH, "HIGH-EFFORT"),  # the map's value, as it is
    ],
)
def test_reasoning_levels_clamped_to_the_models_map_are_efforts_with_an_automatic_summary(
    levels: dict[str, str | None], level: pp.ThinkingLevel, effort: str
) -> None:
    request = body(pp.GenerationOptions(reasoning=level), thinking_level_map=level_map(levels))
    assert request["reasoning"] == {"effort": effort, "summary": "auto"}
    assert request["include"] == ["reasoning.encrypted_content"]
    assert request["store"] is False


@pytest.mark.parametrize(
    ("levels", "model", "reasoning"),
    [
        (GPT_5_2, {}, {"effort": "none"}),  # the map's off
        ({}, {}, {"effort": "none"}),  # pi's default off
        ({"off": "minimal"}, {}, {"effort": "minimal"}),
        (GPT_5_MINI, {}, None),  # a model that cannot stop reasoning gets no effort
        (GPT_5_2, {"provider": "github-copilot"}, None),  # nor does Copilot
        (GPT_5_2, {"reasoning": False}, None),
    ],
)
def test_without_a_level_a_reasoning_model_gets_the_effort_of_its_off_level(
    levels: dict[str, str | None], model: dict[str, Any], reasoning: dict[str, str] | None
) -> None:
    request = body(thinking_level_map=level_map(levels), **model)
    assert request.get("reasoning") == reasoning
    assert "include" not in request
    assert request["input"] == [input_text("hi")]  # pi 1.6 sends no "Juice" note


def test_xai_is_always_asked_for_its_encrypted_reasoning() -> None:
    assert body(provider="xai")["include"] == ["reasoning.encrypted_content"]
    assert "include" not in body(provider="xai", reasoning=False)


@pytest.mark.parametrize(("compat", "strict"), [({}, {}), ({"supportsStrictMode": True}, {"strict": False})])
def test_tools_are_marked_strict_false_only_for_a_model_that_takes_strict(
    compat: dict[str, Any], strict: dict[str, bool]
) -> None:
    request = body(context=pp.AgentContext(messages=[user("hi")], tools=[READ]), compat=compat)
    tool = {"type": "function", "name": "read", "description": "Read a file", "parameters": READ_SCHEMA}
    assert request["tools"] == [{**tool, **strict}]


def test_sampling_params_of_the_model_and_the_call_go_over_the_named_fields() -> None:
    options = pp.GenerationOptions(temperature=0.2, sampling_params_json='{"top_p":0.9}')
    request = body(options, sampling_params_json='{"top_p":0.5,"temperature":1}')
    assert (request["temperature"], request["top_p"]) == (1, 0.9)


async def test_a_context_written_by_other_providers_replays_as_pi_transforms_it() -> None:
    context = pp.AgentContext(
        system_prompt="Be brief.",
        messages=[
            user("Read the README and the Makefile."),
            turn(
                pp.thinking("I should read both files.", signature="EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl"),
                "Reading the README first.",
                pp.tool_call("toolu_01A09q90qw90lq917835lq9", "read", {"path": "README.md"}),
                provider="anthropic",
                api="anthropic-messages",
                model="claude-sonnet-4-5",
                stop=pp.StopReason.TOOL_USE,
            ),
            result("toolu_01A09q90qw90lq917835lq9", "read", "# pi-proto"),
            turn(  # another OpenAI model: its reasoning and message id are not this model's
                pp.thinking(
                    "Now the Makefile.",
                    signature='{"id":"rs_mini01","type":"reasoning","summary":[],"encrypted_content":"gAAAA-mini"}',
                ),
                pp.text("Next, the Makefile.", signature="msg_mini01"),
                pp.tool_call("call_mini01|fc_mini01", "read", {"path": "Makefile"}),
                provider="openai",
                api=API,
                model="gpt-5-mini",
                stop=pp.StopReason.TOOL_USE,
            ),
            result("call_mini01|fc_mini01", "read", "all: test"),
            turn(  # a Responses id from another provider, in characters OpenAI rejects; never answered
                pp.tool_call("call_x+1|item:9", "grep", {"pattern": "TODO"}),
                provider="github-copilot",
                api=API,
                model="gpt-5",
                stop=pp.StopReason.TOOL_USE,
            ),
            turn(
                "I was cut",
                provider="anthropic",
                api="anthropic-messages",
                model="claude-sonnet-4-5",
                stop=pp.StopReason.ABORTED,
            ),
            user("Summarize."),
        ],
    )
    _, replay = await play(case("replay", "text.http", context=context), INFO)
    assert replay.requests[0].body == {
        "model": "gpt-5.2",
        "stream": True,
        "max_output_tokens": 128_000,
        "store": False,
        "reasoning": {"effort": "none"},  # no level: gpt-5.2's map says how it stops reasoning
        "input": [
            {"role": "developer", "content": "Be brief."},
            input_text("Read the README and the Makefile."),
            # Anthropic's signed thinking is left out; an unsigned text gets pi's id of its place.
            reply("Reading the README first.", "msg_pi_1"),
            # An id without "|" is the call id, and the call goes without an item id.
            {
                "type": "function_call",
                "call_id": "toolu_01A09q90qw90lq917835lq9",
                "name": "read",
                "arguments": '{"path":"README.md"}',
            },
            {"type": "function_call_output", "call_id": "toolu_01A09q90qw90lq917835lq9", "output": "# pi-proto"},
            # gpt-5-mini's reasoning is left out, its message id is dropped, and so is its fc_ item id.
            reply("Next, the Makefile.", "msg_pi_3"),
            {"type": "function_call", "call_id": "call_mini01", "name": "read", "arguments": '{"path":"Makefile"}'},
            {"type": "function_call_output", "call_id": "call_mini01", "output": "all: test"},
            # Copilot's id is rewritten to OpenAI's characters, its item id to start with fc.
            {
                "type": "function_call",
                "id": "fc_item_9",
                "call_id": "call_x_1",
                "name": "grep",
                "arguments": '{"pattern":"TODO"}',
            },
            {"type": "function_call_output", "call_id": "call_x_1", "output": "No result provided"},
            # The aborted turn is left out.
            input_text("Summarize."),
        ],
    }


async def test_this_models_own_turn_replays_its_reasoning_item_message_ids_and_phases_and_call_ids() -> None:
    reasoning = (
        '{"id":"rs_own01","summary":[{"text":"27 × 453","type":"summary_text"}],"type":"reasoning",'
        '"encrypted_content":"gAAAA-own"}'
    )
    long_id = "msg_" + "x" * 70
    context = pp.AgentContext(
        messages=[
            user("What is 27 × 453?"),
            turn(
                pp.thinking("27 × 453", signature=reasoning),
                pp.text("Let me check.", signature='{"v":1,"id":"msg_own01","phase":"commentary"}'),
                pp.text("Still checking.", signature=long_id),  # an older pi's bare id
                pp.text("Nearly.", signature='{"v":1,"id":"msg_own02","phase":"draft"}'),  # a phase pi does not know
                pp.text("Almost."),
                pp.tool_call("call_own01|fc_own01", "calc", {"expr": "27*453"}),
                provider="openai",
                api=API,
                model="gpt-5.2",
                stop=pp.StopReason.TOOL_USE,
            ),
            result("call_own01|fc_own01", "calc", "12231", pp.image(b"\x89PNG", "image/png")),
            turn(
                pp.text("12231.", signature='{"v":1,"id":"msg_own03","phase":"final_answer"}'),
                provider="openai",
                api=API,
                model="gpt-5.2",
                stop=pp.StopReason.STOP,
            ),
            user("Thanks."),
        ],
    )
    _, replay = await play(case("own", "text.http", context=context), INFO)
    assert replay.requests[0].body["input"] == [
        input_text("What is 27 × 453?"),
        {
            "id": "rs_own01",
            "summary": [{"text": "27 × 453", "type": "summary_text"}],
            "type": "reasoning",
            "encrypted_content": "gAAAA-own",
        },
        {**reply("Let me check.", "msg_own01"), "phase": "commentary"},
        reply(
            "Still checking.", "msg_34fbb466f06908a4a8fab236"
        ),  # longer than 64: msg_ and 24 hex digits of its SHA-256
        reply("Nearly.", "msg_own02"),
        reply("Almost.", "msg_pi_1_3"),  # the turn's fourth text, at place 1
        {
            "type": "function_call",
            "id": "fc_own01",
            "call_id": "call_own01",
            "name": "calc",
            "arguments": '{"expr":"27*453"}',
        },
        {
            # the result's images go inside its output, after its text, as pi sends them
            "type": "function_call_output",
            "call_id": "call_own01",
            "output": [
                {"type": "input_text", "text": "12231"},
                {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,iVBORw=="},
            ],
        },
        {**reply("12231.", "msg_own03"), "phase": "final_answer"},
        input_text("Thanks."),
    ]


@pytest.mark.parametrize(
    ("content", "vision", "output"),
    [
        ((pp.image(b"\x89PNG", "image/png"),), True, [{"type": "input_image", "detail": "auto", "image_url": PNG}]),
        (
            ("  ", pp.image(b"\x89PNG", "image/png")),
            True,
            [{"type": "input_image", "detail": "auto", "image_url": PNG}],
        ),
        # a model without image input gets pi's placeholder in the text instead
        (
            ("see:", pp.image(b"\x89PNG", "image/png")),
            False,
            "see:\n(tool image omitted: model does not support images)",
        ),
        ((), True, "(no tool output)"),
    ],
)
def test_a_tool_results_output_is_its_text_or_its_parts_as_pi_sends_them(
    content: tuple[Any, ...], vision: bool, output: Any
) -> None:
    kinds = [pp.InputKind.TEXT, pp.InputKind.IMAGE] if vision else [pp.InputKind.TEXT]
    context = pp.AgentContext(messages=[user("look"), result("call_1|fc_1", "screenshot", *content)])
    sent = body(context=context, input=kinds)["input"]
    assert sent[-1] == {"type": "function_call_output", "call_id": "call_1", "output": output}
    assert len(sent) == 2  # no user turn of images after it


async def test_a_message_items_phase_is_kept_in_its_text_signature() -> None:
    events, final = await run(BY_NAME["phase"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Checking the tests first.'",
        f"textEnd 0 textSignature={signed(17, 'commentary')!r}",
        "textStart 1",
        "textDelta 1 delta='All 12 tests pass.'",
        f"textEnd 1 textSignature={signed(18, 'final_answer')!r}",
        "done STOP",
    ]
    assert final == message(
        text("Checking the tests first.", signed(17, "commentary")),
        text("All 12 tests pass.", signed(18, "final_answer")),
        usage=usage(30, 12),
        stop=pp.StopReason.STOP,
        response=response(),
    )
