"""The validation API: violations are structured, cover both message forms, and real data passes.

Which rules exist and what each one refuses is pinned by tests/conformance/validate.yaml, for
every runtime; these tests cover what is Python's own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pi_proto as pp
from pi_proto.models.seed import readme_transcript
from pi_proto.transcripts.pi_session import entry_from_pi
from pi_proto.wire import codec as wire
from pi_proto.wire.json_text import MAX_JSON_DEPTH, json_text_problem
from pi_proto.wire.validate import ValidationError, Violation, check, violations

from .conformance.wire_cases import CONTEXT

SESSION = Path(__file__).parent / "fixtures" / "pi-sessions" / "before-compaction.jsonl"


def test_well_formed_requests_and_real_transcripts_pass() -> None:
    check(pp.StreamRequest(context=CONTEXT))
    check(pp.StreamRequest(context=pp.AgentContext(messages=readme_transcript())))
    entries = [entry_from_pi(json.loads(line)) for line in SESSION.read_text(encoding="utf-8").splitlines()]
    assert len(entries) == 1003
    for entry in entries:
        check(entry)
    messages = [entry.message for entry in entries if entry.message is not None]
    assert len(messages) == 990
    check(pp.StreamRequest(context=pp.AgentContext(messages=messages)))


def test_a_violation_names_the_path_the_rule_and_what_is_wrong() -> None:
    call = pp.ToolCall(id="", name="read", arguments_json="{}")
    request = pp.StreamRequest(context=pp.AgentContext(messages=[pp.agent_message(pp.assistant_message(call))]))
    with pytest.raises(ValidationError) as caught:
        check(request)
    (violation,) = caught.value.violations
    assert violation.field_path == "context.messages[0].assistant.content[0].tool_call.id"
    assert violation.rule_id == "string.min_len"
    assert violation.detail
    assert str(caught.value) == str(violation)
    assert str(violation).startswith("context.messages[0].assistant.content[0].tool_call.id: ")


def test_the_public_types_and_the_official_classes_give_the_same_violations() -> None:
    broken = pp.StreamRequest(
        context=pp.AgentContext(tools=[pp.Tool(name="", parameters_json="{}")]),
        options=pp.GenerationOptions(temperature=9),
    )
    assert violations(broken) == violations(wire.to_upb(broken))
    assert {item.rule_id for item in violations(broken)} == {"string.min_len", "double.gte_lte"}


def test_json_text_problems_are_rule_ids_with_details() -> None:
    assert json_text_problem('{"a": [1, 2.5, "x", null, true]}') is None
    assert json_text_problem("[1]", object_required=True) == ("json.object", "must hold a JSON object, got an array")
    nested = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    rule, detail = json_text_problem(nested) or ("", "")
    assert rule == "json.depth"
    assert str(MAX_JSON_DEPTH) in detail
    assert json_text_problem("NaN") == ("json.syntax", "NaN is not JSON")


def test_a_violation_is_a_value() -> None:
    assert Violation("a.b", "required", "x") == Violation("a.b", "required", "x")
    assert str(Violation("", "done.reason_matches_message", "differs")) == (
        "the message: differs [done.reason_matches_message]"
    )
