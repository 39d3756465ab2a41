//! # acp-blocking: the Agent Client Protocol on plain threads
//!
//! Drives the sans-IO core [`acp_proto`] with `std::thread` and `std::io` only: no async
//! runtime anywhere in the dependency tree. For editors with their own event loop, CLIs,
//! test tools and synchronous agents.
//!
//! * **Agent side**: implement [`Agent`] (one method per request, defaults answer `-32601`)
//!   and [`serve_stdio`] it, or [`serve`] it over any `Read + Write` pair. Inside a prompt the
//!   handler gets a [`PromptContext`] to stream updates, ask permission, call `fs/*` and
//!   `terminal/*` on the client (refused locally when the client did not advertise them), and
//!   to see whether the turn was cancelled.
//! * **Client side**: [`ClientConnection::spawn`] an agent process (or
//!   [`connect`](ClientConnection::connect) over any transport), implement [`Client`] for the
//!   agent's requests, and call the agent with plain blocking methods; every request can get
//!   a timeout ([`Requester::with_timeout`]).
//! * **ACP v2** (Preview, feature `unstable_protocol_v2`): module `v2`, with this root's names
//!   (`v2::ClientConnection` and `v2::Client`, whose `prompt` returns a `v2::PromptTurn`, an
//!   `Iterator` of the turn's updates, then `finish`; `v2::Agent` served by `v2::serve` /
//!   `v2::serve_stdio`), and `v2::serve_negotiated` for an agent of each version, chosen by
//!   the client's `initialize`. Both versions run on the same driver, generic over the
//!   protocol version; only the handler traits differ.
//!
//! ## An agent
//!
//! A complete agent that echoes prompts. A real one ends `main` with
//! `acp_blocking::serve_stdio(Echo::default())`; this one serves OS pipes that a client in
//! the same process drives, so that the example runs.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use acp_blocking::acp_proto::{RpcError, types::*};
//! use acp_blocking::{Agent, ClientConnection, ClientOptions, PromptContext, RequestContext};
//!
//! #[derive(Default)]
//! struct Echo {
//!     sessions: AtomicU64,
//! }
//!
//! impl Agent for Echo {
//!     fn initialize(&self, _: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
//!         Ok(InitializeResponse::new(ProtocolVersion::V1))
//!     }
//!     fn new_session(&self, _: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
//!         Ok(NewSessionResponse::new(format!("sess-{}", self.sessions.fetch_add(1, Ordering::Relaxed))))
//!     }
//!     fn prompt(&self, request: PromptRequest, cx: &PromptContext) -> Result<PromptResponse, RpcError> {
//!         for block in request.prompt {
//!             if let ContentBlock::Text(text) = block {
//!                 cx.send_text(text.text)?; // blocks while the client reads slower than we write
//!             }
//!         }
//!         Ok(PromptResponse::new(if cx.is_cancelled() { StopReason::Cancelled } else { StopReason::EndTurn }))
//!     }
//! }
//!
//! fn main() -> Result<(), acp_blocking::Error> {
//!     let (agent_in, client_out) = std::io::pipe()?;
//!     let (client_in, agent_out) = std::io::pipe()?;
//!     let agent = std::thread::spawn(move || acp_blocking::serve(Echo::default(), agent_in, agent_out));
//!     let conn = ClientConnection::connect((), client_in, client_out, ClientOptions::default())?;
//!     conn.initialize(InitializeRequest::new(ProtocolVersion::V1))?;
//!     let session = conn.new_session(NewSessionRequest::new("/tmp", vec![]))?.session_id;
//!     let mut echoed = Vec::new();
//!     let stop = conn.prompt_with(PromptRequest::new(session, vec!["hello".into()]), |u| echoed.push(u))?;
//!     assert_eq!((stop, echoed.len()), (StopReason::EndTurn, 1));
//!     conn.close()?; // closes the agent's input: `serve` returns
//!     agent.join().expect("the agent thread")
//! }
//! ```
//!
//! ## A client
//!
//! A complete client that spawns an agent (here the crate's `echo_agent` example), lets it
//! read files, allows what it asks, and prints a turn.
//!
//! ```no_run
//! use std::{process::Command, time::Duration};
//! use acp_blocking::acp_proto::{RpcError, types::*};
//! use acp_blocking::{Client, ClientConnection, ClientContext, ClientOptions};
//!
//! struct Editor;
//!
//! impl Client for Editor {
//!     fn request_permission(&self, r: RequestPermissionRequest, _: &ClientContext)
//!         -> Result<RequestPermissionResponse, RpcError> {
//!         let allow = r.options.iter().find(|o| o.kind == PermissionOptionKind::AllowOnce);
//!         let outcome = allow.map_or(RequestPermissionOutcome::Cancelled, |o| {
//!             RequestPermissionOutcome::selected(o.option_id.clone())
//!         });
//!         Ok(RequestPermissionResponse::new(outcome))
//!     }
//!     fn read_text_file(&self, r: ReadTextFileRequest, _: &ClientContext) -> Result<ReadTextFileResponse, RpcError> {
//!         let text = std::fs::read_to_string(&r.path).map_err(|e| RpcError::resource_not_found(e.to_string()))?;
//!         Ok(ReadTextFileResponse::new(text))
//!     }
//! }
//!
//! fn main() -> Result<(), acp_blocking::Error> {
//!     let agent = Command::new("target/debug/examples/echo_agent");
//!     let conn = ClientConnection::spawn(Editor, agent, ClientOptions::default())?;
//!     let mut init = InitializeRequest::new(ProtocolVersion::V1);
//!     init.client_capabilities.fs.read_text_file = true;
//!     conn.with_timeout(Duration::from_secs(10)).initialize(init)?;
//!     let session = conn.new_session(NewSessionRequest::new("/tmp", vec![]))?.session_id;
//!     let mut turn = conn.prompt(PromptRequest::new(session, vec!["read /etc/hostname".into()]))?;
//!     for update in &mut turn {
//!         println!("{update:?}");
//!     }
//!     println!("stop reason: {:?}", turn.finish()?);
//!     println!("agent exited: {:?}, stderr: {}", conn.close()?, conn.stderr_tail());
//!     Ok(())
//! }
//! ```
//!
//! ## Threads and channels
//!
//! Each connection has one **driver** thread (the caller's, in [`serve`]; a spawned one for a
//! [`ClientConnection`]) that runs the [`acp_proto::Connection`]: it alone feeds it input,
//! takes its events, answers its timers and routes the outcomes of requests. The connection
//! sits behind a mutex so that a thread sending a request or a notification ([`Requester`]'s
//! calls, [`PromptContext::send_update`] and friends), and a handler answering, queues it
//! into the core itself and gets the core's verdict at once, without a round trip through
//! the driver (the driver is woken once per batch, to write it; over pipes a request or an
//! answer is written by its own thread when the output is idle). Request handlers run on a **bounded pool**
//! (`max_handlers`, default 16; more wait in a queue), and notification handlers on one
//! **ordered** thread; handlers and application threads reach the driver through one `mpsc`
//! channel. The driver never blocks on a handler: a handler blocks only on its own reply
//! channel. Protocol decisions (handshake, capability gates, cancellation, ordering,
//! deadlines) are all the core's.
//!
//! The bytes move one of two ways:
//!
//! * Over **pipes and sockets** on Unix ([`serve_stdio`] when stdin and stdout are pipes, as
//!   when a client spawned the agent; [`ClientConnection::spawn`]; [`serve_fds`] and
//!   [`ClientConnection::connect_fds`]) the driver reads and writes the descriptors itself,
//!   non-blocking while the connection runs (their mode is restored when it ends), waiting
//!   for them, for its timers and for a wake-up descriptor that the other threads signal in
//!   one `poll(2)`. No reader or writer thread, and a thread that sends a request or a
//!   handler that answers writes its own frame when the output is idle: a round trip wakes
//!   on each side only the thread that reads and the one that waits for the frame.
//! * Over **any other** `Read + Write` ([`serve`], [`ClientConnection::connect`]), and over
//!   descriptors `poll(2)` says nothing useful about (a regular file always polls ready; a
//!   terminal is shared with the user's shell; `/dev/null`), a **reader** thread feeds the
//!   driver chunks and a **writer** thread writes what `poll_transmit` gives (one `write_all`
//!   and one `flush` per batch); the driver waits on its channel with
//!   `recv_timeout(deadline - now)` for the core's next deadline.
//!
//! On the client side, a thread waiting for its reply (a request, or the next update of a
//! prompt turn) drives the connection itself while no other thread does (leader/follower):
//! it reads its own reply, so a sequential round trip wakes no other client thread. The
//! driver thread parks meanwhile and drives again when callers leave it work, or within
//! about two milliseconds of the last caller leaving, for input that arrives while no one
//! waits.
//!
//! ## Backpressure and memory
//!
//! A handler that sends updates faster than the pipe drains blocks in
//! [`PromptContext::send_update`] once the core's outbound byte budget
//! ([`acp_proto::Config::outbound_budget`]) is full; memory does not grow with the number of
//! updates. In the other direction, updates and notifications the application has not taken
//! yet are bounded by `max_buffered`; beyond it the connection stops reading, and the peer
//! blocks in its pipe.
//!
//! ## Errors and panics
//!
//! Calls return [`Error`]: the peer's JSON-RPC error, a timeout, a local refusal, or
//! [`Error::ConnectionClosed`] for everything pending when the connection closes (the peer
//! exited, the pipe broke, or [`ClientConnection::close`]). A handler that panics answers its
//! request with `-32603`; the connection lives on.
//!
//! ## Tracing
//!
//! With the `tracing` feature, the connection speaks the vocabulary both adapters share
//! ([`acp_runtime::trace`]): a span per connection (`acp_connection`, with its side), a `TRACE`
//! event per frame in and out with its length (target `acp::frame`), a `DEBUG` event per
//! dispatched request, notification, cancellation and outcome, and `INFO` for the handshake
//! and the close. Payloads are left out unless `trace_payloads` is set in the options.
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

#[macro_use]
mod surface;
mod agent;
mod client;
mod driver;
mod error;
#[cfg(unix)]
mod fd_io;
mod generated;
mod io_threads;
mod link;
#[cfg_attr(not(unix), allow(dead_code))]
mod output;
mod pool;
mod sync;
mod transport;
mod turn_gate;
pub mod v1;
#[cfg(feature = "unstable_protocol_v2")]
pub mod v2;
mod wake;

pub use acp_proto;
#[cfg(unix)]
pub use agent::serve_fds;
pub use agent::{Agent, AgentOptions, PromptContext, RequestContext, serve, serve_stdio, serve_with};
pub use client::{Client, ClientConnection, ClientContext, ClientOptions, PromptTurn, Requester};
pub use error::Error;
pub use sync::CancelToken;
