//! ACP v2 on async-std (features `async-std`, `unstable_protocol_v2`): `async_std::v2::connect`
//! against `async_std::v2::serve` over a Unix socket pair, with no tokio runtime anywhere (the
//! agent's turn runs on `async_std::task::spawn`): the handshake, a full turn with a permission
//! ask, and a turn cancelled with `session/cancel`.
#![cfg(all(feature = "async-std", feature = "unstable_protocol_v2"))]

use std::time::Duration;

use acp_tokio::acp_proto::v2::{
    self, ClientCapabilities, ContentBlock, Implementation, InitializeRequest, NewSessionRequest, PromptRequest,
    ProtocolVersion, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionId, SessionUpdate, StateUpdate, TextContent,
};
use acp_tokio::acp_proto::{RpcError, TurnEndReason};
use acp_tokio::v2 as tokio_v2;
use acp_tokio::{AgentOptions, ClientContext, ClientOptions};
use async_std::os::unix::net::UnixStream;
use async_std::task::block_on;
use serde_json::json;
use tokio::sync::watch;

const LIMIT: Duration = Duration::from_secs(10);

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    async_std::future::timeout(LIMIT, f).await.unwrap_or_else(|_| panic!("{what}: nothing within {LIMIT:?}"))
}

fn update(value: serde_json::Value) -> SessionUpdate {
    serde_json::from_value(value).expect("a valid v2 session update")
}

/// A v2 agent whose turns run on async-std: `wait` waits for `session/cancel`; anything else
/// echoes, asks a permission and ends `end_turn` (or `cancelled` when refused).
struct StdAgent {
    cancelled: watch::Sender<bool>,
}

impl StdAgent {
    fn new() -> StdAgent {
        StdAgent { cancelled: watch::channel(false).0 }
    }
}

async fn turn(cx: tokio_v2::AgentContext, session: SessionId, text: String, mut cancelled: watch::Receiver<bool>) {
    cx.answered().await;
    let _ = cx.send_update(&session, update(json!({"sessionUpdate": "state_update", "state": "running"}))).await;
    if text == "wait" {
        let _ = cancelled.wait_for(|c| *c).await;
        let _ = cx.send_idle(&session, v2::IdleStopReason::Cancelled).await;
        return;
    }
    let chunk = json!({"sessionUpdate": "agent_message_chunk", "messageId": "agent-1",
        "content": {"type": "text", "text": format!("echo: {text}")}});
    let _ = cx.send_update(&session, update(chunk)).await;
    let ask: v2::RequestPermissionRequest = serde_json::from_value(json!({
        "sessionId": session, "title": "Go on?",
        "subject": {"type": "tool_call", "toolCall": {"toolCallId": "call-1"}},
        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
    }))
    .expect("a valid permission request");
    let stop = match cx.request_permission(ask).await.map(|a| a.outcome) {
        Ok(v2::RequestPermissionOutcome::Selected(s)) if s.option_id.as_str() == "allow" => v2::IdleStopReason::EndTurn,
        _ => v2::IdleStopReason::Cancelled,
    };
    let _ = cx.send_idle(&session, stop).await;
}

impl tokio_v2::Agent for StdAgent {
    async fn initialize(
        &self,
        _: v2::InitializeRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::InitializeResponse, RpcError> {
        let init = json!({"protocolVersion": 2, "info": {"name": "async-std-v2", "version": "0.1.0"},
            "capabilities": {"session": {}}});
        Ok(serde_json::from_value(init).expect("a valid initialize response"))
    }

    async fn new_session(
        &self,
        _: v2::NewSessionRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::NewSessionResponse, RpcError> {
        Ok(serde_json::from_value(json!({"sessionId": "std-1"})).expect("a valid session/new response"))
    }

    async fn prompt(
        &self,
        request: v2::PromptRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::PromptResponse, RpcError> {
        let text = match request.prompt.first() {
            Some(ContentBlock::Text(t)) => t.text.clone(),
            _ => String::new(),
        };
        self.cancelled.send_replace(false);
        async_std::task::spawn(turn(cx, request.session_id, text, self.cancelled.subscribe()));
        Ok(serde_json::from_value(json!({"messageId": "user-1"})).expect("a valid prompt response"))
    }

    async fn session_cancelled(&self, _: v2::CancelSessionNotification) {
        self.cancelled.send_replace(true);
    }
}

struct Allowing;

impl tokio_v2::Client for Allowing {
    async fn request_permission(
        &self,
        _: RequestPermissionRequest,
        _: ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow"));
        Ok(RequestPermissionResponse { outcome, meta: None })
    }
}

fn names(updates: &[v2::UpdateSessionNotification]) -> Vec<String> {
    let name = |u: &v2::UpdateSessionNotification| match &u.update {
        SessionUpdate::StateUpdate(StateUpdate::Idle(i)) => format!("idle {:?}", i.stop_reason),
        SessionUpdate::StateUpdate(StateUpdate::Running(_)) => "running".into(),
        SessionUpdate::AgentMessageChunk(c) => match &c.content {
            ContentBlock::Text(t) => format!("chunk {}", t.text),
            other => format!("chunk {other:?}"),
        },
        other => format!("{other:?}"),
    };
    updates.iter().map(name).collect()
}

async fn rest(turn: &mut tokio_v2::PromptTurn) -> Vec<String> {
    let mut seen = Vec::new();
    while let Some(update) = within("an update", turn.next_update()).await {
        seen.push(update);
    }
    names(&seen)
}

async fn prompt(conn: &tokio_v2::ClientConnection, session: &SessionId, text: &str) -> tokio_v2::PromptTurn {
    let prompt = vec![ContentBlock::Text(TextContent::new(text))];
    let request = PromptRequest { session_id: session.clone(), prompt, idempotency_key: None, meta: None };
    within("session/prompt", conn.prompt(request)).await.expect("sent")
}

#[test]
fn a_v2_handshake_a_full_turn_and_a_cancelled_turn_on_async_std() {
    block_on(async {
        let (client_io, agent_io) = UnixStream::pair().expect("a socket pair");
        let agent_writer = agent_io.clone();
        let served = async_std::task::spawn(acp_tokio::async_std::v2::serve(
            StdAgent::new(),
            agent_io,
            agent_writer,
            AgentOptions::default(),
        ));
        let client_writer = client_io.clone();
        let conn = acp_tokio::async_std::v2::connect(Allowing, client_io, client_writer, ClientOptions::default());

        let request = InitializeRequest {
            protocol_version: ProtocolVersion(2),
            info: Implementation::new("async-std-v2-test", "0.1.0"),
            capabilities: ClientCapabilities::default(),
            meta: None,
        };
        let init = within("initialize", conn.initialize(request)).await.expect("the v2 handshake");
        assert_eq!((init.protocol_version, init.info.name.as_str()), (ProtocolVersion(2), "async-std-v2"));
        let new = NewSessionRequest {
            cwd: v2::AbsolutePath("/tmp".into()),
            additional_directories: None,
            mcp_servers: None,
            system_prompt: None,
            meta: None,
        };
        let session = within("session/new", conn.new_session(new)).await.expect("a session").session_id;

        let mut turn = prompt(&conn, &session, "hello").await;
        assert_eq!(within("ack", turn.ack()).await.expect("once").expect("acked").message_id.as_str(), "user-1");
        assert_eq!(rest(&mut turn).await, ["running", "chunk echo: hello", "idle Some(EndTurn)"]);
        let end = within("finish", turn.finish()).await.expect("ended");
        assert_eq!(end, TurnEndReason::Idle { stop_reason: Some(v2::IdleStopReason::EndTurn) });

        let mut waiting = prompt(&conn, &session, "wait").await;
        let first = within("running", waiting.next_update()).await.expect("the turn is open");
        assert_eq!(names(&[first]), ["running"]);
        within("session/cancel", conn.cancel(&session)).await.expect("sent");
        assert_eq!(rest(&mut waiting).await, ["idle Some(Cancelled)"]);
        let end = within("finish", waiting.finish()).await.expect("ended");
        assert_eq!(end, TurnEndReason::Idle { stop_reason: Some(v2::IdleStopReason::Cancelled) });

        within("close", conn.close()).await.expect("the connection closes");
        within("the agent ends", served).await.expect("a clean end of input");
    });
}
