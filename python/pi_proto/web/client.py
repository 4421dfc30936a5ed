"""HttpModelClient: ModelService over Connect or gRPC-web, on connectrpc's own async client.

It keeps ModelClient's contract: iterating a stream never raises and every failure becomes the
stream's `error` event, carrying what arrived before it (a status before or during the stream is
ERROR with the status message and `failure.status_code`; an event that cannot be decoded or
breaks a stream rule is ERROR naming the event and the rule; `cancel()` is ABORTED).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any

from connectrpc.client import ConnectClient
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.protobuf import json_format
from pyqwest import Client, HTTPTransport

from .._gen.pb2.pi.ai.v1 import event_pb2, service_pb2
from .._gen.types.pi.ai.v1 import (
    AgentContext,
    CancelRequest,
    GenerationOptions,
    GetModelRequest,
    GetModelResponse,
    ListModelsRequest,
    ListModelsResponse,
    Model,
    ModelEvent,
    ResumeRequest,
    StopReason,
    StreamRule,
)
from ..grpc.client import (
    CANCEL_SECONDS,
    CLIENT_CLOSED,
    DEFAULT_TIMEOUT_SECONDS,
    MAX_RESUMES,
    RESUME_BACKOFF_SECONDS,
    CallError,
    _split_batch,
    stream_request,
)
from ..stream.accumulator import DEFAULT_MAX_MESSAGE_BYTES, StreamProtocolError
from ..stream.event_stream import AssistantMessageEventStream, StreamFailure
from ..stream.numbering import Numbering
from ..wire.codec import DecodeError, EncodeError, M, decode, encode, from_upb, parse
from .codec import GRPC_NAMES, JSON, PROTO, ClientCodec, Wire
from .service import CANCEL, GET_MODEL, LIST_MODELS, RESUME, STREAM, STREAM_BATCHED

PROTOCOLS = {"connect": ProtocolType.CONNECT, "grpc-web": ProtocolType.GRPC_WEB}
# How long a stream reads on after its terminal event, for the rest of the response (the status,
# anything a misbehaving server sends), so the connection goes back to the pool.
AFTER_TERMINAL_SECONDS = 1.0


class HttpModelClient:
    """A client of pi.ai.v1.ModelService at `url` (e.g. http://127.0.0.1:8080) over HTTP/1.1.

    `protocol` is "connect" or "grpc-web", `codec` "proto" or "json". With `token` every call
    carries `authorization: Bearer <token>`; `ca_certificates` (PEM) are trusted for https. A call
    without its own `timeout` gets `default_timeout` seconds. StreamBatched is called first, and
    Stream when the server does not have it, unless `batched` is False.
    """

    def __init__(
        self,
        url: str,
        *,
        protocol: str = "connect",
        codec: str = PROTO,
        token: str | None = None,
        ca_certificates: bytes | None = None,
        default_timeout: float | None = DEFAULT_TIMEOUT_SECONDS,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        batched: bool = True,
    ) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
        if codec not in (PROTO, JSON):
            raise ValueError(f"codec {codec!r}: expected proto or json")
        self.url = url.rstrip("/")
        self.codec = codec
        self.batched = batched
        self.default_timeout = default_timeout
        self.max_message_bytes = max_message_bytes
        self._headers: dict[str, str] = {} if token is None else {"authorization": f"Bearer {token}"}
        self._transport = HTTPTransport(tls_ca_cert=ca_certificates, enable_otel=False)
        self._client = ConnectClient(
            self.url,
            codec=ClientCodec(codec),
            protocol=PROTOCOLS[protocol],
            accept_compression=(),
            send_compression=None,
            http_client=Client(self._transport),
        )
        # Weakly: a stream nobody holds any more has no consumer to tell when the client closes.
        self._open_streams: weakref.WeakSet[AssistantMessageEventStream] = weakref.WeakSet()
        self._cancels: set[asyncio.Task[None]] = set()  # Cancel calls on their way
        self._closed = False

    async def close(self) -> None:
        """Close the connections; streams still open end with an ABORTED event, "the client was
        closed", as ModelClient's do, and streams started from now on end with it at once."""
        self._closed = True
        for events in list(self._open_streams):
            events.cancel(CLIENT_CLOSED)
        self._open_streams.clear()
        if self._cancels:  # the servers' streams are told before the connections go
            await asyncio.wait(self._cancels, timeout=CANCEL_SECONDS)
        await self._client.close()
        await self._transport.aclose()

    async def __aenter__(self) -> HttpModelClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def list_models(self, provider: str = "", *, timeout: float = 30.0) -> list[Model]:
        """The models the server serves (only `provider`'s when given); raises CallError."""
        request = Wire(service_pb2.ListModelsRequest, encode(ListModelsRequest(provider=provider)))
        reply = await self._unary(request, LIST_MODELS, timeout)
        return self._decoded(ListModelsResponse, service_pb2.ListModelsResponse, reply).models

    async def get_model(self, model_id: str, provider: str = "", *, timeout: float = 30.0) -> Model:
        """One model of the catalog; raises CallError (NOT_FOUND naming what is served)."""
        request = Wire(service_pb2.GetModelRequest, encode(GetModelRequest(provider=provider, id=model_id)))
        reply = await self._unary(request, GET_MODEL, timeout)
        found = self._decoded(GetModelResponse, service_pb2.GetModelResponse, reply).model
        if found is None:
            raise CallError("INTERNAL", "the server answered GetModel without a model")
        return found

    async def _unary(self, request: Wire, method: Any, timeout: float) -> bytes:
        try:
            reply: bytes = await self._client.execute_unary(
                request=request, method=method, headers=self._headers, timeout_ms=int(timeout * 1000)
            )
        except ConnectError as error:
            name = GRPC_NAMES[error.code]
            raise CallError(name, error.message or name) from None
        return reply

    def _decoded(self, cls: type[M], upb_class: Any, data: bytes) -> M:
        try:
            if self.codec == PROTO:
                return decode(cls, data)
            upb = upb_class()
            json_format.Parse(data, upb, ignore_unknown_fields=True)
            return from_upb(upb, cls)
        except (DecodeError, json_format.ParseError, UnicodeDecodeError) as error:
            raise CallError("INTERNAL", f"cannot decode the answer: {error}") from None

    def stream(
        self,
        context: AgentContext,
        *,
        provider: str = "",
        model: str = "",
        options: GenerationOptions | None = None,
        timeout: float | None = None,
        metadata: Sequence[tuple[str, str | bytes]] | Mapping[str, str] = (),
        coalesce_deltas: bool = False,
        background: bool = False,
        fallback_models: Sequence[str] = (),
    ) -> AssistantMessageEventStream:
        """Start one model call, as ModelClient.stream does; `metadata` are extra request headers."""
        events = AssistantMessageEventStream(max_message_bytes=self.max_message_bytes)
        try:
            request = encode(
                stream_request(
                    context,
                    provider=provider,
                    model=model,
                    options=options,
                    coalesce_deltas=coalesce_deltas,
                    background=background,
                    fallback_models=fallback_models,
                )
            )
        except EncodeError as error:
            events.fail(StopReason.ERROR, f"invalid request: {error}")
            return events
        if self._closed:
            events.fail(StopReason.ABORTED, CLIENT_CLOSED)
            return events
        pairs = metadata.items() if isinstance(metadata, Mapping) else metadata
        headers = {**self._headers, **{key: _text(value) for key, value in pairs}}
        seconds = self.default_timeout if timeout is None else timeout
        deadline = None if seconds is None else time.monotonic() + seconds
        asked = Wire(service_pb2.StreamRequest, request)
        events.drive(self._read(events, asked, headers, deadline, coalesce_deltas))
        self._open_streams.add(events)
        return events

    async def _read(
        self,
        events: AssistantMessageEventStream,
        request: Wire,
        headers: dict[str, str],
        deadline: float | None,
        coalesced_deltas: bool,
    ) -> None:
        """Feed `events` from the call: StreamBatched first unless told otherwise, Stream when the
        server has no StreamBatched. Returning without a terminal event ends the stream with rule
        `terminal-missing`; raising StreamProtocolError, with that rule broken. A call cut off
        (UNAVAILABLE, or an end without a terminal event) after its stream id came resumes, as
        ModelClient's do."""
        reader = _Reader(events, self.codec, Numbering(coalesced=coalesced_deltas))
        batched, method, resumes = self.batched, STREAM_BATCHED if self.batched else STREAM, 0
        while True:
            left = None if deadline is None else max(1, int((deadline - time.monotonic()) * 1000))
            messages = self._client.execute_server_stream(
                request=request, method=method, headers=headers, timeout_ms=left
            )
            received = reader.received
            try:
                async with aclosing(messages):  # type: ignore[type-var]
                    await reader.read(messages, batched=batched)
                failure = None
            except ConnectError as error:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    if reader.stream_id:  # the server cannot tell this from a connection lost
                        self._cancel_kept(reader.stream_id, headers)
                    raise asyncio.CancelledError from None  # cancel(): connectrpc reports it as CANCELED
                if batched and reader.received == 0 and error.code is Code.UNIMPLEMENTED:
                    batched, method = False, STREAM  # a server without StreamBatched
                    continue
                failure = error
            except asyncio.CancelledError:
                if reader.stream_id:
                    self._cancel_kept(reader.stream_id, headers)
                raise
            if events.done:
                return
            resumes = 0 if reader.received > received else resumes
            resumable = failure is None or failure.code is Code.UNAVAILABLE
            wait = RESUME_BACKOFF_SECONDS * 2**resumes
            in_time = deadline is None or time.monotonic() + wait < deadline
            if reader.stream_id and resumable and resumes < MAX_RESUMES and in_time:
                resumes += 1
                await asyncio.sleep(wait)
                asked = ResumeRequest(
                    stream_id=reader.stream_id, after_seq=reader.numbering.last, coalesce_deltas=coalesced_deltas
                )
                request, method, batched = Wire(service_pb2.ResumeRequest, encode(asked)), RESUME, False
                continue
            if failure is None:
                return  # the stream ends without a terminal event
            name = GRPC_NAMES[failure.code]
            detail = failure.message or name
            events.fail(StopReason.ERROR, detail, StreamFailure(detail, name))
            return

    def _cancel_kept(self, stream_id: str, headers: dict[str, str]) -> None:
        """Tell the server to cancel a kept stream, without waiting for its answer."""
        task = asyncio.ensure_future(self._send_cancel(stream_id, headers))
        self._cancels.add(task)
        task.add_done_callback(self._cancels.discard)

    async def _send_cancel(self, stream_id: str, headers: dict[str, str]) -> None:
        request = Wire(service_pb2.CancelRequest, encode(CancelRequest(stream_id=stream_id)))
        # Best effort: a stream nobody reads is cancelled by its server soon after anyway.
        with contextlib.suppress(ConnectError, OSError):
            await self._client.execute_unary(
                request=request, method=CANCEL, headers=headers, timeout_ms=int(CANCEL_SECONDS * 1000)
            )


class _Reader:
    """Decodes a call's messages and pushes their events, each decoded as it is reached."""

    def __init__(self, events: AssistantMessageEventStream, codec: str, numbering: Numbering) -> None:
        self.events = events
        self.codec = codec
        self.numbering = numbering
        self.received = 0
        self.stream_id = ""  # the server's id of the stream, from its start event

    async def read(self, messages: AsyncIterator[bytes], *, batched: bool) -> None:
        async for message in messages:
            if batched:
                batch: deque[bytes] = deque()
                problem = self._split(message, batch)
                while batch:
                    await self._push(batch.popleft(), json=False)  # a batch's events are binary
                if problem is not None:
                    raise StreamProtocolError(
                        self.received, StreamRule.EVENT_DECODE, f"cannot decode the batch: {problem}"
                    )
            else:
                await self._push(message, json=self.codec == JSON)
            if self.events.done:
                await self._rest(messages)
                return

    def _split(self, message: bytes, batch: deque[bytes]) -> DecodeError | None:
        if self.codec == PROTO:
            return _split_batch(message, batch)
        upb = service_pb2.StreamBatchedResponse()
        try:
            json_format.Parse(message, upb, ignore_unknown_fields=True)
        except (json_format.ParseError, UnicodeDecodeError) as error:
            return DecodeError(str(error))
        batch.extend(event.SerializeToString() for event in upb.events)
        return None

    async def _push(self, data: bytes, *, json: bool) -> None:
        """Decode one event and push it; whatever the bytes hold, a failure breaks a stream rule.
        A repeat of an event already pushed (a resumed server sent it again) is dropped."""
        index = self.received
        try:
            if not json:
                upb = parse(ModelEvent, data)
            else:
                upb = event_pb2.ModelEvent()
                json_format.Parse(data, upb, ignore_unknown_fields=True)
            event = from_upb(upb, ModelEvent)
        except Exception as error:  # untrusted bytes: any failure to read them is this rule
            raise StreamProtocolError(index, StreamRule.EVENT_DECODE, f"cannot decode the event: {error}") from None
        if not self.numbering.admit(event, index):
            return
        self.received += 1
        await self.events.send(event)
        if event.start is not None:
            self.stream_id = event.start.stream_id

    async def _rest(self, messages: AsyncIterator[bytes]) -> None:
        """Read what follows the terminal event (ignored), for a while, so the connection is reused."""
        try:
            async with asyncio.timeout(AFTER_TERMINAL_SECONDS):
                async for _ in messages:
                    pass
        except (ConnectError, TimeoutError):
            pass


def _text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode("latin-1")
