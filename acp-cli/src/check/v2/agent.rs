//! `acp check agent --protocol 2`: the v2 scenarios, each with a fresh agent process, spoken
//! to in raw JSON by the same peer as the v1 checks (`check::agent::peer`), judged against the
//! v2 pages and the newest v2 schema (see `super::requirements`).
//!
//! * handshake: `initialize` offering 2 (an agent that answers 1 speaks v1 only: the run is
//!   gated by the version, exit 3), and offering only 1 (a v1 client against a v2 agent);
//! * a turn: the prompt acknowledged, the user message, `running`, output with message ids,
//!   exactly one `idle` with a stop reason, nothing of the turn after it;
//! * `session/cancel` mid-turn: the idle says `cancelled`;
//! * `$/cancel_request` right after a request: exactly one response;
//! * `tool_call/cancel`: refused for a tool call that does not exist; for one that advertises
//!   `capabilities.cancel`, answered and followed by a final status;
//! * batches: a request and a notification in one array, and an empty array.

use serde_json::{Value, json};

use super::requirements::*;
use crate::check::agent::handshake::{err, shown};
use crate::check::agent::peer::{Gone, Peer, Setup, cwd, error_code, is_response_to, result_of};
use crate::check::agent::{AgentCheckConfig, Checks, Scenario, judge, run_scenarios, skip_all};
use crate::check::report::{Gate, Outcome, Report, Requirement};

/// Runs the v2 scenarios against the agent of `config`.
pub fn run(config: &AgentCheckConfig) -> Report {
    run_scenarios(config, SCENARIOS, 2)
}

const SCENARIOS: &[Scenario] = &[
    Scenario { checks: &[&A_VERSION, &A_INFO], run: handshake },
    Scenario { checks: &[&A_V1_CLIENT], run: v1_client },
    Scenario { checks: &[&A_ACCEPTED, &A_USER_MESSAGE, &A_RUNNING, &A_MESSAGE_IDS, &A_IDLE_ONCE], run: turn },
    Scenario { checks: &[&A_CANCEL_IDLE, &A_TOOL_CANCEL], run: cancel },
    Scenario { checks: &[&A_CANCEL_REQUEST], run: cancel_request },
    Scenario { checks: &[&A_TOOL_CANCEL_UNKNOWN, &A_BATCH_NOTIFICATION, &A_BATCH_ARRAY, &A_BATCH_EMPTY], run: rpc },
];

/// A prompt a reference-style agent answers with a tool call and a permission ask.
fn read_prompt(peer: &Peer) -> String {
    format!("acp check: read the file {} and tell me what it says", peer.file_path())
}

/// A prompt that keeps a reference-style agent busy.
const SLOW: &str = "acp check: slow — take your time, think it over at length";

/// `initialize` offering version 2; the result, or why the scenario stops (a version gate
/// when the agent answered 1).
fn initialize(peer: &mut Peer) -> Result<Value, Setup> {
    let params = json!({
        "protocolVersion": 2,
        "info": {"name": "acp-check", "version": env!("CARGO_PKG_VERSION")},
        "capabilities": {},
    });
    let answer = match peer.call("initialize", params) {
        Ok(answer) => answer,
        Err(Gone::Closed) if !peer.heard => return Err(peer.not_started()),
        Err(e) => return Err(Setup::Failed(format!("initialize: {e}"))),
    };
    let result = result_of(&answer).map_err(|e| format!("initialize answered {e}"))?.clone();
    match result.get("protocolVersion").and_then(Value::as_u64) {
        Some(2) => Ok(result),
        Some(v) if v < 2 => {
            let gate = Gate::Version(format!(
                "offered version 2, the agent answered {v}: it speaks v1 only (check it without --protocol 2)"
            ));
            peer.gate = Some(gate.clone());
            Err(Setup::Gated(gate))
        }
        _ => {
            Err(Setup::Failed(format!("initialize answered protocolVersion {}", shown(result.get("protocolVersion")))))
        }
    }
}

/// `initialize` (v2), then `session/new` in the working directory: the session's id.
fn open_session(peer: &mut Peer) -> Result<String, Setup> {
    initialize(peer)?;
    let answer = peer.call("session/new", json!({"cwd": cwd()})).map_err(|e| format!("session/new: {e}"))?;
    let result = result_of(&answer).map_err(|e| format!("session/new failed: {e}"))?;
    let id = result.get("sessionId").and_then(Value::as_str).map(str::to_owned);
    Ok(id.ok_or_else(|| "session/new answered without a sessionId".to_owned())?)
}

fn handshake(peer: &mut Peer) -> Checks {
    match initialize(peer) {
        Ok(result) => {
            let decoded = serde_json::from_value::<acp_proto::v2::InitializeResponse>(result.clone());
            let info = result.pointer("/info/name").is_some_and(Value::is_string)
                && result.pointer("/info/version").is_some_and(Value::is_string);
            vec![
                (&A_VERSION, judge(decoded.is_ok(), || format!("the result does not decode: {}", err(&decoded)))),
                (&A_INFO, judge(info, || format!("info is {}", shown(result.get("info"))))),
            ]
        }
        // Answering its latest version (1) is what the version negotiation asks.
        Err(Setup::Gated(Gate::Version(why))) => {
            vec![(&A_VERSION, Outcome::Pass), (&A_INFO, Outcome::Blocked(Gate::Version(why).reason()))]
        }
        Err(Setup::Failed(why)) => vec![(&A_VERSION, Outcome::Fail(why)), (&A_INFO, Outcome::Skip("no result".into()))],
        Err(gated) => skip_all(&[&A_VERSION, &A_INFO], &gated),
    }
}

/// A v1 client: `initialize` offering only version 1.
fn v1_client(peer: &mut Peer) -> Checks {
    let answer = match peer.initialize_with(1, false) {
        Ok(answer) => answer,
        Err(Gone::Closed) if !peer.heard => return skip_all(&[&A_V1_CLIENT], &peer.not_started()),
        Err(e) => return vec![(&A_V1_CLIENT, Outcome::Fail(format!("initialize: {e}")))],
    };
    let outcome = match (answer.pointer("/result/protocolVersion").and_then(Value::as_u64), error_code(&answer)) {
        (Some(1), _) => Outcome::Pass,
        (_, Some(-32022)) => Outcome::Pass,
        (Some(v), _) => Outcome::Fail(format!("offered only 1, answered version {v}, which the client cannot speak")),
        (None, Some(code)) => {
            Outcome::Fail(format!("offered only 1, answered error {code}, not -32022 (unsupported protocol version)"))
        }
        (None, None) => Outcome::Fail(format!("not an answer: {answer}")),
    };
    vec![(&A_V1_CLIENT, outcome)]
}

/// The `session/update` params of `session` that `peer` saw from index `from` on.
fn updates_of(peer: &Peer, session: &str, from: usize) -> Vec<Value> {
    updates_between(peer, session, from, peer.updates.len())
}

/// The `session/update` params of `session` that `peer` saw between two indexes.
fn updates_between(peer: &Peer, session: &str, from: usize, to: usize) -> Vec<Value> {
    let of = |u: &&Value| u.get("sessionId").and_then(Value::as_str) == Some(session);
    peer.updates[from..to].iter().filter(of).cloned().collect()
}

fn kind(update: &Value) -> &str {
    update.pointer("/update/sessionUpdate").and_then(Value::as_str).unwrap_or("")
}

fn is_idle(update: &Value) -> bool {
    kind(update) == "state_update" && update.pointer("/update/state").and_then(Value::as_str) == Some("idle")
}

/// Finds the idle that ends a turn in the agent's messages: the first idle `state_update`
/// after a `running`, or one with a stop reason. An idle before any `running` without a stop
/// reason is the session saying it is ready (an agent may send one after `session/new`).
#[derive(Default)]
struct TurnEnd {
    running: bool,
}

impl TurnEnd {
    /// Whether `params` (of a `session/update`) ends the turn.
    fn ends(&mut self, params: &Value) -> bool {
        let state = params.pointer("/update/state").and_then(Value::as_str);
        if kind(params) != "state_update" {
            return false;
        }
        self.running |= state == Some("running");
        state == Some("idle") && (self.running || params.pointer("/update/stopReason").is_some_and(|r| !r.is_null()))
    }

    /// Whether `message` is the `session/update` of `session` that ends the turn.
    fn ends_message(&mut self, message: &Value, session: &str) -> bool {
        message.get("method").and_then(Value::as_str) == Some("session/update")
            && message.pointer("/params/sessionId").and_then(Value::as_str) == Some(session)
            && message.get("params").is_some_and(|p| self.ends(p))
    }
}

/// Output of a turn (what must come after `running` and before the idle).
fn is_output(kind: &str) -> bool {
    kind.starts_with("agent_") || kind.starts_with("tool_call") || kind == "plan_update"
}

/// Message updates and chunks, which carry a `messageId`.
fn is_message(kind: &str) -> bool {
    matches!(
        kind,
        "user_message"
            | "user_message_chunk"
            | "agent_message"
            | "agent_message_chunk"
            | "agent_thought"
            | "agent_thought_chunk"
    )
}

/// The prompt's answer and the turn's updates up to its idle (then a settling request).
struct Turn {
    answer: Result<Value, Gone>,
    /// Whether the answer came before the idle.
    answered_first: bool,
    updates: Vec<Value>,
    /// Whether the idle came.
    idled: bool,
    /// Updates of the session after the idle, up to the settling request's answer.
    after: Vec<Value>,
}

/// Prompts `session` with `text` and follows the turn to its idle.
fn follow(peer: &mut Peer, session: &str, text: &str) -> Turn {
    let from = peer.updates.len();
    let id = peer.prompt(session, text);
    let mut answer = None;
    let mut answered_first = false;
    let mut idled = false;
    let mut end = TurnEnd::default();
    let got = peer.pump_until(peer.timeout * 2, |m| {
        if is_response_to(m, id) {
            answer = Some(m.clone());
            answered_first = !idled;
        }
        idled |= end.ends_message(m, session);
        idled && answer.is_some()
    });
    let at_idle = peer.updates.len();
    let _ = peer.settle();
    let answer = match (answer, got) {
        (Some(answer), _) => Ok(answer),
        (None, Err(e)) => Err(e),
        (None, Ok(_)) => Err(Gone::Closed),
    };
    let mut updates = updates_between(peer, session, from, at_idle);
    // Everything from just after the turn's idle on is after the turn.
    let mut end = TurnEnd::default();
    let mut after = match updates.iter().position(|u| end.ends(u)) {
        Some(i) => updates.split_off(i + 1),
        None => Vec::new(),
    };
    after.extend(updates_of(peer, session, at_idle));
    Turn { answer, answered_first, updates, idled, after }
}

fn turn(peer: &mut Peer) -> Checks {
    let checks: [&'static Requirement; 5] = [&A_ACCEPTED, &A_USER_MESSAGE, &A_RUNNING, &A_MESSAGE_IDS, &A_IDLE_ONCE];
    let session = match open_session(peer) {
        Ok(session) => session,
        Err(e) => return skip_all(&checks, &e),
    };
    let text = read_prompt(peer);
    let turn = follow(peer, &session, &text);
    let accepted = match &turn.answer {
        Err(e) => Outcome::Fail(format!("session/prompt: {e}")),
        Ok(answer) => match result_of(answer) {
            Err(e) => Outcome::Fail(format!("session/prompt answered {e}")),
            Ok(_) if !turn.answered_first => Outcome::Fail("the prompt was answered only after the turn's idle".into()),
            Ok(result) => {
                let decoded = serde_json::from_value::<acp_proto::v2::PromptResponse>(result.clone());
                judge(decoded.is_ok(), || format!("the result does not decode: {}", err(&decoded)))
            }
        },
    };
    let kinds: Vec<&str> = turn.updates.iter().map(kind).collect();
    let user = judge(kinds.iter().any(|k| k.starts_with("user_message")), || {
        format!("no user_message or user_message_chunk in the turn (it sent {kinds:?})")
    });
    let first_output = kinds.iter().position(|k| is_output(k));
    let running = turn.updates.iter().position(|u| {
        kind(u) == "state_update" && u.pointer("/update/state").and_then(Value::as_str) == Some("running")
    });
    let running = match (running, first_output) {
        (Some(r), Some(o)) if r < o => Outcome::Pass,
        (Some(_), None) => Outcome::Pass,
        (_, Some(_)) => Outcome::Fail(format!("output before any state_update running (it sent {kinds:?})")),
        (None, None) if turn.idled => Outcome::Fail("no state_update running before the idle".into()),
        (None, None) => Outcome::Fail("neither running nor idle came".into()),
    };
    let without_id = turn.updates.iter().find(|u| {
        is_message(kind(u)) && u.pointer("/update/messageId").is_none_or(|m| m.as_str().is_none_or(str::is_empty))
    });
    let ids = match without_id {
        Some(u) => Outcome::Fail(format!("a `{}` without a messageId", kind(u))),
        None if kinds.iter().any(|k| is_message(k)) => Outcome::Pass,
        None => Outcome::Skip("the turn sent no message update".into()),
    };
    vec![
        (&A_ACCEPTED, accepted),
        (&A_USER_MESSAGE, user),
        (&A_RUNNING, running),
        (&A_MESSAGE_IDS, ids),
        (&A_IDLE_ONCE, idle_once(&turn)),
    ]
}

/// Exactly one idle with a stop reason, and nothing of the turn after it.
fn idle_once(turn: &Turn) -> Outcome {
    if !turn.idled {
        return Outcome::Fail("the turn never reported idle".into());
    }
    let idle = turn.updates.last().filter(|u| is_idle(u));
    let reason = idle.and_then(|u| u.pointer("/update/stopReason")).and_then(Value::as_str);
    if reason.is_none_or(str::is_empty) {
        return Outcome::Fail("the idle that ended the turn has no stopReason".into());
    }
    let late: Vec<&str> = turn.after.iter().map(kind).filter(|k| is_output(k) || *k == "state_update").collect();
    judge(late.is_empty(), || format!("after the idle the turn went on: {late:?}"))
}

fn cancel(peer: &mut Peer) -> Checks {
    let session = match open_session(peer) {
        Ok(session) => session,
        Err(e) => return skip_all(&[&A_CANCEL_IDLE, &A_TOOL_CANCEL], &e),
    };
    peer.permissions = crate::check::agent::peer::Permissions::Hold;
    let from = peer.updates.len();
    peer.prompt(&session, SLOW);
    // Wait for the turn to be under way: output, or an ask.
    let mut end = TurnEnd::default();
    let started = peer.pump_until(peer.timeout, |m| {
        end.ends_message(m, &session)
            || m.get("method").and_then(Value::as_str) == Some("session/request_permission")
            || (m.pointer("/params/sessionId").and_then(Value::as_str) == Some(&session)
                && m.pointer("/params/update/sessionUpdate").and_then(Value::as_str).is_some_and(is_output))
    });
    match started {
        Err(e) => {
            return vec![
                (&A_CANCEL_IDLE, Outcome::Fail(format!("nothing came of the prompt: {e}"))),
                (&A_TOOL_CANCEL, Outcome::Skip("no turn".into())),
            ];
        }
        Ok(m) if m.pointer("/params/update/state").and_then(Value::as_str) == Some("idle") => {
            let ended = Outcome::Skip("the turn ended before it could be cancelled".to_owned());
            return vec![(&A_CANCEL_IDLE, ended.clone()), (&A_TOOL_CANCEL, ended)];
        }
        Ok(_) => {}
    }
    // A tool call it may announce cancellable comes soon after the output, or never.
    let mut ended = false;
    if find_cancellable(&updates_of(peer, &session, from)).is_none() {
        let _ = peer.pump_until(peer.timeout / 4, |m| {
            ended |= end.ends_message(m, &session);
            ended || m.get("params").is_some_and(|p| cancellable(p).is_some())
        });
    }
    if ended {
        let ended = Outcome::Skip("the turn ended before it could be cancelled".to_owned());
        return vec![(&A_CANCEL_IDLE, ended.clone()), (&A_TOOL_CANCEL, ended)];
    }
    let tool = tool_cancel(peer, &session, from);
    // A request just before the cancel: an idle that comes before its answer was sent before
    // the agent read the cancel (the turn ended first), one after it was not.
    let ping = peer.request("_acpcheck/ping", json!({}));
    peer.cancel(&session);
    let mut end = TurnEnd { running: true };
    let mut read_cancel = false;
    let idle = peer.pump_until(peer.timeout, |m| {
        read_cancel |= is_response_to(m, ping);
        end.ends_message(m, &session)
    });
    let outcome = match idle {
        Err(e) => Outcome::Fail(format!("after session/cancel: {e}")),
        Ok(m) => {
            let reason = m.pointer("/params/update/stopReason");
            match reason.and_then(Value::as_str) {
                Some("cancelled") => Outcome::Pass,
                _ if !read_cancel => {
                    Outcome::Skip(format!("the turn ended ({}) before the cancel reached the agent", shown(reason)))
                }
                _ => Outcome::Fail(format!("after session/cancel the idle says stopReason {}", shown(reason))),
            }
        }
    };
    vec![(&A_CANCEL_IDLE, outcome), (&A_TOOL_CANCEL, tool)]
}

/// The tool call a `tool_call_update` (its params) announces cancellable, if it does.
fn cancellable(params: &Value) -> Option<String> {
    let advertised = params.pointer("/update/capabilities/cancel").is_some_and(|c| !c.is_null());
    let id = params.pointer("/update/toolCallId").and_then(Value::as_str);
    (kind(params) == "tool_call_update" && advertised).then(|| id.map(str::to_owned)).flatten()
}

/// The latest tool call among `updates` that advertises `capabilities.cancel` (and has not
/// been updated since without it).
fn find_cancellable(updates: &[Value]) -> Option<String> {
    let mut open: Vec<String> = Vec::new();
    for u in updates.iter().filter(|u| kind(u) == "tool_call_update") {
        let id = u.pointer("/update/toolCallId").and_then(Value::as_str).unwrap_or("").to_owned();
        open.retain(|o| *o != id);
        if cancellable(u).is_some() {
            open.push(id);
        }
    }
    open.pop()
}

/// `tool_call/cancel` of a tool call of the running turn that advertises `capabilities.cancel`
/// (skipped when none does): answered, then a final status.
fn tool_cancel(peer: &mut Peer, session: &str, from: usize) -> Outcome {
    let Some(call) = find_cancellable(&updates_of(peer, session, from)) else {
        return Outcome::Skip("no tool call of the turn advertised capabilities.cancel".into());
    };
    let before = peer.updates.len();
    let answer = match peer.call("tool_call/cancel", json!({"sessionId": session, "toolCallId": call})) {
        Ok(answer) => answer,
        Err(e) => return Outcome::Fail(format!("tool_call/cancel: {e}")),
    };
    if let Err(e) = result_of(&answer) {
        return Outcome::Fail(format!("tool_call/cancel of {call:?}, which advertised cancel, answered {e}"));
    }
    let settled = |u: &Value| {
        kind(u) == "tool_call_update"
            && u.pointer("/update/toolCallId").and_then(Value::as_str) == Some(call.as_str())
            && u.pointer("/update/status")
                .and_then(Value::as_str)
                .is_some_and(|s| ["cancelled", "completed", "failed"].contains(&s))
    };
    if updates_of(peer, session, before).iter().any(settled) {
        return Outcome::Pass;
    }
    let mut end = TurnEnd { running: true };
    let got = peer.pump_until(peer.timeout, |m| m.get("params").is_some_and(settled) || end.ends_message(m, session));
    judge(got.is_ok_and(|m| m.get("params").is_some_and(settled)), || {
        format!("tool call {call:?} reached no final status after tool_call/cancel was answered")
    })
}

fn cancel_request(peer: &mut Peer) -> Checks {
    let session = match open_session(peer) {
        Ok(session) => session,
        Err(e) => return skip_all(&[&A_CANCEL_REQUEST], &e),
    };
    let id = peer.prompt(&session, SLOW);
    peer.notify("$/cancel_request", json!({"requestId": id}));
    let mut answers = 0;
    let first = peer.pump_until(peer.timeout, |m| {
        answers += usize::from(is_response_to(m, id));
        answers > 0
    });
    if let Err(e) = first {
        return vec![(&A_CANCEL_REQUEST, Outcome::Fail(format!("the prompt was never answered: {e}")))];
    }
    // The turn, if it started, is left to end (or cancelled), then a request settles it.
    let mut end = TurnEnd::default();
    let _ = peer.pump_until(peer.timeout, |m| {
        answers += usize::from(is_response_to(m, id));
        end.ends_message(m, &session)
    });
    let ping = peer.request("_acpcheck/ping", json!({}));
    let _ = peer.pump_until(peer.timeout, |m| {
        answers += usize::from(is_response_to(m, id));
        is_response_to(m, ping)
    });
    vec![(&A_CANCEL_REQUEST, judge(answers == 1, || format!("the request was answered {answers} times")))]
}

fn rpc(peer: &mut Peer) -> Checks {
    let checks: [&'static Requirement; 4] =
        [&A_TOOL_CANCEL_UNKNOWN, &A_BATCH_NOTIFICATION, &A_BATCH_ARRAY, &A_BATCH_EMPTY];
    let session = match open_session(peer) {
        Ok(session) => session,
        Err(e) => return skip_all(&checks, &e),
    };
    let unknown =
        match peer.call("tool_call/cancel", json!({"sessionId": session, "toolCallId": "acp-check-no-such-call"})) {
            Err(e) => Outcome::Fail(format!("tool_call/cancel: {e}")),
            Ok(answer) => match error_code(&answer) {
                // -32601: an agent that implements no tool_call/cancel (it advertises none).
                Some(-32602 | -32601) => Outcome::Pass,
                Some(code) => Outcome::Fail(format!("answered error {code}, not -32602")),
                None => Outcome::Fail(format!("accepted the cancel of a tool call that does not exist: {answer}")),
            },
        };
    let (notification, array) = batch(peer);
    vec![
        (&A_TOOL_CANCEL_UNKNOWN, unknown),
        (&A_BATCH_NOTIFICATION, notification),
        (&A_BATCH_ARRAY, array),
        (&A_BATCH_EMPTY, empty_batch(peer)),
    ]
}

/// A batch of a request (an unknown method, answered -32601) and a notification.
fn batch(peer: &mut Peer) -> (Outcome, Outcome) {
    let id = peer.next_request_id();
    let line = json!([
        {"jsonrpc": "2.0", "id": id, "method": "_acpcheck/batched", "params": {}},
        {"jsonrpc": "2.0", "method": "_acpcheck/batched_note", "params": {}},
    ]);
    let strays = peer.stray_responses.len();
    peer.send_raw(&line.to_string());
    // An agent that refuses batches answers one -32600 with id null: no use waiting on.
    let refused = |m: &Value| error_code(m) == Some(-32600) && m.get("id") == Some(&Value::Null);
    let answered = |m: &Value| match m {
        Value::Array(items) => items.iter().any(|i| is_response_to(i, id)),
        other => is_response_to(other, id) || refused(other),
    };
    let got = peer.pump_until(peer.timeout, answered);
    // What came back for the notification: a response without our id, in the array or alone.
    let _ = peer.settle();
    let replies: Vec<Value> = peer.stray_responses[strays..]
        .iter()
        .flat_map(|m| m.as_array().cloned().unwrap_or_else(|| vec![m.clone()]))
        .filter(|m| !is_response_to(m, id) && m.get("method").is_none() && !refused(m))
        .collect();
    let notification = judge(replies.is_empty(), || format!("answered the notification: {}", replies[0]));
    let array = match got {
        Err(e) => Outcome::Fail(format!("the batched request was not answered: {e}")),
        Ok(Value::Array(items)) => {
            let ours = items.iter().filter(|i| is_response_to(i, id)).count();
            judge(ours == 1, || format!("the array holds {ours} responses to the request"))
        }
        Ok(refusal) if refused(&refusal) => Outcome::Fail(format!("refused the batch: {refusal}")),
        Ok(single) => Outcome::Fail(format!("answered with a single response, not an array: {single}")),
    };
    (notification, array)
}

/// `[]`: a single `-32600` with `id: null`.
fn empty_batch(peer: &mut Peer) -> Outcome {
    let strays = peer.stray_responses.len();
    peer.send_raw("[]");
    if let Err(e) = peer.settle() {
        return Outcome::Fail(format!("after an empty batch: {e}"));
    }
    let replies = &peer.stray_responses[strays..];
    match replies {
        [one] if error_code(one) == Some(-32600) && one.get("id") == Some(&Value::Null) => Outcome::Pass,
        [] => Outcome::Fail("no answer to an empty batch".into()),
        [one] => Outcome::Fail(format!("answered an empty batch with {one}, not -32600 with id null")),
        many => Outcome::Fail(format!("answered an empty batch {} times", many.len())),
    }
}
