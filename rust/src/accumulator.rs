//! The accumulator: applies a stream's events, in order, to the partial message they describe.
//!
//! Senders and receivers share it, so a partial rebuilt from the wire is the partial the sender
//! had (the stream contract in service.proto, rule 4). An event that breaks a rule is refused
//! with a [`StreamProtocolError`]: the event's index, the rule ([`StreamRule`]) and its text id, a
//! detail, and for `terminal-valid` the violations. The rules are stated once, as the
//! `pi.ai.v1.StreamRule` enum in `proto/pi/ai/v1/event.proto`.
//!
//! While a tool call streams, its `raw_arguments` is the text so far and its `arguments_json`
//! that text completed into a JSON object ([`crate::complete_json`]), kept up to date
//! incrementally: each delta rewrites only the end of the completed text that changed, so a call
//! streamed in many deltas costs linear time. A non-terminal event that carries `usage` sets the
//! partial's usage once it is applied (a terminal event's message carries its own).
//!
//! A terminal event that carries `content_sha256` is checked against the digest of the content
//! the partial holds when it arrives ([`crate::content_sha256`], rule `terminal-digest`), so
//! every receiver notices a stream whose events were lost, repeated or changed on the way.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use crate::descriptors::POOL;
use crate::digest::content_sha256;
use crate::events::{event_kind, terminal_message};
use crate::partial_json::Completion;
use crate::v1::assistant_content::Block;
use crate::v1::model_event::Event;
use crate::v1::{
    AssistantContent, AssistantMessage, ModelEvent, StreamRule, TextContent, ThinkingContent,
    ToolCall,
};
use crate::validate::{Violation, violations};

/// The most a receiver accumulates from block events unless told otherwise: 64 MiB of UTF-8.
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;

/// An event that does not fit the stream received so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamProtocolError {
    /// The index of the offending event, from 0 at the stream's first event; for
    /// `terminal-missing`, the number of events received.
    pub event_index: usize,
    /// The rule the event breaks.
    pub rule: StreamRule,
    /// The rule's text id, e.g. `block-exists`: [`stream_rule_id`] of `rule`.
    pub rule_id: &'static str,
    /// What is wrong, in words.
    pub detail: String,
    /// For `terminal-valid`: what the terminal event breaks, with paths from the ModelEvent
    /// (e.g. `done.message.content[0].tool_call.id`). Empty for every other rule.
    pub violations: Vec<Violation>,
}

impl StreamProtocolError {
    /// A broken rule with no violations.
    pub fn new(event_index: usize, rule: StreamRule, detail: impl Into<String>) -> Self {
        Self {
            event_index,
            rule,
            rule_id: stream_rule_id(rule),
            detail: detail.into(),
            violations: Vec::new(),
        }
    }
}

impl fmt::Display for StreamProtocolError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "event {} breaks rule '{}': {}",
            self.event_index, self.rule_id, self.detail
        )
    }
}

impl std::error::Error for StreamProtocolError {}

/// The text id of a stream rule, as the corpus and error messages name it: the enum value's name
/// without `STREAM_RULE_`, in lower case with hyphens (`StreamRule::BlockOpen` is `block-open`).
pub fn stream_rule_id(rule: StreamRule) -> &'static str {
    // Derived once from the schema's names, so a new rule needs no code here.
    static IDS: LazyLock<HashMap<i32, String>> = LazyLock::new(|| {
        let rules = POOL
            .get_enum_by_name("pi.ai.v1.StreamRule")
            .expect("the schema defines pi.ai.v1.StreamRule");
        rules
            .values()
            .map(|value| {
                let name = value.name();
                let name = name.strip_prefix("STREAM_RULE_").unwrap_or(name);
                (value.number(), name.to_lowercase().replace('_', "-"))
            })
            .collect()
    });
    IDS.get(&(rule as i32)).map_or("", String::as_str)
}

/// Rebuilds the partial AssistantMessage of one stream, in place, event by event.
///
/// There is one live partial: each event changes it by what the event adds (a delta is appended
/// to its block's text), so a stream costs time linear in its length. Events do not carry it;
/// read it with [`Accumulator::partial`], or take a cheap shared [`Accumulator::snapshot`].
#[derive(Debug)]
pub struct Accumulator {
    // Shared with snapshots: the next change copies the message only while one is still held.
    partial: Arc<AssistantMessage>,
    count: usize,
    max_message_bytes: u64,
    received_bytes: u64,
    started: bool,
    open: Vec<bool>, // per block: not yet ended
    /// Per tool call still streaming, by content index: its arguments' completion, and the bytes
    /// its start and deltas counted toward the limit.
    completions: HashMap<u32, (Completion, u64)>,
}

impl Default for Accumulator {
    fn default() -> Self {
        Self::with_max_message_bytes(DEFAULT_MAX_MESSAGE_BYTES)
    }
}

impl Accumulator {
    /// An accumulator that refuses block events bringing more than `limit` bytes of UTF-8 in all
    /// (rule `size-limit`).
    pub fn with_max_message_bytes(limit: u64) -> Self {
        Self {
            partial: Arc::default(),
            count: 0,
            max_message_bytes: limit,
            received_bytes: 0,
            started: false,
            open: Vec::new(),
            completions: HashMap::new(),
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

    /// Bytes of UTF-8 counted toward the limit so far: what the block events brought.
    pub fn received_bytes(&self) -> u64 {
        self.received_bytes
    }

    /// Apply `event` to the partial, or refuse it, leaving the partial as it was.
    pub fn apply(&mut self, event: &ModelEvent) -> Result<(), StreamProtocolError> {
        let index = self.count;
        self.count += 1;
        let Some(body) = &event.event else {
            return Err(StreamProtocolError::new(
                index,
                StreamRule::EventKind,
                "no event kind is set",
            ));
        };
        let rule = Rule {
            index,
            kind: event_kind(event),
        };
        let applied = match body {
            Event::Done(done) => {
                self.finish(&rule, event, done.message.as_ref(), &done.content_sha256)
            }
            Event::Error(error) => {
                self.finish(&rule, event, error.message.as_ref(), &error.content_sha256)
            }
            Event::Start(start) => {
                if self.started || index > 0 {
                    let broken = if self.started {
                        StreamRule::StartOnce
                    } else {
                        StreamRule::StartFirst
                    };
                    return Err(rule.broken(broken, "start must be the first event"));
                }
                self.started = true;
                self.partial = Arc::new(start.header.clone().unwrap_or_default());
                self.open = vec![false; self.partial.content.len()];
                Ok(())
            }
            _ if !self.started => {
                Err(rule.broken(StreamRule::StartFirst, "a stream opens with start"))
            }
            block_event => self.apply_block(&rule, block_event),
        };
        if let (Ok(()), Some(usage)) = (&applied, &event.usage)
            && !matches!(body, Event::Done(_) | Event::Error(_))
        {
            // The sender's usage changed with this event.
            Arc::make_mut(&mut self.partial).usage = Some(usage.clone());
        }
        applied
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
                self.next_index(rule, start.content_index)?;
                let size = (start.id.len() + start.name.len()) as u64;
                self.count_bytes(rule, size)?;
                // Until the call ends, its arguments are the text so far, and its completion.
                let call = ToolCall {
                    id: start.id.clone(),
                    name: start.name.clone(),
                    arguments_json: Some("{}".to_owned()),
                    raw_arguments: Some(String::new()),
                    ..Default::default()
                };
                self.open_block(rule, start.content_index, Block::ToolCall(call))?;
                let completion = Completion::default();
                self.completions
                    .insert(start.content_index, (completion, size));
                Ok(())
            }
            Event::TextDelta(delta) => {
                self.append(rule, delta.content_index, Kind::Text, &delta.delta)
            }
            Event::ThinkingDelta(delta) => {
                self.append(rule, delta.content_index, Kind::Thinking, &delta.delta)
            }
            Event::ToolcallDelta(delta) => {
                self.append(rule, delta.content_index, Kind::ToolCall, &delta.delta)
            }
            Event::TextEnd(end) => {
                self.block(rule, end.content_index, Kind::Text, false)?;
                self.count_bytes(
                    rule,
                    end.text_signature.as_ref().map_or(0, String::len) as u64,
                )?;
                let block = self.block(rule, end.content_index, Kind::Text, true)?;
                if let (Block::Text(text), Some(signature)) = (block, &end.text_signature) {
                    text.text_signature = Some(signature.clone());
                }
                Ok(())
            }
            Event::ThinkingEnd(end) => {
                self.block(rule, end.content_index, Kind::Thinking, false)?;
                let signature = end.thinking_signature.as_ref().map_or(0, String::len);
                self.count_bytes(rule, signature as u64)?;
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
                let block = self.block(rule, at, Kind::ToolCall, false)?;
                let call = end.tool_call.clone().unwrap_or_default();
                if let Block::ToolCall(started) = block
                    && call.id != started.id
                {
                    let detail = format!(
                        "tool call {at} started with id {:?} but ends with id {:?}",
                        started.id, call.id
                    );
                    return Err(rule.broken(StreamRule::ToolCallId, detail));
                }
                // The call replaces the streamed one: only what it holds beyond that counts again.
                let counted = self.completions.get(&at).map_or(0, |(_, counted)| *counted);
                self.count_bytes(rule, call_size(&call).saturating_sub(counted))?;
                *self.block(rule, at, Kind::ToolCall, true)? = Block::ToolCall(call);
                self.completions.remove(&at);
                Ok(())
            }
            Event::Start(_) | Event::Done(_) | Event::Error(_) => {
                unreachable!("apply handles start and terminal events itself")
            }
        }
    }

    /// Refuse a start event unless it opens the next block.
    fn next_index(&self, rule: &Rule, at: u32) -> Result<(), StreamProtocolError> {
        let next = self.partial.content.len();
        if at as usize != next {
            return Err(rule.broken(
                StreamRule::NextIndex,
                format!("content_index {at} must open the next block, {next}"),
            ));
        }
        Ok(())
    }

    /// Count `size` more bytes toward the limit, or refuse the event, counting nothing.
    fn count_bytes(&mut self, rule: &Rule, size: u64) -> Result<(), StreamProtocolError> {
        let received = self.received_bytes + size;
        if received > self.max_message_bytes {
            let limit = self.max_message_bytes;
            let detail =
                format!("the block events add up to {received} bytes, above the limit of {limit}");
            return Err(rule.broken(StreamRule::SizeLimit, detail));
        }
        self.received_bytes = received;
        Ok(())
    }

    fn open_block(
        &mut self,
        rule: &Rule,
        at: u32,
        block: Block,
    ) -> Result<(), StreamProtocolError> {
        self.next_index(rule, at)?;
        Arc::make_mut(&mut self.partial)
            .content
            .push(AssistantContent { block: Some(block) });
        self.open.push(true);
        Ok(())
    }

    fn append(
        &mut self,
        rule: &Rule,
        at: u32,
        kind: Kind,
        delta: &str,
    ) -> Result<(), StreamProtocolError> {
        // Checked first, so a refused delta leaves the partial as it was.
        self.block(rule, at, kind, false)?;
        self.count_bytes(rule, delta.len() as u64)?;
        let mut completion = self.completions.remove(&at);
        match self.block(rule, at, kind, false)? {
            Block::Text(text) => text.text.push_str(delta),
            Block::Thinking(thinking) => thinking.thinking.push_str(delta),
            Block::ToolCall(call) => {
                let raw = call.raw_arguments.get_or_insert_default();
                raw.push_str(delta);
                let (completion, counted) = completion.get_or_insert_default();
                *counted += delta.len() as u64;
                completion.update(raw, call.arguments_json.get_or_insert_default());
            }
        }
        if let Some(completion) = completion {
            self.completions.insert(at, completion);
        }
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
                StreamRule::BlockExists,
                format!("content_index {at} refers to no block (the message has {count})"),
            ));
        }
        if !self.partial.content[index]
            .block
            .as_ref()
            .is_some_and(|block| Kind::of(block) == kind)
        {
            let name = kind.name();
            return Err(rule.broken(
                StreamRule::BlockKind,
                format!("block {at} is not a {name} block"),
            ));
        }
        if !self.open[index] {
            return Err(rule.broken(
                StreamRule::BlockOpen,
                format!("block {at} has already ended"),
            ));
        }
        if ending {
            self.open[index] = false;
        }
        let block = Arc::make_mut(&mut self.partial).content[index]
            .block
            .as_mut();
        Ok(block.expect("the block's kind was checked above"))
    }

    fn finish(
        &mut self,
        rule: &Rule,
        event: &ModelEvent,
        message: Option<&AssistantMessage>,
        digest: &[u8],
    ) -> Result<(), StreamProtocolError> {
        let broken = violations(event);
        if !broken.is_empty() {
            let detail = broken
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ");
            let mut error = rule.broken(StreamRule::TerminalValid, detail);
            error.violations = broken;
            return Err(error);
        }
        let message = message.expect("a valid terminal event carries a message");
        if self.started {
            let streamed = members(&self.partial);
            let last = members(message);
            if streamed != last {
                let detail = format!(
                    "the message has blocks [{}], the stream built [{}]",
                    last.join(", "),
                    streamed.join(", ")
                );
                return Err(rule.broken(StreamRule::TerminalAgrees, detail));
            }
        }
        // The partial's content before the message replaces it: what the sender's events built.
        if !digest.is_empty() && content_sha256(&self.partial.content).as_slice() != digest {
            let detail =
                "content_sha256 is not the digest of the content the stream's events built";
            return Err(rule.broken(StreamRule::TerminalDigest, detail));
        }
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
    fn broken(&self, rule: StreamRule, detail: impl Into<String>) -> StreamProtocolError {
        let detail = format!("{}: {}", self.kind, detail.into());
        StreamProtocolError::new(self.index, rule, detail)
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

    /// The block's name in error details.
    fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Thinking => "thinking",
            Self::ToolCall => "tool call",
        }
    }
}

/// The bytes of UTF-8 a tool call's strings hold.
fn call_size(call: &ToolCall) -> u64 {
    let optional = [
        &call.raw_arguments,
        &call.thought_signature,
        &call.arguments_json,
    ];
    let strings = [&call.id, &call.name, &call.extra_json];
    let size = strings.iter().map(|text| text.len()).sum::<usize>()
        + optional
            .iter()
            .filter_map(|text| text.as_ref())
            .map(String::len)
            .sum::<usize>();
    size as u64
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
