from ....buf.validate import validate_pb2 as _validate_pb2
from . import context_pb2 as _context_pb2
from . import event_pb2 as _event_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GenerationOptions(_message.Message):
    __slots__ = ("temperature", "max_tokens")
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    temperature: float
    max_tokens: int
    def __init__(self, temperature: _Optional[float] = ..., max_tokens: _Optional[int] = ...) -> None: ...

class StreamRequest(_message.Message):
    __slots__ = ("model", "context", "options", "coalesce_deltas")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    COALESCE_DELTAS_FIELD_NUMBER: _ClassVar[int]
    model: str
    context: _context_pb2.AgentContext
    options: GenerationOptions
    coalesce_deltas: bool
    def __init__(self, model: _Optional[str] = ..., context: _Optional[_Union[_context_pb2.AgentContext, _Mapping]] = ..., options: _Optional[_Union[GenerationOptions, _Mapping]] = ..., coalesce_deltas: _Optional[bool] = ...) -> None: ...
