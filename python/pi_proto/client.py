"""The gRPC client: streams of ModelEvents whose iteration never raises."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import grpc

from ._gen.types.pi.ai.v1 import AgentContext, GenerationOptions, ModelEvent, StopReason, StreamRequest
from .accumulator import StreamProtocolError
from .server import STREAM_METHOD
from .stream import AssistantMessageEventStream
from .wire import DecodeError, EncodeError, decode, encode

Metadata = Sequence[tuple[str, str | bytes]]


class ModelCallStream(AssistantMessageEventStream):
    """The events of one call, plus the response metadata the server sent with them."""

    def __init__(self) -> None:
        super().__init__()
        self.initial_metadata: Metadata = ()
        self.trailing_metadata: Metadata = ()


class ModelClient:
    """A client of pi.ai.v1.ModelService at `target` (host:port).

    Every failure becomes the stream's `error` event, carrying everything received before it: a
    non-OK status or transport failure is ERROR with the status message; a stream that closes
    without a terminal event is ERROR "stream ended without a terminal event"; an event that
    breaks the stream rules is ERROR naming the event and the rule; `cancel()` on the returned
    stream is ABORTED. With `root_certificates` (PEM) the channel uses TLS; with `token` every
    call carries `authorization: Bearer <token>`.
    """

    def __init__(
        self,
        target: str,
        *,
        root_certificates: bytes | None = None,
        token: str | None = None,
        max_receive_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self.target = target
        options = [("grpc.max_receive_message_length", max_receive_bytes)]
        if root_certificates is None:
            self._channel = grpc.aio.insecure_channel(target, options=options)
        else:
            credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            self._channel = grpc.aio.secure_channel(target, credentials, options=options)
        self._authorization: Metadata = () if token is None else (("authorization", f"Bearer {token}"),)
        self._stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = self._channel.unary_stream(STREAM_METHOD)

    async def close(self) -> None:
        """Close the channel; streams still open end with an ERROR event."""
        await self._channel.close()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def stream(
        self,
        context: AgentContext,
        *,
        model: str = "",
        options: GenerationOptions | None = None,
        timeout: float | None = None,
        metadata: Metadata = (),
    ) -> ModelCallStream:
        """Start one model call; the events arrive with `partial` rebuilt."""
        events = ModelCallStream()
        try:
            request = encode(StreamRequest(model=model, context=context, options=options))
        except EncodeError as error:
            events.fail(StopReason.ERROR, f"invalid request: {error}")
            return events
        events.drive(self._receive(events, request, timeout, (*self._authorization, *metadata)))
        return events

    async def _receive(
        self, events: ModelCallStream, request: bytes, timeout: float | None, metadata: Metadata
    ) -> None:
        call = self._stream(request, timeout=timeout, metadata=metadata)
        received = 0
        try:
            events.initial_metadata = tuple(await call.initial_metadata() or ())
            async for data in call:
                received += 1
                await events.send(decode(ModelEvent, data))  # waits while the consumer is behind
                if events.done:
                    # Anything after the terminal event is ignored; the trailers follow at once.
                    with contextlib.suppress(asyncio.TimeoutError, grpc.aio.AioRpcError):
                        events.trailing_metadata = tuple(await asyncio.wait_for(call.trailing_metadata(), 1.0) or ())
                    return
        except grpc.aio.AioRpcError as error:
            events.fail(StopReason.ERROR, error.details() or error.code().name)
        except DecodeError as error:
            events.fail(StopReason.ERROR, f"event {received - 1}: {error}")
        except StreamProtocolError as error:
            events.fail(StopReason.ERROR, str(error))
        finally:
            call.cancel()
