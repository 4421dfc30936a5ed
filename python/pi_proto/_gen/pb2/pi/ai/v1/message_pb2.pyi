from ....buf.validate import validate_pb2 as _validate_pb2
from . import content_pb2 as _content_pb2
from . import json_pb2 as _json_pb2
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
STOP_REASON_UNSPECIFIED: StopReason
STOP_REASON_STOP: StopReason
STOP_REASON_LENGTH: StopReason
STOP_REASON_TOOL_USE: StopReason
STOP_REASON_ERROR: StopReason
STOP_REASON_ABORTED: StopReason

class Cost(_message.Message):
    __slots__ = ("input", "output", "cache_read", "cache_write", "total", "extra_json")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    input: float
    output: float
    cache_read: float
    cache_write: float
    total: float
    extra_json: str
    def __init__(self, input: _Optional[float] = ..., output: _Optional[float] = ..., cache_read: _Optional[float] = ..., cache_write: _Optional[float] = ..., total: _Optional[float] = ..., extra_json: _Optional[str] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("input", "output", "cache_read", "cache_write", "total_tokens", "cost", "extra_json")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    input: int
    output: int
    cache_read: int
    cache_write: int
    total_tokens: int
    cost: Cost
    extra_json: str
    def __init__(self, input: _Optional[int] = ..., output: _Optional[int] = ..., cache_read: _Optional[int] = ..., cache_write: _Optional[int] = ..., total_tokens: _Optional[int] = ..., cost: _Optional[_Union[Cost, _Mapping]] = ..., extra_json: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("content", "api", "provider", "model", "usage", "stop_reason", "error_message", "timestamp", "extra_json")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    API_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    content: _containers.RepeatedCompositeFieldContainer[_content_pb2.AssistantContent]
    api: str
    provider: str
    model: str
    usage: Usage
    stop_reason: StopReason
    error_message: str
    timestamp: int
    extra_json: str
    def __init__(self, content: _Optional[_Iterable[_Union[_content_pb2.AssistantContent, _Mapping]]] = ..., api: _Optional[str] = ..., provider: _Optional[str] = ..., model: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., stop_reason: _Optional[_Union[StopReason, str]] = ..., error_message: _Optional[str] = ..., timestamp: _Optional[int] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ToolResultMessage(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "content", "details_json", "is_error", "timestamp", "extra_json")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    content: _containers.RepeatedCompositeFieldContainer[_content_pb2.ToolResultContent]
    details_json: str
    is_error: bool
    timestamp: int
    extra_json: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., content: _Optional[_Iterable[_Union[_content_pb2.ToolResultContent, _Mapping]]] = ..., details_json: _Optional[str] = ..., is_error: _Optional[bool] = ..., timestamp: _Optional[int] = ..., extra_json: _Optional[str] = ...) -> None: ...

class CustomMessage(_message.Message):
    __slots__ = ("role", "fields_json")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    FIELDS_JSON_FIELD_NUMBER: _ClassVar[int]
    role: str
    fields_json: str
    def __init__(self, role: _Optional[str] = ..., fields_json: _Optional[str] = ...) -> None: ...

class AgentMessage(_message.Message):
    __slots__ = ("user", "assistant", "tool_result", "custom")
    USER_FIELD_NUMBER: _ClassVar[int]
    ASSISTANT_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    user: UserMessage
    assistant: AssistantMessage
    tool_result: ToolResultMessage
    custom: CustomMessage
    def __init__(self, user: _Optional[_Union[UserMessage, _Mapping]] = ..., assistant: _Optional[_Union[AssistantMessage, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResultMessage, _Mapping]] = ..., custom: _Optional[_Union[CustomMessage, _Mapping]] = ...) -> None: ...
