//! Scenarios of prompt turns: a full turn (permission asks answered, the offered file
//! served), the same turn with its permission refused, a turn with no client capability
//! advertised, and two sessions prompted at once.

use acp_proto::types::{PromptResponse, RequestPermissionRequest, SessionNotification};
use serde_json::Value;

use super::super::report::Outcome;
use super::handshake::{err, shown};
use super::peer::{Peer, Permissions, is_response_to, result_of};
use super::requirements::*;
use super::{Checks, Scenario, judge, skip_all};

/// A prompt that asks for the offered file: reference-style agents ask permission and read
/// it, a model-backed agent at least answers.
fn read_prompt(peer: &Peer) -> String {
    format!("acp check: read the file {} and tell me what it says", peer.file_path())
}

/// Initialize (with `fs.readTextFile`), a session, one prompt turn.
pub(super) const FULL_TURN: Scenario = Scenario { checks: &[&TURN_STOP, &TURN_UPDATES, &TURN_ASKS], run: full_turn };

/// The full turn with its permission ask refused: the tool call must settle.
pub(super) const REFUSED: Scenario = Scenario { checks: &[&TOOL_REFUSED_SETTLES], run: refused };

/// A turn asking for file and terminal work when the client advertised neither.
pub(super) const CAPABILITY_NEGATIVES: Scenario =
    Scenario { checks: &[&CAP_FS, &CAP_TERMINAL], run: capability_negatives };

/// Two sessions, each prompted, both prompts in flight at once.
pub(super) const CONCURRENCY: Scenario = Scenario { checks: &[&CONCURRENT], run: concurrency };

/// The five stop reasons of the schema.
const STOP_REASONS: &[&str] = &["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"];

fn full_turn(peer: &mut Peer) -> Checks {
    let session = match peer.open_session(true) {
        Ok((_, session, _)) => session,
        Err(e) => return skip_all(FULL_TURN.checks, &e),
    };
    let text = read_prompt(peer);
    let id = peer.prompt(&session, &text);
    let stop = match peer.response(id) {
        Err(e) => Outcome::Fail(format!("session/prompt: {e}")),
        Ok(answer) => stop_reason_outcome(&answer),
    };
    // Whatever the agent wrote after the response is read too (late updates).
    let _ = peer.settle();
    vec![(&TURN_STOP, stop), (&TURN_UPDATES, updates_outcome(peer, &[&session])), (&TURN_ASKS, asks_outcome(peer))]
}

fn refused(peer: &mut Peer) -> Checks {
    let session = match peer.open_session(true) {
        Ok((_, session, _)) => session,
        Err(e) => return skip_all(REFUSED.checks, &e),
    };
    peer.permissions = Permissions::Reject;
    let text = read_prompt(peer);
    let id = peer.prompt(&session, &text);
    let answer = peer.response(id);
    // The status when the turn ended: what came after the response is late, not a settlement.
    let status = peer.rejected.first().map(|(s, call)| {
        let ask = peer.asks.iter().find(|a| a.pointer("/toolCall/toolCallId").and_then(Value::as_str) == Some(call));
        let asked = ask.and_then(|a| a.pointer("/toolCall/status")).and_then(Value::as_str);
        (call.clone(), peer.track.status(s, call).or(asked).map(str::to_owned))
    });
    let _ = peer.settle();
    let outcome = match (answer, status) {
        (Err(e), _) => Outcome::Fail(format!("session/prompt after the refusal: {e}")),
        (Ok(_), None) if peer.asks.is_empty() => Outcome::Skip("the agent asked no permission".to_owned()),
        (Ok(_), None) => Outcome::Skip("no ask offered a reject option".to_owned()),
        (Ok(_), Some((call, None))) => {
            Outcome::Skip(format!("the refused tool call {call:?} was never announced nor given a status"))
        }
        (Ok(_), Some((call, Some(status)))) => judge(status == "completed" || status == "failed", || {
            format!("tool call {call:?} was refused, and when the turn ended it was still {status}")
        }),
    };
    vec![(&TOOL_REFUSED_SETTLES, outcome)]
}

/// Whether a prompt's response carries a valid stop reason.
pub(super) fn stop_reason_outcome(answer: &Value) -> Outcome {
    match result_of(answer) {
        Err(e) => Outcome::Fail(format!("session/prompt answered {e}")),
        Ok(result) => {
            let reason = result.get("stopReason").and_then(Value::as_str).unwrap_or("");
            let decoded = serde_json::from_value::<PromptResponse>(result.clone());
            judge(decoded.is_ok() && STOP_REASONS.contains(&reason), || {
                format!(
                    "stopReason {} is not one of {STOP_REASONS:?} {}",
                    shown(result.get("stopReason")),
                    err(&decoded)
                )
            })
        }
    }
}

/// Every update decodes and names one of `sessions`.
fn updates_outcome(peer: &Peer, sessions: &[&str]) -> Outcome {
    for update in &peer.updates {
        if let Err(e) = serde_json::from_value::<SessionNotification>(update.clone()) {
            return Outcome::Fail(format!("a session/update does not decode: {e}"));
        }
        let id = update.get("sessionId").and_then(Value::as_str).unwrap_or("");
        if !sessions.contains(&id) {
            return Outcome::Fail(format!("a session/update names session {id:?}, not one of {sessions:?}"));
        }
    }
    Outcome::Pass
}

/// Every permission ask decodes and offers an option.
fn asks_outcome(peer: &Peer) -> Outcome {
    if peer.asks.is_empty() {
        return Outcome::Skip("the agent asked no permission".to_owned());
    }
    for ask in &peer.asks {
        if let Err(e) = serde_json::from_value::<RequestPermissionRequest>(ask.clone()) {
            return Outcome::Fail(format!("a permission ask does not decode: {e}"));
        }
        if ask.get("options").and_then(Value::as_array).is_none_or(Vec::is_empty) {
            return Outcome::Fail("a permission ask offers no option".to_owned());
        }
    }
    Outcome::Pass
}

fn capability_negatives(peer: &mut Peer) -> Checks {
    let session = match peer.open_session(false) {
        Ok((_, session, _)) => session,
        Err(e) => return skip_all(CAPABILITY_NEGATIVES.checks, &e),
    };
    let text = format!("{}; then append a line to it, and run `ls` in a terminal", read_prompt(peer));
    let id = peer.prompt(&session, &text);
    let ended = peer.response(id);
    let called = |prefix: &str| peer.violations.iter().filter(|m| m.starts_with(prefix)).cloned().collect::<Vec<_>>();
    let fs = called("fs/");
    let terminal = called("terminal/");
    let why = |calls: Vec<String>| move || format!("called {calls:?} (answered -32601)");
    let mut checks =
        vec![(&CAP_FS, judge(fs.is_empty(), why(fs))), (&CAP_TERMINAL, judge(terminal.is_empty(), why(terminal)))];
    if let Err(e) = ended {
        for (_, outcome) in checks.iter_mut().filter(|(_, o)| *o == Outcome::Pass) {
            *outcome = Outcome::Skip(format!("the turn did not end: {e}"));
        }
    }
    checks
}

fn concurrency(peer: &mut Peer) -> Checks {
    let opened = peer.open_session(true).and_then(|(_, one, _)| Ok((one, peer.new_session()?.0)));
    let (one, two) = match opened {
        Ok(sessions) => sessions,
        Err(e) => return skip_all(CONCURRENCY.checks, &e),
    };
    let text = read_prompt(peer);
    let first = peer.prompt(&one, &format!("{text} (session one)"));
    let second = peer.prompt(&two, &format!("{text} (session two)"));
    let mut answers: Vec<(i64, Value)> = Vec::new();
    let mut extra = 0;
    while answers.len() < 2 {
        let got = peer.pump_until(peer.timeout, |m| is_response_to(m, first) || is_response_to(m, second));
        match got {
            Err(e) => {
                return vec![(
                    &CONCURRENT,
                    Outcome::Fail(format!("{} of 2 prompts answered, then {e}", answers.len())),
                )];
            }
            Ok(message) => {
                let id = message.get("id").and_then(Value::as_i64).unwrap_or(0);
                if answers.iter().any(|(seen, _)| *seen == id) {
                    extra += 1;
                }
                answers.push((id, message));
            }
        }
    }
    let _ = peer.settle();
    let outcome = if extra > 0 {
        Outcome::Fail("one prompt was answered twice".to_owned())
    } else if let Some(bad) = answers.iter().map(|(_, a)| stop_reason_outcome(a)).find(|o| *o != Outcome::Pass) {
        bad
    } else {
        updates_outcome(peer, &[&one, &two])
    };
    vec![(&CONCURRENT, outcome)]
}
