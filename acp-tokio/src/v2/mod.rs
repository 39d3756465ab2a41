//! ACP v2 (Preview, feature `unstable_protocol_v2`): a v2 client ([`ClientConnectionV2`], with
//! the [`ClientV2`] handler trait) and a v2 agent ([`AgentV2`], served by [`serve_v2`], or
//! beside a v1 [`Agent`](crate::Agent) by [`serve_negotiated`]). [`LocalClientV2`] and
//! [`LocalAgentV2`] are the same traits for `!Send` handlers on a `tokio::task::LocalSet`
//! ([`ClientConnectionV2::connect_local`], [`serve_v2_local`], [`serve_negotiated_local`]).
//!
//! Everything here is generated from `acp_proto::method_table_v2!` the way the v1 API is from
//! `method_table!`: each `client_requests` row is an [`AgentV2`] handler method and (when its
//! `call:` column is `typed`) a typed call of [`ClientConnectionV2`]; each `agent_requests` row
//! a [`ClientV2`] handler method and a typed call of [`AgentContextV2`]; each notification row
//! with a handler a notification method. A wire string is written only in the table.
//!
//! A connection speaks one version. [`ClientConnectionV2::initialize`] offers 2; an agent that
//! answers 1 gets [`Error::UnsupportedProtocolVersion`] and the connection closes (connect
//! again with the v1 [`ClientConnection`](crate::ClientConnection)). [`serve_v2`] answers only
//! a client offering 2 or more: a v1 `initialize` is answered `-32601` (an agent that speaks
//! both serves with [`serve_negotiated`], which gives a v1-only client the v1 agent).
//!
//! **Turns.** In v2 `session/prompt` is only acknowledged; the turn ends with the agent's
//! `idle` `state_update`. [`ClientConnectionV2::prompt`] returns a [`PromptTurnV2`]: a `Stream`
//! of the turn's `session/update`s (the idle one last) that ends exactly when the core reports
//! the turn ended, with [`finish`](PromptTurnV2::finish) giving how. The agent's requests of a
//! turn's session (permission asks, session-scoped elicitations) reach the client's handlers
//! only after the turn's reader took every update sent before them, as in v1.
//!
//! **Cancellation.** An agent learns of `session/cancel` in
//! [`AgentV2::session_cancelled`]; if its work does not report `idle` within
//! `Config::turn_cancel_grace`, the core sends the idle itself and
//! [`AgentV2::cancel_grace_expired`] tells the agent.
//!
//! v2 also runs over the remote transports (`remote::connect_ws_v2`, `remote::connect_http_v2`,
//! `remote::AgentBackendV2`; features `ws`/`http`) and on async-std
//! (`async_std::{connect_v2, serve_v2, serve_stdio_v2}`; feature `async-std`).

#[macro_use]
mod table;
mod agent;

mod client;
mod negotiated;
mod turn;

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use acp_proto::v2::{self, SessionId, UpdateSessionNotification};
use acp_proto::{InboundId, Instant, OutboundId, RpcError, TurnEndReason, compat::AnyOutcome as Outcome};
use tokio::sync::oneshot;

use crate::Error;
use crate::driver::Held;
use crate::handle::{AbandonGuard, Command, Handle, catch_unwind};
use crate::sync::{QueueSender, queue};

#[cfg(any(feature = "ws", feature = "async-std"))]
pub(crate) use agent::serve_v2_on;
pub use agent::{AgentContextV2, AgentV2, LocalAgentV2, serve_v2, serve_v2_local};
pub use client::{ClientConnectionV2, ClientV2, LocalClientV2};
pub use negotiated::{serve_negotiated, serve_negotiated_local};
pub use turn::PromptTurnV2;

/// A v2 command for the driver.
pub(crate) enum CommandV2 {
    /// Send a v2 request; `reply` gets its outcome.
    Request(Box<RequestV2Command>),
    /// Send a v2 notification; `ack` once the core queued (or refused) it.
    Notify { notification: Box<v2::Notification>, ack: oneshot::Sender<Result<(), Error>> },
    /// A v2 handler finished.
    Complete { id: InboundId, result: Box<Result<v2::Response, RpcError>> },
    /// The stream of a session's turn was dropped unfinished: drop it and cancel the turn.
    AbandonTurn { session: SessionId },
}

/// A v2 request for the driver to send.
pub(crate) struct RequestV2Command {
    pub(crate) token: u64,
    pub(crate) request: v2::Request,
    pub(crate) timeout: Option<Duration>,
    pub(crate) reply: oneshot::Sender<Result<Outcome, Error>>,
    /// A prompt opening a turn: where its updates go.
    pub(crate) turn: Option<TurnSinkV2>,
}

/// The driver's side of a client's v2 turn.
pub(crate) struct TurnSinkV2 {
    pub(crate) session: SessionId,
    pub(crate) updates: QueueSender<TurnItemV2>,
    pub(crate) accepted: oneshot::Sender<Result<(), Error>>,
}

/// One item of a client's v2 turn.
pub(crate) enum TurnItemV2 {
    /// A `session/update` of the turn.
    Update(UpdateSessionNotification),
    /// An agent request of the turn's session (a permission ask, a session-scoped
    /// elicitation) arrived here on the wire: its handler starts once the turn's reader took
    /// every update before it, as v1's `TurnItem::Gate`.
    Gate(oneshot::Sender<()>),
    /// The turn ended (after every update of it).
    End(TurnEndReason),
}

impl crate::turn::GateItem for TurnItemV2 {
    fn into_gate(self) -> Result<oneshot::Sender<()>, Self> {
        match self {
            TurnItemV2::Gate(open) => Ok(open),
            other => Err(other),
        }
    }

    fn is_gate(&self) -> bool {
        matches!(self, TurnItemV2::Gate(_))
    }
}

/// What a v2 handler's notification task gets, in wire order.
pub(crate) enum InboundV2 {
    /// A v2 notification.
    Notification(v2::Notification),
    /// Agent side: the core ended a cancelled session's work by its grace idle
    /// (`Event::CancelGraceExpired`).
    CancelGraceExpired(SessionId),
}

/// A turn this client reads: the prompt that opened it (the core's turn id) and where its
/// items go.
pub(crate) struct OpenTurnV2 {
    pub(crate) turn: OutboundId,
    pub(crate) items: QueueSender<TurnItemV2>,
}

/// A v2 send or answer held while the outbound budget is full.
pub(crate) enum HeldV2 {
    Request(Box<RequestV2Command>, Option<Instant>),
    Notify(Box<v2::Notification>, oneshot::Sender<Result<(), Error>>),
    Complete(InboundId, Box<Result<v2::Response, RpcError>>),
}

/// Adds version 2 to the versions a side speaks (a v2 connection offers or accepts it).
pub(crate) fn offer_v2(config: &mut acp_proto::Config) {
    let versions = &mut config.supported_versions;
    if !versions.contains(&acp_proto::types::ProtocolVersion(2)) {
        versions.push(acp_proto::types::ProtocolVersion(2));
    }
}

/// Whether `held` is the v2 request of `token`.
pub(crate) fn held_token_is(held: &Held, token: u64) -> bool {
    matches!(held, Held::V2(HeldV2::Request(r, _)) if r.token == token)
}

/// A v2 request sent and awaiting its outcome.
pub(crate) struct PendingV2 {
    pub(crate) token: u64,
    pub(crate) reply: oneshot::Sender<Result<Outcome, Error>>,
}

/// The driver's v2 state.
pub(crate) struct DriverV2 {
    pub(crate) pending: HashMap<OutboundId, PendingV2>,
    /// The open turns this client reads, by session. A turn whose stream was dropped is no
    /// longer here, but stays open in the core (`Connection::open_turn_v2`) until it ends, and
    /// a new prompt of its session is refused until then (it would join that turn).
    pub(crate) turns: HashMap<SessionId, OpenTurnV2>,
    pub(crate) notifications: Option<QueueSender<InboundV2>>,
}

impl DriverV2 {
    pub(crate) fn new<H: crate::driver::Handlers, Rt: crate::runtime::Runtime>(
        handlers: &H,
        rt: &Rt,
        buffer: usize,
    ) -> DriverV2 {
        let (tx, rx) = queue(buffer);
        handlers.spawn_notifications_v2(rt, rx);
        DriverV2 { pending: HashMap::new(), turns: HashMap::new(), notifications: Some(tx) }
    }

    pub(crate) fn on_closed(&mut self) {
        self.notifications = None;
    }
}

/// Reports a v2 handler's completion exactly once (`-32603` when it panicked or was dropped).
pub(crate) struct DoneV2 {
    pub(crate) id: InboundId,
    pub(crate) tx: Option<tokio::sync::mpsc::UnboundedSender<Command>>,
}

impl DoneV2 {
    pub(crate) fn complete(mut self, result: Result<v2::Response, RpcError>) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Command::V2(CommandV2::Complete { id: self.id, result: Box::new(result) }));
        }
    }
}

impl Drop for DoneV2 {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let error = RpcError::internal_error("the handler was dropped before it completed");
            let _ = tx.send(Command::V2(CommandV2::Complete { id: self.id, result: Box::new(Err(error)) }));
        }
    }
}

/// Runs one v2 request handler and reports its completion; a panic is `-32603`. With a
/// `gate`, the handler starts once it opens (or its turn is dropped): see [`TurnItemV2::Gate`].
pub(crate) async fn run_handler_v2(
    done: DoneV2,
    gate: Option<oneshot::Receiver<()>>,
    handler: impl Future<Output = Result<v2::Response, RpcError>>,
) {
    if let Some(gate) = gate {
        // Err: the turn was dropped unread, so there is nothing to stay behind.
        let _ = gate.await;
    }
    let result = match catch_unwind(handler).await {
        Ok(result) => result,
        Err(panic) => Err(acp_runtime::handler_panicked(&*panic)),
    };
    done.complete(result);
}

/// The result of a v2 request, or why there is none.
fn outcome_result(outcome: Result<Outcome, Error>) -> Result<v2::Response, Error> {
    crate::outcome_compat::v2_result(outcome?)
}

impl Handle {
    /// Sends a v2 request and waits for its outcome. Dropping the future cancels the request.
    pub(crate) async fn request_v2_outcome(
        &self,
        request: v2::Request,
        timeout: Option<Duration>,
    ) -> Result<Outcome, Error> {
        let token = self.token();
        let (reply, rx) = oneshot::channel();
        let command = RequestV2Command { token, request, timeout, reply, turn: None };
        self.send(Command::V2(CommandV2::Request(Box::new(command))))?;
        let guard = AbandonGuard { handle: self, token: Some(token) };
        let result = rx.await.unwrap_or(Err(Error::ConnectionClosed));
        guard.disarm();
        result
    }

    /// Sends a v2 request and waits for its v2 result.
    pub(crate) async fn request_v2(
        &self,
        request: v2::Request,
        timeout: Option<Duration>,
    ) -> Result<v2::Response, Error> {
        outcome_result(self.request_v2_outcome(request, timeout).await)
    }

    /// Sends a v2 notification once the outbound budget allows it.
    pub(crate) async fn notify_v2(&self, notification: v2::Notification) -> Result<(), Error> {
        let (ack, rx) = oneshot::channel();
        self.send(Command::V2(CommandV2::Notify { notification: Box::new(notification), ack }))?;
        rx.await.unwrap_or(Err(Error::ConnectionClosed))
    }
}
