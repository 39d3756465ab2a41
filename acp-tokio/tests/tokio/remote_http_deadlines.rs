//! What a TCP connection to `serve_ws` may hold without doing its part (issue 28, item 3): a
//! silent connection, one dripping header lines, a body that never completes and an idle
//! keep-alive connection are each closed at their deadline; an SSE stream is no idle
//! connection; and connections that never authenticate are capped, so a flood of them never
//! keeps a client out. Spoken by hand over TCP, as such peers would.

use crate::common;

use std::time::Duration;

use acp_tokio::remote::WsServerOptions;
use common::raw_http::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Deadlines in these tests are 1 s; a connection must be closed well within this bound.
const BOUND: Duration = Duration::from_secs(30);

fn short(options: WsServerOptions) -> WsServerOptions {
    WsServerOptions {
        header_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(1),
        keep_alive_timeout: Duration::from_secs(1),
        ..options
    }
}

/// Reads until the server closes the connection (within [`BOUND`]); what it sent.
async fn closed_by_server(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let read = tokio::time::timeout(BOUND, stream.read_to_end(&mut got)).await;
    assert!(read.is_ok(), "the server still holds the connection after {BOUND:?}");
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_at_the_header_deadline() {
    let server = server(short(WsServerOptions::default())).await;
    let mut silent = TcpStream::connect(&server.addr).await.expect("connect");
    assert_eq!(closed_by_server(&mut silent).await, "", "closed without an answer");
}

#[tokio::test]
async fn a_connection_dripping_header_lines_is_closed_at_the_header_deadline() {
    // Only the header deadline can close these connections.
    let long_keep_alive =
        WsServerOptions { keep_alive_timeout: Duration::from_secs(600), ..short(WsServerOptions::default()) };
    let server = server(long_keep_alive).await;
    let stream = TcpStream::connect(&server.addr).await.expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    let addr = server.addr.clone();
    let drip = tokio::spawn(async move {
        let mut lines = vec![format!("POST /acp HTTP/1.1\r\nHost: {addr}\r\n")];
        lines.extend((0..).take(200).map(|i| format!("X-Drip-{i}: still coming\r\n")));
        for line in lines {
            if writer.write_all(line.as_bytes()).await.is_err() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        false
    });
    let mut got = Vec::new();
    let read = tokio::time::timeout(BOUND, reader.read_to_end(&mut got)).await;
    assert!(read.is_ok(), "the server still reads a head dripping for {BOUND:?}");
    drip.abort();
    // A head begun on a kept-alive connection has the same deadline from its first byte.
    let mut kept = TcpStream::connect(&server.addr).await.expect("connect");
    let health = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr);
    kept.write_all(health.as_bytes()).await.expect("a request");
    let mut first = [0u8; 12];
    kept.read_exact(&mut first).await.expect("its answer");
    assert_eq!(&first, b"HTTP/1.1 200");
    let started = tokio::time::Instant::now();
    let mut closed = false;
    while started.elapsed() < BOUND {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if kept.write_all(b"X-Drip: again\r\n").await.is_err() {
            closed = true;
            break;
        }
    }
    assert!(closed, "a dripping second head was read for {BOUND:?}");
}

#[tokio::test]
async fn a_body_that_never_completes_is_answered_408_and_the_connection_closed() {
    let server = server(short(WsServerOptions::default())).await;
    let conn = initialize(&server.addr).await;
    let mut slow = TcpStream::connect(&server.addr).await.expect("connect");
    let head = format!(
        "POST /acp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAcp-Connection-Id: {conn}\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        server.addr
    );
    slow.write_all(head.as_bytes()).await.expect("part of a request");
    let answer = closed_by_server(&mut slow).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    // The connection it was for goes on.
    let note = json!({"jsonrpc": "2.0", "method": "_x/note", "params": {}});
    assert_eq!(post(&server.addr, Some(&conn), None, &note).await.status, 202);
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_but_an_open_stream_is_not() {
    let server = server(short(WsServerOptions::default())).await;
    let mut kept = TcpStream::connect(&server.addr).await.expect("connect");
    let health = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr);
    kept.write_all(health.as_bytes()).await.expect("a request");
    let answer = closed_by_server(&mut kept).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "answered, kept alive, then closed: {answer}");
    // An SSE stream is a request in flight: it outlives the keep-alive deadline many times.
    let conn = initialize(&server.addr).await;
    let mut stream = Sse::open(&server.addr, &conn, None).await.expect("the connection stream");
    tokio::time::sleep(Duration::from_secs(4)).await;
    let session = new_session(&server.addr, &[], &conn, &mut stream, 2).await;
    assert!(!session.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_never_authenticate_are_capped_and_a_client_is_served_past_them() {
    const SILENT: usize = 300;
    const CAP: usize = 16;
    let options = WsServerOptions {
        bearer_token: Some("t0ken".into()),
        max_unauthenticated: CAP,
        // Long deadlines: only the cap can close them in this test.
        header_timeout: Duration::from_secs(600),
        keep_alive_timeout: Duration::from_secs(600),
        ..WsServerOptions::default()
    };
    let server = server(options).await;
    let mut silent = Vec::new();
    for _ in 0..SILENT {
        silent.push(TcpStream::connect(&server.addr).await.expect("connect"));
    }
    // Refused requests do not authenticate a connection either.
    let mut refused = TcpStream::connect(&server.addr).await.expect("connect");
    let wrong = format!("GET /acp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer nope\r\n\r\n", server.addr);
    refused.write_all(wrong.as_bytes()).await.expect("a request");
    let mut status = [0u8; 12];
    refused.read_exact(&mut status).await.expect("an answer");
    assert_eq!(&status, b"HTTP/1.1 401");
    // A client with the token is served at once, and stays served while more come.
    let auth = [("Authorization", "Bearer t0ken")];
    let conn = initialize_with(&server.addr, &auth).await;
    let mut stream = Sse::open_with(&server.addr, &auth, &conn, None).await.expect("the connection stream");
    for _ in 0..SILENT {
        silent.push(TcpStream::connect(&server.addr).await.expect("connect"));
    }
    let session = new_session(&server.addr, &auth, &conn, &mut stream, 2).await;
    assert!(!session.is_empty());
    // All but the newest CAP were closed by the server (the refused one too: the rest of its
    // answer, then the end).
    let rest = closed_by_server(&mut refused).await;
    assert!(rest.contains("a valid bearer token is required"), "{rest}");
    let mut open = 0;
    for mut socket in silent {
        let mut byte = [0u8; 1];
        match tokio::time::timeout(Duration::from_millis(20), socket.read(&mut byte)).await {
            Err(_) => open += 1,
            Ok(read) => assert!(matches!(read, Ok(0) | Err(_)), "a silent socket got {read:?}"),
        }
    }
    assert!(open <= CAP, "{open} unauthenticated connections held (cap {CAP})");
}
