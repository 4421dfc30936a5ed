//! Shared by the test files: time bounds, message and event builders, and a fake server.
#![allow(dead_code)] // each test file uses a different part

pub mod fake_server;

use std::future::Future;
use std::sync::mpsc;
use std::time::Duration;

use pi_proto::v1::model_event::Event;
use pi_proto::v1::{
    AssistantContent, AssistantMessage, DoneEvent, ErrorEvent, ModelEvent, StopReason, TextContent,
    TextDeltaEvent, ToolCall, assistant_content,
};
use pi_proto::{AssistantMessageEventStream, event_kind};

/// The most any one test may take.
pub const LIMIT: Duration = Duration::from_secs(60);

/// Run an async test body, failing the test if it takes longer than [`LIMIT`].
pub async fn within<F: Future>(body: F) -> F::Output {
    tokio::time::timeout(LIMIT, body)
        .await
        .expect("the test took longer than its time limit")
}

/// Run a blocking test body on its own thread, failing the test if it takes longer than [`LIMIT`].
pub fn bounded<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, outcome) = mpsc::channel();
    std::thread::spawn(move || {
        done.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)))
    });
    match outcome.recv_timeout(LIMIT) {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("the test took longer than its time limit"),
    }
}

/// `future`, telling `waiting` once it has been polled and has to wait: another thread that acts
/// on the message knows the task awaiting it waits, which no sleep can tell it.
pub async fn announced<F: Future>(future: F, waiting: mpsc::Sender<()>) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut waiting = Some(waiting);
    std::future::poll_fn(move |context| {
        let poll = future.as_mut().poll(context);
        if poll.is_pending()
            && let Some(waiting) = waiting.take()
        {
            let _ = waiting.send(());
        }
        poll
    })
    .await
}

pub fn event(event: Event) -> ModelEvent {
    ModelEvent {
        event: Some(event),
        ..Default::default()
    }
}

pub fn text(text: &str) -> AssistantContent {
    AssistantContent {
        block: Some(assistant_content::Block::Text(TextContent {
            text: text.to_owned(),
            ..Default::default()
        })),
    }
}

pub fn tool_call(id: &str, name: &str, arguments_json: &str) -> AssistantContent {
    AssistantContent {
        block: Some(assistant_content::Block::ToolCall(ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments_json: Some(arguments_json.to_owned()),
            ..Default::default()
        })),
    }
}

/// An assistant message from the model `scripted-v1`.
pub fn assistant_message(
    content: Vec<AssistantContent>,
    stop_reason: StopReason,
) -> AssistantMessage {
    AssistantMessage {
        content,
        api: Some("scripted".to_owned()),
        provider: Some("scripted".to_owned()),
        model: Some("scripted-v1".to_owned()),
        usage: Some(zero_usage()),
        stop_reason: stop_reason as i32,
        timestamp: Some(1),
        ..Default::default()
    }
}

pub use pi_proto::zero_usage;

pub fn text_delta(content_index: u32, delta: &str) -> ModelEvent {
    event(Event::TextDelta(TextDeltaEvent {
        content_index,
        delta: delta.to_owned(),
    }))
}

pub fn done(message: AssistantMessage) -> ModelEvent {
    event(Event::Done(DoneEvent {
        reason: message.stop_reason,
        message: Some(message),
        ..Default::default()
    }))
}

pub fn error(message: AssistantMessage) -> ModelEvent {
    event(Event::Error(ErrorEvent {
        reason: message.stop_reason,
        message: Some(message),
        ..Default::default()
    }))
}

pub fn kinds(events: &[ModelEvent]) -> Vec<&'static str> {
    events.iter().map(event_kind).collect()
}

/// Every event of the stream, until it ends.
pub async fn collect(events: &AssistantMessageEventStream) -> Vec<ModelEvent> {
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        seen.push(event);
    }
    seen
}

/// `count` distinct deltas of 128 bytes each. Copying the whole partial per event would copy
/// 128 * count² / 2 bytes: 2.56 TB for 200,000 of them, which takes minutes.
pub fn many_deltas(count: usize) -> Vec<String> {
    let filler = "流式".repeat(19);
    (0..count)
        .map(|index| format!("delta {index:06} {filler}\n"))
        .collect()
}
