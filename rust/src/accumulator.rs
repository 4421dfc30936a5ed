//! The accumulator: applies a stream's events, in order, to the partial message they describe.
//!
//! It follows the Python runtime rule for rule and message for message, so a partial rebuilt from
//! the wire is the partial the sender had (the stream contract in service.proto, rule 4). An event
//! that breaks a rule is refused with a [`StreamProtocolError`] naming the event's index and the
//! rule:
//!
//! - `event-kind`: an event has exactly one kind set.
//! - `start-first`: a stream opens with `start` (a call that failed before it started may consist
//!   of its terminal event alone); `start-once`: there is only one `start`.
//! - `next-index`: a `*_start` event opens the next index of the content.
//! - `block-exists`, `block-kind`, `block-open`: a delta or end event refers to a block that
//!   exists, of its own kind, and not yet ended; `tool-call-id`: a tool call ends with the id it
//!   started with.
//! - `terminal-message`: a `done` or `error` event carries a message; `terminal-reason`: `done`
//!   has STOP, LENGTH or TOOL_USE and `error` has ERROR or ABORTED, equal to the message's stop
//!   reason; `terminal-agrees`: the message has the blocks that were streamed, in number and kind;
//!   `message-valid`: the message passes [`check_assistant`].

use std::fmt;
use std::sync::Arc;

use crate::events::{event_kind, terminal_message};
use crate::v1::assistant_content::Block;
use crate::v1::model_event::Event;
use crate::v1::{
    AssistantContent, AssistantMessage, ModelEvent, StopReason, TextContent, ThinkingContent,
    ToolCall,
};
use crate::validate::{Limits, check_assistant};

const DONE_REASONS: [StopReason; 3] = [StopReason::Stop, StopReason::Length, StopReason::ToolUse];
const ERROR_REASONS: [StopReason; 2] = [StopReason::Error, StopReason::Aborted];

/// An event that does not fit the stream received so far, naming its index and the rule, e.g.
/// `event 1 (text_delta) breaks rule 'block-exists': content_index 4 refers to no block (the
/// message has 0)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamProtocolError(pub String);

impl fmt::Display for StreamProtocolError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for StreamProtocolError {}

/// Rebuilds the partial AssistantMessage of one stream, in place, event by event.
///
/// As in the Python runtime there is one live partial: each event changes it by what the event
/// adds (a delta is appended to its block's text), so a stream costs time linear in its length.
/// Events do not carry it; read it with [`Accumulator::partial`], or take a cheap shared
/// [`Accumulator::snapshot`].
#[derive(Debug, Default)]
pub struct Accumulator {
    // Shared with snapshots: the next change copies the message only while one is still held.
    partial: Arc<AssistantMessage>,
    count: usize,
    limits: Limits,
    started: bool,
    open: Vec<bool>, // per block: not yet ended
}

impl Accumulator {
    /// An accumulator checking terminal messages against `limits`.
    pub fn with_limits(limits: Limits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// The message as rebuilt from the events applied so far.
    pub fn partial(&self) -> &AssistantMessage {
        &self.partial
    }

    /// The message as rebuilt so far, shared rather than copied. It stays as it is while the
    /// stream goes on: the next event that changes the partial copies it once if the snapshot
    /// is still held, and not at all if it was dropped.
    pub fn snapshot(&self) -> Arc<AssistantMessage> {
        Arc::clone(&self.partial)
    }

    /// How many events have been applied, refused ones included.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Apply `event` to the partial, or refuse it, leaving the partial as it was.
    pub fn apply(&mut self, event: &ModelEvent) -> Result<(), StreamProtocolError> {
        let index = self.count;
        self.count += 1;
        let Some(body) = &event.event else {
            return Err(StreamProtocolError(format!(
                "event {index} breaks rule 'event-kind': no event kind is set"
            )));
        };
        let rule = Rule {
            index,
            kind: event_kind(event),
        };
        match body {
            Event::Done(done) => self.finish(&rule, done.reason, done.message.as_ref())?,
            Event::Error(error) => self.finish(&rule, error.reason, error.message.as_ref())?,
            Event::Start(start) => {
                if self.started || index > 0 {
                    let name = if self.started {
                        "start-once"
                    } else {
                        "start-first"
                    };
                    return Err(rule.broken(name, "start must be the first event"));
                }
                self.started = true;
                self.partial = Arc::new(start.header.clone().unwrap_or_default());
                self.open = vec![false; self.partial.content.len()];
            }
            _ if !self.started => {
                return Err(rule.broken("start-first", "a stream opens with start"));
            }
            block_event => self.apply_block(&rule, block_event)?,
        }
        Ok(())
    }

    /// Make the message of a terminal event built from this partial the partial, without the
    /// rules; any other event leaves it as it is.
    pub fn close(&mut self, event: &ModelEvent) {
        if let Some(message) = terminal_message(event) {
            self.partial = Arc::new(message.clone());
        }
    }

    fn apply_block(&mut self, rule: &Rule, event: &Event) -> Result<(), StreamProtocolError> {
        match event {
            Event::TextStart(start) => {
                let text = Block::Text(TextContent::default());
                self.open_block(rule, start.content_index, text)
            }
            Event::ThinkingStart(start) => {
                let thinking = Block::Thinking(ThinkingContent::default());
                self.open_block(rule, start.content_index, thinking)
            }
            Event::ToolcallStart(start) => {
                let call = ToolCall {
                    id: start.id.clone(),
                    name: start.name.clone(),
                    arguments_json: "{}".to_owned(),
                    raw_arguments: Some(String::new()),
                    ..Default::default()
                };
                self.open_block(rule, start.content_index, Block::ToolCall(call))
            }
            Event::TextDelta(delta) => {
                let block = self.block(rule, delta.content_index, Kind::Text, false)?;
                if let Block::Text(text) = block {
                    text.text.push_str(&delta.delta);
                }
                Ok(())
            }
            Event::ThinkingDelta(delta) => {
                let block = self.block(rule, delta.content_index, Kind::Thinking, false)?;
                if let Block::Thinking(thinking) = block {
                    thinking.thinking.push_str(&delta.delta);
                }
                Ok(())
            }
            Event::ToolcallDelta(delta) => {
                let block = self.block(rule, delta.content_index, Kind::ToolCall, false)?;
                if let Block::ToolCall(call) = block {
                    call.raw_arguments
                        .get_or_insert_default()
                        .push_str(&delta.delta);
                }
                Ok(())
            }
            Event::TextEnd(end) => {
                let block = self.block(rule, end.content_index, Kind::Text, true)?;
                if let (Block::Text(text), Some(signature)) = (block, &end.text_signature) {
                    text.text_signature = Some(signature.clone());
                }
                Ok(())
            }
            Event::ThinkingEnd(end) => {
                let block = self.block(rule, end.content_index, Kind::Thinking, true)?;
                if let Block::Thinking(thinking) = block {
                    if end.thinking_signature.is_some() {
                        thinking.thinking_signature = end.thinking_signature.clone();
                    }
                    if end.redacted.is_some() {
                        thinking.redacted = end.redacted;
                    }
                }
                Ok(())
            }
            Event::ToolcallEnd(end) => {
                let at = end.content_index;
                let block = self.block(rule, at, Kind::ToolCall, true)?;
                let call = end.tool_call.clone().unwrap_or_default();
                if let Block::ToolCall(started) = block
                    && call.id != started.id
                {
                    let (started, ends) = (python_repr(&started.id), python_repr(&call.id));
                    let detail = format!("tool call {at} started as {started} but ends as {ends}");
                    return Err(rule.broken("tool-call-id", &detail));
                }
                *block = Block::ToolCall(call);
                Ok(())
            }
            Event::Start(_) | Event::Done(_) | Event::Error(_) => {
                unreachable!("apply handles start and terminal events itself")
            }
        }
    }

    fn open_block(
        &mut self,
        rule: &Rule,
        at: u32,
        block: Block,
    ) -> Result<(), StreamProtocolError> {
        let next = self.partial.content.len();
        if at as usize != next {
            return Err(rule.broken(
                "next-index",
                &format!("content_index {at} must open the next block, {next}"),
            ));
        }
        Arc::make_mut(&mut self.partial)
            .content
            .push(AssistantContent { block: Some(block) });
        self.open.push(true);
        Ok(())
    }

    /// The open block of `kind` at `at`, for a delta event or, with `ending`, an end event
    /// (which closes it).
    fn block(
        &mut self,
        rule: &Rule,
        at: u32,
        kind: Kind,
        ending: bool,
    ) -> Result<&mut Block, StreamProtocolError> {
        let count = self.partial.content.len();
        let index = at as usize;
        if index >= count {
            return Err(rule.broken(
                "block-exists",
                &format!("content_index {at} refers to no block (the message has {count})"),
            ));
        }
        let block = Arc::make_mut(&mut self.partial).content[index]
            .block
            .as_mut();
        let Some(block) = block.filter(|block| Kind::of(block) == kind) else {
            let name = kind.name();
            return Err(rule.broken("block-kind", &format!("block {at} is not a {name} block")));
        };
        if !self.open[index] {
            return Err(rule.broken("block-open", &format!("block {at} has already ended")));
        }
        if ending {
            self.open[index] = false;
        }
        Ok(block)
    }

    fn finish(
        &mut self,
        rule: &Rule,
        reason: i32,
        message: Option<&AssistantMessage>,
    ) -> Result<(), StreamProtocolError> {
        let Some(message) = message else {
            return Err(rule.broken("terminal-message", "carries no message"));
        };
        let allowed: &[StopReason] = if rule.kind == "done" {
            &DONE_REASONS
        } else {
            &ERROR_REASONS
        };
        let listed = allowed.iter().any(|allowed| *allowed as i32 == reason);
        if !listed || message.stop_reason != reason {
            let names: Vec<String> = allowed.iter().map(|r| reason_name(*r as i32)).collect();
            return Err(rule.broken(
                "terminal-reason",
                &format!(
                    "reason {} with a message stopped by {}; {} takes {}, equal in both",
                    reason_name(reason),
                    reason_name(message.stop_reason),
                    rule.kind,
                    names.join(", ")
                ),
            ));
        }
        if self.started {
            let streamed = members(&self.partial);
            let last = members(message);
            if streamed != last {
                return Err(rule.broken(
                    "terminal-agrees",
                    &format!(
                        "the message has blocks {}, the stream built {}",
                        python_list(&last),
                        python_list(&streamed)
                    ),
                ));
            }
        }
        check_assistant(message, "message", &self.limits)
            .map_err(|error| rule.broken("message-valid", &error.0))?;
        self.partial = Arc::new(message.clone());
        Ok(())
    }
}

/// The event being applied, to name in an error.
struct Rule {
    index: usize,
    kind: &'static str,
}

impl Rule {
    fn broken(&self, rule: &str, detail: &str) -> StreamProtocolError {
        StreamProtocolError(format!(
            "event {} ({}) breaks rule '{rule}': {detail}",
            self.index, self.kind
        ))
    }
}

/// The kinds of block an assistant message holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

impl Kind {
    fn of(block: &Block) -> Self {
        match block {
            Block::Text(_) => Self::Text,
            Block::Thinking(_) => Self::Thinking,
            Block::ToolCall(_) => Self::ToolCall,
        }
    }

    /// The block's name in error messages.
    fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Thinking => "thinking",
            Self::ToolCall => "tool call",
        }
    }
}

/// The proto field name of each block's member, "none" where none is set.
fn members(message: &AssistantMessage) -> Vec<&'static str> {
    message
        .content
        .iter()
        .map(|content| match &content.block {
            Some(Block::Text(_)) => "text",
            Some(Block::Thinking(_)) => "thinking",
            Some(Block::ToolCall(_)) => "tool_call",
            None => "none",
        })
        .collect()
}

/// A stop reason as the Python runtime names it (`TOOL_USE`), or its number if it has no name.
fn reason_name(value: i32) -> String {
    match StopReason::try_from(value) {
        Ok(reason) => reason
            .as_str_name()
            .trim_start_matches("STOP_REASON_")
            .to_owned(),
        Err(_) => value.to_string(),
    }
}

/// A list of names as Python prints it: `['text', 'tool_call']`.
fn python_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("'{name}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// A string as Python's `repr()` prints it, so ids in messages read the same in both runtimes.
///
/// Python escapes the characters it does not consider printable: controls, separators other
/// than the space, and format characters; we cover the controls, the separators and the common
/// format characters (Rust's standard library has no full Unicode category table).
fn python_repr(value: &str) -> String {
    let quote = if value.contains('\'') && !value.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for char in value.chars() {
        match char {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            _ if char == quote => {
                out.push('\\');
                out.push(char);
            }
            _ if !is_printable(char) => {
                let code = u32::from(char);
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code < 0x10000 {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            _ => out.push(char),
        }
    }
    out.push(quote);
    out
}

fn is_printable(char: char) -> bool {
    const FORMAT: [char; 12] = [
        '\u{ad}', '\u{600}', '\u{61c}', '\u{70f}', '\u{180e}', '\u{200b}', '\u{200c}', '\u{200d}',
        '\u{200e}', '\u{200f}', '\u{feff}', '\u{2060}',
    ];
    char == ' '
        || !(char.is_control()
            || char.is_whitespace()
            || FORMAT.contains(&char)
            || ('\u{202a}'..='\u{202e}').contains(&char)
            || ('\u{2061}'..='\u{206f}').contains(&char)
            || ('\u{e000}'..='\u{f8ff}').contains(&char))
}
