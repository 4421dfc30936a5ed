"""Binary wire format: strict decoding of untrusted bytes and checked encoding.

Both directions go through the official protobuf runtime (upb). Decoding parses with upb, which
rejects truncated or malformed input, and builds the public betterproto2 objects from the parsed
message directly, so no second pure-Python parse sees hostile bytes. Encoding builds the upb
message from the public object, refusing a oneof with zero or several members set on the way
(betterproto2 does not clear the other members when one is assigned).
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from typing import Any, TypeVar

import betterproto2
from google.protobuf import json_format, unknown_fields
from google.protobuf.message import DecodeError as _UpbDecodeError
from google.protobuf.message import Message as _UpbMessage

from ._gen.pb2.pi.ai.v1 import content_pb2, context_pb2, event_pb2, message_pb2, service_pb2

M = TypeVar("M", bound=betterproto2.Message)

_PB2_MODULES = (content_pb2, message_pb2, context_pb2, event_pb2, service_pb2)


class DecodeError(ValueError):
    """Bytes or ProtoJSON text that do not hold a valid message of the expected type."""


class EncodeError(ValueError):
    """A message that must not reach the wire, with the path of the offending field."""


def encode(message: betterproto2.Message) -> bytes:
    """Serialize a message; raises EncodeError if any oneof has zero or several members set."""
    return to_upb(message).SerializeToString()


def decode(cls: type[M], data: bytes) -> M:
    """Parse untrusted bytes as `cls`; raises DecodeError, never returns a half-filled message."""
    upb = _upb_class(cls)()
    try:
        upb.ParseFromString(data)
    except _UpbDecodeError as error:
        raise DecodeError(f"cannot decode {cls.__name__} from {len(data)} bytes: {error}") from None
    return from_upb(upb, cls)


def decode_json(cls: type[M], text: str | bytes) -> M:
    """Parse untrusted ProtoJSON text as `cls`; raises DecodeError naming what is wrong."""
    upb = _upb_class(cls)()
    try:
        json_format.Parse(text, upb)
    except json_format.ParseError as error:
        raise DecodeError(f"cannot decode {cls.__name__} from ProtoJSON: {error}") from None
    return from_upb(upb, cls)


def to_json(message: betterproto2.Message) -> str:
    """The canonical ProtoJSON of a message, as the official runtime prints it, on one line."""
    return json_format.MessageToJson(to_upb(message), indent=None, ensure_ascii=False)


# --- conversion between the public types and the official classes ---------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    name: str
    number: int
    kind: str  # "scalar", "optional", "enum", "message", "repeated_message"
    cls: Any  # the public class of a message field, or the enum class


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    upb_class: type[_UpbMessage]
    fields: tuple[_Field, ...]
    oneofs: tuple[tuple[str, tuple[str, ...]], ...]


@functools.cache
def _upb_classes() -> dict[str, type[_UpbMessage]]:
    return {name: getattr(module, name) for module in _PB2_MODULES for name in module.DESCRIPTOR.message_types_by_name}


def _upb_class(cls: type[betterproto2.Message]) -> type[_UpbMessage]:
    return _plan(cls).upb_class


@functools.cache
def _plan(cls: type[betterproto2.Message]) -> _Plan:
    try:
        upb_class = _upb_classes()[cls.__name__]
    except KeyError:
        raise TypeError(f"{cls.__name__} is not a pi.ai.v1 message") from None
    hints = cls._type_hints()
    fields = []
    groups: dict[str, list[str]] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        meta = betterproto2.FieldMetadata.get(field)
        if meta.group:
            groups.setdefault(meta.group, []).append(field.name)
        hint = hints[field.name]
        inner = typing.get_args(hint)[0] if meta.repeated or meta.optional or meta.group else hint
        if meta.proto_type == betterproto2.TYPE_MESSAGE:
            kind = "repeated_message" if meta.repeated else "message"
        elif meta.repeated:
            raise TypeError(f"{cls.__name__}.{field.name}: repeated scalars are not supported")
        elif meta.optional:
            kind = "optional"
        elif meta.proto_type == betterproto2.TYPE_ENUM:
            kind = "enum"
        else:
            kind = "scalar"
        fields.append(_Field(field.name, meta.number, kind, inner))
    oneofs = tuple((group, tuple(names)) for group, names in groups.items())
    return _Plan(upb_class, tuple(fields), oneofs)


def to_upb(message: betterproto2.Message, path: str = "") -> _UpbMessage:
    """The official-runtime copy of a public message; raises EncodeError naming the bad field."""
    cls = type(message)
    plan = _plan(cls)
    where = path or cls.__name__
    for group, members in plan.oneofs:
        chosen = [name for name in members if getattr(message, name) is not None]
        if len(chosen) != 1:
            found = ", ".join(chosen) if chosen else "none"
            raise EncodeError(
                f"{where}: oneof '{group}' of {cls.__name__} must have exactly one member set, found {found}"
            )
    kwargs: dict[str, Any] = {}
    for field in plan.fields:
        value = getattr(message, field.name)
        if field.kind == "message":
            if value is not None:
                kwargs[field.name] = to_upb(value, f"{where}.{field.name}")
        elif field.kind == "repeated_message":
            if value:
                kwargs[field.name] = [to_upb(item, f"{where}.{field.name}[{i}]") for i, item in enumerate(value)]
        elif value is not None:
            kwargs[field.name] = value
    try:
        upb = plan.upb_class(**kwargs)
    except (TypeError, ValueError) as error:
        raise EncodeError(_bad_field(plan.upb_class, kwargs, where) or f"{where}: {error}") from None
    extra = message._unknown_fields
    if extra:
        upb.MergeFromString(extra)
    return upb


def _bad_field(upb_class: type[_UpbMessage], kwargs: dict[str, Any], where: str) -> str | None:
    """Name the field upb refused; only called once building the whole message has failed."""
    for name, value in kwargs.items():
        try:
            upb_class(**{name: value})
        except (TypeError, ValueError) as error:
            return f"{where}.{name}: {error} (got {type(value).__name__} {value!r:.40})"
    return None


def from_upb(upb: _UpbMessage, cls: type[M]) -> M:
    """The public copy of an official-runtime message, unknown fields included."""
    values: dict[str, Any] = {}
    for field in _plan(cls).fields:
        kind = field.kind
        if kind == "scalar":
            values[field.name] = getattr(upb, field.name)
        elif kind == "enum":
            values[field.name] = field.cls(getattr(upb, field.name))
        elif kind == "repeated_message":
            values[field.name] = [from_upb(item, field.cls) for item in getattr(upb, field.name)]
        elif upb.HasField(field.name):
            value = getattr(upb, field.name)
            values[field.name] = from_upb(value, field.cls) if kind == "message" else value
        else:
            values[field.name] = None
    message = cls(**values)
    message._unknown_fields = _unknown_bytes(upb)
    return message


def _unknown_bytes(upb: _UpbMessage) -> bytes:
    """Re-encode the fields upb did not recognise, so they survive a decode and encode."""
    found = unknown_fields.UnknownFieldSet(upb)
    out = bytearray()
    for index in range(len(found)):
        item = found[index]
        _put_unknown(out, item.field_number, item.wire_type, item.data)
    return bytes(out)


def _put_unknown(out: bytearray, number: int, wire_type: int, data: Any) -> None:
    _put_varint(out, number << 3 | wire_type)
    if wire_type == 0:
        _put_varint(out, data)
    elif wire_type == 1:
        out += int(data).to_bytes(8, "little")
    elif wire_type == 5:
        out += int(data).to_bytes(4, "little")
    elif wire_type == 2:
        _put_varint(out, len(data))
        out += data
    else:  # 3: a group, whose members are themselves unknown fields, closed by an end tag (4)
        for item in data:
            _put_unknown(out, item.field_number, item.wire_type, item.data)
        _put_varint(out, number << 3 | 4)


def _put_varint(out: bytearray, value: int) -> None:
    value &= (1 << 64) - 1
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
