//! ModelEvent helpers: an event's kind, terminal events, and the events that stream a message.

use crate::messages::zero_usage;
use crate::v1::assistant_content::Block;
use crate::v1::model_event::Event;
use crate::v1::{
    AssistantContent, AssistantMessage, DoneEvent, ErrorEvent, ModelEvent, StartEvent, StopReason,
    TextDeltaEvent, TextEndEvent, TextStartEvent, ThinkingDeltaEvent, ThinkingEndEvent,
    ThinkingStartEvent, ToolCallDeltaEvent, ToolCallEndEvent, ToolCallStartEvent,
};

/// The event's kind, pi's event type name (e.g. `"text_delta"`); `""` when no kind is set.
pub fn event_kind(event: &ModelEvent) -> &'static str {
    match &event.event {
        None => "",
        Some(Event::Start(_)) => "start",
        Some(Event::TextStart(_)) => "text_start",
        Some(Event::TextDelta(_)) => "text_delta",
        Some(Event::TextEnd(_)) => "text_end",
        Some(Event::ThinkingStart(_)) => "thinking_start",
        Some(Event::ThinkingDelta(_)) => "thinking_delta",
        Some(Event::ThinkingEnd(_)) => "thinking_end",
        Some(Event::ToolcallStart(_)) => "toolcall_start",
        Some(Event::ToolcallDelta(_)) => "toolcall_delta",
        Some(Event::ToolcallEnd(_)) => "toolcall_end",
        Some(Event::Done(_)) => "done",
        Some(Event::Error(_)) => "error",
    }
}

/// Whether an event ends its stream: `done` or `error`.
pub fn is_terminal(event: &ModelEvent) -> bool {
    matches!(event.event, Some(Event::Done(_) | Event::Error(_)))
}

/// The final message a terminal event carries; `None` for any other event.
pub fn terminal_message(event: &ModelEvent) -> Option<&AssistantMessage> {
    match &event.event {
        Some(Event::Done(done)) => done.message.as_ref(),
        Some(Event::Error(error)) => error.message.as_ref(),
        _ => None,
    }
}

/// The events that stream `message`: `start`, each block's start, deltas and end, then `done`
/// (or `error` for an ERROR or ABORTED message) carrying `message` itself.
///
/// Text, reasoning and tool-call arguments are cut into deltas of `delta_size` characters.
///
/// # Panics
/// If `delta_size` is 0 or a content block has no member set.
pub fn events_of(message: &AssistantMessage, delta_size: usize) -> Vec<ModelEvent> {
    assert!(delta_size > 0, "delta_size must be at least 1");
    let header = AssistantMessage {
        api: message.api.clone(),
        provider: message.provider.clone(),
        model: message.model.clone(),
        usage: Some(zero_usage()),
        timestamp: message.timestamp,
        ..Default::default()
    };
    let mut events = vec![event(Event::Start(StartEvent {
        header: Some(header),
        ..Default::default()
    }))];
    for (index, content) in message.content.iter().enumerate() {
        block_events(&mut events, index as u32, content, delta_size);
    }
    let reason = message.stop_reason;
    let message = Some(message.clone());
    let failed = [StopReason::Error as i32, StopReason::Aborted as i32];
    events.push(event(if failed.contains(&reason) {
        Event::Error(ErrorEvent {
            reason,
            message,
            ..Default::default()
        })
    } else {
        Event::Done(DoneEvent {
            reason,
            message,
            ..Default::default()
        })
    }));
    events
}

fn block_events(events: &mut Vec<ModelEvent>, index: u32, content: &AssistantContent, size: usize) {
    let content_index = index;
    match &content.block {
        Some(Block::Text(text)) => {
            events.push(event(Event::TextStart(TextStartEvent { content_index })));
            for delta in chunks(&text.text, size) {
                events.push(event(Event::TextDelta(TextDeltaEvent {
                    content_index,
                    delta,
                })));
            }
            events.push(event(Event::TextEnd(TextEndEvent {
                content_index,
                text_signature: text.text_signature.clone(),
            })));
        }
        Some(Block::Thinking(thinking)) => {
            events.push(event(Event::ThinkingStart(ThinkingStartEvent {
                content_index,
            })));
            for delta in chunks(&thinking.thinking, size) {
                events.push(event(Event::ThinkingDelta(ThinkingDeltaEvent {
                    content_index,
                    delta,
                })));
            }
            events.push(event(Event::ThinkingEnd(ThinkingEndEvent {
                content_index,
                thinking_signature: thinking.thinking_signature.clone(),
                redacted: thinking.redacted,
            })));
        }
        Some(Block::ToolCall(call)) => {
            events.push(event(Event::ToolcallStart(ToolCallStartEvent {
                content_index,
                id: call.id.clone(),
                name: call.name.clone(),
            })));
            // Absent arguments stream as no deltas.
            let raw = call
                .raw_arguments
                .as_deref()
                .or(call.arguments_json.as_deref())
                .unwrap_or_default();
            for delta in chunks(raw, size) {
                events.push(event(Event::ToolcallDelta(ToolCallDeltaEvent {
                    content_index,
                    delta,
                })));
            }
            events.push(event(Event::ToolcallEnd(ToolCallEndEvent {
                content_index,
                tool_call: Some(call.clone()),
            })));
        }
        None => panic!("content[{index}] has no block set"),
    }
}

fn event(event: Event) -> ModelEvent {
    ModelEvent {
        event: Some(event),
        ..Default::default()
    }
}

/// `text` cut into pieces of `size` characters (not bytes).
fn chunks(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size)
        .map(|piece| piece.iter().collect())
        .collect()
}
