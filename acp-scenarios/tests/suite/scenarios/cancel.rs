//! Cancellation both ways, and request timeouts.

use std::time::Duration;

use acp_tokio::Error;
use acp_tokio::acp_proto::SendError;
use serde_json::json;

use super::{expect_report, ready, run_turn, storm_texts, wait_started};
use crate::conn::{Conn, Stop, Turn};
use crate::rig::{Limits, Runtime, sleep};
use acp_scenarios::TestClient;

/// The client cancels a turn mid-stream (`session/cancel`): the agent's turn is told
/// (`Conn::PROMPT_CANCELLED`), no update follows, the turn ends `cancelled`, and the session
/// takes a new turn. While the turn ran, a second prompt of its session was refused locally.
pub(crate) async fn client_cancels_a_turn_mid_stream<R: Runtime>(runtime: &R) {
    cancels_a_turn_mid_stream(runtime, false).await;
}

/// [`client_cancels_a_turn_mid_stream`] with `session/cancel` sent as a notification (`notify`)
/// instead of the `cancel` call: the same turn rules run (the core's), on both versions.
pub(crate) async fn client_notifies_a_cancel_mid_stream<R: Runtime>(runtime: &R) {
    cancels_a_turn_mid_stream(runtime, true).await;
}

/// The two scenarios above: `notified`, the cancel is sent with `notify`.
async fn cancels_a_turn_mid_stream<R: Runtime>(runtime: &R, notified: bool) {
    let (mut connected, session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let conn = &connected.conn;
    let mut turn = conn.prompt(&session, "wait").await.expect("prompt accepted");
    assert_eq!(turn.next_update().await.as_deref(), Some("waiting"));
    let second = conn.prompt(&session, "again").await.map(drop);
    assert!(matches!(second, Err(Error::Send(SendError::TurnAlreadyRunning(_)))), "{second:?}");
    let cancelled = if notified { conn.notify_cancel(&session).await } else { conn.cancel(&session).await };
    cancelled.expect("session/cancel sent");
    assert!(turn.next_update().await.is_none(), "no update after the cancellation");
    assert_eq!(turn.finish().await.expect("stop reason"), Stop::Cancelled);
    expect_report(&mut connected.observed, R::Conn::PROMPT_CANCELLED).await;
    assert_eq!(run_turn(&connected.conn, &session, "storm 2").await, (storm_texts(2), Stop::EndTurn));
}

/// A dropped turn cancels on the agent side (`Conn::PROMPT_CANCELLED`), and the
/// session then takes a new turn (once the agent has answered the old one: until then the
/// client refuses a second turn of the session, so the new prompt is retried).
pub(crate) async fn dropped_turn_cancels_on_the_agent<R: Runtime>(runtime: &R) {
    let (mut connected, session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let mut turn = connected.conn.prompt(&session, "wait").await.expect("prompt accepted");
    assert_eq!(turn.next_update().await.as_deref(), Some("waiting"));
    drop(turn);
    expect_report(&mut connected.observed, R::Conn::PROMPT_CANCELLED).await;
    let mut next = loop {
        match connected.conn.prompt(&session, "after").await {
            Ok(turn) => break turn,
            Err(Error::Send(SendError::TurnAlreadyRunning(_))) => sleep(Duration::from_millis(5)).await,
            Err(e) => panic!("the dropped turn was not cancelled: {e}"),
        }
    };
    assert_eq!(next.next_update().await.as_deref(), Some("after"));
    assert_eq!(next.finish().await.expect("stop reason"), Stop::EndTurn);
}

/// A dropped request future cancels on the agent side (`$/cancel_request`: its handler sees
/// `CancelRequest`), and the connection carries on.
///
/// Async clients only: a blocking call cannot be abandoned by its caller (the blocking runtime
/// covers the same wire path with `request_timeout_cancels_on_the_agent` and a dropped turn).
pub(crate) async fn dropped_request_cancels_on_the_agent<R: Runtime>(runtime: &R) {
    let (mut connected, _session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let mut call = Box::pin(connected.conn.ext_method("_wait", json!({})));
    wait_started(&mut call, &mut connected.observed).await;
    drop(call);
    expect_report(&mut connected.observed, "cancelled _wait Some(CancelRequest)").await;
    assert_eq!(connected.conn.ext_method("_echo", json!({"x": 1})).await.expect("_echo"), json!({"x": 1}));
}

/// Extension notifications reach the agent's handler, in the order sent, and the connection
/// carries on.
pub(crate) async fn extension_notifications_reach_the_agent_in_order<R: Runtime>(runtime: &R) {
    let (mut connected, _session) = ready(runtime, TestClient::default(), Limits::Default).await;
    for n in 1..=3 {
        connected.conn.ext_notification("_note", json!({"n": n})).await.expect("sent");
    }
    for n in 1..=3 {
        expect_report(&mut connected.observed, &format!("notification _note {{\"n\":{n}}}")).await;
    }
    assert_eq!(connected.conn.ext_method("_echo", json!(3)).await.expect("_echo"), json!(3));
}

/// A request whose deadline passes ends `TimedOut`, and the agent is told to stop (its handler
/// sees `CancelRequest`); the connection carries on.
pub(crate) async fn request_timeout_cancels_on_the_agent<R: Runtime>(runtime: &R) {
    let (mut connected, _session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let result = connected.conn.ext_method_within(Duration::from_millis(200), "_wait", json!({})).await;
    assert!(matches!(result, Err(Error::TimedOut)), "{result:?}");
    expect_report(&mut connected.observed, "started _wait").await;
    expect_report(&mut connected.observed, "cancelled _wait Some(CancelRequest)").await;
    assert_eq!(connected.conn.ext_method("_echo", json!(7)).await.expect("_echo"), json!(7));
}

/// The agent cancels its own request to the client: the deadline of its `_wait` call to the
/// client passes, the agent's call ends `TimedOut`, and the client's handler sees its token
/// fire (`CancelRequest`: the agent sent `$/cancel_request`).
pub(crate) async fn agent_cancels_its_request_to_the_client<R: Runtime>(runtime: &R) {
    let (mut connected, _session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let answer = connected.conn.ext_method("_ask_client", json!({"ms": 200})).await.expect("_ask_client");
    assert_eq!(answer, json!("timed out"));
    expect_report(&mut connected.events, "client started _wait").await;
    expect_report(&mut connected.events, "client cancelled _wait Some(CancelRequest)").await;
}
