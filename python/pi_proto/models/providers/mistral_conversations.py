"""mistral-conversations: Mistral's chat completion API (POST /v1/chat/completions, streamed), through
the official `mistralai` SDK.

The endpoint and the mapping are pi-ai 1.6's (dist/api/mistral-conversations.js), whose API of this
name calls the chat completion endpoint, not /v1/conversations. The stream: string content and
`text` chunks are text; `thinking` chunks (their text parts joined) are thinking, without signature;
an empty delta opens no block. A tool call starts with its id and name and its arguments follow in
fragments, each naming its call by `index` (a fragment's id is "null"; a call without an id gets
one from its index); text and thinking end when a tool call starts, and the tool calls end with
the stream. Usage comes with the last chunk: prompt tokens less the cached ones are input,
completion tokens are output, cached tokens (prompt_tokens_details.cached_tokens, or
num_cached_tokens) are cache reads. Finish reasons stop → STOP, length and model_length → LENGTH,
tool_calls → TOOL_USE, anything else (error, a server failure) → ERROR; a stream that ends
without one is an error. The message keeps the first chunk id and the finish reason as written.

The request: the transcript as pi's transformMessages leaves it, tool call ids of other models
made Mistral's nine letters and digits; the system prompt first (or, with
compat.supportsMidConvoSystemMessages, each system message where it stands); user and tool
images as data URLs where the model takes images; a turn's own reasoning replayed as a thinking
chunk. Tools go with `strict: false`, or, with compat.supportsStrictMode, strict with pi's strict
schema for a tool whose constrainedSampling asks for a JSON schema. A reasoning level, clamped to
the model's thinkingLevelMap, is sent as that map's `reasoning_effort` (a level the map leaves out
is "high"; no level is the map's "off"); a reasoning model without a map gets
`prompt_mode: "reasoning"` instead. The session id, unless caching is off, is `prompt_cache_key`
and the `x-affinity` header. No metadata and no sampling parameters, as in pi; the call's
provider options go on top, each a field of the SDK's request.
"""

from __future__ import annotations

import base64
import inspect
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import httpx2
from mistralai.client import Mistral, errors, models
from mistralai.client.chat import Chat

from ..._gen.types.pi.ai.v1 import (
    AgentMessage,
    AssistantContent,
    InputKind,
    StopReason,
    Strictness,
    SystemMessage,
    Tool,
    ToolChoiceMode,
    ToolResultMessage,
    UserMessage,
)
from ...ir.messages import dump_json, tool_call_arguments
from .call import Call, ProviderError, RetryLater, level_map, quote, retry_after
from .catalog import ModelConfig
from .http import describing, http_client
from .system import content_text, js_key_order, normalize, render_prompt
from .transform import transform_messages

RETRYABLE = (429, 500, 502, 503, 504)
STOP_REASONS = {
    "stop": StopReason.STOP,
    "length": StopReason.LENGTH,
    "model_length": StopReason.LENGTH,
    "tool_calls": StopReason.TOOL_USE,
}
TOOL_CHOICES = {ToolChoiceMode.AUTO: "auto", ToolChoiceMode.NONE: "none", ToolChoiceMode.REQUIRED: "any"}
TOOL_CALL_ID_LENGTH = 9  # Mistral's tool call ids: nine letters and digits
_NOT_ALPHANUMERIC = re.compile(r"[^a-zA-Z0-9]")
# pi's words for what a tool result lacks (buildToolResultText).
NO_OUTPUT = "(no tool output)"
SEE_IMAGE = "(see attached image)"
IMAGE_OMITTED = "(image omitted: model does not support images)"
TOOL_IMAGE_OMITTED = "[tool image omitted: model does not support images]"
ERROR_PREFIX = "[tool error] "
# Where a usage may say how many prompt tokens were cached, in the order pi looks.
CACHED_TOKENS = (
    ("promptTokensDetails", "cachedTokens"),
    ("prompt_tokens_details", "cached_tokens"),
    ("promptTokenDetails", "cachedTokens"),
    ("prompt_token_details", "cached_tokens"),
    (None, "numCachedTokens"),
    (None, "num_cached_tokens"),
)
# The request fields the SDK takes, which are the ones a provider option may set.
REQUEST_FIELDS = frozenset(inspect.signature(Chat.stream_async).parameters) - {
    "self",
    "retries",
    "server_url",
    "timeout_ms",
    "http_headers",
}
# The SDK's own spelling of the headers it sets, so a header of the catalog or the call replaces
# its value instead of going out a second time under another case.
SDK_HEADERS = {name.lower(): name for name in ("Authorization", "Accept", "content-type")}


async def stream(call: Call) -> None:
    """Run one chat completion call and tell `call` what it streams."""
    if not call.model.api_key:  # the SDK would fall back to MISTRAL_API_KEY of the server's environment
        raise ProviderError(f"model {call.model.info.id!r} has no API key (apiKey in models.json)")
    request = body(call)
    http = http_client(call)
    # No retry_config: run() retries, within max_retry_delay_ms.
    client = Mistral(api_key=call.model.api_key, server_url=call.model.info.base_url, async_client=http)
    try:
        try:
            events = await client.chat.stream_async(**request, http_headers=headers(call))
        except errors.MistralError as error:
            if error.status_code in RETRYABLE:
                raise RetryLater(retry_after(error.headers), describe(error, call.model)) from None
            raise
        await call.start()
        reader = _Reader(call)
        async with events:
            async for event in events:
                await reader.apply(event.data)
        if not reader.chunks:
            raise call.no_events()
        await reader.finish()
    finally:
        await http.aclose()  # also when cancelled: the provider sees the connection close


class _Reader:
    """One stream's open blocks: the text or thinking block, and the tool calls by their key (the
    provider's index, else their id), which stay open until the stream ends, as in pi."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.block: tuple[str, int] | None = None  # kind, content index
        self.tool_calls: dict[int | str, int] = {}  # key → content index
        self.chunks = 0
        self.finished = False  # a finish reason came

    async def apply(self, chunk: models.CompletionChunk) -> None:
        call = self.call
        self.chunks += 1
        if chunk.id and not call.events.partial.response_id:
            call.set_response(response_id=chunk.id)
        if chunk.usage is not None:
            _usage(call, chunk.usage)
        if not chunk.choices:
            return
        choice = chunk.choices[0]
        if choice.finish_reason:
            self._stop(choice.finish_reason)
        content = choice.delta.content
        if isinstance(content, str):
            await self._append("text", content)
        elif isinstance(content, list):
            for item in content:
                if isinstance(item, models.ThinkChunk):
                    parts = (getattr(part, "text", None) for part in item.thinking)
                    await self._append("thinking", "".join(part for part in parts if isinstance(part, str)))
                elif isinstance(item, models.TextChunk):
                    await self._append("text", item.text)
        for tool_call in choice.delta.tool_calls or []:
            await self._tool_call(tool_call)

    async def finish(self) -> None:
        """The stream ended: end what is still open, then check it said why it stopped."""
        await self._close_block()
        for index in self.tool_calls.values():
            await self.call.close_tool_call(index)
        self.tool_calls = {}
        if not self.finished:
            raise ProviderError(f"{self.call.provider} ended its stream without a finish reason")

    def _stop(self, reason: str) -> None:
        call = self.call
        self.finished = True
        call.set_response(raw_stop_reason=reason)
        call.stop_reason = STOP_REASONS.get(reason, StopReason.ERROR)
        if call.stop_reason == StopReason.ERROR:
            server = " (a server error)" if reason == "error" else ""  # Mistral's word for a failure of its own
            call.refusal = f"the provider stopped with finish_reason {reason!r}{server}"

    async def _append(self, kind: str, delta: str) -> None:
        if not delta:  # some models send empty deltas around thinking and tool calls: no block for them
            return
        call = self.call
        if self.block is None or self.block[0] != kind:
            await self._close_block()
            self.block = (kind, await (call.open_text() if kind == "text" else call.open_thinking()))
        index = self.block[1]
        await (call.text(index, delta) if kind == "text" else call.thinking(index, delta))

    async def _tool_call(self, delta: models.ToolCall) -> None:
        await self._close_block()
        given = delta.index if isinstance(delta.index, int) else None
        call_id = delta.id if delta.id and delta.id != "null" else derive_id(f"toolcall:{given or 0}")
        key: int | str = call_id if given is None else given
        if (index := self.tool_calls.get(key)) is None:
            index = self.tool_calls[key] = await self.call.open_tool_call(call_id, delta.function.name)
        arguments = delta.function.arguments
        await self.call.tool_arguments(index, arguments if isinstance(arguments, str) else dump_json(arguments or {}))

    async def _close_block(self) -> None:
        if self.block is not None:
            kind, index = self.block
            self.block = None
            await (self.call.close_text(index) if kind == "text" else self.call.close_thinking(index))


def _usage(call: Call, usage: models.UsageInfo) -> None:
    """The last chunk's counts: cached prompt tokens are cache reads, the rest of the prompt input."""
    prompt = usage.prompt_tokens or 0
    cached = cached_tokens(usage.additional_properties or {}, prompt)
    call.set_usage(input=max(0, prompt - cached), output=usage.completion_tokens or 0, cache_read=cached)


def cached_tokens(extra: dict[str, Any], prompt: int) -> int:
    """The cached prompt tokens a usage's other fields give, as pi reads them: the first field of
    CACHED_TOKENS that is there, 0 unless it is a finite number; at most the prompt, at least 0."""
    value: Any = None
    for outer, name in CACHED_TOKENS:
        source = extra.get(outer) if outer is not None else extra
        value = source.get(name) if isinstance(source, dict) else None
        if value is not None:
            break
    number = value if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) else 0
    return int(min(prompt, max(0, number)))


# --- the request ------------------------------------------------------------------------------------


def body(call: Call) -> dict[str, Any]:
    """The chat completion request for a call, as pi's buildChatPayload makes it (its fields under
    their wire names, which are the SDK's); the call's provider options go on top."""
    options = call.options
    out: dict[str, Any] = {"model": call.model.info.id, "stream": True, "messages": _messages(call)}
    if call.resolved.tools:
        strict_mode = call.switch("supportsStrictMode", False)
        out["tools"] = [_tool(tool, strict_mode) for tool in call.resolved.tools]
    if options.temperature is not None:
        out["temperature"] = options.temperature
    if max_tokens := call.max_tokens():  # a model with a maxTokens of 0 is asked for none
        out["max_tokens"] = max_tokens
    if (choice := options.tool_choice) is not None:
        out["tool_choice"] = (
            {"type": "function", "function": {"name": choice.tool}}
            if choice.mode == ToolChoiceMode.TOOL
            else TOOL_CHOICES[choice.mode]
        )
    out.update(_reasoning(call))
    if session := call.cache_session_id():
        out["prompt_cache_key"] = session
    for key, value in call.provider_options().items():
        if key not in REQUEST_FIELDS:
            raise ProviderError(f"provider option {key!r} is not a field of Mistral's chat completion request")
        out[key] = value
    return out


def headers(call: Call) -> dict[str, str]:
    """The catalog's and the call's headers, then the session as `x-affinity` (pi's, so a session's
    calls reach the replica that caches its prompt) unless one of them names that header."""
    given = call.headers()
    out = {SDK_HEADERS.get(name.lower(), name): value for name, value in given.items()}
    session = call.cache_session_id()
    if session and not any(name.lower() == "x-affinity" for name in given):
        out["x-affinity"] = session
    return out


def _reasoning(call: Call) -> dict[str, Any]:
    """pi's streamSimple: a model with a thinkingLevelMap takes the clamped level as the map's
    `reasoning_effort` ("high" for a level the map leaves out) and no level as the map's "off"; a
    reasoning model without a map takes `prompt_mode: "reasoning"` for any level."""
    info = call.model.info
    if not info.reasoning:
        return {}
    level = call.thinking_level()
    efforts = level_map(info)
    if not efforts:
        return {"prompt_mode": "reasoning"} if level != "off" else {}
    if level == "off":
        effort = efforts.get("off")
    else:
        mapped = efforts.get(level)
        effort = "high" if mapped is None else mapped
    return {"reasoning_effort": effort} if effort else {}


def _tool(tool: Tool, strict_mode: bool) -> dict[str, Any]:
    parameters = json.loads(tool.parameters_json or "{}")
    strict = strict_sampling(tool, parameters, strict_mode)
    function: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    function["parameters"] = strict_schema(parameters) if strict else parameters
    function["strict"] = strict
    return {"type": "function", "function": function}


def strict_sampling(tool: Tool, parameters: Any, strict_mode: bool) -> bool:
    """pi's resolveJsonSchemaStrictSampling: whether the tool goes strict, which it does when it asks
    for a JSON schema, the model takes strict tools (compat.supportsStrictMode) and its schema fits
    the strict subset; a tool that requires it and cannot have it fails the call."""
    sampling = tool.constrained_sampling
    config = sampling.json_schema if sampling is not None else None
    if config is None:
        return False
    required = config.strict == Strictness.REQUIRE
    if not strict_mode:
        if required:
            raise ProviderError(
                f"Tool {tool.name!r} requires JSON-schema constrained sampling, but strict tools are unsupported"
            )
        return False
    try:
        strict_schema(parameters)
    except _NotStrict as error:
        if required:
            raise ProviderError(f"Tool {tool.name!r} requires JSON-schema constrained sampling, but {error}") from None
        return False
    return True


class _NotStrict(ValueError):
    """A schema outside the strict subset, and why."""


# Keywords the strict subset leaves out (pi's UNSUPPORTED_STRICT_SCHEMA_KEYS).
_UNSTRICT_KEYS = (
    *("$ref", "$defs", "definitions", "allOf", "oneOf", "patternProperties", "dependentSchemas"),
    *("dependencies", "unevaluatedProperties", "propertyNames", "contains", "prefixItems"),
    *("not", "if", "then", "else"),
)


def strict_schema(schema: Any) -> dict[str, Any]:
    """pi's makeStrictJsonSchema: a copy of a tool's schema in the strict subset (every property
    required, one not required before made nullable, no additional properties); raises _NotStrict
    for a schema outside it."""
    copied = json.loads(json.dumps(schema))
    if not isinstance(copied, dict):
        raise _NotStrict("root schema must have type object")
    _make_strict(copied)
    if copied.get("type") != "object":
        raise _NotStrict("root schema must have type object")
    return copied


def _make_strict(schema: Any) -> None:
    if not isinstance(schema, dict):
        raise _NotStrict("boolean schemas are unsupported")
    for key in _UNSTRICT_KEYS:
        if key in schema:
            raise _NotStrict(f"{key} schemas are unsupported")
    if "type" not in schema and "anyOf" not in schema and "enum" not in schema:
        raise _NotStrict("schemas without a type are unsupported")
    if "anyOf" in schema:
        variants = schema["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise _NotStrict("anyOf must contain at least one schema")
        for variant in variants:
            if _structured(variant):
                raise _NotStrict("object and array unions are unsupported")
            _make_strict(variant)
    if "items" in schema:
        if isinstance(schema["items"], list):
            raise _NotStrict("tuple schemas are unsupported")
        _make_strict(schema["items"])
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise _NotStrict("properties require type object")
    if not is_object:
        return
    if "additionalProperties" in schema and schema["additionalProperties"] is not False:
        raise _NotStrict("schema-valued or true additionalProperties is unsupported")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise _NotStrict("object properties must be a schema map")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        raise _NotStrict("object required must be a string array")
    if any(name not in properties for name in required):
        raise _NotStrict("required contains an unknown property")
    for name, value in list(properties.items()):
        _make_strict(value)
        if name not in required and not _allows_null(value):
            properties[name] = {"anyOf": [value, {"type": "null"}]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def _types(schema: dict[str, Any]) -> list[Any]:
    kind = schema.get("type")
    return [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []


def _structured(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    types = _types(schema)
    return "object" in types or "array" in types or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if "null" in _types(schema) or ("const" in schema and schema["const"] is None):
        return True
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        return True
    variants = schema.get("anyOf")
    return isinstance(variants, list) and any(_allows_null(variant) for variant in variants)


# --- the transcript ---------------------------------------------------------------------------------


def short_hash(text: str) -> str:
    """pi's shortHash: two 32-bit multiplicative hashes of the text's UTF-16 code units, in base 36."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = text.encode("utf-16-le", "surrogatepass")
    for offset in range(0, len(units), 2):
        unit = units[offset] | units[offset + 1] << 8
        h1 = _imul(h1 ^ unit, 2654435761)
        h2 = _imul(h2 ^ unit, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2) + _base36(h1)


def _imul(a: int, b: int) -> int:
    """JavaScript's Math.imul, on unsigned 32-bit patterns."""
    return (a * b) & 0xFFFFFFFF


def _base36(number: int) -> str:
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
        if number == 0:
            return digits


def derive_id(call_id: str, attempt: int = 0) -> str:
    """pi's deriveMistralToolCallId: the id's letters and digits when they are nine, else the first
    nine of the short hash of them (of the id, when it has none), salted with the attempt."""
    letters = _NOT_ALPHANUMERIC.sub("", call_id)
    if attempt == 0 and len(letters) == TOOL_CALL_ID_LENGTH:
        return letters
    seed = letters or call_id
    return _NOT_ALPHANUMERIC.sub("", short_hash(seed if attempt == 0 else f"{seed}:{attempt}"))[:TOOL_CALL_ID_LENGTH]


def tool_call_ids() -> Callable[[str], str]:
    """One call's rewrite of other models' tool call ids into Mistral's: the same id always gets the
    same new one, and two ids never share one (a clash takes the next attempt's)."""
    given: dict[str, str] = {}
    owners: dict[str, str] = {}

    def rewrite(call_id: str) -> str:
        if (known := given.get(call_id)) is not None:
            return known
        attempt = 0
        while (owners.get(candidate := derive_id(call_id, attempt), call_id)) != call_id:
            attempt += 1
        given[call_id], owners[candidate] = candidate, call_id
        return candidate

    return rewrite


def _messages(call: Call) -> list[dict[str, Any]]:
    """The messages of the request: the transcript as pi's transformMessages leaves it, after the
    system prompt, or with each system message in place where the model takes them mid-conversation
    (the first rendered whole, a later one as an update)."""
    info = call.model.info
    rename = tool_call_ids()
    images = InputKind.IMAGE in info.input
    out: list[dict[str, Any]] = []
    if call.switch("supportsMidConvoSystemMessages", False):
        transcript = in_place(normalize(call.context), lambda messages: transform_messages(messages, info, rename))
    else:
        if call.resolved.system_prompt:
            out.append({"role": "system", "content": call.resolved.system_prompt})
        transcript = transform_messages(call.resolved.messages, info, rename)
    for position, message in enumerate(transcript):
        if (system := message.system) is not None:
            if text := render_prompt([system]) if position == 0 else system_update(system):
                out.append({"role": "system", "content": text})
        elif (user := message.user) is not None:
            if (turn := _user(user, images)) is not None:
                out.append(turn)
        elif (assistant := message.assistant) is not None:
            if (turn := _assistant(assistant.content)) is not None:
                out.append(turn)
        elif (result := message.tool_result) is not None:
            out.append(_tool_result(result, images))
    return out


def in_place(
    messages: list[AgentMessage], transform: Callable[[list[AgentMessage]], list[AgentMessage]]
) -> list[AgentMessage]:
    """The transcript as `transform` (transformMessages, which drops system messages) leaves it,
    with its system messages put back as pi keeps them: where they stand, but one that comes while
    a turn's tool calls are waiting for results waits until they have them (synthetic ones too)."""
    transformed = transform(messages)
    out: list[AgentMessage] = []
    held: list[AgentMessage] = []
    waiting = False  # the last turn's tool calls may still be waiting for results
    position = 0  # in `transformed`

    def close() -> None:
        nonlocal position, waiting
        while position < len(transformed) and transformed[position].tool_result is not None:  # synthetic
            out.append(transformed[position])
            position += 1
        out.extend(held)
        held.clear()
        waiting = False

    def take() -> AgentMessage:
        nonlocal position
        position += 1
        return transformed[position - 1]

    for message in messages:
        if message.system is not None:
            (held if waiting else out).append(message)
        elif (assistant := message.assistant) is not None:
            close()
            if assistant.stop_reason not in (StopReason.ERROR, StopReason.ABORTED):  # else left out
                out.append(turn := take())
                replayed = turn.assistant.content if turn.assistant is not None else []
                waiting = any(block.tool_call is not None for block in replayed)
        elif message.tool_result is not None:
            out.append(take())
        elif message.user is not None:
            close()
            out.append(take())
    close()
    return out


def system_update(message: SystemMessage) -> str:
    """pi's renderSystemMessageUpdate: a later system message's text, then its section changes,
    each named, so the model can relate them to the prompt."""
    parts = [text] if (text := content_text(message)) else []
    sections = {section.name: section.text for section in message.sections}
    for name in js_key_order(sections):
        value = sections[name]
        parts.append(
            f'Removed system prompt section "{name}".'
            if value is None
            else f'Updated system prompt section "{name}":\n\n{value}'
        )
    return "\n\n".join(parts)


def _image_url(data: bytes, mime_type: str) -> dict[str, str]:
    return {"type": "image_url", "image_url": f"data:{mime_type};base64,{base64.b64encode(data).decode('ascii')}"}


def _user(user: UserMessage, images: bool) -> dict[str, Any] | None:
    blocks = user.content
    if user.string_content and len(blocks) == 1 and blocks[0].text is not None:
        return {"role": "user", "content": blocks[0].text.text}
    content: list[dict[str, Any]] = []
    for block in blocks:
        if (plain := block.text) is not None:
            content.append({"type": "text", "text": plain.text})
        elif (image := block.image) is not None and images:
            content.append(_image_url(image.data, image.mime_type))
    if content:
        return {"role": "user", "content": content}
    if any(block.image is not None for block in blocks):  # all it had were images the model cannot see
        return {"role": "user", "content": IMAGE_OMITTED}
    return None


def _assistant(content: Sequence[AssistantContent]) -> dict[str, Any] | None:
    """A turn as pi sends it: its non-blank text and reasoning as chunks, its tool calls, and
    `prefix: false`; None for a turn with neither."""
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        if (plain := block.text) is not None:
            if plain.text.strip():
                parts.append({"type": "text", "text": plain.text})
        elif (thinking := block.thinking) is not None:
            if thinking.thinking.strip():
                parts.append({"type": "thinking", "thinking": [{"type": "text", "text": thinking.thinking}]})
        elif (tool := block.tool_call) is not None:
            arguments = dump_json(tool_call_arguments(tool))
            calls.append({"id": tool.id, "type": "function", "function": {"name": tool.name, "arguments": arguments}})
            calls[-1]["index"] = 0  # pi numbers every replayed call 0
    if not parts and not calls:
        return None
    turn: dict[str, Any] = {"role": "assistant", "prefix": False}
    if parts:
        turn["content"] = parts
    if calls:
        turn["tool_calls"] = calls
    return turn


def _tool_result(result: ToolResultMessage, images: bool) -> dict[str, Any]:
    """A tool message: its text (pi's words where it has none, `[tool error] ` before an error's),
    then its images where the model takes them."""
    text = "\n".join(block.text.text for block in result.content if block.text is not None).strip()
    has_images = any(block.image is not None for block in result.content)
    prefix = ERROR_PREFIX if result.is_error else ""
    if text:
        said = prefix + text + (f"\n{TOOL_IMAGE_OMITTED}" if has_images and not images else "")
    elif has_images:
        said = prefix + (SEE_IMAGE if images else IMAGE_OMITTED)
    else:
        said = prefix + NO_OUTPUT
    content = [{"type": "text", "text": said}]
    if images:
        content += [_image_url(block.image.data, block.image.mime_type) for block in result.content if block.image]
    message: dict[str, Any] = {"role": "tool", "tool_call_id": result.tool_call_id}
    if result.tool_name is not None:
        message["name"] = result.tool_name
    message["content"] = content
    return message


# --- errors -------------------------------------------------------------------------------------------


@describing
def describe(error: BaseException, model: ModelConfig) -> str:
    """What went wrong, in words for the client (the model's secrets are scrubbed after)."""
    if isinstance(error, errors.ResponseValidationError):  # an event that is not a chat completion chunk
        return _unreadable(model, error)
    if isinstance(error, errors.MistralError):
        kind, message = _detail(model, error.body)
        return f"the provider answered {error.status_code}{f' {kind}' if kind else ''}: {message}"
    if isinstance(error, errors.NoResponseError):
        return f"cannot reach the provider: {error}"
    if isinstance(error, httpx2.ConnectError):
        return f"cannot reach the provider: {error}"
    if isinstance(error, httpx2.HTTPError):
        return f"the connection to the provider broke: {error}"
    return f"{type(error).__name__}: {error}"


def _detail(model: ModelConfig, body: str) -> tuple[str, str]:
    """The kind and message of a Mistral error body: its own `{"object": "error", "message", "type",
    "code"}`, the gateway's `{"message"}`, a guardrail's `{"error": {"code", "message"}}`, or a
    validation error's `{"detail"}`; else the body as it came. Each text is quoted."""
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return "", quote(model, body.strip() or "(no body)")
    detail: dict[str, Any] = parsed["error"] if isinstance(parsed.get("error"), dict) else parsed
    message = detail.get("message", detail.get("detail"))
    if not isinstance(message, str):
        message = dump_json(message) if message is not None else body.strip()
    kind, code = detail.get("type"), detail.get("code")
    names = [str(kind)] if kind else []
    if code is not None and str(code) != str(kind):
        names.append(f"({code})" if names else str(code))
    return quote(model, " ".join(names)), quote(model, message)


def _unreadable(model: ModelConfig, error: errors.ResponseValidationError) -> str:
    """An event the SDK could not read as a chunk: an error object's words (the API documents none
    mid-stream, but a proxy may send one), else what the chunk lacks."""
    try:
        event = json.loads(error.body)
    except ValueError:
        event = None
    data = event.get("data") if isinstance(event, dict) else None
    if isinstance(data, dict) and ("message" in data or isinstance(data.get("error"), dict)):
        kind, message = _detail(model, json.dumps(data))
        return f"the provider failed mid-stream{f' with {kind}' if kind else ''}: {message}"
    problems = getattr(error.cause, "errors", None)  # pydantic's ValidationError
    found = problems() if callable(problems) else []
    if found and isinstance(first := found[0], dict):
        where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
        reason = f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    else:
        reason = str(error.cause or error)
    return f"the provider sent an event that is not a chat completion chunk ({quote(model, reason)})"
