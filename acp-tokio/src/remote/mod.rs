//! Remote ACP (features `ws` and `http`), as the RFD "Streamable HTTP & WebSocket Transport"
//! describes it: one endpoint (`/acp`) with two profiles.
//!
//! Features: `ws` gives the WebSocket client (`connect_ws`) and the server's WebSocket arm;
//! `http` the Streamable HTTP client (`connect_http`). Either gives the server ([`serve_ws`],
//! named for its first profile), which always serves Streamable HTTP; with `ws` it also
//! answers WebSocket upgrades on the same endpoint (without it an upgrade request is an
//! ordinary `GET`). `http` does not turn on `ws`: a Streamable HTTP build has no
//! tokio-tungstenite. `tls` adds `https://` and `wss://` to whatever is on.
//!
//! * **WebSocket** (feature `ws`; `server_ws.rs`): a `GET` with `Upgrade: websocket` opens a
//!   full-duplex connection carrying one JSON-RPC message per text frame; the upgrade
//!   response names the connection in an `Acp-Connection-Id` header.
//! * **Streamable HTTP** (server side): `POST` carries each client message (`initialize`
//!   answers `200` with the response and the `Acp-Connection-Id`, the rest `202`); `GET` with
//!   `Accept: text/event-stream` opens the connection's SSE stream, or a session's with
//!   `Acp-Session-Id`; the agent's messages are routed to them (see `routes.rs`); `DELETE`
//!   ends the connection. HTTP/1.1 and HTTP/2 (cleartext, prior knowledge) are both served.
//!
//! The core does not change: a remote connection is a [`Connection`](acp_proto::Connection)
//! like one over stdio. Over WebSocket its driver reads and writes the frames itself (each text
//! frame one line, see `frames.rs`): `connect_ws` and an in-process agent's server side
//! ([`AgentBackend`]) need no pipe and no task per direction. A backend that speaks lines (an
//! agent process), `WsLink::pump` and Streamable HTTP go through a pump and an in-memory
//! pipe instead (see `pump.rs`). So every bound and rule of the core holds for remote peers
//! too.
//!
//! * Client: `connect_ws` (feature `ws`) gives a [`ClientConnection`](crate::ClientConnection);
//!   so does `connect_http` over Streamable HTTP (feature `http`; see `HttpClientOptions` for the HTTP
//!   version and `http_client.rs` for the rules).
//! * Server: [`serve_ws`] hosts a [`Backend`] (an in-process [`Agent`](crate::Agent) per
//!   connection with [`AgentBackend`], or anything that speaks lines, like an agent process)
//!   for many clients: a connection cap, an idle timeout, bearer tokens (`auth.rs`: what a
//!   connection id is bound to), a health check (`/healthz`), and a graceful shutdown. Its own
//!   accept loop (`listen.rs`) puts deadlines on every TCP connection and caps those not
//!   authenticated yet; Streamable HTTP streams are bounded in bytes (`streams.rs`).
//! * ACP v2 (feature `unstable_protocol_v2`): the same names in `remote::v2`:
//!   `v2::connect_ws` and `v2::connect_http` give a `acp_tokio::v2::ClientConnection` over the
//!   same transports; `v2::AgentBackend` hosts an in-process `acp_tokio::v2::Agent` per
//!   connection. The server reads what routing and shutdown need off the
//!   messages of either version: a v2 prompt's turn runs from its acknowledgement to the
//!   session's `idle` `state_update` (`inflight.rs`), and a successful `session/resume` (v2
//!   has no `session/load`) attaches the session its request named (`routes.rs`). An agent
//!   process served through [`Backend::open`] (`acp serve`) may speak either version.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use acp_tokio::AgentOptions;
//! use acp_tokio::remote::{AgentBackend, WsServerOptions, serve_ws};
//!
//! # #[derive(Default)] struct MyAgent;
//! # impl acp_tokio::Agent for MyAgent {
//! #     async fn initialize(&self, _: acp_tokio::acp_proto::types::InitializeRequest, _: acp_tokio::RequestContext)
//! #         -> Result<acp_tokio::acp_proto::types::InitializeResponse, acp_tokio::acp_proto::RpcError> { unimplemented!() }
//! # }
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8765").await?;
//! let backend = AgentBackend::new(MyAgent::default, AgentOptions::default());
//! // Whatever should stop the server: a signal, a channel...
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! # drop(stop);
//! let shutdown = async { let _ = stopped.await; };
//! serve_ws(listener, backend, WsServerOptions::default(), shutdown).await
//! # }
//! ```
//!
//! TLS (feature `tls`, rustls): a server with [`WsServerOptions`]`::tls` serves `https://` and
//! `wss://` on the same endpoint (ALPN `h2` and `http/1.1`); `connect_ws` opens `wss://` URLs
//! trusting the platform's roots or the CAs of `WsClientOptions::tls` (see `tls.rs`), and
//! `connect_http` opens `https://` URLs the same way (`HttpClientOptions::tls`; HTTP/2 when the
//! server picks `h2`). Both clients read their URL and connect through one path (`dial.rs`).
//!
//! Resumable streams (feature `unstable_resumable_transport`, the draft RFD "durable &
//! resumable transport"): the server keeps what it sent in a ring per stream and lets a
//! client resume after its last cursor (Streamable HTTP with `Last-Event-ID`, `resume.rs`;
//! WebSocket with `stream/resume`, `ws_resume.rs`); with `WsClientOptions::reconnect`,
//! `connect_ws` and `WsLink::pump` resume a lost socket themselves (`ws_reconnect.rs`).
//!
//! Shared sessions (feature `unstable_session_attach`, the draft RFD "multi-client session
//! attach"): with [`WsServerOptions`]`::share_sessions`, a client of another connection that
//! holds the credential of a session's connection attaches to it (`session/attach {sessionId,
//! role}`) as an observer or a controller, over either transport; each connection's lines go
//! through a relay that asks `acp_proto::attach` where every frame goes (`share.rs`).
//!
//! Not here (yet): a Streamable HTTP client that resumes, and falling back to `session/load`
//! or `session/resume` when a resume is refused (left to the application: a new connection
//! with `RemoteInfo::cookies` sent back).

mod auth;
#[cfg(feature = "http")]
mod bridge;
#[cfg(feature = "ws")]
mod client;
#[cfg(feature = "http")]
mod cookies;
#[cfg(any(feature = "ws", feature = "http"))]
mod dial;
#[cfg(feature = "ws")]
mod frames;
mod http;
#[cfg(feature = "http")]
mod http_client;
#[cfg(feature = "http")]
mod http_connect;
#[cfg(feature = "http")]
mod http_run;
mod inflight;
mod line;
mod listen;
#[cfg(feature = "ws")]
mod pump;
#[cfg(all(feature = "unstable_resumable_transport", any(feature = "ws", feature = "http")))]
mod reconnect;
mod resume;
mod routes;
mod server;
#[cfg(feature = "ws")]
mod server_ws;
#[cfg(feature = "unstable_session_attach")]
mod share;
#[cfg(feature = "http")]
mod sse;
mod streams;
#[cfg(feature = "tls")]
mod tls;
#[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
mod ws_reconnect;
#[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
mod ws_resume;

#[cfg(feature = "ws")]
pub use client::{WsClientOptions, WsLink, connect_ws, open_ws};
#[cfg(any(feature = "ws", feature = "http"))]
pub use dial::RemoteInfo;
#[cfg(feature = "http")]
pub use http_client::{HttpClientOptions, HttpLink, connect_http, open_http};
#[cfg(all(feature = "unstable_resumable_transport", any(feature = "ws", feature = "http")))]
pub use reconnect::{LinkEvent, Reconnect, ResumedTurn};
#[cfg(feature = "unstable_resumable_transport")]
pub use server::Resumable;
pub use server::{AgentBackend, Backend, BoxFuture, Endpoint, WsServerOptions, serve_ws};
#[cfg(feature = "ws")]
pub use server_ws::Direct;
#[cfg(feature = "tls")]
pub use tls::{HANDSHAKE_TIMEOUT, TlsClient, TlsServer, client_config};

/// ACP v2 (Preview, feature `unstable_protocol_v2`) over the remote transports: the names of
/// the parent module, for `acp_tokio::v2`'s handler traits.
#[cfg(feature = "unstable_protocol_v2")]
pub mod v2 {
    #[cfg(feature = "ws")]
    pub use super::client::v2::connect_ws;
    #[cfg(feature = "http")]
    pub use super::http_client::v2::connect_http;
    pub use super::server::v2::AgentBackend;
}

/// The endpoint path.
pub const ENDPOINT_PATH: &str = "/acp";
/// The health check's path (`200` with `{"status":"ok","connections":N}`; no token needed).
pub const HEALTH_PATH: &str = "/healthz";
/// The header naming the connection (the upgrade's or `initialize`'s response, then every
/// Streamable HTTP request).
pub const CONNECTION_ID_HEADER: &str = "acp-connection-id";
/// The header naming the session of a Streamable HTTP request or stream.
pub const SESSION_ID_HEADER: &str = "acp-session-id";
/// The default largest message either way.
pub const DEFAULT_MAX_MESSAGE: usize = 16 << 20;
/// The in-memory pipe between the pump and a core (bytes buffered each way).
const BRIDGE_BUFFER: usize = 256 << 10;
