"""calculate_cost: prompt-size tiers and one-hour cache writes, to the bit as pi computes them.

The corpus's cost cases (tests/conformance/cost.yaml) pin the same values in every runtime.
"""

from __future__ import annotations

import pi_proto as pp

BASE = pp.ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75)
LONG = pp.ModelCostTier(input=6, output=22.5, cache_read=0.6, cache_write=7.5, input_tokens_above=200_000)
MID = pp.ModelCostTier(input=4, output=18, cache_read=0.4, cache_write=5, input_tokens_above=128_000)


def rates(*tiers: pp.ModelCostTier) -> pp.ModelCost:
    return pp.ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75, tiers=list(tiers))


def test_a_prompt_takes_a_tier_only_when_it_is_above_the_threshold() -> None:
    # The prompt is input + cache read + cache write: 200,000 here, then one more.
    at = pp.Usage(input=150_000, output=1000, cache_read=40_000, cache_write=10_000)
    above = pp.Usage(input=150_001, output=1000, cache_read=40_000, cache_write=10_000)
    assert pp.calculate_cost(rates(LONG), at) == pp.calculate_cost(BASE, at)
    cost = pp.calculate_cost(rates(LONG), above)
    parts = (cost.input, cost.output, cost.cache_read, cost.cache_write, cost.total)
    assert parts == (0.900006, 0.022500000000000003, 0.024, 0.075, 1.021506)


def test_of_tiers_in_any_order_the_largest_threshold_exceeded_wins() -> None:
    usage = pp.Usage(input=300_000)
    assert pp.calculate_cost(rates(LONG, MID), usage).input == 1.8  # at 6, not 4
    assert pp.calculate_cost(rates(MID, LONG), usage) == pp.calculate_cost(rates(LONG, MID), usage)
    between = pp.Usage(input=150_000)
    assert pp.calculate_cost(rates(LONG, MID), between).input == 0.6  # at 4


def test_one_hour_cache_writes_cost_twice_the_input_rate_of_the_chosen_rates() -> None:
    opus = pp.ModelCost(input=5, output=25, cache_read=0.5, cache_write=6.25)
    split = pp.calculate_cost(opus, pp.Usage(input=1, output=114, cache_write=33637, cache_write_1h=20000))
    assert (split.cache_write, split.total) == (0.28523125, 0.28808625)
    # Absent and 0 are the same: every write at the cache write rate.
    absent = pp.calculate_cost(opus, pp.Usage(input=1, output=114, cache_write=33637))
    assert absent == pp.calculate_cost(opus, pp.Usage(input=1, output=114, cache_write=33637, cache_write_1h=0))
    assert absent.cache_write == 0.21023125
    # Above the threshold, twice the tier's input rate: (7.5 * 6000 + 6 * 2 * 4000) / 1e6.
    tiered = pp.Usage(input=150_001, output=1000, cache_read=40_000, cache_write=10_000, cache_write_1h=4000)
    assert pp.calculate_cost(rates(LONG), tiered).cache_write == 0.093


def test_the_cache_write_part_adds_both_products_before_dividing() -> None:
    cost = pp.calculate_cost(
        pp.ModelCost(input=0.1, output=0.2, cache_read=0.3, cache_write=0.7),
        pp.Usage(input=3, output=1, cache_read=11, cache_write=5, cache_write_1h=2),
    )
    assert cost.cache_write == 2.4999999999999994e-06  # dividing each product first: ...98e-06
    assert cost.total == 6.299999999999999e-06  # adding from cache write back: ...98e-06


def test_the_cost_is_an_estimate_never_the_providers() -> None:
    assert pp.calculate_cost(BASE, pp.Usage(input=1)).total_from_provider is False
    free = pp.Model(id="free", provider="local")
    assert pp.calculate_cost(free, pp.Usage(input=1)) == pp.Cost(
        input=0, output=0, cache_read=0, cache_write=0, total=0, total_from_provider=False
    )
