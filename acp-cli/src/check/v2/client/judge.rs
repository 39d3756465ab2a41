//! The judges of `acp check client --protocol 2`: each requirement of
//! [`super::super::requirements`] checked over the scenarios' runs.

use serde_json::Value;

use super::Run;
use super::script::{SESSION, Script};
use crate::check::report::{Finding, Outcome, Requirement};
use crate::check::v2::requirements::*;

/// What one run says about one requirement.
enum Verdict {
    Pass,
    Fail(String),
    /// Not exercised in this run, and why.
    Na(String),
}
use Verdict::{Fail, Na, Pass};

const NOT_HERE: &str = "not in this scenario";

/// A requirement and the check of one run against it.
type Check = (&'static Requirement, fn(&Run) -> Verdict);

/// Every finding, in the order of the requirements.
pub(super) fn judge(runs: &[Run]) -> Vec<Finding> {
    let checks: [Check; 9] = [
        (&C_VERSION, version),
        (&C_V1_AGENT, v1_agent),
        (&C_UNTIL_IDLE, until_idle),
        (&C_PERMISSION, permission),
        (&C_CANCEL, cancel),
        (&C_TOOL_CANCEL, tool_cancel),
        (&C_UNKNOWN_METHOD, unknown_method),
        (&C_BATCH_NOTIFICATION, batch_notification),
        (&C_BATCH_ARRAY, batch_array),
    ];
    checks.into_iter().map(|(req, check)| over_runs(req, runs, check)).collect()
}

/// Fails with the first run that fails (and its transcript), passes if any run passed,
/// otherwise is skipped with the most telling reason.
fn over_runs(requirement: &'static Requirement, runs: &[Run], check: fn(&Run) -> Verdict) -> Finding {
    let mut passed = false;
    let mut skip: Option<String> = None;
    for run in runs {
        let verdict = match &run.failed_start {
            Some(why) => Na(format!("the client never connected ({why})")),
            None => check(run),
        };
        match verdict {
            Pass => passed = true,
            Fail(why) => {
                return Finding::new(
                    requirement,
                    Outcome::Fail(format!("[{}] {why}", run.name)),
                    run.log.lines.clone(),
                );
            }
            Na(why) if skip.is_none() || skip.as_deref() == Some(NOT_HERE) => skip = Some(why),
            Na(_) => {}
        }
    }
    let outcome = if passed { Outcome::Pass } else { Outcome::Skip(skip.unwrap_or_else(|| "no scenario".into())) };
    Finding::new(requirement, outcome, Vec::new())
}

fn version(run: &Run) -> Verdict {
    let Some(init) = &run.observed.init else { return Na("no initialize".into()) };
    match init.get("protocolVersion").and_then(Value::as_u64) {
        Some(v) if v < 2 => Na(format!("the client offered version {v}")),
        Some(_) if !init.pointer("/info/name").is_some_and(Value::is_string) => {
            Fail("initialize has no info.name".into())
        }
        Some(_) if init.get("capabilities").is_some_and(|c| !c.is_object() && !c.is_null()) => {
            Fail("capabilities is not an object".into())
        }
        Some(_) => Pass,
        None => Fail(format!("protocolVersion is {:?}", init.get("protocolVersion"))),
    }
}

/// Methods only v2 has: a client that negotiated 1 never sends them.
const V2_ONLY: [&str; 4] = ["tool_call/cancel", "terminal/cancel", "auth/login", "auth/logout"];

fn v1_agent(run: &Run) -> Verdict {
    if run.script != Script::V1Agent {
        return Na(NOT_HERE.into());
    }
    let after = &run.observed.after_v1;
    if let Some(m) =
        after.iter().find(|m| m.get("method").and_then(Value::as_str).is_some_and(|m| V2_ONLY.contains(&m)))
    {
        return Fail(format!("after the agent answered version 1 the client sent {m}"));
    }
    match after.iter().find(|m| m.get("method").and_then(Value::as_str) == Some("session/new")) {
        // v1's NewSessionRequest requires mcpServers; v2's does not.
        Some(new) if !new.pointer("/params/mcpServers").is_some_and(Value::is_array) => {
            Fail(format!("after the agent answered version 1 the client sent a v2 session/new: {new}"))
        }
        _ => Pass,
    }
}

fn until_idle(run: &Run) -> Verdict {
    if run.script != Script::Turn {
        return Na(NOT_HERE.into());
    }
    let o = &run.observed;
    if !o.acked {
        return Na("the client sent no prompt".into());
    }
    match &o.permission {
        Some((_, None, _)) => Fail(
            "after the prompt's answer the client no longer answered the agent (a permission ask of the running turn)"
                .into(),
        ),
        _ if o.gone_before_idle => Fail("the client ended its connection before the turn's idle".into()),
        Some((_, Some(_), _)) => Pass,
        None => Fail("the turn did not get to its permission ask".into()),
    }
}

fn permission(run: &Run) -> Verdict {
    let Some((offered, Some(reply), after_cancel)) = &run.observed.permission else {
        return Na("no permission ask was answered".into());
    };
    let outcome = reply.pointer("/result/outcome/outcome").and_then(Value::as_str);
    let option = reply.pointer("/result/outcome/optionId").and_then(Value::as_str);
    match (outcome, option) {
        (Some("selected"), Some(id)) if offered.iter().any(|o| o == id) => Pass,
        (Some("selected"), _) => Fail(format!("selected {option:?}, not one of the offered {}", offered.join(", "))),
        (Some("cancelled"), _) if *after_cancel || !run.observed.cancels.is_empty() => Pass,
        (Some("cancelled"), _) => Fail("answered cancelled though it had not cancelled".into()),
        _ => Fail(format!("not a permission outcome: {reply}")),
    }
}

fn cancel(run: &Run) -> Verdict {
    if run.script != Script::Cancel {
        return Na(NOT_HERE.into());
    }
    let o = &run.observed;
    let Some((message, pending)) = o.cancels.first() else {
        return Na("the client sent no session/cancel when interrupted".into());
    };
    if message.get("id").is_some() {
        return Fail("session/cancel was sent as a request (with an id), not a notification".into());
    }
    let session = message.pointer("/params/sessionId").and_then(Value::as_str);
    if session != Some(SESSION) {
        return Fail(format!("session/cancel names {session:?}, not {SESSION}"));
    }
    if !pending {
        return Pass;
    }
    match &o.permission {
        Some((_, Some(reply), _))
            if reply.pointer("/result/outcome/outcome").and_then(Value::as_str) == Some("cancelled") =>
        {
            Pass
        }
        Some((_, Some(reply), _)) => Fail(format!("the pending permission ask was answered {reply}, not cancelled")),
        _ => Fail("the pending permission ask was never answered".into()),
    }
}

fn tool_cancel(run: &Run) -> Verdict {
    let sent = &run.observed.tool_cancels;
    if let Some((call, _)) = sent.iter().find(|(_, advertised)| !advertised) {
        return Fail(format!("tool_call/cancel of {call:?}, which did not advertise capabilities.cancel"));
    }
    match (run.script, sent.is_empty()) {
        (Script::Cancel, _) if run.observed.cancels.is_empty() && sent.is_empty() => {
            Na("the client did not cancel".into())
        }
        (Script::Cancel | Script::Turn, _) => Pass,
        (Script::V1Agent, _) => Na(NOT_HERE.into()),
    }
}

fn error_code(reply: &Value) -> Option<i64> {
    reply.pointer("/error/code").and_then(Value::as_i64)
}

fn unknown_method(run: &Run) -> Verdict {
    match &run.observed.unknown {
        None => Na(NOT_HERE.into()),
        Some(None) => Fail("the unknown request was not answered".into()),
        Some(Some(reply)) if error_code(reply) == Some(-32601) => Pass,
        Some(Some(reply)) => Fail(format!("the unknown request was answered {reply}, not -32601")),
    }
}

/// The batch's reply, flattened: the responses that came back.
fn batch_replies(run: &Run) -> Option<Vec<Value>> {
    let reply = run.observed.batch.as_ref()?.as_ref()?;
    Some(reply.as_array().cloned().unwrap_or_else(|| vec![reply.clone()]))
}

fn batch_notification(run: &Run) -> Verdict {
    let Some(batch) = &run.observed.batch else { return Na(NOT_HERE.into()) };
    let answered_null = |m: &Value| {
        m.get("method").is_none() && m.get("id").is_none_or(Value::is_null) && error_code(m) != Some(-32600)
    };
    let in_array = batch_replies(run).unwrap_or_default().into_iter().filter(|m| answered_null(m)).count();
    let strays = run.observed.strays.iter().filter(|m| answered_null(m)).count();
    match (batch, in_array + strays) {
        (_, 0) => Pass,
        (_, n) => Fail(format!("{n} response(s) to the batch's notification")),
    }
}

fn batch_array(run: &Run) -> Verdict {
    match &run.observed.batch {
        None => Na(NOT_HERE.into()),
        Some(None) => Fail("the batch's request was not answered".into()),
        Some(Some(Value::Array(items))) => {
            let answers = items.iter().filter(|m| m.get("id").is_some_and(|id| !id.is_null())).count();
            if answers == 1 { Pass } else { Fail(format!("the array holds {answers} responses to the one request")) }
        }
        Some(Some(single)) => Fail(format!("answered the batch's request alone, not in an array: {single}")),
    }
}
