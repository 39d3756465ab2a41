//! Streamable HTTP spoken by hand over HTTP/1.1 on loopback, for the tests of `serve_ws`'s
//! endpoint: a server of echo agents, one request per TCP connection, SSE streams.

use std::time::Duration;

use acp_tokio::AgentOptions;
use acp_tokio::remote::{AgentBackend, WsServerOptions, serve_ws};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use super::EchoAgent;

pub struct Server {
    pub addr: String,
    _stop: oneshot::Sender<()>,
}

pub async fn server(options: WsServerOptions) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let (stop, stopped) = oneshot::channel::<()>();
    let backend = AgentBackend::new(EchoAgent::default, AgentOptions::default());
    tokio::spawn(serve_ws(listener, backend, options, async move {
        let _ = stopped.await;
    }));
    Server { addr, _stop: stop }
}

/// An HTTP/1.1 answer: status, headers (lower-case names) and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

/// Sends one request (`Connection: close`) and reads the whole answer.
pub async fn request(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let stream = TcpStream::connect(addr).await.expect("connect");
    exchange(stream, addr, method, headers, body).await
}

/// [`request`] on a stream of the caller's (a TLS one).
pub async fn exchange<S>(mut stream: S, addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> Answer
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut text =
        format!("{method} /acp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    stream.write_all(text.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    // A TLS peer may close without its close_notify: what came is the answer.
    let read = stream.read_to_end(&mut raw).await;
    assert!(read.is_ok() || !raw.is_empty(), "{read:?}");
    let raw = String::from_utf8_lossy(&raw);
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("status");
    let headers =
        lines.filter_map(|l| l.split_once(": ")).map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned())).collect();
    Answer { status, headers, body: body.to_owned() }
}

pub async fn post(addr: &str, connection: Option<&str>, session: Option<&str>, message: &Value) -> Answer {
    post_with(addr, &[], connection, session, message).await
}

/// [`post`] with `extra` headers (an `Authorization`).
pub async fn post_with(
    addr: &str,
    extra: &[(&str, &str)],
    connection: Option<&str>,
    session: Option<&str>,
    message: &Value,
) -> Answer {
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend_from_slice(extra);
    if let Some(c) = connection {
        headers.push(("Acp-Connection-Id", c));
    }
    if let Some(s) = session {
        headers.push(("Acp-Session-Id", s));
    }
    request(addr, "POST", &headers, &message.to_string()).await
}

/// An open SSE stream: yields each `data:` message.
pub struct Sse {
    lines: tokio::io::Lines<BufReader<TcpStream>>,
    /// The events of a type other than `message` read so far (type, data), which `next` skips.
    pub named: Vec<(String, Value)>,
}

impl Sse {
    pub async fn open(addr: &str, connection: &str, session: Option<&str>) -> Result<Sse, u16> {
        Sse::open_with(addr, &[], connection, session).await
    }

    /// [`Sse::open`] with `extra` headers (an `Authorization`).
    pub async fn open_with(
        addr: &str,
        extra: &[(&str, &str)],
        connection: &str,
        session: Option<&str>,
    ) -> Result<Sse, u16> {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let mut more = session.map(|s| format!("Acp-Session-Id: {s}\r\n")).unwrap_or_default();
        for (name, value) in extra {
            more.push_str(&format!("{name}: {value}\r\n"));
        }
        let head = format!(
            "GET /acp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {connection}\r\n{more}\r\n"
        );
        stream.write_all(head.as_bytes()).await.expect("write");
        let mut lines = BufReader::new(stream).lines();
        let status_line = lines.next_line().await.expect("read").expect("a status line");
        let status: u16 = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status");
        while !lines.next_line().await.expect("read").expect("headers").is_empty() {}
        if status == 200 { Ok(Sse { lines, named: Vec::new() }) } else { Err(status) }
    }

    /// The next message, or `None` at the stream's end. (The body is chunked: chunk sizes are
    /// lines of their own, and `0` ends it.)
    pub async fn next(&mut self) -> Option<Value> {
        self.next_event().await.map(|(_, message)| message)
    }

    /// The next message with its event's `id:` (a resumable stream's cursor), or `None` at the
    /// stream's end.
    pub async fn next_event(&mut self) -> Option<(Option<String>, Value)> {
        let (mut id, mut kind) = (None, None);
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .expect("a message in time")
                .ok()??;
            if line == "0" {
                return None; // the last chunk of the chunked body: the stream ended
            }
            if let Some(cursor) = line.strip_prefix("id: ") {
                id = Some(cursor.to_owned());
            }
            if let Some(named) = line.strip_prefix("event: ") {
                kind = Some(named.to_owned()).filter(|k| k != "message");
            }
            if let Some(data) = line.strip_prefix("data: ") {
                let data = serde_json::from_str(data).expect("JSON data");
                match kind.take() {
                    Some(kind) => self.named.push((kind, data)),
                    None => return Some((id, data)),
                }
            }
        }
    }
}

/// `initialize` by POST: the connection id.
pub async fn initialize(addr: &str) -> String {
    initialize_with(addr, &[]).await
}

/// [`initialize`] with `extra` headers (an `Authorization`).
pub async fn initialize_with(addr: &str, extra: &[(&str, &str)]) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true}}}});
    let answer = post_with(addr, extra, None, None, &init).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.json()["result"]["protocolVersion"], 1);
    answer.header("acp-connection-id").expect("Acp-Connection-Id").to_owned()
}

/// `session/new` by POST on `conn` (with `extra` headers); its answer comes on `stream` (the
/// connection's): the session id.
pub async fn new_session(addr: &str, extra: &[(&str, &str)], conn: &str, stream: &mut Sse, id: u64) -> String {
    let new = json!({"jsonrpc": "2.0", "id": id, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}});
    assert_eq!(post_with(addr, extra, Some(conn), None, &new).await.status, 202);
    let created = stream.next().await.expect("session/new's answer");
    assert_eq!(created["id"], id, "{created}");
    created["result"]["sessionId"].as_str().expect("a session id").to_owned()
}
