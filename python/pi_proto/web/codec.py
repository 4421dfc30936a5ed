"""Codecs between connectrpc and our wire: messages travel as the bytes the gRPC server sends.

The gRPC server never builds a message object to send: an event is serialized once, a batch is
put together from serialized events. These codecs let connectrpc carry the same bytes. A message
is a `Wire`, the bytes of one message of a known type: the proto codec sends them as they are,
and the JSON codec writes them as ProtoJSON. Requests are read into the bytes of their message
(ProtoJSON parsed and serialized), so the server checks them exactly as it checks a gRPC
request, with the same limits and the same errors. connectrpc decodes a request in the event
loop, so ModelService's JSON codec leaves it a `JsonRequest`, which the endpoint decodes in a
worker thread when it is large, after counting its messages and blocks (json_counts).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from google.protobuf import json_format
from google.protobuf.message import Message as UpbMessage

from ..grpc.requests import RequestTooLarge, ServerLimits

PROTO, JSON = "proto", "json"


@dataclass(frozen=True, slots=True)
class Wire:
    """The serialized bytes of one message of type `cls` (an official protobuf class)."""

    cls: type[UpbMessage]
    data: bytes


def to_proto_json(message: Wire) -> bytes:
    """A message's ProtoJSON, on one line, as the official runtime prints it."""
    upb = message.cls.FromString(message.data)
    return json_format.MessageToJson(upb, indent=None, ensure_ascii=False).encode()


@dataclass(frozen=True, slots=True)
class JsonRequest:
    """A request's ProtoJSON as it arrived, for the endpoint to decode (from_proto_json)."""

    text: bytes
    cls: type[UpbMessage]


def from_proto_json(data: bytes | bytearray, cls: type[UpbMessage], limits: ServerLimits | None = None) -> bytes:
    """The bytes of the message a ProtoJSON text holds; unknown fields are ignored, as Connect's
    JSON codecs do, so a newer client's fields are no error. A StreamRequest's context is counted
    against `limits` before it is converted. Raises ConnectError (INVALID_ARGUMENT, or
    RESOURCE_EXHAUSTED above a count limit)."""
    upb = cls()
    try:
        value = json.loads(data)
        if limits is not None and isinstance(value, dict) and isinstance(context := value.get("context"), dict):
            json_counts(context.get("messages"), context.get("tools"), limits)
        json_format.ParseDict(value, upb, ignore_unknown_fields=True)
    except RequestTooLarge as error:
        raise ConnectError(Code.RESOURCE_EXHAUSTED, error.message) from None
    except RecursionError:
        raise ConnectError(Code.INVALID_ARGUMENT, "the body holds JSON nested too deeply to read") from None
    except (json_format.ParseError, ValueError) as error:  # UnicodeDecodeError and JSON's errors are ValueErrors
        raise ConnectError(
            Code.INVALID_ARGUMENT, f"cannot decode {cls.DESCRIPTOR.name} from ProtoJSON: {error}"
        ) from None
    return upb.SerializeToString()


def json_counts(messages: Any, tools: Any, limits: ServerLimits) -> None:
    """Refuse a context, still JSON (ProtoJSON or pi-JSON), with more messages, or more blocks and
    tools, than `limits` allow, before anything converts it: the same limits and words as the
    server's check of a parsed request (server.check_counts), which still runs after."""
    messages = messages if isinstance(messages, list) else []
    if len(messages) > limits.max_messages:
        raise RequestTooLarge(
            f"the context has {len(messages)} messages, above this server's limit of {limits.max_messages}"
        )
    blocks = len(tools) if isinstance(tools, list) else 0
    for message in messages:
        if isinstance(message, Mapping):
            # pi-JSON has `content` on the message; ProtoJSON on its role's member.
            blocks += sum(_content_count(member) for member in (message, *message.values()))
    if blocks > limits.max_blocks:
        raise RequestTooLarge(
            f"the context has {blocks} content blocks and tools, above this server's limit of {limits.max_blocks}"
        )


def _content_count(value: Any) -> int:
    content = value.get("content") if isinstance(value, Mapping) else None
    return len(content) if isinstance(content, list) else 0


class ServerProtoCodec:
    """The server's proto codec: a request is its bytes, a response a Wire sent as it is."""

    def name(self) -> str:
        return PROTO

    def encode(self, message: Wire) -> bytes:
        return message.data

    def decode(self, data: bytes | bytearray, message_class: type[UpbMessage]) -> bytes:
        return bytes(data)


class ServerJsonCodec:
    """The server's JSON codec: a request is the bytes of the message its ProtoJSON holds (or,
    `deferred`, a JsonRequest for the endpoint to decode), a response a Wire written as ProtoJSON."""

    def __init__(self, *, deferred: bool = False) -> None:
        self._deferred = deferred

    def name(self) -> str:
        return JSON

    def encode(self, message: Wire) -> bytes:
        return to_proto_json(message)

    def decode(self, data: bytes | bytearray, message_class: type[UpbMessage]) -> bytes | JsonRequest:
        if self._deferred:
            return JsonRequest(bytes(data), message_class)
        return from_proto_json(data, message_class)


class ClientCodec:
    """A client's codec: a request is a Wire, and a response stays the data that arrived (its bytes
    or its ProtoJSON), so the client decodes each event itself and a bad one breaks the stream's
    rule `event-decode` instead of the call."""

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name

    def encode(self, message: Wire) -> bytes:
        return message.data if self._name == PROTO else to_proto_json(message)

    def decode(self, data: bytes | bytearray, message_class: type[UpbMessage]) -> bytes:
        return bytes(data)


# gRPC status code names by Connect code, and back; Connect spells CANCELLED with one L.
GRPC_NAMES = {code: "CANCELLED" if code is Code.CANCELED else code.name for code in Code}
CONNECT_CODES = {name: code for code, name in GRPC_NAMES.items()}


def connect_code(grpc_name: str) -> Code:
    """The Connect code of a gRPC status code name (UNKNOWN for a name that is none)."""
    return CONNECT_CODES.get(grpc_name, Code.UNKNOWN)
