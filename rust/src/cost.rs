//! What a call costs: its token counts at a model's rates, as pi's `calculateCost` computes it.

use crate::v1::{Cost, Model, ModelCost, Usage};

/// What holds a model's rates, in US dollars per million tokens: a [`ModelCost`], or a
/// [`Model`] (a model without rates costs nothing).
pub trait Rates {
    /// The rates; `None` when there are none.
    fn rates(&self) -> Option<&ModelCost>;
}

impl Rates for ModelCost {
    fn rates(&self) -> Option<&ModelCost> {
        Some(self)
    }
}

impl Rates for Model {
    fn rates(&self) -> Option<&ModelCost> {
        self.cost.as_ref()
    }
}

/// The cost of `usage`'s token counts at `rates` (its own `cost` is ignored).
///
/// The rates are those of the tier with the largest `input_tokens_above` that the prompt (input,
/// cache read and cache write tokens) exceeds, else the base rates. Input, output and cache read
/// are each the rate divided by 1,000,000, times the tokens. Cache writes with one-hour retention
/// (`cache_write_1h`, a part of `cache_write`; absent is 0) cost twice the input rate and the rest
/// the cache write rate: (cache write rate * rest + input rate * 2 * one-hour) / 1,000,000. The
/// total adds input, output, cache read and cache write in that order, and `total_from_provider`
/// is false: the same operations in the same order as pi, so the doubles are pi's to the last bit.
#[allow(clippy::cast_precision_loss)] // token counts are JavaScript numbers in pi too
pub fn calculate_cost(rates: &impl Rates, usage: &Usage) -> Cost {
    let Some(base) = rates.rates() else {
        // pi's Cost has every amount, so a model without rates costs 0 in each, not nothing.
        return Cost {
            input: Some(0.0),
            output: Some(0.0),
            cache_read: Some(0.0),
            cache_write: Some(0.0),
            total: Some(0.0),
            total_from_provider: Some(false),
            ..Cost::default()
        };
    };
    // Token counts are doubles in pi, so the prompt is summed and compared as doubles too.
    // An absent count is 0.
    let input_tokens = usage.input.unwrap_or(0) as f64;
    let output_tokens = usage.output.unwrap_or(0) as f64;
    let cache_read_tokens = usage.cache_read.unwrap_or(0) as f64;
    let cache_write_tokens = usage.cache_write.unwrap_or(0) as f64;
    let prompt = input_tokens + cache_read_tokens + cache_write_tokens;
    let mut chosen = [base.input, base.output, base.cache_read, base.cache_write];
    let mut threshold = -1.0;
    for tier in &base.tiers {
        let above = tier.input_tokens_above as f64;
        // Strictly above, and the first of equal thresholds wins, as in pi.
        if prompt > above && above > threshold {
            chosen = [tier.input, tier.output, tier.cache_read, tier.cache_write];
            threshold = above;
        }
    }
    let [input_rate, output_rate, cache_read_rate, cache_write_rate] = chosen;
    let long_write = usage.cache_write_1h.unwrap_or(0) as f64;
    let short_write = cache_write_tokens - long_write;
    let input = input_rate / 1_000_000.0 * input_tokens;
    let output = output_rate / 1_000_000.0 * output_tokens;
    let cache_read = cache_read_rate / 1_000_000.0 * cache_read_tokens;
    let cache_write =
        (cache_write_rate * short_write + input_rate * 2.0 * long_write) / 1_000_000.0;
    Cost {
        input: Some(input),
        output: Some(output),
        cache_read: Some(cache_read),
        cache_write: Some(cache_write),
        total: Some(input + output + cache_read + cache_write),
        total_from_provider: Some(false),
        ..Cost::default()
    }
}
