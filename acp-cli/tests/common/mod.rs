//! Helpers shared by the integration tests: the `acp` binary, temporary directories, a
//! recording ACP client, and running `acp client` with a deadline.
#![allow(dead_code, unreachable_pub)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use acp_blocking::{Client, ClientConnection, ClientContext, ClientOptions};
use acp_services::FsSandbox;

/// The `acp` binary under test.
pub fn acp() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_acp"))
}

/// A directory under the system's temporary directory, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let dir = std::env::temp_dir().join(format!("acp-cli-test-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(std::fs::canonicalize(&dir).unwrap())
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `name` in the directory; returns its absolute path as a string.
    pub fn file(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How the recording client answers permission requests.
#[derive(Debug, Clone)]
pub enum Answer {
    /// Pick the option with this id.
    Pick(&'static str),
    /// Never answer (until the turn is cancelled).
    Hold,
}

/// What the recording client saw.
#[derive(Debug, Default)]
pub struct Seen {
    pub permissions: Vec<RequestPermissionRequest>,
    pub reads: Vec<String>,
    pub outside: Vec<SessionNotification>,
}

/// A client that records the agent's requests, answers permission asks as told and serves
/// reads from a sandbox (when it has one).
pub struct Recorder {
    pub answer: Answer,
    pub fs: Option<FsSandbox>,
    pub seen: Arc<Mutex<Seen>>,
}

impl Client for Recorder {
    fn request_permission(
        &self,
        request: RequestPermissionRequest,
        cx: &ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        self.seen.lock().unwrap().permissions.push(request);
        match &self.answer {
            Answer::Pick(id) => Ok(RequestPermissionResponse::new(RequestPermissionOutcome::selected(*id))),
            Answer::Hold => {
                cx.cancellation().wait_timeout(Duration::from_secs(30));
                Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled))
            }
        }
    }

    fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _: &ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        self.seen.lock().unwrap().reads.push(request.path.clone());
        match &self.fs {
            Some(fs) => fs.read_text_file(&request),
            None => Err(RpcError::method_not_found("fs/read_text_file")),
        }
    }

    fn session_update(&self, notification: SessionNotification) {
        self.seen.lock().unwrap().outside.push(notification);
    }
}

/// `acp agent --quiet` (plus `extra` arguments) driven by a [`Recorder`]; `fs_root` gives the
/// client a sandbox there and advertises `fs.readTextFile`.
pub fn spawn_agent(
    answer: Answer,
    fs_root: Option<&Path>,
    extra: &[&str],
) -> (ClientConnection, Arc<Mutex<Seen>>, InitializeResponse) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let fs = fs_root.map(|root| FsSandbox::new([root]).unwrap());
    let recorder = Recorder { answer, fs, seen: seen.clone() };
    let mut command = Command::new(acp());
    command.arg("agent").arg("--quiet").args(extra);
    let conn = ClientConnection::spawn(recorder, command, ClientOptions::default()).unwrap();
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.fs.read_text_file = fs_root.is_some();
    let response = conn.with_timeout(Duration::from_secs(10)).initialize(init).unwrap();
    (conn, seen, response)
}

/// A new session in `cwd`.
pub fn new_session(conn: &ClientConnection, cwd: &Path) -> SessionId {
    conn.with_timeout(Duration::from_secs(10))
        .new_session(NewSessionRequest::new(cwd.display().to_string(), vec![]))
        .unwrap()
        .session_id
}

/// The text of a text content block.
pub fn text_of(block: &ContentBlock) -> &str {
    match block {
        ContentBlock::Text(t) => &t.text,
        other => panic!("not text: {other:?}"),
    }
}

/// The text of a tool call update's first content item.
pub fn content_text(update: &ToolCallUpdate) -> String {
    match update.content.as_deref() {
        Some([ToolCallContent::Content(c), ..]) => text_of(&c.content).to_owned(),
        other => panic!("no text content: {other:?}"),
    }
}

/// A finished run of a command.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }
}

/// Starts `acp ARGS` in `cwd` with piped stdio, `NO_COLOR` unset and `stdin` written (stdin
/// is closed after it unless `keep_stdin_open`).
pub fn start(args: &[&str], cwd: &Path, stdin: &str, keep_stdin_open: bool) -> Child {
    let mut child = Command::new(acp())
        .args(args)
        .current_dir(cwd)
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    if keep_stdin_open {
        // Kept open until the child exits (the thread ends when the write fails or the child
        // is gone).
        thread::spawn(move || {
            let _keep = input;
            thread::sleep(Duration::from_secs(30));
        });
    }
    child
}

/// Reads a pipe into a shared string as it comes.
pub fn collect(mut pipe: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let out = text.clone();
    thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    text
}

/// Waits until `text` contains `needle` (or panics after `timeout`).
pub fn wait_for(text: &Mutex<String>, needle: &str, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while !text.lock().unwrap().contains(needle) {
        assert!(Instant::now() < deadline, "timed out waiting for {needle:?} in:\n{}", text.lock().unwrap());
        thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for the child to exit (or kills it and panics after `timeout`).
pub fn finish(mut child: Child, stdout: Arc<Mutex<String>>, stderr: Arc<Mutex<String>>, timeout: Duration) -> Run {
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("timed out; stdout:\n{}\nstderr:\n{}", stdout.lock().unwrap(), stderr.lock().unwrap());
        }
        thread::sleep(Duration::from_millis(20));
    };
    // Let the readers take the last bytes.
    thread::sleep(Duration::from_millis(50));
    let stdout = stdout.lock().unwrap().clone();
    let stderr = stderr.lock().unwrap().clone();
    Run { status, stdout, stderr }
}

/// Runs `acp ARGS` in `cwd` with `stdin`, to completion within 20 s.
pub fn run(args: &[&str], cwd: &Path, stdin: &str) -> Run {
    let mut child = start(args, cwd, stdin, false);
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    finish(child, stdout, stderr, Duration::from_secs(20))
}

/// `acp client ARGS -- acp agent --quiet`.
pub fn client_args<'a>(acp: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["client"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", acp, "agent", "--quiet"]);
    all
}
