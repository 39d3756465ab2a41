//! The server side: one `/acp` endpoint hosting agents for many remote clients, over
//! Streamable HTTP (`http.rs`) and, with the feature `ws`, WebSocket (`server_ws.rs`).
//!
//! Each upgraded WebSocket (or Streamable HTTP connection) is one ACP connection with a
//! [`Backend`] endpoint of its own (an in-process [`Agent`] with its own core, or an agent
//! process in `acp serve`). What a peer can
//! make the server hold is bounded per connection (the message size, the pump's buffers, and
//! behind them the core's own bounds) and in total (`max_connections`); what a TCP connection
//! that is not (yet) one can hold is bounded by the deadlines and the cap of `listen.rs`.
//!
//! A WebSocket's connection id names it in the upgrade's answer and the logs only: nothing
//! is ever looked up by it (the socket itself is the connection), so it grants nothing.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{Extensions, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadHalf, WriteHalf};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use super::auth::{Caller, Peer};
#[cfg(feature = "ws")]
use super::server_ws::Direct;
use super::{DEFAULT_MAX_MESSAGE, ENDPOINT_PATH, HEALTH_PATH};
#[cfg(feature = "ws")]
use crate::runtime::Tokio;
use crate::{Agent, AgentOptions};

/// A boxed future, as [`Backend::open`] returns it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One remote connection's other end: where the peer's messages go (one per line) and where
/// the lines for the peer come from.
pub struct Endpoint {
    /// Lines for the peer (the agent's output).
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    /// Where the peer's messages are written, one per line (the agent's input). Closed when
    /// the peer is gone or the server shuts down.
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
    /// Awaited once both directions ended: waits for the agent to end (and reaps it).
    pub finish: BoxFuture<'static, ()>,
}

/// What serves each remote connection.
pub trait Backend: Send + Sync + 'static {
    /// Opens the endpoint of the connection `connection_id` (called when its WebSocket opens,
    /// or its Streamable HTTP `initialize` arrives). An error refuses the connection (`503`).
    fn open(&self, connection_id: &str) -> BoxFuture<'_, io::Result<Endpoint>>;

    /// The connection `connection_id` served on its WebSocket itself (feature `ws`), without
    /// `open`'s line pipe: only [`AgentBackend`] can (its agent's driver reads and writes the
    /// frames); the default, `None`, uses [`open`](Backend::open). Streamable HTTP connections
    /// always use `open`.
    #[cfg(feature = "ws")]
    fn direct(&self, connection_id: &str) -> Option<Direct> {
        let _ = connection_id;
        None
    }

    /// Told why the server ends the connection `connection_id` itself, before it does (not
    /// when the client or the agent ended it): `"idle"` (nothing moved for the idle timeout;
    /// Streamable HTTP and an in-process agent's WebSocket) or `"stream_stalled"` (a Streamable
    /// HTTP stream stayed full past `stream_stall`: its client does not read it). The default
    /// does nothing; `acp serve` logs it.
    fn ending(&self, connection_id: &str, reason: &str) {
        let _ = (connection_id, reason);
    }
}

/// A [`Backend`] that runs an in-process agent per connection, made by a factory: an
/// [`Agent`] (v1, the default `P`), or with feature `unstable_protocol_v2` a
/// `acp_tokio::v2::Agent` as `AgentBackend<F, V2>`, named `remote::v2::AgentBackend`.
pub struct AgentBackend<F, P = acp_proto::protocol::V1> {
    factory: F,
    options: AgentOptions,
    version: std::marker::PhantomData<fn() -> P>,
}

impl<F, P> AgentBackend<F, P> {
    /// Each connection gets `factory()`, served with `options`.
    pub fn new(factory: F, options: AgentOptions) -> Self {
        AgentBackend { factory, options, version: std::marker::PhantomData }
    }
}

impl<F, A> Backend for AgentBackend<F>
where
    F: Fn() -> A + Send + Sync + 'static,
    A: Agent,
{
    fn open(&self, _connection_id: &str) -> BoxFuture<'_, io::Result<Endpoint>> {
        let (agent, options) = ((self.factory)(), self.options.clone());
        let endpoint = in_process(|reader, writer| crate::serve(agent, reader, writer, options));
        Box::pin(async move { Ok(endpoint) })
    }

    #[cfg(feature = "ws")]
    fn direct(&self, _connection_id: &str) -> Option<Direct> {
        let handlers = crate::handlers::SendHandlers::new((self.factory)());
        let options = self.options.clone();
        Some(Direct(Box::new(move |reader, writer| {
            Box::pin(async move {
                let launch = crate::serve::Launch::new(Tokio, reader, writer, &options);
                let conn = launch.connection::<acp_proto::protocol::V1>();
                let _ = launch.run(conn, handlers).await;
            })
        })))
    }
}

/// ACP v2 backends (feature `unstable_protocol_v2`), re-exported as `remote::v2::AgentBackend`.
#[cfg(feature = "unstable_protocol_v2")]
pub(super) mod v2 {
    use super::{Backend, BoxFuture, Endpoint, in_process, io};
    #[cfg(feature = "ws")]
    use super::{Direct, Tokio};
    use acp_proto::protocol::V2;

    /// A [`Backend`] that runs an in-process ACP v2 agent ([`v2::Agent`](crate::v2::Agent)) per
    /// connection, made by a factory: [`AgentBackend`](super::AgentBackend) for v2. A client
    /// offering only version 1 gets `-32601` for its `initialize`, as from
    /// [`v2::serve`](crate::v2::serve).
    ///
    /// ```no_run
    /// # async fn run(listener: tokio::net::TcpListener) -> std::io::Result<()> {
    /// use acp_tokio::AgentOptions;
    /// use acp_tokio::remote::{WsServerOptions, serve_ws, v2::AgentBackend};
    /// # #[derive(Default)] struct MyAgent;
    /// # impl acp_tokio::v2::Agent for MyAgent {
    /// #     async fn initialize(&self, _: acp_tokio::acp_proto::v2::InitializeRequest, _: acp_tokio::v2::AgentContext)
    /// #         -> Result<acp_tokio::acp_proto::v2::InitializeResponse, acp_tokio::acp_proto::RpcError> { unimplemented!() }
    /// # }
    /// let backend = AgentBackend::new(MyAgent::default, AgentOptions::default());
    /// serve_ws(listener, backend, WsServerOptions::default(), std::future::pending()).await
    /// # }
    /// ```
    pub type AgentBackend<F> = super::AgentBackend<F, V2>;

    impl<F, A> Backend for AgentBackend<F>
    where
        F: Fn() -> A + Send + Sync + 'static,
        A: crate::v2::Agent,
    {
        fn open(&self, _connection_id: &str) -> BoxFuture<'_, io::Result<Endpoint>> {
            let (agent, options) = ((self.factory)(), self.options.clone());
            let endpoint = in_process(|reader, writer| crate::v2::serve(agent, reader, writer, options));
            Box::pin(async move { Ok(endpoint) })
        }

        #[cfg(feature = "ws")]
        fn direct(&self, _connection_id: &str) -> Option<Direct> {
            let (agent, options) = ((self.factory)(), self.options.clone());
            Some(Direct(Box::new(move |reader, writer| {
                Box::pin(async move {
                    let _ = crate::v2::serve_on(Tokio, agent, reader, writer, options).await;
                })
            })))
        }
    }
}

/// The endpoint of an in-process agent: `serve` runs it as a task over one end of an in-memory
/// pipe; the endpoint is the other end.
fn in_process<F>(serve: impl FnOnce(ReadHalf<DuplexStream>, WriteHalf<DuplexStream>) -> F) -> Endpoint
where
    F: Future + Send + 'static,
    F::Output: Send,
{
    let (ours, theirs) = tokio::io::duplex(super::BRIDGE_BUFFER);
    let (agent_in, agent_out) = tokio::io::split(ours);
    let served = tokio::spawn(serve(agent_in, agent_out));
    let (reader, writer) = tokio::io::split(theirs);
    let finish: BoxFuture<'static, ()> = Box::pin(async move {
        let _ = served.await;
    });
    Endpoint { reader: Box::new(reader), writer: Box::new(writer), finish }
}

/// How a [`serve_ws`] server behaves. The defaults suit a team's server.
#[derive(Debug, Clone)]
pub struct WsServerOptions {
    /// Connections served at once; one more is refused with `503`. Default 256. (TCP
    /// connections that carry none are bounded by the deadlines below and
    /// [`max_unauthenticated`](Self::max_unauthenticated).)
    pub max_connections: usize,
    /// A connection on which nothing moved for this long is closed. Default 10 minutes.
    pub idle_timeout: Option<Duration>,
    /// Largest message accepted from a peer (larger: the WebSocket closes with 1009), and the
    /// longest line sent to it. Default 16 MiB.
    pub max_message: usize,
    /// When set, every request but the health check needs `Authorization: Bearer TOKEN` (the
    /// scheme in any case; compared in constant time), else `401`.
    pub bearer_token: Option<String>,
    /// Further tokens accepted as [`bearer_token`](Self::bearer_token) is, each a credential
    /// of its own: a Streamable HTTP connection answers only requests with the token that
    /// opened it (anyone else gets the `404` of an unknown id). Default none.
    pub bearer_tokens: Vec<String>,
    /// After shutdown began, how long connections may take to deliver their last answers
    /// before they are dropped. Default 5 s.
    pub drain_timeout: Duration,
    /// Starts every connection id (`NODE-…`), so that a load balancer in front of several
    /// servers can route each request to the server holding its connection by the
    /// `Acp-Connection-Id` header alone (e.g. an nginx `map` on its prefix). Default none.
    pub node_id: Option<String>,
    /// Streamable HTTP: a stream whose buffer stays full this long (its client stopped
    /// reading it, or never opened it) ends its connection. Default 30 s.
    pub stream_stall: Duration,
    /// Streamable HTTP: bytes one SSE stream buffers for its reader (a message larger than
    /// this passes alone). Past it the agent's output is not read (backpressure), for
    /// `stream_stall` at most. Default 4 MiB.
    pub stream_buffer: usize,
    /// Streamable HTTP: bytes all the SSE streams of one connection buffer together, as
    /// [`stream_buffer`](Self::stream_buffer) for each. Default 16 MiB.
    pub connection_buffer: usize,
    /// How long a TCP connection may take to send a complete request head: from its opening
    /// (after the TLS handshake) for the first, from its first byte for a later one. Then it
    /// is closed. Default 10 s.
    pub header_timeout: Duration,
    /// How long a POST's body may take to arrive whole; then `408` and the connection closes.
    /// Default 30 s.
    pub body_timeout: Duration,
    /// A TCP connection with no request in flight (an open SSE stream or WebSocket is one) for
    /// this long is closed: HTTP keep-alive, an idle HTTP/2 connection. At most the
    /// `idle_timeout`. Default 30 s.
    pub keep_alive_timeout: Duration,
    /// TCP connections held at once that have not presented an accepted token yet (with no
    /// token configured: no complete request head yet), TLS handshakes included; one more
    /// closes the oldest of them. Default 128.
    pub max_unauthenticated: usize,
    /// Serve over TLS (`https://`, `wss://`) with this configuration. Default none (cleartext).
    #[cfg(feature = "tls")]
    pub tls: Option<super::TlsServer>,
    /// Resumable streams, SSE and WebSocket (the draft RFD "durable & resumable transport";
    /// see [`Resumable`]). Default on, with [`Resumable::default`]; `None`: today's streams
    /// (a connection ends with its WebSocket).
    #[cfg(feature = "unstable_resumable_transport")]
    pub resumable: Option<Resumable>,
    /// Sessions shared by several clients (feature `unstable_session_attach`, the draft RFD
    /// "multi-client session attach"): a client of another connection, holding the credential
    /// that opened a session's connection, attaches to it with `session/attach {sessionId,
    /// role}` as an `"observer"` (sees every update) or a `"controller"` (also prompts,
    /// cancels and answers permission asks: the first answer wins). The agent's file and
    /// terminal requests go to the session's own client alone. Default off. With it on, an
    /// in-process agent's WebSocket is served through the backend's lines, as an agent
    /// process's is (see `share.rs`).
    #[cfg(feature = "unstable_session_attach")]
    pub share_sessions: bool,
}

/// Resumable SSE streams (feature `unstable_resumable_transport`): every event carries its
/// stream's cursor (`id:`); what a client's stream took is kept in a ring per stream, so that
/// a client that lost its stream opens it again with `Last-Event-ID` (same
/// `Acp-Connection-Id`, same credential) and gets every message after that cursor, in order,
/// then the live stream. A cursor the ring cannot go on from is refused with `409`. Advertised
/// in the answer to `initialize`, at
/// `result.agentCapabilities._meta["acp/transport"].resumable {retentionMessages, retentionSeconds}`.
/// The ring counts in the streams' byte budgets ([`WsServerOptions::stream_buffer`],
/// [`WsServerOptions::connection_buffer`]): a new message evicts retained ones before it waits.
///
/// With the feature `ws` too, a WebSocket is resumable the same way: its connection outlives
/// the socket (the agent and its turn go on for [`Resumable::grace`]); every agent message
/// carries its cursor at `_meta["acp/cursor"]` of its envelope; a client resumes with a new
/// upgrade naming its `Acp-Connection-Id`, whose first frame is
/// `{"method": "stream/resume", "params": {"cursor": "…"}}` (answered, when sent with an id,
/// with each session's turn state at `result._meta["acp/turnState"]` and the count of the
/// client's frames that reached the agent at `result._meta["acp/received"]`); a cursor the ring cannot
/// go on from gets `stream/resume_failed` and the close code 4409. A close frame from the
/// client ends its connection as `DELETE` does.
#[cfg(feature = "unstable_resumable_transport")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resumable {
    /// Messages kept per stream after its reader took them. Default 1024.
    pub retention_messages: usize,
    /// How long they are kept (a floor for network blips, not a history). Default 60 s.
    pub retention: Duration,
    /// A connection whose connection-scoped stream (a WebSocket's one stream) no reader holds
    /// for this long is ended (its agent's input closes, as on `DELETE`); the idle timeout
    /// still applies. Default 120 s.
    pub grace: Duration,
}

#[cfg(feature = "unstable_resumable_transport")]
impl Default for Resumable {
    fn default() -> Self {
        Resumable { retention_messages: 1024, retention: Duration::from_secs(60), grace: Duration::from_secs(120) }
    }
}

impl Default for WsServerOptions {
    fn default() -> Self {
        WsServerOptions {
            max_connections: 256,
            idle_timeout: Some(Duration::from_secs(600)),
            max_message: DEFAULT_MAX_MESSAGE,
            bearer_token: None,
            bearer_tokens: Vec::new(),
            drain_timeout: Duration::from_secs(5),
            stream_stall: Duration::from_secs(30),
            stream_buffer: 4 << 20,
            connection_buffer: 16 << 20,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            keep_alive_timeout: Duration::from_secs(30),
            max_unauthenticated: 128,
            node_id: None,
            #[cfg(feature = "tls")]
            tls: None,
            #[cfg(feature = "unstable_resumable_transport")]
            resumable: Some(Resumable::default()),
            #[cfg(feature = "unstable_session_attach")]
            share_sessions: false,
        }
    }
}

/// What every request handler of one server shares.
pub(crate) struct Shared {
    pub(crate) backend: Box<dyn Backend>,
    pub(crate) options: WsServerOptions,
    /// One permit per open connection (WebSocket or Streamable HTTP).
    pub(crate) slots: Arc<Semaphore>,
    /// Turns `true` when the server shuts down.
    pub(crate) stop: watch::Receiver<bool>,
    /// The Streamable HTTP connections, by id.
    pub(crate) http: std::sync::Mutex<std::collections::HashMap<String, Arc<super::http::HttpConnection>>>,
    /// The sessions the connections host, when they are shared.
    #[cfg(feature = "unstable_session_attach")]
    pub(crate) shared_sessions: Arc<super::share::Registry>,
}

impl Shared {
    /// A fresh connection id (see `auth.rs`), or `503` when there is no randomness.
    pub(crate) fn new_connection_id(&self) -> Result<String, Refused> {
        super::auth::new_connection_id(self.options.node_id.as_deref())
            .map_err(|_| Refused(StatusCode::SERVICE_UNAVAILABLE, "no randomness for a connection id"))
    }

    /// The backend's endpoint for the connection `id` of `caller` (through the relay of
    /// `share.rs` when sessions are shared).
    pub(crate) async fn open(&self, id: &str, caller: &Caller) -> io::Result<Endpoint> {
        let endpoint = self.backend.open(id).await?;
        #[cfg(feature = "unstable_session_attach")]
        if self.options.share_sessions {
            let registry = self.shared_sessions.clone();
            return Ok(super::share::wrap(registry, id, caller.clone(), self.options.max_message, endpoint));
        }
        let _ = caller;
        Ok(endpoint)
    }

    /// Whether `frame` is a `session/attach` on a server that shares sessions: the session it
    /// names is another connection's (not yet this one's), as for `session/load`.
    pub(crate) fn attaches(&self, frame: &[u8]) -> bool {
        #[cfg(feature = "unstable_session_attach")]
        if self.options.share_sessions {
            return acp_proto::attach::is_attach(frame);
        }
        let _ = frame;
        false
    }

    /// Whether an in-process agent may serve a WebSocket on its frames ([`Direct`]): not
    /// when sessions are shared (the relay needs the lines).
    #[cfg(feature = "ws")]
    pub(crate) fn direct(&self, id: &str) -> Option<Direct> {
        #[cfg(feature = "unstable_session_attach")]
        if self.options.share_sessions {
            return None;
        }
        self.backend.direct(id)
    }
}

/// Serves `backend` on `listener` (endpoint `/acp`, health check `/healthz`) until `shutdown`
/// resolves; then it stops accepting, sends the agent of every connection a `session/cancel`
/// for each prompt turn in flight, and once those are answered (the answers reach the
/// clients; at most half the drain timeout) ends the agent's input; it waits up to `drain_timeout` in all for the connections
/// to finish, and returns.
pub async fn serve_ws(
    listener: TcpListener,
    backend: impl Backend,
    options: WsServerOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let (stop_tx, stop) = watch::channel(false);
    let slots = Arc::new(Semaphore::new(options.max_connections));
    let drain = options.drain_timeout;
    let shared = Arc::new(Shared {
        backend: Box::new(backend),
        options,
        slots: slots.clone(),
        stop: stop.clone(),
        http: std::sync::Mutex::new(std::collections::HashMap::new()),
        #[cfg(feature = "unstable_session_attach")]
        shared_sessions: Arc::default(),
    });
    let max_connections = shared.options.max_connections;
    let app = Router::new()
        .route(ENDPOINT_PATH, get(get_endpoint).post(super::http::post).delete(super::http::delete))
        .route(HEALTH_PATH, get(health))
        .with_state(shared.clone());
    let stopped = stop_tx.subscribe();
    let stopping = async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    };
    let serving = async move {
        tokio::join!(stopping, super::listen::serve(listener, app, shared, stop));
        Ok(())
    };
    drained(serving, stopped, slots, max_connections, drain).await
}

/// Runs `serving` until it ends; once shutdown began, waits at most `drain` in all for it and
/// for every connection to end. A peer that holds a request open (a body that never comes)
/// would otherwise hold the server's graceful shutdown forever; its connection task is left
/// to the runtime.
async fn drained(
    serving: impl Future<Output = io::Result<()>>,
    mut stopped: watch::Receiver<bool>,
    slots: Arc<Semaphore>,
    max_connections: usize,
    drain: Duration,
) -> io::Result<()> {
    tokio::pin!(serving);
    tokio::select! {
        result = &mut serving => result?,
        () = stop_seen(&mut stopped) => {
            let deadline = tokio::time::Instant::now() + drain;
            if let Ok(result) = tokio::time::timeout_at(deadline, &mut serving).await {
                result?;
            }
            // Every connection holds a slot: all slots back means all connections ended.
            let all = u32::try_from(max_connections).unwrap_or(u32::MAX);
            let _ = tokio::time::timeout_at(deadline, slots.acquire_many(all)).await;
            return Ok(());
        }
    }
    let all = u32::try_from(max_connections).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(drain, slots.acquire_many(all)).await;
    Ok(())
}

/// Resolves once `stopped` says the shutdown began (never, if that cannot happen any more).
pub(crate) async fn stop_seen(stopped: &mut watch::Receiver<bool>) {
    while !*stopped.borrow_and_update() {
        if stopped.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

async fn health(State(shared): State<Arc<Shared>>) -> Response {
    let open = shared.options.max_connections - shared.slots.available_permits();
    let body = format!("{{\"status\":\"ok\",\"connections\":{open}}}");
    ([("content-type", "application/json")], body).into_response()
}

/// A JSON body `{"error": message}` with `status`.
pub(crate) fn json_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": message }).to_string();
    (status, [("content-type", "application/json")], body).into_response()
}

/// Who sent the request (see `auth.rs`), or `401`.
pub(crate) fn authorize(shared: &Shared, headers: &HeaderMap, extensions: &Extensions) -> Result<Caller, Refused> {
    super::auth::caller(&shared.options, headers, extensions.get::<Peer>())
        .ok_or(Refused(StatusCode::UNAUTHORIZED, "a valid bearer token is required"))
}

/// A refused request: its status and why, answered as [`json_error`] (a `401` also names the
/// scheme: `WWW-Authenticate: Bearer`).
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) StatusCode, pub(crate) &'static str);

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let mut response = json_error(self.0, self.1);
        if self.0 == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert("www-authenticate", HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// `GET /acp`: a WebSocket upgrade (feature `ws`), or else a Streamable HTTP stream.
async fn get_endpoint(State(shared): State<Arc<Shared>>, request: axum::extract::Request) -> Response {
    let (parts, _body) = request.into_parts();
    let caller = match authorize(&shared, &parts.headers, &parts.extensions) {
        Ok(caller) => caller,
        Err(refused) => return refused.into_response(),
    };
    #[cfg(feature = "ws")]
    let parts = {
        let mut parts = parts;
        if let Some(response) = super::server_ws::upgrade(&shared, &mut parts, caller.clone()).await {
            return response;
        }
        parts
    };
    super::http::stream(shared, parts.headers, caller).await
}
