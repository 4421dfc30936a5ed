"""Codecs between connectrpc and our wire: messages travel as the bytes the gRPC server sends.

The gRPC server never builds a message object to send: an event is serialized once, a batch is
put together from serialized events. These codecs let connectrpc carry the same bytes. A message
is a `Wire`, the bytes of one message of a known type: the proto codec sends them as they are,
and the JSON codec writes them as ProtoJSON. Requests are read into the bytes of their message
(ProtoJSON parsed and serialized), so the server checks them exactly as it checks a gRPC
request, with the same limits and the same errors.
"""

from __future__ import annotations

from dataclasses import dataclass

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from google.protobuf import json_format
from google.protobuf.message import Message as UpbMessage

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


def from_proto_json(data: bytes | bytearray, cls: type[UpbMessage]) -> bytes:
    """The bytes of the message a ProtoJSON text holds; unknown fields are ignored, as Connect's
    JSON codecs do, so a newer client's fields are no error. Raises ConnectError (INVALID_ARGUMENT)."""
    upb = cls()
    try:
        json_format.Parse(bytes(data), upb, ignore_unknown_fields=True)
    except (json_format.ParseError, UnicodeDecodeError) as error:
        raise ConnectError(
            Code.INVALID_ARGUMENT, f"cannot decode {cls.DESCRIPTOR.name} from ProtoJSON: {error}"
        ) from None
    return upb.SerializeToString()


class ServerProtoCodec:
    """The server's proto codec: a request is its bytes, a response a Wire sent as it is."""

    def name(self) -> str:
        return PROTO

    def encode(self, message: Wire) -> bytes:
        return message.data

    def decode(self, data: bytes | bytearray, message_class: type[UpbMessage]) -> bytes:
        return bytes(data)


class ServerJsonCodec:
    """The server's JSON codec: a request is the bytes of the message its ProtoJSON holds, a
    response a Wire written as ProtoJSON."""

    def name(self) -> str:
        return JSON

    def encode(self, message: Wire) -> bytes:
        return to_proto_json(message)

    def decode(self, data: bytes | bytearray, message_class: type[UpbMessage]) -> bytes:
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
