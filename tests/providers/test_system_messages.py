"""System messages in the transcript, as pi 1.6 keeps the prompt and tools: each provider sends the
prompt and tools they resolve to, and the same request as the systemPrompt/tools shorthand."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import pi_proto as pp
from pi_proto._gen.types.pi.ai.v1 import SystemMessage, SystemSection, ToolReference
from pi_proto.models.providers.system import normalize, resolve

from .corpus import provider_modules
from .harness import CLOCK_MS, READ, play, provider_case

MODULES = {module.API: module for module in provider_modules()}
EDIT = pp.Tool(name="edit", description="Edit a file", parameters_json='{"type":"object","properties":{}}')
WRITE = pp.Tool(name="write", description="Write a file", parameters_json='{"type":"object","properties":{}}')
Sent = tuple[str | None, list[str], list[str]]  # the prompt, the tool names, the turns


def anthropic_sent(body: dict[str, Any]) -> Sent:
    prompt = body["system"][0]["text"] if "system" in body else None
    return prompt, [tool["name"] for tool in body.get("tools", [])], [turn["role"] for turn in body["messages"]]


def completions_sent(body: dict[str, Any]) -> Sent:
    first, *rest = body["messages"]
    assert first["role"] in ("system", "developer")
    return first["content"], [tool["function"]["name"] for tool in body.get("tools", [])], [m["role"] for m in rest]


def responses_sent(body: dict[str, Any]) -> Sent:
    first, *rest = body["input"]
    assert first["role"] in ("system", "developer")
    turns = [item.get("role") or item["type"] for item in rest]
    return first["content"], [tool["name"] for tool in body.get("tools", [])], turns


def google_sent(body: dict[str, Any]) -> Sent:
    prompt = body["systemInstruction"]["parts"][0]["text"]
    declarations = body["tools"][0]["functionDeclarations"] if "tools" in body else []
    return prompt, [tool["name"] for tool in declarations], [content["role"] for content in body["contents"]]


def bedrock_sent(body: dict[str, Any]) -> Sent:
    prompt = body["system"][0]["text"] if body.get("system") else ""
    tools = [tool["toolSpec"]["name"] for tool in body.get("toolConfig", {}).get("tools", [])]
    return prompt, tools, [message["role"] for message in body["messages"]]


# What each API's request body says of the prompt, the tools and the turns.
SENT: dict[str, Callable[[dict[str, Any]], Sent]] = {
    "anthropic-messages": anthropic_sent,
    "openai-completions": completions_sent,
    "openai-responses": responses_sent,
    "azure-openai-responses": responses_sent,
    "google-generative-ai": google_sent,
    "google-vertex": google_sent,
    "mistral-conversations": completions_sent,
    "bedrock-converse-stream": bedrock_sent,
}
APIS = pytest.mark.parametrize("api", sorted(SENT))


def system(
    content: str = "",
    *,
    sections: dict[str, str | None] | None = None,
    added: tuple[pp.Tool, ...] = (),
    removed: tuple[str, ...] = (),
) -> pp.AgentMessage:
    message = SystemMessage(
        content=[pp.TextContent(text=content)],
        string_content=True,
        sections=[SystemSection(name=name, text=text) for name, text in (sections or {}).items()],
        tools_added=list(added),
        tools_removed=[ToolReference(name=name) for name in removed],
        timestamp=CLOCK_MS - 2000,
    )
    return pp.AgentMessage(system=message)


def user(text: str) -> pp.AgentMessage:
    return pp.agent_message(pp.user_message(text, timestamp=CLOCK_MS - 1000))


def answer(api: str) -> pp.AgentMessage:
    """An earlier turn of the served model itself, so no provider rewrites it."""
    info = MODULES[api].INFO
    turn = pp.assistant_message(
        "Hello.", api=info.api, provider=info.provider, model=info.id, stop_reason=pp.StopReason.STOP, timestamp=1
    )
    return pp.agent_message(turn)


async def request_body(api: str, name: str, context: pp.AgentContext) -> dict[str, Any]:
    """The body the provider of `api` sends for `context`, answered by its text recording."""
    module = MODULES[api]
    _, replay = await play(provider_case(api, name, "text.http", context=context), module.INFO)
    body: dict[str, Any] = replay.requests[0].body
    return body


@APIS
async def test_a_leading_system_message_sends_what_the_shorthand_sends(api: str) -> None:
    shorthand = pp.AgentContext(system_prompt="You are pi.\n\nBe brief.", messages=[user("hi")], tools=[READ, EDIT])
    transcript = pp.AgentContext(
        messages=[system("You are pi.", sections={"style": "Be brief."}, added=(READ, EDIT)), user("hi")]
    )
    sent = await request_body(api, "shorthand", shorthand)
    assert SENT[api](sent) == ("You are pi.\n\nBe brief.", ["read", "edit"], ["user"])
    assert await request_body(api, "system-message", transcript) == sent


@APIS
async def test_a_later_system_message_adds_to_the_prompt_replaces_a_section_and_changes_the_tools(api: str) -> None:
    context = pp.AgentContext(
        messages=[
            system("You are pi.", sections={"style": "Be brief.", "tools": "Use the tools."}, added=(READ, EDIT)),
            user("hi"),
            answer(api),
            system(
                "The user is Ada.", sections={"style": "Be thorough.", "tools": None}, added=(WRITE,), removed=("edit",)
            ),
            user("go on"),
        ]
    )
    prompt, tools, turns = SENT[api](await request_body(api, "later-system-message", context))
    assert prompt == "You are pi.\n\nThe user is Ada.\n\nBe thorough."
    assert tools == ["read", "write"]
    assert turns == ["user", "model" if api in ("google-generative-ai", "google-vertex") else "assistant", "user"]


# --- resolve, the function ---------------------------------------------------------------------------


def test_the_shorthand_goes_before_the_transcript_s_own_system_messages() -> None:
    context = pp.AgentContext(
        system_prompt="Base.", tools=[READ], messages=[system("More.", added=(EDIT,)), user("hi")]
    )
    resolved = resolve(context)
    assert resolved.system_prompt == "Base.\n\nMore."
    assert [tool.name for tool in resolved.tools] == ["read", "edit"]
    assert resolved.messages == [user("hi")]


def test_no_prompt_and_no_tools_leave_the_transcript_as_it_is() -> None:
    context = pp.AgentContext(system_prompt="", messages=[user("hi")])
    assert normalize(context) == [user("hi")]
    assert resolve(context).system_prompt == ""


def test_tools_only_make_a_leading_message_with_an_empty_prompt() -> None:
    (leading, _) = normalize(pp.AgentContext(messages=[user("hi")], tools=[READ]))
    assert leading.system == SystemMessage(
        content=[pp.TextContent(text="")], string_content=True, tools_added=[READ], timestamp=0
    )
    assert resolve(pp.AgentContext(messages=[user("hi")], tools=[READ])).system_prompt == ""


def test_a_tool_defined_again_keeps_its_place_and_one_removed_then_added_goes_last() -> None:
    read_again = pp.Tool(name="read", description="Read a file, v2", parameters_json="{}")
    messages = [
        system(added=(READ, EDIT, WRITE)),
        system(added=(read_again,)),  # redefined in place
        system(removed=("edit",), added=(EDIT,)),  # removed, then added: last
    ]
    tools = resolve(pp.AgentContext(messages=messages)).tools
    assert [(tool.name, tool.description) for tool in tools] == [
        ("read", "Read a file, v2"),
        ("write", "Write a file"),
        ("edit", "Edit a file"),
    ]


def test_sections_render_after_every_content_in_javascript_s_key_order() -> None:
    messages = [
        system("Base.", sections={"b": "B.", "10": "Ten.", "a": "A.", "2": "Two.", "02": "Oh-two."}),
        user("hi"),
        system("", sections={"b": None, "c": "C."}),  # an empty content adds no blank part
        system("Later."),
    ]
    # Array-index names first by value ("02" is not one), then the others in the order first set.
    assert resolve(pp.AgentContext(messages=messages)).system_prompt == "\n\n".join(
        ["Base.\n\nLater.", "Two.", "Ten.", "A.", "Oh-two.", "C."]
    )


def test_content_blocks_join_by_line_and_messages_by_blank_line() -> None:
    blocks = SystemMessage(content=[pp.TextContent(text="One."), pp.TextContent(text="Two.")])
    messages = [pp.AgentMessage(system=blocks), system("Three.")]
    assert resolve(pp.AgentContext(messages=messages)).system_prompt == "One.\nTwo.\n\nThree."
