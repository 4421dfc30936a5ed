"""bedrock-converse-stream: aiobotocore against recorded ConverseStream event streams, through our server."""

from __future__ import annotations

import base64
import dataclasses
import json
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from aiobotocore.session import AioSession  # type: ignore[import-untyped]
from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]
from botocore.exceptions import ClientError  # type: ignore[import-untyped]

import pi_proto as pp
from pi_proto.models.providers import bedrock_converse_stream as bedrock
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
    final_message,
    hi,
    level_map,
    outline,
    output_limit_cases,
    play,
    provider_case,
    run,
    served_model,
)
from .hostile import Exchange, HostileServer
from .replay import RECORDINGS, Recording, event_stream_frame
from .test_output_limit import AFTER_USAGE, FITTED

API = "bedrock-converse-stream"
# Claude Sonnet 4.6 through the US inference profile, as pi 1.6's catalog has it (amazon-bedrock.json).
INFO = pp.Model(
    id="us.anthropic.claude-sonnet-4-6",
    name="Claude Sonnet 4.6 (US)",
    api=API,
    provider="amazon-bedrock",
    base_url="http://replaced-by-the-replay-server",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=3.3, output=16.5, cache_read=0.33, cache_write=4.125),
    context_window=1_000_000,
    max_tokens=128_000,
    thinking_level_map=level_map({"max": "max"}),
)
# Claude models of pi's catalog that reason within a token budget, or bind replayed thinking.
SONNET_4_5 = dataclasses.replace(
    INFO,
    id="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    name="Claude Sonnet 4.5 (US)",
    context_window=200_000,
    max_tokens=64_000,
    thinking_level_map=[],
)
OPUS_4_7 = dataclasses.replace(
    INFO,
    id="us.anthropic.claude-opus-4-7",
    name="Claude Opus 4.7 (US)",
    cost=pp.ModelCost(input=5.5, output=27.5, cache_read=0.55, cache_write=6.875),
    thinking_level_map=level_map({"xhigh": "xhigh", "max": "max"}),
)
# Other models of pi's catalog on Bedrock: OpenAI's, which reason at an effort, and Nova, which caches by itself.
GPT_OSS = pp.Model(
    id="openai.gpt-oss-120b-1:0",
    name="gpt-oss-120b",
    api=API,
    provider="amazon-bedrock",
    base_url=INFO.base_url,
    reasoning=True,
    input=[pp.InputKind.TEXT],
    cost=pp.ModelCost(input=0.15, output=0.6),
    context_window=131_072,
    max_tokens=128_000,
)
GPT_5_5 = dataclasses.replace(
    GPT_OSS,
    id="openai.gpt-5.5",
    name="GPT-5.5",
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=5.5, output=33, cache_read=0.55),
    context_window=1_000_000,
    thinking_level_map=level_map({"xhigh": "xhigh"}),
)
NOVA_PRO = dataclasses.replace(
    GPT_OSS,
    id="us.amazon.nova-pro-v1:0",
    name="Nova Pro (US)",
    reasoning=False,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=0.8, output=3.2, cache_read=0.2),
    context_window=300_000,
    max_tokens=10_000,
)

# Test credentials and region, as the model's own settings; the secret key is the one `run` checks
# never reaches the client. pi's SDK is told to speak HTTP/1.1, as the replay server does (our
# client always does).
KEY_ID = "AKIDEXAMPLE"
SECRET_KEY = SECRET
REGION = "us-west-2"
HTTP1 = {"AWS_REGION": REGION, "AWS_BEDROCK_FORCE_HTTP1": "1"}
ENVIRONMENT = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, **HTTP1}
SIGV4 = {"environment": ENVIRONMENT, "api_key": ""}
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN"
BEDROCK_API_KEY = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLWtleQ=="  # a Bedrock API key's shape
BEARER_ENVIRONMENT = {"AWS_BEARER_TOKEN_BEDROCK": BEDROCK_API_KEY, **HTTP1}
BEARER = {"environment": BEARER_ENVIRONMENT, "api_key": ""}


def options_context() -> pp.AgentContext:
    """A call with a system prompt and a tool, for the request options."""
    return pp.AgentContext(
        system_prompt="Be brief.",
        messages=[pp.agent_message(pp.user_message("hi", timestamp=CLOCK_MS - 1000))],
        tools=[READ],
    )


# Every option pi maps onto the ConverseStream request.
OPTIONS = pp.GenerationOptions(
    temperature=0.5,
    max_tokens=1000,
    reasoning=pp.ThinkingLevel.LOW,
    tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.REQUIRED),
    cache_retention=pp.CacheRetention.LONG,
    headers={"x-trace": "abc"},
)

# Another model than any case serves, whose turns a replayed transcript holds.
ANOTHER_MODEL: dict[str, Any] = {"api": "openai-responses", "provider": "openai", "model": "gpt-5"}
OWN_MODEL: dict[str, Any] = {"api": API, "provider": INFO.provider, "model": INFO.id}
PNG = b"\x89PNG\r\n\x1a\n"


def replayed_context() -> pp.AgentContext:
    """A turn of openai-responses (its reasoning, a text signature, a tool call id of its own) replayed."""
    openai_turn = pp.assistant_message(
        pp.thinking("The user wants a file.", signature='{"type":"reasoning","id":"rs_1","encrypted_content":"gAAA"}'),
        pp.text("Reading it.", signature="msg_1"),
        pp.tool_call("call_abc|fc_123", "read", {"path": "README.md"}),
        stop_reason=pp.StopReason.TOOL_USE,
        timestamp=1,
        **ANOTHER_MODEL,
    )
    return pp.AgentContext(
        messages=[
            pp.agent_message(pp.user_message("read the readme", timestamp=1)),
            pp.agent_message(openai_turn),
            pp.agent_message(pp.tool_result_message("call_abc|fc_123", "read", "# pi-proto", "line 2", timestamp=1)),
            pp.agent_message(pp.user_message("summarise it", timestamp=1)),
        ]
    )


REDACTED = base64.b64encode(b"encrypted reasoning").decode()


def own_turns() -> pp.AgentContext:
    """The served model's own turns replayed: signed, unsigned and redacted reasoning, tool calls
    (arguments with an empty key), and their results, one an error with an image."""
    turn = pp.assistant_message(
        pp.thinking("Two files to read.", signature="sig-own"),
        pp.thinking("Reasoning cut short", signature=""),
        pp.thinking("[Reasoning redacted]", signature=REDACTED, redacted=True),
        pp.text("Reading both."),
        pp.tool_call("tooluse_1", "read", {"path": "a.png", "": "dropped"}),
        pp.tool_call("tooluse_2", "read", {"path": "b.md"}),
        stop_reason=pp.StopReason.TOOL_USE,
        timestamp=1,
        **OWN_MODEL,
    )
    failed = pp.tool_result_message("tooluse_1", "read", "cannot decode", pp.image(PNG, "image/png"), is_error=True)
    failed.timestamp = 1
    return pp.AgentContext(
        messages=[
            pp.agent_message(pp.user_message("read a.png and b.md", timestamp=1)),
            pp.agent_message(turn),
            pp.agent_message(failed),
            pp.agent_message(pp.tool_result_message("tooluse_2", "read", "", timestamp=1)),
        ]
    )


def images_context() -> pp.AgentContext:
    """A question with an image, and a blank question."""
    return pp.AgentContext(
        system_prompt="Describe images.",
        messages=[
            pp.agent_message(pp.user_message("What is this?", pp.image(PNG, "image/png"), timestamp=1)),
            pp.agent_message(pp.user_message("  ", timestamp=1)),
        ],
    )


WITH_TOOLS = pp.AgentContext(messages=hi().messages, tools=[READ])
case = partial(provider_case, API, config=SIGV4)
CASES = [
    case("text"),
    case("thinking", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)),
    case("redacted-thinking"),
    case("tool-call-fragments", context=WITH_TOOLS),
    case("two-tool-calls", context=WITH_TOOLS),
    case("cache-usage"),
    case("length"),
    case("context-window-exceeded"),
    case("guardrail-intervened"),
    case("content-filtered"),
    case("model-stream-error-mid-stream"),
    case("throttling-mid-stream"),
    case("validation-error-mid-stream"),
    case("internal-server-error-mid-stream"),
    case("service-unavailable-mid-stream"),
    case("cut-mid-stream", "text.http", cut_after=2),
    case("no-stop-reason"),
    case("error-400"),
    case("error-403"),
    case("error-403-access-denied"),
    case("error-404"),
    # pi's SDK retries a throttled call on its own, three times in all: each is answered alike.
    case("error-429-long", *["error-429-long.http"] * 3, options=RETRYING),
    case("error-429-then-text", "error-429-short.http", "text.http", options=RETRYING),
    case("error-500", "error-500.http", "error-500.http", "error-500.http"),
    case("bearer-token", "text.http", config=BEARER),
    case("api-key-bearer", "text.http", config={"environment": HTTP1, "api_key": BEDROCK_API_KEY}),
    case(
        "session-token",
        "text.http",
        config={"environment": {**ENVIRONMENT, "AWS_SESSION_TOKEN": SESSION_TOKEN}, "api_key": ""},
    ),
    case("headers", "text.http", config={**SIGV4, "headers": {"x-team": "pi"}}, options=OPTIONS),
    case("request-options", "text.http", context=options_context(), options=OPTIONS),
    case(
        "named-tool",
        "tool-call-fragments.http",
        context=options_context(),
        options=pp.GenerationOptions(tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read")),
    ),
    case("replayed-context", "text.http", context=replayed_context()),
    case("own-turns-replayed", "text.http", context=own_turns()),
    case("images", "text.http", context=images_context()),
    case(
        "thinking-budget",
        "thinking.http",
        model=SONNET_4_5,
        options=pp.GenerationOptions(max_tokens=2000, reasoning=pp.ThinkingLevel.HIGH),
    ),
    case(
        "block-binding", "thinking.http", model=OPUS_4_7, options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.XHIGH)
    ),
    case("gpt-oss-effort", "text.http", model=GPT_OSS, options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.XHIGH)),
    case("gpt-effort", "text.http", model=GPT_5_5, options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MINIMAL)),
    case("nova-no-cache-points", "text.http", model=NOVA_PRO, context=options_context()),
    *[dataclasses.replace(limited, config=SIGV4) for limited in output_limit_cases(API, INFO)],
]
BY_NAME = by_name(CASES)
message = Expected(INFO).message
usage = Expected(INFO).usage


def request_id(recording: str) -> str:
    """The request id (x-amzn-requestid) a recording's response carries."""
    head = Recording.read(RECORDINGS / API / f"{recording}.http").head.decode()
    return next(line.split(": ", 1)[1] for line in head.split("\r\n") if line.startswith("x-amzn-requestid: "))


def response(stop: str | None) -> Response:
    """The recording's stop reason (from messageStop); Bedrock's stream names no response id."""
    return Response(raw_stop_reason=stop)


def failure(**details: Any) -> pp.Diagnostic:
    """pi's diagnostic of a failed Bedrock call."""
    return pp.Diagnostic(type="bedrock_response_failure", timestamp=CLOCK_MS, details_json=json.dumps(details))


# --- the stream --------------------------------------------------------------------------------------


async def test_text_streams_each_delta_with_usage_and_cost() -> None:
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
        usage=usage(25, 15),
        stop=pp.StopReason.STOP,
        response=response("end_turn"),
    )


async def test_thinking_keeps_its_signature_from_signature_deltas() -> None:
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
    assert final == message(
        thinking("27 * 453: 27 * 400 = 10800, 27 * 53 = 1431; total 12231.", signature),
        text("27 × 453 = 12231."),
        usage=usage(40, 61),
        stop=pp.StopReason.STOP,
        response=response("end_turn"),
    )


async def test_redacted_reasoning_reads_as_pis_placeholder_with_the_encrypted_content_as_signature() -> None:
    events, final = await run(BY_NAME["redacted-thinking"], INFO)
    data = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB4U"
    assert outline(events) == [
        "start",
        "thinkingStart 0",
        "thinkingDelta 0 delta='[Reasoning redacted]'",
        f"thinkingEnd 0 thinkingSignature={data!r} redacted=True",  # the two chunks' bytes, as one base64
        "textStart 1",
        "textDelta 1 delta='Done.'",
        "textEnd 1",
        "done STOP",
    ]
    redacted = pp.AssistantContent(
        thinking=pp.ThinkingContent(thinking="[Reasoning redacted]", thinking_signature=data, redacted=True)
    )
    assert final == message(
        redacted, text("Done."), usage=usage(31, 20), stop=pp.StopReason.STOP, response=response("end_turn")
    )


async def test_tool_call_arguments_stream_fragment_by_fragment() -> None:
    events, final = await run(BY_NAME["tool-call-fragments"], INFO)
    arguments = '{"location": "San Francisco, CA", "unit": "fahrenheit", "days": [1, 2]}'
    fragments = ('{"loc', 'ation": "San', " Francisc", 'o, CA", ', '"unit": "fah', 'renheit", "days": [', "1, 2", "]}")
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Let me check the weather.'",
        "textEnd 0",
        "toolcallStart 1 id='tooluse_kZJMlvQmRJ6eAyJE5GIl7Q' name='get_weather'",
        *[f"toolcallDelta 1 delta={fragment!r}" for fragment in fragments],  # the empty one sends nothing
        "toolcallEnd 1 toolCall={'id': 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', 'name': 'get_weather', "
        f"'argumentsJson': {arguments!r}}}",
        "done TOOL_USE",
    ]
    assert final == message(
        text("Let me check the weather."),
        tool_call("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "get_weather", arguments),
        usage=usage(472, 89),
        stop=pp.StopReason.TOOL_USE,
        response=response("tool_use"),
    )


async def test_two_tool_calls_in_one_turn() -> None:
    events, final = await run(BY_NAME["two-tool-calls"], INFO)
    assert outline(events) == [
        "start",
        "toolcallStart 0 id='tooluse_A09q90qw90lq917835lq9' name='read'",
        'toolcallDelta 0 delta=\'{"path": "README.md"}\'',
        "toolcallEnd 0 toolCall={'id': 'tooluse_A09q90qw90lq917835lq9', 'name': 'read', "
        "'argumentsJson': '{\"path\": \"README.md\"}'}",
        "toolcallStart 1 id='tooluse_B19r91rx91mr928946mr0' name='read'",
        'toolcallDelta 1 delta=\'{"path": "Make\'',
        "toolcallDelta 1 delta='file\"}'",
        "toolcallEnd 1 toolCall={'id': 'tooluse_B19r91rx91mr928946mr0', 'name': 'read', "
        "'argumentsJson': '{\"path\": \"Makefile\"}'}",
        "done TOOL_USE",
    ]
    assert final == message(
        tool_call("tooluse_A09q90qw90lq917835lq9", "read", '{"path": "README.md"}'),
        tool_call("tooluse_B19r91rx91mr928946mr0", "read", '{"path": "Makefile"}'),
        usage=usage(472, 74),
        stop=pp.StopReason.TOOL_USE,
        response=response("tool_use"),
    )


async def test_cache_reads_and_writes_are_counted_and_priced_with_the_hours_writes() -> None:
    events, final = await run(BY_NAME["cache-usage"], INFO)
    assert outline(events)[-1] == "done STOP"
    expected = usage(12, 9, cache_read=24000, cache_write=1800, cache_write_1h=1000)
    assert final == message(text("Cached."), usage=expected, stop=pp.StopReason.STOP, response=response("end_turn"))
    assert final.usage is not None
    assert final.usage.total_tokens == 25821  # Bedrock's total, which counts the cache


@pytest.mark.parametrize(
    ("name", "content", "counts", "stop"),
    [
        ("length", "Once upon a time, in a", (18, 8), "max_tokens"),
        ("context-window-exceeded", "The summary so far", (199000, 12), "model_context_window_exceeded"),
    ],
)
async def test_running_out_of_tokens_is_a_length_stop(
    name: str, content: str, counts: tuple[int, int], stop: str
) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events)[-1] == "done LENGTH"
    assert final == message(text(content), usage=usage(*counts), stop=pp.StopReason.LENGTH, response=response(stop))


@pytest.mark.parametrize(
    ("name", "content", "counts", "stop"),
    [
        ("guardrail-intervened", "Sorry, the model cannot answer this question.", (22, 0), "guardrail_intervened"),
        ("content-filtered", "I can't help", (22, 4), "content_filtered"),
    ],
)
async def test_a_guardrail_or_content_filter_ends_with_an_error_that_keeps_the_text(
    name: str, content: str, counts: tuple[int, int], stop: str
) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events)[-2:] == ["textEnd 0", "error ERROR"]
    assert final.content == [text(content)]
    assert final.usage == usage(*counts)
    assert final.error_message == f"the model stopped with stop reason {stop!r}"
    assert final.raw_stop_reason == stop
    assert [diagnostic.type for diagnostic in final.diagnostics] == ["bedrock_response_failure"]


async def test_a_guardrails_error_keeps_pis_diagnostic_with_the_request_id() -> None:
    _, final = await run(BY_NAME["guardrail-intervened"], INFO)
    assert final == dataclasses.replace(
        message(
            text("Sorry, the model cannot answer this question."),
            usage=usage(22, 0),
            stop=pp.StopReason.ERROR,
            error="the model stopped with stop reason 'guardrail_intervened'",
            response=response("guardrail_intervened"),
        ),
        diagnostics=[failure(requestId=request_id("guardrail-intervened"))],
    )


@pytest.mark.parametrize(
    ("name", "kind", "detail"),
    [
        ("model-stream-error-mid-stream", "modelStreamErrorException", "The model returned an error while streaming."),
        ("throttling-mid-stream", "throttlingException", "Too many tokens, please wait before trying again."),
        ("validation-error-mid-stream", "validationException", "Input is too long for requested model."),
        (
            "internal-server-error-mid-stream",
            "internalServerException",
            "The system encountered an unexpected error during processing. Try your request again.",
        ),
        ("service-unavailable-mid-stream", "serviceUnavailableException", "Bedrock is unable to process your request."),
    ],
)
async def test_an_exception_in_the_stream_keeps_what_came_before(name: str, kind: str, detail: str) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Partial answer'", "error ERROR"]
    assert final == dataclasses.replace(
        message(
            text("Partial answer"),
            usage=NO_USAGE,
            stop=pp.StopReason.ERROR,
            error=f"the provider failed mid-stream with {kind}: {detail}",
        ),
        diagnostics=[failure(errorCode=kind[0].upper() + kind[1:], requestId=request_id(name))],
    )


async def test_a_connection_cut_mid_stream_keeps_what_came_before() -> None:
    events, final = await run(BY_NAME["cut-mid-stream"], INFO)
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Hello'", "error ERROR"]
    assert final.content == [text("Hello")]
    assert final.error_message == (
        "the connection to the provider broke: peer closed connection without sending complete message body "
        "(incomplete chunked read)"
    )
    assert final.diagnostics == [failure(requestId=request_id("text"))]


async def test_a_stream_that_ends_without_a_stop_reason_is_an_error() -> None:
    events, final = await run(BY_NAME["no-stop-reason"], INFO)
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Hello'", "textEnd 0", "error ERROR"]
    assert final.error_message == "the provider 'amazon-bedrock' ended its stream without a stop reason"
    assert final.usage == usage(25, 15)


@pytest.mark.parametrize(
    ("name", "status", "error"),
    [
        ("error-400", 400, "the provider answered 400 ValidationException: The provided model identifier is invalid."),
        (
            "error-403",
            403,
            "the provider answered 403 UnrecognizedClientException: "
            "The security token included in the request is invalid.",
        ),
        (
            "error-403-access-denied",
            403,
            "the provider answered 403 AccessDeniedException: "
            "You don't have access to the model with the specified model ID.",
        ),
        (
            "error-404",
            404,
            "the provider answered 404 ResourceNotFoundException: "
            "Could not resolve the foundation model from the provided model identifier.",
        ),
        (
            "error-429-long",
            429,
            "the provider answered 429 ThrottlingException: Too many requests, please wait before trying again.; "
            "the provider asks to retry after 120 s, longer than max_retry_delay_ms (60000 ms)",
        ),
        (
            "error-500",
            500,
            "the provider answered 500 InternalServerException: "
            "The system encountered an unexpected error during processing. Try your request again.",
        ),
    ],
)
async def test_an_error_status_ends_with_one_error_event_that_names_the_model(
    name: str, status: int, error: str
) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events) == ["start", "error ERROR"]
    code = error.split(" ")[4].rstrip(":")
    # A status run() may retry fails after the provider code returns, before the stream opens: the
    # diagnostic would not last (a retried call that succeeds must not keep it either).
    retried = status in bedrock.RETRYABLE
    assert final == dataclasses.replace(
        message(usage=NO_USAGE, stop=pp.StopReason.ERROR, error=error),
        diagnostics=[] if retried else [failure(status=status, errorCode=code, requestId=request_id(name))],
    )


async def test_a_throttled_call_is_retried_and_streams_with_no_failure_left() -> None:
    events, final = await run(BY_NAME["error-429-then-text"], INFO)
    assert outline(events)[-1] == "done STOP"
    assert final.content == [text("Hello! 你好，how can I help?")]
    assert final.diagnostics == []  # the attempt that failed leaves none


async def test_three_server_errors_are_three_requests() -> None:
    _, replay = await play(BY_NAME["error-500"], INFO)
    assert len(replay.requests) == 3
    _, replay = await play(BY_NAME["error-429-long"], INFO)
    assert len(replay.requests) == 1  # Retry-After beyond max_retry_delay_ms: not retried


async def test_a_client_cancel_closes_the_provider_connection_and_ends_aborted() -> None:
    events, closed = await cancel_while_streaming(
        INFO, RECORDINGS / API / "text.http", provider_events=2, client_events=3
    )
    assert closed, "the provider never saw its connection close"
    assert outline(events) == ["start", "textStart 0", "textDelta 0 delta='Hello'", "error ABORTED"]


# --- signing in ----------------------------------------------------------------------------------------


async def test_access_keys_sign_the_request_with_sigv4_for_bedrock_in_the_region() -> None:
    _, replay = await play(BY_NAME["text"], INFO)
    request = replay.requests[0]
    assert request.path == "/model/us.anthropic.claude-sonnet-4-6/converse-stream"
    authorization = request.headers["authorization"]
    assert authorization.startswith(f"AWS4-HMAC-SHA256 Credential={KEY_ID}/")
    assert f"/{REGION}/bedrock/aws4_request, SignedHeaders=" in authorization
    assert request.headers["x-amz-date"]
    assert "x-amz-security-token" not in request.headers
    assert request.headers["content-type"] == "application/json"


async def test_a_session_token_goes_with_the_keys() -> None:
    _, replay = await play(BY_NAME["session-token"], INFO)
    headers = replay.requests[0].headers
    assert headers["x-amz-security-token"] == SESSION_TOKEN
    assert "x-amz-security-token" in headers["authorization"]  # signed


@pytest.mark.parametrize("name", ["bearer-token", "api-key-bearer"])
async def test_a_bedrock_api_key_is_a_bearer_token(name: str) -> None:
    events, replay = await play(BY_NAME[name], INFO)
    assert outline(events)[-1] == "done STOP"
    headers = replay.requests[0].headers
    assert headers["authorization"] == f"Bearer {BEDROCK_API_KEY}"
    assert "x-amz-date" not in headers  # not signed


async def test_configured_headers_never_replace_the_signatures() -> None:
    headers = {"authorization": "Bearer mine", "x-amz-date": "20000101T000000Z", "x-team": "pi"}
    played = case("request", "text.http", config={**SIGV4, "headers": headers})
    _, replay = await play(played, INFO)
    sent_headers = replay.requests[0].headers
    assert sent_headers["authorization"].startswith("AWS4-HMAC-SHA256 ")
    assert sent_headers["x-amz-date"] != "20000101T000000Z"
    assert sent_headers["x-team"] == "pi"


async def test_a_bearer_call_looks_for_no_aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_chain(*_: object) -> None:
        raise AssertionError("the credential chain was consulted")

    monkeypatch.setattr(AioSession, "get_credentials", no_chain)
    events, _ = await play(BY_NAME["bearer-token"], INFO)
    assert outline(events)[-1] == "done STOP"


def settings(base_url: str = "http://127.0.0.1:1", model_id: str = INFO.id, **environment: str) -> bedrock.Target:
    info = dataclasses.replace(INFO, id=model_id, base_url=base_url)
    return bedrock.target(ModelConfig(info=info, api_key="", environment=environment))


STANDARD = "https://bedrock-runtime.eu-central-1.amazonaws.com"


def test_the_region_and_endpoint_are_resolved_as_pi_resolves_them(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    # A custom endpoint (a proxy, a VPC endpoint) is always the endpoint; the region defaults to us-east-1.
    assert (settings().region, settings().endpoint) == ("us-east-1", "http://127.0.0.1:1")
    assert settings(AWS_DEFAULT_REGION="eu-west-1").region == "eu-west-1"
    assert settings(AWS_REGION="ap-south-1", AWS_DEFAULT_REGION="eu-west-1").region == "ap-south-1"
    # A standard endpoint is pinned with its region only when none is configured.
    assert (settings(STANDARD).region, settings(STANDARD).endpoint) == ("eu-central-1", STANDARD)
    assert (settings(STANDARD, AWS_REGION="us-west-2").region, settings(STANDARD, AWS_REGION="us-west-2").endpoint) == (
        "us-west-2",
        None,
    )
    # The process's AWS_PROFILE brings its own region (the model's own does not, as in pi); an
    # inference profile's ARN names one that wins over all.
    assert (settings(STANDARD, AWS_PROFILE="work").region, settings(STANDARD, AWS_PROFILE="work").endpoint) == (
        "eu-central-1",
        STANDARD,
    )
    monkeypatch.setenv("AWS_PROFILE", "work")
    assert (settings(STANDARD).region, settings(STANDARD).endpoint) == (None, None)
    assert (settings().region, settings().endpoint) == (None, "http://127.0.0.1:1")  # a custom endpoint stays
    arn = "arn:aws:bedrock:ap-northeast-1:123456789012:application-inference-profile/abc"
    assert settings(model_id=arn, AWS_REGION="us-west-2").region == "ap-northeast-1"


def test_credentials_are_chosen_as_pi_chooses_them(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    keys = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    assert settings(**keys).keys == (KEY_ID, SECRET_KEY, None)
    assert settings(**keys, AWS_BEARER_TOKEN_BEDROCK="tok").bearer == "tok"  # a Bedrock API key wins
    assert settings(**keys, AWS_PROFILE="work").profile == "work"  # the model's own profile wins over keys
    assert settings(**keys, AWS_PROFILE="work").keys is None
    monkeypatch.setenv("AWS_PROFILE", "ambient")
    assert settings(**keys).keys == (KEY_ID, SECRET_KEY, None)  # keys win over the process's profile
    assert settings().profile == "ambient"  # else the credential chain with it
    skipped = settings(**keys, AWS_BEARER_TOKEN_BEDROCK="tok", AWS_BEDROCK_SKIP_AUTH="1")
    assert (skipped.bearer, skipped.keys) == (None, ("dummy-access-key", "dummy-secret-key", None))
    info = dataclasses.replace(INFO, base_url="http://127.0.0.1:1")
    assert bedrock.target(ModelConfig(info=info, api_key="from-models-json")).bearer == "from-models-json"


async def test_a_profile_signs_with_its_own_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    profile = f"pi-proto-{uuid.uuid4().hex}"  # a session of its own
    credentials = tmp_path / "credentials"
    credentials.write_text(f"[{profile}]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = {SECRET}\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    # The model's own profile wins over its access keys.
    played = case(
        "profile", "text.http", config={"environment": {**ENVIRONMENT, "AWS_PROFILE": profile}, "api_key": ""}
    )
    events, replay = await play(played, INFO)
    assert outline(events)[-1] == "done STOP"
    assert replay.requests[0].headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDPROFILE/")
    missing = case(
        "profile", "text.http", config={"environment": {**HTTP1, "AWS_PROFILE": f"{profile}-missing"}, "api_key": ""}
    )
    events, replay = await play(missing, INFO)
    assert replay.requests == []
    assert final_message(events).error_message == (
        f"ProfileNotFound: The config profile ({profile}-missing) could not be found"
    )


def test_an_error_that_echoes_a_secret_setting_is_scrubbed() -> None:
    model = ModelConfig(info=INFO, api_key="", environment=BEARER_ENVIRONMENT)
    error = ClientError(
        {"Error": {"Code": "AccessDeniedException", "Message": f"token {BEDROCK_API_KEY} refused"}}, "ConverseStream"
    )
    assert bedrock.describe(error, model) == "the provider answered AccessDeniedException: token *** refused"


# --- the request ---------------------------------------------------------------------------------------


async def test_the_request_carries_the_call_options_as_pi_maps_them() -> None:
    _, replay = await play(BY_NAME["request-options"], INFO)
    request = replay.requests[0]
    assert request.headers["x-trace"] == "abc"
    assert "x-trace" in request.headers["authorization"]  # signed with the request
    one_hour = {"cachePoint": {"type": "default", "ttl": "1h"}}  # `long`
    assert request.body == {
        "messages": [{"role": "user", "content": [{"text": "hi"}, one_hour]}],
        "system": [{"text": "Be brief."}, one_hour],
        "inferenceConfig": {"maxTokens": 1000, "temperature": 0.5},  # temperature with thinking, as pi sends it
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": "read", "description": "Read a file", "inputSchema": {"json": READ_SCHEMA}}}
            ],
            "toolChoice": {"any": {}},
        },
        # Claude Sonnet 4.6 thinks adaptively: an effort, no budget.
        "additionalModelRequestFields": {
            "thinking": {"type": "adaptive", "display": "summarized"},
            "output_config": {"effort": "low"},
        },
    }


async def test_a_context_another_provider_wrote_is_replayed_as_pi_replays_it() -> None:
    _, replay = await play(BY_NAME["replayed-context"], INFO)
    assert replay.requests[0].body["messages"] == [
        {"role": "user", "content": [{"text": "read the readme"}]},
        {
            "role": "assistant",
            "content": [
                # the other model's reasoning is left out; its call's id is rewritten to Bedrock's pattern
                {"text": "Reading it."},
                {"toolUse": {"toolUseId": "call_abc_fc_123", "name": "read", "input": {"path": "README.md"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "call_abc_fc_123",
                        "content": [{"text": "# pi-proto"}, {"text": "line 2"}],
                        "status": "success",
                    }
                }
            ],
        },
        {"role": "user", "content": [{"text": "summarise it"}, {"cachePoint": {"type": "default"}}]},
    ]


async def test_the_models_own_turns_replay_their_reasoning_and_an_error_results_images_after_the_results() -> None:
    _, replay = await play(BY_NAME["own-turns-replayed"], INFO)
    png = base64.b64encode(PNG).decode()
    assert replay.requests[0].body["messages"] == [
        {"role": "user", "content": [{"text": "read a.png and b.md"}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "Two files to read.", "signature": "sig-own"}}},
                {"text": "Reasoning cut short"},  # no signature: Bedrock would refuse it as reasoning
                {"reasoningContent": {"redactedContent": REDACTED}},  # the signature's bytes, base64 on the wire
                {"text": "Reading both."},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "read", "input": {"path": "a.png"}}},
                {"toolUse": {"toolUseId": "tooluse_2", "name": "read", "input": {"path": "b.md"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse_1",
                        "content": [{"text": "cannot decode"}, {"text": "(image attached after the tool results)"}],
                        "status": "error",
                    }
                },
                {"toolResult": {"toolUseId": "tooluse_2", "content": [{"text": "<empty>"}], "status": "success"}},
                {"text": "Images from the error result of tool call tooluse_1 (read):"},
                {"image": {"format": "png", "source": {"bytes": png}}},
                {"cachePoint": {"type": "default"}},
            ],
        },
    ]


async def test_images_go_as_their_bytes_and_a_blank_turn_reads_empty() -> None:
    _, replay = await play(BY_NAME["images"], INFO)
    png = base64.b64encode(PNG).decode()
    assert replay.requests[0].body["messages"] == [
        {
            "role": "user",
            "content": [{"text": "What is this?"}, {"image": {"format": "png", "source": {"bytes": png}}}],
        },
        {"role": "user", "content": [{"text": "<empty>"}, {"cachePoint": {"type": "default"}}]},
    ]


async def test_older_claude_models_think_within_a_budget_added_to_max_tokens_with_interleaved_thinking() -> None:
    _, replay = await play(BY_NAME["thinking-budget"], INFO)
    body = replay.requests[0].body
    assert body["inferenceConfig"] == {"maxTokens": 2000 + 16384}
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"},
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
    }


async def test_opus_4_7_binds_replayed_thinking_and_takes_xhigh() -> None:
    _, replay = await play(BY_NAME["block-binding"], INFO)
    assert replay.requests[0].body["additionalModelRequestFields"] == {
        "thinking": {
            "type": "adaptive",
            "display": "summarized",
            "block_binding": {"prefix_mismatch_behavior": "drop_block"},
        },
        "output_config": {"effort": "xhigh"},
        "anthropic_beta": ["thinking-binding-controls-2026-08-01"],
    }


@pytest.mark.parametrize(
    ("name", "fields"),
    [("gpt-oss-effort", {"reasoning_effort": "high"}), ("gpt-effort", {"reasoning": {"effort": "low"}})],
)
async def test_openais_models_reason_at_an_effort(name: str, fields: dict[str, Any]) -> None:
    _, replay = await play(BY_NAME[name], INFO)
    assert replay.requests[0].body["additionalModelRequestFields"] == fields


@pytest.mark.parametrize(
    ("name", "expected"), [("output-limit-fitted", FITTED), ("output-limit-after-usage", AFTER_USAGE)]
)
async def test_the_models_output_limit_is_fitted_into_the_context_window(name: str, expected: int) -> None:
    _, replay = await play(BY_NAME[name], INFO)
    assert replay.requests[0].body["inferenceConfig"] == {"maxTokens": expected}


async def test_a_model_that_caches_by_itself_gets_no_cache_points() -> None:
    _, replay = await play(BY_NAME["nova-no-cache-points"], INFO)
    body = replay.requests[0].body
    assert body["system"] == [{"text": "Be brief."}]
    assert body["messages"] == [{"role": "user", "content": [{"text": "hi"}]}]
    assert body["inferenceConfig"] == {"maxTokens": 10_000}
    assert "additionalModelRequestFields" not in body  # no reasoning level asked


WRITE = pp.Tool(name="write", description="Write a file", parameters_json=READ.parameters_json)


async def sent(
    options: pp.GenerationOptions | None = None,
    *,
    model: pp.Model = INFO,
    tools: tuple[pp.Tool, ...] = (READ,),
    context: pp.AgentContext | None = None,
    **environment: str,
) -> dict[str, Any]:
    """The body of the request a call to `model` sends, with its settings."""
    context = context or pp.AgentContext(messages=hi().messages, tools=list(tools))
    config = {"environment": {**ENVIRONMENT, **environment}, "api_key": ""}
    played = case("request", "text.http", context=context, options=options, model=model, config=config)
    _, replay = await play(played, INFO)
    body: dict[str, Any] = replay.requests[0].body
    return body


@pytest.mark.parametrize(
    ("mode", "choice"),
    [
        (pp.ToolChoice(mode=pp.ToolChoiceMode.AUTO), {"auto": {}}),
        (pp.ToolChoice(mode=pp.ToolChoiceMode.REQUIRED), {"any": {}}),
        (pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="write"), {"tool": {"name": "write"}}),
    ],
)
async def test_a_tool_choice_is_bedrocks(mode: pp.ToolChoice, choice: dict[str, Any]) -> None:
    body = await sent(pp.GenerationOptions(tool_choice=mode), tools=(READ, WRITE))
    assert body["toolConfig"]["toolChoice"] == choice


async def test_no_tools_or_tool_choice_none_sends_no_tool_config() -> None:
    assert "toolConfig" not in await sent(tools=())
    assert "toolConfig" not in await sent(pp.GenerationOptions(tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.NONE)))
    body = await sent()
    assert body["toolConfig"] == {
        "tools": [{"toolSpec": {"name": "read", "description": "Read a file", "inputSchema": {"json": READ_SCHEMA}}}]
    }


@pytest.mark.parametrize(
    ("level", "effort"),
    [
        (pp.ThinkingLevel.MINIMAL, "low"),
        (pp.ThinkingLevel.MEDIUM, "medium"),
        (pp.ThinkingLevel.HIGH, "high"),
        (pp.ThinkingLevel.XHIGH, "high"),  # Sonnet 4.6 has no xhigh: pi's high
        (pp.ThinkingLevel.MAX, "max"),  # the model's thinkingLevelMap
    ],
)
async def test_an_adaptive_models_effort_is_its_map_value_else_pis(level: pp.ThinkingLevel, effort: str) -> None:
    body = await sent(pp.GenerationOptions(reasoning=level, max_tokens=3000))
    assert body["additionalModelRequestFields"]["output_config"] == {"effort": effort}
    assert body["inferenceConfig"] == {"maxTokens": 3000}  # no budget to make room for


async def test_no_reasoning_level_sends_no_thinking_fields() -> None:
    assert "additionalModelRequestFields" not in await sent()
    assert "additionalModelRequestFields" not in await sent(pp.GenerationOptions(temperature=0.2), model=SONNET_4_5)


async def test_govcloud_takes_neither_display_nor_block_binding() -> None:
    body = await sent(pp.GenerationOptions(reasoning=pp.ThinkingLevel.HIGH), model=OPUS_4_7, AWS_REGION="us-gov-west-1")
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "high"},
    }


async def test_cache_points_follow_the_retention() -> None:
    none = pp.GenerationOptions(cache_retention=pp.CacheRetention.NONE)
    context = options_context()
    body = await sent(none, context=context)
    assert body["system"] == [{"text": "Be brief."}]
    assert body["messages"][-1]["content"] == [{"text": "hi"}]
    body = await sent(context=context, PI_CACHE_RETENTION="long")  # pi's setting, when the call says nothing
    assert body["system"][-1] == {"cachePoint": {"type": "default", "ttl": "1h"}}
    body = await sent(context=context, model=NOVA_PRO, AWS_BEDROCK_FORCE_CACHE="1")
    assert body["system"][-1] == {"cachePoint": {"type": "default"}}


@pytest.mark.parametrize(
    ("model_id", "name", "caches"),
    [
        ("anthropic.claude-3-5-haiku-20241022-v1:0", "Claude Haiku 3.5", True),
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", "Claude Sonnet 3.7 (US)", True),
        ("anthropic.claude-3-haiku-20240307-v1:0", "Claude Haiku 3", False),
        ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "Claude Haiku 4.5 (Global)", True),
        ("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/x1", "Claude Opus 5 profile", True),
        ("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/x1", "my profile", False),
    ],
)
def test_prompt_caching_follows_pis_model_families(model_id: str, name: str, caches: bool) -> None:
    info = dataclasses.replace(INFO, id=model_id, name=name)
    assert bedrock.prompt_caching(ModelConfig(info=info, api_key="")) is caches


async def test_reasoning_from_a_model_other_than_claude_goes_back_without_a_signature() -> None:
    deepseek = dataclasses.replace(GPT_OSS, id="deepseek.v3.2", name="DeepSeek V3.2")
    turn = pp.assistant_message(
        pp.thinking("Think.", signature="sig"),
        pp.text("Answer."),
        api=API,
        provider=deepseek.provider,
        model=deepseek.id,
        timestamp=1,
    )
    context = pp.AgentContext(messages=[*hi().messages, pp.agent_message(turn), *hi().messages])
    body = await sent(context=context, model=deepseek)
    assert body["messages"][1]["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "Think."}}},
        {"text": "Answer."},
    ]


async def test_a_model_without_image_input_gets_pis_placeholder() -> None:
    context = pp.AgentContext(messages=[pp.agent_message(pp.user_message("look", pp.image(PNG, "image/png")))])
    body = await sent(context=context, model=GPT_OSS)
    assert body["messages"][0]["content"] == [
        {"text": "look"},
        {"text": "(image omitted: model does not support images)"},
    ]


async def test_an_image_bedrock_takes_no_format_of_ends_the_call_before_any_request() -> None:
    context = pp.AgentContext(messages=[pp.agent_message(pp.user_message("look", pp.image(b"BM", "image/bmp")))])
    events, replay = await play(case("request", "text.http", context=context), INFO)
    assert replay.requests == []
    assert final_message(events).error_message == (
        "Bedrock takes no image of type 'image/bmp': only JPEG, PNG, GIF and WebP"
    )


async def test_provider_options_are_converse_fields_on_top() -> None:
    options = pp.GenerationOptions(provider_options_json='{"performanceConfig": {"latency": "optimized"}}')
    body = await sent(options)
    assert body["performanceConfig"] == {"latency": "optimized"}
    bad = pp.GenerationOptions(provider_options_json='{"performanceConfig": {"latency": 7}}')
    events, replay = await play(case("request", "text.http", options=bad), INFO)
    assert replay.requests == []
    assert (final_message(events).error_message or "").startswith("the request is not one Bedrock takes: ")


async def test_a_tool_that_requires_constrained_sampling_ends_the_call() -> None:
    strict = pp.Tool(
        name="read",
        parameters_json=READ.parameters_json,
        constrained_sampling=pp.ConstrainedSampling(json_schema=pp.JsonSchemaSampling(strict=pp.Strictness.REQUIRE)),
    )
    events, replay = await play(
        case("request", "text.http", context=pp.AgentContext(messages=hi().messages, tools=[strict])), INFO
    )
    assert replay.requests == []
    assert "requires JSON-schema constrained sampling, not asked of Bedrock here" in (
        final_message(events).error_message or ""
    )


# --- the event stream ------------------------------------------------------------------------------------


def test_the_replay_server_frames_each_line_as_an_event_stream_message() -> None:
    frame = event_stream_frame({"event": "messageStop", "payload": {"stopReason": "end_turn"}})
    buffer = EventStreamBuffer()
    buffer.add_data(frame)
    (parsed,) = list(buffer)
    assert parsed.headers == {
        ":event-type": "messageStop",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    assert json.loads(parsed.payload) == {"stopReason": "end_turn"}
    assert len(Recording.read(RECORDINGS / API / "text.http").events) == 7  # one frame per line


async def frames_answered(*pieces: bytes) -> str:
    """The error a call ends with when the provider answers a 200 event stream of `pieces`."""

    async def answer(exchange: Exchange) -> None:
        await exchange.head("200 OK", "application/vnd.amazon.eventstream")
        await exchange.body(pieces)

    async with HostileServer(answer) as server:
        model = served_model(dataclasses.replace(INFO, base_url=server.base_url), **SIGV4)
        events = [event async for event in model.stream(hi())]
    error = events[-1].error
    assert error is not None
    assert error.message is not None
    return error.message.error_message or ""


START = event_stream_frame({"event": "messageStart", "payload": {"role": "assistant"}})


async def test_a_frame_whose_crc_fails_ends_the_call() -> None:
    broken = bytearray(START)
    broken[-1] ^= 1
    message = await frames_answered(START, bytes(broken))
    assert message.startswith("the provider sent an event stream frame that is not valid: Checksum mismatch")


async def test_a_stream_that_ends_inside_a_frame_ends_the_call() -> None:
    assert (
        await frames_answered(START, START[:10])
        == "the provider 'amazon-bedrock' ended its event stream inside a frame"
    )
    assert await frames_answered(START[:10]) == (
        "the provider 'amazon-bedrock' answered with an event stream that holds no event"
    )
    assert await frames_answered(b"\0\0\0\4rest") == (
        "the provider 'amazon-bedrock' sent an event stream frame of 4 bytes, not a frame"
    )


async def test_a_named_tool_choice_is_bedrocks_tool_choice() -> None:
    _, replay = await play(BY_NAME["named-tool"], INFO)
    assert replay.requests[0].body["toolConfig"]["toolChoice"] == {"tool": {"name": "read"}}
