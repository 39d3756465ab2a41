//! ACP v2 (feature `unstable_protocol_v2`): acp-tokio's v2 client against its v2 agent over an
//! in-memory pipe (the scripted agent of `support/v2_agent.rs`): handshake, a full turn with a
//! permission, `session/cancel` (also while a permission is asked, and by dropping the turn),
//! `tool_call/cancel`, updates outside a turn reaching `v2::Client::session_update`, a v1 client
//! refused by the v2 agent, a v2 client refused by a v1-only agent, and the v2 agent's
//! `Acceptor` (what comes before and right after `initialize`).

use crate::v2_agent;

/// The ordering gate of a turn's agent requests.
#[path = "../v2_parts/ordering.rs"]
mod ordering;

/// `serve_negotiated` (v1 fallback) and the agent's grace-end hook.
#[path = "../v2_parts/negotiated.rs"]
mod negotiated;

/// `v2::LocalClient` / `v2::LocalAgent` on a `LocalSet`.
#[path = "../v2_parts/local.rs"]
mod local;

use std::time::Duration;

use acp_proto::v2::{
    self, CancelToolCallRequest, ClientCapabilities, ContentBlock, Implementation, InitializeRequest,
    NewSessionRequest, PromptRequest, ProtocolVersion, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionId, SessionUpdate, StateUpdate, TextContent,
    UpdateSessionNotification,
};
use acp_proto::{SendError, TurnEndReason};
use acp_tokio::v2 as tokio_v2;
use acp_tokio::{AgentOptions, ClientContext, ClientOptions, Error, acp_proto};
use v2_agent::{AGENT_NAME, Scripted};

const LIMIT: Duration = Duration::from_secs(10);

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f).await.unwrap_or_else(|_| panic!("{what}: nothing within {LIMIT:?}"))
}

/// A client that selects the option `choice`.
struct Choosing(&'static str);

impl tokio_v2::Client for Choosing {
    async fn request_permission(
        &self,
        _: RequestPermissionRequest,
        _: ClientContext,
    ) -> Result<RequestPermissionResponse, acp_proto::RpcError> {
        let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(self.0));
        Ok(RequestPermissionResponse { outcome, meta: None })
    }
}

fn pair(client: impl tokio_v2::Client) -> (tokio_v2::ClientConnection, tokio::task::JoinHandle<Result<(), Error>>) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    let agent = tokio::spawn(tokio_v2::serve(Scripted::default(), reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(ours);
    (tokio_v2::ClientConnection::connect(client, reader, writer, ClientOptions::default()), agent)
}

/// A value of a v2 type from its JSON.
fn of<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("valid v2 JSON")
}

/// A test agent's `initialize` answer: version 2, named `name`, with `session`.
fn answer_v2(name: &str) -> v2::InitializeResponse {
    of(
        serde_json::json!({"protocolVersion": 2, "info": {"name": name, "version": "1"}, "capabilities": {"session": {}}}),
    )
}

fn init() -> InitializeRequest {
    InitializeRequest {
        protocol_version: ProtocolVersion(2),
        info: Implementation::new("acp-tokio-v2-test", "0.1.0"),
        capabilities: ClientCapabilities::default(),
        meta: None,
    }
}

async fn open(conn: &tokio_v2::ClientConnection) -> SessionId {
    let init = within("initialize", conn.initialize(init())).await.expect("the v2 handshake");
    assert_eq!((init.protocol_version, init.info.name.as_str()), (ProtocolVersion(2), AGENT_NAME));
    assert_eq!(conn.negotiated().expect("committed").protocol_version, ProtocolVersion(2));
    let new = NewSessionRequest {
        cwd: v2::AbsolutePath("/tmp".into()),
        additional_directories: None,
        mcp_servers: None,
        system_prompt: None,
        meta: None,
    };
    within("session/new", conn.new_session(new)).await.expect("a session").session_id
}

async fn prompt(conn: &tokio_v2::ClientConnection, session: &SessionId, text: &str) -> tokio_v2::PromptTurn {
    let prompt = vec![ContentBlock::Text(TextContent::new(text))];
    let request = PromptRequest { session_id: session.clone(), prompt, idempotency_key: None, meta: None };
    within("session/prompt", conn.prompt(request)).await.expect("sent")
}

fn name(update: &UpdateSessionNotification) -> String {
    match &update.update {
        SessionUpdate::StateUpdate(StateUpdate::Idle(i)) => format!("idle {:?}", i.stop_reason),
        SessionUpdate::StateUpdate(StateUpdate::Running(_)) => "running".into(),
        SessionUpdate::ToolCallUpdate(t) => format!("tool {} {:?}", t.tool_call_id.as_str(), t.status),
        SessionUpdate::AgentMessageChunk(c) => match &c.content {
            ContentBlock::Text(t) => format!("chunk {}", t.text),
            other => format!("chunk {other:?}"),
        },
        other => format!("{other:?}"),
    }
}

async fn next(turn: &mut tokio_v2::PromptTurn, n: usize) -> Vec<String> {
    let mut seen = Vec::new();
    for _ in 0..n {
        seen.push(name(&within("an update", turn.next_update()).await.expect("the turn is open")));
    }
    seen
}

async fn rest(turn: &mut tokio_v2::PromptTurn) -> Vec<String> {
    let mut seen = Vec::new();
    while let Some(update) = within("the rest", turn.next_update()).await {
        seen.push(name(&update));
    }
    seen
}

fn idle(reason: v2::IdleStopReason) -> TurnEndReason {
    TurnEndReason::Idle { stop_reason: Some(reason) }
}

#[tokio::test]
async fn v2_client_and_agent_full_turn_with_permission() {
    for (choice, status) in [("allow", "Completed"), ("reject", "Failed")] {
        let (conn, agent) = pair(Choosing(choice));
        let session = open(&conn).await;
        let mut turn = prompt(&conn, &session, "hello").await;
        assert_eq!(within("ack", turn.ack()).await.expect("once").expect("acked").message_id.as_str(), "user-2");
        let expected = [
            "running".to_owned(),
            "chunk echo: hello".into(),
            "tool call-1 Some(Pending)".into(),
            format!("tool call-1 Some({status})"),
            "idle Some(EndTurn)".into(),
        ];
        assert_eq!(rest(&mut turn).await, expected, "{choice}: the turn's updates, the idle last");
        assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(v2::IdleStopReason::EndTurn));
        within("close", conn.close()).await.expect("the connection closes");
        within("the agent ends", agent).await.expect("the agent task").expect("a clean end of input");
    }
}

#[tokio::test]
async fn v2_client_and_agent_session_cancel_ends_the_turn_cancelled() {
    let (conn, _agent) = pair(Choosing("allow"));
    let session = open(&conn).await;
    let mut turn = prompt(&conn, &session, "wait").await;
    assert_eq!(next(&mut turn, 2).await, ["running", "tool call-w1 Some(InProgress)"]);
    within("session/cancel", turn.cancel()).await.expect("sent");
    assert_eq!(rest(&mut turn).await, ["tool call-w1 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(v2::IdleStopReason::Cancelled));
    // The session is idle again: a new turn opens.
    let mut again = prompt(&conn, &session, "hello").await;
    assert_eq!(next(&mut again, 1).await, ["running"]);
}

#[tokio::test]
async fn v2_client_and_agent_tool_call_cancel_then_session_cancel() {
    let (conn, _agent) = pair(Choosing("allow"));
    let session = open(&conn).await;
    let mut turn = prompt(&conn, &session, "wait").await;
    assert_eq!(next(&mut turn, 2).await, ["running", "tool call-w1 Some(InProgress)"]);
    let cancel = CancelToolCallRequest { session_id: session.clone(), tool_call_id: "call-w1".into(), meta: None };
    within("tool_call/cancel", conn.cancel_tool_call(cancel.clone())).await.expect("answered {}");
    assert_eq!(next(&mut turn, 1).await, ["tool call-w1 Some(Cancelled)"], "the turn stays open");
    match conn.cancel_tool_call(cancel).await {
        Err(Error::Send(SendError::NotCancellable { .. })) => {}
        other => panic!("a final tool call is not cancellable: {other:?}"),
    }
    within("session/cancel", conn.cancel(&session)).await.expect("sent");
    assert_eq!(rest(&mut turn).await, ["idle Some(Cancelled)"]);
    assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(v2::IdleStopReason::Cancelled));
}

#[tokio::test]
async fn v2_client_dropping_a_turn_cancels_it() {
    let (conn, _agent) = pair(Choosing("allow"));
    let session = open(&conn).await;
    let mut turn = prompt(&conn, &session, "wait").await;
    assert_eq!(next(&mut turn, 2).await, ["running", "tool call-w1 Some(InProgress)"]);
    drop(turn);
    // The agent got `session/cancel`; until it ends that turn a prompt would join it, so it is
    // refused; then a new turn opens, with none of the old turn's updates.
    let mut again = within("a new turn", async {
        loop {
            let prompt = vec![ContentBlock::Text(TextContent::new("hello"))];
            let request = PromptRequest { session_id: session.clone(), prompt, idempotency_key: None, meta: None };
            match conn.prompt(request).await {
                Ok(turn) => break turn,
                Err(Error::Send(SendError::TurnAlreadyRunning(_))) => tokio::task::yield_now().await,
                Err(e) => panic!("unexpected {e:?}"),
            }
        }
    })
    .await;
    let seen = rest(&mut again).await;
    assert_eq!(
        seen,
        [
            "running",
            "chunk echo: hello",
            "tool call-1 Some(Pending)",
            "tool call-1 Some(Completed)",
            "idle Some(EndTurn)"
        ]
    );
}

/// A client that never answers a permission ask before it is cancelled, and says so.
struct Stalling(tokio::sync::mpsc::UnboundedSender<&'static str>);

impl tokio_v2::Client for Stalling {
    async fn request_permission(
        &self,
        _: RequestPermissionRequest,
        cx: ClientContext,
    ) -> Result<RequestPermissionResponse, acp_proto::RpcError> {
        let _ = self.0.send("asked");
        cx.cancelled().await;
        let _ = self.0.send("cancelled");
        let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow"));
        Ok(RequestPermissionResponse { outcome, meta: None })
    }
}

#[tokio::test]
async fn v2_client_and_agent_session_cancel_while_asked() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (conn, _agent) = pair(Stalling(tx));
    let session = open(&conn).await;
    let mut turn = prompt(&conn, &session, "hello").await;
    // The ask reaches the handler once the reader took the updates sent before it.
    assert_eq!(next(&mut turn, 3).await, ["running", "chunk echo: hello", "tool call-1 Some(Pending)"]);
    assert_eq!(within("the ask", rx.recv()).await, Some("asked"));
    within("session/cancel", conn.cancel(&session)).await.expect("sent");
    // The client's handler sees the cancel; the agent's ask resolves `cancelled` (the late
    // `allow` is not sent), so the tool call ends `cancelled` and the turn with one idle.
    assert_eq!(within("the handler's cancel", rx.recv()).await, Some("cancelled"));
    assert_eq!(rest(&mut turn).await, ["tool call-1 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(v2::IdleStopReason::Cancelled));
}

/// A client that forwards the updates it gets outside a turn.
struct Watching(tokio::sync::mpsc::UnboundedSender<UpdateSessionNotification>);

impl tokio_v2::Client for Watching {
    async fn session_update(&self, notification: UpdateSessionNotification) {
        let _ = self.0.send(notification);
    }
}

#[tokio::test]
async fn v2_client_gets_updates_outside_a_turn_from_its_handler() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    tokio::spawn(tokio_v2::serve(Scripted::announcing(), reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(ours);
    let conn = tokio_v2::ClientConnection::connect(Watching(tx), reader, writer, ClientOptions::default());
    let session = open(&conn).await;
    let info = within("the update outside a turn", rx.recv()).await.expect("delivered to the handler");
    assert_eq!(info.session_id, session);
    match info.update {
        SessionUpdate::SessionInfoUpdate(i) => assert_eq!(i.title, Some(Some("scripted".into()))),
        other => panic!("expected the session_info_update, got {other:?}"),
    }
    // A turn's updates go to its stream, not to the handler. `Watching` keeps the default
    // `request_permission`, which answers `cancelled`: the agent cancels call-1 and stops.
    let mut turn = prompt(&conn, &session, "hello").await;
    let expected = [
        "running",
        "chunk echo: hello",
        "tool call-1 Some(Pending)",
        "tool call-1 Some(Cancelled)",
        "idle Some(Cancelled)",
    ];
    assert_eq!(rest(&mut turn).await, expected);
    assert!(rx.try_recv().is_err(), "no turn update reached the handler");
}

#[tokio::test]
async fn v2_agent_refuses_a_v1_client() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    tokio::spawn(tokio_v2::serve(Scripted::default(), reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(ours);
    let conn = acp_tokio::ClientConnection::connect((), reader, writer, ClientOptions::default());
    let request = acp_proto::types::InitializeRequest::new(acp_proto::types::ProtocolVersion::V1);
    match within("initialize", conn.initialize(request)).await {
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

/// A v1-only agent of this crate (`acp_tokio::serve`): it answers every `initialize` with 1.
struct OnlyV1;

impl acp_tokio::Agent for OnlyV1 {
    async fn initialize(
        &self,
        _: acp_proto::types::InitializeRequest,
        _: acp_tokio::RequestContext,
    ) -> Result<acp_proto::types::InitializeResponse, acp_proto::RpcError> {
        Ok(acp_proto::types::InitializeResponse::new(acp_proto::types::ProtocolVersion::V1))
    }
}

/// The v2 client's connection speaks v2 only (a `Connection<V2>`): an agent that answers 1 is
/// refused with the version it named, and the connection closes saying why.
#[tokio::test]
async fn a_v2_client_offering_2_to_a_v1_only_agent_is_told_version_1_and_closes() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    let agent = tokio::spawn(acp_tokio::serve(OnlyV1, reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(ours);
    let conn = tokio_v2::ClientConnection::connect((), reader, writer, ClientOptions::default());
    match within("initialize", conn.initialize(init())).await {
        Err(Error::UnsupportedProtocolVersion(v)) => assert_eq!(v, ProtocolVersion(1)),
        other => panic!("expected UnsupportedProtocolVersion(1), got {other:?}"),
    }
    assert!(
        matches!(
            conn.close_reason(),
            Some(acp_proto::CloseReason::UnsupportedProtocolVersion { version }) if version == ProtocolVersion(1)
        ),
        "{:?}",
        conn.close_reason()
    );
    within("close", conn.close()).await.expect("the connection closes");
    within("the agent ends", agent).await.expect("the agent task").expect("the agent ends cleanly");
}

/// `v2::serve` reads the client's first frames with `acp_proto::Acceptor`: what comes before
/// `initialize` is answered as before the handshake (`-32600`), and what the client wrote after
/// `initialize` in the same write (pipelined, read in the same chunk) reaches the v2 agent.
#[tokio::test]
async fn v2_serve_answers_before_initialize_and_keeps_what_came_after_it() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    let agent = tokio::spawn(tokio_v2::serve(Scripted::default(), reader, writer, AgentOptions::default()));
    let (reader, mut writer) = tokio::io::split(ours);
    let lines = [
        serde_json::json!({"jsonrpc": "2.0", "id": 9, "method": "session/new", "params": {"cwd": "/w"}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": 2, "info": {"name": "raw", "version": "1"}, "capabilities": {}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}}),
    ];
    let mut input = Vec::new();
    for line in &lines {
        input.extend_from_slice(serde_json::to_string(line).expect("json").as_bytes());
        input.push(b'\n');
    }
    writer.write_all(&input).await.expect("one write");
    let mut reader = tokio::io::BufReader::new(reader).lines();
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 3 {
        let line = within("an answer", reader.next_line()).await.expect("read").expect("a line");
        let answer: serde_json::Value = serde_json::from_str(&line).expect("a JSON answer");
        if let Some(id) = answer["id"].as_i64() {
            answers.insert(id, answer);
        }
    }
    assert_eq!(answers[&9]["error"]["code"], -32600, "{:?}", answers[&9]);
    assert_eq!(answers[&0]["result"]["protocolVersion"], 2, "{:?}", answers[&0]);
    assert!(answers[&1]["result"]["sessionId"].is_string(), "{:?}", answers[&1]);
    writer.shutdown().await.expect("the client's output ends");
    within("the agent ends", agent).await.expect("the agent task").expect("the agent ends cleanly");
}
