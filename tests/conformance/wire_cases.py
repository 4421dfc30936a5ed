"""The wire cases of the conformance corpus: every message and event kind of pi.ai.v1, plus edge cases.

`generate.py` turns each into a WireCase of `wire.json` (or `wire-large.json`): the bytes the
official protobuf runtime (upb) encodes, with any unknown fields after them, and the ProtoJSON it
prints.
"""

from __future__ import annotations

from dataclasses import dataclass

import betterproto2

import pi_proto as pp
from pi_proto._gen.types.pi.ai import v1 as types
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

# pi-ai 1.6: the system role, constrained sampling, deferred calls, diagnostics and nested calls.
JSON_SCHEMA = types.ConstrainedSampling(json_schema=types.JsonSchemaSampling(strict=types.Strictness.REQUIRE))
GRAMMAR = types.GrammarSampling(openai_lark='start: "ls" | "pwd"', openai_regex="^(ls|pwd)$")
STRICT_TOOL = pp.Tool(
    name="bash",
    description="Run a command.",
    parameters_json='{"type":"object","properties":{"command":{"type":"string"}}}',
    constrained_sampling=JSON_SCHEMA,
    extra_json='{"label":"Bash"}',
)
SYSTEM = types.SystemMessage(
    content=[pp.text("You are pi."), pp.text("回答前先读取相关文件。")],
    sections=[
        types.SystemSection(name="skills", text="- read: 读取文件"),
        types.SystemSection(name="agents"),
        types.SystemSection(name="empty", text=""),
    ],
    tools_added=[TOOL, STRICT_TOOL],
    tools_removed=[types.ToolReference(name="write")],
    timestamp=1_765_233_665_000,
    extra_json='{"source":"AGENTS.md"}',
)
SYSTEM_CHANGE = types.SystemMessage(
    sections=[types.SystemSection(name="skills")], tools_removed=[types.ToolReference(name="bash")], timestamp=1_030
)
HANDLE = types.DeferredHandle(
    provider="openai",
    model_id="gpt-5",
    api="openai-responses",
    id="resp_68c1",
    expires_at=1_765_320_065_294,
    poll_after_ms=30_000,
    data_json='{"batch":"batch_1","row":3}',
)
DIAGNOSTIC = types.Diagnostic(
    type="pi_messages_response_failure",
    timestamp=1_765_233_665_300,
    error=types.DiagnosticError(
        name="FetchError", message="socket hang up", stack="FetchError: …", code_text="ECONNRESET"
    ),
    details_json='{"attempt":2,"retryable":true}',
)
DEFERRED = pp.assistant_message(
    api="openai-responses",
    provider="openai",
    model="gpt-5",
    stop_reason=pp.StopReason.DEFERRED,
    timestamp=1_765_233_665_294,
)
DEFERRED.deferred = HANDLE
ANSWERED = pp.assistant_message(
    pp.text("done"),
    api="openai-responses",
    provider="openai",
    model="gpt-5",
    usage=pp.Usage(input=10, output=20, reasoning=12, total_tokens=30),
    stop_reason=pp.StopReason.STOP,
    timestamp=1_765_233_665_294,
)
ANSWERED.response_id = "resp_68c1"
ANSWERED.response_model = "gpt-5-2025-08-07"
ANSWERED.provider_thinking_level = "high"
ANSWERED.thinking_level = types.ModelThinkingLevel.XHIGH
ANSWERED.diagnostics = [DIAGNOSTIC, types.Diagnostic(type="pi_retry", timestamp=1_765_233_665_200)]
ANSWERED.raw_stop_reason = "completed"
ANSWERED.end_turn = True
ANSWERED.duration_ms = 2_345
ANSWERED.extra_json = '{"phase":"final"}'
NESTED = types.NestedToolCalls(
    calls=[
        types.NestedToolCall(
            id="n1", name="read", arguments_json='{"path":"a.txt"}', status=types.NestedCallStatus.OK, duration_ms=3
        ),
        types.NestedToolCall(
            id="n2", name="write", arguments_bytes=2_000_000, status=types.NestedCallStatus.ERROR, error="EACCES"
        ),
        types.NestedToolCall(id="n3", name="bash", arguments_json="{}", status=types.NestedCallStatus.UNFINISHED),
    ],
    complete=False,
)
TOOL_RESULT_1_6 = pp.tool_result_message("call_1", "task", "子任务完成", timestamp=1_040)
TOOL_RESULT_1_6.usage = pp.Usage(input=100, output=50, cache_write=40, cache_write_1h=30, total_tokens=150)
TOOL_RESULT_1_6.nested_calls = NESTED
TOOL_RESULT_1_6.duration_ms = 812
RESIZE = types.ModelImageResize(max_width=2048, max_height=1536, max_bytes=5_242_880, jpeg_quality=85)
INPUT_LIMITS = types.ModelInputLimits(
    max_request_bytes=33_554_432,
    images=types.ModelImageInputLimits(resize=RESIZE, max_per_message=20, max_per_request=100),
)
TIER = types.ModelCostTier(input=6.0, output=22.5, cache_read=0.6, cache_write=7.5, input_tokens_above=200_000)
MODEL_1_6 = pp.Model(
    id="gpt-5",
    name="GPT-5",
    api="openai-responses",
    provider="openai",
    base_url="https://api.openai.com/v1",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=1.25, output=10.0, cache_read=0.125, cache_write=0.0, tiers=[TIER]),
    context_window=400_000,
    max_tokens=128_000,
    thinking_level_map=[
        types.ThinkingLevelMapping(level=types.ModelThinkingLevel.OFF),
        types.ThinkingLevelMapping(level=types.ModelThinkingLevel.MINIMAL, value="minimal"),
        types.ThinkingLevelMapping(level=types.ModelThinkingLevel.MAX, value=""),
    ],
    prompt_cache=types.ModelPromptCache(short=300.0, long=3600.0),
    input_limits=INPUT_LIMITS,
    sampling_params_json='{"top_p":0.95}',
)
OPTIONS_1_6 = pp.GenerationOptions(
    reasoning=pp.ThinkingLevel.MAX,
    sampling_params_json='{"top_k":40,"top_p":0.9}',
    timeout_ms=INT64_MAX,
    max_retries=0,
    transport=types.Transport.WEBSOCKET_CACHED,
    disable_continuation=False,
    deferred=types.DeferredOptions(window=types.DeferredWindow._24H),
)
SYSTEM_CONTEXT = pp.AgentContext(
    messages=[
        pp.AgentMessage(system=SYSTEM),
        pp.agent_message(USER),
        pp.AgentMessage(system=SYSTEM_CHANGE),
    ],
)


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
    Case("usage-pi_1_6", pp.Usage(input=10, output=200, cache_write=64, cache_write_1h=32, reasoning=150)),
    Case("usage-pi_1_6_zero", pp.Usage(cache_write_1h=0, reasoning=0)),
    Case("cost-from_provider", pp.Cost(input=0.25, output=1.0, total=1.3, total_from_provider=True)),
    Case("cost-not_from_provider", pp.Cost(total=1.25, total_from_provider=False)),
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
    # pi-ai 1.6 messages and their parts.
    Case("system_message", SYSTEM),
    Case(
        "system_message-string_content",
        types.SystemMessage(content=[pp.text("You are pi.")], string_content=True, timestamp=1),
    ),
    Case("system_message-empty", types.SystemMessage()),
    Case("system_message-change", SYSTEM_CHANGE),
    Case("system_section", types.SystemSection(name="skills", text="- read")),
    Case(
        "system_section-removed",
        types.SystemSection(name="skills"),
        description="No text: the section is removed (pi's null), which differs from an empty text.",
    ),
    Case("system_section-empty_text", types.SystemSection(name="skills", text="")),
    Case("tool_reference", types.ToolReference(name="write")),
    Case("assistant_message-pi_1_6", ANSWERED),
    Case(
        "assistant_message-pi_1_6_zero_values",
        pp.AssistantMessage(
            response_id="",
            response_model="",
            provider_thinking_level="",
            thinking_level=types.ModelThinkingLevel.OFF,
            raw_stop_reason="",
            end_turn=False,
            duration_ms=0,
            stop_reason=pp.StopReason.STOP,
        ),
        description="Present optional fields at their zero values are written and printed.",
    ),
    Case("assistant_message-deferred", DEFERRED),
    Case(
        "assistant_message-length",
        pp.assistant_message("an answer cut sh", stop_reason=pp.StopReason.LENGTH, timestamp=10),
    ),
    Case(
        "assistant_message-pending",
        pp.assistant_message("partial", stop_reason=pp.StopReason.PENDING, timestamp=11),
    ),
    Case("diagnostic", DIAGNOSTIC),
    Case("diagnostic-minimal", types.Diagnostic(type="pi_retry")),
    Case("diagnostic_error-code_text", DIAGNOSTIC.error or types.DiagnosticError()),
    Case("diagnostic_error-code_number", types.DiagnosticError(message="Too Many Requests", code_number=429.0)),
    Case(
        "diagnostic_error-code_zero",
        types.DiagnosticError(message="", code_number=0.0),
        description="A oneof member at its zero value is set, and so written and printed.",
    ),
    Case("diagnostic_error-code_empty_text", types.DiagnosticError(name="", message="m", code_text="")),
    Case("diagnostic_error-no_code", types.DiagnosticError(message="failed")),
    Case("deferred_handle", HANDLE),
    Case("deferred_handle-minimal", types.DeferredHandle(provider="openai", id="resp_1")),
    Case(
        "deferred_handle-zero_values",
        types.DeferredHandle(provider="p", id="i", expires_at=0, poll_after_ms=0, data_json="null"),
    ),
    Case("tool_result_message-pi_1_6", TOOL_RESULT_1_6),
    Case("nested_tool_calls", NESTED),
    Case("nested_tool_calls-complete_empty", types.NestedToolCalls(complete=True)),
    Case("nested_tool_call", NESTED.calls[0]),
    Case("nested_tool_call-arguments_left_out", NESTED.calls[1]),
    Case(
        "nested_tool_call-zero_values",
        types.NestedToolCall(
            arguments_json="{}", arguments_bytes=0, status=types.NestedCallStatus.UNFINISHED, duration_ms=0, error=""
        ),
    ),
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
    Case("agent_message-system", pp.AgentMessage(system=SYSTEM)),
    Case("agent_message-system_empty", pp.AgentMessage(system=types.SystemMessage())),
    Case("agent_message-assistant_deferred", pp.agent_message(DEFERRED)),
    Case("agent_message-tool_result_pi_1_6", pp.agent_message(TOOL_RESULT_1_6)),
    # Transcript records.
    Case(
        "transcript_entry-custom_in_session",
        pp.TranscriptEntry(message=pp.AgentMessage(custom=CUSTOM), timestamp="2025-12-08T23:58:22.057Z"),
    ),
    Case(
        "transcript_entry-session_entry",
        pp.TranscriptEntry(session_entry=pp.SessionEntry(type="bookmark", fields_json='{"note":"…","weight":5}')),
    ),
    # A line of a session file that is not one JSON entry: two entries run together, and a blank
    # line, whose empty text is set all the same (a oneof member keeps its presence).
    Case(
        "transcript_entry-unparsed_line",
        pp.TranscriptEntry(
            unparsed_line='{"type":"message","message":{"role":"user","content":"hi"}}{"type":"compaction"'
        ),
    ),
    Case("transcript_entry-unparsed_line-blank", pp.TranscriptEntry(unparsed_line="")),
    # A root of the session's tree: `root` is google.protobuf.NullValue, ProtoJSON's null.
    Case(
        "transcript_entry-root",
        pp.TranscriptEntry(
            session_entry=pp.SessionEntry(
                type="model_change", model_change=pp.ModelChange(provider="anthropic", model_id="claude-sonnet-4-5")
            ),
            id="0e383ba7",
            root=pp.NullValue.NULL_VALUE,
            timestamp="2026-12-02T06:20:01.340Z",
        ),
    ),
    # The typed session entry bodies.
    Case("session_header", pp.SessionHeader(version=3, cwd="/repo", parent_session="/s/a.jsonl")),
    Case("thinking_level_change", pp.ThinkingLevelChange(thinking_level="high")),
    Case("model_change", pp.ModelChange(provider="anthropic", model_id="claude-sonnet-4-5")),
    Case("usage_record", pp.UsageRecord(kind="cache_warm", provider="anthropic", model="m", usage=pp.zero_usage())),
    Case("compaction", pp.Compaction(summary="…", tokens_before=52, details_json="null", from_hook=False)),
    Case("branch_summary", pp.BranchSummary(from_id="e4787fd0", summary="…", details_json="{}", from_hook=True)),
    Case("custom_entry", pp.CustomEntry(custom_type="todo-list", data_json='{"done":1}')),
    Case(
        "custom_message_entry",
        pp.CustomMessageEntry(
            custom_type="reminder",
            content=[pp.UserContent(text=pp.TextContent(text="Run the tests first."))],
            string_content=True,
            display=False,
        ),
    ),
    Case("label", pp.Label(target_id="50667f34", label="checkpoint-1")),
    Case("session_info-empty_name", pp.SessionInfo(name="")),
    Case("context_edit-omit", pp.ContextEdit(target_id="108a8241")),
    Case(
        "context_replacement",
        pp.ContextReplacement(
            content=[
                pp.ContentBlock(thinking=pp.ThinkingContent(thinking="Short.")),
                pp.ContentBlock(tool_call=pp.ToolCall(id="c", name="read", arguments_json="{}")),
            ]
        ),
    ),
    Case("content_block-image", pp.ContentBlock(image=pp.ImageContent(data=b"GIF89a", mime_type="image/gif"))),
    Case(
        "transcript_entry-compaction",
        pp.TranscriptEntry(
            session_entry=pp.SessionEntry(
                type="compaction",
                compaction=pp.Compaction(
                    summary="…", first_kept_entry_id="8bb83bac", tokens_before=52, details_json="null", from_hook=False
                ),
            ),
            id="58bf0fdb",
            parent_id="234a5813",
            timestamp="2026-12-02T06:19:57.979Z",
        ),
    ),
    Case("transcript_entry-message", pp.TranscriptEntry(message=pp.agent_message(USER))),
    Case(
        "transcript_entry-system",
        pp.TranscriptEntry(
            message=pp.AgentMessage(system=SYSTEM_CHANGE),
            id="a1b2c3d4",
            parent_id="0e383ba7",
            timestamp="2025-12-08T23:58:22.057Z",
        ),
    ),
    Case(
        "agent_message-unknown_fields",
        pp.agent_message(FAILED),
        unknown=b"\x98\x06\x2a\xa2\x06\x03abc\xad\x06\x01\x02\x03\x04\xa9\x06" + bytes(range(8)),
        description="Fields 99 to 102, unknown to the schema, one of each wire type: kept on re-encoding.",
    ),
    # Context, tools and the request.
    Case("tool", TOOL),
    Case("tool-constrained_json_schema", STRICT_TOOL),
    Case("tool-constrained_off", pp.Tool(name="t", constrained_sampling=types.ConstrainedSampling(off=True))),
    Case(
        "tool-constrained_grammar",
        pp.Tool(name="t", parameters_json="{}", constrained_sampling=types.ConstrainedSampling(grammar=GRAMMAR)),
    ),
    Case("constrained_sampling-off", types.ConstrainedSampling(off=True)),
    Case(
        "constrained_sampling-off_false",
        types.ConstrainedSampling(off=False),
        description="Invalid (off is always true), but a set oneof member at its zero value still encodes.",
    ),
    Case("constrained_sampling-json_schema", JSON_SCHEMA),
    Case(
        "constrained_sampling-json_schema_empty",
        types.ConstrainedSampling(json_schema=types.JsonSchemaSampling()),
        description="An empty message as the set oneof member: written as an empty field.",
    ),
    Case("constrained_sampling-grammar", types.ConstrainedSampling(grammar=GRAMMAR)),
    Case("constrained_sampling-grammar_empty", types.ConstrainedSampling(grammar=types.GrammarSampling())),
    Case("json_schema_sampling", types.JsonSchemaSampling(strict=types.Strictness.PREFER)),
    Case("grammar_sampling", GRAMMAR),
    Case("grammar_sampling-empty_strings", types.GrammarSampling(openai_lark="", openai_regex="")),
    Case("agent_context-system_messages", SYSTEM_CONTEXT),
    Case("agent_context", CONTEXT),
    Case("agent_context-empty", pp.AgentContext()),
    Case("agent_context-empty_system_prompt", pp.AgentContext(system_prompt="")),
    Case("generation_options", pp.GenerationOptions(temperature=0.0, max_tokens=INT64_MAX)),
    Case("generation_options-unset", pp.GenerationOptions()),
    Case("generation_options-every_option", OPTIONS),
    Case("generation_options-pi_1_6", OPTIONS_1_6),
    Case("generation_options-deferred_default", pp.GenerationOptions(deferred=types.DeferredOptions())),
    Case("deferred_options", types.DeferredOptions(window=types.DeferredWindow._15M)),
    Case("deferred_options-default", types.DeferredOptions()),
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
    Case(
        "stream_request-system",
        pp.StreamRequest(provider="openai", model="gpt-5", context=SYSTEM_CONTEXT, options=OPTIONS_1_6),
    ),
    # The model catalog.
    Case("model_cost", MODEL.cost or pp.ModelCost()),
    Case("model", MODEL),
    Case("model-empty", pp.Model()),
    Case("model-pi_1_6", MODEL_1_6),
    Case("model_cost-tiers", MODEL_1_6.cost or pp.ModelCost()),
    Case("model_cost_tier", TIER),
    Case("model_cost_tier-empty", types.ModelCostTier()),
    Case("thinking_level_mapping", types.ThinkingLevelMapping(level=types.ModelThinkingLevel.HIGH, value="high")),
    Case(
        "thinking_level_mapping-unsupported",
        types.ThinkingLevelMapping(level=types.ModelThinkingLevel.XHIGH),
        description="No value: the model does not support the level (pi's null).",
    ),
    Case(
        "thinking_level_mapping-empty_value", types.ThinkingLevelMapping(level=types.ModelThinkingLevel.LOW, value="")
    ),
    Case("model_prompt_cache", types.ModelPromptCache(short=300.0, long=3600.5)),
    Case("model_prompt_cache-empty", types.ModelPromptCache()),
    Case("model_input_limits", INPUT_LIMITS),
    Case("model_input_limits-empty_images", types.ModelInputLimits(images=types.ModelImageInputLimits())),
    Case("model_image_input_limits", INPUT_LIMITS.images or types.ModelImageInputLimits()),
    Case("model_image_input_limits-zero_counts", types.ModelImageInputLimits(max_per_message=0, max_per_request=0)),
    Case("model_image_resize", RESIZE),
    Case("model_image_resize-int64_max", types.ModelImageResize(max_width=INT64_MAX, max_bytes=INT64_MAX)),
    Case("list_models_request", pp.ListModelsRequest(provider="anthropic")),
    Case(
        "list_models_response", pp.ListModelsResponse(models=[MODEL, pp.Model(id="scripted-v1", provider="scripted")])
    ),
    Case("get_model_request", pp.GetModelRequest(provider="anthropic", id="claude-opus-4-5")),
    Case("get_model_response", pp.GetModelResponse(model=MODEL)),
    Case(
        "stream_request-background_with_fallbacks",
        pp.StreamRequest(
            context=pp.AgentContext(), background=True, fallback_models=["anthropic/claude-opus-4-5", "gpt-5"]
        ),
    ),
    Case("resume_request", pp.ResumeRequest(stream_id="2DAzReqkHri_nbJng3x3Kw", after_seq=7, coalesce_deltas=True)),
    Case("resume_request-uint64_max", pp.ResumeRequest(stream_id="s", after_seq=2**64 - 1)),
    Case("cancel_request", pp.CancelRequest(stream_id="2DAzReqkHri_nbJng3x3Kw")),
    Case("cancel_response", pp.CancelResponse(cancelled=True)),
    Case("cancel_response-not_cancelled", pp.CancelResponse()),
    Case(
        "stream_batched_response",
        pp.StreamBatchedResponse(
            events=[
                pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=1, delta="我先")),
                pp.ModelEvent(text_end=pp.TextEndEvent(content_index=1)),
            ]
        ),
    ),
    # The same batch read as a view: each event its bytes, the last one bytes that do not decode.
    Case(
        "stream_batched_view",
        pp.StreamBatchedView(
            events=[
                pp.encode(pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=1, delta="我先"))),
                pp.encode(pp.ModelEvent(text_end=pp.TextEndEvent(content_index=1))),
                b"\xff",
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
    Case("done_event-deferred", pp.DoneEvent(reason=pp.StopReason.DEFERRED, message=DEFERRED)),
    Case("error_event", pp.ErrorEvent(reason=pp.StopReason.ERROR, message=FAILED)),
    Case("model_event-start", pp.ModelEvent(start=pp.StartEvent(header=HEADER))),
    Case(
        "model_event-start_kept",
        pp.ModelEvent(start=pp.StartEvent(header=HEADER, stream_id="2DAzReqkHri_nbJng3x3Kw"), seq=1),
        description="A kept stream's first event: numbered, with the stream's id.",
    ),
    Case(
        "model_event-text_delta_numbered",
        pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=1, delta="Hel"), seq=300),
        description="seq (field 18) follows the event's member, as every encoder writes it.",
    ),
    Case(
        "model_event-done_with_digest",
        pp.ModelEvent(
            done=pp.DoneEvent(reason=pp.StopReason.TOOL_USE, message=ASSISTANT, content_sha256=bytes(range(32))),
            seq=2**64 - 1,
        ),
    ),
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
        "model_event-done_deferred",
        pp.ModelEvent(done=pp.DoneEvent(reason=pp.StopReason.DEFERRED, message=DEFERRED)),
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
