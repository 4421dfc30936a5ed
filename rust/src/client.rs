//! The gRPC client of `pi.ai.v1.ModelService/Stream`: streams whose iteration never fails.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_core::Stream;
use tokio::time::{Instant, Sleep};
use tonic::codec::Streaming;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Response, Status};

use crate::event_stream::EventStream;
use crate::v1::model_service_client::ModelServiceClient;
use crate::v1::{AgentContext, GenerationOptions, ModelEvent, StreamRequest};

/// What one call may set besides its context.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// The model id to call; empty for the server's default model.
    pub model: String,
    /// Options for this call; `None` for the model's defaults.
    pub generation: Option<GenerationOptions>,
    /// The call's deadline; passing it ends the stream with ERROR "Deadline Exceeded".
    pub timeout: Option<Duration>,
}

/// A client of `pi.ai.v1.ModelService` over one HTTP/2 channel (plaintext); cheap to clone.
///
/// Every failure becomes the stream's `error` event, carrying everything received before it: a
/// non-OK status or transport failure is ERROR with the status message (the code name when the
/// message is empty); a stream that closes without a terminal event is ERROR "stream ended
/// without a terminal event"; an event that breaks the stream rules is ERROR naming the event and
/// the rule; [`EventStream::cancel`] is ABORTED "cancelled".
#[derive(Debug, Clone)]
pub struct ModelClient {
    service: ModelServiceClient<Channel>,
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
        let channel = Endpoint::from_shared(uri)?.connect_lazy();
        Ok(Self {
            service: ModelServiceClient::new(channel),
        })
    }

    /// Start one model call; [`EventStream::partial`] is the message rebuilt from its events. The
    /// call is read as the stream is consumed (or by [`EventStream::result`]).
    pub fn stream(&self, context: AgentContext, options: CallOptions) -> EventStream {
        #[allow(clippy::needless_update)] // fields the schema adds later keep their defaults
        let request = StreamRequest {
            model: options.model,
            context: Some(context),
            options: options.generation,
            ..Default::default()
        };
        let mut request = tonic::Request::new(request);
        if let Some(limit) = options.timeout {
            request.set_timeout(limit); // the server's deadline; ours is Call::deadline
        }
        let mut service = self.service.clone();
        let call = Call {
            phase: Phase::Opening(Box::pin(async move { service.stream(request).await })),
            deadline: options
                .timeout
                .map(|limit| Box::pin(tokio::time::sleep_until(Instant::now() + limit))),
            received: 0,
        };
        EventStream::from_source(Box::pin(call))
    }
}

type Opening =
    Pin<Box<dyn Future<Output = Result<Response<Streaming<ModelEvent>>, Status>> + Send>>;

/// One call as a stream of events, or of the message of the failure that ends it.
struct Call {
    phase: Phase,
    deadline: Option<Pin<Box<Sleep>>>,
    received: usize,
}

enum Phase {
    /// Waiting for the response headers.
    Opening(Opening),
    /// Reading the events.
    Open(Box<Streaming<ModelEvent>>),
}

impl Stream for Call {
    type Item = Result<ModelEvent, String>;

    fn poll_next(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(deadline) = self.deadline.as_mut()
            && deadline.as_mut().poll(context).is_ready()
        {
            return Poll::Ready(Some(Err("Deadline Exceeded".to_owned())));
        }
        let item = match &mut self.phase {
            Phase::Opening(opening) => match ready!(opening.as_mut().poll(context)) {
                Ok(response) => {
                    self.phase = Phase::Open(Box::new(response.into_inner()));
                    return self.poll_next(context);
                }
                Err(status) => Some(Err(status)),
            },
            Phase::Open(events) => ready!(Pin::new(events.as_mut()).poll_next(context)),
        };
        let item = item.map(|result| match result {
            Ok(event) => {
                self.received += 1;
                Ok(event)
            }
            Err(status) => Err(status_message(&status, self.received)),
        });
        Poll::Ready(item)
    }
}

/// The message of a failed call: the status message unchanged, or the code's name (e.g.
/// `UNAVAILABLE`) when it is empty. Two statuses are tonic's own rather than the server's: for a
/// failure of the transport ("tcp connect error") the root cause is appended ("Connection
/// refused"), and an event that does not decode is named by its index, as in Python.
fn status_message(status: &Status, received: usize) -> String {
    const UNDECODABLE: &str = "failed to decode Protobuf message: ";
    if status.code() == Code::Internal
        && let Some(detail) = status.message().strip_prefix(UNDECODABLE)
    {
        return format!("event {received}: cannot decode ModelEvent: {detail}");
    }
    let mut message = if status.message().is_empty() {
        code_name(status.code()).to_owned()
    } else {
        status.message().to_owned()
    };
    let mut root = std::error::Error::source(status);
    while let Some(cause) = root.and_then(std::error::Error::source) {
        root = Some(cause);
    }
    if let Some(cause) = root.map(ToString::to_string)
        && !message.contains(&cause)
    {
        message = format!("{message}: {cause}");
    }
    message
}

/// The gRPC name of a status code, as other gRPC runtimes print it.
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
    fn a_status_from_the_server_is_kept_unchanged() {
        let status = Status::invalid_argument("StreamRequest.context: required");
        assert_eq!(
            status_message(&status, 0),
            "StreamRequest.context: required"
        );
        // Even one that reads like a transport failure.
        let status = Status::unavailable("tcp connect error");
        assert_eq!(status_message(&status, 0), "tcp connect error");
    }

    #[test]
    fn an_empty_status_message_becomes_the_code_name() {
        let status = Status::new(Code::ResourceExhausted, "");
        assert_eq!(status_message(&status, 0), "RESOURCE_EXHAUSTED");
    }

    #[test]
    fn an_undecodable_event_is_named_by_its_index() {
        let status =
            Status::internal("failed to decode Protobuf message: invalid wire type value: 7");
        assert_eq!(
            status_message(&status, 3),
            "event 3: cannot decode ModelEvent: invalid wire type value: 7"
        );
    }
}
