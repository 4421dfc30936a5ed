from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JsonShape(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JSON_SHAPE_UNSPECIFIED: _ClassVar[JsonShape]
    JSON_SHAPE_VALUE: _ClassVar[JsonShape]
    JSON_SHAPE_OBJECT: _ClassVar[JsonShape]
JSON_SHAPE_UNSPECIFIED: JsonShape
JSON_SHAPE_VALUE: JsonShape
JSON_SHAPE_OBJECT: JsonShape
JSON_FIELD_NUMBER: _ClassVar[int]
json: _descriptor.FieldDescriptor

class JsonText(_message.Message):
    __slots__ = ("shape", "empty_allowed", "modelled_keys")
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    EMPTY_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    MODELLED_KEYS_FIELD_NUMBER: _ClassVar[int]
    shape: JsonShape
    empty_allowed: bool
    modelled_keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, shape: _Optional[_Union[JsonShape, str]] = ..., empty_allowed: _Optional[bool] = ..., modelled_keys: _Optional[_Iterable[str]] = ...) -> None: ...
