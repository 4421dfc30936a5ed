from ....buf.validate import validate_pb2 as _validate_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InputKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INPUT_KIND_UNSPECIFIED: _ClassVar[InputKind]
    INPUT_KIND_TEXT: _ClassVar[InputKind]
    INPUT_KIND_IMAGE: _ClassVar[InputKind]
INPUT_KIND_UNSPECIFIED: InputKind
INPUT_KIND_TEXT: InputKind
INPUT_KIND_IMAGE: InputKind

class Model(_message.Message):
    __slots__ = ("id", "name", "api", "provider", "base_url", "reasoning", "input", "cost", "context_window", "max_tokens")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    API_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_WINDOW_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    api: str
    provider: str
    base_url: str
    reasoning: bool
    input: _containers.RepeatedScalarFieldContainer[InputKind]
    cost: ModelCost
    context_window: int
    max_tokens: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., api: _Optional[str] = ..., provider: _Optional[str] = ..., base_url: _Optional[str] = ..., reasoning: _Optional[bool] = ..., input: _Optional[_Iterable[_Union[InputKind, str]]] = ..., cost: _Optional[_Union[ModelCost, _Mapping]] = ..., context_window: _Optional[int] = ..., max_tokens: _Optional[int] = ...) -> None: ...

class ModelCost(_message.Message):
    __slots__ = ("input", "output", "cache_read", "cache_write")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_FIELD_NUMBER: _ClassVar[int]
    input: float
    output: float
    cache_read: float
    cache_write: float
    def __init__(self, input: _Optional[float] = ..., output: _Optional[float] = ..., cache_read: _Optional[float] = ..., cache_write: _Optional[float] = ...) -> None: ...
