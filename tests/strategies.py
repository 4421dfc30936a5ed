"""Hypothesis strategies for any pi.ai.v1 message, built from the generated classes' field metadata."""

from __future__ import annotations

import dataclasses
import functools
import typing
from typing import Any

import betterproto2
from hypothesis import strategies as st

import pi_proto as pp

INT64 = st.integers(-(2**63), 2**63 - 1)
RANGES = {
    betterproto2.TYPE_INT64: INT64,
    betterproto2.TYPE_UINT32: st.integers(0, 2**32 - 1),
    betterproto2.TYPE_UINT64: st.integers(0, 2**64 - 1),
    betterproto2.TYPE_BOOL: st.booleans(),
    betterproto2.TYPE_STRING: st.text(max_size=20),
    betterproto2.TYPE_BYTES: st.binary(max_size=20),
    # NaN != NaN would make equality useless; -0.0 == 0.0 hides a lost sign (the corpus checks it).
    betterproto2.TYPE_DOUBLE: st.floats(allow_nan=False).filter(lambda x: x != 0 or str(x) == "0.0"),
}


def messages(cls: type[betterproto2.Message], depth: int = 3) -> st.SearchStrategy[Any]:
    """Any message of `cls`, with every oneof holding exactly one member, nested `depth` deep."""
    hints = typing.get_type_hints(cls, vars(__import__(cls.__module__, fromlist=["_"])))
    plain: dict[str, st.SearchStrategy[Any]] = {}
    groups: dict[str, dict[str, st.SearchStrategy[Any]]] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        meta = betterproto2.FieldMetadata.get(field)
        hint = hints[field.name]
        inner = typing.get_args(hint)[0] if meta.repeated or meta.optional or meta.group else hint
        strategy = _value(meta, inner, depth)
        if meta.proto_type == betterproto2.TYPE_MAP:
            assert meta.map_meta is not None
            key, value = (RANGES[entry.proto_type] for entry in meta.map_meta)  # scalar maps only, as in pi.ai.v1
            plain[field.name] = st.dictionaries(key, value, max_size=3 if depth > 0 else 0)
        elif meta.group:
            groups.setdefault(meta.group, {})[field.name] = strategy
        elif meta.repeated:
            plain[field.name] = st.lists(strategy, max_size=3 if depth > 0 else 0)
        elif meta.optional or meta.proto_type == betterproto2.TYPE_MESSAGE:
            plain[field.name] = st.none() | strategy if depth > 0 or meta.optional else st.none()
        else:
            plain[field.name] = strategy
    chosen = [_one_member(members) for members in groups.values()]
    return st.tuples(st.fixed_dictionaries(plain), *chosen).map(lambda parts: _build(cls, parts))


def _one_member(members: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """A oneof: pick one member's name, then a value for it."""
    return st.one_of(*(strategy.map(functools.partial(_single, name)) for name, strategy in members.items()))


def _single(name: str, value: Any) -> dict[str, Any]:
    return {name: value}


def _value(meta: betterproto2.FieldMetadata, inner: Any, depth: int) -> st.SearchStrategy[Any]:
    if meta.proto_type == betterproto2.TYPE_MAP:
        return st.nothing()  # built from map_meta by the caller
    if meta.proto_type == betterproto2.TYPE_MESSAGE:
        return st.deferred(lambda: messages(inner, depth - 1))
    if meta.proto_type == betterproto2.TYPE_ENUM:
        return st.sampled_from(list(inner))
    return RANGES[meta.proto_type]


def _build(cls: type[betterproto2.Message], parts: tuple[dict[str, Any], ...]) -> betterproto2.Message:
    values: dict[str, Any] = {}
    for part in parts:
        values.update(part)
    return cls(**values)


def events() -> st.SearchStrategy[pp.ModelEvent]:
    """Any ModelEvent, with small content indexes so that sequences sometimes make sense."""
    return messages(pp.ModelEvent, depth=3).map(_small_index)


def _small_index(event: pp.ModelEvent) -> pp.ModelEvent:
    _, body = pp.event_kind(event)
    if hasattr(body, "content_index"):
        body.content_index %= 4
    return event
