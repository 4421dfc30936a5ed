"""The server's gate: the bearer token and the limit on concurrent streams, for every method.

It is a grpc.aio interceptor, so ModelService, health `Watch` and reflection all pass through
it. Every streaming call takes a slot of `max_streams` while it runs (one more is refused with
RESOURCE_EXHAUSTED), but for the methods it is told take their slots themselves: ModelService's
streams, whose slot is their model's (see ModelServer.start_call). With a token, every call but
the health service's must carry exactly one `authorization: Bearer <token>` header (scheme
case-insensitive, RFC 7235), compared in constant time and never logged. The token can be
replaced while the server runs (set_token).
"""

from __future__ import annotations

import hmac
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias

import grpc

OPEN_SERVICE = "/grpc.health.v1.Health/"  # load balancers probe it without credentials
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"


class Gate(grpc.aio.ServerInterceptor):
    """Checks the token and counts streaming calls; see the module's docstring."""

    def __init__(self, *, max_streams: int, token: str | None, uncounted: frozenset[str] = frozenset()) -> None:
        self.max_streams = max_streams
        self.streams = 0  # slots taken now
        self.uncounted = uncounted  # streaming methods that take their slots themselves
        self._token = None if token is None else token.encode()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        refusal = None
        if not handler_call_details.method.startswith(OPEN_SERVICE):
            refusal = self.refuse_credentials(handler_call_details.invocation_metadata or ())
        if refusal is not None:
            return _replace(handler, _refused(grpc.StatusCode.UNAUTHENTICATED, refusal))
        if not handler.response_streaming or handler_call_details.method in self.uncounted:
            return handler
        return _replace(handler, self._counted(_behaviour(handler)))

    def set_token(self, token: str) -> None:
        """Require `token` from now on (SIGHUP's reload): every protocol checks it here, at each
        call's start, so calls already admitted run on."""
        self._token = token.encode()

    def refuse_credentials(self, metadata: Any) -> str | None:
        """Why a call with these (key, value) headers is refused, or None when it may pass (always,
        without a token). The HTTP protocols use it too, so every protocol has the same rules."""
        if self._token is None:
            return None
        values = [value for key, value in metadata if key == "authorization"]
        if len(values) != 1:
            return "missing or invalid bearer token" if not values else "more than one authorization header"
        value = values[0] if isinstance(values[0], bytes) else values[0].encode()
        scheme, _, token = value.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(token.strip(b" "), self._token or b""):
            return "missing or invalid bearer token"
        return None

    def take_slot(self) -> str | None:
        """Take one of the concurrent-stream slots, or say why not (all taken). Every protocol of
        the process counts here; give the slot back with release_slot()."""
        if self.streams >= self.max_streams:
            return f"too many concurrent streams: this server serves {self.max_streams} at once"
        self.streams += 1
        return None

    def release_slot(self) -> None:
        self.streams -= 1

    def _counted(self, behaviour: Callable[..., Any]) -> Callable[..., Any]:
        """The behaviour of a streaming method, holding a slot while it runs."""
        if inspect.isasyncgenfunction(behaviour):

            async def generate(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
                if (full := self.take_slot()) is not None:
                    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, full)
                try:
                    async for response in behaviour(request, context):
                        yield response
                finally:
                    self.release_slot()

            return generate

        async def run(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            if (full := self.take_slot()) is not None:
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, full)
            try:
                return await behaviour(request, context)
            finally:
                self.release_slot()

        return run


_KINDS = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")


def _behaviour(handler: Handler) -> Callable[..., Any]:
    behaviour: Callable[..., Any] = next(getattr(handler, kind) for kind in _KINDS if getattr(handler, kind))
    return behaviour


def _replace(handler: Handler, behaviour: Callable[..., Any]) -> Handler:
    """The handler with its behaviour replaced, of the same kind."""
    kind = next(kind for kind in _KINDS if getattr(handler, kind) is not None)
    replaced: Handler = handler._replace(**{kind: behaviour})  # type: ignore[attr-defined]
    return replaced


def _refused(code: grpc.StatusCode, message: str) -> Callable[..., Any]:
    async def refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await context.abort(code, message)

    return refuse
