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
/// Each part is the rate divided by 1,000,000, times the token count, and the total adds the
/// parts in the order input, output, cache read, cache write: the same operations in the same
/// order as pi, so the doubles are pi's to the last bit.
#[allow(clippy::cast_precision_loss)] // token counts are JavaScript numbers in pi too
pub fn calculate_cost(rates: &impl Rates, usage: &Usage) -> Cost {
    let Some(rates) = rates.rates() else {
        return Cost::default();
    };
    let part = |rate: f64, tokens: i64| rate / 1_000_000.0 * tokens as f64;
    let input = part(rates.input, usage.input);
    let output = part(rates.output, usage.output);
    let cache_read = part(rates.cache_read, usage.cache_read);
    let cache_write = part(rates.cache_write, usage.cache_write);
    Cost {
        input,
        output,
        cache_read,
        cache_write,
        total: input + output + cache_read + cache_write,
        ..Cost::default()
    }
}
