from ....buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from . import content_pb2 as _content_pb2
from . import json_pb2 as _json_pb2
from . import message_pb2 as _message_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TranscriptEntry(_message.Message):
    __slots__ = ("message", "session_entry", "unparsed_line", "session_json", "id", "parent_id", "root", "timestamp")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ENTRY_FIELD_NUMBER: _ClassVar[int]
    UNPARSED_LINE_FIELD_NUMBER: _ClassVar[int]
    SESSION_JSON_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    ROOT_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    message: _message_pb2.AgentMessage
    session_entry: SessionEntry
    unparsed_line: str
    session_json: str
    id: str
    parent_id: str
    root: _struct_pb2.NullValue
    timestamp: str
    def __init__(self, message: _Optional[_Union[_message_pb2.AgentMessage, _Mapping]] = ..., session_entry: _Optional[_Union[SessionEntry, _Mapping]] = ..., unparsed_line: _Optional[str] = ..., session_json: _Optional[str] = ..., id: _Optional[str] = ..., parent_id: _Optional[str] = ..., root: _Optional[_Union[_struct_pb2.NullValue, str]] = ..., timestamp: _Optional[str] = ...) -> None: ...

class SessionEntry(_message.Message):
    __slots__ = ("type", "fields_json", "header", "thinking_level_change", "model_change", "usage", "compaction", "branch_summary", "custom", "custom_message", "label", "session_info", "context_edit")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FIELDS_JSON_FIELD_NUMBER: _ClassVar[int]
    HEADER_FIELD_NUMBER: _ClassVar[int]
    THINKING_LEVEL_CHANGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_CHANGE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    BRANCH_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SESSION_INFO_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_EDIT_FIELD_NUMBER: _ClassVar[int]
    type: str
    fields_json: str
    header: SessionHeader
    thinking_level_change: ThinkingLevelChange
    model_change: ModelChange
    usage: UsageRecord
    compaction: Compaction
    branch_summary: BranchSummary
    custom: CustomEntry
    custom_message: CustomMessageEntry
    label: Label
    session_info: SessionInfo
    context_edit: ContextEdit
    def __init__(self, type: _Optional[str] = ..., fields_json: _Optional[str] = ..., header: _Optional[_Union[SessionHeader, _Mapping]] = ..., thinking_level_change: _Optional[_Union[ThinkingLevelChange, _Mapping]] = ..., model_change: _Optional[_Union[ModelChange, _Mapping]] = ..., usage: _Optional[_Union[UsageRecord, _Mapping]] = ..., compaction: _Optional[_Union[Compaction, _Mapping]] = ..., branch_summary: _Optional[_Union[BranchSummary, _Mapping]] = ..., custom: _Optional[_Union[CustomEntry, _Mapping]] = ..., custom_message: _Optional[_Union[CustomMessageEntry, _Mapping]] = ..., label: _Optional[_Union[Label, _Mapping]] = ..., session_info: _Optional[_Union[SessionInfo, _Mapping]] = ..., context_edit: _Optional[_Union[ContextEdit, _Mapping]] = ...) -> None: ...

class SessionHeader(_message.Message):
    __slots__ = ("version", "cwd", "parent_session", "extra_json")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    version: int
    cwd: str
    parent_session: str
    extra_json: str
    def __init__(self, version: _Optional[int] = ..., cwd: _Optional[str] = ..., parent_session: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ThinkingLevelChange(_message.Message):
    __slots__ = ("thinking_level", "extra_json")
    THINKING_LEVEL_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    thinking_level: str
    extra_json: str
    def __init__(self, thinking_level: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ModelChange(_message.Message):
    __slots__ = ("provider", "model_id", "extra_json")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    provider: str
    model_id: str
    extra_json: str
    def __init__(self, provider: _Optional[str] = ..., model_id: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class UsageRecord(_message.Message):
    __slots__ = ("kind", "provider", "model", "usage", "note", "extra_json")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    kind: str
    provider: str
    model: str
    usage: _message_pb2.Usage
    note: str
    extra_json: str
    def __init__(self, kind: _Optional[str] = ..., provider: _Optional[str] = ..., model: _Optional[str] = ..., usage: _Optional[_Union[_message_pb2.Usage, _Mapping]] = ..., note: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class Compaction(_message.Message):
    __slots__ = ("summary", "first_kept_entry_id", "tokens_before", "details_json", "usage", "from_hook", "system_message", "extra_json")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    FIRST_KEPT_ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    TOKENS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    FROM_HOOK_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details_json: str
    usage: _message_pb2.Usage
    from_hook: bool
    system_message: _message_pb2.SystemMessage
    extra_json: str
    def __init__(self, summary: _Optional[str] = ..., first_kept_entry_id: _Optional[str] = ..., tokens_before: _Optional[int] = ..., details_json: _Optional[str] = ..., usage: _Optional[_Union[_message_pb2.Usage, _Mapping]] = ..., from_hook: _Optional[bool] = ..., system_message: _Optional[_Union[_message_pb2.SystemMessage, _Mapping]] = ..., extra_json: _Optional[str] = ...) -> None: ...

class BranchSummary(_message.Message):
    __slots__ = ("from_id", "summary", "details_json", "usage", "from_hook", "extra_json")
    FROM_ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    FROM_HOOK_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    from_id: str
    summary: str
    details_json: str
    usage: _message_pb2.Usage
    from_hook: bool
    extra_json: str
    def __init__(self, from_id: _Optional[str] = ..., summary: _Optional[str] = ..., details_json: _Optional[str] = ..., usage: _Optional[_Union[_message_pb2.Usage, _Mapping]] = ..., from_hook: _Optional[bool] = ..., extra_json: _Optional[str] = ...) -> None: ...

class CustomEntry(_message.Message):
    __slots__ = ("custom_type", "data_json", "extra_json")
    CUSTOM_TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    custom_type: str
    data_json: str
    extra_json: str
    def __init__(self, custom_type: _Optional[str] = ..., data_json: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class CustomMessageEntry(_message.Message):
    __slots__ = ("custom_type", "content", "string_content", "display", "details_json", "extra_json")
    CUSTOM_TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    STRING_CONTENT_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_FIELD_NUMBER: _ClassVar[int]
    DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    custom_type: str
    content: _containers.RepeatedCompositeFieldContainer[_content_pb2.UserContent]
    string_content: bool
    display: bool
    details_json: str
    extra_json: str
    def __init__(self, custom_type: _Optional[str] = ..., content: _Optional[_Iterable[_Union[_content_pb2.UserContent, _Mapping]]] = ..., string_content: _Optional[bool] = ..., display: _Optional[bool] = ..., details_json: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class Label(_message.Message):
    __slots__ = ("target_id", "label", "extra_json")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    label: str
    extra_json: str
    def __init__(self, target_id: _Optional[str] = ..., label: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ("name", "extra_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    extra_json: str
    def __init__(self, name: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ContextEdit(_message.Message):
    __slots__ = ("target_id", "replacement", "extra_json")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    REPLACEMENT_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    replacement: ContextReplacement
    extra_json: str
    def __init__(self, target_id: _Optional[str] = ..., replacement: _Optional[_Union[ContextReplacement, _Mapping]] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ContextReplacement(_message.Message):
    __slots__ = ("content", "string_content", "extra_json")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    STRING_CONTENT_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    content: _containers.RepeatedCompositeFieldContainer[ContentBlock]
    string_content: bool
    extra_json: str
    def __init__(self, content: _Optional[_Iterable[_Union[ContentBlock, _Mapping]]] = ..., string_content: _Optional[bool] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ContentBlock(_message.Message):
    __slots__ = ("text", "image", "thinking", "tool_call")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    THINKING_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    text: _content_pb2.TextContent
    image: _content_pb2.ImageContent
    thinking: _content_pb2.ThinkingContent
    tool_call: _content_pb2.ToolCall
    def __init__(self, text: _Optional[_Union[_content_pb2.TextContent, _Mapping]] = ..., image: _Optional[_Union[_content_pb2.ImageContent, _Mapping]] = ..., thinking: _Optional[_Union[_content_pb2.ThinkingContent, _Mapping]] = ..., tool_call: _Optional[_Union[_content_pb2.ToolCall, _Mapping]] = ...) -> None: ...
