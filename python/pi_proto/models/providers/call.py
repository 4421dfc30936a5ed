"""One provider call: what it was asked, and the message it builds, sent as events as it grows.

Each provider API reads its stream and tells a `Call` what happened (a block opened, text
arrived, usage changed, the stop reason); the Call sends pi's events with the right indexes, puts
a usage change on the next event, and ends the stream with exactly one terminal event. Failures
are events, never exceptions: `run` turns whatever the provider raised into an `error` event that
keeps everything streamed before it, with a message free of the model's secrets. The stream a
call feeds (`TimedStream`) puts the call's duration on its final message, as pi's stream does.

What the server holds from a provider is bounded by the stream's size limit: the accumulator counts
what the events brought, and the Call counts what is not yet an event (`hold`, and the body an
SDK is reading, through `check_size`).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import math
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, TypeVar

from ..._gen.types.pi.ai.v1 import (
    AgentContext,
    AssistantMessage,
    CacheRetention,
    Diagnostic,
    DoneEvent,
    GenerationOptions,
    Model,
    ModelEvent,
    StartEvent,
    StopReason,
    StreamRule,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingLevel,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
)
from ...ir.cost import calculate_cost
from ...ir.events import utf8_size
from ...ir.messages import now_ms, zero_usage
from ...stream.accumulator import DEFAULT_MAX_MESSAGE_BYTES, StreamProtocolError
from ...stream.event_stream import AssistantMessageEventStream, StreamFailure
from ...stream.partial_json import complete_json
from ...transcripts.pi_json import REASONING_LEVEL_NAMES, THINKING_LEVEL_NAMES, THINKING_LEVELS
from ..telemetry import CallTrace, inject
from .catalog import ModelConfig
from .estimate import context_tokens
from .system import Resolved, normalize, resolve

# pi's reasoning budgets (simple-options.ts).
THINKING_BUDGETS = {
    ThinkingLevel.MINIMAL: 1024,
    ThinkingLevel.LOW: 2048,
    ThinkingLevel.MEDIUM: 8192,
    ThinkingLevel.HIGH: 16384,
    ThinkingLevel.XHIGH: 16384,  # pi clamps xhigh and max to high for budgets
    ThinkingLevel.MAX: 16384,
}
MIN_OUTPUT_TOKENS = 1024  # what a reasoning budget always leaves the answer
# How pi fits the output limit into the context window (clampMaxTokensToContext): a margin for the
# input being counted higher than estimated, a share of it while that leaves enough output.
CONTEXT_SAFETY_TOKENS = 4096
CONTEXT_SAFETY_RATIO = 0.15
MIN_OUTPUT_WITH_RATIO_MARGIN = 32_768
# pi's thinking levels from none to the most (models.js EXTENDED_THINKING_LEVELS), and the
# call's reasoning in pi's words.
LEVELS = tuple(THINKING_LEVELS)  # pi's levels in order, "off" first
LEVEL_OF = {ThinkingLevel.UNSPECIFIED: "off", **REASONING_LEVEL_NAMES}  # a call's level in pi's words
# The APIs whose SDK pi gives the call's timeoutMs (the OpenAI, Azure, Anthropic and Mistral SDKs;
# not google-genai).
TIMEOUT_APIS = (
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "anthropic-messages",
    "mistral-conversations",
)
DEFAULT_MAX_RETRY_DELAY_MS = 60_000
RETRIES = 2  # when the call does not say (max_retries)
BACKOFF_SECONDS = 1.0  # per attempt, when the provider does not say how long to wait
# A provider's own text in an error (an error page, an upstream error) is cut to MAX_ERROR_TEXT
# characters, and a whole error message to MAX_ERROR_MESSAGE; always after the secrets are
# scrubbed, so a secret across the cut leaves none of its characters.
MAX_ERROR_TEXT = 1000
MAX_ERROR_MESSAGE = 4000


class ProviderError(Exception):
    """A failure to report as the stream's error event, already worded for the client; `reason`
    is the event's stop reason (ABORTED when the provider says its call was aborted)."""

    def __init__(self, message: str, reason: StopReason = StopReason.ERROR) -> None:
        super().__init__(message)
        self.reason = reason


def clip(text: str, limit: int = MAX_ERROR_TEXT) -> str:
    """`text`, cut to `limit` characters with an ellipsis when longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(model: ModelConfig, text: str) -> str:
    """A provider's own text for an error message: the model's secrets scrubbed, then cut."""
    return clip(model.scrub(text))


class RetryLater(Exception):
    """The provider asks to be called again (a 429 or 5xx), after `seconds` if it says when."""

    def __init__(self, seconds: float | None, detail: str) -> None:
        super().__init__(detail)
        self.seconds = seconds
        self.detail = detail


_T = TypeVar("_T", bool, str)


def level_map(model: Model) -> dict[str, str | None]:
    """pi's thinkingLevelMap of `model`: the provider's value for each level it names, None for a
    level the model does not support; a level left out takes the provider's default."""
    return {
        THINKING_LEVEL_NAMES[entry.level]: entry.value
        for entry in model.thinking_level_map
        if entry.level in THINKING_LEVEL_NAMES
    }


def supported_levels(model: Model) -> list[str]:
    """pi's getSupportedThinkingLevels: only "off" without reasoning; else every level but those
    mapped to null, and xhigh and max only where the map names them."""
    if not model.reasoning:
        return ["off"]
    mapped = level_map(model)
    return [
        level for level in LEVELS if (mapped[level] is not None if level in mapped else level not in ("xhigh", "max"))
    ]


def clamp_level(model: Model, level: str) -> str:
    """pi's clampThinkingLevel: `level` where the model supports it, else the nearest supported
    level above it, else the nearest below."""
    supported = supported_levels(model)
    index = LEVELS.index(level)
    for candidate in (*LEVELS[index:], *reversed(LEVELS[:index])):
        if candidate in supported:
            return candidate
    return "off"


class TimedStream(AssistantMessageEventStream):
    """The stream of one provider call, which times the response as pi's AssistantMessageEventStream
    does: the final message (done or error, a cancel's too) gets duration_ms, the milliseconds since
    the stream was made by a monotonic clock, rounded, never negative. Not a message that has one
    already, nor one whose timestamp predates the stream (a response that started elsewhere).

    Only provider calls are timed: scripted models and the conformance corpus need messages that
    are the same at every run.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], int] = now_ms,
        monotonic: Callable[[], float] = time.monotonic,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        trace: CallTrace | None = None,
    ) -> None:
        super().__init__(max_message_bytes=max_message_bytes)
        self.trace = trace  # the call's span and metrics, told every event
        self._monotonic = monotonic  # in seconds
        self._created_ms = clock()
        self._created = monotonic()

    def push(self, event: ModelEvent) -> None:
        terminal = event.done if event.done is not None else event.error
        if terminal is not None and terminal.message is not None:
            self._time(terminal.message)
        super().push(event)
        if self.trace is not None:
            self.trace.event(event)

    def fail(self, reason: StopReason, error_message: str, failure: StreamFailure | None = None) -> None:
        self._time(self.partial)  # the error event's message is the partial
        super().fail(reason, error_message, failure)
        if self.trace is not None:
            self.trace.end(self.partial)

    def _time(self, message: AssistantMessage) -> None:
        if self.done or message.duration_ms is not None or (message.timestamp or 0) < self._created_ms:
            return
        elapsed_ms = (self._monotonic() - self._created) * 1000
        message.duration_ms = max(0, math.floor(elapsed_ms + 0.5))  # rounded as JavaScript's Math.round


class Call:
    """The running call: its request, and the message it builds (pi's `output`)."""

    def __init__(
        self,
        model: ModelConfig,
        context: AgentContext,
        options: GenerationOptions | None,
        events: AssistantMessageEventStream,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.options = options or GenerationOptions()
        self.model = _with_call_timeout(model, self.options)
        self.clock = clock
        self.context = context
        self.resolved: Resolved = resolve(context)  # the prompt, tools and messages a provider sends
        self.events = events
        self.stop_reason = StopReason.STOP
        self.usage = zero_usage()
        self._usage_changed = False
        self.started = False  # the provider answered and the stream opened
        self.answered = False  # a block event went out: what failed after it is not tried elsewhere
        self.fallback = False  # the call of a fallback model: its message names it as the one that answered
        self.failed_before: list[str] = []  # what the models it fell back from said, each already scrubbed
        self._broken_calls: list[str] = []  # tool calls whose arguments are not a JSON object
        self.refusal: str | None = None  # why the provider stopped with an error stop reason
        self.held = 0  # bytes the provider code keeps that are not yet in an event (signatures)
        self._input_tokens: int | None = None  # input_tokens(), once estimated

    # --- what the provider tells the call -------------------------------------------------------

    async def start(self) -> None:
        """The provider answered: the stream opens."""
        info = self.model.info
        header = AssistantMessage(
            api=info.api, provider=info.provider, model=info.id, usage=zero_usage(), timestamp=self.clock()
        )
        self.started = True
        if self.events.started:  # a model this one falls back from opened the stream: it goes on
            partial = self.events.partial
            partial.api, partial.provider, partial.model = header.api, header.provider, header.model
        else:
            await self._send(ModelEvent(start=StartEvent(header=header)))
        if self.fallback:
            self.set_response(response_model=info.id)

    async def open_text(self) -> int:
        index = self._next_index()
        await self._send(ModelEvent(text_start=TextStartEvent(content_index=index)))
        return index

    async def text(self, index: int, delta: str) -> None:
        if delta:
            await self._send(ModelEvent(text_delta=TextDeltaEvent(content_index=index, delta=delta)))

    async def close_text(self, index: int, signature: str | None = None) -> None:
        await self._send(ModelEvent(text_end=TextEndEvent(content_index=index, text_signature=signature)))

    async def open_thinking(self) -> int:
        index = self._next_index()
        await self._send(ModelEvent(thinking_start=ThinkingStartEvent(content_index=index)))
        return index

    async def thinking(self, index: int, delta: str) -> None:
        if delta:
            await self._send(ModelEvent(thinking_delta=ThinkingDeltaEvent(content_index=index, delta=delta)))

    async def close_thinking(self, index: int, signature: str | None = None, *, redacted: bool | None = None) -> None:
        event = ThinkingEndEvent(content_index=index, thinking_signature=signature, redacted=redacted)
        await self._send(ModelEvent(thinking_end=event))

    async def open_tool_call(self, call_id: str, name: str) -> int:
        index = self._next_index()
        await self._send(ModelEvent(toolcall_start=ToolCallStartEvent(content_index=index, id=call_id, name=name)))
        return index

    async def tool_arguments(self, index: int, delta: str) -> None:
        if delta:
            await self._send(ModelEvent(toolcall_delta=ToolCallDeltaEvent(content_index=index, delta=delta)))

    async def close_tool_call(self, index: int, *, thought_signature: str | None = None) -> None:
        """End a tool call with the arguments streamed for it, which must be a JSON object.

        Arguments that are not are kept as raw text, with their completion for a reader: fine when
        the call stops for its length, an error otherwise (checked when it ends).
        """
        block = self.events.partial.content[index].tool_call
        assert block is not None
        raw = block.raw_arguments or ""
        call = ToolCall(id=block.id, name=block.name, thought_signature=thought_signature)
        try:
            arguments = json.loads(raw or "{}")
        except ValueError:
            arguments = None
        if isinstance(arguments, dict):
            call.arguments_json = raw or "{}"
        else:
            call.arguments_json, call.raw_arguments = complete_json(raw), raw
            self._broken_calls.append(f"tool call {block.id!r} ({block.name}) has arguments that are not a JSON object")
        await self._send(ModelEvent(toolcall_end=ToolCallEndEvent(content_index=index, tool_call=call)))

    async def end_tool_call(self, index: int, tool_call: ToolCall) -> None:
        """End a tool call with the call the provider finished it as (a pi-messages backend sends
        it whole, its arguments parsed), in place of the arguments streamed for it."""
        await self._send(ModelEvent(toolcall_end=ToolCallEndEvent(content_index=index, tool_call=tool_call)))

    def set_usage(
        self,
        *,
        input: int,
        output: int,
        cache_read: int = 0,
        cache_write: int = 0,
        reasoning: int | None = None,
        cache_write_1h: int | None = None,
    ) -> None:
        """The provider's token counts so far; the cost comes from the model's rates, as pi computes
        it. `reasoning` (a part of `output`) and `cache_write_1h` (a part of `cache_write`) stay
        absent where the provider does not report them."""
        usage = Usage(
            input=input,
            output=output,
            cache_read=cache_read,
            cache_write=cache_write,
            total_tokens=input + output + cache_read + cache_write,
            reasoning=reasoning,
            cache_write_1h=cache_write_1h,
        )
        usage.cost = calculate_cost(self.model.info, usage)
        self.take_usage(usage)

    def take_usage(self, usage: Usage) -> None:
        """Usage as the provider gives it, cost included (a pi-messages backend prices its calls)."""
        if usage != self.usage:
            self.usage, self._usage_changed = usage, True

    def set_response(
        self,
        *,
        response_id: str | None = None,
        response_model: str | None = None,
        raw_stop_reason: str | None = None,
        provider_thinking_level: str | None = None,
    ) -> None:
        """What the provider says of its response: its id, the model that answered (when not the
        one asked for), its own stop reason and the effort it used. They go on the message being
        built, as pi keeps them on its output, so an error or a cancel keeps them too; None leaves
        a field as it is."""
        message = self.events.partial
        for name, value in (
            ("response_id", response_id),
            ("response_model", response_model),
            ("raw_stop_reason", raw_stop_reason),
            ("provider_thinking_level", provider_thinking_level),
        ):
            if value is not None:
                setattr(message, name, value)

    def add_diagnostic(self, diagnostic: Diagnostic) -> None:
        """A record of how the response was made, kept on the message for debugging, as pi keeps it."""
        message = self.events.partial
        message.diagnostics = [*message.diagnostics, diagnostic]  # a new list: the start event's header shares it

    async def finish(self) -> None:
        """The provider's stream ended: the terminal event, done or (for a refusal) error."""
        if not self.started:
            await self.start()
        message = copy.deepcopy(self.events.partial)
        message.usage = self.usage
        if self._broken_calls and self.stop_reason != StopReason.LENGTH:
            raise ProviderError("; ".join(self._broken_calls))
        if self.stop_reason == StopReason.ERROR:
            raise ProviderError(self.refusal or "the provider ended the call with an error")
        message.stop_reason = self.stop_reason
        await self.events.send(ModelEvent(done=DoneEvent(reason=self.stop_reason, message=message)))

    async def fail(self, message: str, reason: StopReason = StopReason.ERROR) -> None:
        """End the stream with an error event keeping what was streamed, and the latest usage; a
        call that failed before the provider answered still says which model it was. The message
        is scrubbed of the model's secrets, then cut."""
        if not self.started:
            await self.start()
        self.events.partial.usage = self.usage
        message = self.model.scrub(message)
        if self.failed_before:
            message += f" (after falling back from {'; '.join(self.failed_before)})"
        self.events.fail(reason, clip(message, MAX_ERROR_MESSAGE))

    # --- what the server holds ---------------------------------------------------------------------

    @property
    def provider(self) -> str:
        """The provider as errors name it."""
        return f"the provider {self.model.info.provider!r}"

    def check_size(self, buffered: int = 0) -> None:
        """Raise ProviderError if what the stream holds, with `buffered` bytes an SDK is reading
        and what the Call holds, passes the stream's size limit."""
        events = self.events
        if events.received_bytes + self.held + buffered > events.max_message_bytes:
            raise ProviderError(self.too_large())

    def too_large(self) -> str:
        return f"{self.provider} sent more than this stream's limit of {self.events.max_message_bytes} bytes"

    def hold(self, size: int) -> None:
        """Count `size` bytes the provider code keeps toward the size limit; raises ProviderError past it."""
        self.held += size
        self.check_size()

    def release(self, size: int) -> None:
        """Stop counting `size` held bytes (they went into an event, which the accumulator counts)."""
        self.held -= size

    def no_events(self) -> ProviderError:
        return ProviderError(f"{self.provider} answered with an event stream that holds no event")

    # --- what the provider reads from the call ----------------------------------------------------

    def max_tokens(self) -> int:
        """The output limit to ask for, as pi's buildBaseOptions: the call's, else the model's,
        fitted into the context window."""
        given = self.options.max_tokens
        return self.fit_to_context(self.model.info.max_tokens if given is None else given)

    def fit_to_context(self, max_tokens: int) -> int:
        """pi's clampMaxTokensToContext: `max_tokens`, or the room the context window leaves
        after the estimated input and a margin (15% of the input, at least 4096 tokens; just 4096
        where 15% would leave less than 32768 tokens, the output then capped at 32768); at least 1."""
        window = self.model.info.context_window
        if window <= 0:
            return max(1, max_tokens)
        used = self.input_tokens()
        room = window - used - max(CONTEXT_SAFETY_TOKENS, math.ceil(used * CONTEXT_SAFETY_RATIO))
        if room < MIN_OUTPUT_WITH_RATIO_MARGIN:
            room = min(MIN_OUTPUT_WITH_RATIO_MARGIN, window - used - CONTEXT_SAFETY_TOKENS)
        return min(max_tokens, max(1, room))

    def input_tokens(self) -> int:
        """pi's estimate of the tokens the call sends, made once a call."""
        if self._input_tokens is None:
            self._input_tokens = context_tokens(normalize(self.context))
        return self._input_tokens

    def thinking_budget(self) -> tuple[int, int]:
        """(max tokens, reasoning budget) for budget-based reasoning, as pi's Anthropic streamSimple
        fits them (adjustMaxTokensForThinking): the budget goes on top of the output limit, up to
        the model's; that sum is fitted into the context window, and the budget leaves the answer
        at least MIN_OUTPUT_TOKENS of it."""
        budget = self._level_budget()
        max_tokens = min(self.max_tokens() + budget, self.model.info.max_tokens)
        if max_tokens <= budget:
            budget = min(budget, max(0, max_tokens - MIN_OUTPUT_TOKENS))
        max_tokens = self.fit_to_context(max_tokens)
        return max_tokens, min(budget, max(0, max_tokens - MIN_OUTPUT_TOKENS))

    def _level_budget(self) -> int:
        """The reasoning budget of the call's level: its own thinking_budgets', else pi's default;
        xhigh and max take high's, as pi clamps them."""
        level = self.options.reasoning
        budgets = self.options.thinking_budgets
        custom = None
        if budgets is not None:
            custom = {
                ThinkingLevel.MINIMAL: budgets.minimal,
                ThinkingLevel.LOW: budgets.low,
                ThinkingLevel.MEDIUM: budgets.medium,
                ThinkingLevel.HIGH: budgets.high,
                ThinkingLevel.XHIGH: budgets.high,
                ThinkingLevel.MAX: budgets.high,
            }.get(level)
        return custom if custom is not None else THINKING_BUDGETS[level]

    def requested_level(self) -> str:
        """The thinking level the call asks for, in pi's words ("off" for none)."""
        return LEVEL_OF[self.options.reasoning]

    def thinking_level(self) -> str:
        """The level to reason at, as pi's streamSimple picks it for the OpenAI APIs and Gemini:
        the one asked for, clamped to those the model supports; "off" when none is asked."""
        level = self.requested_level()
        return level if level == "off" else clamp_level(self.model.info, level)

    def level_value(self, level: str) -> str | None:
        """What the model's thinkingLevelMap sends for `level`; None where it says nothing (the
        provider's default applies) or marks the level unsupported."""
        return level_map(self.model.info).get(level)

    def cache_retention(self) -> CacheRetention:
        """The call's prompt cache retention; short when it does not say, as in pi."""
        retention = self.options.cache_retention
        return CacheRetention.SHORT if retention == CacheRetention.UNSPECIFIED else retention

    def cache_session_id(self) -> str | None:
        """The session id a provider may cache and route by: none when the call turns caching
        off (pi's cacheSessionId)."""
        return self.options.session_id if self.cache_retention() != CacheRetention.NONE else None

    def long_retention(self, default: bool) -> bool:
        """Whether the call asks for long retention and the provider keeps a cache that long:
        compat.supportsLongCacheRetention, else `default` (each API's own)."""
        return self.cache_retention() == CacheRetention.LONG and self.switch("supportsLongCacheRetention", default)

    def switch(self, key: str, default: _T) -> _T:
        """The model's compat switch `key` (pi's name), or `default` where it is left out; one
        of another type than the default's fails the call."""
        value = self.model.compat.get(key)
        if value is None:
            return default
        if not isinstance(value, type(default)):
            kind = "true or false" if isinstance(default, bool) else "a string"
            raise ProviderError(f"compat.{key} of model {self.model.info.id!r} must be {kind}")
        return value

    def headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """Headers for the provider: the catalog's, then `extra` (the API's session headers), then
        the call's on top, as pi merges them."""
        headers = {**self.model.headers, **(extra or {}), **self.options.headers}
        inject(headers)  # the call's trace context, when it is traced
        return headers

    def sampling_params(self) -> dict[str, Any]:
        """The model's samplingParams with the call's over them, key by key, as pi's
        resolveSamplingParams merges them; the OpenAI APIs put them over the request's fields."""
        model, call = self.model.info.sampling_params_json, self.options.sampling_params_json
        return {**(json.loads(model) if model else {}), **(json.loads(call) if call else {})}

    def metadata(self) -> dict[str, Any]:
        return json.loads(self.options.metadata_json) if self.options.metadata_json else {}

    def provider_options(self) -> dict[str, Any]:
        return json.loads(self.options.provider_options_json) if self.options.provider_options_json else {}

    # --- internals -----------------------------------------------------------------------------------

    def _next_index(self) -> int:
        return len(self.events.partial.content)

    async def _send(self, event: ModelEvent) -> None:
        self.answered = self.answered or event.start is None
        if self._usage_changed:
            event.usage, self._usage_changed = self.usage, False
        await self.events.send(event)


class Kept:
    """Text a provider streams in parts before it goes into an event (a signature, arguments
    before their tool's name): the parts, joined once when taken, so keeping n parts costs
    linear time, and their bytes counted toward the call's size limit meanwhile."""

    def __init__(self, call: Call) -> None:
        self._call = call
        self._parts: list[str] = []
        self._size = 0

    def add(self, part: str) -> None:
        """Keep `part`; raises ProviderError past the size limit."""
        size = utf8_size(part)
        self._parts.append(part)
        self._size += size
        self._call.hold(size)

    def take(self) -> str:
        """The text kept so far, no longer counted (the event it goes into is), and none kept."""
        text = "".join(self._parts)
        self._call.release(self._size)
        self._parts, self._size = [], 0
        return text


def _with_call_timeout(model: ModelConfig, options: GenerationOptions) -> ModelConfig:
    """The model with the call's timeout_ms in place of its timeoutMs, where pi gives the SDK the
    call's timeout (http.py makes it the idle timeout)."""
    if options.timeout_ms is None or model.info.api not in TIMEOUT_APIS:
        return model
    return dataclasses.replace(model, timeout_ms=float(options.timeout_ms))


Describe = Callable[[BaseException, ModelConfig], str]


async def run(
    call: Call, stream: Callable[[Call], Awaitable[None]], describe: Describe, *, fall_back: bool = False
) -> str | None:
    """Run a provider's stream for a call, retrying what the provider asks to retry (the call's
    max_retries times, else RETRIES), and end the stream with one terminal event whatever happens
    (a cancel is left to the stream: ABORTED).
    `describe` words what the SDK or the connection raised, for the model it called.
    With `fall_back`, a failure another model may not share (the provider's 429 or 5xx, an
    overloaded stream, a connection that failed) before any block event ends nothing: its words
    are returned, for the caller to call the next model on the same stream."""
    cap_ms = call.options.max_retry_delay_ms
    cap = (DEFAULT_MAX_RETRY_DELAY_MS if cap_ms is None else cap_ms) / 1000
    retries = RETRIES if call.options.max_retries is None else call.options.max_retries
    for attempt in range(retries + 1):
        try:
            await stream(call)
            await call.finish()
            return None
        except RetryLater as later:
            delay = BACKOFF_SECONDS * (attempt + 1) if later.seconds is None else later.seconds
            if call.started or attempt == retries:
                message = later.detail
            elif cap and delay > cap:
                message = (
                    f"{later.detail}; the provider asks to retry after {delay:g} s, longer than "
                    f"max_retry_delay_ms ({cap * 1000:g} ms)"
                )
            else:
                await asyncio.sleep(delay)
                continue
            if fall_back and not call.answered:
                return message
            await call.fail(message)
            return None
        except ProviderError as error:
            await call.fail(str(error), error.reason)
            return None
        except Exception as error:  # the SDK's or the connection's: still one error event, worded
            if fall_back and not call.answered and unreachable(error):
                return _words(call, error, describe)
            await call.fail(_words(call, error, describe))
            return None
    return None


def unreachable(error: BaseException) -> bool:
    """Whether `error` is a connection that failed (refused, reset, timed out), not an answer."""
    import httpx2  # the SDKs' HTTP client, installed with them (the command runs without it)

    return any(isinstance(cause, httpx2.TransportError | ConnectionError | TimeoutError) for cause in causes(error))


def _words(call: Call, error: BaseException, describe: Describe) -> str:
    """What to tell the client: our own words when the SDK wrapped a failure of ours (a
    ProviderError raised inside it, a size limit the accumulator enforced), else `describe`'s."""
    for cause in causes(error):
        if isinstance(cause, ProviderError):
            return str(cause)
        if isinstance(cause, StreamProtocolError) and cause.rule == StreamRule.SIZE_LIMIT:
            return call.too_large()
    return describe(error, call.model)


def causes(error: BaseException) -> Iterator[BaseException]:
    """`error`, then what it was raised from or while handling, and so on, each once: an SDK
    wraps what it caught, sometimes more than once."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        yield cause
        cause = cause.__cause__ or cause.__context__


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the provider asks to wait before a retry (retry-after-ms or Retry-After), if it says."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue  # an HTTP date: left to the backoff
    return None
