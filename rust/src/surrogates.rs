//! Lone surrogates: text pi writes that a protobuf string cannot hold.
//!
//! JavaScript strings are UTF-16, and pi writes whatever they hold: a stream cut inside a
//! surrogate pair leaves a lone surrogate, which `JSON.stringify` writes as an escape
//! (`"\ud83d"`). Protobuf strings, like Rust's, are UTF-8, which has no lone surrogates. So the
//! pi-JSON codec reads each of the 2,048 surrogates U+D800 + k as U+10F800 + k, the top of plane
//! 16 (private use), and writes it back as its escape. To keep that reversible, a character of
//! that range in the text itself (U+10F7FF to U+10FFFF) is read as U+10F7FF followed by itself.
//! Every runtime's codec maps the same way (docs/transcripts.md; the conformance corpus's
//! `pi_json/lone-surrogate*` cases pin it).
//!
//! Both directions work on JSON text, since a lone surrogate exists only there, as an escape:
//! [`to_proto`] rewrites text before it is parsed, and the JSON writer calls [`from_proto`] for
//! each string it writes as pi text.

use std::borrow::Cow;

const SURROGATES: u32 = 0xd800;
/// Where surrogate U+D800 + k goes: U+10F800 + k.
const MAPPED: u32 = 0x10_f800;
/// In front of a character of the mapped range that was in the text itself.
const ESCAPE: char = '\u{10f7ff}';

/// JSON text (a value's, or a `*_json` field's) with every lone surrogate escape replaced by the
/// character it maps to, so a JSON parser reads it; with `from_pi`, the text is pi's, and each
/// character of the mapped range in it also gets [`ESCAPE`] in front (in the field's text it is
/// already mapped, and a lone escape there stands for the same character).
pub(crate) fn to_proto(text: &str, from_pi: bool) -> Cow<'_, str> {
    let touched = |char: char| char == '\\' || (from_pi && char >= ESCAPE);
    if !text.contains(touched) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(at) = rest.find(touched) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if !rest.starts_with('\\') {
            let char = rest.chars().next().unwrap_or(ESCAPE);
            out.push(ESCAPE);
            out.push(char);
            rest = &rest[char.len_utf8()..];
            continue;
        }
        let taken = match unit_escape(rest) {
            Some(high @ 0xd800..=0xdbff) => match unit_escape(&rest[6..]) {
                Some(low @ 0xdc00..=0xdfff) => {
                    // A pair: the character it encodes, escaped if it is of the mapped range.
                    let point =
                        0x1_0000 + ((u32::from(high) - 0xd800) << 10) + (u32::from(low) - 0xdc00);
                    if from_pi && point >= u32::from(ESCAPE) {
                        out.push(ESCAPE);
                    }
                    out.push_str(&rest[..12]);
                    12
                }
                _ => {
                    out.push(mapped(high));
                    6
                }
            },
            Some(low @ 0xdc00..=0xdfff) => {
                out.push(mapped(low));
                6
            }
            // Any other escape, kept with the character it escapes (a `\\` is not the start of
            // the next one).
            _ => {
                let escaped = rest[1..].chars().next().map_or(0, char::len_utf8);
                out.push_str(&rest[..=escaped]);
                1 + escaped
            }
        };
        rest = &rest[taken..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The code unit of a `\uXXXX` escape at the start of `text`.
fn unit_escape(text: &str) -> Option<u16> {
    let hex = text.strip_prefix("\\u")?.get(..4)?;
    if !hex.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(hex, 16).ok()
}

fn mapped(surrogate: u16) -> char {
    char::from_u32(MAPPED + u32::from(surrogate) - SURROGATES).unwrap_or(ESCAPE)
}

/// One piece of a string as pi's text holds it: [`from_proto`] gives each character of a
/// string as one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A character, as it is.
    Char(char),
    /// A lone surrogate, which JSON text can hold only as an escape.
    Surrogate(u16),
}

/// A string as [`to_proto`] read it, as it was: a lone surrogate for each mapped character, and
/// the character itself for [`ESCAPE`] and the character it escapes (a lone ESCAPE stays).
pub(crate) fn from_proto(text: &str) -> impl Iterator<Item = Piece> + '_ {
    let mut chars = text.chars().peekable();
    std::iter::from_fn(move || {
        let char = chars.next()?;
        Some(if char == ESCAPE {
            Piece::Char(chars.next_if(|next| *next >= ESCAPE).unwrap_or(ESCAPE))
        } else if u32::from(char) >= MAPPED {
            // MAPPED + k for k below 2,048, so the surrogate fits a u16.
            Piece::Surrogate(u16::try_from(u32::from(char) - MAPPED + SURROGATES).unwrap_or(0xfffd))
        } else {
            Piece::Char(char)
        })
    })
}

/// Whether [`from_proto`] changes `text`: it holds a character of the mapped range.
pub(crate) fn is_mapped(text: &str) -> bool {
    text.contains(|char: char| char >= ESCAPE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn back(text: &str) -> String {
        from_proto(text)
            .map(|piece| match piece {
                Piece::Char(char) => char.to_string(),
                Piece::Surrogate(unit) => format!("\\u{unit:04x}"),
            })
            .collect()
    }

    #[test]
    fn lone_surrogate_escapes_map_to_plane_16_and_back() {
        assert_eq!(to_proto(r#""cut \ud83d""#, true), "\"cut \u{10f83d}\"");
        assert_eq!(
            to_proto(r#""\udc00 \uDBFF""#, true),
            "\"\u{10fc00} \u{10fbff}\""
        );
        assert_eq!(back("cut \u{10f83d}"), r"cut \ud83d");
        // A pair is a character, and an escaped backslash starts no escape.
        assert_eq!(
            to_proto(r#""\ud83d\ude00 \\ud83d""#, true),
            r#""\ud83d\ude00 \\ud83d""#
        );
    }

    #[test]
    fn characters_of_the_mapped_range_in_pi_text_are_escaped() {
        let text = "\u{10f83d} \u{10f7ff} \u{10ffff} \\udbff\\udfff";
        let read = to_proto(text, true);
        assert_eq!(
            read,
            "\u{10f7ff}\u{10f83d} \u{10f7ff}\u{10f7ff} \u{10f7ff}\u{10ffff} \u{10f7ff}\\udbff\\udfff"
        );
        // Text that is already the proto's is left as it is.
        assert_eq!(to_proto(text, false), text);
        assert_eq!(
            back("\u{10f7ff}\u{10f83d} \u{10f7ff}\u{10f7ff} \u{10f7ff}"),
            "\u{10f83d} \u{10f7ff} \u{10f7ff}"
        );
    }

    #[test]
    fn text_without_escapes_or_the_range_is_borrowed() {
        assert!(matches!(
            to_proto("{\"a\":\"é😀\"}", true),
            Cow::Borrowed(_)
        ));
        assert!(!is_mapped("é😀"));
        assert!(is_mapped("\u{10f800}"));
    }
}
