//! The v2 client: the [`ClientV2`] handler trait (what a v2 agent asks of the client) and
//! [`ClientConnectionV2`], the handle that drives a v2 agent.

use std::io::{Read, Write};
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use acp_proto::types::SessionId;
use acp_proto::v2::{
    self, AgentNotificationParams, AgentRequestParams, CancelSessionNotification, ClientNotificationParams,
};
use acp_proto::{
    CloseReason, InboundId, Negotiated, Notification, Request, Response, RpcError, TurnEndReason,
    compat::AnyOutcome as Outcome,
};

use super::turn::{PromptTurnV2, Turns};
use super::{ServiceV2, answer, call, notify, speak_v2};
use crate::client::{ClientConnection, ClientContext, ClientOptions};
use crate::driver::{Link, Outbound, Reply, Service};
use crate::error::Error;
use crate::sync::{CancelToken, inbox};

macro_rules! client_trait_v2 {
    (
        {}
        client_requests: $client_requests:tt
        agent_requests: [ $( {
            $(#[doc = $doc:literal])* $v:ident = $w:literal, $p:ident => $r:ident, gate: [$($g:literal),*],
            handler: $h:ident($cx:ident), default: $def:ident, call: $call:ident
        } )* ]
        client_notifications: $client_notifications:tt
        agent_notifications: [ $( {
            $(#[doc = $ndoc:literal])* $nv:ident = $nw:literal, $np:ident, gate: [$($ng:literal),*], layer: $nl:ident, handler: $nh:tt
        } )* ]
        $($rest:tt)*
    ) => {
        /// What an ACP v2 client answers to its agent. Handlers run on a bounded pool of worker
        /// threads (`ClientOptions::max_handlers`), notifications in order on one thread, as
        /// for the v1 [`Client`](crate::Client). Every method has a default: `-32601`, except
        /// [`request_permission`](ClientV2::request_permission), which answers `cancelled`,
        /// and the notifications, which are ignored. `()` implements it with the defaults. A
        /// handler that panics answers `-32603`.
        ///
        /// A turn's `session/update`s go to its [`PromptTurnV2`]; the others (outside a turn)
        /// to [`session_update`](ClientV2::session_update).
        #[allow(unused_variables)]
        pub trait ClientV2: Send + Sync + 'static {
            $(
                handler_method! {
                    method: [v2::Method]
                    $(#[doc = $doc])*
                    gate: [$($g),*], $def, $v, $h(v2::$p, ClientContext) -> v2::$r
                }
            )*
            $(
                notification_method! {
                    $(#[doc = $ndoc])*
                    #[doc = ""]
                    #[doc = "Runs on the connection's ordered notification thread. Default: ignored."]
                    $nh(v2::$np)
                }
            )*
        }

        fn dispatch_client_v2<C: ClientV2>(
            client: &C,
            request: v2::Request,
            cx: &ClientContext,
        ) -> Result<v2::Response, RpcError> {
            match request {
                $( v2::Request::Agent(AgentRequestParams::$v(r)) => Ok(client.$h(r, cx)?.into()), )*
                other => Err(RpcError::method_not_found(other.wire())),
            }
        }

        fn notify_client_v2<C: ClientV2>(client: &C, notification: v2::Notification) {
            match notification {
                $(
                    v2::Notification::Agent(AgentNotificationParams::$nv(n)) => call_notification!($nh, client, n),
                )*
                _ => {}
            }
        }
    };
}

acp_proto::method_table_v2!(client_trait_v2 {});

impl ClientV2 for () {}

/// Runs a [`ClientV2`]'s handlers for the driver, and routes its turns.
struct ClientServiceV2<C> {
    client: C,
    turns: Arc<Turns>,
}

impl<C> Drop for ClientServiceV2<C> {
    /// The driver is gone (the core ends every open turn before it closes, so this matters only
    /// when the driver ended otherwise): a turn still read ends instead of waiting forever.
    fn drop(&mut self) {
        self.turns.close_all();
    }
}

impl<C: ClientV2> Service for ClientServiceV2<C> {
    fn request(&self, _: &Link, _: InboundId, _: &CancelToken, request: Request) -> Result<Response, RpcError> {
        // A v1 request cannot reach a connection that negotiated v2; answered all the same.
        Err(RpcError::method_not_found(request.wire()))
    }

    fn notification(&self, _: &Link, _: Notification) {}

    fn v2(&self) -> Option<&dyn ServiceV2> {
        Some(self)
    }
}

impl<C: ClientV2> ServiceV2 for ClientServiceV2<C> {
    fn request(&self, link: &Link, id: InboundId, cancel: &CancelToken, request: v2::Request) {
        let cx = ClientContext::new(id, cancel.clone());
        answer(link, id, || dispatch_client_v2(&self.client, request, &cx));
    }

    fn notification(&self, _: &Link, notification: v2::Notification) {
        notify_client_v2(&self.client, notification);
    }

    fn route(&self, notification: v2::Notification, in_turn: bool) -> Option<v2::Notification> {
        self.turns.route(notification, in_turn)
    }

    fn turn_gate(&self, request: &v2::Request) -> Option<Receiver<()>> {
        self.turns.gate(request)
    }

    fn turn_ended(&self, session: SessionId, reason: TurnEndReason) {
        self.turns.ended(&session, reason);
    }
}

/// A v2 connection to an agent: the client's handle, over any byte transport
/// ([`connect`](Self::connect)) or to a child process ([`spawn`](Self::spawn)). Every method
/// takes `&self`; clones share the connection, which closes when [`close`](Self::close) is
/// called or the last clone is dropped (a [`PromptTurnV2`] still read then ends with
/// [`Error::ConnectionClosed`]).
#[derive(Clone)]
pub struct ClientConnectionV2 {
    inner: Arc<ClientConnection>,
    link: Link,
    turns: Arc<Turns>,
    timeout: Option<Duration>,
}

macro_rules! client_calls_v2 {
    (
        {}
        client_requests: [ $( {
            $(#[doc = $doc:literal])* $v:ident = $w:literal, $p:ident => $r:ident, gate: [$($g:literal),*],
            handler: $h:ident($cx:ident), default: $def:ident, call: $call:ident
        } )* ]
        $($rest:tt)*
    ) => {
        impl ClientConnectionV2 {
            $(
                typed_call! {
                    $(#[doc = $doc])*
                    #[doc = ""]
                    #[doc = acp_proto::__gate_note!([$($g),*])]
                    $call, $h(v2::$p) -> v2::$r, v2: Agent(AgentResult::$v)
                }
            )*
        }
    };
}

acp_proto::method_table_v2!(client_calls_v2 {});

impl ClientConnectionV2 {
    /// Connects `client` to a v2 agent over `reader` (the agent's output) and `writer` (its
    /// input); the driver runs on its own thread. Version 2 is added to
    /// `options.config.supported_versions`. Call [`initialize`](Self::initialize) first.
    pub fn connect<C: ClientV2>(
        client: C,
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
        mut options: ClientOptions,
    ) -> Result<ClientConnectionV2, Error> {
        speak_v2(&mut options.config);
        let (service, turns) = service(client);
        Ok(ClientConnectionV2::with(ClientConnection::connect_service(service, reader, writer, options)?, turns))
    }

    /// Spawns `command` as a v2 agent, as [`ClientConnection::spawn`] does a v1 one (stdin and
    /// stdout piped to the connection, stderr kept in [`stderr_tail`](Self::stderr_tail)).
    pub fn spawn<C: ClientV2>(
        client: C,
        command: Command,
        mut options: ClientOptions,
    ) -> Result<ClientConnectionV2, Error> {
        speak_v2(&mut options.config);
        let (service, turns) = service(client);
        Ok(ClientConnectionV2::with(ClientConnection::spawn_service(service, command, options)?, turns))
    }

    fn with(conn: ClientConnection, turns: Arc<Turns>) -> ClientConnectionV2 {
        let link = conn.link().clone();
        ClientConnectionV2 { inner: Arc::new(conn), link, turns, timeout: None }
    }

    /// A clone whose requests time out after `timeout` (a `$/cancel_request` is sent and the
    /// call returns [`Error::TimedOut`]).
    pub fn with_timeout(&self, timeout: Duration) -> ClientConnectionV2 {
        ClientConnectionV2 { timeout: Some(timeout), ..self.clone() }
    }

    /// `initialize`, offering `request.protocol_version` (2 or later). An agent answering with
    /// version 1 gets [`Error::UnsupportedProtocolVersion`]`(1)` and the connection closes:
    /// this handle speaks v2 only (use [`ClientConnection`] for v1).
    pub fn initialize(&self, request: v2::InitializeRequest) -> Result<v2::InitializeResponse, Error> {
        match self.link.call_outcome(Outbound::V2(request.into()), self.timeout)? {
            Outcome::ResultV2(v2::Response::Agent(v2::AgentResult::Initialize(init))) => Ok(init),
            Outcome::Result(Response::Agent(acp_proto::methods::AgentResponse::Initialize(init))) => {
                self.link.close();
                Err(Error::UnsupportedProtocolVersion(init.protocol_version))
            }
            Outcome::ResultV2(_) | Outcome::Result(_) => Err(Error::UnexpectedResponse),
            other => Err(crate::outcome_compat::v1_result(other).err().unwrap_or(Error::UnexpectedResponse)),
        }
    }

    /// Sends any v2 client request and blocks until its result.
    pub fn request(&self, request: impl Into<v2::Request>) -> Result<v2::Response, Error> {
        call(&self.link, request.into(), self.timeout)
    }

    /// Starts a turn: sends `session/prompt` and returns once the core took it (or refused it:
    /// [`SendError::TurnAlreadyRunning`](acp_proto::SendError::TurnAlreadyRunning) while this
    /// client reads a turn of the same session). The [`PromptTurnV2`] yields the turn's updates
    /// and ends when the agent reports `idle` (or the prompt failed, or the connection closed).
    pub fn prompt(&self, request: v2::PromptRequest) -> Result<PromptTurnV2, Error> {
        let session = request.session_id.clone();
        let (sink, items) = inbox(self.link.shared.backlog.clone());
        self.turns.open(&session, sink)?;
        let (accepted, taken) = mpsc::sync_channel(1);
        let (outcome, ack) = mpsc::sync_channel(1);
        let deadline = Link::deadline(self.timeout);
        let sent = self
            .link
            .request(Outbound::V2(request.into()), deadline, Reply::Acked { accepted, outcome })
            .and_then(|()| self.link.reply(&taken));
        match sent {
            Ok(()) => Ok(PromptTurnV2::new(session, items, ack, self.link.clone(), self.turns.clone())),
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

    /// Sends a v2 client notification (`session/cancel` goes through [`cancel`](Self::cancel)),
    /// blocking while the outbound budget is used up.
    pub fn notify(&self, notification: impl Into<v2::Notification>) -> Result<(), Error> {
        let notification = notification.into();
        if let v2::Notification::Client(ClientNotificationParams::Cancel(CancelSessionNotification {
            session_id,
            ..
        })) = &notification
        {
            return self.cancel(session_id);
        }
        notify(&self.link, notification)
    }

    /// Both sides' capabilities, once the handshake has completed.
    pub fn negotiated(&self) -> Option<Negotiated> {
        self.link.negotiated()
    }

    /// Why the connection closed, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.link.close_reason()
    }

    /// The agent process's id, when the connection spawned it.
    pub fn child_id(&self) -> Option<u32> {
        self.inner.child_id()
    }

    /// The last lines the spawned agent wrote to stderr (empty without a child process).
    pub fn stderr_tail(&self) -> String {
        self.inner.stderr_tail()
    }

    /// Closes the connection as [`ClientConnection::close`] does: pending calls and turns end
    /// with [`Error::ConnectionClosed`], a spawned agent is given `close_grace` to exit and is
    /// then terminated; its exit status is returned.
    pub fn close(&self) -> Result<Option<ExitStatus>, Error> {
        self.inner.close()
    }
}

fn service<C: ClientV2>(client: C) -> (Arc<dyn Service>, Arc<Turns>) {
    let turns = Arc::new(Turns::default());
    (Arc::new(ClientServiceV2 { client, turns: turns.clone() }), turns)
}

impl std::fmt::Debug for ClientConnectionV2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConnectionV2").field("timeout", &self.timeout).finish()
    }
}
