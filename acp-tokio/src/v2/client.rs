//! The v2 client: the [`ClientV2`] and [`LocalClientV2`] handler traits (what a v2 agent asks
//! of the client) and [`ClientConnectionV2`], the handle that drives a v2 agent.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use acp_proto::v2::{
    self, AgentNotificationParams, AgentRequestParams, CancelSessionNotification, ClientNotificationParams, SessionId,
};
use acp_proto::{CloseReason, Negotiated, RpcError, Side, compat::AnyOutcome as Outcome};
use tokio::sync::oneshot;

use super::turn::PromptTurnV2;
use super::{CommandV2, InboundV2, RequestV2Command, TurnSinkV2, offer_v2};
use crate::context::{ClientContext, HandlerContext};
use crate::driver::{Driver, Handlers};
use crate::handle::{Command, DriverStats, Handle};
use crate::io::{ReadBytes, TokioIo, WriteBytes};
use crate::runtime::{Runtime, Tokio};
use crate::sync::{lock, queue};
use crate::{ClientOptions, Error};

macro_rules! client_trait_v2 {
    (
        {
            $(#[$attr:meta])*
            trait $Trait:ident: [$($bounds:tt)*], futures: $futures:tt,
            handlers: $Handlers:ident($Ptr:ident), spawn: $spawn:ident, dispatch: $dispatch:ident, notify: $notify:ident;
        }
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
        $(#[$attr])*
        pub trait $Trait: $($bounds)* 'static {
            $(
                handler_method_v2! {
                    $(#[doc = $doc])*
                    gate: [$($g),*], $def, $v, $h(v2::$p, ClientContext) -> v2::$r, $futures
                }
            )*
            $(
                notification_method_v2! {
                    $(#[doc = $ndoc])*
                    #[doc = ""]
                    #[doc = "Default: ignored."]
                    $nh(v2::$np), $futures
                }
            )*
        }

        async fn $dispatch<C: $Trait>(client: &C, request: v2::Request, cx: ClientContext) -> Result<v2::Response, RpcError> {
            match request {
                $( v2::Request::Agent(AgentRequestParams::$v(r)) => Ok(client.$h(r, cx).await?.into()), )*
                other => Err(RpcError::method_not_found(other.wire())),
            }
        }

        async fn $notify<C: $Trait>(client: &C, item: InboundV2) {
            let InboundV2::Notification(notification) = item else { return };
            match notification {
                $(
                    v2::Notification::Agent(AgentNotificationParams::$nv(n)) => {
                        call_notification!($nh, client, n)
                    }
                )*
                _ => {}
            }
        }

        handlers_impl_v2!($Handlers($Ptr): $Trait, spawn: $spawn, context: client_context,
            dispatch: $dispatch, notify: $notify);
    };
}

acp_proto::method_table_v2!(client_trait_v2 {
    /// What an ACP v2 client answers to its agent (handlers run as spawned tasks). Every
    /// method has a default: `-32601`, except
    /// [`request_permission`](ClientV2::request_permission), which answers `cancelled`,
    /// and the notifications, which are ignored. `()` implements it with the defaults.
    ///
    /// A turn's `session/update`s go to its [`PromptTurnV2`]; the others (outside a turn,
    /// or of a session this client reads no turn of) to
    /// [`session_update`](ClientV2::session_update). The agent's requests of a turn's
    /// session reach their handlers only after the turn's reader took the updates sent
    /// before them (see [`PromptTurnV2`]).
    ///
    /// For handlers that hold `Rc`s or other `!Send` state, implement [`LocalClientV2`].
    trait ClientV2: [Send + Sync +], futures: [+ Send],
    handlers: ClientV2Handlers(Arc), spawn: spawn, dispatch: dispatch_client_v2, notify: notify_client_v2;
});

acp_proto::method_table_v2!(client_trait_v2 {
    /// [`ClientV2`] for handlers whose futures need not be `Send`: the same methods, run as
    /// local tasks, with [`ClientConnectionV2::connect_local`] inside a `tokio::task::LocalSet`.
    trait LocalClientV2: [], futures: [],
    handlers: LocalClientV2Handlers(Rc), spawn: spawn_local, dispatch: dispatch_local_client_v2,
    notify: notify_local_client_v2;
});

impl ClientV2 for () {}
impl LocalClientV2 for () {}

/// A v2 client handler's context (nothing to signal when the handler finished).
fn client_context(cx: HandlerContext) -> (ClientContext, Option<Arc<crate::sync::Signal>>) {
    (ClientContext::new(cx), None)
}

/// A v2 connection to an agent: the client's handle. Cheap to clone; the connection closes
/// when [`close`](Self::close) is called or every clone (and every [`PromptTurnV2`]) is
/// dropped.
#[derive(Clone)]
pub struct ClientConnectionV2 {
    handle: Handle,
    timeout: Option<Duration>,
    turn_buffer: usize,
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
                typed_call_v2! {
                    $(#[doc = $doc])*
                    #[doc = ""]
                    #[doc = acp_proto::__gate_note!([$($g),*])]
                    $call, $v, $h(v2::$p) -> v2::$r, Agent(AgentResult)
                }
            )*
        }
    };
}

acp_proto::method_table_v2!(client_calls_v2 {});

impl ClientConnectionV2 {
    /// Connects to a v2 agent over `reader` (the agent's output) and `writer` (its input); the
    /// driver runs as a `tokio::spawn`ed task. Version 2 is added to
    /// `options.config.supported_versions`. Call [`initialize`](Self::initialize) first.
    pub fn connect<C: ClientV2>(
        client: C,
        reader: impl tokio::io::AsyncRead + Send + 'static,
        writer: impl tokio::io::AsyncWrite + Send + 'static,
        options: ClientOptions,
    ) -> ClientConnectionV2 {
        Self::over(Tokio, client, TokioIo::new(reader), TokioIo::new(writer), options)
    }

    /// [`connect`](Self::connect) over any transport and runtime: the driver is spawned on
    /// `rt` (the remote transports and async-std connect through here).
    pub(crate) fn over<Rt: Runtime, C: ClientV2>(
        rt: Rt,
        client: C,
        reader: impl ReadBytes + Send,
        writer: impl WriteBytes + Send,
        options: ClientOptions,
    ) -> ClientConnectionV2 {
        let (driver, conn) = Self::build(rt.clone(), ClientV2Handlers(Arc::new(client)), reader, writer, options);
        rt.spawn(async move {
            let _ = driver.await;
        });
        conn
    }

    /// [`connect`](Self::connect) for a [`LocalClientV2`]: must be called inside a
    /// `tokio::task::LocalSet`, where the driver and the handlers run.
    pub fn connect_local<C: LocalClientV2>(
        client: C,
        reader: impl tokio::io::AsyncRead + 'static,
        writer: impl tokio::io::AsyncWrite + 'static,
        options: ClientOptions,
    ) -> ClientConnectionV2 {
        let handlers = LocalClientV2Handlers(Rc::new(client));
        let (driver, conn) = Self::build(Tokio, handlers, TokioIo::new(reader), TokioIo::new(writer), options);
        Tokio.spawn_local(async move {
            let _ = driver.await;
        });
        conn
    }

    /// The driver (not yet spawned) and the application's side of a v2 client connection.
    fn build<Rt: Runtime, H: Handlers, R: ReadBytes, W: WriteBytes>(
        rt: Rt,
        handlers: H,
        reader: R,
        writer: W,
        mut options: ClientOptions,
    ) -> (Driver<Rt, H, R, W>, ClientConnectionV2) {
        offer_v2(&mut options.config);
        let (driver, handle) = Driver::new(rt, Side::Client, handlers, reader, writer, options.driver(), true);
        let handle = handle.unwrap_or_else(|| unreachable!("a client driver always has an application handle"));
        (driver, ClientConnectionV2 { handle, timeout: None, turn_buffer: options.turn_buffer })
    }

    pub(super) fn handle(&self) -> &Handle {
        &self.handle
    }

    pub(super) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// A clone whose requests time out after `timeout`.
    pub fn with_timeout(&self, timeout: Duration) -> ClientConnectionV2 {
        ClientConnectionV2 { timeout: Some(timeout), ..self.clone() }
    }

    /// `initialize`, offering `request.protocol_version` (2 or later). An agent answering with
    /// version 1 gets [`Error::UnsupportedProtocolVersion`]`(1)` and the connection closes:
    /// this handle speaks v2 only (use [`ClientConnection`](crate::ClientConnection) for v1).
    pub async fn initialize(&self, request: v2::InitializeRequest) -> Result<v2::InitializeResponse, Error> {
        match self.handle.request_v2_outcome(request.into(), self.timeout).await? {
            Outcome::ResultV2(v2::Response::Agent(v2::AgentResult::Initialize(init))) => Ok(init),
            Outcome::Result(acp_proto::Response::Agent(acp_proto::methods::AgentResponse::Initialize(init))) => {
                let _ = self.handle.send(Command::Close);
                Err(Error::UnsupportedProtocolVersion(init.protocol_version))
            }
            Outcome::ResultV2(_) | Outcome::Result(_) => Err(Error::UnexpectedResponse),
            other => Err(crate::outcome_compat::v1_result(other).err().unwrap_or(Error::UnexpectedResponse)),
        }
    }

    /// Sends any v2 client request (an extension one with `v2::ClientRequestParams::Other`) and
    /// waits for its result. Dropping the future cancels it (`$/cancel_request`).
    pub async fn request(&self, request: impl Into<v2::Request>) -> Result<v2::Response, Error> {
        self.handle.request_v2(request.into(), self.timeout).await
    }

    /// Starts a turn: sends `session/prompt`. Resolves once the request went out (or was
    /// refused: [`SendError::TurnAlreadyRunning`](acp_proto::SendError::TurnAlreadyRunning) while
    /// a turn of the same session is open, which this client reads already or which no stream
    /// reads: a dropped turn the agent has not ended yet, or one opened by a `session/prompt`
    /// sent through [`request`](Self::request); the prompt would join that turn, and the new
    /// stream would miss its start). The [`PromptTurnV2`] yields the turn's
    /// updates and ends when the agent reports `idle` (or the prompt failed, or the connection
    /// closed).
    pub async fn prompt(&self, request: v2::PromptRequest) -> Result<PromptTurnV2, Error> {
        let token = self.handle.token();
        let (updates_tx, updates) = queue(self.turn_buffer);
        let (accepted_tx, accepted) = oneshot::channel();
        let (reply, ack) = oneshot::channel();
        let session = request.session_id.clone();
        let turn = TurnSinkV2 { session: session.clone(), updates: updates_tx, accepted: accepted_tx };
        let command =
            RequestV2Command { token, request: request.into(), timeout: self.timeout, reply, turn: Some(turn) };
        self.handle.send(Command::V2(CommandV2::Request(Box::new(command))))?;
        let mut turn = PromptTurnV2::new(session, updates, ack, self.handle.clone());
        match accepted.await.unwrap_or(Err(Error::ConnectionClosed)) {
            Ok(()) => Ok(turn),
            Err(e) => {
                turn.disarm();
                Err(e)
            }
        }
    }

    /// Cancels the running turn of `session_id` (`session/cancel`): pending permission asks of
    /// it are answered `cancelled`; the turn ends when the agent reports `idle` (`cancelled`).
    pub async fn cancel(&self, session_id: &SessionId) -> Result<(), Error> {
        self.handle.cancel_turn(session_id.clone()).await
    }

    /// Sends a v2 client notification (`session/cancel` goes through [`cancel`](Self::cancel)).
    pub async fn notify(&self, notification: impl Into<v2::Notification>) -> Result<(), Error> {
        let notification = notification.into();
        if let v2::Notification::Client(ClientNotificationParams::Cancel(CancelSessionNotification {
            session_id,
            ..
        })) = &notification
        {
            return self.cancel(session_id).await;
        }
        self.handle.notify_v2(notification).await
    }

    /// Both sides' capabilities, once the handshake has completed.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.handle.shared.negotiated.get()
    }

    /// Why the connection closed, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        lock(&self.handle.shared.close_reason).clone()
    }

    /// The connection's counters.
    pub fn stats(&self) -> DriverStats {
        self.handle.stats()
    }

    /// Closes the connection and waits until the driver has finished.
    pub async fn close(&self) {
        let _ = self.handle.send(Command::Close);
        self.handle.shared.finished.wait().await;
    }
}

impl std::fmt::Debug for ClientConnectionV2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConnectionV2").field("timeout", &self.timeout).finish()
    }
}
