//! Scenarios of the JSON-RPC layer: unknown methods and notifications, invalid JSON, and the
//! end of stdin.

use serde_json::{Value, json};

use super::super::report::Outcome;
use super::peer::{Gone, Peer, cwd, error_code};
use super::requirements::*;
use super::{Checks, Scenario, judge, skip_all};

/// Unknown notification, unknown method, invalid JSON, each followed by a request.
pub(super) const ROBUSTNESS: Scenario = Scenario {
    checks: &[&UNKNOWN_NOTIFICATION, &UNKNOWN_METHOD, &MALFORMED_SURVIVES, &PARSE_ERROR, &NO_NOTIFICATION_ANSWER],
    run: robustness,
};

/// `initialize`, then stdin closed.
pub(super) const EOF: Scenario = Scenario { checks: &[&EOF_EXIT], run: eof };

/// A line that is not JSON (a request cut short).
const INVALID_JSON: &str = r#"{"jsonrpc": "2.0", "method": "session/new", "params": {"cwd": "#;

fn robustness(peer: &mut Peer) -> Checks {
    if let Err(e) = peer.open_session(true) {
        return skip_all(ROBUSTNESS.checks, &e);
    }
    let mut checks = Checks::new();
    peer.notify("_acpcheck/unknown_notification", json!({"hello": "ignore me"}));
    let alive = new_session(peer);
    checks.push((&UNKNOWN_NOTIFICATION, judge(alive.is_ok(), || format!("session/new after it: {}", err(&alive)))));
    let outcome = match peer.call("_acpcheck/unknown_method", json!({})) {
        Err(e) => Outcome::Fail(e.to_string()),
        Ok(answer) => judge(error_code(&answer) == Some(-32601), || format!("answered {answer}")),
    };
    checks.push((&UNKNOWN_METHOD, outcome));
    // Responses to no request so far answer the notification; later ones the invalid line.
    let to_notification = peer.stray_responses.len();
    peer.send_raw(INVALID_JSON);
    let alive = new_session(peer);
    checks.push((&MALFORMED_SURVIVES, judge(alive.is_ok(), || format!("session/new after it: {}", err(&alive)))));
    let (others, parse_errors) = peer.stray_responses.split_at(to_notification);
    let bad_parse =
        parse_errors.iter().find(|r| error_code(r) != Some(-32700) || !r.get("id").is_some_and(Value::is_null));
    let why = || format!("answered {}", bad_parse.map(Value::to_string).unwrap_or_default());
    checks.push((&PARSE_ERROR, judge(bad_parse.is_none(), why)));
    let why = || format!("answered the notification: {}", others.first().map(Value::to_string).unwrap_or_default());
    checks.push((&NO_NOTIFICATION_ANSWER, judge(others.is_empty(), why)));
    checks
}

/// `session/new`; Ok when answered (result or error).
fn new_session(peer: &mut Peer) -> Result<Value, Gone> {
    peer.call("session/new", json!({"cwd": cwd(), "mcpServers": []}))
}

fn err(result: &Result<Value, Gone>) -> String {
    result.as_ref().err().map(ToString::to_string).unwrap_or_default()
}

fn eof(peer: &mut Peer) -> Checks {
    if let Err(e) = peer.initialize_with(1, true) {
        return vec![(&EOF_EXIT, Outcome::Skip(format!("setup failed: initialize: {e}")))];
    }
    let exited = peer.close_stdin_and_wait();
    vec![(
        &EOF_EXIT,
        judge(exited, || format!("still running {:.1}s after its stdin ended", peer.timeout.as_secs_f64())),
    )]
}
