//! Remote ACP over WebSocket on loopback (feature `ws`): the scenario suite through a real
//! server and client, and what a hostile or careless peer can do to the server.

use crate::common;

use std::time::Duration;

use acp_tokio::acp_proto::types::*;
use acp_tokio::remote::{AgentBackend, RemoteInfo, WsClientOptions, WsServerOptions, connect_ws, serve_ws};
use acp_tokio::{AgentOptions, ClientConnection, Error};
use common::{EchoAgent, TestClient, handshake, scenarios};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;

/// A server of echo agents on an ephemeral loopback port, stopped by dropping `stop`.
struct Server {
    url: String,
    base: String,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    async fn start(options: WsServerOptions) -> Server {
        Self::start_with(options, EchoAgent::default).await
    }

    async fn start_with(options: WsServerOptions, factory: impl Fn() -> EchoAgent + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let backend = AgentBackend::new(factory, AgentOptions::default());
        let shutdown = async move {
            let _ = stopped.await;
        };
        let task = tokio::spawn(serve_ws(listener, backend, options, shutdown));
        Server { url: format!("ws://{addr}/acp"), base: format!("http://{addr}"), stop: Some(stop), task }
    }

    /// A server whose agents report what their handlers observe (their cancellations).
    async fn start_observed() -> (Server, tokio::sync::mpsc::UnboundedReceiver<String>) {
        Self::start_observed_with(WsServerOptions::default()).await
    }

    async fn start_observed_with(options: WsServerOptions) -> (Server, tokio::sync::mpsc::UnboundedReceiver<String>) {
        let (observed_tx, observed) = tokio::sync::mpsc::unbounded_channel();
        let factory = move || EchoAgent { observed: Some(observed_tx.clone()), ..EchoAgent::default() };
        (Self::start_with(options, factory).await, observed)
    }

    async fn connect(&self, client: TestClient) -> (ClientConnection, RemoteInfo) {
        connect_ws(client, &self.url, WsClientOptions::default()).await.expect("connect")
    }

    async fn shutdown(mut self) {
        drop(self.stop.take());
        let ended = tokio::time::timeout(Duration::from_secs(20), self.task).await;
        ended.expect("the server stops").expect("join").expect("served");
    }
}

/// A raw WebSocket to the server, for what our client never sends.
async fn raw(
    url: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    tokio_tungstenite::connect_async(url).await.expect("raw connect").0
}

async fn next_json(
    ws: &mut tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), ws.next()).await.expect("a message in time");
        match message.expect("open").expect("ok") {
            Message::Text(text) => return serde_json::from_str(text.as_str()).expect("json"),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// A plain HTTP/1.1 request on loopback: the status line and the body.
async fn http(base: &str, request: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("tcp");
    stream.write_all(request.replace("HOST", addr).as_bytes()).await.expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status");
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    (status, body)
}

#[tokio::test]
async fn the_scenario_suite_runs_over_websocket() {
    let server = Server::start(WsServerOptions::default()).await;
    let (client, mut events) = scenarios::remote_client();
    let (conn, info) = server.connect(client.clone()).await;
    assert!(info.connection_id.as_deref().is_some_and(|id| !id.is_empty()), "Acp-Connection-Id: {info:?}");
    scenarios::remote_suite(&conn, &client, &mut events).await;
    conn.close().await.expect("close");
    server.shutdown().await;
}

/// Both ends read with a 16 KiB buffer: messages many times that long, and a batch of them,
/// cross both ways whole (each read a part of a frame).
#[tokio::test]
async fn messages_far_longer_than_the_read_buffer_cross_both_ways_whole() {
    let server = Server::start(WsServerOptions::default()).await;
    let (conn, _) = server.connect(TestClient::default()).await;
    handshake(&conn).await;
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..4 {
        let conn = conn.clone();
        let pad = format!("{i}{}", "é\"x\\".repeat(60_000 + i * 7_001));
        calls.spawn(async move {
            let params = json!({"pad": pad, "i": i});
            assert_eq!(conn.ext_method("_echo", params.clone()).await.expect("_echo"), params);
        });
    }
    while let Some(call) = calls.join_next().await {
        call.expect("a call");
    }
    conn.close().await.expect("close");
    server.shutdown().await;
}

#[tokio::test]
async fn two_hundred_remote_sessions_with_interleaved_turns_get_only_their_own_updates() {
    let server = Server::start(WsServerOptions::default()).await;
    let mut turns = Vec::new();
    for c in 0..20 {
        let (conn, _) = server.connect(TestClient::default()).await;
        turns.push(tokio::spawn(async move {
            conn.initialize(common::init_with_caps()).await.expect("initialize");
            let mut sessions = Vec::new();
            for _ in 0..10 {
                sessions
                    .push(conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("new").session_id);
            }
            let mut runs = tokio::task::JoinSet::new();
            for (s, session) in sessions.into_iter().enumerate() {
                let conn = conn.clone();
                let text = format!("conn {c} session {s}");
                runs.spawn(async move {
                    let (texts, stop) = scenarios::run_turn(&conn, &session, &text).await;
                    assert_eq!((texts, stop), (vec![text], StopReason::EndTurn));
                });
            }
            while let Some(run) = runs.join_next().await {
                run.expect("a turn");
            }
            conn.close().await.expect("close");
        }));
    }
    for turn in turns {
        turn.await.expect("connection task");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_missing_or_wrong_token_is_refused_with_401_and_the_right_one_connects() {
    let options = WsServerOptions { bearer_token: Some("s3cret".into()), ..WsServerOptions::default() };
    let server = Server::start(options).await;
    let refused = connect_ws(TestClient::default(), &server.url, WsClientOptions::default()).await;
    assert!(
        matches!(&refused, Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::PermissionDenied),
        "{:?}",
        refused.err()
    );
    let wrong = WsClientOptions { bearer_token: Some("s3creT".into()), ..WsClientOptions::default() };
    assert!(connect_ws(TestClient::default(), &server.url, wrong).await.is_err());
    let right = WsClientOptions { bearer_token: Some("s3cret".into()), ..WsClientOptions::default() };
    let (conn, _) = connect_ws(TestClient::default(), &server.url, right).await.expect("the right token");
    handshake(&conn).await;
    // The health check needs no token.
    let (status, body) = http(&server.base, "GET /healthz HTTP/1.1\r\nHost: HOST\r\nConnection: close\r\n\r\n").await;
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&body).expect("json")["connections"], 1);
    conn.close().await.expect("close");
    server.shutdown().await;
}

#[tokio::test]
async fn bad_frames_are_answered_and_the_connection_and_server_go_on() {
    let options = WsServerOptions { max_message: 4096, ..WsServerOptions::default() };
    let server = Server::start(options).await;
    let mut ws = raw(&server.url).await;
    ws.send(Message::text("this is not json")).await.expect("send");
    let parse_error = next_json(&mut ws).await;
    assert_eq!((parse_error["error"]["code"].clone(), parse_error["id"].clone()), (json!(-32700), Value::Null));
    ws.send(Message::binary(vec![1, 2, 3])).await.expect("send");
    assert_eq!(next_json(&mut ws).await["error"]["code"], -32600);
    ws.send(Message::text("[1,2]")).await.expect("send");
    assert_eq!(next_json(&mut ws).await["error"]["code"], -32600);
    let init = json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 1}});
    ws.send(Message::text(serde_json::to_string_pretty(&init).expect("json"))).await.expect("send");
    let answer = next_json(&mut ws).await;
    assert_eq!((answer["id"].clone(), answer["result"]["protocolVersion"].clone()), (json!(7), json!(1)));
    // Oversized: the WebSocket closes (1009); the server keeps serving others.
    ws.send(Message::text(format!("{{\"pad\":\"{}\"}}", "x".repeat(10_000)))).await.expect("send");
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match ws.next().await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => continue,
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "an oversized message closes the WebSocket");
    let (conn, _) = server.connect(TestClient::default()).await;
    handshake(&conn).await;
    conn.close().await.expect("close");
    server.shutdown().await;
}

#[tokio::test]
async fn connections_over_the_cap_are_refused_with_503_until_one_ends() {
    let options = WsServerOptions { max_connections: 2, ..WsServerOptions::default() };
    let server = Server::start(options).await;
    let (first, _) = server.connect(TestClient::default()).await;
    let (second, _) = server.connect(TestClient::default()).await;
    handshake(&first).await;
    handshake(&second).await;
    let third = connect_ws(TestClient::default(), &server.url, WsClientOptions::default()).await;
    assert!(matches!(&third, Err(Error::Io(e)) if e.to_string().contains("503")), "{:?}", third.err());
    first.close().await.expect("close");
    let mut connected = None;
    for _ in 0..100 {
        if let Ok((conn, _)) = connect_ws(TestClient::default(), &server.url, WsClientOptions::default()).await {
            connected = Some(conn);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let third = connected.expect("a slot frees when a connection ends");
    handshake(&third).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_client_that_vanishes_mid_turn_gets_its_turn_cancelled_on_the_server() {
    // Without resumable streams (with them, the turn outlives the socket for the grace period:
    // `remote_ws_resume.rs`).
    let options = WsServerOptions {
        #[cfg(feature = "unstable_resumable_transport")]
        resumable: None,
        ..WsServerOptions::default()
    };
    let (server, mut observed) = Server::start_observed_with(options).await;
    let mut ws = raw(&server.url).await;
    let send = |v: Value| Message::text(v.to_string());
    ws.send(send(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}})))
        .await
        .expect("init");
    next_json(&mut ws).await;
    ws.send(send(json!({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}})))
        .await
        .expect("new");
    let session = next_json(&mut ws).await["result"]["sessionId"].clone();
    let prompt = json!({"jsonrpc":"2.0","id":3,"method":"session/prompt",
        "params":{"sessionId": session, "prompt":[{"type":"text","text":"wait"}]}});
    ws.send(send(prompt)).await.expect("prompt");
    let update = next_json(&mut ws).await;
    assert_eq!(update["params"]["update"]["content"]["text"], "waiting", "{update}");
    drop(ws); // the client vanishes: TCP closes without a close frame
    let cancelled = tokio::time::timeout(Duration::from_secs(10), observed.recv()).await.expect("in time");
    let cancelled = cancelled.expect("an observation");
    assert!(cancelled.starts_with("cancelled prompt"), "the turn's handler sees its cancellation: {cancelled}");
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_cancels_the_turns_in_flight_answers_them_then_the_server_stops() {
    // Each running prompt is cancelled as `session/cancel` cancels it: the handler sees
    // `SessionCancelled`, the client gets `stopReason: cancelled`; then the server returns.
    let (server, mut observed) = Server::start_observed().await;
    let (conn, _) = server.connect(TestClient::default()).await;
    let session = handshake(&conn).await;
    let mut turn = conn.prompt(common::prompt(&session, "wait")).await.expect("prompt");
    let first = common::next(&mut turn).await.expect("the first update");
    assert_eq!(common::chunk_text(&first), Some("waiting"));
    let stopping = tokio::spawn(server.shutdown());
    let response = tokio::time::timeout(Duration::from_secs(10), turn.response()).await.expect("answered in time");
    let response = response.expect("the turn is answered, not cut");
    assert_eq!(response.stop_reason, StopReason::Cancelled);
    let seen = observed.recv().await.expect("an observation");
    assert_eq!(seen, "cancelled prompt Some(SessionCancelled)");
    stopping.await.expect("the server stopped");
}

#[tokio::test]
async fn a_connection_idle_for_the_timeout_is_closed_and_its_slot_freed() {
    let options = WsServerOptions { idle_timeout: Some(Duration::from_millis(200)), ..WsServerOptions::default() };
    let server = Server::start(options).await;
    let (conn, _) = server.connect(TestClient::default()).await;
    handshake(&conn).await;
    // Nothing moves: the server ends the connection, and the client sees it closed.
    tokio::time::timeout(Duration::from_secs(10), conn.closed()).await.expect("closed by the idle timeout");
    let mut open = String::new();
    for _ in 0..100 {
        open = http(&server.base, "GET /healthz HTTP/1.1\r\nHost: HOST\r\nConnection: close\r\n\r\n").await.1;
        if open.contains("\"connections\":0") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(open.contains("\"connections\":0"), "{open}");
    server.shutdown().await;
}

/// The client runs on a runtime of its own, dropped as soon as `close()` returned (with any
/// task still holding the socket): the server on its thread must have got the close frame.
#[test]
fn closing_the_client_sends_the_close_frame_before_close_returns() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("ws://{}/acp", listener.local_addr().expect("addr"));
    let server = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async move {
            listener.set_nonblocking(true).expect("nonblocking");
            let (tcp, _) = TcpListener::from_std(listener).expect("listener").accept().await.expect("accept");
            let mut ws = tokio_tungstenite::accept_async(tcp).await.expect("upgrade");
            loop {
                match tokio::time::timeout(Duration::from_secs(10), ws.next()).await.expect("in time") {
                    Some(Ok(Message::Close(_))) => return true,
                    Some(Ok(_)) => continue,
                    Some(Err(_)) | None => return false,
                }
            }
        })
    });
    let client = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    client.block_on(async {
        let (conn, _) = connect_ws(TestClient::default(), &url, WsClientOptions::default()).await.expect("connect");
        conn.close().await.expect("close");
    });
    drop(client);
    assert!(server.join().expect("join"), "the server got a close frame, not just the end of the TCP stream");
}
