//! The client against the Python reference server (`pi-proto serve`): the default script's events
//! in order with the partial rebuilt, and every failure as one final `error` event.

mod support;

use std::sync::Arc;
use std::time::Duration;

use pi_proto::v1::{
    AgentContext, AgentMessage, AssistantMessage, ModelEvent, StopReason, ToolCall,
    assistant_content,
};
use pi_proto::{
    CallOptions, EventStream, ModelClient, event_kind, terminal_message, text_of, user_message,
};
use serde_json::json;
use support::{Server, user_context, within};

const PREAMBLE: &str = "我先读取项目说明。";

async fn collect(events: &EventStream) -> Vec<ModelEvent> {
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        seen.push(event);
    }
    seen
}

fn kinds(events: &[ModelEvent]) -> Vec<&'static str> {
    events.iter().map(event_kind).collect()
}

/// Every event, with the partial as it was right after the reader took the event.
async fn collect_with_partials(
    events: &EventStream,
) -> (Vec<ModelEvent>, Vec<Arc<AssistantMessage>>) {
    let (mut seen, mut partials) = (Vec::new(), Vec::new());
    while let Some(event) = events.next().await {
        seen.push(event);
        partials.push(events.partial());
    }
    (seen, partials)
}

fn call_of(message: &AssistantMessage, index: usize) -> &ToolCall {
    match &message.content[index].block {
        Some(assistant_content::Block::ToolCall(call)) => call,
        other => panic!("block {index} is not a tool call: {other:?}"),
    }
}

fn arguments(call: &ToolCall) -> serde_json::Value {
    serde_json::from_str(&call.arguments_json).expect("arguments are JSON")
}

/// The last event is the only terminal one, and it is an `error` with this reason.
fn assert_ends_with_error(seen: &[ModelEvent], reason: StopReason) -> &AssistantMessage {
    let (last, before) = seen.split_last().expect("at least the error event");
    assert_eq!(event_kind(last), "error");
    assert!(
        before
            .iter()
            .all(|event| !matches!(event_kind(event), "done" | "error"))
    );
    let message = terminal_message(last).expect("a terminal event carries a message");
    assert_eq!(message.stop_reason, reason as i32, "{message:?}");
    message
}

#[tokio::test]
async fn the_readme_example() {
    within(async {
        let server = Server::start(&[]).await;
        let target = server.target.as_str(); // where `pi-proto serve` listens

        // README example: start
        let client = ModelClient::new(target).expect("a valid target");
        let context = AgentContext {
            messages: vec![user_message("请读取 README").into()],
            ..Default::default()
        };
        let events = client.stream(context, CallOptions::default());
        let mut kinds = Vec::new();
        while let Some(event) = events.next().await {
            // never fails: failures arrive as one final "error" event
            kinds.push(event_kind(&event)); // "start", "text_start", "text_delta", ..., "done"
        }
        let message = events.result().await; // the AssistantMessage the terminal event carries
        println!("{} {}", kinds.join(" "), text_of(&message));
        // README example: end

        assert_eq!(kinds.first(), Some(&"start"));
        assert_eq!(kinds.last(), Some(&"done"));
        assert_eq!(text_of(&message), PREAMBLE);
    })
    .await;
}

#[test]
fn the_readme_shows_the_code_of_the_readme_example() {
    support::bounded(|| {
        let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let test = std::fs::read_to_string(crate_dir.join("tests/client.rs")).unwrap();
        let readme = std::fs::read_to_string(crate_dir.join("README.md")).unwrap();
        let start = test.find("// README example: start\n").unwrap() + 25;
        let end = test.find("        // README example: end").unwrap();
        let example: String = test[start..end]
            .lines()
            .map(|line| format!("{}\n", line.strip_prefix("        ").unwrap_or(line)))
            .collect();
        assert!(
            readme.contains(&format!("```rust\n{example}```")),
            "README.md must show this code of the_readme_example:\n{example}"
        );
    });
}

#[tokio::test]
async fn the_default_script_streams_its_events_with_the_partial_rebuilt() {
    within(async {
        let server = Server::start(&[]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());
        let (seen, partials) = collect_with_partials(&events).await;

        assert_eq!(
            kinds(&seen),
            [
                "start",
                "text_start",
                "text_delta",
                "text_delta",
                "text_end",
                "toolcall_start",
                "toolcall_delta",
                "toolcall_delta",
                "toolcall_delta",
                "toolcall_end",
                "done",
            ]
        );
        assert!(seen.iter().all(|event| event.partial.is_none()));
        assert!(partials[0].content.is_empty());
        assert_eq!(partials[0].provider, "scripted");
        assert_eq!(text_of(&*partials[2]), "我先读取项目说明");
        assert_eq!(text_of(&*partials[3]), PREAMBLE);

        let mut streamed = String::new();
        for partial in &partials[6..9] {
            let call = call_of(partial, 1);
            assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "read"));
            assert_eq!(call.arguments_json, "{}");
            let raw = call
                .raw_arguments
                .as_deref()
                .expect("raw arguments while streaming");
            assert!(
                raw.len() > streamed.len() && raw.starts_with(&streamed),
                "{raw:?}"
            );
            streamed = raw.to_owned();
        }
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&streamed).unwrap(),
            json!({"path": "README.md"})
        );
        assert_eq!(
            arguments(call_of(&partials[9], 1)),
            json!({"path": "README.md"})
        );

        let message = events.result().await;
        assert_eq!(terminal_message(&seen[10]), Some(&message));
        assert_eq!(*partials[10], message);
        assert_eq!(message.stop_reason, StopReason::ToolUse as i32);
        assert_eq!(text_of(&message), PREAMBLE);
        let call = call_of(&message, 1);
        assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "read"));
        assert_eq!(arguments(call), json!({"path": "README.md"}));
    })
    .await;
}

#[tokio::test]
async fn cancelling_after_the_first_event_ends_with_aborted() {
    within(async {
        let server = Server::start(&["--delay", "0.3"]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        let first = events.next().await.expect("the first event");
        assert_eq!(event_kind(&first), "start");
        events.cancel();
        let mut seen = vec![first];
        seen.extend(collect(&events).await);

        let last = assert_ends_with_error(&seen, StopReason::Aborted);
        assert_eq!(last.error_message.as_deref(), Some("cancelled"));
        assert_eq!(last.provider, "scripted"); // what arrived before is kept
        let result = events.result().await;
        assert_eq!(result.stop_reason, StopReason::Aborted as i32);
        assert_eq!(result.error_message.as_deref(), Some("cancelled"));
    })
    .await;
}

#[tokio::test]
async fn a_server_killed_mid_stream_ends_with_error() {
    within(async {
        let mut server = Server::start(&["--delay", "0.3"]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        let first = events.next().await.expect("the first event");
        assert_eq!(event_kind(&first), "start");
        server.kill().await;
        let mut seen = vec![first];
        seen.extend(collect(&events).await);

        let last = assert_ends_with_error(&seen, StopReason::Error);
        assert!(!last.error_message.as_deref().unwrap_or_default().is_empty());
        assert_eq!(last.provider, "scripted");
        assert_eq!(events.result().await.stop_reason, StopReason::Error as i32);
    })
    .await;
}

#[tokio::test]
async fn nothing_listening_ends_with_error() {
    within(async {
        // A port that was free a moment ago and has nobody listening now.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let client = ModelClient::new(&format!("127.0.0.1:{port}")).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());
        let seen = collect(&events).await;

        assert_eq!(kinds(&seen), ["error"]);
        let message = assert_ends_with_error(&seen, StopReason::Error);
        // tonic's words for the failure, with its cause: "tcp connect error: Connection refused (os error 111)"
        let said = message.error_message.as_deref().unwrap_or_default();
        assert!(said.contains("Connection refused"), "{said}");
        assert_eq!(events.result().await, *message);
    })
    .await;
}

#[tokio::test]
async fn a_refused_request_ends_with_the_status_message_unchanged() {
    within(async {
        let server = Server::start(&[]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let mut context = user_context("hi");
        context.messages.push(AgentMessage {
            role: None,
            ..Default::default()
        });
        let events = client.stream(context, CallOptions::default());
        let seen = collect(&events).await;

        assert_eq!(kinds(&seen), ["error"]);
        let message = assert_ends_with_error(&seen, StopReason::Error);
        assert_eq!(
            message.error_message.as_deref(),
            Some(
                "StreamRequest.context.messages[1].role: exactly one of user, assistant, \
                 tool_result, custom, session_entry must be set, found none"
            )
        );
    })
    .await;
}

#[tokio::test]
async fn a_call_past_its_deadline_ends_with_error() {
    within(async {
        let server = Server::start(&["--delay", "0.3"]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let options = CallOptions {
            timeout: Some(Duration::from_millis(500)),
            ..Default::default()
        };
        let events = client.stream(user_context("hi"), options);
        let seen = collect(&events).await;

        let message = assert_ends_with_error(&seen, StopReason::Error);
        assert_eq!(message.error_message.as_deref(), Some("Deadline Exceeded"));
    })
    .await;
}

#[tokio::test]
async fn the_server_plays_the_turn_the_context_calls_for() {
    within(async {
        // The server plays turn k+1 for a context holding k assistant messages, so these answers
        // show that the whole context reached it; the script has two turns.
        let server = Server::start(&[]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let mut context = user_context("hi");
        let mut answers = Vec::new();
        for _ in 0..3 {
            let events = client.stream(context.clone(), CallOptions::default());
            let answer = events.result().await;
            context.messages.push(answer.clone().into());
            answers.push(answer);
        }

        assert_eq!(answers[0].stop_reason, StopReason::ToolUse as i32);
        assert_eq!(answers[1].stop_reason, StopReason::Stop as i32);
        assert_eq!(text_of(&answers[1]), "README 的标题就是项目名：pi-proto。");
        assert_eq!(answers[2].stop_reason, StopReason::Error as i32);
        assert_eq!(
            answers[2].error_message.as_deref(),
            Some("the script has no turn 3: it has 2 turns")
        );
    })
    .await;
}
