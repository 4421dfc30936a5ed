"""The gRPC server: pi.ai.v1.ModelService over any Model, with health checks and reflection."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection as grpc_reflection

from ._gen.types.pi.ai.v1 import ModelEvent, StreamRequest
from .events import without_partial
from .stream import AssistantMessageEventStream, Model
from .validate import DEFAULT_LIMITS, Limits, ValidationError, check_request
from .wire import DecodeError, decode, encode

SERVICE = "pi.ai.v1.ModelService"
STREAM_METHOD = f"/{SERVICE}/Stream"


def wire_event(event: ModelEvent) -> bytes:
    """An event's bytes, without its `partial`."""
    return encode(without_partial(event))


def parse_request(data: bytes, limits: Limits = DEFAULT_LIMITS) -> StreamRequest:
    """A request from untrusted bytes; raises DecodeError or ValidationError naming the bad field."""
    request = decode(StreamRequest, data)
    check_request(request, limits)
    return request


class ModelServer:
    """A grpc.aio server that plays `model`.

    Streams end right after their terminal event. When a client cancels, the model's stream is
    cancelled too. `stop()` ends every in-flight stream with an ABORTED `error` event first, so no
    client is left without a final message.
    """

    def __init__(self, model: Model, *, host: str = "127.0.0.1", port: int = 0, reflection: bool = True) -> None:
        self.model = model
        self.host = host
        self.port = port
        self._active: set[AssistantMessageEventStream] = set()
        self._stopping = False
        self._server = grpc.aio.server()
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

    async def start(self) -> str:
        """Bind (port 0 picks a free port), start serving, and return the target."""
        self.port = self._server.add_insecure_port(f"{self.host}:{self.port}")
        if self.port == 0:
            raise OSError(f"cannot listen on {self.host}")
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
        try:
            request = parse_request(data)
        except (DecodeError, ValidationError) as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        if request.model and request.model != self.model.id:
            await context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"unknown model {request.model!r}: this server plays {self.model.id!r}",
            )
        assert request.context is not None  # parse_request checked it
        events = self.model.stream(request.context, request.options)
        self._active.add(events)
        try:
            if self._stopping:
                events.cancel("the server is shutting down")
            async for event in events:
                yield wire_event(event)
        finally:
            events.cancel()  # a no-op after the terminal event; stops the model if the client left
            self._active.discard(events)
