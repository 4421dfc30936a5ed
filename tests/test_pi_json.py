"""pi-JSON converts losslessly: real pi sessions, number types, absent fields, unmodelled fields."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pi_proto as pp
from pi_proto._gen.types.pi.ai import v1
from pi_proto.transcripts import surrogates
from pi_proto.transcripts.convert import kind_of
from pi_proto.transcripts.pi_json import (
    context_from_pi,
    context_path,
    context_to_pi,
    event_from_pi,
    event_to_pi,
    message_from_pi,
    message_to_pi,
)
from pi_proto.transcripts.pi_session import entry_from_pi, entry_to_pi

from .conformance.wire_cases import ASSISTANT
from .jsonstrict import same_in_javascript, same_json

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
            "cost": {"input": 0, "output": 0.5, "cacheRead": 1, "cacheWrite": 2, "total": 1.5},
        },
        "stopReason": "stop",
        "timestamp": 1765233665294,
    }
    return {**base, **fields}


def test_numbers_are_written_as_javascript_writes_them() -> None:
    original = assistant()
    original["usage"]["cost"]["cacheRead"] = 1.0  # not what pi writes: JSON.stringify gives 1
    back = round_trip(original)
    assert same_in_javascript(back, original)  # 1.0 and 1 are one value
    cost = back["usage"]["cost"]
    assert isinstance(cost["input"], int)
    assert isinstance(cost["cacheRead"], int)
    assert isinstance(cost["output"], float)
    message = message_from_pi(original)
    assert message.assistant is not None
    assert message.assistant.usage is not None
    assert message.assistant.usage.extra_json == ""  # nothing kept aside for the number's form


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
    for details in (None, {}, [1, 2.5], "x", 0):
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
            {"type": "toolCall", "id": "c1", "name": "edit", "arguments": {"n": 1, "f": 1.5}, "partialJson": '{"n": 1'},
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


def test_the_course_shape_reads_and_keeps_what_it_lacks_absent_as_unset_fields() -> None:
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
    assert message.assistant.api is None
    assert message.assistant.usage is not None
    assert (message.assistant.usage.cache_read, message.assistant.usage.cache_write) == (None, None)
    assert message.assistant.extra_json == ""  # presence is the fields' own, with no bookkeeping
    assert pp.dump_json(round_trip(seed)) == pp.dump_json(seed)


def test_an_edit_of_a_read_message_is_what_gets_written() -> None:
    seed = {
        "role": "assistant",
        "content": [],
        "usage": {"input": 1, "output": 2, "totalTokens": 3, "cost": {"input": 1.0, "total": 1}},
        "stopReason": "stop",
    }
    message = message_from_pi(seed).assistant
    assert message is not None
    assert message.usage is not None
    assert message.usage.cost is not None
    message.usage.cache_read = 100
    message.usage.cost.input = 2.5
    message.api = "anthropic-messages"
    written = pp.message_to_pi(message)
    assert written["api"] == "anthropic-messages"
    assert written["usage"]["cacheRead"] == 100
    assert written["usage"]["cost"] == {"input": 2.5, "total": 1}


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


def test_pi_events_carry_their_partial_or_are_delta_only() -> None:
    with pytest.raises(pp.PiJsonError, match="apply the event with an Accumulator"):
        event_to_pi(pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x")))
    delta = event_from_pi({"type": "text_delta", "contentIndex": 0, "delta": "x"})  # pi 1.6's json mode
    assert delta == pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x"))
    assert event_to_pi(delta, delta_only=True) == {"type": "text_delta", "contentIndex": 0, "delta": "x"}
    start = event_from_pi({"type": "toolcall_start", "contentIndex": 2, "id": "c", "toolName": "read"})
    assert start.toolcall_start == pp.ToolCallStartEvent(content_index=2, id="c", name="read")
    with pytest.raises(pp.PiJsonError, match="unknown field 'partialJson'"):
        event_from_pi({"type": "toolcall_delta", "contentIndex": 0, "delta": "{", "partialJson": "{"})
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
    assert event_to_pi(empty_start) == {"type": "start", "partial": {"role": "assistant", "content": []}}


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


# --- pi 1.6: system messages, and the fields pi 1.6 adds ------------------------------------------

READ_TOOL = {"name": "read", "description": "Read a file.", "parameters": {"type": "object", "properties": {}}}
SYSTEM = {
    "role": "system",
    "content": "You are pi, a coding agent.",
    "sections": {"<environment>": "<environment>cwd: /repo</environment>", "guidelines": "## Guidelines", "old": None},
    "timestamp": 1765233660000,  # before the tools, as pi's agent loop writes them
    "toolsAdded": [
        {**READ_TOOL, "constrainedSampling": {"type": "json_schema", "strict": "require"}},
        {**READ_TOOL, "name": "bash", "constrainedSampling": False},
        {**READ_TOOL, "name": "patch", "constrainedSampling": {"type": "grammar", "variants": {"openai_lark": "s"}}},
    ],
    "toolsRemoved": [{"name": "grep"}],
}
USAGE_16: dict[str, Any] = {
    "input": 1203,
    "output": 41,
    "cacheRead": 5000,
    "cacheWrite": 300,
    "reasoning": 0,
    "totalTokens": 6544,
    "cost": {"input": 0.003609, "output": 0.000615, "cacheRead": 0.0015, "cacheWrite": 0, "total": 0.005724},
    "cacheWrite1h": 100,
}
USAGE_16["cost"]["totalFromProvider"] = True
ASSISTANT_16 = {
    **{key: value for key, value in assistant().items() if key in ("role", "content", "api", "provider", "model")},
    "usage": USAGE_16,
    "stopReason": "deferred",
    "deferred": {
        "provider": "openai",
        "modelId": "gpt-5",
        "api": "openai-responses",
        "id": "resp_1",
        "expiresAt": 1765320000000,
        "pollAfterMs": 2000,
        "data": {"row": 3},
    },
    "timestamp": 1765233665294,
    "providerThinkingLevel": "high",
    "responseId": "msg_01",
    "responseModel": "claude-sonnet-4-5-20250929",
    "rawStopReason": "end_turn",
    "endTurn": False,
    "errorMessage": "",
    "diagnostics": [
        {
            "type": "provider_transport_failure",
            "timestamp": 1765233665300,
            "error": {"name": "Error", "message": "socket hang up", "stack": "Error: ...", "code": "ECONNRESET"},
            "details": {"attempt": 1},
        },
        {"type": "overloaded", "timestamp": 1765233665400, "error": {"message": "Overloaded", "code": 529}},
    ],
    "durationMs": 0,
    "thinkingLevel": "off",
}
TOOL_RESULT_16 = {
    "role": "toolResult",
    "toolCallId": "toolu_01",
    "toolName": "codemode",
    "content": [{"type": "text", "text": "3 files"}],
    "details": {"files": 3},
    "usage": {"input": 50, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 60},
    "nestedCalls": {
        "calls": [
            {"id": "n1", "name": "read", "arguments": {"path": "a.ts"}, "status": "ok", "durationMs": 4},
            {
                "id": "n2",
                "name": "bash",
                "argumentsBytes": 70000,
                "status": "error",
                "durationMs": 0,
                "error": "exit 1",
            },
            {"id": "n3", "name": "grep", "arguments": {}, "status": "unfinished"},
        ],
        "complete": False,
    },
    "isError": False,
    "durationMs": 130,
    "timestamp": 1765233666000,
}


def text_round_trip(value: dict[str, Any]) -> str:
    return pp.dump_json(round_trip(value))


@pytest.mark.parametrize("value", [SYSTEM, ASSISTANT_16, TOOL_RESULT_16], ids=["system", "assistant", "tool-result"])
def test_every_field_pi_1_6_adds_converts_back_to_the_same_text(value: dict[str, Any]) -> None:
    assert text_round_trip(value) == pp.dump_json(value)


def test_pi_1_6_fields_are_modelled_not_kept_as_extras() -> None:
    message = through_the_wire(message_from_pi(ASSISTANT_16)).assistant
    assert message is not None
    assert message.extra_json == ""
    assert (message.stop_reason, message.thinking_level) == (pp.StopReason.DEFERRED, v1.ModelThinkingLevel.OFF)
    assert (message.response_id, message.response_model) == ("msg_01", "claude-sonnet-4-5-20250929")
    assert (message.provider_thinking_level, message.raw_stop_reason) == ("high", "end_turn")
    assert (message.end_turn, message.error_message, message.duration_ms) == (False, "", 0)
    assert message.deferred is not None
    assert (message.deferred.model_id, message.deferred.expires_at, message.deferred.data_json) == (
        "gpt-5",
        1765320000000,
        '{"row":3}',
    )
    first, second = message.diagnostics
    assert first.error is not None
    assert (first.error.code_text, first.error.code_number, first.details_json) == ("ECONNRESET", None, '{"attempt":1}')
    assert second.error is not None
    assert (second.error.name, second.error.code_text, second.error.code_number) == (None, None, 529.0)
    assert message.usage is not None
    assert (message.usage.reasoning, message.usage.cache_write_1h) == (0, 100)
    assert message.usage.cost is not None
    assert message.usage.cost.total_from_provider is True

    result = through_the_wire(message_from_pi(TOOL_RESULT_16)).tool_result
    assert result is not None
    assert result.extra_json == ""
    assert result.duration_ms == 130
    assert result.usage is not None
    assert result.usage.cost is None
    assert result.nested_calls is not None
    assert result.nested_calls.complete is False
    statuses = [call.status for call in result.nested_calls.calls]
    assert statuses == [v1.NestedCallStatus.OK, v1.NestedCallStatus.ERROR, v1.NestedCallStatus.UNFINISHED]
    read, bash, grep = result.nested_calls.calls
    assert (read.arguments_json, read.arguments_bytes) == ('{"path":"a.ts"}', None)
    assert (bash.arguments_json, bash.arguments_bytes, bash.duration_ms) == (None, 70000, 0)
    assert (grep.arguments_json, grep.duration_ms, grep.error) == ("{}", None, None)


def test_a_system_role_is_a_system_message_with_its_sections_in_order() -> None:
    message = through_the_wire(message_from_pi(SYSTEM))
    assert message.custom is None
    system = message.system
    assert system is not None
    assert system.extra_json == ""
    assert system.string_content
    assert [block.text for block in system.content] == ["You are pi, a coding agent."]
    assert pp.text_of(message) == "You are pi, a coding agent."
    assert [(section.name, section.text) for section in system.sections] == [
        ("<environment>", "<environment>cwd: /repo</environment>"),
        ("guidelines", "## Guidelines"),
        ("old", None),  # pi's null: this message removes the section
    ]
    samplings = [tool.constrained_sampling for tool in system.tools_added]
    assert samplings == [
        v1.ConstrainedSampling(json_schema=v1.JsonSchemaSampling(strict=v1.Strictness.REQUIRE)),
        v1.ConstrainedSampling(off=True),
        v1.ConstrainedSampling(grammar=v1.GrammarSampling(openai_lark="s")),
    ]
    assert [reference.name for reference in system.tools_removed] == ["grep"]
    # Content as blocks; sections named without integers (which JavaScript objects put first) keep
    # their order, not sorted.
    blocks = {
        "role": "system",
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b", "textSignature": "s"}],
        "sections": {"z-last": "z", "a-first": None},
        "timestamp": 0,
    }
    read = message_from_pi(blocks).system
    assert read is not None
    assert (read.string_content, read.extra_json) == (False, "")
    assert [section.name for section in read.sections] == ["z-last", "a-first"]
    assert text_round_trip(blocks) == pp.dump_json(blocks)


def test_absent_differs_from_zero_false_and_empty() -> None:
    bare = assistant()
    message = message_from_pi(bare).assistant
    assert message is not None
    assert message.usage is not None
    assert (message.usage.reasoning, message.usage.cache_write_1h) == (None, None)
    assert message.usage.cost is not None
    assert message.usage.cost.total_from_provider is None
    assert (message.end_turn, message.duration_ms, message.deferred) == (None, None, None)
    assert (message.thinking_level, message.diagnostics) == (v1.ModelThinkingLevel.UNSPECIFIED, [])
    assert text_round_trip(bare) == pp.dump_json(bare)
    zeros = assistant(endTurn=False, diagnostics=[], durationMs=0)
    zeros["usage"] = {**zeros["usage"], "reasoning": 0}
    zeros["usage"]["cost"] = {**zeros["usage"]["cost"], "totalFromProvider": False}
    assert text_round_trip(zeros) == pp.dump_json(zeros)
    message = message_from_pi(zeros).assistant
    assert message is not None
    assert message.usage is not None
    assert message.usage.reasoning == 0
    assert json.loads(message.extra_json) == {"diagnostics": []}  # the repeated field cannot hold an empty list

    empty = {"role": "system", "content": "", "sections": {}, "timestamp": 0, "toolsAdded": [], "toolsRemoved": []}
    system = message_from_pi(empty).system
    assert system is not None
    assert (system.sections, system.tools_added, system.tools_removed) == ([], [], [])
    assert json.loads(system.extra_json) == {"sections": {}, "toolsAdded": [], "toolsRemoved": []}
    assert text_round_trip(empty) == pp.dump_json(empty)
    minimal = {"role": "system", "content": "", "timestamp": 0}
    assert text_round_trip(minimal) == pp.dump_json(minimal)

    handle = {"provider": "p", "modelId": "m", "api": "a", "id": "x"}
    for data in ({}, {"data": None}, {"data": 0}):
        deferred = assistant(stopReason="deferred", deferred={**handle, **data})
        assert text_round_trip(deferred) == pp.dump_json(deferred)
    no_arguments = {
        **TOOL_RESULT_16,
        "nestedCalls": {"calls": [{"id": "n", "name": "t", "status": "ok"}], "complete": True},
    }
    assert text_round_trip(no_arguments) == pp.dump_json(no_arguments)


def test_keys_in_another_order_than_the_writers_keep_their_order() -> None:
    # Anthropic adds cacheWrite1h and reasoning to the usage after its cost; pi-messages writes a
    # failed call's errorMessage before the timestamp.
    anthropic = assistant()
    anthropic["usage"] = {**anthropic["usage"], "cacheWrite1h": 0, "reasoning": 12}
    failed = {key: value for key, value in assistant().items() if key != "timestamp"}
    failed.update(stopReason="error", errorMessage="502", timestamp=5)
    for original in (anthropic, failed):
        assert text_round_trip(original) == pp.dump_json(original)
    usage = (message_from_pi(anthropic).assistant or pp.AssistantMessage()).usage
    assert usage is not None
    assert json.loads(usage.extra_json)["$order"][-2:] == ["cacheWrite1h", "reasoning"]
    # In the writer's own order, nothing is recorded.
    assert message_from_pi(ASSISTANT_16).assistant == through_the_wire(message_from_pi(ASSISTANT_16)).assistant
    assert list(round_trip(ASSISTANT_16)) == list(ASSISTANT_16)


def test_the_writer_writes_pi_1_6_keys_in_pis_order() -> None:
    message = message_from_pi(ASSISTANT_16).assistant
    assert message is not None
    assert list(message_to_pi(message)) == [
        *("role", "content", "api", "provider", "model", "usage", "stopReason", "deferred", "timestamp"),
        *("providerThinkingLevel", "responseId", "responseModel", "rawStopReason", "endTurn", "errorMessage"),
        *("diagnostics", "durationMs", "thinkingLevel"),
    ]
    # A modelled key kept as an extra (an empty list) takes its place among them.
    message.extra_json = '{"diagnostics":[]}'
    message.diagnostics = []
    assert list(message_to_pi(message))[-3:] == ["diagnostics", "durationMs", "thinkingLevel"]


def test_nested_objects_keep_their_own_extras_and_order() -> None:
    # Diagnostics, deferred handles, nested calls, tool references and constrained sampling keep
    # the keys the schema does not model in their own extra_json, so the holder's never shadows a
    # field.
    odd_diagnostic = {"timestamp": 1, "type": "x", "error": {"message": "m", "errno": -104, "code": 500.0}}
    odd_handle = {"id": "x", "provider": "p", "modelId": "m", "api": "a"}
    for original in (
        assistant(stopReason="error", errorMessage="m", diagnostics=[odd_diagnostic]),
        assistant(stopReason="deferred", deferred=odd_handle),
        {**TOOL_RESULT_16, "nestedCalls": {"complete": True, "calls": [], "dropped": 2}},
        {**SYSTEM, "toolsAdded": [{**READ_TOOL, "constrainedSampling": {"strict": "prefer", "type": "json_schema"}}]},
        {**SYSTEM, "toolsRemoved": [{"name": "grep", "namespace": "ns"}]},
        {
            **SYSTEM,
            "toolsAdded": [
                {**READ_TOOL, "constrainedSampling": {"type": "grammar", "variants": {"lark": "x"}, "note": 1}}
            ],
        },
    ):
        assert text_round_trip(original) == pp.dump_json(original)
    message = message_from_pi(assistant(stopReason="error", errorMessage="m", diagnostics=[odd_diagnostic]))
    assert message.assistant is not None
    assert message.assistant.extra_json == ""
    error = message.assistant.diagnostics[0].error
    assert error is not None
    assert error.code_number == 500.0
    assert json.loads(error.extra_json)["errno"] == -104
    error.message = "edited"
    assert pp.message_to_pi(message)["diagnostics"][0]["error"]["message"] == "edited"


def test_transcript_contexts_carry_their_system_messages() -> None:
    later: dict[str, Any] = {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    later.update(sections={"old": None}, timestamp=9)
    original = {"messages": [SYSTEM, {"role": "user", "content": "hi", "timestamp": 1}, later]}
    context = pp.decode(pp.AgentContext, pp.encode(context_from_pi(original)))
    assert context.system_prompt is None
    assert context.tools == []
    assert [pp.role_of(message) for message in context.messages] == ["system", "user", "system"]
    assert pp.dump_json(context_to_pi(context)) == pp.dump_json(original)
    # pi's Context shorthand and a leading system message are both carried, not merged.
    both = {"systemPrompt": "p", "messages": [SYSTEM], "tools": [READ_TOOL]}
    assert pp.dump_json(context_to_pi(context_from_pi(both))) == pp.dump_json(both)


def test_terminal_events_take_pi_1_6_stop_reasons() -> None:
    handle = {"provider": "p", "modelId": "m", "api": "a", "id": "x"}
    final = assistant(stopReason="deferred", deferred=handle)
    event = event_from_pi({"type": "done", "reason": "deferred", "message": final})
    assert event.done is not None
    assert event.done.reason == pp.StopReason.DEFERRED
    assert same_json(event_to_pi(event), {"type": "done", "reason": "deferred", "message": final})


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (assistant(thinkingLevel="extreme"), "message.thinkingLevel"),
        (assistant(stopReason="paused"), "message.stopReason"),
        (assistant(diagnostics={}), "message.diagnostics"),
        (assistant(diagnostics=[{"timestamp": 1}]), "message.diagnostics[0].type"),
        (
            assistant(diagnostics=[{"type": "x", "timestamp": 1, "error": {"message": "m", "code": True}}]),
            "message.diagnostics[0].error.code",
        ),
        (
            assistant(diagnostics=[{"type": "x", "timestamp": 1, "error": {"message": "m", "code": 2**60}}]),
            "message.diagnostics[0].error.code",
        ),
        (
            assistant(diagnostics=[{"type": "x", "timestamp": 1, "error": {"code": "E"}}]),
            "message.diagnostics[0].error.message",
        ),
        (assistant(diagnostics=[{"type": "x", "timestamp": 1, "details": [1]}]), "message.diagnostics[0].details"),
        (assistant(deferred={"provider": "p", "modelId": "m", "api": "a"}), "message.deferred.id"),
        (
            assistant(deferred={"provider": "p", "modelId": "m", "api": "a", "id": "x", "pollAfterMs": "1s"}),
            "message.deferred.pollAfterMs",
        ),
        (assistant(endTurn="yes"), "message.endTurn"),
        (assistant(durationMs=1.5), "message.durationMs"),
        (assistant(responseId=1), "message.responseId"),
        (assistant(usage={**USAGE_16, "reasoning": 1.5}), "message.usage.reasoning"),
        (assistant(usage={**USAGE_16, "cacheWrite1h": "0"}), "message.usage.cacheWrite1h"),
        (assistant(usage={**USAGE_16, "cost": {"totalFromProvider": 1}}), "message.usage.cost.totalFromProvider"),
        ({**TOOL_RESULT_16, "usage": []}, "message.usage"),
        (
            {
                **TOOL_RESULT_16,
                "nestedCalls": {"calls": [{"id": "n", "name": "t", "status": "cancelled"}], "complete": True},
            },
            "message.nestedCalls.calls[0].status",
        ),
        ({**TOOL_RESULT_16, "nestedCalls": {"calls": []}}, "message.nestedCalls.complete"),
        (
            {
                **TOOL_RESULT_16,
                "nestedCalls": {
                    "calls": [{"id": "n", "name": "t", "status": "ok", "arguments": "{}"}],
                    "complete": True,
                },
            },
            "message.nestedCalls.calls[0].arguments",
        ),
        ({**SYSTEM, "content": [{"type": "image", "data": "", "mimeType": "x"}]}, "message.content[0].type"),
        ({**SYSTEM, "sections": {"guidelines": 3}}, "message.sections.guidelines"),
        ({**SYSTEM, "sections": ["guidelines"]}, "message.sections"),
        ({**SYSTEM, "toolsRemoved": [{}]}, "message.toolsRemoved[0].name"),
        (
            {**SYSTEM, "toolsAdded": [{**READ_TOOL, "constrainedSampling": True}]},
            "message.toolsAdded[0].constrainedSampling",
        ),
        (
            {**SYSTEM, "toolsAdded": [{**READ_TOOL, "constrainedSampling": {"type": "regex"}}]},
            "message.toolsAdded[0].constrainedSampling.type",
        ),
        (
            {
                **SYSTEM,
                "toolsAdded": [{**READ_TOOL, "constrainedSampling": {"type": "json_schema", "strict": "always"}}],
            },
            "message.toolsAdded[0].constrainedSampling.strict",
        ),
        (
            {**SYSTEM, "toolsAdded": [{**READ_TOOL, "constrainedSampling": {"type": "grammar"}}]},
            "message.toolsAdded[0].constrainedSampling.variants",
        ),
        (
            {
                **SYSTEM,
                "toolsAdded": [
                    {**READ_TOOL, "constrainedSampling": {"type": "grammar", "variants": {"openai_lark": 1}}}
                ],
            },
            "message.toolsAdded[0].constrainedSampling.variants.openai_lark",
        ),
    ],
)
def test_a_bad_value_in_a_pi_1_6_object_names_its_path(value: Any, path: str) -> None:
    with pytest.raises(pp.PiJsonError) as raised:
        message_from_pi(value)
    assert raised.value.path == path


def test_the_writer_refuses_what_pi_json_cannot_hold() -> None:
    twice = v1.SystemMessage(sections=[v1.SystemSection(name="a", text="1"), v1.SystemSection(name="a")])
    with pytest.raises(pp.PiJsonError, match=r"SystemMessage\.sections\[1\]\.name: 'a' is named twice"):
        message_to_pi(twice)
    call = v1.NestedToolCall(id="n", name="t")
    result = pp.ToolResultMessage(tool_call_id="c", nested_calls=v1.NestedToolCalls(calls=[call]))
    with pytest.raises(pp.PiJsonError, match=r"NestedToolCall\.status: must be one of ok, error, unfinished"):
        message_to_pi(result)
    with pytest.raises(pp.PiJsonError, match=r"extra_json: \$order is a list of keys"):
        message_to_pi(pp.UserMessage(extra_json='{"$order":"role"}'))


def test_a_request_field_path_of_a_pi_1_6_field() -> None:
    assert context_path("context.messages[0].assistant.usage.cache_write_1h") == "messages[0].usage.cacheWrite1h"
    assert context_path("context.messages[0].system.tools_added[1].name") == "messages[0].toolsAdded[1].name"
    assert context_path("context.messages[2].tool_result.nested_calls.calls[0].arguments_json") == (
        "messages[2].nestedCalls.calls[0].arguments"
    )


# Text made of what the mapping touches: lone surrogates, the range they map to, and plain text.
_TOUCHED = st.sampled_from(["\ud83d", "\udc00", "\udbff", "\U0010f7ff", "\U0010f800", "\U0010ffff", "a", "😀"])


@given(st.lists(_TOUCHED).map("".join))
def test_lone_surrogates_map_to_text_protobuf_holds_and_back(text: str) -> None:
    mapped = surrogates.to_proto(text)
    mapped.encode("utf-8")  # a protobuf string holds it
    assert surrogates.from_proto(mapped) == text
    message = {"role": "user", "content": text, "timestamp": 1}
    written = pp.dump_json(message_to_pi(pp.decode(pp.AgentMessage, pp.encode(message_from_pi(message)))))
    assert written == pp.dump_json(message)
    written.encode("utf-8")  # a lone surrogate is written as its escape


def test_an_edited_message_writes_what_the_user_set() -> None:
    older = assistant()
    del older["usage"]["cacheRead"]  # an older pi's usage, without the key
    older["usage"]["cost"]["input"] = 1.0
    message = message_from_pi(older)
    assert message.assistant is not None
    usage = message.assistant.usage
    assert usage is not None
    assert usage.cost is not None
    assert "cacheRead" not in message_to_pi(message)["usage"]  # unedited, it stays absent
    usage.cache_read, usage.cost.input = 100, 2.5
    written = message_to_pi(message)["usage"]
    assert (written["cacheRead"], written["cost"]["input"]) == (100, 2.5)


def test_the_default_script_writes_usage_as_pi_does() -> None:
    for turn in pp.ScriptedModel.readme().turns:
        usage = turn.usage
        assert usage is not None
        assert usage.extra_json == ""  # no key pi's Usage has is missing, so nothing is kept aside
        assert set(message_to_pi(turn)["usage"]) == {
            "input",
            "output",
            "cacheRead",
            "cacheWrite",
            "totalTokens",
            "cost",
        }
