//! The resuming WebSocket client (features `ws` and `unstable_resumable_transport`; issue 32
//! §2): `connect_ws` with `WsClientOptions::reconnect`, through a TCP relay that cuts every
//! connection it carries when told to. A turn cut three times delivers what an uncut one does,
//! once each and in order; an answer the client sent into a dying socket is sent again; a
//! connection the server no longer has ends the client's with a reported failure; a server
//! that does not resume ends the connection at the first cut, as before.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use acp_tokio::acp_proto::types::*;
use acp_tokio::remote::{LinkEvent, Reconnect, Resumable, WsClientOptions, WsServerOptions, connect_ws};
use common::TestClient;
use common::raw_http::server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc, watch};

/// A TCP relay to a server: [`Relay::cut`] closes every connection it carries; with
/// [`Relay::swallow`] set, what the client sends is read and dropped (a socket dying on the
/// client's side of the network), and [`Relay::swallowed`] told.
struct Relay {
    url: String,
    cuts: watch::Sender<u64>,
    swallow: Arc<AtomicBool>,
    swallowed: Arc<Notify>,
}

impl Relay {
    async fn to(addr: &str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("ws://{}/acp", listener.local_addr().expect("addr"));
        let (cuts, cut) = watch::channel(0);
        let swallow = Arc::new(AtomicBool::new(false));
        let swallowed = Arc::new(Notify::new());
        let (addr, swallowing, told) = (addr.to_owned(), swallow.clone(), swallowed.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = TcpStream::connect(&addr).await.expect("the server");
                let mut cut = cut.clone();
                cut.borrow_and_update();
                let (swallowing, told) = (swallowing.clone(), told.clone());
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
                    let down = tokio::io::copy(&mut server_read, &mut client_write);
                    tokio::select! {
                        _ = up => {}
                        _ = down => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Relay { url, cuts, swallow, swallowed }
    }

    /// Closes every connection open now; later ones are relayed (and no longer swallowed).
    fn cut(&self) {
        self.swallow.store(false, Ordering::SeqCst);
        self.cuts.send_modify(|n| *n += 1);
    }
}

/// Options that resume, reporting on the channel returned.
fn resuming(first_backoff: Duration) -> (WsClientOptions, mpsc::Receiver<LinkEvent>) {
    let (events, reported) = mpsc::channel(64);
    let reconnect = Reconnect { first_backoff, events: Some(events), ..Reconnect::default() };
    (WsClientOptions { reconnect: Some(reconnect), ..WsClientOptions::default() }, reported)
}

/// What was reported so far.
fn reported(events: &mut mpsc::Receiver<LinkEvent>) -> Vec<LinkEvent> {
    std::iter::from_fn(|| events.try_recv().ok()).collect()
}

async fn open_session(conn: &acp_tokio::ClientConnection) -> SessionId {
    conn.initialize(common::init_with_caps()).await.expect("initialize");
    conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("session/new").session_id
}

#[tokio::test]
async fn a_turn_cut_three_times_delivers_every_update_once_in_order_as_an_uncut_one_does() {
    let server = server(WsServerOptions::default()).await;
    let relay = Relay::to(&server.addr).await;
    let (options, mut events) = resuming(Duration::from_millis(20));
    let (conn, _) = connect_ws(TestClient::default(), &relay.url, options.clone()).await.expect("connect");
    let session = open_session(&conn).await;
    let (mut cut, mut seen) = (Vec::new(), Vec::new());
    let stop = conn
        .prompt_with(common::prompt(&session, "storm 3000"), |update| {
            cut.push(common::chunk_text(&update).expect("a chunk").to_owned());
            // The next cut once past its update and once the last one was resumed (the updates
            // already on their way reach the handler after the socket is gone).
            seen.extend(reported(&mut events));
            let cuts = seen.iter().filter(|e| **e == LinkEvent::Lost { reason: "cut".into() }).count();
            let resumed = seen.iter().filter(|e| matches!(e, LinkEvent::Resumed { .. })).count();
            if cuts == resumed && [300, 1200, 2200].get(cuts).is_some_and(|at| cut.len() >= *at) {
                relay.cut();
                // Counted as a loss from now on, before the link reports it.
                seen.push(LinkEvent::Lost { reason: "cut".into() });
            }
        })
        .await
        .expect("the turn survives the cuts");
    let (plain, _) = connect_ws(TestClient::default(), &relay.url, options).await.expect("connect");
    let plain_session = open_session(&plain).await;
    let (uncut, plain_stop) = common::scenarios::run_turn(&plain, &plain_session, "storm 3000").await;
    assert_eq!((stop, plain_stop), (StopReason::EndTurn, StopReason::EndTurn));
    assert_eq!(cut.len(), 3000);
    assert_eq!(cut, uncut, "the cut turn renders as the uncut one");
    seen.extend(reported(&mut events));
    let resumed = seen.iter().filter(|e| matches!(e, LinkEvent::Resumed { .. })).count();
    let lost = seen.iter().filter(|e| *e == &LinkEvent::Lost { reason: "cut".into() }).count();
    let reported_lost = seen.iter().filter(|e| matches!(e, LinkEvent::Lost { .. })).count() - lost;
    assert_eq!((lost, reported_lost, resumed), (3, 3, 3), "{seen:?}");
    // Each cut landed mid-turn: the stream resumed before the turn's last update.
    for event in &seen {
        if let LinkEvent::Resumed { cursor, .. } = event {
            assert!(cursor.parse::<u64>().expect("this server's cursors count") < 3000, "{seen:?}");
        }
    }
    // The connection is still the same one after the cuts.
    let again = common::scenarios::run_turn(&conn, &session, "after the cuts").await;
    assert_eq!(again, (vec!["after the cuts".to_owned()], StopReason::EndTurn));
    conn.close().await.expect("close");
}

#[tokio::test]
async fn an_answer_sent_into_a_dying_socket_is_sent_again_on_the_next() {
    let server = server(WsServerOptions::default()).await;
    let relay = Relay::to(&server.addr).await;
    let (options, mut events) = resuming(Duration::from_millis(20));
    let client = TestClient::default();
    client.files.lock().unwrap().extend((0..10).map(|i| (format!("/r{i}"), format!("file {i}"))));
    let (conn, _) = connect_ws(client.clone(), &relay.url, options).await.expect("connect");
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

#[tokio::test]
async fn a_connection_the_server_no_longer_has_ends_the_clients_with_a_reported_failure() {
    let resumable = Resumable { grace: Duration::from_millis(50), ..Resumable::default() };
    let server = server(WsServerOptions { resumable: Some(resumable), ..WsServerOptions::default() }).await;
    let relay = Relay::to(&server.addr).await;
    // The first try waits 0.5–1 s: the grace period is over by then.
    let (options, mut events) = resuming(Duration::from_secs(1));
    let (conn, _) = connect_ws(TestClient::default(), &relay.url, options).await.expect("connect");
    let session = open_session(&conn).await;
    let turn = conn.prompt_with(common::prompt(&session, "wait"), |_| relay.cut());
    let ended = tokio::time::timeout(Duration::from_secs(30), turn).await.expect("the turn ends");
    assert!(ended.is_err(), "the peer is gone: {ended:?}");
    let events = reported(&mut events);
    assert!(matches!(events.first(), Some(LinkEvent::Lost { .. })), "{events:?}");
    match events.last() {
        Some(LinkEvent::Failed { reason }) => assert!(reason.contains("404"), "{reason}"),
        other => panic!("a failure last: {other:?} in {events:?}"),
    }
}

#[tokio::test]
async fn a_server_that_does_not_resume_ends_the_connection_at_the_first_cut() {
    let server = server(WsServerOptions { resumable: None, ..WsServerOptions::default() }).await;
    let relay = Relay::to(&server.addr).await;
    let (options, mut events) = resuming(Duration::from_millis(20));
    let (conn, _) = connect_ws(TestClient::default(), &relay.url, options).await.expect("connect");
    let session = open_session(&conn).await;
    let turn = conn.prompt_with(common::prompt(&session, "wait"), |_| relay.cut());
    let ended = tokio::time::timeout(Duration::from_secs(30), turn).await.expect("the turn ends");
    assert!(ended.is_err(), "the peer is gone: {ended:?}");
    assert_eq!(reported(&mut events), [], "nothing to resume, nothing reported");
}
