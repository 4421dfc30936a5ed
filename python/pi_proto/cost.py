"""What a call costs: its token counts at a model's rates, as pi's calculateCost computes it."""

from __future__ import annotations

from ._gen.types.pi.ai.v1 import Cost, Model, ModelCost, Usage


def calculate_cost(rates: Model | ModelCost, usage: Usage) -> Cost:
    """The cost of `usage` at `rates` (a model's, in dollars per million tokens).

    Each part is the rate divided by 1,000,000, times the token count, and the total adds the
    parts in pi's order, so the doubles are pi's to the bit (tests/conformance/cost.json).
    """
    cost = rates.cost if isinstance(rates, Model) else rates
    if cost is None:
        return Cost()
    parts = Cost(
        input=cost.input / 1_000_000 * usage.input,
        output=cost.output / 1_000_000 * usage.output,
        cache_read=cost.cache_read / 1_000_000 * usage.cache_read,
        cache_write=cost.cache_write / 1_000_000 * usage.cache_write,
    )
    parts.total = parts.input + parts.output + parts.cache_read + parts.cache_write
    return parts
