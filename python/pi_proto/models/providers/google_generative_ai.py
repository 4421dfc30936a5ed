"""google-generative-ai: the Gemini API, through the official `google-genai` SDK.

The mapping is pi-ai's (packages/ai/src/providers/google.ts and google-shared.ts): streamed parts
become blocks as they come — text, thoughts (`thought: true`) as thinking, function calls whole
(start, one delta with their arguments, end) — and a part's thought signature stays with its block
(thinking signature, text signature, or the tool call's thought signature). Usage is the latest
chunk's: prompt tokens less cached ones as input, candidate and thought tokens as output, cached
tokens as cache read. Finish reasons STOP → STOP and MAX_TOKENS → LENGTH; any other is an error,
and a turn with a function call is TOOL_USE. Reasoning takes pi's level clamped to the model's
thinkingLevelMap and resolved through it to a Gemini level: as a thinking level on Gemini 3 and
later and Gemma 4, as a token budget on the others; a call that asks for none turns thinking off,
or, for a model that cannot stop, down to its lowest level. Like pi's, the request takes no cache
retention, session id, metadata, sampling parameters or timeout. As pi 1.6 does, the message keeps
the first response id of the stream, the finish reason as Gemini wrote it, and the thought tokens
as the reasoning tokens.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
from collections.abc import AsyncGenerator, Sequence
from typing import Any, cast

import httpx2
from google import genai
from google.genai import errors, types

from ..._gen.types.pi.ai.v1 import (
    AssistantMessage,
    InputKind,
    StopReason,
    ToolChoiceMode,
    ToolResultMessage,
    UserContent,
)
from ...ir.messages import dump_json, tool_call_arguments
from .call import Call, ProviderError, RetryLater, clamp_level, quote, retry_after
from .catalog import ModelConfig
from .http import describing, http_client
from .transform import same_model, transform_messages

RETRYABLE = (429, 500, 502, 503, 504)
FINISH_REASONS = {"STOP": StopReason.STOP, "MAX_TOKENS": StopReason.LENGTH}  # any other is an error
# Gemini accepts this in place of a thought signature on a function call it did not sign
# (https://ai.google.dev/gemini-api/docs/thought-signatures); Gemini 3 requires one on every call.
SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator"
GEMINI_LEVELS = ("minimal", "low", "medium", "high")  # what a model's level may resolve to
# Token budgets of the Gemini 2.5 models, first match wins; other models think as much as they need (-1).
THINKING_BUDGETS = (
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)
FLASH_LATEST = ("gemini-flash-latest", "gemini-flash-lite-latest")  # aliases of Gemini 3 Flash models
FUNCTION_CALLING_MODES = {
    ToolChoiceMode.AUTO: "AUTO",
    ToolChoiceMode.NONE: "NONE",
    ToolChoiceMode.REQUIRED: "ANY",
    ToolChoiceMode.TOOL: "ANY",
}
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


async def stream(call: Call) -> None:
    """Run one streamGenerateContent call and tell `call` what it streams."""
    if not call.model.api_key:
        raise ProviderError(f"no API key for provider {call.model.info.provider!r}")
    request = params(call)
    # Our own httpx2 client: the SDK would switch to aiohttp whenever it is installed, and that path
    # retries failed connections itself; run() is the one that retries.
    http = http_client(call, gemini=True)
    client = genai.Client(vertexai=False, api_key=call.model.api_key, http_options=_http_options(call, http))
    await respond(call, client, http, request)


async def respond(call: Call, client: genai.Client, http: httpx2.AsyncClient, request: dict[str, Any]) -> None:
    """Send `request` with `client` over `http` (both closed after, also when cancelled) and read
    its stream into `call`."""
    try:
        opened = await client.aio.models.generate_content_stream(**request)
        chunks = cast(AsyncGenerator[types.GenerateContentResponse], opened)
        async with contextlib.aclosing(chunks):
            try:  # the SDK sends the request when the stream is first read
                first = await anext(chunks, None)
            except errors.APIError as error:
                if error.code in RETRYABLE:
                    raise RetryLater(_retry_delay(error), describe(error, call.model)) from None
                raise
            if first is None:
                raise call.no_events()
            await call.start()
            reader = _Reader(call)
            try:
                await reader.apply(first)
                async for chunk in chunks:
                    await reader.apply(chunk)
            except errors.APIError as error:  # an `error` object in place of a chunk
                raise ProviderError(f"the provider failed mid-stream with {_status(error, call.model)}") from None
            await reader.close()
    finally:
        await http.aclose()  # also when cancelled: the provider sees the connection close
        client.close()


def _http_options(call: Call, http: httpx2.AsyncClient) -> types.HttpOptions:
    headers = call.headers()
    if call.model.auth_header:
        headers = {"Authorization": f"Bearer {call.model.api_key}", **headers}
    # pi's base URLs carry the API version (…/v1beta), so the SDK must not add one.
    return types.HttpOptions(
        base_url=call.model.info.base_url, api_version="", headers=headers, httpx_async_client=http
    )


class _Reader:
    """One stream's open text or thinking block (kind, our index, its signature so far), and the
    tool call ids given out."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.block: tuple[str, int] | None = None
        self.signature: str | None = None
        self.ids: set[str] = set()

    async def apply(self, chunk: types.GenerateContentResponse) -> None:
        call = self.call
        if not call.events.partial.response_id and chunk.response_id:
            call.set_response(response_id=chunk.response_id)
        candidate = chunk.candidates[0] if chunk.candidates else None
        parts = candidate.content.parts if candidate is not None and candidate.content is not None else None
        for part in parts or []:
            if part.text is not None:
                await self._text(part.text, part.thought is True, _signature_text(part.thought_signature))
            if part.function_call is not None:
                await self._function_call(part.function_call, _signature_text(part.thought_signature))
        if candidate is not None and candidate.finish_reason is not None:
            self._finish(_enum_text(candidate.finish_reason))
        if (feedback := chunk.prompt_feedback) is not None and feedback.block_reason is not None:
            # pi ends such a call with an empty STOP; the model never saw the prompt, so we say so.
            call.stop_reason = StopReason.ERROR
            reason = f"the provider blocked the prompt ({_enum_text(feedback.block_reason)})"
            call.refusal = f"{reason}: {feedback.block_reason_message}" if feedback.block_reason_message else reason
        if (usage := chunk.usage_metadata) is not None:
            cached = usage.cached_content_token_count or 0
            call.set_usage(
                input=(usage.prompt_token_count or 0) - cached,
                output=(usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0),
                cache_read=cached,
                reasoning=usage.thoughts_token_count or 0,
            )

    async def close(self) -> None:
        """The stream ended: close the block still open."""
        if self.block is not None:
            kind, index = self.block
            if kind == "text":
                await self.call.close_text(index, self.signature)
            else:
                await self.call.close_thinking(index, self.signature)
            self.block, self.signature = None, None

    async def _text(self, text: str, thought: bool, signature: str | None) -> None:
        kind = "thinking" if thought else "text"
        if self.block is None or self.block[0] != kind:
            await self.close()
            index = await (self.call.open_thinking() if thought else self.call.open_text())
            self.block = (kind, index)
        # Some backends sign only the first part of a block: a later unsigned part keeps the signature.
        self.signature = signature or self.signature
        if thought:
            await self.call.thinking(self.block[1], text)
        else:
            await self.call.text(self.block[1], text)

    async def _function_call(self, function: types.FunctionCall, signature: str | None) -> None:
        await self.close()
        name = function.name or ""
        call_id = function.id
        if not call_id or call_id in self.ids:
            # pi names it `<name>_<Date.now()>_<counter>`; the call's clock and a per-call counter
            # keep the id the same on every replay of a recording.
            call_id = f"{name}_{self.call.clock()}_{len(self.ids) + 1}"
        self.ids.add(call_id)
        index = await self.call.open_tool_call(call_id, name)
        await self.call.tool_arguments(index, dump_json(function.args or {}))
        await self.call.close_tool_call(index, thought_signature=signature)

    def _finish(self, reason: str) -> None:
        call = self.call
        call.set_response(raw_stop_reason=reason)
        call.stop_reason = FINISH_REASONS.get(reason, StopReason.ERROR)
        if call.stop_reason == StopReason.ERROR:
            call.refusal = f"the model stopped with finish reason {reason!r}"
        if any(block.tool_call is not None for block in call.events.partial.content):
            call.stop_reason = StopReason.TOOL_USE


def _signature_text(signature: bytes | None) -> str | None:
    """A thought signature as the API writes it (standard base64); the SDK hands it over decoded."""
    return base64.b64encode(signature).decode("ascii") if signature else None


def _enum_text(value: Any) -> str:
    return str(value.value if hasattr(value, "value") else value)


Budgets = tuple[tuple[str, dict[str, int]], ...]


def params(call: Call, budgets: Budgets = THINKING_BUDGETS) -> dict[str, Any]:
    """The SDK's generate_content_stream arguments for a call, as pi's buildParams makes them
    (with the API's table of thinking `budgets`); the call's provider options go on top of the
    request body."""
    info = call.model.info
    options = call.options
    config: dict[str, Any] = {"max_output_tokens": call.max_tokens()}  # pi sends it always, 0 too
    if options.temperature is not None:
        config["temperature"] = options.temperature
    if call.resolved.system_prompt:
        config["system_instruction"] = call.resolved.system_prompt
    if call.resolved.tools:
        config["tools"] = [
            {
                "function_declarations": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters_json_schema": json.loads(tool.parameters_json or "{}"),
                    }
                    for tool in call.resolved.tools
                ]
            }
        ]
        if (choice := options.tool_choice) is not None:
            calling: dict[str, Any] = {"mode": FUNCTION_CALLING_MODES[choice.mode]}
            if choice.mode == ToolChoiceMode.TOOL:  # pi has no named choice for Gemini; this is Gemini's
                calling["allowed_function_names"] = [choice.tool]
            config["tool_config"] = {"function_calling_config": calling}
    if info.reasoning:
        config["thinking_config"] = thinking_config(call, budgets)
    if provider_options := call.provider_options():
        config["http_options"] = {"extra_body": provider_options}
    return {"model": info.id, "contents": contents(call), "config": config}


def thinking_config(call: Call, budgets: Budgets = THINKING_BUDGETS) -> dict[str, Any]:
    """How much a reasoning model thinks, as pi 1.6's streamSimple picks it: the level clamped to
    the model's, resolved to a Gemini level, sent as a thinking level or a token budget."""
    info = call.model.info
    level = call.thinking_level()
    if level == "off":
        return _thinking_off(call)
    resolved = _gemini_level(call, level)
    if uses_thinking_level(info.id):
        return {"include_thoughts": True, "thinking_level": resolved.upper()}
    return {"include_thoughts": True, "thinking_budget": _budget(call, info.id, resolved, budgets)}


def _thinking_off(call: Call) -> dict[str, Any]:
    """No thinking: a budget of 0, or for a thinking-level model that cannot stop (its map makes
    off unsupported) the level off clamps to, as pi's getDisabledGoogleThinkingConfig."""
    info = call.model.info
    fallback = clamp_level(info, "off") if uses_thinking_level(info.id) else "off"
    if fallback == "off":
        return {"thinking_budget": 0}
    return {"thinking_level": _gemini_level(call, fallback).upper()}


def _gemini_level(call: Call, level: str) -> str:
    """The Gemini level of a pi level: the model's thinkingLevelMap value (in any case), else the
    level itself, as pi's resolveGoogleThinkingLevel; one Gemini does not have fails the call."""
    value = call.level_value(level)
    resolved = value.lower() if value is not None else level
    if resolved not in GEMINI_LEVELS:
        shown = f"the thinkingLevelMap value {value!r}" if value is not None else "no Gemini level"
        raise ProviderError(
            f"model {call.model.info.id!r} maps thinking level {level!r} to {shown}; "
            f"Gemini's levels are {', '.join(GEMINI_LEVELS)}"
        )
    return resolved


def uses_thinking_level(model_id: str) -> bool:
    """Whether the model takes Gemini's thinking level rather than a token budget (pi's
    usesGoogleThinkingLevel): Gemini 3 Pro and Flash, Gemini 4 and later, and Gemma 4."""
    name = model_id.lower()
    return bool(
        re.search(r"gemini-3(?:\.\d+)?-(?:pro|flash)", name)
        or re.search(r"gemini-(?:[4-9]|[1-9]\d)", name)
        or name in FLASH_LATEST
        or re.search(r"gemma-?4", name)
    )


def _budget(call: Call, model_id: str, level: str, budgets: Budgets) -> int:
    """The call's budget for the Gemini level, else the model's by pi's table, else -1 (the model's choice)."""
    given = call.options.thinking_budgets
    custom = getattr(given, level) if given is not None else None
    if custom is not None:
        return int(custom)
    return next((table[level] for name, table in budgets if name in model_id), -1)


def requires_tool_call_id(model_id: str) -> bool:
    """Whether the model behind this API takes tool call ids (Claude and gpt-oss do; Gemini does not)."""
    return model_id.startswith(("claude-", "gpt-oss-"))


def normalize_id(call_id: str) -> str:
    """A tool call id in the pattern of the models that take one: letters, digits, _ and -; at most 64."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", call_id)[:64]


def contents(call: Call) -> list[dict[str, Any]]:
    """The transcript as Gemini contents: user and model turns, tool results as function responses."""
    info = call.model.info
    out: list[dict[str, Any]] = []
    ids = requires_tool_call_id(info.id)
    for message in transform_messages(call.resolved.messages, info, normalize_id if ids else None):
        if (user := message.user) is not None:
            if parts := _user_parts(user.content, call):
                out.append({"role": "user", "parts": parts})
        elif (assistant := message.assistant) is not None:
            if parts := _model_parts(assistant, call):
                out.append({"role": "model", "parts": parts})
        elif (result := message.tool_result) is not None:
            _tool_result(out, result, call)
    return out


def _user_parts(content: Sequence[UserContent], call: Call) -> list[dict[str, Any]]:
    """Text and images; images only when the model takes them."""
    parts: list[dict[str, Any]] = []
    for block in content:
        if (plain := block.text) is not None:
            parts.append({"text": plain.text})
        elif (image := block.image) is not None and InputKind.IMAGE in call.model.info.input:
            parts.append({"inline_data": {"mime_type": image.mime_type, "data": image.data}})
    return parts


def _model_parts(message: AssistantMessage, call: Call) -> list[dict[str, Any]]:
    """An assistant turn as model parts; signatures go back only to the model that made them."""
    info = call.model.info
    own = same_model(message, info)
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if (plain := block.text) is not None:
            if plain.text.strip():
                parts.append({"text": plain.text, **_signed(own, plain.text_signature)})
        elif (thinking := block.thinking) is not None:
            if thinking.thinking.strip():  # only the model's own: transform_messages made others' text
                parts.append({"thought": True, "text": thinking.thinking, **_signed(own, thinking.thinking_signature)})
        elif (tool := block.tool_call) is not None:
            function: dict[str, Any] = {"name": tool.name, "args": tool_call_arguments(tool)}
            if requires_tool_call_id(info.id):
                function["id"] = tool.id
            signed = _signed(own, tool.thought_signature)
            if not signed and "gemini-3" in info.id.lower():
                signed = {"thought_signature": SKIP_THOUGHT_SIGNATURE}
            parts.append({"function_call": function, **signed})
    return parts


def _signed(own: bool, signature: str | None) -> dict[str, str]:
    """The thought signature to send back: only the model's own, and only valid base64 (the API
    takes bytes; anything else would fail the whole request)."""
    if not own or not signature or len(signature) % 4 or not _BASE64.fullmatch(signature):
        return {}
    try:
        canonical = base64.b64encode(base64.b64decode(signature)).decode("ascii") == signature
    except (binascii.Error, ValueError):
        return {}
    return {"thought_signature": signature} if canonical else {}


def _tool_result(out: list[dict[str, Any]], result: ToolResultMessage, call: Call) -> None:
    """A tool result as a function response, joined to the user turn of the results before it.

    Gemini 3 (and models that are not Gemini) take images inside the function response; older
    Gemini models get them in a user turn of their own after it.
    """
    info = call.model.info
    text = "\n".join(block.text.text for block in result.content if block.text is not None)
    images = [
        {"inline_data": {"mime_type": block.image.mime_type, "data": block.image.data}}
        for block in result.content
        if block.image is not None and InputKind.IMAGE in info.input
    ]
    value = text or ("(see attached image)" if images else "")
    response: dict[str, Any] = {"name": result.tool_name, "response": {"error" if result.is_error else "output": value}}
    version = re.match(r"gemini(?:-live)?-(\d+)", info.id.lower())
    nested = version is None or int(version.group(1)) >= 3
    if images and nested:
        response["parts"] = images
    if requires_tool_call_id(info.id):
        response["id"] = result.tool_call_id
    part = {"function_response": response}
    last = out[-1] if out else None
    if last is not None and last["role"] == "user" and any("function_response" in item for item in last["parts"]):
        last["parts"].append(part)
    else:
        out.append({"role": "user", "parts": [part]})
    if images and not nested:
        out.append({"role": "user", "parts": [{"text": "Tool result image:"}, *images]})


def _retry_delay(error: errors.APIError) -> float | None:
    """Seconds to wait: the Retry-After header, else the RetryInfo detail Gemini sends with a 429."""
    response = getattr(error, "response", None)
    if (seconds := retry_after(getattr(response, "headers", None))) is not None:
        return seconds
    body = error.details.get("error", {}) if isinstance(error.details, dict) else {}
    for detail in body.get("details", []) if isinstance(body, dict) else []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and (match := re.fullmatch(r"(\d+(?:\.\d+)?)s", delay)):
            return float(match.group(1))
    return None


def _status(error: errors.APIError, model: ModelConfig) -> str:
    message = quote(model, str(error.message or error.details))
    return f"{error.code} {error.status or type(error).__name__}: {message}"


@describing
def describe(error: BaseException, model: ModelConfig) -> str:
    """What went wrong, in words for the client (the model's secrets are scrubbed after)."""
    if isinstance(error, errors.APIError):
        return f"the provider answered {_status(error, model)}"
    if isinstance(error, httpx2.ConnectError):
        return f"cannot reach the provider: {error}"
    if isinstance(error, httpx2.HTTPError):
        return f"the connection to the provider broke: {error}"
    if isinstance(error, json.JSONDecodeError):
        return f"the provider sent a chunk that is not JSON: {error}"
    if isinstance(error, errors.UnknownApiResponseError) and isinstance(error.__cause__, json.JSONDecodeError):
        text = str(error.__cause__.doc)  # the SDK's message holds the whole chunk
        return f"the provider {model.info.provider!r} sent something that is not an event: {quote(model, text)}"
    return f"{type(error).__name__}: {error}"
