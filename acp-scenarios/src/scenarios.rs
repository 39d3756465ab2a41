//! Scenarios against a connected [`ClientConnection`] to an [`EchoAgent`](super::EchoAgent),
//! using only the public API and no runtime-specific call, so each runtime's test binary runs
//! the same ones over its own transport.

use std::time::Duration;

use acp_tokio::acp_proto::ErrorCode;
use acp_tokio::acp_proto::types::*;
use acp_tokio::{ClientConnection, Error};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use super::echo::storm_text;
use super::{BoxedFuture, chunk_text, handshake, join_all, next, prompt};

/// The texts of a turn's chunk updates, and its stop reason.
pub async fn run_turn(conn: &ClientConnection, session: &SessionId, text: &str) -> (Vec<String>, StopReason) {
    let mut texts = Vec::new();
    let stop = conn
        .prompt_with(prompt(session, text), |u| texts.push(chunk_text(&u).expect("a chunk").to_owned()))
        .await
        .expect("the turn");
    (texts, stop)
}

fn storm_texts(n: u64) -> Vec<String> {
    (0..n).map(storm_text).collect()
}

async fn expect_observed(observed: &mut UnboundedReceiver<String>, what: &str) {
    assert_eq!(observed.recv().await.as_deref(), Some(what));
}

/// `initialize` and `session/new`: the negotiated version, the agent's info, session ids.
pub async fn handshake_and_sessions(conn: &ClientConnection) -> SessionId {
    assert!(conn.negotiated().is_none(), "nothing is negotiated before initialize");
    let init = conn.initialize(super::init_with_caps()).await.expect("initialize");
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert_eq!(init.agent_info.map(|i| i.name).as_deref(), Some("echo_agent"));
    assert_eq!(conn.negotiated().map(|n| n.protocol_version), Some(ProtocolVersion::V1));
    let first = conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("session/new");
    let second = conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("session/new");
    assert_eq!((first.session_id.as_str(), second.session_id.as_str()), ("sess-0", "sess-1"));
    first.session_id
}

/// A prompt's updates arrive as a `Stream`, in order, then the stop reason.
pub async fn prompt_stream(conn: &ClientConnection, session: &SessionId) {
    let mut turn = conn.prompt(prompt(session, "storm 300")).await.expect("prompt accepted");
    let mut texts = Vec::new();
    while let Some(update) = next(&mut turn).await {
        texts.push(chunk_text(&update).expect("a chunk").to_owned());
    }
    assert_eq!(texts, storm_texts(300));
    assert_eq!(turn.finish().await.expect("stop reason"), StopReason::EndTurn);
    // The plain echo, through the callback form.
    assert_eq!(run_turn(conn, session, "hello agent").await, (vec!["hello agent".to_owned()], StopReason::EndTurn));
}

/// The client answers a permission request; the agent reports the option chosen.
pub async fn permission_granted(conn: &ClientConnection, session: &SessionId, events: &mut UnboundedReceiver<String>) {
    let (texts, stop) = run_turn(conn, session, "permission").await;
    assert_eq!((texts, stop), (vec!["permission: allow".to_owned()], StopReason::EndTurn));
    expect_observed(events, "permission asked call-1").await;
}

/// Cancelling a turn while the client's permission handler waits: the core answers the ask
/// `cancelled`, the handler's token fires, the agent sees `cancelled`, and the turn ends
/// `cancelled`.
pub async fn permission_cancelled(
    conn: &ClientConnection,
    session: &SessionId,
    events: &mut UnboundedReceiver<String>,
) {
    let mut turn = conn.prompt(prompt(session, "permission")).await.expect("prompt accepted");
    expect_observed(events, "permission asked call-1").await;
    turn.cancel().await.expect("session/cancel sent");
    let update = turn.next_update().await.expect("the agent's report");
    assert_eq!(chunk_text(&update), Some("permission: cancelled"));
    assert_eq!(turn.finish().await.expect("stop reason"), StopReason::Cancelled);
    expect_observed(events, "permission cancelled Some(TurnCancelled)").await;
}

/// A command run in a client terminal (`terminal/create`, `wait_for_exit`, `output`,
/// `release`).
pub async fn terminal(conn: &ClientConnection, session: &SessionId) {
    let (texts, stop) = run_turn(conn, session, "terminal echo from a terminal").await;
    assert_eq!((texts, stop), (vec!["from a terminal\n".to_owned()], StopReason::EndTurn));
}

/// `fs/read_text_file` served by the client, and a missing file (`-32002`).
pub async fn fs_read(conn: &ClientConnection, session: &SessionId, client: &super::TestClient) {
    client.files.lock().unwrap().insert("/project/notes.txt".into(), "hello from the client".into());
    let (texts, _) = run_turn(conn, session, "read /project/notes.txt").await;
    assert_eq!(texts, ["hello from the client"]);
    let (texts, _) = run_turn(conn, session, "read /project/missing.txt").await;
    assert!(texts[0].starts_with("error:") && texts[0].contains("-32002"), "{texts:?}");
}

/// A client that did not advertise `fs.readTextFile`: the agent's read is refused locally.
pub async fn fs_refused_locally(conn: &ClientConnection) {
    conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await.expect("initialize");
    let session = conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("session").session_id;
    let (texts, _) = run_turn(conn, &session, "read /etc/hostname").await;
    assert!(texts[0].starts_with("error:") && texts[0].contains("fs.readTextFile"), "{texts:?}");
    let (texts, _) = run_turn(conn, &session, "terminal echo hi").await;
    assert!(texts[0].starts_with("error:") && texts[0].contains("terminal"), "{texts:?}");
}

/// `session/cancel` mid-turn: the agent's handler sees its token fire (`SessionCancelled`, when
/// the agent runs in this process and reports to `observed`), and the turn ends `cancelled`
/// after the update sent before.
pub async fn cancel_mid_turn(
    conn: &ClientConnection,
    session: &SessionId,
    observed: Option<&mut UnboundedReceiver<String>>,
) {
    let mut turn = conn.prompt(prompt(session, "wait")).await.expect("prompt accepted");
    let first = turn.next_update().await.expect("the first update");
    assert_eq!(chunk_text(&first), Some("waiting"));
    conn.cancel(session).await.expect("session/cancel sent");
    assert!(turn.next_update().await.is_none(), "no update after the cancellation");
    assert_eq!(turn.finish().await.expect("stop reason"), StopReason::Cancelled);
    if let Some(observed) = observed {
        expect_observed(observed, "cancelled prompt Some(SessionCancelled)").await;
    }
    // The session takes a new turn afterwards.
    assert_eq!(run_turn(conn, session, "storm 2").await, (storm_texts(2), StopReason::EndTurn));
}

/// Dropping a pending request's future sends `$/cancel_request`: the agent's handler sees it.
pub async fn dropped_request_cancels(conn: &ClientConnection, observed: &mut UnboundedReceiver<String>) {
    let mut call = Box::pin(conn.ext_method("_wait", json!({})));
    let started = std::future::poll_fn(|cx| {
        assert!(call.as_mut().poll(cx).is_pending(), "_wait answers only when cancelled");
        observed.poll_recv(cx)
    })
    .await;
    assert_eq!(started.as_deref(), Some("started _wait"));
    drop(call);
    expect_observed(observed, "cancelled _wait Some(CancelRequest)").await;
    // The connection carries on.
    assert_eq!(conn.ext_method("_echo", json!({"x": 1})).await.expect("_echo"), json!({"x": 1}));
}

/// A request whose deadline passes resolves `TimedOut`, and the agent is told to stop.
pub async fn request_timeout(conn: &ClientConnection, observed: &mut UnboundedReceiver<String>, timeout: Duration) {
    let result = conn.with_timeout(timeout).ext_method("_wait", json!({})).await;
    assert!(matches!(result, Err(Error::TimedOut)), "{result:?}");
    expect_observed(observed, "started _wait").await;
    expect_observed(observed, "cancelled _wait Some(CancelRequest)").await;
}

/// A panicking handler answers `-32603` for its request only; the connection lives on.
pub async fn panic_isolated(conn: &ClientConnection, session: &SessionId) {
    let turn = conn.prompt(prompt(session, "panic")).await.expect("prompt accepted");
    match turn.finish().await {
        Err(Error::Rpc(e)) => assert_eq!(e.code, ErrorCode::INTERNAL_ERROR),
        other => panic!("expected -32603, got {other:?}"),
    }
    match conn.ext_method("_panic", json!(null)).await {
        Err(Error::Rpc(e)) => assert_eq!(e.code, ErrorCode::INTERNAL_ERROR),
        other => panic!("expected -32603, got {other:?}"),
    }
    assert_eq!(run_turn(conn, session, "storm 3").await, (storm_texts(3), StopReason::EndTurn));
    assert_eq!(conn.ext_method("_echo", json!([1, 2])).await.expect("_echo"), json!([1, 2]));
}

/// An update outside any turn goes to `Client::session_update`.
pub async fn update_outside_turn(conn: &ClientConnection, session: &SessionId, events: &mut UnboundedReceiver<String>) {
    let params = json!({"sessionId": session.as_str(), "text": "announced"});
    conn.ext_method("_announce", params).await.expect("_announce");
    expect_observed(events, "outside-turn update Some(\"announced\")").await;
}

/// `n` sessions with a turn each, all at once: every turn gets exactly its own updates, in
/// order.
pub async fn concurrent_sessions(conn: &ClientConnection, n: usize) {
    let mut sessions = Vec::new();
    for _ in 0..n {
        sessions.push(conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("session").session_id);
    }
    let turns: Vec<BoxedFuture<'_, _>> =
        sessions.iter().map(|s| Box::pin(run_turn(conn, s, "storm 25")) as BoxedFuture<'_, _>).collect();
    for result in join_all(turns).await {
        assert_eq!(result, (storm_texts(25), StopReason::EndTurn));
    }
}

/// The update storm: `n` updates through one turn, consumed as they come. Returns how many
/// arrived; the caller checks memory.
pub async fn storm(conn: &ClientConnection, n: u64, mut sample: impl FnMut()) -> u64 {
    let session = handshake(conn).await;
    let mut turn = conn.prompt(prompt(&session, &format!("storm {n}"))).await.expect("prompt accepted");
    let mut count = 0u64;
    while let Some(update) = turn.next_update().await {
        assert_eq!(chunk_text(&update), Some(storm_text(count).as_str()));
        count += 1;
        if count.is_multiple_of(1000) {
            sample();
        }
    }
    assert_eq!(turn.finish().await.expect("stop reason"), StopReason::EndTurn);
    count
}

/// The client the remote transports' suite runs with: it allows permission asks and serves
/// `/tmp/remote.txt`; with the receiver of its events.
pub fn remote_client() -> (super::TestClient, UnboundedReceiver<String>) {
    let (client, events) = super::TestClient::with_events();
    let client = super::TestClient { permission: Some("allow"), ..client };
    client.files.lock().unwrap().insert("/tmp/remote.txt".into(), "remote content".into());
    (client, events)
}

/// The suite each remote transport (WebSocket, Streamable HTTP) runs over one connection of
/// a [`remote_client`].
pub async fn remote_suite(conn: &ClientConnection, client: &super::TestClient, events: &mut UnboundedReceiver<String>) {
    let session = handshake_and_sessions(conn).await;
    prompt_stream(conn, &session).await;
    permission_granted(conn, &session, events).await;
    fs_read(conn, &session, client).await;
    cancel_mid_turn(conn, &session, None).await;
    panic_isolated(conn, &session).await;
    concurrent_sessions(conn, 16).await;
}
