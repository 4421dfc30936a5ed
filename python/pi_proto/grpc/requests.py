"""What the server accepts: its limits, the request parsed from untrusted bytes and checked
against them and against the schema's rules, and the refusals it answers otherwise, whatever the
protocol serving it.

The request is validated as the upb message it was parsed into, and converted to the public
types once, after it passed: protovalidate reads upb messages.
"""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass

from .._gen.pb2.pi.ai.v1.service_pb2 import StreamRequest as _UpbStreamRequest
from .._gen.types.pi.ai.v1 import StreamRequest
from ..wire.codec import from_upb, parse
from ..wire.validate import ValidationError, check

MAX_REQUEST_BYTES = 2**31 - 1  # gRPC counts a message's length in a signed 32-bit integer


@dataclass(frozen=True)
class ServerLimits:
    """What one server process accepts; every limit is also a `pi-proto serve` flag."""

    # Streaming calls served at once (ModelService.Stream, health Watch and reflection together);
    # one more is refused with RESOURCE_EXHAUSTED.
    max_concurrent_streams: int = 256
    # Largest request, in bytes; a larger one is refused with RESOURCE_EXHAUSTED by gRPC itself.
    max_request_bytes: int = 16 * 1024 * 1024
    # Most messages in a request's context; more are refused with RESOURCE_EXHAUSTED.
    max_messages: int = 20_000
    # Most content blocks (of all messages) plus tools in a request's context.
    max_blocks: int = 200_000
    # Longest a stream may run, in seconds; then it ends with an ERROR event saying so, and a
    # client that does not read it loses the call a second later.
    stream_timeout: float = 600.0
    # The most bytes of deltas a stream holds for a client that reads slower than the model writes;
    # the model waits beyond it.
    max_queued_bytes: int = 256 * 1024

    def __post_init__(self) -> None:
        for name in ("max_concurrent_streams", "max_request_bytes", "max_messages", "max_blocks", "max_queued_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"ServerLimits.{name} must be 1 or more, not {getattr(self, name)!r}")
        if self.max_request_bytes > MAX_REQUEST_BYTES:
            raise ValueError(f"ServerLimits.max_request_bytes can be at most {MAX_REQUEST_BYTES} (gRPC's)")
        if not 0 < self.stream_timeout < math.inf:  # NaN fails too
            raise ValueError(f"ServerLimits.stream_timeout must be more than 0 seconds, not {self.stream_timeout!r}")


class TooLarge(ValueError):
    """A request beyond one of the server's count limits (answered with RESOURCE_EXHAUSTED)."""


class Refused(Exception):
    """A call refused before its stream starts, whatever the protocol serving it: `code` is the
    gRPC status code name (e.g. "NOT_FOUND"), `message` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class RequestTooLarge(Refused):
    """A request above the server's size or count limits: RESOURCE_EXHAUSTED, which HTTP says as
    413 (a request that cannot succeed as it is), not 429 (one to retry later)."""

    def __init__(self, message: str) -> None:
        super().__init__("RESOURCE_EXHAUSTED", message)


class RequestInvalid(Refused):
    """A request that breaks the schema's rules: INVALID_ARGUMENT, with the rules it breaks."""

    def __init__(self, error: ValidationError) -> None:
        super().__init__("INVALID_ARGUMENT", str(error))
        self.violations = error.violations


def parse_request(data: bytes, limits: ServerLimits | None = None) -> StreamRequest:
    """A request from untrusted bytes; raises DecodeError, TooLarge, or ValidationError naming the bad fields."""
    return checked(parse_counted(data, limits or ServerLimits()))


def parse_counted(data: bytes, limits: ServerLimits) -> _UpbStreamRequest:
    """The request `data` holds, parsed (about 20 ns a byte at worst) and within the count limits."""
    request = typing.cast(_UpbStreamRequest, parse(StreamRequest, data))
    check_counts(request, limits)
    return request


def check_counts(request: _UpbStreamRequest, limits: ServerLimits) -> None:
    """Refuse a context with more messages, or more blocks and tools, than the limits allow.

    Runs before anything walks the request: the number of messages is known without looking at
    them, and the blocks are counted only once the messages are within their limit.
    """
    context = request.context
    if len(context.messages) > limits.max_messages:
        raise TooLarge(
            f"the context has {len(context.messages)} messages, above this server's limit of {limits.max_messages}"
        )
    blocks = len(context.tools)
    for message in context.messages:
        role = message.WhichOneof("role")
        if role in ("user", "assistant", "tool_result"):
            blocks += len(getattr(message, role).content)
        elif role == "system":
            system = message.system
            blocks += len(system.content) + len(system.sections) + len(system.tools_added) + len(system.tools_removed)
    if blocks > limits.max_blocks:
        raise TooLarge(
            f"the context has {blocks} content blocks and tools, above this server's limit of {limits.max_blocks}"
        )


def checked(request: _UpbStreamRequest) -> StreamRequest:
    """The public form of a parsed request that passes every rule; raises ValidationError."""
    check(request)
    return from_upb(request, StreamRequest)
