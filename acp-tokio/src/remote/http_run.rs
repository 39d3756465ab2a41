//! One running Streamable HTTP client connection: its requests (POST, GET, DELETE, with the
//! connection's headers and cookies), its SSE stream tasks, and what it tracks to route. See
//! `http_client.rs` for the rules.
//!
//! No ACP field is read here: the connection's observer (`acp_proto::observer`) sees every
//! message both ways and says which session a message belongs to (the `Acp-Session-Id` of a
//! session-scoped POST, and of our answer to an agent request of a session), and which
//! sessions the agent's answers announce (a session stream opens for each).

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use acp_proto::RequestId;
use acp_proto::observer::{FrameKind, Observed, Observer};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, COOKIE, HeaderName, HeaderValue, SET_COOKIE};
use hyper::{Method, Request, Response, StatusCode, Uri};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::cookies::Cookies;
use super::http_client::{HttpClient, HttpClientOptions};
use super::resume::LAST_EVENT_ID;
use super::routes::is_session_scoped;
use super::sse::SseParser;
use super::{CONNECTION_ID_HEADER, SESSION_ID_HEADER};

/// Session streams open at most (the observer bounds the rest).
const MAX_STREAMS: usize = 4096;
/// The JSON-RPC error code of a request the transport could not deliver.
const TRANSPORT_ERROR: i64 = -32603;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the connection tracks to route.
#[derive(Debug, Default)]
struct Tracking {
    /// Every message both ways (ours as the core wrote it, the agent's as the server sent it,
    /// and the transport errors we answer the core with in the agent's place).
    observer: Observer,
    /// Sessions whose stream is open (or opening).
    sessions: HashSet<String>,
}

/// A running connection.
pub(crate) struct Run {
    http: HttpClient,
    uri: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    max_message: usize,
    close_timeout: Duration,
    inbox: mpsc::Sender<String>,
    connection_id: OnceLock<HeaderValue>,
    cookies: Mutex<Cookies>,
    tracking: Mutex<Tracking>,
    ended: watch::Sender<bool>,
    /// A session's stream ended.
    session_ended: tokio::sync::Notify,
    /// How lost streams are resumed, if they are.
    #[cfg(feature = "unstable_resumable_transport")]
    reconnect: Option<super::Reconnect>,
}

impl Run {
    pub(crate) fn new(http: HttpClient, uri: Uri, options: &HttpClientOptions, inbox: mpsc::Sender<String>) -> Run {
        let mut headers = Vec::new();
        if let Some(value) =
            options.bearer_token.as_ref().and_then(|t| HeaderValue::from_str(&format!("Bearer {t}")).ok())
        {
            headers.push((AUTHORIZATION, value));
        }
        for (name, value) in &options.headers {
            if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
                headers.push((name, value));
            }
        }
        Run {
            http,
            uri,
            headers,
            max_message: options.max_message,
            close_timeout: options.connect_timeout,
            inbox,
            connection_id: OnceLock::new(),
            cookies: Mutex::new(Cookies::default()),
            tracking: Mutex::new(Tracking::default()),
            ended: watch::channel(false).0,
            session_ended: tokio::sync::Notify::new(),
            #[cfg(feature = "unstable_resumable_transport")]
            reconnect: options.reconnect.clone(),
        }
    }

    /// How long a stream may stay silent before it counts as lost (only when streams resume).
    fn silent_after(&self) -> Option<Duration> {
        #[cfg(feature = "unstable_resumable_transport")]
        return self.reconnect.as_ref().map(|r| r.silent_after);
        #[cfg(not(feature = "unstable_resumable_transport"))]
        None
    }

    /// Becomes `true` when the connection ended.
    pub(crate) fn ended(&self) -> watch::Receiver<bool> {
        self.ended.subscribe()
    }

    /// One request to the endpoint with the connection's headers and cookies; the answer's
    /// cookies are kept.
    async fn request(&self, method: Method, body: Bytes, session: Option<&str>) -> Result<Response<Incoming>, String> {
        self.request_after(method, body, session, None).await
    }

    /// [`Run::request`], a `GET` resuming after `last_event_id` when given.
    async fn request_after(
        &self,
        method: Method,
        body: Bytes,
        session: Option<&str>,
        last_event_id: Option<&str>,
    ) -> Result<Response<Incoming>, String> {
        let mut request = Request::builder().method(method.clone()).uri(self.uri.clone());
        if let Some(id) = last_event_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            request = request.header(LAST_EVENT_ID, id);
        }
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        if method == Method::POST {
            request = request.header(CONTENT_TYPE, "application/json");
        } else if method == Method::GET {
            request = request.header(ACCEPT, "text/event-stream");
        }
        if let Some(id) = self.connection_id.get() {
            request = request.header(CONNECTION_ID_HEADER, id);
        }
        if let Some(session) = session.and_then(|s| HeaderValue::from_str(s).ok()) {
            request = request.header(SESSION_ID_HEADER, session);
        }
        if let Some(cookie) = lock(&self.cookies).header().and_then(|c| HeaderValue::from_str(&c).ok()) {
            request = request.header(COOKIE, cookie);
        }
        let request = request.body(Full::new(body)).map_err(|e| e.to_string())?;
        let response = self.http.request(request).await.map_err(|e| format!("{method} {}: {e}", self.uri))?;
        let mut cookies = lock(&self.cookies);
        for value in response.headers().get_all(SET_COOKIE) {
            if let Ok(value) = value.to_str() {
                cookies.store(value);
            }
        }
        Ok(response)
    }

    /// A response's body, if it is at most `max_message` bytes.
    async fn body(&self, response: Response<Incoming>) -> Option<Bytes> {
        Limited::new(response.into_body(), self.max_message).collect().await.ok().map(|b| b.to_bytes())
    }

    /// Hands a message to the core (waiting while its inbox is full); `false` once the
    /// connection ended.
    async fn deliver(&self, text: String) -> bool {
        let mut ended = self.ended();
        tokio::select! {
            sent = self.inbox.send(text) => sent.is_ok(),
            _ = ended.wait_for(|e| *e) => false,
        }
    }

    /// Answers the core's request `id` with a transport error.
    async fn fail(&self, id: Option<&RequestId>, why: String) {
        self.refused(id, why, None).await;
    }

    /// Answers the core's request `id` with a transport error; when the server refused the
    /// request, its `data` names the status: `{"httpStatus": 401}`. The observer sees the
    /// answer as the agent's (the request is no longer open).
    async fn refused(&self, id: Option<&RequestId>, why: String, status: Option<StatusCode>) {
        let id = match id {
            Some(RequestId::Number(n)) => Value::from(*n),
            Some(RequestId::Str(s)) => Value::from(&**s),
            Some(RequestId::Null) | None => return,
        };
        let mut error = json!({"code": TRANSPORT_ERROR, "message": why});
        if let Some(status) = status {
            error["data"] = json!({ "httpStatus": status.as_u16() });
        }
        let error = json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string();
        lock(&self.tracking).observer.observe_from_agent(error.as_bytes());
        self.deliver(error).await;
    }

    /// Sends one message of the core (one JSON text); one that is no JSON-RPC message is
    /// dropped (the server would refuse it anyway).
    pub(crate) async fn send(self: &Arc<Self>, body: Bytes) {
        let (observed, session) = self.track_outbound(&body);
        let id = observed.id.as_ref().filter(|_| observed.kind == FrameKind::Request);
        if observed.kind == FrameKind::Invalid {
            return;
        }
        let initialize = observed.method == Some(acp_proto::Method::Initialize) && id.is_some();
        if initialize && self.connection_id.get().is_none() {
            return self.initialize(id, body).await;
        }
        if self.connection_id.get().is_none() {
            return self.fail(id, "not connected: initialize first".into()).await;
        }
        let mut status = None;
        let why = match self.request(Method::POST, body, session.as_deref()).await {
            Ok(response) if response.status() == StatusCode::ACCEPTED => return,
            Ok(response) if response.status() == StatusCode::OK => {
                // Not what the RFD says, but a body here is a message (the Python client does this).
                if let Some(body) = self.body(response).await.filter(|b| !b.is_empty()) {
                    self.receive(String::from_utf8_lossy(&body).into_owned()).await;
                }
                return;
            }
            Ok(response) => {
                status = Some(response.status());
                refusal(self, response).await
            }
            Err(e) => e,
        };
        self.refused(id, why, status).await;
    }

    /// Shows an outgoing message to the observer; returns what it is and its
    /// `Acp-Session-Id`: a session-scoped request's session, or for our answer to an agent
    /// request of a session, that session while its stream is open.
    fn track_outbound(&self, body: &[u8]) -> (Observed, Option<String>) {
        let mut tracking = lock(&self.tracking);
        let observed = tracking.observer.observe_from_client(body);
        let session = match observed.kind {
            FrameKind::Request | FrameKind::Notification if observed.method.is_some_and(is_session_scoped) => {
                observed.session.as_deref().map(str::to_owned)
            }
            FrameKind::Response => {
                let session = observed.answered.as_ref().and_then(|r| r.session.as_deref());
                session.filter(|s| tracking.sessions.contains(*s)).map(str::to_owned)
            }
            _ => None,
        };
        (observed, session)
    }

    /// The `initialize` POST: `200`, the connection id, the response; then the
    /// connection-scoped stream opens.
    async fn initialize(self: &Arc<Self>, id: Option<&RequestId>, body: Bytes) {
        let response = match self.request(Method::POST, body, None).await {
            Ok(response) if response.status() == StatusCode::OK => response,
            Ok(response) => {
                let status = response.status();
                return self.refused(id, refusal(self, response).await, Some(status)).await;
            }
            Err(e) => return self.fail(id, e).await,
        };
        let Some(connection_id) = response.headers().get(CONNECTION_ID_HEADER).cloned() else {
            return self.fail(id, format!("the answer to initialize has no {CONNECTION_ID_HEADER} header")).await;
        };
        let Some(body) = self.body(response).await else {
            return self.fail(id, "the answer to initialize is too large or broken".into()).await;
        };
        let _ = self.connection_id.set(connection_id);
        self.receive(String::from_utf8_lossy(&body).into_owned()).await;
        tokio::spawn(stream(self.clone(), None));
    }

    /// Sends `DELETE` (when a connection was opened) and ends everything.
    pub(crate) async fn close(&self) {
        if self.connection_id.get().is_some() {
            let _ = tokio::time::timeout(self.close_timeout, self.request(Method::DELETE, Bytes::new(), None)).await;
        }
        self.ended.send_replace(true);
    }

    /// One message from the agent: the observer sees it; the session stream its answer
    /// announces opens; then it goes to the core. `false` once the connection ended.
    async fn receive(self: &Arc<Self>, text: String) -> bool {
        let open = {
            let mut tracking = lock(&self.tracking);
            let announced = tracking.observer.observe_from_agent(text.as_bytes()).announced;
            let open = announced
                .filter(|s| !tracking.sessions.contains(&**s) && tracking.sessions.len() < MAX_STREAMS)
                .map(|s| s.to_string());
            if let Some(session) = &open {
                tracking.sessions.insert(session.clone());
            }
            open
        };
        if let Some(session) = open {
            tokio::spawn(stream(self.clone(), Some(session)));
        }
        self.deliver(text).await
    }
}

/// Why the server refused a request: its status and the start of its body.
async fn refusal(run: &Run, response: Response<Incoming>) -> String {
    let status = response.status();
    let body = run.body(response).await.unwrap_or_default();
    let body = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
    if body.is_empty() {
        format!("the server answered {status}")
    } else {
        format!("the server answered {status}: {body}")
    }
}

/// One SSE stream (the connection's when `session` is `None`), until it ends or the
/// connection does. The connection's stream ending ends the connection; a session's ending
/// only forgets it. (Boxed: a stream spawns the streams of the sessions it announces.)
fn stream(run: Arc<Run>, session: Option<String>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        let mut ended = run.ended();
        tokio::select! {
            () = follow(&run, session.as_deref()) => {}
            _ = ended.wait_for(|e| *e) => return,
        }
        match session {
            None => {
                // The server ends its session streams with its connection's, after what they
                // had queued (a drained turn's last updates): they are read to their end first
                // (for `close_timeout` at most), or those messages would be lost.
                let streams_end = async {
                    loop {
                        let ended = run.session_ended.notified();
                        if lock(&run.tracking).sessions.is_empty() {
                            return;
                        }
                        ended.await;
                    }
                };
                let _ = tokio::time::timeout(run.close_timeout, streams_end).await;
                run.ended.send_replace(true);
            }
            Some(session) => {
                lock(&run.tracking).sessions.remove(&session);
                run.session_ended.notify_waiters();
            }
        }
    })
}

/// How reading one response of a stream ended (the reasons are read only to resume).
#[cfg_attr(not(feature = "unstable_resumable_transport"), allow(dead_code))]
enum Read {
    /// The stream is over: the server ended it, or the connection ended.
    Ended,
    /// The server refused the stream (why).
    Refused(String),
    /// The network failed it, or it went silent (why).
    Lost(String),
}

/// Reads the stream until it ends.
#[cfg(not(feature = "unstable_resumable_transport"))]
async fn follow(run: &Arc<Run>, session: Option<&str>) {
    let _ = read_stream(run, session, &mut None, &mut None).await;
}

/// Reads the stream until it ends; a stream lost to the network is opened again after its
/// last event id, when the options resume and the server named one.
#[cfg(feature = "unstable_resumable_transport")]
async fn follow(run: &Arc<Run>, session: Option<&str>) {
    use super::reconnect::{Backoff, LinkEvent};
    let mut last_id: Option<String> = None;
    let mut resuming = None;
    loop {
        let why = match read_stream(run, session, &mut last_id, &mut resuming).await {
            Read::Ended => return,
            Read::Refused(_) | Read::Lost(_) if resuming.is_none() && last_id.is_none() => return,
            Read::Refused(why) => return report_failed(run, resuming.is_some(), why),
            Read::Lost(why) => why,
        };
        let (Some(reconnect), Some(_)) = (&run.reconnect, &last_id) else { return };
        let backoff = resuming.get_or_insert_with(|| {
            reconnect.report(LinkEvent::Lost { reason: why.clone() });
            Backoff::new(reconnect)
        });
        backoff.failed(why);
        if !backoff.wait().await {
            let spent = resuming.take().map(Backoff::spent).unwrap_or_default();
            return reconnect.report(LinkEvent::Failed { reason: spent });
        }
    }
}

/// The resume in progress, if one is (its backoff).
#[cfg(feature = "unstable_resumable_transport")]
type Resuming = Option<super::reconnect::Backoff>;
/// No resume without the feature.
#[cfg(not(feature = "unstable_resumable_transport"))]
type Resuming = Option<std::convert::Infallible>;

/// Reports a resume refused for good.
#[cfg(feature = "unstable_resumable_transport")]
fn report_failed(run: &Run, resuming: bool, why: String) {
    if let (true, Some(reconnect)) = (resuming, &run.reconnect) {
        reconnect.report(super::reconnect::LinkEvent::Failed { reason: why });
    }
}

/// Opens the stream (after `last_id`, if any) and hands its messages on until it ends,
/// keeping `last_id` up to date.
async fn read_stream(
    run: &Arc<Run>,
    session: Option<&str>,
    last_id: &mut Option<String>,
    resuming: &mut Resuming,
) -> Read {
    let response = match run.request_after(Method::GET, Bytes::new(), session, last_id.as_deref()).await {
        Ok(response) => response,
        Err(why) => return Read::Lost(why),
    };
    let status = response.status();
    if status != StatusCode::OK {
        let why = format!("the server answered {status} to the stream's GET");
        #[cfg(feature = "unstable_resumable_transport")]
        if !super::reconnect::refused_for_good(status.as_u16()) {
            return Read::Lost(why);
        }
        return Read::Refused(why);
    }
    // A resumed stream is reported once its first bytes came (its turn state comes first).
    let mut resumed = resuming.take().and(last_id.clone());
    let read = read_body(run, response.into_body(), last_id, &mut resumed).await;
    report_resumed(run, resumed, None);
    read
}

/// Hands the stream's messages on until it ends, keeping `last_id` up to date; reports the
/// resume `resumed` names once the first bytes came.
async fn read_body(
    run: &Arc<Run>,
    mut body: Incoming,
    last_id: &mut Option<String>,
    resumed: &mut Option<String>,
) -> Read {
    let mut parser = SseParser::new(run.max_message);
    loop {
        let frame = match run.silent_after() {
            Some(silent) => match tokio::time::timeout(silent, body.frame()).await {
                Ok(frame) => frame,
                Err(_) => return Read::Lost(format!("nothing came on the stream for {silent:?}")),
            },
            None => body.frame().await,
        };
        let frame = match frame {
            None => return Read::Ended,
            Some(Err(e)) => return Read::Lost(e.to_string()),
            Some(Ok(frame)) => frame,
        };
        let Ok(data) = frame.into_data() else { continue };
        let mut events = Vec::new();
        parser.feed(&data, |event| events.push(event));
        report_resumed(run, resumed.take(), parser.take_turn_state());
        for event in events {
            if !run.receive(event).await {
                return Read::Ended;
            }
        }
        if let Some(id) = parser.last_event_id() {
            *last_id = Some(id.to_owned());
        }
    }
}

/// Reports that the stream resumed after `cursor` (if it did), with the turn state the
/// server sent first.
fn report_resumed(run: &Run, cursor: Option<String>, turn_state: Option<String>) {
    #[cfg(feature = "unstable_resumable_transport")]
    if let (Some(cursor), Some(reconnect)) = (cursor, &run.reconnect) {
        let turns = turn_state.map(|text| acp_proto::resume::read_turn_states(&text)).unwrap_or_default();
        reconnect.report(super::reconnect::LinkEvent::Resumed { cursor, resent: 0, turns });
    }
    #[cfg(not(feature = "unstable_resumable_transport"))]
    let _ = (run, cursor, turn_state);
}
