"""google-generative-ai: the official google-genai SDK against recorded Gemini streams, through our server."""

from __future__ import annotations

import base64
import dataclasses
from functools import partial
from typing import Any

import pytest

import pi_proto as pp
from pi_proto.models.providers import ProviderModel
from pi_proto.models.providers.call import Call
from pi_proto.models.providers.catalog import ModelConfig
from pi_proto.stream.event_stream import AssistantMessageEventStream

from .expect import NO_USAGE, Expected, Response, text, thinking, tool_call
from .harness import (
    CLOCK_MS,
    READ,
    RETRYING,
    SECRET,
    by_name,
    call_through_server,
    cancel_while_streaming,
    final_message,
    hi,
    level_map,
    outline,
    output_limit_cases,
    play,
    provider_case,
    run,
    served_model,
    still,
)
from .replay import RECORDINGS

API = "google-generative-ai"
INFO = pp.Model(
    id="gemini-2.5-flash",
    name="Gemini 2.5 Flash",
    api=API,
    provider="google",
    base_url="http://replaced-by-the-replay-server",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=0.3, output=2.5, cache_read=0.075, cache_write=0),
    context_window=1_048_576,
    max_tokens=65_536,
)
PATH = "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


case = partial(provider_case, API)
CASES = [
    case("text"),
    case("thinking", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)),
    case("tool-call-large", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.LOW)),
    case("two-tool-calls"),
    case("cache-usage"),
    case("length"),
    case("safety"),
    case("prompt-blocked"),
    case("malformed-function-call"),
    case("unavailable-mid-stream"),
    case("cut-mid-stream", "text.http", cut_after=2),
    case("error-400-api-key"),
    case("error-404"),
    case("error-429-long", options=RETRYING),
    case("error-429-then-text", "error-429-short.http", "text.http", options=RETRYING),
    case("error-500", "error-500.http", "error-500.http", "error-500.http"),
    *output_limit_cases(API, INFO),
]
BY_NAME = by_name(CASES)
message = Expected(INFO).message
# Every chunk of these recordings has usageMetadata: its thought tokens are the reasoning, 0 when absent.
usage = partial(Expected(INFO).usage, reasoning=0)
RESPONSE_ID = "mI0TaYqWJpXb7M8P1t2x4Qo"  # every chunk's responseId


def response(finish_reason: str | None) -> Response:
    """The recordings' response id, with the finish reason as Gemini wrote it."""
    return Response(id=RESPONSE_ID, raw_stop_reason=finish_reason)


async def test_text_streams_each_part_with_the_usage_of_the_chunk_before() -> None:
    events, final = await run(BY_NAME["text"], INFO)
    # As in pi, a chunk's usage is read after its parts, so it rides on the next event.
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Hello'",
        "textDelta 0 delta='! 你好，' usage=4/1/0/0",
        "textDelta 0 delta='how can I help?' usage=4/5/0/0",
        "textEnd 0 usage=4/12/0/0",
        "done STOP",
    ]
    assert final == message(
        text("Hello! 你好，how can I help?"), usage=usage(4, 12), stop=pp.StopReason.STOP, response=response("STOP")
    )


async def test_thought_parts_are_thinking_and_each_block_keeps_its_signature() -> None:
    events, final = await run(BY_NAME["thinking"], INFO)
    thought_signature = "b8dRaALk2xBziy9mgVQTzkQMFUP6wAJ8uzhhJQilZZSsBsPtQB0hOEt5Y6RMv1v/NfE+gDmm"
    text_signature = "2nlr0H/9/9oc14JZEeH/3Kfdr6pSGAwN7TuhFKy9S0MUHbhv8YLiu+bPnPDycFR1nfPsF4a8"
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        "thinkingDelta 0 delta='**Multiplying in parts**\\n\\n27 × 400 = 10800'",
        "thinkingDelta 0 delta=', 27 × 53 = 1431; the sum is 12231.' usage=12/48/0/0",
        # the signature came with the first thought part only, and is kept
        f"thinkingEnd 0 thinkingSignature={thought_signature!r} usage=12/98/0/0",
        "textStart 1",
        "textDelta 1 delta='27 × 453 = 12231.'",
        # the last chunk is an empty text part that only carries the signature
        f"textEnd 1 textSignature={text_signature!r} usage=12/107/0/0",
        "done STOP",
    ]
    assert final == message(
        thinking("**Multiplying in parts**\n\n27 × 400 = 10800, 27 × 53 = 1431; the sum is 12231.", thought_signature),
        text("27 × 453 = 12231.", text_signature),
        usage=usage(12, 9 + 98, reasoning=98),
        response=response("STOP"),
        stop=pp.StopReason.STOP,
    )


async def test_a_whole_function_call_is_one_delta_with_a_generated_id_and_its_signature() -> None:
    events, final = await run(BY_NAME["tool-call-large"], INFO)
    arguments = (
        '{"path":"src/app.ts","edits":[{"oldText":"const retries = 1;","newText":"const retries = 3;"},'
        '{"oldText":"log(\\"démarrage\\")","newText":"log(\\"démarrage\\", { level: 2 })"}],'
        '"options":{"dryRun":false,"context":{"lines":3,"ratio":0.5,"labels":["a","b",null]}}}'
    )
    signature = "JimQMlHFZUjxWg6+dQKqYMZlj19cKF3Y5wDmvYf4h0KkP6fV3SjFmEphGlmFcjivf+akAxrF"
    call_id = f"edit_{CLOCK_MS}_1"  # Gemini sent no id: pi's <name>_<now>_<counter>
    assert outline(events) == [
        "start",
        f"toolcallStart 0 id={call_id!r} name='edit'",
        f"toolcallDelta 0 delta={arguments!r}",
        f"toolcallEnd 0 toolCall={{'id': {call_id!r}, 'name': 'edit', 'argumentsJson': {arguments!r}, "
        f"'thoughtSignature': {signature!r}}}",
        "done TOOL_USE",  # Gemini said STOP; a turn with a function call is a tool use
    ]
    assert final == message(
        tool_call(call_id, "edit", arguments, thought_signature=signature),
        usage=usage(310, 64 + 230, reasoning=230),
        response=response("STOP"),
        stop=pp.StopReason.TOOL_USE,
    )


async def test_two_function_calls_in_one_chunk_keep_their_ids() -> None:
    events, final = await run(BY_NAME["two-tool-calls"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        'textDelta 0 delta="I\'ll read both files."',
        "textEnd 0 usage=96/6/0/0",
        "toolcallStart 1 id='k3v9x2ab' name='read'",
        'toolcallDelta 1 delta=\'{"path":"README.md"}\'',
        "toolcallEnd 1 toolCall={'id': 'k3v9x2ab', 'name': 'read', 'argumentsJson': '{\"path\":\"README.md\"}'}",
        "toolcallStart 2 id='q7m1z8cd' name='read'",
        'toolcallDelta 2 delta=\'{"path":"Makefile"}\'',
        "toolcallEnd 2 toolCall={'id': 'q7m1z8cd', 'name': 'read', 'argumentsJson': '{\"path\":\"Makefile\"}'}",
        "done TOOL_USE",
    ]
    assert final == message(
        text("I'll read both files."),
        tool_call("k3v9x2ab", "read", '{"path":"README.md"}'),
        tool_call("q7m1z8cd", "read", '{"path":"Makefile"}'),
        usage=usage(96, 28),
        response=response("STOP"),
        stop=pp.StopReason.TOOL_USE,
    )


async def test_cached_prompt_tokens_are_cache_reads_not_input() -> None:
    events, final = await run(BY_NAME["cache-usage"], INFO)
    # promptTokenCount 26000 includes the 24000 cached tokens
    assert outline(events)[-2:] == ["textEnd 0 usage=2000/9/24000/0", "done STOP"]
    assert final == message(
        text("The cached document says 42."),
        usage=usage(2000, 9, cache_read=24000),
        stop=pp.StopReason.STOP,
        response=response("STOP"),
    )
    assert final.usage is not None
    assert final.usage.total_tokens == 26009


async def test_max_tokens_is_a_length_stop() -> None:
    events, final = await run(BY_NAME["length"], INFO)
    assert outline(events)[-1] == "done LENGTH"
    assert final == message(
        text("Once upon a time, in a"), usage=usage(18, 8), stop=pp.StopReason.LENGTH, response=response("MAX_TOKENS")
    )


async def test_a_safety_stop_ends_with_an_error_that_keeps_the_text() -> None:
    events, final = await run(BY_NAME["safety"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Here is how'",
        "textEnd 0 usage=22/3/0/0",
        "error ERROR",
    ]
    assert final == message(
        text("Here is how"),
        usage=usage(22, 3),
        stop=pp.StopReason.ERROR,
        error="the model stopped with finish reason 'SAFETY'",
        response=response("SAFETY"),
    )


async def test_a_blocked_prompt_ends_with_an_error_that_names_the_reason() -> None:
    events, final = await run(BY_NAME["prompt-blocked"], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final == message(
        usage=usage(8, 0),
        stop=pp.StopReason.ERROR,
        error="the provider blocked the prompt (PROHIBITED_CONTENT)",
        response=response(None),  # no candidate, so no finish reason
    )


async def test_a_malformed_function_call_is_an_error_with_gemini_s_message() -> None:
    # Gemini checks a function call's arguments itself: broken ones never reach the stream as a
    # call, the candidate ends with MALFORMED_FUNCTION_CALL instead (the SDK drops its finishMessage).
    events, final = await run(BY_NAME["malformed-function-call"], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final == message(
        usage=usage(40, 0),
        stop=pp.StopReason.ERROR,
        error="the model stopped with finish reason 'MALFORMED_FUNCTION_CALL'",
        response=response("MALFORMED_FUNCTION_CALL"),
    )


async def test_an_error_object_mid_stream_keeps_what_came_before() -> None:
    events, final = await run(BY_NAME["unavailable-mid-stream"], INFO)
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Partial answer'", "error ERROR"]
    assert final == message(
        text("Partial answer"),
        usage=usage(30, 2),
        stop=pp.StopReason.ERROR,
        response=response(None),
        error="the provider failed mid-stream with 503 UNAVAILABLE: The model is overloaded. Please try again later.",
    )


async def test_a_connection_cut_mid_stream_keeps_what_came_before() -> None:
    events, final = await run(BY_NAME["cut-mid-stream"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Hello'",
        "textDelta 0 delta='! 你好，' usage=4/1/0/0",
        "error ERROR",
    ]
    assert final == message(
        text("Hello! 你好，"),
        usage=usage(4, 5),
        stop=pp.StopReason.ERROR,
        response=response(None),
        error="the connection to the provider broke: peer closed connection without sending complete message body "
        "(incomplete chunked read)",
    )


@pytest.mark.parametrize(
    ("name", "error"),
    [
        (
            "error-400-api-key",
            "the provider answered 400 INVALID_ARGUMENT: API key not valid: ***. Please pass a valid API key.",
        ),
        (
            "error-404",
            "the provider answered 404 NOT_FOUND: models/gemini-nonexistent is not found for API version v1beta, "
            "or is not supported for generateContent. Call ListModels to see the list of available models and "
            "their supported methods.",
        ),
        (
            "error-429-long",
            "the provider answered 429 RESOURCE_EXHAUSTED: You exceeded your current quota, please check your plan "
            "and billing details. For more information on this error, head to: "
            "https://ai.google.dev/gemini-api/docs/rate-limits.; the provider asks to retry after 120 s, longer "
            "than max_retry_delay_ms (60000 ms)",
        ),
        (
            "error-500",
            "the provider answered 500 INTERNAL: An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting",
        ),
    ],
)
async def test_an_error_status_ends_with_one_error_event_that_names_the_model(name: str, error: str) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final == message(usage=NO_USAGE, stop=pp.StopReason.ERROR, error=error)


async def test_a_client_cancel_closes_the_provider_connection_and_ends_aborted() -> None:
    events, closed = await cancel_while_streaming(
        INFO, RECORDINGS / API / "text.http", provider_events=1, client_events=3
    )
    assert closed, "the provider never saw its connection close"
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Hello'", "error ABORTED"]


async def test_the_catalog_s_auth_header_also_sends_the_key_as_a_bearer_token() -> None:
    events, replay = await play(case("auth-header", "text.http", config={"auth_header": True}), INFO)
    assert outline(events)[-1] == "done STOP"
    assert replay.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert replay.requests[0].headers["x-goog-api-key"] == SECRET


async def test_a_model_without_a_key_fails_before_calling_and_one_that_cannot_be_reached_says_so() -> None:
    keyless = ProviderModel(ModelConfig(info=INFO, api_key=""), clock=lambda: CLOCK_MS, monotonic=still)
    events = await call_through_server(keyless, hi())
    assert outline(events) == ["start", "error ERROR"]
    assert final_message(events).error_message == "no API key for provider 'google'"
    closed = served_model(dataclasses.replace(INFO, base_url="http://127.0.0.1:1"))
    events = await call_through_server(closed, hi())
    assert outline(events) == ["start", "error ERROR"]
    assert (final_message(events).error_message or "").startswith("cannot reach the provider: ")


async def test_the_request_carries_the_call_options_as_pi_maps_them() -> None:
    options = pp.GenerationOptions(
        temperature=0.5,
        max_tokens=1000,
        reasoning=pp.ThinkingLevel.XHIGH,  # clamped to high: 2.5 Flash's budget for it
        tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read"),
        cache_retention=pp.CacheRetention.LONG,  # pi's Gemini API call has no cache or session options
        session_id="session-1",
        metadata_json='{"user_id": "user-7"}',
        headers={"x-trace": "abc"},
        provider_options_json='{"generationConfig": {"topK": 20}, "safetySettings": []}',
    )
    context = pp.AgentContext(
        system_prompt="Be brief.", messages=[pp.agent_message(pp.user_message("hi"))], tools=[READ]
    )
    _, replay = await play(case("options", "text.http", context=context, options=options), INFO)
    request = replay.requests[0]
    assert (request.method, request.path) == ("POST", PATH)
    assert request.headers["x-goog-api-key"] == SECRET
    assert request.headers["x-trace"] == "abc"
    assert "authorization" not in request.headers
    assert request.body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"role": "user", "parts": [{"text": "Be brief."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "read",
                        "description": "Read a file",
                        # the SDK passes the schema under the proto field name, which the API also reads
                        "parameters_json_schema": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                            "required": ["path"],
                        },
                    }
                ]
            }
        ],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read"]}},
        "generationConfig": {
            "temperature": 0.5,
            "maxOutputTokens": 1000,
            "thinkingConfig": {"include_thoughts": True, "thinking_budget": 24576},
            "topK": 20,  # the provider options, on top
        },
        "safetySettings": [],
    }


async def test_a_call_without_options_turns_thinking_off_and_asks_for_the_models_output_limit() -> None:
    _, replay = await play(BY_NAME["text"], INFO)
    assert replay.requests[0].body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generationConfig": {"maxOutputTokens": 65_536, "thinkingConfig": {"thinking_budget": 0}},
    }


async def request_for(
    model_id: str, options: pp.GenerationOptions, context: pp.AgentContext | None = None, **model: Any
) -> Any:
    info = dataclasses.replace(INFO, id=model_id, **model)
    _, replay = await play(case("request", "text.http", context=context or hi(), options=options), info)
    assert replay.requests[0].path == f"/models/{model_id}:streamGenerateContent?alt=sse"
    return replay.requests[0].body


# pi 1.6's thinkingLevelMaps (its generated catalog) for Gemini models it knows.
GEMINI_3_PRO = {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None}
GEMINI_3_FLASH = {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None}
GEMMA_4 = {"off": None, "minimal": "MINIMAL", "low": None, "medium": None, "high": "HIGH"}
ON = {"include_thoughts": True}


@pytest.mark.parametrize(
    ("model_id", "levels", "level", "thinking"),
    [
        ("gemini-3.1-pro-preview", GEMINI_3_PRO, pp.ThinkingLevel.MINIMAL, {**ON, "thinking_level": "LOW"}),  # up
        ("gemini-3.1-pro-preview", GEMINI_3_PRO, pp.ThinkingLevel.MEDIUM, {**ON, "thinking_level": "MEDIUM"}),
        ("gemini-3.1-pro-preview", GEMINI_3_PRO, pp.ThinkingLevel.MAX, {**ON, "thinking_level": "HIGH"}),  # down
        ("gemini-3.1-pro-preview", GEMINI_3_PRO, pp.ThinkingLevel.UNSPECIFIED, {"thinking_level": "LOW"}),  # can't stop
        ("gemini-3-pro-preview", {}, pp.ThinkingLevel.MINIMAL, {**ON, "thinking_level": "MINIMAL"}),  # no map: as asked
        ("gemini-3-pro-preview", {}, pp.ThinkingLevel.UNSPECIFIED, {"thinking_budget": 0}),  # no map: off is allowed
        ("gemini-3.1-flash-lite", GEMINI_3_FLASH, pp.ThinkingLevel.MEDIUM, {**ON, "thinking_level": "MEDIUM"}),
        ("gemini-flash-latest", GEMINI_3_FLASH, pp.ThinkingLevel.UNSPECIFIED, {"thinking_level": "MINIMAL"}),
        ("gemini-4-argon", GEMINI_3_PRO, pp.ThinkingLevel.HIGH, {**ON, "thinking_level": "HIGH"}),  # Gemini 4: levels
        ("gemma-4-27b-it", GEMMA_4, pp.ThinkingLevel.LOW, {**ON, "thinking_level": "HIGH"}),  # up past null ones
        ("gemma-4-27b-it", GEMMA_4, pp.ThinkingLevel.MINIMAL, {**ON, "thinking_level": "MINIMAL"}),  # any case
        ("gemini-2.5-pro", {}, pp.ThinkingLevel.HIGH, {**ON, "thinking_budget": 32768}),
        ("gemini-2.5-pro", {}, pp.ThinkingLevel.XHIGH, {**ON, "thinking_budget": 32768}),  # clamped to high
        ("gemini-2.5-flash-lite", {}, pp.ThinkingLevel.MINIMAL, {**ON, "thinking_budget": 512}),
        ("gemini-2.5-flash", {}, pp.ThinkingLevel.MEDIUM, {**ON, "thinking_budget": 8192}),
        ("gemini-2.5-flash", {"low": "medium"}, pp.ThinkingLevel.LOW, {**ON, "thinking_budget": 8192}),  # mapped
        ("gemini-exp-1206", {}, pp.ThinkingLevel.LOW, {**ON, "thinking_budget": -1}),
    ],
)
async def test_reasoning_levels_clamped_and_mapped_become_thinking_levels_or_budgets(
    model_id: str, levels: dict[str, str | None], level: pp.ThinkingLevel, thinking: dict[str, Any]
) -> None:
    body = await request_for(model_id, pp.GenerationOptions(reasoning=level), thinking_level_map=level_map(levels))
    assert body["generationConfig"]["thinkingConfig"] == thinking


async def test_a_map_to_a_level_gemini_does_not_have_fails_the_call_before_any_request() -> None:
    info = dataclasses.replace(INFO, id="gemini-4-neon", thinking_level_map=level_map({"xhigh": "xhigh"}))
    options = pp.GenerationOptions(reasoning=pp.ThinkingLevel.XHIGH)
    events, replay = await play(case("bad-map", "text.http", options=options), info)
    assert replay.requests == []
    assert final_message(events).error_message == (
        "model 'gemini-4-neon' maps thinking level 'xhigh' to the thinkingLevelMap value 'xhigh'; "
        "Gemini's levels are minimal, low, medium, high"
    )


async def test_the_calls_max_retries_count_and_its_timeout_ms_is_not_gemini_s() -> None:
    options = pp.GenerationOptions(max_retries=0, timeout_ms=300)
    _, replay = await play(case("retries", "error-500.http", "error-500.http", options=options), INFO)
    assert len(replay.requests) == 1
    config = ModelConfig(info=INFO, api_key=SECRET)
    assert Call(config, hi(), options, AssistantMessageEventStream()).model.timeout_ms is None  # pi gives it none


async def test_custom_thinking_budgets_win_and_a_model_without_reasoning_gets_no_thinking_config() -> None:
    budgets = pp.GenerationOptions(reasoning=pp.ThinkingLevel.LOW, thinking_budgets=pp.ThinkingBudgets(low=999))
    body = await request_for("gemini-2.5-flash", budgets)
    assert body["generationConfig"]["thinkingConfig"] == {"include_thoughts": True, "thinking_budget": 999}
    info = dataclasses.replace(INFO, reasoning=False)
    _, replay = await play(case("plain", "text.http", options=budgets), info)
    assert replay.requests[0].body["generationConfig"] == {"maxOutputTokens": 65_536}


@pytest.mark.parametrize(
    ("mode", "config"),
    [
        (pp.ToolChoiceMode.AUTO, {"mode": "AUTO"}),
        (pp.ToolChoiceMode.NONE, {"mode": "NONE"}),
        (pp.ToolChoiceMode.REQUIRED, {"mode": "ANY"}),
    ],
)
async def test_tool_choice_becomes_a_function_calling_mode(mode: pp.ToolChoiceMode, config: dict[str, str]) -> None:
    context = pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi"))], tools=[READ])
    body = await request_for("gemini-2.5-flash", pp.GenerationOptions(tool_choice=pp.ToolChoice(mode=mode)), context)
    assert body["toolConfig"] == {"functionCallingConfig": config}


# --- a transcript another model wrote, replayed to Gemini -------------------------------------------

CLAUDE: dict[str, Any] = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
GEMINI: dict[str, Any] = {"api": API, "provider": "google", "model": "gemini-2.5-flash"}
OWN_THINKING = "2ObWUl5vlpKeK+SOqqf6rZw7etVe4XnR1Ct9qtiiVsB9RvsMEGBrj1yCQ5rAIE0hzG3R9qnh"
OWN_CALL = "C1ZNDnzKyfXkkPUmw5/KiZoqpE7oTEmnVZ3FblxJnJRcEXkcV6YMBPK6LMtt5dK7J4ODOSfp"
PNG = base64.urlsafe_b64encode(b"\x89PNG").decode()  # image bytes, as the SDK writes bytes fields


def urlsafe(signature: str) -> str:
    """How the SDK writes a signature back: bytes fields go out as URL-safe base64 (the same bytes)."""
    return base64.urlsafe_b64encode(base64.b64decode(signature)).decode("ascii")


def mixed_transcript() -> pp.AgentContext:
    """Claude reads a file (signed thinking, a toolu_ id Gemini has no use for), then Gemini answers
    with its own signatures, one of them not base64; then the user asks on."""
    claude_turn = pp.assistant_message(
        pp.thinking("The user wants the README.", signature="EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMO"),
        pp.text("Let me read it."),
        pp.tool_call("toolu_01A09q90qw90lq917835lq9", "read", {"path": "README.md"}),
        stop_reason=pp.StopReason.TOOL_USE,
        **CLAUDE,
    )
    gemini_turn = pp.assistant_message(
        pp.thinking("Summarise it.", signature=OWN_THINKING),
        pp.thinking(""),  # an empty thought is left out
        pp.text("It is pi-proto.", signature="not base64!"),
        pp.tool_call("read_1764000000000_1", "read", {"path": "Makefile"}, thought_signature=OWN_CALL),
        stop_reason=pp.StopReason.TOOL_USE,
        **GEMINI,
    )
    image = pp.image(b"\x89PNG", "image/png")
    return pp.AgentContext(
        messages=[
            pp.agent_message(pp.user_message("What is this project?")),
            pp.agent_message(claude_turn),
            pp.agent_message(pp.tool_result_message("toolu_01A09q90qw90lq917835lq9", "read", "# pi-proto")),
            pp.agent_message(gemini_turn),
            pp.agent_message(pp.tool_result_message("read_1764000000000_1", "read", image, is_error=True)),
            pp.agent_message(pp.user_message("Thanks. And the tests?")),
        ]
    )


async def test_a_transcript_from_another_model_is_replayed_as_pi_transforms_it() -> None:
    _, replay = await play(case("replay", "text.http", context=mixed_transcript()), INFO)
    assert replay.requests[0].body["contents"] == [
        {"role": "user", "parts": [{"text": "What is this project?"}]},
        {
            "role": "model",
            "parts": [
                # Claude's reasoning is left out: it is Claude's, and as text it would read as the reply
                {"text": "Let me read it."},
                {"functionCall": {"name": "read", "args": {"path": "README.md"}}},  # no id for Gemini 2.5
            ],
        },
        {"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {"output": "# pi-proto"}}}]},
        {
            "role": "model",
            "parts": [
                {"text": "Summarise it.", "thought": True, "thoughtSignature": urlsafe(OWN_THINKING)},
                {"text": "It is pi-proto."},  # its signature is not base64: left out
                {
                    "functionCall": {"name": "read", "args": {"path": "Makefile"}},
                    "thoughtSignature": urlsafe(OWN_CALL),
                },
            ],
        },
        # Gemini 2.5 takes no image inside a function response: it follows in a user turn
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "read", "response": {"error": "(see attached image)"}}}],
        },
        {
            "role": "user",
            "parts": [
                {"text": "Tool result image:"},
                {"inlineData": {"mime_type": "image/png", "data": PNG}},  # the SDK's casing; the API reads both
            ],
        },
        {"role": "user", "parts": [{"text": "Thanks. And the tests?"}]},
    ]


async def test_gemini_3_gets_unsigned_calls_marked_and_images_inside_the_function_response() -> None:
    body = await request_for("gemini-3-pro-preview", pp.GenerationOptions(), mixed_transcript())
    contents = body["contents"]
    # the Claude turn's call has no signature Gemini 3 can check: the documented skip value
    assert contents[1]["parts"][1] == {
        "functionCall": {"name": "read", "args": {"path": "README.md"}},
        "thoughtSignature": "skip_thought_signature_validator",
    }
    # the Gemini turn was written by gemini-2.5-flash, another model: its reasoning and signatures stay behind
    assert contents[3]["parts"] == [
        {"text": "It is pi-proto."},
        {
            "functionCall": {"name": "read", "args": {"path": "Makefile"}},
            "thoughtSignature": "skip_thought_signature_validator",
        },
    ]
    assert contents[4] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "read",
                    "response": {"error": "(see attached image)"},
                    "parts": [{"inline_data": {"mime_type": "image/png", "data": PNG}}],
                }
            }
        ],
    }
    assert len(contents) == 6


async def test_consecutive_tool_results_share_one_user_turn() -> None:
    turn = pp.assistant_message(
        pp.tool_call("a", "read", {"path": "x"}),
        pp.tool_call("b", "read", {"path": "y"}),
        stop_reason=pp.StopReason.TOOL_USE,
        **GEMINI,
    )
    context = pp.AgentContext(
        messages=[
            pp.agent_message(pp.user_message("go")),
            pp.agent_message(turn),
            pp.agent_message(pp.tool_result_message("a", "read", "1")),
            # b's result is missing: before the next user turn, transform_messages adds pi's error result
            pp.agent_message(pp.user_message("go on")),
        ]
    )
    body = await request_for("gemini-2.5-flash", pp.GenerationOptions(), context)
    assert body["contents"][2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "read", "response": {"output": "1"}}},
            {"functionResponse": {"name": "read", "response": {"error": "No result provided"}}},
        ],
    }
