//! JSON text as JavaScript's `JSON.parse` reads it (RFC 8259), checked without building a value.
//!
//! One pass over the text with an explicit stack, so a 100,000-deep array costs a few bytes per
//! level and never the call stack. The rules, and the order a text is judged in:
//!
//! - `json.syntax`: the text is not one JSON value (NaN, Infinity, comments, single quotes,
//!   trailing commas, leading zeros, raw control characters in strings, a byte order mark, two
//!   values). Duplicate keys and escaped lone surrogates are JSON.
//! - `json.depth`: objects and arrays nest more than [`MAX_DEPTH`] deep.
//! - `json.number`: a number is beyond the range of a double (`1e999`, a 400-digit integer);
//!   one too small for a double reads as 0 and is fine.
//! - `json.object`: the field's shape asks for an object and the value is something else.
//! - `json.extra`: an `extra_json` object holds a key its message models as a field (see
//!   [`modelled_key`]); judged only once the text passed the rules above.

/// How deep objects and arrays may nest in JSON text (the `pi.ai.v1.JsonText` option says so).
pub const MAX_DEPTH: usize = 64;

/// What is wrong with a JSON text: the rule it breaks and a detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub rule_id: &'static str,
    pub detail: String,
}

/// Check `text`; with `object_required`, its value must be an object.
pub(crate) fn check(text: &str, object_required: bool) -> Option<Problem> {
    let summary = match Scanner::new(text).scan() {
        Ok(summary) => summary,
        Err(detail) => return Some(problem("json.syntax", detail)),
    };
    if summary.depth > MAX_DEPTH {
        let detail = format!("nested {} deep, deeper than {MAX_DEPTH}", summary.depth);
        return Some(problem("json.depth", detail));
    }
    if let Some(number) = summary.out_of_range {
        let detail = format!("the number {number} is beyond the range of a double");
        return Some(problem("json.number", detail));
    }
    if object_required && summary.first != b'{' {
        let detail = format!("must hold a JSON object, not {}", kind_of(summary.first));
        return Some(problem("json.object", detail));
    }
    None
}

/// The first key of the object `text` that is in `modelled`, unless its value is `[]` or `{}`
/// (kept: a repeated field cannot tell empty from none). `text` must have passed [`check`].
///
/// Read as `JSON.parse` reads it: key escapes are decoded, and of duplicate keys the last value
/// wins, in the place of the first.
pub(crate) fn modelled_key(text: &str, modelled: &[String]) -> Option<Problem> {
    let mut members = Members::new(text)?;
    // Only modelled keys are kept, so this stays as short as `modelled`.
    let mut found: Vec<(String, bool)> = Vec::new();
    while let Some((key, empty)) = members.next_member() {
        if !modelled.contains(&key) {
            continue;
        }
        match found.iter_mut().find(|(seen, _)| *seen == key) {
            Some(entry) => entry.1 = empty,
            None => found.push((key, empty)),
        }
    }
    let (key, _) = found.into_iter().find(|(_, empty)| !empty)?;
    let detail = format!("holds '{key}', a key the message models as a field");
    Some(problem("json.extra", detail))
}

/// The members of a JSON object's text, known to be valid JSON: each key, decoded, and whether
/// its value is an empty array or object.
struct Members<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Members<'a> {
    /// `None` when the value is not an object.
    fn new(text: &'a str) -> Option<Self> {
        let mut members = Self { text, at: 0 };
        members.skip_whitespace();
        (members.peek() == Some(b'{')).then(|| {
            members.at += 1;
            members
        })
    }

    fn next_member(&mut self) -> Option<(String, bool)> {
        self.skip_whitespace();
        if self.peek() == Some(b',') {
            self.at += 1;
            self.skip_whitespace();
        }
        if self.peek() != Some(b'"') {
            return None; // the closing brace
        }
        let key = self.string();
        self.skip_whitespace();
        self.at += 1; // the colon
        let start = self.at;
        self.skip_value();
        // An empty container is its brackets with only whitespace between them.
        let value: Vec<u8> = self.text.as_bytes()[start..self.at]
            .iter()
            .copied()
            .filter(|byte| !byte.is_ascii_whitespace())
            .collect();
        Some((key, value == b"[]" || value == b"{}"))
    }

    /// Skip one value, up to the `,` or `}` that ends its member.
    fn skip_value(&mut self) {
        let mut depth = 0usize;
        while let Some(byte) = self.peek() {
            match byte {
                b'"' => {
                    self.string_end();
                    continue;
                }
                b'[' | b'{' => depth += 1,
                b']' | b'}' if depth > 0 => depth -= 1,
                b',' | b'}' if depth == 0 => break, // the object's own
                _ => {}
            }
            self.at += 1;
        }
    }

    /// The string at `self.at`, decoded; a lone surrogate escape becomes U+FFFD, which no
    /// modelled key holds.
    fn string(&mut self) -> String {
        let start = self.at + 1;
        self.string_end();
        let raw = &self.text[start..self.at - 1];
        if !raw.contains('\\') {
            return raw.to_owned();
        }
        let mut units: Vec<u16> = Vec::new();
        let mut chars = raw.chars();
        while let Some(char) = chars.next() {
            let unit = match char {
                '\\' => match chars.next() {
                    Some('u') => {
                        let hex: String = chars.by_ref().take(4).collect();
                        u16::from_str_radix(&hex, 16).unwrap_or(0xfffd)
                    }
                    Some('b') => 0x08,
                    Some('f') => 0x0c,
                    Some('n') => 0x0a,
                    Some('r') => 0x0d,
                    Some('t') => 0x09,
                    Some(other) => other as u16, // '"', '\\' or '/'
                    None => break,
                },
                _ => {
                    units.extend(char.encode_utf16(&mut [0; 2]).iter());
                    continue;
                }
            };
            units.push(unit);
        }
        String::from_utf16_lossy(&units)
    }

    /// Move past the string at `self.at`, its closing quote included.
    fn string_end(&mut self) {
        self.at += 1;
        while let Some(byte) = self.peek() {
            self.at += if byte == b'\\' { 2 } else { 1 };
            if byte == b'"' {
                return;
            }
        }
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }
}

fn problem(rule_id: &'static str, detail: String) -> Problem {
    Problem { rule_id, detail }
}

fn kind_of(first: u8) -> &'static str {
    match first {
        b'[' => "an array",
        b'"' => "a string",
        b't' | b'f' => "a boolean",
        b'n' => "null",
        _ => "a number",
    }
}

/// What a scan found in a text that is JSON.
struct Summary {
    /// The first byte of the value, which tells its kind.
    first: u8,
    /// The deepest nesting of objects and arrays.
    depth: usize,
    /// The first number beyond a double's range, shortened for a message.
    out_of_range: Option<String>,
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            at: 0,
        }
    }

    fn scan(mut self) -> Result<Summary, String> {
        // Per open container: whether it is an object.
        let mut open: Vec<bool> = Vec::new();
        let mut summary = Summary {
            first: 0,
            depth: 0,
            out_of_range: None,
        };
        self.skip_whitespace();
        summary.first = self.peek().ok_or_else(|| "the text is empty".to_owned())?;
        'value: loop {
            // A value is expected here.
            self.skip_whitespace();
            match self.peek() {
                Some(opening @ (b'{' | b'[')) => {
                    self.at += 1;
                    open.push(opening == b'{');
                    summary.depth = summary.depth.max(open.len());
                    self.skip_whitespace();
                    let closing = if opening == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(closing) {
                        self.at += 1;
                        open.pop();
                    } else {
                        if opening == b'{' {
                            self.member_name()?;
                        }
                        continue 'value;
                    }
                }
                Some(b'"') => self.string()?,
                Some(b't') => self.literal("true")?,
                Some(b'f') => self.literal("false")?,
                Some(b'n') => self.literal("null")?,
                Some(b'-' | b'0'..=b'9') => {
                    let number = self.number()?;
                    if summary.out_of_range.is_none() && !fits_a_double(number) {
                        summary.out_of_range = Some(shortened(number));
                    }
                }
                _ => return Err(self.unexpected("a value")),
            }
            // A value ended: close containers until one takes another value.
            loop {
                self.skip_whitespace();
                let Some(&is_object) = open.last() else {
                    return match self.peek() {
                        None => Ok(summary),
                        Some(_) => Err(self.unexpected("the end of the text")),
                    };
                };
                let closing = if is_object { b'}' } else { b']' };
                match self.peek() {
                    Some(b',') => {
                        self.at += 1;
                        if is_object {
                            self.skip_whitespace();
                            self.member_name()?;
                        }
                        continue 'value;
                    }
                    Some(byte) if byte == closing => {
                        self.at += 1;
                        open.pop();
                    }
                    _ => return Err(self.unexpected("',' or the end of the container")),
                }
            }
        }
    }

    /// An object member's name and its colon.
    fn member_name(&mut self) -> Result<(), String> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("a member name in double quotes"));
        }
        self.string()?;
        self.skip_whitespace();
        if self.peek() != Some(b':') {
            return Err(self.unexpected("':'"));
        }
        self.at += 1;
        Ok(())
    }

    fn string(&mut self) -> Result<(), String> {
        let start = self.at;
        self.at += 1; // the opening quote
        loop {
            match self.peek() {
                None => return Err(format!("the string at byte {start} never ends")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1;
                        }
                        Some(b'u') => {
                            self.at += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|byte| byte.is_ascii_hexdigit()) {
                                    return Err(self.unexpected("four hex digits after \\u"));
                                }
                                self.at += 1;
                            }
                        }
                        _ => return Err(self.unexpected("an escape sequence")),
                    }
                }
                Some(0..=0x1f) => return Err(self.unexpected("an escaped control character")),
                Some(_) => self.at += 1,
            }
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.unexpected("a value"))
        }
    }

    /// A number as RFC 8259 writes it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Result<&'a str, String> {
        let start = self.at;
        self.eat(b'-');
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.unexpected("a digit")),
        }
        if self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            return Err(self.unexpected("no leading zero"));
        }
        if self.eat(b'.') {
            self.required_digits()?;
        }
        if self.eat(b'e') || self.eat(b'E') {
            let _ = self.eat(b'+') || self.eat(b'-');
            self.required_digits()?;
        }
        // The bytes are ASCII digits and signs, so this slice is on character boundaries.
        Ok(std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default())
    }

    fn required_digits(&mut self) -> Result<(), String> {
        if !self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            return Err(self.unexpected("a digit"));
        }
        self.digits();
        Ok(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.at += 1;
        }
        found
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn unexpected(&self, expected: &str) -> String {
        match self.peek() {
            None => format!("expected {expected} at byte {}, found the end", self.at),
            Some(byte) if byte.is_ascii_graphic() => {
                format!(
                    "expected {expected} at byte {}, found '{}'",
                    self.at, byte as char
                )
            }
            Some(byte) => format!(
                "expected {expected} at byte {}, found byte {byte:#04x}",
                self.at
            ),
        }
    }
}

/// Whether a JSON number reads as a finite double, as `JSON.parse` reads it.
fn fits_a_double(number: &str) -> bool {
    // Rust reads any number of digits correctly, rounding to the nearest double; beyond the
    // largest one it gives infinity, and below the smallest, zero.
    number.parse::<f64>().is_ok_and(f64::is_finite)
}

fn shortened(number: &str) -> String {
    const SHOWN: usize = 24;
    if number.len() <= SHOWN {
        number.to_owned()
    } else {
        format!("{}... ({} characters)", &number[..SHOWN], number.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Option<&'static str> {
        check(text, false).map(|problem| problem.rule_id)
    }

    #[test]
    fn json_parse_accepts_what_rfc_8259_allows() {
        for text in [
            " {\"a\": [1, -0, 0.5e-3, 1E+2, true, false, null, \"\\u00e9\\n\"]} ",
            "\"\\ud800\"",
            "{\"a\":1,\"a\":2}",
            "1e-999",
            "[]",
            "{}",
            "\"é\"",
        ] {
            assert_eq!(rule(text), None, "{text}");
        }
    }

    #[test]
    fn anything_else_is_a_syntax_error() {
        for text in [
            "",
            " ",
            "NaN",
            "-Infinity",
            "{'a':1}",
            "[1,]",
            "{\"a\":1,}",
            "// c\n1",
            "01",
            "-",
            "1.",
            "1e",
            "\"\u{1}\"",
            "\u{feff}{}",
            "1 2",
            "{\"a\" 1}",
            "[1 2]",
            "\"\\x\"",
            "\"\\u12\"",
            "tru",
            "{1:2}",
            "[",
            "{\"a\":",
            "\"open",
        ] {
            assert_eq!(rule(text), Some("json.syntax"), "{text:?}");
        }
    }

    #[test]
    fn numbers_must_fit_a_double() {
        assert_eq!(rule("1e999"), Some("json.number"));
        assert_eq!(rule(&"9".repeat(400)), Some("json.number"));
        assert_eq!(rule(&"9".repeat(300)), None);
    }

    #[test]
    fn depth_is_limited_and_checked_before_the_shape() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(rule(&nested(64)), None);
        assert_eq!(rule(&nested(65)), Some("json.depth"));
        let deep = check(&nested(100_000), true).expect("too deep");
        assert_eq!(deep.rule_id, "json.depth");
        assert_eq!(
            check("[1]", true).map(|problem| problem.rule_id),
            Some("json.object")
        );
        assert_eq!(check("{\"a\":[1]}", true), None);
    }

    #[test]
    fn extra_json_must_not_hold_a_modelled_key_but_may_hold_an_empty_list_there() {
        let modelled = ["api".to_owned(), "content".to_owned(), "usage".to_owned()];
        let extra = |text: &str| modelled_key(text, &modelled).map(|problem| problem.detail);
        let holds = |key: &str| {
            Some(format!(
                "holds '{key}', a key the message models as a field"
            ))
        };
        // A nested value's keys and commas are not the object's.
        let nested = r#"{"serviceTier":"priority","$order":["x","api"],"o":{"a":1,"api":2}}"#;
        assert_eq!(extra(nested), None);
        assert_eq!(extra(r#"{"s":"x,}","api":"other"}"#), holds("api"));
        // Only the first is reported; an empty list or object is kept, whitespace or not.
        assert_eq!(
            extra(r#"{"content":[ ],"usage":{"a":{}},"api":1}"#),
            holds("usage")
        );
        assert_eq!(extra(r#"{"content":{ },"usage":[]}"#), None);
        // Any other value counts, an empty string or null too.
        assert_eq!(extra(r#"{"content":""}"#), holds("content"));
        assert_eq!(extra(r#"{"content":null}"#), holds("content"));
        // Keys are read decoded; of duplicates, the last value wins in the first one's place.
        assert_eq!(extra(r#"{"\u0061pi":true}"#), holds("api"));
        assert_eq!(extra(r#"{"api":[1],"usage":2,"api":[]}"#), holds("usage"));
        assert_eq!(extra(r#"{"api":[],"usage":2,"api":[1]}"#), holds("api"));
        // Only an object holds keys.
        assert_eq!(extra(r#"["api"]"#), None);
        assert_eq!(extra("{}"), None);
    }
}
