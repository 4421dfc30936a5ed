"""anthropic-messages: the official SDK against recorded Messages streams, through our server."""

from __future__ import annotations

from functools import partial

import pytest

import pi_proto as pp

from .expect import NO_USAGE, Expected, Response, text, thinking, tool_call
from .harness import READ, READ_SCHEMA, SECRET, by_name, cancel_while_streaming, outline, play, provider_case, run
from .replay import RECORDINGS

pytestmark = pytest.mark.timeout(30)

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
    case("cut-mid-stream", "text.http", cut_after=4),
    case("error-401"),
    case("error-404"),
    case("error-429-long"),
    case("error-429-then-text", "error-429-short.http", "text.http"),
    case("error-500", "error-500.http", "error-500.http", "error-500.http"),
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


async def test_redacted_thinking_is_a_whole_block_whose_signature_is_the_encrypted_data() -> None:
    events, final = await run(BY_NAME["redacted-thinking"], INFO)
    data = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB4URj"
    assert outline(events) == [
        "start",
        "thinkingStart 0 usage=31/2/0/0",
        f"thinkingEnd 0 thinkingSignature={data!r} redacted=True",
        "textStart 1",
        "textDelta 1 delta='Done.'",
        "textEnd 1",
        "done STOP",
    ]
    redacted = pp.AssistantContent(thinking=pp.ThinkingContent(thinking_signature=data, redacted=True))
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
    options = pp.GenerationOptions(
        temperature=0.5,
        max_tokens=1000,
        reasoning=pp.ThinkingLevel.LOW,
        tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read"),
        cache_retention=pp.CacheRetention.LONG,
        metadata_json='{"user_id": "user-7"}',
        headers={"x-trace": "abc"},
    )
    context = pp.AgentContext(
        system_prompt="Be brief.",
        messages=[pp.agent_message(pp.user_message("hi"))],
        tools=[READ],
    )
    _, replay = await play(case("options", "text.http", context=context, options=options), INFO)
    request = replay.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.headers["x-trace"] == "abc"
    assert request.body == {
        "model": "claude-sonnet-4-5",
        "stream": True,
        "max_tokens": 1000 + 2048,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "temperature": 0.5,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
        ],
        "tools": [
            {
                "name": "read",
                "description": "Read a file",
                "input_schema": READ_SCHEMA,
            }
        ],
        "tool_choice": {"type": "tool", "name": "read"},
        "metadata": {"user_id": "user-7"},
    }


async def test_a_context_another_provider_wrote_is_replayed_as_pi_replays_it() -> None:
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
    context = pp.AgentContext(
        messages=[
            pp.agent_message(pp.user_message("read the readme", timestamp=1)),
            pp.agent_message(openai_turn),
            pp.agent_message(pp.tool_result_message("call_abc|fc_123", "read", "# pi-proto", "line 2", timestamp=1)),
            pp.agent_message(pp.user_message("summarise it", timestamp=1)),
        ]
    )
    _, replay = await play(case("replayed", "text.http", context=context), INFO)
    assert replay.requests[0].body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "read the readme"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "The user wants a file."},
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
