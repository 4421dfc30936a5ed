"""The direct writers of delta events and the accumulator's text-delta path: each agrees, byte for
byte or rule for rule, with the general code it stands in for."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pi_proto as pp
from pi_proto._gen.pb2.pi.ai.v1 import event_pb2
from pi_proto.grpc.outgoing import wire_deltas, wire_event
from pi_proto.ir.events import EVENT_KINDS, event_kind
from pi_proto.ir.messages import dump_json
from pi_proto.models.scripted import ScriptedModel
from pi_proto.resume import MemoryStore
from pi_proto.stream.accumulator import Accumulator, StreamProtocolError
from pi_proto.web.pi_protocols import PiMessagesSse, ProxySse
from pi_proto.web.sse import (
    SseProtocol,
    StreamRequestSse,
    event_to_sse,
    identified,
    identified_runs,
    sse_chunk,
    sse_data,
)
from pi_proto.wire.codec import EncodeError, to_upb

BODIES: dict[str, Any] = {
    "text_delta": pp.TextDeltaEvent,
    "thinking_delta": pp.ThinkingDeltaEvent,
    "toolcall_delta": pp.ToolCallDeltaEvent,
}
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=300)  # no lone surrogates
indexes = st.one_of(st.integers(0, 300), st.integers(0, 2**32 - 1))


def delta(kind: str, index: int, text: str, usage: pp.Usage | None = None) -> pp.ModelEvent:
    return pp.ModelEvent(**{kind: BODIES[kind](content_index=index, delta=text)}, usage=usage)


def general_wire(event: pp.ModelEvent) -> bytes:
    """What upb writes for the event, without its partial."""
    kind = next(kind for kind in EVENT_KINDS if getattr(event, kind) is not None)
    fields: dict[str, Any] = {kind: to_upb(getattr(event, kind))}
    if event.usage is not None:
        fields["usage"] = to_upb(event.usage)
    return event_pb2.ModelEvent(**fields).SerializeToString()


def test_the_deltas_lead_the_event_kinds() -> None:
    # wire_event and sse_data look for the deltas first and take the first member set.
    assert EVENT_KINDS[:3] == tuple(BODIES)


@given(st.sampled_from(list(BODIES)), indexes, texts, st.booleans())
def test_a_delta_is_written_as_upb_writes_it(kind: str, index: int, text: str, with_usage: bool) -> None:
    usage = pp.Usage(input=3, output=index % 7, total_tokens=10) if with_usage else None
    event = delta(kind, index, text, usage)
    assert wire_event(event) == general_wire(event)
    assert pp.decode(pp.ModelEvent, wire_event(event)) == delta(kind, index, text, usage)


@given(st.sampled_from(list(BODIES)), indexes, texts, st.booleans())
def test_a_delta_is_written_as_sse_as_event_to_sse_writes_it(kind: str, index: int, text: str, usage: bool) -> None:
    event = delta(kind, index, text, pp.Usage(output=2, total_tokens=2) if usage else None)
    assert sse_data(event) == b"data: " + dump_json(event_to_sse(event)).encode() + b"\n\n"


@pytest.mark.parametrize(
    "event",
    [
        delta("text_delta", -1, "x"),
        delta("text_delta", 2**32, "x"),
        delta("thinking_delta", 0, "\ud800"),  # a lone surrogate is no UTF-8
        pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x"), done=pp.DoneEvent()),
        pp.ModelEvent(),
    ],
)
def test_what_the_schema_refuses_is_still_refused(event: pp.ModelEvent) -> None:
    with pytest.raises(EncodeError):
        wire_event(event)


def test_the_oneof_error_names_every_member_set() -> None:
    with pytest.raises(EncodeError, match="found text_delta, done"):
        wire_event(pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x"), done=pp.DoneEvent()))
    with pytest.raises(EncodeError, match="found none"):
        wire_event(pp.ModelEvent())


# --- the accumulator: text deltas take a short path; every rule still holds -----------------------


def started(*blocks: pp.ModelEvent, limit: int = 1 << 20) -> Accumulator:
    accumulator = Accumulator(limit)
    accumulator.apply(pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1))))
    for event in blocks:
        accumulator.apply(event)
    return accumulator


TEXT = pp.ModelEvent(text_start=pp.TextStartEvent(content_index=0))
THINKING = pp.ModelEvent(thinking_start=pp.ThinkingStartEvent(content_index=1))


@given(st.lists(texts, max_size=20))
def test_text_deltas_build_the_text_and_count_its_utf8(parts: list[str]) -> None:
    accumulator = started(TEXT)
    for part in parts:
        event = accumulator.apply(delta("text_delta", 0, part))
        assert event.partial is accumulator.partial
    assert pp.text_of(accumulator.partial) == "".join(parts)
    assert accumulator.received_bytes == len("".join(parts).encode())
    assert accumulator.count == 2 + len(parts)


@pytest.mark.parametrize(
    ("accumulator", "event", "rule"),
    [
        (Accumulator(), delta("text_delta", 0, "x"), "start-first"),
        (started(TEXT), delta("text_delta", 1, "x"), "block-exists"),
        (started(TEXT, THINKING), delta("text_delta", 1, "x"), "block-kind"),
        (
            started(TEXT, pp.ModelEvent(text_end=pp.TextEndEvent(content_index=0))),
            delta("text_delta", 0, "x"),
            "block-open",
        ),
        (started(TEXT, limit=3), delta("text_delta", 0, "four"), "size-limit"),
    ],
)
def test_a_text_delta_that_breaks_a_rule_names_it(accumulator: Accumulator, event: pp.ModelEvent, rule: str) -> None:
    index = accumulator.count
    with pytest.raises(StreamProtocolError) as raised:
        accumulator.apply(event)
    assert (raised.value.rule_id, raised.value.event_index) == (rule, index)


def test_a_text_delta_with_usage_sets_the_partials_usage() -> None:
    accumulator = started(TEXT)
    usage = pp.Usage(input=5, output=1, total_tokens=6)
    accumulator.apply(delta("text_delta", 0, "x", usage))
    assert accumulator.partial.usage == usage


# --- events_of: delta events made as copies of what the constructors set ----------------------------


def test_the_deltas_of_events_of_are_the_events_the_constructors_make() -> None:
    turn = pp.assistant_message(
        pp.thinking("hmm, let me see", signature="sig"),
        "héllo wörld",
        pp.tool_call("call_1", "read", {"path": "README.md"}),
        stop_reason=pp.StopReason.TOOL_USE,
        timestamp=1,
    )
    deltas = [event for event in pp.events_of(turn, 3) if pp.event_kind(event)[0].endswith("_delta")]
    assert {pp.event_kind(event)[0] for event in deltas} == set(BODIES)
    for event in deltas:
        kind, body = pp.event_kind(event)
        made = delta(kind, body.content_index, body.delta)
        assert event == made
        assert event.__dict__ == made.__dict__
        assert body.__dict__ == getattr(made, kind).__dict__
        assert type(body) is BODIES[kind]
    assert deltas[0].thinking_delta is not deltas[1].thinking_delta  # fresh objects, each


@pytest.mark.parametrize("protocol", [StreamRequestSse(), PiMessagesSse(), ProxySse()], ids=type)
async def test_kept_deltas_written_in_runs_are_what_each_event_writes(protocol: SseProtocol) -> None:
    message = pp.assistant_message(
        pp.thinking("let me see"),
        pp.text("héllo \U0010f800 wörld, and some more text"),  # a mapped lone surrogate among them
        pp.tool_call("call_1", "read", {"path": "README.md"}),
        timestamp=1,
    )
    store = MemoryStore()
    events = ScriptedModel([message], delta_size=3).stream(pp.AgentContext())
    journal = store.keep(events)
    await events.result()
    write = identified(protocol.write, journal.stream_id)
    each = b"".join([write(event) async for event in journal.reader(0)])
    reader = journal.reader(0)
    runs = identified_runs(reader, write, journal.stream_id)
    one_by_one: list[str] = []

    def each_event(event: pp.ModelEvent) -> bytes:
        one_by_one.append(event_kind(event)[0])
        return write(event)

    chunks = [sse_chunk(event, reader, False, each_event, runs) async for event in reader]
    assert b"".join(chunks) == each
    assert one_by_one
    assert [kind for kind in one_by_one if kind.endswith("_delta")] == []  # the runs wrote every delta


@given(st.sampled_from(list(BODIES)), indexes, texts, st.integers(1, 2**64 - 2))
def test_kept_deltas_are_written_to_the_wire_as_their_events_are(kind: str, index: int, text: str, seq: int) -> None:
    events = [delta(kind, index, text), delta("text_delta", 0, text)]
    events[0].seq, events[1].seq = seq, seq + 1
    assert wire_deltas(seq, [(kind, index, text), ("text_delta", 0, text)]) == [wire_event(e) for e in events]
