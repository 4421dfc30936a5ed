"""The reference server of the conformance corpus over HTTP: client cases over Connect and gRPC-web.

`python -m tests.conformance.server DIR` serves it beside the gRPC one. A client names its
case in the header `pi-conformance-case`, as over gRPC, and the server plays the same actions
(conformance.played): events and frames as messages, headers as response headers, pauses, and
the status as the protocol's error with the case's trailers. Frames are bytes, so the cases that
send malformed ones mean what they say with the proto codec only.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from connectrpc.server import Endpoint
from google.protobuf.message import Message as UpbMessage

from pi_proto._gen.pb2.pi.ai.v1 import event_pb2, service_pb2
from pi_proto._gen.pb2.pi.conformance.v1.conformance_pb2 import Case, ServerAction
from pi_proto.grpc.requests import Refused
from pi_proto.web.codec import Wire, connect_code
from pi_proto.web.server import AsgiServer
from pi_proto.web.service import CANCEL, RESUME, STREAM, STREAM_BATCHED, ConnectApp, path_of

from .reference import CASE_HEADER, cancelled, find_case, find_resumption, played

MAX_REQUEST_BYTES = 16 * 1024 * 1024


class HttpConformanceServer(AsgiServer):
    """An HTTP server of pi.ai.v1.ModelService (Stream and StreamBatched) that plays client cases."""

    def __init__(self, cases: list[Case], *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.cases = {case.name: case.client for case in cases if case.WhichOneof("kind") == "client"}
        endpoints = {
            path_of(STREAM): Endpoint.server_stream(STREAM, self._stream),
            path_of(STREAM_BATCHED): Endpoint.server_stream(STREAM_BATCHED, self._stream_batched),
            path_of(RESUME): Endpoint.server_stream(RESUME, self._resume),
            path_of(CANCEL): Endpoint.unary(CANCEL, self._cancel),
        }
        super().__init__(ConnectApp(endpoints, read_max_bytes=MAX_REQUEST_BYTES), host=host, port=port)

    def _stream(self, request: bytes, ctx: RequestContext[Any, Any]) -> AsyncIterator[Wire]:
        return self._play(request, ctx, event_pb2.ModelEvent, batched=False)

    def _stream_batched(self, request: bytes, ctx: RequestContext[Any, Any]) -> AsyncIterator[Wire]:
        return self._play(request, ctx, service_pb2.StreamBatchedResponse, batched=True)

    def _resume(self, request: bytes, ctx: RequestContext[Any, Any]) -> AsyncIterator[Wire]:
        return self._play(request, ctx, event_pb2.ModelEvent, batched=False, resume=True)

    async def _cancel(self, request: bytes, ctx: RequestContext[Any, Any]) -> Wire:
        try:
            return Wire(
                service_pb2.CancelResponse, cancelled(self.cases, ctx.request_headers.get(CASE_HEADER, ""), request)
            )
        except Refused as refused:
            raise ConnectError(connect_code(refused.code), refused.message) from None

    async def _play(
        self,
        request: bytes,
        ctx: RequestContext[Any, Any],
        cls: type[UpbMessage],
        *,
        batched: bool,
        resume: bool = False,
    ) -> AsyncIterator[Wire]:
        name = ctx.request_headers.get(CASE_HEADER, "")
        try:
            actions = (
                find_resumption(self.cases, name, request) if resume else find_case(self.cases, name, request).server
            )
        except Refused as refused:
            raise ConnectError(connect_code(refused.code), refused.message) from None

        async def act(action: ServerAction) -> None:
            step = action.WhichOneof("action")
            if step == "headers":
                for key, value in sorted(action.headers.entries.items()):
                    ctx.response_headers.add(key, value)  # a -bin value stays base64, as HTTP sends it
            elif step == "sleep_ms":
                await asyncio.sleep(action.sleep_ms / 1000)
            elif step == "status":
                status = action.status
                for key, value in sorted(status.trailers.entries.items()):
                    ctx.response_trailers.add(key, value)
                raise ConnectError(connect_code(status.code), status.message)

        async for message in played(actions, batched=batched, act=act):
            yield Wire(cls, message)
