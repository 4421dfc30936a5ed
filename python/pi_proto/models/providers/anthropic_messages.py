"""anthropic-messages: the Anthropic Messages API, through the official `anthropic` SDK.

The mapping is pi-ai's (packages/ai/src/providers/anthropic.ts): text, thinking (with its
signature, which arrives in signature deltas) and redacted thinking blocks, tool_use blocks whose
input streams as JSON deltas, usage from message_start and message_delta (input, output, cache
read and cache write; the total is their sum), and stop reasons end_turn, pause_turn and
stop_sequence → STOP, max_tokens → LENGTH, tool_use → TOOL_USE, refusal and sensitive → ERROR.
Reasoning is pi's too: adaptive thinking at an effort for the models that take it (Claude 4.6 and
later, or compat.forceAdaptiveThinking), a token budget for the others, both with summarized
display; `{type: "disabled"}` when a reasoning model is asked for no level; no temperature with
thinking on. Prompt caching marks the system prompt, the last tool and the last user turn (one
hour for `long` unless compat.supportsLongCacheRetention is false). Tools stream their input
eagerly (`eager_input_streaming`); a model whose compat.supportsEagerToolInputStreaming is false
gets the fine-grained tool streaming beta instead. Redacted thinking reads as pi's placeholder
text. Tool call ids from other providers are rewritten to Anthropic's pattern. The compat
switches are models.json's, with pi's defaults. As pi does, the message keeps the response's id,
the model that answered when it is not the one asked for, the stop reason as Anthropic wrote it,
the reasoning tokens (output_tokens_details.thinking_tokens) and the cache writes of one-hour
retention.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
from anthropic._streaming import SSEDecoder

from ..._gen.types.pi.ai.v1 import (
    AssistantContent,
    CacheRetention,
    InputKind,
    StopReason,
    ThinkingLevel,
    ToolChoiceMode,
    ToolResultContent,
    UserContent,
)
from ...ir.messages import tool_call_arguments
from .call import Call, Kept, ProviderError, RetryLater, quote, retry_after, supported_levels
from .catalog import ModelConfig
from .http import describing, http_client
from .transform import transform_messages

STOP_REASONS = {
    "end_turn": StopReason.STOP,
    "pause_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "max_tokens": StopReason.LENGTH,
    "tool_use": StopReason.TOOL_USE,
    "refusal": StopReason.ERROR,
    "sensitive": StopReason.ERROR,
}
# The Claude models pi's own catalog marks for adaptive thinking (compat.forceAdaptiveThinking):
# every family from version 4.6 on. A minor version has one or two digits, so that the date of
# claude-sonnet-4-20250514 is not read as one.
CLAUDE_VERSION = re.compile(r"claude-(?:opus|sonnet|haiku|fable)-(\d+)(?:[.-](\d{1,2})(?!\d))?")
FIRST_ADAPTIVE = (4, 6)
# pi's levels as efforts, when the model's thinking level map does not name them (pi's
# mapThinkingLevelToEffort: xhigh and max are "high" unless the map says otherwise).
EFFORTS = {
    ThinkingLevel.MINIMAL: "low",
    ThinkingLevel.LOW: "low",
    ThinkingLevel.MEDIUM: "medium",
    ThinkingLevel.HIGH: "high",
    ThinkingLevel.XHIGH: "high",
    ThinkingLevel.MAX: "high",
}
THINKING_DISPLAY = "summarized"  # pi's default, which older Claude 4 models have as the API's default
MIN_BUDGET_TOKENS = 1024  # pi's budget when the computed one is 0
FINE_GRAINED_TOOL_STREAMING = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
RETRYABLE = (429, 500, 502, 503, 504, 529)
# The `error` events of a stream that say the provider, not the request, failed (its errors page).
TRANSIENT = ("overloaded_error", "api_error", "rate_limit_error")
REDACTED_THINKING = "[Reasoning redacted]"  # the text pi gives a redacted thinking block


@dataclass(frozen=True)
class Compat:
    """The compat switches of pi's getAnthropicCompat that this provider follows, with pi's defaults;
    `force_adaptive_thinking` is None when models.json does not say, and the model's id decides."""

    supports_eager_tool_input_streaming: bool = True
    supports_long_cache_retention: bool = True
    supports_cache_control_on_tools: bool = True
    supports_temperature: bool = True
    allow_empty_signature: bool = False
    supports_mid_convo_effort: bool = False
    force_adaptive_thinking: bool | None = None


# models.json's names for the switches (pi's camelCase).
_COMPAT_KEYS = {
    "supportsEagerToolInputStreaming": "supports_eager_tool_input_streaming",
    "supportsLongCacheRetention": "supports_long_cache_retention",
    "supportsCacheControlOnTools": "supports_cache_control_on_tools",
    "supportsTemperature": "supports_temperature",
    "allowEmptySignature": "allow_empty_signature",
    "supportsMidConvoEffort": "supports_mid_convo_effort",
    "forceAdaptiveThinking": "force_adaptive_thinking",
}


def compat(model: ModelConfig) -> Compat:
    """The model's switches: those its models.json sets, pi's defaults for the rest."""
    resolved: dict[str, bool] = {}
    for key, value in model.compat.items():
        name = _COMPAT_KEYS.get(key)
        if name is None or value is None:
            continue  # a switch of another pi version, or of another API
        if not isinstance(value, bool):
            raise ProviderError(f"compat.{key} of model {model.info.id!r} must be true or false")
        resolved[name] = value
    return Compat(**resolved)


def adaptive_thinking(model: ModelConfig) -> bool:
    """Whether the model takes adaptive thinking and an effort instead of a reasoning budget:
    models.json's forceAdaptiveThinking, else pi's catalog's rule (Claude 4.6 and later)."""
    forced = compat(model).force_adaptive_thinking
    if forced is not None:
        return forced
    found = CLAUDE_VERSION.search(model.info.id)
    return found is not None and (int(found[1]), int(found[2] or 0)) >= FIRST_ADAPTIVE


class _Events(SSEDecoder):
    """The SDK's event stream decoder, gathering each event's lines in a bytearray: the SDK adds
    each line to a bytes object, which copies the event so far at every line (quadratic time in
    an event of many lines)."""

    async def _aiter_chunks(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        data = bytearray()
        async for chunk in iterator:
            for line in chunk.splitlines(keepends=True):
                data += line
                if data.endswith((b"\r\r", b"\n\n", b"\r\n\r\n")):
                    yield bytes(data)
                    data.clear()
        if data:
            yield bytes(data)


class _Client(anthropic.AsyncAnthropic):
    def _make_sse_decoder(self) -> SSEDecoder:
        return _Events()


async def stream(call: Call) -> None:
    """Run one Messages call and tell `call` what it streams."""
    betas = _betas(call)
    client = _Client(
        api_key=call.model.api_key or None,
        base_url=call.model.info.base_url,
        max_retries=0,  # run() retries, within max_retry_delay_ms
        default_headers={**({"anthropic-beta": ",".join(betas)} if betas else {}), **call.headers()},
        http_client=http_client(call),
    )
    try:
        try:
            request = body(call)
            typed = {name: request.pop(name) for name in ("model", "messages", "max_tokens")}
            # The rest goes as it is: the SDK does not type every field pi sends (temperature).
            events = await client.messages.create(**typed, stream=True, extra_body=request)
        except anthropic.APIStatusError as error:
            if error.status_code in RETRYABLE:
                raise RetryLater(retry_after(error.response.headers), describe(error, call.model)) from None
            raise
        await call.start()
        reader = _Reader(call)
        try:
            async with events:
                async for event in events:
                    await reader.apply(event)
        except anthropic.APIStatusError as error:
            if _error_type(error) in TRANSIENT:  # another model may answer where this one could not
                raise RetryLater(None, describe(error, call.model)) from None
            raise
        if not reader.events:
            raise call.no_events()
    finally:
        await client.close()  # also when cancelled: the provider sees the connection close


class _Reader:
    """One stream's blocks: the provider's block index → (kind, our content index), and signatures,
    kept as their deltas (joined once, at the block's end) and counted toward the size limit."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.blocks: dict[int, tuple[str, int]] = {}
        self.signatures: dict[int, Kept] = {}
        self.events = 0

    async def apply(self, event: Any) -> None:
        call = self.call
        self.events += 1
        if event.type == "message_start":
            message = event.message
            answered = message.model if message.model != call.model.info.id else None
            call.set_response(response_id=message.id, response_model=answered)
            _usage(call, message.usage, starting=True)
        elif event.type == "content_block_start":
            await self._open(event.index, event.content_block)
        elif event.type == "content_block_delta" and event.index in self.blocks:
            index, delta = self.blocks[event.index][1], event.delta
            if delta.type == "text_delta":
                await call.text(index, delta.text)
            elif delta.type == "thinking_delta":
                await call.thinking(index, delta.thinking)
            elif delta.type == "signature_delta":
                if (kept := self.signatures.get(index)) is None:
                    kept = self.signatures[index] = Kept(call)
                kept.add(delta.signature)
            elif delta.type == "input_json_delta":
                await call.tool_arguments(index, delta.partial_json)
        elif event.type == "content_block_stop" and event.index in self.blocks:
            kind, index = self.blocks.pop(event.index)
            if kind == "text":
                await call.close_text(index)
            elif kind == "thinking":
                kept = self.signatures.pop(index, None)
                await call.close_thinking(index, kept.take() if kept is not None else None)
            else:
                await call.close_tool_call(index)
        elif event.type == "message_delta":
            if (reason := event.delta.stop_reason) is not None:
                call.set_response(raw_stop_reason=reason)
                if reason not in STOP_REASONS:
                    raise ProviderError(f"the provider stopped for a reason pi does not know: {reason!r}")
                call.stop_reason = STOP_REASONS[reason]
                if call.stop_reason == StopReason.ERROR:
                    call.refusal = f"the model stopped with stop reason {reason!r}"
            _usage(call, event.usage)

    async def _open(self, provider_index: int, block: Any) -> None:
        call = self.call
        if block.type == "text":
            self.blocks[provider_index] = ("text", index := await call.open_text())
            await call.text(index, block.text)
        elif block.type == "thinking":
            self.blocks[provider_index] = ("thinking", index := await call.open_thinking())
            await call.thinking(index, block.thinking)
        elif block.type == "redacted_thinking":  # whole at once: the encrypted reasoning is its signature
            index = await call.open_thinking()
            await call.thinking(index, REDACTED_THINKING)
            await call.close_thinking(index, block.data, redacted=True)
        elif block.type == "tool_use":
            self.blocks[provider_index] = ("tool_call", await call.open_tool_call(block.id, block.name))


def _usage(call: Call, usage: Any, *, starting: bool = False) -> None:
    """Anthropic's counts so far; message_delta may leave some out (proxies do), which keep their
    value. The one-hour cache writes are 0 from message_start on, as pi counts them, unless a
    count says otherwise; the reasoning tokens stay absent until a count gives them."""

    def count(name: str, previous: int | None) -> int:
        value = _count(usage, name)
        return (previous or 0) if value is None else value

    before = call.usage
    one_hour = _count(_field(usage, "cache_creation"), "ephemeral_1h_input_tokens")
    if one_hour is None:
        one_hour = 0 if starting else before.cache_write_1h
    reasoning = _count(_field(usage, "output_tokens_details"), "thinking_tokens")
    call.set_usage(
        input=count("input_tokens", before.input),
        output=count("output_tokens", before.output),
        cache_read=count("cache_read_input_tokens", before.cache_read),
        cache_write=count("cache_creation_input_tokens", before.cache_write),
        cache_write_1h=one_hour,
        reasoning=before.reasoning if reasoning is None else reasoning,
    )


def _field(source: Any, name: str) -> Any:
    """A field of an SDK object, or of a dict where the SDK keeps a field it does not type."""
    if source is None:
        return None
    return source.get(name) if isinstance(source, dict) else getattr(source, name, None)


def _count(source: Any, name: str) -> int | None:
    value = _field(source, name)
    return None if value is None else int(value)


def body(call: Call) -> dict[str, Any]:
    """The Messages request body for a call, as pi's buildParams makes it; the call's
    provider options go on top."""
    options = call.options
    switches = compat(call.model)
    cache = _cache_control(call, switches)
    out: dict[str, Any] = {
        "model": call.model.info.id,
        "messages": _messages(call, cache),
        "max_tokens": call.max_tokens(),
    }
    if call.resolved.system_prompt:
        out["system"] = [
            {"type": "text", "text": call.resolved.system_prompt, **({"cache_control": cache} if cache else {})}
        ]
    # Extended thinking takes no temperature, and models with mid-conversation effort take none.
    thinking_on = options.reasoning != ThinkingLevel.UNSPECIFIED
    if (
        options.temperature is not None
        and not thinking_on
        and not switches.supports_mid_convo_effort
        and switches.supports_temperature
    ):
        out["temperature"] = options.temperature
    if call.resolved.tools:
        out["tools"] = _tools(call, switches, cache if switches.supports_cache_control_on_tools else None)
    out.update(_thinking(call))
    if isinstance(user_id := call.metadata().get("user_id"), str):
        out["metadata"] = {"user_id": user_id}
    if (choice := options.tool_choice) is not None:
        out["tool_choice"] = {
            ToolChoiceMode.AUTO: {"type": "auto"},
            ToolChoiceMode.NONE: {"type": "none"},
            ToolChoiceMode.REQUIRED: {"type": "any"},
            ToolChoiceMode.TOOL: {"type": "tool", "name": choice.tool},
        }[choice.mode]
    out.update(call.provider_options())
    return out


def _thinking(call: Call) -> dict[str, Any]:
    """The thinking fields of the body (and the max_tokens a budget needs), as pi's streamSimple
    and buildParams set them."""
    info = call.model.info
    level = call.options.reasoning
    if not info.reasoning:
        return {}
    if level == ThinkingLevel.UNSPECIFIED:
        # pi's "off": said explicitly, unless the model's level map says it cannot be turned off.
        return {"thinking": {"type": "disabled"}} if "off" in supported_levels(info) else {}
    if adaptive_thinking(call.model):  # the model decides how much to think, at an effort
        effort = call.level_value(call.requested_level()) or EFFORTS[level]
        return {"thinking": {"type": "adaptive", "display": THINKING_DISPLAY}, "output_config": {"effort": effort}}
    max_tokens, budget = call.thinking_budget()
    thinking = {"type": "enabled", "budget_tokens": budget or MIN_BUDGET_TOKENS, "display": THINKING_DISPLAY}
    return {"max_tokens": max_tokens, "thinking": thinking}


def _betas(call: Call) -> list[str]:
    """The beta features pi asks for (getBetaFeatures): fine-grained tool streaming for tools
    that cannot stream their input eagerly, interleaved thinking with a reasoning budget. An
    anthropic-beta header of the catalog or the call replaces them (call.headers() goes on top)."""
    switches = compat(call.model)
    out = []
    if call.resolved.tools and not switches.supports_eager_tool_input_streaming:
        out.append(FINE_GRAINED_TOOL_STREAMING)
    reasoning = call.options.reasoning != ThinkingLevel.UNSPECIFIED
    if call.model.info.reasoning and reasoning and not adaptive_thinking(call.model):
        out.append(INTERLEAVED_THINKING)
    return out


def _tools(call: Call, switches: Compat, cache: dict[str, str] | None) -> list[dict[str, Any]]:
    """The tools as pi's convertTools writes them: input streamed eagerly where the model can, and
    the cache breakpoint on the last one."""
    out = []
    for tool in call.resolved.tools:
        definition: dict[str, Any] = {"name": tool.name, "description": tool.description or ""}
        if switches.supports_eager_tool_input_streaming:
            definition["eager_input_streaming"] = True
        definition["input_schema"] = {"type": "object", **_schema(tool.parameters_json or "{}")}
        out.append(definition)
    if cache and out:
        out[-1]["cache_control"] = cache
    return out


def _schema(parameters_json: str) -> dict[str, Any]:
    schema = json.loads(parameters_json or "{}")
    return {"properties": schema.get("properties", {}), "required": schema.get("required", [])}


def _cache_control(call: Call, switches: Compat) -> dict[str, str] | None:
    if call.cache_retention() == CacheRetention.NONE:
        return None
    if call.long_retention(switches.supports_long_cache_retention):
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def normalize_id(call_id: str) -> str:
    """A tool call id in Anthropic's pattern: letters, digits, _ and -; at most 64 characters."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", call_id)[:64]


def _messages(call: Call, cache: dict[str, str] | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    messages = transform_messages(call.resolved.messages, call.model.info, normalize_id)
    index = 0
    while index < len(messages):
        message = messages[index]
        if (user := message.user) is not None:
            blocks = _media(user.content, call)
            if blocks:
                out.append({"role": "user", "content": blocks})
        elif (assistant := message.assistant) is not None:
            blocks = _assistant(assistant.content, compat(call.model).allow_empty_signature)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif message.tool_result is not None:
            results = []
            while index < len(messages) and (result := messages[index].tool_result) is not None:
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": result.tool_call_id,
                        "content": _result_content(result.content, call),
                        "is_error": result.is_error,
                    }
                )
                index += 1
            out.append({"role": "user", "content": results})
            continue
        index += 1
    if cache and out and out[-1]["role"] == "user":
        out[-1]["content"][-1]["cache_control"] = cache
    return out


def _media(content: Sequence[UserContent | ToolResultContent], call: Call) -> list[dict[str, Any]]:
    """Text and image blocks; blank text is left out, and images when the model takes none."""
    blocks: list[dict[str, Any]] = []
    for block in content:
        if (plain := block.text) is not None:
            if plain.text.strip():
                blocks.append({"type": "text", "text": plain.text})
        elif (image := block.image) is not None and InputKind.IMAGE in call.model.info.input:
            data = base64.b64encode(image.data).decode("ascii")
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": data}})
    return blocks


def _result_content(content: Sequence[ToolResultContent], call: Call) -> str | list[dict[str, Any]]:
    """A tool result's content: its text lines as one string, or blocks when it holds an image."""
    if not any(block.image is not None for block in content):
        return "\n".join(block.text.text for block in content if block.text is not None)
    blocks = _media(content, call)
    if not any(block["type"] == "text" for block in blocks):
        blocks.insert(0, {"type": "text", "text": "(see attached image)"})
    return blocks


def _assistant(content: Sequence[AssistantContent], allow_empty_signature: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in content:
        if (plain := block.text) is not None:
            if plain.text.strip():
                blocks.append({"type": "text", "text": plain.text})
        elif (thinking := block.thinking) is not None:
            signed = bool((thinking.thinking_signature or "").strip())
            if thinking.redacted:
                blocks.append({"type": "redacted_thinking", "data": thinking.thinking_signature or ""})
            elif signed:  # kept even when blank: the signature is what Anthropic checks
                blocks.append(
                    {"type": "thinking", "thinking": thinking.thinking, "signature": thinking.thinking_signature}
                )
            elif not thinking.thinking.strip():
                continue
            elif allow_empty_signature:  # servers that emit empty signatures take them back
                blocks.append({"type": "thinking", "thinking": thinking.thinking, "signature": ""})
            else:  # reasoning without its signature (a cut stream) goes back as text
                blocks.append({"type": "text", "text": thinking.thinking})
        elif (tool := block.tool_call) is not None:
            blocks.append({"type": "tool_use", "id": tool.id, "name": tool.name, "input": tool_call_arguments(tool)})
    return blocks


def _error_type(error: anthropic.APIStatusError) -> str:
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error")
    return str(detail.get("type") or "") if isinstance(detail, dict) else ""


@describing
def describe(error: BaseException, model: ModelConfig) -> str:
    """What went wrong, in words for the client (the model's secrets are scrubbed after)."""
    if isinstance(error, anthropic.APIStatusError):
        body = error.body if isinstance(error.body, dict) else {}
        detail = body.get("error", {}) if isinstance(body.get("error"), dict) else {}
        kind = detail.get("type") or type(error).__name__
        message = quote(model, str(detail.get("message") or error.message))
        if error.status_code == 200:  # an `error` event in the middle of the stream
            return f"the provider failed mid-stream with {kind}: {message}"
        return f"the provider answered {error.status_code} {kind}: {message}"
    if isinstance(error, anthropic.APIConnectionError):
        return f"cannot reach the provider: {error.__cause__ or error}"
    if isinstance(error, httpx2.HTTPError):
        return f"the connection to the provider broke: {error}"
    return f"{type(error).__name__}: {error}"
