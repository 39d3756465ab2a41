//! The reference agent (`acp agent`), driven over its stdio: by the `acp-blocking` client, and
//! by raw frames where the wire itself is the point.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use acp_blocking::Error;
use acp_blocking::acp_proto::types::*;
use common::*;
use serde_json::{Value, json};

/// A raw NDJSON conversation with `acp agent`.
struct Raw {
    child: std::process::Child,
    input: Option<std::process::ChildStdin>,
    output: BufReader<std::process::ChildStdout>,
}

impl Raw {
    fn start() -> Raw {
        let mut child = Command::new(acp())
            .args(["agent", "--quiet"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().unwrap());
        Raw { child, input, output }
    }

    fn send(&mut self, frame: Value) {
        let input = self.input.as_mut().unwrap();
        writeln!(input, "{frame}").unwrap();
        input.flush().unwrap();
    }

    fn recv(&mut self) -> (String, Value) {
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        let value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad frame {line:?}: {e}"));
        (line, value)
    }

    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let (_, frame) = self.recv();
        assert_eq!(frame["id"], json!(id), "{frame}");
        frame
    }
}

impl Drop for Raw {
    /// Ends the agent's input and reaps it (killed if it has not exited within 5 s).
    fn drop(&mut self) {
        drop(self.input.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) {
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

#[test]
fn initialize_answers_version_1_and_the_advertised_capabilities_on_the_wire() {
    let mut raw = Raw::start();
    raw.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": 7, "clientCapabilities": {}}}));
    let (line, frame) = raw.recv();
    let result = &frame["result"];
    assert_eq!(result["protocolVersion"], json!(1), "a v1 agent answers 1 whatever was asked");
    assert_eq!(result["agentCapabilities"]["loadSession"], json!(false));
    assert_eq!(
        result["agentCapabilities"]["promptCapabilities"],
        json!({"image": true, "audio": false, "embeddedContext": true})
    );
    assert_eq!(result["agentCapabilities"]["mcpCapabilities"], json!({"http": false, "sse": false}));
    assert_eq!(
        result["agentCapabilities"]["sessionCapabilities"],
        json!({"close": {}, "systemPrompt": {}}),
        "session/close and systemPrompt (append) are offered"
    );
    assert_eq!(result["authMethods"], json!([]), "{line}");
    assert_eq!(result["agentInfo"]["name"], json!("acp-reference-agent"));
    assert!(result["agentInfo"]["version"].is_string());
}

#[test]
fn unknown_methods_extensions_notifications_and_eof_on_the_wire() {
    let mut raw = Raw::start();
    raw.call(1, "initialize", json!({"protocolVersion": 1}));
    // Unknown notifications are ignored: the next request is answered, and nothing else is.
    raw.send(json!({"jsonrpc": "2.0", "method": "_nobody/knows", "params": {"x": 1}}));
    raw.send(json!({"jsonrpc": "2.0", "method": "session/unknown_thing", "params": {}}));
    let params = json!({"nested": {"list": [1, "two", null, {"three": 3.5}]}, "unicode": "é\u{2028}"});
    let echo = raw.call(2, "_test/echo", params.clone());
    assert_eq!(echo["result"], params, "`_test/echo` answers its params verbatim");
    let unknown = raw.call(3, "session/teleport", json!({"sessionId": "x"}));
    assert_eq!(unknown["error"]["code"], json!(-32601));
    let unknown_ext = raw.call(4, "_other/thing", json!({}));
    assert_eq!(unknown_ext["error"]["code"], json!(-32601));
    let relative = raw.call(5, "session/new", json!({"cwd": "relative/dir", "mcpServers": []}));
    assert_eq!(relative["error"]["code"], json!(-32602));
    let missing =
        raw.call(6, "session/prompt", json!({"sessionId": "sess-404", "prompt": [{"type": "text", "text": "hi"}]}));
    assert_eq!(missing["error"]["code"], json!(-32002));

    // A slow turn is running when stdin ends: the agent still exits within a second.
    let session = raw.call(7, "session/new", json!({"cwd": "/", "mcpServers": []}))["result"]["sessionId"].clone();
    raw.send(json!({"jsonrpc": "2.0", "id": 8, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "slow"}]}}));
    let (_, first) = raw.recv();
    assert_eq!(first["params"]["update"]["sessionUpdate"], json!("agent_message_chunk"));
    let t0 = Instant::now();
    drop(raw.input.take());
    loop {
        if let Some(status) = raw.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(1), "the agent did not exit within 1 s of stdin EOF");
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn printf_initialize_into_acp_agent_prints_the_answer_and_exits_0() {
    // The end of input is a half-close: what arrived just before it is still answered.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}});
    let (status, frames) = piped_into_agent(&[init], &[]);
    assert!(status.success(), "{status}");
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!((&frames[0]["id"], &frames[0]["result"]["protocolVersion"]), (&json!(0), &json!(1)));
    // Pipelined requests too, in order (the second waited behind `initialize`).
    let new = json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}});
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}});
    let (status, frames) = piped_into_agent(&[init, new], &[]);
    assert!(status.success(), "{status}");
    let ids: Vec<&Value> = frames.iter().map(|f| &f["id"]).collect();
    assert_eq!(ids, [&json!(0), &json!(1)]);
    assert!(frames[1]["result"]["sessionId"].is_string(), "{frames:?}");
}

#[test]
fn initialize_through_the_adapter() {
    let (conn, _, response) = spawn_agent(Answer::Pick("allow-once"), None, &[]);
    assert_eq!(response.protocol_version, ProtocolVersion::V1);
    let caps = &response.agent_capabilities;
    assert!(!caps.supports_load_session() && caps.supports_image() && !caps.supports_audio());
    assert!(caps.supports_embedded_context() && !caps.supports_mcp_http() && !caps.supports_mcp_sse());
    assert!(response.auth_methods.is_empty());
    let status = conn.close().unwrap().unwrap();
    assert!(status.success());
}

#[test]
fn sessions_are_fresh_and_need_an_absolute_cwd() {
    let dir = TempDir::new("sessions");
    let (conn, _, _) = spawn_agent(Answer::Pick("allow-once"), None, &[]);
    let a = new_session(&conn, dir.path());
    let b = new_session(&conn, dir.path());
    assert_ne!(a, b);
    let err = conn.new_session(NewSessionRequest::new("not/absolute", vec![])).unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32602));
    let err = conn.prompt(PromptRequest::new("sess-999", vec!["hi".into()])).unwrap().finish().unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32002));
    let params = json!({"any": ["json", 1, true]});
    assert_eq!(conn.ext_method("_test/echo", params.clone()).unwrap(), params);
    conn.ext_notification("_nobody/listens", json!({})).unwrap();
    assert!(new_session(&conn, dir.path()) != a, "the connection lives on after an unknown notification");
}

#[test]
fn an_allowed_turn_reads_the_file_through_the_client() {
    let dir = TempDir::new("allowed");
    let path = dir.file("notes.txt", "line one\nline two\n");
    let (conn, seen, _) = spawn_agent(Answer::Pick("allow-once"), Some(dir.path()), &[]);
    let session = new_session(&conn, dir.path());
    let text = format!("please read {path} now");
    let mut updates = Vec::new();
    let stop = conn.prompt_with(PromptRequest::new(session, vec![text.as_str().into()]), |u| updates.push(u)).unwrap();
    assert_eq!(stop, StopReason::EndTurn);

    assert_eq!(updates.len(), 7, "{updates:#?}");
    let SessionUpdate::AgentMessageChunk(echo) = &updates[0] else { panic!("{:?}", updates[0]) };
    assert_eq!(text_of(&echo.content), format!("echo: {text}"));
    assert!(matches!(&updates[1], SessionUpdate::AgentThoughtChunk(_)));
    assert!(matches!(&updates[2], SessionUpdate::Plan(p) if !p.entries.is_empty()));
    let SessionUpdate::ToolCall(call) = &updates[3] else { panic!("{:?}", updates[3]) };
    assert_eq!((call.kind.clone(), call.status.clone()), (Some(ToolKind::Read), Some(ToolCallStatus::Pending)));
    assert_eq!(call.locations.as_deref().unwrap()[0].path, path);
    let SessionUpdate::ToolCallUpdate(progress) = &updates[4] else { panic!("{:?}", updates[4]) };
    assert_eq!(progress.status, Some(ToolCallStatus::InProgress));
    let SessionUpdate::ToolCallUpdate(done) = &updates[5] else { panic!("{:?}", updates[5]) };
    assert_eq!(done.status, Some(ToolCallStatus::Completed));
    assert_eq!(done.tool_call_id, call.tool_call_id);
    assert_eq!(content_text(done), "line one\nline two\n");
    let SessionUpdate::AgentMessageChunk(last) = &updates[6] else { panic!("{:?}", updates[6]) };
    assert_eq!(text_of(&last.content), "done");

    let seen = seen.lock().unwrap();
    assert_eq!(seen.permissions.len(), 1, "exactly one permission request");
    let options: Vec<(String, PermissionOptionKind)> =
        seen.permissions[0].options.iter().map(|o| (o.option_id.to_string(), o.kind.clone())).collect();
    assert_eq!(
        options,
        vec![
            ("allow-once".into(), PermissionOptionKind::AllowOnce),
            ("reject-once".into(), PermissionOptionKind::RejectOnce)
        ]
    );
    assert_eq!(seen.permissions[0].tool_call.tool_call_id, call.tool_call_id);
    assert_eq!(seen.reads, vec![path]);
}

#[test]
fn a_rejected_turn_fails_the_tool_call_and_reads_nothing() {
    let dir = TempDir::new("rejected");
    let path = dir.file("notes.txt", "secret");
    let (conn, seen, _) = spawn_agent(Answer::Pick("reject-once"), Some(dir.path()), &[]);
    let session = new_session(&conn, dir.path());
    let mut updates = Vec::new();
    let stop = conn.prompt_with(PromptRequest::new(session, vec![format!("read {path}").into()]), |u| updates.push(u));
    assert_eq!(stop.unwrap(), StopReason::EndTurn);
    let Some(SessionUpdate::ToolCallUpdate(last)) = updates.last() else { panic!("{updates:#?}") };
    assert_eq!(last.status, Some(ToolCallStatus::Failed));
    assert_eq!(updates.len(), 5, "echo, thought, plan, tool call, failed: {updates:#?}");
    assert!(seen.lock().unwrap().reads.is_empty());
}

#[test]
fn no_read_without_the_capability_or_the_file() {
    let dir = TempDir::new("noread");
    let path = dir.file("notes.txt", "secret");
    // The client does not advertise fs.readTextFile.
    let (conn, seen, _) = spawn_agent(Answer::Pick("allow-once"), None, &[]);
    let session = new_session(&conn, dir.path());
    let turn = conn.prompt(PromptRequest::new(session.clone(), vec![format!("read {path}").into()])).unwrap();
    let updates: Vec<SessionUpdate> = turn.collect();
    let completed = updates.iter().find_map(|u| match u {
        SessionUpdate::ToolCallUpdate(t) if t.status == Some(ToolCallStatus::Completed) => Some(t.clone()),
        _ => None,
    });
    assert!(content_text(&completed.unwrap()).contains("did not advertise fs.readTextFile"));
    // A path that does not exist is not read either, even by a client that can.
    let (conn, seen_fs, _) = spawn_agent(Answer::Pick("allow-once"), Some(dir.path()), &[]);
    let session = new_session(&conn, dir.path());
    let missing = format!("{}/missing.txt", dir.path().display());
    let stop = conn.prompt_with(PromptRequest::new(session, vec![format!("read {missing}").into()]), |_| {});
    assert_eq!(stop.unwrap(), StopReason::EndTurn);
    assert!(seen.lock().unwrap().reads.is_empty() && seen_fs.lock().unwrap().reads.is_empty());
}

#[test]
fn a_sandbox_refusal_reaches_the_agent_as_an_error() {
    let allowed = TempDir::new("sandbox-root");
    let elsewhere = TempDir::new("sandbox-outside");
    let path = elsewhere.file("secret.txt", "top secret");
    let (conn, seen, _) = spawn_agent(Answer::Pick("allow-once"), Some(allowed.path()), &[]);
    let session = new_session(&conn, allowed.path());
    let mut updates = Vec::new();
    let stop = conn.prompt_with(PromptRequest::new(session, vec![format!("read {path}").into()]), |u| updates.push(u));
    assert_eq!(stop.unwrap(), StopReason::EndTurn);
    assert_eq!(seen.lock().unwrap().reads, vec![path.clone()], "the agent asked");
    let failed = updates
        .iter()
        .find_map(|u| match u {
            SessionUpdate::ToolCallUpdate(t) if t.status == Some(ToolCallStatus::Failed) => Some(t.clone()),
            _ => None,
        })
        .expect("a failed tool call update");
    let text = content_text(&failed);
    assert!(text.contains("refused") && text.contains("-32602"), "{text}");
    assert!(!text.contains("top secret"));
}

#[test]
fn cancelling_during_the_permission_question_ends_the_turn_cancelled() {
    let dir = TempDir::new("cancel-ask");
    let path = dir.file("notes.txt", "secret");
    let (conn, seen, _) = spawn_agent(Answer::Hold, Some(dir.path()), &[]);
    let session = new_session(&conn, dir.path());
    let mut turn = conn.prompt(PromptRequest::new(session, vec![format!("read {path}").into()])).unwrap();
    let mut count = 0;
    while let Some(update) = turn.next_update() {
        count += 1;
        if matches!(update, SessionUpdate::ToolCall(_)) {
            // Wait until the question is asked, then cancel.
            while seen.lock().unwrap().permissions.is_empty() {
                thread::sleep(Duration::from_millis(5));
            }
            turn.cancel().unwrap();
        }
    }
    assert_eq!(turn.finish().unwrap(), StopReason::Cancelled);
    assert_eq!(count, 4, "nothing after the tool call");
    assert!(seen.lock().unwrap().reads.is_empty(), "cancelled without reading");
}

#[test]
fn session_cancel_stops_a_slow_turn_at_once() {
    let dir = TempDir::new("cancel-slow");
    let (conn, seen, _) = spawn_agent(Answer::Pick("allow-once"), Some(dir.path()), &[]);
    let session = new_session(&conn, dir.path());
    let t0 = Instant::now();
    let mut turn = conn.prompt(PromptRequest::new(session, vec!["a slow one".into()])).unwrap();
    let first = turn.next_update().unwrap();
    assert!(matches!(first, SessionUpdate::AgentMessageChunk(_)));
    turn.cancel().unwrap();
    let rest: Vec<SessionUpdate> = turn.by_ref().collect();
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(turn.finish().unwrap(), StopReason::Cancelled);
    assert!(t0.elapsed() < Duration::from_secs(2), "took {:?}", t0.elapsed());
    assert!(seen.lock().unwrap().permissions.is_empty());
}

#[test]
fn many_sessions_and_slow_turns_run_concurrently_on_one_connection() {
    let dir = TempDir::new("concurrent");
    let path = dir.file("notes.txt", "shared");
    let (conn, seen, _) = spawn_agent(Answer::Pick("allow-once"), Some(dir.path()), &[]);
    let sessions: Vec<SessionId> = (0..6).map(|_| new_session(&conn, dir.path())).collect();
    let t0 = Instant::now();
    let stops: Vec<(StopReason, Duration)> = thread::scope(|s| {
        let handles: Vec<_> = sessions
            .iter()
            .enumerate()
            .map(|(i, session)| {
                let conn = &conn;
                let path = &path;
                s.spawn(move || {
                    // Half the turns are slow (about 5 s each), half are quick reads.
                    let text = if i % 2 == 0 { format!("slow {path}") } else { format!("quick {path}") };
                    let stop = conn.prompt_with(PromptRequest::new(session.clone(), vec![text.into()]), |_| {});
                    (stop.unwrap(), t0.elapsed())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total = t0.elapsed();
    assert!(stops.iter().all(|(stop, _)| *stop == StopReason::EndTurn), "{stops:?}");
    for (i, (_, at)) in stops.iter().enumerate() {
        if i % 2 == 1 {
            assert!(*at < Duration::from_secs(3), "quick turn {i} waited for the slow ones: {at:?}");
        } else {
            assert!(*at >= Duration::from_millis(4500), "slow turn {i} ended early: {at:?}");
        }
    }
    assert!(total < Duration::from_secs(9), "three 5 s turns took {total:?}: not concurrent");
    assert_eq!(seen.lock().unwrap().reads.len(), 6);
    // A second prompt on a session whose turn runs is refused; other sessions are unaffected.
    let slow = conn.prompt(PromptRequest::new(sessions[0].clone(), vec!["slow".into()])).unwrap();
    let again = conn.prompt(PromptRequest::new(sessions[0].clone(), vec!["again".into()]));
    assert!(matches!(again, Err(Error::Send(_))), "{again:?}");
    slow.cancel().unwrap();
    assert_eq!(slow.finish().unwrap(), StopReason::Cancelled);
}

#[test]
fn the_agent_is_a_library_type_served_in_process_over_pipes() {
    use acp_blocking::{ClientConnection, ClientOptions};
    use acp_cli::agent::{AgentConfig, ReferenceAgent};
    use std::sync::{Arc, Mutex};

    let (agent_in, client_out) = std::io::pipe().unwrap();
    let (client_in, agent_out) = std::io::pipe().unwrap();
    let mut config = AgentConfig::default();
    config.slow_delay = Duration::from_millis(300);
    config.log = false;
    let agent = thread::spawn(move || ReferenceAgent::with_config(config).serve(agent_in, agent_out));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let recorder = Recorder { answer: Answer::Pick("reject-once"), fs: None, seen: seen.clone() };
    let conn = ClientConnection::connect(recorder, client_in, client_out, ClientOptions::default()).unwrap();
    conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).unwrap();
    let session = new_session(&conn, Path::new("/"));
    let t0 = Instant::now();
    let stop = conn.prompt_with(PromptRequest::new(session, vec!["slow, in process".into()]), |_| {}).unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    assert!(t0.elapsed() >= Duration::from_millis(300), "the configured slow delay applies");
    assert_eq!(seen.lock().unwrap().permissions.len(), 1);
    conn.close().unwrap();
    agent.join().unwrap().unwrap();
}

/// `ReferenceAgent` with `max_sessions` served in-process over pipes, and a client for it.
fn in_process(max_sessions: usize) -> (acp_blocking::ClientConnection, thread::JoinHandle<Result<(), Error>>) {
    use acp_blocking::{ClientConnection, ClientOptions};
    use acp_cli::agent::{AgentConfig, ReferenceAgent};
    use std::sync::{Arc, Mutex};

    let (agent_in, client_out) = std::io::pipe().unwrap();
    let (client_in, agent_out) = std::io::pipe().unwrap();
    let mut config = AgentConfig::default();
    config.max_sessions = max_sessions;
    config.log = false;
    let agent = thread::spawn(move || ReferenceAgent::with_config(config).serve(agent_in, agent_out));
    let recorder = Recorder { answer: Answer::Hold, fs: None, seen: Arc::new(Mutex::new(Seen::default())) };
    let conn = ClientConnection::connect(recorder, client_in, client_out, ClientOptions::default()).unwrap();
    let response = conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).unwrap();
    assert!(response.agent_capabilities.supports_close_session(), "session/close is advertised");
    (conn, agent)
}

fn rpc_error(e: Error) -> acp_blocking::acp_proto::RpcError {
    match e {
        Error::Rpc(e) => e,
        other => panic!("not an error answer: {other:?}"),
    }
}

#[test]
fn the_session_cap_refuses_one_more_until_one_is_closed() {
    let (conn, agent) = in_process(3);
    let cwd = Path::new("/");
    let open: Vec<SessionId> = (0..3).map(|_| new_session(&conn, cwd)).collect();
    let refused = rpc_error(conn.new_session(NewSessionRequest::new("/", vec![])).unwrap_err());
    assert_eq!(refused.code.0, -32603, "{refused:?}");
    let data = refused.data.clone().unwrap();
    assert_eq!(data["limit"], json!(3), "{data}");
    assert_eq!(data["reason"], json!(acp_cli::agent::TOO_MANY_SESSIONS), "{data}");

    // Closing one frees its slot; the closed session is then unknown, to a prompt or a close.
    conn.close_session(CloseSessionRequest::new(open[1].clone())).unwrap();
    let fourth = new_session(&conn, cwd);
    assert!(!open.contains(&fourth));
    assert_eq!(conn.new_session(NewSessionRequest::new("/", vec![])).unwrap_err().rpc_code(), Some(-32603));
    let again = rpc_error(conn.close_session(CloseSessionRequest::new(open[1].clone())).unwrap_err());
    assert_eq!((again.code.0, again.reason()), (-32002, Some("unknown session")));
    let never = rpc_error(conn.close_session(CloseSessionRequest::new("sess-404")).unwrap_err());
    assert_eq!((never.code.0, never.reason()), (-32002, Some("unknown session")));
    let closed = conn.prompt(PromptRequest::new(open[1].clone(), vec!["hi".into()])).unwrap().finish().unwrap_err();
    let unknown = conn.prompt(PromptRequest::new("sess-404", vec!["hi".into()])).unwrap().finish().unwrap_err();
    let (closed, unknown) = (rpc_error(closed), rpc_error(unknown));
    assert_eq!((closed.code, closed.reason()), (unknown.code, unknown.reason()), "the same error");
    assert_eq!(closed.code.0, -32002);
    conn.close().unwrap();
    agent.join().unwrap().unwrap();
}

#[test]
fn closing_a_session_ends_its_running_turn_cancelled() {
    let (conn, agent) = in_process(2);
    let session = new_session(&conn, Path::new("/"));
    // A slow turn (5 s by default) is running when its session is closed.
    let mut turn = conn.prompt(PromptRequest::new(session.clone(), vec!["slow".into()])).unwrap();
    assert!(matches!(turn.next_update(), Some(SessionUpdate::AgentMessageChunk(_))));
    conn.close_session(CloseSessionRequest::new(session)).unwrap();
    let rest: Vec<SessionUpdate> = turn.by_ref().collect();
    assert!(rest.is_empty(), "nothing after the close: {rest:?}");
    assert_eq!(turn.finish().unwrap(), StopReason::Cancelled);
    conn.close().unwrap();
    agent.join().unwrap().unwrap();
}

#[test]
fn the_binary_allows_1024_sessions_by_default() {
    let mut raw = Raw::start();
    raw.call(0, "initialize", json!({"protocolVersion": 1}));
    for id in 1..=1024 {
        let frame = raw.call(id, "session/new", json!({"cwd": "/", "mcpServers": []}));
        assert!(frame["result"]["sessionId"].is_string(), "{frame}");
    }
    let refused = raw.call(1025, "session/new", json!({"cwd": "/", "mcpServers": []}));
    assert_eq!(refused["error"]["code"], json!(-32603), "{refused}");
    assert_eq!(refused["error"]["data"]["limit"], json!(1024), "{refused}");
    let closed = raw.call(1026, "session/close", json!({"sessionId": "sess-7"}));
    assert_eq!(closed["result"], json!({}), "{closed}");
    let reopened = raw.call(1027, "session/new", json!({"cwd": "/", "mcpServers": []}));
    assert_eq!(reopened["result"]["sessionId"], json!("sess-1025"), "{reopened}");
}
