//! calculate_cost: a usage's cost at a model's rates, to the bit as pi computes it.

use pi_proto::calculate_cost;
use pi_proto::v1::{Cost, Model, ModelCost, ModelCostTier, Usage};

fn rates() -> ModelCost {
    ModelCost {
        input: 0.1,
        output: 0.3,
        cache_read: 0.03,
        cache_write: 0.7,
        ..Default::default()
    }
}

fn usage() -> Usage {
    Usage {
        input: Some(3),
        output: Some(7),
        cache_read: Some(11),
        cache_write: Some(13),
        total_tokens: Some(34),
        // Ignored: the cost is computed from the counts.
        cost: Some(Cost {
            total: Some(1.0),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn each_part_is_the_rate_per_token_times_the_tokens_and_the_total_adds_them_in_order() {
    let cost = calculate_cost(&rates(), &usage());
    assert_eq!(
        cost.input.unwrap().to_bits(),
        3.000_000_000_000_000_4e-7_f64.to_bits()
    );
    // Dividing first decides the last bit: 0.3 * 7 / 1e6 would be 2.1000000000000002e-6.
    assert_eq!(cost.output.unwrap().to_bits(), 2.1e-6_f64.to_bits());
    assert_eq!(
        cost.cache_read.unwrap().to_bits(),
        3.299_999_999_999_999_6e-7_f64.to_bits()
    );
    assert_eq!(cost.cache_write.unwrap().to_bits(), 9.1e-6_f64.to_bits());
    // So does the order of the sum: from cache_write back to input it would be 1.183e-5.
    assert_eq!(
        cost.total.unwrap().to_bits(),
        1.182_999_999_999_999_9e-5_f64.to_bits()
    );
}

#[test]
fn a_model_costs_what_its_rates_say_and_nothing_without_rates() {
    let model = Model {
        id: "m".to_owned(),
        provider: "p".to_owned(),
        cost: Some(rates()),
        ..Default::default()
    };
    assert_eq!(
        calculate_cost(&model, &usage()),
        calculate_cost(&rates(), &usage())
    );
    let free = Model {
        cost: None,
        ..model
    };
    assert_eq!(
        calculate_cost(&free, &usage()),
        // Every amount is set, to 0.
        Cost {
            input: Some(0.0),
            output: Some(0.0),
            cache_read: Some(0.0),
            cache_write: Some(0.0),
            total: Some(0.0),
            total_from_provider: Some(false),
            ..Cost::default()
        }
    );
}

fn tier(input: f64, output: f64, above: i64) -> ModelCostTier {
    ModelCostTier {
        input,
        output,
        cache_read: input / 10.0,
        cache_write: input * 1.25,
        input_tokens_above: above,
    }
}

fn counts(input: i64, cache_read: i64, cache_write: i64, cache_write_1h: Option<i64>) -> Usage {
    Usage {
        input: Some(input),
        output: Some(1000),
        cache_read: Some(cache_read),
        cache_write: Some(cache_write),
        total_tokens: Some(input + 1000 + cache_read + cache_write),
        cache_write_1h,
        ..Default::default()
    }
}

#[test]
fn a_prompt_above_a_threshold_takes_the_largest_tier_it_exceeds_in_any_order() {
    let rates = ModelCost {
        input: 3.0,
        output: 15.0,
        cache_read: 0.3,
        cache_write: 3.75,
        tiers: vec![tier(6.0, 22.5, 200_000), tier(4.0, 18.0, 128_000)],
    };
    // The prompt is input + cache read + cache write; strictly above 200,000 takes the 6.0 tier.
    let above = calculate_cost(&rates, &counts(150_001, 40_000, 10_000, None));
    assert_eq!(
        [above.input, above.output, above.total],
        [
            Some(0.900_006),
            Some(0.022_500_000_000_000_003),
            Some(1.021_506)
        ]
    );
    assert_eq!(above.total_from_provider, Some(false));
    // Exactly 200,000 does not exceed it: the 128,000 tier, given after it.
    let at = calculate_cost(&rates, &counts(150_000, 40_000, 10_000, None));
    assert_eq!(
        [at.input, at.output],
        [Some(0.6), Some(0.018_000_000_000_000_002)]
    );
    // Below every threshold: the base rates.
    let below = calculate_cost(&rates, &counts(100_000, 0, 0, None));
    assert_eq!(
        [below.input, below.output],
        [Some(0.3), Some(0.015_000_000_000_000_001)]
    );
}

#[test]
fn one_hour_cache_writes_cost_twice_the_input_rate_of_the_chosen_rates() {
    let opus = ModelCost {
        input: 5.0,
        output: 25.0,
        cache_read: 0.5,
        cache_write: 6.25,
        ..Default::default()
    };
    let split = calculate_cost(&opus, &counts(1, 0, 33_637, Some(20_000)));
    assert_eq!(split.cache_write, Some(0.285_231_25));
    // Absent and 0 are the same: every write at the cache write rate.
    let absent = calculate_cost(&opus, &counts(1, 0, 33_637, None));
    assert_eq!(
        absent,
        calculate_cost(&opus, &counts(1, 0, 33_637, Some(0)))
    );
    assert_eq!(absent.cache_write, Some(0.210_231_25));
    // Above a threshold, twice the tier's input rate: (7.5 * 6000 + 6 * 2 * 4000) / 1e6.
    let tiered = ModelCost {
        tiers: vec![tier(6.0, 22.5, 200_000)],
        ..opus
    };
    let long = calculate_cost(&tiered, &counts(150_001, 40_000, 10_000, Some(4000)));
    assert_eq!(long.cache_write, Some(0.093));
}

#[test]
fn the_cache_write_part_adds_both_products_before_dividing() {
    let rates = ModelCost {
        input: 0.1,
        output: 0.2,
        cache_read: 0.3,
        cache_write: 0.7,
        ..Default::default()
    };
    let usage = Usage {
        input: Some(3),
        output: Some(1),
        cache_read: Some(11),
        cache_write: Some(5),
        total_tokens: Some(20),
        cache_write_1h: Some(2),
        ..Default::default()
    };
    let cost = calculate_cost(&rates, &usage);
    // Dividing each product by a million first would give 2.4999999999999998e-6.
    assert_eq!(
        cost.cache_write.unwrap().to_bits(),
        2.499_999_999_999_999_4e-6_f64.to_bits()
    );
    assert_eq!(
        cost.total.unwrap().to_bits(),
        6.299_999_999_999_999e-6_f64.to_bits()
    );
}
