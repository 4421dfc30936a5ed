//! pi-JSON: the JSON pi writes (`role`/`type` discriminators, camelCase, `"toolUse"`), read into
//! the pi.ai.v1 messages and written back.
//!
//! The codec is lossless on what pi writes: reading and writing back gives the same text, numbers
//! read as `JSON.parse` reads them ([`load_json`](crate::load_json)) and written as
//! `JSON.stringify` writes them ([`dump_json`](crate::dump_json)). Keys the schema does not model
//! go to the object's `extra_json`, and only those, so what a message's fields say is what is
//! written: an edit is never undone by a kept value. A key the object lacked leaves its field
//! unset (the fields pi may leave out are proto3 `optional`), and the writer leaves it out again.
//! The one value a field cannot hold is an empty list or object under a key the writer leaves out
//! when empty (a context's `tools: []`): it stays in `extra_json`, written while the field is
//! empty. The writer writes each object's keys in the order pi does (the schema's, see `keys`);
//! an object whose keys came in another order lists them under `"$order"` in `extra_json`, and
//! is written in that order. Messages of roles the schema does not model become `CustomMessage`.
//! The lines of a pi session file are `session`'s.
//!
//! Bad input is a [`PiJsonError`] naming the path of the offending value, e.g.
//! `message.content[1].type`. An enum value pi does not define (a stop reason, a thinking level)
//! is bad input too.
//!
//! The values read and written are serde_json's, their strings as protobuf strings hold them: read
//! them from pi's text with `load_json` and write them with `dump_json`, which map lone surrogates
//! (see `surrogates`).

mod events;
mod from_pi;
mod keys;
mod names;
mod reader;
mod session;
mod to_pi;

use std::fmt;

pub use events::{event_from_pi, event_to_pi};
pub use from_pi::{assistant_from_pi, context_from_pi, message_from_pi};
pub use session::{
    SessionLineError, SessionWarning, entry_from_pi, entry_to_pi, session_from_pi, session_to_pi,
};
pub use to_pi::{assistant_to_pi, context_to_pi, message_to_pi};

/// pi-JSON that does not describe a valid message, or a message that pi-JSON cannot hold: the
/// path of the bad value, and what is wrong with it.
///
/// Paths are JavaScript-style from the value read, e.g. `content[1].type`, after the reader's
/// `at` when it is not empty (`message.content[1].type`); a writer names the message type and
/// field (`NestedToolCall.status`). A session file's reader adds the line
/// ([`SessionLineError`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiJsonError {
    /// Where the bad value is: `content[1].type`; empty for the value itself.
    pub path: String,
    /// What is wrong with it.
    pub detail: String,
}

impl PiJsonError {
    pub(crate) fn new(path: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            detail: detail.into(),
        }
    }
}

impl fmt::Display for PiJsonError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "the value"
        } else {
            &self.path
        };
        write!(formatter, "{path}: {}", self.detail)
    }
}

impl std::error::Error for PiJsonError {}

type Result<T> = std::result::Result<T, PiJsonError>;

/// The path of `key` inside the value at `at`.
fn at(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}
