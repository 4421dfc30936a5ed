"""The accumulator: applies a stream's events, in order, to the partial message they describe.

Server-side models, the client and the tests share this one implementation, so a partial rebuilt
from the wire is the partial the sender had (the stream contract in service.proto, rule 4). It
also enforces the stream rules; an event that breaks one raises StreamProtocolError with the
event's index and the rule's id:

- `event-kind`: an event has exactly one kind set.
- `start-first`: a stream opens with `start` (a call that failed before it started may consist of
  its terminal event alone); `start-once`: there is only one `start`.
- `next-index`: a `*_start` event opens the next index of the content.
- `block-exists`, `block-kind`, `block-open`: a delta or end event refers to a block that exists,
  of its own kind, and not yet ended; `tool-call-id`: a tool call ends with the id it started with.
- `terminal-valid`: a `done` or `error` event passes the schema's rules (its reason, a message
  whose stop reason equals it, and every rule of that message); `terminal-agrees`: the message has
  the blocks that were streamed, in number and kind.
- `size-limit`: the deltas received stay within the receiver's limit, in bytes of UTF-8.

While a tool call streams, its `arguments_json` is the text so far completed into a JSON object
(partial_json.py), and an event that carries `usage` sets the partial's usage.

The conformance corpus (tests/conformance/stream.json) pins each rule for every runtime.
"""

from __future__ import annotations

import copy
from typing import Any

from ._gen.types.pi.ai.v1 import (
    AssistantContent,
    AssistantMessage,
    ModelEvent,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from .events import event_kind, utf8_size
from .partial_json import Completion
from .validate import Violation, violations

_BLOCK_OF_KIND = {"text": "text", "thinking": "thinking", "toolcall": "tool_call"}
_BLOCK_NAMES = {"text": "text", "thinking": "thinking", "tool_call": "tool call"}
# The most a receiver accumulates from deltas unless told otherwise: 64 MiB of UTF-8.
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class StreamProtocolError(ValueError):
    """An event that does not fit the stream received so far: its index, the rule and why.

    `violations` lists what a terminal event breaks for rule `terminal-valid`, with paths from the
    event (e.g. `done.message.content[0].tool_call.id`).
    """

    def __init__(self, event_index: int, rule_id: str, detail: str, violations: tuple[Violation, ...] = ()) -> None:
        super().__init__(f"event {event_index} breaks rule '{rule_id}': {detail}")
        self.event_index = event_index
        self.rule_id = rule_id
        self.detail = detail
        self.violations = violations


class Accumulator:
    """Rebuilds the partial AssistantMessage of one stream and attaches it to every event.

    The partial is one live object updated in place, as in pi: an event's `partial` shows the
    message after that event, until the next event changes it. Deltas are appended without
    copying the text received so far, so a long answer costs linear, not quadratic, time.
    """

    def __init__(self, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self.partial = AssistantMessage()
        self.count = 0
        self.max_message_bytes = max_message_bytes
        self.received_bytes = 0  # of UTF-8, over every delta so far
        self._started = False
        self._open: list[bool] = []  # per block: not yet ended
        self._completions: dict[int, Completion] = {}  # per tool call still streaming

    def apply(self, event: ModelEvent) -> ModelEvent:
        """Apply `event` to the partial, set `event.partial`, and return the event."""
        if (body := event.text_delta) is not None and self._append_text(body.content_index, body.delta):
            self.count += 1
            if event.usage is not None:
                self.partial.usage = event.usage
            event.partial = self.partial
            return event
        kind, body = event_kind(event)
        index = self.count
        self.count += 1
        if not kind:
            raise StreamProtocolError(index, "event-kind", "no event kind is set")
        rule = _Rules(index, kind)  # two slots: cheap next to the event it describes
        if kind in ("done", "error"):
            self._finish(rule, body)
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
        if event.usage is not None and kind not in ("done", "error"):
            self.partial.usage = event.usage  # the sender's usage changed with this event
        event.partial = self.partial
        return event

    def _append_text(self, at: Any, delta: Any) -> bool:
        """A text delta to an open text block, within the size limit, appended as _apply_block
        would (most events of a stream are these); False, changing nothing, for anything else,
        which the general path then applies or refuses."""
        content = self.partial.content
        if not self._started or type(at) is not int or type(delta) is not str:
            return False
        if not 0 <= at < len(content) or not self._open[at]:
            return False
        block = content[at].text
        if block is None:
            return False
        size = len(delta) if delta.isascii() else len(delta.encode())
        if self.received_bytes + size > self.max_message_bytes:
            return False
        self.received_bytes += size
        text, block.text = block.text, ""  # dropped first, so CPython can grow the string in place
        text += delta
        block.text = text
        return True

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
            if member == "tool_call":
                self._completions[at] = Completion()
            return
        if at >= len(content):
            raise rule.broken("block-exists", f"content_index {at} refers to no block (the message has {len(content)})")
        block = getattr(content[at], member)
        if block is None:
            raise rule.broken("block-kind", f"block {at} is not a {_BLOCK_NAMES[member]} block")
        if not self._open[at]:
            raise rule.broken("block-open", f"block {at} has already ended")
        if step == "delta":
            delta = body.delta
            self.received_bytes += utf8_size(delta)
            if self.received_bytes > self.max_message_bytes:
                raise rule.broken(
                    "size-limit", f"the deltas add up to more than the limit of {self.max_message_bytes} bytes"
                )
            _append(block, delta)
            if member == "tool_call":
                block.arguments_json = self._completions[at].update(block.raw_arguments)
            return
        self._open[at] = False
        self._completions.pop(at, None)
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

    def _finish(self, rule: _Rules, body: Any) -> None:
        broken = violations(ModelEvent(**{rule.kind: body}))
        if broken:
            raise rule.broken("terminal-valid", "; ".join(map(str, broken)), tuple(broken))
        message = body.message
        if self._started:
            streamed = [_member(content) for content in self.partial.content]
            final = [_member(content) for content in message.content]
            if streamed != final:
                raise rule.broken("terminal-agrees", f"the message has blocks {final}, the stream built {streamed}")
        self.partial = message


class _Rules:
    """Builds the errors of one event, each naming the event's index and kind and the rule."""

    def __init__(self, index: int, kind: str) -> None:
        self.index = index
        self.kind = kind

    def broken(self, rule: str, detail: str, violations: tuple[Violation, ...] = ()) -> StreamProtocolError:
        return StreamProtocolError(self.index, rule, f"{self.kind}: {detail}", violations)


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
