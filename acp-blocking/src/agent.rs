//! The agent side: the [`Agent`] trait, the contexts its handlers get, and [`serve`].

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use acp_proto::role;
use acp_proto::types::*;
use acp_proto::{AgentNotification, AgentRequest, ClientResponse, Config, InboundId, InboundRequest, Notification, V1};
use serde_json::Value;

use crate::driver::{Driver, DriverOptions, Link, Service, Start, Version};
use crate::error::Error;
use crate::sync::{CancelToken, request_context_methods};
use crate::transport::Io;

pub use crate::generated::v1_agent::Agent;
use crate::generated::v1_agent::{dispatch, dispatch_notification};

/// What every agent request handler gets: the request's cancellation signal and a way to call
/// the client.
#[derive(Debug)]
pub struct RequestContext {
    link: Link<V1, role::Agent>,
    id: InboundId,
    cancel: CancelToken,
}

impl RequestContext {
    request_context_methods!(
        "by `$/cancel_request`, by `session/cancel` of its turn, at the end of the client's input \
         (the answer still goes out), or because the connection closed"
    );

    /// The capabilities both sides advertised.
    pub fn negotiated(&self) -> Option<acp_proto::Negotiated> {
        self.link.negotiated()
    }

    /// Sends any agent→client request and blocks until its answer, or until `timeout` (or the
    /// config's `request_timeout` when `None`). A method the client did not advertise is
    /// refused locally ([`Error::Send`] with `NotSupportedByPeer`) and nothing is sent.
    pub fn request(
        &self,
        request: impl Into<AgentRequest>,
        timeout: Option<Duration>,
    ) -> Result<ClientResponse, Error> {
        self.link.ask(request.into(), timeout)
    }

    /// Sends an agent→client notification, blocking while the outbound budget is full.
    pub fn notify(&self, notification: impl Into<AgentNotification>) -> Result<(), Error> {
        self.link.notify(notification.into())
    }

    /// Sends a `session/update` for `session`, blocking while the outbound budget is full. The
    /// core refuses updates for a session it never saw announced.
    pub fn send_session_update(&self, session: impl Into<SessionId>, update: SessionUpdate) -> Result<(), Error> {
        self.notify(SessionNotification::new(session, update))
    }

    /// Asks the user for input through the client (`elicitation/create`), in any mode and
    /// scope. A form needs the client's `elicitation.form`, a URL `elicitation.url`: otherwise
    /// it is refused locally ([`Error::Send`]) and nothing is sent.
    pub fn create_elicitation(&self, request: CreateElicitationRequest) -> Result<CreateElicitationResponse, Error> {
        self.link.call_typed(request, None)
    }

    /// Tells the client that a URL elicitation has completed (`elicitation/complete`); needs
    /// the client's `elicitation.url`, otherwise refused locally.
    pub fn complete_elicitation(&self, elicitation_id: impl Into<ElicitationId>) -> Result<(), Error> {
        self.notify(CompleteElicitationNotification::new(elicitation_id))
    }

    /// Calls an extension method on the client (its name starts with `_`); `timeout` bounds
    /// the wait as in [`request`](Self::request).
    pub fn ext_method(&self, method: &str, params: Value, timeout: Option<Duration>) -> Result<Value, Error> {
        self.link.ext_method(method, params, timeout)
    }

    /// Sends an extension notification to the client.
    pub fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        self.link.ext_notification(method, params)
    }
}

/// What a `session/prompt` handler gets: the [`RequestContext`] (it derefs to it) plus the
/// turn's session, and shortcuts for the client methods a turn uses.
#[derive(Debug)]
pub struct PromptContext {
    cx: RequestContext,
    session: SessionId,
}

impl Deref for PromptContext {
    type Target = RequestContext;
    fn deref(&self) -> &RequestContext {
        &self.cx
    }
}

impl PromptContext {
    pub(crate) fn new(cx: RequestContext, session: SessionId) -> PromptContext {
        PromptContext { cx, session }
    }

    /// The session of this turn.
    pub fn session_id(&self) -> &SessionId {
        &self.session
    }

    /// Streams a `session/update` of this turn. Blocks while the core's outbound byte budget
    /// is used up (the client reads slower than the agent writes), so memory stays bounded.
    pub fn send_update(&self, update: SessionUpdate) -> Result<(), Error> {
        self.cx.send_session_update(self.session.clone(), update)
    }

    /// Shortcut: an `agent_message_chunk` with plain text.
    pub fn send_text(&self, text: impl Into<String>) -> Result<(), Error> {
        self.send_update(SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(text))))
    }

    /// Streams a `notice` for the user. Only for a client that advertised `session.notices`:
    /// otherwise refused locally ([`Error::Send`] with `NotSupportedByPeer`), nothing sent.
    pub fn send_notice(&self, severity: NoticeSeverity, title: impl Into<String>) -> Result<(), Error> {
        self.send_update(SessionUpdate::Notice(Notice::new(severity, title)))
    }

    /// Streams a `plan_update` (one ID-addressed plan, replaced whole). Only for a client that
    /// advertised `plan`: otherwise refused locally.
    pub fn send_plan_update(&self, plan: PlanUpdate) -> Result<(), Error> {
        self.send_update(SessionUpdate::PlanUpdate(plan))
    }

    /// Streams a `plan_removed`. Only for a client that advertised `plan`.
    pub fn send_plan_removed(&self, plan_id: impl Into<PlanId>) -> Result<(), Error> {
        self.send_update(SessionUpdate::PlanRemoved(PlanRemoved::new(plan_id)))
    }

    /// Asks the user to fill in a form (`elicitation/create`, form mode, tied to this turn's
    /// session); needs the client's `elicitation.form`, otherwise refused locally.
    pub fn elicit(
        &self,
        message: impl Into<String>,
        schema: ElicitationSchema,
    ) -> Result<CreateElicitationResponse, Error> {
        self.create_elicitation(CreateElicitationRequest::form(message, self.session.clone(), schema))
    }

    /// Sends the user to `url` (`elicitation/create`, URL mode, tied to this turn's session);
    /// needs the client's `elicitation.url`. Finish it with
    /// [`complete_elicitation`](RequestContext::complete_elicitation).
    pub fn elicit_url(
        &self,
        message: impl Into<String>,
        elicitation_id: impl Into<ElicitationId>,
        url: impl Into<String>,
    ) -> Result<CreateElicitationResponse, Error> {
        self.create_elicitation(CreateElicitationRequest::url(message, self.session.clone(), elicitation_id, url))
    }

    /// Asks the user for permission. A turn cancelled meanwhile answers
    /// [`RequestPermissionOutcome::Cancelled`].
    pub fn request_permission(
        &self,
        tool_call: ToolCallUpdate,
        options: Vec<PermissionOption>,
    ) -> Result<RequestPermissionOutcome, Error> {
        let request = RequestPermissionRequest::new(self.session.clone(), tool_call, options);
        match self.cx.link.call_typed(request, None) {
            Ok(response) => Ok(response.outcome),
            Err(Error::Cancelled) => Ok(RequestPermissionOutcome::Cancelled),
            Err(e) => Err(e),
        }
    }

    /// `fs/read_text_file` (needs the client's `fs.readTextFile`): the file's text, from the
    /// 1-based `line` and at most `limit` lines when given.
    pub fn read_text_file(
        &self,
        path: impl Into<String>,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, Error> {
        let mut request = ReadTextFileRequest::new(self.session.clone(), path);
        request.line = line;
        request.limit = limit;
        Ok(self.cx.link.call_typed(request, None)?.content)
    }

    /// `fs/write_text_file` (needs the client's `fs.writeTextFile`).
    pub fn write_text_file(&self, path: impl Into<String>, content: impl Into<String>) -> Result<(), Error> {
        self.cx.link.call_typed(WriteTextFileRequest::new(self.session.clone(), path, content), None).map(drop)
    }

    /// `terminal/create` (needs the client's `terminal`): runs `command` with `args`.
    pub fn create_terminal(&self, command: impl Into<String>, args: Vec<String>) -> Result<TerminalId, Error> {
        let mut request = CreateTerminalRequest::new(self.session.clone(), command);
        request.args = Some(args);
        Ok(self.cx.link.call_typed(request, None)?.terminal_id)
    }

    /// `terminal/output`: the output so far.
    pub fn terminal_output(&self, terminal: &TerminalId) -> Result<TerminalOutputResponse, Error> {
        self.cx.link.call_typed(TerminalOutputRequest::new(self.session.clone(), terminal.clone()), None)
    }

    /// `terminal/wait_for_exit`: blocks until the command exits.
    pub fn wait_for_terminal_exit(&self, terminal: &TerminalId) -> Result<WaitForTerminalExitResponse, Error> {
        self.cx.link.call_typed(WaitForTerminalExitRequest::new(self.session.clone(), terminal.clone()), None)
    }

    /// `terminal/kill`: kills the command, keeping the terminal.
    pub fn kill_terminal(&self, terminal: &TerminalId) -> Result<(), Error> {
        self.cx.link.call_typed(KillTerminalRequest::new(self.session.clone(), terminal.clone()), None).map(drop)
    }

    /// `terminal/release`: kills the command if needed and frees the terminal.
    pub fn release_terminal(&self, terminal: &TerminalId) -> Result<(), Error> {
        self.cx.link.call_typed(ReleaseTerminalRequest::new(self.session.clone(), terminal.clone()), None).map(drop)
    }
}

/// How [`serve_with`] runs an agent connection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentOptions {
    /// The core's limits and timings.
    pub config: Config,
    /// Request handlers running at once; more wait in a queue. Default 16.
    pub max_handlers: usize,
    /// Notifications queued for the ordered notification thread before the connection stops
    /// reading. Default 4096.
    pub max_buffered: usize,
    /// How long the last frames may take to be written once the connection closed. Default
    /// 500 ms.
    pub flush_timeout: Duration,
    /// With the `tracing` feature: put payloads into the frame and dispatch events. Default off.
    pub trace_payloads: bool,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            config: Config::default(),
            max_handlers: 16,
            max_buffered: 4096,
            flush_timeout: Duration::from_millis(500),
            trace_payloads: false,
        }
    }
}

serve_functions!(Agent);

/// Serves one connection of a v1 `agent` over `io`.
fn serve_io<A: Agent>(agent: A, io: Io, options: AgentOptions) -> Result<(), Error> {
    let options = driver_options(options);
    run(Arc::new(AgentService(agent)), Start::new(&options), io, options)
}

/// Runs an agent connection of either version (`start`) over `io` on this thread until it
/// closed and its last frames were written.
pub(crate) fn run<P: Version, R: acp_proto::role::Role>(
    service: Arc<dyn Service<P, R>>,
    start: Start<P, R>,
    io: Io,
    options: DriverOptions,
) -> Result<(), Error> {
    let (driver, _link) = Driver::open(service, start, io, options)?;
    match driver.run() {
        Some(e) => Err(Error::Io(e)),
        None => Ok(()),
    }
}

pub(crate) fn driver_options(options: AgentOptions) -> DriverOptions {
    DriverOptions {
        config: options.config,
        max_handlers: options.max_handlers,
        max_buffered: options.max_buffered,
        flush_timeout: options.flush_timeout,
        trace_payloads: options.trace_payloads,
    }
}

/// The driver's service of a v1 `agent` (for `v2::serve_negotiated`).
#[cfg(feature = "unstable_protocol_v2")]
pub(crate) fn service<A: Agent>(agent: A) -> Arc<dyn Service<V1, role::Agent>> {
    Arc::new(AgentService(agent))
}

/// Dispatches the client's requests to an [`Agent`].
struct AgentService<A>(A);

impl<A: Agent> Service<V1, role::Agent> for AgentService<A> {
    fn request(&self, link: &Link<V1, role::Agent>, cancel: &CancelToken, request: InboundRequest) {
        let id = request.id();
        let cx = RequestContext { link: link.clone(), id, cancel: cancel.clone() };
        link.answer(id, || dispatch(&self.0, request.into_call(), cx));
    }

    fn notification(&self, _link: &Link<V1, role::Agent>, notification: Notification) {
        dispatch_notification(&self.0, notification);
    }
}
