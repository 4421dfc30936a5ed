"""The gRPC server: pi.ai.v1.ModelService over any Model, with health checks and reflection."""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection as grpc_reflection

from ._gen.pb2.pi.ai.v1.event_pb2 import ModelEvent as _UpbModelEvent
from ._gen.types.pi.ai.v1 import (
    ModelEvent,
    StopReason,
    StreamRequest,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
)
from .events import EVENT_KINDS, event_kind
from .stream import AssistantMessageEventStream, Model, ModelRefused
from .validate import ValidationError, check
from .wire import DecodeError, EncodeError, fill_upb, from_upb, parse

SERVICE = "pi.ai.v1.ModelService"
STREAM_METHOD = f"/{SERVICE}/Stream"
# The gRPC interop suite's metadata echo: sent back as initial and trailing metadata.
ECHO_INITIAL = "x-grpc-test-echo-initial"
ECHO_TRAILING = "x-grpc-test-echo-trailing-bin"


def wire_event(event: ModelEvent) -> bytes:
    """An event's bytes, without its `partial` (which is never sent)."""
    members = event.__dict__
    chosen = [kind for kind in EVENT_KINDS if members[kind] is not None]
    if len(chosen) != 1:
        found = ", ".join(chosen) or "none"
        raise EncodeError(f"ModelEvent: oneof 'event' of ModelEvent must have exactly one member set, found {found}")
    (kind,) = chosen
    upb = _UpbModelEvent()
    body = getattr(upb, kind)
    body.SetInParent()
    fill_upb(body, members[kind])
    return upb.SerializeToString()


def parse_request(data: bytes) -> StreamRequest:
    """A request from untrusted bytes; raises DecodeError, or ValidationError naming the bad fields."""
    upb = parse(StreamRequest, data)
    check(upb)
    return from_upb(upb, StreamRequest)


_DELTAS = {"text_delta": TextDeltaEvent, "thinking_delta": ThinkingDeltaEvent, "toolcall_delta": ToolCallDeltaEvent}


def coalesce(event: ModelEvent, events: AssistantMessageEventStream) -> ModelEvent:
    """Merge into a delta the deltas of the same block already waiting behind it.

    Events wait only while the client reads slower than the model writes, so a client that keeps
    up gets every delta, and one that falls behind gets fewer, larger ones: same order, same text.
    """
    kind, body = event_kind(event)
    if kind not in _DELTAS:
        return event
    parts = [body.delta]
    while (waiting := events.peek()) is not None:
        next_kind, next_body = event_kind(waiting)
        if next_kind != kind or next_body.content_index != body.content_index:
            break
        parts.append(next_body.delta)
        events.take()
    if len(parts) == 1:
        return event
    merged: dict[str, Any] = {kind: _DELTAS[kind](content_index=body.content_index, delta="".join(parts))}
    return ModelEvent(**merged)


@dataclass(frozen=True)
class ServerLimits:
    """What one server process accepts; every limit is also a `pi-proto serve` flag."""

    # Streams served at once; one more is refused with RESOURCE_EXHAUSTED.
    max_concurrent_streams: int = 256
    # Largest request, in bytes; a larger one is refused with RESOURCE_EXHAUSTED by gRPC itself.
    max_request_bytes: int = 16 * 1024 * 1024
    # Longest a stream may run, in seconds; then it ends with an ERROR event saying so.
    stream_timeout: float = 600.0


@dataclass(frozen=True)
class Tls:
    """A PEM certificate chain and private key to serve TLS with."""

    certificate_chain: bytes
    private_key: bytes


class ModelServer:
    """A grpc.aio server that plays `model`.

    Streams end right after their terminal event. When a client cancels, the model's stream is
    cancelled too. `stop()` ends every in-flight stream with an ABORTED `error` event first, so no
    client is left without a final message. With `token`, calls must carry the metadata
    `authorization: Bearer <token>` (health checks need none).
    """

    def __init__(
        self,
        model: Model,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        reflection: bool = True,
        tls: Tls | None = None,
        token: str | None = None,
        limits: ServerLimits = ServerLimits(),  # frozen, so sharing the default is safe
    ) -> None:
        self.model = model
        self.host = host
        self.port = port
        self.limits = limits
        self._tls = tls
        self._expected_authorization = None if token is None else f"Bearer {token}".encode()
        self._active: set[AssistantMessageEventStream] = set()
        self._stopping = False
        self._server = grpc.aio.server(options=[("grpc.max_receive_message_length", limits.max_request_bytes)])
        handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_stream_rpc_method_handler(self._stream)
        self._server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {"Stream": handler}),))
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        if reflection:
            services = (SERVICE, health.SERVICE_NAME, grpc_reflection.SERVICE_NAME)
            grpc_reflection.enable_server_reflection(services, self._server)

    @property
    def target(self) -> str:
        """The address clients dial, e.g. 127.0.0.1:50051."""
        return f"{self.host}:{self.port}"

    @property
    def active_streams(self) -> int:
        """The number of streams being served now."""
        return len(self._active)

    async def start(self) -> str:
        """Bind (port 0 picks a free port), start serving, and return the target."""
        address = f"{self.host}:{self.port}"
        if self._tls is None:
            self.port = self._server.add_insecure_port(address)
        else:
            credentials = grpc.ssl_server_credentials([(self._tls.private_key, self._tls.certificate_chain)])
            self.port = self._server.add_secure_port(address, credentials)
        if self.port == 0:
            raise OSError(f"cannot listen on {address}")
        await self._server.start()
        await self._health.set("", health_pb2.HealthCheckResponse.SERVING)
        await self._health.set(SERVICE, health_pb2.HealthCheckResponse.SERVING)
        return self.target

    async def stop(self, grace: float = 5.0) -> None:
        """Abort in-flight streams with an ABORTED event, then stop within `grace` seconds."""
        self._stopping = True
        await self._health.enter_graceful_shutdown()
        for events in list(self._active):
            events.cancel("the server is shutting down")
        await self._server.stop(grace)

    async def wait_for_termination(self) -> None:
        """Wait until the server has stopped."""
        await self._server.wait_for_termination()

    async def __aenter__(self) -> ModelServer:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    async def _stream(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
        metadata = dict(context.invocation_metadata() or ())
        if self._expected_authorization is not None:
            supplied = metadata.get("authorization", "")
            supplied_bytes = supplied if isinstance(supplied, bytes) else supplied.encode()
            if not hmac.compare_digest(supplied_bytes, self._expected_authorization):
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid bearer token")
        if len(self._active) >= self.limits.max_concurrent_streams:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"too many concurrent streams: this server serves {self.limits.max_concurrent_streams} at once",
            )
        try:
            request = parse_request(data)
        except (DecodeError, ValidationError) as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        if request.model and request.model != self.model.id:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"unknown model {request.model!r}: this server plays {self.model.id!r}"
            )
        assert request.context is not None  # parse_request checked it
        try:
            events = self.model.stream(request.context, request.options)
        except ModelRefused as refusal:
            await context.abort(grpc.StatusCode[refusal.code], refusal.message)
        self._active.add(events)
        deadline = asyncio.get_running_loop().call_later(
            self.limits.stream_timeout,
            events.cancel,
            f"the stream ran longer than the server's limit of {self.limits.stream_timeout:g} s",
            StopReason.ERROR,
        )
        try:
            await _echo_metadata(context, metadata)
            if self._stopping:
                events.cancel("the server is shutting down")
            async for event in events:
                if request.coalesce_deltas:
                    event = coalesce(event, events)
                yield wire_event(event)
        finally:
            deadline.cancel()
            events.cancel()  # a no-op after the terminal event; stops the model if the client left
            self._active.discard(events)


async def _echo_metadata(context: grpc.aio.ServicerContext[bytes, bytes], metadata: dict[str, str | bytes]) -> None:
    if ECHO_INITIAL in metadata:
        await context.send_initial_metadata(((ECHO_INITIAL, metadata[ECHO_INITIAL]),))
    if ECHO_TRAILING in metadata:
        context.set_trailing_metadata(((ECHO_TRAILING, metadata[ECHO_TRAILING]),))
