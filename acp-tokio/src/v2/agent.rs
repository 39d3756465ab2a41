//! The v2 agent: the [`Agent`] and [`LocalAgent`] handler traits, their context
//! [`AgentContext`], and [`serve`] / [`serve_local`].

use std::sync::Arc;
use std::time::Duration;

use acp_proto::role;
use acp_proto::v2::{self, SessionId};
use acp_proto::{InboundId, Negotiated};

use acp_proto::protocol::V2;

use crate::context::{HandlerContext, common_context_methods};
use crate::handle::{DriverStats, Handle};
use crate::io::TokioIo;
use crate::runtime::Tokio;
use crate::serve::Unspoken;
use crate::sync::{CancellationToken, Signal};
use crate::{AgentOptions, Error};

pub use crate::generated::v2::agent::Agent;
pub use crate::generated::v2::agent::LocalAgent;
use crate::handlers::{LocalHandlers, SendHandlers};

/// The context of a v2 agent's request handler: the request's cancellation signal and a way to
/// send requests and notifications to the client. Cheap to clone; usable after the handler
/// returned, for as long as the connection lives.
#[derive(Clone)]
pub struct AgentContext {
    inner: HandlerContext<V2, role::Agent>,
    answered: Arc<Signal>,
}

impl AgentContext {
    /// A v2 agent handler's context, and the signal its [`answered`](Self::answered) waits on
    /// (set once the handler's answer was handed to the connection).
    pub(crate) fn new(cx: HandlerContext<V2, role::Agent>) -> (AgentContext, Arc<Signal>) {
        let answered = Arc::new(Signal::default());
        (AgentContext { inner: cx, answered: Arc::clone(&answered) }, answered)
    }

    common_context_methods!();

    /// The connection's handle (the typed calls send through it).
    pub(crate) fn handle(&self) -> &Handle<V2, role::Agent> {
        &self.inner.handle
    }

    /// An agent's requests have no timeout of their own (the config's applies).
    pub(crate) fn timeout(&self) -> Option<Duration> {
        None
    }

    /// Completes once this request's answer was handed to the connection. Work a `prompt`
    /// handler leaves running awaits it first, so that the turn's updates follow the
    /// acknowledgement on the wire (and the core sees the session working before its idle).
    pub async fn answered(&self) {
        self.answered.wait().await;
    }

    /// Sends any v2 agent→client request and waits for the client's result, as v1's
    /// [`RequestContext::request`](crate::RequestContext::request): `timeout` bounds the wait
    /// (default: [`Config::request_timeout`](acp_proto::Config::request_timeout)), and
    /// dropping the future cancels the request (`$/cancel_request`).
    pub async fn request(
        &self,
        request: impl Into<v2::AgentRequest>,
        timeout: Option<Duration>,
    ) -> Result<v2::ClientResponse, Error> {
        self.inner.handle.ask(request.into(), timeout).await
    }

    /// Sends a v2 agent notification, waiting while the outbound budget is full.
    pub async fn notify(&self, notification: impl Into<v2::AgentNotification>) -> Result<(), Error> {
        self.inner.handle.notify(Box::new(notification.into())).await
    }

    /// Calls an extension method on the client (its name starts with `_`); `timeout` bounds
    /// the wait (default: [`Config::request_timeout`](acp_proto::Config::request_timeout)),
    /// and dropping the future cancels the request (`$/cancel_request`).
    pub async fn ext_method(
        &self,
        method: &str,
        params: serde_json::Value,
        timeout: Option<Duration>,
    ) -> Result<serde_json::Value, Error> {
        self.inner.handle.ext_method(method, params, timeout).await
    }

    /// Sends an extension notification to the client (waits while the outbound budget is full).
    pub async fn ext_notification(&self, method: &str, params: serde_json::Value) -> Result<(), Error> {
        self.inner.handle.ext_notification(method, params).await
    }

    /// Sends a `session/update` of an announced session.
    pub async fn send_update(&self, session_id: &SessionId, update: v2::SessionUpdate) -> Result<(), Error> {
        self.notify(v2::UpdateSessionNotification { session_id: session_id.clone(), update, meta: None }).await
    }

    /// Ends the session's turn: the `idle` `state_update` with `stop_reason` (the core makes it
    /// `cancelled` after a `session/cancel`).
    pub async fn send_idle(&self, session_id: &SessionId, stop_reason: v2::IdleStopReason) -> Result<(), Error> {
        let idle = v2::IdleStateUpdate { stop_reason: Some(stop_reason), ..Default::default() };
        self.send_update(session_id, v2::SessionUpdate::StateUpdate(v2::StateUpdate::Idle(idle))).await
    }
}

impl std::fmt::Debug for AgentContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentContext").field("id", &self.inner.id).field("cancel", &self.inner.cancel).finish()
    }
}

serve_fns!(Tokio(TokioIo, tokio::io) {
    /// Serves a v2 client over `reader`/`writer` (the client's output and input); the driver runs
    /// as a `tokio::spawn`ed task, the handlers as tasks of their own. Resolves when the client's
    /// input ends and every answer owed went out.
    ///
    /// It answers only a client whose `initialize` offers 2 (or later): a v1 `initialize` is
    /// answered `-32022`, unsupported protocol version (an agent that speaks both serves with
    /// [`serve_negotiated`](super::serve_negotiated)).
    fn serve<A: Agent>(Send) => spawn_accepted(SendHandlers, Unspoken);
    /// [`serve`] for a [`LocalAgent`]: must run inside a `tokio::task::LocalSet`; the driver runs
    /// in this future, the handlers as local tasks.
    fn serve_local<A: LocalAgent>() => run_accepted(LocalHandlers, Unspoken);
});

/// [`serve`] over any transport and runtime (the remote transports serve through here).
#[cfg(feature = "ws")]
pub(crate) async fn serve_on<Rt: crate::runtime::Runtime, A: Agent>(
    rt: Rt,
    agent: A,
    reader: impl crate::io::ReadBytes + Send,
    writer: impl crate::io::WriteBytes + Send,
    options: AgentOptions,
) -> Result<(), Error> {
    crate::serve::Launch::new(rt, reader, writer, &options).spawn_accepted(SendHandlers::new(agent), Unspoken).await
}
