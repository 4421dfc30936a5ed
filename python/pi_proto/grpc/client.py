"""The gRPC client: streams of ModelEvents whose iteration never raises."""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import grpc
from google.protobuf.message import DecodeError as UpbDecodeError

from .._gen.pb2.pi.ai.v1 import service_pb2
from .._gen.types.pi.ai.v1 import (
    AgentContext,
    AssistantMessage,
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
    StreamRequest,
    StreamRule,
)
from ..stream.accumulator import DEFAULT_MAX_MESSAGE_BYTES, StreamProtocolError
from ..stream.event_stream import AssistantMessageEventStream, StreamFailure
from ..stream.numbering import Numbering
from ..wire.codec import DecodeError, EncodeError, decode, encode, from_upb, parse
from .methods import BATCHED_METHOD, CANCEL_METHOD, RESUME_METHOD, SERVICE, STREAM_METHOD

Metadata = Sequence[tuple[str, str | bytes]]
Unary = grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]
# How long a call may linger after its terminal event before it is cancelled: the server ends
# the RPC right away, so only a misbehaving one is cut off.
AFTER_TERMINAL_SECONDS = 1.0
# The deadline of a call that sets none: longer than the server's default stream limit (600 s).
DEFAULT_TIMEOUT_SECONDS = 900.0
# The error message of a stream that ModelClient.close() ended, or that was started after it.
CLIENT_CLOSED = "the client was closed"
# A call cut off after its stream id arrived is resumed (ModelService.Resume) up to this many
# times in a row without an event between, waiting RESUME_BACKOFF_SECONDS, doubled each time.
MAX_RESUMES = 5
RESUME_BACKOFF_SECONDS = 0.05
# The statuses of a connection lost rather than a call refused: a call cut off by them resumes.
RESUMABLE = (grpc.StatusCode.UNAVAILABLE,)
CANCEL_SECONDS = 1.0  # how long a Cancel call, or close() waiting for them, may take


class CallError(Exception):
    """A unary call (ListModels, GetModel) that ended with a status other than OK."""

    def __init__(self, status_code: str, detail: str) -> None:
        super().__init__(f"{status_code}: {detail}")
        self.status_code = status_code
        self.detail = detail


class ModelCallStream(AssistantMessageEventStream):
    """The events of one call, read from the RPC by whoever consumes the stream.

    Iterating pulls the next message from the call, decodes it and applies it, in the consumer's
    own task: no second task hands events over, and the call is read no faster than it is
    consumed, so a slow consumer holds the server back through HTTP/2 flow control. Consumers
    take turns at reading, so several consumers of one stream share its events in turn.

    Cancelling the task of a consumer that is reading cancels the call too, and the
    CancelledError reaches that consumer; the stream still ends with its ABORTED event for the
    others. The call cancelled from anywhere else (`cancel()`, the client closed) only ends the
    stream, with its ABORTED event.
    """

    def __init__(
        self,
        call: grpc.aio.UnaryStreamCall[bytes, bytes] | None = None,
        *,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        fallback: Callable[[], grpc.aio.UnaryStreamCall[bytes, bytes]] | None = None,
        resume: Callable[[str, int], grpc.aio.UnaryStreamCall[bytes, bytes]] | None = None,
        cancel_kept: Callable[[str], None] | None = None,
        deadline: float | None = None,
        coalesced: bool = False,
    ) -> None:
        super().__init__(max_message_bytes=max_message_bytes)
        self._call = call
        # Set while `call` is a StreamBatched call: how to make the Stream call that replaces it
        # when the server does not have StreamBatched.
        self._fallback = fallback
        self._batch: deque[bytes] = deque()  # the events of the last batch not applied yet
        self._batch_error: DecodeError | None = None  # what cut that batch short, after its events
        self._pulling = asyncio.Lock()
        self._received = 0
        self._numbering = Numbering(coalesced=coalesced)
        self._resume = resume  # makes the Resume call of a stream id after an event number
        self._cancel_kept = cancel_kept  # calls ModelService.Cancel for a stream id
        self._deadline = deadline  # of the whole call, resumes included, by time.monotonic()
        self._resumes = 0  # in a row, since the last event applied
        self.stream_id = ""  # the server's id of the stream, from its start event; empty if none

    async def __anext__(self) -> ModelEvent:
        while not self._queue and not self.done:
            await self._pull()
        return await super().__anext__()

    async def result(self) -> AssistantMessage:
        while not self.done:
            await self._pull(ahead=True)
        return await super().result()

    def cancel(self, message: str = "cancelled", reason: StopReason = StopReason.ABORTED) -> None:
        """Cancel the call, from any task; the stream ends with an `error` event (ABORTED unless
        told otherwise), which a consumer waiting for the next event receives. `failure` stays
        None: the caller stopped the stream, nothing failed."""
        if self.done:
            return
        if self._call is not None:
            self._call.cancel()
        if self.stream_id and self._cancel_kept is not None:
            # The server cannot tell a cancelled call from a connection lost: it is told.
            self._cancel_kept(self.stream_id)
        self.fail(reason, message)

    async def initial_metadata(self) -> Metadata:
        """The response headers the server sent; empty when the call failed before them."""
        if self._call is None:
            return ()
        try:
            return tuple(await self._call.initial_metadata() or ())
        except grpc.aio.AioRpcError:
            return ()
        except asyncio.CancelledError:
            if _cancelling_current_task():
                raise
            return ()  # the call was cancelled, not the caller

    async def trailing_metadata(self) -> Metadata:
        """The response trailers the server sent with the status; empty if there were none."""
        if self._call is None:
            return ()
        try:
            return tuple(await asyncio.wait_for(self._call.trailing_metadata(), AFTER_TERMINAL_SECONDS) or ())
        except (grpc.aio.AioRpcError, TimeoutError):
            return ()
        except asyncio.CancelledError:
            if _cancelling_current_task():
                raise
            return ()  # the call was cancelled, not the caller

    async def _pull(self, *, ahead: bool = False) -> None:
        """Apply the next event of the batch at hand, or read one message from the call; a failure
        ends the stream with an error event.

        Only when no event waits, unless `ahead`: result() reads on while events wait. A batch is
        applied an event at a time, as it is consumed, so each event's partial is the message as
        of that event.
        """
        async with self._pulling:
            if (self._queue and not ahead) or self.done or self._call is None:
                return
            if self._batch:
                self._apply(self._batch.popleft())
            elif self._batch_error is not None:
                failure = StreamProtocolError(
                    self._received, StreamRule.EVENT_DECODE, f"cannot decode the batch: {self._batch_error}"
                )
                self.fail(StopReason.ERROR, str(failure), StreamFailure.of_rule(failure))
            else:
                await self._read()
            if self.done:
                asyncio.get_running_loop().call_later(AFTER_TERMINAL_SECONDS, self._call.cancel)

    async def _read(self) -> None:
        assert self._call is not None
        try:
            data = await self._call.read()
            if not isinstance(data, bytes):  # grpc.aio.EOF
                if not await self._resumed():
                    self.end_without_terminal()
            elif self._fallback is None:
                self._apply(data)
            else:
                self._batch_error = _split_batch(data, self._batch)
        except grpc.aio.AioRpcError as error:
            if self._fallback is not None and self._received == 0 and error.code() == grpc.StatusCode.UNIMPLEMENTED:
                self._call, self._fallback = self._fallback(), None  # a server without StreamBatched
                return
            if error.code() in RESUMABLE and await self._resumed():
                return
            code = error.code().name
            self.fail(StopReason.ERROR, error.details() or code, StreamFailure(error.details() or code, code))
        except asyncio.CancelledError:
            if _cancelling_current_task():
                self.cancel()  # the consumer's own task is cancelled: the call goes with it
                raise
            # The call was cancelled under the consumer, whose task carries on: by cancel() or
            # ModelClient.close(), which have ended the stream already, or by grpc itself.
            self.cancel("the call was cancelled")

    async def _resumed(self) -> bool:
        """Resume a call cut off after its stream id arrived: wait, then make the Resume call
        that goes on after the last event applied. False when it cannot: no stream id, the
        attempts or the deadline used up."""
        if not self.stream_id or self._resume is None or self._resumes >= MAX_RESUMES:
            return False
        wait = RESUME_BACKOFF_SECONDS * 2**self._resumes
        if self._deadline is not None and time.monotonic() + wait >= self._deadline:
            return False
        self._resumes += 1
        await asyncio.sleep(wait)
        self._call, self._fallback = self._resume(self.stream_id, self._numbering.last), None
        return True

    def _apply(self, data: bytes) -> None:
        """Decode one event and apply it; whatever the bytes hold, a failure ends the stream."""
        index = self._received
        try:
            event = from_upb(parse(ModelEvent, data), ModelEvent)
            del data  # upb keeps what it needs: the bytes are not held twice
            if not self._numbering.admit(event, index):
                return  # a repeat of an event applied before the stream resumed
        except StreamProtocolError as error:
            self.fail(StopReason.ERROR, str(error), StreamFailure.of_rule(error))
            return
        except Exception as error:  # untrusted bytes: any failure to read them is this rule
            failure = StreamProtocolError(index, StreamRule.EVENT_DECODE, f"cannot decode the event: {error}")
            self.fail(StopReason.ERROR, str(failure), StreamFailure.of_rule(failure))
            return
        self._received += 1
        self._resumes = 0
        try:
            self.push(event)
        except StreamProtocolError as error:
            self.fail(StopReason.ERROR, str(error), StreamFailure.of_rule(error))
            return
        if event.start is not None:
            self.stream_id = event.start.stream_id


def stream_request(
    context: AgentContext,
    *,
    provider: str,
    model: str,
    options: GenerationOptions | None,
    coalesce_deltas: bool,
    background: bool,
    fallback_models: Sequence[str],
) -> StreamRequest:
    """The StreamRequest of a client's stream() call, whatever the protocol."""
    return StreamRequest(
        provider=provider,
        model=model,
        context=context,
        options=options,
        coalesce_deltas=coalesce_deltas,
        background=background,
        fallback_models=list(fallback_models),
        resumable=True,  # every client here resumes a stream cut off
    )


def _cancelling_current_task() -> bool:
    """Whether the running task is being cancelled: a CancelledError is then the caller's own,
    not one grpc raises for a call cancelled elsewhere."""
    current = asyncio.current_task()
    return current is not None and current.cancelling() > 0


def _split_batch(data: bytes, events: deque[bytes]) -> DecodeError | None:
    """Append the bytes of each event of a StreamBatchedResponse to `events`, read through
    StreamBatchedView, so an event that does not decode fails alone at its own index; a batch that
    does not parse at all gives what is wrong, and none of its events."""
    try:
        events.extend(service_pb2.StreamBatchedView.FromString(data).events)
    except UpbDecodeError as error:
        return DecodeError(f"not a StreamBatchedResponse: {error}")
    return None


class ModelClient:
    """A client of pi.ai.v1.ModelService at `target` (host:port).

    Every failure becomes the stream's `error` event, carrying everything received before it: a
    non-OK status or transport failure is ERROR with the status message; a stream that closes
    without a terminal event is ERROR "stream ended without a terminal event"; an event that
    breaks the stream rules is ERROR naming the event and the rule; `failure` on the stream says
    which status or rule it was. `cancel()` on the returned stream is ABORTED "cancelled", and
    closing the client ends the streams still open ABORTED "the client was closed": the caller's
    doing, not failures, so `failure` stays None.

    With `root_certificates` (PEM) the channel uses TLS; with `token` every call carries
    `authorization: Bearer <token>`. A call without its own `timeout` gets `default_timeout`
    seconds (15 minutes; None for no deadline). A stream whose deltas add up to more than
    `max_message_bytes` (64 MiB) ends with an ERROR event (rule `size-limit`). `channel_options`
    are passed to grpc's channel as they are (keepalive, window sizes, ...).
    """

    def __init__(
        self,
        target: str,
        *,
        root_certificates: bytes | None = None,
        token: str | None = None,
        max_receive_bytes: int = 64 * 1024 * 1024,
        default_timeout: float | None = DEFAULT_TIMEOUT_SECONDS,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        channel_options: Sequence[tuple[str, Any]] = (),
        batched: bool = True,
    ) -> None:
        self.target = target
        self.batched = batched
        self.default_timeout = default_timeout
        self.max_message_bytes = max_message_bytes
        options = [("grpc.max_receive_message_length", max_receive_bytes), *channel_options]
        if root_certificates is None:
            self._channel = grpc.aio.insecure_channel(target, options=options)
        else:
            credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            self._channel = grpc.aio.secure_channel(target, credentials, options=options)
        self._authorization: Metadata = () if token is None else (("authorization", f"Bearer {token}"),)
        self._stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = self._channel.unary_stream(STREAM_METHOD)
        self._batched: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = self._channel.unary_stream(BATCHED_METHOD)
        self._list: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = self._channel.unary_unary(f"/{SERVICE}/ListModels")
        self._get: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = self._channel.unary_unary(f"/{SERVICE}/GetModel")
        self._resume: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = self._channel.unary_stream(RESUME_METHOD)
        self._cancel: Unary = self._channel.unary_unary(CANCEL_METHOD)
        self._cancels: set[asyncio.Task[None]] = set()  # Cancel calls on their way
        # Weakly: a stream nobody holds any more has no consumer to tell when the client closes.
        self._open_streams: weakref.WeakSet[ModelCallStream] = weakref.WeakSet()
        self._closed = False

    async def close(self) -> None:
        """Close the channel; streams still open end with an ABORTED event, "the client was
        closed", and streams started from now on end with it at once."""
        self._closed = True
        # Ended before the channel cancels their calls, so that consumers reading them see a
        # stream cancelled under them, not a CancelledError of their own.
        for events in list(self._open_streams):
            events.cancel(CLIENT_CLOSED)
        self._open_streams.clear()
        if self._cancels:  # the servers' streams are told before the channel goes
            await asyncio.wait(self._cancels, timeout=CANCEL_SECONDS)
        await self._channel.close()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def list_models(self, provider: str = "", *, timeout: float = 30.0) -> list[Model]:
        """The models the server serves (only `provider`'s when given); raises CallError."""
        request = encode(ListModelsRequest(provider=provider))
        reply = await self._unary(self._list, request, timeout)
        return decode(ListModelsResponse, reply).models

    async def get_model(self, model_id: str, provider: str = "", *, timeout: float = 30.0) -> Model:
        """One model of the catalog; raises CallError (NOT_FOUND naming what is served when it is not)."""
        reply = await self._unary(self._get, encode(GetModelRequest(provider=provider, id=model_id)), timeout)
        found = decode(GetModelResponse, reply).model
        if found is None:
            raise CallError("INTERNAL", "the server answered GetModel without a model")
        return found

    def _cancel_kept(self, stream_id: str, headers: Metadata) -> None:
        """Tell the server to cancel a kept stream (with the call's own headers), without waiting
        for its answer."""
        task = asyncio.ensure_future(self._send_cancel(stream_id, headers))
        self._cancels.add(task)
        task.add_done_callback(self._cancels.discard)

    async def _send_cancel(self, stream_id: str, headers: Metadata) -> None:
        # Best effort: a stream nobody reads is cancelled by its server soon after anyway.
        with contextlib.suppress(grpc.aio.AioRpcError, grpc.aio.UsageError):
            await self._cancel(encode(CancelRequest(stream_id=stream_id)), timeout=CANCEL_SECONDS, metadata=headers)

    async def _unary(
        self, method: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes], request: bytes, timeout: float
    ) -> bytes:
        if self._closed:  # grpc would raise its UsageError
            raise CallError("CANCELLED", CLIENT_CLOSED)
        try:
            reply: bytes = await method(request, timeout=timeout, metadata=self._authorization)
        except grpc.aio.AioRpcError as error:
            raise CallError(error.code().name, error.details() or error.code().name) from None
        return reply

    def stream(
        self,
        context: AgentContext,
        *,
        provider: str = "",
        model: str = "",
        options: GenerationOptions | None = None,
        timeout: float | None = None,
        metadata: Metadata = (),
        coalesce_deltas: bool = False,
        background: bool = False,
        fallback_models: Sequence[str] = (),
    ) -> ModelCallStream:
        """Start one model call; the events arrive with `partial` rebuilt.

        The model is named by `provider` and `model` id, as pi names one; left empty, the server
        picks (see ModelServer). `timeout` is the call's deadline in seconds (default: the
        client's `default_timeout`).
        With `coalesce_deltas` the server may merge deltas that wait while this client is behind.
        With `background` the call goes on if this client goes away (read it again with the
        stream's `stream_id`); `fallback_models` ("provider/id") are tried in turn when the model
        fails before it answers. A call cut off after its first event resumes by itself
        (docs/resume.md); cancel() also cancels the server's stream.
        """
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
            events = ModelCallStream()
            events.fail(StopReason.ERROR, f"invalid request: {error}")
            return events
        if self._closed:  # grpc would raise UsageError: iteration, not this call, tells the caller
            events = ModelCallStream()
            events.fail(StopReason.ABORTED, CLIENT_CLOSED)
            return events
        seconds = self.default_timeout if timeout is None else timeout
        deadline = None if seconds is None else time.monotonic() + seconds
        headers = (*self._authorization, *metadata)

        def plain() -> grpc.aio.UnaryStreamCall[bytes, bytes]:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            return self._stream(request, timeout=left, metadata=headers)

        def resume(stream_id: str, after_seq: int) -> grpc.aio.UnaryStreamCall[bytes, bytes]:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            asked = ResumeRequest(stream_id=stream_id, after_seq=after_seq, coalesce_deltas=coalesce_deltas)
            return self._resume(encode(asked), timeout=left, metadata=headers)

        first, fallback = (
            (self._batched(request, timeout=seconds, metadata=headers), plain) if self.batched else (plain(), None)
        )
        events = ModelCallStream(
            first,
            max_message_bytes=self.max_message_bytes,
            fallback=fallback,
            resume=resume,
            cancel_kept=lambda stream_id: self._cancel_kept(stream_id, headers),
            deadline=deadline,
            coalesced=coalesce_deltas,
        )
        self._open_streams.add(events)
        return events
