"""What the server sends: events as wire messages, a delta encoder for the commonest event, and
the coalescing of deltas waiting for a slow client."""

from __future__ import annotations

import operator
from typing import Any, Protocol

from .._gen.pb2.pi.ai.v1.event_pb2 import ModelEvent as _UpbModelEvent
from .._gen.types.pi.ai.v1 import ModelEvent, TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent
from ..ir.events import EVENT_KINDS, delta_event, event_kind
from ..wire import varint
from ..wire.codec import EncodeError, fill_upb


def wire_event(event: ModelEvent) -> bytes:
    """An event's bytes, without its `partial` (which is never sent)."""
    members = event.__dict__
    values = _members_of(members)
    position = 0  # of the first member set: the deltas come first, and most events are one
    while position < len(values) - 1 and values[position] is None:
        position += 1
    body = values[position]
    # Exactly one member set: only None may follow (counting compares the rest with None, which
    # costs nothing for None itself).
    if body is None or values[position + 1 :].count(None) != len(EVENT_KINDS) - 1 - position:
        found = ", ".join(kind for kind, value in zip(EVENT_KINDS, values, strict=True) if value is not None)
        raise EncodeError(
            f"ModelEvent: oneof 'event' of ModelEvent must have exactly one member set, found {found or 'none'}"
        )
    kind = EVENT_KINDS[position]
    if (tag := _DELTA_TAGS.get(kind)) is not None and members["usage"] is None and (data := _delta_wire(tag, body)):
        seq = members["seq"]
        if not seq:
            return data
        if type(seq) is int and 0 < seq < _UINT64_END:
            return data + _SEQ_TAG + varint.encode(seq)  # field 18 comes last, as upb writes it
    upb = _UpbModelEvent()
    into = getattr(upb, kind)
    into.SetInParent()
    fill_upb(into, body)
    if (usage := members["usage"]) is not None:
        upb.usage.SetInParent()
        fill_upb(upb.usage, usage)
    if seq := members["seq"]:
        upb.seq = seq
    return upb.SerializeToString()


_members_of = operator.itemgetter(*EVENT_KINDS)
# The key of each delta event's field in ModelEvent (field number << 3 | length-delimited).
_DELTA_TAGS = {"text_delta": b"\x1a", "thinking_delta": b"\x32", "toolcall_delta": b"\x4a"}
_UINT32_END = 1 << 32
_UINT64_END = 1 << 64
_SEQ_TAG = b"\x90\x01"  # ModelEvent.seq: field 18, varint


def _delta_wire(tag: bytes, body: Any) -> bytes | None:
    """A delta event's bytes written directly, as upb writes them (content_index = 1, delta = 2,
    zero values left out): deltas are most of a stream, and this is a few times quicker than
    filling and serializing a upb message. None when a value is not what the schema takes, so
    the general path reports it."""
    values = body.__dict__
    return _text_wire(tag, values["content_index"], values["delta"])


def _text_wire(tag: bytes, index: Any, delta: Any) -> bytes | None:
    if type(index) is not int or not 0 <= index < _UINT32_END or type(delta) is not str:
        return None
    try:
        text = delta.encode()
    except UnicodeEncodeError:
        return None
    inner = (b"\x08" + varint.encode(index) if index else b"") + (
        b"\x12" + varint.encode(len(text)) + text if text else b""
    )
    return tag + varint.encode(len(inner)) + inner


def wire_deltas(seq: int, deltas: list[tuple[str, int, str]]) -> list[bytes]:
    """The bytes of kept deltas, each (kind, content index, text) numbered from `seq` on, as
    wire_event writes their events: a kept stream's runs of deltas cost no event object each."""
    written = []
    for kind, index, text in deltas:
        data = _text_wire(_DELTA_TAGS[kind], index, text)
        if data is None or not 0 < seq < _UINT64_END:  # what the general path writes, or refuses
            event = delta_event[kind](index, text)
            event.seq = seq
            data = wire_event(event)
        else:
            data += _SEQ_TAG + varint.encode(seq)
        written.append(data)
        seq += 1
    return written


class Waiting(Protocol):
    """Events that may be waiting behind the one being sent."""

    def peek(self) -> ModelEvent | None: ...
    def take(self) -> ModelEvent: ...


_DELTAS = {"text_delta": TextDeltaEvent, "thinking_delta": ThinkingDeltaEvent, "toolcall_delta": ToolCallDeltaEvent}


def coalesce(event: ModelEvent, events: Waiting) -> ModelEvent:
    """Merge into a delta the deltas of the same block already waiting behind it.

    Events wait only while the client reads slower than the model writes, so a client that keeps
    up gets every delta, and one that falls behind gets fewer, larger ones: same order, same text.
    """
    kind, body = event_kind(event)
    if kind not in _DELTAS:
        return event
    parts, usage, seq = [body.delta], event.usage, event.seq
    while (waiting := events.peek()) is not None:
        next_kind, next_body = event_kind(waiting)
        if next_kind != kind or next_body.content_index != body.content_index:
            break
        parts.append(next_body.delta)
        usage = waiting.usage if waiting.usage is not None else usage  # the latest usage survives
        seq = waiting.seq  # a merged delta carries the number of the last one it merges
        events.take()
    if len(parts) == 1:
        return event
    merged: dict[str, Any] = {kind: _DELTAS[kind](content_index=body.content_index, delta="".join(parts))}
    return ModelEvent(**merged, usage=usage, seq=seq)
