"""The seed's text-projection test, and proof that it catches a projection that leaks tool names."""

from __future__ import annotations

from collections.abc import Callable

import betterproto2
import pytest

import pi_proto as pp
from pi_proto._gen.types.pi.ai.v1 import SystemMessage, SystemSection


def leaky_text_of(message: pp.AssistantMessage) -> str:
    """The seed's deliberate failure: tool names leak into the projection."""
    parts = []
    for content in message.content:
        block = pp.block_of(content)
        parts.append(block.text if isinstance(block, pp.TextContent) else getattr(block, "name", ""))
    return "\n".join(parts)


def check_text_projection(project: Callable[[pp.AssistantMessage], str]) -> None:
    message = pp.assistant_message("先读取", pp.tool_call("call_1", "read", {"path": "README.md"}), "再回答")
    before = pp.encode(message)

    assert project(message) == "先读取\n再回答"
    assert betterproto2.which_one_of(message.content[1], "block")[0] == "tool_call"
    assert message.content[1].tool_call == pp.tool_call("call_1", "read", {"path": "README.md"})
    assert pp.encode(message) == before


def test_text_projection_keeps_text_only_and_leaves_content_untouched() -> None:
    check_text_projection(pp.text_of)


def test_text_projection_test_fails_when_tool_names_leak() -> None:
    with pytest.raises(AssertionError, match="read"):
        check_text_projection(leaky_text_of)


def test_text_of_accepts_every_role_and_the_wrapper() -> None:
    user = pp.user_message("a", pp.image(b"\x00", "image/png"), "b")
    result = pp.tool_result_message("call_1", "read", "line 1", "line 2")
    assert pp.text_of(user) == "a\nb"
    assert pp.text_of(pp.agent_message(result)) == "line 1\nline 2"
    assert pp.text_of(pp.assistant_message(pp.thinking("hidden"))) == ""


def test_text_of_a_system_message_is_its_content_without_sections_or_tools() -> None:
    system = SystemMessage(
        content=[pp.text("You are pi."), pp.text("先读取文件。")],
        sections=[SystemSection(name="skills", text="- read")],
        tools_added=[pp.Tool(name="read")],
    )
    before = pp.encode(system)
    assert pp.text_of(system) == "You are pi.\n先读取文件。"
    assert pp.text_of(pp.agent_message(system)) == "You are pi.\n先读取文件。"
    assert pp.role_of(pp.agent_message(system)) == "system"
    assert pp.text_of(pp.AgentMessage(system=SystemMessage())) == ""
    assert pp.encode(system) == before
