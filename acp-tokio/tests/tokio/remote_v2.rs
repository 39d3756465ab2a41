//! ACP v2 over the remote transports (features `unstable_protocol_v2`, `http`, `ws`): acp-tokio's
//! v2 client (`connect_ws`, `connect_http`) against v2 agents hosted by `serve_ws`
//! (`AgentBackend`, the scripted agent of `support/v2_agent.rs`), over WebSocket (the agent's
//! driver on the socket itself, and through the line pump an agent process such as `acp serve`'s
//! goes through) and Streamable HTTP (HTTP/1.1 and HTTP/2): a full turn with a permission ask,
//! a turn cancelled by the client, a turn the server's shutdown cancels (a v2 turn runs past its
//! acknowledgement, up to its `idle` update), and `session/resume` attaching a session on a new
//! HTTP connection.
#![cfg(all(feature = "unstable_protocol_v2", feature = "http", feature = "ws"))]

use crate::v2_agent;

use std::time::Duration;

use acp_proto::TurnEndReason;
use acp_proto::v2::{
    self, ClientCapabilities, ContentBlock, Implementation, InitializeRequest, NewSessionRequest, PromptRequest,
    ProtocolVersion, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionId, SessionUpdate, StateUpdate, TextContent, UpdateSessionNotification,
};
use acp_tokio::remote::{
    Backend, BoxFuture, Endpoint, HttpClientOptions, WsClientOptions, WsServerOptions, serve_ws,
    v2::{AgentBackend, connect_http, connect_ws},
};
use acp_tokio::v2 as tokio_v2;
use acp_tokio::{AgentOptions, ClientContext, acp_proto};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use v2_agent::{AGENT_NAME, Scripted};

const LIMIT: Duration = Duration::from_secs(10);

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f).await.unwrap_or_else(|_| panic!("{what}: nothing within {LIMIT:?}"))
}

/// How the server hosts its agents, and how the client reaches them.
#[derive(Debug, Clone, Copy)]
enum Route {
    /// WebSocket, the in-process agent's driver reading and writing the frames.
    WsDirect,
    /// WebSocket through the line pump (as an agent process is served).
    WsPumped,
    /// Streamable HTTP (HTTP/1.1, or HTTP/2 by prior knowledge).
    Http { h2: bool },
}

const ROUTES: [Route; 4] = [Route::WsDirect, Route::WsPumped, Route::Http { h2: false }, Route::Http { h2: true }];

/// A backend served only through its lines (`Backend::open`), never on the socket itself.
struct Pumped<B>(B);

impl<B: Backend> Backend for Pumped<B> {
    fn open(&self, connection_id: &str) -> BoxFuture<'_, std::io::Result<Endpoint>> {
        self.0.open(connection_id)
    }
}

/// A server of v2 agents on an ephemeral loopback port, stopped by dropping `stop`.
struct Server {
    addr: std::net::SocketAddr,
    route: Route,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    async fn start<A: tokio_v2::Agent>(route: Route, factory: impl Fn() -> A + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let shutdown = async move {
            let _ = stopped.await;
        };
        let backend = AgentBackend::new(factory, AgentOptions::default());
        let options = WsServerOptions::default();
        let task = match route {
            Route::WsPumped => tokio::spawn(serve_ws(listener, Pumped(backend), options, shutdown)),
            _ => tokio::spawn(serve_ws(listener, backend, options, shutdown)),
        };
        Server { addr, route, stop: Some(stop), task }
    }

    async fn connect(&self, client: impl tokio_v2::Client) -> tokio_v2::ClientConnection {
        let connecting = async {
            match self.route {
                Route::WsDirect | Route::WsPumped => {
                    connect_ws(client, &format!("ws://{}/acp", self.addr), WsClientOptions::default()).await
                }
                Route::Http { h2 } => {
                    let options = HttpClientOptions { http2_prior_knowledge: h2, ..HttpClientOptions::default() };
                    connect_http(client, &format!("http://{}/acp", self.addr), options).await
                }
            }
        };
        within("connect", connecting).await.expect("connected").0
    }

    async fn shutdown(mut self) {
        drop(self.stop.take());
        within("the server stops", self.task).await.expect("join").expect("served");
    }
}

/// A client that selects the option `choice`.
struct Choosing(&'static str);

impl tokio_v2::Client for Choosing {
    async fn request_permission(
        &self,
        _: RequestPermissionRequest,
        _: ClientContext,
    ) -> Result<RequestPermissionResponse, acp_proto::RpcError> {
        let outcome = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(self.0));
        Ok(RequestPermissionResponse { outcome, meta: None })
    }
}

async fn initialize(conn: &tokio_v2::ClientConnection) {
    let request = InitializeRequest {
        protocol_version: ProtocolVersion(2),
        info: Implementation::new("acp-tokio-remote-v2-test", "0.1.0"),
        capabilities: ClientCapabilities::default(),
        meta: None,
    };
    let init = within("initialize", conn.initialize(request)).await.expect("the v2 handshake");
    assert_eq!((init.protocol_version, init.info.name.as_str()), (ProtocolVersion(2), AGENT_NAME));
}

async fn open(conn: &tokio_v2::ClientConnection) -> SessionId {
    initialize(conn).await;
    let new = NewSessionRequest {
        cwd: v2::AbsolutePath("/tmp".into()),
        additional_directories: None,
        mcp_servers: None,
        system_prompt: None,
        meta: None,
    };
    within("session/new", conn.new_session(new)).await.expect("a session").session_id
}

async fn prompt(conn: &tokio_v2::ClientConnection, session: &SessionId, text: &str) -> tokio_v2::PromptTurn {
    let prompt = vec![ContentBlock::Text(TextContent::new(text))];
    let request = PromptRequest { session_id: session.clone(), prompt, idempotency_key: None, meta: None };
    within("session/prompt", conn.prompt(request)).await.expect("sent")
}

fn name(update: &UpdateSessionNotification) -> String {
    match &update.update {
        SessionUpdate::StateUpdate(StateUpdate::Idle(i)) => format!("idle {:?}", i.stop_reason),
        SessionUpdate::StateUpdate(StateUpdate::Running(_)) => "running".into(),
        SessionUpdate::ToolCallUpdate(t) => format!("tool {} {:?}", t.tool_call_id.as_str(), t.status),
        SessionUpdate::AgentMessageChunk(c) => match &c.content {
            ContentBlock::Text(t) => format!("chunk {}", t.text),
            other => format!("chunk {other:?}"),
        },
        other => format!("{other:?}"),
    }
}

async fn next(turn: &mut tokio_v2::PromptTurn, n: usize) -> Vec<String> {
    let mut seen = Vec::new();
    for _ in 0..n {
        seen.push(name(&within("an update", turn.next_update()).await.expect("the turn is open")));
    }
    seen
}

async fn rest(turn: &mut tokio_v2::PromptTurn) -> Vec<String> {
    let mut seen = Vec::new();
    while let Some(update) = within("the rest", turn.next_update()).await {
        seen.push(name(&update));
    }
    seen
}

fn idle(reason: v2::IdleStopReason) -> TurnEndReason {
    TurnEndReason::Idle { stop_reason: Some(reason) }
}

/// A full turn with a permission ask (answered `allow`), then a `wait` turn the client cancels.
async fn full_turn_then_cancelled_turn(conn: &tokio_v2::ClientConnection, session: &SessionId, route: Route) {
    let mut turn = prompt(conn, session, "hello").await;
    let ack = within("ack", turn.ack()).await.expect("once").expect("acked");
    assert!(ack.message_id.as_str().starts_with("user-"), "{route:?}: {ack:?}");
    let expected = [
        "running",
        "chunk echo: hello",
        "tool call-1 Some(Pending)",
        "tool call-1 Some(Completed)",
        "idle Some(EndTurn)",
    ];
    assert_eq!(rest(&mut turn).await, expected, "{route:?}: the turn's updates, the idle last");
    assert_eq!(within("finish", turn.finish()).await.expect("ended"), idle(v2::IdleStopReason::EndTurn));

    let mut waiting = prompt(conn, session, "wait").await;
    assert_eq!(next(&mut waiting, 2).await, ["running", "tool call-w1 Some(InProgress)"], "{route:?}");
    within("session/cancel", conn.cancel(session)).await.expect("sent");
    assert_eq!(rest(&mut waiting).await, ["tool call-w1 Some(Cancelled)", "idle Some(Cancelled)"], "{route:?}");
    assert_eq!(within("finish", waiting.finish()).await.expect("ended"), idle(v2::IdleStopReason::Cancelled));
}

#[tokio::test]
async fn a_v2_client_and_agent_take_a_full_turn_and_a_cancelled_one_over_every_remote_route() {
    for route in ROUTES {
        let server = Server::start(route, Scripted::default).await;
        let conn = server.connect(Choosing("allow")).await;
        let session = open(&conn).await;
        full_turn_then_cancelled_turn(&conn, &session, route).await;
        // Two sessions of one connection, each with its own turn at once.
        let other = {
            let new = NewSessionRequest {
                cwd: v2::AbsolutePath("/tmp".into()),
                additional_directories: None,
                mcp_servers: None,
                system_prompt: None,
                meta: None,
            };
            within("session/new", conn.new_session(new)).await.expect("a session").session_id
        };
        let (mut a, mut b) = (prompt(&conn, &session, "one").await, prompt(&conn, &other, "two").await);
        let (a, b) = tokio::join!(rest(&mut a), rest(&mut b));
        assert_eq!((a[1].as_str(), b[1].as_str()), ("chunk echo: one", "chunk echo: two"), "{route:?}");
        within("close", conn.close()).await.expect("the connection closes");
        server.shutdown().await;
    }
}

#[tokio::test]
async fn the_server_shutting_down_cancels_a_running_v2_turn_and_its_client_sees_it_end_cancelled() {
    // The v2 prompt was acknowledged long before: the turn still runs (its idle has not come),
    // so the server's drain sends `session/cancel` and waits for the idle before it ends the
    // agent's input.
    for route in ROUTES {
        let server = Server::start(route, Scripted::default).await;
        let conn = server.connect(Choosing("allow")).await;
        let session = open(&conn).await;
        let mut turn = prompt(&conn, &session, "wait").await;
        within("ack", turn.ack()).await.expect("once").expect("acked");
        assert_eq!(next(&mut turn, 2).await, ["running", "tool call-w1 Some(InProgress)"], "{route:?}");
        let stopping = tokio::spawn(server.shutdown());
        assert_eq!(rest(&mut turn).await, ["tool call-w1 Some(Cancelled)", "idle Some(Cancelled)"], "{route:?}");
        let end = within("finish", turn.finish()).await;
        assert_eq!(end.expect("ended by the agent"), idle(v2::IdleStopReason::Cancelled), "{route:?}");
        within("the server stops", stopping).await.expect("stopped");
    }
}

/// [`Scripted`] that also resumes any session (`session/resume`, with `session` capabilities).
#[derive(Clone, Default)]
struct Resuming(Scripted);

impl tokio_v2::Agent for Resuming {
    async fn initialize(
        &self,
        request: v2::InitializeRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::InitializeResponse, acp_proto::RpcError> {
        self.0.initialize(request, cx).await
    }

    async fn new_session(
        &self,
        request: v2::NewSessionRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::NewSessionResponse, acp_proto::RpcError> {
        self.0.new_session(request, cx).await
    }

    async fn resume_session(
        &self,
        _: v2::ResumeSessionRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::ResumeSessionResponse, acp_proto::RpcError> {
        Ok(serde_json::from_value(json!({})).expect("a valid session/resume response"))
    }

    async fn prompt(
        &self,
        request: v2::PromptRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::PromptResponse, acp_proto::RpcError> {
        self.0.prompt(request, cx).await
    }

    async fn session_cancelled(&self, notification: v2::CancelSessionNotification) {
        self.0.session_cancelled(notification).await;
    }
}

#[tokio::test]
async fn session_resume_on_a_new_http_connection_attaches_the_session_for_its_turns() {
    // v2 has no `session/load`; `session/resume`'s result names no session. The server learns
    // the session from the request, so the next POSTs naming it (`Acp-Session-Id`) and its
    // stream are accepted.
    for route in [Route::Http { h2: false }, Route::WsDirect] {
        let server = Server::start(route, Resuming::default).await;
        let first = server.connect(Choosing("allow")).await;
        let session = open(&first).await;
        within("close", first.close()).await.expect("the connection closes");

        let second = server.connect(Choosing("allow")).await;
        initialize(&second).await;
        let resume = serde_json::from_value(json!({"sessionId": session, "cwd": "/tmp"})).expect("a resume request");
        within("session/resume", second.resume_session(resume)).await.expect("resumed");
        full_turn_then_cancelled_turn(&second, &session, route).await;
        within("close", second.close()).await.expect("the connection closes");
        server.shutdown().await;
    }
}
