//! Scenarios of cancellation: `session/cancel` mid-turn and during a permission ask, and
//! `$/cancel_request` of a running prompt.

use serde_json::{Value, json};

use super::super::report::Outcome;
use super::handshake::shown;
use super::peer::{Peer, Permissions, error_code, is_response_to};
use super::requirements::*;
use super::{Checks, Scenario, judge, setup_outcome, skip_all};

/// A prompt that keeps a reference-style agent busy (the word `slow`); any real agent takes
/// a while anyway.
const SLOW: &str = "acp check: slow — take your time, think it over at length";

/// A slow turn cancelled once it has started.
pub(super) const MID_TURN: Scenario = Scenario { checks: &[&CANCEL_MID_TURN, &CANCEL_NO_LATE_UPDATES], run: mid_turn };

/// A turn cancelled while its permission ask is open.
pub(super) const DURING_PERMISSION: Scenario = Scenario { checks: &[&CANCEL_PERMISSION], run: during_permission };

/// A slow turn's request cancelled with `$/cancel_request`.
pub(super) const CANCEL_REQUEST: Scenario =
    Scenario { checks: &[&CANCEL_REQ, &CANCEL_REQUEST_HONORED], run: cancel_request };

/// Starts a slow turn; returns the session and the prompt's id once the agent has sent
/// something for it, or the outcome that ends the scenario.
fn start_slow_turn(peer: &mut Peer) -> Result<(String, i64), Outcome> {
    let (_, session, _) = peer.open_session(true).map_err(|e| setup_outcome(&e))?;
    let id = peer.prompt(&session, SLOW);
    let started = peer.pump_until(peer.timeout, |m| is_response_to(m, id) || m.get("method").is_some());
    match started {
        Err(e) => Err(Outcome::Fail(format!("nothing came of the prompt: {e}"))),
        Ok(m) if is_response_to(&m, id) => Err(Outcome::Skip("the turn ended before it could be cancelled".to_owned())),
        Ok(_) => Ok((session, id)),
    }
}

/// Whether a prompt's response says `cancelled`.
fn cancelled_outcome(answer: &Value) -> Outcome {
    let reason = answer.get("result").and_then(|r| r.get("stopReason"));
    judge(reason.and_then(Value::as_str) == Some("cancelled"), || match answer.get("error") {
        Some(error) => format!("answered with error {error}, not stopReason cancelled"),
        None => format!("stopReason {}, not cancelled", shown(reason)),
    })
}

fn mid_turn(peer: &mut Peer) -> Checks {
    let (session, id) = match start_slow_turn(peer) {
        Ok(turn) => turn,
        Err(outcome) => return vec![(&CANCEL_MID_TURN, outcome.clone()), (&CANCEL_NO_LATE_UPDATES, skipped(&outcome))],
    };
    peer.cancel(&session);
    let answer = match peer.response(id) {
        Ok(answer) => answer,
        Err(e) => {
            return vec![
                (&CANCEL_MID_TURN, Outcome::Fail(format!("after session/cancel: {e}"))),
                (&CANCEL_NO_LATE_UPDATES, Outcome::Skip("no response".into())),
            ];
        }
    };
    let outcome = cancelled_outcome(&answer);
    // Updates are sent in order: one for the session after its response, before the answer
    // to a later request, is late.
    let before = updates_of(peer, &session);
    let late = match peer.call("_acpcheck/ping", json!({})) {
        Err(e) => Outcome::Skip(format!("no answer to a later request: {e}")),
        Ok(_) => {
            let after = updates_of(peer, &session);
            judge(after == before, || format!("{} session/update after the prompt's response", after - before))
        }
    };
    vec![(&CANCEL_MID_TURN, outcome), (&CANCEL_NO_LATE_UPDATES, late)]
}

fn updates_of(peer: &Peer, session: &str) -> usize {
    peer.updates.iter().filter(|u| u.get("sessionId").and_then(Value::as_str) == Some(session)).count()
}

fn skipped(outcome: &Outcome) -> Outcome {
    match outcome {
        Outcome::Fail(why) | Outcome::Skip(why) => Outcome::Skip(why.clone()),
        Outcome::Blocked(why) => Outcome::Blocked(why.clone()),
        Outcome::Pass => Outcome::Skip(String::new()),
    }
}

fn during_permission(peer: &mut Peer) -> Checks {
    let session = match peer.open_session(true) {
        Ok((_, session, _)) => session,
        Err(e) => return skip_all(DURING_PERMISSION.checks, &e),
    };
    peer.permissions = Permissions::Hold;
    let text = format!("acp check: read the file {} and tell me what it says", peer.file_path());
    let id = peer.prompt(&session, &text);
    let asked = peer.pump_until(peer.timeout, |m| {
        is_response_to(m, id) || m.get("method").and_then(Value::as_str) == Some("session/request_permission")
    });
    let outcome = match asked {
        Err(e) => Outcome::Fail(format!("neither an ask nor an answer: {e}")),
        Ok(m) if is_response_to(&m, id) => Outcome::Skip("the agent asked no permission".to_owned()),
        Ok(_) => {
            peer.cancel(&session);
            match peer.response(id) {
                Ok(answer) => cancelled_outcome(&answer),
                Err(e) => Outcome::Fail(format!("after session/cancel: {e}")),
            }
        }
    };
    vec![(&CANCEL_PERMISSION, outcome)]
}

fn cancel_request(peer: &mut Peer) -> Checks {
    let (session, id) = match start_slow_turn(peer) {
        Ok(turn) => turn,
        Err(outcome) => return vec![(&CANCEL_REQ, outcome.clone()), (&CANCEL_REQUEST_HONORED, skipped(&outcome))],
    };
    peer.notify("$/cancel_request", json!({"requestId": id}));
    let honored;
    let answer = match peer.pump_until(peer.timeout / 4, |m| is_response_to(m, id)) {
        Ok(answer) => {
            let early = error_code(&answer) == Some(-32800)
                || answer.get("result").and_then(|r| r.get("stopReason")).and_then(Value::as_str) == Some("cancelled");
            honored = judge(early, || format!("the request ran on and answered {answer}"));
            Ok(answer)
        }
        Err(e) => {
            honored = Outcome::Fail(format!("{e} after $/cancel_request; session/cancel sent then"));
            peer.cancel(&session);
            peer.response(id)
        }
    };
    let answered = match answer {
        Err(e) => Outcome::Fail(format!("the cancelled request was never answered: {e}")),
        Ok(_) => {
            let mut twice = false;
            let ping = peer.request("_acpcheck/ping", json!({}));
            let _ = peer.pump_until(peer.timeout, |m| {
                twice |= is_response_to(m, id);
                is_response_to(m, ping)
            });
            judge(!twice, || "the cancelled request was answered twice".to_owned())
        }
    };
    vec![(&CANCEL_REQ, answered), (&CANCEL_REQUEST_HONORED, honored)]
}
