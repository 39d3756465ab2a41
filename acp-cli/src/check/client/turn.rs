//! The prompt turns of the scripted agent, one per [`Script`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::agent::{Agent, PermissionAsk, SESSION, Script};

/// What the checker's own file holds, for the agent to read back through the client.
const READ_TEXT: &str = "written by acp check for fs/read_text_file\n";
/// What the agent asks the client to write.
const WRITE_TEXT: &str = "written by the client for acp check\n";

/// Runs the turn; returns the stop reason to answer the prompt with (`None`: the agent died).
pub(crate) fn run(agent: &mut Agent<'_>) -> Option<&'static str> {
    match agent.script {
        Script::Full => {
            full(agent);
            Some("end_turn")
        }
        Script::Stop(reason) => {
            agent.update(chunk("agent_message_chunk", "this turn ends with a stop reason"));
            Some(reason)
        }
        Script::Cancel => {
            cancel(agent);
            Some("cancelled")
        }
        Script::Die => {
            agent.update(chunk("agent_message_chunk", "the agent is about to die"));
            agent.wire.close();
            None
        }
    }
}

fn chunk(kind: &str, text: &str) -> Value {
    json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
}

/// One update of every kind of the v1 schema.
fn every_update() -> Vec<Value> {
    vec![
        chunk("user_message_chunk", "(the prompt, replayed)"),
        chunk("agent_thought_chunk", "thinking about the check"),
        chunk("agent_message_chunk", "streaming every kind of update"),
        json!({"sessionUpdate": "plan", "entries": [
            {"content": "check the client", "priority": "high", "status": "in_progress"}]}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "check-call-1", "title": "Reading a file",
            "kind": "read", "status": "pending"}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "check-call-1", "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "done"}}]}),
        json!({"sessionUpdate": "available_commands_update", "availableCommands": [
            {"name": "check", "description": "run the check"}]}),
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "default"}),
        json!({"sessionUpdate": "config_option_update", "configOptions": []}),
        json!({"sessionUpdate": "session_info_update", "title": "acp check"}),
        json!({"sessionUpdate": "usage_update", "used": 1000, "size": 200000,
            "cost": {"amount": 0.01, "currency": "USD"}}),
    ]
}

fn full(agent: &mut Agent<'_>) {
    for update in every_update() {
        agent.update(update);
    }
    let reply = agent.call("_acp_check/unknown_request", json!({"sessionId": SESSION}));
    agent.observed.alive_after_updates = Some(reply.is_some());
    agent.observed.unknown.push(("_acp_check/unknown_request", reply));
    agent.wire.notify("_acp_check/unknown_notification", json!({"sessionId": SESSION}));
    agent.wire.notify("acp_check/unknown_notification", json!({"sessionId": SESSION}));
    let reply = agent.call("acp_check/unknown_request", json!({"sessionId": SESSION}));
    agent.observed.alive_after_notifications = Some(reply.is_some());
    agent.observed.unknown.push(("acp_check/unknown_request", reply));
    ask_permission(agent);
    files(agent);
    terminal(agent);
    agent.update(chunk("agent_message_chunk", "done"));
}

fn permission_params() -> Value {
    json!({
        "sessionId": SESSION,
        "toolCall": {"toolCallId": "check-call-2", "title": "Write a file", "kind": "edit", "status": "pending"},
        "options": [
            {"optionId": "check-allow", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "check-reject", "name": "Reject", "kind": "reject_once"}
        ]
    })
}

fn offered() -> Vec<String> {
    vec!["check-allow".into(), "check-reject".into()]
}

fn ask_permission(agent: &mut Agent<'_>) {
    agent.update(json!({"sessionUpdate": "tool_call", "toolCallId": "check-call-2", "title": "Write a file",
        "kind": "edit", "status": "pending"}));
    let reply = agent.call("session/request_permission", permission_params());
    let after_cancel = agent.cancelled();
    agent.observed.permissions.push(PermissionAsk { offered: offered(), reply, after_cancel });
}

/// The session's directory, if the client gave an absolute one that exists.
fn session_dir(agent: &Agent<'_>) -> Option<PathBuf> {
    let cwd = PathBuf::from(agent.observed.cwd.as_deref()?);
    (cwd.is_absolute() && cwd.is_dir()).then_some(cwd)
}

fn files(agent: &mut Agent<'_>) {
    let dir = session_dir(agent).unwrap_or_else(std::env::temp_dir);
    let tag = format!("{}-{}", std::process::id(), agent.wire.elapsed().as_nanos());
    let read_path = dir.join(format!(".acp-check-read-{tag}.txt"));
    let write_path = dir.join(format!(".acp-check-write-{tag}.txt"));
    // The file exists either way: a client that serves the method though it did not
    // advertise it answers its content, one that refuses answers an error.
    let made = std::fs::write(&read_path, READ_TEXT).is_ok();
    let reply = agent.call("fs/read_text_file", json!({"sessionId": SESSION, "path": path_text(&read_path)}));
    let content_ok =
        reply.as_ref().and_then(|r| r.pointer("/result/content")).and_then(Value::as_str) == Some(READ_TEXT);
    agent.observed.read = Some((reply, content_ok));
    if made {
        let _ = std::fs::remove_file(&read_path);
    }
    let reply = agent.call(
        "fs/write_text_file",
        json!({"sessionId": SESSION, "path": path_text(&write_path), "content": WRITE_TEXT}),
    );
    let written = std::fs::read_to_string(&write_path).is_ok_and(|text| text == WRITE_TEXT);
    let _ = std::fs::remove_file(&write_path);
    agent.observed.write = Some((reply, written));
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}

fn terminal(agent: &mut Agent<'_>) {
    let reply = agent.call(
        "terminal/create",
        json!({"sessionId": SESSION, "command": "echo", "args": ["acp-check"], "outputByteLimit": 4096}),
    );
    let terminal_id = reply.as_ref().and_then(|r| r.pointer("/result/terminalId")).cloned();
    agent.observed.terminal.push(("terminal/create", reply));
    let Some(terminal_id) = terminal_id else { return };
    let params = json!({"sessionId": SESSION, "terminalId": terminal_id});
    for method in ["terminal/wait_for_exit", "terminal/output", "terminal/release"] {
        let reply = agent.call(method, params.clone());
        agent.observed.terminal.push((method, reply));
    }
}

/// A permission ask, then the client is interrupted as a user's Ctrl-C would; a client that
/// cancels sends `session/cancel` and answers the ask `cancelled` if it was still pending.
fn cancel(agent: &mut Agent<'_>) {
    agent.update(chunk("agent_message_chunk", "a long turn, about to ask"));
    agent.update(json!({"sessionUpdate": "tool_call", "toolCallId": "check-call-3", "title": "Write a file",
        "kind": "edit", "status": "pending"}));
    let id = agent.wire.request("session/request_permission", permission_params());
    agent.set_pending(Some(&id));
    // A client that answers by policy does so at once; one that asks a person does not.
    let mut reply = agent.await_reply(&id, Duration::from_millis(300));
    let mut after_cancel = false;
    if reply.is_some() {
        agent.set_pending(None);
    }
    agent.observed.interrupted = agent.launched.interrupt();
    // Until the scenario's end: a loaded machine can take seconds to deliver the signal and
    // the answer; a client that dies of SIGINT ends its output, which ends the wait at once.
    let rest = agent.deadline.saturating_duration_since(std::time::Instant::now());
    let cancelled = agent.observed.interrupted && agent.await_cancel(rest);
    if reply.is_none() {
        if let Some(before) = agent.early.remove(&id.to_string()) {
            // Answered while the cancel was awaited, before it came.
            reply = Some(before);
        } else if cancelled {
            let rest = agent.deadline.saturating_duration_since(std::time::Instant::now());
            reply = agent.await_reply(&id, rest);
            after_cancel = true;
        }
    }
    agent.set_pending(None);
    agent.observed.permissions.push(PermissionAsk { offered: offered(), reply, after_cancel });
    if cancelled {
        agent.update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "check-call-3", "status": "failed"}));
    }
}
