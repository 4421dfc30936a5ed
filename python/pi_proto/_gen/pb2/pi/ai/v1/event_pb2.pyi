from ....buf.validate import validate_pb2 as _validate_pb2
from . import content_pb2 as _content_pb2
from . import message_pb2 as _message_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StreamRule(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STREAM_RULE_UNSPECIFIED: _ClassVar[StreamRule]
    STREAM_RULE_EVENT_KIND: _ClassVar[StreamRule]
    STREAM_RULE_START_FIRST: _ClassVar[StreamRule]
    STREAM_RULE_START_ONCE: _ClassVar[StreamRule]
    STREAM_RULE_NEXT_INDEX: _ClassVar[StreamRule]
    STREAM_RULE_BLOCK_EXISTS: _ClassVar[StreamRule]
    STREAM_RULE_BLOCK_KIND: _ClassVar[StreamRule]
    STREAM_RULE_BLOCK_OPEN: _ClassVar[StreamRule]
    STREAM_RULE_TOOL_CALL_ID: _ClassVar[StreamRule]
    STREAM_RULE_TERMINAL_VALID: _ClassVar[StreamRule]
    STREAM_RULE_TERMINAL_AGREES: _ClassVar[StreamRule]
    STREAM_RULE_SIZE_LIMIT: _ClassVar[StreamRule]
    STREAM_RULE_TERMINAL_MISSING: _ClassVar[StreamRule]
    STREAM_RULE_EVENT_DECODE: _ClassVar[StreamRule]
    STREAM_RULE_SEQUENCE: _ClassVar[StreamRule]
    STREAM_RULE_TERMINAL_DIGEST: _ClassVar[StreamRule]
STREAM_RULE_UNSPECIFIED: StreamRule
STREAM_RULE_EVENT_KIND: StreamRule
STREAM_RULE_START_FIRST: StreamRule
STREAM_RULE_START_ONCE: StreamRule
STREAM_RULE_NEXT_INDEX: StreamRule
STREAM_RULE_BLOCK_EXISTS: StreamRule
STREAM_RULE_BLOCK_KIND: StreamRule
STREAM_RULE_BLOCK_OPEN: StreamRule
STREAM_RULE_TOOL_CALL_ID: StreamRule
STREAM_RULE_TERMINAL_VALID: StreamRule
STREAM_RULE_TERMINAL_AGREES: StreamRule
STREAM_RULE_SIZE_LIMIT: StreamRule
STREAM_RULE_TERMINAL_MISSING: StreamRule
STREAM_RULE_EVENT_DECODE: StreamRule
STREAM_RULE_SEQUENCE: StreamRule
STREAM_RULE_TERMINAL_DIGEST: StreamRule

class StartEvent(_message.Message):
    __slots__ = ("header", "stream_id")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    header: _message_pb2.AssistantMessage
    stream_id: str
    def __init__(self, header: _Optional[_Union[_message_pb2.AssistantMessage, _Mapping]] = ..., stream_id: _Optional[str] = ...) -> None: ...

class TextStartEvent(_message.Message):
    __slots__ = ("content_index",)
    CONTENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    content_index: int
    def __init__(self, content_index: _Optional[int] = ...) -> None: ...

class TextDeltaEvent(_message.Message):
    __slots__ = ("content_index", "delta")
    CONTENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    content_index: int
    delta: str
    def __init__(self, content_index: _Optional[int] = ..., delta: _Optional[str] = ...) -> None: ...

class TextEndEvent(_message.Message):
    __slots__ = ("content_index", "text_signature")
    CONTENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    TEXT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    content_index: int
    text_signature: str
    def __init__(self, content_index: _Optional[int] = ..., text_signature: _Optional[str] = ...) -> None: ...

class ThinkingStartEvent(_message.Message):
    __slots__ = ("content_index",)
    CONTENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    content_index: int
    def __init__(self, content_index: _Optional[int] = ...) -> None: ...

class ThinkingDeltaEvent(_message.Message):
    __slots__ = ("content_index", "delta")
    CONTENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    content_index: int
    delta: str
    def __init__(self, content_index: _Optional[int] = ..., delta: _Optional[str] = ...) -> None: ...

class ThinkingEndEvent(_message.Message):
    __slots__ = ("content_index", "thinking_signature", "redacted")
    CONTENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    THINKING_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    REDACTED_FIELD_NUMBER: _ClassVar[int]
    content_index: int
    thinking_signature: str
    redacted: bool
    def __init__(self, content_index: _Optional[int] = ..., thinking_signature: _Optional[str] = ..., redacted: _Optional[bool] = ...) -> None: ...

class ToolCallStartEvent(_message.Message):
    __slots__ = ("content_index", "id", "name")
    CONTENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    content_index: int
    id: str
    name: str
    def __init__(self, content_index: _Optional[int] = ..., id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class ToolCallDeltaEvent(_message.Message):
    __slots__ = ("content_index", "delta")
    CONTENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    content_index: int
    delta: str
    def __init__(self, content_index: _Optional[int] = ..., delta: _Optional[str] = ...) -> None: ...

class ToolCallEndEvent(_message.Message):
    __slots__ = ("content_index", "tool_call")
    CONTENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    content_index: int
    tool_call: _content_pb2.ToolCall
    def __init__(self, content_index: _Optional[int] = ..., tool_call: _Optional[_Union[_content_pb2.ToolCall, _Mapping]] = ...) -> None: ...

class DoneEvent(_message.Message):
    __slots__ = ("reason", "message", "content_sha256")
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_SHA256_FIELD_NUMBER: _ClassVar[int]
    reason: _message_pb2.StopReason
    message: _message_pb2.AssistantMessage
    content_sha256: bytes
    def __init__(self, reason: _Optional[_Union[_message_pb2.StopReason, str]] = ..., message: _Optional[_Union[_message_pb2.AssistantMessage, _Mapping]] = ..., content_sha256: _Optional[bytes] = ...) -> None: ...

class ErrorEvent(_message.Message):
    __slots__ = ("reason", "message", "content_sha256")
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_SHA256_FIELD_NUMBER: _ClassVar[int]
    reason: _message_pb2.StopReason
    message: _message_pb2.AssistantMessage
    content_sha256: bytes
    def __init__(self, reason: _Optional[_Union[_message_pb2.StopReason, str]] = ..., message: _Optional[_Union[_message_pb2.AssistantMessage, _Mapping]] = ..., content_sha256: _Optional[bytes] = ...) -> None: ...

class ModelEvent(_message.Message):
    __slots__ = ("start", "text_start", "text_delta", "text_end", "thinking_start", "thinking_delta", "thinking_end", "toolcall_start", "toolcall_delta", "toolcall_end", "done", "error", "partial", "usage", "seq")
    START_FIELD_NUMBER: _ClassVar[int]
    TEXT_START_FIELD_NUMBER: _ClassVar[int]
    TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    TEXT_END_FIELD_NUMBER: _ClassVar[int]
    THINKING_START_FIELD_NUMBER: _ClassVar[int]
    THINKING_DELTA_FIELD_NUMBER: _ClassVar[int]
    THINKING_END_FIELD_NUMBER: _ClassVar[int]
    TOOLCALL_START_FIELD_NUMBER: _ClassVar[int]
    TOOLCALL_DELTA_FIELD_NUMBER: _ClassVar[int]
    TOOLCALL_END_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    start: StartEvent
    text_start: TextStartEvent
    text_delta: TextDeltaEvent
    text_end: TextEndEvent
    thinking_start: ThinkingStartEvent
    thinking_delta: ThinkingDeltaEvent
    thinking_end: ThinkingEndEvent
    toolcall_start: ToolCallStartEvent
    toolcall_delta: ToolCallDeltaEvent
    toolcall_end: ToolCallEndEvent
    done: DoneEvent
    error: ErrorEvent
    partial: _message_pb2.AssistantMessage
    usage: _message_pb2.Usage
    seq: int
    def __init__(self, start: _Optional[_Union[StartEvent, _Mapping]] = ..., text_start: _Optional[_Union[TextStartEvent, _Mapping]] = ..., text_delta: _Optional[_Union[TextDeltaEvent, _Mapping]] = ..., text_end: _Optional[_Union[TextEndEvent, _Mapping]] = ..., thinking_start: _Optional[_Union[ThinkingStartEvent, _Mapping]] = ..., thinking_delta: _Optional[_Union[ThinkingDeltaEvent, _Mapping]] = ..., thinking_end: _Optional[_Union[ThinkingEndEvent, _Mapping]] = ..., toolcall_start: _Optional[_Union[ToolCallStartEvent, _Mapping]] = ..., toolcall_delta: _Optional[_Union[ToolCallDeltaEvent, _Mapping]] = ..., toolcall_end: _Optional[_Union[ToolCallEndEvent, _Mapping]] = ..., done: _Optional[_Union[DoneEvent, _Mapping]] = ..., error: _Optional[_Union[ErrorEvent, _Mapping]] = ..., partial: _Optional[_Union[_message_pb2.AssistantMessage, _Mapping]] = ..., usage: _Optional[_Union[_message_pb2.Usage, _Mapping]] = ..., seq: _Optional[int] = ...) -> None: ...
