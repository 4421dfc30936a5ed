"""Terminal rendering: what a model sends is printed as it is, never read as rich markup."""

from __future__ import annotations

import io

from rich.console import Console

import pi_proto as pp
from pi_proto.cli.render import print_live, summary
from pi_proto.ir.events import events_of
from pi_proto.stream.event_stream import AssistantMessageEventStream

# Markup rich would raise on ("[/]" closes nothing), eat ("[red]"), or turn into an emoji.
HOSTILE = "[red]secret[/red] a[b] [/] :smile:"


async def printed(message: pp.AssistantMessage, *, width: int = 200, delta_size: int = 5) -> str:
    """What print_live writes for the events of `message`, on a plain console `width` wide."""
    output = io.StringIO()
    events = AssistantMessageEventStream()
    events.play(events_of(message, delta_size))
    await print_live(Console(file=output, width=width), events)
    return output.getvalue()


async def test_text_thinking_and_tool_calls_print_as_sent() -> None:
    message = pp.assistant_message(
        pp.thinking(f"think {HOSTILE}"),
        f"say {HOSTILE}",
        pp.tool_call("c1", "grep[/]", {"pattern": HOSTILE}),
        model="[bold]m[/bold]",
        usage=pp.Usage(input=3, output=4),
        stop_reason=pp.StopReason.TOOL_USE,
        timestamp=1,
    )
    lines = (await printed(message)).splitlines()
    assert lines[:3] == [
        f"think {HOSTILE}",
        f"say {HOSTILE}",
        f'→ grep[/]({{"pattern": "{HOSTILE}"}})',
    ]
    assert lines[3] == "[toolUse] [bold]m[/bold] · 3 in / 4 out"


async def test_an_error_message_prints_as_sent() -> None:
    message = pp.assistant_message(
        stop_reason=pp.StopReason.ERROR, error_message=f"upstream said {HOSTILE}", timestamp=1
    )
    assert (await printed(message)).splitlines()[0] == f"✗ upstream said {HOSTILE}"


async def test_long_text_is_not_broken_into_lines() -> None:
    text = "word " * 30  # one delta wider than the console: the terminal wraps it, rich must not
    message = pp.assistant_message(text, timestamp=1)
    assert (await printed(message, width=40, delta_size=len(text))).splitlines()[0] == text


def test_the_summary_shows_a_usage_of_zero_tokens_as_zero() -> None:
    message = pp.assistant_message("hi", timestamp=1)
    message.usage = pp.Usage()
    assert summary(message).endswith("0 in / 0 out")
    message.usage = None
    assert summary(message).endswith("usage unknown")
