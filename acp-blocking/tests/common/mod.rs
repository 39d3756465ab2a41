//! Helpers shared by the scenario tests.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread;
use std::time::Duration;

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use acp_blocking::{Client, ClientConnection, ClientContext, ClientOptions};

/// The `echo_agent` example binary. `cargo test` builds the examples next to the test
/// binaries (`target/<profile>/examples/` beside `target/<profile>/deps/`).
pub fn echo_agent() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps/<test>");
    let agent = profile_dir.join("examples").join(format!("echo_agent{}", std::env::consts::EXE_SUFFIX));
    assert!(
        agent.exists(),
        "{} is missing: `cargo test -p acp-blocking` builds it (with a `--test` filter, run \
         `cargo build -p acp-blocking --examples` first)",
        agent.display()
    );
    agent
}

/// Runs `f` on its own thread and fails the test if it takes longer than `limit`: a hang
/// becomes a failure instead of a stuck test run.
pub fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).unwrap_or_else(|_| panic!("did not finish within {limit:?}: a hang"))
}

/// The text of an `agent_message_chunk`, or the update's debug form.
pub fn text(update: &SessionUpdate) -> String {
    match update {
        SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => t.text.clone(),
        other => format!("{other:?}"),
    }
}

/// A scriptable client that records what it was asked.
#[derive(Default)]
pub struct TestClient {
    /// The option to select for permission asks; `None` waits until the ask is cancelled.
    pub permission: Option<&'static str>,
    /// Files served by `fs/read_text_file`.
    pub files: HashMap<String, String>,
    /// Methods the handlers were called for, in order.
    pub calls: Mutex<Vec<&'static str>>,
    /// Permission asks whose cancellation signal was seen.
    pub cancelled_asks: AtomicUsize,
    /// Updates that arrived outside a turn.
    pub outside: Mutex<Vec<SessionNotification>>,
}

impl TestClient {
    fn record(&self, method: &'static str) {
        self.calls.lock().unwrap().push(method);
    }

    pub fn calls(&self) -> Vec<&'static str> {
        self.calls.lock().unwrap().clone()
    }
}

impl Client for TestClient {
    fn request_permission(
        &self,
        _: RequestPermissionRequest,
        cx: &ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        self.record("session/request_permission");
        let outcome = match self.permission {
            Some(option) => RequestPermissionOutcome::selected(option),
            None => {
                cx.cancellation().wait_timeout(Duration::from_secs(30));
                if cx.is_cancelled() {
                    self.cancelled_asks.fetch_add(1, Ordering::SeqCst);
                }
                RequestPermissionOutcome::Cancelled
            }
        };
        Ok(RequestPermissionResponse::new(outcome))
    }

    fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _: &ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        self.record("fs/read_text_file");
        match self.files.get(&request.path) {
            Some(text) => Ok(ReadTextFileResponse::new(text.clone())),
            None => Err(RpcError::resource_not_found(format!("no file {}", request.path))),
        }
    }

    fn create_terminal(&self, _: CreateTerminalRequest, _: &ClientContext) -> Result<CreateTerminalResponse, RpcError> {
        self.record("terminal/create");
        Ok(CreateTerminalResponse::new("term-1"))
    }

    fn wait_for_terminal_exit(
        &self,
        _: WaitForTerminalExitRequest,
        _: &ClientContext,
    ) -> Result<WaitForTerminalExitResponse, RpcError> {
        self.record("terminal/wait_for_exit");
        Ok(WaitForTerminalExitResponse { exit_code: Some(0), ..Default::default() })
    }

    fn terminal_output(
        &self,
        request: TerminalOutputRequest,
        _: &ClientContext,
    ) -> Result<TerminalOutputResponse, RpcError> {
        self.record("terminal/output");
        Ok(TerminalOutputResponse::new(format!("output of {}", request.terminal_id), false))
    }

    fn release_terminal(
        &self,
        _: ReleaseTerminalRequest,
        _: &ClientContext,
    ) -> Result<ReleaseTerminalResponse, RpcError> {
        self.record("terminal/release");
        Ok(ReleaseTerminalResponse::default())
    }

    fn session_update(&self, notification: SessionNotification) {
        self.outside.lock().unwrap().push(notification);
    }
}

/// Spawns the echo agent with `client`.
pub fn spawn_echo<C: Client>(client: C) -> ClientConnection {
    ClientConnection::spawn(client, Command::new(echo_agent()), ClientOptions::default()).expect("spawn echo_agent")
}

/// `initialize` (advertising `fs.readTextFile` when `fs`) and one `session/new`.
pub fn handshake(conn: &ClientConnection, fs: bool) -> SessionId {
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.fs.read_text_file = fs;
    let response = conn.with_timeout(Duration::from_secs(10)).initialize(init).expect("initialize");
    assert_eq!(response.protocol_version, ProtocolVersion::V1);
    conn.new_session(NewSessionRequest::new("/tmp", vec![])).expect("session/new").session_id
}

/// A prompt with one text block.
pub fn prompt(session: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(session.clone(), vec![text.into()])
}

/// A field of `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`), Linux only.
pub fn proc_kib(pid: &str, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
