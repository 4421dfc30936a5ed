"""The accumulator: applies a stream's events, in order, to the partial message they describe.

Server-side models, the client and the tests share this one implementation, so a partial rebuilt
from the wire is the partial the sender had (the stream contract in service.proto, rule 4).
"""

from __future__ import annotations

import copy

from ._gen.types.pi.ai.v1 import (
    AssistantContent,
    AssistantMessage,
    ModelEvent,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from .events import event_kind


class StreamProtocolError(ValueError):
    """An event that does not fit the stream received so far."""


class Accumulator:
    """Rebuilds the partial AssistantMessage of one stream and attaches it to every event.

    The partial is one live object updated in place, as in pi: an event's `partial` shows the
    message after that event, until the next event changes it. Deltas are appended without
    copying the text received so far, so a long answer costs linear, not quadratic, time.
    """

    def __init__(self) -> None:
        self.partial = AssistantMessage()
        self.count = 0

    def apply(self, event: ModelEvent) -> ModelEvent:
        """Apply `event` to the partial, set `event.partial`, and return the event."""
        kind, body = event_kind(event)
        index = self.count
        self.count += 1
        match kind:
            case "start":
                header = body.header or AssistantMessage()
                self.partial = copy.copy(header)
                self.partial.content = list(header.content)
            case "text_start":
                self._open(index, kind, body.content_index, AssistantContent(text=TextContent(text="")))
            case "text_delta":
                block = self._text(index, kind, body.content_index)
                text = block.text
                block.text = ""  # drop the block's reference so the append below happens in place
                text += body.delta
                block.text = text
            case "text_end":
                block = self._text(index, kind, body.content_index)
                if body.text_signature is not None:
                    block.text_signature = body.text_signature
            case "thinking_start":
                self._open(index, kind, body.content_index, AssistantContent(thinking=ThinkingContent(thinking="")))
            case "thinking_delta":
                reasoning = self._thinking(index, kind, body.content_index)
                thinking = reasoning.thinking
                reasoning.thinking = ""
                thinking += body.delta
                reasoning.thinking = thinking
            case "thinking_end":
                reasoning = self._thinking(index, kind, body.content_index)
                if body.thinking_signature is not None:
                    reasoning.thinking_signature = body.thinking_signature
                if body.redacted is not None:
                    reasoning.redacted = body.redacted
            case "toolcall_start":
                call = ToolCall(id=body.id, name=body.name, arguments_json="{}", raw_arguments="")
                self._open(index, kind, body.content_index, AssistantContent(tool_call=call))
            case "toolcall_delta":
                call = self._tool_call(index, kind, body.content_index)
                raw = call.raw_arguments or ""
                call.raw_arguments = ""
                raw += body.delta
                call.raw_arguments = raw
            case "toolcall_end":
                self._tool_call(index, kind, body.content_index)
                self.partial.content[body.content_index] = AssistantContent(tool_call=body.tool_call or ToolCall())
            case "done" | "error":
                if body.message is None:
                    raise StreamProtocolError(f"event {index} ({kind}): carries no message")
                self.partial = body.message
            case _:
                raise StreamProtocolError(f"event {index}: no event kind is set")
        event.partial = self.partial
        return event

    def _open(self, index: int, kind: str, content_index: int, block: AssistantContent) -> None:
        content = self.partial.content
        if content_index != len(content):
            raise StreamProtocolError(
                f"event {index} ({kind}): content_index {content_index} must open the next block, {len(content)}"
            )
        content.append(block)

    def _block(self, index: int, kind: str, content_index: int) -> AssistantContent:
        content = self.partial.content
        if content_index >= len(content):
            raise StreamProtocolError(
                f"event {index} ({kind}): content_index {content_index} refers to no block "
                f"(the message has {len(content)})"
            )
        return content[content_index]

    def _text(self, index: int, kind: str, content_index: int) -> TextContent:
        if (block := self._block(index, kind, content_index).text) is None:
            raise self._mismatch(index, kind, content_index, "text")
        return block

    def _thinking(self, index: int, kind: str, content_index: int) -> ThinkingContent:
        if (block := self._block(index, kind, content_index).thinking) is None:
            raise self._mismatch(index, kind, content_index, "thinking")
        return block

    def _tool_call(self, index: int, kind: str, content_index: int) -> ToolCall:
        if (block := self._block(index, kind, content_index).tool_call) is None:
            raise self._mismatch(index, kind, content_index, "tool call")
        return block

    @staticmethod
    def _mismatch(index: int, kind: str, content_index: int, expected: str) -> StreamProtocolError:
        return StreamProtocolError(f"event {index} ({kind}): block {content_index} is not a {expected} block")
