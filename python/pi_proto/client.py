"""The gRPC client: streams of ModelEvents whose iteration never raises."""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from ._gen.types.pi.ai.v1 import AgentContext, GenerationOptions, ModelEvent, StopReason, StreamRequest
from .accumulator import StreamProtocolError
from .server import STREAM_METHOD
from .stream import AssistantMessageEventStream
from .wire import DecodeError, EncodeError, decode, encode

Metadata = Sequence[tuple[str, str]]


class ModelClient:
    """A client of pi.ai.v1.ModelService at `target` (host:port).

    Every failure becomes the stream's `error` event, carrying everything received before it: a
    non-OK status or transport failure is ERROR with the status message; a stream that closes
    without a terminal event is ERROR "stream ended without a terminal event"; `cancel()` on the
    returned stream is ABORTED.
    """

    def __init__(self, target: str, *, credentials: grpc.ChannelCredentials | None = None) -> None:
        self.target = target
        if credentials is None:
            self._channel = grpc.aio.insecure_channel(target)
        else:
            self._channel = grpc.aio.secure_channel(target, credentials)
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
        metadata: Metadata | None = None,
    ) -> AssistantMessageEventStream:
        """Start one model call; the events arrive with `partial` rebuilt."""
        events = AssistantMessageEventStream()
        try:
            request = encode(StreamRequest(model=model, context=context, options=options))
        except EncodeError as error:
            events.fail(StopReason.ERROR, f"invalid request: {error}")
            return events
        events.drive(self._receive(events, request, timeout, metadata))
        return events

    async def _receive(
        self,
        events: AssistantMessageEventStream,
        request: bytes,
        timeout: float | None,
        metadata: Metadata | None,
    ) -> None:
        call = self._stream(request, timeout=timeout, metadata=metadata)
        received = 0
        try:
            async for data in call:
                received += 1
                events.push(decode(ModelEvent, data))
                if events.done:
                    return  # anything the server might send after the terminal event is ignored
        except grpc.aio.AioRpcError as error:
            events.fail(StopReason.ERROR, error.details() or error.code().name)
        except DecodeError as error:
            events.fail(StopReason.ERROR, f"event {received - 1}: {error}")
        except StreamProtocolError as error:
            events.fail(StopReason.ERROR, str(error))
        finally:
            call.cancel()
