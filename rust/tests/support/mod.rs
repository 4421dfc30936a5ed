//! Shared by the test files: time bounds, message builders and the Python server.
#![allow(dead_code)] // each test file uses a different part

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use pi_proto::v1::model_event::Event;
use pi_proto::v1::{
    AgentContext, AssistantContent, AssistantMessage, DoneEvent, ModelEvent, StartEvent,
    StopReason, TextContent, TextDeltaEvent, TextEndEvent, TextStartEvent, ToolCall, Usage,
    assistant_content,
};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The most any one test may take.
pub const LIMIT: Duration = Duration::from_secs(60);

/// Run an async test body, failing the test if it takes longer than [`LIMIT`].
pub async fn within<F: Future>(body: F) -> F::Output {
    tokio::time::timeout(LIMIT, body)
        .await
        .expect("the test took longer than its time limit")
}

/// Run a blocking test body on its own thread, failing the test if it takes longer than [`LIMIT`].
pub fn bounded<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, outcome) = mpsc::channel();
    std::thread::spawn(move || {
        done.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)))
    });
    match outcome.recv_timeout(LIMIT) {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("the test took longer than its time limit"),
    }
}

/// Run an async test body on its own thread and runtime, failing the test if it takes longer
/// than [`LIMIT`]; unlike [`within`], this also stops a body that never has to wait.
pub fn bounded_async<F>(body: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    bounded(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a tokio runtime");
        runtime.block_on(body)
    })
}

/// The repository root: the folder above this crate.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate lives inside the repository")
        .to_path_buf()
}

pub fn text(text: &str) -> AssistantContent {
    AssistantContent {
        block: Some(assistant_content::Block::Text(TextContent {
            text: text.to_owned(),
            ..Default::default()
        })),
    }
}

pub fn tool_call(id: &str, name: &str, arguments_json: &str) -> AssistantContent {
    AssistantContent {
        block: Some(assistant_content::Block::ToolCall(ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments_json: arguments_json.to_owned(),
            ..Default::default()
        })),
    }
}

/// An assistant message with the Python runtime's defaults (provider `scripted`).
pub fn assistant_message(
    content: Vec<AssistantContent>,
    stop_reason: StopReason,
) -> AssistantMessage {
    AssistantMessage {
        content,
        api: "scripted".to_owned(),
        provider: "scripted".to_owned(),
        model: "scripted-v1".to_owned(),
        usage: Some(Usage::default()),
        stop_reason: stop_reason as i32,
        timestamp: 1,
        ..Default::default()
    }
}

/// The events of an answer of one text block streamed as `deltas`, ending with `done`.
pub fn text_events(deltas: &[String]) -> impl Iterator<Item = ModelEvent> + '_ {
    let answer = assistant_message(vec![text(&deltas.concat())], StopReason::Stop);
    let header = assistant_message(vec![], StopReason::Stop);
    let opening = [
        Event::Start(StartEvent {
            header: Some(header),
        }),
        Event::TextStart(TextStartEvent { content_index: 0 }),
    ];
    let body = deltas.iter().map(|delta| {
        Event::TextDelta(TextDeltaEvent {
            content_index: 0,
            delta: delta.clone(),
        })
    });
    let closing = [
        Event::TextEnd(TextEndEvent {
            content_index: 0,
            text_signature: None,
        }),
        Event::Done(DoneEvent {
            reason: StopReason::Stop as i32,
            message: Some(answer),
        }),
    ];
    opening
        .into_iter()
        .chain(body)
        .chain(closing)
        .map(|event| ModelEvent {
            event: Some(event),
            partial: None,
        })
}

/// `count` distinct deltas of 128 bytes each. Copying the whole partial per event would copy
/// 128 * count² / 2 bytes: 2.56 TB for 200,000 of them, which takes minutes.
pub fn many_deltas(count: usize) -> Vec<String> {
    let filler = "流式".repeat(19);
    (0..count)
        .map(|index| format!("delta {index:06} {filler}\n"))
        .collect()
}

/// A context holding one user message with `text`.
pub fn user_context(text: &str) -> AgentContext {
    AgentContext {
        messages: vec![pi_proto::user_message(text).into()],
        ..Default::default()
    }
}

/// The Python reference server (`pi-proto serve`), killed when dropped.
pub struct Server {
    pub target: String,
    child: Child,
}

impl Server {
    /// Start `pi-proto serve --port 0` with `args` from the repository root and wait for its
    /// `listening on 127.0.0.1:PORT` line.
    pub async fn start(args: &[&str]) -> Server {
        let root = repo_root();
        let program = root.join(".venv/bin/pi-proto");
        assert!(
            program.exists(),
            "{} is missing: run `make setup` in the repository root",
            program.display()
        );
        let mut child = Command::new(program)
            .args(["serve", "--port", "0"])
            .args(args)
            .current_dir(root)
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start pi-proto serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .await
            .expect("read the server's first line");
        // Keep reading, so that anything the server prints later finds an open pipe.
        tokio::spawn(async move { tokio::io::copy(&mut stdout, &mut tokio::io::sink()).await });
        let target = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from the server: {line:?}"))
            .to_owned();
        Server { target, child }
    }

    /// Kill the server at once, as a crash would.
    pub async fn kill(&mut self) {
        self.child.kill().await.expect("kill the server");
    }
}
