//! ACP v2 across the two adapters (feature `unstable_protocol_v2`, which also turns on
//! acp-blocking's): acp-blocking's v2 client drives acp-tokio's `serve_v2` agent, and acp-tokio's
//! `ClientConnectionV2` drives acp-blocking's `serve_v2` agent, over OS pipes. Both agents run
//! the same script (`support/v2_agent.rs` here, `acp-blocking/tests/support/v2_agent.rs`
//! there), so each client expects the same turns from either.
#![cfg(unix)]

#[path = "support/v2_agent.rs"]
#[allow(dead_code, unreachable_pub)]
mod tokio_agent;

#[path = "../../acp-blocking/tests/support/v2_agent.rs"]
#[allow(dead_code, unreachable_pub)]
mod blocking_agent;

use std::io::{PipeReader, PipeWriter};
use std::time::Duration;

use acp_tokio::acp_proto::v2::{
    self, ContentBlock, Implementation, InitializeRequest, NewSessionRequest, PromptRequest, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome, SessionId, SessionUpdate,
    StateUpdate, TextContent, UpdateSessionNotification,
};
use acp_tokio::acp_proto::{RpcError, TurnEndReason};
use acp_tokio::{AgentOptions, ClientOptions};

const LIMIT: Duration = Duration::from_secs(10);

/// Two pipes: one side's reader and writer, and the other side's.
fn pipes() -> ((PipeReader, PipeWriter), (PipeReader, PipeWriter)) {
    let (a_in, b_out) = std::io::pipe().expect("a pipe");
    let (b_in, a_out) = std::io::pipe().expect("a pipe");
    ((a_in, a_out), (b_in, b_out))
}

/// The tokio ends, registered with the current runtime.
fn tokio_ends(
    (reader, writer): (PipeReader, PipeWriter),
) -> (tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender) {
    let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into()).expect("a tokio pipe");
    let writer = tokio::net::unix::pipe::Sender::from_owned_fd(writer.into()).expect("a tokio pipe");
    (reader, writer)
}

fn init() -> InitializeRequest {
    InitializeRequest {
        protocol_version: v2::ProtocolVersion(2),
        info: Implementation::new("cross-v2-client", "0.1.0"),
        capabilities: v2::ClientCapabilities::default(),
        meta: None,
    }
}

fn new_session() -> NewSessionRequest {
    NewSessionRequest {
        cwd: v2::AbsolutePath("/tmp".into()),
        additional_directories: None,
        mcp_servers: None,
        system_prompt: None,
        meta: None,
    }
}

fn prompt(session: &SessionId, text: &str) -> PromptRequest {
    let prompt = vec![ContentBlock::Text(TextContent::new(text))];
    PromptRequest { session_id: session.clone(), prompt, idempotency_key: None, meta: None }
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

const ALLOWED: [&str; 5] =
    ["running", "chunk echo: hello", "tool call-1 Some(Pending)", "tool call-1 Some(Completed)", "idle Some(EndTurn)"];

fn idle(reason: v2::IdleStopReason) -> TurnEndReason {
    TurnEndReason::Idle { stop_reason: Some(reason) }
}

fn allow() -> RequestPermissionResponse {
    let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow"));
    RequestPermissionResponse { outcome, meta: None }
}

/// A blocking v2 client that allows every permission ask.
struct BlockingAllowing;

impl acp_blocking::ClientV2 for BlockingAllowing {
    fn request_permission(
        &self,
        _: RequestPermissionRequest,
        _: &acp_blocking::ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        Ok(allow())
    }
}

#[test]
fn blocking_v2_client_drives_the_tokio_v2_agent() {
    let (tokio_side, (reader, writer)) = pipes();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let served = runtime.spawn(async move {
        let (reader, writer) = tokio_ends(tokio_side);
        acp_tokio::v2::serve_v2(tokio_agent::ScriptedV2::default(), reader, writer, AgentOptions::default()).await
    });
    let options = acp_blocking::ClientOptions::default();
    let conn = acp_blocking::ClientConnectionV2::connect(BlockingAllowing, reader, writer, options).expect("connect");
    let conn = conn.with_timeout(LIMIT);
    let answer = conn.initialize(init()).expect("the v2 handshake");
    assert_eq!(answer.info.name, tokio_agent::AGENT_NAME);
    let session = conn.new_session(new_session()).expect("a session").session_id;

    // A full turn, the permission ask answered by the blocking client's handler.
    let mut turn = conn.prompt(prompt(&session, "hello")).expect("sent");
    let seen: Vec<String> = turn.by_ref().map(|u| name(&u)).collect();
    assert_eq!(seen, ALLOWED);
    assert_eq!(turn.finish().expect("ended"), idle(v2::IdleStopReason::EndTurn));

    // `session/cancel` of a running turn.
    let mut turn = conn.prompt(prompt(&session, "wait")).expect("sent");
    let first: Vec<String> = turn.by_ref().take(2).map(|u| name(&u)).collect();
    assert_eq!(first, ["running", "tool call-w1 Some(InProgress)"]);
    turn.cancel().expect("session/cancel sent");
    let rest: Vec<String> = turn.by_ref().map(|u| name(&u)).collect();
    assert_eq!(rest, ["tool call-w1 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(turn.finish().expect("ended"), idle(v2::IdleStopReason::Cancelled));

    conn.close().expect("closed");
    let served = runtime.block_on(async { tokio::time::timeout(LIMIT, served).await });
    served.expect("the tokio agent ends").expect("its task").expect("a clean end of input");
}

/// A tokio v2 client that allows every permission ask.
struct TokioAllowing;

impl acp_tokio::v2::ClientV2 for TokioAllowing {
    async fn request_permission(
        &self,
        _: RequestPermissionRequest,
        _: acp_tokio::ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        Ok(allow())
    }
}

async fn names(turn: &mut acp_tokio::v2::PromptTurnV2, limit: Option<usize>) -> Vec<String> {
    let mut seen = Vec::new();
    while limit.is_none_or(|n| seen.len() < n) {
        match tokio::time::timeout(LIMIT, turn.next_update()).await.expect("an update in time") {
            Some(update) => seen.push(name(&update)),
            None => break,
        }
    }
    seen
}

#[tokio::test]
async fn tokio_v2_client_drives_the_blocking_v2_agent() {
    let ((reader, writer), tokio_side) = pipes();
    let agent =
        std::thread::spawn(move || acp_blocking::serve_v2(blocking_agent::ScriptedV2::default(), reader, writer));
    let (reader, writer) = tokio_ends(tokio_side);
    let conn = acp_tokio::v2::ClientConnectionV2::connect(TokioAllowing, reader, writer, ClientOptions::default());
    let conn = conn.with_timeout(LIMIT);
    let answer = conn.initialize(init()).await.expect("the v2 handshake");
    assert_eq!(answer.info.name, blocking_agent::AGENT_NAME);
    let session = conn.new_session(new_session()).await.expect("a session").session_id;

    let mut turn = conn.prompt(prompt(&session, "hello")).await.expect("sent");
    assert_eq!(names(&mut turn, None).await, ALLOWED);
    assert_eq!(turn.finish().await.expect("ended"), idle(v2::IdleStopReason::EndTurn));

    let mut turn = conn.prompt(prompt(&session, "wait")).await.expect("sent");
    assert_eq!(names(&mut turn, Some(2)).await, ["running", "tool call-w1 Some(InProgress)"]);
    turn.cancel().await.expect("session/cancel sent");
    assert_eq!(names(&mut turn, None).await, ["tool call-w1 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(turn.finish().await.expect("ended"), idle(v2::IdleStopReason::Cancelled));

    conn.close().await;
    let joined = tokio::task::spawn_blocking(move || agent.join());
    let ended = tokio::time::timeout(LIMIT, joined).await.expect("the blocking agent ends");
    ended.expect("joined").expect("the agent thread").expect("a clean end of input");
}
