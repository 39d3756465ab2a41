//! Resumable Streamable HTTP streams (feature `unstable_resumable_transport`; issue 32 §1): a
//! client that lost its SSE stream opens it again with `Last-Event-ID` and gets every message
//! after that cursor, once, in order, with the cursors it had, then the live stream; what the
//! agent sent while no stream was open waits for it; a cursor the ring cannot go on from is
//! refused with `409`, never answered with a stream that has a hole; the resume is bound to
//! the credential that opened the connection; a connection left without a reader is ended
//! after its grace period; and the ring stays inside the streams' byte budgets.

use crate::common;

use std::time::Duration;

use acp_tokio::remote::{Resumable, WsServerOptions};
use common::raw_http::*;
use serde_json::{Value, json};

fn prompt(id: u64, session: &str, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
}

/// The events of one `storm N` turn: its updates and its answer, with their cursors.
async fn turn(stream: &mut Sse, id: u64) -> Vec<(u64, Value)> {
    let mut events = Vec::new();
    loop {
        let (cursor, message) = stream.next_event().await.expect("an event of the turn");
        let cursor = cursor.expect("every event has a cursor").parse().expect("a cursor this server writes");
        let done = message["id"] == id;
        events.push((cursor, message));
        if done {
            return events;
        }
    }
}

/// A connection with one session, its session stream open: (connection, session, stream).
async fn session(addr: &str, extra: &[(&str, &str)]) -> (String, String, Sse, Sse) {
    let conn = initialize_with(addr, extra).await;
    let mut connection_stream = Sse::open_with(addr, extra, &conn, None).await.expect("the connection stream");
    let session = new_session(addr, extra, &conn, &mut connection_stream, 2).await;
    let stream = Sse::open_with(addr, extra, &conn, Some(&session)).await.expect("the session stream");
    (conn, session, stream, connection_stream)
}

async fn resume(addr: &str, extra: &[(&str, &str)], conn: &str, session: &str, cursor: u64) -> Result<Sse, u16> {
    let cursor = cursor.to_string();
    let mut headers = extra.to_vec();
    headers.push(("Last-Event-ID", &cursor));
    Sse::open_with(addr, &headers, conn, Some(session)).await
}

#[tokio::test]
async fn a_dropped_stream_resumes_after_its_last_event_with_nothing_lost_and_nothing_twice() {
    let server = server(WsServerOptions::default()).await;
    let addr = server.addr.as_str();
    // The retention is advertised in the answer to initialize.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}});
    let answer = post(addr, None, None, &init).await;
    let resumable = &answer.json()["result"]["agentCapabilities"]["_meta"]["acp/transport"]["resumable"];
    let defaults = Resumable::default();
    assert_eq!(resumable["retentionMessages"], defaults.retention_messages, "{}", answer.body);
    assert_eq!(resumable["retentionSeconds"], defaults.retention.as_secs());

    let (conn, session, mut stream, _connection_stream) = session(addr, &[]).await;
    let mut seen: Vec<(u64, Value)> = Vec::new();
    // Turn 1, read whole; the client had handled only two of its events when the stream broke.
    assert_eq!(post(addr, Some(&conn), Some(&session), &prompt(3, &session, "storm 5")).await.status, 202);
    let first = turn(&mut stream, 3).await;
    assert_eq!(first.len(), 6, "five updates and the answer");
    drop(stream);
    seen.extend_from_slice(&first[..2]);
    let mut stream = resume(addr, &[], &conn, &session, seen[1].0).await.expect("the resume is accepted");
    let replayed = turn(&mut stream, 3).await;
    assert_eq!(replayed, first[2..], "the same events again, with the same cursors");
    seen.extend(replayed);
    // A second resume from the same cursor gets the same events (idempotent).
    drop(stream);
    let mut stream = resume(addr, &[], &conn, &session, first[1].0).await.expect("a second resume");
    assert_eq!(turn(&mut stream, 3).await, first[2..]);
    // Turn 2 runs while no stream is open: its events wait for the resume.
    drop(stream);
    assert_eq!(post(addr, Some(&conn), Some(&session), &prompt(4, &session, "storm 3")).await.status, 202);
    let last = seen.last().expect("events").0;
    let mut stream = resume(addr, &[], &conn, &session, last).await.expect("a resume after the turn");
    seen.extend(turn(&mut stream, 4).await);
    // Turn 3 live on the resumed stream.
    assert_eq!(post(addr, Some(&conn), Some(&session), &prompt(5, &session, "storm 2")).await.status, 202);
    seen.extend(turn(&mut stream, 5).await);

    // What the client handled is what one unbroken stream carries: cursors 1, 2, 3, … without a
    // gap or a repeat, each turn's updates then its answer.
    let cursors: Vec<u64> = seen.iter().map(|(c, _)| *c).collect();
    three_turns_in_order(&cursors, seen.iter().map(|(_, m)| m));
}

/// What the resume tests' three prompts (ids 3, 4, 5; 5, 3 and 2 updates) delivered, with their
/// cursors: consecutive cursors, each turn's updates then its answer.
pub(super) fn three_turns_in_order<'a>(cursors: &[u64], seen: impl Iterator<Item = &'a Value>) {
    let first = cursors[0];
    assert_eq!(cursors, (first..first + cursors.len() as u64).collect::<Vec<_>>());
    let shape: Vec<String> = seen
        .map(|m| match m["id"].as_u64() {
            Some(id) => format!("answer {id} {}", m["result"]["stopReason"]),
            None => m["method"].as_str().expect("a notification").to_owned(),
        })
        .collect();
    let mut expected = Vec::new();
    for (id, updates) in [(3, 5), (4, 3), (5, 2)] {
        expected.extend(std::iter::repeat_n("session/update".to_owned(), updates));
        expected.push(format!("answer {id} \"end_turn\""));
    }
    assert_eq!(shape, expected);
}

/// A server for the refusal tests: a ring of two messages, the callers `alice` and `bob`.
pub(super) async fn two_callers_and_a_ring_of_two() -> Server {
    let resumable = Resumable { retention_messages: 2, ..Resumable::default() };
    let options = WsServerOptions {
        resumable: Some(resumable),
        bearer_tokens: vec!["alice".into(), "bob".into()],
        ..WsServerOptions::default()
    };
    server(options).await
}

#[tokio::test]
async fn a_cursor_outside_the_ring_is_refused_with_409_and_a_resume_is_bound_to_its_credential() {
    let server = two_callers_and_a_ring_of_two().await;
    let addr = server.addr.as_str();
    let alice = [("Authorization", "Bearer alice")];
    let (conn, session, mut stream, _connection_stream) = session(addr, &alice).await;
    let message = prompt(3, &session, "storm 5");
    assert_eq!(post_with(addr, &alice, Some(&conn), Some(&session), &message).await.status, 202);
    let events = turn(&mut stream, 3).await;
    drop(stream);
    let get = |cursor: String, token: &'static str| {
        let (conn, session) = (conn.clone(), session.clone());
        async move {
            let auth = format!("Bearer {token}");
            let headers = [
                ("Accept", "text/event-stream"),
                ("Authorization", auth.as_str()),
                ("Acp-Connection-Id", conn.as_str()),
                ("Acp-Session-Id", session.as_str()),
                ("Last-Event-ID", cursor.as_str()),
            ];
            request(addr, "GET", &headers, "").await
        }
    };
    // Only the last two events are retained: a resume needing the third-last has a hole.
    for cursor in [events[2].0.to_string(), "999999".into(), "not-a-cursor".into(), events[0].0.to_string()] {
        let refused = get(cursor.clone(), "alice").await;
        assert_eq!(refused.status, 409, "{cursor}: {refused:?}");
        assert!(refused.body.contains("stream/resume_failed"), "{}", refused.body);
    }
    // Another credential does not find the connection at all.
    assert_eq!(get(events[3].0.to_string(), "bob").await.status, 404);
    // A refused resume opened nothing: a cursor the ring holds still resumes.
    let mut stream = resume(addr, &alice, &conn, &session, events[3].0).await.expect("a retained cursor");
    assert_eq!(turn(&mut stream, 3).await, events[4..]);
}

#[tokio::test]
async fn a_connection_without_a_reader_for_its_grace_period_is_ended() {
    let resumable = Resumable { grace: Duration::from_millis(300), ..Resumable::default() };
    let server = server(WsServerOptions { resumable: Some(resumable), ..WsServerOptions::default() }).await;
    let addr = server.addr.as_str();
    let (conn, session, stream, connection_stream) = session(addr, &[]).await;
    drop((stream, connection_stream));
    // Waits for the end (polling a harmless request), however long the machine takes.
    let note = json!({"jsonrpc": "2.0", "method": "_x/note", "params": {}});
    let ended = async {
        loop {
            if post(addr, Some(&conn), None, &note).await.status == 404 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), ended).await.expect("the detached connection ends");
    assert_eq!(resume(addr, &[], &conn, &session, 0).await.err(), Some(404), "and cannot be resumed");
}

#[tokio::test]
async fn the_ring_counts_in_a_small_stream_budget_and_gives_way_to_live_messages() {
    // 4 KiB per stream, far less than the ring would keep of a 300-update turn: retained
    // events are evicted for new ones instead of stalling the stream (which would end the
    // connection after `stream_stall`).
    let options = WsServerOptions {
        stream_buffer: 4 << 10,
        connection_buffer: 8 << 10,
        stream_stall: Duration::from_secs(2),
        ..WsServerOptions::default()
    };
    let server = server(options).await;
    let addr = server.addr.as_str();
    let (conn, session, mut stream, _connection_stream) = session(addr, &[]).await;
    assert_eq!(post(addr, Some(&conn), Some(&session), &prompt(3, &session, "storm 300")).await.status, 202);
    let events = turn(&mut stream, 3).await;
    assert_eq!(events.len(), 301, "every update and the answer");
    drop(stream);
    // What is retained fits the budget: the oldest cursors are gone (409), the last resumes.
    let last = events.last().expect("events").0;
    assert_eq!(resume(addr, &[], &conn, &session, events[0].0).await.err(), Some(409));
    let mut stream = resume(addr, &[], &conn, &session, last - 1).await.expect("the last event is retained");
    assert_eq!(turn(&mut stream, 3).await, events[300..]);
}

#[tokio::test]
async fn a_resumed_stream_begins_with_its_sessions_turn_state_which_moves_no_cursor() {
    let server = server(WsServerOptions::default()).await;
    let addr = server.addr.as_str();
    let (conn, session, mut stream, _connection_stream) = session(addr, &[]).await;
    assert_eq!(post(addr, Some(&conn), Some(&session), &prompt(3, &session, "wait")).await.status, 202);
    let (cursor, waiting) = stream.next_event().await.expect("the turn's first update");
    assert_eq!(waiting["method"], "session/update", "{waiting}");
    let cursor: u64 = cursor.expect("a cursor").parse().expect("a cursor this server writes");
    drop(stream);
    let mut stream = resume(addr, &[], &conn, &session, cursor).await.expect("the resume");
    let cancel = json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}});
    assert_eq!(post(addr, Some(&conn), Some(&session), &cancel).await.status, 202);
    let (next, answer) = stream.next_event().await.expect("the answer");
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert_eq!(next, Some((cursor + 1).to_string()), "the turn state took no cursor");
    let running = json!({ &session: {"state": "running", "promptRequestId": 3} });
    assert_eq!(stream.named, [("acp/turnState".to_owned(), running)]);
}
