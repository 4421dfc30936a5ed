"""pi-JSON: the seed's transcript shape (`role`/`type` discriminators, camelCase, "toolUse").

`message_from_pi` and `message_to_pi` convert between pi-JSON objects (parsed JSON, as
`json.loads` returns them) and our messages. Bad input raises PiJsonError naming the path of the
offending value, e.g. `message.content[1].type`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from ._gen.types.pi.ai.v1 import (
    AgentContext,
    AgentMessage,
    AssistantContent,
    AssistantMessage,
    Cost,
    ImageContent,
    StopReason,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultContent,
    ToolResultMessage,
    Usage,
    UserContent,
    UserMessage,
)
from .messages import dump_json, unwrap

STOP_REASONS: dict[str, StopReason] = {
    "stop": StopReason.STOP,
    "length": StopReason.LENGTH,
    "toolUse": StopReason.TOOL_USE,
    "error": StopReason.ERROR,
    "aborted": StopReason.ABORTED,
}
STOP_REASON_NAMES = {reason: name for name, reason in STOP_REASONS.items()}


class PiJsonError(ValueError):
    """pi-JSON that does not describe a valid message, with the path of the bad value."""


# --- reading -------------------------------------------------------------------------------------


def message_from_pi(value: Any, where: str = "message") -> AgentMessage:
    """Convert one pi-JSON message (user, assistant or toolResult) to an AgentMessage."""
    obj = _object(value, where)
    role = obj.get("role")
    if role == "user":
        return AgentMessage(user=_user_from_pi(obj, where))
    if role == "assistant":
        return AgentMessage(assistant=assistant_from_pi(obj, where))
    if role == "toolResult":
        return AgentMessage(tool_result=_tool_result_from_pi(obj, where))
    raise PiJsonError(f"{where}.role: expected 'user', 'assistant' or 'toolResult', got {role!r}")


def assistant_from_pi(value: Any, where: str = "message") -> AssistantMessage:
    """Convert one pi-JSON assistant message."""
    obj = _object(value, where)
    _keys(
        obj,
        where,
        {"role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "timestamp"},
    )
    reason = obj.get("stopReason")
    if reason not in STOP_REASONS:
        raise PiJsonError(f"{where}.stopReason: expected one of {', '.join(STOP_REASONS)}, got {reason!r}")
    return AssistantMessage(
        content=[
            _assistant_block(item, f"{where}.content[{i}]") for i, item in enumerate(_list(obj, "content", where))
        ],
        api=_str(obj, "api", where, default=""),
        provider=_str(obj, "provider", where, default=""),
        model=_str(obj, "model", where, default=""),
        usage=_usage(obj["usage"], f"{where}.usage") if "usage" in obj else None,
        stop_reason=STOP_REASONS[reason],
        error_message=_optional_str(obj, "errorMessage", where),
        timestamp=_int(obj, "timestamp", where, default=0),
    )


def context_from_pi(value: Any, where: str = "context") -> AgentContext:
    """Convert a pi-JSON context: systemPrompt, messages and tools."""
    obj = _object(value, where)
    _keys(obj, where, {"systemPrompt", "messages", "tools"})
    return AgentContext(
        system_prompt=_optional_str(obj, "systemPrompt", where),
        messages=[
            message_from_pi(item, f"{where}.messages[{i}]") for i, item in enumerate(_list(obj, "messages", where))
        ],
        tools=[_tool(item, f"{where}.tools[{i}]") for i, item in enumerate(_list(obj, "tools", where, default=[]))],
    )


def _user_from_pi(obj: Mapping[str, Any], where: str) -> UserMessage:
    _keys(obj, where, {"role", "content", "timestamp"})
    content = obj.get("content")
    blocks: list[UserContent] = []
    if isinstance(content, str):
        blocks.append(UserContent(text=TextContent(text=content)))
    else:
        for i, item in enumerate(_list(obj, "content", where)):
            block = _media_block(item, f"{where}.content[{i}]")
            blocks.append(UserContent(text=block) if isinstance(block, TextContent) else UserContent(image=block))
    return UserMessage(content=blocks, timestamp=_int(obj, "timestamp", where, default=0))


def _tool_result_from_pi(obj: Mapping[str, Any], where: str) -> ToolResultMessage:
    _keys(obj, where, {"role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"})
    blocks: list[ToolResultContent] = []
    for i, item in enumerate(_list(obj, "content", where)):
        block = _media_block(item, f"{where}.content[{i}]")
        blocks.append(
            ToolResultContent(text=block) if isinstance(block, TextContent) else ToolResultContent(image=block)
        )
    is_error = obj.get("isError", False)
    if not isinstance(is_error, bool):
        raise PiJsonError(f"{where}.isError: expected a boolean, got {is_error!r}")
    return ToolResultMessage(
        tool_call_id=_str(obj, "toolCallId", where),
        tool_name=_str(obj, "toolName", where, default=""),
        content=blocks,
        details_json=dump_json(obj["details"]) if "details" in obj else None,
        is_error=is_error,
        timestamp=_int(obj, "timestamp", where, default=0),
    )


def _assistant_block(value: Any, where: str) -> AssistantContent:
    obj = _object(value, where)
    kind = obj.get("type")
    if kind == "text":
        _keys(obj, where, {"type", "text", "textSignature"})
        return AssistantContent(text=_text(obj, where))
    if kind == "thinking":
        _keys(obj, where, {"type", "thinking", "thinkingSignature", "redacted"})
        redacted = obj.get("redacted")
        if redacted is not None and not isinstance(redacted, bool):
            raise PiJsonError(f"{where}.redacted: expected a boolean, got {redacted!r}")
        return AssistantContent(
            thinking=ThinkingContent(
                thinking=_str(obj, "thinking", where),
                thinking_signature=_optional_str(obj, "thinkingSignature", where),
                redacted=redacted,
            )
        )
    if kind == "toolCall":
        _keys(obj, where, {"type", "id", "name", "arguments", "rawArguments", "thoughtSignature"})
        arguments = obj.get("arguments", {})
        if not isinstance(arguments, dict):
            raise PiJsonError(f"{where}.arguments: expected an object, got {type(arguments).__name__}")
        return AssistantContent(
            tool_call=ToolCall(
                id=_str(obj, "id", where),
                name=_str(obj, "name", where),
                arguments_json=dump_json(arguments),
                raw_arguments=_optional_str(obj, "rawArguments", where),
                thought_signature=_optional_str(obj, "thoughtSignature", where),
            )
        )
    raise PiJsonError(f"{where}.type: an assistant block is 'text', 'thinking' or 'toolCall', got {kind!r}")


def _media_block(value: Any, where: str) -> TextContent | ImageContent:
    obj = _object(value, where)
    kind = obj.get("type")
    if kind == "text":
        _keys(obj, where, {"type", "text", "textSignature"})
        return _text(obj, where)
    if kind == "image":
        _keys(obj, where, {"type", "data", "mimeType"})
        try:
            data = base64.b64decode(_str(obj, "data", where), validate=True)
        except binascii.Error as error:
            raise PiJsonError(f"{where}.data: not valid base64: {error}") from None
        return ImageContent(data=data, mime_type=_str(obj, "mimeType", where))
    raise PiJsonError(f"{where}.type: expected 'text' or 'image', got {kind!r}")


def _text(obj: Mapping[str, Any], where: str) -> TextContent:
    return TextContent(text=_str(obj, "text", where), text_signature=_optional_str(obj, "textSignature", where))


def _usage(value: Any, where: str) -> Usage:
    obj = _object(value, where)
    _keys(obj, where, {"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"})
    return Usage(
        input=_int(obj, "input", where, default=0),
        output=_int(obj, "output", where, default=0),
        cache_read=_int(obj, "cacheRead", where, default=0),
        cache_write=_int(obj, "cacheWrite", where, default=0),
        total_tokens=_int(obj, "totalTokens", where, default=0),
        cost=_cost(obj["cost"], f"{where}.cost") if "cost" in obj else None,
    )


def _cost(value: Any, where: str) -> Cost:
    obj = _object(value, where)
    _keys(obj, where, {"input", "output", "cacheRead", "cacheWrite", "total"})
    return Cost(
        input=_number(obj, "input", where),
        output=_number(obj, "output", where),
        cache_read=_number(obj, "cacheRead", where),
        cache_write=_number(obj, "cacheWrite", where),
        total=_number(obj, "total", where),
    )


_COST_KEYS = {
    "input": "input",
    "output": "output",
    "cacheRead": "cache_read",
    "cacheWrite": "cache_write",
    "total": "total",
}


def _tool(value: Any, where: str) -> Tool:
    obj = _object(value, where)
    _keys(obj, where, {"name", "description", "parameters"})
    parameters = obj.get("parameters", {})
    if not isinstance(parameters, dict):
        raise PiJsonError(f"{where}.parameters: expected a JSON Schema object, got {type(parameters).__name__}")
    return Tool(
        name=_str(obj, "name", where),
        description=_str(obj, "description", where, default=""),
        parameters_json=dump_json(parameters),
    )


# --- field readers: each names the path of what it rejects ------------------------------------------


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise PiJsonError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _keys(obj: Mapping[str, Any], where: str, allowed: set[str]) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise PiJsonError(f"{where}: unknown field {unknown[0]!r}")


def _list(obj: Mapping[str, Any], key: str, where: str, default: list[Any] | None = None) -> list[Any]:
    value = obj.get(key, default)
    if not isinstance(value, list):
        raise PiJsonError(f"{where}.{key}: expected a list, got {type(value).__name__}")
    return value


_MISSING: Any = object()


def _str(obj: Mapping[str, Any], key: str, where: str, default: str = _MISSING) -> str:
    value = obj.get(key, default)
    if value is _MISSING:
        raise PiJsonError(f"{where}.{key}: required")
    if not isinstance(value, str):
        raise PiJsonError(f"{where}.{key}: expected a string, got {type(value).__name__}")
    return value


def _optional_str(obj: Mapping[str, Any], key: str, where: str) -> str | None:
    return _str(obj, key, where) if key in obj else None


def _int(obj: Mapping[str, Any], key: str, where: str, default: int = _MISSING) -> int:
    value = obj.get(key, default)
    if value is _MISSING:
        raise PiJsonError(f"{where}.{key}: required")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise PiJsonError(f"{where}.{key}: expected an integer, got {value!r}")
    return value


def _number(obj: Mapping[str, Any], key: str, where: str) -> float:
    value = obj.get(key, 0)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise PiJsonError(f"{where}.{key}: expected a number, got {value!r}")
    return float(value)


# --- writing -------------------------------------------------------------------------------------


def message_to_pi(
    message: AgentMessage | UserMessage | AssistantMessage | ToolResultMessage,
) -> dict[str, Any]:
    """Convert a message to its pi-JSON object."""
    inner = unwrap(message)
    match inner:
        case UserMessage():
            return {
                "role": "user",
                "content": [_block_to_pi(content.text or content.image) for content in inner.content],
                "timestamp": inner.timestamp,
            }
        case AssistantMessage():
            return assistant_to_pi(inner)
        case ToolResultMessage():
            out: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": inner.tool_call_id,
                "toolName": inner.tool_name,
                "content": [_block_to_pi(content.text or content.image) for content in inner.content],
            }
            if inner.details_json is not None:
                out["details"] = json.loads(inner.details_json)
            out["isError"] = inner.is_error
            out["timestamp"] = inner.timestamp
            return out
    raise TypeError(f"not a message: {type(inner).__name__}")


def assistant_to_pi(message: AssistantMessage) -> dict[str, Any]:
    """Convert an assistant message to its pi-JSON object."""
    out: dict[str, Any] = {
        "role": "assistant",
        "content": [_block_to_pi(content.text or content.thinking or content.tool_call) for content in message.content],
        "api": message.api,
        "provider": message.provider,
        "model": message.model,
    }
    if message.usage is not None:
        out["usage"] = _usage_to_pi(message.usage)
    out["stopReason"] = STOP_REASON_NAMES.get(message.stop_reason, "error")
    if message.error_message is not None:
        out["errorMessage"] = message.error_message
    out["timestamp"] = message.timestamp
    return out


def _block_to_pi(block: TextContent | ThinkingContent | ImageContent | ToolCall | None) -> dict[str, Any]:
    match block:
        case TextContent():
            out: dict[str, Any] = {"type": "text", "text": block.text}
            if block.text_signature is not None:
                out["textSignature"] = block.text_signature
            return out
        case ThinkingContent():
            out = {"type": "thinking", "thinking": block.thinking}
            if block.thinking_signature is not None:
                out["thinkingSignature"] = block.thinking_signature
            if block.redacted is not None:
                out["redacted"] = block.redacted
            return out
        case ImageContent():
            return {
                "type": "image",
                "data": base64.b64encode(block.data).decode("ascii"),
                "mimeType": block.mime_type,
            }
        case ToolCall():
            out = {
                "type": "toolCall",
                "id": block.id,
                "name": block.name,
                "arguments": json.loads(block.arguments_json),
            }
            if block.raw_arguments is not None:
                out["rawArguments"] = block.raw_arguments
            if block.thought_signature is not None:
                out["thoughtSignature"] = block.thought_signature
            return out
    raise ValueError("a content block has no member set")


def _usage_to_pi(usage: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input": usage.input,
        "output": usage.output,
        "cacheRead": usage.cache_read,
        "cacheWrite": usage.cache_write,
        "totalTokens": usage.total_tokens,
    }
    if usage.cost is not None:
        out["cost"] = {key: _js_number(getattr(usage.cost, name)) for key, name in _COST_KEYS.items()}
    return out


def _js_number(value: float) -> int | float:
    """A double as JSON.stringify writes it: integral values without a fraction."""
    return int(value) if value.is_integer() else value
