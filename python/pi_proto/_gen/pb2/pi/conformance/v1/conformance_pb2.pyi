from google.protobuf import struct_pb2 as _struct_pb2
from ...ai.v1 import context_pb2 as _context_pb2
from ...ai.v1 import tool_pb2 as _tool_pb2
from ...ai.v1 import event_pb2 as _event_pb2
from ...ai.v1 import message_pb2 as _message_pb2
from ...ai.v1 import model_pb2 as _model_pb2
from ...ai.v1 import service_pb2 as _service_pb2
from ...ai.v1 import transcript_pb2 as _transcript_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Suite(_message.Message):
    __slots__ = ("cases",)
    CASES_FIELD_NUMBER: _ClassVar[int]
    cases: _containers.RepeatedCompositeFieldContainer[Case]
    def __init__(self, cases: _Optional[_Iterable[_Union[Case, _Mapping]]] = ...) -> None: ...

class Case(_message.Message):
    __slots__ = ("name", "description", "wire", "validate", "stream", "client", "pi_json", "cost", "partial_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    WIRE_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    PI_JSON_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    wire: WireCase
    validate: ValidateCase
    stream: StreamCase
    client: ClientCase
    pi_json: PiJsonCase
    cost: CostCase
    partial_json: PartialJsonCase
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., wire: _Optional[_Union[WireCase, _Mapping]] = ..., validate: _Optional[_Union[ValidateCase, _Mapping]] = ..., stream: _Optional[_Union[StreamCase, _Mapping]] = ..., client: _Optional[_Union[ClientCase, _Mapping]] = ..., pi_json: _Optional[_Union[PiJsonCase, _Mapping]] = ..., cost: _Optional[_Union[CostCase, _Mapping]] = ..., partial_json: _Optional[_Union[PartialJsonCase, _Mapping]] = ...) -> None: ...

class WireCase(_message.Message):
    __slots__ = ("type", "binary", "json", "json_binary")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    BINARY_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    JSON_BINARY_FIELD_NUMBER: _ClassVar[int]
    type: str
    binary: bytes
    json: _struct_pb2.Value
    json_binary: bytes
    def __init__(self, type: _Optional[str] = ..., binary: _Optional[bytes] = ..., json: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., json_binary: _Optional[bytes] = ...) -> None: ...

class Violation(_message.Message):
    __slots__ = ("field_path", "rule_id")
    FIELD_PATH_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    field_path: str
    rule_id: str
    def __init__(self, field_path: _Optional[str] = ..., rule_id: _Optional[str] = ...) -> None: ...

class ValidateCase(_message.Message):
    __slots__ = ("request", "context", "message", "event", "entry", "model", "violations")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    request: _service_pb2.StreamRequest
    context: _context_pb2.AgentContext
    message: _message_pb2.AgentMessage
    event: _event_pb2.ModelEvent
    entry: _transcript_pb2.TranscriptEntry
    model: _model_pb2.Model
    violations: _containers.RepeatedCompositeFieldContainer[Violation]
    def __init__(self, request: _Optional[_Union[_service_pb2.StreamRequest, _Mapping]] = ..., context: _Optional[_Union[_context_pb2.AgentContext, _Mapping]] = ..., message: _Optional[_Union[_message_pb2.AgentMessage, _Mapping]] = ..., event: _Optional[_Union[_event_pb2.ModelEvent, _Mapping]] = ..., entry: _Optional[_Union[_transcript_pb2.TranscriptEntry, _Mapping]] = ..., model: _Optional[_Union[_model_pb2.Model, _Mapping]] = ..., violations: _Optional[_Iterable[_Union[Violation, _Mapping]]] = ...) -> None: ...

class StreamFailure(_message.Message):
    __slots__ = ("event_index", "rule_id", "violations")
    EVENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    event_index: int
    rule_id: str
    violations: _containers.RepeatedCompositeFieldContainer[Violation]
    def __init__(self, event_index: _Optional[int] = ..., rule_id: _Optional[str] = ..., violations: _Optional[_Iterable[_Union[Violation, _Mapping]]] = ...) -> None: ...

class StreamCase(_message.Message):
    __slots__ = ("events", "success", "failure", "max_message_bytes")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_event_pb2.ModelEvent]
    success: StreamSuccess
    failure: StreamFailure
    max_message_bytes: int
    def __init__(self, events: _Optional[_Iterable[_Union[_event_pb2.ModelEvent, _Mapping]]] = ..., success: _Optional[_Union[StreamSuccess, _Mapping]] = ..., failure: _Optional[_Union[StreamFailure, _Mapping]] = ..., max_message_bytes: _Optional[int] = ...) -> None: ...

class StreamSuccess(_message.Message):
    __slots__ = ("partials", "result")
    PARTIALS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    partials: _containers.RepeatedCompositeFieldContainer[_message_pb2.AssistantMessage]
    result: _message_pb2.AssistantMessage
    def __init__(self, partials: _Optional[_Iterable[_Union[_message_pb2.AssistantMessage, _Mapping]]] = ..., result: _Optional[_Union[_message_pb2.AssistantMessage, _Mapping]] = ...) -> None: ...

class ClientCase(_message.Message):
    __slots__ = ("request", "server", "client", "expect", "resumptions")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    EXPECT_FIELD_NUMBER: _ClassVar[int]
    RESUMPTIONS_FIELD_NUMBER: _ClassVar[int]
    request: _service_pb2.StreamRequest
    server: _containers.RepeatedCompositeFieldContainer[ServerAction]
    client: ClientSettings
    expect: ClientOutcome
    resumptions: _containers.RepeatedCompositeFieldContainer[Resumption]
    def __init__(self, request: _Optional[_Union[_service_pb2.StreamRequest, _Mapping]] = ..., server: _Optional[_Iterable[_Union[ServerAction, _Mapping]]] = ..., client: _Optional[_Union[ClientSettings, _Mapping]] = ..., expect: _Optional[_Union[ClientOutcome, _Mapping]] = ..., resumptions: _Optional[_Iterable[_Union[Resumption, _Mapping]]] = ...) -> None: ...

class Resumption(_message.Message):
    __slots__ = ("after_seq", "server")
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    server: _containers.RepeatedCompositeFieldContainer[ServerAction]
    def __init__(self, after_seq: _Optional[int] = ..., server: _Optional[_Iterable[_Union[ServerAction, _Mapping]]] = ...) -> None: ...

class ServerAction(_message.Message):
    __slots__ = ("event", "frame", "status", "sleep_ms", "headers", "batch")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SLEEP_MS_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.ModelEvent
    frame: bytes
    status: Status
    sleep_ms: int
    headers: Metadata
    batch: bytes
    def __init__(self, event: _Optional[_Union[_event_pb2.ModelEvent, _Mapping]] = ..., frame: _Optional[bytes] = ..., status: _Optional[_Union[Status, _Mapping]] = ..., sleep_ms: _Optional[int] = ..., headers: _Optional[_Union[Metadata, _Mapping]] = ..., batch: _Optional[bytes] = ...) -> None: ...

class Status(_message.Message):
    __slots__ = ("code", "message", "trailers")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TRAILERS_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    trailers: Metadata
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ..., trailers: _Optional[_Union[Metadata, _Mapping]] = ...) -> None: ...

class Metadata(_message.Message):
    __slots__ = ("entries",)
    class EntriesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.ScalarMap[str, str]
    def __init__(self, entries: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ClientSettings(_message.Message):
    __slots__ = ("deadline_ms", "cancel_after_events", "cancel_after_ms", "max_message_bytes", "close_after_events")
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    CANCEL_AFTER_EVENTS_FIELD_NUMBER: _ClassVar[int]
    CANCEL_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    CLOSE_AFTER_EVENTS_FIELD_NUMBER: _ClassVar[int]
    deadline_ms: int
    cancel_after_events: int
    cancel_after_ms: int
    max_message_bytes: int
    close_after_events: int
    def __init__(self, deadline_ms: _Optional[int] = ..., cancel_after_events: _Optional[int] = ..., cancel_after_ms: _Optional[int] = ..., max_message_bytes: _Optional[int] = ..., close_after_events: _Optional[int] = ...) -> None: ...

class ClientOutcome(_message.Message):
    __slots__ = ("reason", "events", "status_code", "rule", "result")
    REASON_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    reason: _message_pb2.StopReason
    events: int
    status_code: str
    rule: StreamFailure
    result: _message_pb2.AssistantMessage
    def __init__(self, reason: _Optional[_Union[_message_pb2.StopReason, str]] = ..., events: _Optional[int] = ..., status_code: _Optional[str] = ..., rule: _Optional[_Union[StreamFailure, _Mapping]] = ..., result: _Optional[_Union[_message_pb2.AssistantMessage, _Mapping]] = ...) -> None: ...

class PiJsonCase(_message.Message):
    __slots__ = ("text", "entry", "context", "error_path", "event", "session", "written", "edited", "edited_text")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    ERROR_PATH_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_FIELD_NUMBER: _ClassVar[int]
    EDITED_FIELD_NUMBER: _ClassVar[int]
    EDITED_TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    entry: _transcript_pb2.TranscriptEntry
    context: _context_pb2.AgentContext
    error_path: str
    event: _event_pb2.ModelEvent
    session: PiSession
    written: str
    edited: _transcript_pb2.TranscriptEntry
    edited_text: str
    def __init__(self, text: _Optional[str] = ..., entry: _Optional[_Union[_transcript_pb2.TranscriptEntry, _Mapping]] = ..., context: _Optional[_Union[_context_pb2.AgentContext, _Mapping]] = ..., error_path: _Optional[str] = ..., event: _Optional[_Union[_event_pb2.ModelEvent, _Mapping]] = ..., session: _Optional[_Union[PiSession, _Mapping]] = ..., written: _Optional[str] = ..., edited: _Optional[_Union[_transcript_pb2.TranscriptEntry, _Mapping]] = ..., edited_text: _Optional[str] = ...) -> None: ...

class PiSession(_message.Message):
    __slots__ = ("entries", "warned_lines")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    WARNED_LINES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_transcript_pb2.TranscriptEntry]
    warned_lines: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, entries: _Optional[_Iterable[_Union[_transcript_pb2.TranscriptEntry, _Mapping]]] = ..., warned_lines: _Optional[_Iterable[int]] = ...) -> None: ...

class CostCase(_message.Message):
    __slots__ = ("rates", "usage", "cost")
    RATES_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    rates: _model_pb2.ModelCost
    usage: _message_pb2.Usage
    cost: _message_pb2.Cost
    def __init__(self, rates: _Optional[_Union[_model_pb2.ModelCost, _Mapping]] = ..., usage: _Optional[_Union[_message_pb2.Usage, _Mapping]] = ..., cost: _Optional[_Union[_message_pb2.Cost, _Mapping]] = ...) -> None: ...

class PartialJsonCase(_message.Message):
    __slots__ = ("text", "completed")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    text: str
    completed: str
    def __init__(self, text: _Optional[str] = ..., completed: _Optional[str] = ...) -> None: ...

class KnownFailures(_message.Message):
    __slots__ = ("failures", "unsupported")
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    UNSUPPORTED_FIELD_NUMBER: _ClassVar[int]
    failures: _containers.RepeatedCompositeFieldContainer[KnownFailure]
    unsupported: _containers.RepeatedCompositeFieldContainer[Unsupported]
    def __init__(self, failures: _Optional[_Iterable[_Union[KnownFailure, _Mapping]]] = ..., unsupported: _Optional[_Iterable[_Union[Unsupported, _Mapping]]] = ...) -> None: ...

class KnownFailure(_message.Message):
    __slots__ = ("case", "reason")
    CASE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    case: str
    reason: str
    def __init__(self, case: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class Unsupported(_message.Message):
    __slots__ = ("kind", "reason")
    KIND_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    kind: str
    reason: str
    def __init__(self, kind: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CaseRequest(_message.Message):
    __slots__ = ("case", "server", "protocol")
    CASE_FIELD_NUMBER: _ClassVar[int]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    case: Case
    server: str
    protocol: str
    def __init__(self, case: _Optional[_Union[Case, _Mapping]] = ..., server: _Optional[str] = ..., protocol: _Optional[str] = ...) -> None: ...

class CaseResult(_message.Message):
    __slots__ = ("name", "wire", "validate", "stream", "client", "pi_json", "cost", "partial_json", "error")
    NAME_FIELD_NUMBER: _ClassVar[int]
    WIRE_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    PI_JSON_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_JSON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    name: str
    wire: WireResult
    validate: ValidateResult
    stream: StreamResult
    client: ClientOutcome
    pi_json: PiJsonResult
    cost: _message_pb2.Cost
    partial_json: PartialJsonResult
    error: str
    def __init__(self, name: _Optional[str] = ..., wire: _Optional[_Union[WireResult, _Mapping]] = ..., validate: _Optional[_Union[ValidateResult, _Mapping]] = ..., stream: _Optional[_Union[StreamResult, _Mapping]] = ..., client: _Optional[_Union[ClientOutcome, _Mapping]] = ..., pi_json: _Optional[_Union[PiJsonResult, _Mapping]] = ..., cost: _Optional[_Union[_message_pb2.Cost, _Mapping]] = ..., partial_json: _Optional[_Union[PartialJsonResult, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class WireResult(_message.Message):
    __slots__ = ("binary", "json", "json_binary")
    BINARY_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    JSON_BINARY_FIELD_NUMBER: _ClassVar[int]
    binary: bytes
    json: str
    json_binary: bytes
    def __init__(self, binary: _Optional[bytes] = ..., json: _Optional[str] = ..., json_binary: _Optional[bytes] = ...) -> None: ...

class ValidateResult(_message.Message):
    __slots__ = ("violations",)
    VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    violations: _containers.RepeatedCompositeFieldContainer[Violation]
    def __init__(self, violations: _Optional[_Iterable[_Union[Violation, _Mapping]]] = ...) -> None: ...

class StreamResult(_message.Message):
    __slots__ = ("partials", "result", "failure")
    PARTIALS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    partials: _containers.RepeatedCompositeFieldContainer[_message_pb2.AssistantMessage]
    result: _message_pb2.AssistantMessage
    failure: StreamFailure
    def __init__(self, partials: _Optional[_Iterable[_Union[_message_pb2.AssistantMessage, _Mapping]]] = ..., result: _Optional[_Union[_message_pb2.AssistantMessage, _Mapping]] = ..., failure: _Optional[_Union[StreamFailure, _Mapping]] = ...) -> None: ...

class PiJsonResult(_message.Message):
    __slots__ = ("entry", "context", "error_path", "event", "session", "written", "edited_written")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    ERROR_PATH_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_FIELD_NUMBER: _ClassVar[int]
    EDITED_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    entry: _transcript_pb2.TranscriptEntry
    context: _context_pb2.AgentContext
    error_path: str
    event: _event_pb2.ModelEvent
    session: PiSession
    written: str
    edited_written: str
    def __init__(self, entry: _Optional[_Union[_transcript_pb2.TranscriptEntry, _Mapping]] = ..., context: _Optional[_Union[_context_pb2.AgentContext, _Mapping]] = ..., error_path: _Optional[str] = ..., event: _Optional[_Union[_event_pb2.ModelEvent, _Mapping]] = ..., session: _Optional[_Union[PiSession, _Mapping]] = ..., written: _Optional[str] = ..., edited_written: _Optional[str] = ...) -> None: ...

class PartialJsonResult(_message.Message):
    __slots__ = ("whole", "by_character")
    WHOLE_FIELD_NUMBER: _ClassVar[int]
    BY_CHARACTER_FIELD_NUMBER: _ClassVar[int]
    whole: str
    by_character: str
    def __init__(self, whole: _Optional[str] = ..., by_character: _Optional[str] = ...) -> None: ...
