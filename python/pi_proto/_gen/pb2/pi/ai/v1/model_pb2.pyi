from ....buf.validate import validate_pb2 as _validate_pb2
from . import json_pb2 as _json_pb2
from . import message_pb2 as _message_pb2
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
    __slots__ = ("id", "name", "api", "provider", "base_url", "reasoning", "input", "cost", "context_window", "max_tokens", "thinking_level_map", "prompt_cache", "input_limits", "sampling_params_json")
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
    THINKING_LEVEL_MAP_FIELD_NUMBER: _ClassVar[int]
    PROMPT_CACHE_FIELD_NUMBER: _ClassVar[int]
    INPUT_LIMITS_FIELD_NUMBER: _ClassVar[int]
    SAMPLING_PARAMS_JSON_FIELD_NUMBER: _ClassVar[int]
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
    thinking_level_map: _containers.RepeatedCompositeFieldContainer[ThinkingLevelMapping]
    prompt_cache: ModelPromptCache
    input_limits: ModelInputLimits
    sampling_params_json: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., api: _Optional[str] = ..., provider: _Optional[str] = ..., base_url: _Optional[str] = ..., reasoning: _Optional[bool] = ..., input: _Optional[_Iterable[_Union[InputKind, str]]] = ..., cost: _Optional[_Union[ModelCost, _Mapping]] = ..., context_window: _Optional[int] = ..., max_tokens: _Optional[int] = ..., thinking_level_map: _Optional[_Iterable[_Union[ThinkingLevelMapping, _Mapping]]] = ..., prompt_cache: _Optional[_Union[ModelPromptCache, _Mapping]] = ..., input_limits: _Optional[_Union[ModelInputLimits, _Mapping]] = ..., sampling_params_json: _Optional[str] = ...) -> None: ...

class ThinkingLevelMapping(_message.Message):
    __slots__ = ("level", "value")
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    level: _message_pb2.ModelThinkingLevel
    value: str
    def __init__(self, level: _Optional[_Union[_message_pb2.ModelThinkingLevel, str]] = ..., value: _Optional[str] = ...) -> None: ...

class ModelPromptCache(_message.Message):
    __slots__ = ("short", "long")
    SHORT_FIELD_NUMBER: _ClassVar[int]
    LONG_FIELD_NUMBER: _ClassVar[int]
    short: float
    long: float
    def __init__(self, short: _Optional[float] = ..., long: _Optional[float] = ...) -> None: ...

class ModelInputLimits(_message.Message):
    __slots__ = ("max_request_bytes", "images")
    MAX_REQUEST_BYTES_FIELD_NUMBER: _ClassVar[int]
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    max_request_bytes: int
    images: ModelImageInputLimits
    def __init__(self, max_request_bytes: _Optional[int] = ..., images: _Optional[_Union[ModelImageInputLimits, _Mapping]] = ...) -> None: ...

class ModelImageInputLimits(_message.Message):
    __slots__ = ("resize", "max_per_message", "max_per_request")
    RESIZE_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_REQUEST_FIELD_NUMBER: _ClassVar[int]
    resize: ModelImageResize
    max_per_message: int
    max_per_request: int
    def __init__(self, resize: _Optional[_Union[ModelImageResize, _Mapping]] = ..., max_per_message: _Optional[int] = ..., max_per_request: _Optional[int] = ...) -> None: ...

class ModelImageResize(_message.Message):
    __slots__ = ("max_width", "max_height", "max_bytes", "jpeg_quality")
    MAX_WIDTH_FIELD_NUMBER: _ClassVar[int]
    MAX_HEIGHT_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    JPEG_QUALITY_FIELD_NUMBER: _ClassVar[int]
    max_width: int
    max_height: int
    max_bytes: int
    jpeg_quality: int
    def __init__(self, max_width: _Optional[int] = ..., max_height: _Optional[int] = ..., max_bytes: _Optional[int] = ..., jpeg_quality: _Optional[int] = ...) -> None: ...

class ModelCost(_message.Message):
    __slots__ = ("input", "output", "cache_read", "cache_write", "tiers")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_FIELD_NUMBER: _ClassVar[int]
    TIERS_FIELD_NUMBER: _ClassVar[int]
    input: float
    output: float
    cache_read: float
    cache_write: float
    tiers: _containers.RepeatedCompositeFieldContainer[ModelCostTier]
    def __init__(self, input: _Optional[float] = ..., output: _Optional[float] = ..., cache_read: _Optional[float] = ..., cache_write: _Optional[float] = ..., tiers: _Optional[_Iterable[_Union[ModelCostTier, _Mapping]]] = ...) -> None: ...

class ModelCostTier(_message.Message):
    __slots__ = ("input", "output", "cache_read", "cache_write", "input_tokens_above")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_ABOVE_FIELD_NUMBER: _ClassVar[int]
    input: float
    output: float
    cache_read: float
    cache_write: float
    input_tokens_above: int
    def __init__(self, input: _Optional[float] = ..., output: _Optional[float] = ..., cache_read: _Optional[float] = ..., cache_write: _Optional[float] = ..., input_tokens_above: _Optional[int] = ...) -> None: ...
