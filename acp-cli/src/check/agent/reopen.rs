//! The scenario of reopening a session that has a conversation: one turn, then `session/load`
//! (the whole conversation replayed as `session/update`s before the answer, nothing after it)
//! and `session/resume`, each answering the session's modes and config options again when
//! `session/new` had them. Each step runs only when the agent advertises it.

use serde_json::{Value, json};

use super::super::report::Outcome;
use super::peer::{Peer, cwd, result_of};
use super::requirements::*;
use super::track::is_turn_content;
use super::{Checks, Scenario, judge, skip_all};

/// A turn, then `session/load` and `session/resume` of its session.
pub(super) const REOPEN: Scenario = Scenario { checks: &[&LOAD_REPLAY, &LOAD_STATE, &RESUME_STATE], run: reopen };

/// The word the turn's prompt carries, to find in the replay.
fn marker() -> String {
    format!("acp-check-marker-{}", std::process::id())
}

fn reopen(peer: &mut Peer) -> Checks {
    let (init, session, created) = match peer.open_session(true) {
        Ok(opened) => opened,
        Err(e) => return skip_all(REOPEN.checks, &e),
    };
    let caps = init.get("agentCapabilities").cloned().unwrap_or(Value::Null);
    let load = caps.get("loadSession").and_then(Value::as_bool) == Some(true);
    let resume = caps.pointer("/sessionCapabilities/resume").is_some_and(|c| !c.is_null());
    let not_advertised = |what: &str| Outcome::Skip(format!("not advertised ({what})"));
    if !load && !resume {
        let load = not_advertised("loadSession");
        return vec![(&LOAD_REPLAY, load.clone()), (&LOAD_STATE, load), (&RESUME_STATE, not_advertised("resume"))];
    }
    let text = format!("acp check: remember the word {}", marker());
    let id = peer.prompt(&session, &text);
    if let Err(e) = peer.response(id).map_err(|e| e.to_string()).and_then(|a| result_of(&a).map(drop)) {
        let why = format!("the turn to reopen did not end: {e}");
        return skip_all(REOPEN.checks, &why.into());
    }
    let _ = peer.settle();
    let mut checks = Checks::new();
    if load {
        let (replay, state) = load_session(peer, &session, &created);
        checks.extend([(&LOAD_REPLAY, replay), (&LOAD_STATE, state)]);
    } else {
        checks.extend([(&LOAD_REPLAY, not_advertised("loadSession")), (&LOAD_STATE, not_advertised("loadSession"))]);
    }
    let state = if resume { resume_session(peer, &session, &created) } else { not_advertised("resume") };
    checks.push((&RESUME_STATE, state));
    checks
}

/// The content updates of `session` among `updates`.
fn content_of<'a>(updates: &'a [Value], session: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    updates.iter().filter(move |u| {
        u.get("sessionId").and_then(Value::as_str) == Some(session)
            && is_turn_content(u.pointer("/update/sessionUpdate").and_then(Value::as_str).unwrap_or(""))
    })
}

/// `session/load` of `session`: the replay's outcome, and the state's.
fn load_session(peer: &mut Peer, session: &str, created: &Value) -> (Outcome, Outcome) {
    let before = peer.updates.len();
    let params = json!({"sessionId": session, "cwd": cwd(), "mcpServers": []});
    let answer = match peer.call("session/load", params) {
        Ok(answer) => answer,
        Err(e) => return (Outcome::Fail(format!("session/load: {e}")), Outcome::Skip("no answer".into())),
    };
    let result = match result_of(&answer) {
        Ok(result) => result.clone(),
        Err(e) => return (Outcome::Fail(format!("session/load answered {e}")), Outcome::Skip("no result".into())),
    };
    let answered = peer.updates.len();
    let _ = peer.settle();
    let replayed: Vec<&Value> = content_of(&peer.updates[before..answered], session).collect();
    let after = content_of(&peer.updates[answered..], session).count();
    let marker = marker();
    let prompt_replayed = replayed.iter().any(|u| {
        u.pointer("/update/sessionUpdate").and_then(Value::as_str) == Some("user_message_chunk")
            && u.pointer("/update/content/text").and_then(Value::as_str).is_some_and(|t| t.contains(&marker))
    });
    let replay = if after > 0 {
        Outcome::Fail(format!("{after} update(s) of the conversation came after session/load's answer"))
    } else {
        judge(prompt_replayed, || {
            let kinds: Vec<&str> =
                replayed.iter().filter_map(|u| u.pointer("/update/sessionUpdate").and_then(Value::as_str)).collect();
            format!(
                "before its answer the replay had no user_message_chunk with the earlier prompt (it sent {kinds:?})"
            )
        })
    };
    (replay, state_again("session/load", created, &result))
}

/// `session/resume` of `session`: the state's outcome.
fn resume_session(peer: &mut Peer, session: &str, created: &Value) -> Outcome {
    let params = json!({"sessionId": session, "cwd": cwd(), "mcpServers": []});
    match peer.call("session/resume", params) {
        Err(e) => Outcome::Fail(format!("session/resume: {e}")),
        Ok(answer) => match result_of(&answer) {
            Err(e) => Outcome::Fail(format!("session/resume answered {e}")),
            Ok(result) => state_again("session/resume", created, result),
        },
    }
}

/// Whether `answer` carries again each of `modes` and `configOptions` that `created` had.
fn state_again(method: &str, created: &Value, answer: &Value) -> Outcome {
    let had: Vec<&str> =
        ["modes", "configOptions"].into_iter().filter(|k| created.get(*k).is_some_and(|v| !v.is_null())).collect();
    if had.is_empty() {
        return Outcome::Skip("session/new answered neither modes nor configOptions".to_owned());
    }
    let missing: Vec<&str> = had.iter().copied().filter(|k| answer.get(*k).is_none_or(Value::is_null)).collect();
    judge(missing.is_empty(), || format!("session/new answered {had:?}, {method} did not answer {missing:?}"))
}
