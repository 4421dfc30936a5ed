"""The accumulator rebuilds the partial message exactly as the seed's event table describes."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import sys
from collections.abc import Callable

import betterproto2
import pytest

import pi_proto as pp
from pi_proto.ir.events import events_of
from pi_proto.models.seed import README_PREAMBLE
from pi_proto.stream.accumulator import DEFAULT_MAX_MESSAGE_BYTES, Accumulator, StreamProtocolError
from pi_proto.stream.event_stream import AssistantMessageEventStream
from pi_proto.stream.partial_json import Completion

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
    # Which rule each sequence breaks is pinned by tests/conformance/stream.yaml for every runtime.
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


# --- a streaming tool call: its arguments are completed when read ---------------------------------


def streaming(*deltas: str, limit: int = DEFAULT_MAX_MESSAGE_BYTES) -> Accumulator:
    accumulator = Accumulator(limit)
    accumulator.apply(pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1))))
    accumulator.apply(pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(id="call_1", name="write")))
    for delta in deltas:
        accumulator.apply(pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta=delta)))
    return accumulator


def the_call(accumulator: Accumulator, at: int = 0) -> pp.ToolCall:
    call = accumulator.partial.content[at].tool_call
    assert call is not None
    return call


@pytest.fixture
def completions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every completed text the accumulator builds, in order."""
    built: list[str] = []
    completed = Completion.completed

    def counted(self: Completion, *text: str) -> str:
        built.append(completed(self, *text))
        return built[-1]

    monkeypatch.setattr(Completion, "completed", counted)
    return built


def test_tool_call_deltas_build_no_completion_until_the_arguments_are_read(completions: list[str]) -> None:
    # Building it at every delta copies the text so far each time: quadratic in the arguments.
    deltas = ['{"path": "a.txt", "content": "', *(["line\\n"] * 1000), "end"]
    accumulator = streaming(*deltas)
    assert completions == []
    call = the_call(accumulator)
    assert call.raw_arguments == "".join(deltas)
    assert call.arguments_json == '{"path": "a.txt", "content": "' + "line\\n" * 1000 + 'end"}'
    assert pp.tool_call_arguments(call)["content"] == "line\n" * 1000 + "end"
    assert len(completions) == 1  # read twice, built once
    accumulator.apply(pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta='", "mode": 6')))
    assert len(completions) == 1
    assert (
        the_call(accumulator).arguments_json == '{"path": "a.txt", "content": "' + "line\\n" * 1000 + 'end", "mode": 6}'
    )
    assert len(completions) == 2


def test_encoding_copying_and_comparing_a_partial_see_its_arguments_so_far(completions: list[str]) -> None:
    accumulator = streaming('{"path": "REA', 'DME.md", "limit": 1')
    raw = '{"path": "README.md", "limit": 1'
    expected = pp.ToolCall(id="call_1", name="write", arguments_json=raw + "}", raw_arguments=raw)
    message = pp.assistant_message(expected, timestamp=1)
    assert pp.decode(pp.AssistantMessage, pp.encode(accumulator.partial)) == message
    accumulator.apply(pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta="0")))
    expected.arguments_json, expected.raw_arguments = raw + "0}", raw + "0"
    call = the_call(accumulator)
    assert pp.to_json(accumulator.partial) == pp.to_json(message)
    assert pp.encode(call) == pp.encode(expected)  # the call on its own, too
    assert call == expected
    assert expected == call
    assert (call != expected, expected != call) == (False, False)
    assert accumulator.partial == message
    assert message == accumulator.partial
    assert pp.decode(pp.ToolCall, bytes(call)) == expected  # betterproto2's own encoder
    snapshot, deep = copy.copy(call), copy.deepcopy(accumulator.partial)
    assert pickle.loads(pickle.dumps(call)) == expected
    assert (type(snapshot), snapshot) == (pp.ToolCall, expected)
    accumulator.apply(pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta="0}")))
    assert (snapshot, deep) == (expected, message)  # copies keep what they copied
    assert call.arguments_json == the_call(accumulator).arguments_json == '{"path": "README.md", "limit": 100}'


def test_arguments_the_caller_sets_stand_until_the_next_delta() -> None:
    accumulator = streaming('{"a": [1')
    call = the_call(accumulator)
    call.arguments_json = '{"shown": true}'
    assert pp.encode(call) == pp.encode(
        pp.ToolCall(id="call_1", name="write", arguments_json='{"shown": true}', raw_arguments='{"a": [1')
    )
    accumulator.apply(pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta=", 2")))
    assert call.arguments_json == '{"a": [1, 2]}'


@pytest.mark.parametrize("replace", [copy.copy, lambda call: dataclasses.replace(call, name="write")])
def test_a_call_put_in_the_partials_place_is_completed_at_each_delta(
    replace: Callable[[pp.ToolCall], pp.ToolCall],
) -> None:
    accumulator = streaming('{"a": "x')
    content = accumulator.partial.content[0]
    content.tool_call = replace(the_call(accumulator))
    accumulator.apply(pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta='y", "b": 2')))
    assert (content.tool_call.raw_arguments, content.tool_call.arguments_json) == (
        '{"a": "xy", "b": 2',
        '{"a": "xy", "b": 2}',
    )


@pytest.mark.skipif(
    sys.implementation.name != "cpython", reason="CPython grows a string in place when one reference holds it"
)
def test_the_argument_text_is_held_once_so_each_delta_grows_it_in_place() -> None:
    # A second reference (the completion keeping the text, say) makes every delta copy the text so far.
    accumulator = streaming('{"content": "', "abc", "def")
    raw = the_call(accumulator).raw_arguments
    assert sys.getrefcount(raw) == 3  # the call's field, `raw`, and getrefcount's argument


def test_an_error_event_made_from_the_partial_carries_plain_tool_calls() -> None:
    stream = AssistantMessageEventStream()
    for event in (
        pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1))),
        pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(id="call_1", name="write")),
        pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta='{"path": "REA')),
    ):
        stream.push(event)
    stream.fail(pp.StopReason.ERROR, "the model is down")
    call = stream.partial.content[0].tool_call
    assert type(call) is pp.ToolCall
    assert (call.arguments_json, call.raw_arguments) == ('{"path": "REA"}', '{"path": "REA')


# --- the size limit counts what the partial keeps from block events, not only deltas --------------


def refused(accumulator: Accumulator, event: pp.ModelEvent) -> tuple[int, str]:
    before, partial = accumulator.received_bytes, pp.encode(accumulator.partial)
    with pytest.raises(StreamProtocolError) as caught:
        accumulator.apply(event)
    assert (accumulator.received_bytes, pp.encode(accumulator.partial)) == (before, partial)  # nothing changed
    return caught.value.event_index, caught.value.rule_id


def opened(limit: int, *events: pp.ModelEvent) -> Accumulator:
    accumulator = Accumulator(limit)
    for event in (pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1))), *events):
        accumulator.apply(event)
    return accumulator


def test_a_tool_calls_id_and_name_count_in_bytes_of_utf8() -> None:
    start = pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(id="call_é", name="write"))  # 7 + 5 bytes
    assert opened(12, start).received_bytes == 12
    assert refused(opened(11), start) == (1, "size-limit")

    # Endless calls with 8 KiB ids and no arguments: each holds 8,195 bytes once ended (its id and
    # name, then the ended call's "{}"), so the eighth start passes 64 KiB.
    def long_start(index: int) -> pp.ModelEvent:
        return pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(content_index=index, id="x" * 8192, name="n"))

    accumulator = opened(64 * 1024)
    for index in range(7):
        accumulator.apply(long_start(index))
        call = pp.ToolCall(id="x" * 8192, name="n", arguments_json="{}")
        accumulator.apply(pp.ModelEvent(toolcall_end=pp.ToolCallEndEvent(content_index=index, tool_call=call)))
    assert accumulator.received_bytes == 7 * 8195
    assert refused(accumulator, long_start(7)) == (15, "size-limit")


def test_signatures_count_toward_the_limit() -> None:
    text = opened(
        8, pp.ModelEvent(text_start=pp.TextStartEvent()), pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="hi"))
    )
    end = pp.ModelEvent(text_end=pp.TextEndEvent(text_signature="sig-é"))  # 6 bytes
    text.apply(end)
    assert text.received_bytes == 8
    text = opened(
        7, pp.ModelEvent(text_start=pp.TextStartEvent()), pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="hi"))
    )
    assert refused(text, end) == (3, "size-limit")
    thinking = opened(5, pp.ModelEvent(thinking_start=pp.ThinkingStartEvent()))
    assert refused(thinking, pp.ModelEvent(thinking_end=pp.ThinkingEndEvent(thinking_signature="abcdef"))) == (
        2,
        "size-limit",
    )
    thinking.apply(pp.ModelEvent(thinking_end=pp.ThinkingEndEvent(thinking_signature="abcde", redacted=True)))
    assert thinking.received_bytes == 5


def test_the_call_a_toolcall_end_carries_counts_beyond_the_streamed_one() -> None:
    delta = pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta='{"a":1}'))
    # The call as it streamed (id, name and arguments: 1 + 1 + 7 bytes) is not counted twice.
    same = pp.ToolCall(id="c", name="n", arguments_json='{"a":1}')
    accumulator = opened(9, pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(id="c", name="n")), delta)
    accumulator.apply(pp.ModelEvent(toolcall_end=pp.ToolCallEndEvent(tool_call=same)))
    assert accumulator.received_bytes == 9
    # What it holds beyond that counts: its raw arguments (7), a signature (3), unknown fields (4).
    more = pp.ToolCall(id="c", name="n", arguments_json='{"a":1}', raw_arguments='{"a":1}', thought_signature="sig")
    more._unknown_fields = b"\xa0\x06\x01x"
    for limit, fits in ((23, True), (22, False)):
        accumulator = opened(limit, pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(id="c", name="n")), delta)
        end = pp.ModelEvent(toolcall_end=pp.ToolCallEndEvent(tool_call=more))
        if fits:
            accumulator.apply(end)
            assert accumulator.received_bytes == 23
        else:
            assert refused(accumulator, end) == (3, "size-limit")
