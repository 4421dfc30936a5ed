"""pi's transformMessages: a context replayed to a model, whatever model wrote it.

Reasoning and signatures go back only to the model that made them (same provider, API and model
id): another model's reasoning is dropped, redacted or not (its signature is valid only for the
model that made it, and its text, sent as text, would read as part of the visible reply), and so
are its text signatures and thought signatures. The model's own reasoning goes back when it is
redacted, signed, or has text; an empty one without a signature is dropped. Tool call ids can be
rewritten for a provider's rules, and results follow their call's new id. Failed and aborted
assistant turns are left out, and a tool call left without a result gets a synthetic error
result, so every provider accepts the transcript. A model that takes no images gets pi's
placeholder text where a user's or a tool's images were, so it knows something was there.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TypeVar

from ..._gen.types.pi.ai.v1 import (
    AgentMessage,
    AssistantContent,
    AssistantMessage,
    InputKind,
    Model,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultContent,
    ToolResultMessage,
    UserContent,
)
from ...ir.messages import now_ms, tool_result_message

NO_RESULT = "No result provided"
# pi's words for the images a model without image input is not sent (transform-messages.ts).
USER_IMAGE = "(image omitted: model does not support images)"
TOOL_IMAGE = "(tool image omitted: model does not support images)"
_Block = TypeVar("_Block", UserContent, ToolResultContent)


def transform_messages(
    messages: list[AgentMessage], model: Model, normalize_id: Callable[[str], str] | None = None
) -> list[AgentMessage]:
    """The messages as `model` should see them (see the module docstring); custom roles are dropped."""
    renamed: dict[str, str] = {}
    sees_images = InputKind.IMAGE in model.input
    out: list[AgentMessage] = []
    pending: list[ToolCall] = []
    answered: set[str] = set()

    def close_pending() -> None:
        nonlocal pending
        for call in pending:
            if call.id not in answered:
                result = tool_result_message(call.id, call.name, NO_RESULT, is_error=True, timestamp=now_ms())
                out.append(AgentMessage(tool_result=result))
        pending = []
        answered.clear()

    for message in messages:
        if (assistant := message.assistant) is not None:
            close_pending()
            if assistant.stop_reason in (StopReason.ERROR, StopReason.ABORTED):
                continue  # an unfinished turn: the model retries from the last whole one
            replayed = _replayed(assistant, model, normalize_id, renamed)
            pending = [block.tool_call for block in replayed.content if block.tool_call is not None]
            out.append(AgentMessage(assistant=replayed))
        elif (result := message.tool_result) is not None:
            answered.add(renamed.get(result.tool_call_id, result.tool_call_id))
            if result.tool_call_id in renamed or not sees_images:
                result = copy.copy(result)
                result.tool_call_id = renamed.get(result.tool_call_id, result.tool_call_id)
                result.content = result.content if sees_images else without_images(result.content, TOOL_IMAGE)
            out.append(AgentMessage(tool_result=result))
        elif (user := message.user) is not None:
            close_pending()
            if not sees_images:
                user = copy.copy(user)
                user.content = without_images(user.content, USER_IMAGE)
            out.append(AgentMessage(user=user))
    return out


def without_images(content: Sequence[_Block], placeholder: str) -> list[_Block]:
    """The blocks with each run of images replaced by one `placeholder` text, as pi's
    replaceImagesWithPlaceholder does (none after a text that already says it)."""
    out: list[_Block] = []
    said = False  # the block before is the placeholder
    for block in content:
        if block.image is not None:
            if not said:
                out.append(type(block)(text=TextContent(text=placeholder)))
            said = True
            continue
        out.append(block)
        said = block.text is not None and block.text.text == placeholder
    return out


def same_model(message: AssistantMessage, model: Model) -> bool:
    """Whether `model` wrote the message: its signatures and reasoning are valid for it."""
    return (message.provider, message.api, message.model) == (model.provider, model.api, model.id)


def _replayed(
    message: AssistantMessage, model: Model, normalize_id: Callable[[str], str] | None, renamed: dict[str, str]
) -> AssistantMessage:
    own = same_model(message, model)
    content: list[AssistantContent] = []
    for block in message.content:
        if (thinking := block.thinking) is not None:
            if own and (thinking.redacted or thinking.thinking_signature or thinking.thinking.strip()):
                content.append(block)
        elif (plain := block.text) is not None:
            content.append(block if own else AssistantContent(text=TextContent(text=plain.text)))
        elif (call := block.tool_call) is not None:
            if not own:
                call = copy.copy(call)
                call.thought_signature = None
                if normalize_id is not None and (new_id := normalize_id(call.id)) != call.id:
                    renamed[call.id] = new_id
                    call.id = new_id
            content.append(AssistantContent(tool_call=call))
    replayed = copy.copy(message)
    replayed.content = content
    return replayed


def tool_result_text(result: ToolResultMessage) -> str:
    """A tool result's text blocks, one per line, or pi's words for a result without text (the
    OpenAI APIs' tool output)."""
    joined = "\n".join(block.text.text for block in result.content if block.text is not None)
    if joined.strip():
        return joined
    return "(see attached image)" if any(block.image is not None for block in result.content) else "(no tool output)"
