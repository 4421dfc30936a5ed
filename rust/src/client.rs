//! The gRPC client of `pi.ai.v1.ModelService`: streams whose iteration never fails, and the
//! model catalog (`ListModels`, `GetModel`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::{Buf, Bytes};
use futures_core::Stream;
use prost::Message;
use tokio::time::{Instant, Sleep};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder, Streaming};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::metadata::{MetadataKey, MetadataValue};
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Response, Status};

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

const STREAM_METHOD: &str = "/pi.ai.v1.ModelService/Stream";

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
    /// status `DEADLINE_EXCEEDED`.
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
    /// cause is appended to the message ("Connection refused").
    fn from(status: &Status) -> Self {
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
            code: code_name(status.code()),
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
/// not decode or breaks a stream rule, or deltas beyond the size limit are ERROR with failure
/// [`StreamFailure::Rule`]; [`EventStream::cancel`] is ABORTED "cancelled" with no failure.
#[derive(Debug, Clone)]
pub struct ModelClient {
    channel: Channel,
    default_timeout: Option<Duration>,
    catalog_timeout: Option<Duration>,
    max_message_bytes: u64,
    metadata: Vec<(String, String)>,
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
        })
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

    /// The same client, ending a stream whose deltas add up to more than `limit` bytes of UTF-8
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
        let timeout = options.timeout.or(self.default_timeout);
        let events = EventStream::new().with_max_message_bytes(self.max_message_bytes);
        // The timeout is for the server; ours is Call::deadline.
        let request = match self.request(request, timeout, &options.metadata) {
            Ok(request) => request,
            Err(error) => {
                events.fail_with(StreamFailure::Status {
                    code: error.code,
                    message: error.message,
                });
                return events;
            }
        };
        // A terminal event carries the whole message: room for the deltas twice, and then some.
        let largest_event = self
            .max_message_bytes
            .saturating_mul(2)
            .saturating_add(1 << 20);
        let mut grpc = tonic::client::Grpc::new(self.channel.clone())
            .max_decoding_message_size(usize::try_from(largest_event).unwrap_or(usize::MAX));
        let opening = async move {
            grpc.ready()
                .await
                .map_err(|error| Status::unavailable(error.to_string()))?;
            let path = PathAndQuery::from_static(STREAM_METHOD);
            grpc.server_streaming(request, path, EventCodec).await
        };
        let call = Call {
            phase: Phase::Opening(Box::pin(opening)),
            deadline: timeout
                .map(|limit| Box::pin(tokio::time::sleep_until(Instant::now() + limit))),
            received: 0,
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
            request.set_timeout(limit);
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

/// One call as a stream of events, or of the failure that ends it.
struct Call {
    phase: Phase,
    deadline: Option<Pin<Box<Sleep>>>,
    /// Messages received so far: the index of the next event.
    received: usize,
}

enum Phase {
    /// Waiting for the response headers.
    Opening(Opening),
    /// Reading the messages, each one event.
    Open(Box<Streaming<Bytes>>),
}

impl Stream for Call {
    type Item = Result<ModelEvent, StreamFailure>;

    fn poll_next(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(deadline) = self.deadline.as_mut()
            && deadline.as_mut().poll(context).is_ready()
        {
            let message = "the call's deadline passed".to_owned();
            let code = code_name(Code::DeadlineExceeded);
            return Poll::Ready(Some(Err(StreamFailure::Status { code, message })));
        }
        let item = match &mut self.phase {
            Phase::Opening(opening) => match ready!(opening.as_mut().poll(context)) {
                Ok(response) => {
                    self.phase = Phase::Open(Box::new(response.into_inner()));
                    return self.poll_next(context);
                }
                Err(status) => Some(Err(status)),
            },
            Phase::Open(messages) => ready!(Pin::new(messages.as_mut()).poll_next(context)),
        };
        let index = self.received;
        Poll::Ready(item.map(|item| {
            let bytes = item.map_err(|status| status_failure(&status))?;
            self.received += 1;
            // Bytes from the network: whatever they hold, a failure to read them is this rule.
            ModelEvent::decode(bytes).map_err(|error| {
                let detail = format!("the message is not a ModelEvent: {error}");
                StreamFailure::Rule(StreamProtocolError::new(index, "event-decode", detail))
            })
        }))
    }
}

/// Encodes the request with prost and hands each response message over as bytes, so the
/// stream decodes it and an undecodable one is named by its index.
struct EventCodec;

impl Codec for EventCodec {
    type Encode = StreamRequest;
    type Decode = Bytes;
    type Encoder = RequestEncoder;
    type Decoder = BytesDecoder;

    fn encoder(&mut self) -> RequestEncoder {
        RequestEncoder
    }

    fn decoder(&mut self) -> BytesDecoder {
        BytesDecoder
    }
}

struct RequestEncoder;

impl Encoder for RequestEncoder {
    type Item = StreamRequest;
    type Error = Status;

    fn encode(&mut self, item: StreamRequest, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        item.encode(dst)
            .map_err(|error| Status::internal(error.to_string()))
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

    #[test]
    fn an_empty_status_message_reads_as_the_code_name() {
        let failure = status_failure(&Status::new(Code::ResourceExhausted, ""));
        assert_eq!(failure.to_string(), "RESOURCE_EXHAUSTED");
    }
}
