//! pi-proto for Rust: the `pi.ai.v1` types generated from `proto/`, their validation, the
//! event-stream runtime, and a gRPC client of `pi.ai.v1.ModelService` (StreamBatched, falling back
//! to Stream, and the model catalog).
//!
//! - [`v1`]: every message, with prost's binary encoding, pbjson's ProtoJSON (serde) and
//!   prost-reflect's descriptors.
//! - [`violations`] and [`check`]: the schema's protovalidate rules and its JSON text rules.
//! - [`AssistantMessageEventStream`]: the events of one model call, ending at the first `done` or
//!   `error` event; [`AssistantMessageEventStream::result`] is the message that event carries,
//!   [`AssistantMessageEventStream::partial`] the message rebuilt so far,
//!   [`AssistantMessageEventStream::failure`] why the receiver ended it, if it did.
//! - [`Accumulator`]: rebuilds the partial message in place and enforces the stream rules, which
//!   the `pi.ai.v1.StreamRule` enum in `proto/pi/ai/v1/event.proto` states (a broken one is a
//!   [`StreamProtocolError`] carrying its [`v1::StreamRule`] and [`stream_rule_id`]); a streaming
//!   tool call's arguments are completed into a JSON object ([`complete_json`]); a terminal
//!   event's digest is checked against [`content_sha256`] of the content built.
//! - [`Numbering`]: the numbers of a wire stream's events (rule `sequence`): repeats dropped,
//!   gaps refused.
//! - [`ModelClient`]: streams a call, naming the model by provider and id; every failure becomes
//!   the stream's final `error` event. A call cut off after its stream id arrived is resumed by
//!   itself, and a cancelled one is cancelled on the server too. [`ModelClient::list_models`]
//!   and [`ModelClient::get_model`] read the server's catalog.
//! - [`calculate_cost`]: what a call's usage costs at a model's rates, as pi computes it.
//! - [`text_of`]: a message's text blocks joined with newlines; [`user_message`] and the
//!   `From` conversions into [`v1::AgentMessage`] build a context.

/// The generated `pi.ai.v1` types (prost), their ProtoJSON impls (pbjson) and the
/// `ModelService` client (tonic). Built from `proto/` by `build.rs`; never edit.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod v1 {
    include!(concat!(env!("OUT_DIR"), "/pi.ai.v1.rs"));
    include!(concat!(env!("OUT_DIR"), "/pi.ai.v1.serde.rs"));
    pub use crate::null_value::NullValue;
}

mod accumulator;
mod batched;
mod client;
mod cost;
mod descriptors;
mod digest;
mod event_stream;
mod events;
mod js_json;
mod js_number;
mod json_text;
mod messages;
mod null_value;
mod numbering;
mod partial_json;
mod pi_json;
mod surrogates;
mod validate;

pub use accumulator::{
    Accumulator, DEFAULT_MAX_MESSAGE_BYTES, StreamProtocolError, stream_rule_id,
};
pub use client::{
    CallError, CallOptions, DEFAULT_CATALOG_TIMEOUT, DEFAULT_TIMEOUT, MAX_RESUMES, ModelClient,
    RESUME_BACKOFF,
};
pub use cost::{Rates, calculate_cost};
pub use digest::content_sha256;
#[allow(deprecated)]
pub use event_stream::EventStream;
pub use event_stream::{AssistantMessageEventStream, Next, Source, StreamFailure};
pub use events::{event_kind, events_of, is_terminal, terminal_message};
pub use js_json::{JsonObject, dump_json, load_json};
pub use json_text::MAX_DEPTH as MAX_JSON_DEPTH;
pub use messages::{TextBlocks, text_of, user_message, zero_usage};
pub use numbering::Numbering;
#[allow(deprecated)]
pub use partial_json::complete_arguments;
pub use partial_json::complete_json;
pub use pi_json::{
    PiJsonError, SessionLineError, SessionWarning, assistant_from_pi, assistant_to_pi,
    context_from_pi, context_to_pi, entry_from_pi, entry_to_pi, event_from_pi, event_to_pi,
    message_from_pi, message_to_pi, session_from_pi, session_to_pi,
};
pub use prost_reflect::ReflectMessage;
pub use validate::{ValidationError, Violation, check, violations};
