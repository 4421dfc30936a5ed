//! A fake `pi.ai.v1.ModelService` on a raw HTTP/2 server (h2), in the test's own process: every
//! Stream and StreamBatched call plays the same script of events, raw messages, pauses and a final
//! status (StreamBatched puts consecutive events in one batch, as the reference server does),
//! Resume plays the script kept for the event number it names, Cancel answers that it cancelled,
//! ListModels and GetModel answer from a catalog, and the server keeps each request it received
//! with its path and headers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderMap, HeaderValue, Response};
use pi_proto::v1::{
    CancelResponse, GetModelRequest, GetModelResponse, ListModelsRequest, ListModelsResponse,
    Model, ModelEvent, ResumeRequest, StreamRequest,
};
use prost::Message;
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// One step of a call.
#[derive(Debug, Clone)]
pub enum Action {
    /// Send these bytes as one event, whatever they hold (see [`Action::event`]): in Stream a
    /// message of its own; in StreamBatched, consecutive ones share one StreamBatchedResponse,
    /// sent before any other action.
    Send(Vec<u8>),
    /// Send these bytes as one message as they are, in either method.
    Raw(Vec<u8>),
    /// Wait.
    Sleep(Duration),
    /// Wait until the client goes away: it resets the call (as a cancel or a deadline passed
    /// does), or the connection closes. A server gone quiet, which no time passing ends.
    Hang,
    /// Wait until the test says go (`notify_one`; a go said before the call gets here counts).
    Wait(Arc<Notify>),
    /// From the `from_call`-th call of its method on (counting from 1), wait until no more than
    /// `left` of the call's deadline (its `grpc-timeout`, from when the call arrived) is left;
    /// calls before it, and calls without a deadline, go straight on.
    HoldUntilLeft { from_call: usize, left: Duration },
    /// End the call with this gRPC status code and message; nothing is sent after it.
    Status(u32, &'static str),
    /// Drop the call's whole connection, as a server killed mid-call: the socket closes with no
    /// status, no reset and no GOAWAY.
    Hangup,
}

impl Action {
    /// Send this event as one message.
    pub fn event(event: &ModelEvent) -> Self {
        Self::Send(event.encode_to_vec())
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Received {
    /// The method, e.g. `/pi.ai.v1.ModelService/Stream`.
    pub path: String,
    /// The request message, undecoded.
    pub body: Bytes,
    /// For a Stream call, the request; default otherwise.
    pub request: StreamRequest,
    pub headers: HeaderMap,
}

/// The server, listening on 127.0.0.1 until the test's runtime shuts down.
pub struct FakeServer {
    /// Where it listens, `127.0.0.1:PORT`.
    pub target: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl FakeServer {
    /// Start a server that answers every Stream and StreamBatched call with `script`, then
    /// status OK unless the script ends with a status of its own.
    pub async fn start(script: Vec<Action>) -> Self {
        Self::with_catalog(script, Vec::new()).await
    }

    /// Start a server that also serves `catalog` to ListModels and GetModel.
    pub async fn with_catalog(script: Vec<Action>, catalog: Vec<Model>) -> Self {
        Self::serve(script, catalog, true).await
    }

    /// Start a server that has no StreamBatched, as an older one: it answers that method with
    /// UNIMPLEMENTED in the response headers (a trailers-only response, as gRPC servers do).
    pub async fn without_batched(script: Vec<Action>) -> Self {
        Self::serve(script, Vec::new(), false).await
    }

    /// Start a server that keeps its stream: Stream and StreamBatched play `script`, and a
    /// Resume after event number `n` plays the script paired with `n` in `resumptions` (one
    /// event per message), FAILED_PRECONDITION for a number it has none for.
    pub async fn resumable(script: Vec<Action>, resumptions: Vec<(u64, Vec<Action>)>) -> Self {
        Self::serve_all(script, resumptions, Vec::new(), true).await
    }

    async fn serve(script: Vec<Action>, catalog: Vec<Model>, batched: bool) -> Self {
        Self::serve_all(script, Vec::new(), catalog, batched).await
    }

    async fn serve_all(
        script: Vec<Action>,
        resumptions: Vec<(u64, Vec<Action>)>,
        catalog: Vec<Model>,
        batched: bool,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let target = listener.local_addr().expect("an address").to_string();
        let received = Arc::new(Mutex::new(Vec::new()));
        let service = Arc::new(Service {
            script,
            resumptions,
            catalog,
            batched,
            log: received.clone(),
        });
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let service = service.clone();
                tokio::spawn(async move {
                    let Ok(mut connection) = h2::server::handshake(socket).await else {
                        return;
                    };
                    let hangup = Arc::new(Notify::new());
                    loop {
                        tokio::select! {
                            accepted = connection.accept() => {
                                let Some(Ok((request, respond))) = accepted else { break };
                                let answering = answer(request, respond, service.clone(), hangup.clone());
                                tokio::spawn(answering);
                            }
                            // Dropping the connection closes the socket as it is.
                            () = hangup.notified() => break,
                        }
                    }
                });
            }
        });
        Self { target, received }
    }

    /// The requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("not poisoned").clone()
    }

    /// The requests received so far to the method whose path ends with `method`.
    pub fn received_of(&self, method: &str) -> Vec<Received> {
        let mut received = self.received();
        received.retain(|call| call.path.ends_with(method));
        received
    }
}

struct Service {
    script: Vec<Action>,
    resumptions: Vec<(u64, Vec<Action>)>,
    catalog: Vec<Model>,
    batched: bool,
    log: Arc<Mutex<Vec<Received>>>,
}

/// Answer one call: read the request, then play the script or answer from the catalog.
async fn answer(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    service: Arc<Service>,
    hangup: Arc<Notify>,
) -> Result<(), h2::Error> {
    let arrived = tokio::time::Instant::now();
    let (parts, mut body) = request.into_parts();
    let mut bytes = BytesMut::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        bytes.extend_from_slice(&chunk);
    }
    // One gRPC message: a flag byte, a 4-byte length, then the message.
    let bytes = bytes.freeze();
    let body = bytes.slice(5.min(bytes.len())..);
    let path = parts.uri.path().to_owned();
    let batched = path.ends_with("/StreamBatched");
    let resume = path.ends_with("/Resume");
    let stream = path.ends_with("/Stream") || batched || resume;
    let request = if stream && !resume {
        StreamRequest::decode(body.clone()).unwrap_or_default()
    } else {
        StreamRequest::default()
    };
    let deadline = parts
        .headers
        .get("grpc-timeout")
        .and_then(|timeout| arrived.checked_add(grpc_timeout(timeout)));
    let nth = {
        let mut log = service.log.lock().expect("not poisoned");
        log.push(Received {
            path: path.clone(),
            body: body.clone(),
            request,
            headers: parts.headers,
        });
        log.iter().filter(|call| call.path == path).count()
    };

    let response = Response::builder()
        .status(200)
        .header("content-type", "application/grpc");
    if batched && !service.batched {
        let response = response
            .header("grpc-status", "12")
            .header("grpc-message", "Method not found!")
            .body(())
            .expect("a valid response");
        respond.send_response(response, true)?;
        return Ok(());
    }
    let response = response.body(()).expect("a valid response");
    let mut send = respond.send_response(response, false)?;
    if !stream {
        let (reply, code, message) = service.catalog_answer(&path, body);
        if let Some(reply) = reply {
            send.send_data(framed(&reply), false)?;
        }
        return send.send_trailers(status(code, message));
    }
    let script = if resume {
        let after = ResumeRequest::decode(body).unwrap_or_default().after_seq;
        let found = service.resumptions.iter().find(|(seq, _)| *seq == after);
        let Some((_, script)) = found else {
            return send.send_trailers(status(9, "no stream to resume after that event"));
        };
        script
    } else {
        &service.script
    };
    // The StreamBatchedResponse being filled: each event as field 1, length-delimited.
    let mut batch = Vec::new();
    for action in script {
        if let Action::Send(bytes) = action
            && batched
        {
            add_event(&mut batch, bytes);
            continue;
        }
        if !batch.is_empty() {
            send.send_data(framed(&std::mem::take(&mut batch)), false)?;
        }
        match action {
            Action::Send(bytes) | Action::Raw(bytes) => send.send_data(framed(bytes), false)?,
            Action::Sleep(pause) => tokio::time::sleep(*pause).await,
            Action::Hang => {
                let _ = std::future::poll_fn(|context| send.poll_reset(context)).await;
                return Ok(());
            }
            Action::Wait(go) => go.notified().await,
            Action::HoldUntilLeft { from_call, left } => {
                if let Some(deadline) = deadline
                    && nth >= *from_call
                {
                    tokio::time::sleep_until(deadline.checked_sub(*left).unwrap_or(arrived)).await;
                }
            }
            Action::Status(code, message) => return send.send_trailers(status(*code, message)),
            Action::Hangup => {
                hangup.notify_one();
                // The call stays open until the connection is gone: ending it here would reset it.
                return std::future::pending().await;
            }
        }
    }
    if !batch.is_empty() {
        send.send_data(framed(&batch), false)?;
    }
    send.send_trailers(status(0, ""))
}

/// The bytes of a StreamBatchedResponse of `events`, each encoded as it is.
pub fn batch_of(events: &[Vec<u8>]) -> Vec<u8> {
    let mut batch = Vec::new();
    for event in events {
        add_event(&mut batch, event);
    }
    batch
}

/// Append `event` to a StreamBatchedResponse's bytes: field 1, length-delimited.
fn add_event(batch: &mut Vec<u8>, event: &[u8]) {
    batch.push(0x0a);
    prost::encoding::encode_varint(event.len() as u64, batch);
    batch.extend_from_slice(event);
}

impl Service {
    /// The reply to a catalog call, and its status.
    fn catalog_answer(&self, path: &str, body: Bytes) -> (Option<Vec<u8>>, u32, &'static str) {
        let serves =
            |model: &Model, provider: &str| provider.is_empty() || model.provider == provider;
        if path.ends_with("/ListModels") {
            let request = ListModelsRequest::decode(body).unwrap_or_default();
            let models = self
                .catalog
                .iter()
                .filter(|model| serves(model, &request.provider))
                .cloned()
                .collect();
            return (Some(ListModelsResponse { models }.encode_to_vec()), 0, "");
        }
        if path.ends_with("/Cancel") {
            let reply = CancelResponse { cancelled: true };
            return (Some(reply.encode_to_vec()), 0, "");
        }
        if path.ends_with("/GetModel") {
            let request = GetModelRequest::decode(body).unwrap_or_default();
            let found = self
                .catalog
                .iter()
                .find(|model| model.id == request.id && serves(model, &request.provider));
            return match found {
                Some(model) => {
                    let reply = GetModelResponse {
                        model: Some(model.clone()),
                    };
                    (Some(reply.encode_to_vec()), 0, "")
                }
                None => (None, 5, "no such model"),
            };
        }
        (None, 12, "no such method")
    }
}

/// A `grpc-timeout` header's value ("900000m") as a duration.
pub fn grpc_timeout(value: &HeaderValue) -> Duration {
    let value = value.to_str().expect("ASCII");
    let (amount, unit) = value.split_at(value.len() - 1);
    let amount: u64 = amount.parse().expect("a number");
    match unit {
        "H" => Duration::from_secs(amount * 3600),
        "M" => Duration::from_secs(amount * 60),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        other => panic!("no grpc-timeout unit {other}"),
    }
}

fn framed(message: &[u8]) -> Bytes {
    let mut frame = BytesMut::with_capacity(5 + message.len());
    frame.put_u8(0);
    frame.put_u32(u32::try_from(message.len()).expect("a message under 4 GiB"));
    frame.extend_from_slice(message);
    frame.freeze()
}

fn status(code: u32, message: &'static str) -> HeaderMap {
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from(code));
    if !message.is_empty() {
        trailers.insert("grpc-message", HeaderValue::from_static(message));
    }
    trailers
}
