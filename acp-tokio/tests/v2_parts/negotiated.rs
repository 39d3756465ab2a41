//! One agent, both versions: `serve_negotiated` gives a client offering 2 the v2 agent and a
//! client offering only 1 the v1 agent, on the same kind of transport; and the agent learns
//! when the core ended cancelled work by its grace idle.

use std::time::Duration;

use acp_proto::types::{
    InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse,
    StopReason,
};
use acp_proto::{RpcError, v2};
use acp_tokio::v2 as tokio_v2;
use acp_tokio::v2::serve_negotiated;
use acp_tokio::{Agent, AgentOptions, ClientConnection, ClientOptions, PromptContext, RequestContext};
use serde_json::json;
use tokio::sync::mpsc;

use super::v2_agent::{AGENT_NAME, Scripted};
use super::{answer_v2, idle, init, next, of, open, prompt, within};

/// The v1 side of the agent: answers `initialize` with 1 and every prompt `end_turn`.
struct Classic;

impl Agent for Classic {
    async fn initialize(&self, _: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(acp_proto::types::ProtocolVersion::V1))
    }

    async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("classic-1"))
    }

    async fn prompt(&self, _: PromptRequest, _: PromptContext) -> Result<PromptResponse, RpcError> {
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

/// A transport to a fresh `serve_negotiated(Scripted, Classic)`.
fn served() -> (tokio::io::ReadHalf<tokio::io::DuplexStream>, tokio::io::WriteHalf<tokio::io::DuplexStream>) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    tokio::spawn(serve_negotiated(Scripted::default(), Classic, reader, writer, AgentOptions::default()));
    tokio::io::split(ours)
}

#[tokio::test]
async fn v2_negotiated_agent_gives_a_v2_client_v2() {
    let (reader, writer) = served();
    let conn = tokio_v2::ClientConnection::connect((), reader, writer, ClientOptions::default());
    // `open` checks the v2 handshake (version 2, the v2 agent's name).
    let session = open(&conn).await;
    let mut turn = prompt(&conn, &session, "wait").await;
    assert_eq!(next(&mut turn, 2).await, ["running", "tool call-w1 Some(InProgress)"]);
    within("cancel", turn.cancel()).await.expect("sent");
    assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(v2::IdleStopReason::Cancelled));
    conn.close().await.expect("the connection closes");
}

#[tokio::test]
async fn v2_negotiated_agent_gives_a_v1_client_v1() {
    let (reader, writer) = served();
    let conn = ClientConnection::connect((), reader, writer, ClientOptions::default());
    let request = InitializeRequest::new(acp_proto::types::ProtocolVersion::V1);
    let init = within("initialize", conn.initialize(request)).await.expect("the v1 agent answers");
    assert_eq!(init.protocol_version, acp_proto::types::ProtocolVersion::V1);
    let session =
        within("session/new", conn.new_session(NewSessionRequest::new("/tmp", Vec::new()))).await.expect("a session");
    assert_eq!(session.session_id.0.as_ref(), "classic-1");
    let prompt = PromptRequest::new(session.session_id, vec!["hi".into()]);
    let turn = within("prompt", conn.prompt(prompt)).await.expect("sent");
    assert_eq!(within("finish", turn.finish()).await.expect("answered"), StopReason::EndTurn);
    conn.close().await.expect("a clean close");
}

#[tokio::test]
async fn v2_client_against_a_negotiated_agent_never_gets_v1() {
    // The v2 client's offer of 2 goes to the v2 agent, not the v1 one (whose answer would be
    // 1 and close the connection with `UnsupportedProtocolVersion`).
    let (reader, writer) = served();
    let conn = tokio_v2::ClientConnection::connect((), reader, writer, ClientOptions::default());
    let answer = within("initialize", conn.initialize(init())).await.expect("v2");
    assert_eq!(answer.info.name, AGENT_NAME);
    assert_eq!(conn.close_reason(), None, "the connection stays open");
}

/// An agent whose prompts start work that ignores `session/cancel`; it reports the grace end.
struct Stubborn(mpsc::UnboundedSender<String>);

impl tokio_v2::Agent for Stubborn {
    async fn initialize(
        &self,
        _: v2::InitializeRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::InitializeResponse, RpcError> {
        Ok(answer_v2("stubborn"))
    }

    async fn new_session(
        &self,
        _: v2::NewSessionRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::NewSessionResponse, RpcError> {
        Ok(of(json!({"sessionId": "s"})))
    }

    async fn prompt(
        &self,
        request: v2::PromptRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::PromptResponse, RpcError> {
        tokio::spawn(async move {
            cx.answered().await;
            let running = of(json!({"sessionUpdate": "state_update", "state": "running"}));
            let _ = cx.send_update(&request.session_id, running).await;
        });
        Ok(of(json!({"messageId": "u"})))
    }

    async fn session_cancelled(&self, notification: v2::CancelSessionNotification) {
        let _ = self.0.send(format!("cancelled {}", notification.session_id.as_str()));
    }

    async fn cancel_grace_expired(&self, session_id: v2::SessionId) {
        let _ = self.0.send(format!("grace expired {}", session_id.as_str()));
    }
}

#[tokio::test]
async fn v2_agent_is_told_when_the_core_ends_cancelled_work_itself() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    let mut options = AgentOptions::default();
    options.config.turn_cancel_grace = Duration::from_millis(50);
    tokio::spawn(acp_tokio::v2::serve(Stubborn(tx), reader, writer, options));
    let (reader, writer) = tokio::io::split(ours);
    let conn = tokio_v2::ClientConnection::connect((), reader, writer, ClientOptions::default());
    within("initialize", conn.initialize(init())).await.expect("v2");
    let new = of(json!({"cwd": "/tmp"}));
    let session = within("session/new", conn.new_session(new)).await.expect("a session").session_id;
    let mut turn = prompt(&conn, &session, "work").await;
    assert_eq!(next(&mut turn, 1).await, ["running"]);
    within("cancel", turn.cancel()).await.expect("sent");
    assert_eq!(within("the cancel", rx.recv()).await.as_deref(), Some("cancelled s"));
    // The agent never reports idle: the core does after the grace, and says so.
    assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(v2::IdleStopReason::Cancelled));
    assert_eq!(within("the grace end", rx.recv()).await.as_deref(), Some("grace expired s"));
    conn.close().await.expect("the connection closes");
}
