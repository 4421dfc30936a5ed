//! The conformance runner: runs every case of the corpus against this crate's public API.
//!
//! cargo test --test conformance -- --corpus DIR [--server HOST:PORT] [--known-failures FILE]
//!
//! (or CORPUS, SERVER and KNOWN_FAILURES in the environment; `make conformance` passes them).
//! Prints one line per case (PASS, FAIL, KNOWN, FIXED or SKIP), then `rust: N passed, ...`, and
//! exits 1 when a case fails or a known failure passes. Only structured outcomes are compared.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, LazyLock, mpsc};
use std::time::Duration;

use pi_proto::v1::model_event::Event;
use pi_proto::v1::{self, StopReason};
use pi_proto::{
    Accumulator, CallOptions, EventStream, ModelClient, StreamFailure, StreamProtocolError,
};
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value as Json;

#[allow(clippy::all, clippy::pedantic, missing_docs)]
mod pb {
    include!(concat!(
        env!("OUT_DIR"),
        "/conformance/pi.conformance.v1.rs"
    ));
}

use pb::{case::Kind, client_outcome, stream_case::Expect, validate_case::Input};

type Outcome = Result<(), String>;

fn run_wire(case: &pb::WireCase) -> Outcome {
    macro_rules! by_type {
        ($($name:ident),*) => {
            match case.r#type.as_str() {
                $(concat!("pi.ai.v1.", stringify!($name)) => wire::<v1::$name>(case),)*
                other => Err(format!("no pi.ai.v1 type {other}")),
            }
        };
    }
    by_type! {
        TextContent, ThinkingContent, ImageContent, ToolCall, UserContent, AssistantContent,
        ToolResultContent, Cost, Usage, UserMessage, AssistantMessage, ToolResultMessage,
        CustomMessage, SessionEntry, AgentMessage, TranscriptEntry, Tool, AgentContext,
        GenerationOptions, ThinkingBudgets, ToolChoice, StreamRequest, Model, ModelCost,
        ListModelsRequest, ListModelsResponse, GetModelRequest, GetModelResponse,
        StreamBatchedResponse, StartEvent, TextStartEvent, TextDeltaEvent, TextEndEvent,
        ThinkingStartEvent, ThinkingDeltaEvent, ThinkingEndEvent, ToolCallStartEvent,
        ToolCallDeltaEvent, ToolCallEndEvent, DoneEvent, ErrorEvent, ModelEvent, JsonText,
        SystemMessage, SystemSection, ToolReference, ConstrainedSampling, JsonSchemaSampling,
        GrammarSampling, Diagnostic, DiagnosticError, DeferredHandle, NestedToolCalls,
        NestedToolCall, DeferredOptions, ThinkingLevelMapping, ModelPromptCache, ModelInputLimits,
        ModelImageInputLimits, ModelImageResize, ModelCostTier
    }
}

fn wire<T: Message + Default + Serialize + DeserializeOwned>(case: &pb::WireCase) -> Outcome {
    let message = T::decode(case.binary.as_slice()).map_err(|error| format!("decode: {error}"))?;
    if message.encode_to_vec() != case.binary {
        return Err("re-encoding gives other bytes".into());
    }
    let printed = serde_json::to_value(&message).map_err(|error| error.to_string())?;
    let expected = case.json.as_ref().map_or(Json::Null, json_of);
    if !same_json(&printed, &expected) {
        return Err(format!("ProtoJSON differs: {printed}"));
    }
    let parsed: T = serde_json::from_value(expected).map_err(|error| format!("parse: {error}"))?;
    let bytes = if case.json_binary.is_empty() {
        &case.binary
    } else {
        &case.json_binary
    };
    if parsed.encode_to_vec() != *bytes {
        return Err("parsing the ProtoJSON gives other bytes".into());
    }
    Ok(())
}

/// A `google.protobuf.Value` as the JSON it stands for.
fn json_of(value: &prost_types::Value) -> Json {
    use prost_types::value::Kind as V;
    match &value.kind {
        None | Some(V::NullValue(_)) => Json::Null,
        // Whole numbers as integers, as the corpus wrote them: integer fields take no fraction.
        #[allow(clippy::cast_possible_truncation)]
        Some(V::NumberValue(number)) if number.fract() == 0.0 && number.abs() < 9.0e15 => {
            Json::from(*number as i64)
        }
        Some(V::NumberValue(number)) => {
            serde_json::Number::from_f64(*number).map_or(Json::Null, Json::Number)
        }
        Some(V::StringValue(text)) => Json::String(text.clone()),
        Some(V::BoolValue(flag)) => Json::Bool(*flag),
        Some(V::StructValue(object)) => Json::Object(
            object
                .fields
                .iter()
                .map(|(key, value)| (key.clone(), json_of(value)))
                .collect(),
        ),
        Some(V::ListValue(list)) => Json::Array(list.values.iter().map(json_of).collect()),
    }
}

/// JSON values compared as values: numbers as doubles, objects without order.
fn same_json(got: &Json, want: &Json) -> bool {
    match (got, want) {
        (Json::Number(a), Json::Number(b)) => a.as_f64() == b.as_f64(),
        (Json::Array(a), Json::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_json(a, b))
        }
        (Json::Object(a), Json::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => got == want,
    }
}

fn run_validate(case: &pb::ValidateCase) -> Outcome {
    let found = match &case.input {
        Some(Input::Request(message)) => pi_proto::violations(message),
        Some(Input::Context(message)) => pi_proto::violations(message),
        Some(Input::Message(message)) => pi_proto::violations(message),
        Some(Input::Event(message)) => pi_proto::violations(message),
        Some(Input::Entry(message)) => pi_proto::violations(message),
        Some(Input::Model(message)) => pi_proto::violations(message),
        None => return Err("the case has no input".into()),
    };
    same_violations(&found, &case.violations)
}

/// The same multiset of (field path, rule id).
fn same_violations(found: &[pi_proto::Violation], expected: &[pb::Violation]) -> Outcome {
    let mut got: Vec<_> = found.iter().map(|v| (&v.field_path, &v.rule_id)).collect();
    let mut want: Vec<_> = expected
        .iter()
        .map(|v| (&v.field_path, &v.rule_id))
        .collect();
    got.sort_unstable();
    want.sort_unstable();
    if got == want {
        Ok(())
    } else {
        Err(format!("violations {got:?}, expected {want:?}"))
    }
}

fn run_stream(case: &pb::StreamCase) -> Outcome {
    let limit = match case.max_message_bytes {
        0 => pi_proto::DEFAULT_MAX_MESSAGE_BYTES,
        limit => limit,
    };
    let stream = EventStream::new().with_max_message_bytes(limit);
    let mut partials = Vec::new();
    for event in &case.events {
        if stream.is_done() {
            break;
        }
        if let Err(error) = stream.push(event.clone()) {
            let Some(Expect::Failure(expected)) = &case.expect else {
                return Err(format!("unexpected failure: {error}"));
            };
            return same_failure(expected, &error);
        }
        stream.try_next().ok_or("the event was not delivered")?;
        partials.push(stream.partial());
    }
    let Some(Expect::Success(success)) = &case.expect else {
        return Err("every event fit, the case expects a broken rule".into());
    };
    for (index, (got, want)) in partials.iter().zip(&success.partials).enumerate() {
        if **got != *want {
            return Err(format!("the partial after event {index} differs: {got:?}"));
        }
    }
    if partials.len() != success.partials.len() {
        return Err(format!(
            "{} events delivered, expected {}",
            partials.len(),
            success.partials.len()
        ));
    }
    let result = stream.is_done().then(|| stream.partial());
    if result.as_deref() != success.result.as_ref() {
        return Err(format!("the result differs: {result:?}"));
    }
    Ok(())
}

fn same_failure(expected: &pb::StreamFailure, got: &StreamProtocolError) -> Outcome {
    let (index, rule) = (expected.event_index as usize, expected.rule_id.as_str());
    if (got.event_index, got.rule_id) != (index, rule) {
        return Err(format!("got {got}, expected rule {rule} at event {index}"));
    }
    same_violations(&got.violations, &expected.violations)
}

fn run_cost(case: &pb::CostCase) -> Outcome {
    let usage = case.usage.clone().unwrap_or_default();
    let got = pi_proto::calculate_cost(&case.rates.clone().unwrap_or_default(), &usage);
    let want = case.cost.clone().unwrap_or_default();
    let parts = |cost: &v1::Cost| {
        [
            cost.input,
            cost.output,
            cost.cache_read,
            cost.cache_write,
            cost.total,
        ]
    };
    // Compared as doubles, exactly; and the flag with its presence, which pi sets false on every
    // cost it computes.
    if parts(&got) == parts(&want) && got.total_from_provider == want.total_from_provider {
        Ok(())
    } else {
        Err(format!(
            "costs {:?}, expected {:?}",
            parts(&got),
            parts(&want)
        ))
    }
}

/// The text streamed into a tool call as one delta, then a character at a time, through the
/// accumulator: the partial's arguments_json is the completion.
fn run_partial_json(case: &pb::PartialJsonCase) -> Outcome {
    let one: Vec<String> = vec![case.text.clone()];
    let each: Vec<String> = case.text.chars().map(String::from).collect();
    for deltas in [one, each] {
        let mut accumulator = Accumulator::default();
        let start = Event::Start(v1::StartEvent {
            header: Some(v1::AssistantMessage::default()),
        });
        let call = Event::ToolcallStart(v1::ToolCallStartEvent {
            content_index: 0,
            id: "c".into(),
            name: "n".into(),
        });
        let mut events = vec![start, call];
        events.extend(deltas.iter().map(|delta| {
            Event::ToolcallDelta(v1::ToolCallDeltaEvent {
                content_index: 0,
                delta: delta.clone(),
            })
        }));
        for event in events {
            let event = v1::ModelEvent {
                event: Some(event),
                ..Default::default()
            };
            accumulator
                .apply(&event)
                .map_err(|error| error.to_string())?;
        }
        let block = accumulator.partial().content[0].block.clone();
        let Some(v1::assistant_content::Block::ToolCall(call)) = block else {
            return Err("the partial has no tool call".into());
        };
        if call.arguments_json != case.completed {
            let count = deltas.len();
            return Err(format!(
                "completes as {:?} from {count} deltas",
                call.arguments_json
            ));
        }
    }
    Ok(())
}

async fn run_client(case: &pb::ClientCase, name: &str, server: &str) -> Outcome {
    let settings = case.client.clone().unwrap_or_default();
    let request = case.request.clone().unwrap_or_else(one_message_request);
    let mut client = ModelClient::new(server).map_err(|error| error.to_string())?;
    if settings.max_message_bytes > 0 {
        client = client.with_max_message_bytes(settings.max_message_bytes);
    }
    let options = CallOptions {
        provider: request.provider,
        model: request.model,
        generation: request.options,
        coalesce_deltas: request.coalesce_deltas,
        timeout: (settings.deadline_ms > 0).then(|| millis(settings.deadline_ms)),
        metadata: vec![("pi-conformance-case".into(), name.into())],
    };
    let events = Arc::new(client.stream(request.context.unwrap_or_default(), options));
    // Cancels from another thread after the delay, unless the call ends first.
    let (call_over, over) = mpsc::channel::<()>();
    if settings.cancel_after_ms > 0 {
        let (events, delay) = (events.clone(), millis(settings.cancel_after_ms));
        std::thread::spawn(move || {
            if over.recv_timeout(delay) == Err(mpsc::RecvTimeoutError::Timeout) {
                events.cancel();
            }
        });
    }
    let (mut count, mut last) = (0, None);
    while let Some(event) = events.next().await {
        count += 1;
        last = Some(event);
        if count == settings.cancel_after_events {
            events.cancel();
        }
    }
    drop(call_over);
    let result = events.result().await;
    let expect = case.expect.clone().unwrap_or_default();
    let reason = match last.and_then(|event| event.event) {
        Some(Event::Done(done)) => done.reason,
        Some(Event::Error(error)) => error.reason,
        other => return Err(format!("ended with {other:?}, not a terminal event")),
    };
    if reason != expect.reason {
        return Err(format!(
            "ended with reason {reason}, expected {}",
            expect.reason
        ));
    }
    if count != expect.events {
        return Err(format!("{count} events, expected {}", expect.events));
    }
    match (&expect.failure, events.failure()) {
        (None, None) => {}
        (
            Some(client_outcome::Failure::StatusCode(want)),
            Some(StreamFailure::Status { code, .. }),
        ) if want == code => {}
        (Some(client_outcome::Failure::Rule(want)), Some(StreamFailure::Rule(got))) => {
            same_failure(want, &got)?;
        }
        (want, got) => return Err(format!("failure {got:?}, expected {want:?}")),
    }
    if let Some(mut want) = expect.result {
        let mut got = result;
        let failed = [StopReason::Error as i32, StopReason::Aborted as i32];
        if failed.contains(&got.stop_reason)
            && got.error_message.as_deref().unwrap_or("").is_empty()
        {
            return Err("a failed message without an error_message".into());
        }
        (got.error_message, want.error_message) = (None, None);
        if got != want {
            return Err(format!("the result differs: {got:?}"));
        }
    }
    Ok(())
}

/// The request of a case that names none: one user message with one text block "hi".
fn one_message_request() -> v1::StreamRequest {
    let json = r#"{"context": {"messages": [{"user": {"content": [{"text": {"text": "hi"}}]}}]}}"#;
    serde_json::from_str(json).expect("a StreamRequest in ProtoJSON")
}

fn millis(value: u32) -> Duration {
    Duration::from_millis(u64::from(value))
}

// --- the run --------------------------------------------------------------------------------------

fn outcome(case: &pb::Case, server: Option<&str>, runtime: &tokio::runtime::Runtime) -> Outcome {
    match case.kind.as_ref().ok_or("the case has no kind")? {
        Kind::Wire(body) => run_wire(body),
        Kind::Validate(body) => run_validate(body),
        Kind::Stream(body) => run_stream(body),
        Kind::Client(body) => runtime.block_on(async {
            let call = run_client(body, &case.name, server.unwrap_or_default());
            tokio::time::timeout(Duration::from_secs(30), call)
                .await
                .unwrap_or_else(|_| Err("took longer than 30 s".into()))
        }),
        Kind::PiJson(_) => Err("no pi-JSON codec".into()),
        Kind::Cost(body) => run_cost(body),
        Kind::PartialJson(body) => run_partial_json(body),
    }
}

fn kind_name(case: &pb::Case) -> &'static str {
    match case.kind {
        Some(Kind::Wire(_)) => "wire",
        Some(Kind::Validate(_)) => "validate",
        Some(Kind::Stream(_)) => "stream",
        Some(Kind::Client(_)) => "client",
        Some(Kind::PiJson(_)) => "pi_json",
        Some(Kind::Cost(_)) => "cost",
        Some(Kind::PartialJson(_)) => "partial_json",
        None => "",
    }
}

/// A ProtoJSON file of the conformance schema, read with prost-reflect's parser.
fn read<T: Message + Default>(path: &Path, name: &str) -> Result<T, String> {
    static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
        let bytes = include_bytes!(concat!(env!("OUT_DIR"), "/pi_proto_descriptors.bin"));
        DescriptorPool::decode(bytes.as_slice()).expect("build.rs writes a valid descriptor set")
    });
    let descriptor = POOL
        .get_message_by_name(name)
        .ok_or(format!("no message {name}"))?;
    let fail = |error: &dyn std::fmt::Display| format!("{}: {error}", path.display());
    let text = std::fs::read_to_string(path).map_err(|error| fail(&error))?;
    let mut json = serde_json::Deserializer::from_str(&text);
    let message =
        DynamicMessage::deserialize(descriptor, &mut json).map_err(|error| fail(&error))?;
    T::decode(message.encode_to_vec().as_slice()).map_err(|error| fail(&error))
}

/// A setting from `--name VALUE` or, failing that, the environment variable `NAME`.
fn setting(arguments: &[String], name: &str) -> Option<String> {
    let flag = format!("--{name}");
    let given = arguments.iter().position(|argument| *argument == flag);
    given
        .and_then(|at| arguments.get(at + 1).cloned())
        .or_else(|| std::env::var(name.replace('-', "_").to_uppercase()).ok())
        .filter(|value| !value.is_empty())
}

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().collect();
    let Some(corpus) = setting(&arguments, "corpus") else {
        eprintln!("usage: conformance --corpus DIR [--server HOST:PORT] [--known-failures FILE]");
        return ExitCode::from(2);
    };
    let server = setting(&arguments, "server");
    let known = match setting(&arguments, "known-failures") {
        Some(path) => read(Path::new(&path), "pi.conformance.v1.KnownFailures"),
        None => Ok(pb::KnownFailures::default()),
    };
    let mut files: Vec<_> = match std::fs::read_dir(&corpus) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .collect(),
        Err(error) => return fail_to_start(&format!("{corpus}: {error}")),
    };
    files.retain(|path| {
        path.extension()
            .is_some_and(|extension| extension == "json")
    });
    files.sort();
    let suites: Result<Vec<pb::Suite>, String> = files
        .iter()
        .map(|path| read(path, "pi.conformance.v1.Suite"))
        .collect();
    let (known, suites) = match (known, suites) {
        (Ok(known), Ok(suites)) => (known, suites),
        (Err(error), _) | (_, Err(error)) => return fail_to_start(&error),
    };
    let expected_to_fail: HashSet<_> = known.failures.iter().map(|f| f.case.as_str()).collect();
    let unsupported: HashMap<_, _> = known
        .unsupported
        .iter()
        .map(|u| (u.kind.as_str(), u.reason.as_str()))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let (mut passed, mut failed, mut known_failures, mut skipped) = (0, 0, 0, 0);
    for case in suites.iter().flat_map(|suite| &suite.cases) {
        let kind = kind_name(case);
        let reason = unsupported
            .get(kind)
            .copied()
            .or((kind == "client" && server.is_none()).then_some("no --server given"));
        if let Some(reason) = reason {
            skipped += 1;
            println!("SKIP {}: {reason}", case.name);
            continue;
        }
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            outcome(case, server.as_deref(), &runtime)
        }));
        let problem = run.unwrap_or_else(|_| Err("panicked".into())).err();
        let name = &case.name;
        let (line, count) = match (expected_to_fail.contains(name.as_str()), problem) {
            (true, None) => (
                format!("FIXED {name}: passes now; remove it from the known failures"),
                &mut failed,
            ),
            (true, Some(why)) => (format!("KNOWN {name}: {why}"), &mut known_failures),
            (false, None) => (format!("PASS {name}"), &mut passed),
            (false, Some(why)) => (format!("FAIL {name}: {why}"), &mut failed),
        };
        *count += 1;
        println!("{line}");
    }
    println!(
        "rust: {passed} passed, {failed} failed, {known_failures} known failures, {skipped} skipped"
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn fail_to_start(error: &str) -> ExitCode {
    eprintln!("conformance: {error}");
    ExitCode::from(2)
}
