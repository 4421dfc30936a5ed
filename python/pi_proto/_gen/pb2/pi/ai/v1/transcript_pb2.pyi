from ....buf.validate import validate_pb2 as _validate_pb2
from . import json_pb2 as _json_pb2
from . import message_pb2 as _message_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TranscriptEntry(_message.Message):
    __slots__ = ("message", "session_entry", "session_json")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ENTRY_FIELD_NUMBER: _ClassVar[int]
    SESSION_JSON_FIELD_NUMBER: _ClassVar[int]
    message: _message_pb2.AgentMessage
    session_entry: SessionEntry
    session_json: str
    def __init__(self, message: _Optional[_Union[_message_pb2.AgentMessage, _Mapping]] = ..., session_entry: _Optional[_Union[SessionEntry, _Mapping]] = ..., session_json: _Optional[str] = ...) -> None: ...

class SessionEntry(_message.Message):
    __slots__ = ("type", "fields_json")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FIELDS_JSON_FIELD_NUMBER: _ClassVar[int]
    type: str
    fields_json: str
    def __init__(self, type: _Optional[str] = ..., fields_json: _Optional[str] = ...) -> None: ...
