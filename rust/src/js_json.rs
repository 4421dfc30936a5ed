//! JSON text as JavaScript reads and writes it: `JSON.parse` and `JSON.stringify`, the form of
//! pi's own JSON and of every `*_json` field of the schema (json.proto).
//!
//! Values are serde_json's, with objects in the order of their keys (serde_json's
//! `preserve_order`) and numbers read correctly rounded (`float_roundtrip`). Numbers have
//! JavaScript's semantics: `-0` reads as negative zero, a number is written as
//! `Number.prototype.toString` writes it (`1`, not `1.0`; `0` for negative zero; `1e+21`), and an
//! integer beyond 2^53 as the double JavaScript reads it. A value's strings are held as protobuf
//! strings hold them, lone surrogates mapped (see `surrogates`): [`load_json`] maps pi's text
//! and [`dump_json`] maps it back.

use serde_json::{Number, Value};

use crate::js_number::{js_integer, js_number};
use crate::pi_json::PiJsonError;
use crate::surrogates::{self, Piece};

/// A JSON object, its keys in order.
pub type JsonObject = serde_json::Map<String, Value>;

/// pi's JSON text (one line of a session file, a message, an event) as `JSON.parse` reads it,
/// its strings as protobuf strings hold them: a lone surrogate escape (`"\ud83d"`) reads as the
/// character it maps to. Of duplicate keys the last value wins, in the place of the first.
///
/// # Errors
/// A [`PiJsonError`] without a path when the text is not one JSON value (NaN and Infinity are
/// not JSON, nor is a number beyond a double's range).
pub fn load_json(text: &str) -> Result<Value, PiJsonError> {
    serde_json::from_str(&surrogates::to_proto(text, true))
        .map_err(|error| PiJsonError::new("", format!("not valid JSON: {error}")))
}

/// A value as `JSON.stringify` writes it, as pi's text: no spaces, numbers as JavaScript writes
/// them, only `"`, `\` and control characters escaped (and lone surrogates, as `\ud83d`).
pub fn dump_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, true);
    out
}

/// The text of a `*_json` field holding `value`: `JSON.stringify`'s, its strings as the value
/// holds them (a mapped lone surrogate stays its character), as every runtime writes the field.
pub(crate) fn field_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, false);
    out
}

/// The value of a `*_json` field's text. A lone surrogate escape in it reads as its character,
/// as one read from pi's text does.
pub(crate) fn parse_field_json(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str(&surrogates::to_proto(text, false))
}

fn write_value(out: &mut String, value: &Value, pi_text: bool) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => out.push_str(&write_number(number)),
        Value::String(text) => write_string(out, text, pi_text),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(out, item, pi_text);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (index, (key, item)) in members.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(out, key, pi_text);
                out.push(':');
                write_value(out, item, pi_text);
            }
            out.push('}');
        }
    }
}

fn write_number(number: &Number) -> String {
    if let Some(unsigned) = number.as_u64() {
        js_integer(unsigned, false)
    } else if let Some(signed) = number.as_i64() {
        js_integer(signed.unsigned_abs(), signed < 0)
    } else {
        js_number(number.as_f64().unwrap_or(f64::NAN))
    }
}

fn write_string(out: &mut String, text: &str, pi_text: bool) {
    out.push('"');
    if pi_text && surrogates::is_mapped(text) {
        for piece in surrogates::from_proto(text) {
            match piece {
                Piece::Char(char) => write_char(out, char),
                Piece::Surrogate(unit) => out.push_str(&format!("\\u{unit:04x}")),
            }
        }
    } else if text.contains(|char: char| char < ' ' || char == '"' || char == '\\') {
        text.chars().for_each(|char| write_char(out, char));
    } else {
        out.push_str(text);
    }
    out.push('"');
}

/// One character as `JSON.stringify` writes it.
fn write_char(out: &mut String, char: char) {
    match char {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        control if control < ' ' => out.push_str(&format!("\\u{:04x}", u32::from(control))),
        other => out.push(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn again(text: &str) -> String {
        dump_json(&load_json(text).expect("JSON"))
    }

    #[test]
    fn text_javascript_wrote_comes_back_byte_for_byte() {
        for text in [
            r#"{"b":1,"a":[true,false,null],"c":{"z":"é😀","y":-2.5}}"#,
            r#""\"\\\b\f\n\r\t\u0001\u001f/<>""#,
            r#"[0,1e+21,100000000000000000000,0.0000015,1e-7,5e-324,9007199254740992]"#,
            r#""cut \ud83d, \udc00 and \udbff""#,
            "\"\u{10f83d} \u{10f7ff}\"",
        ] {
            assert_eq!(again(text), text);
        }
    }

    #[test]
    fn other_text_comes_back_equal_under_javascripts_semantics() {
        assert_eq!(
            again(r#"{ "a" : 1.0, "b": -0, "c": -0.0, "d": 1E21 }"#),
            r#"{"a":1,"b":0,"c":0,"d":1e+21}"#
        );
        assert_eq!(
            again("[9007199254740993,123456789012345678901234567890]"),
            "[9007199254740992,1.2345678901234568e+29]"
        );
        assert_eq!(again(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
        assert_eq!(again(r#""\u00e9\/\u007f\u2028""#), "\"é/\u{7f}\u{2028}\"");
        let zero = load_json("-0").expect("JSON");
        assert!(
            zero.as_f64()
                .is_some_and(|zero| zero == 0.0 && zero.is_sign_negative())
        );
    }

    #[test]
    fn not_json_is_refused() {
        for text in ["NaN", "[1,]", "{'a':1}", "1e999", "", "\"\\ud83d"] {
            assert!(load_json(text).is_err(), "{text}");
        }
    }

    #[test]
    fn a_fields_text_keeps_mapped_characters() {
        let value = load_json(r#"{"q":"\udc00 x"}"#).expect("JSON");
        let text = field_json(&value);
        assert_eq!(text, "{\"q\":\"\u{10fc00} x\"}");
        assert_eq!(parse_field_json(&text).expect("JSON"), value);
        assert_eq!(
            parse_field_json(r#"{"q":"\udc00 x"}"#).expect("JSON"),
            value
        );
        assert_eq!(dump_json(&value), r#"{"q":"\udc00 x"}"#);
    }
}
