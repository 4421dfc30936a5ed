from ....buf.validate import validate_pb2 as _validate_pb2
from . import json_pb2 as _json_pb2
from . import message_pb2 as _message_pb2
from . import tool_pb2 as _tool_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union
from pi.ai.v1.tool_pb2 import Tool as Tool
from pi.ai.v1.tool_pb2 import ConstrainedSampling as ConstrainedSampling
from pi.ai.v1.tool_pb2 import JsonSchemaSampling as JsonSchemaSampling
from pi.ai.v1.tool_pb2 import GrammarSampling as GrammarSampling
from pi.ai.v1.tool_pb2 import ToolReference as ToolReference
from pi.ai.v1.tool_pb2 import Strictness as Strictness

DESCRIPTOR: _descriptor.FileDescriptor
STRICTNESS_UNSPECIFIED: _tool_pb2.Strictness
STRICTNESS_PREFER: _tool_pb2.Strictness
STRICTNESS_REQUIRE: _tool_pb2.Strictness

class AgentContext(_message.Message):
    __slots__ = ("system_prompt", "messages", "tools", "extra_json")
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    system_prompt: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.AgentMessage]
    tools: _containers.RepeatedCompositeFieldContainer[_tool_pb2.Tool]
    extra_json: str
    def __init__(self, system_prompt: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.AgentMessage, _Mapping]]] = ..., tools: _Optional[_Iterable[_Union[_tool_pb2.Tool, _Mapping]]] = ..., extra_json: _Optional[str] = ...) -> None: ...
