//! Our Streamable HTTP client (feature `http`) against our own server on loopback: the
//! scenario suite over POSTs and SSE streams (HTTP/1.1 and HTTP/2), many sessions on one
//! connection, the bearer token, and the DELETE that ends the connection on the server.

use crate::common;

use std::time::Duration;

use acp_tokio::acp_proto::types::*;
use acp_tokio::remote::{AgentBackend, HttpClientOptions, WsServerOptions, connect_http, serve_ws};
use acp_tokio::{AgentOptions, ClientConnection, Error};
use common::{EchoAgent, TestClient, handshake, scenarios};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A server of echo agents on an ephemeral loopback port, stopped by dropping `stop`.
struct Server {
    url: String,
    base: String,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    async fn start(options: WsServerOptions) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let backend = AgentBackend::new(EchoAgent::default, AgentOptions::default());
        let shutdown = async move {
            let _ = stopped.await;
        };
        let task = tokio::spawn(serve_ws(listener, backend, options, shutdown));
        Server { url: format!("http://{addr}/acp"), base: addr.to_string(), stop: Some(stop), task }
    }

    async fn connect(&self, client: TestClient, options: HttpClientOptions) -> ClientConnection {
        connect_http(client, &self.url, options).await.expect("connect").0
    }

    /// The number of connections the health check reports.
    async fn connections(&self) -> u64 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(&self.base).await.expect("tcp");
        let request = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.base);
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut response = String::new();
        stream.read_to_string(&mut response).await.expect("read");
        let body = response.split("\r\n\r\n").nth(1).unwrap_or("");
        serde_json::from_str::<Value>(body).expect("json")["connections"].as_u64().expect("a count")
    }

    async fn shutdown(mut self) {
        drop(self.stop.take());
        let ended = tokio::time::timeout(Duration::from_secs(20), self.task).await;
        ended.expect("the server stops").expect("join").expect("served");
    }
}

async fn suite(options: HttpClientOptions) {
    let server = Server::start(WsServerOptions::default()).await;
    let (client, mut events) = scenarios::remote_client();
    let conn = server.connect(client.clone(), options).await;
    scenarios::remote_suite(&conn, &client, &mut events).await;
    conn.close().await.expect("close");
    server.shutdown().await;
}

#[tokio::test]
async fn the_scenario_suite_runs_over_streamable_http_1_1() {
    suite(HttpClientOptions::default()).await;
}

#[tokio::test]
async fn the_scenario_suite_runs_over_streamable_http_2() {
    suite(HttpClientOptions { http2_prior_knowledge: true, ..HttpClientOptions::default() }).await;
}

#[tokio::test]
async fn two_sessions_on_one_connection_get_only_their_own_updates() {
    let server = Server::start(WsServerOptions::default()).await;
    let conn = server.connect(TestClient::default(), HttpClientOptions::default()).await;
    conn.initialize(common::init_with_caps()).await.expect("initialize");
    let a = conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("new a").session_id;
    let b = conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("new b").session_id;
    let (ta, tb) = tokio::join!(scenarios::run_turn(&conn, &a, "to a"), scenarios::run_turn(&conn, &b, "to b"));
    assert_eq!(ta, (vec!["to a".to_owned()], StopReason::EndTurn));
    assert_eq!(tb, (vec!["to b".to_owned()], StopReason::EndTurn));
    conn.close().await.expect("close");
    server.shutdown().await;
}

#[tokio::test]
async fn closing_the_connection_deletes_it_on_the_server() {
    // No idle timeout: only the DELETE can end the connection on the server.
    let server = Server::start(WsServerOptions { idle_timeout: None, ..WsServerOptions::default() }).await;
    let conn = server.connect(TestClient::default(), HttpClientOptions::default()).await;
    handshake(&conn).await;
    assert_eq!(server.connections().await, 1);
    conn.close().await.expect("close");
    // The DELETE goes out as the connection closes; the server then ends the connection.
    while server.connections().await != 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_missing_or_wrong_token_fails_initialize_with_401_and_the_right_one_works() {
    let options = WsServerOptions { bearer_token: Some("s3cret".into()), ..WsServerOptions::default() };
    let server = Server::start(options).await;
    for token in [None, Some("s3creT")] {
        let options = HttpClientOptions { bearer_token: token.map(str::to_owned), ..HttpClientOptions::default() };
        let conn = server.connect(TestClient::default(), options).await;
        let refused = conn.initialize(common::init_with_caps()).await;
        match refused {
            Err(Error::Rpc(e)) => assert!(e.message.contains("401"), "{e:?}"),
            other => panic!("expected a 401 error, got {other:?}"),
        }
        conn.close().await.expect("close");
    }
    let right = HttpClientOptions { bearer_token: Some("s3cret".into()), ..HttpClientOptions::default() };
    let conn = server.connect(TestClient::default(), right).await;
    let session = handshake(&conn).await;
    assert_eq!(scenarios::run_turn(&conn, &session, "hi").await, (vec!["hi".to_owned()], StopReason::EndTurn));
    conn.close().await.expect("close");
    server.shutdown().await;
}

#[tokio::test]
async fn nothing_listening_fails_the_connect() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/acp", listener.local_addr().expect("addr"));
    drop(listener);
    let refused = connect_http(TestClient::default(), &url, HttpClientOptions::default()).await;
    assert!(matches!(&refused, Err(Error::Io(_))), "{:?}", refused.err());
    let wrong = connect_http(TestClient::default(), "ws://127.0.0.1:1/acp", HttpClientOptions::default()).await;
    assert!(matches!(&wrong, Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::InvalidInput));
}

/// A stand-in for a load balancer that sets an affinity cookie on `initialize` and reports the
/// `Cookie` header of every later request: raw HTTP/1.1 on loopback, just enough for this test.
async fn cookie_setting_server(seen: tokio::sync::mpsc::UnboundedSender<String>) -> String {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/acp", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut socket = BufReader::new(socket);
                loop {
                    let (mut head, mut line) = (Vec::new(), String::new());
                    while socket.read_line(&mut line).await.is_ok_and(|n| n > 0) && line != "\r\n" {
                        head.push(std::mem::take(&mut line).to_ascii_lowercase());
                    }
                    let Some(request) = head.first().cloned() else { return };
                    let header = |name: &str| {
                        head.iter().find_map(|h| h.strip_prefix(name).map(|v| v.trim().to_owned())).unwrap_or_default()
                    };
                    let mut body = vec![0; header("content-length:").parse().unwrap_or(0)];
                    socket.read_exact(&mut body).await.expect("body");
                    let response = if request.starts_with("post") && header("acp-connection-id:").is_empty() {
                        let id = serde_json::from_slice::<Value>(&body).expect("json")["id"].clone();
                        let answer = format!(
                            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":1,"agentCapabilities":{{}},"authMethods":[]}}}}"#
                        );
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nacp-connection-id: c1\r\nset-cookie: route=b7; Path=/; HttpOnly\r\ncontent-length: {}\r\n\r\n{answer}",
                            answer.len()
                        )
                    } else {
                        let _ = seen.send(format!("{} {}", request.split(' ').next().unwrap_or(""), header("cookie:")));
                        if request.starts_with("get") {
                            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                                .to_owned()
                        } else {
                            "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_owned()
                        }
                    };
                    if socket.get_mut().write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

#[tokio::test]
async fn the_servers_cookies_are_sent_back_on_every_later_request() {
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let url = cookie_setting_server(seen_tx).await;
    let (conn, _) = connect_http(TestClient::default(), &url, HttpClientOptions::default()).await.expect("connect");
    conn.initialize(common::init_with_caps()).await.expect("initialize");
    // The connection's stream opens after initialize, with the cookie.
    assert_eq!(seen.recv().await.expect("the stream's GET"), "get route=b7");
    conn.close().await.expect("close");
    assert_eq!(seen.recv().await.expect("the DELETE"), "delete route=b7");
}

#[tokio::test]
async fn close_returns_once_the_delete_was_answered() {
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let url = cookie_setting_server(seen_tx).await;
    let (conn, _) = connect_http(TestClient::default(), &url, HttpClientOptions::default()).await.expect("connect");
    conn.initialize(common::init_with_caps()).await.expect("initialize");
    assert_eq!(seen.recv().await.expect("the stream's GET"), "get route=b7");
    conn.close().await.expect("close");
    // The server reports a request before it answers it: no waiting here.
    assert_eq!(seen.try_recv().expect("the DELETE, already answered"), "delete route=b7");
}
