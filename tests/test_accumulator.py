"""The accumulator rebuilds the partial message exactly as the seed's event table describes."""

from __future__ import annotations

import betterproto2
import pytest

import pi_proto as pp
from pi_proto.accumulator import Accumulator, StreamProtocolError
from pi_proto.events import events_of
from pi_proto.seed import README_PREAMBLE

from .vectors.cases import ASSISTANT


def readme_turn() -> pp.AssistantMessage:
    return pp.assistant_message(
        README_PREAMBLE,
        pp.tool_call("call_1", "read", {"path": "README.md"}),
        usage=pp.Usage(input=18, output=12, total_tokens=30),
        stop_reason=pp.StopReason.TOOL_USE,
        timestamp=1010,
    )


def test_partial_at_each_step_of_the_seed_event_table() -> None:
    accumulator = Accumulator()
    steps = {}
    for event in events_of(readme_turn(), delta_size=100):
        kind, _ = betterproto2.which_one_of(accumulator.apply(event), "event")
        assert event.partial is accumulator.partial
        steps[kind] = pp.encode(event.partial)  # a snapshot: the partial itself changes in place

    def at(kind: str) -> pp.AssistantMessage:
        return pp.decode(pp.AssistantMessage, steps[kind])

    assert at("start").content == []
    assert (at("start").provider, at("start").model) == ("scripted", "scripted-v1")
    assert pp.text_of(at("text_delta")) == README_PREAMBLE

    streaming_call = at("toolcall_delta").content[1].tool_call
    assert streaming_call is not None
    assert (streaming_call.id, streaming_call.name) == ("call_1", "read")
    assert pp.tool_call_arguments(streaming_call) == {}
    assert streaming_call.raw_arguments == '{"path":"README.md"}'

    finished_call = at("toolcall_end").content[1].tool_call
    assert finished_call is not None
    assert pp.tool_call_arguments(finished_call) == {"path": "README.md"}

    assert at("done") == readme_turn()
    assert at("done").stop_reason == pp.StopReason.TOOL_USE


def test_rebuilding_any_message_from_its_events_gives_its_content_back() -> None:
    for size in (1, 3, 1000):
        accumulator = Accumulator()
        rebuilt = None
        for event in events_of(ASSISTANT, delta_size=size):
            if event.done is None:
                accumulator.apply(event)
                rebuilt = pp.encode(accumulator.partial)
        assert rebuilt is not None
        partial = pp.decode(pp.AssistantMessage, rebuilt)
        # Content and header are rebuilt; usage and stop reason arrive with the terminal event.
        assert partial.content == ASSISTANT.content
        assert (partial.api, partial.provider, partial.model, partial.timestamp) == (
            ASSISTANT.api,
            ASSISTANT.provider,
            ASSISTANT.model,
            ASSISTANT.timestamp,
        )


@pytest.mark.parametrize(
    ("events", "message"),
    [
        (
            [pp.ModelEvent(text_start=pp.TextStartEvent(content_index=1))],
            r"event 0 \(text_start\): content_index 1 must open the next block, 0",
        ),
        (
            [pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=0, delta="x"))],
            r"event 0 \(text_delta\): content_index 0 refers to no block",
        ),
        (
            [
                pp.ModelEvent(thinking_start=pp.ThinkingStartEvent(content_index=0)),
                pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(content_index=0, delta="{")),
            ],
            r"event 1 \(toolcall_delta\): block 0 is not a tool call block",
        ),
        ([pp.ModelEvent()], "event 0: no event kind is set"),
        (
            [pp.ModelEvent(done=pp.DoneEvent(reason=pp.StopReason.STOP))],
            r"event 0 \(done\): carries no message",
        ),
    ],
)
def test_events_that_do_not_fit_the_stream_are_rejected_with_their_index(
    events: list[pp.ModelEvent], message: str
) -> None:
    accumulator = Accumulator()
    *fine, bad = events
    for event in fine:
        accumulator.apply(event)
    with pytest.raises(StreamProtocolError, match=message):
        accumulator.apply(bad)
