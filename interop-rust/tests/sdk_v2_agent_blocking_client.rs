//! Our acp-blocking v2 client (`acp_blocking::v2::ClientConnection`) against the official SDK's v2
//! agent (`common::sdk_v2_agent`, on a tokio runtime of its own) over two OS pipes, as
//! `sdk_v2_agent_tokio_client.rs` drives it with acp-tokio's: handshake, a full turn with a
//! permission answered, `session/cancel` mid-turn, `tool_call/cancel`, and the SDK's v1 agent
//! answering the offer of 2.

mod common;

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use acp_blocking::v2::{Client, ClientConnection, PromptTurn};
use acp_blocking::{ClientContext, ClientOptions, Error};
use acp_proto::v2::{
    CancelToolCallRequest, ClientCapabilities, ContentBlock, IdleStopReason, Implementation, InitializeRequest,
    NewSessionRequest, PromptRequest, ProtocolVersion, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, RequestPermissionSubject, SelectedPermissionOutcome, SessionId, TextContent,
};
use acp_proto::{SendError, TurnEndReason};
use common::{LIMIT, sdk_agent, sdk_v2_agent, update_name};
use tokio::net::unix::pipe;

/// A v2 client allowing every permission ask and recording them (`permission <tool call>
/// [<options>]`).
#[derive(Clone, Default)]
struct Asked {
    log: Arc<Mutex<Vec<String>>>,
}

impl Client for Asked {
    fn request_permission(
        &self,
        request: RequestPermissionRequest,
        _: &ClientContext,
    ) -> Result<RequestPermissionResponse, acp_proto::RpcError> {
        let tool = match &request.subject {
            Some(RequestPermissionSubject::ToolCall(s)) => s.tool_call.tool_call_id.as_str().to_owned(),
            other => format!("{other:?}"),
        };
        let options: Vec<&str> = request.options.iter().map(|o| o.option_id.as_str()).collect();
        self.log.lock().expect("not poisoned").push(format!("permission {tool} {options:?}"));
        let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow"));
        Ok(RequestPermissionResponse { outcome, meta: None })
    }
}

type Served = JoinHandle<agent_client_protocol::Result<()>>;

/// Runs an SDK agent (`v2`: its v2 one, else its v1 one) on a runtime and thread of its own,
/// and connects our blocking v2 client to it.
fn connect(client: Asked, v2: bool) -> (ClientConnection, Served) {
    let (agent_reads, client_writes) = std::io::pipe().expect("pipe");
    let (client_reads, agent_writes) = std::io::pipe().expect("pipe");
    let (input, output): (OwnedFd, OwnedFd) = (agent_reads.into(), agent_writes.into());
    let agent = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        rt.block_on(async move {
            let reader = pipe::Receiver::from_owned_fd(input).expect("a pipe to read");
            let writer = pipe::Sender::from_owned_fd(output).expect("a pipe to write");
            if v2 { sdk_v2_agent::serve(reader, writer).await } else { sdk_agent::serve(reader, writer).await }
        })
    });
    let conn = ClientConnection::connect(client, client_reads, client_writes, ClientOptions::default())
        .expect("connected")
        .with_timeout(LIMIT);
    (conn, agent)
}

fn init() -> InitializeRequest {
    InitializeRequest {
        protocol_version: ProtocolVersion(2),
        info: Implementation::new("acp-blocking-v2", "0.1.0"),
        capabilities: ClientCapabilities::default(),
        meta: None,
    }
}

/// Handshake offering 2, then a session: its id.
fn open(conn: &ClientConnection) -> SessionId {
    let init = conn.initialize(init()).expect("the v2 handshake");
    assert_eq!((init.protocol_version, init.info.name.as_str()), (ProtocolVersion(2), sdk_v2_agent::NAME));
    assert_eq!(conn.negotiated().expect("committed").protocol_version, ProtocolVersion(2));
    let new = NewSessionRequest {
        cwd: acp_proto::v2::AbsolutePath("/tmp".into()),
        additional_directories: None,
        mcp_servers: None,
        system_prompt: None,
        meta: None,
    };
    conn.new_session(new).expect("a session").session_id
}

fn prompt(conn: &ClientConnection, session: &SessionId, text: &str) -> PromptTurn {
    let prompt = vec![ContentBlock::Text(TextContent::new(text))];
    conn.prompt(PromptRequest { session_id: session.clone(), prompt, idempotency_key: None, meta: None })
        .expect("the prompt goes out")
}

fn idle(stop_reason: IdleStopReason) -> TurnEndReason {
    TurnEndReason::Idle { stop_reason: Some(stop_reason) }
}

/// Closes our side; the SDK agent then sees the end of its input and returns.
fn close(conn: ClientConnection, agent: Served) {
    conn.close().expect("closed");
    agent.join().expect("the SDK agent's thread").expect("the SDK agent ends cleanly");
}

#[test]
fn blocking_v2_client_full_turn_with_permission_against_sdk_v2_agent() {
    let client = Asked::default();
    let (conn, agent) = connect(client.clone(), true);
    let session = open(&conn);
    let mut turn = prompt(&conn, &session, "hello");
    let ack = turn.ack().expect("once").expect("acknowledged");
    assert_eq!(ack.message_id.as_str(), "user-2", "the ack names the inserted user message");
    let seen: Vec<String> = turn.by_ref().map(|u| update_name(&u)).collect();
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
    assert!(turn.next_update().is_none(), "the turn ended once and stays ended");
    assert_eq!(turn.finish().expect("ended"), idle(IdleStopReason::EndTurn));
    assert_eq!(*client.log.lock().expect("not poisoned"), ["permission call-1 [\"allow\", \"reject\"]"]);
    close(conn, agent);
}

#[test]
fn blocking_v2_client_session_cancel_and_tool_call_cancel_against_sdk_v2_agent() {
    let (conn, agent) = connect(Asked::default(), true);
    let session = open(&conn);
    let mut turn = prompt(&conn, &session, "wait");
    let start: Vec<String> = turn.by_ref().take(4).map(|u| update_name(&u)).collect();
    assert_eq!(start, ["user user-2", "running", "tool call-w1 Some(InProgress)", "tool call-w2 Some(InProgress)"]);
    // A second prompt of a session whose turn this client reads is refused locally.
    match conn.prompt(PromptRequest { session_id: session.clone(), prompt: vec![], idempotency_key: None, meta: None })
    {
        Err(Error::Send(SendError::TurnAlreadyRunning(s))) => assert_eq!(s, session),
        other => panic!("expected TurnAlreadyRunning, got {other:?}"),
    }
    let cancel = CancelToolCallRequest { session_id: session.clone(), tool_call_id: "call-w1".into(), meta: None };
    conn.cancel_tool_call(cancel).expect("the agent answers {}");
    assert_eq!(turn.next_update().map(|u| update_name(&u)).as_deref(), Some("tool call-w1 Some(Cancelled)"));
    turn.cancel().expect("session/cancel sent");
    let end: Vec<String> = turn.by_ref().map(|u| update_name(&u)).collect();
    assert_eq!(end, ["tool call-w2 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(turn.finish().expect("ended"), idle(IdleStopReason::Cancelled));
    close(conn, agent);
}

#[test]
fn blocking_v2_client_offering_2_to_the_sdk_v1_agent_is_told_version_1() {
    let (conn, agent) = connect(Asked::default(), false);
    match conn.initialize(init()) {
        Err(Error::UnsupportedProtocolVersion(v)) => assert_eq!(v, ProtocolVersion(1)),
        other => panic!("expected UnsupportedProtocolVersion(1), got {other:?}"),
    }
    // The client closed the connection; `close` waits until it is closed.
    conn.close().expect("closed");
    assert!(conn.close_reason().is_some(), "the connection closed");
    agent.join().expect("the SDK agent's thread").expect("the SDK agent ends cleanly");
}
