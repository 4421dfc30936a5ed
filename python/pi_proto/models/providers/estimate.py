"""pi's estimate of the tokens a transcript holds (utils/estimate.ts), by which pi fits a call's
output limit into the model's context window.

The last answer's reported usage counts the transcript up to it; each message after it counts one
token per 3.5 characters (of JavaScript's length, UTF-16 units), an image as 4800 characters, a
tool call as its name and its arguments' JSON, a system message as its prompt text and its tools'
JSON. An answer's usage is not used when it failed, reports no tokens, or a message before it is
newer than it (a compaction summary put in later, which its usage did not see).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from ..._gen.types.pi.ai.v1 import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    StopReason,
    SystemMessage,
    ToolResultContent,
    ToolResultMessage,
    Usage,
    UserContent,
    UserMessage,
)
from ...ir.messages import dump_json, role_of, unwrap
from ...transcripts.pi_json import message_to_pi
from .system import render_prompt

CHARS_PER_TOKEN = 3.5
IMAGE_CHARS = 4800
Sent = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage  # what a provider is sent


def context_tokens(messages: Sequence[AgentMessage]) -> int:
    """pi's estimateContextTokens of a normalized transcript; custom roles, which no provider is
    sent, are left out."""
    inner = (unwrap(message) for message in messages if role_of(message))  # a message without a role is no message
    sent = [message for message in inner if not isinstance(message, CustomMessage)]
    last = last_usage(sent)
    if last is None:
        return sum(message_tokens(message) for message in sent)
    index, tokens = last
    return tokens + sum(message_tokens(message) for message in sent[index + 1 :])


def last_usage(messages: Sequence[Sent]) -> tuple[int, int] | None:
    """The index and context tokens of the last answer whose usage counts the transcript before it."""
    found = None
    newest = -math.inf  # the newest timestamp before the message
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            tokens = usage_tokens(message.usage)
            failed = message.stop_reason in (StopReason.ERROR, StopReason.ABORTED)
            if (message.timestamp or 0) >= newest and not failed and tokens > 0:
                found = (index, tokens)
        newest = max(newest, message.timestamp or 0)
    return found


def usage_tokens(usage: Usage | None) -> int:
    """pi's calculateContextTokens: the total, or the sum of the parts where the total is 0."""
    if usage is None:
        return 0
    parts = (usage.input, usage.output, usage.cache_read, usage.cache_write)
    return usage.total_tokens or sum(part or 0 for part in parts)


def message_tokens(message: Sent) -> int:
    """pi's estimateMessageTokens."""
    match message:
        case SystemMessage():
            return _tokens(js_length(render_prompt([message]))) + _system_tools_tokens(message)
        case UserMessage() | ToolResultMessage():
            return _tokens(_media_chars(message.content))
    chars = 0
    for block in message.content:
        if block.text is not None:
            chars += js_length(block.text.text)
        elif block.thinking is not None:
            chars += js_length(block.thinking.thinking)
        elif (call := block.tool_call) is not None:
            chars += js_length(call.name) + js_length(dump_json(json.loads(call.arguments_json or "{}")))
    return _tokens(chars)


def _system_tools_tokens(system: SystemMessage) -> int:
    """The tools a system message adds and removes, each list as the JSON pi writes of it."""
    written: dict[str, Any] = message_to_pi(system)
    return sum(_tokens(js_length(dump_json(written[key]))) for key in ("toolsAdded", "toolsRemoved") if key in written)


def _media_chars(content: Sequence[UserContent | ToolResultContent]) -> int:
    return sum(js_length(block.text.text) if block.text is not None else IMAGE_CHARS for block in content)


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def js_length(text: str) -> int:
    """The length of `text` in JavaScript: UTF-16 code units, two for a character beyond U+FFFF."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
