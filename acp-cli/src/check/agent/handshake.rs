//! Scenarios of the handshake: `initialize` and version negotiation, authentication (`--auth`,
//! and the `auth_required` gate), session setup (a relative `cwd`, invalid params), and a
//! request before `initialize`.

use acp_proto::types::{InitializeResponse, NewSessionResponse};
use serde_json::{Value, json};

use super::super::report::Outcome;
use super::peer::{AUTH_REQUIRED, Gone, Peer, Setup, cwd, error_code, result_of};
use super::requirements::*;
use super::{Checks, Scenario, judge, skip_all};

/// `initialize` v1, `authenticate` with `--auth`, `session/new` (absolute, relative, and a
/// non-string `cwd`).
pub(super) const HANDSHAKE: Scenario = Scenario {
    checks: &[
        &INIT,
        &INIT_VERSION,
        &INIT_INFO,
        &AUTH_AUTHENTICATE,
        &AUTH_ADVERTISED,
        &SESSION_NEW,
        &SESSION_RELATIVE_CWD,
        &SESSION_BAD_PARAMS,
    ],
    run: handshake,
};

/// The checks of [`HANDSHAKE`] from `AUTH_AUTHENTICATE` on.
const AFTER_INIT: usize = 3;

/// `initialize` asking for a version from the future.
pub(super) const FUTURE_VERSION: Scenario = Scenario { checks: &[&INIT_FUTURE], run: future_version };

/// `session/new` before `initialize`, then `initialize`.
pub(super) const BEFORE_INITIALIZE: Scenario =
    Scenario { checks: &[&BEFORE_INIT, &BEFORE_INIT_REFUSED], run: before_initialize };

/// The highest version the wire allows (`uint16`): no agent supports it yet.
const FUTURE: u64 = 65535;

fn handshake(peer: &mut Peer) -> Checks {
    let init = match peer.initialize_with(1, true) {
        Ok(message) => message,
        Err(Gone::Closed) if !peer.heard => return skip_all(HANDSHAKE.checks, &peer.not_started()),
        Err(e) => {
            let mut checks = vec![(&INIT, Outcome::Fail(format!("initialize: {e}")))];
            checks.extend(skip_all(&HANDSHAKE.checks[1..], &"initialize was not answered".to_owned().into()));
            return checks;
        }
    };
    let result = match result_of(&init) {
        Ok(result) => result.clone(),
        Err(e) => {
            let mut checks = vec![(&INIT, Outcome::Fail(format!("initialize answered {e}")))];
            checks.extend(skip_all(&HANDSHAKE.checks[1..], &"initialize failed".to_owned().into()));
            return checks;
        }
    };
    let decoded = serde_json::from_value::<InitializeResponse>(result.clone());
    let mut checks: Checks =
        vec![(&INIT, judge(decoded.is_ok(), || format!("the result does not decode: {}", err(&decoded))))];
    let version = result.get("protocolVersion").and_then(Value::as_u64);
    let version_ok = version.is_some_and(|v| v <= 1);
    checks.push((
        &INIT_VERSION,
        judge(version_ok, || format!("asked for 1, answered {}", shown(result.get("protocolVersion")))),
    ));
    let info = result.get("agentInfo").is_some_and(|i| i.get("name").is_some_and(Value::is_string));
    checks.push((&INIT_INFO, judge(info, || "no agentInfo with a name".to_owned())));
    let authenticated = match authenticate(peer) {
        Ok(outcome) => outcome,
        Err(gate) => {
            checks.push((&AUTH_AUTHENTICATE, Outcome::Blocked(gate.to_string())));
            checks.extend(skip_all(&HANDSHAKE.checks[AFTER_INIT + 1..], &gate));
            return checks;
        }
    };
    checks.extend(sessions(peer, authenticated));
    checks
}

/// `authenticate` with `--auth`'s method: `Ok(None)` without one; the outcome so far of
/// `agent.auth.authenticate` (confirmed by the `session/new` that follows); `Err` a gate
/// (the agent refused it: nothing past it can be checked).
fn authenticate(peer: &mut Peer) -> Result<Option<Outcome>, Setup> {
    let Some(method) = peer.auth_method() else { return Ok(None) };
    let advertised = peer.auth_methods.iter().any(|m| m.get("id").and_then(Value::as_str) == Some(method.as_str()));
    let answer = match peer.call("authenticate", json!({"methodId": method})) {
        Ok(answer) => answer,
        Err(e) => return Ok(Some(Outcome::Fail(format!("authenticate: {e}")))),
    };
    match result_of(&answer) {
        Ok(_) if advertised => Ok(Some(Outcome::Pass)),
        Ok(_) => Ok(Some(Outcome::Skip(format!("method {method:?} is not among the advertised authMethods")))),
        Err(e) => Err(Setup::Gated(peer.auth_gate(format!("authenticate with method {method:?} answered {e}")))),
    }
}

/// `session/new` three times: an absolute `cwd`, a relative one, one that is not a string;
/// `authenticated` is what came of `--auth` so far.
fn sessions(peer: &mut Peer, authenticated: Option<Outcome>) -> Checks {
    let mut checks = Checks::new();
    let answer = peer.call("session/new", json!({"cwd": cwd(), "mcpServers": []}));
    let asked_auth = answer.as_ref().is_ok_and(|a| error_code(a) == Some(AUTH_REQUIRED));
    let advertised = judge(!asked_auth || !peer.auth_methods.is_empty(), || {
        format!("session/new answered auth_required ({AUTH_REQUIRED}), but initialize advertised no authMethods")
    });
    let gate = answer.as_ref().ok().and_then(|a| peer.gate_of(a));
    let authenticated = match (authenticated, &gate) {
        (None, _) => Outcome::Skip("no --auth METHOD_ID given".to_owned()),
        (Some(Outcome::Pass), Some(_)) => {
            Outcome::Fail(format!("authenticate succeeded, yet session/new answered auth_required ({AUTH_REQUIRED})"))
        }
        (Some(outcome), _) => outcome,
    };
    checks.push((&AUTH_AUTHENTICATE, authenticated));
    checks.push((&AUTH_ADVERTISED, if asked_auth { advertised } else { Outcome::Skip("no auth_required".into()) }));
    if let Some(gate) = gate {
        checks.extend(skip_all(&[&SESSION_NEW, &SESSION_RELATIVE_CWD, &SESSION_BAD_PARAMS], &Setup::Gated(gate)));
        return checks;
    }
    let outcome = match answer {
        Err(e) => Outcome::Fail(e.to_string()),
        Ok(answer) => match result_of(&answer) {
            Err(e) => Outcome::Fail(format!("answered {e}")),
            Ok(result) => {
                let decoded = serde_json::from_value::<NewSessionResponse>(result.clone());
                judge(decoded.is_ok(), || format!("the result does not decode: {}", err(&decoded)))
            }
        },
    };
    checks.push((&SESSION_NEW, outcome));
    let relative = "acp-check/relative";
    let outcome = match peer.call("session/new", json!({"cwd": relative, "mcpServers": []})) {
        Err(e) => Outcome::Fail(e.to_string()),
        Ok(answer) => judge(answer.get("error").is_some(), || format!("accepted the cwd {relative:?}")),
    };
    checks.push((&SESSION_RELATIVE_CWD, outcome));
    let outcome = match peer.call("session/new", json!({"cwd": 5, "mcpServers": []})) {
        Err(e) => Outcome::Fail(e.to_string()),
        Ok(answer) => judge(answer.get("error").is_some(), || "accepted the cwd 5".to_owned()),
    };
    checks.push((&SESSION_BAD_PARAMS, outcome));
    checks
}

fn future_version(peer: &mut Peer) -> Checks {
    let outcome = match peer.initialize_with(FUTURE, true) {
        Err(e) => Outcome::Fail(format!("initialize: {e}")),
        Ok(answer) => match result_of(&answer) {
            Err(e) => Outcome::Fail(format!("initialize with version {FUTURE} answered {e}, not its latest version")),
            Ok(result) => match result.get("protocolVersion").and_then(Value::as_u64) {
                Some(v) if v < FUTURE => Outcome::Pass,
                Some(_) => Outcome::Fail(format!("echoed version {FUTURE}, which it cannot support")),
                None => Outcome::Fail(format!("protocolVersion is {}", shown(result.get("protocolVersion")))),
            },
        },
    };
    vec![(&INIT_FUTURE, outcome)]
}

fn before_initialize(peer: &mut Peer) -> Checks {
    let early = peer.call("session/new", json!({"cwd": cwd(), "mcpServers": []}));
    let init = peer.initialize_with(1, true);
    let answered = match (&early, &init) {
        (Err(e), _) => Outcome::Fail(format!("session/new before initialize: {e}")),
        (Ok(_), Err(e)) => Outcome::Fail(format!("initialize after it: {e}")),
        (Ok(_), Ok(init)) => judge(init.get("result").is_some(), || "initialize after it failed".to_owned()),
    };
    let refused = match &early {
        Err(_) => Outcome::Skip("not answered".to_owned()),
        Ok(answer) => judge(answer.get("error").is_some(), || "it created a session before initialize".to_owned()),
    };
    vec![(&BEFORE_INIT, answered), (&BEFORE_INIT_REFUSED, refused)]
}

/// A value for a message (`absent` when missing).
pub(crate) fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "absent".to_owned(), Value::to_string)
}

/// The error of a decode, as text.
pub(crate) fn err<T>(decoded: &Result<T, serde_json::Error>) -> String {
    decoded.as_ref().err().map(ToString::to_string).unwrap_or_default()
}
