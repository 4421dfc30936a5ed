//! Numbers as JavaScript writes them (ECMA-262 `Number::toString`), which is how `JSON.stringify`
//! writes every number in pi-JSON and in the schema's JSON text (json.proto says so).

/// Integers up to this magnitude are exact in a double; JavaScript reads a larger one as the
/// nearest double, so it is written as that.
const SAFE_INTEGER: u64 = 1 << 53;

/// A double as JavaScript's `Number.prototype.toString` writes it: the shortest digits that read
/// back as the same double, in full from 1e-7 to below 1e21 and with an exponent beyond
/// (`1e+21`, `1.5e-7`); `0` for either zero. Not finite: `null`, as `JSON.stringify` writes it.
pub(crate) fn js_number(value: f64) -> String {
    if value == 0.0 {
        return "0".to_owned();
    }
    if !value.is_finite() {
        return "null".to_owned();
    }
    // Rust's exponent form has the shortest round-trip digits too: "1.5e-7", "5e-324".
    let shortest = format!("{:e}", value.abs());
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let digits: String = mantissa.chars().filter(|char| *char != '.').collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if value < 0.0 { "-" } else { "" };
    // The decimal point sits `point` digits into `digits` (ECMA-262's n; k is digits.len()).
    let point = exponent + 1;
    let count = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let zeros = |n: i32| "0".repeat(usize::try_from(n).unwrap_or(0));
    if count <= point && point <= 21 {
        format!("{sign}{digits}{}", zeros(point - count))
    } else if 0 < point && point <= 21 {
        let (whole, fraction) = digits.split_at(usize::try_from(point).unwrap_or(0));
        format!("{sign}{whole}.{fraction}")
    } else if -6 < point && point <= 0 {
        format!("{sign}0.{}{digits}", zeros(-point))
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let direction = if point > 0 { '+' } else { '-' };
        format!("{sign}{first}{fraction}e{direction}{}", (point - 1).abs())
    }
}

/// An integer as JavaScript writes the number it reads from it: exactly up to 2^53, beyond that
/// the nearest double.
pub(crate) fn js_integer(magnitude: u64, negative: bool) -> String {
    let sign = if negative { "-" } else { "" };
    if magnitude <= SAFE_INTEGER {
        format!("{sign}{magnitude}")
    } else {
        // The nearest double, as JSON.parse reads the digits.
        #[allow(clippy::cast_precision_loss)]
        let nearest = magnitude as f64;
        js_number(if negative { -nearest } else { nearest })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_are_written_as_javascript_writes_them() {
        for (value, text) in [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-2.5, "-2.5"),
            (100.0, "100"),
            (0.1, "0.1"),
            (0.013_875_000_000_000_002, "0.013875000000000002"),
            (5e-6, "0.000005"),
            (1.5e-6, "0.0000015"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.234_5e21, "1.2345e+21"),
            (123_456_789_012_345_680_000.0, "123456789012345680000"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::NAN, "null"),
        ] {
            assert_eq!(js_number(value), text, "{value:e}");
        }
    }

    #[test]
    fn integers_beyond_2_to_the_53_are_the_nearest_double() {
        assert_eq!(js_integer(9_007_199_254_740_992, false), "9007199254740992");
        assert_eq!(js_integer(9_007_199_254_740_993, false), "9007199254740992");
        assert_eq!(
            js_integer(1_152_921_504_606_846_976, true),
            "-1152921504606847000"
        );
        assert_eq!(js_integer(u64::MAX, false), "18446744073709552000");
    }
}
