//! Our acp-tokio v2 client (`acp_tokio::v2::ClientConnection`) against the official SDK's v2
//! agent (`common::sdk_v2_agent`): handshake, a full turn with a permission answered,
//! `session/cancel` mid-turn, `tool_call/cancel`, and a v1 agent answering the offer of 2.

mod common;

use std::sync::{Arc, Mutex};

use acp_proto::v2::{
    CancelToolCallRequest, ClientCapabilities, ContentBlock, IdleStopReason, Implementation, InitializeRequest,
    NewSessionRequest, PromptRequest, ProtocolVersion, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, RequestPermissionSubject, SelectedPermissionOutcome, SessionId, TextContent,
};
use acp_proto::{SendError, TurnEndReason};
use acp_tokio::v2 as tokio_v2;
use acp_tokio::{ClientContext, ClientOptions, Error};
use common::{sdk_agent, sdk_v2_agent, update_name as name, within};

/// What our client does when asked for permission.
#[derive(Clone, Copy)]
enum Answer {
    /// Selects `allow`.
    Allow,
    /// Waits until the ask is cancelled, then (too late) selects `allow`.
    WaitForCancel,
}

/// A v2 client recording the permission asks it got (`permission <tool call> [<options>]`).
#[derive(Clone)]
struct Asked {
    answer: Answer,
    log: Arc<Mutex<Vec<String>>>,
}

impl tokio_v2::Client for Asked {
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
        cx: ClientContext,
    ) -> Result<RequestPermissionResponse, acp_proto::RpcError> {
        let tool = match &request.subject {
            Some(RequestPermissionSubject::ToolCall(s)) => s.tool_call.tool_call_id.as_str().to_owned(),
            other => format!("{other:?}"),
        };
        let options: Vec<&str> = request.options.iter().map(|o| o.option_id.as_str()).collect();
        self.log.lock().expect("not poisoned").push(format!("permission {tool} {options:?}"));
        if let Answer::WaitForCancel = self.answer {
            cx.cancelled().await;
            self.log.lock().expect("not poisoned").push("ask cancelled".into());
        }
        let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow"));
        Ok(RequestPermissionResponse { outcome, meta: None })
    }
}

fn asked(answer: Answer) -> Asked {
    Asked { answer, log: Arc::default() }
}

fn connect(client: Asked) -> tokio_v2::ClientConnection {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    tokio::spawn(sdk_v2_agent::serve(reader, writer));
    let (reader, writer) = tokio::io::split(ours);
    tokio_v2::ClientConnection::connect(client, reader, writer, ClientOptions::default())
}

fn init(version: u16) -> InitializeRequest {
    InitializeRequest {
        protocol_version: ProtocolVersion(version),
        info: Implementation::new("acp-tokio-v2", "0.1.0"),
        capabilities: ClientCapabilities::default(),
        meta: None,
    }
}

/// Handshake offering 2, then a session: its id.
async fn open(conn: &tokio_v2::ClientConnection) -> SessionId {
    let init = within("initialize", conn.initialize(init(2))).await.expect("the v2 handshake");
    assert_eq!(init.protocol_version, ProtocolVersion(2));
    assert_eq!(init.info.name, sdk_v2_agent::NAME);
    assert_eq!(conn.negotiated().expect("committed").protocol_version, ProtocolVersion(2));
    let new = NewSessionRequest {
        cwd: acp_proto::v2::AbsolutePath("/tmp".into()),
        additional_directories: None,
        mcp_servers: None,
        system_prompt: None,
        meta: None,
    };
    within("session/new", conn.new_session(new)).await.expect("a session").session_id
}

async fn prompt(conn: &tokio_v2::ClientConnection, session: &SessionId, text: &str) -> tokio_v2::PromptTurn {
    let request = PromptRequest {
        session_id: session.clone(),
        prompt: vec![ContentBlock::Text(TextContent::new(text))],
        idempotency_key: None,
        meta: None,
    };
    within("session/prompt", conn.prompt(request)).await.expect("the prompt goes out")
}

/// The next `n` updates of the turn, by name (the turn must not end before).
async fn next(turn: &mut tokio_v2::PromptTurn, n: usize) -> Vec<String> {
    let mut seen = Vec::new();
    for _ in 0..n {
        let update = within("an update", turn.next_update()).await.expect("the turn is still open");
        seen.push(name(&update));
    }
    seen
}

/// The updates up to the end of the turn, by name.
async fn rest(turn: &mut tokio_v2::PromptTurn) -> Vec<String> {
    let mut seen = Vec::new();
    while let Some(update) = within("the rest of the turn", turn.next_update()).await {
        seen.push(name(&update));
    }
    seen
}

fn idle(stop_reason: IdleStopReason) -> TurnEndReason {
    TurnEndReason::Idle { stop_reason: Some(stop_reason) }
}

#[tokio::test]
async fn tokio_v2_client_full_turn_with_permission_against_sdk_v2_agent() {
    let client = asked(Answer::Allow);
    let conn = connect(client.clone());
    let session = open(&conn).await;
    let mut turn = prompt(&conn, &session, "hello").await;
    let ack = within("the ack", turn.ack()).await.expect("once").expect("acknowledged");
    assert_eq!(ack.message_id.as_str(), "user-2", "the ack names the inserted user message");
    let seen = rest(&mut turn).await;
    let expected = [
        "user user-2",
        "running",
        "thought thought-2",
        "chunk echo: hello",
        "tool call-1 Some(Pending)",
        "tool content call-1",
        // `completed`: the SDK agent saw our `allow` (anything else is `failed`).
        "tool call-1 Some(Completed)",
        "plan",
        "message agent-2",
        "usage 10/100",
        "info",
        "notice careful",
        "idle Some(EndTurn)",
    ];
    assert_eq!(seen, expected, "every update of the turn, in order, the idle last");
    assert!(turn.next_update().await.is_none(), "the stream ended once and stays ended");
    assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(IdleStopReason::EndTurn));
    assert_eq!(*client.log.lock().expect("not poisoned"), ["permission call-1 [\"allow\", \"reject\"]"]);
    // The turn is over: the next prompt opens a new one (one stream per turn).
    let mut again = prompt(&conn, &session, "again").await;
    assert_eq!(next(&mut again, 1).await, ["user user-3"]);
    drop(again);
    within("close", conn.close()).await.expect("the connection closes");
}

#[tokio::test]
async fn tokio_v2_client_session_cancel_mid_turn_ends_the_turn_cancelled() {
    let conn = connect(asked(Answer::Allow));
    let session = open(&conn).await;
    let mut turn = prompt(&conn, &session, "wait").await;
    let start = next(&mut turn, 4).await;
    assert_eq!(start, ["user user-2", "running", "tool call-w1 Some(InProgress)", "tool call-w2 Some(InProgress)"]);
    // A second prompt of a session whose turn this client reads is refused locally.
    let request = PromptRequest { session_id: session.clone(), prompt: vec![], idempotency_key: None, meta: None };
    match conn.prompt(request).await {
        Err(Error::Send(SendError::TurnAlreadyRunning(s))) => assert_eq!(s, session),
        other => panic!("expected TurnAlreadyRunning, got {other:?}"),
    }
    within("session/cancel", turn.cancel()).await.expect("sent");
    let end = rest(&mut turn).await;
    assert_eq!(end, ["tool call-w1 Some(Cancelled)", "tool call-w2 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(IdleStopReason::Cancelled));
    within("close", conn.close()).await.expect("the connection closes");
}

#[tokio::test]
async fn tokio_v2_client_tool_call_cancel_keeps_the_turn_open() {
    let conn = connect(asked(Answer::Allow));
    let session = open(&conn).await;
    let mut turn = prompt(&conn, &session, "wait").await;
    assert_eq!(next(&mut turn, 4).await[2..], ["tool call-w1 Some(InProgress)", "tool call-w2 Some(InProgress)"]);
    let cancel =
        |tool: &str| CancelToolCallRequest { session_id: session.clone(), tool_call_id: tool.into(), meta: None };
    within("tool_call/cancel", conn.cancel_tool_call(cancel("call-w1"))).await.expect("the agent answers {}");
    assert_eq!(next(&mut turn, 1).await, ["tool call-w1 Some(Cancelled)"], "the turn stays open");
    // Final now: the core refuses a second cancel of it before anything is sent.
    match conn.cancel_tool_call(cancel("call-w1")).await {
        Err(Error::Send(SendError::NotCancellable { .. })) => {}
        other => panic!("expected NotCancellable, got {other:?}"),
    }
    within("session/cancel", conn.cancel(&session)).await.expect("sent");
    assert_eq!(rest(&mut turn).await, ["tool call-w2 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(IdleStopReason::Cancelled));
    within("close", conn.close()).await.expect("the connection closes");
}

#[tokio::test]
async fn tokio_v2_client_session_cancel_while_asked_answers_the_ask_cancelled() {
    let client = asked(Answer::WaitForCancel);
    let conn = connect(client.clone());
    let session = open(&conn).await;
    let mut turn = prompt(&conn, &session, "hello").await;
    // Up to the tool call's content: the permission ask comes right after it.
    assert_eq!(next(&mut turn, 6).await[5], "tool content call-1");
    within("the ask", async {
        while client.log.lock().expect("not poisoned").is_empty() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    within("session/cancel", conn.cancel(&session)).await.expect("sent");
    assert_eq!(rest(&mut turn).await, ["tool call-1 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(IdleStopReason::Cancelled));
    within("the handler sees the cancel", async {
        while client.log.lock().expect("not poisoned").len() < 2 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    within("close", conn.close()).await.expect("the connection closes");
}

#[tokio::test]
async fn tokio_v2_client_offering_2_to_the_sdk_v1_agent_is_told_version_1() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    tokio::spawn(sdk_agent::serve(reader, writer));
    let (reader, writer) = tokio::io::split(ours);
    let conn = tokio_v2::ClientConnection::connect((), reader, writer, ClientOptions::default());
    match within("initialize", conn.initialize(init(2))).await {
        Err(Error::UnsupportedProtocolVersion(v)) => assert_eq!(v, ProtocolVersion(1)),
        other => panic!("expected UnsupportedProtocolVersion(1), got {other:?}"),
    }
    within("the connection closes", conn.close()).await.expect("the connection closes");
    assert!(conn.close_reason().is_some());
}
