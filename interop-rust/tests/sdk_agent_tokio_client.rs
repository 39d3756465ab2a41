//! The official SDK's agent (`common::sdk_agent`) against our async client, acp-tokio's
//! `ClientConnection`, in one process over `tokio::io::duplex`: handshake, a prompt turn with
//! streamed updates, a permission request and a cancel.

mod common;

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::types::*;
use acp_tokio::{Client, ClientConnection, ClientContext, ClientOptions};
use common::{sdk_agent, within};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Answers permission requests with `allow` and reports the tool call asked about.
struct AllowingClient {
    asked: mpsc::UnboundedSender<String>,
}

impl Client for AllowingClient {
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
        _cx: ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        let _ = self.asked.send(request.tool_call.tool_call_id.to_string());
        Ok(RequestPermissionResponse::new(RequestPermissionOutcome::selected("allow")))
    }

    async fn create_elicitation(
        &self,
        request: CreateElicitationRequest,
        _cx: ClientContext,
    ) -> Result<CreateElicitationResponse, RpcError> {
        let _ = self.asked.send(format!("elicitation: {}", request.message));
        Ok(CreateElicitationResponse::new(ElicitationAction::Accept(ElicitationAcceptAction::default())))
    }
}

struct Peers {
    conn: ClientConnection,
    asked: mpsc::UnboundedReceiver<String>,
    agent: JoinHandle<agent_client_protocol::Result<()>>,
}

fn connect() -> Peers {
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    let agent = tokio::spawn(sdk_agent::serve(reader, writer));
    let (tx, asked) = mpsc::unbounded_channel();
    let (reader, writer) = tokio::io::split(client_io);
    let conn = ClientConnection::connect(AllowingClient { asked: tx }, reader, writer, ClientOptions::default());
    Peers { conn, asked, agent }
}

fn text(update: &SessionUpdate) -> Option<&str> {
    match update {
        SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => Some(&t.text),
        _ => None,
    }
}

async fn handshake(conn: &ClientConnection) -> SessionId {
    handshake_with(conn, ClientCapabilities::default()).await
}

async fn handshake_with(conn: &ClientConnection, capabilities: ClientCapabilities) -> SessionId {
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities = capabilities;
    let response = within("initialize", conn.initialize(init)).await;
    let response = response.expect("initialize");
    assert_eq!(response.protocol_version, ProtocolVersion::V1);
    assert_eq!(response.agent_info.map(|i| i.name).as_deref(), Some(sdk_agent::NAME));
    let new = within("session/new", conn.new_session(NewSessionRequest::new("/tmp", Vec::new()))).await;
    new.expect("session/new").session_id
}

/// Runs one turn: the texts of its updates, in order, and its stop reason.
async fn turn(conn: &ClientConnection, session: &SessionId, prompt: &str) -> (Vec<String>, StopReason) {
    let request = PromptRequest::new(session.clone(), vec![ContentBlock::text(prompt)]);
    let mut turn = within("prompt", conn.prompt(request)).await.expect("prompt accepted");
    let mut texts = Vec::new();
    while let Some(update) = within("an update", turn.next_update()).await {
        texts.push(text(&update).expect("a text chunk").to_owned());
    }
    (texts, within("stop reason", turn.finish()).await.expect("stop reason"))
}

/// Closes our side and checks the SDK agent ended cleanly on the end of its input.
async fn close(peers: Peers) {
    within("close", peers.conn.close()).await.expect("close");
    within("agent end", peers.agent).await.expect("agent task").expect("the SDK agent ends cleanly");
}

#[tokio::test]
async fn handshake_and_a_streamed_turn() {
    let peers = connect();
    let session = handshake(&peers.conn).await;
    assert_eq!(session.to_string(), "sdk-session-1");
    let (texts, stop) = turn(&peers.conn, &session, "hello").await;
    assert_eq!((texts, stop), (vec!["echo: hello".to_owned(), "done".to_owned()], StopReason::EndTurn));
    close(peers).await;
}

#[tokio::test]
async fn permission_request_answered_by_our_client() {
    let mut peers = connect();
    let session = handshake(&peers.conn).await;
    let (texts, stop) = turn(&peers.conn, &session, "permission").await;
    assert_eq!((texts, stop), (vec!["permission: allow".to_owned()], StopReason::EndTurn));
    assert_eq!(peers.asked.try_recv().as_deref(), Ok("call-1"));
    close(peers).await;
}

#[tokio::test]
async fn cancel_ends_the_turn_with_cancelled() {
    let peers = connect();
    let session = handshake(&peers.conn).await;
    let request = PromptRequest::new(session.clone(), vec![ContentBlock::text("wait")]);
    let mut open = within("prompt", peers.conn.prompt(request)).await.expect("prompt accepted");
    let first = within("first update", open.next_update()).await.expect("an update");
    assert_eq!(text(&first), Some("waiting"));
    within("cancel", peers.conn.cancel(&session)).await.expect("session/cancel sent");
    assert_eq!(within("stop reason", open.finish()).await.expect("stop reason"), StopReason::Cancelled);
    // The session takes a new turn afterwards.
    let (texts, stop) = turn(&peers.conn, &session, "again").await;
    assert_eq!((texts, stop), (vec!["echo: again".to_owned(), "done".to_owned()], StopReason::EndTurn));
    close(peers).await;
}

/// The SDK agent asks for input with `elicitation/create` (URL mode); our client advertised
/// `elicitation.url`, its handler accepts, and the agent reports the answer it decoded.
#[tokio::test]
async fn elicitation_answered_by_our_client() {
    let mut peers = connect();
    let capabilities = ClientCapabilities { elicitation: Some(ElicitationCapabilities::all()), ..Default::default() };
    let session = handshake_with(&peers.conn, capabilities).await;
    let (texts, stop) = turn(&peers.conn, &session, "elicit").await;
    assert_eq!((texts, stop), (vec!["elicitation: accept".to_owned()], StopReason::EndTurn));
    assert!(peers.asked.try_recv().is_ok_and(|asked| asked.starts_with("elicitation: ")), "our handler ran");
    close(peers).await;
}

/// A client that did not advertise elicitation is never asked: the SDK agent's request is
/// answered `-32601` by our core before any handler (inbound capabilities fail closed).
#[tokio::test]
async fn elicitation_of_a_client_that_did_not_advertise_it_is_refused() {
    let mut peers = connect();
    let session = handshake(&peers.conn).await;
    let (texts, stop) = turn(&peers.conn, &session, "elicit").await;
    assert_eq!((texts, stop), (vec!["elicitation: error -32601".to_owned()], StopReason::EndTurn));
    assert!(peers.asked.try_recv().is_err(), "no handler ran");
    close(peers).await;
}
