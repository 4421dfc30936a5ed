"""One fully populated sample of every message type in pi.ai.v1, for round-trip tests."""

from __future__ import annotations

from typing import Any

import betterproto2

import pi_proto as pp

COST = pp.Cost(input=0.013875000000000002, output=0.0035250000000000004, cache_read=0, cache_write=1.5, total=0.5)
CALL = pp.tool_call("call_1", "read", {"path": "README.md", "limit": 10, "ratio": 0.5})
USAGE = pp.Usage(
    input=2775,
    output=141,
    cache_read=7,
    cache_write=9,
    total_tokens=2932,
    cost=COST,
)
ASSISTANT = pp.assistant_message(
    pp.thinking("让我想想 🤔", signature="sig-Ω", redacted=False),
    pp.text("我先读取项目说明。", signature='{"id":"msg_1"}'),
    pp.tool_call(
        "call_1",
        "read",
        {"path": "README.md"},
        raw_arguments='{"path": "README.md"}',
        thought_signature="c2ln",
    ),
    api="anthropic-messages",
    provider="anthropic",
    model="claude-opus-4-5",
    usage=USAGE,
    stop_reason=pp.StopReason.TOOL_USE,
    error_message="",
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

EVENTS: list[pp.ModelEvent] = [
    pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1))),
    pp.ModelEvent(text_start=pp.TextStartEvent(content_index=1)),
    pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=1, delta="我先")),
    pp.ModelEvent(text_end=pp.TextEndEvent(content_index=1, text_signature="sig")),
    pp.ModelEvent(thinking_start=pp.ThinkingStartEvent(content_index=0)),
    pp.ModelEvent(thinking_delta=pp.ThinkingDeltaEvent(content_index=0, delta="hmm 𝄞")),
    pp.ModelEvent(thinking_end=pp.ThinkingEndEvent(content_index=0, thinking_signature="s", redacted=True)),
    pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(content_index=2, id="call_1", name="read")),
    pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(content_index=2, delta='{"path":')),
    pp.ModelEvent(toolcall_end=pp.ToolCallEndEvent(content_index=2, tool_call=CALL)),
    pp.ModelEvent(done=pp.DoneEvent(reason=pp.StopReason.TOOL_USE, message=ASSISTANT)),
    pp.ModelEvent(error=pp.ErrorEvent(reason=pp.StopReason.ERROR, message=FAILED)),
    pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x"), partial=ASSISTANT),
]

MESSAGES: list[Any] = [
    pp.text("plain"),
    pp.thinking("", redacted=True),
    pp.image(b"", "image/png"),
    CALL,
    pp.UserContent(text=pp.text("")),
    pp.UserContent(image=pp.image(b"\x00", "image/jpeg")),
    pp.AssistantContent(thinking=pp.thinking("t")),
    pp.AssistantContent(tool_call=CALL),
    pp.ToolResultContent(image=pp.image(b"\x01", "image/webp")),
    COST,
    USAGE,
    USER,
    ASSISTANT,
    RESULT,
    pp.agent_message(USER),
    pp.agent_message(ASSISTANT),
    pp.agent_message(RESULT),
    pp.CustomMessage(role="bashExecution", fields_json='{"command":"ls","exitCode":0}'),
    pp.SessionEntry(type="model_change", fields_json='{"provider":"anthropic"}'),
    pp.AgentMessage(
        custom=pp.CustomMessage(role="bashExecution", fields_json="{}"),
        session_json='{"type":"message","timestamp":"2025-12-08T23:58:22.057Z"}',
    ),
    pp.AgentMessage(session_entry=pp.SessionEntry(type="compaction", fields_json='{"summary":"…"}')),
    pp.UserMessage(content=[pp.UserContent(text=pp.text("plain"))], string_content=True, extra_json='{"x":1}'),
    TOOL,
    CONTEXT,
    pp.StartEvent(header=ASSISTANT),
    pp.TextStartEvent(content_index=3),
    pp.StreamRequest(
        model="scripted-v1",
        context=CONTEXT,
        options=pp.GenerationOptions(temperature=0.0, max_tokens=9_223_372_036_854_775_807),
    ),
    pp.GenerationOptions(temperature=0.7),
    *EVENTS,
    *(betterproto2.which_one_of(event, "event")[1] for event in EVENTS[2:12]),
]
