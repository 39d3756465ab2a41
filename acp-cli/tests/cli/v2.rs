//! ACP v2 (Preview, feature `unstable_protocol_v2`) end to end: `acp client --protocol 2`
//! driving `acp agent --protocol 2` through whole turns (allowed, rejected, asked on stdin),
//! cancelled by Ctrl-C and by `/cancel`; the same client reaching `acp serve`'s v2 agent over
//! WebSocket and Streamable HTTP (`--connect`); a v1 agent (which answers 1) and a v1 client against
//! the v2 agent; `acp demo --protocol 2`; and the v2 agent's contract (`agent::v2` module docs)
//! checked update by update by acp-tokio's v2 client.

use crate::common;

use std::io::Write;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_blocking::acp_proto;
use acp_proto::TurnEndReason;
use acp_proto::v2::{self, IdleStopReason, SessionUpdate, StateUpdate};
use acp_tokio::v2 as tokio_v2;
use acp_tokio::{ClientContext, ClientOptions};
use common::*;
use serde_json::{Value, json};

/// `acp client --protocol 2 ARGS -- acp agent --protocol 2 --quiet`.
fn v2_client_args<'a>(acp: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["client", "--protocol", "2"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", acp, "agent", "--protocol", "2", "--quiet"]);
    all
}

#[test]
fn printf_a_v2_initialize_into_acp_agent_prints_the_answer_and_exits_0() {
    // The end of input is a half-close: what arrived just before it is still answered.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": 2, "info": {"name": "printf", "version": "1"}, "capabilities": {}}});
    let (status, frames) = piped_into_agent(&[init], &["--protocol", "2"]);
    assert!(status.success(), "{status}");
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!((&frames[0]["id"], &frames[0]["result"]["protocolVersion"]), (&json!(0), &json!(2)));
}

/// Panics unless `parts` appear in `text` in this order.
fn in_order(text: &str, parts: &[String]) {
    let mut from = 0;
    for part in parts {
        let at =
            text[from..].find(part.as_str()).unwrap_or_else(|| panic!("missing {part:?} after {from} in:\n{text}"));
        from += at + part.len();
    }
}

#[test]
fn v2_client_runs_the_v2_agents_whole_turn_allowed() {
    let dir = TempDir::new("v2-allow");
    let path = dir.file("notes.txt", "the secret text\n");
    let acp = acp().display().to_string();
    let prompt = format!("read {path}");
    let out = run(&v2_client_args(&acp, &["--allow", "-p", &prompt]), dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    let expected = [
        "(ACP protocol v2)".to_owned(),
        format!("> read {path}"),
        format!("echo: read {path}"),
        format!("thinking: The prompt names {path}"),
        format!("Plan plan-1\n  [~] Read {path} (high)\n  [ ] Report what it says"),
        format!("▸ Read {path}  [read · pending]"),
        format!("    ↳ {path}"),
        "→ Allow once (--allow)".to_owned(),
        format!("Read {path}: in progress"),
        format!("✓ Read {path}: completed\n    │ Not read: ACP v2 has no client file system"),
        // The same plan id again: the plan redrawn with both steps done.
        format!("Plan plan-1\n  [x] Read {path} (high)\n  [x] Report what it says"),
        "done\n— end of turn".to_owned(),
    ];
    in_order(&out.stdout, &expected);
    // The tool call was opened once: later updates of its id are updates, not new calls.
    assert_eq!(out.stdout.matches("▸ Read").count(), 1, "{}", out.stdout);
}

#[test]
fn v2_client_rejects_by_policy_and_the_turn_ends_end_turn() {
    let dir = TempDir::new("v2-deny");
    let acp = acp().display().to_string();
    let out = run(&v2_client_args(&acp, &["--deny", "-p", "read /etc/hostname"]), dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    let expected = [
        "? permission: Read /etc/hostname".to_owned(),
        "→ Reject (--deny)".to_owned(),
        "✗ Read /etc/hostname: failed\n    │ Rejected by the user.".to_owned(),
        "— end of turn".to_owned(),
    ];
    in_order(&out.stdout, &expected);
    assert!(!out.stdout.contains("in progress"), "{}", out.stdout);
}

#[test]
fn v2_client_asks_on_stdin_with_the_v1_question() {
    let dir = TempDir::new("v2-ask");
    let acp = acp().display().to_string();
    let out = run(&v2_client_args(&acp, &["--ask", "-p", "read /nonexistent/x"]), dir.path(), "1\n");
    assert_eq!(out.code(), 0, "{out:?}");
    let expected = [
        "? permission: Read /nonexistent/x".to_owned(),
        "[1] Allow once   [2] Reject".to_owned(),
        "→ Allow once (your answer)".to_owned(),
        "✓ Read /nonexistent/x: completed\n    │ Nothing to read: /nonexistent/x does not exist.".to_owned(),
        "— end of turn".to_owned(),
    ];
    in_order(&out.stdout, &expected);
}

#[cfg(unix)]
#[test]
fn v2_client_ctrl_c_cancels_the_turn_and_exits_3() {
    let dir = TempDir::new("v2-sigint");
    let acp = acp().display().to_string();
    let mut child = start(&v2_client_args(&acp, &["--allow", "-p", "a slow one"]), dir.path(), "", false);
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    wait_for(&stdout, "echo: a slow one", Duration::from_secs(10));
    signal(&child, rustix::process::Signal::INT);
    let out = finish(child, stdout, stderr, Duration::from_secs(5));
    assert_eq!(out.code(), 3, "cancelled: {out:?}");
    in_order(&out.stdout, &["⏹ cancelling the turn".to_owned(), "⏹ turn cancelled".to_owned()]);
    assert!(!out.stdout.contains("thinking:"), "the agent stopped at once: {}", out.stdout);
}

#[test]
fn v2_client_loop_cancel_line_then_next_prompt() {
    let dir = TempDir::new("v2-loop");
    let acp = acp().display().to_string();
    let mut child = start_interactive(&v2_client_args(&acp, &["--allow"]), dir.path());
    let mut input = child.stdin.take().unwrap();
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    input.write_all(b"please be slow\n").unwrap();
    wait_for(&stdout, "echo: please be slow", Duration::from_secs(10));
    input.write_all(b"/cancel\n").unwrap();
    wait_for(&stdout, "⏹ turn cancelled", Duration::from_secs(5));
    // The session is idle again: the next line is a new turn, then the end of input quits.
    input.write_all(b"read /nonexistent/y\n").unwrap();
    wait_for(&stdout, "— end of turn", Duration::from_secs(10));
    drop(input);
    let out = finish(child, stdout, stderr, Duration::from_secs(5));
    assert_eq!(out.code(), 0, "the user quit: {out:?}");
    in_order(
        &out.stdout,
        &["⏹ cancelling the turn".into(), "⏹ turn cancelled".into(), "echo: read /nonexistent/y".into()],
    );
}

#[test]
fn v2_client_against_a_v1_agent_says_to_rerun_without_protocol_2() {
    let dir = TempDir::new("v2-vs-v1");
    let acp = acp().display().to_string();
    let out = run(&["client", "--protocol", "2", "-p", "hi", "--", &acp, "agent", "--quiet"], dir.path(), "");
    assert_eq!(out.code(), 6, "a protocol error: {out:?}");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("error: the agent speaks ACP v1") && said.contains("rerun without --protocol 2"), "{said}");
    assert!(!out.stdout.contains("echo:"), "no turn ran: {}", out.stdout);
}

#[test]
fn v1_client_against_the_v2_agent_fails_clearly() {
    let dir = TempDir::new("v1-vs-v2");
    let acp = acp().display().to_string();
    let out = run(&["client", "-p", "hi", "--", &acp, "agent", "--protocol", "2", "--quiet"], dir.path(), "");
    assert_eq!(out.code(), 6, "the v2 agent answers a v1 initialize -32022: {out:?}");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("the agent answered initialize with an error") && said.contains("try --protocol 2"),
        "{said}"
    );
}

/// The flags the v2 client once refused run as on v1: `--format json` writes every frame and
/// the summary, whose stop reason is the agent's `idle`; `--quiet` prints the final message;
/// `--image` attaches an image.
#[test]
fn v2_client_writes_json_and_quiet_as_v1_does() {
    let dir = TempDir::new("v2-formats");
    let acp = acp().display().to_string();
    let out = run(&v2_client_args(&acp, &["--format", "json", "--deny", "-p", "hi"]), dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    let records: Vec<Value> =
        out.stdout.lines().map(|l| serde_json::from_str(l).expect("one JSON record a line")).collect();
    let summary = records.last().expect("a summary");
    assert_eq!(summary["type"], "summary", "{summary}");
    assert_eq!(summary["stopReason"], "end_turn", "{summary}");
    assert_eq!(summary["text"], "echo: hi", "{summary}");
    assert_eq!(summary["permissions"][0]["toolCallId"], "call-1", "{summary}");
    assert!(records.iter().any(|r| r["msg"]["params"]["protocolVersion"] == 2), "the frames: {}", out.stdout);
    let quiet = run(&v2_client_args(&acp, &["--quiet", "--deny", "-p", "hi"]), dir.path(), "");
    assert_eq!((quiet.code(), quiet.stdout.as_str()), (0, "echo: hi\n"), "{quiet:?}");
    // `--image` to an agent that advertises `prompt.image`: the prompt's second block, in v2's shape.
    std::fs::write(dir.path().join("dot.png"), b"\x89PNG\r\n\x1a\nxyz").unwrap();
    let out =
        run(&v2_client_args(&acp, &["--format", "json", "--deny", "--image", "dot.png", "-p", "look"]), dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    let prompt = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON"))
        .find(|r| r["msg"]["method"] == "session/prompt")
        .expect("the prompt's frame")["msg"]["params"]["prompt"]
        .clone();
    assert_eq!((&prompt[1]["type"], &prompt[1]["mimeType"]), (&json!("image"), &json!("image/png")), "{prompt}");
    assert_eq!(prompt[1]["data"], "iVBORw0KGgp4eXo=", "{prompt}");
}

/// `acp client --protocol 2 --connect URL` against `acp serve -- acp agent --protocol 2`, over
/// WebSocket and over Streamable HTTP: a whole turn with a permission, exit 0; the server's
/// agent process ends with the connection and the server stops cleanly.
#[test]
fn v2_client_connects_to_a_served_v2_agent_over_websocket_and_http() {
    let dir = TempDir::new("v2-remote");
    let acp = acp().display().to_string();
    let args = ["serve", "--listen", "127.0.0.1:0", "--", &acp, "agent", "--protocol", "2", "--quiet"];
    let Serving { child, stderr, addr } = start_serving(&args, dir.path());
    for url in [format!("ws://{addr}/acp"), format!("http://{addr}/acp")] {
        let client = ["client", "--protocol", "2", "--allow", "--connect", &url, "-p", "read /nonexistent/x"];
        let out = run(&client, dir.path(), "");
        assert_eq!(out.code(), 0, "{url}: {out:?}");
        let expected = [
            format!("connected to {url}"),
            "(ACP protocol v2)".to_owned(),
            "? permission: Read /nonexistent/x".to_owned(),
            "→ Allow once (--allow)".to_owned(),
            "✓ Read /nonexistent/x: completed".to_owned(),
            "— end of turn".to_owned(),
        ];
        in_order(&out.stdout, &expected);
    }
    wait_for(&stderr, "event=connection_closed", Duration::from_secs(5));
    let log = stop_serving(child, stderr).stderr;
    assert!(log.contains("event=stopped"), "{log}");
}

#[test]
fn v2_demo_runs_the_whole_turn() {
    let dir = TempDir::new("v2-demo");
    let out = run(&["demo", "--protocol", "2"], dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    in_order(&out.stdout, &["ACP v2 (Preview)".into(), "→ Allow once".into(), "done\n— end of turn".into()]);
}

/// A v2 client that allows every permission ask (its first option) and records the asks.
struct Allowing(std::sync::Arc<std::sync::Mutex<Vec<Value>>>);

impl tokio_v2::Client for Allowing {
    async fn request_permission(
        &self,
        request: v2::RequestPermissionRequest,
        _: ClientContext,
    ) -> Result<v2::RequestPermissionResponse, acp_proto::RpcError> {
        let first = request.options[0].option_id.clone();
        self.0.lock().unwrap().push(serde_json::to_value(&request).unwrap());
        Ok(v2::RequestPermissionResponse {
            outcome: v2::RequestPermissionOutcome::Selected(v2::SelectedPermissionOutcome::new(first)),
            meta: None,
        })
    }
}

/// Each update of the turn as `kind id detail`.
async fn seen(turn: &mut tokio_v2::PromptTurn) -> Vec<String> {
    let mut seen = Vec::new();
    while let Some(n) = tokio::time::timeout(Duration::from_secs(10), turn.next_update()).await.expect("in time") {
        let v = serde_json::to_value(&n.update).unwrap();
        let kind = v["sessionUpdate"].as_str().unwrap().to_owned();
        let line = match &n.update {
            SessionUpdate::StateUpdate(StateUpdate::Idle(i)) => format!("idle {:?}", i.stop_reason),
            SessionUpdate::StateUpdate(_) => format!("state {}", v["state"].as_str().unwrap()),
            SessionUpdate::ToolCallUpdate(t) => format!("{kind} {} {}", t.tool_call_id.as_str(), v["status"]),
            SessionUpdate::PlanUpdate(_) => {
                format!("{kind} {} {}", v["plan"]["planId"], v["plan"]["entries"][0]["status"])
            }
            _ => format!("{kind} {} {}", v["messageId"], v["content"]["text"]),
        };
        seen.push(line);
    }
    seen
}

fn prompt(session: &v2::SessionId, text: &str) -> v2::PromptRequest {
    let prompt = vec![v2::ContentBlock::Text(v2::TextContent::new(text))];
    v2::PromptRequest { session_id: session.clone(), prompt, idempotency_key: None, meta: None }
}

#[test]
fn v2_agent_contract_update_by_update() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    runtime.block_on(async {
        let mut agent = tokio::process::Command::new(acp())
            .args(["agent", "--protocol", "2", "--quiet", "--slow-ms", "20000"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (stdin, stdout) = (agent.stdin.take().unwrap(), agent.stdout.take().unwrap());
        let asks = std::sync::Arc::default();
        let conn = tokio_v2::ClientConnection::connect(
            Allowing(std::sync::Arc::clone(&asks)),
            stdout,
            stdin,
            ClientOptions::default(),
        );
        let init: v2::InitializeRequest = serde_json::from_value(json!({
            "protocolVersion": 2, "info": { "name": "contract", "version": "1" }, "capabilities": {},
        }))
        .unwrap();
        let init = conn.initialize(init).await.expect("v2 handshake");
        assert_eq!((init.protocol_version.0, init.info.name.as_str()), (2, "acp-reference-agent"));
        // Extension methods, through the v2 client's own call: `_test/echo` answers its params
        // verbatim, as v1's agent does; another is unknown.
        let params = json!({ "x": [1, "two", null] });
        assert_eq!(conn.ext_method("_test/echo", params.clone()).await.expect("_test/echo"), params);
        let unknown = conn.ext_method("_test/nothing", json!({})).await.expect_err("not an extension of the agent");
        assert_eq!(unknown.rpc_code(), Some(-32601), "{unknown:?}");
        let new: v2::NewSessionRequest = serde_json::from_value(json!({
            "cwd": "/tmp", "systemPrompt": { "mode": "append", "content": [{ "type": "text", "text": "be brief" }] },
        }))
        .unwrap();
        let session = conn.new_session(new).await.expect("a session").session_id;
        assert_eq!(session.as_str(), "sess-1");

        let mut turn = conn.prompt(prompt(&session, "read /nonexistent/z")).await.expect("sent");
        assert_eq!(turn.ack().await.unwrap().unwrap().message_id.as_str(), "user-1");
        let expected = [
            // Where the prompt went in the session's history, as the ack named it.
            "user_message \"user-1\" null",
            "state running",
            "agent_message_chunk \"agent-1\" \"echo: read /nonexistent/z\"",
            "agent_message_chunk \"agent-1\" \"\\nsystem prompt: be brief\"",
            "agent_thought_chunk \"thought-1\" \"The prompt names /nonexistent/z; I will ask before touching it.\"",
            "plan_update \"plan-1\" \"in_progress\"",
            "tool_call_update call-1 \"pending\"",
            "tool_call_update call-1 \"in_progress\"",
            "tool_call_update call-1 \"completed\"",
            "plan_update \"plan-1\" \"completed\"",
            "agent_message_chunk \"agent-1\" \"done\"",
            "idle Some(EndTurn)",
        ];
        assert_eq!(seen(&mut turn).await, expected);
        assert_eq!(turn.finish().await.unwrap(), TurnEndReason::Idle { stop_reason: Some(IdleStopReason::EndTurn) });
        let ask = asks.lock().unwrap().pop().expect("one permission ask");
        assert_eq!(ask["subject"]["toolCall"]["toolCallId"], "call-1");
        assert_eq!(ask["options"][0]["optionId"], "allow-once");
        assert_eq!(ask["options"][1]["optionId"], "reject-once");

        // A slow turn: session/cancel ends it cancelled at once.
        let mut slow = conn.prompt(prompt(&session, "slow")).await.expect("sent");
        let user = tokio::time::timeout(Duration::from_secs(10), slow.next_update()).await.unwrap().unwrap();
        assert!(matches!(user.update, SessionUpdate::UserMessage(_)), "{user:?}");
        let first = tokio::time::timeout(Duration::from_secs(10), slow.next_update()).await.unwrap().unwrap();
        assert!(matches!(first.update, SessionUpdate::StateUpdate(StateUpdate::Running(_))));
        conn.cancel(&session).await.expect("session/cancel");
        let rest = seen(&mut slow).await;
        assert_eq!(rest.last().map(String::as_str), Some("idle Some(Cancelled)"), "{rest:?}");
        assert!(!rest.iter().any(|u| u.starts_with("agent_thought")), "stopped before the thought: {rest:?}");

        // session/close ends a running turn; the closed session is then unknown.
        let mut closing = conn.prompt(prompt(&session, "slow again")).await.expect("sent");
        let _ = closing.next_update().await;
        let close = v2::CloseSessionRequest::new(session.clone());
        conn.close_session(close.clone()).await.expect("closed");
        let ended = tokio::time::timeout(Duration::from_secs(10), closing.finish()).await.unwrap().unwrap();
        assert!(
            matches!(
                ended,
                TurnEndReason::SessionClosed | TurnEndReason::Idle { stop_reason: Some(IdleStopReason::Cancelled) }
            ),
            "{ended:?}"
        );
        let again = conn.close_session(close).await.expect_err("already closed");
        assert_eq!(again.rpc_code(), Some(-32002), "{again:?}");
        conn.close().await.expect("the connection closes");
        let status = tokio::time::timeout(Duration::from_secs(5), agent.wait()).await.unwrap().unwrap();
        assert!(status.success(), "the agent ends when its input does: {status:?}");
    });
}

#[test]
fn v2_client_reports_an_agent_that_dies_in_a_turn_with_exit_7() {
    let dir = TempDir::new("v2-died");
    let init = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":2,"info":{"name":"fake","version":"0"},"capabilities":{"session":{}}}}"#;
    let new = r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#;
    // Answers the handshake, reads the prompt, says something on stderr and exits.
    let script = format!("read l; echo '{init}'; read l; echo '{new}'; read l; echo 'going away' >&2; exit 0");
    let out = run(&["client", "--protocol", "2", "--allow", "-p", "hi", "--", "sh", "-c", &script], dir.path(), "");
    assert_eq!(out.code(), 7, "{out:?}");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("(ACP protocol v2)") && said.contains("session s1 · cwd") && said.contains("the agent died"),
        "{said}"
    );
    assert!(said.contains("going away"), "the tail of its stderr: {said}");
}

/// A message a scripted agent writes: the `sh` line that `cat`s it from a file in `dir`.
fn say(dir: &TempDir, name: &str, message: Value) -> String {
    format!("cat '{}'; echo; ", dir.file(name, &message.to_string()))
}

/// The `sh` line of a v2 `state_update` of session `s1` (`running`, or `idle` with `stopReason`).
fn state(dir: &TempDir, state: &str, stop: Option<&str>) -> String {
    let mut update = json!({"sessionUpdate": "state_update", "state": state});
    if let Some(stop) = stop {
        update["stopReason"] = stop.into();
    }
    let message =
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}});
    say(dir, &format!("{state}.json"), message)
}

/// The `sh` lines of a scripted v2 agent up to its turn: it answers `initialize` and
/// `session/new` (`s1`), acknowledges the prompt, says `running`, then asks the permission
/// `p1` ("Later", one option: Allow).
fn v2_agent_asking(dir: &TempDir) -> String {
    let init = say(
        dir,
        "init.json",
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 2,
        "info": {"name": "scripted", "version": "0"}, "capabilities": {"session": {}}}}),
    );
    let new = say(dir, "new.json", json!({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s1"}}));
    let ack = say(dir, "ack.json", json!({"jsonrpc": "2.0", "id": 3, "result": {"messageId": "user-1"}}));
    let ask = say(
        dir,
        "ask.json",
        json!({"jsonrpc": "2.0", "id": "p1", "method": "session/request_permission",
        "params": {"sessionId": "s1", "title": "Later",
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}}),
    );
    format!("read l; {init}read l; {new}read l; {ack}{running}{ask}", running = state(dir, "running", None))
}

/// The `sh` line that appends the next message the agent reads to `dir/answers`.
fn v2_answer_line(dir: &TempDir) -> String {
    format!("read -r l; printf '%s\\n' \"$l\" >> '{}'; ", dir.path().join("answers").display())
}

/// The messages read with [`v2_answer_line`].
fn v2_answers(dir: &TempDir) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.path().join("answers")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `acp client --protocol 2 --ask` against the `sh` agent `script` (which then reads its input
/// to the end), with `hi` typed; its stdin, stdout and stderr.
fn v2_client_asked_by(
    dir: &TempDir,
    script: &str,
) -> (std::process::Child, std::process::ChildStdin, Arc<Mutex<String>>, Arc<Mutex<String>>) {
    let script = format!("{script}while read l; do :; done");
    let mut child = start_interactive(&["client", "--protocol", "2", "--ask", "--", "sh", "-c", &script], dir.path());
    let mut input = child.stdin.take().unwrap();
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    input.write_all(b"hi\n").unwrap();
    (child, input, stdout, stderr)
}

#[test]
fn v2_client_keeps_a_question_on_screen_when_the_turn_ends_and_cancel_then_cancels_it() {
    let dir = TempDir::new("v2-question-after-turn");
    // It asks in the turn, and ends the turn (idle) without waiting for the answer once the
    // test says so: the question is on screen when the turn ends, as when an ask sent right
    // after `idle` reaches the UI before the turn's end.
    let go = dir.path().join("go");
    let wait = format!("while [ ! -e '{}' ]; do sleep 0.05; done; ", go.display());
    let script =
        format!("{}{wait}{}{}", v2_agent_asking(&dir), state(&dir, "idle", Some("end_turn")), v2_answer_line(&dir));
    let (child, mut input, stdout, stderr) = v2_client_asked_by(&dir, &script);
    wait_for(&stdout, "? permission: Later", Duration::from_secs(10));
    std::fs::write(&go, "").unwrap();
    wait_for(&stdout, "— end of turn", Duration::from_secs(10));
    input.write_all(b"/cancel\n").unwrap();
    wait_for(&stdout, "questions cancelled (no turn is running)", Duration::from_secs(10));
    drop(input);
    let out = finish(child, stdout, stderr, Duration::from_secs(10));
    assert_eq!(out.code(), 0, "{out:?}");
    in_order(&out.stdout, &["? permission: Later".into(), "— end of turn".into(), "choose 1-1 (y/n)".into()]);
    let answers = v2_answers(&dir);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], "p1", "{answers:?}");
    assert_eq!(answers[0]["result"]["outcome"], json!({"outcome": "cancelled"}), "{answers:?}");
}

#[test]
fn v2_client_cancel_at_a_question_sends_session_cancel_before_the_answer() {
    let dir = TempDir::new("v2-cancel-order");
    let answer = v2_answer_line(&dir);
    let script = format!("{}{answer}{answer}{}", v2_agent_asking(&dir), state(&dir, "idle", Some("cancelled")));
    let (child, mut input, stdout, stderr) = v2_client_asked_by(&dir, &script);
    wait_for(&stdout, "? permission: Later", Duration::from_secs(10));
    input.write_all(b"/cancel\n").unwrap();
    wait_for(&stdout, "turn cancelled", Duration::from_secs(10));
    drop(input);
    let out = finish(child, stdout, stderr, Duration::from_secs(10));
    assert_eq!(out.code(), 0, "{out:?}");
    let answers = v2_answers(&dir);
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["method"], "session/cancel", "{answers:?}");
    assert_eq!(answers[1]["id"], "p1", "{answers:?}");
    assert_eq!(answers[1]["result"]["outcome"], json!({"outcome": "cancelled"}), "{answers:?}");
}

/// Issue 30 §2, v2: a prompt sent while a turn runs joins it. `/steer TEXT` (or, on a
/// terminal, a plain line) typed during the turn goes out as `session/prompt` of the running
/// turn's session; the agent takes it into that turn (`steered: …`), in the order typed; a
/// plain piped line waits for the turn's end and is the next turn.
#[test]
fn v2_client_steers_the_running_turn_by_joining_it() {
    let dir = TempDir::new("v2-steer");
    let acp = acp().display().to_string();
    let args = ["client", "--protocol", "2", "--", &acp, "agent", "--protocol", "2", "--quiet", "--slow-ms", "1500"];
    let lines = "slow news\n/steer focus on the tests\n/steer and the docs\nmore news\n";
    let out = run(&args, dir.path(), lines);
    assert_eq!(out.code(), 0, "{out:?}");
    in_order(
        &out.stdout,
        &[
            "echo: slow news".into(),
            "steered: focus on the tests".into(),
            "steered: and the docs".into(),
            "— end of turn".into(),
            "echo: more news".into(),
            "— end of turn".into(),
        ],
    );
    assert_eq!(
        out.stdout.matches("echo: ").count(),
        2,
        "two turns, the steered one and the queued one:\n{}",
        out.stdout
    );
}

/// The interactive loop is v1's: slash commands (`/help`, `/mode`, which v2 has no modes for),
/// a prompt per line, `/quit`; the session is recorded in the session database as v1's are.
#[test]
fn v2_client_runs_the_interactive_loop_with_slash_commands() {
    let dir = TempDir::new("v2-repl");
    let acp = acp().display().to_string();
    let out = run(&v2_client_args(&acp, &["--deny"]), dir.path(), "/help\n/mode\nhi\n/quit\n");
    assert_eq!(out.code(), 0, "{out:?}");
    let expected = [
        "  fs and terminals: none (ACP v2 has neither)".to_owned(),
        "/steer TEXT".to_owned(),
        "the agent offers no modes for this session".to_owned(),
        "echo: hi".to_owned(),
        "→ Reject (--deny)".to_owned(),
        "— end of turn".to_owned(),
    ];
    in_order(&out.stdout, &expected);
}

/// A v2 agent in `sh` that offers the login method `m1` (`auth/login`), opens session `s-7`
/// (naming the command `/status` and the config option `model`: `fast` or `deep`, set with
/// `session/set_config_option`), lists it (`session/list`), reopens it with `session/resume`,
/// and answers each prompt with one message saying which (`new s-7: TEXT`, `resumed s-7:
/// TEXT`), then idle. The prompt `form` first asks a form (`elicitation/create`, a required
/// `name`) and says the answer (`form: ACTION NAME`); the prompt `fail` goes idle at once with
/// the stop reason `error` (`-32000`, "log in first").
const SCRIPTED_V2_AGENT: &str = r#"
state=new
while IFS= read -r l; do
  id=$(printf '%s' "$l" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  [ -n "$id" ] || continue
  case "$l" in
    *'"method":"initialize"'*) echo '{"jsonrpc":"2.0","id":'$id',"result":{"protocolVersion":2,"info":{"name":"scripted","version":"0"},"capabilities":{"session":{}},"authMethods":[{"type":"agent","methodId":"m1","name":"Sign in"}]}}' ;;
    *'"method":"auth/login"'*'"methodId":"m1"'*) echo '{"jsonrpc":"2.0","id":'$id',"result":{}}' ;;
    *'"method":"session/new"'*) echo '{"jsonrpc":"2.0","id":'$id',"result":{"sessionId":"s-7","availableCommands":[{"type":"command","name":"status","description":"Say the status"}],"configOptions":[{"configId":"model","name":"Model","category":"model","type":"select","currentValue":"fast","options":[{"value":"fast","name":"Fast"},{"value":"deep","name":"Deep"}]}]}}' ;;
    *'"method":"session/set_config_option"'*'"type":"id"'*)
      model=$(printf '%s' "$l" | sed -n 's/.*"value":"\([a-z]*\)".*/\1/p')
      echo '{"jsonrpc":"2.0","id":'$id',"result":{"configOptions":[{"configId":"model","name":"Model","category":"model","type":"select","currentValue":"'$model'","options":[{"value":"fast","name":"Fast"},{"value":"deep","name":"Deep"}]}]}}' ;;
    *'"method":"session/resume"'*'"sessionId":"s-7"'*) state=resumed; echo '{"jsonrpc":"2.0","id":'$id',"result":{}}' ;;
    *'"method":"session/list"'*) echo '{"jsonrpc":"2.0","id":'$id',"result":{"sessions":[{"sessionId":"s-7","cwd":"/tmp","title":"Earlier"}]}}' ;;
    *'"method":"session/prompt"'*)
      text=$(printf '%s' "$l" | sed -n 's/.*"text":"\([^"]*\)".*/\1/p')
      echo '{"jsonrpc":"2.0","id":'$id',"result":{"messageId":"u-'$id'"}}'
      if [ "$text" = fail ]; then
        echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-7","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"error","error":{"code":-32000,"message":"log in first"}}}}'
        continue
      fi
      if [ "$text" = form ]; then
        echo '{"jsonrpc":"2.0","id":100,"method":"elicitation/create","params":{"sessionId":"s-7","message":"Who is asking?","mode":"form","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}'
        IFS= read -r answer
        action=$(printf '%s' "$answer" | sed -n 's/.*"action":"\([a-z]*\)".*/\1/p')
        name=$(printf '%s' "$answer" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
        text="form: $action $name"
      fi
      echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-7","update":{"sessionUpdate":"agent_message_chunk","messageId":"a-'$id'","content":{"type":"text","text":"'$state' s-7: '"$text"'"}}}}'
      echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-7","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}' ;;
    *) echo '{"jsonrpc":"2.0","id":'$id',"error":{"code":-32601,"message":"no such method"}}' ;;
  esac
done
"#;

/// A v2 session is recorded with its version: `--continue` reopens it over v2 with
/// `session/resume` without being told `--protocol 2`; `--resume ID --protocol 1` is refused
/// saying why, and `--continue --protocol 1` looks for a v1 session only.
#[test]
fn continue_reopens_a_session_in_the_version_it_was_spoken_in() {
    let dir = TempDir::new("v2-continue");
    let agent = ["--", "sh", "-c", SCRIPTED_V2_AGENT];
    let first: Vec<&str> = ["client", "--protocol", "2", "-p", "first"].into_iter().chain(agent).collect();
    let out = run(&first, dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("new s-7: first"), "{}", out.stdout);
    let local = out.stdout.split("recorded as session ").nth(1).and_then(|rest| rest.split(' ').next());
    let local = local.expect("the session's local id").to_owned();
    let again: Vec<&str> = ["client", "--continue", "-p", "second"].into_iter().chain(agent).collect();
    let out = run(&again, dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    in_order(&out.stdout, &["(ACP protocol v2)".into(), "with session/resume".into(), "resumed s-7: second".into()]);
    let refused: Vec<&str> =
        ["client", "--resume", &local, "--protocol", "1", "-p", "third"].into_iter().chain(agent).collect();
    let out = run(&refused, dir.path(), "");
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("was spoken in ACP v2: reopen it with --protocol 2"), "{}", out.stderr);
    let v1_only: Vec<&str> =
        ["client", "--continue", "--protocol", "1", "-p", "third"].into_iter().chain(agent).collect();
    let out = run(&v1_only, dir.path(), "");
    assert_eq!(out.code(), 10, "{out:?}");
    assert!(out.stderr.contains("no open session in ACP v1 of"), "{}", out.stderr);
}

/// `--auth` logs in with v2's `auth/login`; `--elicit` answers a v2 form from its file.
#[test]
fn auth_logs_in_and_elicit_answers_the_form() {
    let dir = TempDir::new("v2-auth-elicit");
    let answers = dir.file("answers.json", r#"{"name": "Ada"}"#);
    let args = ["client", "--protocol", "2", "--auth", "m1", "--elicit", &answers, "-p", "form", "--", "sh", "-c"];
    let args: Vec<&str> = args.into_iter().chain([SCRIPTED_V2_AGENT]).collect();
    let out = run(&args, dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    let expected = [
        "  authentication methods: m1".to_owned(),
        "authenticated with `m1`".to_owned(),
        "? form: Who is asking?\n  → accepted --elicit (name)".to_owned(),
        "new s-7: form: accept Ada".to_owned(),
    ];
    in_order(&out.stdout, &expected);
}

/// A v2 agent's config options are the session's as v1's are: `/model` lists them (v2 names an
/// option `configId`), `/model ID` sets one with v2's `session/set_config_option` (a select's
/// value tagged `id`), and `/config` shows the answer's options; the commands its answer to
/// `session/new` names are listed by `/help` as the agent's.
#[test]
fn v2_client_lists_and_sets_config_options_and_knows_the_agents_commands() {
    let dir = TempDir::new("v2-config");
    let args = ["client", "--protocol", "2", "--", "sh", "-c", SCRIPTED_V2_AGENT];
    let out = run(&args, dir.path(), "/model\n/model deep\n/config\n/help\n");
    assert_eq!(out.code(), 0, "{out:?}");
    let expected = [
        "models (/model ID picks one), option `model`:\n* fast (Fast)\n  deep (Deep)".to_owned(),
        "model = deep".to_owned(),
        "  model = deep (Model) · values: fast, deep".to_owned(),
        "the agent's commands (sent as prompts):\n  /status".to_owned(),
    ];
    in_order(&out.stdout, &expected);
}

/// `/sessions` lists a v2 agent's sessions and `/load ID` reopens one with `session/resume`
/// (v2 has no `session/load`); the next prompt goes to it.
#[test]
fn v2_client_lists_sessions_and_load_resumes_one() {
    let dir = TempDir::new("v2-load");
    let args = ["client", "--protocol", "2", "--", "sh", "-c", SCRIPTED_V2_AGENT];
    let out = run(&args, dir.path(), "/sessions\n/load s-7\nhi\n");
    assert_eq!(out.code(), 0, "{out:?}");
    let expected = [
        "the agent's sessions (/load ID reopens one):".to_owned(),
        "* s-7 \"Earlier\" · /tmp".to_owned(),
        "session s-7 resumed (session/resume)".to_owned(),
        "resumed s-7: hi".to_owned(),
    ];
    in_order(&out.stdout, &expected);
}

/// A v2 turn that ends `idle` with an error is the turn's failure, with the agent's own error:
/// its code `-32000` (authentication required) gets the v1 client's advice and exit status 8.
#[test]
fn v2_client_reports_a_turn_that_ended_with_the_agents_error() {
    let dir = TempDir::new("v2-idle-error");
    let args = ["client", "--protocol", "2", "-p", "fail", "--", "sh", "-c", SCRIPTED_V2_AGENT];
    let out = run(&args, dir.path(), "");
    assert_eq!(out.code(), 8, "{out:?}");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("the agent requires authentication (session/prompt: its turn ended with an error: log in first"),
        "{said}"
    );
    assert!(said.contains("  m1  Sign in"), "the login methods it offers: {said}");
}
