"""The seed's README round trip: a user asks for the project name, the model reads README.md."""

from __future__ import annotations

from .._gen.types.pi.ai.v1 import AgentMessage, StopReason, Usage
from ..ir.messages import agent_message, assistant_message, tool_call, tool_result_message, user_message

README_REQUEST = "请读取 README，然后告诉我项目名。"
README_PREAMBLE = "我先读取项目说明。"
README_TEXT = "# tiny-pi\nA small agent runtime."


def readme_transcript() -> list[AgentMessage]:
    """The three messages of the seed's transcript, exactly as the seed writes them."""
    return [
        agent_message(user_message(README_REQUEST, timestamp=1_000)),
        agent_message(
            assistant_message(
                README_PREAMBLE,
                tool_call("call_1", "read", {"path": "README.md"}),
                usage=Usage(input=18, output=12, total_tokens=30),
                stop_reason=StopReason.TOOL_USE,
                timestamp=1_010,
            )
        ),
        agent_message(tool_result_message("call_1", "read", README_TEXT, timestamp=1_020)),
    ]
