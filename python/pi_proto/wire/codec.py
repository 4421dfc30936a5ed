"""Binary wire format: strict decoding of untrusted bytes and checked encoding.

Both directions go through the official protobuf runtime (upb). Decoding parses with upb, which
rejects truncated or malformed input, and builds the public betterproto2 objects from the parsed
message directly, so no second pure-Python parse sees hostile bytes. Encoding builds the upb
message from the public object, refusing a oneof with several members set on the way (betterproto2
does not clear the other members when one is assigned), or with none when the schema requires one.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import betterproto2
from google.protobuf import json_format, unknown_fields
from google.protobuf.message import DecodeError as _UpbDecodeError
from google.protobuf.message import Message as _UpbMessage

from .._gen.pb2.buf.validate import validate_pb2
from .._gen.pb2.pi.ai.v1 import (
    content_pb2,
    context_pb2,
    event_pb2,
    json_pb2,
    message_pb2,
    model_pb2,
    service_pb2,
    tool_pb2,
    transcript_pb2,
)

M = TypeVar("M", bound=betterproto2.Message)

_PB2_MODULES = (
    json_pb2,
    content_pb2,
    tool_pb2,
    message_pb2,
    context_pb2,
    event_pb2,
    model_pb2,
    service_pb2,
    transcript_pb2,
)


class DecodeError(ValueError):
    """Bytes or ProtoJSON text that do not hold a valid message of the expected type."""


class EncodeError(ValueError):
    """A message that must not reach the wire, with the path of the offending field."""


def encode(message: betterproto2.Message) -> bytes:
    """Serialize a message, map entries in key order; raises EncodeError if a oneof has several members,
    or none where the schema requires one."""
    return to_upb(message).SerializeToString(deterministic=True)


def decode(cls: type[M], data: bytes) -> M:
    """Parse untrusted bytes as `cls`; raises DecodeError, never returns a half-filled message."""
    return from_upb(parse(cls, data), cls)


def parse(cls: type[betterproto2.Message], data: bytes) -> _UpbMessage:
    """The official-runtime message `data` holds, parsed strictly; raises DecodeError."""
    upb = _upb_class(cls)()
    try:
        upb.ParseFromString(data)
    except _UpbDecodeError as error:
        raise DecodeError(f"cannot decode {cls.__name__} from {len(data)} bytes: {error}") from None
    return upb


def decode_json(cls: type[M], text: str | bytes | dict[str, Any]) -> M:
    """Parse untrusted ProtoJSON as `cls`, from its text or its parsed JSON object; raises DecodeError."""
    upb = _upb_class(cls)()
    try:
        if isinstance(text, dict):
            json_format.ParseDict(text, upb)
        else:
            json_format.Parse(text, upb)
    except json_format.ParseError as error:
        raise DecodeError(f"cannot decode {cls.__name__} from ProtoJSON: {error}") from None
    return from_upb(upb, cls, unknown=False)  # ProtoJSON has no unknown fields


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
SCALARS, MAP = "scalars", "map"


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    upb_class: type[_UpbMessage]
    scalars: tuple[str, ...]  # always present: string, bytes, numbers, bools
    enums: tuple[tuple[str, Any], ...]  # (name, public enum class)
    optionals: tuple[str, ...]  # scalars with presence
    messages: tuple[tuple[str, Any], ...]  # (name, public message class)
    repeated: tuple[tuple[str, Any], ...]  # lists of messages
    scalar_lists: tuple[tuple[str, Any], ...]  # lists of scalars or enums: (name, enum class or None)
    maps: tuple[str, ...]  # maps of scalars
    oneofs: tuple[tuple[str, dict[str, tuple[str, Any]]], ...]  # (group, {member: (kind, class)})
    optional_oneofs: frozenset[str]  # the groups the schema lets stay empty


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
    by_kind: dict[str, list[Any]] = {
        SCALAR: [],
        OPTIONAL: [],
        ENUM: [],
        MESSAGE: [],
        REPEATED: [],
        SCALARS: [],
        MAP: [],
    }
    oneofs: dict[str, dict[str, tuple[str, Any]]] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        meta = betterproto2.FieldMetadata.get(field)
        hint = hints[field.name]
        inner = typing.get_args(hint)[0] if meta.repeated or meta.optional or meta.group else hint
        if meta.optional and not meta.group and meta.proto_type == betterproto2.TYPE_ENUM:
            raise TypeError(f"{cls.__name__}.{field.name}: optional enums are not supported")
        if meta.map_meta is not None:
            if meta.map_meta[1].proto_type == betterproto2.TYPE_MESSAGE:
                raise TypeError(f"{cls.__name__}.{field.name}: maps of messages are not supported")
            by_kind[MAP].append(field.name)
            continue
        if meta.repeated and meta.proto_type != betterproto2.TYPE_MESSAGE:
            by_kind[SCALARS].append((field.name, inner if meta.proto_type == betterproto2.TYPE_ENUM else None))
            continue
        if meta.repeated:
            kind = REPEATED
        elif meta.proto_type == betterproto2.TYPE_MESSAGE:
            kind = MESSAGE
        elif meta.proto_type == betterproto2.TYPE_ENUM:
            kind = ENUM
        else:
            kind = OPTIONAL if meta.optional and not meta.group else SCALAR
        if meta.group:
            oneofs.setdefault(meta.group, {})[field.name] = (kind, inner)
        else:
            by_kind[kind].append(field.name if kind in (SCALAR, OPTIONAL) else (field.name, inner))
    scalars = tuple(by_kind[SCALAR])
    return _Plan(
        upb_class=upb_class,
        scalars=scalars,
        enums=tuple(by_kind[ENUM]),
        optionals=tuple(by_kind[OPTIONAL]),
        messages=tuple(by_kind[MESSAGE]),
        repeated=tuple(by_kind[REPEATED]),
        scalar_lists=tuple(by_kind[SCALARS]),
        maps=tuple(by_kind[MAP]),
        oneofs=tuple(oneofs.items()),
        optional_oneofs=frozenset(group for group in oneofs if not _required(upb_class, group)),
    )


_ONEOF_RULES: Any = validate_pb2.oneof  # the stubs do not type extensions


def _required(upb_class: type[_UpbMessage], group: str) -> bool:
    """Whether the schema requires a member of the oneof, as (buf.validate.oneof).required."""
    options = upb_class.DESCRIPTOR.oneofs_by_name[group].GetOptions()
    return bool(options.Extensions[_ONEOF_RULES].required)


class _Misplaced(Exception):
    """A bad value found while converting; carries the path from where it was found, innermost first."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        self.path: list[str] = []


def to_upb(message: betterproto2.Message) -> _UpbMessage:
    """The official-runtime copy of a public message; raises EncodeError naming the bad field.

    The upb message is filled in place, top down, so each value is copied into it once (building
    it bottom up would copy every sub-message again into its parent).
    """
    upb = _plan(type(message)).upb_class()
    fill_upb(upb, message)
    return upb


def fill_upb(upb: Any, message: betterproto2.Message) -> None:
    """Write a public message into an empty upb message of its type; raises EncodeError.

    A writer compiled for the class does the work; when it refuses a value, the plan is walked
    again slowly to name the field and its path.
    """
    try:
        _writer(type(message))(upb, message)
    except (TypeError, ValueError, AttributeError, _Misplaced):
        upb.Clear()
        try:
            _fill(upb, message)
        except _Misplaced as error:
            where = type(message).__name__ + "".join(reversed(error.path))
            raise EncodeError(f"{where}: {error.detail}") from None
        raise  # the slow walk found nothing wrong: the compiled writer has a bug


@functools.cache
def _writer(cls: type[betterproto2.Message]) -> Callable[[Any, betterproto2.Message], None]:
    """A function that writes a public message of `cls` into an upb message, compiled from the plan
    like `_reader`, one statement per field."""
    plan = _plan(cls)
    scope: dict[str, Any] = {"Misplaced": _Misplaced}
    body = ["def write(upb, message):", "    values = message.__dict__"]
    body += [f"    upb.{name} = values[{name!r}]" for name in plan.scalars]
    body += [f"    upb.{name} = values[{name!r}]" for name, _ in plan.enums]
    for name in plan.optionals:
        body += [f"    if (v := values[{name!r}]) is not None:", f"        upb.{name} = v"]
    for name, sub in plan.messages:
        scope[f"write_{name}"] = _writer(sub)
        body += [f"    if (v := values[{name!r}]) is not None:", f"        upb.{name}.SetInParent()"]
        body += [f"        write_{name}(upb.{name}, v)"]
    for name, sub in plan.repeated:
        scope[f"write_{name}"] = _writer(sub)
        body += [f"    if items := values[{name!r}]:", f"        add = upb.{name}.add"]
        body += ["        for item in items:", f"            write_{name}(add(), item)"]
    for name, _ in plan.scalar_lists:
        body += [f"    if items := values[{name!r}]:", f"        upb.{name}.extend(items)"]
    for name in plan.maps:
        body += [f"    if items := values[{name!r}]:", f"        upb.{name}.update(items)"]
    for group, members in plan.oneofs:
        names = ", ".join(f"values[{member!r}]" for member in members)
        wrong = "> 1" if group in plan.optional_oneofs else "!= 1"
        body += [f"    if sum(v is not None for v in ({names},)) {wrong}:", f"        raise Misplaced({group!r})"]
        for member, (kind, sub) in members.items():
            body += [f"    if (v := values[{member!r}]) is not None:"]
            if kind == MESSAGE:
                scope[f"write_{member}"] = _writer(sub)
                body += [f"        upb.{member}.SetInParent()", f"        write_{member}(upb.{member}, v)"]
            else:
                body += [f"        upb.{member} = v"]
    body += ["    if extra := values.get('_unknown_fields'):", "        upb.MergeFromString(extra)"]
    _define(body, scope)
    return scope["write"]  # type: ignore[no-any-return]


def _fill(upb: Any, message: betterproto2.Message) -> None:
    plan = _plan(type(message))
    values = message.__dict__
    name = ""
    try:
        for name in plan.scalars:
            setattr(upb, name, values[name])
        for name, _ in plan.enums:
            setattr(upb, name, values[name])
        for name in plan.optionals:
            if values[name] is not None:
                setattr(upb, name, values[name])
    except (TypeError, ValueError) as error:
        value = values[name]
        misplaced = _Misplaced(f"{error} (got {type(value).__name__} {value!r:.40})")
        misplaced.path.append(f".{name}")
        raise misplaced from None
    for name, _ in plan.messages:
        if values[name] is not None:
            _fill_member(upb, name, values[name], f".{name}")
    for name, _ in plan.repeated:
        if values[name]:
            container = getattr(upb, name)
            for index, item in enumerate(values[name]):
                _fill_nested(container.add(), item, f".{name}[{index}]")
    for name, update in [(name, "extend") for name, _ in plan.scalar_lists] + [(name, "update") for name in plan.maps]:
        try:
            getattr(getattr(upb, name), update)(values[name] or ())
        except (TypeError, ValueError) as error:
            misplaced = _Misplaced(f"{error} (got {values[name]!r:.40})")
            misplaced.path.append(f".{name}")
            raise misplaced from None
    for group, members in plan.oneofs:
        chosen = [member for member in members if values[member] is not None]
        if not chosen and group in plan.optional_oneofs:
            continue
        if len(chosen) != 1:
            found = ", ".join(chosen) or "none"
            wanted = "at most one member" if group in plan.optional_oneofs else "exactly one member"
            raise _Misplaced(f"oneof '{group}' of {type(message).__name__} must have {wanted} set, found {found}")
        (member,) = chosen
        if members[member][0] == MESSAGE:
            _fill_member(upb, member, values[member], f".{member}")
        else:
            setattr(upb, member, values[member])
    extra = values.get("_unknown_fields")
    if extra:
        upb.MergeFromString(extra)


def _fill_member(upb: Any, name: str, message: betterproto2.Message, step: str) -> None:
    sub = getattr(upb, name)
    sub.SetInParent()  # present even when empty
    _fill_nested(sub, message, step)


def _fill_nested(upb: Any, message: betterproto2.Message, step: str) -> None:
    try:
        _fill(upb, message)
    except _Misplaced as error:
        error.path.append(step)
        raise
    except AttributeError:  # not a message where one belongs
        misplaced = _Misplaced(f"expected a message, got {type(message).__name__} {message!r:.40}")
        misplaced.path.append(step)
        raise misplaced from None


def from_upb(upb: _UpbMessage, cls: type[M], *, unknown: bool = True) -> M:
    """The public copy of an official-runtime message, unknown fields included unless told there
    are none (ProtoJSON has none)."""
    return typing.cast(M, _reader(cls)(upb, unknown))


@functools.cache
def _reader(cls: type[betterproto2.Message]) -> Callable[[_UpbMessage, bool], betterproto2.Message]:
    """A function that copies an upb message of `cls` into a new public object.

    It is compiled from the class's plan, one line per field, the way dataclasses compiles its
    __init__: a generic loop over the plan costs several times more per message, and decoding
    runs once per message of every transcript and stream. Our schema has no recursive messages,
    so the readers of sub-messages are made first and bound in.
    """
    plan = _plan(cls)
    scope: dict[str, Any] = {"cls": cls, "unknown_bytes": _unknown_bytes}
    fields = [f"{name!r}: upb.{name}" for name in plan.scalars]
    for name, enum in plan.enums:
        scope[f"enum_{name}"] = enum
        scope[f"members_{name}"] = {int(member): member for member in enum}
        fields.append(f"{name!r}: members_{name}[v] if (v := upb.{name}) in members_{name} else enum_{name}(v)")
    fields += [f"{name!r}: upb.{name} if upb.HasField({name!r}) else None" for name in plan.optionals]
    for name, sub in plan.messages:
        scope[f"read_{name}"] = _reader(sub)
        fields.append(f"{name!r}: read_{name}(upb.{name}, unknown) if upb.HasField({name!r}) else None")
    for name, sub in plan.repeated:
        scope[f"read_{name}"] = _reader(sub)
        fields.append(f"{name!r}: [read_{name}(item, unknown) for item in upb.{name}]")
    for name, enum in plan.scalar_lists:
        scope[f"enum_{name}"] = enum
        fields.append(f"{name!r}: [enum_{name}(v) for v in upb.{name}]" if enum else f"{name!r}: list(upb.{name})")
    fields += [f"{name!r}: dict(upb.{name})" for name in plan.maps]
    fields += [f"{member!r}: None" for _, members in plan.oneofs for member in members]
    fields.append("'_unknown_fields': unknown_bytes(upb) if unknown else b''")
    body = ["def read(upb, unknown):", "    values = {" + ", ".join(fields) + "}"]
    for group, members in plan.oneofs:
        body.append(f"    member = upb.WhichOneof({group!r})")
        body.append("    if member is not None:")
        body.append("        value = getattr(upb, member)")
        readers = {
            member: _reader(sub) if kind == MESSAGE else _enum_reader(sub)
            for member, (kind, sub) in members.items()
            if kind in (MESSAGE, ENUM)
        }
        scope[f"readers_{group}"] = readers
        body.append(
            f"        values[member] = readers_{group}[member](value, unknown) if member in readers_{group} else value"
        )
    body += ["    message = cls.__new__(cls)", "    message.__dict__ = values", "    return message"]
    _define(body, scope)
    return scope["read"]  # type: ignore[no-any-return]


def _enum_reader(enum: Any) -> Callable[[int, bool], Any]:
    """A oneof member's reader for an enum (such as google.protobuf.NullValue): its number as the enum."""
    return lambda number, _unknown: enum(number)


def _define(lines: list[str], scope: dict[str, Any]) -> None:
    """Run the source of a compiled reader or writer, built from field names only, in `scope`.

    It is compiled first: exec() of a string marks a Ctrl-C that lands during it as unhandled for
    good (CPython then exits by SIGINT even when the program caught it), exec() of code does not.
    """
    exec(compile("\n".join(lines), "<pi_proto.wire>", "exec"), scope)


def _unknown_bytes(upb: _UpbMessage) -> bytes:
    """The fields upb did not recognise, as they arrived, so they survive a decode and encode: a
    copy of the message with its known fields cleared holds only them."""
    if not len(unknown_fields.UnknownFieldSet(upb)):
        return b""
    only = type(upb)()
    only.CopyFrom(upb)
    for descriptor, _ in only.ListFields():
        only.ClearField(descriptor.name)
    return only.SerializeToString()
