//! The client side: the [`Client`] and [`LocalClient`] handler traits (what the agent asks of the
//! client) and [`ClientConnection<P>`](ClientConnection), the handle that drives an agent (one
//! type for both versions; v2's handler traits and typed calls are in `crate::v2`).

use std::sync::Arc;
use std::time::Duration;

use acp_proto::methods::ClientRequest;
use acp_proto::protocol::V1;
use acp_proto::role;
use acp_proto::types::*;
use acp_proto::{CloseReason, Negotiated};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::driver::{ClientDriver, Driver, DriverTask, Handlers};
use crate::handle::{Command, DriverStats, Handle, RequestCommand, TurnSink};
use crate::io::{ReadBytes, TokioIo, WriteBytes};
use crate::process::ProcessControl;
use crate::runtime::{Runtime, Tokio};
use crate::sync::{lock, queue};
use crate::turn::PromptTurn;
use crate::version::Version;
use crate::{ClientOptions, Error};

pub use crate::generated::v1::client::Client;
pub use crate::generated::v1::client::LocalClient;
use crate::handlers::{LocalHandlers, SendHandlers};

/// A connection to an agent speaking protocol version `P`: the client's handle. Cheap to
/// clone; every clone drives the same connection. The connection closes when
/// [`close`](Self::close) is called or every clone (and every [`PromptTurn`]) is dropped.
///
/// `ClientConnection<V1>` is [`acp_tokio::ClientConnection`](crate::ClientConnection) and
/// `ClientConnection<V2>` is `acp_tokio::v2::ClientConnection`: the same handle, with each
/// version's typed calls and constructors (which take that version's handler trait).
pub struct ClientConnection<P: Version> {
    handle: Handle<P, role::Client>,
    timeout: Option<Duration>,
    turn_buffer: usize,
    process: Option<Arc<dyn ProcessControl>>,
}

impl<P: Version> Clone for ClientConnection<P> {
    fn clone(&self) -> Self {
        ClientConnection {
            handle: self.handle.clone(),
            timeout: self.timeout,
            turn_buffer: self.turn_buffer,
            process: self.process.clone(),
        }
    }
}

impl<P: Version> ClientConnection<P> {
    /// Builds the driver (not yet running) and the handle.
    pub(crate) fn build<Rt: Runtime, H: Handlers<P, role::Client>, Rd: ReadBytes, Wr: WriteBytes>(
        rt: Rt,
        handlers: H,
        reader: Rd,
        writer: Wr,
        options: &ClientOptions,
    ) -> (ClientDriver<P, Rt, H, Rd, Wr>, ClientConnection<P>) {
        let (driver, handle) = Driver::client(rt, handlers, (reader, writer), options.driver());
        (driver, ClientConnection { handle, timeout: None, turn_buffer: options.turn_buffer, process: None })
    }

    /// Builds the connection and runs its driver on a task of `rt` (a local one for a local
    /// handler trait's `handlers`).
    pub(crate) fn start<Rt: Runtime, H, Rd: ReadBytes, Wr: WriteBytes>(
        rt: Rt,
        handlers: H,
        reader: Rd,
        writer: Wr,
        options: &ClientOptions,
    ) -> ClientConnection<P>
    where
        H: Handlers<P, role::Client> + DriverTask<ClientDriver<P, Rt, H, Rd, Wr>>,
    {
        let (driver, conn) = Self::build(rt.clone(), handlers, reader, writer, options);
        H::spawn_driver(&rt, driver);
        conn
    }

    /// [`start`](Self::start) for the agent process `child` (its stdin and stdout the
    /// transport, its stderr kept in a bounded buffer), supervised on `rt`.
    pub(crate) fn start_process<Rt: Runtime, H, Rd: ReadBytes, Wr: WriteBytes, C: crate::process::ChildHandle>(
        rt: Rt,
        handlers: H,
        (reader, writer): (Rd, Wr),
        (child, pid, stderr): (C, Option<u32>, impl ReadBytes + Send),
        options: &ClientOptions,
    ) -> ClientConnection<P>
    where
        H: Handlers<P, role::Client> + DriverTask<ClientDriver<P, Rt, H, Rd, Wr>>,
    {
        let mut conn = Self::start(rt.clone(), handlers, reader, writer, options);
        let shared = conn.handle.shared.clone();
        conn.process = Some(crate::process::supervise(rt, child, pid, stderr, shared, options));
        conn
    }

    /// The connection's handle (the typed calls send through it).
    pub(crate) fn handle(&self) -> &Handle<P, role::Client> {
        &self.handle
    }

    /// The timeout set with [`with_timeout`](Self::with_timeout), if any.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Sends any client request of the version and waits for the agent's result. `timeout` (or
    /// the one set with [`with_timeout`](Self::with_timeout)) bounds the wait. Dropping the
    /// future before it resolves cancels the request: the agent gets a `$/cancel_request`. Use
    /// [`prompt`](Self::prompt) for prompts (here a prompt's updates are dropped) and
    /// [`ext_method`](Self::ext_method) for extension methods.
    ///
    /// The side is in the types: a client's request goes in, the agent's result comes out.
    ///
    /// ```no_run
    /// # async fn f(conn: acp_tokio::ClientConnection, list: acp_tokio::acp_proto::types::ListSessionsRequest)
    /// # -> Result<(), acp_tokio::Error> {
    /// use acp_tokio::acp_proto::AgentResponse;
    ///
    /// let AgentResponse::ListSessions(sessions) = conn.request(list, None).await? else { return Ok(()) };
    /// # let _ = sessions; Ok(()) }
    /// ```
    ///
    /// An agent's request does not compile here:
    ///
    /// ```compile_fail
    /// # async fn f(conn: acp_tokio::ClientConnection, ask: acp_tokio::acp_proto::types::RequestPermissionRequest) {
    /// let _ = conn.request(ask, None).await;
    /// # }
    /// ```
    pub async fn request(
        &self,
        request: impl Into<P::ClientRequest>,
        timeout: Option<Duration>,
    ) -> Result<P::AgentResponse, Error> {
        self.handle.ask(request.into(), timeout.or(self.timeout)).await
    }

    /// An extension request (a method outside the table: its name starts with `_`) and the
    /// agent's result; the timeout set with [`with_timeout`](Self::with_timeout) applies.
    pub async fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error> {
        self.handle.ext_method(method, params, self.timeout).await
    }

    /// An extension notification (waits while the outbound budget is full).
    pub async fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        self.handle.ext_notification(method, params).await
    }

    /// A clone whose requests (typed methods and prompts) time out after `timeout` instead of
    /// [`Config::request_timeout`](acp_proto::Config::request_timeout). A timed-out request
    /// resolves to [`Error::TimedOut`] and the agent gets a `$/cancel_request`.
    pub fn with_timeout(&self, timeout: Duration) -> ClientConnection<P> {
        ClientConnection { timeout: Some(timeout), ..self.clone() }
    }

    /// Sends a prompt of `session` and, once it went out, hands back the turn's stream.
    pub(crate) async fn open_turn(
        &self,
        session: SessionId,
        request: P::ClientRequest,
    ) -> Result<PromptTurn<P>, Error> {
        let token = self.handle.token();
        let (updates_tx, updates) = queue(self.turn_buffer);
        let (accepted_tx, accepted) = oneshot::channel();
        let (reply, outcome) = oneshot::channel();
        let turn = TurnSink { session: session.clone(), updates: updates_tx, accepted: accepted_tx, client: () };
        self.handle.send(Command::Request(Box::new(RequestCommand {
            token,
            request,
            timeout: self.timeout,
            reply,
            turn: Some(turn),
        })))?;
        let mut turn = PromptTurn::new(session, updates, outcome, self.handle.clone(), token);
        match accepted.await.unwrap_or(Err(Error::ConnectionClosed)) {
            Ok(()) => Ok(turn),
            Err(e) => {
                turn.disarm();
                Err(e)
            }
        }
    }

    /// Cancels the running turn of `session_id` (`session/cancel`): pending permission requests
    /// of that session are answered `cancelled`, and the turn ends cancelled (v1: the prompt's
    /// answer, [`StopReason::Cancelled`]; v2: when the agent reports `idle`).
    pub async fn cancel(&self, session_id: &SessionId) -> Result<(), Error> {
        self.handle.cancel_turn(session_id.clone()).await
    }

    /// Sends a client→agent notification of the table (for example the unstable
    /// `mcp/message` notification), waiting while the outbound budget is full. A gated one the
    /// agent did not advertise is refused here ([`Error::Send`] with `NotSupportedByPeer`). A
    /// `session/cancel` sent this way cancels its session's turn as [`cancel`](Self::cancel)
    /// does (the core runs the turn rules for it), in order behind what was sent before it;
    /// `cancel` does it at once.
    pub async fn notify(&self, notification: impl Into<P::ClientNotification>) -> Result<(), Error> {
        self.handle.notify(Box::new(notification.into())).await
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

    /// The agent process's id, for a connection to a process it started (`spawn`).
    pub fn child_id(&self) -> Option<u32> {
        self.process.as_ref().and_then(|p| p.pid())
    }

    /// The most recent bytes of the agent process's stderr (lossily decoded; empty unless the
    /// connection started the agent's process: `spawn`).
    pub fn stderr_tail(&self) -> String {
        self.process.as_ref().map(|p| p.stderr_tail()).unwrap_or_default()
    }

    /// Completes once the driver has finished (the connection closed and its output was
    /// flushed).
    pub async fn closed(&self) {
        self.handle.shared.finished.wait().await;
    }

    /// Closes the connection: pending requests resolve to [`Error::ConnectionClosed`], queued
    /// output is flushed, and the agent's input ends.
    ///
    /// For a spawned agent, it then waits up to [`ClientOptions::close_grace`] for the process
    /// to exit, sends `SIGTERM` to its process group, waits up to
    /// [`ClientOptions::kill_grace`], sends `SIGKILL`, and reaps it; the exit status is
    /// returned (every clone gets the same). Otherwise it returns `None` once the driver has
    /// finished.
    pub async fn close(&self) -> Result<Option<std::process::ExitStatus>, Error> {
        let _ = self.handle.send(Command::Close);
        match &self.process {
            Some(process) => Ok(Some(process.close().await?)),
            None => {
                self.closed().await;
                Ok(None)
            }
        }
    }
}

impl ClientConnection<V1> {
    connect_fns!(Tokio(TokioIo, tokio::io), V1 {
        /// Connects to an agent over `reader` (the agent's output) and `writer` (its input); the
        /// driver runs as a `tokio::spawn`ed task. Call [`initialize`](Self::initialize) first.
        fn connect<C: Client>(Send) => SendHandlers;
        /// [`connect`](Self::connect) for a [`LocalClient`]: must be called inside a
        /// `tokio::task::LocalSet`, where the driver and the handlers run.
        fn connect_local<C: LocalClient>() => LocalHandlers;
        /// Starts `command` as the agent: its stdin and stdout carry the protocol, its stderr is
        /// kept in a bounded buffer ([`stderr_tail`](Self::stderr_tail)); on Unix it gets a process
        /// group of its own. See [`close`](Self::close) for how it ends.
        fn spawn<C: Client> = process(spawn_tokio, SendHandlers);
    });

    /// `initialize`: the handshake, first. Fails with [`Error::UnsupportedProtocolVersion`]
    /// (and the connection closes) when the agent picks a version this client does not speak.
    pub async fn initialize(&self, request: InitializeRequest) -> Result<InitializeResponse, Error> {
        let response = self.handle.request_typed(request, self.timeout).await?;
        // The driver saw the core commit the handshake before this answer; no commit means the
        // core refused the version.
        if self.negotiated().is_none() {
            return Err(Error::UnsupportedProtocolVersion(response.protocol_version));
        }
        Ok(response)
    }

    /// **Unstable** `proxy/initialize` (feature `unstable_proxy_chains`): a conductor's
    /// handshake with a proxy, in place of [`initialize`](Self::initialize) and checked the same
    /// way (fails with [`Error::UnsupportedProtocolVersion`], and the connection closes, when
    /// the chain picks a version this client does not speak).
    #[cfg(feature = "unstable_proxy_chains")]
    pub async fn initialize_proxy(
        &self,
        request: acp_proto::types::InitializeProxyRequest,
    ) -> Result<acp_proto::types::InitializeProxyResponse, Error> {
        let response: acp_proto::types::InitializeProxyResponse =
            self.handle.request_typed(request, self.timeout).await?;
        if self.negotiated().is_none() {
            return Err(Error::UnsupportedProtocolVersion(response.0.protocol_version));
        }
        Ok(response)
    }

    /// Starts a prompt turn. Resolves once the request went out (or was refused, e.g. while a
    /// turn of the same session still runs); the returned [`PromptTurn`] yields the turn's
    /// updates in order and then its stop reason.
    pub async fn prompt(&self, request: PromptRequest) -> Result<PromptTurn<V1>, Error> {
        let session = request.session_id.clone();
        self.open_turn(session, ClientRequest::Prompt(request)).await
    }

    /// Runs a prompt turn, calling `on_update` for each update in order, and returns the stop
    /// reason.
    pub async fn prompt_with(
        &self,
        request: PromptRequest,
        mut on_update: impl FnMut(SessionUpdate),
    ) -> Result<StopReason, Error> {
        let mut turn = self.prompt(request).await?;
        while let Some(update) = turn.next_update().await {
            on_update(update);
        }
        turn.finish().await
    }
}

impl<P: Version> std::fmt::Debug for ClientConnection<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConnection")
            .field("timeout", &self.timeout)
            .field("child_id", &self.child_id())
            .field("close_reason", &self.close_reason())
            .finish()
    }
}
