"""The conformance corpus itself: its generated suites are fresh and it covers every message and
event kind, role, stop reason, stream rule and client failure.

The cases run through the harness (`make conformance`), on every runtime: its `python` row is the
Python runtime, case by case, and again with each expected outcome changed, which must fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import betterproto2
import pytest

import pi_proto as pp
from pi_proto._gen.pb2.pi.ai.v1 import message_pb2
from pi_proto._gen.types.pi.ai import v1 as types

from .conformance import corpus, generate

CASES = corpus.load_cases(generate.HERE)
CLIENT_CASES = [case for case in CASES if case.WhichOneof("kind") == "client"]


def test_the_wire_suites_are_fresh() -> None:
    for name, cases in generate.SUITES.items():
        text = (generate.HERE / name).read_text(encoding="utf-8")
        assert text == generate.suite_text(cases), "run: python -m tests.conformance.generate"


def test_the_corpus_covers_every_message_and_event_kind() -> None:
    every = {
        f"pi.ai.v1.{name}"
        for name in types.__all__
        if isinstance(getattr(types, name), type) and issubclass(getattr(types, name), betterproto2.Message)
    }
    wire = [case.wire for case in CASES if case.WhichOneof("kind") == "wire"]
    assert every - {case.type for case in wire} == set()
    events = [pp.decode(pp.ModelEvent, case.binary) for case in wire if case.type == "pi.ai.v1.ModelEvent"]
    assert {pp.event_kind(event)[0] for event in events} == {
        "start", "text_start", "text_delta", "text_end", "thinking_start", "thinking_delta", "thinking_end",
        "toolcall_start", "toolcall_delta", "toolcall_end", "done", "error",
    }  # fmt: skip
    assert any(len(case.binary) > 1024 * 1024 for case in wire)


def test_the_wire_corpus_covers_every_role_and_stop_reason() -> None:
    wire = [case.wire for case in CASES if case.WhichOneof("kind") == "wire"]
    entries = [pp.decode(pp.AgentMessage, case.binary) for case in wire if case.type == "pi.ai.v1.AgentMessage"]
    roles = {field.name for field in message_pb2.AgentMessage.DESCRIPTOR.oneofs_by_name["role"].fields}
    assert {pp.role_of(entry) for entry in entries} == roles
    reasons = {
        pp.decode(pp.AssistantMessage, case.binary).stop_reason
        for case in wire
        if case.type == "pi.ai.v1.AssistantMessage"
    }
    assert reasons == set(pp.StopReason) - {pp.StopReason.UNSPECIFIED}  # a start header's, never a message's


def test_the_corpus_covers_every_stream_rule_and_client_failure() -> None:
    stream_rules = {case.stream.failure.rule_id for case in CASES if case.stream.HasField("failure")}
    rules = {pp.stream_rule_id(rule) for rule in pp.StreamRule if rule != pp.StreamRule.UNSPECIFIED}
    receivers = {"terminal-missing", "event-decode", "sequence"}  # rules of bytes from the wire: client cases
    assert stream_rules == rules - receivers
    client = [case.client.expect for case in CLIENT_CASES]
    assert {outcome.rule.rule_id for outcome in client if outcome.HasField("rule")} >= receivers | {
        "terminal-valid", "size-limit", "terminal-digest",
    }  # fmt: skip
    assert any(case.client.resumptions for case in CLIENT_CASES)
    assert {outcome.status_code for outcome in client if outcome.status_code} >= {"UNAVAILABLE", "DEADLINE_EXCEEDED"}
    settings = [case.client.client for case in CLIENT_CASES]
    assert any(item.cancel_after_ms for item in settings)
    assert any(item.cancel_after_events for item in settings)


def test_a_corpus_file_that_is_not_a_regular_file_is_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "cases.yaml")  # the reference server would wait on it for ever
    with pytest.raises(
        ValueError, match=r"cases\.yaml: not a pi\.conformance\.v1\.Suite in YAML ProtoJSON: not a regular"
    ):
        corpus.load_cases(tmp_path)
