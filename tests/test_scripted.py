"""ScriptedModel: deterministic turns, deltas of a given size, scripts from files."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import betterproto2
import pytest

import pi_proto as pp
from pi_proto.models.scripted import ScriptedModel, ScriptError
from pi_proto.models.seed import README_REQUEST
from pi_proto.transcripts.pi_json import assistant_from_pi


def context_after(*messages: pp.AgentMessage) -> pp.AgentContext:
    return pp.AgentContext(messages=[pp.agent_message(pp.user_message(README_REQUEST)), *messages])


async def play(model: ScriptedModel, context: pp.AgentContext) -> tuple[list[str], pp.AssistantMessage]:
    events = model.stream(context)
    kinds = [betterproto2.which_one_of(event, "event")[0] async for event in events]
    return kinds, await events.result()


async def test_two_turns_then_out_of_turns() -> None:
    model = ScriptedModel.readme(delta_size=4)
    script = json.loads((Path(pp.__file__).parent / "models" / "scripts" / "readme.json").read_text(encoding="utf-8"))

    kinds, first = await play(model, context_after())
    assert kinds == ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end",
                     "toolcall_start", *["toolcall_delta"] * 5, "toolcall_end", "done"]  # fmt: skip
    assert first == assistant_from_pi(script[0])
    assert first.stop_reason == pp.StopReason.TOOL_USE

    result = pp.tool_result_message("call_1", "read", "# tiny-pi")
    kinds, second = await play(model, context_after(pp.agent_message(first), pp.agent_message(result)))
    assert kinds[0] == "start"
    assert kinds[-1] == "done"
    assert second == assistant_from_pi(script[1])
    assert second.stop_reason == pp.StopReason.STOP
    assert "项目名" in pp.text_of(second)

    kinds, third = await play(model, context_after(pp.agent_message(first), pp.agent_message(second)))
    assert kinds == ["start", "error"]
    assert third.stop_reason == pp.StopReason.ERROR
    assert third.error_message == "the script has no turn 3: it has 2 turns"


async def test_deltas_have_the_configured_size_and_join_to_the_text() -> None:
    text = "0123456789abcdefghij😀"
    model = ScriptedModel([pp.assistant_message(text, timestamp=1)], delta_size=6)
    deltas = [event.text_delta.delta async for event in model.stream(context_after()) if event.text_delta]
    assert deltas == ["012345", "6789ab", "cdefgh", "ij😀"]


async def test_a_scripted_error_turn_ends_with_an_error_event() -> None:
    failed = pp.assistant_message("half", stop_reason=pp.StopReason.ERROR, error_message="overloaded", timestamp=1)
    kinds, result = await play(ScriptedModel([failed]), context_after())
    assert kinds[-1] == "error"
    assert (result.stop_reason, result.error_message, pp.text_of(result)) == (
        pp.StopReason.ERROR,
        "overloaded",
        "half",
    )


async def test_turns_without_a_timestamp_are_stamped_now() -> None:
    before = pp.now_ms()
    _, result = await play(ScriptedModel([pp.assistant_message("x", timestamp=0)]), context_after())
    assert result.timestamp is not None
    assert result.timestamp >= before


def test_script_files_with_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text('[{"role": "assistant", "content": [], "stopReason": "finished"}]', encoding="utf-8")
    with pytest.raises(ValueError, match=r"script\.json: turn 1\.stopReason: expected one of stop, length"):
        ScriptedModel.from_file(path)
    path.write_text('{"role": "assistant"}', encoding="utf-8")
    with pytest.raises(ValueError, match="a script is a JSON list"):
        ScriptedModel.from_file(path)
    path.write_text("[", encoding="utf-8")
    with pytest.raises(ValueError, match="cannot read the script"):
        ScriptedModel.from_file(path)
    with pytest.raises(ValueError, match="cannot read the script"):
        ScriptedModel.from_file(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="delta_size must be at least 1"):
        ScriptedModel([], delta_size=0)


TEXT_TURN = '{"role": "assistant", "content": [{"type": "text", "text": "hi"}], "stopReason": "stop"}'
NAMELESS_CALL_TURN = (
    '{"role": "assistant", "content": [{"type": "toolCall", "id": "", "name": "", "arguments": {}}],'
    ' "stopReason": "toolUse"}'
)


@pytest.mark.parametrize(
    ("script", "error"),
    [
        ("[]", r"script\.json: the script has no turns"),
        (
            f"[{TEXT_TURN}, {NAMELESS_CALL_TURN}]",  # the stream would fail every second call
            r"script\.json: turn 2: .*'terminal-valid'.*content\[0\]\.tool_call\.id: .*\[string\.min_len\]",
        ),
        (TEXT_TURN.replace('"assistant"', '"user"').join("[]"), r"script\.json: turn 1\.role: .*got 'user'"),
        (
            TEXT_TURN.replace(', "stopReason": "stop"', "").join("[]"),
            r"script\.json: turn 1: the stop reason is not set",
        ),
    ],
)
def test_script_files_that_could_not_play_are_refused_at_load(tmp_path: Path, script: str, error: str) -> None:
    path = tmp_path / "script.json"
    path.write_text(script, encoding="utf-8")
    with pytest.raises(ValueError, match=error):
        ScriptedModel.from_file(path)


def test_turns_that_could_not_play_are_refused_when_the_model_is_made() -> None:
    with pytest.raises(ScriptError, match="the script has no turns"):
        ScriptedModel([])
    nameless = pp.assistant_message(timestamp=1)
    nameless.content.append(pp.AssistantContent(tool_call=pp.ToolCall(id="call_1", arguments_json="{}")))
    nameless.stop_reason = pp.StopReason.TOOL_USE
    with pytest.raises(ScriptError, match=r"turn 1: .*'terminal-valid'.*tool_call\.name"):
        ScriptedModel([nameless])


def test_option_errors_of_a_script_file_do_not_blame_the_file(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(f"[{TEXT_TURN}]", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^delta_size must be at least 1, got 0$"):
        ScriptedModel.from_file(path, delta_size=0)
    with pytest.raises(ValueError, match=r"^delay must be a finite number of seconds, 0 or more, got -1$"):
        ScriptedModel.from_file(path, delay=-1)


@pytest.mark.parametrize("delay", [math.nan, math.inf, -math.inf, -0.5])
def test_a_delay_that_is_negative_or_not_finite_is_refused(delay: float) -> None:
    # A NaN delay would put NaN due times in the loop's shared Pacer, stalling every paced stream.
    with pytest.raises(ValueError, match=rf"^delay must be a finite number of seconds, 0 or more, got {delay}$"):
        ScriptedModel.readme(delay=delay)


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_script_that_is_not_a_regular_file_is_refused_without_waiting_or_reading_it(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "script.json"
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading would wait for a writer that never comes
    elif kind == "device":
        path.symlink_to("/dev/zero")  # reading it would never end
    else:
        path.mkdir()
    with pytest.raises(ValueError, match=r"script\.json: cannot read the script: not a regular file"):
        ScriptedModel.from_file(path)
