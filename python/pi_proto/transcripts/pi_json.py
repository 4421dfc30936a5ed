"""pi-JSON: the transcript shape pi writes (`role`/`type` discriminators, camelCase, "toolUse").

The codec is lossless on what pi writes: reading and writing back gives the same text, numbers
read as JSON.parse reads them (load_json) and written as JSON.stringify writes them (dump_json).
Keys the schema does not model go to the object's `extra_json`, and only those (the JSON-text
rule "json.extra" refuses a modelled key there), so what a message's fields say is what is
written: an edit is never undone by a kept value. A key the object lacked leaves its field unset
(the fields pi may leave out are proto3 `optional`), and the writer leaves it out again. The one
value a field cannot hold is an empty list or object under a key the writer leaves out when
empty (a context's `tools: []`): it stays in `extra_json`, written while the field is empty.
The writer writes each object's keys in the order pi usually does; an object whose
keys came in another order (pi adds some keys as a response goes on, in an order that differs by
provider) lists its keys under `"$order"` in `extra_json`, and is written in that order.
Messages of roles the schema does not model become CustomMessage. The lines of a pi session file
are pi_session's.

Bad input raises PiJsonError naming the path of the offending value, e.g.
`message.content[1].type`. An enum value pi does not define (a stop reason, a thinking level) is
bad input too.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from .._gen.pb2.pi.ai.v1 import content_pb2, context_pb2, message_pb2, tool_pb2
from .._gen.types.pi.ai.v1 import (
    AgentContext,
    AgentMessage,
    AssistantContent,
    AssistantMessage,
    CacheRetention,
    ConstrainedSampling,
    Cost,
    CustomMessage,
    DeferredHandle,
    Diagnostic,
    DiagnosticError,
    DoneEvent,
    ErrorEvent,
    GrammarSampling,
    ImageContent,
    JsonSchemaSampling,
    ModelEvent,
    ModelThinkingLevel,
    NestedCallStatus,
    NestedToolCall,
    NestedToolCalls,
    StartEvent,
    StopReason,
    Strictness,
    SystemMessage,
    SystemSection,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingLevel,
    ThinkingStartEvent,
    Tool,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolChoiceMode,
    ToolReference,
    ToolResultContent,
    ToolResultMessage,
    Transport,
    Usage,
    UserContent,
    UserMessage,
)
from ..ir.events import event_kind
from ..ir.messages import dump_json
from ..wire.json_text import modelled_keys
from . import surrogates

_Enum = TypeVar("_Enum")


def _names(words: dict[str, _Enum]) -> dict[_Enum, str]:
    """pi's word for each value of a table of pi's words."""
    return {value: word for word, value in words.items()}


STOP_REASONS: dict[str, StopReason] = {
    "stop": StopReason.STOP,
    "length": StopReason.LENGTH,
    "toolUse": StopReason.TOOL_USE,
    "error": StopReason.ERROR,
    "aborted": StopReason.ABORTED,
    "pending": StopReason.PENDING,
    "deferred": StopReason.DEFERRED,
}
STOP_REASON_NAMES = _names(STOP_REASONS)
THINKING_LEVELS: dict[str, ModelThinkingLevel] = {
    "off": ModelThinkingLevel.OFF,
    "minimal": ModelThinkingLevel.MINIMAL,
    "low": ModelThinkingLevel.LOW,
    "medium": ModelThinkingLevel.MEDIUM,
    "high": ModelThinkingLevel.HIGH,
    "xhigh": ModelThinkingLevel.XHIGH,
    "max": ModelThinkingLevel.MAX,
}
THINKING_LEVEL_NAMES = _names(THINKING_LEVELS)
NESTED_CALL_STATUSES: dict[str, NestedCallStatus] = {
    "ok": NestedCallStatus.OK,
    "error": NestedCallStatus.ERROR,
    "unfinished": NestedCallStatus.UNFINISHED,
}
NESTED_CALL_STATUS_NAMES = _names(NESTED_CALL_STATUSES)
STRICTNESS: dict[str, Strictness] = {"prefer": Strictness.PREFER, "require": Strictness.REQUIRE}
STRICTNESS_NAMES = _names(STRICTNESS)
# pi's words for the options of a call (StreamOptions, SimpleStreamOptions).
REASONING_LEVELS: dict[str, ThinkingLevel] = {
    "minimal": ThinkingLevel.MINIMAL,
    "low": ThinkingLevel.LOW,
    "medium": ThinkingLevel.MEDIUM,
    "high": ThinkingLevel.HIGH,
    "xhigh": ThinkingLevel.XHIGH,
    "max": ThinkingLevel.MAX,
}
REASONING_LEVEL_NAMES = _names(REASONING_LEVELS)
CACHE_RETENTIONS: dict[str, CacheRetention] = {
    "none": CacheRetention.NONE,
    "short": CacheRetention.SHORT,
    "long": CacheRetention.LONG,
}
CACHE_RETENTION_NAMES = _names(CACHE_RETENTIONS)
TRANSPORTS: dict[str, Transport] = {
    "sse": Transport.SSE,
    "websocket": Transport.WEBSOCKET,
    "websocket-cached": Transport.WEBSOCKET_CACHED,
    "auto": Transport.AUTO,
}
TRANSPORT_NAMES = _names(TRANSPORTS)
TOOL_CHOICES: dict[str, ToolChoiceMode] = {
    "auto": ToolChoiceMode.AUTO,
    "none": ToolChoiceMode.NONE,
    "required": ToolChoiceMode.REQUIRED,
}
TOOL_CHOICE_NAMES = _names(TOOL_CHOICES)

T = TypeVar("T")
E = TypeVar("E")
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


# --- key order -----------------------------------------------------------------------------------

# The keys of each pi-JSON object type, in the order the writer writes them (the order pi builds
# the object in, with the keys it adds later as a response goes on after the ones it starts
# with): the schema states them, as the modelled_keys of the message's extra_json.
_MESSAGES = {
    "assistant": (message_pb2, "AssistantMessage"),
    "system": (message_pb2, "SystemMessage"),
    "user": (message_pb2, "UserMessage"),
    "toolResult": (message_pb2, "ToolResultMessage"),
    "text": (content_pb2, "TextContent"),
    "thinking": (content_pb2, "ThinkingContent"),
    "toolCall": (content_pb2, "ToolCall"),
    "image": (content_pb2, "ImageContent"),
    "usage": (message_pb2, "Usage"),
    "cost": (message_pb2, "Cost"),
    "context": (context_pb2, "AgentContext"),
    "tool": (tool_pb2, "Tool"),
    "toolReference": (tool_pb2, "ToolReference"),
    "jsonSchema": (tool_pb2, "JsonSchemaSampling"),
    "grammar": (tool_pb2, "GrammarSampling"),
    "diagnostic": (message_pb2, "Diagnostic"),
    "diagnosticError": (message_pb2, "DiagnosticError"),
    "deferred": (message_pb2, "DeferredHandle"),
    "nestedCalls": (message_pb2, "NestedToolCalls"),
    "nestedCall": (message_pb2, "NestedToolCall"),
}
_KEYS: dict[str, tuple[str, ...]] = {
    name: modelled_keys(module.DESCRIPTOR.message_types_by_name[message])
    for name, (module, message) in _MESSAGES.items()
}
_KEYS["variants"] = modelled_keys(tool_pb2.GrammarSampling.DESCRIPTOR, "variants_extra_json")

# The key of `extra_json` that lists the keys of an object whose order differs from the writer's,
# which it then follows.
ORDER_KEY = "$order"


@functools.cache
def _known(keys: tuple[str, ...]) -> frozenset[str]:
    return frozenset(keys)


def _in_order(out: JsonObject, order: Sequence[str]) -> JsonObject:
    """`out` with the keys of `order` first, in that order, then the others as they are."""
    placed = {key: out[key] for key in order if key in out}
    if len(placed) < len(out):
        placed.update((key, value) for key, value in out.items() if key not in placed)
    return placed


# --- reading -------------------------------------------------------------------------------------


class _Reader:
    """Reads the known keys of one pi-JSON object; the keys its type does not model become extras.

    The readers test `type(value) is ...`: json.loads makes no subclasses, and this keeps
    booleans out of the integer and number fields. They run for every field a session holds.
    """

    def __init__(self, value: Any, where: str, keys: tuple[str, ...] = ()) -> None:
        if not isinstance(value, Mapping):
            raise PiJsonError(where, f"expected an object, got {_type_name(value)}")
        self.obj = value
        self.where = where
        self.keys = keys  # the keys this object's type models, in the writer's order
        self.known = _known(keys)  # the others become extras
        self.extra: JsonObject = {}

    def _fail(self, key: str, expected: str, value: Any) -> PiJsonError:
        return PiJsonError(_at(self.where, key), f"expected {expected}, got {_describe(value)}")

    def string(self, key: str) -> str:
        value = self.obj.get(key, _MISSING)
        if type(value) is str:
            return value
        raise self._fail(key, "a string", value)

    def optional_string(self, key: str) -> str | None:
        return None if key not in self.obj else self.string(key)

    def boolean(self, key: str) -> bool:
        value = self.obj.get(key, _MISSING)
        if type(value) is bool:
            return value
        raise self._fail(key, "a boolean", value)

    def optional_boolean(self, key: str) -> bool | None:
        return None if key not in self.obj else self.boolean(key)

    def integer(self, key: str) -> int:
        value = self.obj.get(key, _MISSING)
        if type(value) is float and value.is_integer():  # JavaScript has numbers only: 1.0 and -0 are integers
            value = int(value)
        elif type(value) is int and not -(2**53) <= value <= 2**53 and -(2**63) <= value < 2**63:
            value = int(float(value))  # beyond 2^53, the double JSON.parse reads
        if type(value) is int and -(2**63) <= value < 2**63:
            return value
        raise self._fail(key, "a 64-bit integer", value)

    def optional_integer(self, key: str) -> int | None:
        return None if key not in self.obj else self.integer(key)

    def optional_number(self, key: str) -> float | None:
        value = self.obj.get(key, _MISSING)
        if value is _MISSING:
            return None
        if type(value) is int:
            return float(value)
        if type(value) is not float:
            raise self._fail(key, "a number", value)
        return value

    def choice(self, key: str, choices: Mapping[str, E]) -> E:
        """One of an enum's pi names; a name pi does not define is refused, as nothing could hold it."""
        name = self.string(key)
        if name not in choices:
            raise PiJsonError(_at(self.where, key), f"expected one of {', '.join(choices)}, got {name!r}")
        return choices[name]

    def optional_choice(self, key: str, choices: Mapping[str, E]) -> E | None:
        return None if key not in self.obj else self.choice(key, choices)

    def items(self, key: str, read: Callable[[Any, str], T], *, default: list[Any] | None = None) -> list[T]:
        value = self.obj.get(key, _MISSING)
        if value is _MISSING and default is not None:
            return []
        return _list(value, _at(self.where, key), read)

    def child(self, key: str, read: Callable[[Any, str], T]) -> T | None:
        value = self.obj.get(key, _MISSING)
        return None if value is _MISSING else read(value, _at(self.where, key))

    def omitted_when_empty(self, key: str, read: Callable[[Any, str], list[T]], empty: type = list) -> list[T]:
        """A repeated field the writer leaves out when empty: an empty list or object given under
        its key, which the field cannot tell from none, is kept as an extra; `empty` is dict for
        one pi writes as an object."""
        value = self.obj.get(key, _MISSING)
        if value is _MISSING:
            return []
        if type(value) is empty and not value:
            self.extra[key] = value
            return []
        return read(value, _at(self.where, key))

    def json_text(self, key: str, *, object_only: bool = False) -> str | None:
        """A value kept as JSON text; absent stays absent."""
        value = self.obj.get(key, _MISSING)
        if value is _MISSING:
            return None
        if object_only and type(value) is not dict:
            raise self._fail(key, "an object", value)
        return dump_json(value)

    def extra_json(self) -> str:
        """The keys the type does not model (and the empty values omitted_when_empty kept), and
        the keys' order when the writer's differs, as JSON object text."""
        if not self.known.issuperset(self.obj):
            self.extra.update((key, value) for key, value in self.obj.items() if key not in self.known)
        if self.keys and not self._in_writer_order():
            self.extra[ORDER_KEY] = list(self.obj)
        return dump_json(self.extra) if self.extra else ""

    def _in_writer_order(self) -> bool:
        """Whether the writer, which writes the modelled keys in its order and the extras after
        them, gives the keys in the order this object has them."""
        given = list(self.obj)
        written = [key for key in self.keys if key in self.obj]
        if len(written) < len(given):
            written += [key for key in given if key not in self.known]
        return given == written


_MISSING: Any = object()


def _list(value: Any, where: str, read: Callable[[Any, str], T]) -> list[T]:
    if type(value) is not list:
        raise PiJsonError(where, f"expected a list, got {_describe(value)}")
    return [read(item, f"{where}[{i}]") for i, item in enumerate(value)]


_STATE = threading.local()  # whether a call of this module is already in the mapped text
P = ParamSpec("P")
R = TypeVar("R")


def pi_reader(read: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """A public reader: the value's strings mapped to what protobuf strings hold (surrogates.py)
    once, at the outermost call. Every function that reads pi-JSON for callers wears it, here and
    in the modules that read pieces of pi-JSON of their own (the SSE and pi protocol events)."""

    @functools.wraps(read)
    def outermost(value: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if getattr(_STATE, "mapped", False):
            return read(value, *args, **kwargs)
        _STATE.mapped = True
        try:
            return read(surrogates.to_proto_value(value), *args, **kwargs)
        finally:
            _STATE.mapped = False

    return outermost


def pi_writer(write: Callable[P, JsonObject]) -> Callable[P, JsonObject]:
    """A public writer: what it writes mapped back to pi's text (surrogates.py) once, at the
    outermost call; the writers' counterpart of pi_reader."""

    @functools.wraps(write)
    def outermost(*args: P.args, **kwargs: P.kwargs) -> JsonObject:
        if getattr(_STATE, "mapped", False):
            return write(*args, **kwargs)
        _STATE.mapped = True
        try:
            written: JsonObject = surrogates.from_proto_value(write(*args, **kwargs))
            return written
        finally:
            _STATE.mapped = False

    return outermost


@pi_reader
def message_from_pi(value: Any, where: str = "message") -> AgentMessage:
    """Convert one pi-JSON message: system, user, assistant, toolResult, or any other role (kept
    as is)."""
    if not isinstance(value, Mapping):
        raise PiJsonError(where, f"expected an object, got {_type_name(value)}")
    role = value.get("role")
    if role == "user":
        return AgentMessage(user=_user_from_pi(value, where))
    if role == "assistant":
        return AgentMessage(assistant=assistant_from_pi(value, where))
    if role == "toolResult":
        return AgentMessage(tool_result=_tool_result_from_pi(value, where))
    if role == "system":
        return AgentMessage(system=_system_from_pi(value, where))
    if isinstance(role, str) and role:
        fields = {key: item for key, item in value.items() if key != "role"}
        return AgentMessage(custom=CustomMessage(role=role, fields_json=dump_json(fields)))
    raise PiJsonError(
        _at(where, "role"), f"expected a role such as 'system', 'user', 'assistant' or 'toolResult', got {role!r}"
    )


@pi_reader
def assistant_from_pi(value: Any, where: str = "message") -> AssistantMessage:
    """Convert one pi-JSON assistant message."""
    read = _Reader(value, where, _KEYS["assistant"])
    read.string("role")
    return AssistantMessage(
        content=read.items("content", _assistant_block),
        api=read.optional_string("api"),
        provider=read.optional_string("provider"),
        model=read.optional_string("model"),
        usage=read.child("usage", _usage),
        # Absent only on a partial from an older pi, still streaming; written only when set.
        stop_reason=read.optional_choice("stopReason", STOP_REASONS) or StopReason.UNSPECIFIED,
        deferred=read.child("deferred", _deferred),
        timestamp=read.optional_integer("timestamp"),
        provider_thinking_level=read.optional_string("providerThinkingLevel"),
        response_id=read.optional_string("responseId"),
        response_model=read.optional_string("responseModel"),
        raw_stop_reason=read.optional_string("rawStopReason"),
        end_turn=read.optional_boolean("endTurn"),
        error_message=read.optional_string("errorMessage"),
        diagnostics=read.omitted_when_empty("diagnostics", _diagnostics),
        duration_ms=read.optional_integer("durationMs"),
        thinking_level=read.optional_choice("thinkingLevel", THINKING_LEVELS) or ModelThinkingLevel.UNSPECIFIED,
        extra_json=read.extra_json(),
    )


@pi_reader
def context_from_pi(value: Any, where: str = "context") -> AgentContext:
    """Convert a pi-JSON context: pi's Context (systemPrompt, messages, tools) or its
    TranscriptContext (messages only, the prompt and tools in system messages), kept as given."""
    read = _Reader(value, where, _KEYS["context"])
    context = AgentContext(
        system_prompt=read.optional_string("systemPrompt"),
        messages=read.items("messages", message_from_pi),
        tools=read.omitted_when_empty("tools", _tools),
    )
    context.extra_json = read.extra_json()
    return context


def _system_from_pi(value: Mapping[str, Any], where: str) -> SystemMessage:
    read = _Reader(value, where, _KEYS["system"])
    read.string("role")
    content = value.get("content")
    if isinstance(content, str):
        read.string("content")
        blocks = [TextContent(text=content)]
    else:
        blocks = read.items("content", _system_block)
    return SystemMessage(
        content=blocks,
        string_content=isinstance(content, str),
        sections=read.omitted_when_empty("sections", _sections, empty=dict),
        tools_added=read.omitted_when_empty("toolsAdded", _tools),
        tools_removed=read.omitted_when_empty("toolsRemoved", _tool_references),
        timestamp=read.optional_integer("timestamp"),
        extra_json=read.extra_json(),
    )


def _user_from_pi(value: Mapping[str, Any], where: str) -> UserMessage:
    read = _Reader(value, where, _KEYS["user"])
    read.string("role")
    blocks, string_content = _user_content(read)
    return UserMessage(
        content=blocks,
        timestamp=read.optional_integer("timestamp"),
        string_content=string_content,
        extra_json=read.extra_json(),
    )


def _user_content(read: _Reader) -> tuple[list[UserContent], bool]:
    """A user's `content` (a user message's, a custom message entry's): its blocks, and whether
    it was one plain string."""
    content = read.obj.get("content")
    if isinstance(content, str):
        return [UserContent(text=TextContent(text=read.string("content")))], True
    return [_user_block(block) for block in read.items("content", _media_block)], False


def _tool_result_from_pi(value: Mapping[str, Any], where: str) -> ToolResultMessage:
    read = _Reader(value, where, _KEYS["toolResult"])
    read.string("role")
    return ToolResultMessage(
        tool_call_id=read.string("toolCallId"),
        tool_name=read.optional_string("toolName"),
        content=[_tool_result_block(block) for block in read.items("content", _media_block)],
        details_json=read.json_text("details"),
        usage=read.child("usage", _usage),
        nested_calls=read.child("nestedCalls", _nested_calls),
        is_error=read.optional_boolean("isError"),
        duration_ms=read.optional_integer("durationMs"),
        timestamp=read.optional_integer("timestamp"),
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
        read = _Reader(value, where, _KEYS["thinking"])
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
        read = _Reader(value, where, _KEYS["toolCall"])
        read.string("type")
        return AssistantContent(
            tool_call=ToolCall(
                id=read.string("id"),
                name=read.string("name"),
                arguments_json=read.json_text("arguments", object_only=True),
                raw_arguments=read.optional_string("rawArguments"),
                thought_signature=read.optional_string("thoughtSignature"),
                namespace=read.optional_string("namespace"),
                arguments_error=read.optional_string("argumentsError"),
                extra_json=read.extra_json(),
            )
        )
    raise PiJsonError(_at(where, "type"), f"an assistant block is 'text', 'thinking' or 'toolCall', got {kind!r}")


def _system_block(value: Any, where: str) -> TextContent:
    kind = _block_type(value, where)
    if kind != "text":
        raise PiJsonError(_at(where, "type"), f"a system message's block is 'text', got {kind!r}")
    return _text(value, where)


def _media_block(value: Any, where: str) -> TextContent | ImageContent:
    kind = _block_type(value, where)
    if kind == "text":
        return _text(value, where)
    if kind == "image":
        read = _Reader(value, where, _KEYS["image"])
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
    read = _Reader(value, where, _KEYS["text"])
    read.string("type")
    return TextContent(
        text=read.string("text"), text_signature=read.optional_string("textSignature"), extra_json=read.extra_json()
    )


def _user_block(block: TextContent | ImageContent) -> UserContent:
    return UserContent(text=block) if isinstance(block, TextContent) else UserContent(image=block)


def _tool_result_block(block: TextContent | ImageContent) -> ToolResultContent:
    return ToolResultContent(text=block) if isinstance(block, TextContent) else ToolResultContent(image=block)


def _usage(value: Any, where: str) -> Usage:
    read = _Reader(value, where, _KEYS["usage"])
    return Usage(
        input=read.optional_integer("input"),
        output=read.optional_integer("output"),
        cache_read=read.optional_integer("cacheRead"),
        cache_write=read.optional_integer("cacheWrite"),
        reasoning=read.optional_integer("reasoning"),  # absent is not 0: the provider did not say
        total_tokens=read.optional_integer("totalTokens"),
        cost=read.child("cost", _cost),
        cache_write_1h=read.optional_integer("cacheWrite1h"),
        extra_json=read.extra_json(),
    )


def _cost(value: Any, where: str) -> Cost:
    read = _Reader(value, where, _KEYS["cost"])
    return Cost(
        input=read.optional_number("input"),
        output=read.optional_number("output"),
        cache_read=read.optional_number("cacheRead"),
        cache_write=read.optional_number("cacheWrite"),
        total=read.optional_number("total"),
        total_from_provider=read.optional_boolean("totalFromProvider"),
        extra_json=read.extra_json(),
    )


def _tool(value: Any, where: str) -> Tool:
    read = _Reader(value, where, _KEYS["tool"])
    return Tool(
        name=read.string("name"),
        description=read.optional_string("description"),
        parameters_json=read.json_text("parameters", object_only=True),
        constrained_sampling=read.child("constrainedSampling", _constrained_sampling),
        extra_json=read.extra_json(),
    )


def _tools(value: Any, where: str) -> list[Tool]:
    return _list(value, where, _tool)


def _tool_references(value: Any, where: str) -> list[ToolReference]:
    return _list(value, where, _tool_reference)


def _tool_reference(value: Any, where: str) -> ToolReference:
    read = _Reader(value, where, _KEYS["toolReference"])
    return ToolReference(name=read.string("name"), extra_json=read.extra_json())


def _sections(value: Any, where: str) -> list[SystemSection]:
    """pi's `sections` object, in its order; a section set to null (removed) has no text."""
    if type(value) is not dict:
        raise PiJsonError(where, f"expected an object, got {_describe(value)}")
    sections = []
    for name, text in value.items():
        if text is not None and type(text) is not str:
            raise PiJsonError(_at(where, name), f"expected a string or null, got {_describe(text)}")
        sections.append(SystemSection(name=name, text=text))
    return sections


def _constrained_sampling(value: Any, where: str) -> ConstrainedSampling:
    """pi's `false | {type: "json_schema", strict} | {type: "grammar", variants}`."""
    if value is False:
        return ConstrainedSampling(off=True)
    if not isinstance(value, Mapping):
        raise PiJsonError(where, f"expected false or an object, got {_describe(value)}")
    kind = value.get("type")
    if kind == "json_schema":
        read = _Reader(value, where, _KEYS["jsonSchema"])
        strict = read.choice("strict", STRICTNESS)
        return ConstrainedSampling(json_schema=JsonSchemaSampling(strict=strict, extra_json=read.extra_json()))
    if kind == "grammar":
        read = _Reader(value, where, _KEYS["grammar"])
        if "variants" not in value:
            raise PiJsonError(_at(where, "variants"), "required, an object of grammars by format")
        variants = _Reader(value["variants"], _at(where, "variants"), _KEYS["variants"])
        grammar = GrammarSampling(
            openai_lark=variants.optional_string("openai_lark"),
            openai_regex=variants.optional_string("openai_regex"),
            variants_extra_json=variants.extra_json(),
            extra_json=read.extra_json(),
        )
        return ConstrainedSampling(grammar=grammar)
    raise PiJsonError(_at(where, "type"), f"expected 'json_schema' or 'grammar', got {kind!r}")


def _diagnostics(value: Any, where: str) -> list[Diagnostic]:
    return _list(value, where, _diagnostic)


def _diagnostic(value: Any, where: str) -> Diagnostic:
    read = _Reader(value, where, _KEYS["diagnostic"])
    return Diagnostic(
        type=read.string("type"),
        timestamp=read.integer("timestamp"),
        error=read.child("error", _diagnostic_error),
        details_json=read.json_text("details", object_only=True),
        extra_json=read.extra_json(),
    )


def _diagnostic_error(value: Any, where: str) -> DiagnosticError:
    read = _Reader(value, where, _KEYS["diagnosticError"])
    error = DiagnosticError(
        name=read.optional_string("name"), message=read.string("message"), stack=read.optional_string("stack")
    )
    code = value.get("code", _MISSING)
    if type(code) is str:
        error.code_text = code
    elif type(code) in (int, float) and _exact_in_javascript(code):
        error.code_number = float(code)
    elif code is not _MISSING:
        raise read._fail("code", "a string or a number (a safe integer when integral)", code)
    error.extra_json = read.extra_json()
    return error


def _exact_in_javascript(number: float) -> bool:
    """Whether JavaScript reads this JSON number exactly: finite, and a safe integer if integral."""
    if type(number) is int:
        return abs(number) < 2**53
    return math.isfinite(number) and not (number.is_integer() and abs(number) >= 2**53)


def _deferred(value: Any, where: str) -> DeferredHandle:
    read = _Reader(value, where, _KEYS["deferred"])
    return DeferredHandle(
        provider=read.string("provider"),
        model_id=read.string("modelId"),
        api=read.string("api"),
        id=read.string("id"),
        expires_at=read.optional_integer("expiresAt"),
        poll_after_ms=read.optional_integer("pollAfterMs"),
        data_json=read.json_text("data"),
        extra_json=read.extra_json(),
    )


def _nested_calls(value: Any, where: str) -> NestedToolCalls:
    read = _Reader(value, where, _KEYS["nestedCalls"])
    calls = read.items("calls", _nested_call)
    return NestedToolCalls(calls=calls, complete=read.boolean("complete"), extra_json=read.extra_json())


def _nested_call(value: Any, where: str) -> NestedToolCall:
    read = _Reader(value, where, _KEYS["nestedCall"])
    return NestedToolCall(
        id=read.string("id"),
        name=read.string("name"),
        arguments_json=read.json_text("arguments", object_only=True),
        arguments_bytes=read.optional_integer("argumentsBytes"),
        status=read.choice("status", NESTED_CALL_STATUSES),
        duration_ms=read.optional_integer("durationMs"),
        error=read.optional_string("error"),
        extra_json=read.extra_json(),
    )


# --- writing -------------------------------------------------------------------------------------


@pi_writer
def message_to_pi(
    message: AgentMessage | SystemMessage | UserMessage | AssistantMessage | ToolResultMessage,
) -> JsonObject:
    """Convert a message to its pi-JSON object."""
    match message:
        case SystemMessage():
            return _system_to_pi(message)
        case UserMessage():
            return _user_to_pi(message)
        case AssistantMessage():
            return assistant_to_pi(message)
        case ToolResultMessage():
            return _tool_result_to_pi(message)
    if message.system is not None:
        return _system_to_pi(message.system)
    if message.user is not None:
        return _user_to_pi(message.user)
    if message.assistant is not None:
        return assistant_to_pi(message.assistant)
    if message.tool_result is not None:
        return _tool_result_to_pi(message.tool_result)
    if message.custom is not None:
        return {"role": message.custom.role, **_json_object(message.custom.fields_json, "CustomMessage.fields_json")}
    raise PiJsonError("AgentMessage", "no role is set")


@pi_writer
def assistant_to_pi(message: AssistantMessage) -> JsonObject:
    """Convert an assistant message to its pi-JSON object."""
    out: JsonObject = {"role": "assistant", "content": [_assistant_block_to_pi(content) for content in message.content]}
    _put(out, "api", message.api)
    _put(out, "provider", message.provider)
    _put(out, "model", message.model)
    if message.usage is not None:
        out["usage"] = _usage_to_pi(message.usage)
    if message.stop_reason in STOP_REASON_NAMES:
        out["stopReason"] = STOP_REASON_NAMES[message.stop_reason]
    if message.deferred is not None:
        out["deferred"] = _deferred_to_pi(message.deferred)
    _put(out, "timestamp", message.timestamp)
    _put(out, "providerThinkingLevel", message.provider_thinking_level)
    _put(out, "responseId", message.response_id)
    _put(out, "responseModel", message.response_model)
    _put(out, "rawStopReason", message.raw_stop_reason)
    _put(out, "endTurn", message.end_turn)
    _put(out, "errorMessage", message.error_message)  # pi sets it once the call has failed
    _put(out, "diagnostics", _diagnostics_to_pi(message.diagnostics))
    _put(out, "durationMs", message.duration_ms)
    _put(out, "thinkingLevel", THINKING_LEVEL_NAMES.get(message.thinking_level))
    return _with_extra(out, message.extra_json, "AssistantMessage", _KEYS["assistant"])


@pi_writer
def context_to_pi(context: AgentContext) -> JsonObject:
    """Convert a context to its pi-JSON object."""
    out: JsonObject = {}
    if context.system_prompt is not None:
        out["systemPrompt"] = context.system_prompt
    out["messages"] = [message_to_pi(message) for message in context.messages]
    if context.tools:
        out["tools"] = [_tool_to_pi(tool) for tool in context.tools]
    return _with_extra(out, context.extra_json, "AgentContext", _KEYS["context"])


def _put(out: JsonObject, key: str, value: Any) -> None:
    """Write an optional key: None leaves it out."""
    if value is not None:
        out[key] = value


def _system_to_pi(message: SystemMessage) -> JsonObject:
    content: Any
    if message.string_content and len(message.content) == 1:
        content = message.content[0].text
    else:
        content = [_text_to_pi(block) for block in message.content]
    out: JsonObject = {"role": "system", "content": content}
    _put(out, "sections", _sections_to_pi(message.sections))
    _put(out, "timestamp", message.timestamp)  # before the tools, as pi's agent loop writes them
    _put(out, "toolsAdded", _tools_to_pi(message.tools_added))
    _put(out, "toolsRemoved", _tool_references_to_pi(message.tools_removed))
    return _with_extra(out, message.extra_json, "SystemMessage", _KEYS["system"])


def _user_to_pi(message: UserMessage) -> JsonObject:
    out = {"role": "user", "content": _user_content_to_pi(message.content, message.string_content)}
    _put(out, "timestamp", message.timestamp)
    return _with_extra(out, message.extra_json, "UserMessage", _KEYS["user"])


def _user_content_to_pi(content: list[UserContent], string_content: bool) -> Any:
    """A user's content as pi writes it: one string where it was one, else its blocks."""
    if string_content and len(content) == 1 and content[0].text is not None:
        return content[0].text.text
    return [_media_block_to_pi(item.text if item.text is not None else item.image) for item in content]


def _tool_result_to_pi(message: ToolResultMessage) -> JsonObject:
    out: JsonObject = {"role": "toolResult", "toolCallId": message.tool_call_id}
    _put(out, "toolName", message.tool_name)
    out["content"] = [
        _media_block_to_pi(item.text if item.text is not None else item.image) for item in message.content
    ]
    if message.details_json is not None:
        out["details"] = json.loads(message.details_json)
    if message.usage is not None:
        out["usage"] = _usage_to_pi(message.usage)
    if message.nested_calls is not None:
        out["nestedCalls"] = _nested_calls_to_pi(message.nested_calls)
    _put(out, "isError", message.is_error)
    _put(out, "durationMs", message.duration_ms)
    _put(out, "timestamp", message.timestamp)
    return _with_extra(out, message.extra_json, "ToolResultMessage", _KEYS["toolResult"])


def _assistant_block_to_pi(content: AssistantContent) -> JsonObject:
    if content.text is not None:
        return _text_to_pi(content.text)
    if (thinking := content.thinking) is not None:
        out: JsonObject = {"type": "thinking", "thinking": thinking.thinking}
        if thinking.thinking_signature is not None:
            out["thinkingSignature"] = thinking.thinking_signature
        if thinking.redacted is not None:
            out["redacted"] = thinking.redacted
        return _with_extra(out, thinking.extra_json, "ThinkingContent", _KEYS["thinking"])
    if (call := content.tool_call) is not None:
        out = {"type": "toolCall", "id": call.id, "name": call.name}
        if call.arguments_json is not None:
            out["arguments"] = json.loads(call.arguments_json)
        if call.raw_arguments is not None:
            out["rawArguments"] = call.raw_arguments
        if call.thought_signature is not None:
            out["thoughtSignature"] = call.thought_signature
        if call.namespace is not None:
            out["namespace"] = call.namespace
        if call.arguments_error is not None:
            out["argumentsError"] = call.arguments_error
        return _with_extra(out, call.extra_json, "ToolCall", _KEYS["toolCall"])
    raise PiJsonError("AssistantContent", "no block is set")


def _media_block_to_pi(block: TextContent | ImageContent | None) -> JsonObject:
    if isinstance(block, TextContent):
        return _text_to_pi(block)
    if isinstance(block, ImageContent):
        out = {"type": "image", "data": base64.b64encode(block.data).decode("ascii"), "mimeType": block.mime_type}
        return _with_extra(out, block.extra_json, "ImageContent", _KEYS["image"])
    raise PiJsonError("content", "no block is set")


def _text_to_pi(block: TextContent) -> JsonObject:
    out = {"type": "text", "text": block.text}
    if block.text_signature is not None:
        out["textSignature"] = block.text_signature
    return _with_extra(out, block.extra_json, "TextContent", _KEYS["text"])


def _usage_to_pi(usage: Usage) -> JsonObject:
    out: JsonObject = {}
    _put(out, "input", usage.input)
    _put(out, "output", usage.output)
    _put(out, "cacheRead", usage.cache_read)
    _put(out, "cacheWrite", usage.cache_write)
    _put(out, "reasoning", usage.reasoning)
    _put(out, "totalTokens", usage.total_tokens)
    if (cost := usage.cost) is not None:
        out["cost"] = _cost_to_pi(cost)
    _put(out, "cacheWrite1h", usage.cache_write_1h)
    return _with_extra(out, usage.extra_json, "Usage", _KEYS["usage"])


def _cost_to_pi(cost: Cost) -> JsonObject:
    out: JsonObject = {}
    for key, amount in (
        ("input", cost.input),
        ("output", cost.output),
        ("cacheRead", cost.cache_read),
        ("cacheWrite", cost.cache_write),
        ("total", cost.total),
    ):
        if amount is not None:
            out[key] = _json_number(amount)
    _put(out, "totalFromProvider", cost.total_from_provider)
    return _with_extra(out, cost.extra_json, "Cost", _KEYS["cost"])


def _tool_to_pi(tool: Tool) -> JsonObject:
    out: JsonObject = {"name": tool.name}
    _put(out, "description", tool.description)
    if tool.parameters_json is not None:
        out["parameters"] = json.loads(tool.parameters_json)
    if tool.constrained_sampling is not None:
        out["constrainedSampling"] = _constrained_sampling_to_pi(tool.constrained_sampling)
    return _with_extra(out, tool.extra_json, "Tool", _KEYS["tool"])


def _tools_to_pi(tools: list[Tool]) -> list[JsonObject] | None:
    return [_tool_to_pi(tool) for tool in tools] if tools else None


def _tool_references_to_pi(references: list[ToolReference]) -> list[JsonObject] | None:
    return [_tool_reference_to_pi(reference) for reference in references] if references else None


def _tool_reference_to_pi(reference: ToolReference) -> JsonObject:
    return _with_extra({"name": reference.name}, reference.extra_json, "ToolReference", _KEYS["toolReference"])


def _sections_to_pi(sections: list[SystemSection]) -> JsonObject | None:
    out: JsonObject = {}
    for i, section in enumerate(sections):
        if section.name in out:
            where = f"SystemMessage.sections[{i}].name"
            raise PiJsonError(where, f"{section.name!r} is named twice, and pi's sections are an object")
        out[section.name] = section.text
    return out or None


def _constrained_sampling_to_pi(sampling: ConstrainedSampling) -> Any:
    if sampling.off is not None:
        return False
    if (schema := sampling.json_schema) is not None:
        out = {"type": "json_schema", "strict": _name(STRICTNESS_NAMES, schema.strict, "JsonSchemaSampling.strict")}
        return _with_extra(out, schema.extra_json, "JsonSchemaSampling", _KEYS["jsonSchema"])
    if (grammar := sampling.grammar) is not None:
        variants: JsonObject = {}
        _put(variants, "openai_lark", grammar.openai_lark)
        _put(variants, "openai_regex", grammar.openai_regex)
        variants = _with_extra(variants, grammar.variants_extra_json, "GrammarSampling.variants", _KEYS["variants"])
        grammar_out: JsonObject = {"type": "grammar", "variants": variants}
        return _with_extra(grammar_out, grammar.extra_json, "GrammarSampling", _KEYS["grammar"])
    raise PiJsonError("ConstrainedSampling", "no choice is set")


def _diagnostics_to_pi(diagnostics: list[Diagnostic]) -> list[JsonObject] | None:
    return [_diagnostic_to_pi(diagnostic) for diagnostic in diagnostics] if diagnostics else None


def _diagnostic_to_pi(diagnostic: Diagnostic) -> JsonObject:
    out: JsonObject = {"type": diagnostic.type, "timestamp": diagnostic.timestamp}
    if (error := diagnostic.error) is not None:
        out["error"] = _diagnostic_error_to_pi(error)
    if diagnostic.details_json is not None:
        out["details"] = json.loads(diagnostic.details_json)
    return _with_extra(out, diagnostic.extra_json, "Diagnostic", _KEYS["diagnostic"])


def _diagnostic_error_to_pi(error: DiagnosticError) -> JsonObject:
    out: JsonObject = {}
    _put(out, "name", error.name)
    out["message"] = error.message
    _put(out, "stack", error.stack)
    if error.code_text is not None:
        out["code"] = error.code_text
    elif error.code_number is not None:
        out["code"] = _json_number(error.code_number)
    return _with_extra(out, error.extra_json, "DiagnosticError", _KEYS["diagnosticError"])


def _deferred_to_pi(handle: DeferredHandle) -> JsonObject:
    out: JsonObject = {"provider": handle.provider, "modelId": handle.model_id, "api": handle.api, "id": handle.id}
    _put(out, "expiresAt", handle.expires_at)
    _put(out, "pollAfterMs", handle.poll_after_ms)
    if handle.data_json is not None:
        out["data"] = json.loads(handle.data_json)
    return _with_extra(out, handle.extra_json, "DeferredHandle", _KEYS["deferred"])


def _nested_calls_to_pi(nested: NestedToolCalls) -> JsonObject:
    out = {"calls": [_nested_call_to_pi(call) for call in nested.calls], "complete": nested.complete}
    return _with_extra(out, nested.extra_json, "NestedToolCalls", _KEYS["nestedCalls"])


def _nested_call_to_pi(call: NestedToolCall) -> JsonObject:
    out: JsonObject = {"id": call.id, "name": call.name}
    if call.arguments_json is not None:
        out["arguments"] = json.loads(call.arguments_json)
    _put(out, "argumentsBytes", call.arguments_bytes)
    out["status"] = _name(NESTED_CALL_STATUS_NAMES, call.status, "NestedToolCall.status")
    _put(out, "durationMs", call.duration_ms)
    _put(out, "error", call.error)
    return _with_extra(out, call.extra_json, "NestedToolCall", _KEYS["nestedCall"])


def _name(names: Mapping[Any, str], value: Any, where: str) -> str:
    """pi's name of an enum value the object must have set."""
    if value not in names:
        raise PiJsonError(where, f"must be one of {', '.join(names.values())}, got {value!r}")
    return names[value]


def _json_number(value: float) -> int | float:
    """A double as the value dump_json writes as JSON.stringify does: an integral one below 1e21
    as an integer (JavaScript writes 1e21 and beyond with an exponent, as dump_json does a float)."""
    value = float(value)  # a Python int may sit in a double field
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def _with_extra(out: JsonObject, extra_json: str, where: str, keys: tuple[str, ...]) -> JsonObject:
    """`out` with the object's extras, in the order it had its keys (`keys`, the writer's, when it
    had them in that). A key the fields wrote wins over the same key in the extras, which only an
    empty list or object may be (_Reader.omitted_when_empty)."""
    if not extra_json:
        return out
    extra = _json_object(extra_json, _at(where, "extra_json"))
    order = _key_list(extra.pop(ORDER_KEY, keys), where)
    for key, value in extra.items():
        out.setdefault(key, value)
    return _in_order(out, order)


def _key_list(value: Any, where: str) -> Sequence[str]:
    if not isinstance(value, (list, tuple)) or not all(type(key) is str for key in value):
        raise PiJsonError(_at(where, "extra_json"), f"{ORDER_KEY} is a list of keys")
    return value


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


# The pieces the SSE and pi-protocol event writers send on their own, with the surrogate mapping
# of a public reader or writer.
usage_from_pi = pi_reader(_usage)
usage_to_pi = pi_writer(_usage_to_pi)
assistant_block_from_pi = pi_reader(_assistant_block)
assistant_block_to_pi = pi_writer(_assistant_block_to_pi)


# --- events --------------------------------------------------------------------------------------

_BLOCK_KINDS = {"text": "text", "thinking": "thinking", "toolcall": "tool_call"}


@pi_reader
def event_from_pi(value: Any, where: str = "event") -> ModelEvent:
    """Convert one pi-JSON AssistantMessageEvent; its `partial` becomes ModelEvent.partial."""
    read = _Reader(value, where)
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
        return _delta_only_event(read, kind)
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
        body = _DELTA_EVENTS[family](content_index=index, delta=read.string("delta"))
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


def _delta_only_event(read: _Reader, kind: str) -> ModelEvent:
    """An event as pi 1.6 writes it in its json and RPC modes (and pi-messages): no `partial`;
    `toolcall_start` names the call (`id`, `toolName`), and an `*_end` event carries the block's
    text (`content`, which a receiver rebuilds anyway) and its signature (`contentSignature`)."""
    read.known = _DELTA_ONLY_KEYS.get(kind, frozenset({"type"}))
    family, _, step = kind.partition("_")
    if kind == "start":
        _no_extra(read)
        return ModelEvent(start=StartEvent(header=AssistantMessage()))
    if family not in _BLOCK_KINDS or step not in ("start", "delta", "end"):
        raise PiJsonError(_at(read.where, "type"), f"not a pi event type: {kind!r}")
    index = read.integer("contentIndex")
    if index < 0:
        raise PiJsonError(_at(read.where, "contentIndex"), f"{index} is not a block index")
    body: Any
    if kind == "toolcall_start":
        body = ToolCallStartEvent(content_index=index, id=read.string("id"), name=read.string("toolName"))
    elif step == "start":
        body = (TextStartEvent if family == "text" else ThinkingStartEvent)(content_index=index)
    elif step == "delta":
        body = _DELTA_EVENTS[family](content_index=index, delta=read.string("delta"))
    elif kind == "toolcall_end":
        call = read.child("toolCall", _assistant_block)
        if call is None or call.tool_call is None:
            raise PiJsonError(_at(read.where, "toolCall"), "required, a toolCall block")
        body = ToolCallEndEvent(content_index=index, tool_call=call.tool_call)
    else:
        read.optional_string("content")  # the block's text, which the receiver has rebuilt
        signature = read.optional_string("contentSignature")
        if family == "text":
            body = TextEndEvent(content_index=index, text_signature=signature)
        else:
            redacted = read.optional_boolean("redacted")
            body = ThinkingEndEvent(content_index=index, thinking_signature=signature, redacted=redacted)
    _no_extra(read)
    return ModelEvent(**{kind: body})


_DELTA_EVENTS = {"text": TextDeltaEvent, "thinking": ThinkingDeltaEvent, "toolcall": ToolCallDeltaEvent}
_DELTA_ONLY_KEYS = {
    "start": frozenset({"type"}),
    "text_start": frozenset({"type", "contentIndex"}),
    "thinking_start": frozenset({"type", "contentIndex"}),
    "toolcall_start": frozenset({"type", "contentIndex", "id", "toolName"}),
    "text_delta": frozenset({"type", "contentIndex", "delta"}),
    "thinking_delta": frozenset({"type", "contentIndex", "delta"}),
    "toolcall_delta": frozenset({"type", "contentIndex", "delta"}),
    "text_end": frozenset({"type", "contentIndex", "content", "contentSignature"}),
    "thinking_end": frozenset({"type", "contentIndex", "content", "contentSignature", "redacted"}),
    "toolcall_end": frozenset({"type", "contentIndex", "toolCall"}),
}


@pi_writer
def event_to_pi(event: ModelEvent, *, delta_only: bool = False) -> JsonObject:
    """Convert an event to pi's AssistantMessageEvent; non-terminal events need their `partial`.

    With `delta_only`, in the form pi 1.6 writes in its json and RPC modes: without `partial`
    (an `*_end` event's `content` is still taken from it, when the event has one)."""
    kind, body = event_kind(event)
    if delta_only and kind not in ("done", "error"):
        return _delta_only_to_pi(event, kind, body)
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


def _delta_only_to_pi(event: ModelEvent, kind: str, body: Any) -> JsonObject:
    if not kind:
        raise PiJsonError("ModelEvent", "no event kind is set")
    if kind == "start":
        return {"type": "start"}
    out: JsonObject = {"type": kind, "contentIndex": body.content_index}
    if kind == "toolcall_start":
        out |= {"id": body.id, "toolName": body.name}
    elif kind.endswith("_delta"):
        out["delta"] = body.delta
    elif kind == "toolcall_end":
        out["toolCall"] = _assistant_block_to_pi(AssistantContent(tool_call=body.tool_call))
    elif kind.endswith("_end"):
        partial = event.partial
        if partial is not None and body.content_index < len(partial.content):
            block = partial.content[body.content_index]
            text = block.text.text if block.text is not None else (block.thinking or ThinkingContent()).thinking
            out["content"] = text
        signature = body.text_signature if kind == "text_end" else body.thinking_signature
        _put(out, "contentSignature", signature)
        if kind == "thinking_end":
            _put(out, "redacted", body.redacted)
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
        out.append(head + "".join(word[:1].upper() + word[1:] for word in rest) + bracket + index)
        wrapper_next = name in ("messages", "content") and bool(bracket)  # a role or a block's type
    return ".".join(out)
