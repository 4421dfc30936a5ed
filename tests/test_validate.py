"""The message and request rules: each failure names the field path and what is wrong."""

from __future__ import annotations

import pytest

import pi_proto as pp
from pi_proto.seed import readme_transcript
from pi_proto.validate import Limits, ValidationError, check_message, check_request, parse_json_object

from .vectors.cases import CONTEXT


def request_with(*messages: pp.AgentMessage, tools: list[pp.Tool] | None = None) -> pp.StreamRequest:
    return pp.StreamRequest(context=pp.AgentContext(messages=list(messages), tools=tools or []))


def assistant_with(*blocks: pp.TextContent | pp.ThinkingContent | pp.ToolCall) -> pp.AgentMessage:
    return pp.agent_message(pp.assistant_message(*blocks, timestamp=1))


def test_well_formed_requests_and_real_transcripts_pass() -> None:
    check_request(pp.StreamRequest(context=CONTEXT))
    check_request(request_with(*readme_transcript()))


BROKEN = [
    (pp.StreamRequest(), "StreamRequest.context: required"),
    (request_with(pp.AgentMessage()), r"messages\[0\]\.role: exactly one of user, assistant, .* found none"),
    (
        request_with(pp.agent_message(pp.UserMessage(content=[pp.UserContent()]))),
        r"messages\[0\]\.user\.content\[0\]\.block: exactly one of text, image must be set, found none",
    ),
    (
        request_with(assistant_with(pp.ToolCall(id="", name="read", arguments_json="{}"))),
        r"messages\[0\]\.assistant\.content\[0\]\.tool_call\.id: must not be empty",
    ),
    (
        request_with(assistant_with(pp.ToolCall(id="c", name="read", arguments_json='"x"'))),
        r"tool_call\.arguments_json: must be a JSON object, got string",
    ),
    (
        request_with(assistant_with(pp.ToolCall(id="c", name="read", arguments_json="{"))),
        r"tool_call\.arguments_json: not valid JSON",
    ),
    (
        request_with(pp.agent_message(pp.assistant_message(stop_reason=pp.StopReason.UNSPECIFIED, timestamp=1))),
        r"messages\[0\]\.assistant\.stop_reason: must be set",
    ),
    (
        request_with(pp.agent_message(pp.tool_result_message("", "read", "x"))),
        r"messages\[0\]\.tool_result\.tool_call_id: must not be empty",
    ),
    (
        request_with(pp.agent_message(pp.tool_result_message("c", "read", details=[1]))),
        r"tool_result\.details_json: must be a JSON object, got list",
    ),
    (
        request_with(tools=[pp.Tool(name="read", parameters_json="true")]),
        r"tools\[0\]\.parameters_json: must be a JSON Schema object, got boolean",
    ),
    (request_with(tools=[pp.Tool(parameters_json="{}")]), r"tools\[0\]\.name: must not be empty"),
    (
        pp.StreamRequest(context=pp.AgentContext(), options=pp.GenerationOptions(max_tokens=0)),
        r"StreamRequest\.options\.max_tokens: must be at least 1, got 0",
    ),
    (
        pp.StreamRequest(context=pp.AgentContext(), options=pp.GenerationOptions(temperature=3.5)),
        r"StreamRequest\.options\.temperature: must be between 0 and 2, got 3\.5",
    ),
    (
        request_with(pp.AgentMessage(custom=pp.CustomMessage(role="bashExecution", fields_json="[]"))),
        r"messages\[0\]\.custom\.fields_json: must be a JSON object, got list",
    ),
]


@pytest.mark.parametrize(("request_", "message"), BROKEN, ids=[message for _, message in BROKEN])
def test_broken_requests_name_the_field(request_: pp.StreamRequest, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        check_request(request_)


def test_json_size_and_depth_limits() -> None:
    limits = Limits(max_json_bytes=100, max_json_depth=3)
    parse_json_object('{"a": {"b": [1]}}', "x", limits)
    with pytest.raises(ValidationError, match=r"x: 103 bytes of JSON, above the limit of 100"):
        parse_json_object('{"a": "' + "y" * 94 + '"}', "x", limits)
    with pytest.raises(ValidationError, match="nested deeper than the limit of 3"):
        parse_json_object('{"a": {"b": [[1]]}}', "x", limits)
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000  # deeper than Python's own recursion limit
    with pytest.raises(ValidationError, match="nested deeper than the limit of 64"):
        parse_json_object(deep, "x", Limits(max_json_bytes=10**7))


def test_the_default_limits_are_documented_values() -> None:
    assert Limits() == Limits(max_json_bytes=4 * 1024 * 1024, max_json_depth=64)


def test_every_entry_of_a_message_path_is_named() -> None:
    nested = pp.AgentMessage(session_entry=pp.SessionEntry(type="", fields_json="{}"))
    with pytest.raises(ValidationError, match=r"^entry\.session_entry\.type: must not be empty$"):
        check_message(nested, "entry")
