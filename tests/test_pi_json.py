"""pi-JSON converts losslessly: real pi sessions, number types, absent fields, unmodelled fields."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, TypeVar

import pytest

import pi_proto as pp
from pi_proto.convert import kind_of
from pi_proto.pi_json import (
    context_from_pi,
    context_path,
    context_to_pi,
    entry_from_pi,
    entry_to_pi,
    event_from_pi,
    event_to_pi,
    message_from_pi,
    message_to_pi,
)

from .conformance.wire_cases import ASSISTANT
from .jsonstrict import same_json

M = TypeVar("M", pp.AgentMessage, pp.TranscriptEntry)
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pi-sessions"
OLDER_SHAPES = Path(__file__).resolve().parent / "fixtures" / "older-pi-shapes.jsonl"
SESSION = FIXTURES / "before-compaction.jsonl"
THINKING = FIXTURES / "assistant-message-with-thinking-code.json"


def through_the_wire(message: M) -> M:
    return pp.decode(type(message), pp.encode(message))


def round_trip(value: dict[str, Any]) -> dict[str, Any]:
    return message_to_pi(through_the_wire(message_from_pi(value)))


def test_the_fixtures_are_present() -> None:
    assert SESSION.stat().st_size > 1_000_000
    assert THINKING.exists()


@pytest.mark.parametrize("path", [SESSION, OLDER_SHAPES], ids=["real-session", "older-pi-shapes"])
def test_every_line_converts_back_to_the_same_text(path: Path) -> None:
    # Text, not just value: key order, absent keys and numbers as JavaScript writes them all kept.
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        entry = through_the_wire(entry_from_pi(json.loads(line), f"line {number}"))
        assert pp.dump_json(entry_to_pi(entry)) == line, f"{path.name}:{number} changed"


def test_the_real_session_holds_every_kind_of_entry() -> None:
    lines = SESSION.read_text(encoding="utf-8").splitlines()
    kinds = Counter(kind_of(entry_from_pi(json.loads(line))) for line in lines)
    assert kinds == {"user": 55, "assistant": 484, "tool_result": 448, "custom": 3, "session_entry": 13}


def test_the_thinking_fixture_converts_back_unchanged() -> None:
    original = json.loads(THINKING.read_text(encoding="utf-8"))
    message = message_from_pi(original)
    assert message.assistant is not None
    assert message.assistant.content[0].thinking is not None
    assert message.assistant.content[0].thinking.thinking_signature
    assert same_json(round_trip(original), original)


def assistant(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "hi"}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "m",
        "usage": {
            "input": 1,
            "output": 2,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 3,
            "cost": {"input": 0, "output": 0.5, "cacheRead": 1.0, "cacheWrite": 2, "total": 1.5},
        },
        "stopReason": "stop",
        "timestamp": 1765233665294,
    }
    return {**base, **fields}


def test_number_types_survive() -> None:
    original = assistant()
    back = round_trip(original)
    assert same_json(back, original)
    cost = back["usage"]["cost"]
    assert isinstance(cost["input"], int)
    assert isinstance(cost["cacheRead"], float)  # written 1.0, stays 1.0
    assert isinstance(cost["output"], float)


def test_absent_optional_fields_stay_absent_and_present_ones_stay() -> None:
    bare = assistant()
    assert "errorMessage" not in round_trip(bare)
    failed = assistant(stopReason="error", errorMessage="")
    assert round_trip(failed)["errorMessage"] == ""
    no_details = {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": "t",
        "content": [],
        "isError": False,
        "timestamp": 1,
    }
    assert "details" not in round_trip(no_details)
    details: Any
    for details in (None, {}, [1, 2.0], "x", 0):
        with_details = {**no_details, "details": details}
        assert same_json(round_trip(with_details), with_details)


def test_user_content_given_as_a_string_stays_a_string() -> None:
    original = {"role": "user", "content": "看看 README", "timestamp": 5}
    message = message_from_pi(original)
    assert message.user is not None
    assert pp.text_of(message) == "看看 README"
    assert same_json(round_trip(original), original)
    listed = {"role": "user", "content": [{"type": "text", "text": "看看 README"}], "timestamp": 5}
    assert same_json(round_trip(listed), listed)


def test_unmodelled_fields_survive_at_every_level() -> None:
    original = assistant(
        responseId="resp_1",
        content=[
            {"type": "toolCall", "id": "c1", "name": "edit", "arguments": {"n": 1, "f": 1.0}, "partialJson": '{"n": 1'},
            {"type": "thinking", "thinking": "", "thinkingSignature": "sig", "redacted": True, "future": [1]},
            {"type": "text", "text": "t", "textSignature": "s", "annotations": []},
        ],
    )
    original["usage"] = {**original["usage"], "reasoning": 7}
    message = message_from_pi(original)
    assert message.assistant is not None
    call = message.assistant.content[0].tool_call
    assert call is not None
    assert json.loads(call.extra_json) == {"partialJson": '{"n": 1'}
    assert same_json(round_trip(original), original)


def test_roles_and_entries_the_schema_does_not_model_are_kept() -> None:
    bash = {
        "role": "bashExecution",
        "command": "ls",
        "output": "a\n",
        "exitCode": 0,
        "cancelled": False,
        "timestamp": 9,
    }
    message = message_from_pi(bash)
    assert message.custom is not None
    assert message.custom.role == "bashExecution"
    assert pp.text_of(message) == ""
    assert same_json(round_trip(bash), bash)

    entry = {"type": "model_change", "timestamp": "2025-12-08T23:58:22.057Z", "provider": "x", "modelId": "y"}
    kept = through_the_wire(entry_from_pi(entry))
    assert kept.message is None
    assert kept.session_entry is not None
    assert kept.session_entry.type == "model_change"
    assert same_json(entry_to_pi(kept), entry)

    wrapped = {"type": "message", "timestamp": "2025-12-08T22:41:05.306Z", "id": "e1", "message": bash}
    assert same_json(entry_to_pi(through_the_wire(entry_from_pi(wrapped))), wrapped)


def test_contexts_convert_back_unchanged() -> None:
    tool = {"name": "read", "description": "Read a file.", "parameters": {"type": "object", "properties": {}}}
    original: dict[str, Any]
    for original in (
        {"systemPrompt": "回答前先读取相关文件。", "messages": [assistant()], "tools": [tool]},
        {"messages": [], "tools": []},
        {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]},
    ):
        context = pp.decode(pp.AgentContext, pp.encode(context_from_pi(original)))
        assert same_json(context_to_pi(context), original)


def test_the_course_shape_reads_and_keeps_what_it_lacks_absent() -> None:
    seed = {
        "role": "assistant",
        "content": [{"type": "text", "text": "我先读取项目说明。"}],
        "provider": "scripted",
        "model": "scripted-v1",
        "usage": {"input": 18, "output": 12, "totalTokens": 30},
        "stopReason": "toolUse",
        "timestamp": 1010,
    }
    message = message_from_pi(seed)
    assert message.assistant is not None
    assert message.assistant.api == ""
    assert message.assistant.usage is not None
    assert (message.assistant.usage.cache_read, message.assistant.usage.cache_write) == (0, 0)
    assert json.loads(message.assistant.extra_json) == {"$absent": ["api"]}
    assert pp.dump_json(round_trip(seed)) == pp.dump_json(seed)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"role": "assistant", "content": [], "stopReason": "finished"}, r"message\.stopReason: expected one of"),
        (assistant(timestamp="now"), r"message\.timestamp: expected a 64-bit integer, got string"),
        (assistant(timestamp=2**63), r"message\.timestamp: expected a 64-bit integer"),
        (assistant(content=[{"type": "video"}]), r"message\.content\[0\]\.type: an assistant block is"),
        (assistant(content=["text"]), r"message\.content\[0\]: expected an object, got string"),
        ({"role": "user", "content": [{"type": "image", "data": "QQ", "mimeType": "x"}]}, r"content\[0\]\.data"),
        ({"role": "user", "content": [{"type": "image", "data": "QR==", "mimeType": "x"}]}, "not canonical"),
        ({"role": "toolResult", "toolCallId": "c", "content": [], "isError": "no"}, r"message\.isError: expected a"),
        ({"content": []}, r"message\.role: expected a role"),
        ([], "message: expected an object, got list"),
    ],
)
def test_bad_pi_json_names_the_path(value: Any, message: str) -> None:
    with pytest.raises(pp.PiJsonError, match=message):
        message_from_pi(value)


def test_events_convert_to_pi_events_and_back() -> None:
    accumulator = pp.Accumulator()
    for event in pp.events_of(ASSISTANT, delta_size=5):
        accumulator.apply(event)
        pi_event = json.loads(json.dumps(event_to_pi(event)))  # a snapshot, as a JSON line would be
        assert pi_event["type"] == pp.event_kind(event)[0]
        back = event_from_pi(pi_event)
        assert pp.event_kind(back) == pp.event_kind(event)
        if not pp.is_terminal(back):  # pi's non-terminal events carry the partial; ours keeps it
            assert back.partial is not None
            assert event.partial is not None
            # pi-JSON holds arguments as a value, so their text comes back compact: compare values.
            assert message_to_pi(back.partial) == message_to_pi(event.partial)
        assert same_json(event_to_pi(back), pi_event)


def test_pi_events_need_their_partial() -> None:
    with pytest.raises(pp.PiJsonError, match="apply the event with an Accumulator"):
        event_to_pi(pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x")))
    with pytest.raises(pp.PiJsonError, match=r"event\.partial: required"):
        event_from_pi({"type": "text_delta", "contentIndex": 0, "delta": "x"})
    partial = message_to_pi(pp.assistant_message("abc", timestamp=1))
    with pytest.raises(pp.PiJsonError, match="differs from block 0"):
        event_from_pi({"type": "text_end", "contentIndex": 0, "content": "abd", "partial": partial})


def test_blocks_with_only_default_values_convert_back() -> None:
    # betterproto2 messages whose fields all hold defaults are falsy: an empty text block must
    # still be found as the member that is set.
    for original in (
        {"role": "user", "content": [{"type": "text", "text": ""}], "timestamp": 0},
        {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "",
            "content": [{"type": "text", "text": ""}],
            "isError": False,
            "timestamp": 0,
        },
    ):
        assert same_json(round_trip(original), original)
    empty_start = pp.ModelEvent(start=pp.StartEvent(header=pp.AssistantMessage()))
    assert event_to_pi(empty_start) == {
        "type": "start",
        "partial": {"role": "assistant", "content": [], "api": "", "provider": "", "model": "", "timestamp": 0},
    }


@pytest.mark.parametrize(
    ("field_path", "in_context"),
    [
        ("context.messages[0].tool_result.tool_call_id", "messages[0].toolCallId"),
        ("context.messages[1].assistant.content[2].tool_call.arguments_json", "messages[1].content[2].arguments"),
        ("context.messages[0].user.content[0].text.text", "messages[0].content[0].text"),
        ("context.messages[0].user", "messages[0]"),
        ("context.tools[0].parameters_json", "tools[0].parameters"),
        ("context.system_prompt", "systemPrompt"),
        ("options.temperature", "options.temperature"),
    ],
)
def test_a_request_field_path_in_the_pi_json_context(field_path: str, in_context: str) -> None:
    assert context_path(field_path) == in_context
