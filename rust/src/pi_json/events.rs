//! pi's AssistantMessageEvents as `ModelEvent`s and back: with their `partial`, as pi-ai streams
//! them, or without, as pi 1.6 writes them in its json and RPC modes (and pi-messages does).

use serde_json::Value;

use super::from_pi::{assistant_block, assistant_from_pi};
use super::names::{STOP_REASONS, listed, value_of};
use super::reader::Reader;
use super::to_pi::{assistant_block_to_pi, assistant_to_pi, name, put};
use super::{PiJsonError, Result};
use crate::events::event_kind;
use crate::js_json::JsonObject;
use crate::v1::assistant_content::Block;
use crate::v1::model_event::Event;
use crate::v1::{
    AssistantContent, AssistantMessage, DoneEvent, ErrorEvent, ModelEvent, StartEvent,
    TextDeltaEvent, TextEndEvent, TextStartEvent, ThinkingDeltaEvent, ThinkingEndEvent,
    ThinkingStartEvent, ToolCall, ToolCallDeltaEvent, ToolCallEndEvent, ToolCallStartEvent,
};

/// The kinds of block an event may stream, by the start of its type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Text,
    Thinking,
    ToolCall,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Start,
    Delta,
    End,
}

/// The block family and step of a block event's type (`text_delta`), if it is one.
fn block_kind(kind: &str) -> Option<(Family, Step)> {
    let (family, step) = kind.split_once('_')?;
    let family = match family {
        "text" => Family::Text,
        "thinking" => Family::Thinking,
        "toolcall" => Family::ToolCall,
        _ => return None,
    };
    let step = match step {
        "start" => Step::Start,
        "delta" => Step::Delta,
        "end" => Step::End,
        _ => return None,
    };
    Some((family, step))
}

/// One pi-JSON AssistantMessageEvent; its `partial` becomes `ModelEvent::partial`. One without
/// a `partial` is pi 1.6's delta-only form: `toolcall_start` names the call (`id`, `toolName`),
/// and an `*_end` event carries the block's text (`content`, which a receiver rebuilds anyway)
/// and its signature (`contentSignature`).
///
/// # Errors
/// A [`PiJsonError`] naming the bad value's path; events are not stored, so a key pi's event
/// does not have is refused too.
pub fn event_from_pi(value: &Value, at: &str) -> Result<ModelEvent> {
    let mut read = Reader::new(value, at, &[])?;
    let kind = read.string("type")?;
    read.known = event_keys(&kind);
    if kind == "done" || kind == "error" {
        let reason = read.string("reason")?;
        let Some(reason) = value_of(STOP_REASONS, &reason) else {
            let detail = format!("expected one of {}, got {reason:?}", listed(STOP_REASONS));
            return Err(PiJsonError::new(read.path("reason"), detail));
        };
        let key = if kind == "done" { "message" } else { "error" };
        let message = read.child(key, assistant_from_pi)?;
        let Some(message) = message else {
            return Err(PiJsonError::new(read.path(key), "required"));
        };
        no_extra(&read)?;
        let (reason, message) = (reason.into(), Some(message));
        let event = if kind == "done" {
            Event::Done(DoneEvent {
                reason,
                message,
                ..Default::default()
            })
        } else {
            Event::Error(ErrorEvent {
                reason,
                message,
                ..Default::default()
            })
        };
        return Ok(with_event(event, None));
    }
    let Some(partial) = read.child("partial", assistant_from_pi)? else {
        return delta_only_event(read, &kind);
    };
    if kind == "start" {
        no_extra(&read)?;
        let start = Event::Start(StartEvent {
            header: Some(partial.clone()),
            ..Default::default()
        });
        return Ok(with_event(start, Some(partial)));
    }
    let Some((family, step)) = block_kind(&kind) else {
        return Err(not_an_event(&read, &kind));
    };
    let index = read.integer("contentIndex")?;
    let Some(content) = usize::try_from(index)
        .ok()
        .and_then(|at| partial.content.get(at))
    else {
        let detail = format!("{index} is not a block of the partial message");
        return Err(PiJsonError::new(read.path("contentIndex"), detail));
    };
    let block = content
        .block
        .as_ref()
        .filter(|block| family_of(block) == family);
    let Some(block) = block else {
        let detail = format!(
            "block {index} of the partial is not a {} block",
            family_name(family)
        );
        return Err(PiJsonError::new(read.path("contentIndex"), detail));
    };
    // The index of a block of the partial fits the event's field.
    let content_index = u32::try_from(index).unwrap_or(u32::MAX);
    let event = match (block, step) {
        (Block::Text(_), Step::Start) => Event::TextStart(TextStartEvent { content_index }),
        (Block::Thinking(_), Step::Start) => {
            Event::ThinkingStart(ThinkingStartEvent { content_index })
        }
        (Block::ToolCall(call), Step::Start) => Event::ToolcallStart(ToolCallStartEvent {
            content_index,
            id: call.id.clone(),
            name: call.name.clone(),
        }),
        (_, Step::Delta) => delta_event(family, content_index, read.string("delta")?),
        (Block::ToolCall(_), Step::End) => Event::ToolcallEnd(ToolCallEndEvent {
            content_index,
            tool_call: Some(tool_call_of(&read)?),
        }),
        (Block::Text(text), Step::End) => {
            same_content(&read, &text.text, index)?;
            Event::TextEnd(TextEndEvent {
                content_index,
                text_signature: text.text_signature.clone(),
            })
        }
        (Block::Thinking(thinking), Step::End) => {
            same_content(&read, &thinking.thinking, index)?;
            Event::ThinkingEnd(ThinkingEndEvent {
                content_index,
                thinking_signature: thinking.thinking_signature.clone(),
                redacted: thinking.redacted,
            })
        }
    };
    no_extra(&read)?;
    Ok(with_event(event, Some(partial)))
}

fn with_event(event: Event, partial: Option<AssistantMessage>) -> ModelEvent {
    ModelEvent {
        event: Some(event),
        partial,
        ..ModelEvent::default()
    }
}

fn family_of(block: &Block) -> Family {
    match block {
        Block::Text(_) => Family::Text,
        Block::Thinking(_) => Family::Thinking,
        Block::ToolCall(_) => Family::ToolCall,
    }
}

fn family_name(family: Family) -> &'static str {
    match family {
        Family::Text => "text",
        Family::Thinking => "thinking",
        Family::ToolCall => "toolcall",
    }
}

fn delta_event(family: Family, content_index: u32, delta: String) -> Event {
    match family {
        Family::Text => Event::TextDelta(TextDeltaEvent {
            content_index,
            delta,
        }),
        Family::Thinking => Event::ThinkingDelta(ThinkingDeltaEvent {
            content_index,
            delta,
        }),
        Family::ToolCall => Event::ToolcallDelta(ToolCallDeltaEvent {
            content_index,
            delta,
        }),
    }
}

/// A `toolcall_end`'s `toolCall`, which it must carry.
fn tool_call_of(read: &Reader<'_>) -> Result<ToolCall> {
    match read.child("toolCall", assistant_block)? {
        Some(Block::ToolCall(call)) => Ok(call),
        _ => Err(PiJsonError::new(
            read.path("toolCall"),
            "required, a toolCall block",
        )),
    }
}

/// An `*_end` event's `content` is the block the partial already holds, so the event needs no
/// field for it.
fn same_content(read: &Reader<'_>, block_text: &str, index: i64) -> Result<()> {
    if read.string("content")? == block_text {
        return Ok(());
    }
    let detail = format!("differs from block {index} of the partial, so it cannot be rebuilt");
    Err(PiJsonError::new(read.path("content"), detail))
}

fn not_an_event(read: &Reader<'_>, kind: &str) -> PiJsonError {
    PiJsonError::new(read.path("type"), format!("not a pi event type: {kind:?}"))
}

fn delta_only_event(mut read: Reader<'_>, kind: &str) -> Result<ModelEvent> {
    read.known = delta_only_keys(kind).to_vec();
    if kind == "start" {
        no_extra(&read)?;
        let start = Event::Start(StartEvent {
            header: Some(AssistantMessage::default()),
            ..Default::default()
        });
        return Ok(with_event(start, None));
    }
    let Some((family, step)) = block_kind(kind) else {
        return Err(not_an_event(&read, kind));
    };
    let index = read.integer("contentIndex")?;
    let Ok(content_index) = u32::try_from(index) else {
        let detail = format!("{index} is not a block index");
        return Err(PiJsonError::new(read.path("contentIndex"), detail));
    };
    let event = match (family, step) {
        (Family::ToolCall, Step::Start) => Event::ToolcallStart(ToolCallStartEvent {
            content_index,
            id: read.string("id")?,
            name: read.string("toolName")?,
        }),
        (Family::Text, Step::Start) => Event::TextStart(TextStartEvent { content_index }),
        (Family::Thinking, Step::Start) => {
            Event::ThinkingStart(ThinkingStartEvent { content_index })
        }
        (_, Step::Delta) => delta_event(family, content_index, read.string("delta")?),
        (Family::ToolCall, Step::End) => Event::ToolcallEnd(ToolCallEndEvent {
            content_index,
            tool_call: Some(tool_call_of(&read)?),
        }),
        (Family::Text | Family::Thinking, Step::End) => {
            // The block's text, which the receiver has rebuilt.
            read.optional_string("content")?;
            let signature = read.optional_string("contentSignature")?;
            if family == Family::Text {
                Event::TextEnd(TextEndEvent {
                    content_index,
                    text_signature: signature,
                })
            } else {
                Event::ThinkingEnd(ThinkingEndEvent {
                    content_index,
                    thinking_signature: signature,
                    redacted: read.optional_boolean("redacted")?,
                })
            }
        }
    };
    no_extra(&read)?;
    Ok(with_event(event, None))
}

/// The keys a pi event of this type has; events are not stored, so others are refused.
fn event_keys(kind: &str) -> Vec<&'static str> {
    match kind {
        "done" => vec!["type", "reason", "message"],
        "error" => vec!["type", "reason", "error"],
        "start" => vec!["type", "partial"],
        "toolcall_end" => vec!["type", "contentIndex", "partial", "toolCall"],
        _ => match kind.split_once('_').map(|(_, step)| step) {
            Some("delta") => vec!["type", "contentIndex", "partial", "delta"],
            Some("end") => vec!["type", "contentIndex", "partial", "content"],
            _ => vec!["type", "contentIndex", "partial"],
        },
    }
}

/// The keys of a delta-only event of this type.
fn delta_only_keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "text_start" | "thinking_start" => &["type", "contentIndex"],
        "toolcall_start" => &["type", "contentIndex", "id", "toolName"],
        "text_delta" | "thinking_delta" | "toolcall_delta" => &["type", "contentIndex", "delta"],
        "text_end" => &["type", "contentIndex", "content", "contentSignature"],
        "thinking_end" => &[
            "type",
            "contentIndex",
            "content",
            "contentSignature",
            "redacted",
        ],
        "toolcall_end" => &["type", "contentIndex", "toolCall"],
        _ => &["type"],
    }
}

fn no_extra(read: &Reader<'_>) -> Result<()> {
    match read
        .obj
        .keys()
        .find(|key| !read.known.contains(&key.as_str()))
    {
        Some(key) => Err(PiJsonError::new(read.at, format!("unknown field {key:?}"))),
        None => Ok(()),
    }
}

/// An event as pi's AssistantMessageEvent. A non-terminal event needs its `partial`, unless
/// `delta_only`: then it is written in the form pi 1.6 writes in its json and RPC modes, without
/// `partial` (an `*_end` event's `content` is still taken from the partial, when it has one).
///
/// # Errors
/// A [`PiJsonError`] when pi-JSON cannot hold the event: no kind set, no partial where one is
/// needed, a terminal event without its message or reason.
pub fn event_to_pi(event: &ModelEvent, delta_only: bool) -> Result<JsonObject> {
    let kind = event_kind(event);
    let mut out = JsonObject::new();
    let Some(body) = &event.event else {
        return Err(PiJsonError::new("ModelEvent", "no event kind is set"));
    };
    out.insert("type".to_owned(), kind.into());
    match body {
        // pi-JSON has no place for the digest.
        Event::Done(DoneEvent {
            reason, message, ..
        })
        | Event::Error(ErrorEvent {
            reason, message, ..
        }) => {
            let (key, at) = if kind == "done" {
                ("message", "DoneEvent")
            } else {
                ("error", "ErrorEvent")
            };
            let reason = name(STOP_REASONS, *reason, &format!("{at}.reason"))?;
            out.insert("reason".to_owned(), reason.into());
            let Some(message) = message else {
                return Err(PiJsonError::new(format!("{at}.message"), "required"));
            };
            out.insert(key.to_owned(), assistant_to_pi(message)?.into());
            return Ok(out);
        }
        _ if delta_only => return delta_only_to_pi(event, body, out),
        Event::Start(start) => {
            let Some(header) = event.partial.as_ref().or(start.header.as_ref()) else {
                return Err(PiJsonError::new("StartEvent.header", "required"));
            };
            out.insert("partial".to_owned(), assistant_to_pi(header)?.into());
            return Ok(out);
        }
        _ => {}
    }
    let Some(partial) = &event.partial else {
        let detail =
            "pi-JSON events carry the partial message; apply the event with an Accumulator";
        return Err(PiJsonError::new(kind, detail));
    };
    let index = content_index(body);
    out.insert("contentIndex".to_owned(), index.into());
    match body {
        Event::TextDelta(TextDeltaEvent { delta, .. })
        | Event::ThinkingDelta(ThinkingDeltaEvent { delta, .. })
        | Event::ToolcallDelta(ToolCallDeltaEvent { delta, .. }) => {
            out.insert("delta".to_owned(), delta.clone().into());
        }
        Event::ToolcallEnd(end) => {
            out.insert("toolCall".to_owned(), tool_call_to_pi(end)?.into());
        }
        Event::TextEnd(_) | Event::ThinkingEnd(_) => {
            let Some(text) = block_text(partial, index) else {
                let detail = format!("{index} is not a block of the partial message");
                return Err(PiJsonError::new(format!("{kind}.content_index"), detail));
            };
            out.insert("content".to_owned(), text.into());
        }
        _ => {}
    }
    out.insert("partial".to_owned(), assistant_to_pi(partial)?.into());
    Ok(out)
}

fn delta_only_to_pi(event: &ModelEvent, body: &Event, mut out: JsonObject) -> Result<JsonObject> {
    if let Event::Start(_) = body {
        return Ok(out);
    }
    let index = content_index(body);
    out.insert("contentIndex".to_owned(), index.into());
    match body {
        Event::ToolcallStart(start) => {
            out.insert("id".to_owned(), start.id.clone().into());
            out.insert("toolName".to_owned(), start.name.clone().into());
        }
        Event::TextDelta(TextDeltaEvent { delta, .. })
        | Event::ThinkingDelta(ThinkingDeltaEvent { delta, .. })
        | Event::ToolcallDelta(ToolCallDeltaEvent { delta, .. }) => {
            out.insert("delta".to_owned(), delta.clone().into());
        }
        Event::ToolcallEnd(end) => {
            out.insert("toolCall".to_owned(), tool_call_to_pi(end)?.into());
        }
        Event::TextEnd(end) => {
            put(
                &mut out,
                "content",
                event
                    .partial
                    .as_ref()
                    .and_then(|partial| block_text(partial, index)),
            );
            put(&mut out, "contentSignature", end.text_signature.clone());
        }
        Event::ThinkingEnd(end) => {
            put(
                &mut out,
                "content",
                event
                    .partial
                    .as_ref()
                    .and_then(|partial| block_text(partial, index)),
            );
            put(&mut out, "contentSignature", end.thinking_signature.clone());
            put(&mut out, "redacted", end.redacted);
        }
        _ => {}
    }
    Ok(out)
}

fn tool_call_to_pi(end: &ToolCallEndEvent) -> Result<JsonObject> {
    assistant_block_to_pi(&AssistantContent {
        block: end.tool_call.clone().map(Block::ToolCall),
    })
}

/// The block index of a block event (0 for the others, which have none).
fn content_index(body: &Event) -> u32 {
    match body {
        Event::TextStart(event) => event.content_index,
        Event::TextDelta(event) => event.content_index,
        Event::TextEnd(event) => event.content_index,
        Event::ThinkingStart(event) => event.content_index,
        Event::ThinkingDelta(event) => event.content_index,
        Event::ThinkingEnd(event) => event.content_index,
        Event::ToolcallStart(event) => event.content_index,
        Event::ToolcallDelta(event) => event.content_index,
        Event::ToolcallEnd(event) => event.content_index,
        Event::Start(_) | Event::Done(_) | Event::Error(_) => 0,
    }
}

/// The text of block `index` of the partial, as an `*_end` event's `content` carries it: a
/// text's text, a thinking's reasoning, empty for a tool call.
fn block_text(partial: &AssistantMessage, index: u32) -> Option<String> {
    let content = partial.content.get(usize::try_from(index).ok()?)?;
    Some(match &content.block {
        Some(Block::Text(text)) => text.text.clone(),
        Some(Block::Thinking(thinking)) => thinking.thinking.clone(),
        _ => String::new(),
    })
}
