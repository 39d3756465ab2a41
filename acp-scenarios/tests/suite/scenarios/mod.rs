//! The scenarios, each an `async fn(&impl Runtime)`: it connects what it needs through the
//! runtime and speaks only [`Conn`]/[`Turn`], so one text runs on every runtime.

mod cancel;
mod flow;

pub(crate) use cancel::*;
pub(crate) use flow::*;

use acp_tokio::Error;
use std::future::Future;
use std::time::Duration;

use acp_tokio::acp_proto::{ErrorCode, SendError};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::conn::{Conn, Stop, Turn};
use crate::rig::{Connected, Limits, Runtime, guard};
use acp_scenarios::echo::storm_text;
use acp_scenarios::{BoxedFuture, TestClient, join_all};

/// A client connected through `runtime`, initialized (advertising `fs.readTextFile` and
/// `terminal`) with one session open.
async fn ready<R: Runtime>(runtime: &R, client: TestClient, limits: Limits) -> (Connected<R::Conn>, String) {
    let connected = runtime.connect(client, limits);
    connected.conn.initialize(true).await.expect("initialize");
    let session = connected.conn.new_session().await.expect("session/new");
    (connected, session)
}

/// The texts of a whole turn's chunk updates, and its stop reason.
async fn run_turn<C: Conn>(conn: &C, session: &str, text: &str) -> (Vec<String>, Stop) {
    let mut turn = conn.prompt(session, text).await.expect("prompt accepted");
    let mut texts = Vec::new();
    while let Some(update) = turn.next_update().await {
        texts.push(update);
    }
    (texts, turn.finish().await.expect("the stop reason"))
}

fn storm_texts(n: u64) -> Vec<String> {
    (0..n).map(storm_text).collect()
}

/// The next report is `what` (waited for up to 10 s, a hang guard: a missing report fails
/// there rather than at the scenario's guard).
async fn expect_report(reports: &mut UnboundedReceiver<String>, what: &str) {
    let report = guard(Duration::from_secs(10), &format!("the report {what:?}"), reports.recv()).await;
    assert_eq!(report.as_deref(), Some(what));
}

/// Waits until the agent reports `started _wait` for `call`, a `_wait` extension request,
/// polling `call` meanwhile (it must not answer: `_wait` answers only once cancelled).
async fn wait_started<F: Future + Unpin>(call: &mut F, observed: &mut UnboundedReceiver<String>) {
    let started = std::future::poll_fn(|cx| {
        assert!(std::pin::Pin::new(&mut *call).poll(cx).is_pending(), "_wait answers only when cancelled");
        observed.poll_recv(cx)
    })
    .await;
    assert_eq!(started.as_deref(), Some("started _wait"));
}

/// Handshake and sessions: nothing is negotiated (and `session/new` is refused locally) before
/// `initialize`; then the agent's version and info, and a fresh id per session.
pub(crate) async fn handshake_and_sessions<R: Runtime>(runtime: &R) {
    let Connected { conn, .. } = runtime.connect(TestClient::default(), Limits::Default);
    assert!(conn.negotiated_version().is_none(), "nothing is negotiated before initialize");
    let early = conn.new_session().await;
    assert!(matches!(early, Err(Error::Send(SendError::NotInitialized))), "{early:?}");
    let init = conn.initialize(true).await.expect("initialize");
    assert_eq!(init.version, R::Conn::VERSION);
    assert_eq!(init.name.as_deref(), Some("echo_agent"));
    assert_eq!(conn.negotiated_version(), Some(R::Conn::VERSION));
    let first = conn.new_session().await.expect("session/new");
    let second = conn.new_session().await.expect("session/new");
    assert_eq!((first.as_str(), second.as_str()), ("sess-0", "sess-1"));
    conn.close().await.expect("close");
}

/// Turns: a turn's updates arrive in order, then its stop reason; 16 sessions' turns at once
/// each get exactly their own.
pub(crate) async fn turns<R: Runtime>(runtime: &R) {
    let (Connected { conn, .. }, session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let mut turn = conn.prompt(&session, "storm 300").await.expect("prompt accepted");
    let mut texts = Vec::new();
    while let Some(update) = turn.next_update().await {
        texts.push(update);
    }
    assert_eq!(texts, storm_texts(300));
    assert_eq!(turn.finish().await.expect("stop reason"), Stop::EndTurn);
    assert_eq!(run_turn(&conn, &session, "hello agent").await, (vec!["hello agent".to_owned()], Stop::EndTurn));

    let mut sessions = Vec::new();
    for _ in 0..16 {
        sessions.push(conn.new_session().await.expect("session"));
    }
    let turns: Vec<BoxedFuture<'_, _>> =
        sessions.iter().map(|s| Box::pin(run_turn(&conn, s, "storm 25")) as BoxedFuture<'_, _>).collect();
    for result in join_all(turns).await {
        assert_eq!(result, (storm_texts(25), Stop::EndTurn));
    }
}

/// Permissions, granted: the client's handler answers, the agent reports the option chosen.
pub(crate) async fn permission_granted<R: Runtime>(runtime: &R) {
    let client = TestClient { permission: Some("allow"), ..TestClient::default() };
    let (mut connected, session) = ready(runtime, client, Limits::Default).await;
    let (texts, stop) = run_turn(&connected.conn, &session, "permission").await;
    assert_eq!((texts, stop), (vec!["permission: allow".to_owned()], Stop::EndTurn));
    expect_report(&mut connected.events, "permission asked call-1").await;
}

/// Permissions, cancelled by the turn's cancel while the client's handler waits: the ask is
/// answered `cancelled`, the handler's token fires (`TurnCancelled`), the agent reports the
/// outcome and the turn ends `cancelled`.
pub(crate) async fn permission_cancelled_by_the_turns_cancel<R: Runtime>(runtime: &R) {
    let (mut connected, session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let mut turn = connected.conn.prompt(&session, "permission").await.expect("prompt accepted");
    expect_report(&mut connected.events, "permission asked call-1").await;
    turn.cancel().await.expect("session/cancel sent");
    let update = turn.next_update().await.expect("the agent's report");
    assert_eq!(update, "permission: cancelled");
    assert_eq!(turn.finish().await.expect("stop reason"), Stop::Cancelled);
    expect_report(&mut connected.events, "permission cancelled Some(TurnCancelled)").await;
}

/// Handler panics: a panicking agent handler answers `-32603` for its request only (a prompt's,
/// and where the agent takes extension requests, `_panic`'s).
pub(crate) async fn handler_panic_is_isolated<R: Runtime>(runtime: &R) {
    let (Connected { conn, .. }, session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let turn = conn.prompt(&session, "panic").await.expect("prompt accepted");
    match turn.finish().await {
        Err(Error::Rpc(e)) => assert_eq!(e.code, ErrorCode::INTERNAL_ERROR),
        other => panic!("expected -32603, got {other:?}"),
    }
    match conn.ext_method("_panic", json!(null)).await {
        Err(Error::Rpc(e)) => assert_eq!(e.code, ErrorCode::INTERNAL_ERROR),
        other => panic!("expected -32603, got {other:?}"),
    }
    assert_eq!(run_turn(&conn, &session, "storm 3").await, (storm_texts(3), Stop::EndTurn));
    assert_eq!(conn.ext_method("_echo", json!([1, 2])).await.expect("_echo"), json!([1, 2]));
}

/// The client's services: a file read (and a missing file, `-32002`), a terminal, and an
/// update outside any turn reaching the client's handler.
pub(crate) async fn client_services<R: Runtime>(runtime: &R) {
    let (mut connected, session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let conn = &connected.conn;
    connected.client.files.lock().unwrap().insert("/notes.txt".into(), "hello from the client".into());
    assert_eq!(run_turn(conn, &session, "read /notes.txt").await.0, ["hello from the client"]);
    let (texts, _) = run_turn(conn, &session, "read /missing.txt").await;
    assert!(texts[0].starts_with("error:") && texts[0].contains("-32002"), "{texts:?}");
    let (texts, _) = run_turn(conn, &session, "terminal echo from a terminal").await;
    assert_eq!(texts, ["from a terminal\n"]);
    let params = json!({"sessionId": session, "text": "announced"});
    conn.ext_method("_announce", params).await.expect("_announce");
    expect_report(&mut connected.events, "outside-turn update Some(\"announced\")").await;
}

/// Capabilities the client did not advertise: the agent's file read and terminal are refused
/// on the agent's side, before anything is sent.
pub(crate) async fn unadvertised_capabilities_are_refused_locally<R: Runtime>(runtime: &R) {
    let Connected { conn, client, .. } = runtime.connect(TestClient::default(), Limits::Default);
    conn.initialize(false).await.expect("initialize");
    let session = conn.new_session().await.expect("session");
    let (texts, _) = run_turn(&conn, &session, "read /etc/hostname").await;
    assert!(texts[0].starts_with("error:") && texts[0].contains("fs.readTextFile"), "{texts:?}");
    let (texts, _) = run_turn(&conn, &session, "terminal echo hi").await;
    assert!(texts[0].starts_with("error:") && texts[0].contains("terminal"), "{texts:?}");
    assert!(client.reads.lock().unwrap().is_empty(), "the client's handler was not asked");
}
