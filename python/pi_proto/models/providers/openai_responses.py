"""openai-responses: the OpenAI Responses API, through the official `openai` SDK.

The mapping is pi-ai's (packages/ai/src/providers/openai-responses.ts and
openai-responses-shared.ts): a reasoning item is a thinking block whose text is its streamed
summary parts (joined by a blank line) and whose signature is the whole reasoning item as JSON,
encrypted content included, so it can be replayed with `store: false`; a message item is a text
block whose signature is pi's TextSignatureV1, `{"v":1,"id":<item id>,"phase":<phase>}` (the
phase, commentary or final_answer, only where the item has one), so a replay gives the item back
its id and phase; a function call is a tool call with the id `<call_id>|<item id>`, whose
arguments stream as deltas. Usage comes with the final response:
input is input_tokens less the cached tokens, which are the cache read. The status gives the stop
reason: completed → STOP (TOOL_USE when the turn has tool calls), incomplete for max_output_tokens
→ LENGTH, failed and cancelled → ERROR. Reasoning levels, clamped to the model's thinkingLevelMap,
are efforts (the map's value, else the level's name) with an automatic summary, and no level is
the map's "off" (else "none") where the model can stop reasoning; the session id is the prompt
cache key and session headers, and long cache retention asks for 24 hours (or, for models of the
explicit cache mode, 30 minutes); a tool result's images go inside its function call output. As
pi 1.6 does, the message keeps the response's id, its status as the raw stop reason
(`incomplete.<reason>` for an incomplete one) and the reasoning tokens of its usage.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import httpx2
import openai

from ..._gen.types.pi.ai.v1 import (
    AssistantMessage,
    CacheRetention,
    Cost,
    InputKind,
    Model,
    StopReason,
    ToolChoiceMode,
    ToolResultContent,
    ToolResultMessage,
    UserContent,
)
from ...ir.messages import tool_call_arguments
from .call import Call, ProviderError, RetryLater, quote, retry_after, supported_levels
from .catalog import ModelConfig
from .http import describing, http_client
from .transform import tool_result_text, transform_messages

RETRYABLE = (429, 500, 502, 503, 504)
# Providers whose Responses tool call ids pi rewrites when another model wrote them.
OPENAI_TOOL_CALL_PROVIDERS = ("openai", "openai-codex", "opencode")
# pi's service tier pricing: flex costs half, priority twice the model's rates.
TIER_COST = {"flex": 0.5, "priority": 2.0}
ID_LIMIT = 64  # OpenAI's longest item and call id, and prompt cache key
MIN_OUTPUT_TOKENS = 16  # OpenAI refuses a max_output_tokens below it; pi asks for at least this
PHASES = ("commentary", "final_answer")  # the phases of a message item pi keeps in its signature


async def stream(call: Call) -> None:
    """Run one Responses call and tell `call` what it streams."""
    request = body(call)
    client = openai.AsyncOpenAI(
        api_key=call.model.api_key or None,
        base_url=call.model.info.base_url,
        max_retries=0,  # run() retries, within max_retry_delay_ms
        default_headers=call.headers(session_headers(call)),
        http_client=http_client(call),
    )
    await respond(call, client, request)


async def respond(call: Call, client: openai.AsyncOpenAI, request: dict[str, Any]) -> None:
    """Send `request` with `client` (closed after, also when cancelled) and read its stream into `call`."""
    try:
        try:
            typed = {name: request.pop(name) for name in ("model", "input")}
            # The rest goes as it is, so provider options may carry fields the SDK does not type.
            events = await client.responses.create(**typed, stream=True, extra_body=request)
        except openai.APIStatusError as error:
            if error.status_code in RETRYABLE:
                raise RetryLater(retry_after(error.response.headers), describe(error, call.model)) from None
            raise
        await call.start()
        reader = _Reader(call, request.get("service_tier"))
        async with events:
            try:
                async for event in events:
                    await reader.apply(event)
            except openai.APIConnectionError as error:  # the SDK wraps a broken stream as well
                if isinstance(error, openai.APITimeoutError) or isinstance(error.__cause__, ProviderError):
                    raise  # ours, or our idle timeout: run words it
                raise ProviderError(f"the connection to the provider broke: {error.__cause__ or error}") from None
        if not reader.events:
            raise call.no_events()
    finally:
        await client.close()  # also when cancelled: the provider sees the connection close


class _Reader:
    """One stream's state: the output item being streamed and the content block it feeds."""

    def __init__(self, call: Call, service_tier: Any) -> None:
        self.call = call
        self.service_tier = service_tier if isinstance(service_tier, str) else None
        self.item: str | None = None  # the current item's type: reasoning, message or function_call
        self.index = -1  # its content block
        self.summary_parts = 0  # reasoning summary parts begun
        self.parts: list[str] = []  # the message's content part types: output_text or refusal
        self.tool_calls = 0
        self.events = 0

    async def apply(self, event: Any) -> None:
        call, kind = self.call, event.type
        self.events += 1
        if kind == "response.created":
            call.set_response(response_id=event.response.id)
        elif kind == "response.output_item.added":
            await self._open(event.item)
        elif kind == "response.output_item.done":
            await self._close(event.item)
        elif kind == "response.reasoning_summary_part.added" and self.item == "reasoning":
            if self.summary_parts:  # pi joins summary parts with a blank line
                await call.thinking(self.index, "\n\n")
            self.summary_parts += 1
        elif kind == "response.reasoning_summary_text.delta" and self.item == "reasoning" and self.summary_parts:
            await call.thinking(self.index, event.delta)
        elif kind == "response.content_part.added" and self.item == "message":
            if event.part.type in ("output_text", "refusal"):  # reasoning text parts are not the answer
                self.parts.append(event.part.type)
        elif kind in ("response.output_text.delta", "response.refusal.delta") and self.item == "message":
            part = "output_text" if kind == "response.output_text.delta" else "refusal"
            if self.parts and self.parts[-1] == part:  # a refusal's words are the text, as in pi
                await call.text(self.index, event.delta)
        elif kind == "response.function_call_arguments.delta" and self.item == "function_call":
            await self._arguments(event.delta)
        elif kind == "response.function_call_arguments.done" and self.item == "function_call":
            streamed = self._streamed()
            if event.arguments.startswith(streamed):  # what the deltas left out, if anything
                await self._arguments(event.arguments[len(streamed) :])
        elif kind in ("response.completed", "response.incomplete"):
            self._finish(event.response)
        elif kind == "response.failed":
            call.set_response(raw_stop_reason=event.response.status)
            error = event.response.error
            detail = f"{error.code}: {error.message}" if error is not None else "no error details"
            raise ProviderError(f"the response failed with {detail}")
        elif kind == "error":
            raise ProviderError(f"the provider failed mid-stream with {event.code or 'an error'}: {event.message}")

    async def _open(self, item: Any) -> None:
        call = self.call
        self.item = item.type if item.type in ("reasoning", "message", "function_call") else None
        if item.type == "reasoning":
            self.index, self.summary_parts = await call.open_thinking(), 0
        elif item.type == "message":
            self.index, self.parts = await call.open_text(), []
        elif item.type == "function_call":
            self.index = await call.open_tool_call(f"{item.call_id}|{item.id}", item.name)
            self.tool_calls += 1
            await self._arguments(item.arguments or "")

    async def _close(self, item: Any) -> None:
        call = self.call
        if item.type != self.item:
            return
        self.item = None
        if item.type == "reasoning":  # the whole item is what replays it, encrypted content included
            await call.close_thinking(self.index, _compact(item.to_dict(mode="json")))
        elif item.type == "message":
            await call.close_text(self.index, text_signature(item.id, getattr(item, "phase", None)))
        else:
            if not self._streamed():  # arguments sent whole with the item, without deltas
                await self._arguments(item.arguments or "")
            await call.close_tool_call(self.index)

    def _streamed(self) -> str:
        """The function call's arguments so far: the partial's, not a copy kept at every delta."""
        tool_call = self.call.events.partial.content[self.index].tool_call
        return (tool_call.raw_arguments if tool_call is not None else None) or ""

    async def _arguments(self, delta: str) -> None:
        await self.call.tool_arguments(self.index, delta)

    def _finish(self, response: Any) -> None:
        """The final response: its usage, priced for its service tier, and its stop reason."""
        call = self.call
        call.set_response(response_id=response.id or None, raw_stop_reason=_raw_stop_reason(response))
        if (usage := response.usage) is not None:
            details = usage.input_tokens_details
            cached = (details.cached_tokens if details is not None else 0) or 0
            output_details = usage.output_tokens_details
            call.set_usage(
                input=(usage.input_tokens or 0) - cached,
                output=usage.output_tokens or 0,
                cache_read=cached,
                reasoning=(output_details.reasoning_tokens if output_details is not None else 0) or 0,
            )
            _price_tier(call, response.service_tier or self.service_tier)
        call.stop_reason = _stop_reason(call, response)
        if call.stop_reason == StopReason.STOP and self.tool_calls:
            call.stop_reason = StopReason.TOOL_USE


def _raw_stop_reason(response: Any) -> str | None:
    """The status, with the reason of an incomplete response after a dot, as pi writes it."""
    if response.status is None:
        return None
    details = response.incomplete_details
    reason = details.reason if details is not None else None
    return f"{response.status}.{reason}" if isinstance(reason, str) and reason else str(response.status)


def _stop_reason(call: Call, response: Any) -> StopReason:
    status = response.status
    if status in (None, "completed", "in_progress", "queued"):
        return StopReason.STOP
    if status == "incomplete":
        details = response.incomplete_details
        reason = details.reason if details is not None else None
        if reason in (None, "max_output_tokens"):
            return StopReason.LENGTH
        # pi calls every incomplete response LENGTH; a content filter did not run out of tokens.
        call.refusal = f"the response is incomplete: {reason}"
        return StopReason.ERROR
    if status in ("failed", "cancelled"):
        call.refusal = f"the response ended with status {status!r}"
        return StopReason.ERROR
    raise ProviderError(f"the provider ended with a status pi does not know: {status!r}")


def _price_tier(call: Call, tier: str | None) -> None:
    """pi's service tier pricing: each part of the cost times the tier's factor, then their sum."""
    factor = TIER_COST.get(tier or "")
    cost = call.usage.cost
    if factor is None or cost is None:
        return
    parts = [(part or 0) * factor for part in (cost.input, cost.output, cost.cache_read, cost.cache_write)]
    call.usage.cost = Cost(
        input=parts[0],
        output=parts[1],
        cache_read=parts[2],
        cache_write=parts[3],
        total=sum(parts, 0.0),
        total_from_provider=cost.total_from_provider,  # still the catalog's estimate, as pi keeps it
    )


def text_signature(item_id: str, phase: str | None) -> str:
    """pi's TextSignatureV1 of a message item: its id, and its phase where it has one."""
    signature: dict[str, Any] = {"v": 1, "id": item_id}
    if phase:
        signature["phase"] = phase
    return _compact(signature)


def read_text_signature(signature: str | None) -> tuple[str, str | None]:
    """The message item id and phase of a text signature, as pi's parseTextSignature reads it: a
    TextSignatureV1 (a phase pi does not know is dropped), or an older bare id; ("", None) for none."""
    if not signature:
        return "", None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in PHASES else None
    return signature, None


def _compact(value: Any) -> str:
    """JSON as JavaScript's JSON.stringify writes it: no spaces, characters as they are."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --- the request ---------------------------------------------------------------------------------


def body(
    call: Call,
    *,
    model: str | None = None,
    prompt_cache: dict[str, Any] | None = None,
    tool_call_providers: tuple[str, ...] = OPENAI_TOOL_CALL_PROVIDERS,
    strict_mode: bool = False,
) -> dict[str, Any]:
    """The Responses request body for a call, as pi's buildParams makes it; the call's provider
    options go on top. Azure's variant (azure_openai_responses) names its deployment as the
    `model`, has its own `prompt_cache` fields and `tool_call_providers`, and marks tools strict
    by default (`strict_mode`, compat.supportsStrictMode)."""
    info = call.model.info
    options = call.options
    out: dict[str, Any] = {
        "model": model or info.id,
        "input": _input(call, tool_call_providers),
        "store": False,  # nothing is kept at OpenAI: reasoning replays from its encrypted content
        **(_prompt_cache(call) if prompt_cache is None else prompt_cache),
    }
    if (max_tokens := call.max_tokens()) and call.switch("supportsMaxOutputTokens", True):
        out["max_output_tokens"] = max(max_tokens, MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        out["temperature"] = options.temperature
    if call.resolved.tools:
        # pi sends `strict` only where the model takes it, and then false: schemas stay as written.
        strict = {"strict": False} if call.switch("supportsStrictMode", strict_mode) else {}
        out["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": json.loads(tool.parameters_json or "{}"),
                **strict,
            }
            for tool in call.resolved.tools
        ]
    if (choice := options.tool_choice) is not None:
        # pi's Responses provider takes no tool choice; we keep the caller's, in the API's form.
        out["tool_choice"] = {
            ToolChoiceMode.AUTO: "auto",
            ToolChoiceMode.NONE: "none",
            ToolChoiceMode.REQUIRED: "required",
            ToolChoiceMode.TOOL: {"type": "function", "name": choice.tool},
        }[choice.mode]
    out.update(_reasoning(call))
    out.update(call.sampling_params())  # last of pi's fields, so they override the named ones
    out.update(call.provider_options())
    return out


def session_headers(call: Call) -> dict[str, str]:
    """pi's session headers: the session id under the names of the server's format (OpenRouter's
    for openrouter.ai, else OpenAI's)."""
    session = call.cache_session_id()
    if session is None:
        return {}
    info = call.model.info
    detected = "openrouter" if info.provider == "openrouter" or "openrouter.ai" in info.base_url else "openai"
    kind = call.switch("sessionAffinityFormat", detected)
    if kind == "openrouter":
        return {"x-session-id": session}
    named = {"session-id": session} if kind == "openai" else {}
    return {**named, "x-client-request-id": session}


def _prompt_cache(call: Call) -> dict[str, Any]:
    """The session id as the prompt cache key (unless compat.promptCacheKeyMode is "disabled"),
    and long retention where the provider keeps it (compat.supportsLongCacheRetention, true unless
    set): 24 hours, or for models of the explicit cache mode 30 minutes; in that mode no
    retention asks for an explicit cache."""
    retention = call.cache_retention()
    session = call.options.session_id
    out: dict[str, Any] = {}
    if session and retention != CacheRetention.NONE and call.switch("promptCacheKeyMode", "auto") != "disabled":
        out["prompt_cache_key"] = session[:ID_LIMIT]
    long = call.long_retention(default=True)
    if not call.switch("supportsExplicitPromptCacheMode", False):
        if long:
            out["prompt_cache_retention"] = "24h"
    elif retention == CacheRetention.NONE:
        out["prompt_cache_options"] = {"mode": "explicit"}
    elif long:
        out["prompt_cache_options"] = {"ttl": "30m"}
    return out


def _reasoning(call: Call) -> dict[str, Any]:
    """A reasoning model's effort: the level clamped to the model's, as its thinkingLevelMap value
    (else the level's name) with an automatic summary; with none, the map's "off" (else "none")
    where the model can stop reasoning (Copilot takes no effort then)."""
    info = call.model.info
    if not info.reasoning:
        return {}
    out: dict[str, Any] = {}
    level = call.thinking_level()
    if level != "off":
        out["reasoning"] = {"effort": call.level_value(level) or level, "summary": "auto"}
        out["include"] = ["reasoning.encrypted_content"]
    elif info.provider != "github-copilot" and "off" in supported_levels(info):
        out["reasoning"] = {"effort": call.level_value("off") or "none"}
    if info.provider == "xai":  # xAI sends its encrypted reasoning only when asked
        out["include"] = ["reasoning.encrypted_content"]
    return out


def normalize_id(call_id: str) -> str:
    """A `<call_id>|<item id>` pair from another model in OpenAI's rules: letters, digits, _ and
    -, at most 64 characters without trailing _, and an item id starting with fc. Ids without a
    `|` (other APIs' own) are left as they are."""
    if "|" not in call_id:
        return call_id
    call_part, item_part = call_id.split("|")[:2]
    call_part = re.sub(r"[^a-zA-Z0-9_-]", "_", call_part)
    item_part = re.sub(r"[^a-zA-Z0-9_-]", "_", item_part)
    if not item_part.startswith("fc"):
        item_part = f"fc_{item_part}"
    return f"{call_part[:ID_LIMIT].rstrip('_')}|{item_part[:ID_LIMIT].rstrip('_')}"


def _input(call: Call, tool_call_providers: tuple[str, ...]) -> list[dict[str, Any]]:
    """The input items: the system prompt, then the transcript as pi's transformMessages leaves it
    (tool call ids of another model rewritten for `tool_call_providers`)."""
    info = call.model.info
    items: list[dict[str, Any]] = []
    if call.resolved.system_prompt:
        items.append({"role": "developer" if info.reasoning else "system", "content": call.resolved.system_prompt})
    rename: Callable[[str], str] | None = normalize_id if info.provider in tool_call_providers else None
    for position, message in enumerate(transform_messages(call.resolved.messages, info, rename)):
        if (user := message.user) is not None:
            if content := _content(user.content, call):
                items.append({"role": "user", "content": content})
        elif (assistant := message.assistant) is not None:
            items += _assistant(assistant, info, position)
        elif (result := message.tool_result) is not None:
            items.append(_tool_result(result, call))
    return items


def _content(content: Sequence[UserContent | ToolResultContent], call: Call) -> list[dict[str, Any]]:
    """Text and image parts; images are left out when the model takes none."""
    parts: list[dict[str, Any]] = []
    for block in content:
        if (plain := block.text) is not None:
            parts.append({"type": "input_text", "text": plain.text})
        elif (image := block.image) is not None and InputKind.IMAGE in call.model.info.input:
            data = base64.b64encode(image.data).decode("ascii")
            parts.append(
                {"type": "input_image", "detail": "auto", "image_url": f"data:{image.mime_type};base64,{data}"}
            )
    return parts


def _assistant(message: AssistantMessage, info: Model, position: int) -> list[dict[str, Any]]:
    """An assistant turn as output items: reasoning items back from their signatures, messages
    with their ids, function calls with the call id and item id of their tool call id."""
    # Another OpenAI model's function call ids were paired with its reasoning, which is gone.
    sibling = message.model != info.id and (message.provider, message.api) == (info.provider, info.api)
    items: list[dict[str, Any]] = []
    texts = 0  # the turn's text blocks so far
    for block in message.content:
        if (thinking := block.thinking) is not None:
            if thinking.thinking_signature:
                items.append(_reasoning_item(thinking.thinking_signature))
        elif (plain := block.text) is not None:
            message_id, phase = read_text_signature(plain.text_signature)
            if not message_id:
                # pi's id of the text's place: OpenAI refuses two items of one id
                message_id = f"msg_pi_{position}_{texts}" if texts else f"msg_pi_{position}"
            texts += 1
            reply: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": plain.text, "annotations": []}],
                "status": "completed",
                "id": _short_id(message_id),
            }
            if phase is not None:  # the model reads its own commentary apart from its answers
                reply["phase"] = phase
            items.append(reply)
        elif (tool := block.tool_call) is not None:
            call_id, *rest = tool.id.split("|")
            item_id = rest[0] if rest else None
            item: dict[str, Any] = {"type": "function_call", "call_id": call_id, "name": tool.name}
            if item_id and not (sibling and item_id.startswith("fc_")):
                item["id"] = item_id
            item["arguments"] = _compact(tool_call_arguments(tool))
            items.append(item)
    return items


def _reasoning_item(signature: str) -> dict[str, Any]:
    try:
        item = json.loads(signature)
    except ValueError:
        item = None
    if not isinstance(item, dict):
        raise ProviderError("a thinking signature of this model is not a reasoning item (JSON object)")
    return item


def _short_id(message_id: str) -> str:
    """A message item id OpenAI takes: one longer than it takes is hashed short."""
    if len(message_id) > ID_LIMIT:  # pi hashes with its own short hash; any stable short one will do
        return f"msg_{hashlib.sha256(message_id.encode()).hexdigest()[:24]}"
    return message_id


def _tool_result(result: ToolResultMessage, call: Call) -> dict[str, Any]:
    """A function call output, as pi's convertToolResultOutput makes it: the result's text, or,
    for a model that takes images and a result that has them, its text and images as input parts."""
    output: str | list[dict[str, Any]] = tool_result_text(result)
    images = [block for block in result.content if block.image is not None]
    if images and InputKind.IMAGE in call.model.info.input:
        text = "\n".join(block.text.text for block in result.content if block.text is not None)
        output = [{"type": "input_text", "text": text}] if text.strip() else []
        output += _content(images, call)
    return {"type": "function_call_output", "call_id": result.tool_call_id.split("|")[0], "output": output}


@describing
def describe(error: BaseException, model: ModelConfig) -> str:
    """What went wrong, in words for the client (the model's secrets are scrubbed after)."""
    if isinstance(error, openai.APIStatusError):
        detail = error.body if isinstance(error.body, dict) else {}  # the SDK unwraps {"error": ...}
        kind = detail.get("type") or type(error).__name__
        code = detail.get("code")
        label = f"{kind} ({code})" if code and code != kind else kind
        page = error.body if isinstance(error.body, str) else None  # a body that is not JSON, as sent
        message = quote(model, str(detail.get("message") or page or error.message))
        return f"the provider answered {error.status_code} {label}: {message}"
    if isinstance(error, openai.APIConnectionError):
        return f"cannot reach the provider: {error.__cause__ or error}"
    if isinstance(error, httpx2.HTTPError):
        return f"the connection to the provider broke: {error}"
    return f"{type(error).__name__}: {error}"
