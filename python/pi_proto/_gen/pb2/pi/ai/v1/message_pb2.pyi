from ....buf.validate import validate_pb2 as _validate_pb2
from . import content_pb2 as _content_pb2
from . import json_pb2 as _json_pb2
from . import tool_pb2 as _tool_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StopReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STOP_REASON_UNSPECIFIED: _ClassVar[StopReason]
    STOP_REASON_STOP: _ClassVar[StopReason]
    STOP_REASON_LENGTH: _ClassVar[StopReason]
    STOP_REASON_TOOL_USE: _ClassVar[StopReason]
    STOP_REASON_ERROR: _ClassVar[StopReason]
    STOP_REASON_ABORTED: _ClassVar[StopReason]
    STOP_REASON_PENDING: _ClassVar[StopReason]
    STOP_REASON_DEFERRED: _ClassVar[StopReason]

class ModelThinkingLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MODEL_THINKING_LEVEL_UNSPECIFIED: _ClassVar[ModelThinkingLevel]
    MODEL_THINKING_LEVEL_OFF: _ClassVar[ModelThinkingLevel]
    MODEL_THINKING_LEVEL_MINIMAL: _ClassVar[ModelThinkingLevel]
    MODEL_THINKING_LEVEL_LOW: _ClassVar[ModelThinkingLevel]
    MODEL_THINKING_LEVEL_MEDIUM: _ClassVar[ModelThinkingLevel]
    MODEL_THINKING_LEVEL_HIGH: _ClassVar[ModelThinkingLevel]
    MODEL_THINKING_LEVEL_XHIGH: _ClassVar[ModelThinkingLevel]
    MODEL_THINKING_LEVEL_MAX: _ClassVar[ModelThinkingLevel]

class NestedCallStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NESTED_CALL_STATUS_UNSPECIFIED: _ClassVar[NestedCallStatus]
    NESTED_CALL_STATUS_OK: _ClassVar[NestedCallStatus]
    NESTED_CALL_STATUS_ERROR: _ClassVar[NestedCallStatus]
    NESTED_CALL_STATUS_UNFINISHED: _ClassVar[NestedCallStatus]
STOP_REASON_UNSPECIFIED: StopReason
STOP_REASON_STOP: StopReason
STOP_REASON_LENGTH: StopReason
STOP_REASON_TOOL_USE: StopReason
STOP_REASON_ERROR: StopReason
STOP_REASON_ABORTED: StopReason
STOP_REASON_PENDING: StopReason
STOP_REASON_DEFERRED: StopReason
MODEL_THINKING_LEVEL_UNSPECIFIED: ModelThinkingLevel
MODEL_THINKING_LEVEL_OFF: ModelThinkingLevel
MODEL_THINKING_LEVEL_MINIMAL: ModelThinkingLevel
MODEL_THINKING_LEVEL_LOW: ModelThinkingLevel
MODEL_THINKING_LEVEL_MEDIUM: ModelThinkingLevel
MODEL_THINKING_LEVEL_HIGH: ModelThinkingLevel
MODEL_THINKING_LEVEL_XHIGH: ModelThinkingLevel
MODEL_THINKING_LEVEL_MAX: ModelThinkingLevel
NESTED_CALL_STATUS_UNSPECIFIED: NestedCallStatus
NESTED_CALL_STATUS_OK: NestedCallStatus
NESTED_CALL_STATUS_ERROR: NestedCallStatus
NESTED_CALL_STATUS_UNFINISHED: NestedCallStatus

class Cost(_message.Message):
    __slots__ = ("input", "output", "cache_read", "cache_write", "total", "total_from_provider", "extra_json")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FROM_PROVIDER_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    input: float
    output: float
    cache_read: float
    cache_write: float
    total: float
    total_from_provider: bool
    extra_json: str
    def __init__(self, input: _Optional[float] = ..., output: _Optional[float] = ..., cache_read: _Optional[float] = ..., cache_write: _Optional[float] = ..., total: _Optional[float] = ..., total_from_provider: _Optional[bool] = ..., extra_json: _Optional[str] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("input", "output", "cache_read", "cache_write", "total_tokens", "cost", "cache_write_1h", "reasoning", "extra_json")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_1H_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    input: int
    output: int
    cache_read: int
    cache_write: int
    total_tokens: int
    cost: Cost
    cache_write_1h: int
    reasoning: int
    extra_json: str
    def __init__(self, input: _Optional[int] = ..., output: _Optional[int] = ..., cache_read: _Optional[int] = ..., cache_write: _Optional[int] = ..., total_tokens: _Optional[int] = ..., cost: _Optional[_Union[Cost, _Mapping]] = ..., cache_write_1h: _Optional[int] = ..., reasoning: _Optional[int] = ..., extra_json: _Optional[str] = ...) -> None: ...

class UserMessage(_message.Message):
    __slots__ = ("content", "timestamp", "string_content", "extra_json")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    STRING_CONTENT_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    content: _containers.RepeatedCompositeFieldContainer[_content_pb2.UserContent]
    timestamp: int
    string_content: bool
    extra_json: str
    def __init__(self, content: _Optional[_Iterable[_Union[_content_pb2.UserContent, _Mapping]]] = ..., timestamp: _Optional[int] = ..., string_content: _Optional[bool] = ..., extra_json: _Optional[str] = ...) -> None: ...

class AssistantMessage(_message.Message):
    __slots__ = ("content", "api", "provider", "model", "usage", "stop_reason", "error_message", "timestamp", "response_id", "response_model", "provider_thinking_level", "thinking_level", "diagnostics", "deferred", "raw_stop_reason", "end_turn", "duration_ms", "extra_json")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    API_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_MODEL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_THINKING_LEVEL_FIELD_NUMBER: _ClassVar[int]
    THINKING_LEVEL_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSTICS_FIELD_NUMBER: _ClassVar[int]
    DEFERRED_FIELD_NUMBER: _ClassVar[int]
    RAW_STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    END_TURN_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    content: _containers.RepeatedCompositeFieldContainer[_content_pb2.AssistantContent]
    api: str
    provider: str
    model: str
    usage: Usage
    stop_reason: StopReason
    error_message: str
    timestamp: int
    response_id: str
    response_model: str
    provider_thinking_level: str
    thinking_level: ModelThinkingLevel
    diagnostics: _containers.RepeatedCompositeFieldContainer[Diagnostic]
    deferred: DeferredHandle
    raw_stop_reason: str
    end_turn: bool
    duration_ms: int
    extra_json: str
    def __init__(self, content: _Optional[_Iterable[_Union[_content_pb2.AssistantContent, _Mapping]]] = ..., api: _Optional[str] = ..., provider: _Optional[str] = ..., model: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., stop_reason: _Optional[_Union[StopReason, str]] = ..., error_message: _Optional[str] = ..., timestamp: _Optional[int] = ..., response_id: _Optional[str] = ..., response_model: _Optional[str] = ..., provider_thinking_level: _Optional[str] = ..., thinking_level: _Optional[_Union[ModelThinkingLevel, str]] = ..., diagnostics: _Optional[_Iterable[_Union[Diagnostic, _Mapping]]] = ..., deferred: _Optional[_Union[DeferredHandle, _Mapping]] = ..., raw_stop_reason: _Optional[str] = ..., end_turn: _Optional[bool] = ..., duration_ms: _Optional[int] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ToolResultMessage(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "content", "details_json", "is_error", "timestamp", "usage", "nested_calls", "duration_ms", "extra_json")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    NESTED_CALLS_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    content: _containers.RepeatedCompositeFieldContainer[_content_pb2.ToolResultContent]
    details_json: str
    is_error: bool
    timestamp: int
    usage: Usage
    nested_calls: NestedToolCalls
    duration_ms: int
    extra_json: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., content: _Optional[_Iterable[_Union[_content_pb2.ToolResultContent, _Mapping]]] = ..., details_json: _Optional[str] = ..., is_error: _Optional[bool] = ..., timestamp: _Optional[int] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., nested_calls: _Optional[_Union[NestedToolCalls, _Mapping]] = ..., duration_ms: _Optional[int] = ..., extra_json: _Optional[str] = ...) -> None: ...

class CustomMessage(_message.Message):
    __slots__ = ("role", "fields_json")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    FIELDS_JSON_FIELD_NUMBER: _ClassVar[int]
    role: str
    fields_json: str
    def __init__(self, role: _Optional[str] = ..., fields_json: _Optional[str] = ...) -> None: ...

class AgentMessage(_message.Message):
    __slots__ = ("user", "assistant", "tool_result", "custom", "system")
    USER_FIELD_NUMBER: _ClassVar[int]
    ASSISTANT_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_FIELD_NUMBER: _ClassVar[int]
    user: UserMessage
    assistant: AssistantMessage
    tool_result: ToolResultMessage
    custom: CustomMessage
    system: SystemMessage
    def __init__(self, user: _Optional[_Union[UserMessage, _Mapping]] = ..., assistant: _Optional[_Union[AssistantMessage, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResultMessage, _Mapping]] = ..., custom: _Optional[_Union[CustomMessage, _Mapping]] = ..., system: _Optional[_Union[SystemMessage, _Mapping]] = ...) -> None: ...

class SystemMessage(_message.Message):
    __slots__ = ("content", "string_content", "sections", "tools_added", "tools_removed", "timestamp", "extra_json")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    STRING_CONTENT_FIELD_NUMBER: _ClassVar[int]
    SECTIONS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_ADDED_FIELD_NUMBER: _ClassVar[int]
    TOOLS_REMOVED_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    content: _containers.RepeatedCompositeFieldContainer[_content_pb2.TextContent]
    string_content: bool
    sections: _containers.RepeatedCompositeFieldContainer[SystemSection]
    tools_added: _containers.RepeatedCompositeFieldContainer[_tool_pb2.Tool]
    tools_removed: _containers.RepeatedCompositeFieldContainer[_tool_pb2.ToolReference]
    timestamp: int
    extra_json: str
    def __init__(self, content: _Optional[_Iterable[_Union[_content_pb2.TextContent, _Mapping]]] = ..., string_content: _Optional[bool] = ..., sections: _Optional[_Iterable[_Union[SystemSection, _Mapping]]] = ..., tools_added: _Optional[_Iterable[_Union[_tool_pb2.Tool, _Mapping]]] = ..., tools_removed: _Optional[_Iterable[_Union[_tool_pb2.ToolReference, _Mapping]]] = ..., timestamp: _Optional[int] = ..., extra_json: _Optional[str] = ...) -> None: ...

class SystemSection(_message.Message):
    __slots__ = ("name", "text")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    name: str
    text: str
    def __init__(self, name: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class Diagnostic(_message.Message):
    __slots__ = ("type", "timestamp", "error", "details_json", "extra_json")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    type: str
    timestamp: int
    error: DiagnosticError
    details_json: str
    extra_json: str
    def __init__(self, type: _Optional[str] = ..., timestamp: _Optional[int] = ..., error: _Optional[_Union[DiagnosticError, _Mapping]] = ..., details_json: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class DiagnosticError(_message.Message):
    __slots__ = ("name", "message", "stack", "code_text", "code_number", "extra_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STACK_FIELD_NUMBER: _ClassVar[int]
    CODE_TEXT_FIELD_NUMBER: _ClassVar[int]
    CODE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    message: str
    stack: str
    code_text: str
    code_number: float
    extra_json: str
    def __init__(self, name: _Optional[str] = ..., message: _Optional[str] = ..., stack: _Optional[str] = ..., code_text: _Optional[str] = ..., code_number: _Optional[float] = ..., extra_json: _Optional[str] = ...) -> None: ...

class DeferredHandle(_message.Message):
    __slots__ = ("provider", "model_id", "api", "id", "expires_at", "poll_after_ms", "data_json", "extra_json")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    API_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    POLL_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    provider: str
    model_id: str
    api: str
    id: str
    expires_at: int
    poll_after_ms: int
    data_json: str
    extra_json: str
    def __init__(self, provider: _Optional[str] = ..., model_id: _Optional[str] = ..., api: _Optional[str] = ..., id: _Optional[str] = ..., expires_at: _Optional[int] = ..., poll_after_ms: _Optional[int] = ..., data_json: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class NestedToolCalls(_message.Message):
    __slots__ = ("calls", "complete", "extra_json")
    CALLS_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    calls: _containers.RepeatedCompositeFieldContainer[NestedToolCall]
    complete: bool
    extra_json: str
    def __init__(self, calls: _Optional[_Iterable[_Union[NestedToolCall, _Mapping]]] = ..., complete: _Optional[bool] = ..., extra_json: _Optional[str] = ...) -> None: ...

class NestedToolCall(_message.Message):
    __slots__ = ("id", "name", "arguments_json", "arguments_bytes", "status", "duration_ms", "error", "extra_json")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_BYTES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    arguments_json: str
    arguments_bytes: int
    status: NestedCallStatus
    duration_ms: int
    error: str
    extra_json: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments_json: _Optional[str] = ..., arguments_bytes: _Optional[int] = ..., status: _Optional[_Union[NestedCallStatus, str]] = ..., duration_ms: _Optional[int] = ..., error: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...
