//! The Streamable HTTP profile on the server: `POST /acp` carries client → agent messages
//! (`initialize` answers `200` with the response and an `Acp-Connection-Id`; everything else
//! `202`), `GET /acp` opens the connection's or a session's SSE stream of agent → client
//! messages (routed by [`super::routes`]), `DELETE /acp` ends the connection.
//!
//! Bounds: a POST body is at most `max_message` bytes (`413`); each stream buffers at most
//! [`STREAM_BUFFER`] messages, and a stream that stays full for `stream_stall` (a client that
//! stopped reading, or never opened it) ends its connection; the routing table is bounded
//! (see [`super::routes`]); connections count against `max_connections` like WebSockets.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use acp_proto::Method;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot, watch};
use tokio::time::Instant;

use super::inflight::{self, InFlight};
use super::pump::read_line;
use super::routes::{Destination, Routes, session_scoped};
use super::server::{Endpoint, Shared, authorize, json_error};
use super::{CONNECTION_ID_HEADER, SESSION_ID_HEADER};

/// Messages a stream buffers for its reader.
pub(crate) const STREAM_BUFFER: usize = 1024;
/// How long `initialize` may take to be answered in its POST.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);
/// A comment on an idle stream this often keeps intermediaries from closing it.
const KEEPALIVE: Duration = Duration::from_secs(15);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One SSE stream: the router's sender, and the receiver a `GET` takes (and gives back when
/// its response ends).
struct Stream {
    tx: mpsc::Sender<String>,
    rx: Arc<Mutex<Option<mpsc::Receiver<String>>>>,
}

impl Stream {
    fn new() -> Stream {
        let (tx, rx) = mpsc::channel(STREAM_BUFFER);
        Stream { tx, rx: Arc::new(Mutex::new(Some(rx))) }
    }
}

/// One Streamable HTTP connection.
pub(crate) struct HttpConnection {
    id: String,
    writer: tokio::sync::Mutex<Option<Box<dyn AsyncWrite + Send + Unpin>>>,
    routes: Mutex<Routes<oneshot::Sender<String>>>,
    connection: Stream,
    sessions: Mutex<HashMap<String, Stream>>,
    closed: watch::Sender<bool>,
    /// The prompts in flight: what a shutdown cancels and waits for.
    turns: InFlight,
    started: Instant,
    last_active_ms: AtomicU64,
}

impl HttpConnection {
    fn touch(&self) {
        let ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_active_ms.store(ms, Ordering::Relaxed);
    }

    fn idle_deadline(&self, idle: Duration) -> Instant {
        self.started + Duration::from_millis(self.last_active_ms.load(Ordering::Relaxed)) + idle
    }

    /// Writes a client message to the agent as one line.
    async fn deliver(&self, message: &Value) -> bool {
        self.touch();
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        let mut writer = self.writer.lock().await;
        let Some(w) = writer.as_mut() else { return false };
        if w.write_all(&line).await.and(w.flush().await).is_err() {
            *writer = None;
            return false;
        }
        true
    }

    /// Ends the agent's input (it ends, and with its output the connection).
    async fn close_input(&self) {
        if let Some(mut writer) = self.writer.lock().await.take() {
            let _ = writer.shutdown().await;
        }
    }

    fn sender(&self, destination: &Destination<oneshot::Sender<String>>) -> Option<mpsc::Sender<String>> {
        match destination {
            Destination::Waiter(_) => None,
            Destination::Connection => Some(self.connection.tx.clone()),
            Destination::Session(s) => {
                Some(lock(&self.sessions).entry(s.clone()).or_insert_with(Stream::new).tx.clone())
            }
        }
    }
}

/// `POST /acp`.
pub(crate) async fn post(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(refused) = authorize(&shared, &headers) {
        return refused;
    }
    let json = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
    if !json.to_ascii_lowercase().starts_with("application/json") {
        return json_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json");
    }
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return json_error(StatusCode::BAD_REQUEST, "the body is not JSON");
    };
    if message.is_array() {
        return json_error(StatusCode::NOT_IMPLEMENTED, "batches are not supported: one JSON-RPC message per POST");
    }
    if !message.is_object() {
        return json_error(StatusCode::BAD_REQUEST, "the body is not a JSON-RPC message");
    }
    let method = message.get("method").and_then(Value::as_str);
    if method == Some(Method::Initialize.wire()) && message.get("id").is_some() {
        return initialize(shared, message).await;
    }
    let connection = match find(&shared, &headers) {
        Ok(connection) => connection,
        Err((status, why)) => return json_error(status, why),
    };
    let session = headers.get(SESSION_ID_HEADER).and_then(|v| v.to_str().ok());
    let scoped = method.is_some_and(session_scoped);
    if scoped && session.is_none() {
        return json_error(StatusCode::BAD_REQUEST, "this method needs the Acp-Session-Id header");
    }
    if let Some(session) = session
        && !lock(&connection.routes).has_session(session)
    {
        return json_error(StatusCode::NOT_FOUND, "unknown Acp-Session-Id");
    }
    lock(&connection.routes).inbound(&message);
    let prompt = connection.turns.client_message(&message);
    if !connection.deliver(&message).await {
        return json_error(StatusCode::GONE, "the connection's agent is gone");
    }
    // A turn started while the server shuts down is cancelled at once.
    if let Some(session) = prompt.filter(|_| *shared.stop.borrow())
        && let Ok(cancel) = serde_json::from_str::<Value>(&inflight::cancel(&session))
    {
        connection.deliver(&cancel).await;
    }
    StatusCode::ACCEPTED.into_response()
}

/// The connection named by the `Acp-Connection-Id` header, or why not (status and message).
fn find(shared: &Shared, headers: &HeaderMap) -> Result<Arc<HttpConnection>, (StatusCode, &'static str)> {
    let Some(id) = headers.get(CONNECTION_ID_HEADER).and_then(|v| v.to_str().ok()) else {
        return Err((StatusCode::BAD_REQUEST, "the Acp-Connection-Id header is missing (send initialize first)"));
    };
    lock(&shared.http).get(id).cloned().ok_or((StatusCode::NOT_FOUND, "unknown Acp-Connection-Id"))
}

/// A POSTed `initialize`: a new connection, answered in the POST's response.
async fn initialize(shared: Arc<Shared>, message: Value) -> Response {
    let Ok(slot) = shared.slots.clone().try_acquire_owned() else {
        return json_error(StatusCode::SERVICE_UNAVAILABLE, "too many connections; try again later");
    };
    let id = shared.new_connection_id();
    let endpoint = match shared.backend.open(&id).await {
        Ok(endpoint) => endpoint,
        Err(e) => return json_error(StatusCode::SERVICE_UNAVAILABLE, &format!("the agent could not start: {e}")),
    };
    let Endpoint { reader, writer, finish } = endpoint;
    let connection = Arc::new(HttpConnection {
        id: id.clone(),
        writer: tokio::sync::Mutex::new(Some(writer)),
        routes: Mutex::new(Routes::default()),
        connection: Stream::new(),
        sessions: Mutex::new(HashMap::new()),
        closed: watch::channel(false).0,
        turns: InFlight::default(),
        started: Instant::now(),
        last_active_ms: AtomicU64::new(0),
    });
    lock(&shared.http).insert(id.clone(), connection.clone());
    let (answer_tx, answer) = oneshot::channel();
    lock(&connection.routes).wait_for(&message, answer_tx);
    tokio::spawn(run(shared.clone(), connection.clone(), reader, finish, slot));
    connection.deliver(&message).await;
    match tokio::time::timeout(INITIALIZE_TIMEOUT, answer).await {
        Ok(Ok(body)) => {
            let mut response = ([("content-type", "application/json")], body).into_response();
            if let Ok(value) = HeaderValue::from_str(&id) {
                response.headers_mut().insert(CONNECTION_ID_HEADER, value);
            }
            response
        }
        Ok(Err(_)) => json_error(StatusCode::BAD_GATEWAY, "the agent ended before answering initialize"),
        Err(_) => {
            end(&shared, &connection).await;
            json_error(StatusCode::GATEWAY_TIMEOUT, "the agent did not answer initialize in time")
        }
    }
}

/// Removes the connection and ends the agent's input.
async fn end(shared: &Shared, connection: &HttpConnection) {
    lock(&shared.http).remove(&connection.id);
    connection.close_input().await;
}

/// The connection's life: routes the agent's messages until its output ends (or the idle
/// timeout, a slow reader, `DELETE`, shutdown end it), then cleans up. Shutdown cancels the
/// prompts in flight first and ends the agent's input once they were answered.
async fn run(
    shared: Arc<Shared>,
    connection: Arc<HttpConnection>,
    reader: Box<dyn tokio::io::AsyncRead + Send + Unpin>,
    finish: super::BoxFuture<'static, ()>,
    _slot: OwnedSemaphorePermit,
) {
    let mut lines = BufReader::new(reader);
    let mut line = Vec::new();
    let mut stop = shared.stop.clone();
    let mut idle = shared.options.idle_timeout;
    let mut stopping = false;
    let mut input_closed = false;
    let mut answers_by = Instant::now();
    loop {
        let deadline = idle.map(|i| connection.idle_deadline(i));
        let stopped = async {
            if stopping {
                std::future::pending::<()>().await;
            }
            let _ = stop.wait_for(|s| *s).await;
        };
        let idle_end = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        let read = tokio::select! {
            read = read_line(&mut lines, &mut line, shared.options.max_message) => Some(read),
            () = stopped => None,
            () = connection.turns.settled_by(answers_by), if stopping && !input_closed => {
                // Every prompt in flight was answered: the agent's input ends.
                input_closed = true;
                connection.close_input().await;
                continue;
            }
            () = idle_end => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    // Idle: the agent's input ends; the loop goes on until its output does.
                    idle = None;
                    end(&shared, &connection).await;
                }
                continue;
            }
        };
        let Some(read) = read else {
            // Shutdown: the prompts in flight are cancelled; their answers are still routed
            // (awaited for half the drain timeout at most).
            stopping = true;
            answers_by = Instant::now() + shared.options.drain_timeout / 2;
            for cancel in connection.turns.cancels() {
                if let Ok(cancel) = serde_json::from_str::<Value>(&cancel) {
                    connection.deliver(&cancel).await;
                }
            }
            continue;
        };
        if !matches!(read, Ok(true)) || !route(&connection, &line, shared.options.stream_stall).await {
            break;
        }
    }
    end(&shared, &connection).await;
    let _ = connection.closed.send(true);
    finish.await;
}

/// Routes one agent message; `false` when its stream stayed full (the connection ends).
async fn route(connection: &HttpConnection, line: &[u8], stall: Duration) -> bool {
    let destination = match super::routes::may_have_id(line) {
        // A notification: routed by its session alone (see `routes.rs`).
        false => {
            let Ok(session) = super::routes::notification_session(line) else { return true };
            connection.touch();
            lock(&connection.routes).to_session(session.as_deref())
        }
        true => {
            let Ok(message) = serde_json::from_slice::<Value>(line) else { return true };
            connection.touch();
            connection.turns.agent_message(&message);
            lock(&connection.routes).outbound(&message)
        }
    };
    let text = String::from_utf8_lossy(line).into_owned();
    if let Destination::Waiter(waiter) = destination {
        let _ = waiter.send(text);
        return true;
    }
    let Some(tx) = connection.sender(&destination) else { return true };
    tx.send_timeout(text, stall).await.is_ok()
}

/// `GET /acp` without an upgrade: the connection's stream, or a session's.
pub(crate) async fn stream(shared: Arc<Shared>, headers: HeaderMap) -> Response {
    if let Some(refused) = authorize(&shared, &headers) {
        return refused;
    }
    let accept = headers.get("accept").and_then(|v| v.to_str().ok()).unwrap_or("");
    if !accept.contains("text/event-stream") && !accept.contains("*/*") {
        return json_error(StatusCode::NOT_ACCEPTABLE, "Accept must include text/event-stream (or open a WebSocket)");
    }
    let connection = match find(&shared, &headers) {
        Ok(connection) => connection,
        Err((status, why)) => return json_error(status, why),
    };
    let slot = match headers.get(SESSION_ID_HEADER).and_then(|v| v.to_str().ok()) {
        None => connection.connection.rx.clone(),
        Some(session) => {
            if !lock(&connection.routes).has_session(session) {
                return json_error(StatusCode::NOT_FOUND, "unknown Acp-Session-Id");
            }
            lock(&connection.sessions).entry(session.to_owned()).or_insert_with(Stream::new).rx.clone()
        }
    };
    let Some(rx) = lock(&slot).take() else {
        return json_error(StatusCode::CONFLICT, "this stream is already open");
    };
    let held = Held { rx: Some(rx), slot };
    let body = Body::from_stream(futures_util::stream::unfold(
        (held, connection.closed.subscribe()),
        |(mut held, mut closed)| async move {
            let rx = held.rx.as_mut()?;
            let event = tokio::select! {
                message = rx.recv() => format!("data: {}\n\n", message?),
                _ = closed.wait_for(|c| *c) => return None,
                () = tokio::time::sleep(KEEPALIVE) => ": keepalive\n\n".to_owned(),
            };
            Some((Ok::<_, std::convert::Infallible>(Bytes::from(event)), (held, closed)))
        },
    ));
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert("content-type", HeaderValue::from_static("text/event-stream"));
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    response
}

/// A stream's receiver while a response holds it; given back when that response ends (the
/// client may open the stream again after a dropped connection).
struct Held {
    rx: Option<mpsc::Receiver<String>>,
    slot: Arc<Mutex<Option<mpsc::Receiver<String>>>>,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(rx) = self.rx.take() {
            *lock(&self.slot) = Some(rx);
        }
    }
}

/// `DELETE /acp`: ends the connection.
pub(crate) async fn delete(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Some(refused) = authorize(&shared, &headers) {
        return refused;
    }
    match find(&shared, &headers) {
        Ok(connection) => {
            end(&shared, &connection).await;
            StatusCode::ACCEPTED.into_response()
        }
        Err((status, why)) => json_error(status, why),
    }
}
