"""The messages the benchmarks stream: numbered text, so every delta is distinct and checkable."""

from __future__ import annotations

import pi_proto as pp


def text_turn(events: int, delta_size: int = 8) -> pp.AssistantMessage:
    """A one-block answer that streams as exactly `events` events (start, text start, deltas, end, done)."""
    deltas = events - 4
    text = "".join(f"{index:0{delta_size - 1}d}," for index in range(deltas))
    return pp.assistant_message(text, timestamp=1_000)
