//! The scripted agent: it answers the client's handshake, and when the client prompts it runs
//! the scenario's turn, recording what the client answered for the judges.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::launch::Launched;
use super::turn;
use super::wire::Wire;

/// The session id the scripted agent gives out.
pub(crate) const SESSION: &str = "acp-check-session-1";

/// Cancels and unawaited responses kept per scenario (a flood beyond is not kept).
const MAX_KEPT: usize = 64;

/// How the scripted agent behaves when prompted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Script {
    /// Every update kind, unknown requests and notifications, a permission ask, fs and
    /// terminal calls, then `end_turn`.
    Full,
    /// One chunk, then this stop reason.
    Stop(&'static str),
    /// A permission ask, then the client is interrupted (SIGINT) and should cancel.
    Cancel,
    /// One chunk, then the agent's connection ends.
    Die,
}

/// What a request of the agent got back: the response message, or nothing in time.
pub(crate) type Reply = Option<Value>;

/// A permission ask and its answer.
#[derive(Debug, Clone)]
pub(crate) struct PermissionAsk {
    /// The optionIds offered.
    pub(crate) offered: Vec<String>,
    /// The response message (None: no answer).
    pub(crate) reply: Reply,
    /// Whether the client had sent `session/cancel` before answering.
    pub(crate) after_cancel: bool,
}

/// What the scripted agent saw of the client, beyond the raw log.
#[derive(Debug, Default, Clone)]
pub(crate) struct Observed {
    /// The client's capabilities as it sent them in `initialize`.
    pub(crate) caps: Value,
    /// The cwd of `session/new`.
    pub(crate) cwd: Option<String>,
    /// Replies to the unknown requests, by method.
    pub(crate) unknown: Vec<(&'static str, Reply)>,
    /// Whether the client answered a request right after every update kind was streamed.
    pub(crate) alive_after_updates: Option<bool>,
    /// Whether it answered one right after the unknown notifications.
    pub(crate) alive_after_notifications: Option<bool>,
    /// Permission asks.
    pub(crate) permissions: Vec<PermissionAsk>,
    /// `fs/read_text_file`: the reply, and whether the content was the file's.
    pub(crate) read: Option<(Reply, bool)>,
    /// `fs/write_text_file`: the reply, and whether the file then held the text.
    pub(crate) write: Option<(Reply, bool)>,
    /// `terminal/*`: each call with its reply.
    pub(crate) terminal: Vec<(&'static str, Reply)>,
    /// Each `session/cancel` the client sent: its message, and whether a permission ask was
    /// pending then.
    pub(crate) cancels: Vec<(Value, bool)>,
    /// Whether the client was sent SIGINT.
    pub(crate) interrupted: bool,
    /// The stop reason the turn ended with, once the agent answered the prompt.
    pub(crate) stopped: Option<&'static str>,
}

/// The scripted agent of one scenario.
pub(crate) struct Agent<'a> {
    pub(crate) wire: Wire,
    pub(crate) launched: &'a Launched,
    pub(crate) script: Script,
    /// How long one answer of the client is waited for.
    pub(crate) step: Duration,
    /// When the scenario ends, whatever happens.
    pub(crate) deadline: Instant,
    pub(crate) observed: Observed,
    /// Responses of the client that arrived while something else was awaited, by id.
    pub(crate) early: HashMap<String, Value>,
    in_turn: bool,
    /// Set once the prompt was answered (or the connection ended by the script).
    pub(crate) turn_done: bool,
    pending_permission: Option<String>,
}

impl<'a> Agent<'a> {
    pub(crate) fn new(wire: Wire, launched: &'a Launched, script: Script, step: Duration, deadline: Instant) -> Self {
        Agent {
            wire,
            launched,
            script,
            step,
            deadline,
            observed: Observed::default(),
            early: HashMap::new(),
            in_turn: false,
            turn_done: false,
            pending_permission: None,
        }
    }

    /// Serves the client until the turn is over (then a short linger for its exit), the
    /// deadline passes, or its output ends.
    pub(crate) fn serve(&mut self, linger: Duration) {
        while !self.turn_done {
            match self.wire.next(self.deadline) {
                Some(message) => self.dispatch(message),
                None => return,
            }
        }
        let until = self.deadline.min(Instant::now() + linger);
        while let Some(message) = self.wire.next(until) {
            self.dispatch(message);
        }
    }

    /// Handles one message of the client that nobody is waiting for.
    pub(crate) fn dispatch(&mut self, message: Value) {
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = message.get("id").cloned();
        match (method, id) {
            (Some(method), Some(id)) => self.on_request(&method, &id, &message),
            (Some(method), None) => {
                if method == "session/cancel" && self.observed.cancels.len() < MAX_KEPT {
                    let pending = self.pending_permission.is_some();
                    self.observed.cancels.push((message, pending));
                }
            }
            (None, Some(id)) if self.early.len() < MAX_KEPT => {
                // The pending ask answered before any cancel: no longer pending.
                if self.pending_permission.as_deref() == Some(id.to_string().as_str()) {
                    self.pending_permission = None;
                }
                self.early.insert(id.to_string(), message);
            }
            (None, Some(_)) => {}
            (None, None) => {}
        }
    }

    fn on_request(&mut self, method: &str, id: &Value, message: &Value) {
        match method {
            "initialize" => {
                self.observed.caps = message.pointer("/params/clientCapabilities").cloned().unwrap_or(Value::Null);
                self.wire.respond(id, initialize_result());
            }
            "session/new" => {
                self.observed.cwd = message.pointer("/params/cwd").and_then(Value::as_str).map(str::to_owned);
                self.wire.respond(id, json!({"sessionId": SESSION}));
            }
            "session/prompt" if !self.in_turn && !self.turn_done => {
                self.in_turn = true;
                let stop = turn::run(self);
                self.in_turn = false;
                self.turn_done = true;
                if let Some(stop) = stop {
                    self.observed.stopped = Some(stop);
                    self.wire.respond(id, json!({"stopReason": stop}));
                }
            }
            "session/prompt" => self.wire.respond(id, json!({"stopReason": "end_turn"})),
            _ => self.wire.respond_error(id, -32601, "Method not found"),
        }
    }

    /// Sends a request and waits (one step) for its answer, serving the client meanwhile.
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Reply {
        let id = self.wire.request(method, params);
        self.await_reply(&id, self.step)
    }

    /// Waits up to `wait` for the response to `id`.
    pub(crate) fn await_reply(&mut self, id: &Value, wait: Duration) -> Reply {
        let key = id.to_string();
        let until = self.deadline.min(Instant::now() + wait);
        loop {
            if let Some(reply) = self.early.remove(&key) {
                return Some(reply);
            }
            let message = self.wire.next(until)?;
            if message.get("method").is_none() && message.get("id").map(Value::to_string) == Some(key.clone()) {
                return Some(message);
            }
            self.dispatch(message);
        }
    }

    /// Serves the client until a `session/cancel` arrives (true), or `wait` passes.
    pub(crate) fn await_cancel(&mut self, wait: Duration) -> bool {
        let until = self.deadline.min(Instant::now() + wait);
        let before = self.observed.cancels.len();
        while self.observed.cancels.len() == before {
            match self.wire.next(until) {
                Some(message) => self.dispatch(message),
                None => return false,
            }
        }
        true
    }

    /// Marks a permission ask as pending (its id) or answered (`None`).
    pub(crate) fn set_pending(&mut self, id: Option<&Value>) {
        self.pending_permission = id.map(Value::to_string);
    }

    /// Whether the client has sent `session/cancel` yet.
    pub(crate) fn cancelled(&self) -> bool {
        !self.observed.cancels.is_empty()
    }

    /// A `session/update` notification for the session.
    pub(crate) fn update(&mut self, update: Value) {
        self.wire.notify("session/update", json!({"sessionId": SESSION, "update": update}));
    }
}

/// The agent advertises nothing optional: no authMethods, no loadSession, no session
/// capabilities, so that every such call of the client is out of bounds.
fn initialize_result() -> Value {
    json!({
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": false,
            "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
            "mcpCapabilities": {"http": false, "sse": false},
            "sessionCapabilities": {}
        },
        "authMethods": [],
        "agentInfo": {"name": "acp-check", "title": "acp check client (scripted agent)", "version": env!("CARGO_PKG_VERSION")}
    })
}
