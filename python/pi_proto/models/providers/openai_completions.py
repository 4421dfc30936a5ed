"""openai-completions: OpenAI Chat Completions, and every server that speaks it, through the official
`openai` SDK.

The mapping is pi-ai's (packages/ai/src/providers/openai-completions.ts, as of pi-ai 0.63): text
deltas; reasoning from whichever of `reasoning_content` (llama.cpp, DeepSeek), `reasoning` (vLLM,
Ollama, OpenRouter) or `reasoning_text` a delta carries first, with that field's name as the
thinking signature, so the reasoning goes back to the same model under the same field; tool calls
whose id and name come in their first delta and whose arguments follow in fragments, each delta
naming its call by `index`; OpenRouter's encrypted `reasoning_details` kept as the thought
signature of the tool call they name; usage from the chunk's `usage` (or the choice's, as Moonshot
sends it): prompt tokens less cached ones are input, completion tokens (the reasoning tokens
among them) are output, cached tokens are cache reads; and finish reasons stop and end → STOP,
length → LENGTH, tool_calls and function_call → TOOL_USE, anything else (content_filter,
network_error) → ERROR. As pi 1.6 does, the message keeps the completion's id, the model the
server says answered when it is not the one asked for, and the finish reason as it was written.

The request is pi 1.6's buildParams for what this server speaks: the reasoning level clamped to the
model's thinkingLevelMap and sent as the map's value (else pi's level name) in the server's
thinking format; the session id as `prompt_cache_key` (OpenAI's own API, or long retention where
the server keeps it) and as session-affinity headers (OpenRouter); long retention as
`prompt_cache_retention: "24h"`, or a one-hour `cache_control` for Claude through OpenRouter; the
model's and the call's sampling parameters over the named fields.

What each server accepts differs; pi's `compat` switches in models.json say it, and where a model
leaves one out it is detected from the provider and base URL as pi detects it (see `Compat`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, cast

import httpx2
import openai

from ..._gen.types.pi.ai.v1 import (
    AgentMessage,
    AssistantContent,
    CacheRetention,
    InputKind,
    StopReason,
    ToolChoiceMode,
    ToolResultContent,
    ToolResultMessage,
    UserContent,
)
from ...ir.events import utf8_size
from ...ir.messages import dump_json, tool_call_arguments
from .call import Call, Kept, ProviderError, RetryLater, quote, retry_after, supported_levels
from .catalog import ModelConfig
from .http import describing, http_client
from .transform import tool_result_text, transform_messages

# The delta fields servers put reasoning in, in the order pi reads them: the first one a delta
# fills wins (chutes.ai sends the same text in two of them).
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
STOP_REASONS = {
    "stop": StopReason.STOP,
    "end": StopReason.STOP,
    "length": StopReason.LENGTH,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
}
PROMPT_CACHE_KEY_LIMIT = 64  # characters of the session id OpenAI takes as prompt_cache_key
TOOL_CHOICES: dict[ToolChoiceMode, str] = {
    ToolChoiceMode.AUTO: "auto",
    ToolChoiceMode.NONE: "none",
    ToolChoiceMode.REQUIRED: "required",
}
RETRYABLE = (429, 500, 502, 503, 504)
BRIDGE = "I have processed the tool results."  # pi's assistant turn between tool results and a user turn


@dataclass(frozen=True)
class Compat:
    """pi's OpenAICompletionsCompat, resolved: what the server behind a model accepts."""

    supports_store: bool = True  # send `store: false`
    supports_developer_role: bool = True  # the system prompt of a reasoning model as `developer`
    supports_reasoning_effort: bool = True  # send `reasoning_effort`
    supports_usage_in_streaming: bool = True  # ask for usage with `stream_options.include_usage`
    max_tokens_field: str = "max_completion_tokens"  # or "max_tokens"
    requires_tool_result_name: bool = False  # tool results carry the tool's `name`
    requires_assistant_after_tool_result: bool = False  # a user turn may not follow tool results
    requires_thinking_as_text: bool = False  # replayed reasoning goes back as text
    thinking_format: str = "openai"  # openai, openrouter, zai, qwen or qwen-chat-template
    supports_strict_mode: bool = True  # tools carry `strict: false`
    open_router_routing: Mapping[str, Any] | None = None  # sent as `provider` to openrouter.ai
    vercel_gateway_routing: Mapping[str, Any] | None = None  # sent as `providerOptions.gateway`
    supports_long_cache_retention: bool = True  # keeps a prompt cache for 24 hours (or 1 hour, Anthropic's way)
    send_session_affinity_headers: bool = False  # the session id as headers, for routing to one replica
    session_affinity_format: str = "openai"  # openai, openai-nosession or openrouter
    prompt_cache_key_mode: str = "auto"  # auto, enabled or disabled
    cache_control_format: str | None = None  # "anthropic": cache_control marks on the prompt's parts


# models.json's names for the switches (pi's camelCase).
_COMPAT_KEYS = {
    "supportsStore": "supports_store",
    "supportsDeveloperRole": "supports_developer_role",
    "supportsReasoningEffort": "supports_reasoning_effort",
    "supportsUsageInStreaming": "supports_usage_in_streaming",
    "maxTokensField": "max_tokens_field",
    "requiresToolResultName": "requires_tool_result_name",
    "requiresAssistantAfterToolResult": "requires_assistant_after_tool_result",
    "requiresThinkingAsText": "requires_thinking_as_text",
    "thinkingFormat": "thinking_format",
    "supportsStrictMode": "supports_strict_mode",
    "openRouterRouting": "open_router_routing",
    "vercelGatewayRouting": "vercel_gateway_routing",
    "supportsLongCacheRetention": "supports_long_cache_retention",
    "sendSessionAffinityHeaders": "send_session_affinity_headers",
    "sessionAffinityFormat": "session_affinity_format",
    "promptCacheKeyMode": "prompt_cache_key_mode",
    "cacheControlFormat": "cache_control_format",
}
_OBJECTS = ("open_router_routing", "vercel_gateway_routing")
_STRINGS = ("cache_control_format",)  # absent unless detected or set


def compat(model: ModelConfig) -> Compat:
    """The model's switches: those its models.json sets, the rest detected as pi's detectCompat does."""
    resolved = {item.name: getattr(detect_compat(model), item.name) for item in fields(Compat)}
    for key, value in model.compat.items():
        name = _COMPAT_KEYS.get(key)
        if name is None or value is None:
            continue  # a switch of another pi version, or of another API
        expected: type = Mapping if name in _OBJECTS else str if name in _STRINGS else type(resolved[name])
        if not isinstance(value, expected):
            kind = {Mapping: "an object", bool: "true or false", str: "a string"}[expected]
            raise ProviderError(f"compat.{key} of model {model.info.id!r} must be {kind}")
        resolved[name] = value
    return Compat(**resolved)


def detect_compat(model: ModelConfig) -> Compat:
    """What pi assumes of a server it knows by the model's provider or base URL."""
    provider, url = model.info.provider, model.info.base_url
    zai = provider == "zai" or "api.z.ai" in url
    grok = provider == "xai" or "api.x.ai" in url
    openrouter = provider == "openrouter" or "openrouter.ai" in url
    nonstandard = (
        zai
        or grok
        or provider in ("cerebras", "opencode")
        or any(host in url for host in ("cerebras.ai", "chutes.ai", "deepseek.com", "opencode.ai"))
    )
    if zai:
        thinking = "zai"
    elif openrouter:
        thinking = "openrouter"
    else:
        thinking = "openai"
    return Compat(
        supports_store=not nonstandard,
        supports_developer_role=not nonstandard,
        supports_reasoning_effort=not grok and not zai,
        max_tokens_field="max_tokens" if "chutes.ai" in url else "max_completion_tokens",
        thinking_format=thinking,
        supports_long_cache_retention=not _short_cache_only(provider, url),
        send_session_affinity_headers=openrouter,
        session_affinity_format="openrouter" if openrouter else "openai",
        cache_control_format="anthropic"
        if provider == "openrouter" and model.info.id.startswith("anthropic/")
        else None,
    )


def _short_cache_only(provider: str, url: str) -> bool:
    """The servers pi knows keep no long prompt cache: Together, Cloudflare, NVIDIA and Ant Ling."""
    hosts = (
        ("together", ("api.together.ai", "api.together.xyz")),
        ("cloudflare-workers-ai", ("api.cloudflare.com",)),
        ("cloudflare-ai-gateway", ("gateway.ai.cloudflare.com",)),
        ("nvidia", ("integrate.api.nvidia.com",)),
        ("ant-ling", ("api.ant-ling.com",)),
    )
    return any(provider == name or any(host in url for host in urls) for name, urls in hosts)


async def stream(call: Call) -> None:
    """Run one Chat Completions call and tell `call` what it streams."""
    switches = compat(call.model)
    client = openai.AsyncOpenAI(
        api_key=call.model.api_key or None,
        base_url=call.model.info.base_url,
        max_retries=0,  # run() retries, within max_retry_delay_ms
        default_headers=call.headers(session_headers(call, switches)),
        http_client=http_client(call),
    )
    try:
        request = body(call)
        model, messages = request.pop("model"), request.pop("messages")
        del request["stream"]
        try:
            # The rest goes as it is: the SDK does not type every field pi sends (enable_thinking,
            # reasoning, provider), and a server's own reasoning effort words are not its Literals.
            chunks = await client.chat.completions.create(
                model=model, messages=cast(Any, messages), stream=True, extra_body=request
            )
        except openai.APIStatusError as error:
            if error.status_code in RETRYABLE:
                raise RetryLater(retry_after(error.response.headers), describe(error, call.model)) from None
            raise
        await call.start()
        reader = _Reader(call)
        try:
            async with chunks:
                async for chunk in chunks:
                    await reader.apply(chunk)
        except openai.APIConnectionError as error:  # the SDK wraps a broken body in this too
            if isinstance(error, openai.APITimeoutError) or isinstance(error.__cause__, ProviderError):
                raise  # ours, or our idle timeout: run words it
            raise ProviderError(f"the connection to the provider broke: {error.__cause__ or error}") from None
        if not reader.chunks:
            raise call.no_events()
        await reader.finish()
    finally:
        await client.close()  # also when cancelled: the provider sees the connection close


@dataclass
class _ToolCall:
    """A tool call the provider is streaming; it opens once its name is known."""

    call_id: str
    name: str
    pending: Kept  # arguments that came before the name
    index: int | None = None  # our content index, once open


class _Reader:
    """One stream's open blocks: a text or thinking block, or the tool calls by the provider's index.

    Text or reasoning after tool calls ends them, and a tool call ends the text or reasoning
    before it, as in pi. Tool calls themselves stay open together, each taking the fragments of
    its own index, so calls whose fragments a server interleaves come out whole (pi would start
    a new block at each switch of index).
    """

    def __init__(self, call: Call) -> None:
        self.call = call
        self.block: tuple[str, int, str | None] | None = None  # kind, content index, signature
        self.tool_calls: dict[int, _ToolCall] = {}
        self.signatures: dict[str, str] = {}  # tool call id → its encrypted reasoning, as JSON
        self.chunks = 0

    async def apply(self, chunk: Any) -> None:
        self.chunks += 1
        self._identify(chunk)
        choices = chunk.choices or []  # vLLM's usage chunk has `choices: null`
        if chunk.usage is not None:
            _usage(self.call, chunk.usage)
        if not choices:
            return
        choice = choices[0]
        if chunk.usage is None and (usage := getattr(choice, "usage", None)) is not None:
            _usage(self.call, usage)  # Moonshot puts usage on the choice
        if choice.finish_reason:
            self._stop(choice.finish_reason)
        delta = choice.delta
        if delta is None:
            return
        if isinstance(delta.content, str) and delta.content:
            await self._append("text", delta.content, None)
        reasoning = next((name for name in REASONING_FIELDS if _text(getattr(delta, name, None))), None)
        if reasoning is not None:
            await self._append("thinking", getattr(delta, reasoning), reasoning)
        for tool_call in delta.tool_calls or []:
            await self._tool_call(tool_call)
        details = getattr(delta, "reasoning_details", None)
        for detail in details if isinstance(details, list) else []:
            encrypted = isinstance(detail, dict) and detail.get("type") == "reasoning.encrypted"
            if encrypted and _text(detail.get("id")) and detail.get("data"):
                self._sign(detail["id"], dump_json(detail))

    async def finish(self) -> None:
        """The stream ended: end what is still open."""
        await self._close_block()
        await self._close_tool_calls()

    def _identify(self, chunk: Any) -> None:
        """The completion's id and the model that answered, from the first chunk that names them
        (every chunk carries the same), as pi keeps them; a model named as asked is not kept."""
        message = self.call.events.partial
        if not message.response_id and _text(chunk.id):
            self.call.set_response(response_id=chunk.id)
        model = getattr(chunk, "model", None)
        if not message.response_model and _text(model) and model != self.call.model.info.id:
            self.call.set_response(response_model=model)

    def _sign(self, call_id: str, signature: str) -> None:
        """Keep the encrypted reasoning of a tool call until the call ends; it counts toward the
        size limit meanwhile."""
        self.call.release(utf8_size(self.signatures.get(call_id, "")))
        self.signatures[call_id] = signature
        self.call.hold(utf8_size(signature))

    def _stop(self, reason: str) -> None:
        call = self.call
        call.set_response(raw_stop_reason=reason)
        call.stop_reason = STOP_REASONS.get(reason, StopReason.ERROR)
        if call.stop_reason == StopReason.ERROR:
            call.refusal = f"the provider stopped with finish_reason {reason!r}"

    async def _append(self, kind: str, delta: str, signature: str | None) -> None:
        call = self.call
        if self.block is None or self.block[0] != kind:
            await self._close_block()
            await self._close_tool_calls()
            index = await (call.open_text() if kind == "text" else call.open_thinking())
            self.block = (kind, index, signature)
        index = self.block[1]
        await (call.text(index, delta) if kind == "text" else call.thinking(index, delta))

    async def _tool_call(self, delta: Any) -> None:
        await self._close_block()
        key = self._key(delta)
        function = delta.function
        call_id, name = delta.id or "", (function.name if function is not None else None) or ""
        if (state := self.tool_calls.get(key)) is None:
            state = self.tool_calls[key] = _ToolCall(call_id, name, Kept(self.call))
        state.call_id, state.name = state.call_id or call_id, state.name or name
        arguments = (function.arguments if function is not None else None) or ""
        if state.index is not None:
            await self.call.tool_arguments(state.index, arguments)
            return
        state.pending.add(arguments)
        if state.name:
            # A server that sends no id still gets a call a tool result can answer.
            state.call_id = state.call_id or f"call_{key}"
            state.index = await self.call.open_tool_call(state.call_id, state.name)
            await self.call.tool_arguments(state.index, state.pending.take())

    def _key(self, delta: Any) -> int:
        """The provider's index of a tool call delta. A new id at a used index is a new call, as in
        pi (Ollama numbers every call 0); without an index, a delta belongs to the call with its id,
        or, with neither id nor a second name, to the latest call (Gemini sends no index)."""
        if isinstance(delta.index, int):
            state = self.tool_calls.get(delta.index)
            if state is not None and delta.id and state.call_id and delta.id != state.call_id:
                retired = min(-1, min(self.tool_calls) - 1)  # a key no delta names: the call stays open
                self.tool_calls[retired] = self.tool_calls.pop(delta.index)
            return int(delta.index)
        for key, state in self.tool_calls.items():
            if delta.id and state.call_id == delta.id:
                return key
        latest = max(self.tool_calls, default=None)
        named = delta.function is not None and bool(delta.function.name)
        if latest is None or delta.id or (named and self.tool_calls[latest].name):
            return max(0, (latest if latest is not None else -1) + 1)
        return latest

    async def _close_block(self) -> None:
        if self.block is not None:
            kind, index, signature = self.block
            self.block = None
            await (self.call.close_text(index) if kind == "text" else self.call.close_thinking(index, signature))

    async def _close_tool_calls(self) -> None:
        states = sorted(self.tool_calls.values(), key=lambda state: -1 if state.index is None else state.index)
        self.tool_calls = {}
        for state in states:
            if state.index is None:
                raise ProviderError(f"the provider streamed a tool call without a name (id {state.call_id!r})")
            signature = self.signatures.pop(state.call_id, None)
            self.call.release(utf8_size(signature or ""))  # the end event carries it now
            await self.call.close_tool_call(state.index, thought_signature=signature)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _usage(call: Call, usage: Any) -> None:
    """The usage so far, as pi reads it now: cached tokens (DeepSeek's cache hits where there are no
    details) out of the input; the output is completion_tokens, which count the reasoning tokens
    already (pi once added them a second time). The reasoning tokens are the details' (or a
    server's top-level reasoning_tokens), 0 when neither says, as pi counts them."""
    cached = _count(_get(usage, "prompt_tokens_details"), "cached_tokens") or _count(usage, "prompt_cache_hit_tokens")
    call.set_usage(
        input=max(0, _count(usage, "prompt_tokens") - cached),  # a server's odd count must not go negative
        output=_count(usage, "completion_tokens"),
        cache_read=cached,
        reasoning=_count(_get(usage, "completion_tokens_details"), "reasoning_tokens")
        or _count(usage, "reasoning_tokens"),
    )


def _get(source: Any, name: str) -> Any:
    """A field of an SDK object, or of a dict where a server's extra field stayed one."""
    return source.get(name) if isinstance(source, dict) else getattr(source, name, None)


def _count(source: Any, name: str) -> int:
    value = _get(source, name) if source is not None else None
    return value if isinstance(value, int) else 0


# --- the request ------------------------------------------------------------------------------------


def body(call: Call) -> dict[str, Any]:
    """The Chat Completions request body for a call, as pi's buildParams makes it; the call's
    provider options go on top. pi sends no metadata to this API, and neither do we."""
    info = call.model.info
    options = call.options
    switches = compat(call.model)
    out: dict[str, Any] = {"model": info.id, "messages": _messages(call, switches), "stream": True}
    out.update(_prompt_cache(call, switches))
    if switches.supports_usage_in_streaming:
        out["stream_options"] = {"include_usage": True}
    if switches.supports_store:
        out["store"] = False
    if max_tokens := call.max_tokens():  # a model with a maxTokens of 0 is asked for none
        out[switches.max_tokens_field] = max_tokens
    if options.temperature is not None:
        out["temperature"] = options.temperature
    if call.resolved.tools:
        out["tools"] = [
            _tool(tool.name, tool.description or "", tool.parameters_json or "{}", switches)
            for tool in call.resolved.tools
        ]
    elif _has_tool_history(call.resolved.messages):
        out["tools"] = []  # proxies in front of Anthropic refuse tool history without tools
    _cache_control(call, switches, out)
    if (choice := options.tool_choice) is not None:
        out["tool_choice"] = (
            {"type": "function", "function": {"name": choice.tool}}
            if choice.mode == ToolChoiceMode.TOOL
            else TOOL_CHOICES[choice.mode]
        )
    out.update(_reasoning(call, switches))
    out.update(_routing(call))
    out.update(call.sampling_params())  # last of pi's fields, so they override the named ones
    out.update(call.provider_options())
    return out


def session_headers(call: Call, switches: Compat) -> dict[str, str]:
    """pi's session-affinity headers, which route a session's calls to one replica (OpenRouter's
    by default): its session id under the names of the server's format."""
    session = call.cache_session_id()
    if session is None or not switches.send_session_affinity_headers:
        return {}
    if switches.session_affinity_format == "openrouter":
        return {"x-session-id": session}
    named = {"session_id": session} if switches.session_affinity_format == "openai" else {}
    return {**named, "x-client-request-id": session, "x-session-affinity": session}


def _prompt_cache(call: Call, switches: Compat) -> dict[str, Any]:
    """The session id as the prompt cache key, where pi sends one: always in mode "enabled"; in
    "auto", to OpenAI's own API or with long retention the server keeps. Long retention also asks
    for 24 hours."""
    retention = call.cache_retention()
    long = retention == CacheRetention.LONG and switches.supports_long_cache_retention
    mode = switches.prompt_cache_key_mode
    keyed = mode == "enabled" or (mode == "auto" and ("api.openai.com" in call.model.info.base_url or long))
    out: dict[str, Any] = {}
    if keyed and retention != CacheRetention.NONE and call.options.session_id:
        out["prompt_cache_key"] = call.options.session_id[:PROMPT_CACHE_KEY_LIMIT]
    if long:
        out["prompt_cache_retention"] = "24h"
    return out


def _reasoning(call: Call, switches: Compat) -> dict[str, Any]:
    """The reasoning fields of the server's thinking format, as pi 1.6 writes them: the level
    clamped to the model's, sent as its thinkingLevelMap value or else its name; "off" as the
    map's value for off where the format has one."""
    info = call.model.info
    if not info.reasoning:
        return {}
    level = call.thinking_level()
    on = level != "off"
    effort = (call.level_value(level) or level) if on else None
    efforts = {"reasoning_effort": effort} if on and switches.supports_reasoning_effort else {}
    match switches.thinking_format:
        case "zai":
            return {"thinking": {"type": "enabled", "clear_thinking": False} if on else {"type": "disabled"}, **efforts}
        case "qwen":
            return {"enable_thinking": on, **efforts}
        case "qwen-chat-template":
            return {"chat_template_kwargs": {"enable_thinking": on, "preserve_thinking": True}}
        case "openrouter":
            if on:
                return {"reasoning": {"effort": effort}}
            if "off" in supported_levels(info):  # a model that cannot stop reasoning gets no field
                return {"reasoning": {"effort": call.level_value("off") or "none"}}
            return {}
    # OpenAI's reasoning_effort, also for the formats of pi's that this server does not speak.
    off = call.level_value("off")
    if not on and off is not None and switches.supports_reasoning_effort:
        return {"reasoning_effort": off}
    return efforts


def _routing(call: Call) -> dict[str, Any]:
    """OpenRouter's and Vercel AI Gateway's provider routing, from the model's own compat."""
    url, chosen = call.model.info.base_url, call.model.compat
    out: dict[str, Any] = {}
    if "openrouter.ai" in url and isinstance(routing := chosen.get("openRouterRouting"), Mapping):
        out["provider"] = dict(routing)
    if "ai-gateway.vercel.sh" in url and isinstance(routing := chosen.get("vercelGatewayRouting"), Mapping):
        gateway = {key: routing[key] for key in ("only", "order") if routing.get(key) is not None}
        if gateway:
            out["providerOptions"] = {"gateway": gateway}
    return out


def _tool(name: str, description: str, parameters_json: str, switches: Compat) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": name,
        "description": description,
        "parameters": json.loads(parameters_json or "{}"),
    }
    if switches.supports_strict_mode:
        function["strict"] = False
    return {"type": "function", "function": function}


def _has_tool_history(messages: Sequence[AgentMessage]) -> bool:
    for message in messages:
        if message.tool_result is not None:
            return True
        if message.assistant is not None and any(block.tool_call is not None for block in message.assistant.content):
            return True
    return False


def _cache_control(call: Call, switches: Compat, out: dict[str, Any]) -> None:
    """Anthropic's cache marks, for servers of its cache_control format (Claude through
    OpenRouter): on the system prompt, the last tool and the last text of the conversation, as
    pi's applyAnthropicCacheControl; one hour with long retention the server keeps."""
    retention = call.cache_retention()
    if switches.cache_control_format != "anthropic" or retention == CacheRetention.NONE:
        return
    mark: dict[str, str] = {"type": "ephemeral"}
    if retention == CacheRetention.LONG and switches.supports_long_cache_retention:
        mark["ttl"] = "1h"
    messages: list[dict[str, Any]] = out["messages"]
    prompt = next((message for message in messages if message["role"] in ("system", "developer")), None)
    if prompt is not None:
        _mark_text(prompt, mark)
    if out.get("tools"):
        out["tools"][-1]["cache_control"] = mark
    for message in reversed(messages):
        if message["role"] in ("user", "assistant", "tool") and _mark_text(message, mark):
            return


def _mark_text(message: dict[str, Any], mark: dict[str, str]) -> bool:
    """Mark the message's last text part (a text content becomes one); False when it has none."""
    content = message["content"]
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": mark}]
        return True
    for part in reversed(content if isinstance(content, list) else []):
        if part.get("type") == "text":
            part["cache_control"] = mark
            return True
    return False


def normalize_id(call: Call) -> Callable[[str], str]:
    """pi's tool call id rewrite for this API: OpenAI Responses ids (`call|item`) keep their call
    part, cleaned and cut to 40 characters; OpenAI itself takes at most 40 characters."""

    def rewrite(call_id: str) -> str:
        if "|" in call_id:
            head = call_id.split("|", 1)[0]
            return "".join(char if char.isascii() and (char.isalnum() or char in "_-") else "_" for char in head)[:40]
        return call_id[:40] if call.model.info.provider == "openai" else call_id

    return rewrite


def _messages(call: Call, switches: Compat) -> list[dict[str, Any]]:
    info = call.model.info
    out: list[dict[str, Any]] = []
    if call.resolved.system_prompt:
        role = "developer" if info.reasoning and switches.supports_developer_role else "system"
        out.append({"role": role, "content": call.resolved.system_prompt})
    messages = transform_messages(call.resolved.messages, info, normalize_id(call))
    last_role: str | None = None
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if switches.requires_assistant_after_tool_result and last_role == "tool" and message.user is not None:
            out.append({"role": "assistant", "content": BRIDGE})
        if (user := message.user) is not None:
            parts = [part for part in _parts(user.content, call) if part.get("text") != ""]  # pi drops empty texts
            if not parts:
                continue
            out.append({"role": "user", "content": parts})
            last_role = "user"
        elif (assistant := message.assistant) is not None:
            turn = _assistant(assistant.content, switches)
            if turn is None:
                continue
            out.append(turn)
            last_role = "assistant"
        elif (result := message.tool_result) is not None:
            results = [result]
            while index < len(messages) and (more := messages[index].tool_result) is not None:
                results.append(more)
                index += 1
            last_role = _tool_results(results, call, switches, out)
    return out


def _parts(content: Sequence[UserContent | ToolResultContent], call: Call) -> list[dict[str, Any]]:
    """Text and image parts; images only for a model that takes them."""
    parts: list[dict[str, Any]] = []
    for block in content:
        if (plain := block.text) is not None:
            parts.append({"type": "text", "text": plain.text})
        elif (image := block.image) is not None and InputKind.IMAGE in call.model.info.input:
            data = base64.b64encode(image.data).decode("ascii")
            parts.append({"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{data}"}})
    return parts


def _assistant(content: Sequence[AssistantContent], switches: Compat) -> dict[str, Any] | None:
    """An assistant turn as pi sends it, or None when it has nothing to send."""
    turn: dict[str, Any] = {
        "role": "assistant",
        "content": "" if switches.requires_assistant_after_tool_result else None,
    }
    texts = [block.text.text for block in content if block.text is not None and block.text.text.strip()]
    if texts:
        turn["content"] = "".join(texts)
    thoughts = [block.thinking for block in content if block.thinking is not None and block.thinking.thinking.strip()]
    if thoughts and switches.requires_thinking_as_text:
        # pi 0.63 fails here when the turn also has text (it unshifts into a string); we put the
        # reasoning first as pi did when text went as parts.
        parts = [{"type": "text", "text": "\n\n".join(thought.thinking for thought in thoughts)}]
        turn["content"] = parts + ([{"type": "text", "text": turn["content"]}] if texts else [])
    elif thoughts and thoughts[0].thinking_signature in REASONING_FIELDS:
        # The field the server sent the reasoning in (its signature). pi writes any signature as a
        # field name; we take only reasoning fields, so a signature cannot overwrite `tool_calls`.
        turn[thoughts[0].thinking_signature] = "\n".join(thought.thinking for thought in thoughts)
    calls = [block.tool_call for block in content if block.tool_call is not None]
    if calls:
        turn["tool_calls"] = [
            {
                "id": tool.id,
                "type": "function",
                "function": {"name": tool.name, "arguments": dump_json(tool_call_arguments(tool))},
            }
            for tool in calls
        ]
        details = [_json(tool.thought_signature) for tool in calls if tool.thought_signature]
        if any(details):
            turn["reasoning_details"] = [detail for detail in details if detail]
    if not turn["content"] and not calls:
        return None  # servers refuse an assistant turn with neither content nor tool calls
    return turn


def _json(text: str | None) -> Any:
    try:
        return json.loads(text or "")
    except ValueError:
        return None


def _tool_results(results: list[ToolResultMessage], call: Call, switches: Compat, out: list[dict[str, Any]]) -> str:
    """Consecutive tool results as `tool` messages; their images follow in one user turn, since a
    tool message holds only text. Returns the role the transcript ends with."""
    images: list[dict[str, Any]] = []
    for result in results:
        message = {"role": "tool", "content": tool_result_text(result), "tool_call_id": result.tool_call_id}
        if switches.requires_tool_result_name and result.tool_name:
            message["name"] = result.tool_name
        out.append(message)
        images += [part for part in _parts(result.content, call) if part["type"] == "image_url"]
    if not images:
        return "tool"
    if switches.requires_assistant_after_tool_result:
        out.append({"role": "assistant", "content": BRIDGE})
    out.append({"role": "user", "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, *images]})
    return "user"


# --- errors -------------------------------------------------------------------------------------------


@describing
def describe(error: BaseException, model: ModelConfig) -> str:
    """What went wrong, in words for the client (the model's secrets are scrubbed after)."""
    if isinstance(error, openai.APIStatusError):
        kind, message = _detail(model, error.body, error.message, error.status_code)
        return f"the provider answered {error.status_code}{f' {kind}' if kind else ''}: {message}"
    if isinstance(error, openai.APIConnectionError):
        return f"cannot reach the provider: {error.__cause__ or error}"
    if isinstance(error, openai.APIError):  # an error object in the middle of the stream
        kind, message = _detail(model, error.body, error.message)
        return f"the provider failed mid-stream{f' with {kind}' if kind else ''}: {message}"
    if isinstance(error, httpx2.HTTPError):
        return f"the connection to the provider broke: {error}"
    return f"{type(error).__name__}: {error}"


def _detail(model: ModelConfig, body: object, fallback: str, status: int | None = None) -> tuple[str, str]:
    """The kind ("type (code)") and message of an error body: OpenAI's `error` object (the SDK
    unwraps it), vLLM's top-level one, or a bare string. OpenRouter's `metadata.raw`, the upstream
    provider's own error, follows the message on a line of its own, as pi adds it. A code that
    repeats the HTTP status is left out. Each text of the provider's is quoted (scrubbed, then cut)."""
    if not isinstance(body, dict):
        return "", quote(model, body if isinstance(body, str) else fallback)
    message = body.get("message")
    message = quote(model, message if isinstance(message, str) else fallback)
    metadata = body.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    if raw:
        message += "\n" + quote(model, raw if isinstance(raw, str) else dump_json(raw))
    kind, code = body.get("type"), body.get("code")
    names = [str(kind)] if kind else []
    if code is not None and str(code) not in (str(kind), str(status)):
        names.append(f"({code})" if names else str(code))
    return " ".join(names), message
