"""Terminal rendering of event streams and messages (rich)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from rich.console import Console
from rich.text import Text

from .._gen.types.pi.ai.v1 import AgentMessage, AssistantMessage, Model, ModelCost
from ..ir.events import FAILED, event_kind, without_partial
from ..ir.messages import tool_call_arguments
from ..stream.event_stream import AssistantMessageEventStream
from ..transcripts.pi_json import STOP_REASON_NAMES, message_to_pi
from ..wire.codec import to_json


async def print_live(console: Console, events: AssistantMessageEventStream) -> AssistantMessage:
    """Print text and reasoning as they arrive, each tool call once complete, then a summary of
    the events received; return the final message. What the model sent is printed as it is."""
    kinds: Counter[str] = Counter()
    async for event in events:
        kind, body = event_kind(event)
        kinds[kind] += 1
        if kind == "text_delta":
            _print_literal(console, body.delta, end="")
        elif kind == "thinking_delta":
            _print_literal(console, body.delta, style="dim italic", end="")
        elif kind in ("text_end", "thinking_end"):
            console.print()
        elif kind == "toolcall_end":
            call = body.tool_call
            arguments = json.dumps(tool_call_arguments(call), ensure_ascii=False)
            _print_literal(console, f"→ {call.name}({arguments})", style="cyan")
        elif kind == "error":
            _print_literal(console, f"✗ {body.message.error_message}", style="bold red")
    message = await events.result()
    _print_literal(console, summary(message), style="red" if message.stop_reason in FAILED else "green")
    trace = ", ".join(f"{kind}×{count}" if count > 1 else kind for kind, count in kinds.items())
    _print_literal(console, f"events: {trace}", style="dim")
    return message


def _print_literal(console: Console, text: str, *, style: str = "", end: str = "\n") -> None:
    """Print `text` exactly as it is: a Text is never read for markup (`[/]` would raise,
    `[red]` vanish), emoji codes or highlights, and soft wrapping leaves line breaks to the
    terminal, as rich cannot know where a delta printed piece by piece starts on its line."""
    console.print(Text(text, style=style), end=end, soft_wrap=True)


async def print_json_lines(events: AssistantMessageEventStream) -> AssistantMessage:
    """Print every event as one ProtoJSON line, as it travelled on the wire (without `partial`)."""
    async for event in events:
        print(to_json(without_partial(event)), flush=True)
    return await events.result()


def describe_model(model: Model) -> str:
    """One line: provider/id, name, window and limit, and what a million tokens cost."""
    cost = model.cost or ModelCost()
    rates = f"${cost.input:g} in / ${cost.output:g} out per Mtok"
    window = (
        f"{model.context_window:,} tokens in, {model.max_tokens:,} out" if model.context_window else "no limits given"
    )
    return f"{model.provider}/{model.id}  {model.name or '-'}  ({window}; {rates})"


def summary(message: AssistantMessage) -> str:
    """One line: stop reason and token usage."""
    usage = message.usage
    tokens = f"{usage.input or 0} in / {usage.output or 0} out" if usage is not None else "usage unknown"
    return f"[{STOP_REASON_NAMES.get(message.stop_reason, 'unspecified')}] {message.model} · {tokens}"


def print_transcript(console: Console, transcript: list[AgentMessage], width: int = 60) -> None:
    """The transcript as pi-JSON, one message per line, with strings longer than `width` cut."""
    for message in transcript:
        console.print_json(json.dumps(_shorten(message_to_pi(message), width), ensure_ascii=False), indent=None)


def _shorten(value: Any, width: int) -> Any:
    if isinstance(value, str) and len(value) > width:
        return f"{value[:width]}… ({len(value)} chars)"
    if isinstance(value, dict):
        return {key: _shorten(item, width) for key, item in value.items()}
    if isinstance(value, list):
        return [_shorten(item, width) for item in value]
    return value
