"""gRPC-web's text form, which browser clients of grpc-web use by default (`mode=grpcwebtext`):
the same frames as its binary form, base64-encoded in both directions.

The middleware decodes a request's body and hands the application the binary form
(`application/grpc-web+proto`), then encodes each chunk of the answer on its own, padded, as the
grpc-web clients read it (four characters at a time), under `application/grpc-web-text+proto`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import quote

from ..grpc.gate import Gate
from ..grpc.requests import ServerLimits
from .sse import App, Receive, Scope, Send, TooLargeBody, read_body

TEXT_TYPES = (b"application/grpc-web-text", b"application/grpc-web-text+proto")
BINARY_TYPE = b"application/grpc-web+proto"
TEXT_TYPE = b"application/grpc-web-text+proto"


class GrpcWebText:
    """ASGI middleware: `app` also answers gRPC-web's text form, whose body it must read whole to
    decode. So the gate's token is checked first, before any of it is read (UNAUTHENTICATED), and
    the body is read within the request size limit, at once when it says its length
    (RESOURCE_EXHAUSTED), and within the stream timeout (DEADLINE_EXCEEDED); one that is not
    base64 is INVALID_ARGUMENT. Each answer has gRPC-web's status headers."""

    def __init__(self, app: App, limits: ServerLimits, gate: Gate) -> None:
        self.app = app
        self.limits = limits
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = scope.get("headers", ()) if scope["type"] == "http" else ()
        if not any(key == b"content-type" and value.split(b";")[0].strip() in TEXT_TYPES for key, value in headers):
            await self.app(scope, receive, send)
            return
        refusal = self.gate.refuse_credentials([(key.decode("latin-1"), value) for key, value in headers])
        if refusal is not None:
            await _status(send, 16, refusal)
            return
        limits = self.limits
        try:
            async with asyncio.timeout(limits.stream_timeout):
                encoded = await read_body(scope, receive, limits.max_request_bytes * 4 // 3 + 4)
        except TooLargeBody:
            await _status(send, 8, f"the request has more than this server's limit of {limits.max_request_bytes} bytes")
            return
        except TimeoutError:
            message = f"the request took longer to arrive than the server's limit of {limits.stream_timeout:g} s"
            await _status(send, 4, message)
            return
        if encoded is None:
            return  # the client went away
        try:
            body = base64.b64decode(encoded, validate=True)
        except binascii.Error as error:
            await _status(send, 3, f"the grpc-web-text body is not base64: {error}")
            return
        binary = [(key, value) for key, value in headers if key not in (b"content-type", b"content-length")]
        binary.append((b"content-type", BINARY_TYPE))
        delivered = False

        async def receive_decoded() -> MutableMapping[str, Any]:
            nonlocal delivered
            if delivered:
                return await receive()  # what follows the body: a disconnect
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send_encoded(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                kept = [(key, value) for key, value in message.get("headers", ()) if key != b"content-length"]
                kept = [(key, TEXT_TYPE if value == BINARY_TYPE else value) for key, value in kept]
                message = {**message, "headers": kept}
            elif message["type"] == "http.response.body" and message.get("body"):
                message = {**message, "body": base64.b64encode(message["body"])}
            await send(message)

        await self.app({**scope, "headers": binary}, receive_decoded, send_encoded)


async def _status(send: Send, code: int, message: str) -> None:
    """A gRPC-web answer of only its status (`grpc-status`, `grpc-message` percent-encoded)."""
    headers = [
        (b"content-type", TEXT_TYPE),
        (b"grpc-status", str(code).encode()),
        (b"grpc-message", quote(message, safe=" ").encode()),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b""})
