from ....buf.validate import validate_pb2 as _validate_pb2
from . import json_pb2 as _json_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TextContent(_message.Message):
    __slots__ = ("text", "text_signature", "extra_json")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TEXT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    text: str
    text_signature: str
    extra_json: str
    def __init__(self, text: _Optional[str] = ..., text_signature: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ThinkingContent(_message.Message):
    __slots__ = ("thinking", "thinking_signature", "redacted", "extra_json")
    THINKING_FIELD_NUMBER: _ClassVar[int]
    THINKING_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    REDACTED_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    thinking: str
    thinking_signature: str
    redacted: bool
    extra_json: str
    def __init__(self, thinking: _Optional[str] = ..., thinking_signature: _Optional[str] = ..., redacted: _Optional[bool] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ImageContent(_message.Message):
    __slots__ = ("data", "mime_type", "extra_json")
    DATA_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    mime_type: str
    extra_json: str
    def __init__(self, data: _Optional[bytes] = ..., mime_type: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ("id", "name", "arguments_json", "raw_arguments", "thought_signature", "extra_json", "namespace", "arguments_error")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    RAW_ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    THOUGHT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_ERROR_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    arguments_json: str
    raw_arguments: str
    thought_signature: str
    extra_json: str
    namespace: str
    arguments_error: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments_json: _Optional[str] = ..., raw_arguments: _Optional[str] = ..., thought_signature: _Optional[str] = ..., extra_json: _Optional[str] = ..., namespace: _Optional[str] = ..., arguments_error: _Optional[str] = ...) -> None: ...

class UserContent(_message.Message):
    __slots__ = ("text", "image")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    text: TextContent
    image: ImageContent
    def __init__(self, text: _Optional[_Union[TextContent, _Mapping]] = ..., image: _Optional[_Union[ImageContent, _Mapping]] = ...) -> None: ...

class AssistantContent(_message.Message):
    __slots__ = ("text", "thinking", "tool_call")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    THINKING_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    text: TextContent
    thinking: ThinkingContent
    tool_call: ToolCall
    def __init__(self, text: _Optional[_Union[TextContent, _Mapping]] = ..., thinking: _Optional[_Union[ThinkingContent, _Mapping]] = ..., tool_call: _Optional[_Union[ToolCall, _Mapping]] = ...) -> None: ...

class ToolResultContent(_message.Message):
    __slots__ = ("text", "image")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    text: TextContent
    image: ImageContent
    def __init__(self, text: _Optional[_Union[TextContent, _Mapping]] = ..., image: _Optional[_Union[ImageContent, _Mapping]] = ...) -> None: ...
