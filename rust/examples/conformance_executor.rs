//! The conformance executor: runs the cases the harness sends on this crate's public API.
//!
//! cargo run --features conformance --example conformance_executor < requests
//!
//! (`make conformance-executor` builds it as `.bin/conformance-executor`, which
//! `tests/conformance/harness.py` runs.) Reads size-delimited `pi.conformance.v1.CaseRequest`s
//! from stdin until it ends and writes one size-delimited `CaseResult` for each to stdout, in
//! order; conformance.proto says what each result holds. It compares nothing: the harness does.
//! Diagnostics go to stderr. Not part of the crate.

use std::io::{Read, Write};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use pi_proto::v1::model_event::Event;
use pi_proto::v1::{self, assistant_content::Block};
use pi_proto::{
    Accumulator, AssistantMessageEventStream, CallOptions, ModelClient, StreamFailure,
    StreamProtocolError,
};
use prost::Message;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value as Json;

// Generated; it holds the corpus's own types too (Suite, KnownFailures), which only the harness
// reads.
#[allow(clippy::all, clippy::pedantic, missing_docs, dead_code)]
mod pb {
    include!(concat!(
        env!("OUT_DIR"),
        "/conformance/pi.conformance.v1.rs"
    ));
}

use pb::case_result::Result as Outcome;
use pb::{
    case::Kind, client_outcome, pi_json_case::Expect, pi_json_result::Read as PiJsonRead,
    validate_case::Input,
};

/// The metadata that names the case to the reference server.
const CASE_HEADER: &str = "pi-conformance-case";
/// The longest one client case may take.
const CLIENT_LIMIT: Duration = Duration::from_secs(60);

type Ran<T> = Result<T, String>;

fn wire(case: &pb::WireCase) -> Ran<pb::WireResult> {
    macro_rules! by_type {
        ($($name:ident),* $(,)?) => {
            match case.r#type.as_str() {
                $(concat!("pi.ai.v1.", stringify!($name)) => wire_as::<v1::$name>(case),)*
                other => Err(format!("no pi.ai.v1 type {other}")),
            }
        };
    }
    by_type! {
        JsonText, TextContent, ThinkingContent, ImageContent, ToolCall, UserContent,
        AssistantContent, ToolResultContent, Tool, ConstrainedSampling, JsonSchemaSampling,
        GrammarSampling, ToolReference, Cost, Usage, UserMessage, AssistantMessage,
        ToolResultMessage, CustomMessage, AgentMessage, SystemMessage, SystemSection, Diagnostic,
        DiagnosticError, DeferredHandle, NestedToolCalls, NestedToolCall, TranscriptEntry,
        SessionEntry, SessionHeader, ThinkingLevelChange, ModelChange, UsageRecord, Compaction,
        BranchSummary, CustomEntry, CustomMessageEntry, Label, SessionInfo, ContextEdit,
        ContextReplacement, ContentBlock, AgentContext, StartEvent, TextStartEvent, TextDeltaEvent, TextEndEvent,
        ThinkingStartEvent, ThinkingDeltaEvent, ThinkingEndEvent, ToolCallStartEvent,
        ToolCallDeltaEvent, ToolCallEndEvent, DoneEvent, ErrorEvent, ModelEvent, Model,
        ThinkingLevelMapping, ModelPromptCache, ModelInputLimits, ModelImageInputLimits,
        ModelImageResize, ModelCost, ModelCostTier, GenerationOptions, DeferredOptions,
        ThinkingBudgets, ToolChoice, StreamRequest, ListModelsRequest, ListModelsResponse,
        GetModelRequest, GetModelResponse, StreamBatchedResponse, StreamBatchedView, ResumeRequest,
        CancelRequest, CancelResponse,
    }
}

fn wire_as<T: Message + Default + Serialize + DeserializeOwned>(
    case: &pb::WireCase,
) -> Ran<pb::WireResult> {
    let message = T::decode(case.binary.as_slice()).map_err(|error| format!("decode: {error}"))?;
    let json = serde_json::to_string(&message).map_err(|error| format!("print: {error}"))?;
    let text = case.json.as_ref().map_or(Json::Null, json_of).to_string();
    let parsed: T = serde_json::from_str(&text).map_err(|error| format!("parse: {error}"))?;
    Ok(pb::WireResult {
        binary: message.encode_to_vec(),
        json,
        json_binary: parsed.encode_to_vec(),
    })
}

/// A `google.protobuf.Value` as the JSON it stands for.
fn json_of(value: &prost_types::Value) -> Json {
    use prost_types::value::Kind as V;
    match &value.kind {
        None | Some(V::NullValue(_)) => Json::Null,
        // Whole numbers as integers, as the corpus wrote them: integer fields take no fraction.
        // Negative zero stays a double, since an integer has no sign to keep.
        #[allow(clippy::cast_possible_truncation)]
        Some(V::NumberValue(number))
            if number.fract() == 0.0
                && number.abs() < 9.0e15
                && !(*number == 0.0 && number.is_sign_negative()) =>
        {
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

fn validate(case: &pb::ValidateCase) -> Ran<pb::ValidateResult> {
    let found = match &case.input {
        Some(Input::Request(message)) => pi_proto::violations(message),
        Some(Input::Context(message)) => pi_proto::violations(message),
        Some(Input::Message(message)) => pi_proto::violations(message),
        Some(Input::Event(message)) => pi_proto::violations(message),
        Some(Input::Entry(message)) => pi_proto::violations(message),
        Some(Input::Model(message)) => pi_proto::violations(message),
        None => return Err("the case has no input".into()),
    };
    Ok(pb::ValidateResult {
        violations: violations(&found),
    })
}

fn violations(found: &[pi_proto::Violation]) -> Vec<pb::Violation> {
    found
        .iter()
        .map(|violation| pb::Violation {
            field_path: violation.field_path.clone(),
            rule_id: violation.rule_id.clone(),
        })
        .collect()
}

fn stream(case: &pb::StreamCase) -> Ran<pb::StreamResult> {
    let limit = match case.max_message_bytes {
        0 => pi_proto::DEFAULT_MAX_MESSAGE_BYTES,
        limit => limit,
    };
    let stream = AssistantMessageEventStream::new().with_max_message_bytes(limit);
    let mut result = pb::StreamResult::default();
    for event in &case.events {
        if stream.is_done() {
            break;
        }
        if let Err(broken) = stream.push(event.clone()) {
            result.failure = Some(failure(&broken));
            return Ok(result);
        }
        stream.try_next().ok_or("the event was not delivered")?;
        result.partials.push((*stream.partial()).clone());
    }
    result.result = stream.is_done().then(|| (*stream.partial()).clone());
    Ok(result)
}

fn failure(broken: &StreamProtocolError) -> pb::StreamFailure {
    pb::StreamFailure {
        event_index: u32::try_from(broken.event_index).unwrap_or(u32::MAX),
        rule_id: broken.rule_id.to_owned(),
        violations: violations(&broken.violations),
    }
}

/// The case's text read as it expects (a session file, an event, a context, else an entry) and
/// written back, and its edited entry written; a refused text is its error's path.
fn pi_json(case: &pb::PiJsonCase) -> Ran<pb::PiJsonResult> {
    if let Some(Expect::Session(_)) = case.expect {
        let mut warnings = Vec::new();
        let entries =
            pi_proto::session_from_pi(&case.text, &mut warnings).map_err(|e| e.to_string())?;
        let written = pi_proto::session_to_pi(&entries).map_err(|error| error.to_string())?;
        let warned_lines = warnings
            .iter()
            .map(|warning| u32::try_from(warning.line).map_err(|error| error.to_string()))
            .collect::<Ran<_>>()?;
        let session = pb::PiSession {
            entries,
            warned_lines,
        };
        return Ok(pb::PiJsonResult {
            read: Some(PiJsonRead::Session(session)),
            written,
            ..Default::default()
        });
    }
    // Text that is not JSON is the executor's failure, not the codec's refusal.
    let value = pi_proto::load_json(&case.text).map_err(|error| error.to_string())?;
    let dump = |object: pi_proto::JsonObject| pi_proto::dump_json(&Json::Object(object));
    let read = || -> Result<pb::PiJsonResult, pi_proto::PiJsonError> {
        Ok(match case.expect {
            Some(Expect::Event(_)) => {
                let event = pi_proto::event_from_pi(&value, "")?;
                // An event without its partial is pi 1.6's delta-only form, written back in it.
                let written = dump(pi_proto::event_to_pi(&event, event.partial.is_none())?);
                pb::PiJsonResult {
                    read: Some(PiJsonRead::Event(event)),
                    written,
                    ..Default::default()
                }
            }
            Some(Expect::Context(_)) => {
                let context = pi_proto::context_from_pi(&value, "")?;
                let written = dump(pi_proto::context_to_pi(&context)?);
                pb::PiJsonResult {
                    read: Some(PiJsonRead::Context(context)),
                    written,
                    ..Default::default()
                }
            }
            _ => {
                let entry = pi_proto::entry_from_pi(&value, "")?;
                let written = dump(pi_proto::entry_to_pi(&entry)?);
                let edited_written = match &case.edited {
                    Some(edited) => dump(pi_proto::entry_to_pi(edited)?),
                    None => String::new(),
                };
                pb::PiJsonResult {
                    read: Some(PiJsonRead::Entry(entry)),
                    written,
                    edited_written,
                }
            }
        })
    };
    Ok(read().unwrap_or_else(|error| pb::PiJsonResult {
        read: Some(PiJsonRead::ErrorPath(error.path)),
        ..Default::default()
    }))
}

fn cost(case: &pb::CostCase) -> v1::Cost {
    let usage = case.usage.clone().unwrap_or_default();
    pi_proto::calculate_cost(&case.rates.clone().unwrap_or_default(), &usage)
}

/// The text streamed into a tool call as one delta, then one character per delta: the partial's
/// arguments_json after each.
fn partial_json(case: &pb::PartialJsonCase) -> Ran<pb::PartialJsonResult> {
    let whole = streamed(std::iter::once(case.text.clone()))?;
    let by_character = streamed(case.text.chars().map(String::from))?;
    Ok(pb::PartialJsonResult {
        whole,
        by_character,
    })
}

fn streamed(deltas: impl Iterator<Item = String>) -> Ran<String> {
    let mut accumulator = Accumulator::default();
    let start = Event::Start(v1::StartEvent {
        header: Some(v1::AssistantMessage::default()),
        ..Default::default()
    });
    let call = Event::ToolcallStart(v1::ToolCallStartEvent {
        content_index: 0,
        id: "c".into(),
        name: "n".into(),
    });
    let deltas = deltas.map(|delta| {
        Event::ToolcallDelta(v1::ToolCallDeltaEvent {
            content_index: 0,
            delta,
        })
    });
    for event in [start, call].into_iter().chain(deltas) {
        let event = v1::ModelEvent {
            event: Some(event),
            ..Default::default()
        };
        accumulator
            .apply(&event)
            .map_err(|error| error.to_string())?;
    }
    match &accumulator.partial().content[0].block {
        Some(Block::ToolCall(call)) => Ok(call.arguments_json.clone().unwrap_or_default()),
        _ => Err("the partial has no tool call".into()),
    }
}

async fn client(
    case: &pb::ClientCase,
    name: &str,
    server: &str,
    protocol: &str,
) -> Ran<pb::ClientOutcome> {
    if !matches!(protocol, "" | "grpc") {
        return Err(format!("the Rust client speaks gRPC only, not {protocol}"));
    }
    let settings = case.client.unwrap_or_default();
    if settings.close_after_events > 0 {
        return Err("ModelClient has no close: a stream ends early only by cancel()".into());
    }
    let request = case.request.clone().unwrap_or_default();
    let mut model_client = ModelClient::new(server).map_err(|error| error.to_string())?;
    if settings.max_message_bytes > 0 {
        model_client = model_client.with_max_message_bytes(settings.max_message_bytes);
    }
    let options = CallOptions {
        provider: request.provider,
        model: request.model,
        generation: request.options,
        coalesce_deltas: request.coalesce_deltas,
        timeout: (settings.deadline_ms > 0).then(|| millis(settings.deadline_ms)),
        metadata: vec![(CASE_HEADER.into(), name.into())],
    };
    let context = request.context.unwrap_or_default();
    let events = Arc::new(model_client.stream(context, options));
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
    let reason = match last.and_then(|event| event.event) {
        Some(Event::Done(done)) => done.reason,
        Some(Event::Error(error)) => error.reason,
        _ => 0,
    };
    let failure = events.failure().map(|failure| match failure {
        StreamFailure::Status { code, .. } => client_outcome::Failure::StatusCode(code.to_owned()),
        StreamFailure::Rule(broken) => client_outcome::Failure::Rule(self::failure(&broken)),
    });
    Ok(pb::ClientOutcome {
        reason,
        events: count,
        failure,
        result: Some(events.result().await),
    })
}

fn millis(value: u32) -> Duration {
    Duration::from_millis(u64::from(value))
}

/// What the crate did with one case.
fn run(request: pb::CaseRequest, runtime: &tokio::runtime::Runtime) -> Ran<Outcome> {
    let case = request.case.unwrap_or_default();
    Ok(match case.kind.as_ref().ok_or("the case has no kind")? {
        Kind::Wire(body) => Outcome::Wire(wire(body)?),
        Kind::Validate(body) => Outcome::Validate(validate(body)?),
        Kind::Stream(body) => Outcome::Stream(stream(body)?),
        Kind::Client(body) => Outcome::Client(runtime.block_on(async {
            let call = client(body, &case.name, &request.server, &request.protocol);
            tokio::time::timeout(CLIENT_LIMIT, call)
                .await
                .unwrap_or_else(|_| Err(format!("took longer than {CLIENT_LIMIT:?}")))
        })?),
        Kind::PiJson(body) => Outcome::PiJson(pi_json(body)?),
        Kind::Cost(body) => Outcome::Cost(cost(body)),
        Kind::PartialJson(body) => Outcome::PartialJson(partial_json(body)?),
    })
}

fn main() -> std::process::ExitCode {
    let mut input = Vec::new();
    if let Err(error) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("conformance executor: reading stdin: {error}");
        return std::process::ExitCode::FAILURE;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut stdout = std::io::stdout().lock();
    let mut rest = input.as_slice();
    while !rest.is_empty() {
        let request = match pb::CaseRequest::decode_length_delimited(&mut rest) {
            Ok(request) => request,
            Err(error) => {
                eprintln!("conformance executor: a request does not decode: {error}");
                return std::process::ExitCode::FAILURE;
            }
        };
        let name = request.case.as_ref().map(|case| case.name.clone());
        // A panic is the runtime's failure on that case, not the end of the run.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(request, &runtime)));
        let outcome = match ran {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(error)) => Outcome::Error(error),
            Err(panic) => Outcome::Error(format!("panicked: {}", panic_text(&*panic))),
        };
        let result = pb::CaseResult {
            name: name.unwrap_or_default(),
            result: Some(outcome),
        };
        let written = stdout
            .write_all(&result.encode_length_delimited_to_vec())
            .and_then(|()| stdout.flush());
        if let Err(error) = written {
            eprintln!("conformance executor: writing a result: {error}");
            return std::process::ExitCode::FAILURE;
        }
    }
    std::process::ExitCode::SUCCESS
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
