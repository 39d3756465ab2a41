//! # acp-proto: the sans-IO core of the Agent Client Protocol
//!
//! [ACP](https://agentclientprotocol.com) lets a code editor (the *client*) drive an AI coding
//! agent (the *agent*) with JSON-RPC 2.0, one compact JSON object per line, over the agent's
//! stdin/stdout. This crate implements ACP v1 as pinned by the newest stable schema
//! (`spec/crate-1.20.0/v1`: the official crate `agent-client-protocol-schema` 1.20.0, a superset
//! of the official release 1.21.0; protocol version 1 on the wire), as a **pure,
//! deterministic state machine**: bytes, timer ticks and handler completions go in; frames to
//! write, the next deadline and events to dispatch come out. It never reads a clock, never does
//! I/O, never spawns, never blocks and never draws a random number, so the same code runs in
//! production (driven by `acp-tokio` or `acp-blocking`), in a seeded simulation of both peers,
//! and under a fuzzer.
//!
//! ## The contract
//!
//! One [`Connection`] per peer link, for either [`Side`]. Names follow the sans-IO convention:
//!
//! * **inputs** take `now` (the crate's own [`Instant`]): [`Connection::handle_input`] (any
//!   chunking), [`Connection::handle_eof`], [`Connection::handle_timeout`] (early or spurious
//!   calls are no-ops);
//! * **commands**: [`Connection::send_request`] (with an optional deadline),
//!   [`Connection::send_notification`], [`Connection::cancel_request`],
//!   [`Connection::respond`] (complete an inbound request with the [`Answer`] its
//!   [`Responder`] makes: typed by the request's result), [`Connection::cancel_turn`],
//!   [`Connection::close`];
//! * **outputs**: [`Connection::poll_transmit`] appends whole `\n`-terminated frames to a
//!   buffer you own; [`Connection::poll_event`] is **one ordered queue** of [`Event`]s;
//!   [`Connection::poll_timeout`] is the single earliest deadline.
//!
//! After any input or command, drain `poll_transmit`, then `poll_event`, then read
//! `poll_timeout`. Same inputs, same outputs, byte for byte.
//!
//! ## The run loop
//!
//! An agent and a client wired back to back in one thread; an adapter does the same with a
//! pipe, a clock and a task per handler.
//!
//! ```
//! use acp_proto::role::{Agent, Client, Role};
//! use acp_proto::{Answer, Call, ClientCall, Connection, Event, Instant, Outcome, RpcError};
//! use acp_proto::types::*;
//! use std::time::Duration;
//!
//! let mut now = Instant::ZERO;
//! let mut agent: Connection<Agent> = Connection::agent(now);
//! let mut client: Connection<Client> = Connection::client(now);
//! // The two pipes: bytes written by one side and not yet consumed by the other.
//! let (mut to_agent, mut to_client) = (Vec::new(), Vec::new());
//!
//! // The client starts the handshake.
//! let init = client.send_request(now, InitializeRequest::new(ProtocolVersion::V1), None).unwrap();
//!
//! /// Moves queued bytes from one side to the other (an adapter writes them to the pipe; the
//! /// other process reads them). `handle_input` consumes less than it is given only when its
//! /// queues are full: the rest stays in the pipe, to be fed again after the events have
//! /// been drained. Feeding it again *before* draining would consume nothing, forever.
//! fn pump<A: Role, B: Role>(now: Instant, from: &mut Connection<A>, to: &mut Connection<B>, pipe: &mut Vec<u8>) {
//!     let _ = from.poll_transmit(pipe);
//!     let consumed = to.handle_input(now, pipe);
//!     pipe.drain(..consumed);
//! }
//!
//! let mut handshake_done = false;
//! for _round in 0..10 {
//!     // 1. Move bytes each way.
//!     pump(now, &mut client, &mut agent, &mut to_agent);
//!     pump(now, &mut agent, &mut client, &mut to_client);
//!     // 2. Drain events: the agent answers requests, the client reads outcomes. A request
//!     //    comes with the responder of its result type: a prompt cannot be answered with an
//!     //    `InitializeResponse`.
//!     while let Some(event) = agent.poll_event() {
//!         if let Event::Request(request) = event {
//!             let answer = match request.into_call() {
//!                 Call::Client(ClientCall::Initialize(_, responder)) => {
//!                     responder.answer(Ok(InitializeResponse::new(ProtocolVersion::V1)))
//!                 }
//!                 other => Answer::error(other.id(), RpcError::method_not_found(other.wire())),
//!             };
//!             agent.respond(now, answer).unwrap();
//!         }
//!     }
//!     while let Some(event) = client.poll_event() {
//!         match event {
//!             Event::Outcome { id, outcome: Outcome::Result(_) } => assert_eq!(id, init),
//!             Event::HandshakeCompleted(_) => handshake_done = true,
//!             other => panic!("unexpected {other:?}"),
//!         }
//!     }
//!     // 3. Sleep until the earliest deadline (none here), then fire it.
//!     if let Some(deadline) = agent.poll_timeout().into_iter().chain(client.poll_timeout()).min() {
//!         now = deadline;
//!         agent.handle_timeout(now);
//!         client.handle_timeout(now);
//!     } else {
//!         now += Duration::from_millis(1);
//!     }
//! }
//! assert!(handshake_done && agent.is_ready() && client.is_ready());
//! ```
//!
//! ## Rules the machine owns
//!
//! * **Exactly one outcome** per accepted outbound request (result, error, timed out,
//!   cancelled, connection closed); late responses are dropped and counted.
//! * **Exactly one response frame** per inbound request id, echoed at its exact wire type;
//!   completions after a cancellation or close are discarded, not errors.
//! * **`$/cancel_request` both ways**: inbound, the handler is told ([`Event::Cancelled`]) and
//!   the request still gets exactly one response (the handler's, or `-32800` from the machine
//!   after [`Config::cancel_grace`]); outbound, via [`Connection::cancel_request`] and deadlines.
//! * **Handshake**: `initialize` first; requests pipelined behind it are held and dispatched in
//!   order once it succeeds; the client closes on a protocol version it does not speak.
//! * **Capabilities, fail closed, both directions** (the capability gate, internal): inbound `-32601`, outbound
//!   refused locally.
//! * **Prompt turns** ([`connection::turns`]): `session/cancel` cascades and ends the turn
//!   `cancelled`; updates precede their turn's response; no update before its session exists;
//!   the client stamps updates with their turn and ordinal.
//! * **Bounded everything**: frame size, inbound in flight, pending outbound, the event queue,
//!   held requests and the queued output. While the output is at or over
//!   [`Config::outbound_budget`] the machine takes on no new work (application sends are refused,
//!   inbound requests are deferred until the peer has read) and keeps reading; once its own
//!   answers to peer input fill it, what needs an answer is parked unread while responses and
//!   notifications go on, so two stalled peers cannot deadlock (see [`connection`]'s "Bounded
//!   output"); where a bound is reached on the peer's input alone the machine stops consuming
//!   it ([`Connection::wants_input`]) instead of growing.
//! * **End of input is a half-close** ([`connection::half_close`]): requests received before
//!   it are still answered, as if the peer had cancelled each (the handler is told; after
//!   [`Config::cancel_grace`] the machine answers `-32800`), then the connection closes;
//!   requests awaiting the peer end [`Outcome::ConnectionClosed`].
//! * **Bad input never kills the connection**: `-32700`, `-32600`, `-32601`, `-32602` as the
//!   case may be, never a panic. Only EOF, [`Connection::close`] or an unsupported protocol
//!   version close it.
//!
//! ## Modules
//!
//! [`jsonrpc`] (the envelope), [`types`] (every schema definition: the crate `acp-schema`'s
//! `v1`, re-exported, as [`error`] is), [`methods`] (the method
//! table and the typed enums derived from it), [`connection`] (the machine; it frames its
//! input and gates capabilities with the internal `framer` and `gate`), [`wire_check`] (wire-level invariants of a
//! peer, judged from its frames: used by the two-peer simulation and `acp replay --check`),
//! [`observer`] (which requests, sessions and turns are open, read off both peers' frames:
//! used by the remote server and the two-peer simulation), `resume` (feature
//! `unstable_resumable_transport`: the control messages of resumable remote streams, which the
//! remote server and clients write and read through it), `attach` (feature
//! `unstable_session_attach`: sessions shared by several clients, the host's hub and the guest's
//! routes that the remote server asks).
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod acceptor;
mod chunk_path;
pub mod connection;
pub use acp_schema::error;
pub mod ext;
mod fast_path;
// The framer, the capability gate and (in `v2`) the v2 envelopes are internal: feature
// `test-exports` (for proptests and the fuzz targets only, not part of the API) makes them
// public, hidden from the docs. Without it, their `pub` items are crate-visible and what only
// the tests and proptests call is unused: allowed, not removed.
#[cfg(feature = "unstable_session_attach")]
pub mod attach;
#[cfg(feature = "test-exports")]
#[doc(hidden)]
pub mod framer;
#[cfg(not(feature = "test-exports"))]
#[allow(unreachable_pub, dead_code, unused_imports)]
pub(crate) mod framer;
#[cfg(feature = "test-exports")]
#[doc(hidden)]
pub mod gate;
#[cfg(not(feature = "test-exports"))]
#[allow(unreachable_pub, dead_code, unused_imports)]
pub(crate) mod gate;
pub mod jsonrpc;
pub mod methods;
pub mod observer;
pub mod protocol;
#[cfg(feature = "unstable_resumable_transport")]
pub mod resume;
pub mod role;
mod sided;
#[cfg(test)]
mod spec;
mod swar;
pub mod time;
pub use acp_schema::v1 as types;
pub mod v1;
#[cfg(feature = "unstable_protocol_v2")]
pub mod v2;
pub mod wire_check;

pub use acceptor::{Accepted, Acceptor};
pub use connection::turns::PermissionAnswer;
#[cfg(feature = "unstable_protocol_v2")]
pub use connection::turns_v2::TurnEndReason;
pub use connection::{
    Answer, CancelReason, CloseReason, Completion, Config, Connection, Event, InboundId, InboundRequest, Negotiated,
    OutboundId, Outcome, Refused, RespondError, Responder, SendError, Stats, TurnStamp,
};
pub use error::{ErrorCode, RpcError};
pub use gate::CapabilitySnapshot;
pub use jsonrpc::RequestId;
pub use methods::{
    AgentCall, AgentNotification, AgentRequest, AgentResponse, Call, ClientCall, ClientNotification, ClientRequest,
    ClientResponse, Method, Notification, Request, Response, TypedRequest,
};
#[cfg(feature = "unstable_protocol_v2")]
pub use protocol::V2;
pub use protocol::{Protocol, V1};
pub use time::Instant;

/// Which end of the connection a side plays (the schema calls it `x-side`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The side that runs the model and handles prompts (usually the subprocess).
    Agent,
    /// The side that drives the agent (usually the editor).
    Client,
}

impl Side {
    /// The other side.
    pub fn peer(self) -> Side {
        match self {
            Side::Agent => Side::Client,
            Side::Client => Side::Agent,
        }
    }
}
