"""The reference server of the conformance corpus over gRPC.

The reference server plays the server side of its client cases, so every client in every language
meets the same misbehaving server; `python -m tests.conformance.server DIR` runs it over gRPC and
HTTP. A client names the case it runs in the metadata `pi-conformance-case`.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator

import grpc

from pi_proto._gen.pb2.pi.ai.v1.service_pb2 import (
    CancelRequest,
    CancelResponse,
    ResumeRequest,
    StreamBatchedView,
    StreamRequest,
)
from pi_proto._gen.pb2.pi.conformance.v1.conformance_pb2 import (
    Case,
    ClientCase,
    Metadata,
    ServerAction,
    Status,
)
from pi_proto.grpc.methods import SERVICE
from pi_proto.grpc.requests import Refused

from .corpus import client_request

CASE_HEADER = "pi-conformance-case"
# What a server does for an action other than sending a message: headers, a pause, the status.
Act = Callable[[ServerAction], Awaitable[None]]


def metadata_pairs(metadata: Metadata) -> Iterator[tuple[str, str | bytes]]:
    """The entries of a Metadata message as gRPC metadata; `-bin` values are decoded from base64."""
    for key, value in sorted(metadata.entries.items()):
        yield key, base64.b64decode(value) if key.endswith("-bin") else value


class ConformanceServer:
    """A grpc.aio server of pi.ai.v1.ModelService that plays the server side of client cases.

    It answers NOT_FOUND for a call that names no known case, and INVALID_ARGUMENT when the
    request differs from the one the case expects, so an executor that builds its calls wrong fails.
    """

    def __init__(self, cases: list[Case], *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.cases = {case.name: case.client for case in cases if case.WhichOneof("kind") == "client"}
        self.host = host
        self.port = port
        self._server = grpc.aio.server()
        methods: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
            "Stream": grpc.unary_stream_rpc_method_handler(self._stream),
            "StreamBatched": grpc.unary_stream_rpc_method_handler(self._stream_batched),
            "Resume": grpc.unary_stream_rpc_method_handler(self._resume),
            "Cancel": grpc.unary_unary_rpc_method_handler(self._cancel),
        }
        self._server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, methods),))

    @property
    def target(self) -> str:
        """The address clients dial."""
        return f"{self.host}:{self.port}"

    async def start(self) -> str:
        """Bind and start serving; return the target."""
        self.port = self._server.add_insecure_port(f"{self.host}:{self.port}")
        await self._server.start()
        return self.target

    async def stop(self, grace: float = 1.0) -> None:
        """Stop serving."""
        await self._server.stop(grace)

    async def __aenter__(self) -> ConformanceServer:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    async def _stream(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
        """Stream: each event, and each frame, is a message of its own."""
        case = await self._case(data, context)
        async for message in played(case.server, batched=False, act=lambda action: _act(action, context)):
            yield message

    async def _resume(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
        """Resume: the actions of the case's resumption after the event the client names."""
        try:
            actions = find_resumption(self.cases, _case_name(context), data)
        except Refused as refusal:
            await context.abort(grpc.StatusCode[refusal.code], refusal.message)
        async for message in played(actions, batched=False, act=lambda action: _act(action, context)):
            yield message

    async def _cancel(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        """Cancel: accepted for the stream id of the case the call names."""
        try:
            return cancelled(self.cases, _case_name(context), data)
        except Refused as refusal:
            await context.abort(grpc.StatusCode[refusal.code], refusal.message)
        raise AssertionError("abort raises")

    async def _stream_batched(
        self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> AsyncIterator[bytes]:
        """StreamBatched: see played()."""
        case = await self._case(data, context)
        async for message in played(case.server, batched=True, act=lambda action: _act(action, context)):
            yield message

    async def _case(self, data: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> ClientCase:
        """The case the call names, its request checked; the call is aborted when either is wrong."""
        try:
            return find_case(self.cases, _case_name(context), data)
        except Refused as refusal:
            await context.abort(grpc.StatusCode[refusal.code], refusal.message)
        raise AssertionError("abort raises")


def _case_name(context: grpc.aio.ServicerContext[bytes, bytes]) -> str:
    name = dict(context.invocation_metadata() or ()).get(CASE_HEADER, "")
    return name if isinstance(name, str) else name.decode()


def _named(cases: dict[str, ClientCase], name: str) -> ClientCase:
    case = cases.get(name)
    if case is None:
        raise Refused("NOT_FOUND", f"no client case named {name!r} in this corpus")
    return case


def _stream_id(case: ClientCase) -> str:
    """The stream id the case's start event gives; empty when it gives none."""
    first = case.server[0] if case.server else ServerAction()
    return first.event.start.stream_id if first.WhichOneof("action") == "event" else ""


def find_resumption(cases: dict[str, ClientCase], name: str, request: bytes) -> list[ServerAction]:
    """What the server of client case `name` does for a Resume; raises Refused: NOT_FOUND for an
    unknown case, FAILED_PRECONDITION for another stream or an event number the case does not
    resume after, whatever the protocol."""
    case = _named(cases, name)
    resume = ResumeRequest.FromString(request)
    if not _stream_id(case) or resume.stream_id != _stream_id(case):
        raise Refused("FAILED_PRECONDITION", f"case {name!r} has no stream {resume.stream_id!r} to resume")
    for resumption in case.resumptions:
        if resumption.after_seq == resume.after_seq:
            return list(resumption.server)
    expected = ", ".join(str(resumption.after_seq) for resumption in case.resumptions) or "nowhere"
    raise Refused("FAILED_PRECONDITION", f"case {name!r} resumes after {expected}, not after {resume.after_seq}")


def cancelled(cases: dict[str, ClientCase], name: str, request: bytes) -> bytes:
    """The answer to a Cancel of client case `name`'s stream; raises Refused (NOT_FOUND) for
    another stream."""
    if CancelRequest.FromString(request).stream_id != _stream_id(_named(cases, name)) or not _stream_id(
        _named(cases, name)
    ):
        raise Refused("NOT_FOUND", f"case {name!r} keeps no such stream")
    return CancelResponse(cancelled=True).SerializeToString()


def find_case(cases: dict[str, ClientCase], name: str, request: bytes) -> ClientCase:
    """The client case `name`, when `request` is the request it expects; raises Refused with
    NOT_FOUND for an unknown case and INVALID_ARGUMENT for another request, whatever the protocol."""
    case = _named(cases, name)
    if StreamRequest.FromString(request) != client_request(case):
        raise Refused("INVALID_ARGUMENT", f"the request differs from case {name!r}'s")
    return case


async def played(actions: Iterable[ServerAction], *, batched: bool, act: Act) -> AsyncIterator[bytes]:
    """The messages a client case's `actions` send, in order, whatever the protocol; `act`
    performs every other action (headers, a pause, the status) when its turn comes.

    Unbatched (Stream), each event and each frame is a message of its own. Batched
    (StreamBatched), consecutive events and frames share one StreamBatchedResponse, a frame as one
    event's bytes, and any other action sends the batch so far first: so a client that loses the
    good events in front of a bad one fails the case. A `batch` action is one StreamBatched
    message as it is; unbatched, it ends the call with FAILED_PRECONDITION.
    """
    batch: list[bytes] = []
    for action in actions:
        step = action.WhichOneof("action")
        if step == "batch" and not batched:
            unbatched = Status(code="FAILED_PRECONDITION", message="this case's server sends StreamBatched messages")
            await act(ServerAction(status=unbatched))
            return
        if step in ("event", "frame"):
            message = action.event.SerializeToString() if step == "event" else action.frame
            if not batched:
                yield message
                continue
            batch.append(message)
            continue
        if batch:
            yield StreamBatchedView(events=batch).SerializeToString()
            batch.clear()
        if step == "batch":
            yield action.batch
            continue
        await act(action)
    if batch:
        yield StreamBatchedView(events=batch).SerializeToString()


async def _act(action: ServerAction, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
    """A server action other than sending an event: headers, a pause, or the status."""
    step = action.WhichOneof("action")
    if step == "headers":
        await context.send_initial_metadata(tuple(metadata_pairs(action.headers)))
    elif step == "sleep_ms":
        await asyncio.sleep(action.sleep_ms / 1000)
    elif step == "status":
        status = action.status
        context.set_trailing_metadata(tuple(metadata_pairs(status.trailers)))
        await context.abort(grpc.StatusCode[status.code], status.message)
