//! The two adapters against each other over OS pipes: the tokio client runs the shared scenarios
//! against an agent built on `acp-blocking`, and the blocking client drives the tokio echo
//! agent. (Formerly acp-tokio's `tests/tokio/cross.rs`.)
#![cfg(unix)]

use acp_scenarios as common;

use std::io::{PipeReader, PipeWriter};
use std::time::Duration;

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{ErrorCode, RpcError};
use acp_tokio::{AgentOptions, ClientConnection, ClientOptions};
use common::blocking_echo::BlockingEcho;
use common::echo::storm_text;
use common::{EchoAgent, TestClient, chunk_text, handshake, scenarios};
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// Two pipes between a blocking side and a tokio side.
struct Pipes {
    blocking: (PipeReader, PipeWriter),
    tokio: (PipeReader, PipeWriter),
}

fn pipes() -> Pipes {
    let (to_tokio, from_blocking) = std::io::pipe().expect("a pipe");
    let (to_blocking, from_tokio) = std::io::pipe().expect("a pipe");
    Pipes { blocking: (to_blocking, from_blocking), tokio: (to_tokio, from_tokio) }
}

/// The tokio ends, registered with the current runtime.
fn tokio_ends(
    (reader, writer): (PipeReader, PipeWriter),
) -> (tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender) {
    let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into()).expect("a tokio pipe");
    let writer = tokio::net::unix::pipe::Sender::from_owned_fd(writer.into()).expect("a tokio pipe");
    (reader, writer)
}

fn connect_to_blocking(client: TestClient) -> (ClientConnection, UnboundedReceiver<String>) {
    let (tx, observed) = unbounded_channel();
    let Pipes { blocking: (reader, writer), tokio } = pipes();
    let agent = BlockingEcho { observed: Some(tx), ..BlockingEcho::default() };
    std::thread::spawn(move || acp_blocking::serve(agent, reader, writer).expect("the blocking agent"));
    let (reader, writer) = tokio_ends(tokio);
    (ClientConnection::connect(client, reader, writer, ClientOptions::default()), observed)
}

#[tokio::test]
async fn tokio_client_runs_the_scenarios_against_a_blocking_agent() {
    let (mut client, mut events) = TestClient::with_events();
    client.permission = Some("allow");
    let (conn, mut observed) = connect_to_blocking(client.clone());
    let session = scenarios::handshake_and_sessions(&conn).await;
    scenarios::prompt_stream(&conn, &session).await;
    scenarios::permission_granted(&conn, &session, &mut events).await;
    scenarios::fs_read(&conn, &session, &client).await;
    scenarios::terminal(&conn, &session).await;
    scenarios::update_outside_turn(&conn, &session, &mut events).await;
    scenarios::cancel_mid_turn(&conn, &session, Some(&mut observed)).await;
    scenarios::dropped_request_cancels(&conn, &mut observed).await;
    scenarios::request_timeout(&conn, &mut observed, Duration::from_millis(200)).await;
    scenarios::panic_isolated(&conn, &session).await;
    scenarios::concurrent_sessions(&conn, 64).await;
    assert_eq!(conn.close().await.expect("close"), None);
}

#[tokio::test]
async fn tokio_client_cancels_a_blocking_agents_permission_ask() {
    let (client, mut events) = TestClient::with_events();
    let (conn, _observed) = connect_to_blocking(client);
    let session = handshake(&conn).await;
    scenarios::permission_cancelled(&conn, &session, &mut events).await;
    let (conn, _observed) = connect_to_blocking(TestClient::default());
    scenarios::fs_refused_locally(&conn).await;
}

/// A blocking client: allows every permission ask and serves one file.
struct BlockingClient;

impl acp_blocking::Client for BlockingClient {
    fn request_permission(
        &self,
        _: RequestPermissionRequest,
        _: &acp_blocking::ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        Ok(RequestPermissionResponse::new(RequestPermissionOutcome::selected("allow")))
    }

    fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _: &acp_blocking::ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        match request.path.as_str() {
            "/notes.txt" => Ok(ReadTextFileResponse::new("served by the blocking client")),
            _ => Err(RpcError::resource_not_found("no such file")),
        }
    }
}

fn blocking_texts(conn: &acp_blocking::ClientConnection, session: &SessionId, text: &str) -> (Vec<String>, StopReason) {
    let mut turn = conn.prompt(common::prompt(session, text)).expect("prompt");
    let texts = turn.by_ref().map(|u| chunk_text(&u).expect("a chunk").to_owned()).collect();
    (texts, turn.finish().expect("stop reason"))
}

#[test]
fn blocking_client_drives_the_tokio_agent() {
    let Pipes { blocking: (reader, writer), tokio } = pipes();
    let (tx, mut observed) = unbounded_channel();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let served = runtime.spawn(async move {
        let (reader, writer) = tokio_ends(tokio);
        let agent = EchoAgent { observed: Some(tx), ..EchoAgent::default() };
        acp_tokio::serve(agent, reader, writer, AgentOptions::default()).await
    });

    let options = acp_blocking::ClientOptions::default();
    let conn = acp_blocking::ClientConnection::connect(BlockingClient, reader, writer, options).expect("connect");
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.fs.read_text_file = true;
    let init = conn.initialize(init).expect("initialize");
    assert_eq!(init.agent_info.map(|i| i.name).as_deref(), Some("echo_agent"));
    let session = conn.new_session(NewSessionRequest::new("/", Vec::new())).expect("session").session_id;

    let (texts, stop) = blocking_texts(&conn, &session, "storm 500");
    assert_eq!((texts, stop), ((0..500).map(storm_text).collect::<Vec<_>>(), StopReason::EndTurn));
    assert_eq!(blocking_texts(&conn, &session, "permission").0, ["permission: allow"]);
    assert_eq!(blocking_texts(&conn, &session, "read /notes.txt").0, ["served by the blocking client"]);

    let mut turn = conn.prompt(common::prompt(&session, "wait")).expect("prompt");
    assert_eq!(turn.next_update().as_ref().and_then(chunk_text), Some("waiting"));
    turn.cancel().expect("session/cancel");
    assert_eq!(turn.finish().expect("stop reason"), StopReason::Cancelled);
    assert_eq!(observed.blocking_recv().as_deref(), Some("cancelled prompt Some(SessionCancelled)"));

    let timed_out = conn.with_timeout(Duration::from_millis(200)).ext_method("_wait", json!({}));
    assert!(matches!(timed_out, Err(acp_blocking::Error::TimedOut)), "{timed_out:?}");
    assert_eq!(observed.blocking_recv().as_deref(), Some("started _wait"));
    assert_eq!(observed.blocking_recv().as_deref(), Some("cancelled _wait Some(CancelRequest)"));

    match conn.prompt(common::prompt(&session, "panic")).expect("prompt").finish() {
        Err(acp_blocking::Error::Rpc(e)) => assert_eq!(e.code, ErrorCode::INTERNAL_ERROR),
        other => panic!("expected -32603, got {other:?}"),
    }

    let sessions: Vec<SessionId> = (0..64)
        .map(|_| conn.new_session(NewSessionRequest::new("/", Vec::new())).expect("session").session_id)
        .collect();
    std::thread::scope(|scope| {
        for session in &sessions {
            let conn = &conn;
            scope.spawn(move || {
                let (texts, stop) = blocking_texts(conn, session, "storm 25");
                assert_eq!((texts, stop), ((0..25).map(storm_text).collect::<Vec<_>>(), StopReason::EndTurn));
            });
        }
    });

    assert_eq!(conn.close().expect("close"), None);
    assert!(runtime.block_on(served).expect("task").is_ok(), "the tokio agent saw a clean end of input");
}
