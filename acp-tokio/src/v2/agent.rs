//! The v2 agent: the [`AgentV2`] handler trait, its context [`AgentContextV2`], and
//! [`serve_v2`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use acp_proto::types::ProtocolVersion;
use acp_proto::v2::{self, CancelSessionNotification, ClientNotificationParams, ClientRequestParams, SessionId};
use acp_proto::{InboundId, Negotiated, Notification, Request, RpcError};
use tokio::sync::oneshot;

use super::{DoneV2, run_handler_v2};
use crate::context::{HandlerContext, common_context_methods};
use crate::driver::Handlers;
use crate::handle::{Done, DriverStats, Handle, catch_unwind};
use crate::io::{ReadBytes, TokioIo, WriteBytes};
use crate::runtime::{Runtime, Tokio};
use crate::sync::{CancellationToken, QueueReceiver, Signal};
use crate::{AgentOptions, Error};

macro_rules! agent_trait_v2 {
    (
        {}
        client_requests: [ $( {
            $(#[doc = $doc:literal])* $v:ident = $w:literal, $p:ident => $r:ident, gate: [$($g:literal),*],
            handler: $h:ident($cx:ident), default: $def:ident, call: $call:ident
        } )* ]
        agent_requests: $agent_requests:tt
        client_notifications: [ $( {
            $(#[doc = $ndoc:literal])* $nv:ident = $nw:literal, $np:ident, gate: [$($ng:literal),*], layer: $nl:ident, handler: $nh:tt
        } )* ]
        $($rest:tt)*
    ) => {
        /// An ACP v2 agent (handlers run as spawned tasks). Every method except
        /// [`initialize`](AgentV2::initialize) answers `-32601` by default.
        ///
        /// In v2 [`prompt`](AgentV2::prompt) only acknowledges the prompt: the turn's work goes
        /// on after it returns (on a task holding the [`AgentContextV2`], which stays usable),
        /// sends `session/update`s, and ends with an `idle` `state_update`
        /// ([`AgentContextV2::send_idle`]). A `session/cancel` reaches
        /// [`session_cancelled`](AgentV2::session_cancelled); the core has then already
        /// cancelled the session's permission asks, and sends the idle `cancelled` itself if
        /// the agent does not within `Config::turn_cancel_grace`.
        pub trait AgentV2: Send + Sync + 'static {
            $(
                handler_method_v2! {
                    $(#[doc = $doc])*
                    gate: [$($g),*], $def, $v, $h(v2::$p, AgentContextV2) -> v2::$r
                }
            )*
            $(
                notification_method_v2! {
                    $(#[doc = $ndoc])*
                    #[doc = ""]
                    #[doc = "Default: ignored."]
                    $nh(v2::$np)
                }
            )*

            /// `session/cancel` of a session: stop its work. Default: ignored.
            fn session_cancelled(&self, notification: CancelSessionNotification) -> impl Future<Output = ()> + Send {
                let _ = notification;
                std::future::ready(())
            }
        }

        async fn dispatch_agent_v2<A: AgentV2>(
            agent: &A,
            request: v2::Request,
            cx: AgentContextV2,
        ) -> Result<v2::Response, RpcError> {
            match request {
                $( v2::Request::Client(ClientRequestParams::$v(r)) => Ok(agent.$h(r, cx).await?.into()), )*
                other => Err(RpcError::method_not_found(other.wire())),
            }
        }

        async fn notify_agent_v2<A: AgentV2>(agent: &A, notification: v2::Notification) {
            match notification {
                v2::Notification::Client(ClientNotificationParams::Cancel(n)) => {
                    let _ = catch_unwind(agent.session_cancelled(n)).await;
                }
                $(
                    #[allow(unreachable_patterns)]
                    v2::Notification::Client(ClientNotificationParams::$nv(n)) => call_notification!($nh, agent, n),
                )*
                _ => {}
            }
        }
    };
}

acp_proto::method_table_v2!(agent_trait_v2 {});

/// The context of a v2 agent's request handler: the request's cancellation signal and a way to
/// send requests and notifications to the client. Cheap to clone; usable after the handler
/// returned, for as long as the connection lives.
#[derive(Clone)]
pub struct AgentContextV2 {
    inner: HandlerContext,
    answered: Arc<Signal>,
}

macro_rules! context_calls_v2 {
    (
        {}
        client_requests: $client_requests:tt
        agent_requests: [ $( {
            $(#[doc = $doc:literal])* $v:ident = $w:literal, $p:ident => $r:ident, gate: [$($g:literal),*],
            handler: $h:ident($cx:ident), default: $def:ident, call: $call:ident
        } )* ]
        $($rest:tt)*
    ) => {
        impl AgentContextV2 {
            $(
                typed_call_v2! {
                    $(#[doc = $doc])*
                    #[doc = ""]
                    #[doc = acp_proto::__gate_note!([$($g),*])]
                    $call, $v, $h(v2::$p) -> v2::$r, Client(ClientResult)
                }
            )*
        }
    };
}

acp_proto::method_table_v2!(context_calls_v2 {});

impl AgentContextV2 {
    common_context_methods!();

    fn handle(&self) -> &Handle {
        &self.inner.handle
    }

    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// Completes once this request's answer was handed to the connection. Work a `prompt`
    /// handler leaves running awaits it first, so that the turn's updates follow the
    /// acknowledgement on the wire (and the core sees the session working before its idle).
    pub async fn answered(&self) {
        self.answered.wait().await;
    }

    /// Sends any v2 agent request and waits for its result; dropping the future cancels it.
    pub async fn request(&self, request: impl Into<v2::Request>) -> Result<v2::Response, Error> {
        self.inner.handle.request_v2(request.into(), None).await
    }

    /// Sends a v2 agent notification, waiting while the outbound budget is full.
    pub async fn notify(&self, notification: impl Into<v2::Notification>) -> Result<(), Error> {
        self.inner.handle.notify_v2(notification.into()).await
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

impl std::fmt::Debug for AgentContextV2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentContextV2").field("id", &self.inner.id).field("cancel", &self.inner.cancel).finish()
    }
}

/// Runs an [`AgentV2`]'s handlers for the driver.
struct AgentV2Handlers<A>(Arc<A>);

impl<A: AgentV2> Handlers for AgentV2Handlers<A> {
    fn spawn_request<Rt: Runtime>(
        &self,
        _: &Rt,
        request: Request,
        _: HandlerContext,
        done: Done,
        _: Option<oneshot::Receiver<()>>,
    ) {
        // A v1 request (a client that offered only 1): this agent speaks v2 only.
        done.complete(Err(RpcError::method_not_found(request.wire())));
    }

    fn spawn_notifications<Rt: Runtime>(&self, _: &Rt, _: QueueReceiver<Notification>) {}

    fn spawn_request_v2<Rt: Runtime>(&self, rt: &Rt, request: v2::Request, cx: HandlerContext, done: DoneV2) {
        let agent = Arc::clone(&self.0);
        let answered = Arc::new(Signal::default());
        let cx = AgentContextV2 { inner: cx, answered: Arc::clone(&answered) };
        rt.spawn(async move {
            run_handler_v2(done, async move { dispatch_agent_v2(&*agent, request, cx).await }).await;
            answered.set();
        });
    }

    fn spawn_notifications_v2<Rt: Runtime>(&self, rt: &Rt, mut queue: QueueReceiver<v2::Notification>) {
        let agent = Arc::clone(&self.0);
        rt.spawn(async move {
            while let Some(notification) = queue.pop().await {
                notify_agent_v2(&*agent, notification).await;
            }
        });
    }
}

/// Serves a v2 `agent` over `reader`/`writer` (the client's output and input), as
/// [`serve`](crate::serve) does a v1 one: resolves when the client's input ends. Version 2 is
/// added to `options.config.supported_versions`; a client offering only 1 gets `-32601` for its
/// `initialize` (serve it with [`serve`](crate::serve)).
pub async fn serve_v2<A: AgentV2>(
    agent: A,
    reader: impl tokio::io::AsyncRead + Send + 'static,
    writer: impl tokio::io::AsyncWrite + Send + 'static,
    options: AgentOptions,
) -> Result<(), Error> {
    serve_v2_on(Tokio, agent, TokioIo::new(reader), TokioIo::new(writer), options).await
}

/// [`serve_v2`] over any transport and runtime (the driver spawned on `rt`): the remote
/// transports and async-std serve through here.
pub(crate) async fn serve_v2_on<Rt: Runtime, A: AgentV2>(
    rt: Rt,
    agent: A,
    reader: impl ReadBytes + Send,
    writer: impl WriteBytes + Send,
    mut options: AgentOptions,
) -> Result<(), Error> {
    let versions = &mut options.config.supported_versions;
    if !versions.contains(&ProtocolVersion(2)) {
        versions.push(ProtocolVersion(2));
    }
    crate::agent::serve_spawned(rt, AgentV2Handlers(Arc::new(agent)), reader, writer, &options).await
}
