//! The gRPC client of `pi.ai.v1.ModelService`: streams whose iteration never fails (read through
//! `StreamBatched`, or `Stream` on a server without it), and the model catalog (`ListModels`,
//! `GetModel`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes};
use futures_core::Stream;
use prost::Message;
use tokio::time::{Instant, Sleep};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder, Streaming};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Extensions, Response, Status};

use crate::accumulator::{DEFAULT_MAX_MESSAGE_BYTES, StreamProtocolError};
use crate::event_stream::{EventStream, StreamFailure};
use crate::v1::model_service_client::ModelServiceClient;
use crate::v1::{
    AgentContext, GenerationOptions, GetModelRequest, ListModelsRequest, Model, ModelEvent,
    StreamRequest,
};

/// The deadline of a call that sets none: 15 minutes, longer than a server's usual stream limit.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(900);

/// The deadline of a catalog call (`list_models`, `get_model`) unless the client sets another.
pub const DEFAULT_CATALOG_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest deadline gRPC can send (`grpc-timeout` holds at most 8 digits: 99,999,999 hours,
/// about 11,400 years). A longer one, `Duration::MAX` say, is sent as this: practically none.
const LONGEST_TIMEOUT: Duration = Duration::from_secs(99_999_999 * 3600);

const STREAM_METHOD: &str = "/pi.ai.v1.ModelService/Stream";
const BATCHED_METHOD: &str = "/pi.ai.v1.ModelService/StreamBatched";

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
/// [`EventStream::failure`] says which: a non-OK status or transport failure is ERROR with the
/// status message (the code's name when the message is empty), failure
/// [`StreamFailure::Status`]; a stream that closes without a terminal event, an event that does
/// not decode or breaks a stream rule, or block events beyond the size limit are ERROR with failure
/// [`StreamFailure::Rule`]; [`EventStream::cancel`] is ABORTED "cancelled" with no failure.
///
/// A stream calls `StreamBatched`, whose messages each carry one or more events, and falls back
/// to `Stream` (one event per message) when that call fails with UNIMPLEMENTED before any event,
/// within the same deadline. [`ModelClient::with_batched`]`(false)` calls `Stream` only. Either
/// way the stream yields the same events, each with its own partial and index.
#[derive(Debug, Clone)]
pub struct ModelClient {
    channel: Channel,
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

    /// The same client, ending a stream whose block events add up to more than `limit` bytes of UTF-8
    /// (rule `size-limit`; default [`DEFAULT_MAX_MESSAGE_BYTES`], 64 MiB).
    #[must_use]
    pub fn with_max_message_bytes(mut self, limit: u64) -> Self {
        self.max_message_bytes = limit;
        self
    }

    /// Start one model call; [`EventStream::partial`] is the message rebuilt from its events. The
    /// call is read as the stream is consumed (or by [`EventStream::result`]).
    pub fn stream(&self, context: AgentContext, options: CallOptions) -> EventStream {
        let request = StreamRequest {
            provider: options.provider,
            model: options.model,
            context: Some(context),
            options: options.generation,
            coalesce_deltas: options.coalesce_deltas,
        };
        let timeout = options
            .timeout
            .or(self.default_timeout)
            .map(|limit| limit.min(LONGEST_TIMEOUT));
        let events = EventStream::new().with_max_message_bytes(self.max_message_bytes);
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
        let (method, fallback) = if self.batched {
            (BATCHED_METHOD, Some(opener.clone()))
        } else {
            (STREAM_METHOD, None)
        };
        let call = Call {
            // The timeout is for the server; ours is Call::deadline.
            phase: Phase::Opening(opener.open(method, timeout)),
            // None for a deadline past what this platform's clock can hold: as good as none.
            deadline: timeout
                .and_then(|limit| now.checked_add(limit))
                .map(|deadline| Box::pin(tokio::time::sleep_until(deadline))),
            received: 0,
            batched: self.batched,
            fallback,
            batch: Bytes::new(),
        };
        events.read_from(Box::pin(call));
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

type Opening = Pin<Box<dyn Future<Output = Result<Response<Streaming<Bytes>>, Status>> + Send>>;

/// What it takes to open a streaming call: the encoded request and its metadata.
#[derive(Clone)]
struct Opener {
    channel: Channel,
    /// The client's metadata and the call's, without the deadline.
    metadata: MetadataMap,
    body: Bytes,
    largest_message: usize,
}

impl Opener {
    /// Open `method` (Stream or StreamBatched), telling the server `timeout`.
    fn open(&self, method: &'static str, timeout: Option<Duration>) -> Opening {
        let mut request = tonic::Request::from_parts(
            self.metadata.clone(),
            Extensions::default(),
            self.body.clone(),
        );
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
            grpc.server_streaming(request, path, RawCodec).await
        })
    }
}

/// One call as a stream of events, or of the failure that ends it.
struct Call {
    phase: Phase,
    deadline: Option<Pin<Box<Sleep>>>,
    /// Events read so far (not messages): the index of the next event.
    received: usize,
    /// Whether each message is a StreamBatchedResponse (else a ModelEvent).
    batched: bool,
    /// While StreamBatched has not yet delivered an event: opens the Stream call that replaces
    /// it if the server answers UNIMPLEMENTED.
    fallback: Option<Opener>,
    /// What is left of the StreamBatchedResponse at hand: its events are split off one at a time,
    /// as they are consumed, so each is applied (and its partial rebuilt) before the next.
    batch: Bytes,
}

enum Phase {
    /// Waiting for the response headers.
    Opening(Opening),
    /// Reading the messages: each one event, or one batch of them.
    Open(Box<Streaming<Bytes>>),
}

impl Call {
    /// The next event's bytes split off the batch at hand; `None` once it is used up.
    fn next_in_batch(&mut self) -> Option<Result<ModelEvent, StreamFailure>> {
        if self.batch.is_empty() {
            return None;
        }
        match split_event(&mut self.batch) {
            Ok(Some(event)) => Some(self.decode(event)),
            Ok(None) => None,
            Err(detail) => {
                // The events in front of it were applied; it fails at the next event's index.
                self.batch = Bytes::new();
                let detail = format!("cannot decode the batch: {detail}");
                let rule = StreamProtocolError::new(self.received, "event-decode", detail);
                Some(Err(StreamFailure::Rule(rule)))
            }
        }
    }

    /// Decode the next event. Bytes from the network: whatever they hold, a failure to read them
    /// is rule `event-decode`, at this event's index.
    fn decode(&mut self, bytes: Bytes) -> Result<ModelEvent, StreamFailure> {
        let index = self.received;
        self.received += 1;
        // An event has come: the call stays the one it is.
        self.fallback = None;
        ModelEvent::decode(bytes).map_err(|error| {
            let detail = format!("the message is not a ModelEvent: {error}");
            StreamFailure::Rule(StreamProtocolError::new(index, "event-decode", detail))
        })
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
            if let Some(item) = this.next_in_batch() {
                return Poll::Ready(Some(item));
            }
            let item = match &mut this.phase {
                Phase::Opening(opening) => match ready!(opening.as_mut().poll(context)) {
                    Ok(response) => {
                        this.phase = Phase::Open(Box::new(response.into_inner()));
                        continue;
                    }
                    Err(status) => Err(status),
                },
                Phase::Open(messages) => {
                    match ready!(Pin::new(messages.as_mut()).poll_next(context)) {
                        Some(item) => item,
                        None => return Poll::Ready(None),
                    }
                }
            };
            match item {
                Ok(bytes) if this.batched => this.batch = bytes,
                Ok(bytes) => return Poll::Ready(Some(this.decode(bytes))),
                Err(status) => {
                    if status.code() == Code::Unimplemented
                        && let Some(opener) = this.fallback.take()
                    {
                        // A server without StreamBatched: Stream, within what is left of the
                        // deadline.
                        let left = this.deadline.as_ref().map(|deadline| {
                            deadline
                                .deadline()
                                .saturating_duration_since(Instant::now())
                        });
                        this.phase = Phase::Opening(opener.open(STREAM_METHOD, left));
                        this.batched = false;
                        continue;
                    }
                    return Poll::Ready(Some(Err(status_failure(&status))));
                }
            }
        }
    }
}

/// Split the next event off the bytes of a StreamBatchedResponse: field 1, length-delimited;
/// other fields are skipped by their wire type. `Ok(None)` when no event is left; `Err` names
/// what is malformed (the bytes are then of no further use).
///
/// Done by hand rather than by the generated parser, which would refuse the whole batch: the
/// events in front of a malformed one are applied, and it fails at its own index.
fn split_event(rest: &mut Bytes) -> Result<Option<Bytes>, String> {
    while !rest.is_empty() {
        let key = varint(rest)?;
        let (field, wire_type) = (key >> 3, key & 7);
        if field == 0 {
            return Err("a field numbered 0".to_owned());
        }
        match wire_type {
            2 => {
                let size = varint(rest)?;
                let Some(size) = usize::try_from(size)
                    .ok()
                    .filter(|size| *size <= rest.len())
                else {
                    let left = rest.len();
                    return Err(format!(
                        "field {field} of {size} bytes runs past the end of the message ({left} bytes left)"
                    ));
                };
                let value = rest.split_to(size);
                if field == 1 {
                    return Ok(Some(value));
                }
            }
            _ if field == 1 => {
                return Err(format!("field 1 (events) has wire type {wire_type}, not 2"));
            }
            0 => {
                varint(rest)?;
            }
            1 | 5 => {
                let size = if wire_type == 1 { 8 } else { 4 };
                if rest.len() < size {
                    return Err(format!(
                        "field {field} (wire type {wire_type}) is cut short"
                    ));
                }
                rest.advance(size);
            }
            _ => {
                return Err(format!(
                    "field {field} has wire type {wire_type}, which this message cannot hold"
                ));
            }
        }
    }
    Ok(None)
}

/// A varint read off the front of `rest`.
fn varint(rest: &mut Bytes) -> Result<u64, String> {
    let mut value = 0u64;
    for (at, byte) in rest.iter().take(10).enumerate() {
        value |= u64::from(byte & 0x7F) << (7 * at);
        if byte & 0x80 == 0 {
            rest.advance(at + 1);
            return Ok(value);
        }
    }
    Err("a varint is cut short or longer than 10 bytes".to_owned())
}

/// Sends the request as it was encoded and hands each response message over as bytes, so the
/// call splits and decodes it and an undecodable event is named by its index.
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = BytesEncoder;
    type Decoder = BytesDecoder;

    fn encoder(&mut self) -> BytesEncoder {
        BytesEncoder
    }

    fn decoder(&mut self) -> BytesDecoder {
        BytesDecoder
    }
}

struct BytesEncoder;

impl Encoder for BytesEncoder {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

struct BytesDecoder;

impl Decoder for BytesDecoder {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
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

    /// Every event split off `batch`, and what stopped the split, if anything did.
    fn split_all(batch: &[u8]) -> (Vec<Vec<u8>>, Option<String>) {
        let mut rest = Bytes::copy_from_slice(batch);
        let mut events = Vec::new();
        loop {
            match split_event(&mut rest) {
                Ok(Some(event)) => events.push(event.to_vec()),
                Ok(None) => return (events, None),
                Err(detail) => return (events, Some(detail)),
            }
        }
    }

    #[test]
    fn a_batch_splits_into_its_events_and_skips_other_fields() {
        let batch = [
            &[0x0a, 2, 0xaa, 0xbb][..],
            &[0x10, 0x96, 0x01],             // field 2, a varint
            &[0x19, 1, 2, 3, 4, 5, 6, 7, 8], // field 3, fixed64
            &[0x0a, 0],                      // an empty event
            &[0x22, 1, 0xcc],                // field 4, length-delimited
            &[0x2d, 1, 2, 3, 4],             // field 5, fixed32
            &[0x0a, 1, 0xdd],
        ]
        .concat();
        let (events, failure) = split_all(&batch);
        assert_eq!(events, [vec![0xaa, 0xbb], vec![], vec![0xdd]]);
        assert_eq!(failure, None);
        assert_eq!(split_all(&[]), (vec![], None));
    }

    #[test]
    fn a_malformed_field_stops_the_split_after_the_events_before_it() {
        let good = [0x0a, 1, 0xaa];
        let cases: [(&[u8], &str); 7] = [
            (&[0x0a, 5, 1, 2], "runs past the end"),
            (&[0x0a], "varint is cut short"),
            (&[0x0a, 0x80], "varint is cut short"),
            (&[0x08, 1], "field 1 (events) has wire type 0"),
            (&[0x1b], "wire type 3"),
            (&[0x19, 1, 2, 3], "cut short"),
            (&[0x02, 0], "numbered 0"),
        ];
        for (tail, expected) in cases {
            let (events, failure) = split_all(&[&good[..], tail].concat());
            assert_eq!(events, [vec![0xaa]], "{tail:?}");
            let failure = failure.unwrap_or_default();
            assert!(failure.contains(expected), "{tail:?}: {failure}");
        }
        let long = [0xff; 11];
        assert!(split_all(&long).1.unwrap().contains("longer than 10 bytes"));
    }

    #[test]
    fn an_empty_status_message_reads_as_the_code_name() {
        let failure = status_failure(&Status::new(Code::ResourceExhausted, ""));
        assert_eq!(failure.to_string(), "RESOURCE_EXHAUSTED");
    }
}
