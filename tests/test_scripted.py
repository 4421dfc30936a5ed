"""ScriptedModel: deterministic turns, deltas of a given size, scripts from files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import betterproto2
import pytest

import pi_proto as pp
from pi_proto.pi_json import assistant_from_pi
from pi_proto.scripted import ScriptedModel
from pi_proto.seed import README_REQUEST


def context_after(*messages: pp.AgentMessage) -> pp.AgentContext:
    return pp.AgentContext(messages=[pp.agent_message(pp.user_message(README_REQUEST)), *messages])


async def play(model: ScriptedModel, context: pp.AgentContext) -> tuple[list[str], pp.AssistantMessage]:
    events = model.stream(context)
    kinds = [betterproto2.which_one_of(event, "event")[0] async for event in events]
    return kinds, await events.result()


async def test_two_turns_then_out_of_turns() -> None:
    model = ScriptedModel.readme(delta_size=4)
    script = json.loads((Path(pp.__file__).parent / "scripts" / "readme.json").read_text(encoding="utf-8"))

    kinds, first = await asyncio.wait_for(play(model, context_after()), 5)
    assert kinds == ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end",
                     "toolcall_start", *["toolcall_delta"] * 5, "toolcall_end", "done"]  # fmt: skip
    assert first == assistant_from_pi(script[0])
    assert first.stop_reason == pp.StopReason.TOOL_USE

    result = pp.tool_result_message("call_1", "read", "# tiny-pi")
    kinds, second = await asyncio.wait_for(
        play(model, context_after(pp.agent_message(first), pp.agent_message(result))), 5
    )
    assert kinds[0] == "start"
    assert kinds[-1] == "done"
    assert second == assistant_from_pi(script[1])
    assert second.stop_reason == pp.StopReason.STOP
    assert "项目名" in pp.text_of(second)

    kinds, third = await asyncio.wait_for(
        play(model, context_after(pp.agent_message(first), pp.agent_message(second))), 5
    )
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
