//! The scripted v2 agent of `acp check client --protocol 2`: it answers the handshake in v2
//! (or, in the `v1-agent` scenario, as a v1-only agent), and when prompted acknowledges at
//! once and runs the turn of its [`Script`] as `session/update`s up to an `idle`, recording
//! what the client did for the judges.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::check::client::launch::Launched;
use crate::check::client::wire::Wire;

/// The session id the scripted agent gives out.
pub(crate) const SESSION: &str = "acp-check-v2-session-1";

/// Kept per scenario: a flood beyond is not.
const MAX_KEPT: usize = 64;

/// How the scripted agent behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Script {
    /// A turn: the user message, running, output, a batch of a notification and a request,
    /// an unknown request, a permission ask, then idle `end_turn`.
    Turn,
    /// A permission ask, then `SIGINT` to the client; idle `cancelled` once it cancels.
    Cancel,
    /// A v1-only agent: `initialize` answered with version 1.
    V1Agent,
}

/// What a request of the agent got back (None: nothing in time).
pub(crate) type Reply = Option<Value>;

/// What the scripted agent saw of the client.
#[derive(Debug, Default, Clone)]
pub(crate) struct Observed {
    /// The `initialize` params.
    pub(crate) init: Option<Value>,
    /// Whether the prompt was acknowledged (the turn started).
    pub(crate) acked: bool,
    /// Whether the client's output ended before the turn's idle was sent.
    pub(crate) gone_before_idle: bool,
    /// Whether the idle was sent.
    pub(crate) idle_sent: bool,
    /// The permission ask sent after the acknowledgement: offered options and the reply.
    pub(crate) permission: Option<(Vec<String>, Reply, bool)>,
    /// The reply to the unknown request.
    pub(crate) unknown: Option<Reply>,
    /// What came back for the batch: the reply message (an array, or a single response).
    pub(crate) batch: Option<Reply>,
    /// Responses that answer none of the agent's requests (e.g. to a notification).
    pub(crate) strays: Vec<Value>,
    /// Each `tool_call/cancel`: the tool call, and whether it advertised `cancel` then.
    pub(crate) tool_cancels: Vec<(String, bool)>,
    /// Each `session/cancel`: its message, and whether a permission ask was pending then.
    pub(crate) cancels: Vec<(Value, bool)>,
    /// Whether SIGINT was sent.
    pub(crate) interrupted: bool,
    /// After a v1 answer to `initialize`: the client's requests and notifications.
    pub(crate) after_v1: Vec<Value>,
}

/// The scripted agent of one scenario.
pub(crate) struct Agent<'a> {
    pub(crate) wire: Wire,
    launched: &'a Launched,
    script: Script,
    step: Duration,
    deadline: Instant,
    pub(crate) observed: Observed,
    /// Responses that arrived while something else was awaited, by id.
    early: HashMap<String, Value>,
    /// Tool calls announced: whether each advertises `cancel` now, and whether it ever did
    /// (a client may send `tool_call/cancel` before it reads the update that settled the call).
    tools: HashMap<String, (bool, bool)>,
    pending_permission: Option<String>,
    done: bool,
    v1: bool,
}

fn update(update: Value) -> Value {
    json!({"sessionId": SESSION, "update": update})
}

fn chunk(id: &str, text: &str) -> Value {
    json!({"sessionUpdate": "agent_message_chunk", "messageId": id, "content": {"type": "text", "text": text}})
}

fn tool(id: &str, status: &str, cancellable: bool) -> Value {
    let mut t = json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "title": format!("Step {id}"), "kind": "other", "status": status});
    if cancellable {
        t["capabilities"] = json!({"cancel": {}});
    }
    t
}

impl<'a> Agent<'a> {
    pub(crate) fn new(wire: Wire, launched: &'a Launched, script: Script, step: Duration, deadline: Instant) -> Self {
        let (early, tools) = (HashMap::new(), HashMap::new());
        let observed = Observed::default();
        Agent {
            wire,
            launched,
            script,
            step,
            deadline,
            observed,
            early,
            tools,
            pending_permission: None,
            done: false,
            v1: false,
        }
    }

    /// Serves the client until the turn is over (then a short linger), the deadline, or its
    /// output's end.
    pub(crate) fn serve(&mut self, linger: Duration) {
        while !self.done {
            match self.wire.next(self.deadline) {
                Some(message) => self.dispatch(message),
                None => break,
            }
        }
        let until = self.deadline.min(Instant::now() + linger);
        while let Some(message) = self.wire.next(until) {
            self.dispatch(message);
        }
    }

    fn keep(list: &mut Vec<Value>, message: Value) {
        if list.len() < MAX_KEPT {
            list.push(message);
        }
    }

    /// Handles one message of the client that nobody is waiting for.
    fn dispatch(&mut self, message: Value) {
        if self.v1 && message.get("method").is_some() {
            Self::keep(&mut self.observed.after_v1, message.clone());
        }
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        match (method, message.get("id").cloned()) {
            (Some(method), Some(id)) => self.on_request(&method, &id, &message),
            (Some(method), None) if method == "session/cancel" && self.observed.cancels.len() < MAX_KEPT => {
                let pending = self.pending_permission.is_some();
                self.observed.cancels.push((message, pending));
            }
            (Some(_), None) => {}
            (None, Some(id)) if !id.is_null() && self.early.len() < MAX_KEPT => {
                if self.pending_permission.as_deref() == Some(id.to_string().as_str()) {
                    self.pending_permission = None;
                }
                self.early.insert(id.to_string(), message);
            }
            _ => Self::keep(&mut self.observed.strays, message),
        }
    }

    fn on_request(&mut self, method: &str, id: &Value, message: &Value) {
        match method {
            "initialize" => self.initialize(id, message),
            "session/new" if self.v1 => self.wire.respond(id, json!({"sessionId": SESSION})),
            "session/new" => self.wire.respond(id, json!({"sessionId": SESSION})),
            "session/prompt" if self.v1 => {
                self.wire.notify(
                    "session/update",
                    update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "v1"}})),
                );
                self.wire.respond(id, json!({"stopReason": "end_turn"}));
                self.done = true;
            }
            "session/prompt" if !self.observed.acked => {
                self.observed.acked = true;
                self.wire.respond(id, json!({"messageId": "acp-check-user-1"}));
                self.turn();
                self.done = true;
            }
            "tool_call/cancel" => self.tool_cancel(id, message),
            _ => self.wire.respond_error(id, -32601, "Method not found"),
        }
    }

    fn initialize(&mut self, id: &Value, message: &Value) {
        self.observed.init = message.get("params").cloned();
        let offered = message.pointer("/params/protocolVersion").and_then(Value::as_u64);
        if self.script == Script::V1Agent {
            self.v1 = true;
            let info = json!({"name": "acp-check", "version": env!("CARGO_PKG_VERSION")});
            self.wire.respond(
                id,
                json!({"protocolVersion": 1, "agentCapabilities": {}, "authMethods": [], "agentInfo": info}),
            );
            // A client that speaks v1 goes on; one that does not closes: either way, soon.
            self.deadline = self.deadline.min(Instant::now() + self.step);
        } else if offered == Some(2) || offered.is_some_and(|v| v > 2) {
            let info = json!({"name": "acp-check", "title": "acp check client (scripted v2 agent)", "version": env!("CARGO_PKG_VERSION")});
            self.wire.respond(id, json!({"protocolVersion": 2, "info": info, "capabilities": {"session": {}}}));
        } else {
            let data = json!({"requested": offered, "supported": [2]});
            let error = json!({"code": -32022, "message": "Unsupported protocol version", "data": data});
            self.wire.send(&json!({"jsonrpc": "2.0", "id": id, "error": error}));
            self.done = true;
        }
    }

    fn tool_cancel(&mut self, id: &Value, message: &Value) {
        let call = message.pointer("/params/toolCallId").and_then(Value::as_str).unwrap_or("").to_owned();
        let (now, ever) = self.tools.get(&call).copied().unwrap_or((false, false));
        if self.observed.tool_cancels.len() < MAX_KEPT {
            self.observed.tool_cancels.push((call.clone(), ever));
        }
        if now {
            self.wire.respond(id, json!({}));
            self.send(tool(&call, "cancelled", false));
        } else {
            self.wire.respond_error(id, -32602, "the tool call is unknown, final or not cancellable");
        }
    }

    /// Sends a session/update, noting what it says of tool calls.
    fn send(&mut self, body: Value) {
        if let Some(id) = body.get("toolCallId").and_then(Value::as_str) {
            let cancellable = body.pointer("/capabilities/cancel").is_some_and(|c| !c.is_null());
            let ever = self.tools.get(id).is_some_and(|t| t.1);
            self.tools.insert(id.to_owned(), (cancellable, ever || cancellable));
        }
        self.wire.notify("session/update", update(body));
    }

    /// Sends a request and waits (one step) for its answer, serving the client meanwhile.
    fn call(&mut self, method: &str, params: Value) -> Reply {
        let id = self.wire.request(method, params);
        self.await_reply(&id, self.step)
    }

    fn await_reply(&mut self, id: &Value, wait: Duration) -> Reply {
        let key = id.to_string();
        let until = self.deadline.min(Instant::now() + wait);
        loop {
            if let Some(reply) = self.early.remove(&key) {
                return Some(reply);
            }
            let message = self.wire.next(until)?;
            let ours = |m: &Value| m.get("method").is_none() && m.get("id").map(Value::to_string) == Some(key.clone());
            match &message {
                Value::Array(items) if items.iter().any(ours) => return Some(message),
                m if ours(m) => return Some(message),
                _ => self.dispatch(message),
            }
        }
    }

    fn ask(&mut self, call: &str) -> (Vec<String>, Value) {
        let options = json!([
            {"optionId": "check-allow", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "check-reject", "name": "Reject", "kind": "reject_once"},
        ]);
        let params = json!({"sessionId": SESSION, "title": format!("Run step {call}"),
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": call}}, "options": options});
        (vec!["check-allow".into(), "check-reject".into()], params)
    }

    fn start(&mut self) {
        self.send(json!({"sessionUpdate": "user_message", "messageId": "acp-check-user-1",
            "content": [{"type": "text", "text": "(the prompt)"}]}));
        self.send(json!({"sessionUpdate": "state_update", "state": "running"}));
        self.send(chunk("acp-check-agent-1", "a v2 turn from acp check"));
    }

    fn idle(&mut self, stop: &str) {
        self.observed.gone_before_idle = self.wire.eof;
        self.send(json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": stop}));
        self.observed.idle_sent = true;
    }

    fn turn(&mut self) {
        self.start();
        match self.script {
            Script::Turn => self.full(),
            Script::Cancel => self.cancel(),
            Script::V1Agent => {}
        }
    }

    fn full(&mut self) {
        self.send(tool("check-call-1", "pending", false));
        self.send(tool("check-call-2", "in_progress", true));
        let id = self.wire.next_id();
        let batch = json!([
            {"jsonrpc": "2.0", "method": "session/update", "params": update(chunk("acp-check-agent-1", " (batched)"))},
            {"jsonrpc": "2.0", "id": id, "method": "_acp_check/batched", "params": {"sessionId": SESSION}},
        ]);
        self.wire.send(&batch);
        self.observed.batch = Some(self.await_reply(&id, self.step));
        self.observed.unknown = Some(self.call("acp_check/unknown_request", json!({"sessionId": SESSION})));
        let (offered, params) = self.ask("check-call-1");
        let reply = self.call("session/request_permission", params);
        self.observed.permission = Some((offered, reply, false));
        self.send(tool("check-call-1", "completed", false));
        self.send(tool("check-call-2", "completed", false));
        self.idle("end_turn");
    }

    /// A permission ask, then `SIGINT` as a user's Ctrl-C.
    fn cancel(&mut self) {
        self.send(tool("check-call-3", "pending", false));
        self.send(tool("check-call-4", "in_progress", true));
        let (offered, params) = self.ask("check-call-3");
        let id = self.wire.request("session/request_permission", params);
        self.pending_permission = Some(id.to_string());
        let mut reply = self.await_reply(&id, Duration::from_millis(300));
        if reply.is_some() {
            self.pending_permission = None;
        }
        self.observed.interrupted = self.launched.interrupt();
        let rest = self.deadline.saturating_duration_since(Instant::now());
        let cancelled = self.observed.interrupted && self.await_cancel(rest);
        let mut after_cancel = false;
        if reply.is_none() {
            if let Some(before) = self.early.remove(&id.to_string()) {
                reply = Some(before);
            } else if cancelled {
                let rest = self.deadline.saturating_duration_since(Instant::now());
                reply = self.await_reply(&id, rest);
                after_cancel = true;
            }
        }
        self.pending_permission = None;
        self.observed.permission = Some((offered, reply, after_cancel));
        if cancelled {
            self.send(tool("check-call-3", "cancelled", false));
            self.send(tool("check-call-4", "cancelled", false));
            self.idle("cancelled");
        }
    }

    fn await_cancel(&mut self, wait: Duration) -> bool {
        let until = self.deadline.min(Instant::now() + wait);
        while self.observed.cancels.is_empty() {
            match self.wire.next(until) {
                Some(message) => self.dispatch(message),
                None => return false,
            }
        }
        true
    }
}
