"""Message and request rules: what a well-formed message is, beyond what the wire format checks.

Every failure raises ValidationError naming the path of the field and the rule, e.g.
`StreamRequest.context.messages[2].assistant.content[1].tool_call.arguments_json: must be a JSON
object, got list`. The rules for a stream of events live with the Accumulator that applies them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._gen.types.pi.ai.v1 import (
    AgentContext,
    AgentMessage,
    AssistantMessage,
    StopReason,
    StreamRequest,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)


class ValidationError(ValueError):
    """A message that breaks a rule, with the path of the offending field."""


@dataclass(frozen=True)
class Limits:
    """Bounds on the JSON text a message may carry; requests above them are refused."""

    # Largest `*_json` field, in bytes of UTF-8: room for a 4 MiB tool argument or result.
    max_json_bytes: int = 4 * 1024 * 1024
    # Deepest nesting of objects and arrays in a `*_json` field.
    max_json_depth: int = 64


DEFAULT_LIMITS = Limits()


def check_request(request: StreamRequest, limits: Limits = DEFAULT_LIMITS) -> None:
    """Check a StreamRequest: a context is required, and everything in it must be well formed."""
    if request.context is None:
        raise ValidationError("StreamRequest.context: required")
    check_context(request.context, "StreamRequest.context", limits)
    options = request.options
    if options is not None and options.max_tokens is not None and options.max_tokens < 1:
        raise ValidationError(f"StreamRequest.options.max_tokens: must be at least 1, got {options.max_tokens}")
    if options is not None and options.temperature is not None and not 0 <= options.temperature <= 2:
        raise ValidationError(f"StreamRequest.options.temperature: must be between 0 and 2, got {options.temperature}")


def check_context(context: AgentContext, path: str = "AgentContext", limits: Limits = DEFAULT_LIMITS) -> None:
    """Check every message and tool of a context."""
    for index, message in enumerate(context.messages):
        check_message(message, f"{path}.messages[{index}]", limits)
    for index, tool in enumerate(context.tools):
        where = f"{path}.tools[{index}]"
        if not tool.name:
            raise ValidationError(f"{where}.name: must not be empty")
        parse_json_object(tool.parameters_json, f"{where}.parameters_json", limits, what="a JSON Schema object")
    _check_extra(context.extra_json, path, limits)


def check_message(message: AgentMessage, path: str = "AgentMessage", limits: Limits = DEFAULT_LIMITS) -> None:
    """Check one transcript entry: exactly one role set, and that message's rules."""
    members = [name for name in _ROLES if getattr(message, name) is not None]
    if len(members) != 1:
        found = ", ".join(members) or "none"
        raise ValidationError(f"{path}.role: exactly one of {', '.join(_ROLES)} must be set, found {found}")
    (role,) = members
    where = f"{path}.{role}"
    if message.user is not None:
        _check_user(message.user, where, limits)
    elif message.assistant is not None:
        check_assistant(message.assistant, where, limits)
    elif message.tool_result is not None:
        _check_tool_result(message.tool_result, where, limits)
    elif message.custom is not None:
        if not message.custom.role:
            raise ValidationError(f"{where}.role: must not be empty")
        parse_json_object(message.custom.fields_json, f"{where}.fields_json", limits)
    elif message.session_entry is not None:
        if not message.session_entry.type:
            raise ValidationError(f"{where}.type: must not be empty")
        parse_json_object(message.session_entry.fields_json, f"{where}.fields_json", limits)
    if message.session_json:
        parse_json_object(message.session_json, f"{path}.session_json", limits)


def check_assistant(message: AssistantMessage, path: str = "AssistantMessage", limits: Limits = DEFAULT_LIMITS) -> None:
    """Check a finished assistant message: stop reason set, blocks set, tool calls well formed."""
    if message.stop_reason == StopReason.UNSPECIFIED:
        raise ValidationError(f"{path}.stop_reason: must be set")
    for index, content in enumerate(message.content):
        where = f"{path}.content[{index}]"
        block = _one_block(content, where, ("text", "thinking", "tool_call"))
        if block == "tool_call" and content.tool_call is not None:
            _check_tool_call(content.tool_call, f"{where}.tool_call", limits)
        _check_block_extra(content, block, where, limits)
    _check_extra(message.extra_json, path, limits)


def parse_json_object(text: str, path: str, limits: Limits = DEFAULT_LIMITS, *, what: str = "a JSON object") -> Any:
    """Parse JSON text that must hold an object, within the size and depth limits."""
    size = len(text.encode())
    if size > limits.max_json_bytes:
        raise ValidationError(f"{path}: {size} bytes of JSON, above the limit of {limits.max_json_bytes}")
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValidationError(f"{path}: JSON nested deeper than the limit of {limits.max_json_depth}") from None
    except json.JSONDecodeError as error:
        raise ValidationError(f"{path}: not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise ValidationError(f"{path}: must be {what}, got {_json_type(value)}")
    if _depth(value) > limits.max_json_depth:
        raise ValidationError(f"{path}: JSON nested deeper than the limit of {limits.max_json_depth}")
    return value


_ROLES = ("user", "assistant", "tool_result", "custom", "session_entry")


def _check_user(message: UserMessage, path: str, limits: Limits) -> None:
    for index, content in enumerate(message.content):
        where = f"{path}.content[{index}]"
        _check_block_extra(content, _one_block(content, where, ("text", "image")), where, limits)
    _check_extra(message.extra_json, path, limits)


def _check_tool_result(message: ToolResultMessage, path: str, limits: Limits) -> None:
    if not message.tool_call_id:
        raise ValidationError(f"{path}.tool_call_id: must not be empty")
    for index, content in enumerate(message.content):
        where = f"{path}.content[{index}]"
        _check_block_extra(content, _one_block(content, where, ("text", "image")), where, limits)
    if message.details_json is not None:
        parse_json_object(message.details_json, f"{path}.details_json", limits)
    _check_extra(message.extra_json, path, limits)


def _check_tool_call(call: ToolCall, path: str, limits: Limits) -> None:
    if not call.id:
        raise ValidationError(f"{path}.id: must not be empty")
    if not call.name:
        raise ValidationError(f"{path}.name: must not be empty")
    parse_json_object(call.arguments_json, f"{path}.arguments_json", limits)


def _one_block(content: Any, path: str, members: tuple[str, ...]) -> str:
    chosen = [name for name in members if getattr(content, name) is not None]
    if len(chosen) != 1:
        raise ValidationError(
            f"{path}.block: exactly one of {', '.join(members)} must be set, found {chosen or 'none'}"
        )
    return chosen[0]


def _check_block_extra(content: Any, member: str, path: str, limits: Limits) -> None:
    _check_extra(getattr(content, member).extra_json, f"{path}.{member}", limits)


def _check_extra(extra_json: str, path: str, limits: Limits) -> None:
    if extra_json:
        parse_json_object(extra_json, f"{path}.extra_json", limits)


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON, without recursion (the value may be deep)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def _json_type(value: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")
