"""Server-Sent Events of pi-JSON events: `POST /v1/stream`, for curl, browsers and SSE consumers.

The body is a StreamRequest in ProtoJSON, or a pi-JSON context (an object with `messages`, as pi's
`Context`; the model then comes from the query: `?model=ID&provider=NAME&coalesceDeltas=true`).
The answer is `text/event-stream`: one `data:` line per event, each the event in pi's own JSON shape
(pi-ai's AssistantMessageEvent), and the response ends after the terminal event. As on every
protocol of ours, `partial` is not resent with each event (it would make a long answer quadratic);
what pi's partial would add is carried instead: `start` has the message header as `partial`,
`toolcall_start` the call's `id` and `name`, `text_end` and `thinking_end` their signatures, and an
event that changes the usage carries `usage`. `done` carries the final message, `error` the failed
one.

The body must be `application/json` (415 otherwise), so that a web page's request needs a CORS
preflight. A request refused before the stream starts gets an HTTP error with a JSON body in
Connect's shape, `{"code": "invalid_argument", "message": "..."}`: 401 without the bearer token,
413 for a body above the request limit, 429 when every stream slot is taken, 400 and 404 as
Connect maps them.
A client that goes away cancels the model's stream, as a cancelled gRPC call does.

SseEndpoint does all this for any protocol of pi's events over SSE; what one does its own way (its
request, its events, its error body) is an SseProtocol: /v1/stream's is here, pi's own
`POST /messages` and `POST /api/stream` are in pi_protocols.py.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import parse_qs

from google.protobuf import json_format

from .._gen.pb2.pi.ai.v1 import service_pb2
from .._gen.types.pi.ai.v1 import (
    AssistantContent,
    DoneEvent,
    ErrorEvent,
    GenerationOptions,
    ModelEvent,
    ResumeRequest,
    StartEvent,
    StreamRequest,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ..grpc.outgoing import Waiting, coalesce
from ..grpc.requests import Refused, RequestInvalid, RequestTooLarge, ServerLimits
from ..grpc.server import BATCH_BYTES, DELTA_RUN, Call, ModelServer
from ..ir.events import DELTA_KINDS, delta_event, event_kind
from ..ir.messages import dump_json
from ..resume import Gone, JournalReader
from ..transcripts import surrogates
from ..transcripts.pi_json import (
    STOP_REASON_NAMES,
    STOP_REASONS,
    PiJsonError,
    assistant_block_from_pi,
    assistant_block_to_pi,
    assistant_from_pi,
    assistant_to_pi,
    context_from_pi,
    context_path,
    pi_reader,
    pi_writer,
    usage_from_pi,
    usage_to_pi,
)
from ..wire.codec import EncodeError, encode
from ..wire.validate import ValidationError
from .codec import json_counts
from .service import ModelService

SSE_PATH = "/v1/stream"
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]  # an ASGI application
JsonObject = dict[str, Any]

# HTTP statuses of the status codes, as Connect maps them (connectrpc.com/docs/protocol).
HTTP_STATUS = {
    "CANCELLED": 499,
    "UNKNOWN": 500,
    "INVALID_ARGUMENT": 400,
    "DEADLINE_EXCEEDED": 504,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "PERMISSION_DENIED": 403,
    "RESOURCE_EXHAUSTED": 429,
    "FAILED_PRECONDITION": 400,
    "ABORTED": 409,
    "OUT_OF_RANGE": 400,
    "UNIMPLEMENTED": 501,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DATA_LOSS": 500,
    "UNAUTHENTICATED": 401,
}
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # proxies such as nginx pass each event on at once
]


# --- events in pi's shape -------------------------------------------------------------------------


@pi_writer
def event_to_sse(event: ModelEvent) -> JsonObject:
    """An event as pi's AssistantMessageEvent without `partial` (see the module's docstring)."""
    kind, body = event_kind(event)
    out: JsonObject
    if kind in ("done", "error"):
        key = "message" if kind == "done" else "error"
        out = {"type": kind, "reason": STOP_REASON_NAMES[body.reason], key: assistant_to_pi(body.message)}
        if body.content_sha256:
            out["contentSha256"] = base64.b64encode(body.content_sha256).decode()
    elif kind == "start":
        out = {"type": "start", "partial": assistant_to_pi(body.header)}
    else:
        out = {"type": kind, "contentIndex": body.content_index}
        if kind.endswith("_delta"):
            out["delta"] = body.delta
        elif kind == "toolcall_start":
            out["id"], out["name"] = body.id, body.name
        elif kind == "toolcall_end":
            out["toolCall"] = tool_call_to_pi(body.tool_call)
        elif kind == "text_end":
            if (content := ended_content(event)) is not None:
                out["content"] = content
            if body.text_signature is not None:
                out["textSignature"] = body.text_signature
        elif kind == "thinking_end":
            if (content := ended_content(event)) is not None:
                out["content"] = content
            if body.thinking_signature is not None:
                out["thinkingSignature"] = body.thinking_signature
            if body.redacted is not None:
                out["redacted"] = body.redacted
    if event.usage is not None:
        out["usage"] = usage_to_pi(event.usage)
    return out


def tool_call_to_pi(call: ToolCall | None) -> JsonObject:
    """The call a toolcall_end carries, as pi's ToolCall block."""
    return assistant_block_to_pi(AssistantContent(tool_call=call))


def ended_content(event: ModelEvent) -> str | None:
    """The whole text or reasoning of the block a text_end or thinking_end closes, which only the
    event's partial holds (the event itself carries no text); None without a partial."""
    kind, body = event_kind(event)
    if event.partial is None:
        return None
    block = event.partial.content[body.content_index]
    if kind == "text_end":
        return (block.text or _NO_TEXT).text
    return (block.thinking or _NO_THINKING).thinking


class _NoText:
    text = ""


class _NoThinking:
    thinking = ""


_NO_TEXT, _NO_THINKING = _NoText(), _NoThinking()
_STARTS: dict[str, Any] = {"text_start": TextStartEvent, "thinking_start": ThinkingStartEvent}
_DELTAS: dict[str, Any] = {
    "text_delta": TextDeltaEvent,
    "thinking_delta": ThinkingDeltaEvent,
    "toolcall_delta": ToolCallDeltaEvent,
}


def _digest(text: Any) -> bytes:
    """A terminal event's contentSha256 (base64); empty when absent."""
    try:
        if isinstance(text, str):
            return base64.b64decode(text, validate=True)
    except binascii.Error:
        pass
    raise PiJsonError("event.contentSha256", "expected base64 text")


@pi_reader
def event_from_sse(value: Any) -> ModelEvent:
    """The ModelEvent an SSE event object of event_to_sse() stands for; an AssistantMessageEventStream
    rebuilds each event's partial from them. Raises PiJsonError naming a bad value's path."""
    if not isinstance(value, dict) or not isinstance(kind := value.get("type"), str):
        raise PiJsonError("event.type", "expected an object with a string `type`")

    def index() -> int:
        found = value.get("contentIndex")
        if not isinstance(found, int) or isinstance(found, bool) or found < 0:
            raise PiJsonError("event.contentIndex", "expected a non-negative integer")
        return found

    event: ModelEvent
    if kind in ("done", "error"):
        reason = STOP_REASONS.get(value.get("reason"))  # type: ignore[arg-type]
        if reason is None:
            raise PiJsonError("event.reason", f"expected one of {', '.join(STOP_REASONS)}")
        digest = _digest(value.get("contentSha256", ""))
        if kind == "done":
            message = assistant_from_pi(value.get("message"))
            event = ModelEvent(done=DoneEvent(reason=reason, message=message, content_sha256=digest))
        else:
            failed = assistant_from_pi(value.get("error"), "error")
            event = ModelEvent(error=ErrorEvent(reason=reason, message=failed, content_sha256=digest))
    elif kind == "start":
        event = ModelEvent(start=StartEvent(header=assistant_from_pi(value.get("partial"), "partial")))
    elif kind in _STARTS:
        started: dict[str, Any] = {kind: _STARTS[kind](content_index=index())}
        event = ModelEvent(**started)
    elif kind in _DELTAS:
        delta = value.get("delta")
        if not isinstance(delta, str):
            raise PiJsonError("event.delta", "expected a string")
        appended: dict[str, Any] = {kind: _DELTAS[kind](content_index=index(), delta=delta)}
        event = ModelEvent(**appended)
    elif kind == "toolcall_start":
        call_id, name = value.get("id", ""), value.get("name", "")
        event = ModelEvent(toolcall_start=ToolCallStartEvent(content_index=index(), id=call_id, name=name))
    elif kind == "toolcall_end":
        block = assistant_block_from_pi(value.get("toolCall"), "event.toolCall")
        event = ModelEvent(toolcall_end=ToolCallEndEvent(content_index=index(), tool_call=block.tool_call))
    elif kind == "text_end":
        event = ModelEvent(text_end=TextEndEvent(content_index=index(), text_signature=value.get("textSignature")))
    elif kind == "thinking_end":
        body = ThinkingEndEvent(
            content_index=index(), thinking_signature=value.get("thinkingSignature"), redacted=value.get("redacted")
        )
        event = ModelEvent(thinking_end=body)
    else:
        raise PiJsonError("event.type", f"not a pi event type: {kind!r}")
    if "usage" in value:
        event.usage = usage_from_pi(value["usage"], "event.usage")
    return event


def sse_data(event: ModelEvent) -> bytes:
    """One event as the lines of an SSE event: `data: {json}` and a blank line."""
    if event.__dict__["usage"] is None and (data := delta_data(event)) is not None:
        return data
    return sse_line(event_to_sse(event))


def sse_line(value: JsonObject) -> bytes:
    """A JSON object as the lines of an SSE event."""
    return b"data: " + dump_json(value).encode() + b"\n\n"


def delta_data(event: ModelEvent) -> bytes | None:
    """A delta as the SSE lines of `{"type", "contentIndex", "delta"}`, its usage left out, written
    directly: most events are deltas, and this is a few times quicker. None for any other event,
    a delta whose values are not what the schema takes (the general path reports it), or one
    holding a mapped lone surrogate (the general path writes pi's escape)."""
    members = event.__dict__
    # The deltas come first in EVENT_KINDS, so the delta found is the member event_kind would take.
    for kind in DELTA_KINDS:
        if (body := members[kind]) is not None:
            values = body.__dict__
            index, delta = values["content_index"], values["delta"]
            if type(index) is int and type(delta) is str and not surrogates.has_mapped(delta):
                return _DELTA_LINES[kind] % (index, _json_string(delta).encode())
            return None
    return None


# What dump_json(event_to_sse(event)) writes for a delta without usage, byte for byte.
_DELTA_LINES = {kind: b'data: {"type":"%s","contentIndex":%%d,"delta":%%s}\n\n' % kind.encode() for kind in _DELTAS}
_json_string = json.encoder.encode_basestring  # a str as JSON, non-ASCII kept, as dump_json writes it


def sse_chunk(
    first: ModelEvent,
    events: Waiting,
    merge: bool,
    write: Callable[[ModelEvent], bytes] = sse_data,
    runs: Callable[[], bytes] | None = None,
) -> bytes:
    """`first` and the events waiting behind it (up to BATCH_BYTES) as SSE text, each written by
    `write`, in one chunk, so a fast model costs a write per batch, as with StreamBatched; deltas
    merged when `merge`. `runs` writes the kept deltas waiting next, if any (identified_runs)."""
    data = write(coalesce(first, events) if merge else first)
    chunk = [data]
    size = len(data)
    while size < BATCH_BYTES:
        if runs is not None and (lines := runs()):
            chunk.append(lines)
            size += len(lines)
            continue
        if events.peek() is None:
            break
        waiting = events.take()
        chunk.append(write(coalesce(waiting, events) if merge else waiting))
        size += len(chunk[-1])
    return b"".join(chunk) if len(chunk) > 1 else data


async def read_sse(chunks: AsyncIterator[bytes | bytearray | memoryview]) -> AsyncIterator[Any]:
    """The JSON value of each event of an SSE response, from its body's chunks, as a browser's
    EventSource reads them (`data:` lines joined, other fields and comments ignored)."""
    buffer = b""
    async for chunk in chunks:
        buffer += bytes(chunk)
        *blocks, buffer = buffer.replace(b"\r\n", b"\n").split(b"\n\n")
        for block in blocks:
            data = [line[5:].removeprefix(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
            if data:
                yield json.loads(b"\n".join(data))


# --- the request ----------------------------------------------------------------------------------


QUERY_PARAMETERS = ("model", "provider", "coalesceDeltas")
BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def request_bytes(body: bytes, query: str, limits: ServerLimits | None = None) -> tuple[bytes, bool]:
    """The StreamRequest bytes of an SSE request's body, and whether the body was a pi-JSON context:
    ProtoJSON of a StreamRequest (unknown fields refused), or a pi-JSON context with the model
    named in the query. The context is counted against `limits` before it is converted. Raises
    Refused (INVALID_ARGUMENT, or RequestTooLarge) saying what is wrong, or RecursionError for JSON
    nested too deeply; the server then checks the request as it checks any other."""
    params = query_parameters(query, QUERY_PARAMETERS)
    if params.get("coalesceDeltas", "false") not in BOOLEANS:
        raise Refused(
            "INVALID_ARGUMENT", f"coalesceDeltas must be true, false, 1 or 0, not {params['coalesceDeltas']!r}"
        )
    value = json_object(body, "a StreamRequest or a pi-JSON context")
    if "messages" in value:
        merge = BOOLEANS[params.get("coalesceDeltas", "false")]
        model, provider = params.get("model", ""), params.get("provider", "")
        return context_request(value, limits, model=model, provider=provider, coalesce_deltas=merge), True
    if limits is not None and isinstance(context := value.get("context"), dict):
        json_counts(context.get("messages"), context.get("tools"), limits)
    if params:
        raise Refused(
            "INVALID_ARGUMENT",
            f"the query parameter {next(iter(params))!r} goes with a pi-JSON context; "
            "a StreamRequest names its model and options in its own fields",
        )
    upb = service_pb2.StreamRequest()
    try:
        json_format.ParseDict(value, upb)
    except json_format.ParseError as error:
        raise Refused("INVALID_ARGUMENT", f"cannot decode StreamRequest from ProtoJSON: {error}") from None
    return upb.SerializeToString(), False


def json_object(body: bytes, what: str) -> JsonObject:
    """The JSON object a request's body holds, `what` saying what it should be; raises Refused
    (INVALID_ARGUMENT) saying what is wrong."""
    try:
        value = json.loads(body)
    except ValueError as error:  # UnicodeDecodeError is one too
        raise Refused("INVALID_ARGUMENT", f"the body is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise Refused("INVALID_ARGUMENT", f"the body must be a JSON object: {what}")
    return value


def context_request(
    context: Any,
    limits: ServerLimits | None,
    *,
    model: str,
    provider: str,
    options: GenerationOptions | None = None,
    coalesce_deltas: bool = False,
) -> bytes:
    """The bytes of the StreamRequest for a pi-JSON context (named `context` in errors) and the
    other fields; its messages and blocks are counted against `limits` before it is converted.
    Raises Refused (INVALID_ARGUMENT, or RequestTooLarge)."""
    if limits is not None and isinstance(context, dict):
        json_counts(context.get("messages"), context.get("tools"), limits)
    try:
        request = StreamRequest(
            model=model,
            provider=provider,
            context=context_from_pi(context),
            options=options,
            coalesce_deltas=coalesce_deltas,
        )
        return encode(request)
    except (PiJsonError, EncodeError) as error:
        raise Refused("INVALID_ARGUMENT", str(error)) from None


def query_parameters(query: str, known: tuple[str, ...]) -> dict[str, str]:
    """The query's parameters (the last of each); raises Refused (INVALID_ARGUMENT) naming one that
    is not `known`, since a parameter the server does not honour is a mistake to report."""
    params = {key: values[-1] for key, values in parse_qs(query, keep_blank_values=True).items()}
    for key in params:
        if key not in known:
            expected = f"expected {', '.join(known)}" if known else "this endpoint takes none"
            raise Refused("INVALID_ARGUMENT", f"unknown query parameter {key!r}: {expected}")
    return params


class TooLargeBody(Exception):
    """A request body above the server's limit (HTTP 413)."""


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes | None:
    """The request body, or None when the client went away first; raises TooLargeBody past
    `limit`, at once when the request says its length."""
    for key, value in scope.get("headers", ()):
        if key == b"content-length" and value.isdigit() and int(value) > limit:
            raise TooLargeBody(f"the request has more than this server's limit of {limit} bytes")
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        part = message.get("body", b"")
        size += len(part)
        if size > limit:
            raise TooLargeBody(f"the request has more than this server's limit of {limit} bytes")
        parts.append(part)
        if not message.get("more_body", False):
            return b"".join(parts)


# --- the protocols --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decoded:
    """A request read from its body: its StreamRequest bytes, and `path`, which gives where a broken
    rule's field path (of the StreamRequest) points in the body as the client wrote it."""

    data: bytes
    path: Callable[[str], str]


class SseProtocol(Protocol):
    """What one protocol of pi's events over SSE does its own way; SseEndpoint does the rest."""

    usage: str  # what to POST, said to a request of another method

    def decode(self, body: bytes, query: str, limits: ServerLimits) -> Decoded:
        """The request a body and query ask for; raises Refused. Runs in a worker thread when the
        body is large (ModelServer.off_loop)."""
        ...

    def write(self, event: ModelEvent) -> bytes:
        """One event as the lines of an SSE event."""
        ...

    def error_body(self, status: int, code: str, message: str) -> bytes:
        """The JSON body of an HTTP error; `code` is the gRPC status code name."""
        ...


def as_written(field_path: str) -> str:
    """A field path of a body that is the StreamRequest itself: as it is."""
    return field_path


class StreamRequestSse:
    """`POST /v1/stream` (see the module's docstring)."""

    usage = "POST a StreamRequest (ProtoJSON) or a pi-JSON context"

    def decode(self, body: bytes, query: str, limits: ServerLimits) -> Decoded:
        data, from_context = request_bytes(body, query, limits)
        return Decoded(data, context_path if from_context else as_written)

    def write(self, event: ModelEvent) -> bytes:
        return sse_data(event)

    def error_body(self, status: int, code: str, message: str) -> bytes:
        """Connect's error JSON: the code in lower case and the message."""
        return json.dumps({"code": code.lower(), "message": message}, ensure_ascii=False).encode()


# --- the endpoint ---------------------------------------------------------------------------------


class SseEndpoint:
    """The ASGI endpoint of one SSE protocol (/v1/stream's unless told) over a ModelService: its
    server, gate and calls."""

    def __init__(self, service: ModelService, protocol: SseProtocol | None = None) -> None:
        self.service = service
        self.protocol: SseProtocol = protocol or StreamRequestSse()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await self._error(send, 405, "UNIMPLEMENTED", self.protocol.usage)
            return
        server = self.service.server
        headers = [(key.decode("latin-1"), value.decode("latin-1")) for key, value in scope.get("headers", ())]
        refusal = server.gate.refuse_credentials(list(headers))
        if refusal is not None:
            await self._error(send, 401, "UNAUTHENTICATED", refusal)
            return
        media_type = next((value for key, value in headers if key == "content-type"), "")
        if media_type.partition(";")[0].strip().lower() != "application/json":
            # Nothing else is read: a browser sends a page's form or text/plain POST without asking
            # first, and only application/json makes it ask (CORS's preflight).
            shown = repr(media_type) if media_type else "none"
            await self._error(send, 415, "INVALID_ARGUMENT", f"the body must be application/json, not {shown}")
            return
        # The request is read before a stream slot is taken, as gRPC receives it before its
        # handler runs: a client sending its body slowly holds no slot, but it has the stream's time.
        limits = server.limits
        try:
            async with asyncio.timeout(limits.stream_timeout):
                body = await read_body(scope, receive, limits.max_request_bytes)
        except TooLargeBody as error:
            await self._error(send, 413, "RESOURCE_EXHAUSTED", str(error))
            return
        except TimeoutError:
            message = f"the request took longer to arrive than the server's limit of {limits.stream_timeout:g} s"
            await self._error(send, 408, "DEADLINE_EXCEEDED", message)
            return
        if body is None:
            return  # the client went away
        query = scope.get("query_string", b"").decode("latin-1")
        carried = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", ())}
        try:
            # A client that saw event `seq` of a kept stream resumes it with the id it last saw;
            # the body, the request it sent first, is not read again.
            if (last := carried.get("last-event-id")) is not None:
                decoded = Decoded(encode(resume_request(last)), as_written)
            else:
                decoded = await server.off_loop(len(body), self._decode, body, query, limits)
        except Refused as refused:
            await self._refuse(send, refused)
            return
        await self._serve(decoded, carried, receive, send, resume=last is not None)

    def _decode(self, body: bytes, query: str, limits: ServerLimits) -> Decoded:
        try:
            return self.protocol.decode(body, query, limits)
        except RecursionError:  # the JSON, or a value inside it the conversion walks
            raise Refused("INVALID_ARGUMENT", "the body holds JSON nested too deeply to read") from None

    async def _serve(
        self, decoded: Decoded, headers: dict[str, str], receive: Receive, send: Send, *, resume: bool
    ) -> None:
        server = self.service.server
        try:
            if resume:
                call = await server.resume_call(decoded.data)
            else:
                call = await server.start_call(decoded.data, headers)  # its trace context
        except RequestInvalid as refused:
            # The broken rules, where the client wrote them (a pi-JSON body has pi's names).
            found = [replace(broken, field_path=decoded.path(broken.field_path)) for broken in refused.violations]
            await self._refuse(send, RequestInvalid(ValidationError(found)))
            return
        except Refused as refused:
            await self._refuse(send, refused)
            return
        self.service.calls.add(call)
        if self.service.stopping:
            call.events.cancel("the server is shutting down")
        watch = asyncio.create_task(_leave_when_gone(receive, server, call))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            events, merge = call.source, call.coalesce
            write: Callable[[ModelEvent], bytes] = self.protocol.write
            runs = None
            if call.stream_id:
                write = identified(write, call.stream_id)
                if isinstance(events, JournalReader) and not merge:
                    runs = identified_runs(events, write, call.stream_id)
            async for event in events:
                chunk = sse_chunk(event, events, merge, write, runs)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass  # the connection broke: the model is cancelled below
        except Gone:
            # The kept stream was dropped (the byte bound) before this client read its end: past
            # the status line, the answer can only end without its terminal event, which every
            # client of ours reports as an error.
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
            self.service.end_call(call)

    async def _refuse(self, send: Send, refused: Refused) -> None:
        """A refusal as its HTTP error: a request above a limit is 413 (429 is for a server that is
        busy now), the rest as Connect maps their codes."""
        status = 413 if isinstance(refused, RequestTooLarge) else HTTP_STATUS.get(refused.code, 500)
        await self._error(send, status, refused.code, refused.message)

    async def _error(self, send: Send, status: int, code: str, message: str) -> None:
        """An HTTP error with the protocol's error JSON."""
        headers = [(b"content-type", b"application/json")]
        if status == 405:
            headers.append((b"allow", b"POST"))
        elif status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        body = self.protocol.error_body(status, code, message)
        await send({"type": "http.response.body", "body": body, "more_body": False})


async def _leave_when_gone(receive: Receive, server: ModelServer, call: Call) -> None:
    """Wait for the client to go away, then leave the call as a cancelled gRPC call does."""
    while (await receive())["type"] != "http.disconnect":
        pass
    server.client_left(call)


def identified(write: Callable[[ModelEvent], bytes], stream_id: str) -> Callable[[ModelEvent], bytes]:
    """`write`, each event of a kept stream given the SSE id `<stream id>:<seq>` that a client
    sends back as Last-Event-ID to resume after it."""
    prefix = f"id: {stream_id}:".encode()

    def with_id(event: ModelEvent) -> bytes:
        return b"%s%d\n%s" % (prefix, event.seq, write(event))

    return with_id


def identified_runs(reader: JournalReader, write: Callable[[ModelEvent], bytes], stream_id: str) -> Callable[[], bytes]:
    """What `write`, an identified() writer of `stream_id`, writes of the kept deltas waiting
    next in `reader`, up to DELTA_RUN of them, written at once from the journal's (kind, index, text): no event object
    and a single format each. Every protocol writes a delta as delta_data() does
    (tests/test_fast_paths.py checks it); b"" when the next event is not a kept delta."""
    prefix = f"id: {stream_id}:".encode()
    lines = _IDENTIFIED_DELTA_LINES

    def run() -> bytes:
        seq, deltas = reader.take_deltas(DELTA_RUN)
        if not deltas:
            return b""
        written = []
        for kind, index, text in deltas:
            if text.isascii() or not surrogates.has_mapped(text):
                written.append(lines[kind] % (prefix, seq, index, _json_string(text).encode()))
            else:  # pi's escape of a lone surrogate: the general path
                event = delta_event[kind](index, text)
                event.seq = seq
                written.append(write(event))
            seq += 1
        return b"".join(written)

    return run


# What identified(sse_data) writes for a delta without usage: `id: <stream id>:<seq>`, then its data.
_IDENTIFIED_DELTA_LINES = {kind: b"%s%d\n" + line for kind, line in _DELTA_LINES.items()}

MAX_SEQ = 2**64 - 1  # the largest event number: ResumeRequest.after_seq is a uint64


def resume_request(last_event_id: str) -> ResumeRequest:
    """The ResumeRequest of a Last-Event-ID header (`<stream id>:<seq>`); raises Refused
    (INVALID_ARGUMENT) for one that is not, or whose number is not below 2^64."""
    stream_id, _, seq = last_event_id.strip().rpartition(":")
    shown = repr(last_event_id[:80]) + (" (cut short)" if len(last_event_id) > 80 else "")
    if not stream_id or not seq.isascii() or not seq.isdigit():
        raise Refused(
            "INVALID_ARGUMENT",
            f"Last-Event-ID {shown} is not an id this server sent: <stream id>:<event number>, the number in digits",
        )
    # Leading zeros off before int(): Python refuses to read more than 4,300 digits at once.
    significant = seq.lstrip("0")
    if len(significant) > len(str(MAX_SEQ)) or int(significant or "0") > MAX_SEQ:
        raise Refused(
            "INVALID_ARGUMENT",
            f"the event number of Last-Event-ID {shown} is out of range: event numbers are below 2^64",
        )
    return ResumeRequest(stream_id=stream_id, after_seq=int(significant or "0"))
