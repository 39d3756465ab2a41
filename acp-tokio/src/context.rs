//! What a handler gets besides its params: its request's cancellation signal and, agent side, a
//! way back to the client.

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use acp_proto::methods::{AgentNotification, AgentRequest, ClientResponse};
use acp_proto::role::{self, Role};
use acp_proto::types::{
    CompleteElicitationNotification, ContentBlock, ContentChunk, CreateElicitationRequest, CreateElicitationResponse,
    CreateTerminalRequest, ElicitationId, ElicitationSchema, KillTerminalRequest, Notice, NoticeSeverity,
    PermissionOption, PlanId, PlanRemoved, PlanUpdate, ReadTextFileRequest, ReleaseTerminalRequest,
    RequestPermissionOutcome, RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate, TerminalId,
    TerminalOutputRequest, TerminalOutputResponse, ToolCallUpdate, WaitForTerminalExitRequest,
    WaitForTerminalExitResponse, WriteTextFileRequest,
};
use acp_proto::{InboundId, Negotiated};
use serde_json::Value;

use crate::Error;
use crate::handle::{DriverStats, Handle, Shared};
use crate::sync::CancellationToken;
use crate::version::Version;
use acp_proto::protocol::V1;

/// What every handler context holds: the driver's handle, the request's id and its token.
pub(crate) struct HandlerContext<P: Version, R: Role> {
    pub(crate) handle: Handle<P, R>,
    pub(crate) id: InboundId,
    pub(crate) cancel: CancellationToken,
}

impl<P: Version, R: Role> Clone for HandlerContext<P, R> {
    fn clone(&self) -> Self {
        HandlerContext { handle: self.handle.clone(), id: self.id, cancel: self.cancel.clone() }
    }
}

impl<P: Version, R: Role> HandlerContext<P, R> {
    /// What every handle of the connection shares.
    pub(crate) fn shared(&self) -> &Shared {
        &self.handle.shared
    }
}

/// What a client handler's context holds: the request's id and token, and what the
/// connection's handles share (a client's handlers send nothing: one type serves both versions).
#[derive(Clone)]
struct ClientInner {
    id: InboundId,
    cancel: CancellationToken,
    shared: Arc<Shared>,
}

impl ClientInner {
    fn shared(&self) -> &Shared {
        &self.shared
    }
}

macro_rules! common_context_methods {
    () => {
        /// The core's handle of the request being handled.
        pub fn id(&self) -> InboundId {
            self.inner.id
        }

        /// Whether the request was cancelled (see [`CancellationToken`]).
        pub fn is_cancelled(&self) -> bool {
            self.inner.cancel.is_cancelled()
        }

        /// Completes once the request is cancelled.
        pub async fn cancelled(&self) {
            self.inner.cancel.cancelled().await;
        }

        /// The request's cancellation signal.
        pub fn cancellation(&self) -> &CancellationToken {
            &self.inner.cancel
        }

        /// Both sides' capabilities, once the handshake has completed.
        pub fn negotiated(&self) -> Option<&Negotiated> {
            self.inner.shared().negotiated.get()
        }

        /// The connection's counters.
        pub fn stats(&self) -> DriverStats {
            *crate::sync::lock(&self.inner.shared().stats)
        }
    };
}

#[cfg(feature = "unstable_protocol_v2")]
pub(crate) use common_context_methods;

/// The context of an agent's request handler: the request's [`CancellationToken`] and a way
/// to send requests and notifications to the client.
///
/// Cheap to clone, and usable after the handler returned (for example from a task it spawned)
/// for as long as the connection lives.
#[derive(Clone)]
pub struct RequestContext {
    inner: HandlerContext<V1, role::Agent>,
}

impl RequestContext {
    pub(crate) fn new(inner: HandlerContext<V1, role::Agent>) -> RequestContext {
        RequestContext { inner }
    }

    common_context_methods!();

    /// Sends any agent→client request and waits for its result. `timeout` bounds the wait
    /// (default: [`Config::request_timeout`](acp_proto::Config::request_timeout)); dropping the
    /// future cancels the request (`$/cancel_request`). A method the client did not advertise
    /// is refused locally ([`Error::Send`] with
    /// [`SendError::NotSupportedByPeer`](acp_proto::SendError::NotSupportedByPeer)) and nothing
    /// is sent.
    pub async fn request(
        &self,
        request: impl Into<AgentRequest>,
        timeout: Option<Duration>,
    ) -> Result<ClientResponse, Error> {
        self.inner.handle.ask(request.into(), timeout).await
    }

    /// Sends an agent→client notification, waiting while the outbound budget is full.
    pub async fn notify(&self, notification: impl Into<AgentNotification>) -> Result<(), Error> {
        self.inner.handle.notify(Box::new(notification.into())).await
    }

    /// Sends a `session/update` for any announced session (for example the history replayed by
    /// `session/load`), waiting while the outbound budget is full.
    pub async fn send_session_update(
        &self,
        session_id: impl Into<SessionId>,
        update: SessionUpdate,
    ) -> Result<(), Error> {
        self.notify(SessionNotification::new(session_id, update)).await
    }

    /// Asks the user for input through the client (`elicitation/create`), in any mode and
    /// scope. A form needs the client's `elicitation.form`, a URL `elicitation.url`: otherwise
    /// it is refused locally ([`Error::Send`]) and nothing is sent.
    pub async fn create_elicitation(
        &self,
        request: CreateElicitationRequest,
    ) -> Result<CreateElicitationResponse, Error> {
        self.inner.handle.request_typed(request, None).await
    }

    /// Tells the client that a URL elicitation has completed (`elicitation/complete`); needs
    /// the client's `elicitation.url`, otherwise refused locally.
    pub async fn complete_elicitation(&self, elicitation_id: impl Into<ElicitationId>) -> Result<(), Error> {
        self.notify(CompleteElicitationNotification::new(elicitation_id)).await
    }

    /// Calls an extension method on the client (its name starts with `_`); `timeout` bounds
    /// the wait as in [`request`](Self::request).
    pub async fn ext_method(&self, method: &str, params: Value, timeout: Option<Duration>) -> Result<Value, Error> {
        self.inner.handle.ext_method(method, params, timeout).await
    }

    /// Sends an extension notification to the client (waits while the outbound budget is full).
    pub async fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        self.inner.handle.ext_notification(method, params).await
    }
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext").field("id", &self.inner.id).field("cancel", &self.inner.cancel).finish()
    }
}

/// The context of a client's request handler: the request's [`CancellationToken`] (it fires
/// when the agent sends `$/cancel_request`, when the application cancels the turn a permission
/// request belongs to, at the end of the agent's output (the answer still goes out) and when
/// the connection closes).
///
/// The same type serves both versions' handlers (`Client` and `v2::Client`).
#[derive(Clone)]
pub struct ClientContext {
    inner: ClientInner,
}

impl ClientContext {
    pub(crate) fn new<P: Version>(cx: HandlerContext<P, role::Client>) -> ClientContext {
        ClientContext { inner: ClientInner { id: cx.id, cancel: cx.cancel, shared: cx.handle.shared } }
    }

    common_context_methods!();
}

impl std::fmt::Debug for ClientContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientContext").field("id", &self.inner.id).field("cancel", &self.inner.cancel).finish()
    }
}

/// The context of a `session/prompt` handler: a [`RequestContext`] (it derefs to one) plus the
/// turn's session, with typed helpers for what an agent does during a turn.
///
/// The requests the client did not advertise (`fs/*`, `terminal/*`) are refused locally with
/// [`Error::Send`]\([`SendError::NotSupportedByPeer`](acp_proto::SendError::NotSupportedByPeer)):
/// nothing is sent.
#[derive(Clone, Debug)]
pub struct PromptContext {
    cx: RequestContext,
    session_id: SessionId,
}

impl Deref for PromptContext {
    type Target = RequestContext;

    fn deref(&self) -> &RequestContext {
        &self.cx
    }
}

impl PromptContext {
    pub(crate) fn new(cx: RequestContext, session_id: SessionId) -> PromptContext {
        PromptContext { cx, session_id }
    }

    /// The session of this turn.
    pub fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    /// Streams one update of this turn to the client; waits while the outbound budget is full
    /// (so a fast producer cannot grow memory), and resolves once the core queued it.
    pub async fn send_update(&self, update: SessionUpdate) -> Result<(), Error> {
        // Boxed once here: the notification then travels to the driver as a pointer instead of
        // being copied through every future and channel slot on the way.
        let notification = SessionNotification::new(self.session_id.clone(), update).into();
        self.cx.inner.handle.notify(Box::new(notification)).await
    }

    /// Shortcut: streams an `agent_message_chunk` of plain text.
    pub async fn send_text(&self, text: impl Into<String>) -> Result<(), Error> {
        self.send_update(SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(text)))).await
    }

    /// Streams a `notice` for the user. Only for a client that advertised `session.notices`:
    /// otherwise refused locally ([`Error::Send`] with `NotSupportedByPeer`), nothing sent.
    pub async fn send_notice(&self, severity: NoticeSeverity, title: impl Into<String>) -> Result<(), Error> {
        self.send_update(SessionUpdate::Notice(Notice::new(severity, title))).await
    }

    /// Streams a `plan_update` (one ID-addressed plan, replaced whole). Only for a client that
    /// advertised `plan`: otherwise refused locally.
    pub async fn send_plan_update(&self, plan: PlanUpdate) -> Result<(), Error> {
        self.send_update(SessionUpdate::PlanUpdate(plan)).await
    }

    /// Streams a `plan_removed`. Only for a client that advertised `plan`.
    pub async fn send_plan_removed(&self, plan_id: impl Into<PlanId>) -> Result<(), Error> {
        self.send_update(SessionUpdate::PlanRemoved(PlanRemoved::new(plan_id))).await
    }

    /// Asks the user to fill in a form (`elicitation/create`, form mode, tied to this turn's
    /// session); needs the client's `elicitation.form`, otherwise refused locally.
    pub async fn elicit(
        &self,
        message: impl Into<String>,
        schema: ElicitationSchema,
    ) -> Result<CreateElicitationResponse, Error> {
        self.create_elicitation(CreateElicitationRequest::form(message, self.session_id.clone(), schema)).await
    }

    /// Sends the user to `url` (`elicitation/create`, URL mode, tied to this turn's session);
    /// needs the client's `elicitation.url`. Finish it with
    /// [`complete_elicitation`](RequestContext::complete_elicitation).
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        elicitation_id: impl Into<ElicitationId>,
        url: impl Into<String>,
    ) -> Result<CreateElicitationResponse, Error> {
        let request = CreateElicitationRequest::url(message, self.session_id.clone(), elicitation_id, url);
        self.create_elicitation(request).await
    }

    /// Asks the user for permission. A turn cancelled meanwhile (`session/cancel`) resolves to
    /// [`RequestPermissionOutcome::Cancelled`].
    pub async fn request_permission(
        &self,
        tool_call: ToolCallUpdate,
        options: Vec<PermissionOption>,
    ) -> Result<RequestPermissionOutcome, Error> {
        let request = RequestPermissionRequest::new(self.session_id.clone(), tool_call, options);
        match self.inner.handle.request_typed(request, None).await {
            Ok(response) => Ok(response.outcome),
            Err(Error::Cancelled) => Ok(RequestPermissionOutcome::Cancelled),
            Err(e) => Err(e),
        }
    }

    /// Reads a text file through the client (`fs/read_text_file`): `line` is 1-based, `limit`
    /// a number of lines.
    pub async fn read_text_file(
        &self,
        path: impl Into<String>,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, Error> {
        let mut request = ReadTextFileRequest::new(self.session_id.clone(), path);
        request.line = line;
        request.limit = limit;
        Ok(self.inner.handle.request_typed(request, None).await?.content)
    }

    /// Writes a text file through the client (`fs/write_text_file`).
    pub async fn write_text_file(&self, path: impl Into<String>, content: impl Into<String>) -> Result<(), Error> {
        let request = WriteTextFileRequest::new(self.session_id.clone(), path, content);
        self.inner.handle.request_typed(request, None).await.map(drop)
    }

    /// Starts `command` with `args` in a new client terminal (`terminal/create`).
    pub async fn create_terminal(&self, command: impl Into<String>, args: Vec<String>) -> Result<TerminalId, Error> {
        let mut request = CreateTerminalRequest::new(self.session_id.clone(), command);
        request.args = Some(args);
        Ok(self.inner.handle.request_typed(request, None).await?.terminal_id)
    }

    /// The terminal's output so far (`terminal/output`).
    pub async fn terminal_output(&self, terminal_id: &TerminalId) -> Result<TerminalOutputResponse, Error> {
        let request = TerminalOutputRequest::new(self.session_id.clone(), terminal_id.clone());
        self.inner.handle.request_typed(request, None).await
    }

    /// Waits for the terminal's command to exit (`terminal/wait_for_exit`).
    pub async fn wait_for_terminal_exit(&self, terminal_id: &TerminalId) -> Result<WaitForTerminalExitResponse, Error> {
        let request = WaitForTerminalExitRequest::new(self.session_id.clone(), terminal_id.clone());
        self.inner.handle.request_typed(request, None).await
    }

    /// Kills the terminal's command, keeping the terminal (`terminal/kill`).
    pub async fn kill_terminal(&self, terminal_id: &TerminalId) -> Result<(), Error> {
        let request = KillTerminalRequest::new(self.session_id.clone(), terminal_id.clone());
        self.inner.handle.request_typed(request, None).await.map(drop)
    }

    /// Releases the terminal (`terminal/release`).
    pub async fn release_terminal(&self, terminal_id: &TerminalId) -> Result<(), Error> {
        let request = ReleaseTerminalRequest::new(self.session_id.clone(), terminal_id.clone());
        self.inner.handle.request_typed(request, None).await.map(drop)
    }
}
