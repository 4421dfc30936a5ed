from ....buf.validate import validate_pb2 as _validate_pb2
from . import context_pb2 as _context_pb2
from . import tool_pb2 as _tool_pb2
from . import event_pb2 as _event_pb2
from . import json_pb2 as _json_pb2
from . import model_pb2 as _model_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Transport(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRANSPORT_UNSPECIFIED: _ClassVar[Transport]
    TRANSPORT_SSE: _ClassVar[Transport]
    TRANSPORT_WEBSOCKET: _ClassVar[Transport]
    TRANSPORT_WEBSOCKET_CACHED: _ClassVar[Transport]
    TRANSPORT_AUTO: _ClassVar[Transport]

class DeferredWindow(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DEFERRED_WINDOW_UNSPECIFIED: _ClassVar[DeferredWindow]
    DEFERRED_WINDOW_15M: _ClassVar[DeferredWindow]
    DEFERRED_WINDOW_1H: _ClassVar[DeferredWindow]
    DEFERRED_WINDOW_24H: _ClassVar[DeferredWindow]

class ThinkingLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    THINKING_LEVEL_UNSPECIFIED: _ClassVar[ThinkingLevel]
    THINKING_LEVEL_MINIMAL: _ClassVar[ThinkingLevel]
    THINKING_LEVEL_LOW: _ClassVar[ThinkingLevel]
    THINKING_LEVEL_MEDIUM: _ClassVar[ThinkingLevel]
    THINKING_LEVEL_HIGH: _ClassVar[ThinkingLevel]
    THINKING_LEVEL_XHIGH: _ClassVar[ThinkingLevel]
    THINKING_LEVEL_MAX: _ClassVar[ThinkingLevel]

class ToolChoiceMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_CHOICE_MODE_UNSPECIFIED: _ClassVar[ToolChoiceMode]
    TOOL_CHOICE_MODE_AUTO: _ClassVar[ToolChoiceMode]
    TOOL_CHOICE_MODE_NONE: _ClassVar[ToolChoiceMode]
    TOOL_CHOICE_MODE_REQUIRED: _ClassVar[ToolChoiceMode]
    TOOL_CHOICE_MODE_TOOL: _ClassVar[ToolChoiceMode]

class CacheRetention(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CACHE_RETENTION_UNSPECIFIED: _ClassVar[CacheRetention]
    CACHE_RETENTION_NONE: _ClassVar[CacheRetention]
    CACHE_RETENTION_SHORT: _ClassVar[CacheRetention]
    CACHE_RETENTION_LONG: _ClassVar[CacheRetention]
TRANSPORT_UNSPECIFIED: Transport
TRANSPORT_SSE: Transport
TRANSPORT_WEBSOCKET: Transport
TRANSPORT_WEBSOCKET_CACHED: Transport
TRANSPORT_AUTO: Transport
DEFERRED_WINDOW_UNSPECIFIED: DeferredWindow
DEFERRED_WINDOW_15M: DeferredWindow
DEFERRED_WINDOW_1H: DeferredWindow
DEFERRED_WINDOW_24H: DeferredWindow
THINKING_LEVEL_UNSPECIFIED: ThinkingLevel
THINKING_LEVEL_MINIMAL: ThinkingLevel
THINKING_LEVEL_LOW: ThinkingLevel
THINKING_LEVEL_MEDIUM: ThinkingLevel
THINKING_LEVEL_HIGH: ThinkingLevel
THINKING_LEVEL_XHIGH: ThinkingLevel
THINKING_LEVEL_MAX: ThinkingLevel
TOOL_CHOICE_MODE_UNSPECIFIED: ToolChoiceMode
TOOL_CHOICE_MODE_AUTO: ToolChoiceMode
TOOL_CHOICE_MODE_NONE: ToolChoiceMode
TOOL_CHOICE_MODE_REQUIRED: ToolChoiceMode
TOOL_CHOICE_MODE_TOOL: ToolChoiceMode
CACHE_RETENTION_UNSPECIFIED: CacheRetention
CACHE_RETENTION_NONE: CacheRetention
CACHE_RETENTION_SHORT: CacheRetention
CACHE_RETENTION_LONG: CacheRetention

class GenerationOptions(_message.Message):
    __slots__ = ("temperature", "max_tokens", "reasoning", "thinking_budgets", "tool_choice", "cache_retention", "session_id", "max_retry_delay_ms", "metadata_json", "headers", "provider_options_json", "sampling_params_json", "timeout_ms", "max_retries", "transport", "disable_continuation", "deferred")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    THINKING_BUDGETS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    CACHE_RETENTION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRY_DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    METADATA_JSON_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    SAMPLING_PARAMS_JSON_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_FIELD_NUMBER: _ClassVar[int]
    DISABLE_CONTINUATION_FIELD_NUMBER: _ClassVar[int]
    DEFERRED_FIELD_NUMBER: _ClassVar[int]
    temperature: float
    max_tokens: int
    reasoning: ThinkingLevel
    thinking_budgets: ThinkingBudgets
    tool_choice: ToolChoice
    cache_retention: CacheRetention
    session_id: str
    max_retry_delay_ms: int
    metadata_json: str
    headers: _containers.ScalarMap[str, str]
    provider_options_json: str
    sampling_params_json: str
    timeout_ms: int
    max_retries: int
    transport: Transport
    disable_continuation: bool
    deferred: DeferredOptions
    def __init__(self, temperature: _Optional[float] = ..., max_tokens: _Optional[int] = ..., reasoning: _Optional[_Union[ThinkingLevel, str]] = ..., thinking_budgets: _Optional[_Union[ThinkingBudgets, _Mapping]] = ..., tool_choice: _Optional[_Union[ToolChoice, _Mapping]] = ..., cache_retention: _Optional[_Union[CacheRetention, str]] = ..., session_id: _Optional[str] = ..., max_retry_delay_ms: _Optional[int] = ..., metadata_json: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., provider_options_json: _Optional[str] = ..., sampling_params_json: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., max_retries: _Optional[int] = ..., transport: _Optional[_Union[Transport, str]] = ..., disable_continuation: _Optional[bool] = ..., deferred: _Optional[_Union[DeferredOptions, _Mapping]] = ...) -> None: ...

class DeferredOptions(_message.Message):
    __slots__ = ("window",)
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    window: DeferredWindow
    def __init__(self, window: _Optional[_Union[DeferredWindow, str]] = ...) -> None: ...

class ThinkingBudgets(_message.Message):
    __slots__ = ("minimal", "low", "medium", "high")
    MINIMAL_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    MEDIUM_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    minimal: int
    low: int
    medium: int
    high: int
    def __init__(self, minimal: _Optional[int] = ..., low: _Optional[int] = ..., medium: _Optional[int] = ..., high: _Optional[int] = ...) -> None: ...

class ToolChoice(_message.Message):
    __slots__ = ("mode", "tool")
    MODE_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    mode: ToolChoiceMode
    tool: str
    def __init__(self, mode: _Optional[_Union[ToolChoiceMode, str]] = ..., tool: _Optional[str] = ...) -> None: ...

class StreamRequest(_message.Message):
    __slots__ = ("model", "context", "options", "coalesce_deltas", "provider", "background", "fallback_models", "resumable")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    COALESCE_DELTAS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_MODELS_FIELD_NUMBER: _ClassVar[int]
    RESUMABLE_FIELD_NUMBER: _ClassVar[int]
    model: str
    context: _context_pb2.AgentContext
    options: GenerationOptions
    coalesce_deltas: bool
    provider: str
    background: bool
    fallback_models: _containers.RepeatedScalarFieldContainer[str]
    resumable: bool
    def __init__(self, model: _Optional[str] = ..., context: _Optional[_Union[_context_pb2.AgentContext, _Mapping]] = ..., options: _Optional[_Union[GenerationOptions, _Mapping]] = ..., coalesce_deltas: _Optional[bool] = ..., provider: _Optional[str] = ..., background: _Optional[bool] = ..., fallback_models: _Optional[_Iterable[str]] = ..., resumable: _Optional[bool] = ...) -> None: ...

class ResumeRequest(_message.Message):
    __slots__ = ("stream_id", "after_seq", "coalesce_deltas")
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    COALESCE_DELTAS_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    after_seq: int
    coalesce_deltas: bool
    def __init__(self, stream_id: _Optional[str] = ..., after_seq: _Optional[int] = ..., coalesce_deltas: _Optional[bool] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("stream_id",)
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    def __init__(self, stream_id: _Optional[str] = ...) -> None: ...

class CancelResponse(_message.Message):
    __slots__ = ("cancelled",)
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    cancelled: bool
    def __init__(self, cancelled: _Optional[bool] = ...) -> None: ...

class ListModelsRequest(_message.Message):
    __slots__ = ("provider",)
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    provider: str
    def __init__(self, provider: _Optional[str] = ...) -> None: ...

class ListModelsResponse(_message.Message):
    __slots__ = ("models",)
    MODELS_FIELD_NUMBER: _ClassVar[int]
    models: _containers.RepeatedCompositeFieldContainer[_model_pb2.Model]
    def __init__(self, models: _Optional[_Iterable[_Union[_model_pb2.Model, _Mapping]]] = ...) -> None: ...

class GetModelRequest(_message.Message):
    __slots__ = ("provider", "id")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    provider: str
    id: str
    def __init__(self, provider: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class GetModelResponse(_message.Message):
    __slots__ = ("model",)
    MODEL_FIELD_NUMBER: _ClassVar[int]
    model: _model_pb2.Model
    def __init__(self, model: _Optional[_Union[_model_pb2.Model, _Mapping]] = ...) -> None: ...

class StreamBatchedResponse(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_event_pb2.ModelEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[_event_pb2.ModelEvent, _Mapping]]] = ...) -> None: ...

class StreamBatchedView(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, events: _Optional[_Iterable[bytes]] = ...) -> None: ...
