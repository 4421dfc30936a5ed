//! The gRPC client of `pi.ai.v1.ModelService`: streams whose iteration never fails (read through
//! `StreamBatched`, or `Stream` on a server without it, resumed through `Resume` when cut off,
//! and cancelled on the server through `Cancel` when their caller cancels them), and the model
//! catalog (`ListModels`, `GetModel`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use prost::{DecodeError, Message};
use tokio::runtime::Handle;
use tokio::time::{Instant, Sleep};
use tonic::codec::Streaming;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Extensions, Status};

use crate::accumulator::{DEFAULT_MAX_MESSAGE_BYTES, StreamProtocolError};
use crate::batched::{Batch, CallCodec, Decoded};
use crate::event_stream::{AssistantMessageEventStream, StreamFailure};
use crate::numbering::Numbering;
use crate::v1::model_event::Event;
use crate::v1::model_service_client::ModelServiceClient;
use crate::v1::{
    AgentContext, CancelRequest, GenerationOptions, GetModelRequest, ListModelsRequest, Model,
    ModelEvent, ResumeRequest, StreamBatchedView, StreamRequest, StreamRule,
};

/// The deadline of a call that sets none: 15 minutes, longer than a server's usual stream limit.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(900);

/// The deadline of a catalog call (`list_models`, `get_model`) unless the client sets another.
pub const DEFAULT_CATALOG_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest deadline gRPC can send (`grpc-timeout` holds at most 8 digits: 99,999,999 hours,
/// about 11,400 years). A longer one, `Duration::MAX` say, is sent as this: practically none.
const LONGEST_TIMEOUT: Duration = Duration::from_secs(99_999_999 * 3600);

/// A call cut off after its stream id arrived is resumed (`ModelService.Resume`) up to this
/// many times in a row without an event applied between, waiting [`RESUME_BACKOFF`] before the
/// first attempt, twice as long before each next one.
pub const MAX_RESUMES: u32 = 5;

/// The wait before the first of a run of resumes; it doubles with each attempt after it.
pub const RESUME_BACKOFF: Duration = Duration::from_millis(50);

/// How long the `Cancel` call a cancelled stream sends to its server may take.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(1);

const STREAM_METHOD: &str = "/pi.ai.v1.ModelService/Stream";
const BATCHED_METHOD: &str = "/pi.ai.v1.ModelService/StreamBatched";
const RESUME_METHOD: &str = "/pi.ai.v1.ModelService/Resume";

/// What one call may set besides its context.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// The provider of the model, as pi names a model by provider and id; empty for the only
    /// provider that serves `model`.
    pub provider: String,
    /// The model id to call, as its provider names it; empty for the server's default model.
    pub model: String,
    /// Options for this call; `None` for the model's defaults.
    pub generation: Option<GenerationOptions>,
    /// Let the server merge deltas that wait while this client is behind.
    pub coalesce_deltas: bool,
    /// The call's deadline; `None` for the client's default ([`DEFAULT_TIMEOUT`] unless set with
    /// [`ModelClient::with_default_timeout`]). Passing it ends the stream with ERROR, failure
    /// status `DEADLINE_EXCEEDED`. One longer than gRPC can send (99,999,999 hours), such as
    /// `Duration::MAX`, is sent as that.
    pub timeout: Option<Duration>,
    /// Request metadata (ASCII keys and values), e.g. `("authorization", "Bearer ...")`, added
    /// to the client's own ([`ModelClient::with_metadata`]), replacing its value of the same key.
    pub metadata: Vec<(String, String)>,
}

/// A catalog call (`list_models`, `get_model`) that ended with a status other than OK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    /// The status code's name, e.g. `NOT_FOUND` or `UNAVAILABLE`.
    pub code: &'static str,
    /// The status message (the server's NOT_FOUND names the models it serves); may be empty.
    pub message: String,
}

impl fmt::Display for CallError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            formatter.write_str(self.code)
        } else {
            write!(formatter, "{}: {}", self.code, self.message)
        }
    }
}

impl std::error::Error for CallError {}

impl From<&Status> for CallError {
    /// For a failure of the transport (tonic's own status, e.g. "tcp connect error"), the root
    /// cause is appended to the message ("Connection refused"). A connection lost mid-call
    /// (the server killed, the network gone) is UNAVAILABLE, as gRPC's other runtimes report it:
    /// tonic reports it as UNKNOWN, with the transport's error as the status's source, where a
    /// status the server sent has none.
    fn from(status: &Status) -> Self {
        let code = match status.code() {
            Code::Unknown if std::error::Error::source(status).is_some() => Code::Unavailable,
            code => code,
        };
        let mut message = status.message().to_owned();
        let mut root = std::error::Error::source(status);
        while let Some(cause) = root.and_then(std::error::Error::source) {
            root = Some(cause);
        }
        if let Some(cause) = root.map(ToString::to_string)
            && !message.contains(&cause)
        {
            message = if message.is_empty() {
                cause
            } else {
                format!("{message}: {cause}")
            };
        }
        Self {
            code: code_name(code),
            message,
        }
    }
}

/// A client of `pi.ai.v1.ModelService` over one HTTP/2 channel (plaintext); cheap to clone.
///
/// Every failure becomes the stream's `error` event, carrying everything received before it, and
/// [`AssistantMessageEventStream::failure`] says which: a non-OK status or transport failure is
/// ERROR with the status message (the code's name when the message is empty), failure
/// [`StreamFailure::Status`]; a stream that closes without a terminal event, an event that does
/// not decode or breaks a stream rule, or block events beyond the size limit are ERROR with
/// failure [`StreamFailure::Rule`]; [`AssistantMessageEventStream::cancel`] is ABORTED "cancelled"
/// with no failure.
///
/// A stream calls `StreamBatched`, whose messages each carry one or more events, and falls back
/// to `Stream` (one event per message) when that call fails with UNIMPLEMENTED before any event,
/// within the same deadline. [`ModelClient::with_batched`]`(false)` calls `Stream` only. Either
/// way the stream yields the same events, each with its own partial and index.
///
/// A server that keeps its streams names each in its start event (`StartEvent.stream_id`) and
/// numbers the events (`ModelEvent.seq`; the stream applies each once, rule `sequence`). When
/// such a call fails with UNAVAILABLE (the connection lost) or ends without a terminal event, the
/// stream resumes it by itself: it waits [`RESUME_BACKOFF`], doubled on each attempt in a row,
/// then calls `Resume` after the last event applied, within what is left of the deadline, so its
/// consumer sees one uninterrupted stream. At most [`MAX_RESUMES`] attempts follow one another
/// without an event between; when it cannot resume, the stream ends as it would have (the
/// status, or rule `terminal-missing`), and a `Resume` refused (NOT_FOUND, OUT_OF_RANGE, ...)
/// ends it with that status. A stream of such a call that its caller cancels, or drops before
/// its end, also sends `Cancel` for its stream id to the server, which cannot tell a cancel from
/// a connection lost: best effort, without waiting (1 s at most, failures ignored).
#[derive(Debug, Clone)]
pub struct ModelClient {
    channel: Channel,
    /// The runtime the client was made on, which runs the `Cancel` calls of cancelled streams.
    runtime: Option<Handle>,
    default_timeout: Option<Duration>,
    catalog_timeout: Option<Duration>,
    max_message_bytes: u64,
    metadata: Vec<(String, String)>,
    batched: bool,
}

impl ModelClient {
    /// A client of the server at `target`, `host:port` or a URL such as `http://host:port`.
    ///
    /// The channel connects on the first call, so a server that is not there shows up as that
    /// call's ERROR event, not here. Must be called inside a tokio runtime.
    pub fn new(target: &str) -> Result<Self, tonic::transport::Error> {
        let uri = if target.contains("://") {
            target.to_owned()
        } else {
            format!("http://{target}")
        };
        Ok(Self {
            channel: Endpoint::from_shared(uri)?.connect_lazy(),
            runtime: Handle::try_current().ok(),
            default_timeout: Some(DEFAULT_TIMEOUT),
            catalog_timeout: Some(DEFAULT_CATALOG_TIMEOUT),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            metadata: Vec::new(),
            batched: true,
        })
    }

    /// The same client, calling `StreamBatched` first (`true`, the default: one message per
    /// batch of events, falling back to `Stream` on UNIMPLEMENTED) or `Stream` only (`false`:
    /// one message per event, as grpcurl and other servers' clients see it).
    #[must_use]
    pub fn with_batched(mut self, batched: bool) -> Self {
        self.batched = batched;
        self
    }

    /// The same client, sending `key: value` (ASCII) with every call, e.g. `authorization`.
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.push((key.into(), value.into()));
        self
    }

    /// The same client with another deadline for catalog calls; `None` for no deadline.
    #[must_use]
    pub fn with_catalog_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.catalog_timeout = timeout;
        self
    }

    /// The same client with another deadline for calls that set none; `None` for no deadline.
    #[must_use]
    pub fn with_default_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// The same client, ending a stream whose block events add up to more than `limit` bytes of
    /// UTF-8 (rule `size-limit`; default [`DEFAULT_MAX_MESSAGE_BYTES`], 64 MiB).
    #[must_use]
    pub fn with_max_message_bytes(mut self, limit: u64) -> Self {
        self.max_message_bytes = limit;
        self
    }

    /// Start one model call; [`AssistantMessageEventStream::partial`] is the message rebuilt from
    /// its events. The call is read as the stream is consumed (or by
    /// [`AssistantMessageEventStream::result`]).
    pub fn stream(
        &self,
        context: AgentContext,
        options: CallOptions,
    ) -> AssistantMessageEventStream {
        let request = StreamRequest {
            provider: options.provider,
            model: options.model,
            context: Some(context),
            options: options.generation,
            coalesce_deltas: options.coalesce_deltas,
            resumable: true, // every client here resumes a stream cut off
            ..Default::default()
        };
        let timeout = options
            .timeout
            .or(self.default_timeout)
            .map(|limit| limit.min(LONGEST_TIMEOUT));
        let events =
            AssistantMessageEventStream::new().with_max_message_bytes(self.max_message_bytes);
        // Encoded once: a fallback to Stream sends the same bytes.
        let body = Bytes::from(request.encode_to_vec());
        // The deadline is set per call opened (a fallback gets what is left of it).
        let request = match self.request(body, None, &options.metadata) {
            Ok(request) => request,
            Err(error) => {
                events.fail_with(StreamFailure::Status {
                    code: error.code,
                    message: error.message,
                });
                return events;
            }
        };
        let (metadata, _, body) = request.into_parts();
        // A terminal event carries the whole message: room for the deltas twice, and then some.
        // A batch is held to the same limit: it holds at most the whole stream, whose deltas are
        // held to the delta limit.
        let largest_message = self
            .max_message_bytes
            .saturating_mul(2)
            .saturating_add(1 << 20);
        let opener = Opener {
            channel: self.channel.clone(),
            metadata,
            body,
            largest_message: usize::try_from(largest_message).unwrap_or(usize::MAX),
        };
        let now = Instant::now();
        let canceller = Canceller {
            channel: self.channel.clone(),
            metadata: opener.metadata.clone(),
            runtime: self.runtime.clone(),
        };
        let call = Call {
            // The timeout is for the server; ours is Call::deadline.
            phase: Phase::Opening(opener.open(self.batched, timeout)),
            // None for a deadline past what this platform's clock can hold: as good as none.
            deadline: timeout
                .and_then(|limit| now.checked_add(limit))
                .map(|deadline| Box::pin(tokio::time::sleep_until(deadline))),
            received: 0,
            opener,
            fallback: self.batched,
            batch: None,
            numbering: Numbering::new(options.coalesce_deltas),
            coalesce_deltas: options.coalesce_deltas,
            stream_id: String::new(),
            resumes: 0,
        };
        events.read_from(Box::pin(call));
        events.on_cancel(Box::new(move |stream_id| canceller.send(stream_id)));
        events
    }

    /// The models the server serves, in its catalog's order; only `provider`'s unless it is
    /// empty.
    pub async fn list_models(&self, provider: &str) -> Result<Vec<Model>, CallError> {
        let request = ListModelsRequest {
            provider: provider.to_owned(),
        };
        let request = self.request(request, self.catalog_timeout, &[])?;
        let mut service = ModelServiceClient::new(self.channel.clone());
        let response = service.list_models(request).await;
        Ok(response
            .map_err(|status| CallError::from(&status))?
            .into_inner()
            .models)
    }

    /// The model `id` of `provider` (empty for the only provider that serves it); NOT_FOUND,
    /// naming what the server serves, when it does not serve that model.
    pub async fn get_model(&self, id: &str, provider: &str) -> Result<Model, CallError> {
        let request = GetModelRequest {
            provider: provider.to_owned(),
            id: id.to_owned(),
        };
        let request = self.request(request, self.catalog_timeout, &[])?;
        let mut service = ModelServiceClient::new(self.channel.clone());
        let response = service.get_model(request).await;
        let response = response.map_err(|status| CallError::from(&status))?;
        response.into_inner().model.ok_or_else(|| CallError {
            code: "INTERNAL",
            message: "the server answered GetModel without a model".to_owned(),
        })
    }

    /// A request with the call's deadline and the client's metadata, then the call's.
    fn request<T>(
        &self,
        message: T,
        timeout: Option<Duration>,
        metadata: &[(String, String)],
    ) -> Result<tonic::Request<T>, CallError> {
        let mut request = tonic::Request::new(message);
        if let Some(limit) = timeout {
            request.set_timeout(limit.min(LONGEST_TIMEOUT));
        }
        for (key, value) in self.metadata.iter().chain(metadata) {
            let key = MetadataKey::from_bytes(key.as_bytes());
            let value = MetadataValue::try_from(value.as_str());
            let (Ok(key), Ok(value)) = (key, value) else {
                return Err(CallError {
                    code: "INVALID_ARGUMENT",
                    message: "request metadata must be ASCII keys and values".to_owned(),
                });
            };
            request.metadata_mut().insert(key, value);
        }
        Ok(request)
    }
}

type Opening = Pin<Box<dyn Future<Output = Result<Messages, Status>> + Send>>;

/// A call's response messages, each read by the generated parser.
enum Messages {
    /// StreamBatched's, each one batch of events.
    Batched(Box<Streaming<Decoded<StreamBatchedView>>>),
    /// Stream's and Resume's, each one event.
    Single(Box<Streaming<Decoded<ModelEvent>>>),
}

/// What it takes to open the calls of one stream: the encoded request and its metadata.
struct Opener {
    channel: Channel,
    /// The client's metadata and the call's, without the deadline.
    metadata: MetadataMap,
    body: Bytes,
    largest_message: usize,
}

impl Opener {
    /// Open StreamBatched (`batched`) or Stream, telling the server `timeout`.
    fn open(&self, batched: bool, timeout: Option<Duration>) -> Opening {
        let method = if batched {
            BATCHED_METHOD
        } else {
            STREAM_METHOD
        };
        self.call(method, self.body.clone(), batched, timeout)
    }

    /// Open Resume: the events of stream `stream_id` after `after_seq`, one per message.
    fn resume(
        &self,
        stream_id: &str,
        after_seq: u64,
        coalesce_deltas: bool,
        timeout: Option<Duration>,
    ) -> Opening {
        let request = ResumeRequest {
            stream_id: stream_id.to_owned(),
            after_seq,
            coalesce_deltas,
        };
        let body = Bytes::from(request.encode_to_vec());
        self.call(RESUME_METHOD, body, false, timeout)
    }

    fn call(
        &self,
        method: &'static str,
        body: Bytes,
        batched: bool,
        timeout: Option<Duration>,
    ) -> Opening {
        let mut request =
            tonic::Request::from_parts(self.metadata.clone(), Extensions::default(), body);
        if let Some(limit) = timeout {
            request.set_timeout(limit);
        }
        let mut grpc = tonic::client::Grpc::new(self.channel.clone())
            .max_decoding_message_size(self.largest_message);
        Box::pin(async move {
            grpc.ready()
                .await
                .map_err(|error| Status::unavailable(error.to_string()))?;
            let path = PathAndQuery::from_static(method);
            if batched {
                let response = grpc.server_streaming(request, path, CallCodec::default());
                Ok(Messages::Batched(Box::new(response.await?.into_inner())))
            } else {
                let response = grpc.server_streaming(request, path, CallCodec::default());
                Ok(Messages::Single(Box::new(response.await?.into_inner())))
            }
        })
    }
}

/// Sends `Cancel` for a stream its caller cancelled: the server keeps a stream running for a
/// while after its client goes away, and cannot tell a cancel from a connection lost.
struct Canceller {
    channel: Channel,
    metadata: MetadataMap,
    runtime: Option<Handle>,
}

impl Canceller {
    /// Send the call on its own, without waiting for it; best effort: a stream nobody reads is
    /// cancelled by its server soon after anyway.
    fn send(self, stream_id: &str) {
        let Some(runtime) = self.runtime else {
            return;
        };
        let request = CancelRequest {
            stream_id: stream_id.to_owned(),
        };
        let mut request = tonic::Request::from_parts(self.metadata, Extensions::default(), request);
        request.set_timeout(CANCEL_TIMEOUT);
        let mut service = ModelServiceClient::new(self.channel);
        runtime.spawn(async move {
            let _ = tokio::time::timeout(CANCEL_TIMEOUT, service.cancel(request)).await;
        });
    }
}

/// One call as a stream of events, or of the failure that ends it: the first call, then the
/// Resume calls that go on with it when it is cut off.
struct Call {
    phase: Phase,
    deadline: Option<Pin<Box<Sleep>>>,
    /// Events applied so far (not messages, nor repeats dropped): the index of the next event.
    received: usize,
    opener: Opener,
    /// While StreamBatched has not yet delivered an event: whether to open the Stream call that
    /// replaces it if the server answers UNIMPLEMENTED.
    fallback: bool,
    /// The batch at hand: its events are decoded one at a time, as they are consumed, so each
    /// is applied (and its partial rebuilt) before the next.
    batch: Option<Batch>,
    numbering: Numbering,
    coalesce_deltas: bool,
    /// The server's id of the stream, from its start event; empty when it keeps none.
    stream_id: String,
    /// Resumes in a row, since the last event applied.
    resumes: u32,
}

enum Phase {
    /// Waiting for the response headers.
    Opening(Opening),
    /// Reading the messages: each one event, or one batch of them.
    Open(Messages),
    /// Waiting before the call that resumes a call cut off.
    Resuming(Pin<Box<Sleep>>),
}

impl Call {
    /// The next event of the batch at hand, `Some(None)` for a repeat dropped; `None` once the
    /// batch is used up.
    fn next_in_batch(&mut self) -> Option<Option<Result<ModelEvent, StreamFailure>>> {
        let event = self.batch.as_mut()?.next();
        if event.is_none() {
            self.batch = None;
        }
        Some(self.event(ModelEvent::decode(event?)))
    }

    /// The next event, as it decoded, or `None` for a repeat to drop. Bytes from the network:
    /// whatever they hold, a failure to read them is rule `event-decode`, at this event's index.
    fn event(
        &mut self,
        decoded: Result<ModelEvent, DecodeError>,
    ) -> Option<Result<ModelEvent, StreamFailure>> {
        let index = self.received;
        // An event has come: the call stays the one it is.
        self.fallback = false;
        let event = match decoded {
            Ok(event) => event,
            Err(error) => {
                let detail = format!("the message is not a ModelEvent: {error}");
                let rule = StreamProtocolError::new(index, StreamRule::EventDecode, detail);
                return Some(Err(StreamFailure::Rule(rule)));
            }
        };
        match self.numbering.admit(&event, index) {
            // A repeat of an event applied before the stream resumed.
            Ok(false) => return None,
            Err(broken) => return Some(Err(StreamFailure::Rule(broken))),
            Ok(true) => {}
        }
        self.received += 1;
        self.resumes = 0;
        if let Some(Event::Start(start)) = &event.event {
            self.stream_id.clone_from(&start.stream_id);
        }
        Some(Ok(event))
    }

    /// What is left of the deadline; `None` for no deadline.
    fn left(&self) -> Option<Duration> {
        self.deadline.as_ref().map(|deadline| {
            deadline
                .deadline()
                .saturating_duration_since(Instant::now())
        })
    }

    /// Resume a call cut off after its stream id arrived: wait, then make the Resume call that
    /// goes on after the last event applied. False when it cannot: no stream id, the attempts or
    /// the deadline used up.
    fn resume(&mut self) -> bool {
        if self.stream_id.is_empty() || self.resumes >= MAX_RESUMES {
            return false;
        }
        let wait = RESUME_BACKOFF * 2u32.pow(self.resumes);
        if let Some(deadline) = &self.deadline
            && Instant::now() + wait >= deadline.deadline()
        {
            return false;
        }
        self.resumes += 1;
        // The call cut off goes now: dropping it ends the RPC.
        self.phase = Phase::Resuming(Box::pin(tokio::time::sleep(wait)));
        true
    }
}

impl Stream for Call {
    type Item = Result<ModelEvent, StreamFailure>;

    fn poll_next(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(deadline) = this.deadline.as_mut()
            && deadline.as_mut().poll(context).is_ready()
        {
            let message = "the call's deadline passed".to_owned();
            let code = code_name(Code::DeadlineExceeded);
            return Poll::Ready(Some(Err(StreamFailure::Status { code, message })));
        }
        loop {
            match this.next_in_batch() {
                Some(Some(item)) => return Poll::Ready(Some(item)),
                Some(None) => continue,
                None => {}
            }
            let status = match &mut this.phase {
                Phase::Opening(opening) => match ready!(opening.as_mut().poll(context)) {
                    Ok(messages) => {
                        this.phase = Phase::Open(messages);
                        continue;
                    }
                    Err(status) => status,
                },
                Phase::Resuming(wait) => {
                    ready!(wait.as_mut().poll(context));
                    let (after, left) = (this.numbering.last(), this.left());
                    let opening =
                        this.opener
                            .resume(&this.stream_id, after, this.coalesce_deltas, left);
                    this.phase = Phase::Opening(opening);
                    continue;
                }
                Phase::Open(Messages::Batched(messages)) => {
                    match ready!(Pin::new(messages.as_mut()).poll_next(context)) {
                        Some(Ok(Ok(view))) => {
                            this.batch = Some(Batch::new(view));
                            continue;
                        }
                        Some(Ok(Err(error))) => {
                            // None of its events is applied: it fails at its first one's index.
                            let detail = format!("the message is not a StreamBatchedView: {error}");
                            let index = this.received;
                            let rule =
                                StreamProtocolError::new(index, StreamRule::EventDecode, detail);
                            return Poll::Ready(Some(Err(StreamFailure::Rule(rule))));
                        }
                        Some(Err(status)) => status,
                        None if this.resume() => continue,
                        None => return Poll::Ready(None),
                    }
                }
                Phase::Open(Messages::Single(messages)) => {
                    match ready!(Pin::new(messages.as_mut()).poll_next(context)) {
                        Some(Ok(decoded)) => match this.event(decoded) {
                            Some(item) => return Poll::Ready(Some(item)),
                            None => continue,
                        },
                        Some(Err(status)) => status,
                        // Ended without a terminal event: the stream is cut short.
                        None if this.resume() => continue,
                        None => return Poll::Ready(None),
                    }
                }
            };
            if status.code() == Code::Unimplemented && this.fallback {
                // A server without StreamBatched: Stream, within what is left of the deadline.
                this.fallback = false;
                this.phase = Phase::Opening(this.opener.open(false, this.left()));
                continue;
            }
            let failure = status_failure(&status);
            // A connection lost, not a call refused.
            if matches!(
                failure,
                StreamFailure::Status {
                    code: "UNAVAILABLE",
                    ..
                }
            ) && this.resume()
            {
                continue;
            }
            return Poll::Ready(Some(Err(failure)));
        }
    }
}

/// The failure of a call that a status ended.
fn status_failure(status: &Status) -> StreamFailure {
    let CallError { code, message } = CallError::from(status);
    StreamFailure::Status { code, message }
}

/// The gRPC name of a status code, as every gRPC runtime spells it.
fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_keeps_its_code_and_message() {
        let status = Status::invalid_argument("context: required");
        assert_eq!(
            status_failure(&status),
            StreamFailure::Status {
                code: "INVALID_ARGUMENT",
                message: "context: required".to_owned()
            }
        );
    }

    #[test]
    fn an_empty_status_message_reads_as_the_code_name() {
        let failure = status_failure(&Status::new(Code::ResourceExhausted, ""));
        assert_eq!(failure.to_string(), "RESOURCE_EXHAUSTED");
    }
}
