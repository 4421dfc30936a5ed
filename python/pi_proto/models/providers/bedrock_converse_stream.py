"""bedrock-converse-stream: Amazon Bedrock's ConverseStream API, through aiobotocore (botocore on asyncio).

The mapping is pi-ai 1.6's (api/bedrock-converse-stream.js). The request: the prompt is one system
block; a user turn is its text and images (a turn without either reads "<empty>"); an assistant
turn is its text, toolUse blocks (the call's id and arguments, empty keys dropped) and
reasoningContent: reasoningText with its signature for Claude (unsigned reasoning goes back as
text), without one for other models, and redactedContent (the base64 signature decoded) for
redacted reasoning; tool results that follow each other are one user turn of toolResult blocks,
a Claude error result's images after them with a caption. Tool call ids from other providers are
rewritten to Bedrock's pattern. Where the model caches prompts (Claude 3.5 Haiku, 3.7 Sonnet, 4
and 5; any model with AWS_BEDROCK_FORCE_CACHE=1), a cachePoint follows the prompt and the last
user turn, for an hour with `long` retention (PI_CACHE_RETENTION=long where the call does not
say). Tools are toolSpecs, none for tool choice none; tool choice auto, any or a named tool. The
output limit is pi's (fitted into the context window) and the temperature is sent as given.
Reasoning goes in additionalModelRequestFields: for Claude 4.6 and later adaptive thinking at an
effort (the level's thinkingLevelMap value, else pi's; xhigh where the model has it), Opus 4.7
and later binding replayed thinking to its prompt; for older Claude models a token budget on top
of the output limit, with interleaved thinking; summarized display (GovCloud takes neither display
nor binding); a reasoning effort for OpenAI's GPT and gpt-oss models. No level sends no thinking
fields. The call's provider options are further Converse fields (guardrailConfig…).

The stream: text deltas open text blocks, reasoningContent deltas thinking blocks (the signature
arrives in deltas; redacted content makes the text pi's placeholder and, as base64, the
signature), contentBlockStart a tool call whose input streams as fragments. messageStop's stop
reason end_turn and stop_sequence → STOP, max_tokens and model_context_window_exceeded → LENGTH,
tool_use → TOOL_USE, any other (guardrail_intervened, content_filtered, malformed output) → ERROR,
kept as the raw stop reason. metadata's usage gives input, output, cache read and cache write
tokens, the hour's cache writes (cacheDetails) and Bedrock's total, which counts the cache. An
exception in the stream (throttling, model stream error, validation, internal server error,
service unavailable) ends the call with its type and message. A failed call keeps pi's
bedrock_response_failure diagnostic: the status, error code and request id that are known.

Credentials and region are read as pi reads them, each setting through ModelConfig.setting (the
model's own environment, else the process's): a Bedrock API key (the model's apiKey, else
AWS_BEARER_TOKEN_BEDROCK) as bearer auth; else AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with
AWS_SESSION_TOKEN) for SigV4, unless the model's own settings name an AWS_PROFILE; else the AWS
credential chain (AWS_PROFILE, the shared files, SSO, container and instance roles).
AWS_BEDROCK_SKIP_AUTH=1 signs with dummy keys, for proxies that need none. The region is an
inference profile ARN's, else AWS_REGION or AWS_DEFAULT_REGION, else a standard Bedrock endpoint's
(bedrock-runtime.<region>.amazonaws.com), else us-east-1, or the profile's own where AWS_PROFILE
is set; the model's baseUrl is the endpoint unless it is a standard one and a region or
AWS_PROFILE is configured. The catalog's and the call's headers are signed with the request,
except authorization, host and x-amz-* headers, which are the signature's.

aiobotocore sends through an HTTP session of ours, on httpx2, which bounds each call as http.py
bounds the other SDKs: the connect and idle timeouts, bodies decoded here (gzip, deflate) in
bounded pieces, an error body read in part with the secrets scrubbed, and the frame being read
counted toward the size limit, the SDK's decoder being handed whole frames only. A 2xx answer
must be an event stream (application/vnd.amazon.eventstream); anything else ends the call naming
what came instead. botocore makes one attempt; run() retries 429 and 5xx.
"""

from __future__ import annotations

import base64
import json
import os
import re
import ssl
import struct
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import botocore  # type: ignore[import-untyped]
import botocore.eventstream  # type: ignore[import-untyped]
import botocore.exceptions  # type: ignore[import-untyped]
import httpx2
from aiobotocore.awsrequest import AioAWSResponse  # type: ignore[import-untyped]
from aiobotocore.config import AioConfig  # type: ignore[import-untyped]
from aiobotocore.session import AioSession  # type: ignore[import-untyped]

from ..._gen.types.pi.ai.v1 import (
    AssistantContent,
    CacheRetention,
    Diagnostic,
    Model,
    StopReason,
    Strictness,
    TextContent,
    ToolChoiceMode,
    ToolResultContent,
    ToolResultMessage,
    Usage,
    UserContent,
    UserMessage,
)
from ...ir.cost import calculate_cost
from ...ir.messages import tool_call_arguments
from .call import Call, Kept, ProviderError, RetryLater, causes, quote, retry_after
from .catalog import ModelConfig
from .http import ENCODINGS, MAX_ERROR_BODY_BYTES, body_start, decoder, describing, timeouts
from .transform import transform_messages

STOP_REASONS = {
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "tool_use": StopReason.TOOL_USE,
}
RETRYABLE = (429, 500, 502, 503, 504)
# The exceptions ConverseStream's event stream may carry (its union's exception members).
STREAM_EXCEPTIONS = (
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
)
EVENT_STREAM = "application/vnd.amazon.eventstream"
EMPTY_TEXT = "<empty>"  # what pi sends for a turn or a tool result without text
REDACTED_THINKING = "[Reasoning redacted]"  # the text pi gives a redacted thinking block
ERROR_IMAGES = "(image attached after the tool results)"  # pi's words where a Claude error result had images
THINKING_DISPLAY = "summarized"
INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
THINKING_BINDING = "thinking-binding-controls-2026-08-01"
IMAGE_FORMATS = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}
# pi's efforts for budget-free Claude models, and for OpenAI's models on Bedrock.
CLAUDE_EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}
GPT_EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}
GPT_OSS_EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}
# The model families pi matches in a model's id and name (getModelMatchCandidates).
ADAPTIVE_FAMILIES = ("opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6", "sonnet-5", "haiku-5", "fable-5")
XHIGH_FAMILIES = ("opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "haiku-5", "fable-5")  # also block binding
CLAUDE_5_FAMILIES = ("fable-5", "opus-5", "sonnet-5", "haiku-5")
ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
STANDARD_ENDPOINT = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
SKIP_AUTH_KEYS = ("dummy-access-key", "dummy-secret-key")  # pi's, for proxies that check no signature
# What a bearer call gives botocore as keys: it signs nothing with them, and so looks for none in
# the credential chain (which can wait on an instance metadata service at every call).
UNUSED_KEYS = ("unused-with-bearer-auth", "unused-with-bearer-auth", None)
SHOWN_BYTES = 4096  # of a 2xx body that is not an event stream, read to quote its start
MIN_FRAME_BYTES = 16  # a frame's prelude and message CRC
MAX_DIAGNOSTIC_VALUE = 200  # pi drops longer header values from its diagnostics
FAILURE = "bedrock_response_failure"


# --- the target and the credentials -------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where a call goes and how it signs in, as pi resolves them: the region (None for the
    profile's own), the endpoint (None for the region's standard one), and one of a bearer token,
    access keys, or the credential chain with a profile (or none)."""

    region: str | None
    endpoint: str | None
    bearer: str | None = field(default=None, repr=False)
    keys: tuple[str, str, str | None] | None = field(default=None, repr=False)
    profile: str | None = None


def target(model: ModelConfig) -> Target:
    """The model's region, endpoint and credentials, from its settings."""
    info = model.info
    region = configured_region(model)
    # Whether a profile brings its own region: pi asks the process's environment alone.
    ambient_profile = bool(os.environ.get("AWS_PROFILE"))
    endpoint_region = standard_endpoint_region(info.base_url)
    explicit = endpoint_region is None or (region is None and not ambient_profile)
    if (arn := ARN_REGION.match(info.id)) is not None:
        region = arn[1]  # an inference profile's own region, whatever else is configured
    elif region is None and explicit and endpoint_region is not None:
        region = endpoint_region
    elif region is None and not ambient_profile:
        region = "us-east-1"
    endpoint = info.base_url if explicit else None
    skip_auth = model.setting("AWS_BEDROCK_SKIP_AUTH") == "1"
    profile = model.setting("AWS_PROFILE")
    bearer = model.api_key or model.setting("AWS_BEARER_TOKEN_BEDROCK")
    if bearer and not skip_auth:
        return Target(region, endpoint, bearer=bearer)
    if skip_auth:
        return Target(region, endpoint, keys=(*SKIP_AUTH_KEYS, None))
    key_id, secret = model.setting("AWS_ACCESS_KEY_ID"), model.setting("AWS_SECRET_ACCESS_KEY")
    # A profile the model's own settings name wins over access keys, as pi's scoped AWS_PROFILE does.
    if key_id and secret and not model.environment.get("AWS_PROFILE"):
        return Target(region, endpoint, keys=(key_id, secret, model.setting("AWS_SESSION_TOKEN")))
    return Target(region, endpoint, profile=profile)


def configured_region(model: ModelConfig) -> str | None:
    return model.setting("AWS_REGION") or model.setting("AWS_DEFAULT_REGION")


def standard_endpoint_region(base_url: str) -> str | None:
    """The region of a standard Bedrock runtime endpoint (bedrock-runtime.<region>.amazonaws.com)."""
    try:
        host = httpx2.URL(base_url).host
    except httpx2.InvalidURL:
        return None
    found = STANDARD_ENDPOINT.match(host.lower())
    return found[1] if found else None


_SESSIONS: dict[str | None, Any] = {}  # an AioSession per profile: making one reads botocore's data files


def _session(profile: str | None) -> Any:
    if profile not in _SESSIONS:
        _SESSIONS[profile] = AioSession(profile=profile)
    return _SESSIONS[profile]


# --- the call ------------------------------------------------------------------------------------


async def stream(call: Call) -> None:
    """Run one ConverseStream call and tell `call` what it streams."""
    message = call.events.partial  # a retry starts without the failure of the attempt before
    message.diagnostics = [diagnostic for diagnostic in message.diagnostics if diagnostic.type != FAILURE]
    request = body(call)
    where = target(call.model)
    config = AioConfig(
        retries={"total_max_attempts": 1},  # run() retries, within max_retry_delay_ms
        # Said, so that no bearer token in the process's environment overrides the choice.
        signature_version=botocore.UNSIGNED if where.bearer else "v4",
        http_session_cls=_session_class(call),  # which has our timeouts and bounds
    )
    keys = where.keys or (UNUSED_KEYS if where.bearer else (None, None, None))
    request_id = None
    try:
        async with _session(where.profile).create_client(
            "bedrock-runtime",
            region_name=where.region,
            endpoint_url=where.endpoint,
            aws_access_key_id=keys[0],
            aws_secret_access_key=keys[1],
            aws_session_token=keys[2],
            config=config,
        ) as client:  # closed also when cancelled: the provider sees the connection close
            _sign_with(client, call, where.bearer)
            try:
                response = await client.converse_stream(**request)
            except botocore.exceptions.ClientError as error:
                status = _status(error)
                if status in RETRYABLE:
                    raise RetryLater(retry_after(_headers(error)), describe(error, call.model)) from error
                raise
            request_id = _diagnostic_value(response.get("ResponseMetadata", {}).get("RequestId"))
            await call.start()
            reader = _Reader(call)
            async for event in response["stream"]:
                await reader.apply(event)
            await reader.finish()
    except RetryLater:
        raise  # run() may retry: the stream cannot open yet, and a failure recorded now would not last
    except Exception as error:  # not a cancel: that is no failure of the provider's
        await _record_failure(call, error, request_id)
        raise
    if call.stop_reason == StopReason.ERROR:  # the model stopped for a guardrail or a filter: the call fails
        await _record_failure(call, None, request_id)


def _sign_with(client: Any, call: Call, bearer: str | None) -> None:
    """Add the call's headers to the request before it is signed, and for a Bedrock API key its
    bearer authorization (as botocore's bearer auth writes it)."""
    headers = {name: value for name, value in call.headers().items() if not _reserved(name)}
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"

    def before_sign(request: Any, **_: Any) -> None:
        for name, value in headers.items():
            del request.headers[name]  # botocore's headers would keep both
            request.headers[name] = value

    client.meta.events.register("before-sign.bedrock-runtime.ConverseStream", before_sign)


def _reserved(name: str) -> bool:
    """Headers the signature owns, which no configured header replaces (as in pi)."""
    lower = name.lower()
    return lower in ("authorization", "host") or lower.startswith("x-amz-")


async def _record_failure(call: Call, error: BaseException | None, request_id: str | None) -> None:
    """pi's bedrock_response_failure diagnostic: the status, error code and request id that are known.
    The stream opens first, if it has not: its start would replace the message the diagnostic is on."""
    details: dict[str, Any] = {}
    chain = causes(error) if error is not None else iter(())
    client_error = next((cause for cause in chain if isinstance(cause, botocore.exceptions.ClientError)), None)
    if client_error is not None:
        if (status := _status(client_error)) is not None:
            details["status"] = status
        if (code := _diagnostic_value(_error_code(client_error))) is not None:
            details["errorCode"] = code
        metadata = client_error.response.get("ResponseMetadata", {})
        request_id = _diagnostic_value(metadata.get("RequestId")) or request_id
    if request_id is not None:
        details["requestId"] = request_id
    if details:
        if not call.started:
            await call.start()
        call.add_diagnostic(Diagnostic(type=FAILURE, timestamp=call.clock(), details_json=json.dumps(details)))


def _diagnostic_value(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > MAX_DIAGNOSTIC_VALUE:
        return None
    return value.strip()


def _status(error: Any) -> int | None:
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return status if isinstance(status, int) else None


def _headers(error: Any) -> dict[str, str]:
    headers = error.response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    return {str(name).lower(): str(value) for name, value in headers.items()}


def _error_code(error: Any) -> str:
    """The error's code as Bedrock names its exceptions (a stream's exception types start lower-case)."""
    code = str(error.response.get("Error", {}).get("Code") or "")
    return code[:1].upper() + code[1:]


# --- the stream ------------------------------------------------------------------------------------


@dataclass
class _Block:
    """A content block being streamed: its kind, our content index, and what it keeps until it ends."""

    kind: str  # text, thinking or tool_call
    index: int
    signature: Kept | None = None
    redacted: list[bytes] | None = None  # the encrypted reasoning's chunks


class _Reader:
    """One stream's blocks, by Bedrock's contentBlockIndex."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.blocks: dict[int, _Block] = {}
        self.events = 0
        self.stopped = False  # messageStop came

    async def apply(self, event: Mapping[str, Any]) -> None:
        call = self.call
        self.events += 1
        if (start := event.get("messageStart")) is not None:
            if start.get("role") != "assistant":
                raise ProviderError(f"the provider started a message of role {start.get('role')!r}, not assistant")
        elif (block_start := event.get("contentBlockStart")) is not None:
            tool = (block_start.get("start") or {}).get("toolUse")
            if tool is not None:
                index = await call.open_tool_call(tool.get("toolUseId") or "", tool.get("name") or "")
                self.blocks[block_start.get("contentBlockIndex", 0)] = _Block("tool_call", index)
        elif (delta := event.get("contentBlockDelta")) is not None:
            await self._delta(delta.get("contentBlockIndex", 0), delta.get("delta") or {})
        elif (stop := event.get("contentBlockStop")) is not None:
            if (block := self.blocks.pop(stop.get("contentBlockIndex", 0), None)) is not None:
                await self._close(block)
        elif (message_stop := event.get("messageStop")) is not None:
            self._stop(message_stop.get("stopReason"))
        elif (metadata := event.get("metadata")) is not None:
            if (usage := metadata.get("usage")) is not None:
                self._usage(usage)
        else:
            for name in STREAM_EXCEPTIONS:  # an exception sent as an event of the stream
                if (exception := event.get(name)) is not None:
                    raise ProviderError(f"the provider failed mid-stream with {name}: {exception.get('message', '')}")

    async def _delta(self, provider_index: int, delta: Mapping[str, Any]) -> None:
        call = self.call
        block = self.blocks.get(provider_index)
        if (text := delta.get("text")) is not None:
            if block is None:  # Bedrock starts no text block: its first delta does
                block = self.blocks[provider_index] = _Block("text", await call.open_text())
            if block.kind == "text":
                await call.text(block.index, text)
        elif (tool := delta.get("toolUse")) is not None:
            if block is not None and block.kind == "tool_call":
                await call.tool_arguments(block.index, tool.get("input") or "")
        elif (reasoning := delta.get("reasoningContent")) is not None:
            if block is None:
                block = self.blocks[provider_index] = _Block("thinking", await call.open_thinking(), Kept(call))
            if block.kind == "thinking":
                await self._reasoning(block, reasoning)

    async def _reasoning(self, block: _Block, reasoning: Mapping[str, Any]) -> None:
        call = self.call
        assert block.signature is not None
        if text := reasoning.get("text"):
            await call.thinking(block.index, text)
        if (signature := reasoning.get("signature")) and block.redacted is None:
            block.signature.add(signature)
        if redacted := reasoning.get("redactedContent"):
            # Encrypted reasoning (Claude's redacted thinking, OpenAI's models): pi's placeholder is
            # its text, and the payload, as base64, its signature, to replay as it came; it replaces
            # any signature.
            if block.redacted is None:
                block.redacted = []
                block.signature.take()
                await call.thinking(block.index, REDACTED_THINKING)
            block.redacted.append(bytes(redacted))
            call.hold(len(redacted))

    async def _close(self, block: _Block) -> None:
        call = self.call
        if block.kind == "text":
            await call.close_text(block.index)
        elif block.kind == "thinking":
            assert block.signature is not None
            if block.redacted is None:
                await call.close_thinking(block.index, block.signature.take())
            else:
                payload = b"".join(block.redacted)
                call.release(len(payload))
                await call.close_thinking(block.index, base64.b64encode(payload).decode("ascii"), redacted=True)
        else:
            await call.close_tool_call(block.index)

    def _stop(self, reason: Any) -> None:
        """messageStop: a stop reason pi does not map (a guardrail, a content filter, malformed
        output) fails the call, as in pi."""
        call = self.call
        self.stopped = True
        named = reason if isinstance(reason, str) and reason else None
        call.set_response(raw_stop_reason=named)
        call.stop_reason = STOP_REASONS.get(named or "", StopReason.ERROR)
        if call.stop_reason == StopReason.ERROR:
            call.refusal = (
                f"the model stopped with stop reason {named!r}" if named else "the model stopped for no reason"
            )

    def _usage(self, usage: Mapping[str, Any]) -> None:
        """Bedrock's counts; its total, which counts the cache, where it gives one."""
        call = self.call
        details = usage.get("cacheDetails")
        input_tokens, output_tokens = int(usage.get("inputTokens") or 0), int(usage.get("outputTokens") or 0)
        counts = Usage(
            input=input_tokens,
            output=output_tokens,
            cache_read=int(usage.get("cacheReadInputTokens") or 0),
            cache_write=int(usage.get("cacheWriteInputTokens") or 0),
            total_tokens=int(usage.get("totalTokens") or 0) or input_tokens + output_tokens,
            cache_write_1h=None
            if details is None
            else sum(int(detail.get("inputTokens") or 0) for detail in details if detail.get("ttl") == "1h"),
        )
        counts.cost = calculate_cost(call.model.info, counts)
        call.take_usage(counts)

    async def finish(self) -> None:
        """The stream ended: blocks it left open end with what they have."""
        if not self.events:
            raise self.call.no_events()
        if not self.stopped:
            raise ProviderError(f"{self.call.provider} ended its stream without a stop reason")
        for block in list(self.blocks.values()):
            await self._close(block)
        self.blocks.clear()


# --- the request -------------------------------------------------------------------------------------


def body(call: Call) -> dict[str, Any]:
    """The ConverseStream request for a call, as pi's stream builds it; the call's provider
    options (other Converse fields: guardrailConfig, performanceConfig, requestMetadata…) go on top."""
    info = call.model.info
    retention = _retention(call)
    caching = retention != CacheRetention.NONE and prompt_caching(call.model)
    cache_point = {"cachePoint": {"type": "default", **({"ttl": "1h"} if retention == CacheRetention.LONG else {})}}
    # A reasoning level gives an older Claude model its budget on top of the output limit (pi does
    # so whether or not the model reasons).
    budgeted = call.requested_level() != "off" and is_claude(info) and not adaptive_thinking(info)
    inference: dict[str, Any] = {"maxTokens": call.thinking_budget()[0] if budgeted else call.max_tokens()}
    if call.options.temperature is not None:
        inference["temperature"] = call.options.temperature
    out: dict[str, Any] = {"modelId": info.id, "messages": _messages(call, cache_point if caching else None)}
    if prompt := call.resolved.system_prompt:
        out["system"] = [{"text": prompt}, *([cache_point] if caching else [])]
    out["inferenceConfig"] = inference
    if (tools := _tool_config(call)) is not None:
        out["toolConfig"] = tools
    if (reasoning := _reasoning_fields(call)) is not None:
        out["additionalModelRequestFields"] = reasoning
    out.update(call.provider_options())
    return out


def _retention(call: Call) -> CacheRetention:
    """The call's retention; where it says none, pi's PI_CACHE_RETENTION=long, else short."""
    if call.options.cache_retention != CacheRetention.UNSPECIFIED:
        return call.options.cache_retention
    return CacheRetention.LONG if call.model.setting("PI_CACHE_RETENTION") == "long" else CacheRetention.SHORT


def candidates(info: Model) -> list[str]:
    """The model's id and name as pi matches them against model families: lower case, and with
    spaces, underscores, dots and colons as dashes."""
    values = [info.id, info.name] if info.name else [info.id]
    return [form for value in values for form in (value.lower(), re.sub(r"[\s_.:]+", "-", value.lower()))]


def _matches(info: Model, families: Sequence[str]) -> bool:
    return any(family in candidate for candidate in candidates(info) for family in families)


def is_claude(info: Model) -> bool:
    """pi's isAnthropicClaudeModel: the id names an Anthropic Claude model, or the name does
    (an application inference profile's ARN does not)."""
    model_id, name = info.id.lower(), (info.name or "").lower()
    return any(mark in model_id for mark in ("anthropic.claude", "anthropic/claude")) or "claude" in name


def adaptive_thinking(info: Model) -> bool:
    """Claude 4.6 and later think adaptively, at an effort."""
    return _matches(info, ADAPTIVE_FAMILIES)


def prompt_caching(model: ModelConfig) -> bool:
    """pi's supportsPromptCaching: Claude 3.5 Haiku, 3.7 Sonnet, 4 and 5; a model without Claude in its
    id or name when AWS_BEDROCK_FORCE_CACHE is 1 (Nova caches by itself)."""
    info = model.info
    if not _matches(info, ("claude",)):
        return model.setting("AWS_BEDROCK_FORCE_CACHE") == "1"
    return _matches(info, (*CLAUDE_5_FAMILIES, "-4-", "claude-3-7-sonnet", "claude-3-5-haiku"))


def _govcloud(call: Call) -> bool:
    region = (configured_region(call.model) or "").lower()
    model_id = call.model.info.id.lower()
    return region.startswith("us-gov-") or model_id.startswith(("us-gov.", "arn:aws-us-gov:"))


def _reasoning_fields(call: Call) -> dict[str, Any] | None:
    """additionalModelRequestFields for the call's reasoning level, as pi's
    buildAdditionalModelRequestFields writes them; None without a level or for other models."""
    info = call.model.info
    level = call.requested_level()
    if level == "off" or not info.reasoning:
        return None
    if is_claude(info):
        govcloud = _govcloud(call)  # GovCloud's Converse takes neither display nor block binding
        display = {} if govcloud else {"display": THINKING_DISPLAY}
        binding = not govcloud and _matches(info, XHIGH_FAMILIES)
        if adaptive_thinking(info):
            thinking: dict[str, Any] = {"type": "adaptive", **display}
            if binding:  # replayed thinking is dropped where the prompt or tools changed since
                thinking["block_binding"] = {"prefix_mismatch_behavior": "drop_block"}
            effort = "xhigh" if level == "xhigh" and _matches(info, XHIGH_FAMILIES) else None
            effort = effort or call.level_value(level) or CLAUDE_EFFORTS[level]
            out: dict[str, Any] = {"thinking": thinking, "output_config": {"effort": effort}}
            if binding:
                out["anthropic_beta"] = [THINKING_BINDING]
            return out
        budget = call.thinking_budget()[1]
        return {
            "thinking": {"type": "enabled", "budget_tokens": budget, **display},
            "anthropic_beta": [INTERLEAVED_THINKING],
        }
    if _matches(info, ("gpt-oss",)):
        return {"reasoning_effort": GPT_OSS_EFFORTS[level]}
    if _matches(info, ("gpt-",)):
        return {"reasoning": {"effort": call.level_value(level) or GPT_EFFORTS[level]}}
    return None


def _tool_config(call: Call) -> dict[str, Any] | None:
    """The tools as pi's convertToolConfig writes them; none when there are none or the call
    chooses none."""
    tools = call.resolved.tools
    choice = call.options.tool_choice
    if not tools or (choice is not None and choice.mode == ToolChoiceMode.NONE):
        return None
    specs = []
    for tool in tools:
        sampling = tool.constrained_sampling
        if (
            sampling is not None
            and sampling.json_schema is not None
            and sampling.json_schema.strict == Strictness.REQUIRE
        ):
            raise ProviderError(
                f"tool {tool.name!r} requires JSON-schema constrained sampling, not asked of Bedrock here"
            )
        spec: dict[str, Any] = {"name": tool.name}
        if tool.description:  # Bedrock refuses an empty description
            spec["description"] = tool.description
        spec["inputSchema"] = {"json": json.loads(tool.parameters_json or "{}")}
        specs.append({"toolSpec": spec})
    out: dict[str, Any] = {"tools": specs}
    if choice is not None and choice.mode != ToolChoiceMode.UNSPECIFIED:
        out["toolChoice"] = {
            ToolChoiceMode.AUTO: {"auto": {}},
            ToolChoiceMode.REQUIRED: {"any": {}},
            ToolChoiceMode.TOOL: {"tool": {"name": choice.tool}},
        }[choice.mode]
    return out


def normalize_id(call_id: str) -> str:
    """A tool call id in Bedrock's pattern: letters, digits, _ and -; at most 64 characters."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", call_id)[:64]


def _messages(call: Call, cache_point: dict[str, Any] | None) -> list[dict[str, Any]]:
    info = call.model.info
    messages = transform_messages(call.resolved.messages, info, normalize_id)
    out: list[dict[str, Any]] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        if (user := message.user) is not None:
            out.append({"role": "user", "content": _user(user)})
        elif (assistant := message.assistant) is not None:
            if blocks := _assistant(assistant.content, is_claude(info)):
                out.append({"role": "assistant", "content": blocks})
        elif message.tool_result is not None:
            results: list[dict[str, Any]] = []
            images: list[dict[str, Any]] = []
            while index < len(messages) and (result := messages[index].tool_result) is not None:
                results.append({"toolResult": _tool_result(result, images if is_claude(info) else None)})
                index += 1
            out.append({"role": "user", "content": [*results, *images]})
            continue
        index += 1
    if cache_point is not None and out and out[-1]["role"] == "user":
        out[-1]["content"].append(cache_point)
    return out


def _user(message: UserMessage) -> list[dict[str, Any]]:
    return _media(message.content) or [{"text": EMPTY_TEXT}]  # Bedrock refuses a turn without content


def _media(content: Sequence[UserContent | ToolResultContent]) -> list[dict[str, Any]]:
    """Text blocks (blank ones left out) and images."""
    blocks: list[dict[str, Any]] = []
    for block in content:
        if (plain := block.text) is not None:
            if plain.text.strip():
                blocks.append({"text": plain.text})
        elif (image := block.image) is not None:
            blocks.append({"image": _image(image.mime_type, image.data)})
    return blocks


def _image(mime_type: str, data: bytes) -> dict[str, Any]:
    if mime_type not in IMAGE_FORMATS:
        raise ProviderError(f"Bedrock takes no image of type {mime_type!r}: only JPEG, PNG, GIF and WebP")
    return {"format": IMAGE_FORMATS[mime_type], "source": {"bytes": data}}


def _tool_result(result: ToolResultMessage, images: list[dict[str, Any]] | None) -> dict[str, Any]:
    """A toolResult block. Claude takes only text in an error result (`images` given): its images
    go after the turn's results, captioned, and a placeholder stands where they were."""
    content: Sequence[ToolResultContent] = result.content
    if images is not None and result.is_error and any(block.image is not None for block in content):
        caption = f"Images from the error result of tool call {result.tool_call_id} ({result.tool_name}):"
        images.append({"text": caption})
        images += [{"image": _image(block.image.mime_type, block.image.data)} for block in content if block.image]
        content = _placeholder(content)
    return {
        "toolUseId": result.tool_call_id,
        "content": _media(content) or [{"text": EMPTY_TEXT}],
        "status": "error" if result.is_error else "success",
    }


def _placeholder(content: Sequence[ToolResultContent]) -> list[ToolResultContent]:
    """The blocks with each run of images replaced by pi's ERROR_IMAGES text."""
    out: list[ToolResultContent] = []
    said = False
    for block in content:
        if block.image is not None:
            if not said:
                out.append(ToolResultContent(text=TextContent(text=ERROR_IMAGES)))
            said = True
            continue
        out.append(block)
        said = block.text is not None and block.text.text == ERROR_IMAGES
    return out


def _assistant(content: Sequence[AssistantContent], claude: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in content:
        if (plain := block.text) is not None:
            if plain.text.strip():
                blocks.append({"text": plain.text})
        elif (tool := block.tool_call) is not None:
            arguments = _document(tool_call_arguments(tool))
            blocks.append({"toolUse": {"toolUseId": tool.id, "name": tool.name, "input": arguments}})
        elif (thinking := block.thinking) is not None:
            signature = thinking.thinking_signature or ""
            if thinking.redacted:  # the encrypted reasoning, as it came
                if payload := _redacted_content(signature):
                    blocks.append({"reasoningContent": {"redactedContent": payload}})
            elif not thinking.thinking.strip():
                continue
            elif not claude:  # only Claude takes a reasoning signature
                blocks.append({"reasoningContent": {"reasoningText": {"text": thinking.thinking}}})
            elif signature.strip():
                blocks.append(
                    {"reasoningContent": {"reasoningText": {"text": thinking.thinking, "signature": signature}}}
                )
            else:  # reasoning without its signature (a cut stream) goes back as text, which Bedrock takes
                blocks.append({"text": thinking.thinking})
    return blocks


def _document(value: Any) -> Any:
    """A JSON value as a Bedrock document, which takes no empty keys (pi drops them)."""
    if isinstance(value, dict):
        return {key: _document(item) for key, item in value.items() if key}
    if isinstance(value, list):
        return [_document(item) for item in value]
    return value


def _redacted_content(signature: str) -> bytes | None:
    """A redacted block's encrypted reasoning, from its base64 signature; None when it is not
    base64 (the block is dropped, not the request)."""
    try:
        return base64.b64decode(signature + "=" * (-len(signature) % 4), validate=True) or None
    except ValueError:  # binascii.Error is one
        return None


# --- the HTTP session ----------------------------------------------------------------------------


def _session_class(call: Call) -> type[_HttpSession]:
    """aiobotocore's HTTP session class for this call (aiobotocore makes it with its own arguments)."""

    class Session(_HttpSession):
        def __init__(self, *, verify: bool | str | None = True, **_: Any) -> None:
            super().__init__(call, True if verify is None else verify)

    return Session


class _HttpSession:
    """What aiobotocore sends requests with, on httpx2 and within the call's bounds (see the module
    docstring): it answers with botocore's response, whose body is the decoded, counted stream."""

    def __init__(self, call: Call, verify: bool | str) -> None:
        connect, idle = timeouts(call.model)
        self.call = call
        # `verify` is botocore's: False, or a CA bundle (AWS_CA_BUNDLE, a profile's ca_bundle).
        context = ssl.create_default_context(cafile=verify) if isinstance(verify, str) else verify
        self.client = httpx2.AsyncClient(timeout=httpx2.Timeout(idle, connect=connect), verify=context)
        self.responses: list[httpx2.Response] = []

    async def __aenter__(self) -> _HttpSession:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        for response in self.responses:
            await response.aclose()
        self.responses.clear()
        await self.client.aclose()

    async def send(self, request: Any) -> Any:
        call = self.call
        outgoing = self.client.build_request(
            request.method, request.url, headers=list(request.headers.items()), content=request.body or b""
        )
        del outgoing.headers["accept"]  # httpx2's default; botocore sends none
        outgoing.headers["accept-encoding"] = ", ".join(ENCODINGS)
        response = await self.client.send(outgoing, stream=True)
        self.responses.append(response)
        headers = {name.lower(): value for name, value in response.headers.items()}
        pieces = _Pieces(call, response)
        if not response.is_success:  # botocore reads it whole: it gets the scrubbed start
            return AioAWSResponse(str(response.url), response.status_code, headers, _Whole(await pieces.start()))
        content_type = response.headers.get("content-type", "")
        if content_type.split(";")[0].strip().lower() != EVENT_STREAM:
            shown = (await pieces.start(SHOWN_BYTES, scrub=False)).decode("utf-8", "replace")
            sent = quote(call.model, content_type) if content_type else "no content type"
            raise ProviderError(
                f"{call.provider} answered {response.status_code} with {sent}, "
                f"not an event stream: {quote(call.model, shown)}"
            )
        return AioAWSResponse(str(response.url), response.status_code, headers, _Frames(call, pieces))


class _Pieces:
    """A response's body, decoded (gzip, deflate) in pieces of bounded size."""

    def __init__(self, call: Call, response: httpx2.Response) -> None:
        self.call = call
        self.response = response
        self.inflate = decoder(call, response)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        inflate = self.inflate
        async for chunk in self.response.aiter_raw():
            if inflate is None:
                yield chunk
            else:
                for piece in inflate.decode(chunk):
                    yield piece
        if inflate is not None:
            for piece in inflate.flush():
                yield piece

    async def start(self, size: int = MAX_ERROR_BODY_BYTES, *, scrub: bool = True) -> bytes:
        """The first `size` bytes of the body (the model's secrets replaced first, unless not
        `scrub`), and the response closed."""
        try:
            return await body_start(self, self.call.model, size, scrub=scrub)
        finally:
            await self.response.aclose()


class _Whole:
    """An error body, read: what botocore's response reads it from."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    async def read(self) -> bytes:
        return self.data

    def close(self) -> None:
        pass


class _Frames:
    """An event stream body as botocore's decoder reads it (`content.iter_chunks()`), given whole
    frames only: the frame not yet whole is held here, counted toward the call's size limit, and
    one the stream ends inside never reaches the decoder."""

    def __init__(self, call: Call, pieces: _Pieces) -> None:
        self.call = call
        self.pieces = pieces
        self.content = self  # aiobotocore reads `raw.content.iter_chunks()`

    async def iter_chunks(self) -> AsyncIterator[tuple[bytes, bool]]:
        call = self.call
        pending = bytearray()
        frames = 0
        async for piece in self.pieces:
            pending += piece
            call.check_size(len(pending))
            whole = 0  # bytes of the whole frames at the start of `pending`
            while len(pending) - whole >= 4:
                (length,) = struct.unpack_from("!I", pending, whole)
                if length < MIN_FRAME_BYTES:
                    raise ProviderError(f"{call.provider} sent an event stream frame of {length} bytes, not a frame")
                if len(pending) - whole < length:
                    break
                whole += length
                frames += 1
            if whole:
                yield bytes(pending[:whole]), True
                del pending[:whole]
        if pending:
            if not frames:
                raise call.no_events()
            raise ProviderError(f"{call.provider} ended its event stream inside a frame")

    def close(self) -> None:
        pass  # the session closes the response


@describing
def describe(error: BaseException, model: ModelConfig) -> str:
    """What went wrong, in words for the client (the model's secrets are scrubbed after)."""
    if isinstance(error, botocore.exceptions.EventStreamError):  # an exception in the stream
        detail = error.response.get("Error", {})
        return f"the provider failed mid-stream with {detail.get('Code')}: {quote(model, str(detail.get('Message')))}"
    if isinstance(error, botocore.exceptions.ClientError):
        detail = error.response.get("Error", {})
        code = detail.get("Code") or type(error).__name__
        message = quote(model, str(detail.get("Message") or ""))
        status = _status(error)
        return f"the provider answered {'' if status is None else f'{status} '}{code}: {message}"
    if isinstance(error, botocore.exceptions.NoCredentialsError):
        return (
            "no AWS credentials for Bedrock: set AWS_BEARER_TOKEN_BEDROCK (or the model's apiKey), "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE"
        )
    if isinstance(error, botocore.exceptions.ParamValidationError):
        return f"the request is not one Bedrock takes: {quote(model, str(error))}"
    if isinstance(error, botocore.eventstream.ParserError):
        return f"the provider sent an event stream frame that is not valid: {error}"
    if isinstance(error, botocore.exceptions.BotoCoreError):
        return f"{type(error).__name__}: {quote(model, str(error))}"
    if isinstance(error, httpx2.ConnectError):
        return f"cannot reach the provider: {error}"
    if isinstance(error, httpx2.HTTPError):
        return f"the connection to the provider broke: {error}"
    return f"{type(error).__name__}: {error}"
