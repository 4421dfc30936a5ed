"""The gRPC server: pi.ai.v1.ModelService over any Model (with health checks and reflection when installed)."""

from __future__ import annotations

import asyncio
import math
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, TypeVar, cast

import grpc

from .._gen.pb2.pi.ai.v1.service_pb2 import StreamBatchedView
from .._gen.types.pi.ai.v1 import (
    AssistantMessage,
    CancelRequest,
    CancelResponse,
    GetModelRequest,
    GetModelResponse,
    ListModelsRequest,
    ListModelsResponse,
    Model,
    ModelEvent,
    ResumeRequest,
    StartEvent,
    StopReason,
    StreamRequest,
)
from ..ir.events import is_terminal
from ..ir.messages import now_ms, zero_usage
from ..models import telemetry
from ..resume import Gone, JournalReader, MemoryStore, NotKept
from ..stream.event_stream import AssistantMessageEventStream, ModelRefused, ServedModel
from ..wire.codec import DecodeError, M, encode, from_upb, parse
from ..wire.files import read_regular_file
from ..wire.validate import ValidationError, check
from .gate import Gate
from .methods import SERVICE
from .outgoing import coalesce, wire_deltas, wire_event
from .requests import (
    Refused,
    RequestInvalid,
    RequestTooLarge,
    ServerLimits,
    TooLarge,
    checked,
    parse_counted,
)

# Kept deltas written at once, from a journal's runs: a batch takes runs until it holds BATCH_BYTES.
DELTA_RUN = 64
# Takes a kept stream's next run of deltas: the number of the first, and each (kind, index, text).
Runs = Callable[[int], tuple[int, list[tuple[str, int, str]]]]
# A batch takes the events waiting behind the first until it holds this many bytes: big enough
# that a saturated stream costs a few messages per thousand events, small enough to stay far
# below any client's message limit.
BATCH_BYTES = 16 * 1024
# A request larger than this is checked and converted in a worker thread, so the event loop keeps
# serving other streams and health checks meanwhile; at most LARGE_AT_ONCE of them at a time.
LARGE_REQUEST_BYTES = 256 * 1024
LARGE_AT_ONCE = 2
R = TypeVar("R")  # what work done off the event loop returns
# How long a stream that ran out of time has to deliver its ERROR event before it is cut off.
TIMEOUT_GRACE_SECONDS = 1.0
# The gRPC interop suite's metadata echo: sent back as initial and trailing metadata.
ECHO_INITIAL = "x-grpc-test-echo-initial"
ECHO_TRAILING = "x-grpc-test-echo-trailing-bin"
# A call that ends this close to its client's deadline ended by it: grpc's clock and the event
# loop's differ by some milliseconds, and a client with less left would not resume in time.
DEADLINE_MARGIN_SECONDS = 0.5
CALL_METHODS = frozenset(f"/{SERVICE}/{name}" for name in ("Stream", "StreamBatched", "Resume"))


class EventSource(Protocol):
    """Events to send: a model's stream, or a reader of a kept stream."""

    def __aiter__(self) -> AsyncIterator[ModelEvent]: ...
    def peek(self) -> ModelEvent | None: ...
    def take(self) -> ModelEvent: ...


class KeptReader(EventSource, Protocol):
    """A reader of a kept stream, here or in another replica's store."""

    def close(self) -> None: ...


@dataclass(frozen=True, eq=False)
class Call:
    """One model call being served, over gRPC or HTTP: its checked request and its events.

    ModelServer.start_call() makes it and end_call() ends it; call_messages() reads its events as
    wire messages.
    """

    request: StreamRequest
    events: AssistantMessageEventStream
    # The call's time limit (--stream-timeout): for a stream not kept, the model's, which ends it
    # with an ERROR event and then cuts the call; for a kept one, the call's own, which cuts it.
    deadline: asyncio.TimerHandle | None
    # What the client reads: the model's events themselves, or with a store, its reader of the
    # journal that keeps them (which outlives this call, for Resume).
    source: EventSource
    coalesce: bool
    # The id of the kept stream `source` reads; empty when the stream is not kept.
    stream_id: str = ""
    # Whether the model may go on when this call's client goes away: the client said it resumes
    # (StreamRequest.resumable, or a Resume) or asked for a background call.
    resumable: bool = False
    # When the client's own deadline passes (the event loop's clock), if it set one: a call that
    # reached it was ended on purpose.
    client_deadline: float | None = None


MAX_PEM_BYTES = 4 * 1024 * 1024  # a certificate chain or a key; a CA bundle is some hundred KiB


@dataclass(frozen=True)
class Tls:
    """A PEM certificate chain and private key to serve TLS with."""

    certificate_chain: bytes
    private_key: bytes

    @classmethod
    def from_files(cls, chain: Path, key: Path) -> Tls:
        """Read and check a chain and its key; raises ValueError saying what is wrong with which file.
        Each must be a regular file of at most MAX_PEM_BYTES, so a FIFO or a device is refused
        before OpenSSL would wait on it or read it without end."""
        files = {}
        for path in (chain, key):
            try:
                files[path] = read_regular_file(path, MAX_PEM_BYTES)
            except ValueError as error:
                raise ValueError(f"{path}: {error}") from None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_verify_locations(cadata=files[chain].decode("ascii"))
        except (ssl.SSLError, ValueError):  # UnicodeDecodeError is one
            raise ValueError(f"{chain}: not a PEM certificate chain") from None
        try:
            context.load_cert_chain(chain, key)
        except ssl.SSLError as error:
            if "KEY_VALUES_MISMATCH" in str(error) or "key values mismatch" in str(error):
                raise ValueError(f"{key}: this private key does not match the certificate in {chain}") from None
            raise ValueError(f"{key}: not a PEM private key") from None
        return cls(files[chain], files[key])


class ModelServer:
    """A grpc.aio server that plays `models` (one, or a catalog of them).

    A request names a model by provider and id (pi's way); an empty id takes the first model, an
    empty provider the only one that serves the id. ListModels and GetModel show the catalog.

    Streams end right after their terminal event. When a client cancels, the model's stream is
    cancelled too. `stop()` ends every in-flight stream with an ABORTED `error` event first, so no
    client is left without a final message. With `token`, calls must carry the metadata
    `authorization: Bearer <token>` (health checks need none; see gate.py). A port in use is an
    OSError at start(), unless every server on it is made with `reuse_port` (the kernel then
    spreads connections across them).
    """

    def __init__(
        self,
        models: ServedModel | Sequence[ServedModel],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        health: bool | None = None,
        reflection: bool | None = None,
        tls: Tls | None = None,
        token: str | None = None,
        limits: ServerLimits = ServerLimits(),  # frozen, so sharing the default is safe
        flush_window: float = 0.0,
        reuse_port: bool = False,
        streams: MemoryStore | None = None,
    ) -> None:
        self.models = list(models) if isinstance(models, Sequence) else [models]
        if not self.models:
            raise ValueError("a server needs at least one model")
        if not 0 <= flush_window < math.inf:
            raise ValueError(f"flush_window must be 0 or more seconds, not {flush_window!r}")
        self.host = host
        self.port = port
        self.limits = limits
        self.flush_window = flush_window  # seconds a batch waits for more events; 0 sends at once
        self.streams = streams  # where calls are kept for Resume; None keeps none
        self._tls = tls
        self._active: set[AssistantMessageEventStream] = set()
        self._stopping = False
        self._large_requests = asyncio.Semaphore(LARGE_AT_ONCE)
        # ModelService's streams take their slots in start_call, one per model run (see there).
        self._gate = Gate(max_streams=limits.max_concurrent_streams, token=token, uncounted=CALL_METHODS)
        options = [
            ("grpc.max_receive_message_length", limits.max_request_bytes),
            # gRPC shares a port it binds with any other process by default; a second server
            # on a port in use is a mistake to report, unless asked for (serve --workers).
            ("grpc.so_reuseport", int(reuse_port)),
        ]
        self._server = grpc.aio.server(interceptors=[self._gate], options=options)
        methods: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
            "Stream": grpc.unary_stream_rpc_method_handler(self._stream),
            "StreamBatched": grpc.unary_stream_rpc_method_handler(self._stream_batched),
            "Resume": grpc.unary_stream_rpc_method_handler(self._resume),
            "Cancel": grpc.unary_unary_rpc_method_handler(self._cancel),
            "ListModels": grpc.unary_unary_rpc_method_handler(self._list_models),
            "GetModel": grpc.unary_unary_rpc_method_handler(self._get_model),
        }
        self._server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, methods),))
        introspection = _introspection(health, reflection)
        self._health = None if introspection is None or health is False else introspection.Health(self._server, SERVICE)
        if introspection is not None and reflection is not False:
            introspection.add_reflection(self._server, SERVICE)

    @property
    def target(self) -> str:
        """The address clients dial, e.g. 127.0.0.1:50051."""
        return f"{self.host}:{self.port}"

    @property
    def active_streams(self) -> int:
        """The number of model streams being served now."""
        return len(self._active)

    @property
    def open_streams(self) -> int:
        """The streaming calls holding a slot now: model streams, health watches and reflection."""
        return self._gate.streams

    @property
    def gate(self) -> Gate:
        """The token and concurrent-stream gate; a server of another protocol in this process
        (pi_proto.web) admits its calls through it, so the limits hold for the process."""
        return self._gate

    def catalog(self, provider: str = "") -> list[Model]:
        """The served models (only `provider`'s when given), as ListModels lists them."""
        return [model.info for model in self.models if not provider or model.info.provider == provider]

    async def start(self) -> str:
        """Bind (port 0 picks a free port), start serving, and return the target."""
        address = f"{self.host}:{self.port}"
        try:
            if self._tls is None:
                self.port = self._server.add_insecure_port(address)
            else:
                credentials = grpc.ssl_server_credentials([(self._tls.private_key, self._tls.certificate_chain)])
                self.port = self._server.add_secure_port(address, credentials)
        except RuntimeError as error:
            raise OSError(f"cannot listen on {address}: {error}") from None
        if self.port == 0:
            raise OSError(f"cannot listen on {address}")
        await self._server.start()
        if self._health is not None:
            await self._health.serving()
        return self.target

    async def stop(self, grace: float = 5.0) -> None:
        """Abort in-flight streams with an ABORTED event, then stop within `grace` seconds."""
        self._stopping = True
        if self._health is not None:
            await self._health.shutting_down()
        for events in list(self._active):
            events.cancel("the server is shutting down")
        await self._server.stop(grace)
        if self.streams is not None:
            self.streams.close()

    async def wait_for_termination(self) -> None:
        """Wait until the server has stopped."""
        await self._server.wait_for_termination()

    async def __aenter__(self) -> ModelServer:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    def find(self, provider: str, model_id: str) -> ServedModel:
        """The served model a request names; KeyError saying what is served when there is none."""
        if not model_id and not provider:
            return self.models[0]
        found = [
            model
            for model in self.models
            if (not model_id or model.info.id == model_id) and (not provider or model.info.provider == provider)
        ]
        if len(found) == 1 or (found and not model_id):
            return found[0]
        wanted = f"{provider}/{model_id}" if provider else repr(model_id)
        served = ", ".join(f"{model.info.provider}/{model.info.id}" for model in self.models)
        problem = "is served by several providers; name one" if found else "is not served"
        raise KeyError(f"model {wanted} {problem}: this server serves {served}")

    async def _list_models(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        request = await self._parsed(ListModelsRequest, data, context)
        return encode(ListModelsResponse(models=self.catalog(request.provider)))

    async def _get_model(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        request = await self._parsed(GetModelRequest, data, context)
        try:
            return encode(GetModelResponse(model=self.find(request.provider, request.id).info))
        except KeyError as error:
            await context.abort(grpc.StatusCode.NOT_FOUND, error.args[0])
        raise AssertionError("abort raises")

    async def _parsed(self, cls: type[M], data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> M:
        try:
            return await self._checked(cls, data)
        except Refused as refusal:
            await context.abort(grpc.StatusCode[refusal.code], refusal.message)
        raise AssertionError("abort raises")

    async def _stream(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        """ModelService.Stream: one event per message."""
        await self._play(data, context, batched=False)

    async def _stream_batched(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        """ModelService.StreamBatched: the events waiting together in one message."""
        await self._play(data, context, batched=True)

    async def _resume(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        """ModelService.Resume: a kept stream's events after the client's last, one per message."""
        await self._play(data, context, batched=False, resume=True)

    async def _cancel(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        """ModelService.Cancel."""
        try:
            return encode(await self.cancel_stream(data))
        except Refused as refusal:
            await context.abort(grpc.StatusCode[refusal.code], refusal.message)
        raise AssertionError("abort raises")

    async def _play(
        self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes], *, batched: bool, resume: bool = False
    ) -> None:
        metadata = dict(context.invocation_metadata() or ())
        headers = {name: value for name, value in metadata.items() if isinstance(value, str)}  # not -bin ones
        remaining = context.time_remaining()
        try:
            call = await (self.resume_call(data, remaining) if resume else self.start_call(data, headers, remaining))
        except Refused as refusal:
            await context.abort(grpc.StatusCode[refusal.code], refusal.message)
            raise AssertionError("abort raises") from None
        try:
            await _echo_metadata(context, metadata)
            async with aclosing(self.call_messages(call, batched=batched)) as messages:
                async for message in messages:
                    await context.write(message)
        except Refused as refusal:  # a kept stream dropped before this client read its end
            await context.abort(grpc.StatusCode[refusal.code], refusal.message)
        finally:
            self.end_call(call)

    # --- one model call, whatever the protocol --------------------------------------------------

    async def start_call(
        self, data: bytes, headers: Mapping[str, str] | None = None, client_timeout: float | None = None
    ) -> Call:
        """Start the call a StreamRequest's bytes ask for (the request's `headers` give its trace
        context to the model's call; `client_timeout` is the seconds left of the client's own
        deadline, if it set one): the request checked against the limits and the rules, its model
        found, a concurrent-stream slot taken for it (held while the model runs, whoever reads it),
        the model started and counted among the active ones (so stop() aborts it), its queued bytes
        bounded and its time limited (the stream timeout ends it with an ERROR event, and cuts the
        calling task a grace period later). Raises Refused with the status to answer. Every call
        started must be ended with end_call()."""
        request = await self.checked_request(data)
        try:
            model = self.find(request.provider, request.model)
        except KeyError as error:
            raise Refused("NOT_FOUND", error.args[0]) from None
        assert request.context is not None  # the rules require it
        fallbacks = self._fallbacks(model, request.fallback_models)
        if (full := self._gate.take_slot()) is not None:
            raise Refused("RESOURCE_EXHAUSTED", full)
        try:
            with telemetry.extracted(headers):
                if fallbacks:
                    events = model.stream(request.context, request.options, fallbacks=fallbacks)  # type: ignore[call-arg]
                else:
                    events = model.stream(request.context, request.options)
        except ModelRefused as refusal:
            self._gate.release_slot()
            raise Refused(refusal.code, refusal.message) from None
        except BaseException:
            self._gate.release_slot()
            raise
        events.high_water_bytes = self.limits.max_queued_bytes
        self._active.add(events)
        handler = asyncio.current_task()
        loop = asyncio.get_running_loop()
        client_deadline = None if client_timeout is None else loop.time() + client_timeout
        if self._stopping:
            events.cancel("the server is shutting down")
        if self.streams is None:
            deadline = loop.call_later(self.limits.stream_timeout, self._time_out, events, handler, model.info)
            return Call(request, events, deadline, events, request.coalesce_deltas, client_deadline=client_deadline)
        # A kept stream outlives its first client: its time limit ends the model, and the call has
        # one of its own; its slot is the model's, given back when the model ends.
        model_deadline = loop.call_later(self.limits.stream_timeout, self._time_out, events, None, model.info)
        journal = self.streams.keep(events, background=request.background)
        journal.on_end.append(model_deadline.cancel)
        journal.on_end.append(lambda: self._active.discard(events))
        journal.on_end.append(self._gate.release_slot)
        return Call(
            request,
            events,
            self._cut_later(handler),
            journal.reader(0),
            request.coalesce_deltas,
            journal.stream_id,
            resumable=request.resumable or request.background,
            client_deadline=client_deadline,
        )

    async def resume_call(self, data: bytes, client_timeout: float | None = None) -> Call:
        """Start reading a kept stream again, as the ResumeRequest's bytes ask (ModelService.Resume);
        raises Refused: NOT_FOUND for a stream not kept (or a server that keeps none), OUT_OF_RANGE
        for events no longer held, INVALID_ARGUMENT for a malformed request. It takes no slot (it
        runs no model) and has the stream timeout's time. End it with end_call()."""
        request = await self._checked(ResumeRequest, data)
        if self.streams is None:
            raise Refused("NOT_FOUND", "this server keeps no streams, so none can be resumed")
        try:
            reader = await self.streams.reader(request.stream_id, request.after_seq)
        except NotKept as error:
            raise Refused("NOT_FOUND", str(error)) from None
        except Gone as error:
            raise Refused("OUT_OF_RANGE", str(error)) from None
        events = reader.journal.events if isinstance(reader, JournalReader) else reader.events
        loop = asyncio.get_running_loop()
        return Call(
            StreamRequest(),
            events,
            self._cut_later(asyncio.current_task()),
            reader,
            request.coalesce_deltas,
            request.stream_id,
            resumable=True,
            client_deadline=None if client_timeout is None else loop.time() + client_timeout,
        )

    def _cut_later(self, handler: asyncio.Task[Any] | None) -> asyncio.TimerHandle | None:
        """A kept stream's call ends by the stream timeout (and its grace) whatever its client
        does: one that never reads cannot hold its connection and task past it."""
        if handler is None:
            return None
        return asyncio.get_running_loop().call_later(self.limits.stream_timeout + TIMEOUT_GRACE_SECONDS, handler.cancel)

    async def cancel_stream(self, data: bytes) -> CancelResponse:
        """Cancel a kept stream, as the CancelRequest's bytes ask (ModelService.Cancel); raises
        Refused: NOT_FOUND for a stream not kept, INVALID_ARGUMENT for a malformed request."""
        request = await self._checked(CancelRequest, data)
        if self.streams is None:
            raise Refused("NOT_FOUND", "this server keeps no streams, so none can be cancelled")
        try:
            return CancelResponse(cancelled=await self.streams.cancel(request.stream_id))
        except NotKept as error:
            raise Refused("NOT_FOUND", str(error)) from None

    async def _checked(self, cls: type[M], data: bytes) -> M:
        try:
            upb = parse(cls, data)
            check(upb)
        except (DecodeError, ValidationError) as error:
            raise Refused("INVALID_ARGUMENT", str(error)) from None
        return from_upb(upb, cls)

    def _fallbacks(self, model: ServedModel, names: Sequence[str]) -> list[ServedModel]:
        """The served models a request names to fall back to; raises Refused: NOT_FOUND for one
        not served, INVALID_ARGUMENT when the model or one of them cannot take part (only models
        of a models.json fall back)."""
        found = []
        for index, name in enumerate(names):
            provider, _, model_id = name.rpartition("/")
            try:
                fallback = self.find(provider, model_id)
            except KeyError as error:
                raise Refused("NOT_FOUND", f"fallback_models[{index}]: {error.args[0]}") from None
            if not getattr(fallback, "falls_back", False) or not getattr(model, "falls_back", False):
                raise Refused(
                    "INVALID_ARGUMENT",
                    f"fallback_models[{index}]: only models of a models.json fall back to one another",
                )
            found.append(fallback)
        return found

    def end_call(self, call: Call) -> None:
        """End a call: its timer stops, and its model is cancelled unless it already finished (a
        client that left), or the call is kept for a client that resumes (see client_left)."""
        self.client_left(call)
        if call.deadline is not None:
            call.deadline.cancel()
        if not call.stream_id:  # a kept stream's model gives its slot back when it ends
            self._active.discard(call.events)
            self._gate.release_slot()

    def client_left(self, call: Call) -> None:
        """The client of a call went away, or its call ended: the model stops at once (a no-op
        after its terminal event) unless the stream is kept and the client said it resumes or
        asked for a background call, and did not leave because its own deadline passed or before
        it was sent the start event (it cannot resume a stream whose id it never had). A kept
        stream that goes on is cancelled by its store when no client resumes it in time."""
        if not call.stream_id:
            call.events.cancel()
            return
        reader = cast(KeptReader, call.source)
        now = asyncio.get_running_loop().time()
        expired = call.client_deadline is not None and now >= call.client_deadline - DEADLINE_MARGIN_SECONDS
        unstarted = isinstance(reader, JournalReader) and reader.next_seq <= 1
        if not call.request.background and (not call.resumable or expired or unstarted):
            call.events.cancel("the client ended its call")
        reader.close()

    async def call_messages(self, call: Call, *, batched: bool) -> AsyncGenerator[bytes, None]:
        """The call's events as the messages of the wire: a ModelEvent each, or with `batched` a
        StreamBatchedResponse of the events waiting together; deltas merged when the request asks.
        Raises Refused (RESOURCE_EXHAUSTED) when its kept stream is dropped before its end."""
        source, merge = call.source, call.coalesce
        # A kept stream's deltas are written in runs straight from its journal (wire_deltas).
        runs = source.take_deltas if isinstance(source, JournalReader) and not merge else None
        try:
            async for event in source:
                if merge:
                    event = coalesce(event, source)
                if batched:
                    yield await self._batch(event, source, merge, runs)
                    continue
                yield wire_event(event)
                while runs is not None and (run := runs(DELTA_RUN))[1]:
                    for data in wire_deltas(*run):
                        yield data
        except Gone as error:
            raise Refused("RESOURCE_EXHAUSTED", str(error)) from None

    async def _batch(self, first: ModelEvent, events: EventSource, merge: bool, runs: Runs | None = None) -> bytes:
        """A StreamBatchedResponse of `first` and the events waiting behind it (after the flush
        window, if the server has one), up to BATCH_BYTES."""
        batch = [wire_event(first)]
        size = len(batch[0])
        if self.flush_window and not is_terminal(first) and events.peek() is None:
            await asyncio.sleep(self.flush_window)
        while size < BATCH_BYTES:
            if runs is not None and (run := runs(DELTA_RUN))[1]:
                for data in wire_deltas(*run):
                    batch.append(data)
                    size += len(data)
                continue
            if events.peek() is None:
                break
            waiting = events.take()
            batch.append(wire_event(coalesce(waiting, events) if merge else waiting))
            size += len(batch[-1])
        # The view writes the events' bytes as they are: none is decoded or encoded again.
        return StreamBatchedView(events=batch).SerializeToString()

    def _time_out(self, events: AssistantMessageEventStream, handler: asyncio.Task[Any] | None, info: Model) -> None:
        """End a stream that ran out of time: an ERROR event for a client that reads, and soon after,
        whatever the client does, the call itself, so it cannot hold its slot. A model that has
        not answered yet gets its `start` sent for it first, so the error still names the model."""
        if not events.started and not events.done:
            header = AssistantMessage(
                api=info.api, provider=info.provider, model=info.id, usage=zero_usage(), timestamp=now_ms()
            )
            events.push(ModelEvent(start=StartEvent(header=header)))
        events.cancel(
            f"the stream ran longer than the server's limit of {self.limits.stream_timeout:g} s", StopReason.ERROR
        )
        if handler is not None:
            asyncio.get_running_loop().call_later(TIMEOUT_GRACE_SECONDS, handler.cancel)

    async def off_loop(self, size: int, work: Callable[..., R], *args: Any) -> R:
        """`work(*args)` for a request of `size` bytes: at once when it is small, else in a worker
        thread (at most LARGE_AT_ONCE of them for every protocol of the process), so the event
        loop goes on serving other streams and health checks meanwhile."""
        if size <= LARGE_REQUEST_BYTES:
            return work(*args)
        async with self._large_requests:
            return await asyncio.to_thread(work, *args)

    async def checked_request(self, data: bytes) -> StreamRequest:
        """The request `data` holds, within the limits and passing every rule; raises Refused with
        RESOURCE_EXHAUSTED or INVALID_ARGUMENT naming what is wrong."""
        try:
            return await self.off_loop(len(data), checked, parse_counted(data, self.limits))
        except TooLarge as error:
            raise RequestTooLarge(str(error)) from None
        except ValidationError as error:
            raise RequestInvalid(error) from None
        except DecodeError as error:
            raise Refused("INVALID_ARGUMENT", str(error)) from None


def _introspection(health: bool | None, reflection: bool | None) -> ModuleType | None:
    """The health and reflection module when it is installed (the `cli` extra); None when it is
    not and neither was asked for by name."""
    if health is False and reflection is False:
        return None
    try:
        from . import introspection
    except ModuleNotFoundError as error:
        if health or reflection:
            raise ImportError(f"health checks and reflection need {error.name}: pip install 'pi-proto[cli]'") from None
        return None
    return introspection


async def _echo_metadata(context: grpc.aio.ServicerContext[bytes, bytes], metadata: dict[str, str | bytes]) -> None:
    if ECHO_INITIAL in metadata:
        await context.send_initial_metadata(((ECHO_INITIAL, metadata[ECHO_INITIAL]),))
    if ECHO_TRAILING in metadata:
        context.set_trailing_metadata(((ECHO_TRAILING, metadata[ECHO_TRAILING]),))
