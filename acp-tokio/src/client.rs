//! The client side: the [`Client`] and [`LocalClient`] handler traits (what the agent asks of the
//! client) and [`ClientConnection`], the handle that drives an agent.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use acp_proto::ext::{ExtNotification, ExtRequest, ExtResponse};
use acp_proto::methods::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest, ClientResponse,
};
use acp_proto::types::*;
use acp_proto::{CloseReason, Method, Negotiated, Notification, Request, Response, RpcError, Side};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::context::{ClientContext, HandlerContext};
use crate::driver::{Driver, Handlers};
use crate::handle::{
    Command, Done, DriverStats, Handle, RequestCommand, TurnSink, catch_unwind, not_found, run_handler,
};
use crate::io::{ReadBytes, TokioIo, WriteBytes};
use crate::process::ProcessControl;
use crate::runtime::{Runtime, Tokio};
use crate::sync::{QueueReceiver, lock, queue};
use crate::turn::PromptTurn;
use crate::{ClientOptions, Error};

fn client_result(response: impl Into<ClientResponse>) -> Response {
    Response::Client(response.into())
}

macro_rules! client_trait {
    (
        $(#[$attr:meta])*
        trait $Trait:ident: [$($bounds:tt)*], futures: [$($send:tt)*],
        handlers: $Handlers:ident($Ptr:ident), spawn: $spawn:ident, dispatch: $dispatch:ident;
    ) => {
        $(#[$attr])*
        pub trait $Trait: $($bounds)* 'static {
            /// `session/request_permission`: ask the user. The answer must name one of the offered
            /// options (or be `cancelled`); when the turn is cancelled meanwhile the core has
            /// already answered `cancelled` and the context's token fires. Default: `cancelled`.
            fn request_permission(&self, request: RequestPermissionRequest, cx: ClientContext)
                -> impl Future<Output = Result<RequestPermissionResponse, RpcError>> $($send)* {
                let _ = (request, cx);
                std::future::ready(Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled)))
            }

            /// `fs/read_text_file` (advertise `fs.readTextFile`). Default: `-32601`.
            fn read_text_file(&self, request: ReadTextFileRequest, cx: ClientContext)
                -> impl Future<Output = Result<ReadTextFileResponse, RpcError>> $($send)* {
                let _ = (request, cx);
                not_found(Method::ReadTextFile)
            }

            /// `fs/write_text_file` (advertise `fs.writeTextFile`). Default: `-32601`.
            fn write_text_file(&self, request: WriteTextFileRequest, cx: ClientContext)
                -> impl Future<Output = Result<WriteTextFileResponse, RpcError>> $($send)* {
                let _ = (request, cx);
                not_found(Method::WriteTextFile)
            }

            /// `terminal/create` (advertise `terminal`). Default: `-32601`.
            fn create_terminal(&self, request: CreateTerminalRequest, cx: ClientContext)
                -> impl Future<Output = Result<CreateTerminalResponse, RpcError>> $($send)* {
                let _ = (request, cx);
                not_found(Method::CreateTerminal)
            }

            /// `terminal/output`. Default: `-32601`.
            fn terminal_output(&self, request: TerminalOutputRequest, cx: ClientContext)
                -> impl Future<Output = Result<TerminalOutputResponse, RpcError>> $($send)* {
                let _ = (request, cx);
                not_found(Method::TerminalOutput)
            }

            /// `terminal/release`. Default: `-32601`.
            fn release_terminal(&self, request: ReleaseTerminalRequest, cx: ClientContext)
                -> impl Future<Output = Result<ReleaseTerminalResponse, RpcError>> $($send)* {
                let _ = (request, cx);
                not_found(Method::ReleaseTerminal)
            }

            /// `terminal/wait_for_exit`. Default: `-32601`.
            fn wait_for_terminal_exit(&self, request: WaitForTerminalExitRequest, cx: ClientContext)
                -> impl Future<Output = Result<WaitForTerminalExitResponse, RpcError>> $($send)* {
                let _ = (request, cx);
                not_found(Method::WaitForTerminalExit)
            }

            /// `terminal/kill`. Default: `-32601`.
            fn kill_terminal(&self, request: KillTerminalRequest, cx: ClientContext)
                -> impl Future<Output = Result<KillTerminalResponse, RpcError>> $($send)* {
                let _ = (request, cx);
                not_found(Method::KillTerminal)
            }

            /// An extension request (`_`-prefixed method). Default: `-32601`.
            fn ext_method(&self, method: &str, params: Value, cx: ClientContext)
                -> impl Future<Output = Result<Value, RpcError>> $($send)* {
                let _ = (params, cx);
                std::future::ready(Err(RpcError::method_not_found(method)))
            }

            /// An extension notification. Notifications are handled one at a time, in order.
            /// Default: ignored.
            fn ext_notification(&self, method: &str, params: Value) -> impl Future<Output = ()> $($send)* {
                let _ = (method, params);
                std::future::ready(())
            }

            /// A `session/update` that arrived outside a prompt turn of this client (for example
            /// the history of `session/load`); inside a turn updates go to its [`PromptTurn`].
            /// Handled one at a time, in order (a slow handler holds the connection's input
            /// back once its queue is full). Default: ignored.
            fn session_update(&self, notification: SessionNotification) -> impl Future<Output = ()> $($send)* {
                let _ = notification;
                std::future::ready(())
            }
        }

        /// Calls the handler method for `request`.
        async fn $dispatch<C: $Trait>(client: &C, request: Request, cx: ClientContext) -> Result<Response, RpcError> {
            let request = match request {
                Request::Agent(request) => request,
                other => return Err(RpcError::method_not_found(other.wire())),
            };
            Ok(match request {
                AgentRequest::RequestPermission(r) => client_result(client.request_permission(r, cx).await?),
                AgentRequest::ReadTextFile(r) => client_result(client.read_text_file(r, cx).await?),
                AgentRequest::WriteTextFile(r) => client_result(client.write_text_file(r, cx).await?),
                AgentRequest::CreateTerminal(r) => client_result(client.create_terminal(r, cx).await?),
                AgentRequest::TerminalOutput(r) => client_result(client.terminal_output(r, cx).await?),
                AgentRequest::ReleaseTerminal(r) => client_result(client.release_terminal(r, cx).await?),
                AgentRequest::WaitForTerminalExit(r) => client_result(client.wait_for_terminal_exit(r, cx).await?),
                AgentRequest::KillTerminal(r) => client_result(client.kill_terminal(r, cx).await?),
                AgentRequest::Ext(e) => {
                    client_result(ClientResponse::Ext(ExtResponse(client.ext_method(&e.method, e.params, cx).await?)))
                }
                other => return Err(RpcError::method_not_found(other.wire())),
            })
        }

        /// Runs a client's handlers for the driver.
        pub(crate) struct $Handlers<C>(pub(crate) $Ptr<C>);

        impl<C: $Trait> Handlers for $Handlers<C> {
            fn spawn_request<Rt: Runtime>(&self, rt: &Rt, request: Request, cx: HandlerContext, done: Done) {
                let client = $Ptr::clone(&self.0);
                let cx = ClientContext::new(cx);
                rt.$spawn(run_handler(done, async move { $dispatch(&*client, request, cx).await }));
            }

            fn spawn_notifications<Rt: Runtime>(&self, rt: &Rt, mut queue: QueueReceiver<Notification>) {
                let client = $Ptr::clone(&self.0);
                rt.$spawn(async move {
                    while let Some(notification) = queue.pop().await {
                        // A panicking notification handler loses that notification only.
                        match notification {
                            Notification::Agent(AgentNotification::SessionUpdate(n)) => {
                                let _ = catch_unwind(client.session_update(n)).await;
                            }
                            Notification::Agent(AgentNotification::Ext(e)) => {
                                let _ = catch_unwind(client.ext_notification(&e.method, e.params)).await;
                            }
                            _ => {}
                        }
                    }
                });
            }
        }
    };
}

client_trait! {
    /// What an ACP client answers to its agent, with `Send` handler futures (run as spawned
    /// tasks). Every method has a default: `-32601`, except
    /// [`request_permission`](Client::request_permission), which answers `cancelled`, and the
    /// notifications, which are ignored. `()` implements it with all the defaults.
    ///
    /// Only advertise (in your `initialize` request's capabilities) what you implement: the core
    /// refuses the methods you did not advertise with `-32601` before they reach you.
    trait Client: [Send + Sync +], futures: [+ Send],
    handlers: ClientHandlers(Arc), spawn: spawn, dispatch: dispatch_client;
}

client_trait! {
    /// [`Client`] for handlers whose futures need not be `Send`: run as local tasks, with
    /// [`ClientConnection::connect_local`] inside a `tokio::task::LocalSet`.
    trait LocalClient: [], futures: [],
    handlers: LocalClientHandlers(Rc), spawn: spawn_local, dispatch: dispatch_local_client;
}

impl Client for () {}
impl LocalClient for () {}

/// A connection to an agent: the client's handle. Cheap to clone; every clone drives the same
/// connection. The connection closes when [`close`](Self::close) is called or every clone (and
/// every [`PromptTurn`]) is dropped.
#[derive(Clone)]
pub struct ClientConnection {
    handle: Handle,
    timeout: Option<Duration>,
    turn_buffer: usize,
    process: Option<Arc<dyn ProcessControl>>,
}

macro_rules! typed_requests {
    ($( $(#[$doc:meta])* $name:ident($Req:ident) -> $Resp:ident; )*) => {
        $(
            $(#[$doc])*
            pub async fn $name(&self, request: $Req) -> Result<$Resp, Error> {
                self.handle.request_typed(request, self.timeout).await
            }
        )*
    };
}

impl ClientConnection {
    /// Connects to an agent over `reader` (the agent's output) and `writer` (its input); the
    /// driver runs as a `tokio::spawn`ed task. Call [`initialize`](Self::initialize) first.
    pub fn connect<C: Client>(
        client: C,
        reader: impl tokio::io::AsyncRead + Send + 'static,
        writer: impl tokio::io::AsyncWrite + Send + 'static,
        options: ClientOptions,
    ) -> ClientConnection {
        let (driver, conn) =
            Self::build(Tokio, ClientHandlers(Arc::new(client)), TokioIo::new(reader), TokioIo::new(writer), &options);
        Tokio.spawn(async move {
            let _ = driver.await;
        });
        conn
    }

    /// [`connect`](Self::connect) for a [`LocalClient`]: must be called inside a
    /// `tokio::task::LocalSet`, where the driver and the handlers run.
    pub fn connect_local<C: LocalClient>(
        client: C,
        reader: impl tokio::io::AsyncRead + 'static,
        writer: impl tokio::io::AsyncWrite + 'static,
        options: ClientOptions,
    ) -> ClientConnection {
        let (driver, conn) = Self::build(
            Tokio,
            LocalClientHandlers(Rc::new(client)),
            TokioIo::new(reader),
            TokioIo::new(writer),
            &options,
        );
        Tokio.spawn_local(async move {
            let _ = driver.await;
        });
        conn
    }

    /// Starts `command` as the agent: its stdin and stdout carry the protocol, its stderr is
    /// kept in a bounded buffer ([`stderr_tail`](Self::stderr_tail)); on Unix it gets a process
    /// group of its own. See [`close`](Self::close) for how it ends.
    pub fn spawn<C: Client>(
        client: C,
        command: std::process::Command,
        options: ClientOptions,
    ) -> Result<ClientConnection, Error> {
        let child = crate::process::spawn_tokio(command)?;
        let (driver, mut conn) = Self::build(
            Tokio,
            ClientHandlers(Arc::new(client)),
            TokioIo::new(child.stdout),
            TokioIo::new(child.stdin),
            &options,
        );
        Tokio.spawn(async move {
            let _ = driver.await;
        });
        let (pid, stderr) = (child.child.id(), TokioIo::new(child.stderr));
        let shared = conn.handle.shared.clone();
        conn.process = Some(crate::process::supervise(Tokio, child.child, pid, stderr, shared, &options));
        Ok(conn)
    }

    /// Builds the driver (not yet running) and the handle.
    pub(crate) fn build<Rt: Runtime, H: Handlers, Rd: ReadBytes, Wr: WriteBytes>(
        rt: Rt,
        handlers: H,
        reader: Rd,
        writer: Wr,
        options: &ClientOptions,
    ) -> (Driver<Rt, H, Rd, Wr>, ClientConnection) {
        let (driver, handle) = Driver::new(rt, Side::Client, handlers, reader, writer, options.driver(), true);
        let handle = handle.unwrap_or_else(|| unreachable!("a client driver always has an application handle"));
        (driver, ClientConnection { handle, timeout: None, turn_buffer: options.turn_buffer, process: None })
    }

    #[cfg(feature = "async-std")]
    pub(crate) fn set_process(&mut self, process: Arc<dyn ProcessControl>) {
        self.process = Some(process);
    }

    #[cfg(feature = "async-std")]
    pub(crate) fn shared(&self) -> &Arc<crate::handle::Shared> {
        &self.handle.shared
    }

    /// A clone whose requests (typed methods and prompts) time out after `timeout` instead of
    /// [`Config::request_timeout`](acp_proto::Config::request_timeout). A timed-out request
    /// resolves to [`Error::TimedOut`] and the agent gets a `$/cancel_request`.
    pub fn with_timeout(&self, timeout: Duration) -> ClientConnection {
        ClientConnection { timeout: Some(timeout), ..self.clone() }
    }

    /// Sends any client request and waits for the agent's result. `timeout` (or the one set
    /// with [`with_timeout`](Self::with_timeout)) bounds the wait. Dropping the future before
    /// it resolves cancels the request: the agent gets a `$/cancel_request`. Use
    /// [`prompt`](Self::prompt) for prompts: here a prompt's updates are dropped.
    pub async fn request(
        &self,
        request: impl Into<ClientRequest>,
        timeout: Option<Duration>,
    ) -> Result<AgentResponse, Error> {
        match self.handle.request(Request::Client(request.into()), timeout.or(self.timeout)).await? {
            Response::Agent(response) => Ok(response),
            _ => Err(Error::UnexpectedResponse),
        }
    }

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

    typed_requests! {
        /// `authenticate`.
        authenticate(AuthenticateRequest) -> AuthenticateResponse;
        /// `session/new`.
        new_session(NewSessionRequest) -> NewSessionResponse;
        /// `session/load` (the agent must advertise `loadSession`); the replayed history goes
        /// to [`Client::session_update`].
        load_session(LoadSessionRequest) -> LoadSessionResponse;
        /// `session/set_mode`.
        set_session_mode(SetSessionModeRequest) -> SetSessionModeResponse;
        /// `session/set_config_option`.
        set_session_config_option(SetSessionConfigOptionRequest) -> SetSessionConfigOptionResponse;
        /// `session/list` (needs `sessionCapabilities.list`).
        list_sessions(ListSessionsRequest) -> ListSessionsResponse;
        /// `session/delete` (needs `sessionCapabilities.delete`).
        delete_session(DeleteSessionRequest) -> DeleteSessionResponse;
        /// `session/resume` (needs `sessionCapabilities.resume`).
        resume_session(ResumeSessionRequest) -> ResumeSessionResponse;
        /// `session/close` (needs `sessionCapabilities.close`).
        close_session(CloseSessionRequest) -> CloseSessionResponse;
        /// `logout` (needs `auth.logout`).
        logout(LogoutRequest) -> LogoutResponse;
    }

    /// Starts a prompt turn. Resolves once the request went out (or was refused, e.g. while a
    /// turn of the same session still runs); the returned [`PromptTurn`] yields the turn's
    /// updates in order and then its stop reason.
    pub async fn prompt(&self, request: PromptRequest) -> Result<PromptTurn, Error> {
        let token = self.handle.token();
        let (updates_tx, updates) = queue(self.turn_buffer);
        let (accepted_tx, accepted) = oneshot::channel();
        let (reply, outcome) = oneshot::channel();
        let session = request.session_id.clone();
        let turn = TurnSink { session: session.clone(), updates: updates_tx, accepted: accepted_tx };
        self.handle.send(Command::Request(Box::new(RequestCommand {
            token,
            request: Request::Client(ClientRequest::Prompt(request)),
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

    /// Cancels the running turn of `session_id` (`session/cancel`): pending permission requests
    /// of that session are answered `cancelled`, and the turn ends with
    /// [`StopReason::Cancelled`].
    pub async fn cancel(&self, session_id: &SessionId) -> Result<(), Error> {
        self.handle.cancel_turn(session_id.clone()).await
    }

    /// An extension request.
    pub async fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error> {
        match self.request(ClientRequest::Ext(ExtRequest::new(method, params)), None).await? {
            AgentResponse::Ext(ExtResponse(value)) => Ok(value),
            _ => Err(Error::UnexpectedResponse),
        }
    }

    /// An extension notification (waits while the outbound budget is full).
    pub async fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        let notification = ClientNotification::Ext(ExtNotification::new(method, params));
        self.handle.notify(Box::new(Notification::Client(notification))).await
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

    /// The agent process's id, for a connection made with [`spawn`](Self::spawn).
    pub fn child_id(&self) -> Option<u32> {
        self.process.as_ref().and_then(|p| p.pid())
    }

    /// The most recent bytes of the agent process's stderr (lossily decoded; empty unless the
    /// connection was made with [`spawn`](Self::spawn)).
    pub fn stderr_tail(&self) -> String {
        self.process.as_ref().map(|p| String::from_utf8_lossy(&p.stderr_tail()).into_owned()).unwrap_or_default()
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

impl std::fmt::Debug for ClientConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConnection")
            .field("timeout", &self.timeout)
            .field("child_id", &self.child_id())
            .field("close_reason", &self.close_reason())
            .finish()
    }
}
