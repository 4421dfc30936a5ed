"""pi-messages: pi's own message protocol, to a backend that calls the model (another pi-proto, a
gateway), over the shared HTTP client of http.py.

The protocol is pi-ai's (api/pi-messages.ts, pi-ai 1.6): one `POST <baseUrl>/messages` of
`{model, context, options}` in pi-JSON with `authorization: Bearer <apiKey>`. The context is the
transcript as pi's normalizeContext leaves it, the prompt and tools in system messages for the
backend to resolve. The answer is an event stream of pi's assistant-message events without their
partial message; each becomes our event, its contentIndex checked as pi checks it. `done` and
`error` end it with the usage (the backend prices its calls), the response id, the model that
answered and the effort it used; a stream without either is an error. An HTTP error's body is
`{"error": {"message", "code"}}`. As in pi, nothing is retried here: the backend retries its own
provider.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2

from ..._gen.types.pi.ai.v1 import (
    AgentContext,
    AssistantMessage,
    Diagnostic,
    ToolCall,
)
from ...ir.messages import dump_json
from ...transcripts import pi_json
from ...transcripts.pi_json import STOP_REASONS
from ...transcripts.pi_options import options_to_pi
from .call import Call, ProviderError, quote
from .catalog import ModelConfig
from .http import describing, http_client
from .system import normalize

# The options pi's pi-messages client sends; the others shape a call on the backend's side.
PI_MESSAGES_OPTIONS = ("temperature", "maxTokens", "reasoning", "cacheRetention", "sessionId", "toolChoice")
# The reasons each terminal event may give, in pi's words.
DONE_REASONS = {name: STOP_REASONS[name] for name in ("stop", "length", "toolUse")}
ERROR_REASONS = {name: STOP_REASONS[name] for name in ("error", "aborted")}
BLOCKS = ("text", "thinking", "toolcall")  # the event families that name a block by contentIndex
REWRITE = "pi_messages_rewrite"  # pi's diagnostic for the backend's rewrite of the request
# What a done or error event says of the response, read as the assistant message's fields.
ENDING_KEYS = ("usage", "responseId", "responseModel", "providerThinkingLevel", "errorMessage")


async def stream(call: Call) -> None:
    """Run one pi-messages call and tell `call` what its backend streams."""
    if not call.model.api_key:
        raise ProviderError(f"no API key for provider {call.model.info.provider!r}")
    client = http_client(call)
    try:
        content = dump_json(body(call)).encode()
        async with client.stream(
            "POST", url(call), params=_query(call), content=content, headers=headers(call)
        ) as answer:
            if not answer.is_success:
                raise ProviderError(
                    status_error(call.model, answer.status_code, answer.reason_phrase, await answer.aread())
                )
            await call.start()
            await _Reader(call).read(answer.aiter_bytes())
    finally:
        await client.aclose()  # also when cancelled: the backend sees the connection close


# --- the request ---------------------------------------------------------------------------------


def url(call: Call) -> str:
    return call.model.info.base_url.rstrip("/") + "/messages"


def _query(call: Call) -> dict[str, str]:
    """pi's `debug` option, which asks the backend for debug metadata, goes in the URL."""
    return {"debug": "1"} if call.provider_options().get("debug") else {}


def headers(call: Call) -> httpx2.Headers:
    """pi's headers, then the catalog's and the call's over them (by name, whatever its case)."""
    out = httpx2.Headers(
        {
            "authorization": f"Bearer {call.model.api_key}",
            "accept": "text/event-stream",
            "content-type": "application/json",
        }
    )
    for name, value in call.headers().items():
        out[name] = value
    return out


def body(call: Call) -> dict[str, Any]:
    """`{model, context, options}` as pi sends them: the transcript with the shorthand folded into
    a leading system message (custom roles, which pi never sends a provider, left out), and the
    options the call sets."""
    messages = [message for message in normalize(call.context) if message.custom is None]
    return {
        "model": call.model.info.id,
        "context": pi_json.context_to_pi(AgentContext(messages=messages)),
        "options": options(call),
    }


def options(call: Call) -> dict[str, Any]:
    """pi's PiMessagesOptions of the call, those it sets only, with its provider options on top."""
    sent = {key: value for key, value in options_to_pi(call.options).items() if key in PI_MESSAGES_OPTIONS}
    sent.update((key, value) for key, value in call.provider_options().items() if key != "debug")
    return sent


# --- the answer ----------------------------------------------------------------------------------


async def event_data(body: AsyncIterator[bytes], call: Call) -> AsyncIterator[str]:
    """The data of each event of the body, as pi's reader takes it: an event ends at a blank line
    (LF or CRLF line ends), its first `data:` line is its data, and `[DONE]` is none. The event
    being read counts toward the call's size limit, and its lines are gathered in a bytearray, so
    an event of many pieces costs linear time."""
    event = bytearray()
    async for chunk in body:
        for line in chunk.splitlines(keepends=True):
            event += line
            if event.endswith((b"\n\n", b"\n\r\n")):
                if (data := _data(event)) is not None:
                    yield data
                event.clear()
        call.check_size(len(event))
    if event.strip() and (data := _data(event)) is not None:
        yield data


def _data(event: bytearray) -> str | None:
    for line in event.decode("utf-8", "replace").replace("\r\n", "\n").split("\n"):
        if line.startswith("data:"):
            data = line[5:].strip()
            return data if data and data != "[DONE]" else None
    return None


class _Reader:
    """One stream's blocks: the kind of each block still open, by its content index."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.open: dict[int, str] = {}
        self.events = 0

    async def read(self, body: AsyncIterator[bytes]) -> None:
        """Apply the body's events up to the terminal one; raises ProviderError for an `error`
        event, and for a stream that ends without either."""
        async for data in event_data(body, self.call):
            self.events += 1
            if await self.apply(self._json(data)):
                return
        if not self.events:
            raise self.call.no_events()
        raise ProviderError(f"{self.call.provider} ended its event stream without a terminal event")

    async def apply(self, event: dict[str, Any]) -> bool:
        """Apply one event; True when it ends the stream (`done`)."""
        kind = event.get("type")
        if not isinstance(kind, str):
            raise ProviderError(f"{self.call.provider} sent an event without a type: {self._quote(dump_json(event))}")
        index = self._index(kind, event["contentIndex"]) if "contentIndex" in event else None
        if kind == "done":
            self._done(event)
            return True
        if kind == "error":
            raise self._error(event)
        family, _, step = kind.partition("_")
        if family not in BLOCKS or step not in ("start", "delta", "end"):
            return False  # `start` (ours went out when the backend answered), or a later version's
        if index is None:
            raise ProviderError(f"{self.call.provider} sent a {kind} event without a contentIndex")
        if step == "start":
            await self._start(kind, index, event)
        elif step == "delta":
            await self._delta(kind, index, self._string(event, kind, "delta"))
        else:
            await self._end(kind, index, event)
        return False

    def _index(self, kind: str, index: Any) -> int:
        """A block's index as pi checks it: an integer of the content, or the next one for a start.
        A start must also take the next index: pi would replace an earlier block, which our events
        cannot say."""
        size = len(self.call.events.partial.content)
        limit = size if kind.endswith("_start") else size - 1
        integral = type(index) is int or (type(index) is float and index.is_integer())
        if not integral or not 0 <= index <= limit:
            raise ProviderError(
                f"{self.call.provider} sent an invalid contentIndex {self._quote(dump_json(index))} in a {kind} event"
            )
        if kind.endswith("_start") and index != size:
            raise ProviderError(f"{self.call.provider} started block {int(index)} again in a {kind} event")
        return int(index)

    async def _start(self, kind: str, index: int, event: dict[str, Any]) -> None:
        call = self.call
        if kind == "text_start":
            await call.open_text()
        elif kind == "thinking_start":
            await call.open_thinking()
        else:
            await call.open_tool_call(self._string(event, kind, "id"), self._string(event, kind, "toolName"))
        self.open[index] = kind.removesuffix("_start")

    async def _delta(self, kind: str, index: int, delta: str) -> None:
        call = self.call
        self._check_open(kind, index)
        if kind == "text_delta":
            await call.text(index, delta)
        elif kind == "thinking_delta":
            await call.thinking(index, delta)
        else:
            await call.tool_arguments(index, delta)

    async def _end(self, kind: str, index: int, event: dict[str, Any]) -> None:
        call = self.call
        self._check_open(kind, index)
        del self.open[index]
        if kind == "toolcall_end":
            await call.end_tool_call(index, self._tool_call(index, event))
            return
        await self._rest_of(kind, index, event.get("content"))
        signature = self._optional_string(event, kind, "contentSignature")
        if kind == "text_end":
            await call.close_text(index, signature)
        else:
            redacted = event.get("redacted")
            if redacted is not None and type(redacted) is not bool:
                raise ProviderError(f"{call.provider} sent a {kind} event whose redacted is not true or false")
            await call.close_thinking(index, signature, redacted=redacted)

    async def _rest_of(self, kind: str, index: int, content: Any) -> None:
        """An end's `content`, the block's whole text, is what pi keeps; our events build it from
        the deltas, so what it adds to them goes as one more delta, and other text is refused."""
        if content is None:
            return
        if not isinstance(content, str):
            raise ProviderError(f"{self.call.provider} sent a {kind} event whose content is not a string")
        streamed = self._built(index)
        if not content.startswith(streamed):
            raise ProviderError(f"{self.call.provider} ended block {index} with other text than its deltas")
        if rest := content[len(streamed) :]:
            await (self.call.text(index, rest) if kind == "text_end" else self.call.thinking(index, rest))

    def _built(self, index: int) -> str:
        """The text a text or thinking block's deltas have built."""
        block = self.call.events.partial.content[index]
        if block.text is not None:
            return block.text.text
        return block.thinking.thinking if block.thinking is not None else ""

    def _check_open(self, kind: str, index: int) -> None:
        family = kind.partition("_")[0]
        if self.open.get(index) != family:
            raise ProviderError(
                f"{self.call.provider} sent a {kind} event for block {index}, which is no open {family} block"
            )

    def _tool_call(self, index: int, event: dict[str, Any]) -> ToolCall:
        """The toolcall_end's finished call, read by pi_json; its id and name default to the start's."""
        sent = event.get("toolCall")
        if not isinstance(sent, dict):
            raise ProviderError(f"{self.call.provider} sent a toolcall_end event without a toolCall object")
        started = self.call.events.partial.content[index].tool_call
        assert started is not None
        block = {"type": "toolCall", "id": started.id, "name": started.name, **sent}
        block["type"] = "toolCall"  # in the first place, where pi writes it
        finished = self._read("toolcall_end", {"content": [block]}).content[0].tool_call
        assert finished is not None  # a toolCall block reads as one
        return finished

    def _done(self, event: dict[str, Any]) -> None:
        reason = event.get("reason")
        if not isinstance(reason, str) or reason not in DONE_REASONS:
            raise ProviderError(
                f"{self.call.provider} sent a done event with the reason {self._quote(dump_json(reason))}"
            )
        self._ending("done", event)
        self.call.stop_reason = DONE_REASONS[reason]

    def _error(self, event: dict[str, Any]) -> ProviderError:
        """The error event's failure, its reason kept: the backend's own call may have been aborted."""
        reason = event.get("reason")
        if not isinstance(reason, str) or reason not in ERROR_REASONS:
            raise ProviderError(
                f"{self.call.provider} sent an error event with the reason {self._quote(dump_json(reason))}"
            )
        ended = self._ending("error", event)
        return ProviderError(
            ended.error_message or f"{self.call.provider} ended the call with an error", ERROR_REASONS[reason]
        )

    def _ending(self, kind: str, event: dict[str, Any]) -> AssistantMessage:
        """What a terminal event says of the response, put on the call as pi puts it on its message."""
        ended = self._read(kind, {key: event[key] for key in ENDING_KEYS if key in event})
        call = self.call
        if ended.usage is not None:
            call.take_usage(ended.usage)
        call.set_response(
            response_id=ended.response_id,
            response_model=ended.response_model,
            provider_thinking_level=ended.provider_thinking_level,
        )
        if isinstance(rewrite := event.get("rewrite"), dict):
            call.add_diagnostic(Diagnostic(type=REWRITE, timestamp=call.clock(), details_json=dump_json(rewrite)))
        return ended

    def _read(self, kind: str, fields: dict[str, Any]) -> AssistantMessage:
        """Fields of an event read as those of an assistant message, by pi_json: its checks and
        names of what is wrong, and its way of keeping what it does not model."""
        info = self.call.model.info
        value = {"role": "assistant", "content": [], "api": info.api, "provider": info.provider, "model": info.id}
        try:
            return pi_json.assistant_from_pi({**value, **fields, "timestamp": 0}, kind)
        except pi_json.PiJsonError as error:
            raise ProviderError(
                f"{self.call.provider} sent a {kind} event that is not valid pi-JSON: {error}"
            ) from None

    def _string(self, event: dict[str, Any], kind: str, key: str) -> str:
        value = event.get(key)
        if not isinstance(value, str):
            raise ProviderError(f"{self.call.provider} sent a {kind} event whose {key} is not a string")
        return value

    def _optional_string(self, event: dict[str, Any], kind: str, key: str) -> str | None:
        return None if event.get(key) is None else self._string(event, kind, key)

    def _json(self, data: str) -> dict[str, Any]:
        try:
            event = json.loads(data, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            raise ProviderError(f"{self.call.provider} sent an event that is not JSON: {self._quote(data)}") from None
        if not isinstance(event, dict):
            raise ProviderError(f"{self.call.provider} sent an event that is not a JSON object: {self._quote(data)}")
        return event

    def _quote(self, text: str) -> str:
        """The backend's text for an error message: the model's secrets scrubbed, then cut."""
        return quote(self.call.model, text)


def _no_constant(name: str) -> Any:
    """NaN and Infinity, which Python's JSON reader takes and JavaScript's JSON.parse does not."""
    raise ValueError(f"{name} is not JSON")


# --- errors --------------------------------------------------------------------------------------


def status_error(model: ModelConfig, status: int, reason: str, body: bytes) -> str:
    """An HTTP error as pi words it: the status, then the body's error message (the body itself when
    it has none) and its code; the backend's text is quoted."""
    text = body.decode("utf-8", "replace")
    message, code = _error_body(text)
    shown = quote(model, message if message is not None else text)
    head = f"the provider answered {status} {reason}".rstrip()
    return head + (f": {shown}" if shown else "") + (f" ({quote(model, code)})" if code else "")


def _error_body(text: str) -> tuple[str | None, str | None]:
    """The message and code of a body `{"error": {"message", "code"}}`, each when a string."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None, None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        return None, None
    message, code = error.get("message"), error.get("code")
    return (message if isinstance(message, str) else None), (code if isinstance(code, str) else None)


@describing
def describe(error: BaseException, model: ModelConfig) -> str:
    """What went wrong, in words for the client (the model's secrets are scrubbed after)."""
    if isinstance(error, httpx2.ConnectError):
        return f"cannot reach the provider: {error}"
    if isinstance(error, httpx2.HTTPError):
        return f"the connection to the provider broke: {error}"
    return f"{type(error).__name__}: {error}"
