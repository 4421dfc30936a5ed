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
#
# Both directions run once per message on the streaming path, so each class gets a plan, built
# once: which fields are plain scalars, enums, messages or lists of messages, and which oneofs
# exist. Public objects are built without the dataclass __init__ (which would set every field to
# its default first), and a oneof converts only the member upb says is set.

SCALAR, OPTIONAL, ENUM, MESSAGE, REPEATED = "scalar", "optional", "enum", "message", "repeated"


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    upb_class: type[_UpbMessage]
    fields: tuple[tuple[str, str, Any], ...]  # (name, kind, public message class or enum)
    oneofs: tuple[tuple[str, dict[str, tuple[str, Any]]], ...]  # (group, {member: (kind, class)})
    template: dict[str, Any]  # the attributes of a default instance (no lists: those are always set)


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
    fields: list[tuple[str, str, Any]] = []
    oneofs: dict[str, dict[str, tuple[str, Any]]] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        meta = betterproto2.FieldMetadata.get(field)
        hint = hints[field.name]
        inner = typing.get_args(hint)[0] if meta.repeated or meta.optional or meta.group else hint
        if meta.repeated and meta.proto_type != betterproto2.TYPE_MESSAGE:
            raise TypeError(f"{cls.__name__}.{field.name}: repeated scalars are not supported")
        if meta.optional and meta.proto_type == betterproto2.TYPE_ENUM:
            raise TypeError(f"{cls.__name__}.{field.name}: optional enums are not supported")
        if meta.repeated:
            kind = REPEATED
        elif meta.proto_type == betterproto2.TYPE_MESSAGE:
            kind = MESSAGE
        elif meta.proto_type == betterproto2.TYPE_ENUM and not meta.optional:
            kind = ENUM
        else:
            kind = OPTIONAL if meta.optional else SCALAR
        if meta.group:
            oneofs.setdefault(meta.group, {})[field.name] = (kind, inner)
        else:
            fields.append((field.name, kind, inner))
    template = {name: value for name, value in vars(cls()).items() if not isinstance(value, list)}
    return _Plan(upb_class, tuple(fields), tuple(oneofs.items()), template)


class _Misplaced(Exception):
    """A bad value found while converting; carries the path from where it was found, innermost first."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        self.path: list[str] = []


def to_upb(message: betterproto2.Message) -> _UpbMessage:
    """The official-runtime copy of a public message; raises EncodeError naming the bad field."""
    try:
        return _to_upb(message)
    except _Misplaced as error:
        where = type(message).__name__ + "".join(reversed(error.path))
        raise EncodeError(f"{where}: {error.detail}") from None


def _to_upb(message: betterproto2.Message) -> _UpbMessage:
    plan = _plan(type(message))
    values = message.__dict__
    kwargs: dict[str, Any] = {}
    for name, kind, _ in plan.fields:
        value = values[name]
        if value is None:
            continue
        if kind == MESSAGE:
            kwargs[name] = _nested(value, f".{name}")
        elif kind == REPEATED:
            if value:
                kwargs[name] = [_nested(item, f".{name}[{index}]") for index, item in enumerate(value)]
        else:
            kwargs[name] = value
    for group, members in plan.oneofs:
        chosen = [name for name in members if values[name] is not None]
        if len(chosen) != 1:
            found = ", ".join(chosen) or "none"
            detail = f"oneof '{group}' of {type(message).__name__} must have exactly one member set, found {found}"
            raise _Misplaced(detail)
        (name,) = chosen
        kind = members[name][0]
        kwargs[name] = _nested(values[name], f".{name}") if kind == MESSAGE else values[name]
    try:
        upb = plan.upb_class(**kwargs)
    except (TypeError, ValueError) as error:
        raise _bad_field(plan.upb_class, kwargs) or _Misplaced(str(error)) from None
    extra = values.get("_unknown_fields")
    if extra:
        upb.MergeFromString(extra)
    return upb


def _nested(message: betterproto2.Message, step: str) -> _UpbMessage:
    try:
        return _to_upb(message)
    except _Misplaced as error:
        error.path.append(step)
        raise


def _bad_field(upb_class: type[_UpbMessage], kwargs: dict[str, Any]) -> _Misplaced | None:
    """Name the field upb refused; only called once building the whole message has failed."""
    for name, value in kwargs.items():
        try:
            upb_class(**{name: value})
        except (TypeError, ValueError) as error:
            misplaced = _Misplaced(f"{error} (got {type(value).__name__} {value!r:.40})")
            misplaced.path.append(f".{name}")
            return misplaced
    return None


def from_upb(upb: _UpbMessage, cls: type[M]) -> M:
    """The public copy of an official-runtime message, unknown fields included."""
    plan = _plan(cls)
    values = dict(plan.template)
    for name, kind, sub in plan.fields:
        if kind == SCALAR:
            values[name] = getattr(upb, name)
        elif kind == REPEATED:
            values[name] = [from_upb(item, sub) for item in getattr(upb, name)]
        elif kind == ENUM:
            values[name] = sub(getattr(upb, name))
        elif upb.HasField(name):  # a message, or a scalar with presence
            value = getattr(upb, name)
            values[name] = from_upb(value, sub) if kind == MESSAGE else value
    for group, members in plan.oneofs:
        name = upb.WhichOneof(group)
        if name is not None:
            kind, sub = members[name]
            value = getattr(upb, name)
            values[name] = from_upb(value, sub) if kind == MESSAGE else value
    values["_unknown_fields"] = _unknown_bytes(upb)
    message = cls.__new__(cls)
    message.__dict__ = values
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
