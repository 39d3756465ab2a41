//! The Streamable HTTP profile on the server: `POST /acp` carries client → agent messages
//! (`initialize` answers `200` with the response and an `Acp-Connection-Id`; everything else
//! `202`), `GET /acp` opens the connection's or a session's SSE stream of agent → client
//! messages (routed by [`super::routes`]), `DELETE /acp` ends the connection.
//!
//! Bounds: a POST body is at most `max_message` bytes (`413`) and arrives within
//! `body_timeout` (`408`); each stream buffers at most `stream_buffer` bytes and a connection's
//! streams `connection_buffer` bytes together (see `streams.rs`); past them the agent's output
//! is not read, and a stream that stays full for `stream_stall` (a client that stopped reading,
//! or never opened it) ends its connection (the backend is told why: `stream_stalled`); the
//! routing table is bounded (see [`super::routes`]); connections count against
//! `max_connections` like WebSockets.
//!
//! Who may use a connection: the caller that opened it (see `auth.rs`); anyone else naming its
//! id gets the `404` of an unknown one. A session belongs to the connection that created or
//! attached it (`session/load`, `session/resume`): a message naming another session, in its
//! `Acp-Session-Id` header or in its `params.sessionId`, is refused (`404`), and the two must
//! agree (`400`). So no connection reaches another's sessions, even with an agent that serves
//! several connections from one state.
//!
//! A resumable WebSocket (feature `unstable_resumable_transport`, see `ws_resume.rs`) is the
//! same connection object with one stream: every agent message goes to its connection stream,
//! answers included, and the socket is that stream's reader. HTTP requests never reach it, nor
//! a WebSocket resume an HTTP connection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use acp_proto::observer::{FrameKind, Observed, Observer};
use acp_proto::{Method, Side};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, oneshot, watch};
use tokio::time::Instant;

use super::auth::Caller;
use super::inflight::{self, InFlight};
use super::line::read_line;
use super::resume;
use super::routes::{Destination, Routes, attaches, is_session_scoped};
use super::server::{Endpoint, Refused, Shared, authorize, json_error};
use super::streams::{Budget, Refusal, Retention, Stream};
use super::{CONNECTION_ID_HEADER, SESSION_ID_HEADER};

/// How long `initialize` may take to be answered in its POST.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One Streamable HTTP connection (or a resumable WebSocket one).
pub(crate) struct HttpConnection {
    pub(crate) id: String,
    /// A WebSocket's: one stream carries every agent message.
    websocket: bool,
    /// Who opened it: the only caller it answers.
    caller: Caller,
    writer: tokio::sync::Mutex<Option<Box<dyn AsyncWrite + Send + Unpin>>>,
    /// Turns `true` when the agent's input is to end: a POST waiting to write gives up.
    closing: watch::Sender<bool>,
    routes: Mutex<Routes<oneshot::Sender<String>>>,
    pub(crate) connection: Stream,
    sessions: Mutex<HashMap<String, Stream>>,
    /// What all its streams buffer together.
    budget: Budget,
    /// Bytes each session's stream buffers.
    stream_buffer: usize,
    /// What each stream retains for a resume (`None`: not resumable).
    retention: Option<Retention>,
    pub(crate) closed: watch::Sender<bool>,
    /// How many readers took the connection stream so far (a WebSocket's reader lets go
    /// when a newer one takes over).
    #[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
    pub(crate) readers: watch::Sender<u64>,
    /// How many WebSocket frames of the client were written to the agent (what a resume's
    /// acknowledgement reports, so that the client sends again only what was lost).
    #[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
    pub(crate) received: AtomicU64,
    /// Held (shared) by each counted write from before it starts until it is counted: the
    /// count a resume reports waits for the writes in flight (`ws_resume.rs`).
    #[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
    pub(crate) counting: Arc<tokio::sync::RwLock<()>>,
    /// The connection's observer: the sessions registered (what routing asks), the prompts in
    /// flight (what a shutdown cancels and waits for).
    pub(crate) turns: InFlight,
    started: Instant,
    last_active_ms: AtomicU64,
}

impl HttpConnection {
    /// A new connection of `caller` (a WebSocket's with `websocket`): a slot, an id, its agent
    /// started and the connection opened; else the response that refuses it.
    pub(crate) async fn start(
        shared: &Arc<Shared>,
        caller: Caller,
        websocket: bool,
    ) -> Result<Arc<HttpConnection>, Response> {
        let Ok(slot) = shared.slots.clone().try_acquire_owned() else {
            return Err(json_error(StatusCode::SERVICE_UNAVAILABLE, "too many connections; try again later"));
        };
        let id = shared.new_connection_id().map_err(IntoResponse::into_response)?;
        let endpoint = match shared.open(&id, &caller).await {
            Ok(endpoint) => endpoint,
            Err(e) => {
                let message = format!("the agent could not start: {e}");
                return Err(json_error(StatusCode::SERVICE_UNAVAILABLE, &message));
            }
        };
        Ok(HttpConnection::open(shared, id, caller, endpoint, slot, websocket))
    }

    fn touch(&self) {
        let ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_active_ms.store(ms, Ordering::Relaxed);
    }

    fn idle_deadline(&self, idle: Duration) -> Instant {
        self.started + Duration::from_millis(self.last_active_ms.load(Ordering::Relaxed)) + idle
    }

    /// Writes a client message to the agent as one line (waiting while the agent reads
    /// nothing); `false` when the agent's input ended, or ends meanwhile.
    async fn deliver(self: &Arc<Self>, message: &Value) -> bool {
        self.deliver_line(message.to_string().into_bytes(), false).await
    }

    /// Writes one client message (JSON text without a line break) to the agent as one line;
    /// see [`HttpConnection::deliver`]. The write runs on a task of its own, so that a caller
    /// that goes away meanwhile (a POST whose client hung up, a WebSocket taken over) never
    /// leaves half a line in the agent's input; a `counted` WebSocket frame is counted (what a
    /// resume's answer reports) once it was written.
    pub(crate) async fn deliver_line(self: &Arc<Self>, mut line: Vec<u8>, counted: bool) -> bool {
        self.touch();
        line.push(b'\n');
        let connection = self.clone();
        #[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
        let counting = match counted {
            true => Some(self.counting.clone().read_owned().await),
            false => None,
        };
        #[cfg(not(all(feature = "ws", feature = "unstable_resumable_transport")))]
        let _ = counted;
        let write = tokio::spawn(async move {
            let written = connection.write_line(&line).await;
            #[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
            if let (true, Some(_counting)) = (written, counting) {
                connection.received.fetch_add(1, Ordering::Relaxed);
            }
            written
        });
        write.await.unwrap_or(false)
    }

    /// Writes `line` to the agent's input (waiting while the agent reads nothing); `false`
    /// when the input ended, or ends meanwhile.
    async fn write_line(&self, line: &[u8]) -> bool {
        let mut closing = self.closing.subscribe();
        let mut writer = tokio::select! {
            writer = self.writer.lock() => writer,
            _ = closing.wait_for(|c| *c) => return false,
        };
        let Some(w) = writer.as_mut() else { return false };
        let written = tokio::select! {
            written = async { w.write_all(line).await.and(w.flush().await) } => written.is_ok(),
            _ = closing.wait_for(|c| *c) => false,
        };
        if !written {
            *writer = None;
        }
        written
    }

    /// Ends the agent's input (it ends, and with its output the connection). A POST blocked
    /// writing to an agent that reads nothing gives up first.
    async fn close_input(&self) {
        self.closing.send_replace(true);
        if let Some(mut writer) = self.writer.lock().await.take() {
            let _ = writer.shutdown().await;
        }
    }

    /// The stream of `destination` (a session's is made on its first message).
    fn stream(&self, destination: &Destination<oneshot::Sender<String>>) -> Option<Stream> {
        match destination {
            Destination::Waiter(_) => None,
            Destination::Connection => Some(self.connection.clone()),
            Destination::Session(s) => Some(self.session_stream(s)),
        }
    }

    fn session_stream(&self, session: &str) -> Stream {
        let mut sessions = lock(&self.sessions);
        sessions.entry(session.to_owned()).or_insert_with(|| Stream::new(self.stream_buffer, self.retention)).clone()
    }

    /// Drops the message retained longest by any of its streams; `false` when none retains
    /// any (see `streams.rs`).
    fn evict_retained(&self) -> bool {
        let sessions = lock(&self.sessions);
        resume::evict_oldest(std::iter::once(&self.connection).chain(sessions.values()))
    }
}

/// `POST /acp`.
pub(crate) async fn post(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let caller = match authorize(&shared, &headers, &parts.extensions) {
        Ok(caller) => caller,
        Err(refused) => return refused.into_response(),
    };
    let json = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
    if !json.to_ascii_lowercase().starts_with("application/json") {
        return json_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json");
    }
    let body = match read_body(body, shared.options.max_message, shared.options.body_timeout).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return json_error(StatusCode::BAD_REQUEST, "the body is not JSON");
    };
    if message.is_array() {
        return json_error(StatusCode::NOT_IMPLEMENTED, "batches are not supported: one JSON-RPC message per POST");
    }
    if !message.is_object() {
        return json_error(StatusCode::BAD_REQUEST, "the body is not a JSON-RPC message");
    }
    let read = Observer::read(Side::Client, &body);
    if read.kind == FrameKind::Request && read.method == Some(Method::Initialize) {
        return initialize(shared, message, &body, caller).await;
    }
    let connection = match find(&shared, &headers, &caller) {
        Ok(connection) => connection,
        Err(refused) => return refused.into_response(),
    };
    if !shared.attaches(&body)
        && let Err(refused) = check_sessions(&connection, &headers, &read)
    {
        return refused.into_response();
    }
    let prompt = connection.turns.client_frame(&body).turn_began;
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

/// A POST's body: at most `max` bytes (else `413`), whole within `deadline` (else `408`, and
/// the TCP connection closes: the rest of the body would be taken for the next request).
async fn read_body(body: Body, max: usize, deadline: Duration) -> Result<Bytes, Response> {
    let refused = |status, why: &str| {
        let mut response = json_error(status, why);
        response.headers_mut().insert("connection", HeaderValue::from_static("close"));
        response
    };
    match tokio::time::timeout(deadline, Limited::new(body, max).collect()).await {
        Ok(Ok(body)) => Ok(body.to_bytes()),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            Err(refused(StatusCode::PAYLOAD_TOO_LARGE, &format!("the body is larger than {max} bytes")))
        }
        Ok(Err(_)) => Err(refused(StatusCode::BAD_REQUEST, "the body could not be read")),
        Err(_) => Err(refused(StatusCode::REQUEST_TIMEOUT, "the body did not arrive in time")),
    }
}

/// The connection named by the `Acp-Connection-Id` header, if `caller` opened it; else the
/// answer (`400` without the header; `404` for an unknown id and for another's alike).
fn find(shared: &Shared, headers: &HeaderMap, caller: &Caller) -> Result<Arc<HttpConnection>, Refused> {
    let Some(id) = headers.get(CONNECTION_ID_HEADER).and_then(|v| v.to_str().ok()) else {
        let why = "the Acp-Connection-Id header is missing (send initialize first)";
        return Err(Refused(StatusCode::BAD_REQUEST, why));
    };
    find_id(shared, id, caller, false)
}

/// The connection `id` if `caller` opened it and it is a WebSocket's (`websocket`) or an HTTP
/// one; else `404`, the same for an unknown id and another's.
pub(crate) fn find_id(
    shared: &Shared,
    id: &str,
    caller: &Caller,
    websocket: bool,
) -> Result<Arc<HttpConnection>, Refused> {
    let found = lock(&shared.http).get(id).filter(|c| c.caller == *caller && c.websocket == websocket).cloned();
    found.ok_or(Refused(StatusCode::NOT_FOUND, "unknown Acp-Connection-Id"))
}

/// The sessions a client message names must be the connection's: its `Acp-Session-Id` header
/// (required on the session-scoped methods) and its `params.sessionId` (but for the requests
/// that attach a session, `session/load` and `session/resume`) must be registered, and the two
/// must agree.
fn check_sessions(connection: &HttpConnection, headers: &HeaderMap, read: &Observed) -> Result<(), Refused> {
    let header = headers.get(SESSION_ID_HEADER).and_then(|v| v.to_str().ok());
    if read.method.is_some_and(is_session_scoped) && header.is_none() {
        return Err(Refused(StatusCode::BAD_REQUEST, "this method needs the Acp-Session-Id header"));
    }
    let named = match read.kind {
        FrameKind::Request | FrameKind::Notification => read.session.as_deref(),
        _ => None,
    };
    let owned = named.filter(|_| !read.method.is_some_and(attaches));
    if header.into_iter().chain(owned).any(|session| !connection.turns.has_session(session)) {
        return Err(Refused(StatusCode::NOT_FOUND, "unknown Acp-Session-Id"));
    }
    if let (Some(header), Some(named)) = (header, named)
        && header != named
    {
        return Err(Refused(StatusCode::BAD_REQUEST, "Acp-Session-Id and params.sessionId name different sessions"));
    }
    Ok(())
}

/// A POSTed `initialize`: a new connection of `caller`, answered in the POST's response.
async fn initialize(shared: Arc<Shared>, message: Value, body: &[u8], caller: Caller) -> Response {
    let connection = match HttpConnection::start(&shared, caller, false).await {
        Ok(connection) => connection,
        Err(refused) => return refused,
    };
    let (answer_tx, answer) = oneshot::channel();
    if let Some(id) = connection.turns.client_frame(body).id {
        lock(&connection.routes).wait_for(id, answer_tx);
    }
    connection.deliver(&message).await;
    match tokio::time::timeout(INITIALIZE_TIMEOUT, answer).await {
        Ok(Ok(body)) => {
            let body = resume::advertise(connection.retention, body);
            let mut response = ([("content-type", "application/json")], body).into_response();
            if let Ok(value) = HeaderValue::from_str(&connection.id) {
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

impl HttpConnection {
    /// A new connection of `caller` to `endpoint`, registered under `id` and served (its
    /// agent's output routed, its idle and grace periods watched) until it ends; a WebSocket's
    /// with `websocket`.
    pub(crate) fn open(
        shared: &Arc<Shared>,
        id: String,
        caller: Caller,
        endpoint: Endpoint,
        slot: OwnedSemaphorePermit,
        websocket: bool,
    ) -> Arc<HttpConnection> {
        let Endpoint { reader, writer, finish } = endpoint;
        let connection = Arc::new(HttpConnection {
            id: id.clone(),
            websocket,
            caller,
            writer: tokio::sync::Mutex::new(Some(writer)),
            closing: watch::channel(false).0,
            routes: Mutex::new(Routes::default()),
            connection: Stream::new(shared.options.stream_buffer, resume::retention(&shared.options)),
            sessions: Mutex::new(HashMap::new()),
            budget: Budget::new(shared.options.connection_buffer),
            stream_buffer: shared.options.stream_buffer,
            retention: resume::retention(&shared.options),
            closed: watch::channel(false).0,
            #[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
            readers: watch::channel(0).0,
            #[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
            received: AtomicU64::new(0),
            #[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
            counting: Arc::new(tokio::sync::RwLock::new(())),
            turns: InFlight::default(),
            started: Instant::now(),
            last_active_ms: AtomicU64::new(0),
        });
        lock(&shared.http).insert(id, connection.clone());
        tokio::spawn(run(shared.clone(), connection.clone(), reader, finish, slot));
        if let Some(grace) = resume::grace(&shared.options) {
            tokio::spawn(reap_detached(shared.clone(), connection.clone(), grace));
        }
        connection
    }
}

/// Ends `connection` once its connection-scoped stream went `grace` without a reader (from
/// its start, or since its last reader left), as `DELETE` would; the backend is told why
/// (`detached`).
async fn reap_detached(shared: Arc<Shared>, connection: Arc<HttpConnection>, grace: Duration) {
    let mut held = connection.connection.held();
    let mut closed = connection.closed.subscribe();
    loop {
        tokio::select! {
            _ = held.wait_for(|h| !*h) => {}
            _ = closed.wait_for(|c| *c) => return,
        }
        tokio::select! {
            () = tokio::time::sleep(grace) => break,
            _ = held.wait_for(|h| *h) => continue,
            _ = closed.wait_for(|c| *c) => return,
        }
    }
    shared.backend.ending(&connection.id, "detached");
    end(&shared, &connection).await;
}

/// Removes the connection and ends the agent's input.
pub(crate) async fn end(shared: &Shared, connection: &HttpConnection) {
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
                    shared.backend.ending(&connection.id, "idle");
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
        if !matches!(read, Ok(true)) {
            break;
        }
        if !route(&connection, &line, shared.options.stream_stall).await {
            shared.backend.ending(&connection.id, "stream_stalled");
            break;
        }
    }
    end(&shared, &connection).await;
    let _ = connection.closed.send(true);
    // An agent blocked writing its output sees it closed.
    drop(lines);
    finish.await;
}

/// Routes one agent message; `false` when its stream stayed full (the connection ends).
async fn route(connection: &HttpConnection, line: &[u8], stall: Duration) -> bool {
    let observed = connection.turns.agent_frame(line);
    if observed.kind == FrameKind::Invalid {
        // No JSON-RPC message: not relayed.
        return true;
    }
    connection.touch();
    let text = String::from_utf8_lossy(line).into_owned();
    if connection.websocket {
        // One stream carries everything; the answer to initialize advertises the retention.
        let initialize = observed.answered.as_ref().is_some_and(|r| r.method == Some(Method::Initialize));
        let text = if initialize { resume::advertise(connection.retention, text) } else { text };
        let send = connection.connection.send(text, &connection.budget, || connection.evict_retained());
        return tokio::time::timeout(stall, send).await.unwrap_or(false);
    }
    let destination = lock(&connection.routes).route(&observed, |s| connection.turns.has_session(s));
    if let Destination::Waiter(waiter) = destination {
        let _ = waiter.send(text);
        return true;
    }
    let Some(stream) = connection.stream(&destination) else { return true };
    let send = stream.send(text, &connection.budget, || connection.evict_retained());
    tokio::time::timeout(stall, send).await.unwrap_or(false)
}

/// `GET /acp` without an upgrade: the connection's stream, or a session's.
pub(crate) async fn stream(shared: Arc<Shared>, headers: HeaderMap, caller: Caller) -> Response {
    let accept = headers.get("accept").and_then(|v| v.to_str().ok()).unwrap_or("");
    if !accept.contains("text/event-stream") && !accept.contains("*/*") {
        return json_error(StatusCode::NOT_ACCEPTABLE, "Accept must include text/event-stream (or open a WebSocket)");
    }
    let connection = match find(&shared, &headers, &caller) {
        Ok(connection) => connection,
        Err(refused) => return refused.into_response(),
    };
    let stream = match headers.get(SESSION_ID_HEADER).and_then(|v| v.to_str().ok()) {
        None => connection.connection.clone(),
        Some(session) => {
            if !connection.turns.has_session(session) {
                return json_error(StatusCode::NOT_FOUND, "unknown Acp-Session-Id");
            }
            connection.session_stream(session)
        }
    };
    let session = headers.get(SESSION_ID_HEADER).and_then(|v| v.to_str().ok());
    let resume_after = resume::last_event_id(&headers);
    let preface = resume_after.and_then(|_| resume::turn_state_event(&connection.turns, session));
    let body = match stream.open(connection.closed.subscribe(), resume_after, preface) {
        Ok(body) => body,
        Err(Refusal::Busy) => return json_error(StatusCode::CONFLICT, "this stream is already open"),
        Err(Refusal::Gone) => {
            let why = "stream/resume_failed: the stream cannot go on from this Last-Event-ID (unknown, or no \
                       longer retained); resume the session instead";
            return json_error(StatusCode::CONFLICT, why);
        }
    };
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert("content-type", HeaderValue::from_static("text/event-stream"));
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    response
}

/// `DELETE /acp`: ends the connection.
pub(crate) async fn delete(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, _body) = request.into_parts();
    let caller = match authorize(&shared, &parts.headers, &parts.extensions) {
        Ok(caller) => caller,
        Err(refused) => return refused.into_response(),
    };
    match find(&shared, &parts.headers, &caller) {
        Ok(connection) => {
            end(&shared, &connection).await;
            StatusCode::ACCEPTED.into_response()
        }
        Err(refused) => refused.into_response(),
    }
}
