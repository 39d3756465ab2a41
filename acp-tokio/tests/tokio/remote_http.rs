//! The Streamable HTTP profile of `serve_ws`'s endpoint (`ws`, `http` or `tls`), spoken by hand over
//! HTTP/1.1 on loopback: a whole session through POSTs and SSE streams, and the answer to each
//! kind of bad request.

use crate::common;

use std::time::Duration;

use acp_tokio::AgentOptions;
use acp_tokio::remote::{AgentBackend, WsServerOptions, serve_ws};
use common::EchoAgent;
use common::raw_http::*;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

#[tokio::test]
async fn a_whole_session_over_posts_and_sse_streams() {
    let server = server(WsServerOptions::default()).await;
    let conn = initialize(&server.addr).await;
    let mut connection_stream = Sse::open(&server.addr, &conn, None).await.expect("the connection stream");
    let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}});
    assert_eq!(post(&server.addr, Some(&conn), None, &new).await.status, 202);
    let created = connection_stream.next().await.expect("session/new's answer");
    assert_eq!(created["id"], 2);
    let session = created["result"]["sessionId"].as_str().expect("a session id").to_owned();
    let mut session_stream = Sse::open(&server.addr, &conn, Some(&session)).await.expect("the session stream");
    let prompt = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "storm 5"}]}});
    assert_eq!(post(&server.addr, Some(&conn), Some(&session), &prompt).await.status, 202);
    let mut updates = 0;
    let answer = loop {
        let message = session_stream.next().await.expect("a message of the turn");
        if message["method"] == "session/update" {
            assert_eq!(message["params"]["sessionId"], session.as_str());
            updates += 1;
        } else {
            break message;
        }
    };
    assert_eq!(
        (updates, answer["id"].clone(), answer["result"]["stopReason"].clone()),
        (5, json!(3), json!("end_turn"))
    );
    // DELETE ends the connection: its streams end, later requests find no connection.
    let deleted = request(&server.addr, "DELETE", &[("Acp-Connection-Id", &conn)], "").await;
    assert_eq!(deleted.status, 202);
    assert!(connection_stream.next().await.is_none(), "the connection stream ends");
    let after = post(&server.addr, Some(&conn), None, &new).await;
    assert_eq!(after.status, 404, "{after:?}");
}

#[tokio::test]
async fn each_bad_request_gets_its_status_and_the_server_serves_on() {
    let options = WsServerOptions { max_message: 4096, ..WsServerOptions::default() };
    let server = server(options).await;
    let addr = server.addr.as_str();
    let conn = initialize(addr).await;
    let note = json!({"jsonrpc": "2.0", "method": "_x/note", "params": {}});
    let text = request(addr, "POST", &[("Content-Type", "text/plain"), ("Acp-Connection-Id", &conn)], "{}").await;
    assert_eq!(text.status, 415);
    let garbage =
        request(addr, "POST", &[("Content-Type", "application/json"), ("Acp-Connection-Id", &conn)], "{nope").await;
    assert_eq!(garbage.status, 400);
    assert_eq!(post(addr, Some(&conn), None, &json!([note])).await.status, 501);
    assert_eq!(post(addr, None, None, &note).await.status, 400, "no connection id");
    assert_eq!(post(addr, Some("no-such-connection"), None, &note).await.status, 404);
    let prompt =
        json!({"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}});
    assert_eq!(post(addr, Some(&conn), None, &prompt).await.status, 400, "a session-scoped method without its header");
    assert_eq!(post(addr, Some(&conn), Some("unknown"), &prompt).await.status, 404);
    let big = json!({"jsonrpc": "2.0", "method": "_x/big", "params": {"pad": "x".repeat(8000)}});
    assert_eq!(post(addr, Some(&conn), None, &big).await.status, 413);
    let no_accept = request(addr, "GET", &[("Acp-Connection-Id", &conn)], "").await;
    assert_eq!(no_accept.status, 406);
    assert_eq!(Sse::open(addr, "no-such-connection", None).await.err(), Some(404));
    assert_eq!(Sse::open(addr, &conn, Some("unknown")).await.err(), Some(404));
    let _first = Sse::open(addr, &conn, None).await.expect("the first stream");
    assert_eq!(Sse::open(addr, &conn, None).await.err(), Some(409), "a stream opened twice");
    assert_eq!(request(addr, "DELETE", &[("Acp-Connection-Id", "no-such-connection")], "").await.status, 404);
    // The server serves on.
    let again = initialize(addr).await;
    assert_ne!(again, conn);
}

#[tokio::test]
async fn the_first_post_must_be_initialize_and_a_token_guards_every_request() {
    let options = WsServerOptions { bearer_token: Some("t0ken".into()), ..WsServerOptions::default() };
    let server = server(options).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}});
    let refused = post(&server.addr, None, None, &init).await;
    assert_eq!(refused.status, 401);
    assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
    let headers = [("Content-Type", "application/json"), ("Authorization", "Bearer t0ken")];
    let answer = request(&server.addr, "POST", &headers, &init.to_string()).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let conn = answer.header("acp-connection-id").expect("id").to_owned();
    let stream =
        request(&server.addr, "GET", &[("Accept", "text/event-stream"), ("Acp-Connection-Id", &conn)], "").await;
    assert_eq!(stream.status, 401, "streams need the token too");
}

#[tokio::test]
async fn a_stream_nobody_reads_ends_its_connection_after_the_stall_limit() {
    let options = WsServerOptions {
        stream_stall: Duration::from_millis(500),
        stream_buffer: 64 << 10,
        ..WsServerOptions::default()
    };
    let server = server(options).await;
    let conn = initialize(&server.addr).await;
    let mut connection_stream = Sse::open(&server.addr, &conn, None).await.expect("the connection stream");
    let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}});
    post(&server.addr, Some(&conn), None, &new).await;
    let session = connection_stream.next().await.expect("answer")["result"]["sessionId"].as_str().unwrap().to_owned();
    // The session's stream is never opened; the turn streams more than it buffers (5000
    // updates: about 1 MB).
    let prompt = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "storm 5000"}]}});
    assert_eq!(post(&server.addr, Some(&conn), Some(&session), &prompt).await.status, 202);
    assert!(connection_stream.next().await.is_none(), "the connection ends");
    let after = post(&server.addr, Some(&conn), None, &new).await;
    assert_eq!(after.status, 404, "{after:?}");
}

#[tokio::test]
async fn shutdown_cancels_a_turn_in_flight_answers_it_on_its_stream_then_the_server_stops() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let (stop, stopped) = oneshot::channel::<()>();
    let backend = AgentBackend::new(EchoAgent::default, AgentOptions::default());
    let served = tokio::spawn(serve_ws(listener, backend, WsServerOptions::default(), async move {
        let _ = stopped.await;
    }));
    let conn = initialize(&addr).await;
    let mut connection_stream = Sse::open(&addr, &conn, None).await.expect("the connection stream");
    let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}});
    assert_eq!(post(&addr, Some(&conn), None, &new).await.status, 202);
    let session = connection_stream.next().await.expect("session/new's answer")["result"]["sessionId"]
        .as_str()
        .expect("a session id")
        .to_owned();
    let mut session_stream = Sse::open(&addr, &conn, Some(&session)).await.expect("the session stream");
    let prompt = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]}});
    assert_eq!(post(&addr, Some(&conn), Some(&session), &prompt).await.status, 202);
    let first = session_stream.next().await.expect("the first update");
    assert_eq!(first["params"]["update"]["content"]["text"], "waiting", "{first}");
    drop(stop);
    let answer = session_stream.next().await.expect("the prompt's answer");
    assert_eq!((answer["id"].clone(), answer["result"]["stopReason"].clone()), (json!(3), json!("cancelled")));
    let ended = tokio::time::timeout(Duration::from_secs(20), served).await.expect("the server stops");
    ended.expect("join").expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_never_finishes_does_not_hold_the_shutdown_past_the_drain_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let (stop, stopped) = oneshot::channel::<()>();
    let backend = AgentBackend::new(EchoAgent::default, AgentOptions::default());
    let options = WsServerOptions { drain_timeout: Duration::from_millis(500), ..WsServerOptions::default() };
    let served = tokio::spawn(serve_ws(listener, backend, options, async move {
        let _ = stopped.await;
    }));
    // A POST whose body never completes: the server is in the middle of this request.
    let mut slow = TcpStream::connect(&addr).await.expect("connect");
    let head = format!(
        "POST /acp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
    );
    slow.write_all(head.as_bytes()).await.expect("send part of a request");
    // The server is up and answering (a connection stream needs Accept: text/event-stream).
    assert_eq!(request(&addr, "GET", &[("Acp-Connection-Id", "x")], "").await.status, 406);
    drop(stop);
    let ended = tokio::time::timeout(Duration::from_secs(30), served).await.expect("the server stops");
    ended.expect("join").expect("served");
    drop(slow);
}
