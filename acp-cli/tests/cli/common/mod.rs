//! Helpers shared by the integration tests: the `acp` binary, temporary directories, a
//! recording ACP client, and running `acp client` with a deadline.
#![allow(dead_code, unreachable_pub)]

mod interop;
mod netns;
mod pty;
mod serve;
#[allow(unused_imports)]
pub use interop::*;
#[allow(unused_imports)]
pub use netns::*;
#[allow(unused_imports)]
pub use pty::*;
#[allow(unused_imports)]
pub use serve::*;

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

/// `printf '<line>\n…' | acp agent --quiet ARGS`: every line, then the end of input at once.
/// Returns the exit status and the frames written.
pub fn piped_into_agent(
    lines: &[serde_json::Value],
    args: &[&str],
) -> (std::process::ExitStatus, Vec<serde_json::Value>) {
    let mut child = Command::new(acp())
        .args(["agent", "--quiet"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    feed(&mut input, text.as_bytes());
    drop(input);
    let output = child.wait_with_output().unwrap();
    let frames = String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (output.status, frames)
}

/// Writes `bytes` to a child's stdin. A child that exits without reading all of it (a usage
/// error, say) is not the test's failure: its exit status and output say what happened, so a
/// broken pipe is ignored (seen in a CI rehearsal: `acp client --format json` refusing the
/// interactive loop before the test wrote its input).
pub fn feed(input: &mut impl Write, bytes: &[u8]) {
    match input.write_all(bytes) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
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
    let mut child = start_interactive(args, cwd);
    let mut input = child.stdin.take().unwrap();
    feed(&mut input, stdin.as_bytes());
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

/// Waits (at most `within`) until the reader [`collect`] started reached the end of its pipe
/// (it drops its handle there), so that `text` holds everything the process wrote. A process
/// left behind may hold the pipe open: then it returns after `within` with what came.
pub fn drained(text: &Arc<Mutex<String>>, within: Duration) {
    let deadline = Instant::now() + within;
    while Arc::strong_count(text) > 1 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
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
    // Let the readers take the last bytes: each drops its handle at the end of its pipe
    // (waited for within a bound: a process the child left behind may hold a pipe open). A
    // fixed pause was not enough on a loaded machine: the output came back empty.
    let within = Duration::from_secs(5);
    drained(&stdout, within);
    drained(&stderr, within);
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

/// The ACP versions this build speaks: `"1"`, and `"2"` in a build with the feature
/// `unstable_protocol_v2`. The client tests named `…_on_each_version` run once per version:
/// the client is one session loop over a link per version, and what the protocol has in both
/// must behave the same.
pub fn versions() -> &'static [&'static str] {
    if cfg!(feature = "unstable_protocol_v2") { &["1", "2"] } else { &["1"] }
}

/// `acp client --protocol VERSION ARGS -- ACP agent --protocol VERSION --quiet`.
pub fn client_args_in<'a>(version: &'a str, acp: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["client", "--protocol", version];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", acp, "agent", "--protocol", version, "--quiet"]);
    all
}

/// Starts `acp ARGS` in `cwd` with piped stdio; returns the child with its stdin still
/// attached, for tests that type answers after seeing a question.
pub fn start_interactive(args: &[&str], cwd: &Path) -> Child {
    Command::new(acp())
        .args(args)
        .current_dir(cwd)
        .env_remove("NO_COLOR")
        // Hermetic: no user config file applies, and recorded sessions go to a scratch database.
        .env_remove("ACP_CONFIG")
        .env("XDG_CONFIG_HOME", std::env::temp_dir().join("acp-tests-no-config"))
        .env("ACP_STATE_DIR", std::env::temp_dir().join("acp-tests-state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The resident set size of process `pid` in KiB (`VmRSS` in `/proc/PID/status`); `None`
/// once it is gone.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Samples the RSS of `pid` every 10 ms until `until` returns true; returns the highest.
pub fn max_rss_while(pid: u32, mut until: impl FnMut() -> bool) -> u64 {
    let mut max = 0;
    while !until() {
        max = max.max(rss_kib(pid).unwrap_or(0));
        thread::sleep(Duration::from_millis(10));
    }
    max
}

/// A marker unique to this test run (for `sleep 1000.MARK` and the like).
pub fn unique_marker() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    format!("{}{:03}{nanos:09}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The processes (other than zombies) one of whose arguments is exactly `arg`.
pub fn processes_with_arg(arg: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { panic!("/proc is needed to look for leftover processes") };
    entries
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let state = stat[stat.rfind(')')? + 1..].split_whitespace().next()?.to_owned();
            (state != "Z" && cmdline.split(|&b| b == 0).any(|a| a == arg.as_bytes())).then_some(pid)
        })
        .collect()
}

/// Waits until a process with the argument `arg` runs (or panics after `timeout`).
pub fn wait_for_process(arg: &str, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while processes_with_arg(arg).is_empty() {
        assert!(Instant::now() < deadline, "no process with the argument {arg:?} started");
        thread::sleep(Duration::from_millis(20));
    }
}

/// Waits up to `timeout` for every process with the argument `arg` to be gone; returns
/// those left.
pub fn survivors(arg: &str, timeout: Duration) -> Vec<u32> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = processes_with_arg(arg);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Kills, on drop, every process with one of these arguments: a test never leaks one.
pub struct KillOnDrop(pub Vec<String>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for arg in &self.0 {
            for pid in processes_with_arg(arg) {
                if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
        }
    }
}

/// Sends `signal` to the child.
pub fn signal(child: &Child, signal: rustix::process::Signal) {
    rustix::process::kill_process(rustix::process::Pid::from_child(child), signal).unwrap();
}

/// The `sh` lines of a scripted agent that answers `initialize` (id 1) and `session/new`
/// (id 2, session `s1`) and reads the `session/prompt` (id 3).
pub const HANDSHAKE: &str = "read l; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1}}'; \
read l; echo '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"sessionId\":\"s1\"}}'; read l; ";

/// The `sh` line answering the prompt `end_turn`.
pub const END_TURN: &str = "echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}'; ";
