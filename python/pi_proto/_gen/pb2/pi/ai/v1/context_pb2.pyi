from ....buf.validate import validate_pb2 as _validate_pb2
from . import json_pb2 as _json_pb2
from . import message_pb2 as _message_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Tool(_message.Message):
    __slots__ = ("name", "description", "parameters_json", "extra_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    parameters_json: str
    extra_json: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters_json: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class AgentContext(_message.Message):
    __slots__ = ("system_prompt", "messages", "tools", "extra_json")
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    system_prompt: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.AgentMessage]
    tools: _containers.RepeatedCompositeFieldContainer[Tool]
    extra_json: str
    def __init__(self, system_prompt: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.AgentMessage, _Mapping]]] = ..., tools: _Optional[_Iterable[_Union[Tool, _Mapping]]] = ..., extra_json: _Optional[str] = ...) -> None: ...
