"""pi's own protocols over HTTP, pi-messages (`POST /messages`) and pi-agent-core's streamProxy
(`POST /api/stream`): the README trip read as pi's clients read it, every event in pi's shape,
pi's options, and each refusal in the protocol's own error body (pi_proto.web.pi_protocols)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from http import HTTPStatus
from typing import Any

import pyqwest
import pytest

import pi_proto as pp
from pi_proto._gen.types.pi.ai.v1 import Transport
from pi_proto.grpc.requests import ServerLimits
from pi_proto.grpc.server import ModelServer
from pi_proto.ir.events import events_of
from pi_proto.models.scripted import ScriptedModel
from pi_proto.models.seed import README_PREAMBLE, README_REQUEST
from pi_proto.stream.accumulator import Accumulator
from pi_proto.stream.event_stream import AssistantMessageEventStream
from pi_proto.transcripts.pi_options import options_from_pi, options_to_pi
from pi_proto.web import HttpServer, read_sse
from pi_proto.web.pi_protocols import (
    MESSAGES_PATH,
    PROXY_PATH,
    PiMessagesSse,
    ProxySse,
    pi_messages_event,
    proxy_event,
)
from pi_proto.web.sse import sse_line

from .helpers import README_TURN, RecordingModel, eventually

TOKEN = "s3cret-token"
HEADERS = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json", "accept": "text/event-stream"}
PROTOCOLS = ["pi-messages", "proxy"]
PATHS = {"pi-messages": MESSAGES_PATH, "proxy": PROXY_PATH}
NOT_SERVED = "is not served: this server serves scripted/scripted-v1"

# The README's first turn with reasoning before it, the blocks' signatures and the response's ids.
THOUGHTFUL_TURN = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "先看看 README。", "thinkingSignature": "sig-thinking"},
        {"type": "text", "text": README_PREAMBLE, "textSignature": "sig-text"},
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "README.md"}},
    ],
    "api": "scripted",
    "provider": "scripted",
    "model": "scripted-v1",
    "usage": {
        "input": 18,
        "output": 12,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 30,
        "cost": {"input": 0.25, "output": 0.5, "cacheRead": 0, "cacheWrite": 0, "total": 0.75},
    },
    "stopReason": "toolUse",
    "timestamp": 1010,
    "responseId": "resp_1",
    "responseModel": "scripted-v1-2026-05",
    "providerThinkingLevel": "high",
}
CONTEXT = {"messages": [{"role": "user", "content": README_REQUEST, "timestamp": 1}]}
ZERO_USAGE = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}

# Each event type's keys in the order of pi's types (pi-ai's PiMessagesEvent, pi-agent-core's
# ProxyAssistantMessageEvent); "?" marks an optional key.
BLOCK_TYPES = {
    "start": ["type"],
    "text_start": ["type", "contentIndex"],
    "text_delta": ["type", "contentIndex", "delta"],
    "thinking_start": ["type", "contentIndex"],
    "thinking_delta": ["type", "contentIndex", "delta"],
    "toolcall_start": ["type", "contentIndex", "id", "toolName"],
    "toolcall_delta": ["type", "contentIndex", "delta"],
    "toolcall_end": ["type", "contentIndex", "toolCall"],
}
PI_MESSAGES_TYPES = {
    **BLOCK_TYPES,
    "text_end": ["type", "contentIndex", "content", "contentSignature?"],
    "thinking_end": ["type", "contentIndex", "content", "contentSignature?", "redacted?"],
    "done": ["type", "reason", "usage", "responseId?", "responseModel?", "providerThinkingLevel?", "rewrite?"],
    "error": [
        "type", "reason", "usage", "errorMessage?", "responseId?", "responseModel?", "providerThinkingLevel?",
        "rewrite?",
    ],
}  # fmt: skip
PROXY_TYPES = {
    **BLOCK_TYPES,
    "text_end": ["type", "contentIndex", "contentSignature?"],
    "thinking_end": ["type", "contentIndex", "contentSignature?"],
    "done": ["type", "reason", "usage", "providerThinkingLevel?"],
    "error": ["type", "reason", "errorMessage?", "usage", "providerThinkingLevel?"],
}
TYPES = {"pi-messages": PI_MESSAGES_TYPES, "proxy": PROXY_TYPES}
USAGE_KEYS = ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]
COST_KEYS = ["input", "output", "cacheRead", "cacheWrite", "total"]


def has_pis_keys(event: dict[str, Any], types: dict[str, list[str]]) -> bool:
    """Whether an event has exactly its type's keys: every required one, no other, in pi's order;
    a terminal event's usage every key of pi's Usage."""
    keys = types[event["type"]]
    names = [key.rstrip("?") for key in keys]
    if list(event) != [name for name in names if name in event]:
        return False
    if not all(key in event for key in keys if not key.endswith("?")):
        return False
    if "usage" in event:
        return list(event["usage"]) == USAGE_KEYS and list(event["usage"]["cost"]) == COST_KEYS
    return True


def pi_messages_read(text: str) -> list[Any]:
    """The events of an answer as pi-ai's pi-messages client reads them (readPiMessagesEvents):
    blocks split at a blank line, of each block its first `data:` line, trimmed."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = next((line[5:].strip() for line in block.split("\n") if line.startswith("data:")), "")
        if data and data != "[DONE]":
            events.append(json.loads(data))
    return events


def proxy_read(text: str) -> list[Any]:
    """The events of an answer as pi-agent-core's streamProxy reads them: every line that starts
    with `data: `, what follows trimmed."""
    return [json.loads(line[6:].strip()) for line in text.split("\n") if line.startswith("data: ") and line[6:].strip()]


READERS = {"pi-messages": pi_messages_read, "proxy": proxy_read}


def pi_model(model_id: str = "scripted-v1", provider: str = "scripted") -> dict[str, Any]:
    """A pi Model as streamProxy sends it whole."""
    return {
        "id": model_id,
        "name": "Scripted turns",
        "api": "pi-messages",
        "provider": provider,
        "baseUrl": "http://127.0.0.1:1",
        "reasoning": True,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 16384,
    }


def body(
    protocol: str,
    context: Any = CONTEXT,
    options: Any = None,
    model_id: str = "scripted-v1",
    provider: str = "scripted",
) -> dict[str, Any]:
    """A request as the protocol's client writes it: the model's id, or for the proxy its whole Model."""
    model: Any = model_id if protocol == "pi-messages" else pi_model(model_id, provider)
    return {"model": model, "context": context, "options": {} if options is None else options}


async def post(
    url: str, protocol: str, request: Any, headers: dict[str, str] | None = None, query: str = ""
) -> tuple[int, Any, Any]:
    """POST to the protocol's path: the status, the headers, and the events as its client reads
    them (or the error body)."""
    content = request if isinstance(request, bytes) else json.dumps(request).encode()
    reply = await pyqwest.Client().post(
        url + PATHS[protocol] + query, headers=HEADERS if headers is None else headers, content=content
    )
    if reply.status != 200:
        return reply.status, reply.headers, json.loads(reply.content)
    return 200, reply.headers, READERS[protocol](reply.content.decode())


def error_of(protocol: str, error_body: Any) -> tuple[str, str | None]:
    """The message and code of an HTTP error body, which must have exactly the protocol's shape:
    `{"error": {"message", "code"}}` for pi-messages, `{"error": "<status> <phrase>: <message>"}`
    for the proxy, whose client shows nothing of the response but that text."""
    assert list(error_body) == ["error"]
    if protocol == "pi-messages":
        assert list(error_body["error"]) == ["message", "code"]
        return error_body["error"]["message"], error_body["error"]["code"]
    assert isinstance(error_body["error"], str)
    status, _, message = error_body["error"].partition(": ")
    assert status in {f"{code.value} {code.phrase}" for code in HTTPStatus}, error_body
    return message, None


@pytest.fixture
async def url() -> AsyncIterator[str]:
    model = ScriptedModel([pp.assistant_from_pi(THOUGHTFUL_TURN)], delta_size=1000)
    async with ModelServer(model, token=TOKEN) as grpc_server, HttpServer(grpc_server) as http_server:
        yield http_server.url


# --- the README trip ------------------------------------------------------------------------------


TOOL_CALL = {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "README.md"}}
TRIP = {
    "pi-messages": [
        {"type": "start"},
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "先看看 README。"},
        {"type": "thinking_end", "contentIndex": 0, "content": "先看看 README。", "contentSignature": "sig-thinking"},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": README_PREAMBLE},
        {"type": "text_end", "contentIndex": 1, "content": README_PREAMBLE, "contentSignature": "sig-text"},
        {"type": "toolcall_start", "contentIndex": 2, "id": "call_1", "toolName": "read"},
        {"type": "toolcall_delta", "contentIndex": 2, "delta": '{"path":"README.md"}'},
        {"type": "toolcall_end", "contentIndex": 2, "toolCall": TOOL_CALL},
        {
            "type": "done",
            "reason": "toolUse",
            "usage": THOUGHTFUL_TURN["usage"],
            "responseId": "resp_1",
            "responseModel": "scripted-v1-2026-05",
            "providerThinkingLevel": "high",
        },
    ],
    "proxy": [
        {"type": "start"},
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "先看看 README。"},
        {"type": "thinking_end", "contentIndex": 0, "contentSignature": "sig-thinking"},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": README_PREAMBLE},
        {"type": "text_end", "contentIndex": 1, "contentSignature": "sig-text"},
        {"type": "toolcall_start", "contentIndex": 2, "id": "call_1", "toolName": "read"},
        {"type": "toolcall_delta", "contentIndex": 2, "delta": '{"path":"README.md"}'},
        {"type": "toolcall_end", "contentIndex": 2, "toolCall": TOOL_CALL},
        {"type": "done", "reason": "toolUse", "usage": THOUGHTFUL_TURN["usage"], "providerThinkingLevel": "high"},
    ],
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_readme_trip_is_pis_events_exactly(url: str, protocol: str) -> None:
    status, headers, events = await post(url, protocol, body(protocol, options={"maxTokens": 100}))
    assert status == 200
    assert (headers["content-type"], headers["cache-control"], headers["x-accel-buffering"]) == (
        "text/event-stream",
        "no-cache",
        "no",
    )
    assert events == TRIP[protocol]
    assert all(has_pis_keys(event, TYPES[protocol]) for event in events)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_seeds_readme_model_answers_with_a_usage_pi_can_add_up(protocol: str) -> None:
    # The script's usage has no cache counts and no cost; pi's Usage always has them.
    async with ModelServer(ScriptedModel.readme()) as grpc_server, HttpServer(grpc_server) as http_server:
        status, _, events = await post(http_server.url, protocol, body(protocol))
    assert status == 200
    assert [event["type"] for event in events] == [
        "start", "text_start", "text_delta", "text_delta", "text_end", "toolcall_start", "toolcall_delta",
        "toolcall_delta", "toolcall_delta", "toolcall_end", "done",
    ]  # fmt: skip
    assert events[-1]["usage"] == {**ZERO_USAGE, "input": 18, "output": 12, "totalTokens": 30}
    assert all(has_pis_keys(event, TYPES[protocol]) for event in events)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_pis_transcript_context_with_a_system_message_is_taken(protocol: str) -> None:
    model = ContextModel()
    context = {
        "messages": [
            {"role": "system", "content": "Answer briefly.", "timestamp": 1},
            {"role": "user", "content": README_REQUEST, "timestamp": 2},
        ]
    }
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
        status, _, events = await post(http_server.url, protocol, body(protocol, context))
    assert (status, events[-1]["type"]) == (200, "done")
    (seen,) = model.contexts
    assert seen.messages[0].system is not None
    assert seen.messages[1].user is not None


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_failure_after_the_start_is_an_error_event_with_its_message(protocol: str) -> None:
    model = ScriptedModel([pp.assistant_message("only turn", timestamp=1)])
    earlier = pp.message_to_pi(pp.assistant_message("an earlier answer", timestamp=1))
    context = {"messages": [*CONTEXT["messages"], earlier]}
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
        status, _, events = await post(http_server.url, protocol, body(protocol, context))
    failed = "the script has no turn 2: it has 1 turns"
    error = (
        {"type": "error", "reason": "error", "usage": ZERO_USAGE, "errorMessage": failed}
        if protocol == "pi-messages"
        else {"type": "error", "reason": "error", "errorMessage": failed, "usage": ZERO_USAGE}
    )
    assert status == 200
    assert events == [{"type": "start"}, error]
    assert list(events[1]) == list(error)  # pi's key order
    assert all(has_pis_keys(event, TYPES[protocol]) for event in events)


# --- events ---------------------------------------------------------------------------------------


def played(message: pp.AssistantMessage) -> list[pp.ModelEvent]:
    """The events of a message, each with its partial, as a server's stream has them."""
    accumulator = Accumulator()
    return [accumulator.apply(event) for event in events_of(message, delta_size=1000)]


def test_a_redacted_thinking_block_and_a_failed_calls_ids() -> None:
    message = pp.assistant_message(
        pp.thinking("opaque", signature="enc-1", redacted=True),
        stop_reason=pp.StopReason.ERROR,
        error_message="overloaded",
        usage=pp.Usage(input=3, output=1, total_tokens=4),
        timestamp=1,
    )
    message.response_id, message.response_model, message.provider_thinking_level = "resp_9", "m-2", "low"
    events = played(message)
    usage = {**ZERO_USAGE, "input": 3, "output": 1, "totalTokens": 4}
    assert [pi_messages_event(event) for event in events[3:]] == [
        {"type": "thinking_end", "contentIndex": 0, "content": "opaque", "contentSignature": "enc-1", "redacted": True},
        {
            "type": "error",
            "reason": "error",
            "usage": usage,
            "errorMessage": "overloaded",
            "responseId": "resp_9",
            "responseModel": "m-2",
            "providerThinkingLevel": "low",
        },
    ]
    assert all(has_pis_keys(pi_messages_event(event), PI_MESSAGES_TYPES) for event in events)
    assert all(has_pis_keys(proxy_event(event), PROXY_TYPES) for event in events)
    assert [proxy_event(event) for event in events[3:]] == [
        {"type": "thinking_end", "contentIndex": 0, "contentSignature": "enc-1"},
        {
            "type": "error",
            "reason": "error",
            "errorMessage": "overloaded",
            "usage": usage,
            "providerThinkingLevel": "low",
        },
    ]


def test_an_ended_block_without_its_partial_cannot_be_written_for_pi_messages() -> None:
    event = pp.ModelEvent(text_end=pp.TextEndEvent(content_index=0))
    assert proxy_event(event) == {"type": "text_end", "contentIndex": 0}
    with pytest.raises(ValueError, match="needs its partial"):
        pi_messages_event(event)


@pytest.mark.parametrize("protocol", [PiMessagesSse(), ProxySse()], ids=PROTOCOLS)
@pytest.mark.parametrize("kind", ["text_delta", "thinking_delta", "toolcall_delta"])
@pytest.mark.parametrize("usage", [None, pp.Usage(output=2, total_tokens=2)])
def test_a_delta_is_written_directly_as_its_event_converts(
    protocol: PiMessagesSse | ProxySse, kind: str, usage: pp.Usage | None
) -> None:
    bodies: dict[str, Any] = {
        "text_delta": pp.TextDeltaEvent,
        "thinking_delta": pp.ThinkingDeltaEvent,
        "toolcall_delta": pp.ToolCallDeltaEvent,
    }
    delta: dict[str, Any] = {kind: bodies[kind](content_index=3, delta='说 "hi"\n')}
    event = pp.ModelEvent(**delta, usage=usage)
    convert = pi_messages_event if isinstance(protocol, PiMessagesSse) else proxy_event
    assert protocol.write(event) == sse_line(convert(event))
    assert convert(event) == {"type": kind, "contentIndex": 3, "delta": '说 "hi"\n'}


# --- options --------------------------------------------------------------------------------------


class ContextModel(ScriptedModel):
    """The README model, keeping the context and options of every call."""

    def __init__(self) -> None:
        super().__init__(ScriptedModel.readme().turns)
        self.contexts: list[pp.AgentContext] = []
        self.options: list[pp.GenerationOptions | None] = []

    def stream(
        self, context: pp.AgentContext, options: pp.GenerationOptions | None = None
    ) -> AssistantMessageEventStream:
        self.contexts.append(context)
        self.options.append(options)
        return super().stream(context, options)


SENT_OPTIONS = {
    # What pi-messages sends (pi-ai's api/pi-messages.js).
    "pi-messages": {
        "temperature": 0.5,
        "maxTokens": 100,
        "reasoning": "max",
        "cacheRetention": "long",
        "sessionId": "session-1",
        "toolChoice": {"type": "function", "function": {"name": "read"}},
    },
    # What streamProxy sends (pi-agent-core's proxy.js).
    "proxy": {
        "temperature": 1,
        "samplingParams": {"top_p": 0.9, "top_k": 40},
        "maxTokens": 2048,
        "reasoning": "xhigh",
        "cacheRetention": "none",
        "sessionId": "session-2",
        "disableContinuation": True,
        "headers": {"x-trace": "t-1"},
        "metadata": {"user_id": "u-1"},
        "transport": "websocket-cached",
        "thinkingBudgets": {"low": 1024, "high": 8192},
        "maxRetryDelayMs": 0,
    },
}
TAKEN_OPTIONS = {
    "pi-messages": pp.GenerationOptions(
        temperature=0.5,
        max_tokens=100,
        reasoning=pp.ThinkingLevel.MAX,
        cache_retention=pp.CacheRetention.LONG,
        session_id="session-1",
        tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read"),
    ),
    "proxy": pp.GenerationOptions(
        temperature=1.0,
        sampling_params_json='{"top_p":0.9,"top_k":40}',
        max_tokens=2048,
        reasoning=pp.ThinkingLevel.XHIGH,
        cache_retention=pp.CacheRetention.NONE,
        session_id="session-2",
        disable_continuation=True,
        headers={"x-trace": "t-1"},
        metadata_json='{"user_id":"u-1"}',
        transport=Transport.WEBSOCKET_CACHED,
        thinking_budgets=pp.ThinkingBudgets(low=1024, high=8192),
        max_retry_delay_ms=0,
    ),
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_model_gets_the_options_the_client_sent(protocol: str) -> None:
    model = ContextModel()
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
        status, _, events = await post(http_server.url, protocol, body(protocol, options=SENT_OPTIONS[protocol]))
    assert (status, events[-1]["type"]) == (200, "done")
    assert model.options == [TAKEN_OPTIONS[protocol]]


@pytest.mark.parametrize(
    ("sent", "taken"),
    [
        ({}, pp.GenerationOptions()),
        ({"toolChoice": "auto"}, pp.GenerationOptions(tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.AUTO))),
        ({"toolChoice": "none"}, pp.GenerationOptions(tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.NONE))),
        (
            {"toolChoice": "required"},
            pp.GenerationOptions(tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.REQUIRED)),
        ),
        ({"reasoning": "minimal"}, pp.GenerationOptions(reasoning=pp.ThinkingLevel.MINIMAL)),
        ({"cacheRetention": "short"}, pp.GenerationOptions(cache_retention=pp.CacheRetention.SHORT)),
        ({"transport": "sse"}, pp.GenerationOptions(transport=Transport.SSE)),
        ({"timeoutMs": 30000, "maxRetries": 0}, pp.GenerationOptions(timeout_ms=30000, max_retries=0)),
    ],
)
def test_pis_option_values(sent: dict[str, Any], taken: pp.GenerationOptions) -> None:
    assert options_from_pi(sent) == taken
    assert options_to_pi(taken) == sent  # and written back as pi writes them


# --- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_bearer_token_is_required(url: str, protocol: str) -> None:
    without = {"content-type": "application/json"}
    for headers in (without, {**without, "authorization": "Bearer wrong"}, {**without, "authorization": TOKEN}):
        status, reply_headers, error_body = await post(url, protocol, body(protocol), headers=headers)
        assert (status, reply_headers["www-authenticate"]) == (401, "Bearer")
        assert error_of(protocol, error_body) == (
            "missing or invalid bearer token",
            "unauthenticated" if protocol == "pi-messages" else None,
        )
    status, _, events = await post(
        url, protocol, body(protocol), headers={**without, "authorization": f"bearer {TOKEN}"}
    )
    assert (status, events[-1]["type"]) == (200, "done")


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_unknown_model_is_404(url: str, protocol: str) -> None:
    status, _, error_body = await post(url, protocol, body(protocol, model_id="gpt-9", provider="openai"))
    named = "'gpt-9'" if protocol == "pi-messages" else "openai/gpt-9"
    assert status == 404
    assert error_of(protocol, error_body) == (
        f"model {named} {NOT_SERVED}",
        "not_found" if protocol == "pi-messages" else None,
    )


async def test_pi_messages_names_the_provider_in_the_query(url: str) -> None:
    status, _, events = await post(url, "pi-messages", body("pi-messages"), query="?provider=scripted&debug=1")
    assert (status, events[-1]["type"]) == (200, "done")
    status, _, error_body = await post(url, "pi-messages", body("pi-messages"), query="?provider=openai")
    assert status == 404
    assert error_of("pi-messages", error_body) == (f"model openai/scripted-v1 {NOT_SERVED}", "not_found")


OPTIONS_REFUSED = [
    ({"maxTokens": "100"}, 'options.maxTokens: expected a 64-bit integer, got "100"'),
    ({"maxTokens": 1.5}, "options.maxTokens: expected a 64-bit integer, got 1.5"),
    ({"temperature": True}, "options.temperature: expected a number, got true"),
    ({"temperature": None}, "options.temperature: expected a number, got null"),
    (
        {"reasoning": "off"},
        "options.reasoning: expected one of 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', got \"off\"",
    ),
    ({"cacheRetention": "forever"}, "options.cacheRetention: expected one of 'none', 'short', 'long', got \"forever\""),
    (
        {"toolChoice": {"type": "function", "function": {"name": 5}}},
        "options.toolChoice.function.name: expected a string",
    ),
    ({"toolChoice": "any"}, "options.toolChoice: expected one of 'auto', 'none', 'required', or {type: 'function'"),
    ({"sessionId": 7}, "options.sessionId: expected a string, got 7"),
    ({"disableContinuation": "yes"}, 'options.disableContinuation: expected a boolean, got "yes"'),
    ({"metadata": [1]}, "options.metadata: expected an object, got [1]"),
    ({"headers": {"x-a": None}}, 'options.headers["x-a"]: expected a string: a null'),
    ({"headers": {"x-a": 1}}, 'options.headers["x-a"]: expected a string, got 1'),
    ({"thinkingBudgets": {"max": 10}}, "options.thinkingBudgets.max: not a level with a budget"),
    ({"thinkingBudgets": {"low": -1}}, "options.thinkingBudgets.low: must be greater than or equal to 0"),
    ({"topP": 0.9}, "options.topP: not an option this server takes: expected temperature, maxTokens, reasoning"),
    ({"deferred": True}, "options.deferred: not an option this server takes"),
    ({"maxTokens": 0}, "options.maxTokens: must be greater than or equal to 1 [int64.gte]"),
    ({"temperature": 3}, "options.temperature: must be"),
    ({"sessionId": ""}, "options.sessionId: "),
    ({"headers": {"bad header": "x"}}, 'options.headers["bad header"]: must be a valid HTTP header name'),
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(("options", "words"), OPTIONS_REFUSED)
async def test_a_wrong_option_is_400_naming_its_path(url: str, protocol: str, options: Any, words: str) -> None:
    status, _, error_body = await post(url, protocol, body(protocol, options=options))
    message, code = error_of(protocol, error_body)
    assert status == 400
    assert code == ("invalid_argument" if protocol == "pi-messages" else None)
    assert message.startswith(words), message


TOOL_RESULT = {"role": "toolResult", "toolCallId": "", "toolName": "read", "content": [], "timestamp": 1}
GONE = object()  # a key the body leaves out
# Bodies, or changes to the client's body, that are refused, and the start of the message saying why.
BODIES_REFUSED: list[tuple[str, bytes | dict[str, Any], str]] = [
    ("both", b"{not json", "the body is not JSON"),
    ("both", b"[1]", "the body must be a JSON object: {model, context, options}"),
    ("both", b'{"model": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "the body holds JSON nested too deeply"),
    ("both", {"model": GONE}, "model: required"),
    ("both", {"context": GONE}, "context: required"),
    ("both", {"stream": True}, "stream: not a key of the request: expected model, context, options"),
    ("both", {"options": None}, "options: expected an object, got null"),
    ("pi-messages", {"model": 5}, "model: expected a string, the model's id"),
    ("proxy", {"model": "scripted-v1"}, "model: expected an object, a pi Model"),
    ("proxy", {"model": {"id": "scripted-v1"}}, "model.provider: expected a string"),
    ("both", {"context": {"messages": [{"role": "user", "content": 5}]}}, "context.messages[0].content"),
    ("both", {"context": {"messages": "hi"}}, "context.messages: expected a list"),
    ("both", {"context": {"messages": [TOOL_RESULT]}}, "context.messages[0].toolCallId: "),  # a broken rule
]
BODY_CASES = [
    (protocol, change, words)
    for only, change, words in BODIES_REFUSED
    for protocol in PROTOCOLS
    if only in ("both", protocol)
]


def changed(protocol: str, change: bytes | dict[str, Any]) -> bytes | dict[str, Any]:
    """The client's body with `change` made (or the bytes given instead)."""
    if isinstance(change, bytes):
        return change
    out = body(protocol)
    for key, value in change.items():
        if value is GONE:
            del out[key]
        else:
            out[key] = value
    return out


@pytest.mark.parametrize(("protocol", "change", "words"), BODY_CASES)
async def test_a_bad_body_is_400_naming_its_path(
    url: str, protocol: str, change: bytes | dict[str, Any], words: str
) -> None:
    status, _, error_body = await post(url, protocol, changed(protocol, change))
    message, _ = error_of(protocol, error_body)
    assert status == 400
    assert message.startswith(words), message


@pytest.mark.parametrize(
    ("protocol", "query", "words"),
    [
        ("pi-messages", "?providr=x", "unknown query parameter 'providr': expected provider, debug"),
        ("proxy", "?provider=scripted", "unknown query parameter 'provider': this endpoint takes none"),
    ],
)
async def test_a_query_the_endpoint_would_not_honour_is_400(url: str, protocol: str, query: str, words: str) -> None:
    status, _, error_body = await post(url, protocol, body(protocol), query=query)
    assert (status, error_of(protocol, error_body)[0]) == (400, words)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
async def test_only_json_is_taken(protocol: str, content_type: str | None) -> None:
    model = RecordingModel(pp.assistant_message("hi", timestamp=1))
    headers = {} if content_type is None else {"content-type": content_type}
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
        status, _, error_body = await post(http_server.url, protocol, body(protocol, model_id="recording"), headers)
    shown = "none" if content_type is None else repr(content_type)
    assert status == 415
    assert error_of(protocol, error_body)[0] == f"the body must be application/json, not {shown}"
    assert model.streams == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_another_method_is_405(url: str, protocol: str) -> None:
    reply = await pyqwest.Client().get(url + PATHS[protocol], headers=HEADERS)
    assert (reply.status, reply.headers["allow"]) == (405, "POST")
    assert error_of(protocol, json.loads(reply.content))[0].startswith("POST {model, context, options} as JSON")


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_requests_above_the_size_and_count_limits_are_413(protocol: str) -> None:
    limits = ServerLimits(max_request_bytes=4096, max_messages=3)
    big = {"messages": [{"role": "user", "content": "x" * 5000, "timestamp": 1}]}
    many = {"messages": CONTEXT["messages"] * 4}
    async with ModelServer(ScriptedModel.readme(), limits=limits) as grpc_server, HttpServer(grpc_server) as web:
        big_status, _, big_error = await post(web.url, protocol, body(protocol, big))
        many_status, _, many_error = await post(web.url, protocol, body(protocol, many))
    assert (big_status, error_of(protocol, big_error)[0]) == (
        413,
        "the request has more than this server's limit of 4096 bytes",
    )
    assert (many_status, error_of(protocol, many_error)[0]) == (
        413,
        "the context has 4 messages, above this server's limit of 3",
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_stream_past_the_slots_is_429(protocol: str) -> None:
    limits = ServerLimits(max_concurrent_streams=1)
    model = RecordingModel(README_TURN, hold_after=1)  # in flight until cancelled
    async with (
        ModelServer(model, limits=limits) as grpc_server,
        HttpServer(grpc_server) as http_server,
        pp.ModelClient(grpc_server.target) as client,
    ):
        holding = client.stream(pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi", timestamp=1))]))
        await anext(holding)
        status, _, error_body = await post(
            http_server.url, protocol, body(protocol, model_id="recording", provider="tests")
        )
        holding.cancel()
        async for _ in holding:
            pass
    assert (status, error_of(protocol, error_body)[0]) == (
        429,
        "too many concurrent streams: this server serves 1 at once",
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_client_that_leaves_cancels_the_model(protocol: str) -> None:
    model = RecordingModel(pp.assistant_message("x" * 1000, timestamp=1), hold_after=1)  # never ends by itself
    request = json.dumps(body(protocol, model_id="recording", provider="tests")).encode()
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
        async with pyqwest.Client().stream(
            "POST", http_server.url + PATHS[protocol], headers=HEADERS, content=request
        ) as response:
            assert (await anext(aiter(read_sse(response.content)))) == {"type": "start"}
        await asyncio.wait(model.producers)
        assert model.producers[0].cancelled()
        assert (await model.streams[0].result()).stop_reason == pp.StopReason.ABORTED
        await eventually(lambda: http_server.active_streams == 0, "the HTTP call ends")
        await eventually(lambda: grpc_server.open_streams == 0, "the HTTP call gives its slot back")


PAGE = "https://app.example"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_pages_are_gated_by_origin_here_too(protocol: str) -> None:
    model = RecordingModel(pp.assistant_message("hi", timestamp=1))
    preflight = {
        "origin": PAGE,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type",
    }
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server, cors_origins=[PAGE]) as web:
        asked = await pyqwest.Client().options(web.url + PATHS[protocol], headers=preflight)
        refused = await pyqwest.Client().post(
            web.url + PATHS[protocol],
            headers={**HEADERS, "origin": "https://elsewhere.example"},
            content=json.dumps(body(protocol, model_id="recording", provider="tests")).encode(),
        )
    assert asked.status == 204
    assert asked.headers["access-control-allow-origin"] == PAGE
    assert asked.headers["access-control-allow-headers"] == "authorization,content-type"
    assert refused.status == 403
    assert model.streams == []
