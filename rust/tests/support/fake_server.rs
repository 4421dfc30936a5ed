//! A fake `pi.ai.v1.ModelService` on a raw HTTP/2 server (h2), in the test's own process: every
//! call plays the same script of events, raw frames, pauses and a final status, and the server
//! keeps each request it received with its headers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderMap, HeaderValue, Response};
use pi_proto::v1::{ModelEvent, StreamRequest};
use prost::Message;
use tokio::net::TcpListener;

/// One step of a call.
#[derive(Debug, Clone)]
pub enum Action {
    /// Send these bytes as one message, whatever they hold (see [`Action::event`]).
    Send(Vec<u8>),
    /// Wait.
    Sleep(Duration),
    /// End the call with this gRPC status code and message; nothing is sent after it.
    Status(u32, &'static str),
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
    /// Start a server that answers every call with `script`, then status OK unless the script
    /// ends with a status of its own.
    pub async fn start(script: Vec<Action>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let target = listener.local_addr().expect("an address").to_string();
        let received = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(script);
        let log = received.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (script, log) = (script.clone(), log.clone());
                tokio::spawn(async move {
                    let Ok(mut connection) = h2::server::handshake(socket).await else {
                        return;
                    };
                    while let Some(Ok((request, respond))) = connection.accept().await {
                        tokio::spawn(play(request, respond, script.clone(), log.clone()));
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
}

/// Answer one call: read the request, then play the script.
async fn play(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    script: Arc<Vec<Action>>,
    log: Arc<Mutex<Vec<Received>>>,
) -> Result<(), h2::Error> {
    let (parts, mut body) = request.into_parts();
    let mut bytes = BytesMut::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        bytes.extend_from_slice(&chunk);
    }
    // One gRPC message: a flag byte, a 4-byte length, then the message.
    let request = StreamRequest::decode(bytes.get(5..).unwrap_or_default()).unwrap_or_default();
    log.lock().expect("not poisoned").push(Received {
        request,
        headers: parts.headers,
    });

    let response = Response::builder()
        .status(200)
        .header("content-type", "application/grpc")
        .body(())
        .expect("a valid response");
    let mut send = respond.send_response(response, false)?;
    for action in script.iter() {
        match action {
            Action::Send(bytes) => send.send_data(framed(bytes), false)?,
            Action::Sleep(pause) => tokio::time::sleep(*pause).await,
            Action::Status(code, message) => return send.send_trailers(status(*code, message)),
        }
    }
    send.send_trailers(status(0, ""))
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
