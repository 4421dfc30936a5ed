from ....buf.validate import validate_pb2 as _validate_pb2
from . import json_pb2 as _json_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Strictness(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STRICTNESS_UNSPECIFIED: _ClassVar[Strictness]
    STRICTNESS_PREFER: _ClassVar[Strictness]
    STRICTNESS_REQUIRE: _ClassVar[Strictness]
STRICTNESS_UNSPECIFIED: Strictness
STRICTNESS_PREFER: Strictness
STRICTNESS_REQUIRE: Strictness

class Tool(_message.Message):
    __slots__ = ("name", "description", "parameters_json", "constrained_sampling", "extra_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    CONSTRAINED_SAMPLING_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    parameters_json: str
    constrained_sampling: ConstrainedSampling
    extra_json: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters_json: _Optional[str] = ..., constrained_sampling: _Optional[_Union[ConstrainedSampling, _Mapping]] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ConstrainedSampling(_message.Message):
    __slots__ = ("off", "json_schema", "grammar")
    OFF_FIELD_NUMBER: _ClassVar[int]
    JSON_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    GRAMMAR_FIELD_NUMBER: _ClassVar[int]
    off: bool
    json_schema: JsonSchemaSampling
    grammar: GrammarSampling
    def __init__(self, off: _Optional[bool] = ..., json_schema: _Optional[_Union[JsonSchemaSampling, _Mapping]] = ..., grammar: _Optional[_Union[GrammarSampling, _Mapping]] = ...) -> None: ...

class JsonSchemaSampling(_message.Message):
    __slots__ = ("strict", "extra_json")
    STRICT_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    strict: Strictness
    extra_json: str
    def __init__(self, strict: _Optional[_Union[Strictness, str]] = ..., extra_json: _Optional[str] = ...) -> None: ...

class GrammarSampling(_message.Message):
    __slots__ = ("openai_lark", "openai_regex", "extra_json", "variants_extra_json")
    OPENAI_LARK_FIELD_NUMBER: _ClassVar[int]
    OPENAI_REGEX_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    openai_lark: str
    openai_regex: str
    extra_json: str
    variants_extra_json: str
    def __init__(self, openai_lark: _Optional[str] = ..., openai_regex: _Optional[str] = ..., extra_json: _Optional[str] = ..., variants_extra_json: _Optional[str] = ...) -> None: ...

class ToolReference(_message.Message):
    __slots__ = ("name", "extra_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    extra_json: str
    def __init__(self, name: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...
