//! The official SDK's agent (`common::sdk_agent`, on a tokio runtime of its own) against our
//! plain-threads client, acp-blocking's `ClientConnection`, over two OS pipes
//! (`std::io::pipe`): handshake, a prompt turn with streamed updates, a permission request and a
//! cancel.

mod common;

use std::os::fd::OwnedFd;
use std::sync::mpsc;
use std::thread::JoinHandle;

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use acp_blocking::{Client, ClientConnection, ClientContext, ClientOptions, Requester};
use common::{LIMIT, sdk_agent};
use tokio::net::unix::pipe;

/// Answers permission requests with `allow` and reports the tool call asked about.
struct AllowingClient {
    asked: mpsc::Sender<String>,
}

impl Client for AllowingClient {
    fn request_permission(
        &self,
        request: RequestPermissionRequest,
        _cx: &ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        let _ = self.asked.send(request.tool_call.tool_call_id.to_string());
        Ok(RequestPermissionResponse::new(RequestPermissionOutcome::selected("allow")))
    }
}

struct Peers {
    conn: ClientConnection,
    asked: mpsc::Receiver<String>,
    agent: JoinHandle<agent_client_protocol::Result<()>>,
}

/// Runs the SDK agent on its own runtime and thread, reading `input` and writing `output`.
fn spawn_sdk_agent(input: OwnedFd, output: OwnedFd) -> JoinHandle<agent_client_protocol::Result<()>> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        rt.block_on(async move {
            let reader = pipe::Receiver::from_owned_fd(input).expect("a pipe to read");
            let writer = pipe::Sender::from_owned_fd(output).expect("a pipe to write");
            sdk_agent::serve(reader, writer).await
        })
    })
}

fn connect() -> Peers {
    let (agent_reads, client_writes) = std::io::pipe().expect("pipe");
    let (client_reads, agent_writes) = std::io::pipe().expect("pipe");
    let agent = spawn_sdk_agent(agent_reads.into(), agent_writes.into());
    let (tx, asked) = mpsc::channel();
    let client = AllowingClient { asked: tx };
    let conn =
        ClientConnection::connect(client, client_reads, client_writes, ClientOptions::default()).expect("connect");
    Peers { conn, asked, agent }
}

fn text(update: &SessionUpdate) -> Option<&str> {
    match update {
        SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => Some(&t.text),
        _ => None,
    }
}

fn handshake(conn: &Requester) -> SessionId {
    let response = conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).expect("initialize");
    assert_eq!(response.protocol_version, ProtocolVersion::V1);
    assert_eq!(response.agent_info.map(|i| i.name).as_deref(), Some(sdk_agent::NAME));
    conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).expect("session/new").session_id
}

/// Runs one turn: the texts of its updates, in order, and its stop reason.
fn turn(conn: &Requester, session: &SessionId, prompt: &str) -> (Vec<String>, StopReason) {
    let request = PromptRequest::new(session.clone(), vec![ContentBlock::text(prompt)]);
    let mut turn = conn.prompt(request).expect("prompt accepted");
    let mut texts = Vec::new();
    while let Some(update) = turn.next_update() {
        texts.push(text(&update).expect("a text chunk").to_owned());
    }
    (texts, turn.finish().expect("stop reason"))
}

/// Closes our side and checks the SDK agent ended cleanly on the end of its input.
fn close(peers: Peers) {
    peers.conn.close().expect("close");
    peers.agent.join().expect("agent thread").expect("the SDK agent ends cleanly");
}

#[test]
fn handshake_and_a_streamed_turn() {
    let peers = connect();
    let conn = peers.conn.with_timeout(LIMIT);
    let session = handshake(&conn);
    assert_eq!(session.to_string(), "sdk-session-1");
    let (texts, stop) = turn(&conn, &session, "hello");
    assert_eq!((texts, stop), (vec!["echo: hello".to_owned(), "done".to_owned()], StopReason::EndTurn));
    close(peers);
}

#[test]
fn permission_request_answered_by_our_client() {
    let peers = connect();
    let conn = peers.conn.with_timeout(LIMIT);
    let session = handshake(&conn);
    let (texts, stop) = turn(&conn, &session, "permission");
    assert_eq!((texts, stop), (vec!["permission: allow".to_owned()], StopReason::EndTurn));
    assert_eq!(peers.asked.try_recv().as_deref(), Ok("call-1"));
    close(peers);
}

#[test]
fn cancel_ends_the_turn_with_cancelled() {
    let peers = connect();
    let conn = peers.conn.with_timeout(LIMIT);
    let session = handshake(&conn);
    let request = PromptRequest::new(session.clone(), vec![ContentBlock::text("wait")]);
    let mut open = conn.prompt(request).expect("prompt accepted");
    let first = open.next_update().expect("an update");
    assert_eq!(text(&first), Some("waiting"));
    conn.cancel(&session).expect("session/cancel sent");
    assert_eq!(open.finish().expect("stop reason"), StopReason::Cancelled);
    // The session takes a new turn afterwards.
    let (texts, stop) = turn(&conn, &session, "again");
    assert_eq!((texts, stop), (vec!["echo: again".to_owned(), "done".to_owned()], StopReason::EndTurn));
    close(peers);
}
