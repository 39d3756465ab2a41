//! ACP v2 (Preview, feature `unstable_protocol_v2`): the same API as the crate root's v1 one,
//! under the same names: a v2 client ([`ClientConnection`], with the [`Client`] handler trait)
//! and a v2 agent ([`Agent`], served by [`serve`], or beside a v1 [`crate::Agent`] by
//! [`serve_negotiated`]). [`LocalClient`] and [`LocalAgent`] are the same traits for `!Send`
//! handlers on a `tokio::task::LocalSet` ([`ClientConnection::connect_local`], [`serve_local`],
//! [`serve_negotiated_local`]).
//!
//! One road for both versions: [`ClientConnection`] is the crate's one
//! [`ClientConnection<P>`](crate::versioned::ClientConnection) as `ClientConnection<V2>`, and
//! [`PromptTurn`] is [`PromptTurn<V2>`](crate::versioned::PromptTurn), driven by the same driver as v1's.
//! Only the handler traits and their dispatch are v2's own, written by `tools/acp-gen` from the
//! v2 method table (`acp-proto/methods/v2.toml`) the way the v1 API is from v1's: each
//! `client_requests` row is an [`Agent`] handler method and (when its `call:` column is
//! `typed`) a typed call of [`ClientConnection`]; each `agent_requests` row a [`Client`]
//! handler method and a typed call of [`AgentContext`]; each notification row with a handler a
//! notification method. A wire string is written only in the table.
//!
//! A connection speaks one version. [`ClientConnection::initialize`] offers 2; an agent that
//! answers 1 gets [`Error`](crate::Error)`::UnsupportedProtocolVersion` and the connection
//! closes (connect again with the v1 [`crate::ClientConnection`]). [`serve`] answers only a
//! client offering 2 or more: a v1 `initialize` is answered `-32022` (an agent that speaks both
//! serves with [`serve_negotiated`], which gives a v1-only client the v1 agent). Both read the
//! client's first frame with an [`acp_proto::Acceptor`].
//!
//! **Turns.** In v2 `session/prompt` is only acknowledged; the turn ends with the agent's
//! `idle` `state_update`. [`ClientConnection::prompt`] returns a [`PromptTurn`]: a `Stream`
//! of the turn's `session/update`s (the idle one last) that ends exactly when the core reports
//! the turn ended, with [`finish`](PromptTurn::finish) giving how. The agent's requests of a
//! turn's session (permission asks, session-scoped elicitations) reach the client's handlers
//! only after the turn's reader took every update sent before them, as in v1.
//!
//! **Sides.** A call takes what its side sends: [`ClientConnection::request`] (the crate's
//! one, generic over the version) a `v2::ClientRequest` and gives the `v2::AgentResponse`,
//! [`AgentContext::request`] an `AgentRequest` and gives the `ClientResponse`. A client cannot
//! send an agent's request:
//!
//! ```compile_fail
//! # async fn f(conn: acp_tokio::v2::ClientConnection, ask: acp_tokio::acp_proto::v2::RequestPermissionRequest) {
//! let _ = conn.request(ask, None).await;
//! # }
//! ```
//!
//! **Extensions.** Methods outside the table (their names start with `_`) go both ways as in
//! v1: `ext_method` and `ext_notification` of [`ClientConnection`] (the crate's one, for every
//! version) and of [`AgentContext`] send them (the messages built by
//! [`acp_proto::Protocol::ext_request`], the same call for either version), and the handler
//! traits' `ext_method` and `ext_notification` receive them.
//!
//! **Cancellation.** An agent learns of `session/cancel` in [`Agent::session_cancelled`]; if
//! its work does not report `idle` within `Config::turn_cancel_grace`, the core sends the idle
//! itself and [`Agent::cancel_grace_expired`] tells the agent.
//!
//! v2 also runs over the remote transports (`remote::v2::{connect_ws, connect_http,
//! AgentBackend}`; features `ws`/`http`) and on async-std (`async_std::v2::{connect, serve,
//! serve_stdio}`; feature `async-std`).

use acp_proto::protocol::V2;

mod agent;

mod client;
mod negotiated;

#[cfg(feature = "ws")]
pub(crate) use agent::serve_on;
pub use agent::{Agent, AgentContext, LocalAgent, serve, serve_local};
pub use client::{Client, LocalClient};
pub use negotiated::{serve_negotiated, serve_negotiated_local};

/// A connection to a v2 agent: the client's handle (the crate's one
/// [`ClientConnection<P>`](crate::versioned::ClientConnection), speaking v2).
pub type ClientConnection = crate::versioned::ClientConnection<V2>;

/// A v2 turn in progress, from [`ClientConnection::prompt`] (the crate's one
/// [`PromptTurn<P>`](crate::versioned::PromptTurn), of v2).
pub type PromptTurn = crate::versioned::PromptTurn<V2>;
