"""Building and reading messages: the seed's constructors, parsed JSON views and `text_of`."""

from __future__ import annotations

import decimal
import json
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

import betterproto2

from .._gen.types.pi.ai.v1 import (
    AgentMessage,
    AssistantContent,
    AssistantMessage,
    Cost,
    CustomMessage,
    ImageContent,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultContent,
    ToolResultMessage,
    Usage,
    UserContent,
    UserMessage,
)

AnyMessage: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | AgentMessage
AssistantBlock: TypeAlias = TextContent | ThinkingContent | ToolCall
MediaBlock: TypeAlias = TextContent | ImageContent
AnyBlock: TypeAlias = TextContent | ThinkingContent | ImageContent | ToolCall
AnyContent: TypeAlias = UserContent | AssistantContent | ToolResultContent


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
"""Marks an optional JSON value as absent, where None would mean JSON null."""


def now_ms() -> int:
    """The current time in Unix milliseconds, the unit of every timestamp."""
    return time.time_ns() // 1_000_000


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# Python writes a float with an exponent below 1e-4 and from 1e16, JavaScript below 1e-6 and from
# 1e21, and Python pads the exponent to two digits; Python writes an integral float as `1.0` and
# negative zero as `-0.0`, JavaScript as `1` and `0`: only such numbers are written differently.
# So does an integer beyond 2^53, which JavaScript reads as the nearest double.
_SAFE_INTEGER = 2**53
# A lone surrogate: Python writes it raw (text no UTF-8 file can hold), JavaScript as `\ud83d`.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dump_json(value: Any) -> str:
    """Compact JSON text, as JavaScript's JSON.stringify writes it; the form of every `*_json` field.

    Numbers are written as JavaScript writes them (`0.000005`, not Python's `5e-06`; `1`, not
    `1.0`; `0` for negative zero; an integer beyond 2^53 as the double JavaScript reads it), and a
    lone surrogate as its escape (`\\ud83d`), so what pi wrote comes back byte for byte, and
    anything else comes back equal under JavaScript's number semantics (proto/pi/ai/v1/json.proto).
    """
    # The numbers are found in the value, not the text: a walk costs per value, where a scan of
    # the text costs per character, and a long text (a message's, a tool's output) is one value.
    text = _with_js_numbers(value) if _has_python_numbers(value) else _COMPACT.encode(value)
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate, only in a string: escaped, as JavaScript does
        return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    return text


def _has_python_numbers(value: Any) -> bool:
    """Whether `value` holds a number that Python writes otherwise than JavaScript: what
    _with_js_numbers rewrites."""
    waiting = [value]
    while waiting:
        item = waiting.pop()
        kind = type(item)
        if kind is str:
            continue
        if kind is dict or (kind is not list and isinstance(item, dict)):
            waiting.extend(item.values())
        elif kind is list or isinstance(item, list):
            waiting.extend(item)
        elif kind is int:
            if abs(item) > _SAFE_INTEGER:
                return True
        elif isinstance(item, float) and (item.is_integer() or "e" in repr(item)):
            return True
    return False


def load_json(text: str | bytes) -> Any:
    """JSON text as JavaScript's JSON.parse reads it, in Python's types: `-0` is negative zero
    (Python reads it as the integer 0), and NaN or Infinity is refused (ValueError), as they are not
    JSON. Every other number reads as Python reads it; dump_json writes it back as JavaScript would."""
    return JS_DECODER.decode(text.decode() if isinstance(text, bytes) else text)


def _js_integer(text: str) -> int | float:
    return -0.0 if text == "-0" else int(text)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# The decoder of load_json, for readers that take values from the front of a longer text (raw_decode).
JS_DECODER = json.JSONDecoder(parse_int=_js_integer, parse_constant=_not_json)


def js_number(value: float) -> str:
    """A finite double as JavaScript's Number.prototype.toString writes it (ECMA-262 Number::toString)."""
    if value == 0:
        return "0"
    # Python's repr and JavaScript both find the shortest digits that read back as the same double.
    _, places, exponent = decimal.Decimal(repr(abs(value))).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, places)).rstrip("0")
    point = len(places) + exponent  # the decimal point sits this many digits into `digits`
    sign = "-" if value < 0 else ""
    if len(digits) <= point <= 21:
        return sign + digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    fraction = "." + digits[1:] if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{fraction}e{'+' if point > 0 else '-'}{abs(point - 1)}"


def _with_js_numbers(value: Any) -> str:
    """`value` dumped with its floats written as JavaScript writes them (placeholders, then swapped in)."""
    marks: dict[str, str] = {}
    nonce = uuid.uuid4().hex

    def mark(item: Any) -> Any:
        if type(item) is int and abs(item) > _SAFE_INTEGER:
            item = float(item)  # the double JavaScript would read
        if isinstance(item, float) and ("e" in repr(item) or item.is_integer()):
            key = f"\x00{nonce}{len(marks)}\x00"
            marks[json.dumps(key)] = js_number(item)
            return key
        if isinstance(item, dict):
            return {name: mark(child) for name, child in item.items()}
        if isinstance(item, list):
            return [mark(child) for child in item]
        return item

    text = _COMPACT.encode(mark(value))
    for quoted, number in marks.items():
        text = text.replace(quoted, number)
    return text


def text(value: str, *, signature: str | None = None) -> TextContent:
    """A text block."""
    return TextContent(text=value, text_signature=signature)


def thinking(value: str, *, signature: str | None = None, redacted: bool | None = None) -> ThinkingContent:
    """A reasoning block."""
    return ThinkingContent(thinking=value, thinking_signature=signature, redacted=redacted)


def image(data: bytes, mime_type: str) -> ImageContent:
    """An image block."""
    return ImageContent(data=data, mime_type=mime_type)


def tool_call(
    id: str,
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    raw_arguments: str | None = None,
    thought_signature: str | None = None,
) -> ToolCall:
    """A tool call; `arguments` is stored as JSON text in `arguments_json`."""
    return ToolCall(
        id=id,
        name=name,
        arguments_json=dump_json(dict(arguments or {})),
        raw_arguments=raw_arguments,
        thought_signature=thought_signature,
    )


def tool_call_arguments(call: ToolCall) -> dict[str, Any]:
    """The parsed arguments of a tool call; raises ValueError unless they are a JSON object."""
    where = f"tool call {call.id!r} ({call.name})"
    try:
        arguments = json.loads(
            "{}" if call.arguments_json is None else call.arguments_json
        )  # absent: pi's arguments default to {}
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}: arguments_json is not valid JSON: {error}") from None
    if not isinstance(arguments, dict):
        raise ValueError(f"{where}: arguments_json must be a JSON object, got {type(arguments).__name__}")
    return arguments


def tool_result_details(result: ToolResultMessage) -> Any:
    """The parsed details of a tool result, or ABSENT when it has none."""
    if result.details_json is None:
        return ABSENT
    return json.loads(result.details_json)


def user_message(*content: str | MediaBlock, timestamp: int | None = None) -> UserMessage:
    """A user message; strings become text blocks. The timestamp defaults to now."""
    return UserMessage(
        content=[_user_block(block) for block in content],
        timestamp=now_ms() if timestamp is None else timestamp,
    )


def zero_usage() -> Usage:
    """pi's usage before anything is counted: every count and amount 0, as pi's Usage has them all."""
    cost = Cost(input=0.0, output=0.0, cache_read=0.0, cache_write=0.0, total=0.0)
    return Usage(input=0, output=0, cache_read=0, cache_write=0, total_tokens=0, cost=cost)


def assistant_message(
    *content: str | AssistantBlock,
    api: str = "scripted",
    provider: str = "scripted",
    model: str = "scripted-v1",
    usage: Usage | None = None,
    stop_reason: StopReason = StopReason.STOP,
    error_message: str | None = None,
    timestamp: int | None = None,
) -> AssistantMessage:
    """An assistant message; strings become text blocks, and every header field can be overridden."""
    return AssistantMessage(
        content=[_assistant_block(block) for block in content],
        api=api,
        provider=provider,
        model=model,
        usage=zero_usage() if usage is None else usage,
        stop_reason=stop_reason,
        error_message=error_message,
        timestamp=now_ms() if timestamp is None else timestamp,
    )


def tool_result_message(
    tool_call_id: str,
    tool_name: str,
    *content: str | MediaBlock,
    details: Any = ABSENT,
    is_error: bool = False,
    timestamp: int | None = None,
) -> ToolResultMessage:
    """A tool result answering the call `tool_call_id`; `details` is any JSON value."""
    return ToolResultMessage(
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        content=[_tool_result_block(block) for block in content],
        details_json=None if details is ABSENT else dump_json(details),
        is_error=is_error,
        timestamp=now_ms() if timestamp is None else timestamp,
    )


def agent_message(message: AnyMessage) -> AgentMessage:
    """Wrap a system, user, assistant or tool result message as a transcript entry."""
    match message:
        case AgentMessage():
            return message
        case SystemMessage():
            return AgentMessage(system=message)
        case UserMessage():
            return AgentMessage(user=message)
        case AssistantMessage():
            return AgentMessage(assistant=message)
        case ToolResultMessage():
            return AgentMessage(tool_result=message)
    raise TypeError(f"not a message: {type(message).__name__}")


def unwrap(message: AnyMessage) -> SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | CustomMessage:
    """The role-specific message inside a transcript entry (or the message itself)."""
    if not isinstance(message, AgentMessage):
        return message
    _, inner = betterproto2.which_one_of(message, "role")
    if inner is None:
        raise ValueError("AgentMessage has no role set")
    return inner  # type: ignore[no-any-return]


def role_of(message: AgentMessage) -> str:
    """The role set in an AgentMessage: "system", "user", "assistant", "tool_result" or "custom"."""
    return betterproto2.which_one_of(message, "role")[0]


def block_of(content: AnyContent) -> AnyBlock:
    """The block inside a content wrapper; raises ValueError if none is set."""
    _, block = betterproto2.which_one_of(content, "block")
    if block is None:
        raise ValueError(f"{type(content).__name__} has no block set")
    return block  # type: ignore[no-any-return]


def text_of(message: AnyMessage) -> str:
    """The message's text blocks joined with newlines, in order; other blocks are skipped.

    A lossy projection for display, search and summaries: the message itself is left untouched.
    """
    inner = unwrap(message)
    if isinstance(inner, CustomMessage):
        return ""  # kept verbatim, not modelled: no text blocks to show
    if isinstance(inner, SystemMessage):
        return "\n".join(block.text for block in inner.content)  # text blocks only: sections and tools are not text
    return "\n".join(content.text.text for content in inner.content if content.text is not None)


def _user_block(block: str | MediaBlock) -> UserContent:
    match block:
        case str():
            return UserContent(text=text(block))
        case TextContent():
            return UserContent(text=block)
        case ImageContent():
            return UserContent(image=block)
    raise TypeError(f"a user message holds text or images, not {type(block).__name__}")


def _tool_result_block(block: str | MediaBlock) -> ToolResultContent:
    match block:
        case str():
            return ToolResultContent(text=text(block))
        case TextContent():
            return ToolResultContent(text=block)
        case ImageContent():
            return ToolResultContent(image=block)
    raise TypeError(f"a tool result holds text or images, not {type(block).__name__}")


def _assistant_block(block: str | AssistantBlock) -> AssistantContent:
    match block:
        case str():
            return AssistantContent(text=text(block))
        case TextContent():
            return AssistantContent(text=block)
        case ThinkingContent():
            return AssistantContent(thinking=block)
        case ToolCall():
            return AssistantContent(tool_call=block)
    raise TypeError(f"an assistant message holds text, thinking or tool calls, not {type(block).__name__}")
