//! Flow: backpressure, the agent's death mid-turn, and the order of a turn's updates and the
//! agent's requests.

use std::sync::atomic::Ordering;
use std::time::Duration;

use acp_tokio::Error;
use serde_json::json;

use super::{ready, wait_started};
use crate::conn::{Conn, Stop, Turn};
use crate::rig::{Limits, Runtime, sleep};
use acp_scenarios::TestClient;
use acp_scenarios::echo::storm_text;

/// Backpressure: a storm of updates whose reader stops now and then stays bounded (the agent
/// stalls instead of running ahead into buffers) and arrives complete, in order.
///
/// With [`Limits::Small`], what the agent can have sent beyond what the reader took is what the
/// buffers hold: 64 updates in the client's queue, its 64 KiB read buffer, two 32 KiB socket
/// send buffers (doubled by the kernel) and the agent's 16 KiB budget: about 1 600 updates of
/// ~180 bytes. `AHEAD` allows three times that; without backpressure the agent would be done.
pub(crate) async fn backpressure_bounds_a_storm_read_slowly<R: Runtime>(runtime: &R) {
    const UPDATES: u64 = 20_000;
    const AHEAD: u64 = 5_000;
    let (connected, session) = ready(runtime, TestClient::default(), Limits::Small).await;
    let mut turn = connected.conn.prompt(&session, &format!("storm {UPDATES}")).await.expect("prompt");
    let mut taken = 0u64;
    let mut most_ahead = 0;
    while let Some(update) = turn.next_update().await {
        assert_eq!(update, storm_text(taken));
        taken += 1;
        if taken == 1 || taken == UPDATES / 2 {
            // The reader dawdles for a second (the passing case waits it out): time for an
            // agent without backpressure to run far ahead, even in a debug build.
            let mut ahead = 0;
            for _ in 0..100 {
                sleep(Duration::from_millis(10)).await;
                ahead = connected.sent.load(Ordering::SeqCst) - taken;
                assert!(ahead < AHEAD, "the agent ran {ahead} updates ahead of a reader at {taken}");
            }
            most_ahead = most_ahead.max(ahead);
        }
    }
    assert_eq!(turn.finish().await.expect("stop reason"), Stop::EndTurn);
    assert_eq!((taken, connected.sent.load(Ordering::SeqCst)), (UPDATES, UPDATES));
    assert!(most_ahead > 0, "the agent never got ahead: the pauses tested nothing");
    eprintln!("backpressure: the agent was at most {most_ahead} updates ahead of the reader");
}

/// Peer death: the agent's end of the transport dies mid-turn, with a request in flight (where
/// the agent takes extension requests: `_wait`). The turn ends (`ConnectionClosed`), so does
/// the request, later calls fail at once, and `close`
/// returns: nothing hangs.
pub(crate) async fn peer_death_mid_turn_ends_every_call<R: Runtime>(runtime: &R) {
    let (mut connected, session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let mut turn = connected.conn.prompt(&session, "wait").await.expect("prompt accepted");
    assert_eq!(turn.next_update().await.as_deref(), Some("waiting"));
    // A request in flight: `_wait`, held by the agent.
    let mut call = Box::pin(connected.conn.ext_method("_wait", json!({})));
    wait_started(&mut call, &mut connected.observed).await;

    connected.kill_agent();
    let call = call.await;
    assert!(matches!(call, Err(Error::ConnectionClosed)), "{call:?}");
    assert!(turn.next_update().await.is_none(), "no update after the agent died");
    let end = turn.finish().await;
    assert!(matches!(end, Err(Error::ConnectionClosed)), "{end:?}");
    let later = connected.conn.ext_method("_echo", json!(1)).await;
    assert!(matches!(later, Err(Error::ConnectionClosed)), "{later:?}");
    let later = connected.conn.new_session().await;
    assert!(matches!(later, Err(Error::ConnectionClosed)), "{later:?}");
    let next_turn = connected.conn.prompt(&session, "hello").await.map(drop);
    assert!(matches!(next_turn, Err(Error::ConnectionClosed)), "{next_turn:?}");
    connected.conn.close().await.expect("close");
}

/// Ordering: the agent sends update `u<i>`, then asks to read `/r<i>`, twenty times. The read
/// handler of `r<i>` may start only once the turn's reader has taken `u<i>` (with
/// `next_update`) or has handled it (with `next_update_then`), however long the reader takes.
/// Each check waits a little first, so that a handler started too early has run by then.
pub(crate) async fn agent_requests_follow_the_updates_sent_before_them<R: Runtime>(runtime: &R) {
    let (connected, session) = ready(runtime, TestClient::default(), Limits::Default).await;
    let reads = connected.client.reads.clone();
    let expected: Vec<String> = (0..20).map(|i| format!("/r{i}")).collect();

    let mut turn = connected.conn.prompt(&session, "interleave 20").await.expect("prompt");
    let mut taken = 0;
    loop {
        sleep(Duration::from_millis(3)).await;
        let ran = reads.lock().unwrap().clone();
        assert!(ran.len() <= taken, "reads {ran:?} ran before the reader took update u{taken}");
        let Some(update) = turn.next_update().await else { break };
        assert_eq!(update, format!("u{taken}"));
        taken += 1;
    }
    assert_eq!((taken, turn.finish().await.expect("stop reason")), (20, Stop::EndTurn));
    assert_eq!(*reads.lock().unwrap(), expected);

    reads.lock().unwrap().clear();
    let mut turn = connected.conn.prompt(&session, "interleave 20").await.expect("prompt");
    let mut handled = 0;
    loop {
        let log = reads.clone();
        let handle = move |update: String| {
            std::thread::sleep(Duration::from_millis(3));
            (update, log.lock().unwrap().len())
        };
        let Some((text, ran)) = turn.next_update_then(handle).await else { break };
        assert_eq!(text, format!("u{handled}"));
        assert!(ran <= handled, "{ran} reads ran while the reader still handled u{handled}");
        handled += 1;
    }
    assert_eq!((handled, turn.finish().await.expect("stop reason")), (20, Stop::EndTurn));
    assert_eq!(*reads.lock().unwrap(), expected);
}
