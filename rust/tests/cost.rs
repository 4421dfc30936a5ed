//! calculate_cost: a usage's cost at a model's rates, to the bit as pi computes it.

use pi_proto::calculate_cost;
use pi_proto::v1::{Cost, Model, ModelCost, Usage};

fn rates() -> ModelCost {
    ModelCost {
        input: 0.1,
        output: 0.3,
        cache_read: 0.03,
        cache_write: 0.7,
    }
}

fn usage() -> Usage {
    Usage {
        input: 3,
        output: 7,
        cache_read: 11,
        cache_write: 13,
        total_tokens: 34,
        // Ignored: the cost is computed from the counts.
        cost: Some(Cost {
            total: 1.0,
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn each_part_is_the_rate_per_token_times_the_tokens_and_the_total_adds_them_in_order() {
    let cost = calculate_cost(&rates(), &usage());
    assert_eq!(
        cost.input.to_bits(),
        3.000_000_000_000_000_4e-7_f64.to_bits()
    );
    // Dividing first decides the last bit: 0.3 * 7 / 1e6 would be 2.1000000000000002e-6.
    assert_eq!(cost.output.to_bits(), 2.1e-6_f64.to_bits());
    assert_eq!(
        cost.cache_read.to_bits(),
        3.299_999_999_999_999_6e-7_f64.to_bits()
    );
    assert_eq!(cost.cache_write.to_bits(), 9.1e-6_f64.to_bits());
    // So does the order of the sum: from cache_write back to input it would be 1.183e-5.
    assert_eq!(
        cost.total.to_bits(),
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
    assert_eq!(calculate_cost(&free, &usage()), Cost::default());
}
