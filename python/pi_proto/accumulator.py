"""The accumulator: applies a stream's events, in order, to the partial message they describe.

Server-side models, the client and the tests share this one implementation, so a partial rebuilt
from the wire is the partial the sender had (the stream contract in service.proto, rule 4). It
also enforces the event-sequence rules; an event that breaks one raises StreamProtocolError
naming the event's index and the rule:

- `event-kind`: an event has exactly one kind set.
- `start-first`: a stream opens with `start` (a call that failed before it started may consist of
  its terminal event alone); `start-once`: there is only one `start`.
- `next-index`: a `*_start` event opens the next index of the content.
- `block-exists`, `block-kind`, `block-open`: a delta or end event refers to a block that exists,
  of its own kind, and not yet ended; `tool-call-id`: a tool call ends with the id it started with.
- `terminal-message`: a `done` or `error` event carries a message; `terminal-reason`: `done` has
  STOP, LENGTH or TOOL_USE and `error` has ERROR or ABORTED, equal to the message's stop reason;
  `terminal-agrees`: the message has the blocks that were streamed, in number and kind;
  `message-valid`: the message passes the message rules of `validate`.
"""

from __future__ import annotations

import copy
from typing import Any

from ._gen.types.pi.ai.v1 import (
    AssistantContent,
    AssistantMessage,
    ModelEvent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from .events import FAILED, event_kind
from .validate import DEFAULT_LIMITS, Limits, ValidationError, check_assistant

DONE_REASONS = (StopReason.STOP, StopReason.LENGTH, StopReason.TOOL_USE)
_BLOCK_OF_KIND = {"text": "text", "thinking": "thinking", "toolcall": "tool_call"}
_BLOCK_NAMES = {"text": "text", "thinking": "thinking", "tool_call": "tool call"}


class StreamProtocolError(ValueError):
    """An event that does not fit the stream received so far, naming its index and the rule."""


class Accumulator:
    """Rebuilds the partial AssistantMessage of one stream and attaches it to every event.

    The partial is one live object updated in place, as in pi: an event's `partial` shows the
    message after that event, until the next event changes it. Deltas are appended without
    copying the text received so far, so a long answer costs linear, not quadratic, time.
    """

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.partial = AssistantMessage()
        self.count = 0
        self.limits = limits
        self._started = False
        self._open: list[bool] = []  # per block: not yet ended

    def apply(self, event: ModelEvent) -> ModelEvent:
        """Apply `event` to the partial, set `event.partial`, and return the event."""
        kind, body = event_kind(event)
        index = self.count
        self.count += 1
        if not kind:
            raise StreamProtocolError(f"event {index} breaks rule 'event-kind': no event kind is set")
        rule = _Rules(index, kind)  # two slots: cheap next to the event it describes
        if kind in ("done", "error"):
            self._finish(rule, body.reason, body.message)
        elif kind == "start":
            if self._started or index > 0:
                raise rule.broken("start-once" if self._started else "start-first", "start must be the first event")
            self._started = True
            header = body.header if body.header is not None else AssistantMessage()
            self.partial = copy.copy(header)
            self.partial.content = list(header.content)
            self._open = [False] * len(header.content)
        elif not self._started:
            raise rule.broken("start-first", "a stream opens with start")
        else:
            self._apply_block(rule, kind, body)
        event.partial = self.partial
        return event

    def close(self, event: ModelEvent) -> ModelEvent:
        """Attach the message of a terminal event built from this partial, without the rules."""
        _, body = event_kind(event)
        self.partial = body.message
        event.partial = self.partial
        return event

    def _apply_block(self, rule: _Rules, kind: str, body: Any) -> None:
        family, _, step = kind.partition("_")
        member = _BLOCK_OF_KIND[family]
        content = self.partial.content
        at = body.content_index
        if step == "start":
            if at != len(content):
                raise rule.broken("next-index", f"content_index {at} must open the next block, {len(content)}")
            content.append(_new_block(member, body))
            self._open.append(True)
            return
        if at >= len(content):
            raise rule.broken("block-exists", f"content_index {at} refers to no block (the message has {len(content)})")
        block = getattr(content[at], member)
        if block is None:
            raise rule.broken("block-kind", f"block {at} is not a {_BLOCK_NAMES[member]} block")
        if not self._open[at]:
            raise rule.broken("block-open", f"block {at} has already ended")
        if step == "delta":
            _append(block, body.delta)
            return
        self._open[at] = False
        if member == "text":
            if body.text_signature is not None:
                block.text_signature = body.text_signature
        elif member == "thinking":
            if body.thinking_signature is not None:
                block.thinking_signature = body.thinking_signature
            if body.redacted is not None:
                block.redacted = body.redacted
        else:
            call = body.tool_call if body.tool_call is not None else ToolCall()
            if call.id != block.id:
                raise rule.broken("tool-call-id", f"tool call {at} started as {block.id!r} but ends as {call.id!r}")
            content[at] = AssistantContent(tool_call=call)

    def _finish(self, rule: _Rules, reason: StopReason, message: AssistantMessage | None) -> None:
        if message is None:
            raise rule.broken("terminal-message", "carries no message")
        allowed = DONE_REASONS if rule.kind == "done" else FAILED
        if reason not in allowed or message.stop_reason != reason:
            names = ", ".join(allowed_reason.name for allowed_reason in allowed)
            raise rule.broken(
                "terminal-reason",
                f"reason {_name(reason)} with a message stopped by {_name(message.stop_reason)}; "
                f"{rule.kind} takes {names}, equal in both",
            )
        if self._started:
            streamed = [_member(content) for content in self.partial.content]
            final = [_member(content) for content in message.content]
            if streamed != final:
                raise rule.broken("terminal-agrees", f"the message has blocks {final}, the stream built {streamed}")
        try:
            check_assistant(message, "message", self.limits)
        except ValidationError as error:
            raise rule.broken("message-valid", str(error)) from None
        self.partial = message


class _Rules:
    """Builds the errors of one event, each naming the event's index and kind and the rule."""

    def __init__(self, index: int, kind: str) -> None:
        self.index = index
        self.kind = kind

    def broken(self, rule: str, detail: str) -> StreamProtocolError:
        return StreamProtocolError(f"event {self.index} ({self.kind}) breaks rule '{rule}': {detail}")


def _new_block(member: str, body: Any) -> AssistantContent:
    if member == "text":
        return AssistantContent(text=TextContent(text=""))
    if member == "thinking":
        return AssistantContent(thinking=ThinkingContent(thinking=""))
    return AssistantContent(tool_call=ToolCall(id=body.id, name=body.name, arguments_json="{}", raw_arguments=""))


def _append(block: TextContent | ThinkingContent | ToolCall, delta: str) -> None:
    """Append in place: the block drops its reference first, so CPython can grow the string."""
    if isinstance(block, TextContent):
        text, block.text = block.text, ""
        text += delta
        block.text = text
    elif isinstance(block, ThinkingContent):
        thinking, block.thinking = block.thinking, ""
        thinking += delta
        block.thinking = thinking
    else:
        raw, block.raw_arguments = block.raw_arguments or "", ""
        raw += delta
        block.raw_arguments = raw


def _member(content: AssistantContent) -> str:
    return next((name for name in ("text", "thinking", "tool_call") if getattr(content, name) is not None), "none")


def _name(reason: StopReason) -> str:
    return reason.name or str(int(reason))
