"""What a call costs: its token counts at a model's rates, as pi's calculateCost computes it."""

from __future__ import annotations

from .._gen.types.pi.ai.v1 import Cost, Model, ModelCost, ModelCostTier, Usage


def calculate_cost(rates: Model | ModelCost, usage: Usage) -> Cost:
    """The cost of `usage` at `rates` (a model's, in dollars per million tokens); the usage's own
    cost is ignored.

    The rates are those of the tier with the largest `input_tokens_above` that the prompt (input,
    cache read and cache write tokens) exceeds, else the base rates. Input, output and cache read
    are each the rate divided by 1,000,000, times the tokens. Cache writes with one-hour retention
    (`cache_write_1h`, a part of `cache_write`; absent is 0) cost twice the input rate, the rest
    the cache write rate: (cache_write rate * the rest + input rate * 2 * one-hour) / 1,000,000.
    The total adds the four parts in that order, and `total_from_provider` is false: the same
    operations in the same order as pi, so the doubles are pi's to the bit
    (tests/conformance/cost.yaml). A model without rates costs nothing.
    """
    base = rates.cost if isinstance(rates, Model) else rates
    if base is None:
        return Cost(input=0.0, output=0.0, cache_read=0.0, cache_write=0.0, total=0.0, total_from_provider=False)
    # Token counts are doubles in pi; converting first keeps every operation a double's.
    input, output = float(usage.input or 0), float(usage.output or 0)  # absent counts nothing
    cache_read, cache_write = float(usage.cache_read or 0), float(usage.cache_write or 0)
    prompt = input + cache_read + cache_write
    chosen: ModelCost | ModelCostTier = base
    threshold = -1.0
    for tier in base.tiers:
        above = float(tier.input_tokens_above)
        # Strictly above, and the first of equal thresholds wins, as in pi.
        if prompt > above and above > threshold:
            chosen, threshold = tier, above
    long_write = float(usage.cache_write_1h or 0)
    short_write = cache_write - long_write
    parts = (
        chosen.input / 1_000_000 * input,
        chosen.output / 1_000_000 * output,
        chosen.cache_read / 1_000_000 * cache_read,
        (chosen.cache_write * short_write + chosen.input * 2 * long_write) / 1_000_000,
    )
    total = parts[0] + parts[1] + parts[2] + parts[3]
    input_cost, output_cost, read_cost, write_cost = parts
    return Cost(
        input=input_cost,
        output=output_cost,
        cache_read=read_cost,
        cache_write=write_cost,
        total=total,
        total_from_provider=False,
    )
