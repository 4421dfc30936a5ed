"""ModelService's methods as connectrpc endpoints, over a ModelServer's models, limits and gate.

Connect (proto and JSON) and gRPC-web are served by connectrpc's ASGI application; every call goes
through the same code as a gRPC call: `ModelServer.start_call` checks the request against the
limits and the rules and starts the model, `call_messages` yields the wire messages the gRPC
server sends, and `end_call` cancels a model whose client left. Requests refused before the
stream starts end with the protocol's error (Connect's error JSON, gRPC-web's status trailers)
carrying the status code gRPC would answer; once the stream has started, failures travel as its
`error` event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import aclosing
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf.message import Message as UpbMessage

from .._gen.pb2.pi.ai.v1 import event_pb2, service_pb2
from .._gen.types.pi.ai.v1 import GetModelRequest, GetModelResponse, ListModelsRequest, ListModelsResponse
from ..grpc.gate import Gate
from ..grpc.methods import SERVICE
from ..grpc.requests import Refused
from ..grpc.server import Call, ModelServer
from ..wire.codec import DecodeError, M, encode, from_upb, parse
from ..wire.validate import ValidationError, check
from .codec import JsonRequest, ServerJsonCodec, ServerProtoCodec, Wire, connect_code, from_proto_json

Request = bytes | JsonRequest  # what the codecs make of a request's body


def method(
    name: str, request: type[UpbMessage], response: type[UpbMessage], *, streaming: bool, acts: bool = False
) -> MethodInfo[Any, Any]:
    """A method of pi.ai.v1.ModelService; the unary ones that do not `act` have no side effects,
    so Connect also serves them to GET (`?encoding=json&message=...`), which browsers and curl can
    cache."""
    return MethodInfo(
        name=name,
        service_name=SERVICE,
        input=request,
        output=response,
        idempotency_level=IdempotencyLevel.UNKNOWN if streaming or acts else IdempotencyLevel.NO_SIDE_EFFECTS,
        stream_type=StreamType.SERVER_STREAM if streaming else StreamType.UNARY,
    )


STREAM = method("Stream", service_pb2.StreamRequest, event_pb2.ModelEvent, streaming=True)
STREAM_BATCHED = method("StreamBatched", service_pb2.StreamRequest, service_pb2.StreamBatchedResponse, streaming=True)
RESUME = method("Resume", service_pb2.ResumeRequest, event_pb2.ModelEvent, streaming=True)
CANCEL = method("Cancel", service_pb2.CancelRequest, service_pb2.CancelResponse, streaming=False, acts=True)
LIST_MODELS = method("ListModels", service_pb2.ListModelsRequest, service_pb2.ListModelsResponse, streaming=False)
GET_MODEL = method("GetModel", service_pb2.GetModelRequest, service_pb2.GetModelResponse, streaming=False)


def path_of(info: MethodInfo[Any, Any]) -> str:
    """The URL path of a method: /pi.ai.v1.ModelService/Stream."""
    return f"/{info.service_name}/{info.name}"


class GateInterceptor:
    """The gRPC server's gate for connectrpc: runs before the request body is read and refuses a
    call without the token (UNAUTHENTICATED). The stream slot is taken by the call itself, once
    its request has arrived, as gRPC's handler runs once the request is in: a client sending its
    body slowly holds no slot."""

    def __init__(self, gate: Gate) -> None:
        self._gate = gate

    async def on_start(self, ctx: RequestContext[Any, Any]) -> None:
        refusal = self._gate.refuse_credentials(list(ctx.request_headers.allitems()))
        if refusal is not None:
            raise ConnectError(Code.UNAUTHENTICATED, refusal)

    async def on_end(self, token: None, ctx: RequestContext[Any, Any], error: Exception | None, /) -> None:
        """Nothing to give back (connectrpc's interceptors have both hooks)."""


class ModelService:
    """The endpoints of pi.ai.v1.ModelService over a ModelServer; `calls` are the streams being
    served now, which HttpServer.stop() aborts."""

    def __init__(self, server: ModelServer) -> None:
        self.server = server
        self.calls: set[Call] = set()
        self.stopping = False

    async def decoded(self, request: Request) -> bytes:
        """A request's bytes: ProtoJSON decoded here, in a worker thread when it is large
        (ModelServer.off_loop). Raises ConnectError."""
        if isinstance(request, bytes):
            return request
        server = self.server
        return await server.off_loop(len(request.text), from_proto_json, request.text, request.cls, server.limits)

    def endpoints(self) -> dict[str, Endpoint[Any, Any]]:
        return {
            path_of(STREAM): Endpoint.server_stream(STREAM, self.stream),
            path_of(STREAM_BATCHED): Endpoint.server_stream(STREAM_BATCHED, self.stream_batched),
            path_of(RESUME): Endpoint.server_stream(RESUME, self.resume),
            path_of(CANCEL): Endpoint.unary(CANCEL, self.cancel),
            path_of(LIST_MODELS): Endpoint.unary(LIST_MODELS, self.list_models),
            path_of(GET_MODEL): Endpoint.unary(GET_MODEL, self.get_model),
        }

    def stream(self, request: Request, ctx: RequestContext[Any, Any]) -> AsyncIterator[Wire]:
        """ModelService.Stream: one event per message."""
        _unbuffered(ctx)
        return self._play(request, ctx, event_pb2.ModelEvent, batched=False)

    def stream_batched(self, request: Request, ctx: RequestContext[Any, Any]) -> AsyncIterator[Wire]:
        """ModelService.StreamBatched: the events waiting together in one message."""
        _unbuffered(ctx)
        return self._play(request, ctx, service_pb2.StreamBatchedResponse, batched=True)

    def resume(self, request: Request, ctx: RequestContext[Any, Any]) -> AsyncIterator[Wire]:
        """ModelService.Resume: a kept stream's events after the client's last, one per message."""
        _unbuffered(ctx)
        return self._play(request, ctx, event_pb2.ModelEvent, batched=False, resume=True)

    async def cancel(self, request: Request, ctx: RequestContext[Any, Any]) -> Wire:
        """ModelService.Cancel: a kept stream ends ABORTED."""
        try:
            answer = await self.server.cancel_stream(await self.decoded(request))
        except Refused as refused:
            raise ConnectError(connect_code(refused.code), refused.message) from None
        return Wire(service_pb2.CancelResponse, encode(answer))

    async def _play(
        self,
        request: Request,
        ctx: RequestContext[Any, Any],
        cls: type[UpbMessage],
        *,
        batched: bool,
        resume: bool = False,
    ) -> AsyncIterator[Wire]:
        data = await self.decoded(request)
        timeout_ms = ctx.timeout_ms
        client_timeout = None if timeout_ms is None else timeout_ms / 1000
        call = await self.start_call(data, dict(ctx.request_headers), client_timeout, resume=resume)
        try:
            async with aclosing(self.server.call_messages(call, batched=batched)) as messages:
                async for message in messages:
                    yield Wire(cls, message)
        except Refused as refused:  # a kept stream dropped before this client read its end
            raise ConnectError(connect_code(refused.code), refused.message) from None
        finally:
            self.end_call(call)

    async def start_call(
        self,
        request: bytes,
        headers: Mapping[str, str] | None = None,
        client_timeout: float | None = None,
        *,
        resume: bool = False,
    ) -> Call:
        """ModelServer.start_call (resume_call with `resume`), with a refusal as a ConnectError;
        the call is aborted at once while the server stops."""
        server = self.server
        try:
            if resume:
                call = await server.resume_call(request, client_timeout)
            else:
                call = await server.start_call(request, headers, client_timeout)
        except Refused as refused:
            raise ConnectError(connect_code(refused.code), refused.message) from None
        self.calls.add(call)
        if self.stopping:
            call.events.cancel("the server is shutting down")
        return call

    def end_call(self, call: Call) -> None:
        self.calls.discard(call)
        self.server.end_call(call)

    async def list_models(self, request: Request, ctx: RequestContext[Any, Any]) -> Wire:
        """ModelService.ListModels: the catalog, or one provider's part of it."""
        asked = _parsed(ListModelsRequest, await self.decoded(request))
        listed = ListModelsResponse(models=self.server.catalog(asked.provider))
        return Wire(service_pb2.ListModelsResponse, encode(listed))

    async def get_model(self, request: Request, ctx: RequestContext[Any, Any]) -> Wire:
        """ModelService.GetModel: one model, or NOT_FOUND naming what is served."""
        asked = _parsed(GetModelRequest, await self.decoded(request))
        try:
            found = self.server.find(asked.provider, asked.id)
        except KeyError as error:
            raise ConnectError(Code.NOT_FOUND, error.args[0]) from None
        return Wire(service_pb2.GetModelResponse, encode(GetModelResponse(model=found.info)))


# What SSE answers with too: no cache, and proxies such as nginx pass each message on at once.
UNBUFFERED = (("cache-control", "no-cache"), ("x-accel-buffering", "no"))


def _unbuffered(ctx: RequestContext[Any, Any]) -> None:
    """Tell proxies to pass a streaming answer on as it comes (its response headers)."""
    for key, value in UNBUFFERED:
        ctx.response_headers[key] = value


def _parsed(cls: type[M], data: bytes) -> M:
    """A unary request checked by the schema's rules, as the gRPC server checks it."""
    try:
        upb = parse(cls, data)
        check(upb)
    except (DecodeError, ValidationError) as error:
        raise ConnectError(Code.INVALID_ARGUMENT, str(error)) from None
    return from_upb(upb, cls)


class ConnectApp(ConnectASGIApplication[Any]):
    """connectrpc's ASGI application of one service's endpoints (Connect, gRPC-web and, on an
    ASGI server with trailers, gRPC), with our codecs: messages travel as the gRPC server's bytes."""

    def __init__(
        self,
        endpoints: Mapping[str, Any],
        *,
        read_max_bytes: int,
        interceptors: Iterable[Any] = (),
        defer_json: bool = False,
    ) -> None:
        super().__init__(
            service=None,
            endpoints=lambda _: endpoints,
            interceptors=interceptors,
            read_max_bytes=read_max_bytes,
            codecs=[ServerProtoCodec(), ServerJsonCodec(deferred=defer_json)],
        )

    @property
    def path(self) -> str:
        return f"/{SERVICE}"
