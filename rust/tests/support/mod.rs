//! Shared by the test files: time bounds, message builders and the Python server.
#![allow(dead_code)] // each test file uses a different part

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use pi_proto::v1::{
    AgentContext, AssistantContent, AssistantMessage, StopReason, TextContent, ToolCall, Usage,
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
