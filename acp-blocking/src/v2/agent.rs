//! The v2 agent: the [`Agent`] handler trait, its context [`AgentContext`], and [`serve`] with
//! its siblings (the crate root's `serve*` functions' names), and [`serve_negotiated`] for an
//! agent of each version.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use acp_proto::role;
use acp_proto::types::SessionId;
use acp_proto::v2;
use acp_proto::{InboundId, InboundRequest, Negotiated, V2};

use super::Signal;
use super::negotiate::{self, V1Refused};
use crate::agent::AgentOptions;
use crate::driver::{Link, Service};
use crate::error::Error;
use crate::sync::{CancelToken, request_context_methods};
use crate::transport::Io;

pub use crate::generated::v2_agent::Agent;
use crate::generated::v2_agent::{dispatch_agent, dispatch_notification};

/// The context of a v2 agent's request handler: the request's cancellation signal and a way to
/// send requests and notifications to the client. Cheap to clone; usable after the handler
/// returned, from any thread, for as long as the connection lives.
#[derive(Clone)]
pub struct AgentContext {
    pub(crate) link: Link<V2, role::Agent>,
    id: InboundId,
    cancel: CancelToken,
    answered: Arc<Signal>,
    /// The typed calls' timeout: none (the config's `request_timeout` applies).
    pub(crate) timeout: Option<Duration>,
}

// The typed calls of the table's `call = "typed"` rows: `crate::generated::v2_agent`.

impl AgentContext {
    request_context_methods!("by `$/cancel_request`, or because the connection closed");

    /// Both sides' capabilities, once the handshake has completed.
    pub fn negotiated(&self) -> Option<Negotiated> {
        self.link.negotiated()
    }

    /// Blocks until this request's answer was handed to the connection. Work a `prompt`
    /// handler leaves running calls it first, so that the turn's updates follow the
    /// acknowledgement on the wire (and the core sees the session working before its idle).
    pub fn answered(&self) {
        self.answered.wait();
    }

    /// Sends any v2 agent→client request and blocks until the client's result, as v1's
    /// [`RequestContext::request`](crate::RequestContext::request): `timeout` bounds the wait
    /// (default: [`Config::request_timeout`](acp_proto::Config::request_timeout)).
    pub fn request(
        &self,
        request: impl Into<v2::AgentRequest>,
        timeout: Option<Duration>,
    ) -> Result<v2::ClientResponse, Error> {
        self.link.ask(request.into(), timeout.or(self.timeout))
    }

    /// Sends a v2 agent notification, blocking while the outbound budget is used up.
    pub fn notify(&self, notification: impl Into<v2::AgentNotification>) -> Result<(), Error> {
        self.link.notify(notification.into())
    }

    /// Calls an extension method on the client (its name starts with `_`) and blocks until its
    /// result; `timeout` bounds the wait (default:
    /// [`Config::request_timeout`](acp_proto::Config::request_timeout)).
    pub fn ext_method(
        &self,
        method: &str,
        params: serde_json::Value,
        timeout: Option<Duration>,
    ) -> Result<serde_json::Value, Error> {
        self.link.ext_method(method, params, timeout)
    }

    /// Sends an extension notification to the client.
    pub fn ext_notification(&self, method: &str, params: serde_json::Value) -> Result<(), Error> {
        self.link.ext_notification(method, params)
    }

    /// Sends a `session/update` of an announced session.
    pub fn send_update(&self, session_id: &SessionId, update: v2::SessionUpdate) -> Result<(), Error> {
        self.notify(v2::UpdateSessionNotification { session_id: session_id.clone(), update, meta: None })
    }

    /// Ends the session's turn: the `idle` `state_update` with `stop_reason` (the core makes it
    /// `cancelled` after a `session/cancel`).
    pub fn send_idle(&self, session_id: &SessionId, stop_reason: v2::IdleStopReason) -> Result<(), Error> {
        let idle = v2::IdleStateUpdate { stop_reason: Some(stop_reason), ..Default::default() };
        self.send_update(session_id, v2::SessionUpdate::StateUpdate(v2::StateUpdate::Idle(idle)))
    }
}

impl std::fmt::Debug for AgentContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentContext").field("id", &self.id).field("cancel", &self.cancel).finish()
    }
}

/// Runs an [`Agent`]'s handlers for the driver.
struct AgentService<A>(A);

impl<A: Agent> Service<V2, role::Agent> for AgentService<A> {
    fn request(&self, link: &Link<V2, role::Agent>, cancel: &CancelToken, request: InboundRequest<V2>) {
        let id = request.id();
        let answered = Arc::new(Signal::default());
        let cx =
            AgentContext { link: link.clone(), id, cancel: cancel.clone(), answered: answered.clone(), timeout: None };
        link.answer(id, || dispatch_agent(&self.0, request.into_call(), &cx));
        answered.set();
    }

    fn notification(&self, _: &Link<V2, role::Agent>, notification: v2::Notification) {
        dispatch_notification(&self.0, notification);
    }
}

serve_functions!(Agent);

/// Serves one connection of a v2 `agent` over `io`: the client's `initialize` chooses the
/// version ([`acp_proto::Acceptor`]); one offering only 1 gets `-32022` (unsupported protocol
/// version) for it and `-32601` for everything after (serve it too with [`serve_negotiated`]).
fn serve_io<A: Agent>(agent: A, io: Io, options: AgentOptions) -> Result<(), Error> {
    negotiate::serve(Arc::new(AgentService(agent)), Arc::new(V1Refused), io, options)
}

/// Serves the client with `v2_agent` or `v1_agent`, as its `initialize` chooses (2 or later:
/// v2, 1: v1), over any byte transport until the input ends: the first frame is read through an
/// [`acp_proto::Acceptor`], which hands the connection of the chosen version on with every
/// byte it read, and the connection then runs as [`serve_with`] or
/// [`crate::serve_with`] runs it. What comes before the `initialize` is answered as a v1
/// agent answers it.
pub fn serve_negotiated<A2: Agent, A1: crate::Agent>(
    v2_agent: A2,
    v1_agent: A1,
    reader: impl Read + Send + 'static,
    writer: impl Write + Send + 'static,
    options: AgentOptions,
) -> Result<(), Error> {
    let v1 = crate::agent::service(v1_agent);
    negotiate::serve(Arc::new(AgentService(v2_agent)), v1, Io::threads(reader, writer), options)
}
