//! # acp-tokio: the async adapter of the Agent Client Protocol
//!
//! [`acp_proto`] is the protocol: a sans-IO state machine that decides everything (handshake,
//! capability gating, cancellation, ordering, exactly one answer per request). This crate runs it
//! on tokio (or, with the `async-std` feature, on async-std): it owns the transport, the clock
//! and the handler tasks, and nothing protocol-related lives here.
//!
//! * **Agents** implement [`Agent`] (one `async fn` per client request; everything but
//!   `initialize` defaults to `-32601`) and are served by [`serve_stdio`] or [`serve`].
//! * **Clients** implement [`Client`] (what the agent may ask: permission, files, terminals) and
//!   drive an agent through a [`ClientConnection`], over any transport
//!   ([`ClientConnection::connect`]) or a child process ([`ClientConnection::spawn`]). A prompt
//!   turn is a [`PromptTurn`]: a `Stream` of the turn's updates, in order, then the stop reason.
//!
//! ## An agent
//!
//! ```no_run
//! use acp_tokio::acp_proto::RpcError;
//! use acp_tokio::acp_proto::types::*;
//! use acp_tokio::{Agent, PromptContext, RequestContext};
//!
//! struct Echo;
//!
//! impl Agent for Echo {
//!     async fn initialize(&self, _: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
//!         Ok(InitializeResponse::new(ProtocolVersion::V1))
//!     }
//!
//!     async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
//!         Ok(NewSessionResponse::new("session-1"))
//!     }
//!
//!     async fn prompt(&self, request: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
//!         for block in request.prompt {
//!             if cx.is_cancelled() {
//!                 break; // the client sent `session/cancel`; the turn ends `cancelled` anyway
//!             }
//!             if let ContentBlock::Text(text) = block {
//!                 // Waits while the client reads slower than we write: memory stays bounded.
//!                 // `?` answers the request with the failure (`-32603`, or `-32800` if cancelled).
//!                 cx.send_text(text.text).await?;
//!             }
//!         }
//!         Ok(PromptResponse::new(StopReason::EndTurn))
//!     }
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), acp_tokio::Error> {
//!     // Serves until stdin ends; log to stderr only, stdout carries the protocol.
//!     acp_tokio::serve_stdio(Echo).await
//! }
//! ```
//!
//! ## A client
//!
//! ```no_run
//! use acp_tokio::acp_proto::types::*;
//! use acp_tokio::{ClientConnection, ClientOptions};
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), acp_tokio::Error> {
//!     // `()` is a client that answers every agent request with the defaults.
//!     let agent = std::process::Command::new("my-agent");
//!     let conn = ClientConnection::spawn((), agent, ClientOptions::default())?;
//!     conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await?;
//!     let session = conn.new_session(NewSessionRequest::new("/home/me/project", vec![])).await?.session_id;
//!
//!     let mut turn = conn.prompt(PromptRequest::new(session, vec![ContentBlock::text("hello")])).await?;
//!     while let Some(update) = turn.next_update().await {
//!         println!("{update:?}");
//!     }
//!     println!("stop reason: {:?}", turn.finish().await?);
//!
//!     // Closes stdin, gives the agent a grace period, then signals its process group.
//!     let status = conn.close().await?;
//!     println!("agent exited: {status:?}; its stderr ended with {:?}", conn.stderr_tail());
//!     Ok(())
//! }
//! ```
//!
//! ## Both in one process
//!
//! Any `AsyncRead`/`AsyncWrite` pair is a transport. Here the agent above and a client that
//! grants permissions talk over an in-memory pipe:
//!
//! ```
//! use acp_tokio::acp_proto::RpcError;
//! use acp_tokio::acp_proto::types::*;
//! use acp_tokio::{Agent, AgentOptions, Client, ClientConnection, ClientContext, ClientOptions};
//! use acp_tokio::{PromptContext, RequestContext};
//!
//! struct Careful;
//!
//! impl Agent for Careful {
//!     async fn initialize(&self, _: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
//!         Ok(InitializeResponse::new(ProtocolVersion::V1))
//!     }
//!
//!     async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
//!         Ok(NewSessionResponse::new("s1"))
//!     }
//!
//!     async fn prompt(&self, _: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
//!         let options = vec![PermissionOption::new("yes", "Yes", PermissionOptionKind::AllowOnce)];
//!         let outcome = cx.request_permission(ToolCallUpdate::new("t1"), options).await?;
//!         let granted = matches!(outcome, RequestPermissionOutcome::Selected(_));
//!         cx.send_text(if granted { "done" } else { "skipped" }).await?;
//!         Ok(PromptResponse::new(StopReason::EndTurn))
//!     }
//! }
//!
//! struct Granting;
//!
//! impl Client for Granting {
//!     async fn request_permission(
//!         &self,
//!         request: RequestPermissionRequest,
//!         _: ClientContext,
//!     ) -> Result<RequestPermissionResponse, RpcError> {
//!         let first = request.options[0].option_id.clone();
//!         Ok(RequestPermissionResponse::new(RequestPermissionOutcome::selected(first)))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), acp_tokio::Error> {
//! let (client_end, agent_end) = tokio::io::duplex(64 * 1024);
//! let (reader, writer) = tokio::io::split(agent_end);
//! let agent = tokio::spawn(acp_tokio::serve(Careful, reader, writer, AgentOptions::default()));
//!
//! let (reader, writer) = tokio::io::split(client_end);
//! let conn = ClientConnection::connect(Granting, reader, writer, ClientOptions::default());
//! conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await?;
//! let session = conn.new_session(NewSessionRequest::new("/", vec![])).await?.session_id;
//! let mut texts = Vec::new();
//! let stop = conn
//!     .prompt_with(PromptRequest::new(session, vec![ContentBlock::text("go")]), |update| {
//!         if let SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) = update {
//!             texts.push(t.text);
//!         }
//!     })
//!     .await?;
//! assert_eq!((texts, stop), (vec!["done".to_owned()], StopReason::EndTurn));
//! conn.close().await?;
//! agent.await.expect("the agent task")?; // it saw the end of its input
//! # Ok(())
//! # }
//! ```
//!
//! ## How it runs
//!
//! Each connection has one **driver** task, shaped like quinn's connection driver: it alone
//! owns the [`acp_proto::Connection`] and the transport. It reads into one buffer and feeds the
//! core (bytes the core is not ready for are kept and fed again, never dropped), writes what the
//! core produced as one batch with one flush, sleeps until the core's next deadline (reading the
//! clock first, re-arming the timer only when the deadline changes), and yields after a budget
//! of work so a busy connection cannot starve others. Handlers run as tasks of their own and
//! report back over a channel: the driver never awaits one.
//!
//! * **Cancellation**: every handler gets its request's [`CancellationToken`] (in its
//!   [`RequestContext`] or [`ClientContext`]); it fires on `$/cancel_request`, on
//!   `session/cancel` for prompt turns, and when the connection closes. The core still sends
//!   exactly one answer.
//! * **Outbound requests** resolve to their result or an [`Error`]: the peer's error, a timeout
//!   ([`ClientConnection::with_timeout`], or [`Config::request_timeout`](acp_proto::Config)),
//!   a refusal by the core (e.g. a method the peer did not advertise: nothing is sent), or the
//!   connection closing. **Dropping** a pending request's future sends `$/cancel_request`;
//!   dropping an unfinished [`PromptTurn`] sends `session/cancel`.
//! * **Panics**: a handler that panics answers `-32603` for its request only.
//! * **Backpressure**: [`PromptContext::send_update`] and every other send wait while the core's
//!   outbound byte budget is full; a client's turn buffers a bounded number of updates
//!   ([`ClientOptions::turn_buffer`]) and the driver stops reading while it is full. Memory stays
//!   bounded however many updates flow (see [`DriverStats`]).
//!
//! ## Protocol versions
//!
//! One road for both: the driver, the handles, [`ClientConnection<P>`](versioned::ClientConnection)
//! and [`PromptTurn<P>`](versioned::PromptTurn) are written once over the version
//! ([`versioned::Version`]: `acp_proto`'s `V1` and `V2`), on an [`acp_proto::Connection<R, P>`] of the
//! side they play (`R`, [`acp_proto::role`]).
//! The crate root (and [`v1`]) names v1's; the `v2` module (feature `unstable_protocol_v2`) has
//! the same names for v2 (`v2::ClientConnection`, `v2::PromptTurn`, `v2::Client`, `v2::Agent`,
//! `v2::serve`, …), and so do `remote::v2` and `async_std::v2`. Only the handler traits and their
//! dispatch are per version, generated from each version's method table. An agent that speaks
//! both (`v2::serve_negotiated`) reads the client's `initialize` with an
//! [`acp_proto::Acceptor`] and runs the driver of the version it picked.
//!
//! ## `Send` and `!Send` handlers
//!
//! Trait methods returning `impl Future` cannot be generic over `Send`, so each side has two
//! traits with the same methods, generated from one definition: [`Agent`] / [`Client`], whose
//! futures are `Send` and which run on `tokio::spawn` (any runtime flavour), and [`LocalAgent`] /
//! [`LocalClient`], whose futures need not be and which run on `tokio::task::spawn_local` inside
//! a `LocalSet` ([`serve_local`], [`ClientConnection::connect_local`]). Both plug into the same
//! driver, which is generic over how handlers are spawned.
//!
//! ## Features
//!
//! * `async-std`: the `async_std` module runs the same driver on
//!   async-std (whose I/O types use the `futures-io` traits). async-std is deprecated upstream
//!   in favour of smol; the runtime-specific part of this crate is a small internal trait (a
//!   clock, a timer, two spawn functions), so smol support is a small addition.
//! * `unstable_protocol_v2`: ACP v2 (Preview), the `v2` module: a v2 client and a v2 agent
//!   under the crate root's names (see "Protocol versions").
//! * `ws`, `http`, `tls`: remote ACP, the `remote` module. `ws`: the WebSocket client
//!   (`remote::connect_ws`) and the server's WebSocket arm; `http`: the Streamable HTTP client
//!   (`remote::connect_http`); either gives the server (`remote::serve_ws`), which serves
//!   Streamable HTTP on its endpoint and, with `ws`, WebSocket upgrades too. `http` does not
//!   turn on `ws`. `tls`: `https://` and `wss://` for the server and whichever clients are on.
//!   (`__remote`, what they share, is internal.)
//! * `unstable_resumable_transport`: resumable remote streams (the draft RFD "durable &
//!   resumable transport"): `remote::Resumable`, the clients' `Reconnect`.
//! * `unstable_session_attach`: sessions shared by several clients on the server (the draft
//!   RFD "multi-client session attach"): `remote::WsServerOptions::share_sessions`.
//! * `tracing`: the vocabulary both adapters share ([`acp_runtime::trace`]): a span per
//!   connection (`acp_connection`), a `TRACE` event per frame in and out (target `acp::frame`,
//!   with its length; its text only with [`ClientOptions::trace_payloads`] /
//!   [`AgentOptions::trace_payloads`]), `DEBUG` events for dispatch, cancellations and
//!   outcomes, `INFO` for the handshake and the close.
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

#[macro_use]
mod entry;
mod agent;
mod client;
mod context;
mod driver;
mod error;
/// The handler traits, their dispatch and the typed calls, written by `tools/acp-gen` from the
/// method tables (`acp-proto/methods/{v1,v2}.toml`; run `cargo run -p acp-gen` after changing
/// one). The modules of the API re-export them under their public names.
mod generated {
    pub(crate) mod v1 {
        pub(crate) mod agent;
        pub(crate) mod calls;
        pub(crate) mod client;
    }
    #[cfg(feature = "unstable_protocol_v2")]
    pub(crate) mod v2 {
        pub(crate) mod agent;
        pub(crate) mod calls;
        pub(crate) mod client;
    }
}
mod handle;
mod handlers;
mod io;
mod options;
mod process;
#[cfg(feature = "__remote")]
pub mod remote;
mod runtime;
mod serve;
mod sync;
mod turn;
pub mod v1;
#[cfg(feature = "unstable_protocol_v2")]
pub mod v2;
mod version;

#[cfg(feature = "async-std")]
pub mod async_std;

pub use agent::{Agent, LocalAgent, serve, serve_local, serve_stdio, serve_stdio_local};
pub use client::{Client, LocalClient};
pub use context::{ClientContext, PromptContext, RequestContext};
pub use error::Error;
pub use handle::DriverStats;
pub use options::{AgentOptions, ClientOptions};
pub use sync::CancellationToken;

/// A connection to an agent: the client's handle (the crate's one
/// [`ClientConnection<P>`](versioned::ClientConnection), speaking v1).
pub type ClientConnection = versioned::ClientConnection<acp_proto::protocol::V1>;

/// A prompt turn in progress, from [`ClientConnection::prompt`] (the crate's one
/// [`PromptTurn<P>`](versioned::PromptTurn), of v1).
pub type PromptTurn = versioned::PromptTurn<acp_proto::protocol::V1>;

/// The types written once for both protocol versions, with the version a type parameter:
/// `ClientConnection<P>` and `PromptTurn<P>` (the crate root's v1 names and `v2`'s are these,
/// of [`V1`](acp_proto::protocol::V1) and `V2`), and [`Version`](versioned::Version), the
/// versions this adapter runs (sealed).
pub mod versioned {
    pub use crate::client::ClientConnection;
    pub use crate::turn::PromptTurn;
    pub use crate::version::Version;
}

pub use acp_proto;
