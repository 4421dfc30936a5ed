"""Terminal rendering of event streams and messages (rich)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from rich.console import Console

from ._gen.types.pi.ai.v1 import AgentMessage, AssistantMessage, Model, ModelCost
from .events import FAILED, event_kind, without_partial
from .messages import tool_call_arguments
from .pi_json import STOP_REASON_NAMES, message_to_pi
from .stream import AssistantMessageEventStream
from .wire import to_json


async def print_live(console: Console, events: AssistantMessageEventStream) -> AssistantMessage:
    """Print text and reasoning as they arrive, each tool call once complete, then a summary of
    the events received; return the final message."""
    kinds: Counter[str] = Counter()
    async for event in events:
        kind, body = event_kind(event)
        kinds[kind] += 1
        if kind == "text_delta":
            console.print(body.delta, end="", markup=False, highlight=False)
        elif kind == "thinking_delta":
            console.print(body.delta, end="", style="dim italic", markup=False, highlight=False)
        elif kind in ("text_end", "thinking_end"):
            console.print()
        elif kind == "toolcall_end":
            call = body.tool_call
            console.print(f"→ {call.name}({json.dumps(tool_call_arguments(call), ensure_ascii=False)})", style="cyan")
        elif kind == "error":
            console.print(f"✗ {body.message.error_message}", style="bold red", markup=False)
    message = await events.result()
    style = "red" if message.stop_reason in FAILED else "green"
    console.print(summary(message), style=style, markup=False, highlight=False)
    trace = ", ".join(f"{kind}×{count}" if count > 1 else kind for kind, count in kinds.items())
    console.print(f"events: {trace}", style="dim", markup=False, highlight=False)
    return message


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
    tokens = f"{usage.input} in / {usage.output} out" if usage else "usage unknown"
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
