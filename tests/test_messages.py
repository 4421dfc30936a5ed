"""The constructors and parsed views."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import pi_proto as pp

ROOT = Path(__file__).resolve().parents[1]


def test_user_message_turns_strings_into_text_blocks_and_stamps_now() -> None:
    before = pp.now_ms()
    message = pp.user_message("hi", pp.image(b"\x00", "image/png"))
    assert [pp.block_of(content) for content in message.content] == [
        pp.text("hi"),
        pp.image(b"\x00", "image/png"),
    ]
    assert message.timestamp is not None
    assert before <= message.timestamp <= pp.now_ms()


def test_assistant_message_defaults_and_overrides() -> None:
    default = pp.assistant_message("a")
    assert (default.provider, default.model, default.stop_reason) == (
        "scripted",
        "scripted-v1",
        pp.StopReason.STOP,
    )
    assert default.error_message is None
    assert default.usage == pp.zero_usage()

    usage = pp.Usage(input=18, output=12, total_tokens=30)
    failed = pp.assistant_message(
        provider="p",
        model="m",
        usage=usage,
        stop_reason=pp.StopReason.ERROR,
        error_message="boom",
        timestamp=7,
    )
    assert (failed.provider, failed.model, failed.usage, failed.error_message, failed.timestamp) == (
        "p",
        "m",
        usage,
        "boom",
        7,
    )


def test_blocks_a_role_does_not_admit_are_refused() -> None:
    with pytest.raises(TypeError, match="user message holds text or images, not ToolCall"):
        pp.user_message(pp.tool_call("c", "read"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tool result holds text or images, not ThinkingContent"):
        pp.tool_result_message("c", "read", pp.thinking("x"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="assistant message holds text, thinking or tool calls, not ImageContent"):
        pp.assistant_message(pp.image(b"", "image/png"))  # type: ignore[arg-type]


def test_tool_call_arguments_keep_integers_and_floats_apart() -> None:
    call = pp.tool_call("call_1", "read", {"offset": 10, "ratio": 1.5, "path": "é"})
    assert call.arguments_json == '{"offset":10,"ratio":1.5,"path":"é"}'
    arguments = pp.tool_call_arguments(call)
    assert arguments == {"offset": 10, "ratio": 1.5, "path": "é"}
    assert isinstance(arguments["offset"], int)
    assert isinstance(arguments["ratio"], float)


# JSON numbers at the edges of JavaScript's: integral doubles, negative zero, the exponent
# thresholds, the smallest subnormal, integers beyond 2^53 (read as the nearest double).
EDGES = (
    "[1.0,-0,-0.0,1e21,1e20,999999999999999900000,5e-324,1.5e-6,1e-7,0.1,9007199254740993,2e53,"
    "1152921504606846976,-1152921504606846976,123456789012345678901234567890,1.7976931348623157e308]"
)

# The same, each alone and deep in objects, beside strings that look like such numbers.
NESTED = '{"text 1.0":"5e-06 and 2e53","deep":{"list":[{"x":' + EDGES + '}]},"alone":1.0,"big":[9007199254740993]}'


@pytest.mark.parametrize("text", [EDGES, NESTED, "1.0", "5e-06", '"1.0"'])
def test_json_text_writes_numbers_as_javascript_does(text: str) -> None:
    script = "process.stdout.write(JSON.stringify(JSON.parse(process.argv[1])))"
    node = ROOT / "tests" / "pi" / "node_modules" / ".bin" / "node"
    assert node.exists(), "`make pi-setup` installs Node 22"
    javascript = subprocess.run([str(node), "-e", script, text], capture_output=True, text=True, check=True)
    assert pp.dump_json(json.loads(text)) == javascript.stdout


@pytest.mark.parametrize(
    ("arguments_json", "message"),
    [("{", "is not valid JSON"), ("[1]", "must be a JSON object, got list"), ("", "is not valid JSON")],
)
def test_tool_call_arguments_reject_what_is_not_an_object(arguments_json: str, message: str) -> None:
    call = pp.ToolCall(id="call_9", name="bash", arguments_json=arguments_json)
    with pytest.raises(ValueError, match=rf"tool call 'call_9' \(bash\): arguments_json {message}"):
        pp.tool_call_arguments(call)


def test_tool_result_details_absent_null_and_present_are_distinct() -> None:
    assert pp.tool_result_details(pp.tool_result_message("c", "t")) is pp.ABSENT
    assert pp.tool_result_details(pp.tool_result_message("c", "t", details=None)) is None
    assert pp.tool_result_details(pp.tool_result_message("c", "t", details={"n": 1})) == {"n": 1}


def test_unwrap_and_agent_message_are_inverse() -> None:
    message = pp.tool_result_message("c", "t", "x", timestamp=1)
    assert pp.unwrap(pp.agent_message(message)) is message
    assert pp.agent_message(pp.agent_message(message)) == pp.agent_message(message)
    with pytest.raises(ValueError, match="no role"):
        pp.unwrap(pp.AgentMessage())
