"""pi's transformMessages: a context replayed to a model, whatever model wrote it."""

from __future__ import annotations

import pi_proto as pp
from pi_proto.models.providers.transform import NO_RESULT, TOOL_IMAGE, USER_IMAGE, transform_messages

TARGET = pp.Model(id="claude-sonnet-4-5", api="anthropic-messages", provider="anthropic")


def assistant(*content: str | pp.TextContent | pp.ThinkingContent | pp.ToolCall, **header: object) -> pp.AgentMessage:
    fields = {"api": "openai-responses", "provider": "openai", "model": "gpt-5", "timestamp": 1, **header}
    return pp.agent_message(pp.assistant_message(*content, **fields))  # type: ignore[arg-type]


def user(text: str) -> pp.AgentMessage:
    return pp.agent_message(pp.user_message(text, timestamp=1))


def result(call_id: str) -> pp.AgentMessage:
    return pp.agent_message(pp.tool_result_message(call_id, "read", "ok", timestamp=1))


def underscore(call_id: str) -> str:
    return call_id.replace("|", "_")


def test_another_models_reasoning_and_signatures_are_dropped() -> None:
    messages = [
        user("hi"),
        assistant(
            pp.thinking("let me think", signature='{"id":"rs_1","encrypted_content":"..."}'),
            pp.thinking("", signature="opaque", redacted=True),
            pp.thinking("   "),
            pp.thinking("unsigned thoughts"),
            pp.text("answer", signature="msg_1"),
            pp.tool_call("call_1|fc_1", "read", {"path": "a"}, thought_signature="sig"),
        ),
        result("call_1|fc_1"),
    ]
    out = transform_messages(messages, TARGET, underscore)
    replayed = out[1].assistant
    assert replayed is not None
    assert replayed.content == [
        pp.AssistantContent(text=pp.TextContent(text="answer")),
        pp.AssistantContent(tool_call=pp.tool_call("call_1_fc_1", "read", {"path": "a"})),
    ]
    assert out[2].tool_result is not None
    assert out[2].tool_result.tool_call_id == "call_1_fc_1"
    # The context itself is left as it was.
    original = messages[1].assistant
    assert original is not None
    assert original.content[5].tool_call is not None
    assert original.content[5].tool_call.id == "call_1|fc_1"


def test_another_model_of_the_same_provider_gets_no_reasoning_either() -> None:
    sibling = assistant(
        pp.thinking("let me think", signature="sig"),
        pp.text("answer"),
        api="anthropic-messages",
        provider="anthropic",
        model="claude-opus-4-1",
    )
    replayed = transform_messages([user("hi"), sibling], TARGET)[1].assistant
    assert replayed is not None
    assert replayed.content == [pp.AssistantContent(text=pp.TextContent(text="answer"))]


def test_the_same_model_gets_its_own_blocks_back_but_empty_unsigned_reasoning() -> None:
    header = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
    kept = (
        pp.thinking("", signature="opaque", redacted=True),
        pp.thinking("", signature="sig"),
        pp.thinking("let me think"),
        pp.text("answer", signature="msg_1"),
        pp.tool_call("call_1|fc_1", "read", thought_signature="sig"),
    )
    own = assistant(kept[0], pp.thinking(""), *kept[1:3], pp.thinking(" \n"), *kept[3:], **header)
    out = transform_messages([user("hi"), own, result("call_1|fc_1")], TARGET, underscore)
    assert out[1] == assistant(*kept, **header)
    assert out[2] == result("call_1|fc_1")


def test_failed_and_aborted_turns_are_left_out() -> None:
    failed = assistant("half", stop_reason=pp.StopReason.ERROR)
    aborted = assistant("half", stop_reason=pp.StopReason.ABORTED)
    out = transform_messages([user("a"), failed, user("b"), aborted, user("c")], TARGET)
    assert [pp.role_of(message) for message in out] == ["user", "user", "user"]


def test_a_tool_call_left_without_a_result_gets_an_error_result_before_the_next_turn() -> None:
    calls = assistant(pp.tool_call("c1", "read"), pp.tool_call("c2", "read"), stop_reason=pp.StopReason.TOOL_USE)
    out = transform_messages([user("a"), calls, result("c2"), user("b")], TARGET)
    assert [pp.role_of(message) for message in out] == ["user", "assistant", "tool_result", "tool_result", "user"]
    synthetic = out[3].tool_result
    assert synthetic is not None
    assert (synthetic.tool_call_id, synthetic.tool_name, synthetic.is_error) == ("c1", "read", True)
    assert pp.text_of(synthetic) == NO_RESULT


def test_a_transcript_ending_in_open_tool_calls_is_left_as_it_is() -> None:
    calls = assistant(pp.tool_call("c1", "read"), stop_reason=pp.StopReason.TOOL_USE)
    assert len(transform_messages([user("a"), calls], TARGET)) == 2


PNG = pp.image(b"\x89PNG", "image/png")


def test_a_model_without_image_input_gets_pis_placeholder_where_each_run_of_images_was() -> None:
    messages = [
        pp.agent_message(pp.user_message("look", PNG, PNG, "and", PNG, timestamp=1)),
        pp.agent_message(pp.user_message(USER_IMAGE, PNG, timestamp=1)),  # said already: not again
        pp.agent_message(pp.tool_result_message("c1", "shot", PNG, "caption", PNG, timestamp=1)),
    ]
    out = transform_messages(messages, TARGET)  # TARGET takes text only
    assert [pp.text_of(message) for message in out] == [
        f"look\n{USER_IMAGE}\nand\n{USER_IMAGE}",
        USER_IMAGE,
        f"{TOOL_IMAGE}\ncaption\n{TOOL_IMAGE}",
    ]
    assert messages[0].user is not None
    assert len(messages[0].user.content) == 5  # the context itself is left as it was


def test_a_model_with_image_input_gets_the_images() -> None:
    messages = [
        pp.agent_message(pp.user_message("look", PNG, timestamp=1)),
        pp.agent_message(pp.tool_result_message("c1", "shot", PNG, timestamp=1)),
    ]
    vision = pp.Model(
        id="v", api="anthropic-messages", provider="anthropic", input=[pp.InputKind.TEXT, pp.InputKind.IMAGE]
    )
    assert transform_messages(messages, vision) == messages
