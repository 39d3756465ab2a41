//! The client side: the [`Client`] trait answering the agent's requests, and
//! [`ClientConnection`] to drive an agent.

use std::ops::Deref;
use std::process::{Command, ExitStatus};

use acp_runtime::process::{Supervisor, SupervisorOptions};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use acp_proto::role;
use acp_proto::role::Role;
use acp_proto::types::*;
use acp_proto::{
    AgentNotification, AgentResponse, ClientNotification, ClientRequest, CloseReason, Config, InboundId,
    InboundRequest, Negotiated, Notification, Request, TurnStamp, TypedRequest, V1,
};
use serde_json::Value;

use crate::driver::{Driver, DriverOptions, Link, Pending, Service, Start, TurnItem, Version};
use crate::error::Error;
use crate::sync::{CancelToken, InboxReceiver, lock, request_context_methods};
use crate::transport::Io;

pub use crate::generated::v1_client::Client;
use crate::generated::v1_client::{dispatch, dispatch_notification};

/// What a [`Client`] handler gets: the request's cancellation signal.
#[derive(Debug)]
pub struct ClientContext {
    id: InboundId,
    cancel: CancelToken,
}

impl ClientContext {
    pub(crate) fn new(id: InboundId, cancel: CancelToken) -> ClientContext {
        ClientContext { id, cancel }
    }

    request_context_methods!(
        "`$/cancel_request`, the turn cancelled locally, the end of the agent's output (the answer \
         still goes out), or the connection closed"
    );
}

/// How long a spawned agent gets after `SIGTERM` before `SIGKILL`.
const TERM_GRACE: Duration = Duration::from_secs(1);

/// How a [`ClientConnection`] runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// The core's limits and timings; `config.request_timeout` is the default timeout of every
    /// request.
    pub config: Config,
    /// Agent requests handled at once; more wait in a queue. Default 16.
    pub max_handlers: usize,
    /// Turn updates and notifications delivered but not yet taken by the application before
    /// the connection stops reading from the agent. Default 4096.
    pub max_buffered: usize,
    /// How long the last frames may take to be written once the connection closed. Default
    /// 500 ms.
    pub flush_timeout: Duration,
    /// Spawned agents: how long [`ClientConnection::close`] waits for the agent to exit after
    /// closing its stdin, before terminating its process group. Default 1 s.
    pub close_grace: Duration,
    /// Spawned agents: how many of the last stderr bytes are kept. Default 64 KiB.
    pub stderr_capacity: usize,
    /// With the `tracing` feature: put payloads into the frame and dispatch events. Default off.
    pub trace_payloads: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            config: Config::default(),
            max_handlers: 16,
            max_buffered: 4096,
            flush_timeout: Duration::from_millis(500),
            close_grace: Duration::from_secs(1),
            stderr_capacity: 64 * 1024,
            trace_payloads: false,
        }
    }
}

/// Sends requests to the agent. [`ClientConnection`] derefs to one; [`with_timeout`]
/// makes one whose every request has a deadline. Cheap to clone and `Send`, so it can be
/// handed to other threads.
///
/// [`with_timeout`]: Requester::with_timeout
#[derive(Debug, Clone)]
pub struct Requester {
    pub(crate) link: Link<V1, role::Client>,
    pub(crate) timeout: Option<Duration>,
}

// The typed calls of the table's `call = "typed"` rows: `crate::generated::v1_client`.

impl Requester {
    /// A requester whose requests time out after `timeout` (a `$/cancel_request` is sent and
    /// the call returns [`Error::TimedOut`]).
    pub fn with_timeout(&self, timeout: Duration) -> Requester {
        Requester { link: self.link.clone(), timeout: Some(timeout) }
    }

    /// `initialize`: the handshake. Fails with [`Error::UnsupportedProtocolVersion`] (and the
    /// connection closes) when the agent picks a version this client does not speak.
    pub fn initialize(&self, request: InitializeRequest) -> Result<InitializeResponse, Error> {
        let response = self.link.call_typed(request, self.timeout)?;
        // The core commits the handshake before it delivers the response; a response without a
        // committed handshake is one whose version the core refused.
        if self.link.negotiated().is_none() {
            return Err(Error::UnsupportedProtocolVersion(response.protocol_version));
        }
        Ok(response)
    }

    /// **Unstable** `proxy/initialize` (feature `unstable_proxy_chains`): a conductor's
    /// handshake with a proxy, in place of [`initialize`](Self::initialize) and checked the same
    /// way ([`Error::UnsupportedProtocolVersion`] when the chain picks a version this client
    /// does not speak).
    #[cfg(feature = "unstable_proxy_chains")]
    pub fn initialize_proxy(
        &self,
        request: acp_proto::types::InitializeProxyRequest,
    ) -> Result<acp_proto::types::InitializeProxyResponse, Error> {
        let response: acp_proto::types::InitializeProxyResponse = self.link.call_typed(request, self.timeout)?;
        if self.link.negotiated().is_none() {
            return Err(Error::UnsupportedProtocolVersion(response.0.protocol_version));
        }
        Ok(response)
    }

    /// `session/prompt`: starts a turn and returns at once. Iterate the [`PromptTurn`] for the
    /// turn's updates in order, then [`PromptTurn::finish`] for the stop reason.
    pub fn prompt(&self, request: PromptRequest) -> Result<PromptTurn, Error> {
        let session = request.session_id.clone();
        let items = self.link.start_turn(request.into(), session.clone(), self.timeout)?;
        Ok(PromptTurn { items, session, link: self.link.clone(), end: None, ended: false })
    }

    /// `session/prompt`, calling `on_update` with every update of the turn in order on this
    /// thread; returns the stop reason.
    pub fn prompt_with(
        &self,
        request: PromptRequest,
        mut on_update: impl FnMut(SessionUpdate),
    ) -> Result<StopReason, Error> {
        let mut turn = self.prompt(request)?;
        for update in &mut turn {
            on_update(update);
        }
        turn.finish()
    }

    /// Cancels the session's running prompt turn (`session/cancel`): pending permission
    /// requests of the session are answered `cancelled`, and the turn ends with
    /// [`StopReason::Cancelled`] once the agent has flushed its updates.
    pub fn cancel(&self, session: &SessionId) -> Result<(), Error> {
        self.link.cancel_turn(session.clone())
    }

    /// Any client→agent request, untyped, with its own timeout (`None`: this requester's).
    pub fn request(
        &self,
        request: impl Into<ClientRequest>,
        timeout: Option<Duration>,
    ) -> Result<AgentResponse, Error> {
        self.link.ask(request.into(), timeout.or(self.timeout))
    }

    /// Calls an extension method of the agent (its name starts with `_`); this requester's
    /// timeout applies.
    pub fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error> {
        self.link.ext_method(method, params, self.timeout)
    }

    /// Sends a client→agent notification of the table (for example the unstable `mcp/message`
    /// notification). A gated one the agent did not advertise is refused here
    /// ([`Error::Send`] with `NotSupportedByPeer`). A `session/cancel` sent this way cancels its
    /// session's turn as [`cancel`](Self::cancel) does (the core runs the turn rules for
    /// it), in order behind what was sent before it.
    pub fn notify(&self, notification: impl Into<ClientNotification>) -> Result<(), Error> {
        self.link.notify(notification.into())
    }

    /// Sends an extension notification to the agent.
    pub fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        self.link.ext_notification(method, params)
    }

    /// Both sides' capabilities, once `initialize` succeeded.
    pub fn negotiated(&self) -> Option<Negotiated> {
        self.link.negotiated()
    }

    /// Why the connection closed, once it did (the agent's output ended, it was closed
    /// locally, or the agent chose an unsupported protocol version).
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.link.close_reason()
    }
}

/// A running prompt turn: an iterator over its `session/update`s in the order the agent sent
/// them; the stop reason follows with [`finish`](Self::finish).
///
/// Updates wait for you in a queue shared by the connection (`ClientOptions::max_buffered`);
/// while it is full the connection stops reading from the agent. Read each turn as it runs
/// (one thread per turn, or [`Requester::prompt_with`]).
///
/// The agent's requests of this turn's session (a permission question, a file read) reach
/// their handlers in wire order with the updates, by construction: a handler starts only once
/// this turn's reader has taken every update sent before its request (with
/// [`next_update`](Self::next_update)), or has handled it (with
/// [`next_update_then`](Self::next_update_then)), or dropped the turn.
///
/// Dropping an unfinished turn cancels it (`session/cancel`) and drops its remaining updates,
/// as acp-tokio's `PromptTurn` does.
#[derive(Debug)]
#[must_use = "a prompt turn is cancelled when dropped"]
pub struct PromptTurn {
    items: InboxReceiver<TurnItem<V1>>,
    session: SessionId,
    link: Link<V1, role::Client>,
    end: Option<Result<PromptResponse, Error>>,
    /// The turn's end was read: dropping it then cancels nothing.
    ended: bool,
}

impl Drop for PromptTurn {
    fn drop(&mut self) {
        if !self.ended {
            // Closed first, so that the driver finds this turn's reader gone.
            self.items.close();
            self.link.abandon_turns();
        }
    }
}

impl PromptTurn {
    /// The session of the turn.
    pub fn session_id(&self) -> &SessionId {
        &self.session
    }

    /// The next update, blocking until it arrives; `None` once the turn is over.
    ///
    /// The agent's requests of this turn that arrived right after the update may reach their
    /// handlers as soon as it is returned (so a reader may wait for such a handler). To handle
    /// an update before them, use [`next_update_then`](Self::next_update_then).
    pub fn next_update(&mut self) -> Option<SessionUpdate> {
        self.next_update_then(|update| update)
    }

    /// Takes the next update and runs `handle` with it before any agent request of this turn
    /// that arrived after that update reaches its handler; `None` once the turn is over. So
    /// what `handle` does (e.g. queueing the update for a screen) comes before what those
    /// handlers do, by construction. `handle` must not wait for such a handler.
    pub fn next_update_then<R>(&mut self, handle: impl FnOnce(SessionUpdate) -> R) -> Option<R> {
        if self.ended {
            return None;
        }
        match crate::turn_gate::next(&self.link, &self.items) {
            Some(Ok(notification)) => {
                Some(crate::turn_gate::handle_then_open(&self.items, notification.update, handle))
            }
            Some(Err(outcome)) => {
                let result = Error::from_outcome(outcome)
                    .and_then(|r| PromptRequest::result(r).ok_or(Error::UnexpectedResponse));
                self.end = Some(result);
                self.ended = true;
                None
            }
            None => {
                self.end = Some(Err(Error::ConnectionClosed));
                self.ended = true;
                None
            }
        }
    }

    /// Cancels the turn (see [`Requester::cancel`]); keep reading it for the last updates and
    /// the `cancelled` stop reason.
    pub fn cancel(&self) -> Result<(), Error> {
        self.link.cancel_turn(self.session.clone())
    }

    /// Waits for the end of the turn, discarding updates not read yet, and returns the
    /// agent's response.
    pub fn response(mut self) -> Result<PromptResponse, Error> {
        while self.next_update().is_some() {}
        self.end.take().unwrap_or(Err(Error::ConnectionClosed))
    }

    /// Waits for the end of the turn, discarding updates not read yet, and returns the stop
    /// reason.
    pub fn finish(self) -> Result<StopReason, Error> {
        self.response().map(|r| r.stop_reason)
    }
}

impl Iterator for PromptTurn {
    type Item = SessionUpdate;
    fn next(&mut self) -> Option<SessionUpdate> {
        self.next_update()
    }
}

/// A connection to an agent: over any byte transport ([`connect`](Self::connect)) or to a
/// child process ([`spawn`](Self::spawn)). Requests are methods of [`Requester`], which this
/// derefs to; every method takes `&self`, so one connection serves many threads.
///
/// Dropping the connection closes it like [`close`](Self::close).
#[derive(Debug)]
pub struct ClientConnection {
    requester: Requester,
    running: Running<V1, role::Client>,
}

impl Deref for ClientConnection {
    type Target = Requester;
    fn deref(&self) -> &Requester {
        &self.requester
    }
}

impl ClientConnection {
    client_connection_functions!(Client);

    fn open<C: Client>(client: C, open: Open, options: ClientOptions) -> Result<ClientConnection, Error> {
        let running = Running::open(Arc::new(ClientService(client)), open, options)?;
        Ok(ClientConnection { requester: Requester { link: running.link.clone(), timeout: None }, running })
    }
}

/// How a client connection reaches its agent.
pub(crate) enum Open {
    /// Over a byte transport.
    Io(Io),
    /// By spawning the agent, stdin and stdout piped to the connection.
    Spawn(Command),
}

/// A client connection of either version at run time: its link, its driver thread and the
/// agent process it spawned, if it did (each version's `ClientConnection` holds one). Closed
/// when dropped.
#[derive(Debug)]
pub(crate) struct Running<P: Version, R: Role> {
    pub(crate) link: Link<P, R>,
    driver: Mutex<Option<JoinHandle<Option<std::io::Error>>>>,
    child: Option<Supervisor>,
}

impl<P: Version, R: Role> Running<P, R> {
    /// Starts the connection's driver thread (see [`ClientConnection::connect`] and
    /// [`ClientConnection::spawn`]).
    pub(crate) fn open(
        service: Arc<dyn Service<P, R>>,
        open: Open,
        options: ClientOptions,
    ) -> Result<Running<P, R>, Error> {
        let (io, child) = match open {
            Open::Io(io) => (io, None),
            Open::Spawn(command) => {
                let supervision = SupervisorOptions::default()
                    .with_stderr_capacity(options.stderr_capacity)
                    .with_close_graces(options.close_grace, TERM_GRACE);
                let (child, stdin, stdout) = Supervisor::spawn(command, supervision)?;
                // The agent's pipes: on unix the driver thread reads and writes them itself.
                #[cfg(unix)]
                let io = Io::fds(stdout, stdin);
                #[cfg(not(unix))]
                let io = Io::threads(stdout, stdin);
                (io, Some(child))
            }
        };
        let options = driver_options(options);
        let (driver, link) = Driver::open(service, Start::new(&options), io, options)?;
        let driver = thread::Builder::new().name("acp-client".into()).spawn(move || driver.run())?;
        Ok(Running { link, driver: Mutex::new(Some(driver)), child })
    }

    pub(crate) fn child_id(&self) -> Option<u32> {
        self.child.as_ref().map(Supervisor::id)
    }

    pub(crate) fn stderr_tail(&self) -> String {
        self.child.as_ref().map(Supervisor::stderr_tail).unwrap_or_default()
    }

    /// See [`ClientConnection::close`].
    pub(crate) fn close(&self) -> Result<Option<ExitStatus>, Error> {
        self.link.close();
        if let Some(driver) = lock(&self.driver).take() {
            let _ = driver.join();
        }
        match &self.child {
            Some(child) => Ok(Some(child.close(|| {})?)),
            None => Ok(None),
        }
    }
}

impl<P: Version, R: Role> Drop for Running<P, R> {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// A client that answers every agent request with the defaults: permission asks `cancelled`,
/// the rest `-32601`. Enough for an agent that only streams updates.
impl Client for () {}

/// Dispatches the agent's requests to a [`Client`].
struct ClientService<C>(C);

impl<C: Client> Service<V1, role::Client> for ClientService<C> {
    fn request(&self, link: &Link<V1, role::Client>, cancel: &CancelToken, request: InboundRequest) {
        let id = request.id();
        link.answer(id, || dispatch(&self.0, request.into_call(), ClientContext::new(id, cancel.clone())));
    }

    fn notification(&self, _link: &Link<V1, role::Client>, notification: Notification) {
        dispatch_notification(&self.0, notification);
    }

    /// A `session/update` of a prompt turn read here goes to the turn's reader.
    fn route(
        &self,
        link: &Link<V1, role::Client>,
        notification: Notification,
        turn: Option<TurnStamp>,
    ) -> Option<Notification> {
        let (stamp, update) = match (turn, notification) {
            (Some(stamp), Notification::Agent(AgentNotification::SessionUpdate(update))) => (stamp, update),
            (_, notification) => return Some(notification),
        };
        match lock(&link.core.calls).get(&stamp.turn) {
            Some(Pending::Turn { sink, .. }) => {
                sink.push(TurnItem::Update(update));
                None
            }
            _ => Some(Notification::Agent(AgentNotification::SessionUpdate(update))),
        }
    }

    /// When `request` belongs to a session whose prompt turn is in flight and that turn's
    /// reader has not yet taken (or is still handling) every update so far, a gate placed in
    /// the turn after them.
    fn turn_gate(&self, link: &Link<V1, role::Client>, request: &Request) -> Option<Receiver<()>> {
        let session = request.session_id()?;
        let calls = lock(&link.core.calls);
        let sink = calls.values().find_map(|pending| match pending {
            Pending::Turn { session: s, sink } if s == session => Some(sink),
            _ => None,
        })?;
        if sink.settled() {
            // The reader has taken every earlier update: nothing to wait for.
            return None;
        }
        let (open, gate) = mpsc::sync_channel(1);
        sink.push(TurnItem::Gate(open)).then_some(gate)
    }
}

fn driver_options(options: ClientOptions) -> DriverOptions {
    DriverOptions {
        config: options.config,
        max_handlers: options.max_handlers,
        max_buffered: options.max_buffered,
        flush_timeout: options.flush_timeout,
        trace_payloads: options.trace_payloads,
    }
}
