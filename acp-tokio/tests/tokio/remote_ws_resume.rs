//! Resumable WebSockets (features `ws` and `unstable_resumable_transport`; issue 32 §1): every
//! agent message carries its cursor at `_meta["acp/cursor"]`; a client whose socket dropped
//! opens another one naming its connection (`Acp-Connection-Id`) and sends `stream/resume
//! {cursor}` first: it gets every later message once, in order, with the cursors it had, then
//! the live stream, and the agent's turn went on meanwhile; a cursor the ring cannot go on from
//! is refused with `stream/resume_failed` (close 4409), never answered with a stream that has a
//! hole; a resume is bound to the credential that opened the connection; the newest socket
//! takes the stream over; a connection left without a socket ends after its grace period.

use crate::common;

use std::time::Duration;

use acp_tokio::remote::{Resumable, WsServerOptions};
use common::raw_http::server;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message};

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens a WebSocket with `headers`; the connection id of the `101`, or the refusal's status.
async fn open(addr: &str, headers: &[(&'static str, &str)]) -> Result<(Ws, String), u16> {
    let mut request = format!("ws://{addr}/acp").into_client_request().expect("a request");
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().expect("a header value"));
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((ws, response)) => {
            let id = response.headers().get("acp-connection-id").expect("Acp-Connection-Id in the 101");
            Ok((ws, id.to_str().expect("ascii").to_owned()))
        }
        Err(tungstenite::Error::Http(response)) => Err(response.status().as_u16()),
        Err(e) => panic!("connect: {e}"),
    }
}

/// The next message (skipping pings), or how the socket closed (`Err(code)`).
async fn next(ws: &mut Ws) -> Result<Value, u16> {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(20), ws.next()).await.expect("a message in time");
        match message {
            Some(Ok(Message::Text(text))) => return Ok(serde_json::from_str(text.as_str()).expect("json")),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            Some(Ok(Message::Close(frame))) => return Err(frame.map_or(1005, |f| u16::from(f.code))),
            other => panic!("unexpected {other:?}"),
        }
    }
}

async fn send(ws: &mut Ws, message: &Value) {
    ws.send(Message::Text(message.to_string().into())).await.expect("send");
}

fn cursor(message: &Value) -> u64 {
    let cursor = message["_meta"]["acp/cursor"].as_str().unwrap_or_else(|| panic!("a cursor in {message}"));
    cursor.parse().expect("a cursor this server writes")
}

fn prompt(id: u64, session: &str, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
}

/// A connection with one session: (socket, connection id, session, the last cursor seen).
async fn session(addr: &str, headers: &[(&'static str, &str)]) -> (Ws, String, String, u64) {
    let (mut ws, conn) = open(addr, headers).await.expect("the upgrade");
    send(&mut ws, &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})).await;
    let init = next(&mut ws).await.expect("the answer to initialize");
    let resumable = &init["result"]["agentCapabilities"]["_meta"]["acp/transport"]["resumable"];
    assert!(resumable["retentionMessages"].is_u64(), "the retention is advertised: {init}");
    send(
        &mut ws,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
    )
    .await;
    let new = next(&mut ws).await.expect("the answer to session/new");
    let session = new["result"]["sessionId"].as_str().expect("a session").to_owned();
    assert_eq!(cursor(&new), cursor(&init) + 1);
    (ws, conn, session, cursor(&new))
}

/// Opens a socket resuming `conn` after `after`, with `stream/resume` sent as request 99.
async fn resume(addr: &str, headers: &[(&'static str, &str)], conn: &str, after: u64) -> Result<(Ws, Value), u16> {
    let mut headers = headers.to_vec();
    headers.push(("Acp-Connection-Id", conn));
    let (mut ws, _) = open(addr, &headers).await?;
    send(
        &mut ws,
        &json!({"jsonrpc": "2.0", "id": 99, "method": "stream/resume", "params": {"cursor": after.to_string()}}),
    )
    .await;
    let ack = next(&mut ws).await?;
    if ack["method"] == "stream/resume_failed" {
        match next(&mut ws).await {
            Err(code) => return Err(code),
            Ok(message) => panic!("the socket closes after stream/resume_failed, not {message}"),
        }
    }
    assert_eq!(ack["id"], 99, "the resume is answered first: {ack}");
    Ok((ws, ack))
}

/// Reads messages up to the answer to request `id`.
async fn until_answer(ws: &mut Ws, id: u64) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let message = next(ws).await.expect("a message of the turn");
        let done = message["id"] == id && message.get("method").is_none();
        seen.push(message);
        if done {
            return seen;
        }
    }
}

/// Resumes `conn` every `pause` until the server no longer knows it (`404`); fails after 60 s.
async fn until_gone(addr: &str, conn: &str, last: u64, pause: Duration) {
    let gone = async {
        loop {
            match resume(addr, &[], conn, last).await {
                Err(404) => return,
                Ok((ws, _)) => drop(ws),
                Err(other) => panic!("{other}"),
            }
            tokio::time::sleep(pause).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), gone).await.expect("the connection ends");
}

#[tokio::test]
async fn a_dropped_socket_resumes_after_its_last_cursor_with_nothing_lost_and_nothing_twice() {
    let server = server(WsServerOptions::default()).await;
    let addr = server.addr.as_str();
    let (mut ws, conn, session, mut last) = session(addr, &[]).await;
    let mut seen: Vec<Value> = Vec::new();
    // Turn 1: the client handled two of its events when the socket broke.
    send(&mut ws, &prompt(3, &session, "storm 5")).await;
    for _ in 0..2 {
        seen.push(next(&mut ws).await.expect("an update"));
    }
    drop(ws);
    last = seen.last().map_or(last, cursor);
    let (mut ws, _) = resume(addr, &[], &conn, last).await.expect("the resume is accepted");
    let rest = until_answer(&mut ws, 3).await;
    drop(ws);
    // A second resume from the same cursor gets the same messages again (idempotent).
    let (mut ws, _) = resume(addr, &[], &conn, last).await.expect("a second resume");
    assert_eq!(until_answer(&mut ws, 3).await, rest);
    seen.extend(rest);
    // Turn 2 is sent, and the socket dropped at once: the turn runs while detached.
    send(&mut ws, &prompt(4, &session, "storm 3")).await;
    drop(ws);
    let (mut ws, ack) = resume(addr, &[], &conn, cursor(seen.last().expect("seen"))).await.expect("a third resume");
    let state = &ack["result"]["_meta"]["acp/turnState"][&session];
    assert!(state["state"] == "idle" || state["promptRequestId"] == 4, "{ack}");
    seen.extend(until_answer(&mut ws, 4).await);
    // Turn 3 live on the resumed socket.
    send(&mut ws, &prompt(5, &session, "storm 2")).await;
    seen.extend(until_answer(&mut ws, 5).await);

    // What the client handled is what one unbroken stream carries: consecutive cursors, each
    // turn's updates then its answer.
    let cursors: Vec<u64> = seen.iter().map(cursor).collect();
    crate::remote_http_resume::three_turns_in_order(&cursors, seen.iter());
}

#[tokio::test]
async fn a_turn_waiting_on_the_client_survives_the_socket_and_is_answered_on_the_next_one() {
    let server = server(WsServerOptions::default()).await;
    let addr = server.addr.as_str();
    let (mut ws, conn, session, _) = session(addr, &[]).await;
    send(&mut ws, &prompt(3, &session, "permission")).await;
    let asked = next(&mut ws).await.expect("the permission request");
    assert_eq!(asked["method"], "session/request_permission", "{asked}");
    // The socket dies before the user answers; the client resumes after the last message it
    // saw, learns that the turn still runs, and answers on the new socket.
    drop(ws);
    let (mut ws, ack) = resume(addr, &[], &conn, cursor(&asked)).await.expect("the resume");
    let state = &ack["result"]["_meta"]["acp/turnState"][&session];
    assert_eq!(state["state"], "running", "{ack}");
    assert_eq!(state["promptRequestId"], 3, "{ack}");
    // initialize, session/new and the prompt reached the agent (the resume itself is no frame
    // of the client's to the agent).
    assert_eq!(ack["result"]["_meta"]["acp/received"], 3, "{ack}");
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}});
    send(&mut ws, &answer).await;
    let turn = until_answer(&mut ws, 3).await;
    let texts: Vec<&str> = turn.iter().filter_map(|m| m["params"]["update"]["content"]["text"].as_str()).collect();
    assert_eq!(texts, ["permission: allow"]);
    assert_eq!(turn.last().expect("the answer")["result"]["stopReason"], "end_turn");
    assert!(turn.iter().map(cursor).all(|c| c > cursor(&asked)), "nothing from before the cursor again");
}

#[tokio::test]
async fn a_cursor_outside_the_ring_or_no_resume_first_is_refused_and_a_resume_is_bound_to_its_credential() {
    let server = crate::remote_http_resume::two_callers_and_a_ring_of_two().await;
    let addr = server.addr.as_str();
    let alice = [("Authorization", "Bearer alice")];
    let (mut ws, conn, session, _) = session(addr, &alice).await;
    send(&mut ws, &prompt(3, &session, "storm 5")).await;
    let turn = until_answer(&mut ws, 3).await;
    drop(ws);
    // Only the last two messages are retained: a resume needing the third-last has a hole.
    let hole = cursor(&turn[turn.len() - 4]);
    let refused = resume(addr, &alice, &conn, hole).await;
    assert_eq!(refused.err(), Some(4409), "refused, never a stream with a hole");
    let (mut ws, _) = open(addr, &[alice[0], ("Acp-Connection-Id", conn.as_str())]).await.expect("upgrade");
    send(&mut ws, &json!({"jsonrpc": "2.0", "method": "stream/resume", "params": {"cursor": "1"}})).await;
    let failed = next(&mut ws).await.expect("the refusal");
    assert_eq!(failed["method"], "stream/resume_failed");
    assert!(failed["params"]["reason"].as_str().is_some_and(|r| r.contains("cursor")), "{failed}");
    assert_eq!(next(&mut ws).await.err(), Some(4409));
    // A first frame that is no stream/resume, and a cursor never sent.
    let (mut ws, _) = open(addr, &[alice[0], ("Acp-Connection-Id", conn.as_str())]).await.expect("upgrade");
    send(&mut ws, &prompt(4, &session, "storm 1")).await;
    assert_eq!(next(&mut ws).await.expect("the refusal")["method"], "stream/resume_failed");
    let never = cursor(turn.last().expect("the answer")) + 10;
    assert_eq!(resume(addr, &alice, &conn, never).await.err(), Some(4409));
    // Another credential, or an id nobody opened: the 404 of an unknown connection, before
    // any upgrade.
    assert_eq!(resume(addr, &[("Authorization", "Bearer bob")], &conn, hole + 3).await.err(), Some(404));
    assert_eq!(resume(addr, &alice, "no-such-connection", 1).await.err(), Some(404));
    // The last cursor still resumes.
    let (mut ws, _) = resume(addr, &alice, &conn, cursor(&turn[turn.len() - 2])).await.expect("within the ring");
    assert_eq!(next(&mut ws).await.expect("the answer"), turn[turn.len() - 1]);
}

#[tokio::test]
async fn the_newest_socket_takes_the_stream_over_from_a_half_open_one() {
    let server = server(WsServerOptions::default()).await;
    let addr = server.addr.as_str();
    let (mut old, conn, session, last) = session(addr, &[]).await;
    // The client believes its socket dead (the server does not) and resumes on a new one.
    let (mut ws, _) = resume(addr, &[], &conn, last).await.expect("the takeover");
    assert_eq!(next(&mut old).await.err(), Some(4409), "the older socket is closed");
    send(&mut ws, &prompt(3, &session, "storm 2")).await;
    let turn = until_answer(&mut ws, 3).await;
    assert_eq!(turn.len(), 3);
    assert_eq!(cursor(&turn[0]), last + 1);
}

#[tokio::test]
async fn a_connection_without_a_socket_for_its_grace_period_is_ended() {
    let resumable = Resumable { grace: Duration::from_millis(300), ..Resumable::default() };
    let server = server(WsServerOptions { resumable: Some(resumable), ..WsServerOptions::default() }).await;
    let addr = server.addr.as_str();
    let (ws, conn, _, last) = session(addr, &[]).await;
    drop(ws);
    until_gone(addr, &conn, last, Duration::from_millis(400)).await;
}

#[tokio::test]
async fn a_close_frame_from_the_client_ends_the_connection_as_delete_does() {
    let server = server(WsServerOptions::default()).await;
    let addr = server.addr.as_str();
    let (mut ws, conn, _, last) = session(addr, &[]).await;
    ws.close(None).await.expect("the close handshake");
    // The connection ends (its agent's input closes): no resume finds it, however long the
    // machine takes to get there.
    until_gone(addr, &conn, last, Duration::from_millis(50)).await;
}
