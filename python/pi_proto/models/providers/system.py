"""pi's system messages, resolved for the provider APIs that take one system prompt and one tool set.

Since pi 1.6 the system prompt and the tools live in the transcript: a context's messages may start
with a SystemMessage and hold later ones, each changing what is in force from where it stands
(`content` adds instructions, `sections` replace or remove named sections, `tools_added` and
`tools_removed` change the tools). A context's `system_prompt` and `tools` are shorthand for a
leading system message (pi's normalizeContext). `resolve` replays them all in order, as pi's
collapseSystemMessages and getSystemMessageText do: every later `content` is appended to the base
prompt, sections are patched by name and rendered after it, and a tool is known by its name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..._gen.types.pi.ai.v1 import AgentContext, AgentMessage, SystemMessage, TextContent, Tool

# The blank line pi puts between the prompt's parts (each message's content, each section).
PART_SEPARATOR = "\n\n"
_MAX_ARRAY_INDEX = 2**32 - 2  # the largest key JavaScript orders as an array index


@dataclass(frozen=True)
class Resolved:
    """What a provider sends: the system prompt ("" for none), the tools and the other messages."""

    system_prompt: str
    tools: list[Tool]
    messages: list[AgentMessage]


def normalize(context: AgentContext) -> list[AgentMessage]:
    """The transcript with the context's `system_prompt` and `tools` folded into a leading system
    message (none when both are empty), as pi's normalizeContext makes it."""
    prompt = context.system_prompt or ""
    if not prompt and not context.tools:
        return list(context.messages)
    leading = SystemMessage(
        content=[TextContent(text=prompt)], string_content=True, tools_added=list(context.tools), timestamp=0
    )
    return [AgentMessage(system=leading), *context.messages]


def resolve(context: AgentContext) -> Resolved:
    """The prompt and tools in force after every system message, and the messages without them."""
    messages = normalize(context)
    systems = [message.system for message in messages if message.system is not None]
    others = [message for message in messages if message.system is None]
    return Resolved(system_prompt=render_prompt(systems), tools=current_tools(systems), messages=others)


def current_tools(systems: Iterable[SystemMessage]) -> list[Tool]:
    """The tools after each message's removals, then its additions; a tool added again under a
    name keeps that name's place, as in pi's getCurrentTools."""
    tools: dict[str, Tool] = {}
    for message in systems:
        for removed in message.tools_removed:
            tools.pop(removed.name, None)
        for tool in message.tools_added:
            tools[tool.name] = tool
    return list(tools.values())


def render_prompt(systems: Sequence[SystemMessage]) -> str:
    """The prompt text: every message's content, then the sections in force, joined by blank lines
    with the empty ones left out (pi's getCurrentSystemMessage, then getSystemMessageText)."""
    contents = [text for message in systems if (text := content_text(message))]
    sections: dict[str, str] = {}
    for message in systems:
        for section in message.sections:
            if section.text is None:
                sections.pop(section.name, None)
            else:
                sections[section.name] = section.text
    parts = [PART_SEPARATOR.join(contents), *(sections[name] for name in js_key_order(sections))]
    return PART_SEPARATOR.join(part for part in parts if part)


def content_text(message: SystemMessage) -> str:
    """A message's instruction blocks, one per line, as pi's contentText joins them."""
    return "\n".join(block.text for block in message.content)


def js_key_order(names: Iterable[str]) -> list[str]:
    """The names in the order a JavaScript object lists them, which is how pi orders sections:
    array-index names ("0", "12") first by value, then the others as they were added."""
    names = list(names)
    indexes = sorted((name for name in names if _is_array_index(name)), key=int)
    return indexes + [name for name in names if not _is_array_index(name)]


def _is_array_index(name: str) -> bool:
    return name.isascii() and name.isdigit() and str(int(name)) == name and int(name) <= _MAX_ARRAY_INDEX
