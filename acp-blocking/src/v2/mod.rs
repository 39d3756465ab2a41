//! ACP v2 (Preview, feature `unstable_protocol_v2`) on plain threads, with the crate root's
//! names: a v2 client ([`ClientConnection`], with the [`Client`] handler trait, whose
//! [`prompt`](ClientConnection::prompt) returns a [`PromptTurn`]) and a v2 agent ([`Agent`],
//! with its [`AgentContext`], served by [`serve`], [`serve_with`], [`serve_stdio`] and
//! `serve_fds`); [`serve_negotiated`] serves an agent of each version on one transport, the
//! version chosen by the client's `initialize` (through [`acp_proto::Acceptor`]).
//!
//! Both versions run on the one driver of this crate, generic over the protocol version and the side
//! (`Connection<R, V1>` or `Connection<R, V2>` inside): requests, notifications and answers take the
//! same paths into the core (backpressure, timeouts, write-through, the ordering gate of a
//! turn's agent requests). Only the handler traits and their dispatch are written per version,
//! by `tools/acp-gen` from the v2 method table (`acp-proto/methods/v2.toml`) as the v1 ones are
//! from v1's (into `src/generated/`): each `client_requests` row is an [`Agent`] handler method
//! and (when its `call` column is `typed`) a typed call of [`ClientConnection`]; each
//! `agent_requests` row a [`Client`] handler method and a typed call of [`AgentContext`]; each
//! notification row with a handler a notification method. A wire string is written only in the
//! table.
//!
//! A connection speaks one version. [`ClientConnection::initialize`] offers 2; an agent that
//! answers 1 gets [`Error::UnsupportedProtocolVersion`](crate::Error::UnsupportedProtocolVersion) and the connection closes (connect
//! again with the v1 [`ClientConnection`](crate::ClientConnection)). [`serve`] answers only a
//! client offering 2 or more: a v1 `initialize` is answered `-32022` (serve a v1 client too
//! with [`serve_negotiated`]).
//!
//! **Turns.** In v2 `session/prompt` is only acknowledged; the turn ends with the agent's
//! `idle` `state_update`. [`ClientConnection::prompt`] returns a [`PromptTurn`]: an
//! `Iterator` of the turn's `session/update`s (the idle one last) that ends exactly when the
//! core reports the turn ended, with [`finish`](PromptTurn::finish) giving how. Dropping it
//! before the end cancels the turn (`session/cancel`) and drops its remaining updates.
//!
//! **Extensions.** Methods outside the table (their names start with `_`) go both ways as in
//! v1: `ext_method` and `ext_notification` of [`ClientConnection`] and [`AgentContext`] send
//! them (the messages built by [`acp_proto::Protocol::ext_request`], the same call for either
//! version), and the handler traits' `ext_method` and `ext_notification` receive them.
//!
//! A v2 agent that echoes a prompt in one turn, and a client reading that turn. A real agent
//! ends `main` with `acp_blocking::v2::serve_stdio(Echo)`; this one serves OS pipes that a
//! client in the same process drives, so that the example runs.
//!
//! ```
//! use acp_blocking::acp_proto::{RpcError, TurnEndReason, v2};
//! use acp_blocking::ClientOptions;
//! use acp_blocking::v2::{Agent, AgentContext, ClientConnection};
//! use serde_json::{from_value, json};
//!
//! struct Echo;
//!
//! impl Agent for Echo {
//!     fn initialize(&self, _: v2::InitializeRequest, _: &AgentContext) -> Result<v2::InitializeResponse, RpcError> {
//!         let answer = json!({ "protocolVersion": 2, "info": { "name": "echo", "version": "1" },
//!                              "capabilities": { "session": {} } });
//!         Ok(from_value(answer).expect("an initialize result"))
//!     }
//!     fn new_session(&self, _: v2::NewSessionRequest, _: &AgentContext) -> Result<v2::NewSessionResponse, RpcError> {
//!         Ok(from_value(json!({ "sessionId": "s1" })).expect("a session/new result"))
//!     }
//!     fn prompt(&self, request: v2::PromptRequest, cx: &AgentContext) -> Result<v2::PromptResponse, RpcError> {
//!         // The answer only acknowledges the prompt: the turn goes on on a thread of its own.
//!         let cx = cx.clone();
//!         std::thread::spawn(move || {
//!             cx.answered(); // the acknowledgement is queued: the updates follow it
//!             let chunk = json!({ "sessionUpdate": "agent_message_chunk", "messageId": "a1",
//!                                 "content": { "type": "text", "text": "hello" } });
//!             let _ = cx.send_update(&request.session_id, from_value(chunk).expect("an update"));
//!             let _ = cx.send_idle(&request.session_id, v2::IdleStopReason::EndTurn);
//!         });
//!         Ok(from_value(json!({ "messageId": "u1" })).expect("a session/prompt result"))
//!     }
//! }
//!
//! fn main() -> Result<(), acp_blocking::Error> {
//!     let (agent_in, client_out) = std::io::pipe()?;
//!     let (client_in, agent_out) = std::io::pipe()?;
//!     let agent = std::thread::spawn(move || acp_blocking::v2::serve(Echo, agent_in, agent_out));
//!     let conn = ClientConnection::connect((), client_in, client_out, ClientOptions::default())?;
//!     let info = json!({ "name": "editor", "version": "1" });
//!     conn.initialize(from_value(json!({ "protocolVersion": 2, "info": info })).expect("params"))?;
//!     let session = conn.new_session(from_value(json!({ "cwd": "/tmp" })).expect("params"))?.session_id;
//!     let text = vec![v2::ContentBlock::Text(v2::TextContent::new("hi"))];
//!     let request = v2::PromptRequest { session_id: session, prompt: text, idempotency_key: None, meta: None };
//!     let mut turn = conn.prompt(request)?;
//!     let updates: Vec<_> = turn.by_ref().collect(); // the chunk, then the idle state update
//!     assert_eq!(updates.len(), 2);
//!     assert!(matches!(turn.finish()?, TurnEndReason::Idle { .. }));
//!     conn.close()?; // closes the agent's input: `serve` returns
//!     agent.join().expect("the agent thread")
//! }
//! ```
//!
//! As on v1, an agent request of a turn's session (a permission ask, an elicitation scoped to
//! the session) reaches its handler only after the turn's reader took every update that came
//! before it; [`PromptTurn::next_update_then`] runs code with an update before those
//! handlers start (acp-tokio's v2 does the same).

mod agent;
mod client;
mod negotiate;
mod turn;

use std::sync::{Condvar, Mutex};

use crate::sync::lock;

/// What a [`Client`] handler gets: the crate root's, the same for both versions.
pub use crate::client::ClientContext;
#[cfg(unix)]
pub use agent::serve_fds;
pub use agent::{Agent, AgentContext, serve, serve_negotiated, serve_stdio, serve_with};
pub use client::{Client, ClientConnection};
pub use turn::PromptTurn;

/// A flag set once, that threads wait for.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    set: Mutex<bool>,
    changed: Condvar,
}

impl Signal {
    pub(crate) fn set(&self) {
        *lock(&self.set) = true;
        self.changed.notify_all();
    }

    pub(crate) fn wait(&self) {
        let mut set = lock(&self.set);
        while !*set {
            set = self.changed.wait(set).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}
