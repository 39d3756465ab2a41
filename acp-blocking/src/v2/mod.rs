//! ACP v2 (Preview, feature `unstable_protocol_v2`) on plain threads: a v2 client
//! ([`ClientConnectionV2`], with the [`ClientV2`] handler trait) and a v2 agent ([`AgentV2`],
//! served by [`serve_v2`] and its siblings), with the names and the behaviour of acp-tokio's
//! `v2` module, in this crate's blocking style.
//!
//! Everything here is generated from `acp_proto::method_table_v2!` the way the v1 API is from
//! `method_table!` (with the same helpers, `crate::table`): each `client_requests` row is an
//! [`AgentV2`] handler method and (when its `call:` column is `typed`) a typed call of
//! [`ClientConnectionV2`]; each `agent_requests` row a [`ClientV2`] handler method and a typed
//! call of [`AgentContextV2`]; each notification row with a handler a notification method. A
//! wire string is written only in the table. Requests, notifications and answers take the v1
//! connection's paths into the core (its driver, backpressure, timeouts and write-through).
//!
//! A connection speaks one version. [`ClientConnectionV2::initialize`] offers 2; an agent that
//! answers 1 gets [`Error::UnsupportedProtocolVersion`] and the connection closes (connect
//! again with the v1 [`ClientConnection`](crate::ClientConnection)). [`serve_v2`] answers only a
//! client offering 2 or more: a v1 `initialize` is answered `-32601` (serve a v1 client with
//! [`serve`](crate::serve)). Handlers of v1-only methods do not exist here, and a v1 request
//! that reaches a v2 connection is `-32601` from the core.
//!
//! **Turns.** In v2 `session/prompt` is only acknowledged; the turn ends with the agent's
//! `idle` `state_update`. [`ClientConnectionV2::prompt`] returns a [`PromptTurnV2`]: an
//! `Iterator` of the turn's `session/update`s (the idle one last) that ends exactly when the
//! core reports the turn ended, with [`finish`](PromptTurnV2::finish) giving how. Dropping it
//! before the end cancels the turn (`session/cancel`) and drops its remaining updates.
//!
//! A v2 agent that echoes a prompt in one turn, and a client reading that turn. A real agent
//! ends `main` with `acp_blocking::serve_stdio_v2(Echo)`; this one serves OS pipes that a
//! client in the same process drives, so that the example runs.
//!
//! ```
//! use acp_blocking::acp_proto::{RpcError, TurnEndReason, v2};
//! use acp_blocking::{AgentContextV2, AgentV2, ClientConnectionV2, ClientOptions};
//! use serde_json::{from_value, json};
//!
//! struct Echo;
//!
//! impl AgentV2 for Echo {
//!     fn initialize(&self, _: v2::InitializeRequest, _: &AgentContextV2) -> Result<v2::InitializeResponse, RpcError> {
//!         let answer = json!({ "protocolVersion": 2, "info": { "name": "echo", "version": "1" },
//!                              "capabilities": { "session": {} } });
//!         Ok(from_value(answer).expect("an initialize result"))
//!     }
//!     fn new_session(&self, _: v2::NewSessionRequest, _: &AgentContextV2) -> Result<v2::NewSessionResponse, RpcError> {
//!         Ok(from_value(json!({ "sessionId": "s1" })).expect("a session/new result"))
//!     }
//!     fn prompt(&self, request: v2::PromptRequest, cx: &AgentContextV2) -> Result<v2::PromptResponse, RpcError> {
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
//!     let agent = std::thread::spawn(move || acp_blocking::serve_v2(Echo, agent_in, agent_out));
//!     let conn = ClientConnectionV2::connect((), client_in, client_out, ClientOptions::default())?;
//!     let info = json!({ "name": "editor", "version": "1" });
//!     conn.initialize(from_value(json!({ "protocolVersion": 2, "info": info })).expect("params"))?;
//!     let session = conn.new_session(from_value(json!({ "cwd": "/tmp" })).expect("params"))?.session_id;
//!     let text = vec![v2::ContentBlock::Text(v2::TextContent::new("hi"))];
//!     let request = v2::PromptRequest { session_id: session, prompt: text, idempotency_key: None, meta: None };
//!     let mut turn = conn.prompt(request)?;
//!     let updates: Vec<_> = turn.by_ref().collect(); // the chunk, then the idle state update
//!     assert_eq!(updates.len(), 2);
//!     assert!(matches!(turn.finish()?, TurnEndReason::Idle { .. }));
//!     conn.close()?; // closes the agent's input: `serve_v2` returns
//!     agent.join().expect("the agent thread")
//! }
//! ```
//!
//! As on v1, an agent request of a turn's session (a permission ask, an elicitation scoped to
//! the session) reaches its handler only after the turn's reader took every update that came
//! before it; [`PromptTurnV2::next_update_then`] runs code with an update before those
//! handlers start (acp-tokio's v2 does the same).

mod agent;
mod client;
mod turn;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::Receiver;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use acp_proto::types::{ProtocolVersion, SessionId};
use acp_proto::v2;
use acp_proto::{Config, InboundId, RpcError, TurnEndReason, compat::AnyOutcome as Outcome};

use crate::driver::{Link, Outbound};
use crate::error::Error;
use crate::sync::{CancelToken, lock};

#[cfg(unix)]
pub use agent::serve_fds_v2;
pub use agent::{AgentContextV2, AgentV2, serve_stdio_v2, serve_v2, serve_with_v2};
pub use client::{ClientConnectionV2, ClientV2};
pub use turn::PromptTurnV2;

/// The v2 side of a connection's service: what the driver hands v2 events to.
pub(crate) trait ServiceV2: Send + Sync {
    /// Handles an inbound v2 request on a pool thread and answers it through `link`.
    fn request(&self, link: &Link, id: InboundId, cancel: &CancelToken, request: v2::Request);

    /// Handles an inbound v2 notification on the ordered notification thread.
    fn notification(&self, link: &Link, notification: v2::Notification);

    /// On the driver thread: takes a turn's `session/update` (`in_turn`) for its reader, or
    /// gives the notification back for [`notification`](Self::notification).
    fn route(&self, notification: v2::Notification, in_turn: bool) -> Option<v2::Notification> {
        let _ = in_turn;
        Some(notification)
    }

    /// On the driver thread, before `request` goes to the pool: the ordering gate its handler
    /// waits on first (client side: see `Turns::gate`).
    fn turn_gate(&self, request: &v2::Request) -> Option<Receiver<()>> {
        let _ = request;
        None
    }

    /// On the driver thread: the core ended the session's turn.
    fn turn_ended(&self, session: SessionId, reason: TurnEndReason) {
        let _ = (session, reason);
    }
}

/// Runs a v2 handler and queues its answer (a panic answers `-32603`).
pub(crate) fn answer(link: &Link, id: InboundId, handler: impl FnOnce() -> Result<v2::Response, RpcError>) {
    let result =
        catch_unwind(AssertUnwindSafe(handler)).unwrap_or_else(|panic| Err(acp_runtime::handler_panicked(&*panic)));
    link.respond_with(id, |conn, now| conn.respond_v2(now, id, result));
}

/// Sends a v2 request and blocks until its v2 result.
pub(crate) fn call(link: &Link, request: v2::Request, timeout: Option<Duration>) -> Result<v2::Response, Error> {
    outcome_result(link.call_outcome(Outbound::V2(request), timeout))
}

/// The result of a v2 request, or why there is none.
fn outcome_result(outcome: Result<Outcome, Error>) -> Result<v2::Response, Error> {
    crate::outcome_compat::v2_result(outcome?)
}

/// Sends a v2 notification, blocking while the outbound budget is used up.
#[allow(clippy::result_large_err)] // the core's refusal gives the notification back
pub(crate) fn notify(link: &Link, notification: v2::Notification) -> Result<(), Error> {
    link.notify_with(notification, |conn, now, n| conn.send_notification_v2(now, n))
}

/// Adds version 2 to the versions a connection speaks.
fn speak_v2(config: &mut Config) {
    if !config.supported_versions.contains(&ProtocolVersion(2)) {
        config.supported_versions.push(ProtocolVersion(2));
    }
}

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
