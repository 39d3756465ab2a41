//! ACP v2 across the two adapters (feature `unstable_protocol_v2`, which turns on both
//! adapters'; formerly acp-tokio's `tests/tokio/cross_v2.rs`): acp-blocking's v2 client drives
//! acp-tokio's `serve_v2` agent, and acp-tokio's `ClientConnectionV2` drives acp-blocking's
//! `v2::serve` agent, over OS pipes. Both agents run the same script
//! (`acp-tokio/tests/support/v2_agent.rs` and `acp-blocking/tests/support/v2_agent.rs`), so each
//! client expects the same turns from either.
#![cfg(all(unix, feature = "unstable_protocol_v2"))]

#[path = "../../acp-tokio/tests/support/v2_agent.rs"]
#[allow(dead_code, unreachable_pub)]
mod tokio_agent;

#[path = "../../acp-blocking/tests/support/v2_agent.rs"]
#[allow(dead_code, unreachable_pub)]
mod blocking_agent;

#[path = "../../acp-blocking/tests/support/v2_wire.rs"]
#[allow(dead_code, unreachable_pub)]
mod v2_wire;

use std::io::{PipeReader, PipeWriter};
use std::time::Duration;

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::v2::{
    self, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
};
use acp_tokio::{AgentOptions, ClientOptions};
use v2_wire::{ALLOWED, idle, init, name, new_session, prompt_request};

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

fn allow() -> RequestPermissionResponse {
    let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow"));
    RequestPermissionResponse { outcome, meta: None }
}

/// A blocking v2 client that allows every permission ask.
struct BlockingAllowing;

impl acp_blocking::v2::Client for BlockingAllowing {
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
        acp_tokio::v2::serve(tokio_agent::Scripted::default(), reader, writer, AgentOptions::default()).await
    });
    let options = acp_blocking::ClientOptions::default();
    let conn = acp_blocking::v2::ClientConnection::connect(BlockingAllowing, reader, writer, options).expect("connect");
    let conn = conn.with_timeout(LIMIT);
    let answer = conn.initialize(init("cross-v2-client")).expect("the v2 handshake");
    assert_eq!(answer.info.name, tokio_agent::AGENT_NAME);
    let session = conn.new_session(new_session()).expect("a session").session_id;

    // A full turn, the permission ask answered by the blocking client's handler.
    let mut turn = conn.prompt(prompt_request(&session, "hello")).expect("sent");
    let seen: Vec<String> = turn.by_ref().map(|u| name(&u)).collect();
    assert_eq!(seen, ALLOWED);
    assert_eq!(turn.finish().expect("ended"), idle(v2::IdleStopReason::EndTurn));

    // `session/cancel` of a running turn.
    let mut turn = conn.prompt(prompt_request(&session, "wait")).expect("sent");
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

impl acp_tokio::v2::Client for TokioAllowing {
    async fn request_permission(
        &self,
        _: RequestPermissionRequest,
        _: acp_tokio::ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        Ok(allow())
    }
}

async fn names(turn: &mut acp_tokio::v2::PromptTurn, limit: Option<usize>) -> Vec<String> {
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
        std::thread::spawn(move || acp_blocking::v2::serve(blocking_agent::Scripted::default(), reader, writer));
    let (reader, writer) = tokio_ends(tokio_side);
    let conn = acp_tokio::v2::ClientConnection::connect(TokioAllowing, reader, writer, ClientOptions::default());
    let conn = conn.with_timeout(LIMIT);
    let answer = conn.initialize(init("cross-v2-client")).await.expect("the v2 handshake");
    assert_eq!(answer.info.name, blocking_agent::AGENT_NAME);
    let session = conn.new_session(new_session()).await.expect("a session").session_id;

    let mut turn = conn.prompt(prompt_request(&session, "hello")).await.expect("sent");
    assert_eq!(names(&mut turn, None).await, ALLOWED);
    assert_eq!(turn.finish().await.expect("ended"), idle(v2::IdleStopReason::EndTurn));

    let mut turn = conn.prompt(prompt_request(&session, "wait")).await.expect("sent");
    assert_eq!(names(&mut turn, Some(2)).await, ["running", "tool call-w1 Some(InProgress)"]);
    turn.cancel().await.expect("session/cancel sent");
    assert_eq!(names(&mut turn, None).await, ["tool call-w1 Some(Cancelled)", "idle Some(Cancelled)"]);
    assert_eq!(turn.finish().await.expect("ended"), idle(v2::IdleStopReason::Cancelled));

    conn.close().await.expect("the connection closes");
    let joined = tokio::task::spawn_blocking(move || agent.join());
    let ended = tokio::time::timeout(LIMIT, joined).await.expect("the blocking agent ends");
    ended.expect("joined").expect("the agent thread").expect("a clean end of input");
}
