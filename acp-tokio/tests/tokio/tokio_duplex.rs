//! The tokio adapter, both sides in one process over `tokio::io::duplex`, on paused time (so
//! every timeout and grace period is exact and instant), and against a hand-played peer (what
//! goes on the wire). The scenarios shared by every runtime are in the suite (acp-scenarios's `tests/suite`).

use crate::common;

use std::time::Duration;

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{ErrorCode, SendError};
use acp_tokio::{AgentOptions, ClientConnection, ClientOptions, Error};
use common::{EchoAgent, TestClient, handshake, prompt, scenarios};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// An echo agent served over a duplex pipe, and a client connected to it.
fn connect(client: TestClient, agent: EchoAgent) -> ClientConnection {
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    tokio::spawn(acp_tokio::serve(agent, reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(client_io);
    ClientConnection::connect(client, reader, writer, ClientOptions::default())
}

fn observed_echo() -> (EchoAgent, UnboundedReceiver<String>) {
    let (tx, rx) = unbounded_channel();
    (EchoAgent { observed: Some(tx), ..EchoAgent::default() }, rx)
}

/// One end of a pipe spoken to by hand, one JSON value per line.
struct RawPeer {
    lines: tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
}

impl RawPeer {
    /// A pipe: the returned stream for the adapter, the peer for the test.
    fn pair() -> (DuplexStream, RawPeer) {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(theirs);
        (ours, RawPeer { lines: BufReader::new(reader).lines(), writer })
    }

    async fn recv(&mut self) -> Value {
        let line = self.lines.next_line().await.expect("read").expect("a line");
        serde_json::from_str(&line).expect("JSON")
    }

    async fn send(&mut self, value: Value) {
        self.writer.write_all(format!("{value}\n").as_bytes()).await.expect("write");
    }

    /// Plays the agent's half of the handshake and one `session/new`.
    async fn accept_handshake(&mut self) {
        let init = self.recv().await;
        assert_eq!(init["method"], "initialize");
        self.send(json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 1}})).await;
        let new = self.recv().await;
        assert_eq!(new["method"], "session/new");
        self.send(json!({"jsonrpc": "2.0", "id": new["id"], "result": {"sessionId": "s"}})).await;
    }
}

#[tokio::test(start_paused = true)]
async fn prompt_updates_arrive_as_an_ordered_stream() {
    let conn = connect(TestClient::default(), EchoAgent::default());
    let session = handshake(&conn).await;
    scenarios::prompt_stream(&conn, &session).await;
}

#[tokio::test(start_paused = true)]
async fn dropped_request_future_sends_cancel_request_on_the_wire() {
    let (io, mut agent) = RawPeer::pair();
    let (reader, writer) = tokio::io::split(io);
    let conn = ClientConnection::connect((), reader, writer, ClientOptions::default());
    let session = tokio::spawn(async move {
        let conn2 = conn.clone();
        let session = handshake(&conn2).await;
        let call = tokio::time::timeout(Duration::from_secs(5), conn.ext_method("_slow", json!({"n": 1}))).await;
        assert!(call.is_err(), "the call was dropped by the timeout");
        (conn, session)
    });
    agent.accept_handshake().await;
    let request = agent.recv().await;
    assert_eq!((request["method"].as_str(), &request["params"]), (Some("_slow"), &json!({"n": 1})));
    let before = tokio::time::Instant::now();
    let cancel = agent.recv().await;
    assert_eq!(before.elapsed(), Duration::from_secs(5), "sent when the future was dropped");
    assert_eq!(cancel, json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request["id"]}}));
    let (conn, _session) = session.await.expect("the client task");
    // A late answer to the cancelled request is dropped, not delivered anywhere.
    agent.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}})).await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(conn.stats().core.late_responses, 1);
}

#[tokio::test(start_paused = true)]
async fn dropped_prompt_turn_sends_session_cancel() {
    let (io, mut agent) = RawPeer::pair();
    let (reader, writer) = tokio::io::split(io);
    let conn = ClientConnection::connect((), reader, writer, ClientOptions::default());
    let client = tokio::spawn(async move {
        let session = handshake(&conn).await;
        let turn = conn.prompt(prompt(&session, "hi")).await.expect("prompt accepted");
        drop(turn);
        conn
    });
    agent.accept_handshake().await;
    let request = agent.recv().await;
    assert_eq!(request["method"], "session/prompt");
    let cancel = agent.recv().await;
    assert_eq!(cancel, json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}));
    let conn = client.await.expect("the client task");
    // The agent still answers the prompt; a new turn of the session is accepted afterwards.
    agent.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "cancelled"}})).await;
    let next = tokio::spawn(async move { conn.prompt(prompt(&SessionId::new("s"), "again")).await.map(|_| ()) });
    assert_eq!(agent.recv().await["method"], "session/prompt");
    assert!(next.await.expect("task").is_ok());
}

#[tokio::test(start_paused = true)]
async fn request_timeout_is_exact_on_paused_time() {
    let (agent, mut observed) = observed_echo();
    let conn = connect(TestClient::default(), agent);
    handshake(&conn).await;
    let start = tokio::time::Instant::now();
    scenarios::request_timeout(&conn, &mut observed, Duration::from_secs(30)).await;
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_secs(30) && elapsed < Duration::from_millis(30_010), "{elapsed:?}");
}

#[tokio::test(start_paused = true)]
async fn refusals_surface_as_errors_and_nothing_is_sent() {
    let conn = connect(TestClient::default(), EchoAgent::default());
    let not_yet = conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await;
    assert!(matches!(not_yet, Err(Error::Send(SendError::NotInitialized))), "{not_yet:?}");
    let session = handshake(&conn).await;
    let _running = conn.prompt(prompt(&session, "wait")).await.expect("first turn");
    let second = conn.prompt(prompt(&session, "again")).await;
    assert!(matches!(second, Err(Error::Send(SendError::TurnAlreadyRunning(_)))), "{second:?}");
    assert_eq!(conn.stats().core.frames_out, 3, "initialize, session/new, one prompt");
}

#[tokio::test(start_paused = true)]
async fn close_resolves_pending_requests_and_ends_the_agent() {
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    let served = tokio::spawn(acp_tokio::serve(EchoAgent::default(), reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(client_io);
    let conn = ClientConnection::connect(TestClient::default(), reader, writer, ClientOptions::default());
    handshake(&conn).await;
    let pending = tokio::spawn({
        let conn = conn.clone();
        async move { conn.ext_method("_wait", json!({})).await }
    });
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(conn.close().await.expect("close"), None);
    assert!(matches!(pending.await.expect("task"), Err(Error::ConnectionClosed)));
    assert!(matches!(conn.ext_method("_echo", json!(1)).await, Err(Error::ConnectionClosed)));
    assert!(served.await.expect("task").is_ok(), "the agent saw a clean end of input");
}

#[tokio::test(start_paused = true)]
async fn dropping_every_handle_closes_the_connection() {
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    let served = tokio::spawn(acp_tokio::serve(EchoAgent::default(), reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(client_io);
    let conn = ClientConnection::connect(TestClient::default(), reader, writer, ClientOptions::default());
    handshake(&conn).await;
    drop(conn);
    assert!(served.await.expect("task").is_ok());
}

#[tokio::test(start_paused = true)]
async fn peer_gone_mid_turn_ends_the_turn_with_connection_closed() {
    let (io, mut agent) = RawPeer::pair();
    let (reader, writer) = tokio::io::split(io);
    let conn = ClientConnection::connect((), reader, writer, ClientOptions::default());
    let client = tokio::spawn(async move {
        let session = handshake(&conn).await;
        let mut turn = conn.prompt(prompt(&session, "hi")).await.expect("prompt accepted");
        let first = turn.next_update().await;
        let rest = turn.next_update().await;
        (first.is_some(), rest.is_none(), turn.finish().await, conn)
    });
    agent.accept_handshake().await;
    assert_eq!(agent.recv().await["method"], "session/prompt");
    let update = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "partial"}});
    agent
        .send(json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}))
        .await;
    drop(agent);
    let (got_first, ended, stop, conn) = client.await.expect("the client task");
    assert!(got_first && ended);
    assert!(matches!(stop, Err(Error::ConnectionClosed)), "{stop:?}");
    conn.closed().await;
    assert_eq!(conn.close_reason(), Some(acp_tokio::acp_proto::CloseReason::PeerEof));
}

#[tokio::test(start_paused = true)]
async fn input_the_core_refuses_for_now_is_fed_again_not_dropped() {
    // Tiny bounds: the core stops taking input every few frames (event queue and output
    // budget full), so most of the one big write is handed back and must be fed again.
    let (io, mut client) = RawPeer::pair();
    let (reader, writer) = tokio::io::split(io);
    let mut options = AgentOptions::default();
    options.config.max_events = 2;
    options.config.outbound_budget = 512;
    options.read_buffer_size = 64 * 1024;
    tokio::spawn(acp_tokio::serve(EchoAgent::default(), reader, writer, options));
    client.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})).await;
    assert_eq!(client.recv().await["result"]["protocolVersion"], 1);
    let n = 2000;
    let mut batch = String::new();
    for id in 1..=n {
        batch.push_str(&json!({"jsonrpc": "2.0", "id": id, "method": "_echo", "params": {"i": id}}).to_string());
        batch.push('\n');
    }
    client.writer.write_all(batch.as_bytes()).await.expect("write");
    let mut answered = std::collections::BTreeSet::new();
    for _ in 0..n {
        let response = client.recv().await;
        assert_eq!(response["result"]["i"], response["id"], "{response}");
        answered.insert(response["id"].as_i64().expect("an id"));
    }
    assert_eq!(answered, (1..=n).collect());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_handlers_on_a_multi_thread_runtime_64_concurrent_sessions() {
    let conn = connect(TestClient::default(), EchoAgent::default());
    handshake(&conn).await;
    scenarios::concurrent_sessions(&conn, 64).await;
    // The handles are Send: turns of one connection run from different tasks.
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let conn = conn.clone();
            tokio::spawn(async move {
                let session = conn.new_session(NewSessionRequest::new("/", Vec::new())).await.expect("session");
                scenarios::run_turn(&conn, &session.session_id, "storm 100").await
            })
        })
        .collect();
    for task in tasks {
        let (texts, stop) = task.await.expect("task");
        assert_eq!((texts.len(), stop), (100, StopReason::EndTurn));
    }
}

#[tokio::test(start_paused = true)]
async fn invalid_params_from_the_wire_get_an_error_not_a_handler_call() {
    let (io, mut client) = RawPeer::pair();
    let (reader, writer) = tokio::io::split(io);
    let (agent, mut observed) = observed_echo();
    tokio::spawn(acp_tokio::serve(agent, reader, writer, AgentOptions::default()));
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})).await;
    client.recv().await;
    client.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": 5}})).await;
    assert_eq!(client.recv().await["error"]["code"], ErrorCode::INVALID_PARAMS.0);
    client.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/list", "params": {}})).await;
    assert_eq!(client.recv().await["error"]["code"], ErrorCode::METHOD_NOT_FOUND.0);
    assert!(observed.try_recv().is_err(), "no handler ran");
}

#[tokio::test(start_paused = true)]
async fn an_unsupported_protocol_version_fails_initialize_and_closes() {
    let (io, mut agent) = RawPeer::pair();
    let (reader, writer) = tokio::io::split(io);
    let conn = ClientConnection::connect((), reader, writer, ClientOptions::default());
    let client = tokio::spawn(async move { (conn.initialize(common::init_with_caps()).await, conn) });
    let init = agent.recv().await;
    agent.send(json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 2}})).await;
    let (result, conn) = client.await.expect("task");
    assert!(matches!(result, Err(Error::UnsupportedProtocolVersion(ProtocolVersion(2)))), "{result:?}");
    conn.closed().await;
    let reason = conn.close_reason();
    assert!(matches!(reason, Some(acp_tokio::acp_proto::CloseReason::UnsupportedProtocolVersion { .. })), "{reason:?}");
}

#[tokio::test(start_paused = true)]
async fn dropping_the_serve_future_closes_the_connection() {
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    let served = tokio::spawn(acp_tokio::serve(EchoAgent::default(), reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(client_io);
    let conn = ClientConnection::connect(TestClient::default(), reader, writer, ClientOptions::default());
    handshake(&conn).await;
    let pending = tokio::spawn({
        let conn = conn.clone();
        async move { conn.ext_method("_wait", json!({})).await }
    });
    tokio::time::sleep(Duration::from_millis(1)).await;
    served.abort();
    assert!(matches!(pending.await.expect("task"), Err(Error::ConnectionClosed)));
    conn.closed().await;
    assert_eq!(conn.close_reason(), Some(acp_tokio::acp_proto::CloseReason::PeerEof));
}

#[tokio::test(start_paused = true)]
async fn extension_notifications_reach_the_agent_in_order() {
    let (agent, mut observed) = observed_echo();
    let conn = connect(TestClient::default(), agent);
    handshake(&conn).await;
    for i in 0..50 {
        conn.ext_notification("_note", json!({"i": i})).await.expect("sent");
    }
    for i in 0..50 {
        assert_eq!(observed.recv().await, Some(format!("notification _note {}", json!({"i": i}))));
    }
}
