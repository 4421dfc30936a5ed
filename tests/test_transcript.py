"""The seed's README transcript, built with the API, is the same on the wire in both runtimes."""

from __future__ import annotations

import json

from google.protobuf import json_format

import pi_proto as pp
from pi_proto._gen.pb2.pi.ai.v1 import content_pb2, message_pb2
from pi_proto.models.seed import readme_transcript


def official_transcript() -> list[message_pb2.AgentMessage]:
    """The same transcript written independently with the official classes."""
    text = content_pb2.TextContent
    return [
        message_pb2.AgentMessage(
            user=message_pb2.UserMessage(
                content=[content_pb2.UserContent(text=text(text="请读取 README，然后告诉我项目名。"))],
                timestamp=1000,
            )
        ),
        message_pb2.AgentMessage(
            assistant=message_pb2.AssistantMessage(
                content=[
                    content_pb2.AssistantContent(text=text(text="我先读取项目说明。")),
                    content_pb2.AssistantContent(
                        tool_call=content_pb2.ToolCall(id="call_1", name="read", arguments_json='{"path":"README.md"}')
                    ),
                ],
                api="scripted",
                provider="scripted",
                model="scripted-v1",
                usage=message_pb2.Usage(input=18, output=12, total_tokens=30),
                stop_reason=message_pb2.STOP_REASON_TOOL_USE,
                timestamp=1010,
            )
        ),
        message_pb2.AgentMessage(
            tool_result=message_pb2.ToolResultMessage(
                tool_call_id="call_1",
                tool_name="read",
                content=[content_pb2.ToolResultContent(text=text(text="# tiny-pi\nA small agent runtime."))],
                is_error=False,
                timestamp=1020,
            )
        ),
    ]


def test_readme_transcript_is_identical_in_both_runtimes() -> None:
    for ours, official in zip(readme_transcript(), official_transcript(), strict=True):
        ours_bytes, official_bytes = bytes(ours), official.SerializeToString()
        assert ours_bytes == official_bytes
        assert pp.encode(ours) == official_bytes
        assert message_pb2.AgentMessage.FromString(ours_bytes) == official
        assert pp.AgentMessage.parse(official_bytes) == ours
        assert pp.decode(pp.AgentMessage, official_bytes) == ours
        assert ours.to_dict() == json_format.MessageToDict(official)
        assert json.loads(pp.to_json(ours)) == json.loads(json_format.MessageToJson(official))


def test_tool_call_id_pairs_with_tool_result() -> None:
    _, assistant, result = (pp.unwrap(message) for message in readme_transcript())
    assert isinstance(assistant, pp.AssistantMessage)
    assert isinstance(result, pp.ToolResultMessage)
    call = assistant.content[1].tool_call
    assert call is not None
    assert call.id == result.tool_call_id == "call_1"
    assert call.name == result.tool_name == "read"
    assert pp.tool_call_arguments(call) == {"path": "README.md"}
    assert assistant.stop_reason == pp.StopReason.TOOL_USE
    assert pp.text_of(assistant) == "我先读取项目说明。"
