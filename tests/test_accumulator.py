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


START = pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1)))
TEXT_START = pp.ModelEvent(text_start=pp.TextStartEvent(content_index=0))
TEXT_END = pp.ModelEvent(text_end=pp.TextEndEvent(content_index=0))
CALL_START = pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(content_index=0, id="call_1", name="read"))


def done(message: pp.AssistantMessage, reason: pp.StopReason = pp.StopReason.STOP) -> pp.ModelEvent:
    return pp.ModelEvent(done=pp.DoneEvent(reason=reason, message=message))


BROKEN_RULES = [
    ("event-kind", [pp.ModelEvent()], "event 0 breaks rule 'event-kind': no event kind is set"),
    ("start-first", [TEXT_START], r"event 0 \(text_start\) breaks rule 'start-first'"),
    ("start-once", [START, START], r"event 1 \(start\) breaks rule 'start-once'"),
    (
        "next-index",
        [START, pp.ModelEvent(text_start=pp.TextStartEvent(content_index=1))],
        r"event 1 \(text_start\) breaks rule 'next-index': content_index 1 must open the next block, 0",
    ),
    (
        "block-exists",
        [START, pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=0, delta="x"))],
        r"event 1 \(text_delta\) breaks rule 'block-exists': content_index 0 refers to no block \(the message has 0\)",
    ),
    (
        "block-kind",
        [START, TEXT_START, pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(content_index=0, delta="{"))],
        r"event 2 \(toolcall_delta\) breaks rule 'block-kind': block 0 is not a tool call block",
    ),
    (
        "block-open",
        [START, TEXT_START, TEXT_END, pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=0, delta="late"))],
        r"event 3 \(text_delta\) breaks rule 'block-open': block 0 has already ended",
    ),
    (
        "tool-call-id",
        [START, CALL_START, pp.ModelEvent(toolcall_end=pp.ToolCallEndEvent(tool_call=pp.tool_call("call_2", "read")))],
        r"event 2 \(toolcall_end\) breaks rule 'tool-call-id': tool call 0 started as 'call_1' but ends as 'call_2'",
    ),
    (
        "terminal-message",
        [START, pp.ModelEvent(done=pp.DoneEvent(reason=pp.StopReason.STOP))],
        r"event 1 \(done\) breaks rule 'terminal-message': carries no message",
    ),
    (
        "terminal-reason",
        [START, done(pp.assistant_message(stop_reason=pp.StopReason.ERROR), pp.StopReason.ERROR)],
        r"event 1 \(done\) breaks rule 'terminal-reason': reason ERROR .* done takes STOP, LENGTH, TOOL_USE",
    ),
    (
        "terminal-reason",
        [START, done(pp.assistant_message(stop_reason=pp.StopReason.STOP), pp.StopReason.LENGTH)],
        r"breaks rule 'terminal-reason': reason LENGTH with a message stopped by STOP",
    ),
    (
        "terminal-agrees",
        [START, TEXT_START, done(pp.assistant_message(pp.tool_call("c", "read")))],
        r"event 2 \(done\) breaks rule 'terminal-agrees': the message has blocks \['tool_call'\], "
        r"the stream built \['text'\]",
    ),
    (
        "message-valid",
        [done(pp.assistant_message(pp.ToolCall(id="c", name="read", arguments_json="[1]")))],
        r"event 0 \(done\) breaks rule 'message-valid': message\.content\[0\]\.tool_call\.arguments_json: "
        r"must be a JSON object, got list",
    ),
]


@pytest.mark.parametrize(("rule", "events", "message"), BROKEN_RULES, ids=[rule for rule, _, _ in BROKEN_RULES])
def test_each_event_sequence_rule_names_the_event_and_the_rule(
    rule: str, events: list[pp.ModelEvent], message: str
) -> None:
    accumulator = Accumulator()
    *fine, bad = events
    for event in fine:
        accumulator.apply(event)
    with pytest.raises(StreamProtocolError, match=message):
        accumulator.apply(bad)


def test_a_terminal_event_alone_is_a_valid_stream() -> None:
    failed = pp.assistant_message(stop_reason=pp.StopReason.ERROR, error_message="socket reset", timestamp=1)
    event = Accumulator().apply(pp.ModelEvent(error=pp.ErrorEvent(reason=pp.StopReason.ERROR, message=failed)))
    assert event.partial is failed
