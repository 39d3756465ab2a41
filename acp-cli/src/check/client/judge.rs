//! The judges: each requirement of [`super::requirements`] checked over the scenarios' runs.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use serde_json::Value;

use super::Run;
use super::agent::{Reply, SESSION, Script};
use super::requirements::*;
use crate::check::report::{Finding, Outcome, Requirement};

/// A requirement and the check of one run against it.
type Check = (&'static Requirement, fn(&Run) -> Verdict);

/// What one run says about one requirement.
enum Verdict {
    Pass,
    Fail(String),
    /// Not applicable in this run, and why.
    Na(String),
}
use Verdict::{Fail, Na, Pass};

/// Why a requirement is not judged in a scenario that does not exercise it.
const NOT_HERE: &str = "not in this scenario";

/// Every finding, in the order of [`super::requirements`].
pub(crate) fn judge(runs: &[Run]) -> Vec<Finding> {
    let mut findings = vec![launch(runs)];
    let checks: [Check; 25] = [
        (&FRAMING, framing),
        (&INIT_FIRST, init_first),
        (&INIT_VERSION, init_version),
        (&INIT_CAPS, init_caps),
        (&NEW_CWD, new_cwd),
        (&PROMPT_SESSION, prompt_session),
        (&ADVERTISED, advertised_only),
        (&PERMISSION, permission),
        (&UPDATES, updates),
        (&UNKNOWN_METHOD, unknown_method),
        (&UNKNOWN_NOTIFICATION, unknown_notification),
        (&FS_READ_SERVED, |r| fs(r, "/fs/readTextFile", true)),
        (&FS_READ_REFUSED, |r| fs(r, "/fs/readTextFile", false)),
        (&FS_WRITE_SERVED, |r| fs(r, "/fs/writeTextFile", true)),
        (&FS_WRITE_REFUSED, |r| fs(r, "/fs/writeTextFile", false)),
        (&TERMINAL_SERVED, |r| terminal(r, true)),
        (&TERMINAL_REFUSED, |r| terminal(r, false)),
        (&CANCEL_NOTIFICATION, cancel_notification),
        (&CANCEL_PERMISSION, cancel_permission),
        (&STOP_END_TURN, |r| stop(r, "end_turn")),
        (&STOP_MAX_TOKENS, |r| stop(r, "max_tokens")),
        (&STOP_MAX_TURN_REQUESTS, |r| stop(r, "max_turn_requests")),
        (&STOP_REFUSAL, |r| stop(r, "refusal")),
        (&STOP_CANCELLED, |r| stop(r, "cancelled")),
        (&AGENT_DIES, agent_dies),
    ];
    for (requirement, check) in checks {
        findings.push(over_runs(requirement, runs, check));
    }
    findings
}

/// Fails with the first run that fails (and its transcript), passes if any run passed,
/// otherwise is skipped with the first reason given.
fn over_runs(requirement: &'static Requirement, runs: &[Run], check: fn(&Run) -> Verdict) -> Finding {
    let mut passed = false;
    let mut skip = None;
    for run in runs {
        let verdict = if run.failed_start.is_some() { Na("the client never connected".into()) } else { check(run) };
        match verdict {
            Pass => passed = true,
            Fail(why) => {
                let mut transcript = run.log.lines.clone();
                if run.log.dropped > 0 {
                    transcript.truncate(transcript.len().min(200));
                }
                return Finding::new(requirement, Outcome::Fail(format!("[{}] {why}", run.name)), transcript);
            }
            // The most telling reason: one from a scenario the requirement belongs to.
            Na(why) if skip.is_none() || skip.as_deref() == Some(NOT_HERE) => skip = Some(why),
            Na(_) => {}
        }
    }
    let outcome = if passed { Outcome::Pass } else { Outcome::Skip(skip.unwrap_or_else(|| "no scenario".into())) };
    Finding::new(requirement, outcome, Vec::new())
}

fn launch(runs: &[Run]) -> Finding {
    for run in runs {
        if let Some(why) = &run.failed_start {
            let tail: String = run.stderr.chars().rev().take(400).collect::<Vec<_>>().into_iter().rev().collect();
            let why =
                if tail.trim().is_empty() { why.clone() } else { format!("{why}; its stderr ends: {}", tail.trim()) };
            return Finding::new(&LAUNCH, Outcome::Fail(format!("[{}] {why}", run.name)), Vec::new());
        }
    }
    Finding::new(&LAUNCH, Outcome::Pass, Vec::new())
}

fn method(message: &Value) -> Option<&str> {
    message.get("method").and_then(Value::as_str)
}

fn messages<'a>(run: &'a Run, name: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    run.log.messages.iter().filter(move |m| method(m) == Some(name))
}

fn framing(run: &Run) -> Verdict {
    if let Some(line) = run.log.malformed.first() {
        return Fail(format!("a line that is not a JSON object: {line}"));
    }
    for message in &run.log.messages {
        if message.get("jsonrpc") != Some(&Value::from("2.0")) {
            return Fail(format!("no \"jsonrpc\": \"2.0\": {message}"));
        }
        let id_ok = message.get("id").is_none_or(|id| id.is_string() || id.is_i64() || id.is_u64());
        let ok = match message.get("method") {
            Some(m) => m.is_string() && id_ok,
            None => message.get("id").is_some() && (message.get("result").is_some() != message.get("error").is_some()),
        };
        if !ok {
            return Fail(format!("not a JSON-RPC request, notification or response: {message}"));
        }
    }
    if run.log.messages.is_empty() { Na("the client sent nothing".into()) } else { Pass }
}

fn init_first(run: &Run) -> Verdict {
    match run.log.messages.first() {
        // Nothing can be judged of a client that says nothing: that fails the run.
        None => Fail("the client started the agent but sent nothing in the scenario's time".into()),
        Some(m) if method(m) == Some("initialize") && m.get("id").is_some() => Pass,
        Some(m) => Fail(format!("the first message was not the `initialize` request: {m}")),
    }
}

fn init_version(run: &Run) -> Verdict {
    let Some(init) = messages(run, "initialize").next() else { return Na("no initialize".into()) };
    match init.pointer("/params/protocolVersion") {
        Some(v) if v.as_u64().is_some_and(|v| (1..=65535).contains(&v)) => Pass,
        other => Fail(format!("protocolVersion is {other:?}, not an integer 1..=65535")),
    }
}

fn init_caps(run: &Run) -> Verdict {
    let Some(init) = messages(run, "initialize").next() else { return Na("no initialize".into()) };
    let Some(caps) = init.pointer("/params/clientCapabilities") else { return Pass };
    let bool_or_absent = |pointer: &str| caps.pointer(pointer).is_none_or(Value::is_boolean);
    let fs_ok = caps.get("fs").is_none_or(Value::is_object);
    if !caps.is_object() || !fs_ok {
        return Fail(format!("clientCapabilities (or its fs) is not an object: {caps}"));
    }
    for pointer in ["/fs/readTextFile", "/fs/writeTextFile", "/terminal"] {
        if !bool_or_absent(pointer) {
            return Fail(format!("clientCapabilities{pointer} is not a boolean: {caps}"));
        }
    }
    Pass
}

fn new_cwd(run: &Run) -> Verdict {
    let mut any = false;
    for message in messages(run, "session/new") {
        any = true;
        let cwd = message.pointer("/params/cwd").and_then(Value::as_str);
        if !cwd.is_some_and(|cwd| Path::new(cwd).is_absolute()) {
            return Fail(format!("cwd is not an absolute path: {:?}", message.pointer("/params/cwd")));
        }
        if !message.pointer("/params/mcpServers").is_some_and(Value::is_array) {
            return Fail("mcpServers (required) is not an array".into());
        }
    }
    if any { Pass } else { Na("no session/new".into()) }
}

fn prompt_session(run: &Run) -> Verdict {
    let mut any = false;
    for message in messages(run, "session/prompt") {
        any = true;
        let session = message.pointer("/params/sessionId").and_then(Value::as_str);
        if session != Some(SESSION) {
            return Fail(format!("sessionId {session:?} is not the session the agent created ({SESSION})"));
        }
        if !message.pointer("/params/prompt").is_some_and(Value::is_array) {
            return Fail("prompt (required) is not an array".into());
        }
    }
    if any { Pass } else { Na("no session/prompt".into()) }
}

/// The methods the scripted agent makes available (it advertises nothing optional).
const BASELINE: [&str; 5] = ["initialize", "session/new", "session/prompt", "session/cancel", "$/cancel_request"];

fn advertised_only(run: &Run) -> Verdict {
    let out: Vec<&str> =
        run.log.messages.iter().filter_map(method).filter(|m| !BASELINE.contains(m) && !m.starts_with('_')).collect();
    if out.is_empty() {
        if run.log.messages.is_empty() { Na("the client sent nothing".into()) } else { Pass }
    } else {
        Fail(format!("called {} though the agent advertised nothing of the kind", out.join(", ")))
    }
}

fn permission(run: &Run) -> Verdict {
    let mut any = false;
    for ask in &run.observed.permissions {
        let Some(reply) = &ask.reply else { continue };
        any = true;
        let outcome = reply.pointer("/result/outcome/outcome").and_then(Value::as_str);
        let option = reply.pointer("/result/outcome/optionId").and_then(Value::as_str);
        match (outcome, option) {
            (Some("selected"), Some(id)) if ask.offered.iter().any(|o| o == id) => {}
            (Some("selected"), _) => {
                let option = option.unwrap_or("no optionId");
                return Fail(format!("selected {option:?}, not one of the offered {}", ask.offered.join(", ")));
            }
            (Some("cancelled"), _) if ask.after_cancel => {}
            (Some("cancelled"), _) => return Fail("answered `cancelled` though it had not cancelled the turn".into()),
            _ => return Fail(format!("not a permission outcome: {reply}")),
        }
    }
    if any { Pass } else { Na("no permission ask was answered".into()) }
}

fn updates(run: &Run) -> Verdict {
    match run.observed.alive_after_updates {
        None => Na(NOT_HERE.into()),
        Some(true) => Pass,
        Some(false) => Fail("after the updates the client answered nothing more".into()),
    }
}

fn error_code(reply: &Reply) -> Option<i64> {
    reply.as_ref()?.pointer("/error/code")?.as_i64()
}

fn unknown_method(run: &Run) -> Verdict {
    if run.observed.unknown.is_empty() {
        return Na(NOT_HERE.into());
    }
    for (method, reply) in &run.observed.unknown {
        match (reply, error_code(reply)) {
            (_, Some(-32601)) => {}
            (None, _) => return Fail(format!("{method} was not answered")),
            (Some(reply), _) => return Fail(format!("{method} was answered {reply}, not error -32601")),
        }
    }
    Pass
}

fn unknown_notification(run: &Run) -> Verdict {
    let to_null = run.log.messages.iter().find(|m| m.get("method").is_none() && m.get("id") == Some(&Value::Null));
    match (run.observed.alive_after_notifications, to_null) {
        (None, _) => Na(NOT_HERE.into()),
        (Some(_), Some(m)) => Fail(format!("answered a notification: {m}")),
        (Some(true), None) => Pass,
        (Some(false), None) => Fail("after the unknown notifications the client answered nothing more".into()),
    }
}

fn advertised(run: &Run, pointer: &str) -> bool {
    run.observed.caps.pointer(pointer) == Some(&Value::Bool(true))
}

fn fs(run: &Run, pointer: &str, served: bool) -> Verdict {
    let reading = pointer.ends_with("readTextFile");
    let observed = if reading { &run.observed.read } else { &run.observed.write };
    let Some((reply, effect)) = observed else { return Na(NOT_HERE.into()) };
    let method = if reading { "fs/read_text_file" } else { "fs/write_text_file" };
    match (served, advertised(run, pointer)) {
        (true, false) => Na(format!("{method} is not advertised")),
        (false, true) => Na(format!("{method} is advertised")),
        (true, true) => match reply {
            Some(r) if r.get("result").is_some() && *effect => Pass,
            Some(r) if r.get("result").is_some() && reading => Fail(format!("the content is not the file's: {r}")),
            Some(r) if r.get("result").is_some() => Fail("answered success but the file does not hold the text".into()),
            Some(r) => Fail(format!("answered {r}")),
            None => Fail("no answer".into()),
        },
        (false, false) => match reply {
            // A write refused must also have left no file.
            Some(r) if r.get("error").is_some() && (reading || !*effect) => Pass,
            Some(r) => Fail(format!("not advertised, yet answered with a result, not an error: {r}")),
            None => Fail("no answer".into()),
        },
    }
}

fn terminal(run: &Run, served: bool) -> Verdict {
    let calls = &run.observed.terminal;
    let Some((_, create)) = calls.first() else { return Na(NOT_HERE.into()) };
    match (served, advertised(run, "/terminal")) {
        (true, false) => Na("terminals are not advertised".into()),
        (false, true) => Na("terminals are advertised".into()),
        (false, false) => match create {
            Some(r) if r.get("error").is_some() => Pass,
            Some(r) => Fail(format!("terminal/create not advertised, yet answered with a result, not an error: {r}")),
            None => Fail("no answer to terminal/create".into()),
        },
        (true, true) => {
            for (method, reply) in calls {
                let ok = match (*method, reply.as_ref().and_then(|r| r.get("result"))) {
                    ("terminal/create", Some(r)) => r.get("terminalId").is_some_and(Value::is_string),
                    ("terminal/output", Some(r)) => {
                        r.get("output").is_some_and(Value::is_string)
                            && r.get("truncated").is_some_and(Value::is_boolean)
                    }
                    (_, Some(r)) => r.is_object() || r.is_null(),
                    (_, None) => false,
                };
                if !ok {
                    return Fail(format!("{method} was answered {reply:?}"));
                }
            }
            if calls.len() == 4 { Pass } else { Fail("terminal/create did not give a terminalId".into()) }
        }
    }
}

fn cancel_notification(run: &Run) -> Verdict {
    if run.observed.cancels.is_empty() {
        return match run.script {
            Script::Cancel if run.observed.interrupted => {
                Na(format!("the client sent no session/cancel when interrupted (it {})", exit_text(run)))
            }
            Script::Cancel => Na("no session/cancel".into()),
            _ => Na(NOT_HERE.into()),
        };
    }
    for (message, _) in &run.observed.cancels {
        if message.get("id").is_some() {
            return Fail("session/cancel was sent as a request (with an id), not a notification".into());
        }
        let session = message.pointer("/params/sessionId").and_then(Value::as_str);
        if session != Some(SESSION) {
            return Fail(format!("session/cancel names {session:?}, not {SESSION}"));
        }
    }
    Pass
}

fn cancel_permission(run: &Run) -> Verdict {
    if run.observed.cancels.is_empty() && run.script != Script::Cancel {
        return Na(NOT_HERE.into());
    }
    if !run.observed.cancels.iter().any(|(_, pending)| *pending) {
        return Na("no permission ask was pending when the client cancelled".into());
    }
    let Some(ask) = run.observed.permissions.last() else { return Na("no permission ask".into()) };
    match ask.reply.as_ref().and_then(|r| r.pointer("/result/outcome/outcome")).and_then(Value::as_str) {
        Some("cancelled") => Pass,
        _ => Fail(format!("the pending ask was answered {:?}, not `cancelled`", ask.reply)),
    }
}

fn exit_text(run: &Run) -> String {
    match run.status {
        _ if run.ended_by_checker => "was still running at the scenario's end".into(),
        Some(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            _ => format!("exited: {status}"),
        },
        None => "could not be reaped".into(),
    }
}

fn stop(run: &Run, reason: &str) -> Verdict {
    let mine = match run.script {
        Script::Stop(r) => r == reason,
        Script::Full => reason == "end_turn",
        _ => false,
    };
    if !mine {
        return Na(NOT_HERE.into());
    }
    if run.observed.stopped != Some(reason) {
        return Na("the turn was not reached".into());
    }
    let crashed = !run.ended_by_checker && run.status.is_some_and(|s| s.signal().is_some());
    if crashed {
        Fail(format!("after the turn ended `{reason}` the client {}", exit_text(run)))
    } else if let Some(line) = run.log.malformed.first() {
        Fail(format!("after the turn ended `{reason}` the client wrote: {line}"))
    } else {
        Pass
    }
}

fn agent_dies(run: &Run) -> Verdict {
    if run.script != Script::Die {
        return Na(NOT_HERE.into());
    }
    match run.exited_after_death {
        Some(_) => Pass,
        None => Fail(format!("until the scenario's end after the agent died, the client {}", exit_text(run))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::check::client::agent::PermissionAsk;

    fn run_with(messages: Vec<Value>) -> Run {
        let mut run = Run::new("full", Script::Full, "");
        run.failed_start = None;
        run.log.messages = messages;
        run
    }

    fn is_fail(verdict: Verdict) -> bool {
        matches!(verdict, Fail(_))
    }

    #[test]
    fn framing_catches_garbage_and_half_responses() {
        let good = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
        assert!(matches!(framing(&run_with(vec![good.clone()])), Pass));
        let both = json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}});
        assert!(is_fail(framing(&run_with(vec![good.clone(), both]))));
        let mut garbage = run_with(vec![good]);
        garbage.log.malformed.push("not json".into());
        assert!(is_fail(framing(&garbage)));
    }

    #[test]
    fn unadvertised_methods_fail_and_extensions_do_not() {
        let call = |m: &str| json!({"jsonrpc": "2.0", "id": 1, "method": m, "params": {}});
        let ok = run_with(vec![call("initialize"), call("session/new"), call("_zed.dev/x")]);
        assert!(matches!(advertised_only(&ok), Pass));
        assert!(is_fail(advertised_only(&run_with(vec![call("initialize"), call("authenticate")]))));
        assert!(is_fail(advertised_only(&run_with(vec![call("session/set_mode")]))));
    }

    #[test]
    fn a_cancelled_answer_needs_a_cancel_first() {
        let mut run = run_with(vec![]);
        let reply = json!({"jsonrpc": "2.0", "id": 3, "result": {"outcome": {"outcome": "cancelled"}}});
        let offered = vec!["a".to_owned()];
        run.observed.permissions.push(PermissionAsk {
            offered: offered.clone(),
            reply: Some(reply.clone()),
            after_cancel: false,
        });
        assert!(is_fail(permission(&run)));
        run.observed.permissions[0].after_cancel = true;
        assert!(matches!(permission(&run), Pass));
        let picked =
            json!({"jsonrpc": "2.0", "id": 3, "result": {"outcome": {"outcome": "selected", "optionId": "b"}}});
        run.observed.permissions.push(PermissionAsk { offered, reply: Some(picked), after_cancel: false });
        assert!(is_fail(permission(&run)));
    }

    #[test]
    fn a_relative_cwd_fails() {
        let new = |cwd: &str| json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}});
        assert!(matches!(new_cwd(&run_with(vec![new("/tmp")])), Pass));
        assert!(is_fail(new_cwd(&run_with(vec![new("relative")]))));
    }
}
