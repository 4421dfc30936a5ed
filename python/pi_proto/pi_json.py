"""pi-JSON: the transcript shape pi writes (`role`/`type` discriminators, camelCase, "toolUse").

The codec is lossless on what pi writes: reading and writing back gives the same text, numbers
written as JavaScript writes them. Keys the schema does not model go to the object's
`extra_json`, and so do values whose JSON form the schema would not reproduce (a double written
as `1.0`, an empty `tools` list); a key the writer always writes but the object lacked (an older
pi's assistant message without `totalTokens`, the course's without `api`) is listed under
`"$absent"` in `extra_json`, so it stays absent. Messages of other roles become CustomMessage. A
line of a pi session file is a TranscriptEntry: a message keeps its entry's envelope in
`session_json`, and an entry without a message is a SessionEntry.

Bad input raises PiJsonError naming the path of the offending value, e.g.
`message.content[1].type`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ._gen.types.pi.ai.v1 import (
    AgentContext,
    AgentMessage,
    AssistantContent,
    AssistantMessage,
    Cost,
    CustomMessage,
    DoneEvent,
    ErrorEvent,
    ImageContent,
    ModelEvent,
    SessionEntry,
    StartEvent,
    StopReason,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    Tool,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultContent,
    ToolResultMessage,
    TranscriptEntry,
    Usage,
    UserContent,
    UserMessage,
)
from .events import event_kind
from .messages import dump_json

STOP_REASONS: dict[str, StopReason] = {
    "stop": StopReason.STOP,
    "length": StopReason.LENGTH,
    "toolUse": StopReason.TOOL_USE,
    "error": StopReason.ERROR,
    "aborted": StopReason.ABORTED,
}
STOP_REASON_NAMES = {reason: name for name, reason in STOP_REASONS.items()}

T = TypeVar("T")
JsonObject = dict[str, Any]


class PiJsonError(ValueError):
    """pi-JSON that does not describe a valid message: `path` of the bad value, and what is wrong.

    Paths are JavaScript-style from the object read, e.g. `content[1].type`, prefixed with the
    reader's `where` when one is given.
    """

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(f"{path or 'the value'}: {detail}")
        self.path = path
        self.detail = detail


def _at(where: str, key: str) -> str:
    """The path of `key` inside the value at `where`."""
    return f"{where}.{key}" if where else key


# --- reading -------------------------------------------------------------------------------------


class _Reader:
    """Reads the known keys of one pi-JSON object; the keys its type does not model become extras.

    The readers test `type(value) is ...`: json.loads makes no subclasses, and this keeps
    booleans out of the integer and number fields. They run for every field a session holds.
    """

    def __init__(self, value: Any, where: str, known: frozenset[str]) -> None:
        if not isinstance(value, Mapping):
            raise PiJsonError(where, f"expected an object, got {_type_name(value)}")
        self.obj = value
        self.where = where
        self.known = known  # the keys this object's type models; the others become extras
        self.extra: JsonObject = {}
        self.absent: list[str] = []  # keys the writer writes that this object lacks

    def _fail(self, key: str, expected: str, value: Any) -> PiJsonError:
        return PiJsonError(_at(self.where, key), f"expected {expected}, got {_describe(value)}")

    def string(self, key: str, default: str | None = None) -> str:
        value = self.obj.get(key, _MISSING)
        if type(value) is str:
            return value
        if value is _MISSING and default is not None:
            self.absent.append(key)
            return default
        raise self._fail(key, "a string", value)

    def optional_string(self, key: str) -> str | None:
        return None if key not in self.obj else self.string(key)

    def boolean(self, key: str, default: bool | None = None) -> bool:
        value = self.obj.get(key, _MISSING)
        if type(value) is bool:
            return value
        if value is _MISSING and default is not None:
            self.absent.append(key)
            return default
        raise self._fail(key, "a boolean", value)

    def optional_boolean(self, key: str) -> bool | None:
        return None if key not in self.obj else self.boolean(key)

    def integer(self, key: str) -> int:
        value = self.obj.get(key, _MISSING)
        if type(value) is int and -(2**63) <= value < 2**63:
            return value
        if value is _MISSING:
            self.absent.append(key)
            return 0
        raise self._fail(key, "a 64-bit integer", value)

    def number(self, key: str) -> float:
        value = self.obj.get(key, _MISSING)
        if value is _MISSING:
            self.absent.append(key)
            return 0.0
        if type(value) is int:
            return float(value)
        if type(value) is not float:
            raise self._fail(key, "a number", value)
        if value.is_integer():
            self.extra[key] = value  # written back as 1.0, not as the 1 JSON.stringify would give
        return value

    def items(self, key: str, read: Callable[[Any, str], T], *, default: list[Any] | None = None) -> list[T]:
        value = self.obj.get(key, _MISSING)
        if value is _MISSING and default is not None:
            return []
        if type(value) is not list:
            raise self._fail(key, "a list", value)
        return [read(item, f"{_at(self.where, key)}[{i}]") for i, item in enumerate(value)]

    def child(self, key: str, read: Callable[[Any, str], T]) -> T | None:
        value = self.obj.get(key, _MISSING)
        return None if value is _MISSING else read(value, _at(self.where, key))

    def json_text(self, key: str, *, object_only: bool = False) -> str | None:
        """A value kept as JSON text; absent stays absent."""
        value = self.obj.get(key, _MISSING)
        if value is _MISSING:
            return None
        if object_only and type(value) is not dict:
            raise self._fail(key, "an object", value)
        return dump_json(value)

    def json_object_text(self, key: str) -> str:
        """An object kept as JSON text, "{}" when absent (and the writer leaves it out again)."""
        text = self.json_text(key, object_only=True)
        if text is None:
            self.absent.append(key)
            return "{}"
        return text

    def extra_json(self) -> str:
        """The keys the type does not model, the values kept verbatim and the keys that were absent,
        as JSON object text."""
        if not self.known.issuperset(self.obj):
            self.extra.update((key, value) for key, value in self.obj.items() if key not in self.known)
        if self.absent:
            self.extra[ABSENT_KEY] = self.absent
        return dump_json(self.extra) if self.extra else ""


_MISSING: Any = object()
# The key of `extra_json` that lists the keys an object lacked, which the writer leaves out.
ABSENT_KEY = "$absent"

# The keys each pi-JSON object type models; anything else in the object is kept in `extra_json`.
_KNOWN = {
    "assistant": frozenset(
        {"role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "timestamp"}
    ),
    "user": frozenset({"role", "content", "timestamp"}),
    "toolResult": frozenset({"role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"}),
    "text": frozenset({"type", "text", "textSignature"}),
    "thinking": frozenset({"type", "thinking", "thinkingSignature", "redacted"}),
    "toolCall": frozenset({"type", "id", "name", "arguments", "rawArguments", "thoughtSignature"}),
    "image": frozenset({"type", "data", "mimeType"}),
    "usage": frozenset({"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}),
    "cost": frozenset({"input", "output", "cacheRead", "cacheWrite", "total"}),
    "context": frozenset({"systemPrompt", "messages", "tools"}),
    "tool": frozenset({"name", "description", "parameters"}),
}


def message_from_pi(value: Any, where: str = "message") -> AgentMessage:
    """Convert one pi-JSON message: user, assistant, toolResult, or any other role (kept as is)."""
    if not isinstance(value, Mapping):
        raise PiJsonError(where, f"expected an object, got {_type_name(value)}")
    role = value.get("role")
    if role == "user":
        return AgentMessage(user=_user_from_pi(value, where))
    if role == "assistant":
        return AgentMessage(assistant=assistant_from_pi(value, where))
    if role == "toolResult":
        return AgentMessage(tool_result=_tool_result_from_pi(value, where))
    if isinstance(role, str) and role:
        fields = {key: item for key, item in value.items() if key != "role"}
        return AgentMessage(custom=CustomMessage(role=role, fields_json=dump_json(fields)))
    raise PiJsonError(_at(where, "role"), f"expected a role such as 'user', 'assistant' or 'toolResult', got {role!r}")


def assistant_from_pi(value: Any, where: str = "message") -> AssistantMessage:
    """Convert one pi-JSON assistant message."""
    read = _Reader(value, where, _KNOWN["assistant"])
    read.string("role")
    reason_name = read.optional_string("stopReason") or ""  # absent only on a partial still streaming
    if reason_name and reason_name not in STOP_REASONS:
        raise PiJsonError(_at(where, "stopReason"), f"expected one of {', '.join(STOP_REASONS)}, got {reason_name!r}")
    return AssistantMessage(
        content=read.items("content", _assistant_block),
        api=read.string("api", default=""),
        provider=read.string("provider", default=""),
        model=read.string("model", default=""),
        usage=read.child("usage", _usage),
        stop_reason=STOP_REASONS.get(reason_name, StopReason.UNSPECIFIED),
        error_message=read.optional_string("errorMessage"),
        timestamp=read.integer("timestamp"),
        extra_json=read.extra_json(),
    )


def context_from_pi(value: Any, where: str = "context") -> AgentContext:
    """Convert a pi-JSON context: systemPrompt, messages and tools."""
    read = _Reader(value, where, _KNOWN["context"])
    context = AgentContext(
        system_prompt=read.optional_string("systemPrompt"),
        messages=read.items("messages", message_from_pi),
        tools=read.items("tools", _tool, default=[]),
    )
    if value.get("tools") == []:
        read.extra["tools"] = []  # an explicit empty list, which the repeated field cannot tell from none
    context.extra_json = read.extra_json()
    return context


def entry_from_pi(value: Any, where: str = "entry") -> TranscriptEntry:
    """Convert one line of a pi session file, or one bare pi-JSON message."""
    if not isinstance(value, Mapping):
        raise PiJsonError(where, f"expected an object, got {_type_name(value)}")
    if "role" in value:
        return TranscriptEntry(message=message_from_pi(value, where))
    kind = value.get("type")
    if kind == "message" and "message" in value:
        envelope = dump_json({key: item for key, item in value.items() if key != "message"})
        return TranscriptEntry(message=message_from_pi(value["message"], _at(where, "message")), session_json=envelope)
    if isinstance(kind, str) and kind:
        fields = {key: item for key, item in value.items() if key != "type"}
        return TranscriptEntry(session_entry=SessionEntry(type=kind, fields_json=dump_json(fields)))
    raise PiJsonError(where, "neither a message (no 'role') nor a session entry (no 'type')")


def _user_from_pi(value: Mapping[str, Any], where: str) -> UserMessage:
    read = _Reader(value, where, _KNOWN["user"])
    read.string("role")
    content = value.get("content")
    if isinstance(content, str):
        read.string("content")
        blocks = [UserContent(text=TextContent(text=content))]
    else:
        blocks = [_user_block(block) for block in read.items("content", _media_block)]
    return UserMessage(
        content=blocks,
        timestamp=read.integer("timestamp"),
        string_content=isinstance(content, str),
        extra_json=read.extra_json(),
    )


def _tool_result_from_pi(value: Mapping[str, Any], where: str) -> ToolResultMessage:
    read = _Reader(value, where, _KNOWN["toolResult"])
    read.string("role")
    return ToolResultMessage(
        tool_call_id=read.string("toolCallId"),
        tool_name=read.string("toolName", default=""),
        content=[_tool_result_block(block) for block in read.items("content", _media_block)],
        details_json=read.json_text("details"),
        is_error=read.boolean("isError", default=False),
        timestamp=read.integer("timestamp"),
        extra_json=read.extra_json(),
    )


def _block_type(value: Any, where: str) -> Any:
    if not isinstance(value, Mapping):
        raise PiJsonError(where, f"expected an object, got {_type_name(value)}")
    return value.get("type")


def _assistant_block(value: Any, where: str) -> AssistantContent:
    kind = _block_type(value, where)
    if kind == "text":
        return AssistantContent(text=_text(value, where))
    if kind == "thinking":
        read = _Reader(value, where, _KNOWN["thinking"])
        read.string("type")
        return AssistantContent(
            thinking=ThinkingContent(
                thinking=read.string("thinking"),
                thinking_signature=read.optional_string("thinkingSignature"),
                redacted=read.optional_boolean("redacted"),
                extra_json=read.extra_json(),
            )
        )
    if kind == "toolCall":
        read = _Reader(value, where, _KNOWN["toolCall"])
        read.string("type")
        return AssistantContent(
            tool_call=ToolCall(
                id=read.string("id"),
                name=read.string("name"),
                arguments_json=read.json_object_text("arguments"),
                raw_arguments=read.optional_string("rawArguments"),
                thought_signature=read.optional_string("thoughtSignature"),
                extra_json=read.extra_json(),
            )
        )
    raise PiJsonError(_at(where, "type"), f"an assistant block is 'text', 'thinking' or 'toolCall', got {kind!r}")


def _media_block(value: Any, where: str) -> TextContent | ImageContent:
    kind = _block_type(value, where)
    if kind == "text":
        return _text(value, where)
    if kind == "image":
        read = _Reader(value, where, _KNOWN["image"])
        read.string("type")
        encoded = read.string("data")
        try:
            data = base64.b64decode(encoded, validate=True)
        except binascii.Error as error:
            raise PiJsonError(_at(where, "data"), f"not valid base64: {error}") from None
        if base64.b64encode(data).decode("ascii") != encoded:
            raise PiJsonError(
                _at(where, "data"), "not canonical base64 (padded, standard alphabet), so it would change"
            )
        return ImageContent(data=data, mime_type=read.string("mimeType"), extra_json=read.extra_json())
    raise PiJsonError(_at(where, "type"), f"expected 'text' or 'image', got {kind!r}")


def _text(value: Mapping[str, Any], where: str) -> TextContent:
    read = _Reader(value, where, _KNOWN["text"])
    read.string("type")
    return TextContent(
        text=read.string("text"), text_signature=read.optional_string("textSignature"), extra_json=read.extra_json()
    )


def _user_block(block: TextContent | ImageContent) -> UserContent:
    return UserContent(text=block) if isinstance(block, TextContent) else UserContent(image=block)


def _tool_result_block(block: TextContent | ImageContent) -> ToolResultContent:
    return ToolResultContent(text=block) if isinstance(block, TextContent) else ToolResultContent(image=block)


def _usage(value: Any, where: str) -> Usage:
    read = _Reader(value, where, _KNOWN["usage"])
    return Usage(
        input=read.integer("input"),
        output=read.integer("output"),
        cache_read=read.integer("cacheRead"),
        cache_write=read.integer("cacheWrite"),
        total_tokens=read.integer("totalTokens"),
        cost=read.child("cost", _cost),
        extra_json=read.extra_json(),
    )


def _cost(value: Any, where: str) -> Cost:
    read = _Reader(value, where, _KNOWN["cost"])
    return Cost(
        input=read.number("input"),
        output=read.number("output"),
        cache_read=read.number("cacheRead"),
        cache_write=read.number("cacheWrite"),
        total=read.number("total"),
        extra_json=read.extra_json(),
    )


def _tool(value: Any, where: str) -> Tool:
    read = _Reader(value, where, _KNOWN["tool"])
    return Tool(
        name=read.string("name"),
        description=read.string("description", default=""),
        parameters_json=read.json_object_text("parameters"),
        extra_json=read.extra_json(),
    )


# --- writing -------------------------------------------------------------------------------------


def message_to_pi(message: AgentMessage | UserMessage | AssistantMessage | ToolResultMessage) -> JsonObject:
    """Convert a message to its pi-JSON object."""
    match message:
        case UserMessage():
            return _user_to_pi(message)
        case AssistantMessage():
            return assistant_to_pi(message)
        case ToolResultMessage():
            return _tool_result_to_pi(message)
    if message.user is not None:
        return _user_to_pi(message.user)
    if message.assistant is not None:
        return assistant_to_pi(message.assistant)
    if message.tool_result is not None:
        return _tool_result_to_pi(message.tool_result)
    if message.custom is not None:
        return {"role": message.custom.role, **_json_object(message.custom.fields_json, "CustomMessage.fields_json")}
    raise PiJsonError("AgentMessage", "no role is set")


def entry_to_pi(entry: TranscriptEntry) -> JsonObject:
    """Convert a transcript entry back to its line: a session file's entry if it came from one."""
    if (session_entry := entry.session_entry) is not None:
        return {"type": session_entry.type, **_json_object(session_entry.fields_json, "SessionEntry.fields_json")}
    if entry.message is None:
        raise PiJsonError("TranscriptEntry", "no entry is set")
    out = message_to_pi(entry.message)
    if entry.session_json:
        return {**_json_object(entry.session_json, "TranscriptEntry.session_json"), "message": out}
    return out


def assistant_to_pi(message: AssistantMessage) -> JsonObject:
    """Convert an assistant message to its pi-JSON object."""
    out: JsonObject = {
        "role": "assistant",
        "content": [_assistant_block_to_pi(content) for content in message.content],
        "api": message.api,
        "provider": message.provider,
        "model": message.model,
    }
    if message.usage is not None:
        out["usage"] = _usage_to_pi(message.usage)
    if message.stop_reason in STOP_REASON_NAMES:
        out["stopReason"] = STOP_REASON_NAMES[message.stop_reason]
    out["timestamp"] = message.timestamp
    if message.error_message is not None:
        out["errorMessage"] = message.error_message  # pi sets it last, once the call has failed
    return _with_extra(out, message.extra_json, "AssistantMessage")


def context_to_pi(context: AgentContext) -> JsonObject:
    """Convert a context to its pi-JSON object."""
    out: JsonObject = {}
    if context.system_prompt is not None:
        out["systemPrompt"] = context.system_prompt
    out["messages"] = [message_to_pi(message) for message in context.messages]
    if context.tools:
        out["tools"] = [_tool_to_pi(tool) for tool in context.tools]
    return _with_extra(out, context.extra_json, "AgentContext")


def _user_to_pi(message: UserMessage) -> JsonObject:
    content: Any
    if message.string_content and len(message.content) == 1 and message.content[0].text is not None:
        content = message.content[0].text.text
    else:
        content = [_media_block_to_pi(item.text if item.text is not None else item.image) for item in message.content]
    out = {"role": "user", "content": content, "timestamp": message.timestamp}
    return _with_extra(out, message.extra_json, "UserMessage")


def _tool_result_to_pi(message: ToolResultMessage) -> JsonObject:
    out: JsonObject = {
        "role": "toolResult",
        "toolCallId": message.tool_call_id,
        "toolName": message.tool_name,
        "content": [_media_block_to_pi(item.text if item.text is not None else item.image) for item in message.content],
    }
    if message.details_json is not None:
        out["details"] = json.loads(message.details_json)
    out["isError"] = message.is_error
    out["timestamp"] = message.timestamp
    return _with_extra(out, message.extra_json, "ToolResultMessage")


def _assistant_block_to_pi(content: AssistantContent) -> JsonObject:
    if content.text is not None:
        return _text_to_pi(content.text)
    if (thinking := content.thinking) is not None:
        out: JsonObject = {"type": "thinking", "thinking": thinking.thinking}
        if thinking.thinking_signature is not None:
            out["thinkingSignature"] = thinking.thinking_signature
        if thinking.redacted is not None:
            out["redacted"] = thinking.redacted
        return _with_extra(out, thinking.extra_json, "ThinkingContent")
    if (call := content.tool_call) is not None:
        out = {"type": "toolCall", "id": call.id, "name": call.name, "arguments": json.loads(call.arguments_json)}
        if call.raw_arguments is not None:
            out["rawArguments"] = call.raw_arguments
        if call.thought_signature is not None:
            out["thoughtSignature"] = call.thought_signature
        return _with_extra(out, call.extra_json, "ToolCall")
    raise PiJsonError("AssistantContent", "no block is set")


def _media_block_to_pi(block: TextContent | ImageContent | None) -> JsonObject:
    if isinstance(block, TextContent):
        return _text_to_pi(block)
    if isinstance(block, ImageContent):
        out = {"type": "image", "data": base64.b64encode(block.data).decode("ascii"), "mimeType": block.mime_type}
        return _with_extra(out, block.extra_json, "ImageContent")
    raise PiJsonError("content", "no block is set")


def _text_to_pi(block: TextContent) -> JsonObject:
    out = {"type": "text", "text": block.text}
    if block.text_signature is not None:
        out["textSignature"] = block.text_signature
    return _with_extra(out, block.extra_json, "TextContent")


def _usage_to_pi(usage: Usage) -> JsonObject:
    out: JsonObject = {
        "input": usage.input,
        "output": usage.output,
        "cacheRead": usage.cache_read,
        "cacheWrite": usage.cache_write,
        "totalTokens": usage.total_tokens,
    }
    if (cost := usage.cost) is not None:
        out["cost"] = _with_extra(
            {
                "input": _js_number(cost.input),
                "output": _js_number(cost.output),
                "cacheRead": _js_number(cost.cache_read),
                "cacheWrite": _js_number(cost.cache_write),
                "total": _js_number(cost.total),
            },
            cost.extra_json,
            "Cost",
        )
    return _with_extra(out, usage.extra_json, "Usage")


def _tool_to_pi(tool: Tool) -> JsonObject:
    out = {"name": tool.name, "description": tool.description, "parameters": json.loads(tool.parameters_json)}
    return _with_extra(out, tool.extra_json, "Tool")


def _js_number(value: float) -> int | float:
    """A double as JSON.stringify writes it: integral values without a fraction."""
    value = float(value)  # a Python int may sit in a double field
    return int(value) if value.is_integer() else value


def _with_extra(out: JsonObject, extra_json: str, where: str) -> JsonObject:
    """`out` with the object's extras: the keys it kept, and without the keys it lacked."""
    if extra_json:
        extra = _json_object(extra_json, _at(where, "extra_json"))
        for key in extra.pop(ABSENT_KEY, ()):
            out.pop(key, None)
        out.update(extra)
    return out


def _json_object(text: str, where: str) -> JsonObject:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise PiJsonError(where, f"not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise PiJsonError(where, f"expected a JSON object, got {_type_name(value)}")
    return value


def _type_name(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _describe(value: Any) -> str:
    if value is _MISSING:
        return "nothing (the key is missing)"
    return f"{_type_name(value)} {json.dumps(value, ensure_ascii=False)[:40]}"


# --- events --------------------------------------------------------------------------------------

_BLOCK_KINDS = {"text": "text", "thinking": "thinking", "toolcall": "tool_call"}


def event_from_pi(value: Any, where: str = "event") -> ModelEvent:
    """Convert one pi-JSON AssistantMessageEvent; its `partial` becomes ModelEvent.partial."""
    read = _Reader(value, where, frozenset())
    kind = read.string("type")
    read.known = _event_keys(kind)
    if kind == "done" or kind == "error":
        reason_name = read.string("reason")
        if reason_name not in STOP_REASONS:
            raise PiJsonError(_at(where, "reason"), f"expected one of {', '.join(STOP_REASONS)}, got {reason_name!r}")
        reason = STOP_REASONS[reason_name]
        key = "message" if kind == "done" else "error"
        final = read.child(key, assistant_from_pi)
        if final is None:
            raise PiJsonError(_at(where, key), "required")
        _no_extra(read)
        if kind == "done":
            return ModelEvent(done=DoneEvent(reason=reason, message=final))
        return ModelEvent(error=ErrorEvent(reason=reason, message=final))

    partial = read.child("partial", assistant_from_pi)
    if partial is None:
        raise PiJsonError(_at(where, "partial"), "required (pi sends the partial message with every event)")
    if kind == "start":
        _no_extra(read)
        return ModelEvent(start=StartEvent(header=partial), partial=partial)
    family, _, step = kind.partition("_")
    if family not in _BLOCK_KINDS or step not in ("start", "delta", "end"):
        raise PiJsonError(_at(where, "type"), f"not a pi event type: {kind!r}")
    index = read.integer("contentIndex")
    if index < 0 or index >= len(partial.content):
        raise PiJsonError(_at(where, "contentIndex"), f"{index} is not a block of the partial message")
    block = getattr(partial.content[index], _BLOCK_KINDS[family])
    if block is None:
        raise PiJsonError(_at(where, "contentIndex"), f"block {index} of the partial is not a {family} block")
    body: Any
    if kind == "text_start":
        body = TextStartEvent(content_index=index)
    elif kind == "thinking_start":
        body = ThinkingStartEvent(content_index=index)
    elif kind == "toolcall_start":
        body = ToolCallStartEvent(content_index=index, id=block.id, name=block.name)
    elif step == "delta":
        delta_class = {"text": TextDeltaEvent, "thinking": ThinkingDeltaEvent, "toolcall": ToolCallDeltaEvent}[family]
        body = delta_class(content_index=index, delta=read.string("delta"))
    elif kind == "toolcall_end":
        call = read.child("toolCall", _assistant_block)
        if call is None or call.tool_call is None:
            raise PiJsonError(_at(where, "toolCall"), "required, a toolCall block")
        body = ToolCallEndEvent(content_index=index, tool_call=call.tool_call)
    else:  # text_end or thinking_end: the content is the block the partial already holds
        text = read.string("content")
        if text != (block.text if family == "text" else block.thinking):
            raise PiJsonError(
                _at(where, "content"), f"differs from block {index} of the partial, so it cannot be rebuilt"
            )
        if family == "text":
            body = TextEndEvent(content_index=index, text_signature=block.text_signature)
        else:
            body = ThinkingEndEvent(
                content_index=index, thinking_signature=block.thinking_signature, redacted=block.redacted
            )
    _no_extra(read)
    return ModelEvent(**{kind: body}, partial=partial)


def event_to_pi(event: ModelEvent) -> JsonObject:
    """Convert an event to pi's AssistantMessageEvent; non-terminal events need their `partial`."""
    kind, body = event_kind(event)
    if kind == "done":
        return {"type": "done", "reason": STOP_REASON_NAMES[body.reason], "message": assistant_to_pi(body.message)}
    if kind == "error":
        return {"type": "error", "reason": STOP_REASON_NAMES[body.reason], "error": assistant_to_pi(body.message)}
    if kind == "start":
        header = event.partial if event.partial is not None else body.header
        return {"type": "start", "partial": assistant_to_pi(header)}
    if not kind:
        raise PiJsonError("ModelEvent", "no event kind is set")
    if event.partial is None:
        raise PiJsonError(kind, "pi-JSON events carry the partial message; apply the event with an Accumulator")
    out: JsonObject = {"type": kind, "contentIndex": body.content_index}
    if kind.endswith("_delta"):
        out["delta"] = body.delta
    elif kind == "toolcall_end":
        out["toolCall"] = _assistant_block_to_pi(AssistantContent(tool_call=body.tool_call))
    elif kind.endswith("_end"):
        block = event.partial.content[body.content_index]
        out["content"] = block.text.text if block.text is not None else (block.thinking or ThinkingContent()).thinking
    out["partial"] = assistant_to_pi(event.partial)
    return out


def _event_keys(kind: str) -> frozenset[str]:
    """The keys a pi event of this type has; events are not stored, so others are refused."""
    if kind in ("done", "error"):
        return frozenset({"type", "reason", "message" if kind == "done" else "error"})
    if kind == "start":
        return frozenset({"type", "partial"})
    step = kind.partition("_")[2]
    own = {"delta": {"delta"}, "end": {"toolCall"} if kind == "toolcall_end" else {"content"}}.get(step, set())
    return frozenset({"type", "contentIndex", "partial", *own})


def _no_extra(read: _Reader) -> None:
    extra = read.extra_json()
    if extra:
        raise PiJsonError(read.where, f"unknown field {next(iter(json.loads(extra)))!r}")


def context_path(field_path: str) -> str:
    """Where a StreamRequest's field path (of a broken rule) points in the pi-JSON context it was
    read from: `context.messages[0].tool_result.tool_call_id` is `messages[0].toolCallId`. The
    schema's role and block wrappers are pi's `role` and `type` keys, so they leave no step; a
    path outside the context is returned as it is."""
    steps = field_path.split(".")
    if steps[0] != "context":
        return field_path
    out: list[str] = []
    wrapper_next = False
    for step in steps[1:]:
        if wrapper_next:
            wrapper_next = False
            continue
        name, bracket, index = step.partition("[")
        head, *rest = name.removesuffix("_json").split("_")
        out.append(head + "".join(word.title() for word in rest) + bracket + index)
        wrapper_next = name in ("messages", "content") and bool(bracket)  # a role or a block's type
    return ".".join(out)
