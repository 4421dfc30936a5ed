"""The wire cases of the conformance corpus: every message and event kind of pi.ai.v1, plus edge cases.

`generate.py` turns each into a WireCase of `wire.json` (or `wire-large.json`): the bytes the
official protobuf runtime (upb) encodes, with any unknown fields after them, and the ProtoJSON it
prints.
"""

from __future__ import annotations

from dataclasses import dataclass

import betterproto2

import pi_proto as pp
from pi_proto._gen.types.pi.ai.v1 import JsonShape, JsonText

INT64_MAX = 2**63 - 1
UINT32_MAX = 2**32 - 1
NON_BMP = "𝄞 😀 𠀀"  # outside the Basic Multilingual Plane: surrogate pairs in UTF-16


@dataclass(frozen=True)
class Case:
    name: str
    message: betterproto2.Message
    # Bytes appended to the encoding: fields unknown to the schema, which runtimes must keep.
    unknown: bytes = b""
    description: str = ""


def _big_arguments() -> str:
    unit = 'pi-proto ✓ 𝄞 "quoted" \\ back\n'
    text = unit * (1024 * 1024 // len(unit.encode()) + 1)  # just over 1 MiB of UTF-8
    return pp.dump_json({"path": "big.txt", "content": text})


COST = pp.Cost(input=0.013875000000000002, output=0.0035250000000000004, cache_read=0.0, cache_write=1.5, total=0.5)
USAGE = pp.Usage(input=2775, output=141, cache_read=7, cache_write=9, total_tokens=2932, cost=COST)
CALL = pp.tool_call("call_1", "read", {"path": "README.md", "limit": 10, "ratio": 0.5})
ASSISTANT = pp.assistant_message(
    pp.thinking("让我想想 🤔", signature="sig-Ω", redacted=False),
    pp.text("我先读取项目说明。", signature='{"id":"msg_1"}'),
    pp.tool_call(
        "call_1", "read", {"path": "README.md"}, raw_arguments='{"path": "README.md"}', thought_signature="c2ln"
    ),
    api="anthropic-messages",
    provider="anthropic",
    model="claude-opus-4-5",
    usage=USAGE,
    stop_reason=pp.StopReason.TOOL_USE,
    timestamp=1_765_233_665_294,
)
USER = pp.user_message("看这张图", pp.image(b"\x89PNG\r\n\x1a\n\x00\xff", "image/png"), timestamp=1_000)
RESULT = pp.tool_result_message(
    "call_1",
    "read",
    "# tiny-pi\nA small agent runtime.",
    pp.image(b"GIF89a", "image/gif"),
    details={"lines": 2, "truncated": False},
    is_error=True,
    timestamp=1_020,
)
TOOL = pp.Tool(
    name="read",
    description="Read a file.",
    parameters_json='{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}',
)
CONTEXT = pp.AgentContext(
    system_prompt="回答前先读取相关文件。",
    messages=[pp.agent_message(USER), pp.agent_message(ASSISTANT), pp.agent_message(RESULT)],
    tools=[TOOL],
)
FAILED = pp.assistant_message(
    "partial answer", stop_reason=pp.StopReason.ERROR, error_message="socket reset", timestamp=5
)
OPTIONS = pp.GenerationOptions(
    temperature=1.0,
    max_tokens=4096,
    reasoning=pp.ThinkingLevel.XHIGH,
    thinking_budgets=pp.ThinkingBudgets(minimal=1024, low=2048, medium=8192, high=16384),
    tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read"),
    cache_retention=pp.CacheRetention.LONG,
    session_id="session-1",
    max_retry_delay_ms=0,
    metadata_json='{"user_id":"u-1"}',
    headers={"x-trace": "abc", "anthropic-beta": "fine-grained-tool-streaming-2025-05-14"},
    provider_options_json='{"interleavedThinking":false}',
)
MODEL = pp.Model(
    id="claude-opus-4-5",
    name="Claude Opus 4.5",
    api="anthropic-messages",
    provider="anthropic",
    base_url="https://api.anthropic.com",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=5.0, output=25.0, cache_read=0.5, cache_write=6.25),
    context_window=200_000,
    max_tokens=64_000,
)
CUSTOM = pp.CustomMessage(role="bashExecution", fields_json='{"command":"ls","exitCode":0,"timestamp":9}')
HEADER = pp.assistant_message(api="anthropic-messages", provider="anthropic", model="claude-opus-4-5", timestamp=7)
HEADER.stop_reason = pp.StopReason.UNSPECIFIED


CASES: list[Case] = [
    # Content blocks and their role wrappers.
    Case("text_content", pp.text("plain")),
    Case("text_content-signature", pp.text("signed", signature='{"id":"msg_1"}')),
    Case("text_content-empty_signature", pp.text("", signature="")),
    Case("thinking_content", pp.thinking("reasoning", signature="EqoBCkgIAhABGAIiQ")),
    Case("thinking_content-redacted", pp.thinking("", redacted=True)),
    Case("thinking_content-not_redacted", pp.thinking("t", redacted=False)),
    Case("image_content", pp.image(bytes(range(256)), "image/png")),
    Case("image_content-empty", pp.image(b"", "image/png")),
    Case("tool_call", CALL),
    Case("tool_call-raw_and_signature", ASSISTANT.content[2].tool_call or pp.ToolCall()),
    Case("user_content-empty_text", pp.UserContent(text=pp.text(""))),
    Case("user_content-image", pp.UserContent(image=pp.image(b"\x00", "image/jpeg"))),
    Case("assistant_content-empty_text", pp.AssistantContent(text=pp.text(""))),
    Case("assistant_content-thinking", pp.AssistantContent(thinking=pp.thinking("t"))),
    Case("assistant_content-tool_call", pp.AssistantContent(tool_call=CALL)),
    Case("tool_result_content-empty_text", pp.ToolResultContent(text=pp.text(""))),
    Case("tool_result_content-image", pp.ToolResultContent(image=pp.image(b"\x01", "image/webp"))),
    # Usage and cost.
    Case("cost", COST),
    Case(
        "cost-negative_zero",
        pp.Cost(input=-0.0, total=-0.0),
        description="-0.0 is not the default 0.0: protobuf writes it and ProtoJSON prints it.",
    ),
    Case("usage", USAGE),
    Case("usage-zero", pp.Usage(cost=pp.Cost())),
    Case(
        "usage-int64_max",
        pp.Usage(
            input=INT64_MAX, output=INT64_MAX, cache_read=INT64_MAX, cache_write=INT64_MAX, total_tokens=INT64_MAX
        ),
    ),
    # Messages.
    Case("user_message", USER),
    Case(
        "user_message-string_content", pp.UserMessage(content=[pp.UserContent(text=pp.text("hi"))], string_content=True)
    ),
    Case("user_message-empty_content", pp.UserMessage(timestamp=1)),
    Case("assistant_message", ASSISTANT),
    Case("assistant_message-empty_content", pp.assistant_message(timestamp=0)),
    Case("assistant_message-error", FAILED),
    Case(
        "assistant_message-aborted_empty_error",
        pp.assistant_message(stop_reason=pp.StopReason.ABORTED, error_message="", timestamp=2),
    ),
    Case("assistant_message-non_bmp", pp.assistant_message(NON_BMP, pp.thinking(NON_BMP), timestamp=3)),
    Case("tool_result_message", RESULT),
    Case("tool_result_message-no_details", pp.tool_result_message("call_2", "bash", "ok", timestamp=4)),
    Case("tool_result_message-null_details", pp.tool_result_message("call_3", "bash", details=None, timestamp=4)),
    Case("custom_message", pp.CustomMessage(role="bashExecution", fields_json='{"command":"ls","exitCode":0}')),
    Case("session_entry", pp.SessionEntry(type="model_change", fields_json='{"provider":"anthropic"}')),
    # Transcript entries (these also get a pi-JSON file).
    Case("agent_message-user", pp.agent_message(USER)),
    Case(
        "agent_message-user_string",
        pp.AgentMessage(
            user=pp.UserMessage(content=[pp.UserContent(text=pp.text("hi"))], string_content=True, timestamp=1)
        ),
    ),
    Case("agent_message-assistant", pp.agent_message(ASSISTANT)),
    Case("agent_message-assistant_error", pp.agent_message(FAILED)),
    Case("agent_message-tool_result", pp.agent_message(RESULT)),
    Case(
        "agent_message-extra_fields",
        pp.AgentMessage(
            assistant=pp.AssistantMessage(
                content=[
                    pp.AssistantContent(
                        tool_call=pp.ToolCall(
                            id="c", name="edit", arguments_json='{"n":1}', extra_json='{"partialJson":"{\\"n\\": 1"}'
                        )
                    )
                ],
                api="a",
                provider="p",
                model="m",
                usage=pp.Usage(cost=pp.Cost(cache_read=1.0, extra_json='{"cacheRead":1.0}')),
                stop_reason=pp.StopReason.TOOL_USE,
                timestamp=6,
                extra_json='{"responseId":"resp_1"}',
            )
        ),
    ),
    Case("agent_message-custom", pp.AgentMessage(custom=CUSTOM)),
    # Transcript records.
    Case(
        "transcript_entry-custom_in_session",
        pp.TranscriptEntry(
            message=pp.AgentMessage(custom=CUSTOM),
            session_json='{"type":"message","timestamp":"2025-12-08T23:58:22.057Z"}',
        ),
    ),
    Case(
        "transcript_entry-session_entry",
        pp.TranscriptEntry(
            session_entry=pp.SessionEntry(type="compaction", fields_json='{"summary":"…","tokensBefore":5}')
        ),
    ),
    Case("transcript_entry-message", pp.TranscriptEntry(message=pp.agent_message(USER))),
    Case(
        "agent_message-unknown_fields",
        pp.agent_message(FAILED),
        unknown=b"\x98\x06\x2a\xa2\x06\x03abc\xad\x06\x01\x02\x03\x04\xa9\x06" + bytes(range(8)),
        description="Fields 99 to 102, unknown to the schema, one of each wire type: kept on re-encoding.",
    ),
    # Context, tools and the request.
    Case("tool", TOOL),
    Case("agent_context", CONTEXT),
    Case("agent_context-empty", pp.AgentContext()),
    Case("agent_context-empty_system_prompt", pp.AgentContext(system_prompt="")),
    Case("generation_options", pp.GenerationOptions(temperature=0.0, max_tokens=INT64_MAX)),
    Case("generation_options-unset", pp.GenerationOptions()),
    Case("generation_options-every_option", OPTIONS),
    Case("thinking_budgets", pp.ThinkingBudgets(minimal=0, low=1024, high=INT64_MAX)),
    Case("tool_choice-auto", pp.ToolChoice(mode=pp.ToolChoiceMode.AUTO)),
    Case("tool_choice-named", pp.ToolChoice(mode=pp.ToolChoiceMode.TOOL, tool="read")),
    Case(
        "stream_request",
        pp.StreamRequest(model="scripted-v1", context=CONTEXT, options=pp.GenerationOptions(temperature=0.7)),
    ),
    Case(
        "stream_request-provider",
        pp.StreamRequest(provider="anthropic", model="claude-opus-4-5", context=pp.AgentContext(), options=OPTIONS),
    ),
    # The model catalog.
    Case("model_cost", MODEL.cost or pp.ModelCost()),
    Case("model", MODEL),
    Case("model-empty", pp.Model()),
    Case("list_models_request", pp.ListModelsRequest(provider="anthropic")),
    Case(
        "list_models_response", pp.ListModelsResponse(models=[MODEL, pp.Model(id="scripted-v1", provider="scripted")])
    ),
    Case("get_model_request", pp.GetModelRequest(provider="anthropic", id="claude-opus-4-5")),
    Case("get_model_response", pp.GetModelResponse(model=MODEL)),
    Case(
        "stream_batched_response",
        pp.StreamBatchedResponse(
            events=[
                pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=1, delta="我先")),
                pp.ModelEvent(text_end=pp.TextEndEvent(content_index=1)),
            ]
        ),
    ),
    # The twelve event kinds, their bodies, and edge cases.
    Case("start_event", pp.StartEvent(header=HEADER)),
    Case("text_start_event", pp.TextStartEvent(content_index=1)),
    Case("text_delta_event", pp.TextDeltaEvent(content_index=1, delta="我先")),
    Case("text_end_event", pp.TextEndEvent(content_index=1, text_signature="sig")),
    Case("thinking_start_event", pp.ThinkingStartEvent(content_index=0)),
    Case("thinking_delta_event", pp.ThinkingDeltaEvent(content_index=0, delta=NON_BMP)),
    Case("thinking_end_event", pp.ThinkingEndEvent(content_index=0, thinking_signature="s", redacted=True)),
    Case("tool_call_start_event", pp.ToolCallStartEvent(content_index=2, id="call_1", name="read")),
    Case("tool_call_delta_event", pp.ToolCallDeltaEvent(content_index=2, delta='{"path":')),
    Case("tool_call_end_event", pp.ToolCallEndEvent(content_index=2, tool_call=CALL)),
    Case("done_event", pp.DoneEvent(reason=pp.StopReason.TOOL_USE, message=ASSISTANT)),
    Case("error_event", pp.ErrorEvent(reason=pp.StopReason.ERROR, message=FAILED)),
    Case("model_event-start", pp.ModelEvent(start=pp.StartEvent(header=HEADER))),
    Case("model_event-text_start", pp.ModelEvent(text_start=pp.TextStartEvent())),
    Case("model_event-text_delta", pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=0, delta="Hello"))),
    Case("model_event-text_delta_empty", pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta=""))),
    Case("model_event-text_end", pp.ModelEvent(text_end=pp.TextEndEvent(content_index=0))),
    Case("model_event-thinking_start", pp.ModelEvent(thinking_start=pp.ThinkingStartEvent(content_index=0))),
    Case(
        "model_event-thinking_delta", pp.ModelEvent(thinking_delta=pp.ThinkingDeltaEvent(content_index=0, delta="hmm"))
    ),
    Case(
        "model_event-thinking_end",
        pp.ModelEvent(thinking_end=pp.ThinkingEndEvent(content_index=0, thinking_signature="")),
    ),
    Case(
        "model_event-toolcall_start",
        pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(content_index=1, id="call_1", name="read")),
    ),
    Case(
        "model_event-toolcall_delta",
        pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(content_index=1, delta='"README.md"}')),
    ),
    Case("model_event-toolcall_end", pp.ModelEvent(toolcall_end=pp.ToolCallEndEvent(content_index=1, tool_call=CALL))),
    Case(
        "model_event-done",
        pp.ModelEvent(done=pp.DoneEvent(reason=pp.StopReason.STOP, message=pp.assistant_message("ok", timestamp=8))),
    ),
    Case(
        "model_event-error",
        pp.ModelEvent(
            error=pp.ErrorEvent(
                reason=pp.StopReason.ABORTED,
                message=pp.assistant_message(stop_reason=pp.StopReason.ABORTED, error_message="cancelled", timestamp=9),
            )
        ),
    ),
    Case(
        "model_event-max_content_index",
        pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=UINT32_MAX, delta="x")),
    ),
    Case(
        "model_event-with_partial",
        pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x"), partial=FAILED),
        description="Senders leave partial unset, but a message that carries one still encodes.",
    ),
    # The schema's field option for JSON text.
    Case("json_text", JsonText(shape=JsonShape.OBJECT, empty_allowed=True)),
]

# Kept apart, so that wire.json stays readable: a message over 1 MiB.
LARGE: list[Case] = [
    Case("tool_call-1mb_arguments", pp.ToolCall(id="call_big", name="write", arguments_json=_big_arguments())),
]
