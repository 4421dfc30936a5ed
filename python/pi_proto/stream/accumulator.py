"""The accumulator: applies a stream's events, in order, to the partial message they describe.

Server-side models, the client and the tests share this one implementation, so a partial rebuilt
from the wire is the partial the sender had (the stream contract in service.proto, rule 4). It
also enforces the stream rules (the values of pi.ai.v1.StreamRule, stated in
proto/pi/ai/v1/event.proto): an event that breaks one raises StreamProtocolError with the
event's index and the rule.

While a tool call streams, its `arguments_json` is the text so far completed into a JSON object
(partial_json.py). The completion copies the text, so it is built when read (by attribute, by
encoding, copying or comparing the call), once per delta at most, and not for a call nobody
reads: a stream of many tool-call deltas costs linear time. An event that carries `usage` sets
the partial's usage.

The conformance corpus (tests/conformance/stream.yaml) pins each rule for every runtime.
"""

from __future__ import annotations

import copy
from typing import Any, TypeGuard

from .._gen.types.pi.ai.v1 import (
    AssistantContent,
    AssistantMessage,
    ModelEvent,
    StreamRule,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from ..ir.events import event_kind, utf8_size
from ..wire.validate import Violation, violations
from .digest import content_sha256
from .partial_json import Completion

_BLOCK_OF_KIND = {"text": "text", "thinking": "thinking", "toolcall": "tool_call"}
_BLOCK_NAMES = {"text": "text", "thinking": "thinking", "tool_call": "tool call"}
# The most a receiver accumulates from block events unless told otherwise: 64 MiB of UTF-8.
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class StreamProtocolError(ValueError):
    """An event that does not fit the stream received so far: its index, the rule and why.

    `violations` lists what a terminal event breaks for rule `terminal-valid`, with paths from the
    event (e.g. `done.message.content[0].tool_call.id`).
    """

    def __init__(self, event_index: int, rule: StreamRule, detail: str, violations: tuple[Violation, ...] = ()) -> None:
        super().__init__(f"event {event_index} breaks rule '{stream_rule_id(rule)}': {detail}")
        self.event_index = event_index
        self.rule = rule
        self.detail = detail
        self.violations = violations

    @property
    def rule_id(self) -> str:
        """The rule's text id, e.g. "block-open"."""
        return stream_rule_id(self.rule)


def stream_rule_id(rule: StreamRule) -> str:
    """The text id of a stream rule (its name without the prefix, in lower case with hyphens),
    as the conformance corpus and error messages name it: BLOCK_OPEN is "block-open"."""
    return rule.name.lower().replace("_", "-")


class Accumulator:
    """Rebuilds the partial AssistantMessage of one stream and attaches it to every event.

    The partial is one live object updated in place, as in pi: an event's `partial` shows the
    message after that event, until the next event changes it. Deltas are appended without
    copying the text received so far, so a long answer costs linear, not quadratic, time.
    """

    def __init__(self, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self.partial = AssistantMessage()
        # The content the block events built, once a terminal event has replaced the partial
        # with its message: what that event's content_sha256 is the digest of.
        self.built: list[AssistantContent] = []
        self.count = 0
        self.max_message_bytes = max_message_bytes
        self.received_bytes = 0  # of UTF-8, over what the block events so far brought (size-limit)
        self._started = False
        self._open: list[bool] = []  # per block: not yet ended
        self._completions: dict[int, Completion] = {}  # per tool call still streaming
        self._call_bytes: dict[int, int] = {}  # per tool call still streaming: the bytes it counted

    def apply(self, event: ModelEvent) -> ModelEvent:
        """Apply `event` to the partial, set `event.partial`, and return the event."""
        # Deltas are most of a stream: text and tool-call deltas take a short path.
        if ((text := event.text_delta) is not None and self._append_text(text.content_index, text.delta)) or (
            (arguments := event.toolcall_delta) is not None
            and self._append_arguments(arguments.content_index, arguments.delta)
        ):
            self.count += 1
            if event.usage is not None:
                self.partial.usage = event.usage
            event.partial = self.partial
            return event
        kind, body = event_kind(event)
        index = self.count
        self.count += 1
        if not kind:
            raise StreamProtocolError(index, StreamRule.EVENT_KIND, "no event kind is set")
        rule = _Rules(index, kind)  # two slots: cheap next to the event it describes
        if kind in ("done", "error"):
            self._finish(rule, body)
        elif kind == "start":
            if self._started or index > 0:
                raise rule.broken(
                    StreamRule.START_ONCE if self._started else StreamRule.START_FIRST, "start must be the first event"
                )
            self._started = True
            header = body.header if body.header is not None else AssistantMessage()
            self.partial = copy.copy(header)
            self.partial.content = list(header.content)
            self._open = [False] * len(header.content)
        elif not self._started:
            raise rule.broken(StreamRule.START_FIRST, "a stream opens with start")
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

    def _append_arguments(self, at: Any, delta: Any) -> bool:
        """A tool-call delta to a streaming call of this partial, within the size limit, applied as
        _apply_block would; False, changing nothing, for anything else."""
        content = self.partial.content
        if not self._started or type(at) is not int or type(delta) is not str:
            return False
        if not 0 <= at < len(content) or not self._open[at]:
            return False
        call = content[at].tool_call
        completion = self._completions.get(at)
        if call is None or completion is None or not _completes(call, completion):
            return False
        size = len(delta) if delta.isascii() else len(delta.encode())
        if self.received_bytes + size > self.max_message_bytes:
            return False
        self.received_bytes += size
        self._call_bytes[at] += size
        fields = call.__dict__
        raw = fields["raw_arguments"] or ""
        fields["raw_arguments"] = ""  # dropped first, so CPython can grow the string in place
        raw += delta
        fields["raw_arguments"] = raw
        fields.pop("arguments_json", None)  # built again when next read
        completion.read(raw)
        return True

    def close(self, event: ModelEvent) -> ModelEvent:
        """Attach the message of a terminal event built from this partial, without the rules."""
        _, body = event_kind(event)
        message = body.message
        for content in message.content:
            if isinstance(call := content.tool_call, _StreamingToolCall):
                content.tool_call = copy.copy(call)  # the message goes on as plain ToolCalls
        self.built = message.content
        self.partial = message
        event.partial = self.partial
        return event

    def _count(self, rule: _Rules, size: int) -> None:
        """Count `size` more bytes toward the limit, or refuse the event, counting nothing."""
        if self.received_bytes + size > self.max_message_bytes:
            raise rule.broken(
                StreamRule.SIZE_LIMIT,
                f"the block events add up to more than the limit of {self.max_message_bytes} bytes",
            )
        self.received_bytes += size

    def _apply_block(self, rule: _Rules, kind: str, body: Any) -> None:
        family, _, step = kind.partition("_")
        member = _BLOCK_OF_KIND[family]
        content = self.partial.content
        at = body.content_index
        if step == "start":
            if at != len(content):
                raise rule.broken(StreamRule.NEXT_INDEX, f"content_index {at} must open the next block, {len(content)}")
            if member == "tool_call":
                size = utf8_size(body.id) + utf8_size(body.name)
                self._count(rule, size)
                completion = self._completions[at] = Completion()
                self._call_bytes[at] = size
                content.append(AssistantContent(tool_call=_StreamingToolCall.started(body.id, body.name, completion)))
            else:
                content.append(_new_block(member))
            self._open.append(True)
            return
        if at >= len(content):
            raise rule.broken(
                StreamRule.BLOCK_EXISTS, f"content_index {at} refers to no block (the message has {len(content)})"
            )
        block = getattr(content[at], member)
        if block is None:
            raise rule.broken(StreamRule.BLOCK_KIND, f"block {at} is not a {_BLOCK_NAMES[member]} block")
        if not self._open[at]:
            raise rule.broken(StreamRule.BLOCK_OPEN, f"block {at} has already ended")
        if step == "delta":
            delta = body.delta
            size = utf8_size(delta)
            self._count(rule, size)
            _append(block, delta)
            if member == "tool_call":
                self._call_bytes[at] += size
                completion = self._completions[at]
                completion.read(block.raw_arguments)
                if _completes(block, completion):
                    block.__dict__.pop("arguments_json", None)  # built again when next read
                else:  # a call the caller put in the partial's place
                    block.arguments_json = completion.completed(block.raw_arguments)
            return
        if member == "text":
            signature = body.text_signature
            self._count(rule, utf8_size(signature) if signature is not None else 0)
            if signature is not None:
                block.text_signature = signature
        elif member == "thinking":
            signature = body.thinking_signature
            self._count(rule, utf8_size(signature) if signature is not None else 0)
            if signature is not None:
                block.thinking_signature = signature
            if body.redacted is not None:
                block.redacted = body.redacted
        else:
            call = body.tool_call if body.tool_call is not None else ToolCall()
            if call.id != block.id:
                raise rule.broken(
                    StreamRule.TOOL_CALL_ID, f"tool call {at} started as {block.id!r} but ends as {call.id!r}"
                )
            # The call replaces the streamed one: only what it holds beyond that counts again.
            self._count(rule, max(0, _call_size(call) - self._call_bytes[at]))
            content[at] = AssistantContent(tool_call=call)
        self._open[at] = False
        self._completions.pop(at, None)
        self._call_bytes.pop(at, None)

    def _finish(self, rule: _Rules, body: Any) -> None:
        broken = violations(ModelEvent(**{rule.kind: body}))
        if broken:
            raise rule.broken(StreamRule.TERMINAL_VALID, "; ".join(map(str, broken)), tuple(broken))
        message = body.message
        if self._started:
            streamed = [_member(content) for content in self.partial.content]
            final = [_member(content) for content in message.content]
            if streamed != final:
                raise rule.broken(
                    StreamRule.TERMINAL_AGREES, f"the message has blocks {final}, the stream built {streamed}"
                )
        if body.content_sha256 and content_sha256(self.partial.content) != body.content_sha256:
            raise rule.broken(
                StreamRule.TERMINAL_DIGEST,
                "content_sha256 is not the digest of the content the stream's events built",
            )
        self.built = self.partial.content
        self.partial = message


class _Rules:
    """Builds the errors of one event, each naming the event's index and kind and the rule."""

    def __init__(self, index: int, kind: str) -> None:
        self.index = index
        self.kind = kind

    def broken(self, rule: StreamRule, detail: str, violations: tuple[Violation, ...] = ()) -> StreamProtocolError:
        return StreamProtocolError(self.index, rule, f"{self.kind}: {detail}", violations)


def _new_block(member: str) -> AssistantContent:
    if member == "text":
        return AssistantContent(text=TextContent(text=""))
    return AssistantContent(thinking=ThinkingContent(thinking=""))


def _call_size(call: ToolCall) -> int:
    """The bytes a tool call holds: the UTF-8 of its strings, and any fields the schema does not know."""
    optional = (call.raw_arguments or "", call.thought_signature or "")
    strings = (call.id, call.name, call.arguments_json or "", call.extra_json, *optional)
    return sum(map(utf8_size, strings)) + len(call.__dict__.get("_unknown_fields") or b"")


def _completes(call: ToolCall, completion: Completion | None) -> TypeGuard[_StreamingToolCall]:
    """Whether `call` is the streaming call that `completion` completes when it is read."""
    fields = call.__dict__
    return type(fields) is _LiveFields and fields.completion is completion


class _LiveFields(dict[str, Any]):
    """The fields of a streaming tool call. `arguments_json`, the completion of its text so far,
    is left out until read: reading it, as an attribute or through the dict as the wire code
    does, builds and keeps it, and the next delta drops it again."""

    __slots__ = ("completion",)

    def __init__(self, values: dict[str, Any], completion: Completion) -> None:
        super().__init__(values)
        self.completion = completion

    def __missing__(self, key: str) -> Any:
        if key != "arguments_json":
            raise KeyError(key)
        completed: str = self.completion.completed(self["raw_arguments"] or "")
        self["arguments_json"] = completed
        return completed


class _StreamingToolCall(ToolCall):
    """The partial's tool call while its arguments stream: a ToolCall in every way (its fields,
    encoding, equality with a ToolCall), whose `arguments_json` is completed when read.

    A copy is a plain ToolCall, as it stands at the copy.
    """

    @classmethod
    def started(cls, id: str, name: str, completion: Completion) -> _StreamingToolCall:
        call = cls.__new__(cls)
        values = ToolCall(id=id, name=name, raw_arguments="").__dict__
        del values["arguments_json"]  # the completion of "", "{}", once read
        call.__dict__ = _LiveFields(values, completion)
        return call

    @property
    def arguments_json(self) -> str:
        value: str = self.__dict__["arguments_json"]
        return value

    @arguments_json.setter
    def arguments_json(self, value: str) -> None:
        self.__dict__["arguments_json"] = value

    def _snapshot(self) -> ToolCall:
        values = dict(self.__dict__)
        values["arguments_json"] = self.arguments_json
        call = ToolCall.__new__(ToolCall)
        call.__dict__ = values
        return call

    def __copy__(self, _: Any = None) -> ToolCall:  # type: ignore[override]
        return self._snapshot()

    def __deepcopy__(self, memo: Any = None) -> ToolCall:  # type: ignore[override]
        return copy.deepcopy(self._snapshot(), memo)

    def __reduce__(self) -> tuple[Any, ...]:
        return self._snapshot().__reduce__()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolCall):
            return NotImplemented
        return self._snapshot() == (other._snapshot() if isinstance(other, _StreamingToolCall) else other)

    __hash__ = None  # type: ignore[assignment]


# Named as the type it stands for, so encoding a call on its own, repr() and the wire code's
# lookups by name treat it as one.
_StreamingToolCall.__name__ = _StreamingToolCall.__qualname__ = ToolCall.__name__
_StreamingToolCall.__module__ = ToolCall.__module__


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
