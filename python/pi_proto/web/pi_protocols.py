"""pi's own HTTP protocols of a model call, served by SseEndpoint beside /v1/stream:

- **pi-messages**, `POST /messages`: what pi-ai's `pi-messages` API sends to its `baseUrl`. The
  body is `{model, context, options}` with the model's id (its provider in `?provider=`, or the
  only one serving the id); the answer is one `data:` line per PiMessagesEvent; an HTTP error's
  body is `{"error": {"message": ..., "code": ...}}`, which pi shows as the call's error.
- **streamProxy** of pi-agent-core, `POST /api/stream`: the body is `{model, context, options}`
  with a whole pi Model, whose `id` and `provider` name the model; the answer is one `data:` line
  per ProxyAssistantMessageEvent; an HTTP error's body is `{"error": "<message>"}`.

`context` is pi's Context or TranscriptContext in pi-JSON, `options` pi's stream options
(pi_options.py). Both protocols send events without `partial`, which their clients rebuild:
blocks are named by `contentIndex`, `toolcall_start` carries the call's `id` and `toolName`, an
ended block its signature as `contentSignature` (and for pi-messages its whole text as
`content`, which the stream's own partial holds), the terminal event the final `usage`. A broken
rule is named by the path the client wrote: `options.maxTokens`, `context.messages[0].toolCallId`.
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from .._gen.types.pi.ai.v1 import ModelEvent
from ..grpc.requests import Refused, ServerLimits
from ..ir.events import event_kind
from ..ir.messages import dump_json
from ..transcripts.pi_json import STOP_REASON_NAMES, PiJsonError, assistant_to_pi, context_path, pi_writer
from ..transcripts.pi_options import options_from_pi
from .sse import (
    Decoded,
    JsonObject,
    context_request,
    delta_data,
    ended_content,
    json_object,
    query_parameters,
    sse_line,
    tool_call_to_pi,
)

MESSAGES_PATH = "/messages"
PROXY_PATH = "/api/stream"
BODY_KEYS = ("model", "context", "options")
# What pi's Usage always has (_full_usage).
ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
ZERO_USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
# The keys of each terminal event after `type` and `reason`, in the order of pi's types, taken
# from the final message in pi-JSON; the optional ones only when the message has them.
MESSAGES_TERMINAL_KEYS = {
    "done": ("usage", "responseId", "responseModel", "providerThinkingLevel"),
    "error": ("usage", "errorMessage", "responseId", "responseModel", "providerThinkingLevel"),
}
PROXY_TERMINAL_KEYS = {
    "done": ("usage", "providerThinkingLevel"),
    "error": ("errorMessage", "usage", "providerThinkingLevel"),
}


# --- events ---------------------------------------------------------------------------------------


@pi_writer
def pi_messages_event(event: ModelEvent) -> JsonObject:
    """An event as pi-ai's PiMessagesEvent. A text_end or thinking_end needs the event's `partial`
    (an AssistantMessageEventStream's events carry it), which holds the block's whole text."""
    kind, body = event_kind(event)
    if kind in MESSAGES_TERMINAL_KEYS:
        return _terminal(kind, body, MESSAGES_TERMINAL_KEYS[kind])
    out = _block_event(kind, body)
    if kind in ("text_end", "thinking_end"):
        content = ended_content(event)
        if content is None:
            raise ValueError(f"a {kind} event needs its partial, which holds the block's text")
        out["content"] = content
        _put_signature(out, kind, body)
        if kind == "thinking_end" and body.redacted is not None:
            out["redacted"] = body.redacted
    return out


@pi_writer
def proxy_event(event: ModelEvent) -> JsonObject:
    """An event as pi-agent-core's ProxyAssistantMessageEvent."""
    kind, body = event_kind(event)
    if kind in PROXY_TERMINAL_KEYS:
        return _terminal(kind, body, PROXY_TERMINAL_KEYS[kind])
    out = _block_event(kind, body)
    if kind in ("text_end", "thinking_end"):
        _put_signature(out, kind, body)
    return out


def _block_event(kind: str, body: Any) -> JsonObject:
    """`start` or a block event as both protocols write it; an end event's signature and content
    are each protocol's own."""
    if kind == "start":
        return {"type": "start"}
    if not kind:
        raise ValueError("the event has no kind set")
    out: JsonObject = {"type": kind, "contentIndex": body.content_index}
    if kind.endswith("_delta"):
        out["delta"] = body.delta
    elif kind == "toolcall_start":
        out["id"], out["toolName"] = body.id, body.name
    elif kind == "toolcall_end":
        out["toolCall"] = tool_call_to_pi(body.tool_call)
    return out


def _put_signature(out: JsonObject, kind: str, body: Any) -> None:
    signature = body.text_signature if kind == "text_end" else body.thinking_signature
    if signature is not None:
        out["contentSignature"] = signature


def _terminal(kind: str, body: Any, keys: tuple[str, ...]) -> JsonObject:
    """A done or error event: its reason, then `keys` of the final message."""
    message = assistant_to_pi(body.message)
    out: JsonObject = {"type": kind, "reason": STOP_REASON_NAMES[body.reason]}
    for key in keys:
        if key == "usage":
            out["usage"] = _full_usage(message.get("usage", {}))
        elif key in message:
            out[key] = message[key]
    return out


def _full_usage(usage: JsonObject) -> JsonObject:
    """A usage in pi-JSON as pi's Usage type has it, every count and cost there: pi-JSON leaves out
    what the message it was read from lacked (an older pi's, a script's), and pi's clients add
    these up. What is missing counts zero."""
    if ZERO_USAGE.keys() <= usage.keys() and ZERO_COST.keys() <= usage.get("cost", {}).keys():
        return usage
    return {**ZERO_USAGE, **usage, "cost": {**ZERO_COST, **usage.get("cost", {})}}


def _sse_lines(event: ModelEvent, convert: Callable[[ModelEvent], JsonObject]) -> bytes:
    """An event as SSE lines: a delta, which both protocols write as /v1/stream writes one without
    usage, by its direct path; any other event converted by `convert`."""
    return delta_data(event) or sse_line(convert(event))


# --- requests -------------------------------------------------------------------------------------


def messages_request(body: bytes, query: str, limits: ServerLimits) -> Decoded:
    """The StreamRequest of a pi-messages body: `model` is the id, the provider `?provider=` or the
    only one serving it (pi's `?debug=1` asks for nothing this server adds)."""
    provider = query_parameters(query, ("provider", "debug")).get("provider", "")
    value = _body(body)
    model = value["model"]
    if type(model) is not str:
        raise _invalid(PiJsonError("model", "expected a string, the model's id"))
    return _decoded(value, limits, model, provider)


def proxy_request(body: bytes, query: str, limits: ServerLimits) -> Decoded:
    """The StreamRequest of a streamProxy body: `model` is a pi Model, named by its id and provider."""
    query_parameters(query, ())
    value = _body(body)
    model = value["model"]
    if type(model) is not dict:
        raise _invalid(PiJsonError("model", "expected an object, a pi Model"))
    for key in ("id", "provider"):
        if type(model.get(key)) is not str:
            raise _invalid(PiJsonError(f"model.{key}", "expected a string"))
    return _decoded(value, limits, model["id"], model["provider"])


def _body(body: bytes) -> JsonObject:
    value = json_object(body, "{model, context, options}")
    for key in value:
        if key not in BODY_KEYS:
            raise _invalid(PiJsonError(key, f"not a key of the request: expected {', '.join(BODY_KEYS)}"))
    for key in ("model", "context"):
        if key not in value:
            raise _invalid(PiJsonError(key, "required"))
    return value


def _decoded(value: JsonObject, limits: ServerLimits, model: str, provider: str) -> Decoded:
    try:
        options = options_from_pi(value.get("options", {}))
    except PiJsonError as error:
        raise _invalid(error) from None
    data = context_request(value["context"], limits, model=model, provider=provider, options=options)
    return Decoded(data, pi_request_path)


def _invalid(error: PiJsonError) -> Refused:
    return Refused("INVALID_ARGUMENT", str(error))


def pi_request_path(field_path: str) -> str:
    """Where a StreamRequest's field path points in a pi request's body: in the context, as its
    pi-JSON names it (`context.messages[0].toolCallId`); in the options, by pi's option names
    (`options.max_tokens` is `options.maxTokens`)."""
    head = field_path.partition(".")[0]
    if head == "context":
        inner = context_path(field_path)
        return f"context.{inner}" if inner else "context"
    if head == "options":
        return ".".join(_camel_case(step) for step in field_path.split("."))
    return field_path


def _camel_case(step: str) -> str:
    """One step of a field path by pi's name: `max_tokens` is maxTokens, `metadata_json` metadata."""
    name, bracket, rest = step.partition("[")
    first, *words = name.removesuffix("_json").split("_")
    return first + "".join(word.title() for word in words) + bracket + rest


# --- the protocols --------------------------------------------------------------------------------


class PiMessagesSse:
    """`POST /messages`: pi-ai's pi-messages API."""

    usage = "POST {model, context, options} as JSON (pi-messages)"

    def decode(self, body: bytes, query: str, limits: ServerLimits) -> Decoded:
        return messages_request(body, query, limits)

    def write(self, event: ModelEvent) -> bytes:
        return _sse_lines(event, pi_messages_event)

    def error_body(self, status: int, code: str, message: str) -> bytes:
        """pi-messages' error JSON, which pi shows as `<status> <text>: <message> (<code>)`."""
        return dump_json({"error": {"message": message, "code": code.lower()}}).encode()


class ProxySse:
    """`POST /api/stream`: pi-agent-core's streamProxy."""

    usage = "POST {model, context, options} as JSON (pi-agent-core's streamProxy)"

    def decode(self, body: bytes, query: str, limits: ServerLimits) -> Decoded:
        return proxy_request(body, query, limits)

    def write(self, event: ModelEvent) -> bytes:
        return _sse_lines(event, proxy_event)

    def error_body(self, status: int, code: str, message: str) -> bytes:
        """streamProxy's error JSON, which pi shows as `Proxy error: <error>`: the status goes into
        the text, since pi shows nothing else of the response."""
        return dump_json({"error": f"{status} {HTTPStatus(status).phrase}: {message}"}).encode()
