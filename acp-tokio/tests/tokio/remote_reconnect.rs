//! The resuming clients (features `ws`, `http` and `unstable_resumable_transport`; issue 32
//! §2): `connect_ws` with `WsClientOptions::reconnect` and `connect_http` with
//! `HttpClientOptions::reconnect`, each test run over both, through a TCP relay that cuts every
//! connection it carries when told to. A turn cut three times delivers what an uncut one does,
//! once each and in order; an answer the client sent into a dying socket is sent again (a
//! WebSocket's: a POST is never sent twice); a connection the server no longer has ends the
//! client's with a reported failure; a server that does not resume ends the connection at the
//! first cut, as before.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use acp_tokio::ClientConnection;
use acp_tokio::acp_proto::types::*;
use acp_tokio::remote::{
    HttpClientOptions, LinkEvent, Reconnect, Resumable, WsClientOptions, WsServerOptions, connect_http, connect_ws,
};
use common::TestClient;
use common::raw_http::server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc, watch};

/// Which client a test runs.
#[derive(Debug, Clone, Copy)]
enum Via {
    WebSocket,
    Http,
}

impl Via {
    /// `client` connected through `relay`, resuming as `reconnect` says.
    async fn connect(self, client: TestClient, relay: &Relay, reconnect: Reconnect) -> ClientConnection {
        let reconnect = Some(reconnect);
        match self {
            Via::WebSocket => {
                let options = WsClientOptions { reconnect, ..WsClientOptions::default() };
                connect_ws(client, &format!("ws://{}/acp", relay.addr), options).await.expect("connect").0
            }
            Via::Http => {
                let options = HttpClientOptions { reconnect, ..HttpClientOptions::default() };
                connect_http(client, &format!("http://{}/acp", relay.addr), options).await.expect("connect").0
            }
        }
    }

    /// The streams a cut loses: the socket, or the connection's and the session's SSE streams.
    fn streams(self) -> usize {
        match self {
            Via::WebSocket => 1,
            Via::Http => 2,
        }
    }
}

/// Resuming options that report on the channel returned.
fn resuming(first_backoff: Duration) -> (Reconnect, mpsc::Receiver<LinkEvent>) {
    let (events, reported) = mpsc::channel(64);
    (Reconnect { first_backoff, events: Some(events), ..Reconnect::default() }, reported)
}

/// A TCP relay to a server: [`Relay::cut`] closes every connection it carries; with
/// [`Relay::swallow`] set, what the client sends is read and dropped (a socket dying on the
/// client's side of the network), and [`Relay::swallowed`] told. With [`Relay::window`] set,
/// it holds the server's bytes back while more than that many updates it forwarded are not
/// yet consumed (as [`Relay::consumed`] says): a path with a bounded window, so that the
/// server cannot run ahead of a slow client into the sockets' buffers (on loopback they grow
/// to megabytes, and a whole turn would be in them before a cut).
struct Relay {
    /// Where the relay listens (`host:port`).
    addr: String,
    cuts: watch::Sender<u64>,
    swallow: Arc<AtomicBool>,
    swallowed: Arc<Notify>,
    window: Arc<AtomicUsize>,
    consumed: Arc<AtomicUsize>,
    forwarded: Arc<AtomicUsize>,
}

/// The bytes that begin an update of the storm on the wire.
const UPDATE_MARK: &[u8] = b"agent_message_chunk";

impl Relay {
    async fn to(addr: &str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let relay_addr = listener.local_addr().expect("addr").to_string();
        let (cuts, cut) = watch::channel(0);
        let swallow = Arc::new(AtomicBool::new(false));
        let swallowed = Arc::new(Notify::new());
        let (window, consumed, forwarded): (Arc<AtomicUsize>, Arc<AtomicUsize>, Arc<AtomicUsize>) = Default::default();
        let (addr, swallowing, told) = (addr.to_owned(), swallow.clone(), swallowed.clone());
        let paced = (window.clone(), Arc::clone(&consumed), Arc::clone(&forwarded));
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = TcpStream::connect(&addr).await.expect("the server");
                let mut cut = cut.clone();
                cut.borrow_and_update();
                let (swallowing, told) = (swallowing.clone(), told.clone());
                let (window, consumed, forwarded) = (paced.0.clone(), paced.1.clone(), paced.2.clone());
                tokio::spawn(async move {
                    let (mut client_read, mut client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    let up = async {
                        let mut buf = vec![0; 16 << 10];
                        while let Ok(n @ 1..) = client_read.read(&mut buf).await {
                            if swallowing.load(Ordering::SeqCst) {
                                told.notify_one();
                            } else if server_write.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    };
                    let down = async {
                        let mut buf = vec![0; 4 << 10];
                        loop {
                            let open = || {
                                let window = window.load(Ordering::SeqCst);
                                window == 0
                                    || forwarded.load(Ordering::SeqCst) < consumed.load(Ordering::SeqCst) + window
                            };
                            while !open() {
                                tokio::time::sleep(Duration::from_millis(1)).await;
                            }
                            let Ok(n @ 1..) = server_read.read(&mut buf).await else { return };
                            let updates = buf[..n].windows(UPDATE_MARK.len()).filter(|w| *w == UPDATE_MARK).count();
                            forwarded.fetch_add(updates, Ordering::SeqCst);
                            if client_write.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    };
                    tokio::select! {
                        _ = up => {}
                        _ = down => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Relay { addr: relay_addr, cuts, swallow, swallowed, window, consumed, forwarded }
    }

    /// Closes every connection open now; later ones are relayed (and no longer swallowed).
    fn cut(&self) {
        self.swallow.store(false, Ordering::SeqCst);
        // What was on its way is lost; the resumed stream sends it again.
        self.forwarded.store(self.consumed.load(Ordering::SeqCst), Ordering::SeqCst);
        self.cuts.send_modify(|n| *n += 1);
    }
}

/// What was reported so far.
fn reported(events: &mut mpsc::Receiver<LinkEvent>) -> Vec<LinkEvent> {
    std::iter::from_fn(|| events.try_recv().ok()).collect()
}

async fn open_session(conn: &ClientConnection) -> SessionId {
    conn.initialize(common::init_with_caps()).await.expect("initialize");
    conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("session/new").session_id
}

/// Runs `storm 3000` on `session`, cutting the relay three times during it (at the 300th,
/// 1200th and 2200th update the handler sees, or later: each once the `streams` the last cut
/// lost were resumed, as `events` tell); the updates' texts, the stop reason, and what was
/// reported.
async fn storm_cut_three_times(
    conn: &ClientConnection,
    session: &SessionId,
    relay: &Relay,
    events: &mut mpsc::Receiver<LinkEvent>,
    streams: usize,
) -> (Vec<String>, StopReason, Vec<LinkEvent>) {
    let (mut texts, mut seen, mut cuts) = (Vec::new(), Vec::new(), 0);
    relay.window.store(64, Ordering::SeqCst);
    let stop = conn
        .prompt_with(common::prompt(session, "storm 3000"), |update| {
            texts.push(common::chunk_text(&update).expect("a chunk").to_owned());
            relay.consumed.store(texts.len(), Ordering::SeqCst);
            seen.extend(reported(events));
            let lost = seen.iter().filter(|e| matches!(e, LinkEvent::Lost { .. })).count();
            let resumed = seen.iter().filter(|e| matches!(e, LinkEvent::Resumed { .. })).count();
            let settled = lost >= cuts * streams && lost == resumed;
            if settled && [300, 1200, 2200].get(cuts).is_some_and(|at| texts.len() >= *at) {
                relay.cut();
                cuts += 1;
            }
        })
        .await
        .expect("the turn survives the cuts");
    relay.window.store(0, Ordering::SeqCst);
    assert_eq!(cuts, 3, "three cuts during the turn: {seen:?}");
    // What the last cut lost may have been on its way already: its resume can end after the
    // turn.
    let settled = async {
        loop {
            seen.extend(reported(events));
            let lost = seen.iter().filter(|e| matches!(e, LinkEvent::Lost { .. })).count();
            if lost == seen.len() - lost {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), settled).await.expect("every lost stream resumed");
    (texts, stop, seen)
}

/// The turn of [`storm_cut_three_times`] without cuts.
async fn storm_uncut(conn: &ClientConnection) -> Vec<String> {
    let session = open_session(conn).await;
    let (texts, stop) = common::scenarios::run_turn(conn, &session, "storm 3000").await;
    assert_eq!(stop, StopReason::EndTurn);
    texts
}

/// Every stream lost was resumed, at least `times` times, and some mid-stream (a cursor
/// before the turn's last update: this server's cursors count its messages).
fn resumed_mid_turn(seen: &[LinkEvent], times: usize) {
    let lost = seen.iter().filter(|e| matches!(e, LinkEvent::Lost { .. })).count();
    let resumed: Vec<u64> = seen
        .iter()
        .filter_map(|e| match e {
            LinkEvent::Resumed { cursor, .. } => Some(cursor.parse().expect("this server's cursors count")),
            _ => None,
        })
        .collect();
    assert!(lost >= times && lost == resumed.len(), "{seen:?}");
    assert!(resumed.iter().any(|c| (2..3000).contains(c)), "{seen:?}");
}

async fn a_turn_cut_three_times_delivers_every_update_once_in_order_as_an_uncut_one_does(via: Via) {
    let server = server(WsServerOptions::default()).await;
    let relay = Relay::to(&server.addr).await;
    let (reconnect, mut events) = resuming(Duration::from_millis(20));
    let conn = via.connect(TestClient::default(), &relay, reconnect.clone()).await;
    let session = open_session(&conn).await;
    // The server's sockets keep little unsent (`TCP_NOTSENT_LOWAT`): what the relay's window
    // holds back stays in the server's stream, within its default ring. Without that, a resume
    // after the second cut asked for a cursor the ring had dropped, and the turn stalled.
    let storm = storm_cut_three_times(&conn, &session, &relay, &mut events, via.streams());
    let (cut, stop, seen) = tokio::time::timeout(Duration::from_secs(60), storm).await.expect("the cut turn ends");
    let plain = via.connect(TestClient::default(), &relay, reconnect).await;
    let uncut = storm_uncut(&plain).await;
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(cut.len(), 3000);
    assert_eq!(cut, uncut, "the cut turn renders as the uncut one");
    resumed_mid_turn(&seen, 3 * via.streams());
    // The connection is still the same one after the cuts.
    let again = common::scenarios::run_turn(&conn, &session, "after the cuts").await;
    assert_eq!(again, (vec!["after the cuts".to_owned()], StopReason::EndTurn));
    conn.close().await.expect("close");
}

#[tokio::test]
async fn a_websocket_turn_cut_three_times_delivers_every_update_once_in_order_as_an_uncut_one_does() {
    a_turn_cut_three_times_delivers_every_update_once_in_order_as_an_uncut_one_does(Via::WebSocket).await;
}

#[tokio::test]
async fn a_streamable_http_turn_cut_three_times_delivers_every_update_once_in_order_as_an_uncut_one_does() {
    a_turn_cut_three_times_delivers_every_update_once_in_order_as_an_uncut_one_does(Via::Http).await;
}

#[tokio::test]
async fn an_answer_sent_into_a_dying_socket_is_sent_again_on_the_next() {
    let server = server(WsServerOptions::default()).await;
    let relay = Relay::to(&server.addr).await;
    let (reconnect, mut events) = resuming(Duration::from_millis(20));
    let client = TestClient::default();
    client.files.lock().unwrap().extend((0..10).map(|i| (format!("/r{i}"), format!("file {i}"))));
    let conn = Via::WebSocket.connect(client.clone(), &relay, reconnect).await;
    let session = open_session(&conn).await;
    let swallow = relay.swallow.clone();
    let turn = conn.prompt_with(common::prompt(&session, "interleave 10"), |update| {
        // From `u3` on, what the client sends goes nowhere: its answer to `/r3` is lost with
        // the socket, which is cut once the relay swallowed it.
        if common::chunk_text(&update) == Some("u3") {
            swallow.store(true, Ordering::SeqCst);
        }
    });
    let cutter = async {
        relay.swallowed.notified().await;
        relay.cut();
    };
    let both = async { tokio::join!(turn, cutter) };
    let (stop, ()) = tokio::time::timeout(Duration::from_secs(30), both).await.expect("the turn ends");
    assert_eq!(stop.expect("the turn"), StopReason::EndTurn);
    let reads = client.reads.lock().unwrap().clone();
    assert_eq!(reads, (0..10).map(|i| format!("/r{i}")).collect::<Vec<_>>(), "each read handled once");
    let events = reported(&mut events);
    assert!(
        events.iter().any(|e| matches!(e, LinkEvent::Resumed { resent, .. } if *resent >= 1)),
        "the lost answer was sent again: {events:?}"
    );
}

/// A turn waiting when the relay is cut; what the client's connection ends with, and what
/// was reported.
async fn cut_while_waiting(via: Via, resumable: Option<Resumable>, first_backoff: Duration) -> Vec<LinkEvent> {
    let server = server(WsServerOptions { resumable, ..WsServerOptions::default() }).await;
    let relay = Relay::to(&server.addr).await;
    let (reconnect, mut events) = resuming(first_backoff);
    let conn = via.connect(TestClient::default(), &relay, reconnect).await;
    let session = open_session(&conn).await;
    let turn = conn.prompt_with(common::prompt(&session, "wait"), |_| relay.cut());
    let ended = tokio::time::timeout(Duration::from_secs(30), turn).await.expect("the turn ends");
    assert!(ended.is_err(), "the peer is gone: {ended:?}");
    reported(&mut events)
}

async fn a_connection_the_server_no_longer_has_ends_the_clients_with_a_reported_failure(via: Via) {
    // The first try waits 0.5–1 s: the grace period is over by then.
    let resumable = Resumable { grace: Duration::from_millis(50), ..Resumable::default() };
    let events = cut_while_waiting(via, Some(resumable), Duration::from_secs(1)).await;
    assert!(matches!(events.first(), Some(LinkEvent::Lost { .. })), "{events:?}");
    let failed = |e: &LinkEvent| matches!(e, LinkEvent::Failed { reason } if reason.contains("404"));
    assert!(events.iter().any(failed), "{events:?}");
}

#[tokio::test]
async fn a_websocket_connection_the_server_no_longer_has_ends_the_clients_with_a_reported_failure() {
    a_connection_the_server_no_longer_has_ends_the_clients_with_a_reported_failure(Via::WebSocket).await;
}

#[tokio::test]
async fn a_streamable_http_connection_the_server_no_longer_has_ends_the_clients_with_a_reported_failure() {
    a_connection_the_server_no_longer_has_ends_the_clients_with_a_reported_failure(Via::Http).await;
}

#[tokio::test]
async fn a_server_that_does_not_resume_ends_the_connection_at_the_first_cut() {
    for via in [Via::WebSocket, Via::Http] {
        let events = cut_while_waiting(via, None, Duration::from_millis(20)).await;
        assert_eq!(events, [], "{via:?}: nothing to resume, nothing reported");
    }
}

async fn a_resume_reports_the_turn_still_running(via: Via) {
    let server = server(WsServerOptions::default()).await;
    let relay = Relay::to(&server.addr).await;
    let (reconnect, mut events) = resuming(Duration::from_millis(20));
    let conn = via.connect(TestClient::default(), &relay, reconnect).await;
    let session = open_session(&conn).await;
    let mut turn = conn.prompt(common::prompt(&session, "wait")).await.expect("the prompt");
    turn.next_update().await.expect("the turn's first update");
    relay.cut();
    let resumed = async {
        loop {
            for event in reported(&mut events) {
                if let LinkEvent::Resumed { turns, .. } = event
                    && let Some(turn) = turns.into_iter().find(|t| t.session == session.to_string())
                {
                    return turn;
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let turn_state = tokio::time::timeout(Duration::from_secs(20), resumed).await.expect("a resume naming the session");
    assert_eq!(turn_state.state, "running", "{turn_state:?}");
    assert!(turn_state.prompt_request_id.is_some(), "{turn_state:?}");
    turn.cancel().await.expect("cancel");
    let stop = tokio::time::timeout(Duration::from_secs(20), turn.finish()).await.expect("the turn ends");
    assert_eq!(stop.expect("the answer"), StopReason::Cancelled);
}

#[tokio::test]
async fn a_websocket_resume_reports_the_turn_still_running() {
    a_resume_reports_the_turn_still_running(Via::WebSocket).await;
}

#[tokio::test]
async fn a_streamable_http_resume_reports_the_turn_still_running() {
    a_resume_reports_the_turn_still_running(Via::Http).await;
}
