"""ModelEvent helpers: an event's kind, its wire form, terminal events, and the events of a message."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from .._gen.types.pi.ai.v1 import (
    AssistantContent,
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    ModelEvent,
    StartEvent,
    StopReason,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from .messages import zero_usage

FAILED = (StopReason.ERROR, StopReason.ABORTED)


# The members of ModelEvent's oneof, the frequent ones first: event_kind runs on every event.
EVENT_KINDS = (
    "text_delta", "thinking_delta", "toolcall_delta", "text_start", "text_end", "thinking_start", "thinking_end",
    "toolcall_start", "toolcall_end", "start", "done", "error",
)  # fmt: skip


DELTA_KINDS = EVENT_KINDS[:3]  # the three deltas, first (tests/test_fast_paths.py checks it)


def event_kind(event: ModelEvent) -> tuple[str, Any]:
    """The event's kind (pi's event type name, e.g. "text_delta") and its body; ("", None) if unset.

    The first member set wins; encoding refuses an event with two (see wire.encode).
    """
    members = event.__dict__
    for kind in EVENT_KINDS:
        body = members[kind]
        if body is not None:
            return kind, body
    return "", None


def delta_of(event: ModelEvent) -> TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent | None:
    """The event's delta body (text, thinking or tool-call arguments); None for any other event.

    Read from the members themselves: `a or b` on messages would ask each whether it is empty,
    which betterproto2 answers by comparing every field with its default, on every event.
    """
    members = event.__dict__
    body: TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent | None = members["text_delta"]
    if body is None:
        body = members["thinking_delta"]
        if body is None:
            body = members["toolcall_delta"]
    return body


def utf8_size(text: str) -> int:
    """The length of `text` in bytes of UTF-8, without encoding it when it is ASCII."""
    return len(text) if text.isascii() else len(text.encode())


def without_partial(event: ModelEvent) -> ModelEvent:
    """The event as it travels: `partial` is never sent (stream contract, rule 4)."""
    kind, body = event_kind(event)
    return ModelEvent(**({kind: body} if kind else {}), usage=event.usage, seq=event.seq)


def is_terminal(event: ModelEvent) -> bool:
    """Whether an event ends its stream: `done` or `error`."""
    return event.done is not None or event.error is not None


def terminal_message(event: ModelEvent) -> AssistantMessage:
    """The final message a terminal event carries; other events cannot produce a result."""
    terminal = event.done if event.done is not None else event.error
    if terminal is None or terminal.message is None:
        raise ValueError("only a done or error event carrying a message produces the final message")
    return terminal.message


def events_of(message: AssistantMessage, delta_size: int = 8) -> Iterator[ModelEvent]:
    """The events that stream `message`: start, each block's start/deltas/end, then the terminal.

    Text, reasoning and tool-call arguments are cut into deltas of `delta_size` characters. The
    terminal event carries `message` itself; every other event holds fresh objects.
    """
    if delta_size < 1:
        raise ValueError(f"delta_size must be at least 1, got {delta_size}")
    header = AssistantMessage(
        api=message.api, provider=message.provider, model=message.model, usage=zero_usage(), timestamp=message.timestamp
    )
    yield ModelEvent(start=StartEvent(header=header))
    for index, content in enumerate(message.content):
        yield from _block_events(index, content, delta_size)
    if message.stop_reason in FAILED:
        yield ModelEvent(error=ErrorEvent(reason=message.stop_reason, message=message))
    else:
        yield ModelEvent(done=DoneEvent(reason=message.stop_reason, message=message))


def _block_events(index: int, content: AssistantContent, size: int) -> Iterator[ModelEvent]:
    if (text := content.text) is not None:
        yield ModelEvent(text_start=TextStartEvent(content_index=index))
        yield from _deltas(_text_delta, index, text.text, size)
        yield ModelEvent(text_end=TextEndEvent(content_index=index, text_signature=text.text_signature))
    elif (thinking := content.thinking) is not None:
        yield ModelEvent(thinking_start=ThinkingStartEvent(content_index=index))
        yield from _deltas(_thinking_delta, index, thinking.thinking, size)
        signature, redacted = thinking.thinking_signature, thinking.redacted
        yield ModelEvent(
            thinking_end=ThinkingEndEvent(content_index=index, thinking_signature=signature, redacted=redacted)
        )
    elif (call := content.tool_call) is not None:
        yield ModelEvent(toolcall_start=ToolCallStartEvent(content_index=index, id=call.id, name=call.name))
        raw = call.raw_arguments if call.raw_arguments is not None else call.arguments_json or "{}"
        yield from _deltas(_toolcall_delta, index, raw, size)
        yield ModelEvent(toolcall_end=ToolCallEndEvent(content_index=index, tool_call=copy.copy(call)))
    else:
        raise ValueError(f"content[{index}] has no block set")


DeltaMaker = Callable[[int, str], ModelEvent]


def _deltas(make: DeltaMaker, index: int, text: str, size: int) -> Iterator[ModelEvent]:
    for start in range(0, len(text), size):
        yield make(index, text[start : start + size])


def _delta_maker(kind: str, body: type[Any]) -> DeltaMaker:
    """A maker of `kind` delta events, built as a copy of what the constructors set with the two
    values filled in: equal to `ModelEvent(kind=body(content_index=..., delta=...))`, in half the
    time, for the events that are most of a stream."""
    event_blank, body_blank = ModelEvent().__dict__.copy(), body().__dict__.copy()
    new = object.__new__

    def make(index: int, delta: str) -> ModelEvent:
        values = body_blank.copy()
        values["content_index"] = index
        values["delta"] = delta
        made = new(body)
        made.__dict__ = values
        members = event_blank.copy()
        members[kind] = made
        event: ModelEvent = new(ModelEvent)
        event.__dict__ = members
        return event

    return make


_text_delta = _delta_maker("text_delta", TextDeltaEvent)
_thinking_delta = _delta_maker("thinking_delta", ThinkingDeltaEvent)
_toolcall_delta = _delta_maker("toolcall_delta", ToolCallDeltaEvent)
# A delta event of each kind, from its content index and text: delta_event[kind](index, delta).
delta_event: dict[str, DeltaMaker] = {
    "text_delta": _text_delta,
    "thinking_delta": _thinking_delta,
    "toolcall_delta": _toolcall_delta,
}
