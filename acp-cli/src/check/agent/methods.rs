//! The scenario of the newer methods an agent advertises: each one called once and its
//! answer decoded into the schema's type.

use acp_proto::types::{
    ListSessionsResponse, LoadSessionResponse, ResumeSessionResponse, SetSessionConfigOptionResponse,
};
use serde_json::{Value, json};

use super::super::report::Outcome;
use super::peer::{Peer, cwd, result_of};
use super::requirements::*;
use super::{Checks, Scenario, judge, skip_all};

/// `session/list`, `session/load`, `session/resume`, `session/set_config_option`,
/// `session/set_mode`, `session/close`, each when advertised.
pub(super) const ADVERTISED: Scenario =
    Scenario { checks: &[&LIST, &LOAD, &RESUME, &SET_CONFIG, &SET_MODE, &CLOSE], run: advertised };

fn not_advertised(what: &str) -> Outcome {
    Outcome::Skip(format!("not advertised ({what})"))
}

fn advertised(peer: &mut Peer) -> Checks {
    let (init, session, created) = match peer.open_session(true) {
        Ok(opened) => opened,
        Err(e) => return skip_all(ADVERTISED.checks, &e),
    };
    let caps = init.get("agentCapabilities").cloned().unwrap_or(Value::Null);
    let session_caps = caps.get("sessionCapabilities").cloned().unwrap_or(Value::Null);
    let has = |name: &str| session_caps.get(name).is_some_and(|c| !c.is_null());
    let mut checks = Checks::new();
    let outcome = if has("list") {
        call_decoded(peer, "session/list", json!({"cwd": cwd()}), |v| {
            serde_json::from_value::<ListSessionsResponse>(v).map(drop)
        })
    } else {
        not_advertised("sessionCapabilities.list")
    };
    checks.push((&LIST, outcome));
    let outcome = if caps.get("loadSession").and_then(Value::as_bool) == Some(true) {
        let params = json!({"sessionId": session, "cwd": cwd(), "mcpServers": []});
        call_decoded(peer, "session/load", params, |v| serde_json::from_value::<LoadSessionResponse>(v).map(drop))
    } else {
        not_advertised("loadSession")
    };
    checks.push((&LOAD, outcome));
    let outcome = if has("resume") { resume(peer, &session) } else { not_advertised("sessionCapabilities.resume") };
    checks.push((&RESUME, outcome));
    checks.push((&SET_CONFIG, set_config(peer, &session, &created)));
    checks.push((&SET_MODE, set_mode(peer, &session, &created)));
    let outcome = if has("close") {
        call_decoded(peer, "session/close", json!({"sessionId": session}), |v| {
            serde_json::from_value::<Value>(v).map(drop)
        })
    } else {
        not_advertised("sessionCapabilities.close")
    };
    checks.push((&CLOSE, outcome));
    checks
}

/// How a result is decoded into its schema type.
type Decode = fn(Value) -> Result<(), serde_json::Error>;

/// Calls `method`; passes when the result is an object that `decode` accepts.
fn call_decoded(peer: &mut Peer, method: &str, params: Value, decode: Decode) -> Outcome {
    match peer.call(method, params) {
        Err(e) => Outcome::Fail(e.to_string()),
        Ok(answer) => match result_of(&answer) {
            Err(e) => Outcome::Fail(format!("answered {e}")),
            Ok(result) => match decode(result.clone()) {
                Ok(_) if result.is_object() => Outcome::Pass,
                Ok(_) => Outcome::Fail(format!("the result is not an object: {result}")),
                Err(e) => Outcome::Fail(format!("the result does not decode: {e}")),
            },
        },
    }
}

/// `session/resume` must not replay the conversation before it answers.
fn resume(peer: &mut Peer, session: &str) -> Outcome {
    let before = peer.updates.len();
    let params = json!({"sessionId": session, "cwd": cwd(), "mcpServers": []});
    let outcome =
        call_decoded(peer, "session/resume", params, |v| serde_json::from_value::<ResumeSessionResponse>(v).map(drop));
    let replayed = peer.updates.len() - before;
    if outcome == Outcome::Pass {
        judge(replayed == 0, || format!("{replayed} session/update before answering"))
    } else {
        outcome
    }
}

/// Sets the session's first config option to its current value.
fn set_config(peer: &mut Peer, session: &str, created: &Value) -> Outcome {
    let Some(option) = created.get("configOptions").and_then(Value::as_array).and_then(|o| o.first()) else {
        return Outcome::Skip("the session has no configOptions".to_owned());
    };
    let id = option.get("id").cloned().unwrap_or(Value::Null);
    let value = option.get("currentValue").cloned().unwrap_or(Value::Null);
    let mut params = json!({"sessionId": session, "configId": id, "value": value});
    if option.get("type").and_then(Value::as_str) == Some("boolean") {
        params["type"] = json!("boolean");
    }
    call_decoded(peer, "session/set_config_option", params, |v| {
        serde_json::from_value::<SetSessionConfigOptionResponse>(v).map(drop)
    })
}

/// Sets the session's mode to its current mode.
fn set_mode(peer: &mut Peer, session: &str, created: &Value) -> Outcome {
    let Some(mode) = created.get("modes").and_then(|m| m.get("currentModeId")).cloned() else {
        return Outcome::Skip("the session has no modes".to_owned());
    };
    call_decoded(peer, "session/set_mode", json!({"sessionId": session, "modeId": mode}), |v| {
        serde_json::from_value::<Value>(v).map(drop)
    })
}
