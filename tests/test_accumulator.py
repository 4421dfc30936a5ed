"""The accumulator rebuilds the partial message exactly as the seed's event table describes."""

from __future__ import annotations

import betterproto2
import pytest

import pi_proto as pp
from pi_proto.accumulator import Accumulator, StreamProtocolError
from pi_proto.events import events_of
from pi_proto.seed import README_PREAMBLE

from .conformance.wire_cases import ASSISTANT


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
    assert pp.tool_call_arguments(streaming_call) == {"path": "README.md"}  # the text so far, completed
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


def test_a_broken_rule_is_a_value_with_the_event_index_and_the_rule_id() -> None:
    # Which rule each sequence breaks is pinned by tests/conformance/stream.json for every runtime.
    accumulator = Accumulator()
    accumulator.apply(pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1))))
    with pytest.raises(StreamProtocolError) as caught:
        accumulator.apply(pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=4, delta="x")))
    assert (caught.value.event_index, caught.value.rule_id, caught.value.violations) == (1, "block-exists", ())
    assert str(caught.value).startswith("event 1 breaks rule 'block-exists': text_delta: ")


def test_a_broken_terminal_event_lists_its_violations() -> None:
    call = pp.ToolCall(id="c", name="read", arguments_json="[1]")
    done = pp.ModelEvent(done=pp.DoneEvent(reason=pp.StopReason.TOOL_USE, message=pp.assistant_message(call)))
    done.done.message.stop_reason = pp.StopReason.TOOL_USE  # type: ignore[union-attr]
    with pytest.raises(StreamProtocolError) as caught:
        Accumulator().apply(done)
    assert caught.value.rule_id == "terminal-valid"
    assert [(item.field_path, item.rule_id) for item in caught.value.violations] == [
        ("done.message.content[0].tool_call.arguments_json", "json.object")
    ]


def test_a_terminal_event_alone_is_a_valid_stream() -> None:
    failed = pp.assistant_message(stop_reason=pp.StopReason.ERROR, error_message="socket reset", timestamp=1)
    event = Accumulator().apply(pp.ModelEvent(error=pp.ErrorEvent(reason=pp.StopReason.ERROR, message=failed)))
    assert event.partial is failed
