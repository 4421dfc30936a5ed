//! Tool-call argument text cut short, completed into the text of a JSON object.
//!
//! While a tool call streams, the receiver's partial shows its arguments so far, as the comment on
//! `ToolCallDeltaEvent` in `proto/pi/ai/v1/event.proto` says: the text up to the last point where
//! it is whole, then an unfinished string closed (an escape cut short dropped), a number cut to its
//! longest prefix that is a number, a cut-short `true`, `false` or `null` completed, a member or
//! element that has not reached its value dropped, and the closers of the open containers. Text
//! that cannot complete into an object (an error before its end, or another kind of value) gives
//! `"{}"`.
//!
//! [`Completion`] reads the text as it grows, from where it stopped, keeping only what the
//! completion needs (the open containers and the token being read), and rewrites the completed
//! text in place: it keeps what it showed before up to where the new completion differs, so a
//! call whose arguments arrive in many deltas costs time linear in their length.

/// The completion of text that cannot complete into a JSON object.
const EMPTY: &str = "{}";
const LITERALS: [&str; 3] = ["true", "false", "null"];

/// `text`, the argument text of a tool call received so far, completed into the text of a JSON
/// object (see the module's description); `"{}"` when it cannot be.
pub fn complete_json(text: &str) -> String {
    let mut completed = String::new();
    Completion::default().update(text, &mut completed);
    completed
}

/// The former name of [`complete_json`].
#[deprecated(note = "renamed complete_json, the name every runtime gives it")]
pub fn complete_arguments(text: &str) -> String {
    complete_json(text)
}

/// The completion of one tool call's argument text, kept up to date as the text grows.
#[derive(Debug, Clone, Default)]
pub(crate) struct Completion {
    /// How many bytes of the text have been read.
    read: usize,
    /// The open objects and arrays, outermost first.
    stack: Vec<Container>,
    token: Token,
    token_start: usize,
    /// In a number: where its longest prefix that is a number ends.
    number_end: usize,
    /// In a string: 0, or how many characters of an escape have been read (1 for the backslash,
    /// 2 to 5 for `\u` and its hex digits so far), and where the escape starts.
    escape: u8,
    escape_start: usize,
    /// The top value has begun; it has ended.
    started: bool,
    finished: bool,
    /// The text is not the start of one JSON object: no more text can change that.
    broken: bool,
    /// The completion last written starts with this many bytes of the text itself.
    shown: usize,
}

#[derive(Debug, Clone, Copy)]
struct Container {
    closer: u8,
    expect: Expect,
    /// The text up to here is whole: a member or element that is not finished is cut here.
    keep: usize,
}

/// What an open container waits for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    KeyOrEnd,
    Key,
    Colon,
    Value,
    ValueOrEnd,
    CommaOrEnd,
}

/// The token being read, if it is not finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Token {
    #[default]
    None,
    Key,
    String,
    Number(Number),
    Literal,
}

/// Where a number stands in `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Number {
    Minus,
    Zero,
    Integer,
    Point,
    Fraction,
    Exponent,
    ExponentSign,
    ExponentDigits,
}

impl Number {
    fn starting(byte: u8) -> Self {
        match byte {
            b'-' => Self::Minus,
            b'0' => Self::Zero,
            _ => Self::Integer,
        }
    }

    /// The state after `byte`; `None` when no text can make the number whole any more.
    fn after(self, byte: u8) -> Option<Self> {
        use Number::{
            Exponent, ExponentDigits, ExponentSign, Fraction, Integer, Minus, Point, Zero,
        };
        let digit = byte.is_ascii_digit();
        Some(match (self, byte) {
            (Minus, b'0') => Zero,
            (Minus, b'1'..=b'9') | (Integer, b'0'..=b'9') => Integer,
            (Zero | Integer, b'.') => Point,
            (Point | Fraction, _) if digit => Fraction,
            (Zero | Integer | Fraction, b'e' | b'E') => Exponent,
            (Exponent, b'+' | b'-') => ExponentSign,
            (Exponent | ExponentSign | ExponentDigits, _) if digit => ExponentDigits,
            _ => return None,
        })
    }

    fn is_whole(self) -> bool {
        matches!(
            self,
            Self::Zero | Self::Integer | Self::Fraction | Self::ExponentDigits
        )
    }
}

impl Completion {
    /// Read `text`, the text so far (what was read before, and more), and make `completed` its
    /// completion. `completed` must hold what the previous update wrote (empty, or `"{}"`, before
    /// the first): only the part that changes is rewritten. Returns how many bytes were written.
    pub(crate) fn update(&mut self, text: &str, completed: &mut String) -> usize {
        if !self.broken {
            self.read(text.as_bytes());
        }
        let Some((end, tail)) = self.cut(text) else {
            completed.clear();
            completed.push_str(EMPTY);
            self.shown = 0;
            return EMPTY.len();
        };
        // Both are cut points of the text, so on a character boundary.
        let same = self.shown.min(end);
        completed.truncate(same);
        completed.push_str(&text[same..end]);
        completed.push_str(tail);
        completed.extend(self.stack.iter().rev().map(|open| char::from(open.closer)));
        self.shown = end;
        completed.len() - same
    }

    /// The completion as how much of the text it keeps and what follows before the closers;
    /// `None` for `"{}"`.
    fn cut(&self, text: &str) -> Option<(usize, &'static str)> {
        if self.broken || !self.started {
            return None;
        }
        if self.finished {
            return Some((text.len(), ""));
        }
        let keep = self.stack.last()?.keep;
        Some(match self.token {
            Token::String if self.escape > 0 => (self.escape_start, "\""),
            Token::String => (text.len(), "\""),
            Token::Number(_) if self.number_end > self.token_start => (self.number_end, ""),
            Token::Literal => {
                let word = &text[self.token_start..];
                let literal = LITERALS.iter().find(|literal| literal.starts_with(word))?;
                (text.len(), &literal[word.len()..])
            }
            Token::Number(_) | Token::Key | Token::None => (keep, ""),
        })
    }

    fn read(&mut self, text: &[u8]) {
        let mut at = self.read;
        while at < text.len() && !self.broken {
            at = self.step(text, at);
        }
        self.read = at;
    }

    /// Read from `at`; return where to read next.
    fn step(&mut self, text: &[u8], at: usize) -> usize {
        let byte = text[at];
        match self.token {
            Token::Key | Token::String => return self.in_string(byte, at),
            Token::Number(number) => {
                if matches!(byte, b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E') {
                    match number.after(byte) {
                        Some(next) => {
                            self.token = Token::Number(next);
                            if next.is_whole() {
                                self.number_end = at + 1;
                            }
                        }
                        None => self.broken = true,
                    }
                    return at + 1;
                }
                if number.is_whole() {
                    self.value_ended(at);
                } else {
                    self.broken = true;
                }
                return at; // the byte that ended the number is read as what comes next
            }
            Token::Literal => {
                let word = &text[self.token_start..=at];
                match LITERALS
                    .iter()
                    .find(|literal| literal.as_bytes().starts_with(word))
                {
                    None => self.broken = true,
                    Some(literal) if literal.len() == word.len() => self.value_ended(at + 1),
                    Some(_) => {}
                }
                return at + 1;
            }
            Token::None => {}
        }
        if matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
            return at + 1;
        }
        if self.finished {
            self.broken = true; // something after the object
            return at;
        }
        self.between_tokens(byte, at);
        at + 1
    }

    fn in_string(&mut self, byte: u8, at: usize) -> usize {
        match self.escape {
            0 => match byte {
                b'\\' => (self.escape, self.escape_start) = (1, at),
                b'"' if self.token == Token::Key => {
                    self.token = Token::None;
                    if let Some(inner) = self.stack.last_mut() {
                        inner.expect = Expect::Colon;
                    }
                }
                b'"' => self.value_ended(at + 1),
                0..0x20 => self.broken = true, // a raw control character
                _ => {}
            },
            1 => {
                if !matches!(
                    byte,
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u'
                ) {
                    self.broken = true;
                }
                self.escape = if byte == b'u' { 2 } else { 0 };
            }
            count if byte.is_ascii_hexdigit() => {
                self.escape = if count == 5 { 0 } else { count + 1 }
            }
            _ => self.broken = true,
        }
        at + 1
    }

    fn between_tokens(&mut self, byte: u8, at: usize) {
        let Some(inner) = self.stack.last_mut() else {
            return self.value_starts(byte, at);
        };
        match (inner.expect, byte) {
            (Expect::KeyOrEnd | Expect::Key, b'"') => {
                (self.token, self.token_start) = (Token::Key, at);
            }
            (Expect::KeyOrEnd, b'}') | (Expect::ValueOrEnd, b']') => self.close(at),
            (Expect::Colon, b':') => inner.expect = Expect::Value,
            (Expect::Value | Expect::ValueOrEnd, _) => self.value_starts(byte, at),
            (Expect::CommaOrEnd, b',') => {
                inner.expect = if inner.closer == b'}' {
                    Expect::Key
                } else {
                    Expect::Value
                };
            }
            (Expect::CommaOrEnd, _) if byte == inner.closer => self.close(at),
            _ => self.broken = true,
        }
    }

    fn value_starts(&mut self, byte: u8, at: usize) {
        if !self.started {
            self.started = true;
            if byte != b'{' {
                self.broken = true; // only an object completes into arguments
                return;
            }
        }
        let container = |closer, expect| Container {
            closer,
            expect,
            keep: at + 1,
        };
        match byte {
            b'{' => self.stack.push(container(b'}', Expect::KeyOrEnd)),
            b'[' => self.stack.push(container(b']', Expect::ValueOrEnd)),
            b'"' => (self.token, self.token_start) = (Token::String, at),
            b'-' | b'0'..=b'9' => {
                let number = Number::starting(byte);
                (self.token, self.token_start) = (Token::Number(number), at);
                self.number_end = if number.is_whole() { at + 1 } else { at };
            }
            b't' | b'f' | b'n' => (self.token, self.token_start) = (Token::Literal, at),
            _ => self.broken = true,
        }
    }

    fn value_ended(&mut self, end: usize) {
        self.token = Token::None;
        if let Some(inner) = self.stack.last_mut() {
            (inner.expect, inner.keep) = (Expect::CommaOrEnd, end);
        }
    }

    fn close(&mut self, at: usize) {
        self.stack.pop();
        if self.stack.is_empty() {
            self.finished = true;
        } else {
            self.value_ended(at + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The completion of `text` fed in pieces of `size` bytes, through one `Completion`.
    fn in_pieces(text: &str, size: usize) -> String {
        let (mut completion, mut completed, mut end) = (Completion::default(), String::new(), 0);
        loop {
            completion.update(&text[..end], &mut completed);
            if end == text.len() {
                return completed;
            }
            end = (end + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
        }
    }

    #[test]
    fn text_cut_short_completes_into_an_object() {
        let cases = [
            (r#"{"path": "REA"#, r#"{"path": "REA"}"#),
            (r#"{"a": 1, "b"#, r#"{"a": 1}"#),
            (r#"{"a": "x\u00"#, r#"{"a": "x"}"#),
            (r#"{"a": 12."#, r#"{"a": 12}"#),
            (r#"{"a": 1.5e-"#, r#"{"a": 1.5}"#),
            (r#"{"a": -"#, "{}"),
            (r#"{"a": [tr"#, r#"{"a": [true]}"#),
            (r#"{"a": [] ,"#, r#"{"a": []}"#),
            (
                r#"{"a": {"b": [1, {"c": "d"#,
                r#"{"a": {"b": [1, {"c": "d"}]}}"#,
            ),
            ("{ \"a\" : 1 } \n", "{ \"a\" : 1 } \n"),
        ];
        for (text, completed) in cases {
            assert_eq!(complete_json(text), completed, "{text}");
            assert_eq!(in_pieces(text, 1), completed, "{text}, a byte at a time");
        }
    }

    #[test]
    fn text_that_is_no_object_completes_as_an_empty_one() {
        for text in [
            "",
            " ",
            "[1, 2]",
            "\"str",
            "{\"a\": 01",
            "{\"a\": NaN",
            "{\"a\": tx",
            "{}{}",
            "{\"a\": \"x\ty",
            "{\"a\": \"b\"}x",
        ] {
            assert_eq!(complete_json(text), "{}", "{text:?}");
            assert_eq!(in_pieces(text, 1), "{}", "{text:?}, a byte at a time");
        }
    }

    #[test]
    fn each_update_writes_what_changed_not_the_text_so_far() {
        // Rewriting the whole completion at every delta costs time quadratic in the arguments.
        let text = format!(
            r#"{{"path": "a.txt", "content": "{}", "n": [1.5, true]}}"#,
            "line\\n".repeat(20_000)
        );
        let (mut completion, mut completed, mut written) =
            (Completion::default(), String::new(), 0);
        for end in (0..=text.len()).step_by(20).chain([text.len()]) {
            written += completion.update(&text[..end], &mut completed);
        }
        assert_eq!(completed, text);
        // Each update writes its new text, the closing quote and the closers: a few bytes each.
        let updates = text.len() / 20 + 2;
        assert!(
            written <= text.len() + 8 * updates,
            "{written} bytes written for {} received",
            text.len()
        );
    }

    #[test]
    fn the_completion_is_rewritten_from_where_it_changes() {
        // A piece that ends a number after a cut-short literal, then opens a container.
        let text = r#"{"é": [tru"#.to_owned() + r#"e, 12.5e3, {"k": "v\"w"}], "n": nul"#;
        for size in 1..8 {
            assert_eq!(
                in_pieces(&text, size),
                r#"{"é": [true, 12.5e3, {"k": "v\"w"}], "n": null}"#
            );
        }
    }
}
