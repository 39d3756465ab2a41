//! One agent process under test, spoken to in raw newline-delimited JSON-RPC so that a
//! scenario can also send what no well-behaved client would (invalid JSON, requests before
//! `initialize`). Every line both ways is recorded with its time as the scenario's transcript.
//!
//! The peer plays a small client: it answers the agent's permission asks with an offered
//! option (an allow one, a reject one, or holds them for a scenario), serves
//! `fs/read_text_file` of the one file it offers when it advertised `fs.readTextFile`, and
//! refuses everything else with `-32601`, noting each `fs/*` or `terminal/*` call it did not
//! advertise. Every message passes through its [`Tracker`] in wire order.
//!
//! Opening a session is where a run can be gated ([`Setup::Gated`]): an agent that advertises
//! `authMethods` and answers `session/new` with `auth_required` (`-32000`) is conformant but
//! shows nothing more until it is authenticated (`--auth METHOD_ID`: `authenticate` right
//! after `initialize`).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::ChildStdin;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use acp_runtime::process::{Supervisor, SupervisorOptions};
use serde_json::{Value, json};

use super::super::report::{AuthMethod, Dir, Gate, WireLine};
use super::Ctx;
use super::track::Tracker;

/// The error code of `auth_required`.
pub(crate) const AUTH_REQUIRED: i64 = -32000;

/// The longest line read from the agent; the rest of a longer line is dropped.
const LINE_MAX: usize = 4 << 20;
/// Characters of a line kept in the transcript.
const SHOWN_MAX: usize = 2000;
/// Lines kept in a transcript (the first ones; a note says how many were dropped).
const TRANSCRIPT_MAX: usize = 400;
/// Messages read ahead of the scenario (the reader waits beyond).
const QUEUE: usize = 256;
/// How long an agent that ended before answering `initialize` is given to finish writing its
/// stderr (a process it left behind may hold the pipe open: the wait is bounded).
const NOT_STARTED_STDERR_WAIT: Duration = Duration::from_secs(2);

/// The transcript of one scenario, bounded.
#[derive(Debug)]
struct Wire {
    started: Instant,
    lines: Vec<WireLine>,
    dropped: usize,
}

impl Wire {
    fn record(&mut self, dir: Dir, line: &str) {
        if self.lines.len() >= TRANSCRIPT_MAX {
            self.dropped += 1;
            return;
        }
        let mut shown: String = line.chars().take(SHOWN_MAX).collect();
        if shown.len() < line.len() {
            shown.push_str(" …(cut)");
        }
        self.lines.push(WireLine { dir, at: self.started.elapsed(), line: shown });
    }
}

/// What the agent wrote: a JSON value, or a line that is not one.
#[derive(Debug)]
enum Incoming {
    Json(Value),
    NotJson,
}

/// How the peer answers `session/request_permission`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permissions {
    /// Pick an allow option (or the first one offered).
    Allow,
    /// Keep the asks unanswered in [`Peer::held`].
    Hold,
    /// Pick a reject option (or cancel when none is offered); noted in [`Peer::rejected`].
    Reject,
}

/// Why a scenario could not open its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Setup {
    /// The agent failed (its own requirement reports it): the scenario's checks are skipped.
    Failed(String),
    /// A gate stopped it: the scenario's checks are blocked.
    Gated(Gate),
}

impl std::fmt::Display for Setup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Setup::Failed(why) => f.write_str(why),
            Setup::Gated(gate) => f.write_str(&gate.reason()),
        }
    }
}

impl From<String> for Setup {
    fn from(why: String) -> Setup {
        Setup::Failed(why)
    }
}

/// An agent process and the client side of its connection.
pub(crate) struct Peer {
    agent: Arc<Supervisor>,
    stdin: Option<ChildStdin>,
    rx: Receiver<Incoming>,
    wire: Arc<Mutex<Wire>>,
    next_id: i64,
    /// How long any one wait lasts.
    pub(crate) timeout: Duration,
    /// How much longer the first answer may take.
    startup: Duration,
    /// Whether `initialize` advertised `fs.readTextFile` (set by [`Peer::initialize`]).
    pub(crate) fs_read: bool,
    /// The one file served by `fs/read_text_file`, and its text.
    file: (String, String),
    /// How permission asks are answered.
    pub(crate) permissions: Permissions,
    /// Permission asks held (their ids), under [`Permissions::Hold`].
    pub(crate) held: Vec<Value>,
    /// Every permission ask's params.
    pub(crate) asks: Vec<Value>,
    /// Whether `session/cancel` was sent: later asks are answered `cancelled`.
    cancelled: bool,
    /// Every request the agent sent: its method.
    pub(crate) agent_requests: Vec<String>,
    /// Calls of `fs/*` or `terminal/*` methods that were not advertised.
    pub(crate) violations: Vec<String>,
    /// Every `session/update` notification's params.
    pub(crate) updates: Vec<Value>,
    /// Responses that answer none of our requests (e.g. to a notification).
    pub(crate) stray_responses: Vec<Value>,
    /// Lines of stdout that were not JSON.
    pub(crate) not_json: usize,
    /// Whether the agent has written anything yet.
    pub(crate) heard: bool,
    /// Sessions, turns and tool calls as the wire told them.
    pub(crate) track: Tracker,
    /// Permission asks answered with a reject option: (session, tool call id).
    pub(crate) rejected: Vec<(String, String)>,
    /// The `authMethods` of the agent's `initialize` answer.
    pub(crate) auth_methods: Vec<Value>,
    /// The method to `authenticate` with after `initialize` (`--auth`).
    auth: Option<String>,
    /// What stopped the scenario short, if anything did.
    pub(crate) gate: Option<Gate>,
}

/// Why a wait ended without the message waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gone {
    /// Nothing came within the timeout.
    Timeout(Duration),
    /// The agent's stdout ended.
    Closed,
}

impl std::fmt::Display for Gone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Gone::Timeout(t) => write!(f, "no answer within {:.1}s", t.as_secs_f64()),
            Gone::Closed => f.write_str("the agent closed its output (it exited?)"),
        }
    }
}

impl Peer {
    /// Spawns the agent of `ctx` (from the scenario's thread, which ends it).
    pub(crate) fn spawn(ctx: &Ctx) -> io::Result<Peer> {
        let options = SupervisorOptions::default()
            .with_stderr_capacity(16 * 1024)
            .with_close_graces(Duration::from_millis(200), Duration::from_millis(300));
        let configure = |command: &mut std::process::Command| {
            command.envs(ctx.env.iter().map(|(k, v)| (k, v)));
            if let Some(dir) = &ctx.dir {
                command.current_dir(dir);
            }
        };
        let (agent, stdin, stdout) = ctx.children.spawn(&ctx.command, configure, options)?;
        let wire = Arc::new(Mutex::new(Wire { started: Instant::now(), lines: Vec::new(), dropped: 0 }));
        let (tx, rx) = sync_channel(QUEUE);
        let reader_wire = wire.clone();
        thread::Builder::new().name("acp-check-reader".into()).spawn(move || read_lines(stdout, &reader_wire, &tx))?;
        Ok(Peer {
            agent,
            stdin: Some(stdin),
            rx,
            wire,
            next_id: 0,
            timeout: ctx.timeout,
            startup: ctx.startup,
            fs_read: false,
            file: (ctx.file.0.clone(), ctx.file.1.clone()),
            permissions: Permissions::Allow,
            held: Vec::new(),
            asks: Vec::new(),
            cancelled: false,
            agent_requests: Vec::new(),
            violations: Vec::new(),
            updates: Vec::new(),
            stray_responses: Vec::new(),
            not_json: 0,
            heard: false,
            track: Tracker::default(),
            rejected: Vec::new(),
            auth_methods: Vec::new(),
            auth: ctx.auth.clone(),
            gate: None,
        })
    }

    /// The transcript so far.
    pub(crate) fn transcript(&self) -> Vec<WireLine> {
        let wire = self.wire.lock().unwrap_or_else(PoisonError::into_inner);
        let mut lines = wire.lines.clone();
        if wire.dropped > 0 {
            let note = format!("({} more lines not kept)", wire.dropped);
            lines.push(WireLine { dir: Dir::A2c, at: wire.started.elapsed(), line: note });
        }
        lines
    }

    /// The path of the file the peer serves.
    pub(crate) fn file_path(&self) -> &str {
        &self.file.0
    }

    /// Writes one line (a newline is added); an agent that is gone is not an error here.
    pub(crate) fn send_raw(&mut self, line: &str) {
        self.wire.lock().unwrap_or_else(PoisonError::into_inner).record(Dir::C2a, line);
        if let Some(stdin) = self.stdin.as_mut() {
            let mut bytes = Vec::with_capacity(line.len() + 1);
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
            if stdin.write_all(&bytes).and_then(|()| stdin.flush()).is_err() {
                self.stdin = None;
            }
        }
    }

    /// Sends a request; returns its id.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.track.sent_request(id, method, &params);
        self.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        id
    }

    /// A fresh request id, for a request sent by hand (in a batch).
    #[cfg_attr(not(feature = "unstable_protocol_v2"), allow(dead_code))]
    pub(crate) fn next_request_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a notification.
    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.send_raw(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
    }

    /// Answers a request of the agent.
    pub(crate) fn respond(&mut self, id: &Value, result: Value) {
        self.send_raw(&json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string());
    }

    fn respond_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send_raw(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string());
    }

    /// Sends a request and waits for its response message (result or error).
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Result<Value, Gone> {
        let id = self.request(method, params);
        self.response(id)
    }

    /// Waits for the response to request `id`.
    pub(crate) fn response(&mut self, id: i64) -> Result<Value, Gone> {
        self.pump_until(self.timeout, |m| is_response_to(m, id))
    }

    /// Handles what the agent sends for up to `limit`, until `stop` accepts a message
    /// (returned). Requests of the agent are answered (see [`Permissions`]) before `stop`
    /// sees them.
    /// Until the agent's first line, waits get the startup allowance more: an interpreter
    /// loading its SDK on a busy machine can take many seconds to start.
    pub(crate) fn pump_until(&mut self, limit: Duration, mut stop: impl FnMut(&Value) -> bool) -> Result<Value, Gone> {
        let limit = if self.heard { limit } else { limit + self.startup };
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = match self.rx.recv_timeout(left) {
                Ok(Incoming::Json(message)) => {
                    self.heard = true;
                    message
                }
                Ok(Incoming::NotJson) => {
                    self.heard = true;
                    self.not_json += 1;
                    continue;
                }
                Err(RecvTimeoutError::Timeout) => return Err(Gone::Timeout(limit)),
                Err(RecvTimeoutError::Disconnected) => return Err(Gone::Closed),
            };
            self.observe(&message);
            if stop(&message) {
                return Ok(message);
            }
        }
    }

    /// Notes and answers one message of the agent.
    fn observe(&mut self, message: &Value) {
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some(method), Some(id)) => {
                let id = id.clone();
                self.agent_requests.push(method.to_owned());
                self.serve(method, &id, message.get("params").unwrap_or(&Value::Null));
            }
            (Some("session/update"), None) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                self.track.got_update(&params);
                self.updates.push(params);
            }
            (Some(_), None) => {}
            (None, Some(id)) => match id.as_i64().filter(|id| *id >= 1 && *id <= self.next_id) {
                Some(id) => self.track.got_response(id, message),
                None => self.stray_responses.push(message.clone()),
            },
            (None, None) => self.stray_responses.push(message.clone()),
        }
    }

    /// Answers a request of the agent.
    fn serve(&mut self, method: &str, id: &Value, params: &Value) {
        if method == "session/request_permission" {
            self.asks.push(params.clone());
            self.track.got_ask(params);
        }
        match method {
            "session/request_permission" if self.cancelled => {
                self.respond(id, json!({"outcome": {"outcome": "cancelled"}}));
            }
            "session/request_permission" if self.permissions == Permissions::Hold => self.held.push(id.clone()),
            "session/request_permission" if self.permissions == Permissions::Reject => {
                let answer = match pick_reject(params) {
                    Some(option) => {
                        let session = params.get("sessionId").and_then(Value::as_str).unwrap_or("").to_owned();
                        let call = params.pointer("/toolCall/toolCallId").and_then(Value::as_str).unwrap_or("");
                        self.rejected.push((session, call.to_owned()));
                        json!({"outcome": {"outcome": "selected", "optionId": option}})
                    }
                    None => json!({"outcome": {"outcome": "cancelled"}}),
                };
                self.respond(id, answer);
            }
            "session/request_permission" => {
                let answer = match pick_option(params) {
                    Some(option) => json!({"outcome": {"outcome": "selected", "optionId": option}}),
                    None => json!({"outcome": {"outcome": "cancelled"}}),
                };
                self.respond(id, answer);
            }
            "fs/read_text_file" if self.fs_read => {
                if params.get("path").and_then(Value::as_str) == Some(self.file.0.as_str()) {
                    let text = self.file.1.clone();
                    self.respond(id, json!({"content": text}));
                } else {
                    self.respond_error(id, -32002, "Resource not found: acp check serves one file only");
                }
            }
            _ => {
                if method.starts_with("fs/") || method.starts_with("terminal/") {
                    self.violations.push(method.to_owned());
                }
                self.respond_error(id, -32601, "Method not found");
            }
        }
    }

    /// `initialize` with protocol version `version`; advertises `fs.readTextFile` when
    /// `fs_read`. Returns the response message.
    pub(crate) fn initialize_with(&mut self, version: u64, fs_read: bool) -> Result<Value, Gone> {
        self.fs_read = fs_read;
        let caps = json!({"fs": {"readTextFile": fs_read, "writeTextFile": false}, "terminal": false});
        let params = json!({
            "protocolVersion": version,
            "clientCapabilities": caps,
            "clientInfo": {"name": "acp-check", "version": env!("CARGO_PKG_VERSION")},
        });
        let answer = self.call("initialize", params)?;
        let methods = answer.pointer("/result/authMethods").and_then(Value::as_array);
        self.auth_methods = methods.map(|m| m.iter().take(64).cloned().collect()).unwrap_or_default();
        Ok(answer)
    }

    /// `initialize` (v1, `fs.readTextFile` when `fs_read`), then `authenticate` with
    /// `--auth`'s method if one was given. Returns the `initialize` result.
    pub(crate) fn handshake(&mut self, fs_read: bool) -> Result<Value, Setup> {
        let init = match self.initialize_with(1, fs_read) {
            Ok(init) => init,
            Err(Gone::Closed) if !self.heard => return Err(self.not_started()),
            Err(e) => return Err(Setup::Failed(format!("initialize: {e}"))),
        };
        let init = result_of(&init).map_err(|e| format!("initialize failed: {e}"))?.clone();
        if let Some(method) = self.auth.clone() {
            let answer =
                self.call("authenticate", json!({"methodId": method})).map_err(|e| format!("authenticate: {e}"))?;
            if let Err(e) = result_of(&answer) {
                let gate = self.auth_gate(format!("authenticate with method {method:?} answered {e}"));
                return Err(Setup::Gated(gate));
            }
        }
        Ok(init)
    }

    /// The method `--auth` names, if any.
    pub(crate) fn auth_method(&self) -> Option<String> {
        self.auth.clone()
    }

    /// The agent's output ended before it wrote anything: it could not start (a gate).
    pub(crate) fn not_started(&mut self) -> Setup {
        // Its stdout has ended; its last stderr lines (why it could not start) may still be in
        // the pipe, read by another thread: wait for the pipe's end, briefly.
        self.agent.await_stderr(NOT_STARTED_STDERR_WAIT);
        let tail = self.agent.stderr_tail();
        let tail: String = tail.trim().chars().rev().take(600).collect::<Vec<_>>().into_iter().rev().collect();
        let why = if tail.is_empty() { String::new() } else { format!("; its stderr ends: {tail}") };
        let gate = Gate::NotStarted(format!("it ended before answering initialize{why}"));
        self.gate = Some(gate.clone());
        Setup::Gated(gate)
    }

    /// The authentication gate, with the methods the agent offered; kept as the scenario's.
    pub(crate) fn auth_gate(&mut self, detail: String) -> Gate {
        let methods = self.auth_methods.iter().map(auth_method).collect();
        let gate = Gate::Auth { methods, detail };
        self.gate = Some(gate.clone());
        gate
    }

    /// The gate of a `session/new` answer: `auth_required` from an agent that advertised
    /// `authMethods`. An agent that advertised none is not gated: it failed.
    pub(crate) fn gate_of(&mut self, answer: &Value) -> Option<Gate> {
        if error_code(answer) != Some(AUTH_REQUIRED) || self.auth_methods.is_empty() {
            return None;
        }
        let message = answer.pointer("/error/message").and_then(Value::as_str).unwrap_or("");
        let message: String = message.chars().take(200).collect();
        let after = if self.auth.is_some() { " after authenticate" } else { "" };
        Some(self.auth_gate(format!("session/new answered {AUTH_REQUIRED} {message:?}{after}")))
    }

    /// The handshake every scenario needs ([`Peer::handshake`]), then `session/new` in the
    /// working directory. Returns the `initialize` result, the session's id and the
    /// `session/new` result.
    pub(crate) fn open_session(&mut self, fs_read: bool) -> Result<(Value, String, Value), Setup> {
        let init = self.handshake(fs_read)?;
        let (session, result) = self.new_session()?;
        Ok((init, session, result))
    }

    /// `session/new` in the working directory; the session's id and the whole result.
    pub(crate) fn new_session(&mut self) -> Result<(String, Value), Setup> {
        let cwd = cwd();
        let answer =
            self.call("session/new", json!({"cwd": cwd, "mcpServers": []})).map_err(|e| format!("session/new: {e}"))?;
        if let Some(gate) = self.gate_of(&answer) {
            return Err(Setup::Gated(gate));
        }
        let result = result_of(&answer).map_err(|e| format!("session/new failed: {e}"))?;
        let id = result.get("sessionId").and_then(Value::as_str).map(str::to_owned);
        let id = id.ok_or_else(|| "session/new answered without a sessionId".to_owned())?;
        Ok((id, result.clone()))
    }

    /// A request answered after everything the agent wrote before it: what was queued (late
    /// updates, say) is read by then. Its answer does not matter.
    pub(crate) fn settle(&mut self) -> Result<(), Gone> {
        self.call("_acpcheck/ping", json!({})).map(drop)
    }

    /// `session/cancel` of `session`; held permission asks are answered `cancelled`, and so
    /// is every later one.
    pub(crate) fn cancel(&mut self, session: &str) {
        self.notify("session/cancel", json!({"sessionId": session}));
        self.cancelled = true;
        for id in std::mem::take(&mut self.held) {
            self.respond(&id, json!({"outcome": {"outcome": "cancelled"}}));
        }
    }

    /// A prompt of one text block; returns the request id.
    pub(crate) fn prompt(&mut self, session: &str, text: &str) -> i64 {
        self.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}))
    }

    /// Closes the agent's stdin and waits up to the timeout for it to exit; true if it did.
    pub(crate) fn close_stdin_and_wait(&mut self) -> bool {
        self.stdin = None;
        let deadline = Instant::now() + self.timeout;
        while Instant::now() < deadline {
            if self.agent.try_status().is_some() {
                return true;
            }
            // Keep reading so that an agent writing at exit never blocks on a full pipe.
            let _ = self.rx.recv_timeout(Duration::from_millis(10));
        }
        self.agent.try_status().is_some()
    }
}

/// `cwd` for sessions: the working directory of `acp check`.
pub(crate) fn cwd() -> String {
    std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| "/".to_owned())
}

/// Whether `message` is the response to our request `id`.
pub(crate) fn is_response_to(message: &Value, id: i64) -> bool {
    message.get("method").is_none() && message.get("id").and_then(Value::as_i64) == Some(id)
}

/// The `result` of a response, or its error as text.
pub(crate) fn result_of(message: &Value) -> Result<&Value, String> {
    if let Some(result) = message.get("result") {
        return Ok(result);
    }
    match message.get("error") {
        Some(error) => Err(format!("error {}", error)),
        None => Err("a response with neither result nor error".to_owned()),
    }
}

/// The error code of a response, if it is an error.
pub(crate) fn error_code(message: &Value) -> Option<i64> {
    message.get("error")?.get("code")?.as_i64()
}

/// An `authMethods` entry as the report shows it.
fn auth_method(method: &Value) -> AuthMethod {
    let text = |key: &str| method.get(key).and_then(Value::as_str).unwrap_or("").chars().take(200).collect();
    let kind: String = text("type");
    AuthMethod { id: text("id"), name: text("name"), kind: if kind.is_empty() { "agent".to_owned() } else { kind } }
}

/// A reject option of a permission ask (`reject_once`, else `reject_always`).
fn pick_reject(params: &Value) -> Option<String> {
    let options = params.get("options")?.as_array()?;
    let kind = |o: &&Value, k: &str| o.get("kind").and_then(Value::as_str) == Some(k);
    let option = options
        .iter()
        .find(|o| kind(o, "reject_once"))
        .or_else(|| options.iter().find(|o| kind(o, "reject_always")))?;
    option.get("optionId").and_then(Value::as_str).map(str::to_owned)
}

/// An allow option of a permission ask (else the first one offered).
fn pick_option(params: &Value) -> Option<String> {
    let options = params.get("options")?.as_array()?;
    let allow = options.iter().find(|o| o.get("kind").and_then(Value::as_str) == Some("allow_once"));
    let allow =
        allow.or_else(|| options.iter().find(|o| o.get("kind").and_then(Value::as_str) == Some("allow_always")));
    let option = allow.or_else(|| options.first())?;
    option.get("optionId").and_then(Value::as_str).map(str::to_owned)
}

/// The reader thread: cuts stdout into lines (at most [`LINE_MAX`] bytes each), records
/// them, and hands them to the scenario.
fn read_lines(stdout: impl Read, wire: &Mutex<Wire>, tx: &SyncSender<Incoming>) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        let mut limited = (&mut reader).take(LINE_MAX as u64);
        match limited.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') && line.len() >= LINE_MAX {
            skip_rest_of_line(&mut reader);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        wire.lock().unwrap_or_else(PoisonError::into_inner).record(Dir::A2c, text);
        let incoming = match serde_json::from_str::<Value>(text) {
            Ok(value) => Incoming::Json(value),
            Err(_) => Incoming::NotJson,
        };
        if tx.send(incoming).is_err() {
            return;
        }
    }
}

fn skip_rest_of_line(reader: &mut impl BufRead) {
    loop {
        let Ok(buf) = reader.fill_buf() else { return };
        if buf.is_empty() {
            return;
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return;
            }
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire() -> Mutex<Wire> {
        Mutex::new(Wire { started: Instant::now(), lines: Vec::new(), dropped: 0 })
    }

    #[test]
    fn an_allow_option_is_picked_else_the_first() {
        let ask = json!({"options": [
            {"optionId": "no", "kind": "reject_once"},
            {"optionId": "always", "kind": "allow_always"},
            {"optionId": "once", "kind": "allow_once"},
        ]});
        assert_eq!(pick_option(&ask).as_deref(), Some("once"));
        let ask = json!({"options": [{"optionId": "no", "kind": "reject_once"}, {"optionId": "always", "kind": "allow_always"}]});
        assert_eq!(pick_option(&ask).as_deref(), Some("always"));
        assert_eq!(pick_option(&json!({"options": [{"optionId": "x", "kind": "other"}]})).as_deref(), Some("x"));
        assert_eq!(pick_option(&json!({"options": []})), None);
    }

    #[test]
    fn an_endless_line_is_cut_and_the_next_one_still_read() {
        let mut input = vec![b'x'; LINE_MAX + 100];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\nnot json\n");
        let wire = wire();
        let (tx, rx) = sync_channel(QUEUE);
        read_lines(&input[..], &wire, &tx);
        drop(tx);
        let got: Vec<Incoming> = rx.iter().collect();
        assert!(matches!(got[0], Incoming::NotJson), "{got:?}");
        assert!(matches!(&got[1], Incoming::Json(v) if v["id"] == 1), "{got:?}");
        assert!(matches!(got[2], Incoming::NotJson), "{got:?}");
        assert_eq!(got.len(), 3);
        let wire = wire.lock().unwrap();
        assert!(wire.lines[0].line.ends_with(" …(cut)") && wire.lines[0].line.len() < SHOWN_MAX + 20);
    }

    #[test]
    fn the_transcript_keeps_its_first_lines_and_counts_the_rest() {
        let wire = wire();
        let mut wire = wire.lock().unwrap();
        for n in 0..TRANSCRIPT_MAX + 5 {
            wire.record(Dir::A2c, &n.to_string());
        }
        assert_eq!(wire.lines.len(), TRANSCRIPT_MAX);
        assert_eq!(wire.dropped, 5);
        assert_eq!(wire.lines[0].line, "0");
    }
}
