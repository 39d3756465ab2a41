//! The v2 client: the [`Client`] handler trait (what a v2 agent asks of the client) and
//! [`ClientConnection`], the handle that drives a v2 agent.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use acp_proto::role;
use acp_proto::types::SessionId;
use acp_proto::v2;
use acp_proto::{CloseReason, InboundRequest, Negotiated, TurnEndReason, TurnStamp, V2};

use super::turn::{PromptTurn, Turns};
use crate::client::{ClientContext, ClientOptions, Open, Running};
use crate::driver::{Link, Reply, Service};
use crate::error::Error;
use crate::sync::{CancelToken, inbox};

pub use crate::generated::v2_client::Client;
use crate::generated::v2_client::{dispatch_client, dispatch_notification};

impl Client for () {}

/// Runs a [`Client`]'s handlers for the driver, and routes its turns.
struct ClientService<C> {
    client: C,
    turns: Arc<Turns>,
}

impl<C> Drop for ClientService<C> {
    /// The driver is gone (the core ends every open turn before it closes, so this matters only
    /// when the driver ended otherwise): a turn still read ends instead of waiting forever.
    fn drop(&mut self) {
        self.turns.close_all();
    }
}

impl<C: Client> Service<V2, role::Client> for ClientService<C> {
    fn request(&self, link: &Link<V2, role::Client>, cancel: &CancelToken, request: InboundRequest<V2>) {
        let id = request.id();
        let cx = ClientContext::new(id, cancel.clone());
        link.answer(id, || dispatch_client(&self.client, request.into_call(), &cx));
    }

    fn notification(&self, _: &Link<V2, role::Client>, notification: v2::Notification) {
        dispatch_notification(&self.client, notification);
    }

    fn route(
        &self,
        _: &Link<V2, role::Client>,
        notification: v2::Notification,
        turn: Option<TurnStamp>,
    ) -> Option<v2::Notification> {
        self.turns.route(notification, turn.is_some())
    }

    fn turn_gate(&self, _: &Link<V2, role::Client>, request: &v2::Request) -> Option<Receiver<()>> {
        self.turns.gate(request)
    }

    fn turn_ended(&self, session: SessionId, reason: TurnEndReason) {
        self.turns.ended(&session, reason);
    }
}

/// A v2 connection to an agent: the client's handle, over any byte transport
/// ([`connect`](Self::connect)) or to a child process ([`spawn`](Self::spawn)). Every method
/// takes `&self`; clones share the connection, which closes when [`close`](Self::close) is
/// called or the last clone is dropped (a [`PromptTurn`] still read then ends with
/// [`Error::ConnectionClosed`]).
#[derive(Clone)]
pub struct ClientConnection {
    running: Arc<Running<V2, role::Client>>,
    pub(crate) link: Link<V2, role::Client>,
    turns: Arc<Turns>,
    pub(crate) timeout: Option<Duration>,
}

// The typed calls of the table's `call = "typed"` rows: `crate::generated::v2_client`.

impl ClientConnection {
    client_connection_functions!(Client);

    fn open<C: Client>(client: C, open: Open, options: ClientOptions) -> Result<ClientConnection, Error> {
        let turns = Arc::new(Turns::default());
        let service = Arc::new(ClientService { client, turns: turns.clone() });
        let running = Arc::new(Running::open(service, open, options)?);
        Ok(ClientConnection { link: running.link.clone(), running, turns, timeout: None })
    }

    /// A clone whose requests time out after `timeout` (a `$/cancel_request` is sent and the
    /// call returns [`Error::TimedOut`]).
    pub fn with_timeout(&self, timeout: Duration) -> ClientConnection {
        ClientConnection { timeout: Some(timeout), ..self.clone() }
    }

    /// `initialize`, offering `request.protocol_version` (2 or later). An agent answering with
    /// version 1 gets [`Error::UnsupportedProtocolVersion`]`(1)` and the connection closes
    /// (the core closes it): this handle speaks v2 only (use
    /// [`crate::ClientConnection`] for v1).
    pub fn initialize(&self, request: v2::InitializeRequest) -> Result<v2::InitializeResponse, Error> {
        match self.link.call(request.into(), self.timeout) {
            Ok(v2::Response::Agent(v2::AgentResponse::Initialize(init))) => Ok(*init),
            Ok(_) => Err(Error::UnexpectedResponse),
            // The close's reason is published before the outcome is routed (see `step`).
            Err(e) => match self.link.close_reason() {
                Some(CloseReason::UnsupportedProtocolVersion { version }) => {
                    Err(Error::UnsupportedProtocolVersion(version))
                }
                _ => Err(e),
            },
        }
    }

    /// Sends any v2 client request and blocks until the agent's result, as v1's
    /// [`Requester::request`](crate::Requester::request): `timeout` (`None`: this connection's)
    /// bounds the wait. Use [`prompt`](Self::prompt) for prompts, and
    /// [`ext_method`](Self::ext_method) for extension methods.
    pub fn request(
        &self,
        request: impl Into<v2::ClientRequest>,
        timeout: Option<Duration>,
    ) -> Result<v2::AgentResponse, Error> {
        self.link.ask(request.into(), timeout.or(self.timeout))
    }

    /// Starts a turn: sends `session/prompt` and returns once the core took it (or refused it:
    /// [`SendError::TurnAlreadyRunning`](acp_proto::SendError::TurnAlreadyRunning) while this
    /// client reads a turn of the same session). The [`PromptTurn`] yields the turn's updates
    /// and ends when the agent reports `idle` (or the prompt failed, or the connection closed).
    pub fn prompt(&self, request: v2::PromptRequest) -> Result<PromptTurn, Error> {
        let session = request.session_id.clone();
        let (sink, items) = inbox(self.link.shared.backlog.clone());
        self.turns.open(&session, sink)?;
        let (accepted, taken) = mpsc::sync_channel(1);
        let (outcome, ack) = mpsc::sync_channel(1);
        let deadline = Link::<V2, role::Client>::deadline(self.timeout);
        let sent = self
            .link
            .request(request.into(), deadline, Reply::Acked { accepted, outcome })
            .and_then(|()| self.link.reply(&taken));
        match sent {
            Ok(()) => Ok(PromptTurn::new(session, items, ack, self.link.clone(), self.turns.clone())),
            Err(e) => {
                self.turns.forget(&session);
                Err(e)
            }
        }
    }

    /// Cancels the running turn of `session_id` (`session/cancel`): pending permission asks of
    /// it are answered `cancelled`; the turn ends when the agent reports `idle` (`cancelled`).
    pub fn cancel(&self, session_id: &SessionId) -> Result<(), Error> {
        self.link.cancel_turn(session_id.clone())
    }

    /// Sends a v2 client notification, blocking while the outbound budget is used up; as v1's
    /// [`Requester::notify`](crate::Requester::notify): a `session/cancel` sent this way
    /// cancels its session's turn as [`cancel`](Self::cancel) does, in order behind what was
    /// sent before it.
    pub fn notify(&self, notification: impl Into<v2::ClientNotification>) -> Result<(), Error> {
        self.link.notify(notification.into())
    }

    /// Calls an extension method of the agent (its name starts with `_`); this connection's
    /// timeout applies.
    pub fn ext_method(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value, Error> {
        self.link.ext_method(method, params, self.timeout)
    }

    /// Sends an extension notification to the agent.
    pub fn ext_notification(&self, method: &str, params: serde_json::Value) -> Result<(), Error> {
        self.link.ext_notification(method, params)
    }

    /// Both sides' capabilities, once the handshake has completed.
    pub fn negotiated(&self) -> Option<Negotiated> {
        self.link.negotiated()
    }

    /// Why the connection closed, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.link.close_reason()
    }
}

impl std::fmt::Debug for ClientConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConnection").field("timeout", &self.timeout).finish()
    }
}
