//! ACP v2 (feature `unstable_protocol_v2`): acp-blocking's v2 client against its v2 agent over
//! OS pipes (the scripted agent of `support/v2_agent.rs`): the handshake both ways (a v2 agent,
//! and a v1 agent answering 1), a full turn with a permission ask ending idle, the ordering gate
//! of that ask, `session/cancel` of a running turn (also while a permission is asked), a
//! dropped turn, the agent dying mid-turn, a v1 client refused by the v2 agent, and
//! `v2::serve_negotiated` (an agent of each version behind `acp_proto::Acceptor`: a v1 and a v2
//! client each served by theirs; what comes before and right after the `initialize`).

#[path = "../support/v2_agent.rs"]
#[allow(dead_code, unreachable_pub)]
mod v2_agent;
#[path = "../support/v2_wire.rs"]
#[allow(dead_code, unreachable_pub)]
mod v2_wire;

use std::io::{BufRead, BufReader, Write};
use std::sync::{Mutex, mpsc};
use std::thread;
use std::time::Duration;

use acp_blocking::acp_proto::types::{self as v1, ProtocolVersion};
use acp_blocking::acp_proto::v2::{
    self, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionId,
};
use acp_blocking::acp_proto::{CloseReason, RpcError, SendError, TurnEndReason};
use acp_blocking::v2 as acp_v2;
use acp_blocking::{Agent, AgentOptions, ClientConnection, ClientContext, ClientOptions, Error, RequestContext, serve};
use serde_json::{Value, json};
use v2_agent::{AGENT_NAME, Scripted};
use v2_wire::{ALLOWED, idle, init, name, new_session, prompt_request};

const LIMIT: Duration = Duration::from_secs(10);

/// Runs `f` on its own thread; a hang fails the test instead of stalling the run.
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("{what}: nothing within {LIMIT:?}"))
}

/// A client that selects the option `choice`.
struct Choosing(&'static str);

impl acp_v2::Client for Choosing {
    fn request_permission(
        &self,
        _: RequestPermissionRequest,
        _: &ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(self.0));
        Ok(RequestPermissionResponse { outcome, meta: None })
    }
}

/// Two pipes: the client's ends, and a thread serving the scripted v2 agent on the others.
fn pair(client: impl acp_v2::Client) -> (acp_v2::ClientConnection, thread::JoinHandle<Result<(), Error>>) {
    let (agent_in, client_out) = std::io::pipe().expect("a pipe");
    let (client_in, agent_out) = std::io::pipe().expect("a pipe");
    let agent = thread::spawn(move || acp_v2::serve(Scripted::default(), agent_in, agent_out));
    let conn =
        acp_v2::ClientConnection::connect(client, client_in, client_out, ClientOptions::default()).expect("connected");
    (conn, agent)
}

fn open(conn: &acp_v2::ClientConnection) -> SessionId {
    let init = conn.with_timeout(LIMIT).initialize(init("acp-blocking-v2-test")).expect("the v2 handshake");
    assert_eq!((init.protocol_version, init.info.name.as_str()), (v2::ProtocolVersion(2), AGENT_NAME));
    assert_eq!(conn.negotiated().expect("committed").protocol_version, ProtocolVersion(2));
    conn.with_timeout(LIMIT).new_session(new_session()).expect("a session").session_id
}

fn prompt(conn: &acp_v2::ClientConnection, session: &SessionId, text: &str) -> acp_v2::PromptTurn {
    conn.prompt(prompt_request(session, text)).expect("sent")
}

/// The next `n` updates of the turn, by name (the turn comes back with them).
fn next(mut turn: acp_v2::PromptTurn, n: usize) -> (acp_v2::PromptTurn, Vec<String>) {
    within("updates", move || {
        let seen = (&mut turn).take(n).map(|u| name(&u)).collect::<Vec<_>>();
        assert_eq!(seen.len(), n, "the turn ended early: {seen:?}");
        (turn, seen)
    })
}

/// The rest of the turn's updates and how it ended.
fn rest(mut turn: acp_v2::PromptTurn) -> (Vec<String>, Result<TurnEndReason, Error>) {
    within("the rest of the turn", move || {
        let seen = (&mut turn).map(|u| name(&u)).collect();
        (seen, turn.finish())
    })
}

#[test]
fn v2_client_and_agent_full_turn_with_permission() {
    for (choice, status) in [("allow", "Completed"), ("reject", "Failed")] {
        let (conn, agent) = pair(Choosing(choice));
        let session = open(&conn);
        let mut turn = prompt(&conn, &session, "hello");
        let ack = within("ack", move || {
            let ack = turn.ack().expect("once").expect("acked");
            (turn, ack)
        });
        turn = ack.0;
        assert_eq!(ack.1.message_id.as_str(), "user-2");
        let expected = [
            "running".to_owned(),
            "chunk echo: hello".into(),
            "tool call-1 Some(Pending)".into(),
            format!("tool call-1 Some({status})"),
            "idle Some(EndTurn)".into(),
        ];
        let (seen, end) = rest(turn);
        assert_eq!(seen, expected, "{choice}: the turn's updates, the idle last");
        assert_eq!(end.expect("ended"), idle(v2::IdleStopReason::EndTurn));
        conn.close().expect("closed");
        within("the agent ends", move || agent.join()).expect("the agent thread").expect("a clean end of input");
    }
}

#[test]
fn v2_client_and_agent_session_cancel_ends_the_turn_cancelled() {
    let (conn, _agent) = pair(Choosing("allow"));
    let session = open(&conn);
    let (turn, seen) = next(prompt(&conn, &session, "wait"), 2);
    assert_eq!(seen, ["running", "tool call-w1 Some(InProgress)"]);
    turn.cancel().expect("session/cancel sent");
    let (seen, end) = rest(turn);
    assert_eq!(seen, ["tool call-w1 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(end.expect("ended"), idle(v2::IdleStopReason::Cancelled));
    // The session is idle again: a new turn opens.
    let (_again, seen) = next(prompt(&conn, &session, "hello"), 1);
    assert_eq!(seen, ["running"]);
}

#[test]
fn v2_client_dropping_a_turn_cancels_it() {
    let (conn, _agent) = pair(Choosing("allow"));
    let session = open(&conn);
    let (turn, seen) = next(prompt(&conn, &session, "wait"), 2);
    assert_eq!(seen, ["running", "tool call-w1 Some(InProgress)"]);
    drop(turn);
    // The agent got `session/cancel`; until it ends that turn a prompt would join it, so it is
    // refused; then a new turn opens, with none of the old turn's updates.
    let (again, refused) = within("a new turn", {
        let (conn, session) = (conn.clone(), session.clone());
        move || {
            let mut refused = 0;
            loop {
                match conn.prompt(prompt_request(&session, "hello")) {
                    Ok(turn) => break (turn, refused),
                    Err(Error::Send(SendError::TurnAlreadyRunning(_))) => {
                        refused += 1;
                        thread::sleep(Duration::from_millis(1));
                    }
                    Err(e) => panic!("unexpected {e:?}"),
                }
            }
        }
    });
    let (seen, end) = rest(again);
    assert_eq!(seen, ALLOWED, "after {refused} refused prompts");
    assert_eq!(end.expect("ended"), idle(v2::IdleStopReason::EndTurn));
}

/// A client that holds a permission ask until it is cancelled, and says so.
struct Stalling(Mutex<mpsc::Sender<&'static str>>);

impl acp_v2::Client for Stalling {
    fn request_permission(
        &self,
        _: RequestPermissionRequest,
        cx: &ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        let _ = self.0.lock().expect("not poisoned").send("asked");
        cx.cancellation().wait();
        let _ = self.0.lock().expect("not poisoned").send("cancelled");
        let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow"));
        Ok(RequestPermissionResponse { outcome, meta: None })
    }
}

#[test]
fn v2_client_and_agent_session_cancel_while_asked() {
    let (tx, rx) = mpsc::channel();
    let (conn, _agent) = pair(Stalling(Mutex::new(tx)));
    let session = open(&conn);
    // The ask reaches the handler once the reader took the three updates before it.
    let (turn, before) = next(prompt(&conn, &session, "hello"), 3);
    assert_eq!(rx.recv_timeout(LIMIT), Ok("asked"));
    conn.cancel(&session).expect("session/cancel sent");
    // The handler sees the cancel; the agent's ask resolves `cancelled` (the late `allow` is
    // not sent), so the tool call ends `cancelled` and the turn with one idle.
    assert_eq!(rx.recv_timeout(LIMIT), Ok("cancelled"));
    let (after, end) = rest(turn);
    assert_eq!(before, ["running", "chunk echo: hello", "tool call-1 Some(Pending)"]);
    assert_eq!(after, ["tool call-1 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(end.expect("ended"), idle(v2::IdleStopReason::Cancelled));
}

/// A v1-only agent: answers `initialize` with version 1.
struct V1Only;

impl Agent for V1Only {
    fn initialize(&self, _: v1::InitializeRequest, _: &RequestContext) -> Result<v1::InitializeResponse, RpcError> {
        Ok(v1::InitializeResponse::new(ProtocolVersion::V1))
    }
}

#[test]
fn v2_client_against_a_v1_agent_gets_unsupported_version_and_closes() {
    let (agent_in, client_out) = std::io::pipe().expect("a pipe");
    let (client_in, agent_out) = std::io::pipe().expect("a pipe");
    let agent = thread::spawn(move || serve(V1Only, agent_in, agent_out));
    let conn =
        acp_v2::ClientConnection::connect((), client_in, client_out, ClientOptions::default()).expect("connected");
    match conn.with_timeout(LIMIT).initialize(init("acp-blocking-v2-test")) {
        Err(Error::UnsupportedProtocolVersion(v)) => assert_eq!(v, ProtocolVersion::V1),
        other => panic!("a v1 answer is refused by the v2 client: {other:?}"),
    }
    // The connection closed: the agent's input ended, and nothing more goes out.
    within("the v1 agent ends", move || agent.join()).expect("the agent thread").expect("a clean end");
    assert!(conn.close_reason().is_some(), "closed");
    let session = SessionId::from("s");
    assert!(matches!(conn.prompt(prompt_request(&session, "hi")), Err(Error::ConnectionClosed | Error::Send(_))));
}

#[test]
fn v2_agent_refuses_a_v1_client() {
    let (agent_in, client_out) = std::io::pipe().expect("a pipe");
    let (client_in, agent_out) = std::io::pipe().expect("a pipe");
    thread::spawn(move || acp_v2::serve(Scripted::default(), agent_in, agent_out));
    let conn = ClientConnection::connect((), client_in, client_out, ClientOptions::default()).expect("connected");
    match conn.with_timeout(LIMIT).initialize(v1::InitializeRequest::new(ProtocolVersion::V1)) {
        // v2's version negotiation (spec/crate-1.20.0/v2/schema.json, InitializeResponse and
        // ErrorCode): no version the agent speaks is at or below 1, so -32022 with what was
        // asked and what it speaks (it was -32601, method not found, before the fix).
        Err(Error::Rpc(e)) => {
            assert_eq!(e.code.0, -32022, "{e:?}");
            assert_eq!(e.data, Some(serde_json::json!({"requested": 1, "supported": [2]})));
        }
        other => panic!("a v1 initialize is -32022 for a v2-only agent: {other:?}"),
    }
}

/// A raw v2 agent that answers the handshake, a session and a prompt, sends `running`, and
/// dies (both its pipe ends close) in the middle of the turn.
fn dying_agent(input: std::io::PipeReader, mut output: std::io::PipeWriter) {
    let mut lines = BufReader::new(input).lines();
    while let Some(Ok(line)) = lines.next() {
        let frame: Value = serde_json::from_str(&line).expect("a JSON-RPC frame");
        let result = match frame["method"].as_str() {
            Some("initialize") => json!({ "protocolVersion": 2, "info": { "name": "dying", "version": "0" },
                                          "capabilities": { "session": {} } }),
            Some("session/new") => json!({ "sessionId": "s-dying" }),
            Some("session/prompt") => json!({ "messageId": "user-1" }),
            _ => continue,
        };
        let answer = json!({ "jsonrpc": "2.0", "id": frame["id"], "result": result });
        writeln!(output, "{answer}").expect("the client reads");
        if frame["method"] == "session/prompt" {
            let running = json!({ "jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": "s-dying", "update": { "sessionUpdate": "state_update", "state": "running" } } });
            writeln!(output, "{running}").expect("the client reads");
            return;
        }
    }
}

#[test]
fn v2_client_sees_the_agent_die_mid_turn() {
    let (agent_in, client_out) = std::io::pipe().expect("a pipe");
    let (client_in, agent_out) = std::io::pipe().expect("a pipe");
    thread::spawn(move || dying_agent(agent_in, agent_out));
    let conn =
        acp_v2::ClientConnection::connect((), client_in, client_out, ClientOptions::default()).expect("connected");
    conn.with_timeout(LIMIT).initialize(init("acp-blocking-v2-test")).expect("the v2 handshake");
    let session = conn.with_timeout(LIMIT).new_session(new_session()).expect("a session").session_id;
    let (seen, end) = rest(prompt(&conn, &session, "hello"));
    assert_eq!(seen, ["running"], "the update before the death");
    assert!(matches!(end, Err(Error::ConnectionClosed)), "the turn ends with the connection: {end:?}");
    // The core ends the turn first, then reports the close.
    let reason = within("the close", move || {
        loop {
            match conn.close_reason() {
                Some(reason) => break reason,
                None => thread::sleep(Duration::from_millis(1)),
            }
        }
    });
    assert_eq!(reason, CloseReason::PeerEof, "closed by the end of the agent's output");
}

/// A client whose permission handler reports how many updates the turn's reader had taken
/// when it ran, then allows.
struct Counting {
    taken: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    seen: Mutex<mpsc::Sender<usize>>,
}

impl acp_v2::Client for Counting {
    fn request_permission(
        &self,
        _: RequestPermissionRequest,
        _: &ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        let taken = self.taken.load(std::sync::atomic::Ordering::SeqCst);
        let _ = self.seen.lock().expect("not poisoned").send(taken);
        let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow"));
        Ok(RequestPermissionResponse { outcome, meta: None })
    }
}

/// The ordering gate (as acp-tokio's v2 client): the agent's permission ask of a running turn
/// reaches the handler only after the reader took the three updates the agent sent before it,
/// although the reader starts reading well after the ask arrived.
#[test]
fn v2_client_permission_ask_waits_for_the_updates_before_it() {
    let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (seen_tx, seen) = mpsc::channel();
    let client = Counting { taken: taken.clone(), seen: Mutex::new(seen_tx) };
    let (conn, _agent) = pair(client);
    let session = open(&conn);
    let mut turn = prompt(&conn, &session, "hello");
    // Every update before the ask, and the ask, are in by now; unread, they hold the handler.
    thread::sleep(Duration::from_millis(200));
    assert!(seen.try_recv().is_err(), "the handler ran before the reader took the updates before the ask");
    let names = within("the turn", move || {
        let mut names = Vec::new();
        while let Some(n) = turn.next_update_then(|update| {
            taken.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            name(&update)
        }) {
            names.push(n);
        }
        names
    });
    assert_eq!(names.len(), 5, "{names:?}");
    assert_eq!(seen.recv_timeout(LIMIT).expect("the ask was handled"), 3, "updates taken when the handler ran");
}

/// `v2::serve_negotiated`: an agent of each version behind one transport; the client's
/// `initialize` picks which serves it (through `acp_proto::Acceptor`).
#[test]
fn serve_negotiated_serves_a_v1_client_with_the_v1_agent_and_a_v2_client_with_the_v2_agent() {
    let serve_both = |agent_in, agent_out| {
        thread::spawn(move || {
            acp_v2::serve_negotiated(Scripted::default(), V1Only, agent_in, agent_out, AgentOptions::default())
        })
    };
    // A v1 client: the v1 agent answers.
    let (agent_in, client_out) = std::io::pipe().expect("a pipe");
    let (client_in, agent_out) = std::io::pipe().expect("a pipe");
    let agent = serve_both(agent_in, agent_out);
    let conn = ClientConnection::connect((), client_in, client_out, ClientOptions::default()).expect("connected");
    let init = conn.with_timeout(LIMIT).initialize(v1::InitializeRequest::new(ProtocolVersion::V1));
    assert_eq!(init.expect("the v1 handshake").protocol_version, ProtocolVersion::V1);
    assert_eq!(conn.negotiated().expect("committed").protocol_version, ProtocolVersion::V1);
    conn.close().expect("closed");
    within("the v1 side ends", move || agent.join()).expect("the agent thread").expect("a clean end");
    // A v2 client: the v2 agent runs a whole turn.
    let (agent_in, client_out) = std::io::pipe().expect("a pipe");
    let (client_in, agent_out) = std::io::pipe().expect("a pipe");
    let agent = serve_both(agent_in, agent_out);
    let conn = acp_v2::ClientConnection::connect(Choosing("allow"), client_in, client_out, ClientOptions::default())
        .expect("connected");
    let session = open(&conn);
    let (seen, end) = rest(prompt(&conn, &session, "hello"));
    assert_eq!(seen.last().map(String::as_str), Some("idle Some(EndTurn)"), "{seen:?}");
    assert_eq!(end.expect("ended"), idle(v2::IdleStopReason::EndTurn));
    conn.close().expect("closed");
    within("the v2 side ends", move || agent.join()).expect("the agent thread").expect("a clean end");
}

/// Through the acceptor, a request before the `initialize` is answered as a v1 machine answers
/// it (`-32600`: not initialized), and what the client wrote right after the `initialize`, in
/// the same write, reaches the connection of the chosen version: nothing read is lost.
#[test]
fn serve_negotiated_answers_what_came_before_initialize_and_loses_nothing_after_it() {
    let (agent_in, mut client_out) = std::io::pipe().expect("a pipe");
    let (client_in, agent_out) = std::io::pipe().expect("a pipe");
    let agent = thread::spawn(move || {
        acp_v2::serve_negotiated(Scripted::default(), V1Only, agent_in, agent_out, AgentOptions::default())
    });
    // The agent's frames, read on a thread of their own.
    let (frames, from_agent) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(client_in).lines() {
            let frame: Value = serde_json::from_str(&line.expect("readable")).expect("JSON");
            if frames.send(frame).is_err() {
                break;
            }
        }
    });
    let next = || from_agent.recv_timeout(LIMIT).expect("a frame within the limit");
    let early = json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}});
    writeln!(client_out, "{early}").expect("written");
    let answer = next();
    assert_eq!((&answer["id"], &answer["error"]["code"]), (&json!(1), &json!(-32600)), "{answer}");
    let init = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": init("raw")});
    let session = json!({"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": new_session()});
    client_out.write_all(format!("{init}\n{session}\n").as_bytes()).expect("one write");
    let (first, second) = (next(), next());
    assert_eq!((&first["id"], &first["result"]["protocolVersion"]), (&json!(2), &json!(2)), "{first}");
    assert_eq!(&second["id"], &json!(3), "{second}");
    assert!(second["result"]["sessionId"].is_string(), "the request after the initialize was answered: {second}");
    drop(client_out);
    within("the agent ends", move || agent.join()).expect("the agent thread").expect("a clean end of input");
}
