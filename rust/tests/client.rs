//! The client against a fake server in this process: the events in order with the partial
//! rebuilt, the request and its defaults, every failure as one final `error` event with a
//! structured failure, batches (StreamBatched) and the fallback to Stream, numbered streams
//! resumed when cut off and cancelled on the server, and the model catalog.

mod support;

use std::sync::Arc;
use std::time::Duration;

use pi_proto::v1::model_event::Event;
use pi_proto::v1::{
    AgentContext, AssistantMessage, CancelRequest, GetModelRequest, ListModelsRequest, Model,
    ModelCost, ModelEvent, ResumeRequest, StopReason, StreamRule, assistant_content,
};
use pi_proto::{
    CallError, CallOptions, MAX_RESUMES, ModelClient, RESUME_BACKOFF, StreamFailure,
    content_sha256, event_kind, events_of, terminal_message, text_of, user_message,
};
use prost::Message;
use support::fake_server::{Action, FakeServer, batch_of, grpc_timeout};
use support::{LIMIT, announced, assistant_message, collect, kinds, text, tool_call, within};
use tokio::sync::Notify;

const PREAMBLE: &str = "我先读取项目说明。";

/// The seed's turn: a sentence, then a `read` call, cut into deltas of 5 characters.
fn seed_turn() -> Vec<ModelEvent> {
    let message = assistant_message(
        vec![
            text(PREAMBLE),
            tool_call("call_1", "read", r#"{"path":"README.md"}"#),
        ],
        StopReason::ToolUse,
    );
    events_of(&message, 5)
}

fn playing(events: &[ModelEvent]) -> Vec<Action> {
    events.iter().map(Action::event).collect()
}

fn user_context(text: &str) -> AgentContext {
    AgentContext {
        messages: vec![user_message(text).into()],
        ..Default::default()
    }
}

#[tokio::test]
async fn the_readme_example() {
    within(async {
        let server = FakeServer::start(playing(&seed_turn())).await;
        let target = server.target.as_str();

        // README example: begin
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
        let start = test.find("// README example: begin\n").unwrap() + 25;
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

#[test]
fn the_readme_shows_the_install_lines_the_consumer_test_runs() {
    support::bounded(|| {
        let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let script = std::fs::read_to_string(crate_dir.join("consumer.sh")).unwrap();
        let readme = std::fs::read_to_string(crate_dir.join("README.md")).unwrap();
        let start = script.find("\n# README install: begin\n").unwrap() + 25;
        let end = script.find("\n# README install: end\n").unwrap() + 1;
        let lines = &script[start..end];
        assert!(
            readme.contains(&format!("```bash\n{lines}```")),
            "README.md must show the install lines of consumer.sh:\n{lines}"
        );
    });
}

const STREAM: &str = "/pi.ai.v1.ModelService/Stream";
const BATCHED: &str = "/pi.ai.v1.ModelService/StreamBatched";

/// The methods the server was called with, in order.
fn paths(server: &FakeServer) -> Vec<String> {
    server
        .received()
        .into_iter()
        .map(|call| call.path)
        .collect()
}

// The fake server sends all 12 events of the seed turn in one StreamBatchedResponse: each still
// arrives with the partial as of that event, not as of the end of its batch.
#[tokio::test]
async fn every_event_arrives_with_the_partial_rebuilt_after_it() {
    within(async {
        let sent = seed_turn();
        let server = FakeServer::start(playing(&sent)).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let options = CallOptions {
            provider: "scripted".to_owned(),
            model: "scripted-v1".to_owned(),
            metadata: vec![("x-trace".to_owned(), "42".to_owned())],
            ..Default::default()
        };
        let events = client.stream(user_context("hi"), options);
        let (mut seen, mut partials) = (Vec::new(), Vec::new());
        while let Some(event) = events.next().await {
            seen.push(event);
            partials.push(events.partial());
        }

        assert_eq!(seen, sent);
        assert_eq!(events.failure(), None);
        let call_at = |partial: &AssistantMessage| match &partial.content[1].block {
            Some(assistant_content::Block::ToolCall(call)) => call.clone(),
            other => panic!("not a tool call: {other:?}"),
        };
        // toolcall_start, then deltas of `{"path":"README.md"}`: the raw text so far, and the
        // arguments it completes into.
        let streaming: Vec<_> = partials[5..10]
            .iter()
            .map(|partial| call_at(partial))
            .collect();
        let raw: Vec<_> = streaming
            .iter()
            .map(|call| call.raw_arguments.clone().unwrap())
            .collect();
        assert_eq!(
            raw,
            [
                "",
                r#"{"pat"#,
                r#"{"path":"R"#,
                r#"{"path":"README"#,
                r#"{"path":"README.md"}"#
            ]
        );
        let arguments: Vec<_> = streaming
            .iter()
            .map(|call| call.arguments_json.as_deref().unwrap_or_default())
            .collect();
        assert_eq!(
            arguments,
            [
                "{}",
                "{}",
                r#"{"path":"R"}"#,
                r#"{"path":"README"}"#,
                r#"{"path":"README.md"}"#
            ]
        );
        assert_eq!(
            call_at(&partials[10]).arguments_json.as_deref(),
            Some(r#"{"path":"README.md"}"#)
        );
        assert_eq!(*partials[11], *terminal_message(&sent[11]).unwrap());

        let received = server.received();
        assert_eq!(received.len(), 1);
        assert_eq!(received[0].path, BATCHED);
        assert_eq!(received[0].request.provider, "scripted");
        assert_eq!(received[0].request.model, "scripted-v1");
        let context = received[0].request.context.clone().expect("a context");
        assert_eq!(context.messages.len(), 1);
        assert_eq!(text_of(&context.messages[0]), "hi");
        assert_eq!(received[0].headers["x-trace"], "42");
        // A call without a deadline of its own gets the default: 15 minutes.
        assert_eq!(received[0].headers["grpc-timeout"], "900000m");
    })
    .await;
}

#[tokio::test]
async fn a_status_before_any_event_is_one_error_event_with_its_code() {
    within(async {
        let server = FakeServer::start(vec![Action::Status(14, "the model is down")]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        assert_eq!(kinds(&collect(&events).await), ["error"]);
        let result = events.result().await;
        assert_eq!(result.stop_reason, StopReason::Error as i32);
        assert_eq!(result.error_message.as_deref(), Some("the model is down"));
        let expected = StreamFailure::Status {
            code: "UNAVAILABLE",
            message: "the model is down".to_owned(),
        };
        assert_eq!(events.failure(), Some(expected));
    })
    .await;
}

#[tokio::test]
async fn a_status_mid_stream_keeps_what_arrived() {
    within(async {
        let mut script = playing(&seed_turn()[..3]);
        script.push(Action::Status(13, "boom"));
        let server = FakeServer::start(script).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        let seen = collect(&events).await;
        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        assert_eq!(text_of(&events.result().await), "我先读取项");
        assert!(matches!(
            events.failure(),
            Some(StreamFailure::Status {
                code: "INTERNAL",
                ..
            })
        ));
    })
    .await;
}

#[tokio::test]
async fn a_call_past_its_deadline_ends_with_deadline_exceeded() {
    within(async {
        // A server that sends nothing until the client goes away: whenever the deadline passes,
        // nothing came before it.
        let server = FakeServer::start(vec![Action::Hang]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let options = CallOptions {
            timeout: Some(Duration::from_millis(300)),
            ..Default::default()
        };
        let events = client.stream(user_context("hi"), options);

        assert_eq!(kinds(&collect(&events).await), ["error"]);
        let failure = events.failure();
        assert!(
            matches!(
                failure,
                Some(StreamFailure::Status {
                    code: "DEADLINE_EXCEEDED",
                    ..
                })
            ),
            "{failure:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn cancel_from_another_thread_while_the_consumer_waits_ends_with_aborted() {
    within(async {
        let mut script = playing(&seed_turn()[..3]);
        script.push(Action::Hang);
        let server = FakeServer::start(script).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = Arc::new(client.stream(user_context("hi"), CallOptions::default()));
        let (waiting, told) = std::sync::mpsc::channel();
        let canceller = {
            let events = events.clone();
            std::thread::spawn(move || {
                told.recv().expect("the consumer waits");
                events.cancel();
            })
        };

        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(events.next().await.expect("an event"));
        }
        // The thread cancels once the consumer waits for the fourth event.
        seen.extend(announced(events.next(), waiting).await);
        seen.extend(collect(&events).await);
        canceller.join().unwrap();
        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        let result = events.result().await;
        assert_eq!(result.stop_reason, StopReason::Aborted as i32);
        assert_eq!(text_of(&result), "我先读取项");
        assert_eq!(events.failure(), None);
    })
    .await;
}

// In StreamBatched the bad bytes are the third event of a batch: the two in front of them are
// applied, and the failure names the event's own index, not the message's.
#[tokio::test]
async fn bytes_that_are_not_an_event_end_the_stream_with_rule_event_decode() {
    within(async {
        let mut script = playing(&seed_turn()[..2]);
        script.push(Action::Send(vec![0xff, 0xff, 0xff]));
        script.extend(playing(&seed_turn()[2..]));
        let server = FakeServer::start(script).await;
        for batched in [true, false] {
            let client = ModelClient::new(&server.target)
                .expect("a valid target")
                .with_batched(batched);
            let events = client.stream(user_context("hi"), CallOptions::default());

            assert_eq!(
                kinds(&collect(&events).await),
                ["start", "text_start", "error"]
            );
            let Some(StreamFailure::Rule(broken)) = events.failure() else {
                panic!("a broken rule, not {:?}", events.failure());
            };
            assert_eq!((broken.event_index, broken.rule_id), (2, "event-decode"));
            assert_eq!(broken.rule, StreamRule::EventDecode);
            assert_eq!(
                events.result().await.content.len(),
                1,
                "the text block started"
            );
        }
        assert_eq!(paths(&server), [BATCHED, STREAM]);
    })
    .await;
}

// A batch that does not parse as a StreamBatchedView loses all its events, even those in front of
// the fault: it fails at the index its first event would have had, counted across batches.
#[tokio::test]
async fn a_batch_cut_short_fails_as_a_whole_at_the_index_of_its_first_event() {
    within(async {
        let encoded: Vec<Vec<u8>> = seed_turn().iter().map(Message::encode_to_vec).collect();
        // Two events, then a batch of one event and a field that claims 32 bytes and holds 1.
        let mut cut = batch_of(&encoded[2..3]);
        cut.extend([0x0a, 0x20, 0x01]);
        let script = vec![Action::Raw(batch_of(&encoded[..2])), Action::Raw(cut)];
        let server = FakeServer::start(script).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        assert_eq!(
            kinds(&collect(&events).await),
            ["start", "text_start", "error"]
        );
        let Some(StreamFailure::Rule(broken)) = events.failure() else {
            panic!("a broken rule, not {:?}", events.failure());
        };
        assert_eq!(
            (broken.event_index, broken.rule),
            (2, StreamRule::EventDecode)
        );
        assert_eq!(broken.rule_id, "event-decode");
        // The generated parser of the view names where the batch is cut short.
        assert!(
            broken.detail.contains("StreamBatchedView.events"),
            "{broken}"
        );
        assert_eq!(text_of(&events.result().await), "");
    })
    .await;
}

#[tokio::test]
async fn fields_of_a_batch_other_than_its_events_are_skipped() {
    within(async {
        let sent = seed_turn();
        let encoded: Vec<Vec<u8>> = sent.iter().map(Message::encode_to_vec).collect();
        let mut batch = batch_of(&encoded[..6]);
        batch.extend([0x10, 0x96, 0x01]); // field 2, varint
        batch.extend([0x1a, 0x02, 0xff, 0xff]); // field 3, length-delimited
        batch.extend([0x25, 1, 2, 3, 4]); // field 4, fixed32
        batch.extend(batch_of(&encoded[6..]));
        let server = FakeServer::start(vec![Action::Raw(batch)]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        assert_eq!(collect(&events).await, sent);
        assert_eq!(events.failure(), None);
    })
    .await;
}

#[tokio::test]
async fn a_server_without_stream_batched_is_read_through_stream() {
    within(async {
        let sent = seed_turn();
        let server = FakeServer::without_batched(playing(&sent)).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        assert_eq!(collect(&events).await, sent);
        assert_eq!(events.failure(), None);
        let received = server.received();
        assert_eq!(paths(&server), [BATCHED, STREAM]);
        assert_eq!(received[0].body, received[1].body, "the same request");
        // Within the same deadline: Stream is told what is left of it.
        let first = grpc_timeout(&received[0].headers["grpc-timeout"]);
        let second = grpc_timeout(&received[1].headers["grpc-timeout"]);
        assert_eq!(first, Duration::from_secs(900));
        assert!(second < first && second > first - LIMIT, "{second:?}");
    })
    .await;
}

#[tokio::test]
async fn unimplemented_before_any_event_falls_back_once() {
    within(async {
        // Every call ends UNIMPLEMENTED, after its response headers: StreamBatched, then Stream.
        let server = FakeServer::start(vec![Action::Status(12, "not here")]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        assert_eq!(kinds(&collect(&events).await), ["error"]);
        let expected = StreamFailure::Status {
            code: "UNIMPLEMENTED",
            message: "not here".to_owned(),
        };
        assert_eq!(events.failure(), Some(expected));
        assert_eq!(paths(&server), [BATCHED, STREAM]);
    })
    .await;
}

#[tokio::test]
async fn unimplemented_after_an_event_ends_the_stream_without_a_fallback() {
    within(async {
        let mut script = playing(&seed_turn()[..1]);
        script.push(Action::Status(12, "gone"));
        let server = FakeServer::start(script).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        assert_eq!(kinds(&collect(&events).await), ["start", "error"]);
        assert!(matches!(
            events.failure(),
            Some(StreamFailure::Status {
                code: "UNIMPLEMENTED",
                ..
            })
        ));
        assert_eq!(paths(&server), [BATCHED]);
    })
    .await;
}

#[tokio::test]
async fn with_batched_false_calls_stream_only_and_yields_the_same() {
    within(async {
        let sent = seed_turn();
        let server = FakeServer::start(playing(&sent)).await;
        let mut partials = Vec::new();
        for batched in [true, false] {
            let client = ModelClient::new(&server.target)
                .expect("a valid target")
                .with_batched(batched);
            let events = client.stream(user_context("hi"), CallOptions::default());
            let mut seen = Vec::new();
            while let Some(event) = events.next().await {
                seen.push((event, (*events.partial()).clone()));
            }
            partials.push(seen);
        }

        assert_eq!(partials[0], partials[1]);
        assert_eq!(partials[1].len(), sent.len());
        assert_eq!(paths(&server), [BATCHED, STREAM]);
    })
    .await;
}

#[tokio::test]
async fn deltas_beyond_the_clients_limit_end_the_stream_with_rule_size_limit() {
    within(async {
        let server = FakeServer::start(playing(&seed_turn())).await;
        let client = ModelClient::new(&server.target)
            .expect("a valid target")
            .with_max_message_bytes(20);
        let events = client.stream(user_context("hi"), CallOptions::default());

        // The first delta is 15 bytes of UTF-8, the second 12 more.
        assert_eq!(
            kinds(&collect(&events).await),
            ["start", "text_start", "text_delta", "error"]
        );
        let Some(StreamFailure::Rule(broken)) = events.failure() else {
            panic!("a broken rule, not {:?}", events.failure());
        };
        assert_eq!((broken.event_index, broken.rule_id), (3, "size-limit"));
    })
    .await;
}

#[tokio::test]
async fn nothing_listening_is_an_unavailable_error_event() {
    within(async {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let target = listener.local_addr().unwrap().to_string();
        drop(listener);
        let client = ModelClient::new(&target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        assert_eq!(kinds(&collect(&events).await), ["error"]);
        let failure = events.failure();
        assert!(
            matches!(
                failure,
                Some(StreamFailure::Status {
                    code: "UNAVAILABLE",
                    ..
                })
            ),
            "{failure:?}"
        );
    })
    .await;
}

// tonic reports a connection lost mid-call as UNKNOWN; it is UNAVAILABLE, as a transport failure
// is everywhere else (and the status to retry on).
#[tokio::test]
async fn a_server_gone_mid_stream_is_an_unavailable_error_event() {
    within(async {
        let go = Arc::new(Notify::new());
        let mut script = playing(&seed_turn()[..3]);
        script.push(Action::Wait(go.clone()));
        script.push(Action::Hangup);
        let server = FakeServer::start(script).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        // The server hangs up once the three events have arrived.
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(events.next().await.expect("an event"));
        }
        go.notify_one();
        seen.extend(collect(&events).await);
        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        let result = events.result().await;
        assert_eq!(result.stop_reason, StopReason::Error as i32);
        assert_eq!(text_of(&result), "我先读取项");
        let failure = events.failure();
        assert!(
            matches!(
                failure,
                Some(StreamFailure::Status {
                    code: "UNAVAILABLE",
                    ..
                })
            ),
            "{failure:?}"
        );
    })
    .await;
}

// `Duration::MAX` as "no deadline to speak of": tonic panics on a timeout its header cannot hold
// (over 99,999,999 hours), and a deadline that far overflows the clock.
#[tokio::test]
async fn a_deadline_longer_than_grpc_can_send_is_sent_as_the_longest() {
    within(async {
        let server = FakeServer::with_catalog(playing(&seed_turn()), catalog()).await;
        let client = ModelClient::new(&server.target)
            .expect("a valid target")
            .with_catalog_timeout(Some(Duration::MAX));
        let options = CallOptions {
            timeout: Some(Duration::MAX),
            ..Default::default()
        };
        let events = client.stream(user_context("hi"), options);
        assert_eq!(kinds(&collect(&events).await).last(), Some(&"done"));
        let events = client
            .clone()
            .with_default_timeout(Some(Duration::MAX))
            .stream(user_context("hi"), CallOptions::default());
        assert_eq!(kinds(&collect(&events).await).last(), Some(&"done"));
        assert_eq!(
            client.list_models("").await.map(|models| models.len()),
            Ok(3)
        );

        let received = server.received();
        assert_eq!(received.len(), 3);
        for request in received {
            assert_eq!(
                request.headers["grpc-timeout"], "99999999H",
                "{}",
                request.path
            );
        }
    })
    .await;
}

fn catalog() -> Vec<Model> {
    let model = |provider: &str, id: &str| Model {
        id: id.to_owned(),
        name: id.to_uppercase(),
        provider: provider.to_owned(),
        cost: Some(ModelCost {
            input: 3.0,
            output: 15.0,
            ..Default::default()
        }),
        context_window: 200_000,
        ..Default::default()
    };
    vec![
        model("anthropic", "claude-sonnet-4-5"),
        model("openrouter", "claude-sonnet-4-5"),
        model("openai", "gpt-5"),
    ]
}

#[tokio::test]
async fn the_catalog_lists_the_models_and_finds_one_by_provider_and_id() {
    within(async {
        let server = FakeServer::with_catalog(Vec::new(), catalog()).await;
        let client = ModelClient::new(&server.target)
            .expect("a valid target")
            .with_metadata("authorization", "Bearer token");

        assert_eq!(client.list_models("").await, Ok(catalog()));
        let openrouter = client.list_models("openrouter").await.expect("served");
        assert_eq!(openrouter, catalog()[1..2]);
        let found = client.get_model("claude-sonnet-4-5", "openrouter").await;
        assert_eq!(found, Ok(catalog()[1].clone()));

        let received = server.received();
        let paths: Vec<_> = received.iter().map(|call| call.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/pi.ai.v1.ModelService/ListModels",
                "/pi.ai.v1.ModelService/ListModels",
                "/pi.ai.v1.ModelService/GetModel"
            ]
        );
        let listed = ListModelsRequest::decode(received[1].body.clone()).unwrap();
        assert_eq!(listed.provider, "openrouter");
        let asked = GetModelRequest::decode(received[2].body.clone()).unwrap();
        assert_eq!(
            (asked.provider.as_str(), asked.id.as_str()),
            ("openrouter", "claude-sonnet-4-5")
        );
        assert!(
            received
                .iter()
                .all(|call| call.headers["authorization"] == "Bearer token")
        );
        // Catalog calls have a deadline of their own: 30 seconds.
        assert_eq!(received[0].headers["grpc-timeout"], "30000000u");
    })
    .await;
}

#[tokio::test]
async fn a_model_not_served_is_an_error_with_the_status_code() {
    within(async {
        let server = FakeServer::with_catalog(Vec::new(), catalog()).await;
        let client = ModelClient::new(&server.target).expect("a valid target");

        let missing = client.get_model("gpt-5", "anthropic").await;
        let expected = CallError {
            code: "NOT_FOUND",
            message: "no such model".to_owned(),
        };
        assert_eq!(missing, Err(expected));
        assert_eq!(missing.unwrap_err().to_string(), "NOT_FOUND: no such model");
    })
    .await;
}

#[tokio::test]
async fn a_catalog_call_to_nothing_listening_is_unavailable() {
    within(async {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let target = listener.local_addr().unwrap().to_string();
        drop(listener);
        let client = ModelClient::new(&target).expect("a valid target");

        let error = client.list_models("").await.expect_err("nothing listens");
        assert_eq!(error.code, "UNAVAILABLE", "{error}");
    })
    .await;
}

// Numbered, resumable streams: a server that keeps its streams names each in its start event and
// numbers the events; the client resumes a call cut off, and cancels a stream on the server.

const RESUME: &str = "/pi.ai.v1.ModelService/Resume";
const CANCEL: &str = "/pi.ai.v1.ModelService/Cancel";
const STREAM_ID: &str = "kept-stream-1";

/// The seed's turn as a server that keeps its streams sends it: numbered from 1, the start
/// naming the stream, the done carrying the digest of the content the events build.
fn kept_turn() -> Vec<ModelEvent> {
    let mut events = seed_turn();
    for (at, event) in events.iter_mut().enumerate() {
        event.seq = at as u64 + 1;
        match &mut event.event {
            Some(Event::Start(start)) => start.stream_id = STREAM_ID.to_owned(),
            Some(Event::Done(done)) => {
                let content = &done.message.as_ref().expect("a message").content;
                done.content_sha256 = content_sha256(content).to_vec();
            }
            _ => {}
        }
    }
    events
}

fn seqs(events: &[ModelEvent]) -> Vec<u64> {
    events.iter().map(|event| event.seq).collect()
}

/// The Resume requests the server received, in order.
fn resumes(server: &FakeServer) -> Vec<ResumeRequest> {
    let received = server.received_of(RESUME);
    let decode = |call: &support::fake_server::Received| ResumeRequest::decode(call.body.clone());
    received.iter().map(|call| decode(call).unwrap()).collect()
}

/// The Cancel requests the server has received, once it has received one (the test's time limit
/// is the only limit to the wait).
async fn cancels(server: &FakeServer) -> Vec<CancelRequest> {
    loop {
        let received = server.received_of(CANCEL);
        if !received.is_empty() {
            let decode = |call: &support::fake_server::Received| {
                CancelRequest::decode(call.body.clone()).unwrap()
            };
            return received.iter().map(decode).collect();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// How many tasks the test's runtime runs. A stream sends Cancel from a task it spawns at once,
/// in `cancel()` or on drop: on this single-threaded runtime, nothing else starts or ends a task
/// while the test's own code runs between two awaits, so the count says whether one was sent.
fn tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

fn with_case_header() -> CallOptions {
    CallOptions {
        metadata: vec![("pi-case".to_owned(), "resume".to_owned())],
        ..Default::default()
    }
}

#[tokio::test]
async fn a_call_cut_off_after_its_stream_id_resumes_after_the_last_event_applied() {
    within(async {
        let turn = kept_turn();
        let mut script = playing(&turn[..3]);
        script.push(Action::Status(14, "connection lost"));
        let server = FakeServer::resumable(script, vec![(3, playing(&turn[3..]))]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let options = CallOptions {
            coalesce_deltas: true,
            timeout: Some(Duration::from_secs(300)),
            ..with_case_header()
        };
        let events = client.stream(user_context("hi"), options);

        let seen = collect(&events).await;
        // One uninterrupted stream: every event once, in order.
        assert_eq!(kinds(&seen), kinds(&turn));
        assert_eq!(seqs(&seen), (1..=turn.len() as u64).collect::<Vec<_>>());
        assert_eq!(events.failure(), None);
        assert_eq!(
            Some(&events.result().await),
            terminal_message(&turn[turn.len() - 1])
        );
        assert_eq!(events.stream_id(), STREAM_ID);

        assert_eq!(paths(&server), [BATCHED, RESUME]);
        let expected = ResumeRequest {
            stream_id: STREAM_ID.to_owned(),
            after_seq: 3,
            coalesce_deltas: true,
        };
        assert_eq!(resumes(&server), [expected]);
        // Within what is left of the call's deadline, with the call's metadata.
        let resume = &server.received_of(RESUME)[0];
        assert_eq!(resume.headers["pi-case"], "resume");
        // Less than the whole, by the time the first call took (under the test's time limit).
        let left = grpc_timeout(&resume.headers["grpc-timeout"]);
        let whole = Duration::from_secs(300);
        assert!(left < whole && left > whole - LIMIT, "{left:?}");
    })
    .await;
}

#[tokio::test]
async fn a_call_ended_without_its_terminal_event_resumes_and_drops_the_repeats() {
    within(async {
        let turn = kept_turn();
        // The resumed server sends events 3 and 4 again, then the rest.
        let server = FakeServer::resumable(playing(&turn[..4]), vec![(4, playing(&turn[2..]))]);
        let server = server.await;
        let client = ModelClient::new(&server.target)
            .expect("a valid target")
            .with_batched(false);
        let events = client.stream(user_context("hi"), CallOptions::default());

        let seen = collect(&events).await;
        assert_eq!(seqs(&seen), (1..=turn.len() as u64).collect::<Vec<_>>());
        assert_eq!(events.failure(), None);
        assert_eq!(text_of(&events.result().await), PREAMBLE);
        assert_eq!(paths(&server), [STREAM, RESUME]);
        assert_eq!(resumes(&server)[0].after_seq, 4);
    })
    .await;
}

#[tokio::test]
async fn each_resume_goes_on_after_the_last_event_applied() {
    within(async {
        let turn = kept_turn();
        let mut first = playing(&turn[..2]);
        first.push(Action::Status(14, "connection lost"));
        let mut second = playing(&turn[2..5]);
        second.push(Action::Status(14, "connection lost again"));
        let resumptions = vec![(2, second), (5, playing(&turn[5..]))];
        let server = FakeServer::resumable(first, resumptions).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        let seen = collect(&events).await;
        assert_eq!(seqs(&seen), (1..=turn.len() as u64).collect::<Vec<_>>());
        assert_eq!(events.failure(), None);
        let after: Vec<u64> = resumes(&server)
            .iter()
            .map(|resume| resume.after_seq)
            .collect();
        assert_eq!(after, [2, 5]);
    })
    .await;
}

#[tokio::test]
async fn resuming_gives_up_after_max_resumes_in_a_row() {
    within(async {
        let turn = kept_turn();
        let mut script = playing(&turn[..3]);
        script.push(Action::Status(14, "connection lost"));
        let again = vec![Action::Status(14, "still lost")];
        let server = FakeServer::resumable(script, vec![(3, again)]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let started = std::time::Instant::now();
        let events = client.stream(user_context("hi"), CallOptions::default());

        let seen = collect(&events).await;
        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        let expected = StreamFailure::Status {
            code: "UNAVAILABLE",
            message: "still lost".to_owned(),
        };
        assert_eq!(events.failure(), Some(expected));
        assert_eq!(resumes(&server).len(), MAX_RESUMES as usize);
        // The waits double: 50 + 100 + 200 + 400 + 800 ms.
        let waits = (0..MAX_RESUMES).map(|attempt| RESUME_BACKOFF * 2u32.pow(attempt));
        let waited = waits.sum::<Duration>();
        assert!(started.elapsed() >= waited, "{:?}", started.elapsed());
    })
    .await;
}

#[tokio::test]
async fn resuming_stops_at_the_deadline() {
    within(async {
        let turn = kept_turn();
        let mut script = playing(&turn[..3]);
        script.push(Action::Status(14, "connection lost"));
        // Every Resume is cut off too, and the server decides where the deadline stands: it
        // answers the first three at once (the waits of 50 to 400 ms fit in a deadline of 3 s
        // with plenty to spare), and the fourth only once less than 400 ms of the deadline is
        // left. The next wait, 800 ms, would reach the deadline: the client gives up with the
        // status it got, in the 400 ms that remain, rather than wait into the deadline.
        let held = MAX_RESUMES as usize - 1;
        let again = vec![
            Action::HoldUntilLeft {
                from_call: held,
                left: Duration::from_millis(400),
            },
            Action::Status(14, "still lost"),
        ];
        let server = FakeServer::resumable(script, vec![(3, again)]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let options = CallOptions {
            timeout: Some(Duration::from_secs(3)),
            ..Default::default()
        };
        let events = client.stream(user_context("hi"), options);

        collect(&events).await;
        let failure = events.failure();
        assert!(
            matches!(
                failure,
                Some(StreamFailure::Status {
                    code: "UNAVAILABLE",
                    ..
                })
            ),
            "{failure:?}" // DEADLINE_EXCEEDED: it waited into the deadline
        );
        assert_eq!(resumes(&server).len(), held, "{:?}", resumes(&server));
    })
    .await;
}

#[tokio::test]
async fn a_resume_refused_ends_the_stream_with_its_status() {
    within(async {
        let turn = kept_turn();
        let mut script = playing(&turn[..3]);
        script.push(Action::Status(14, "connection lost"));
        let refused = vec![Action::Status(5, "the stream is not kept here")];
        let server = FakeServer::resumable(script, vec![(3, refused)]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        let seen = collect(&events).await;
        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        let expected = StreamFailure::Status {
            code: "NOT_FOUND",
            message: "the stream is not kept here".to_owned(),
        };
        assert_eq!(events.failure(), Some(expected));
        assert_eq!(text_of(&events.result().await), "我先读取项");
        assert_eq!(resumes(&server).len(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_gap_after_a_resume_breaks_rule_sequence_at_the_next_index() {
    within(async {
        let turn = kept_turn();
        let mut script = playing(&turn[..3]);
        script.push(Action::Status(14, "connection lost"));
        // Event 4 is missing.
        let server = FakeServer::resumable(script, vec![(3, playing(&turn[4..]))]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        let seen = collect(&events).await;
        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        let Some(StreamFailure::Rule(broken)) = events.failure() else {
            panic!("{:?}", events.failure());
        };
        assert_eq!((broken.event_index, broken.rule), (3, StreamRule::Sequence));
    })
    .await;
}

#[tokio::test]
async fn a_call_without_a_stream_id_is_not_resumed() {
    within(async {
        let mut turn = kept_turn();
        if let Some(Event::Start(start)) = &mut turn[0].event {
            start.stream_id.clear();
        }
        let mut script = playing(&turn[..3]);
        script.push(Action::Status(14, "connection lost"));
        let server = FakeServer::resumable(script, vec![(3, playing(&turn[3..]))]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        collect(&events).await;
        let expected = StreamFailure::Status {
            code: "UNAVAILABLE",
            message: "connection lost".to_owned(),
        };
        assert_eq!(events.failure(), Some(expected));
        assert_eq!(paths(&server), [BATCHED]);
    })
    .await;
}

#[tokio::test]
async fn cancelling_a_kept_stream_sends_cancel_with_its_stream_id() {
    within(async {
        let turn = kept_turn();
        let mut script = playing(&turn[..3]);
        script.push(Action::Hang);
        let server = FakeServer::resumable(script, Vec::new()).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), with_case_header());
        for _ in 0..3 {
            events.next().await.expect("an event");
        }
        let before = tasks();
        events.cancel();
        assert_eq!(tasks(), before + 1, "the Cancel call's task"); // what the test below counts on

        assert_eq!(kinds(&collect(&events).await), ["error"]);
        assert_eq!(
            events.result().await.stop_reason,
            StopReason::Aborted as i32
        );
        let expected = CancelRequest {
            stream_id: STREAM_ID.to_owned(),
        };
        assert_eq!(cancels(&server).await, [expected]);
        let cancel = &server.received_of(CANCEL)[0];
        assert_eq!(cancel.headers["pi-case"], "resume");
        assert!(grpc_timeout(&cancel.headers["grpc-timeout"]) <= Duration::from_secs(1));
    })
    .await;
}

#[tokio::test]
async fn dropping_a_kept_stream_before_its_end_sends_cancel() {
    within(async {
        let turn = kept_turn();
        let mut script = playing(&turn[..3]);
        script.push(Action::Hang);
        let server = FakeServer::resumable(script, Vec::new()).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());
        events.next().await.expect("the start event");
        drop(events);

        let cancelled = cancels(&server).await;
        assert_eq!(cancelled.len(), 1);
        assert_eq!(cancelled[0].stream_id, STREAM_ID);
    })
    .await;
}

#[tokio::test]
async fn a_stream_that_ended_or_has_no_stream_id_sends_no_cancel() {
    within(async {
        // No Cancel is started: no task (see `tasks`), rather than none seen for a while.
        let server = FakeServer::resumable(playing(&kept_turn()), Vec::new()).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());
        assert_eq!(kinds(&collect(&events).await).last(), Some(&"done"));
        let before = tasks();
        events.cancel();
        drop(events);
        assert_eq!(tasks(), before, "a Cancel for a stream that ended");

        let mut script = playing(&seed_turn()[..3]);
        script.push(Action::Hang);
        let unkept = FakeServer::start(script).await;
        let client = ModelClient::new(&unkept.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());
        events.next().await.expect("the start event");
        let before = tasks();
        events.cancel();
        drop(events);
        assert_eq!(tasks(), before, "a Cancel for a stream without an id");
        assert_eq!(server.received_of(CANCEL).len(), 0);
        assert_eq!(unkept.received_of(CANCEL).len(), 0);
    })
    .await;
}

// The connection itself lost (tonic's UNKNOWN with a transport error, read as UNAVAILABLE): the
// Resume goes over a new connection.
#[tokio::test]
async fn a_kept_stream_whose_server_hung_up_resumes_over_a_new_connection() {
    within(async {
        let turn = kept_turn();
        let go = Arc::new(Notify::new());
        let mut script = playing(&turn[..3]);
        script.push(Action::Wait(go.clone()));
        script.push(Action::Hangup);
        let server = FakeServer::resumable(script, vec![(3, playing(&turn[3..]))]).await;
        let client = ModelClient::new(&server.target).expect("a valid target");
        let events = client.stream(user_context("hi"), CallOptions::default());

        // The server hangs up once the three events have arrived.
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(events.next().await.expect("an event"));
        }
        go.notify_one();
        seen.extend(collect(&events).await);
        assert_eq!(seqs(&seen), (1..=turn.len() as u64).collect::<Vec<_>>());
        assert_eq!(events.failure(), None);
        assert_eq!(text_of(&events.result().await), PREAMBLE);
        assert_eq!(paths(&server), [BATCHED, RESUME]);
    })
    .await;
}
