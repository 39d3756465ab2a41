//! The v2 agent: the [`AgentV2`] handler trait, its context [`AgentContextV2`], and
//! [`serve_v2`] with its siblings (the v1 `serve*` functions' names, suffixed).

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use acp_proto::types::SessionId;
use acp_proto::v2::{self, CancelSessionNotification, ClientNotificationParams, ClientRequestParams};
use acp_proto::{InboundId, Negotiated, Notification, Request, Response, RpcError};

use super::{ServiceV2, Signal, answer, call, notify, speak_v2};
use crate::agent::{AgentOptions, serve_service, serve_stdio_service};
use crate::driver::{Link, Service};
use crate::error::Error;
use crate::sync::CancelToken;

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
        /// An ACP v2 agent. Handlers run on a bounded pool of worker threads
        /// (`AgentOptions::max_handlers`), notifications in order on one thread, as for the v1
        /// [`Agent`](crate::Agent). Every method except [`initialize`](AgentV2::initialize)
        /// answers `-32601` by default. A handler that panics answers `-32603`.
        ///
        /// In v2 [`prompt`](AgentV2::prompt) only acknowledges the prompt: the turn's work goes
        /// on after it returns (on a thread holding a clone of the [`AgentContextV2`], which
        /// stays usable), sends `session/update`s, and ends with an `idle` `state_update`
        /// ([`AgentContextV2::send_idle`]). A `session/cancel` reaches
        /// [`session_cancelled`](AgentV2::session_cancelled); the core has then already
        /// cancelled the session's permission asks, and sends the idle `cancelled` itself if
        /// the agent does not within `Config::turn_cancel_grace`.
        #[allow(unused_variables)]
        pub trait AgentV2: Send + Sync + 'static {
            $(
                handler_method! {
                    method: [v2::Method]
                    $(#[doc = $doc])*
                    gate: [$($g),*], $def, $v, $h(v2::$p, AgentContextV2) -> v2::$r
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

            /// `session/cancel` of a session: stop its work. Runs on the ordered notification
            /// thread. Default: ignored.
            fn session_cancelled(&self, notification: CancelSessionNotification) {}
        }

        fn dispatch_agent_v2<A: AgentV2>(
            agent: &A,
            request: v2::Request,
            cx: &AgentContextV2,
        ) -> Result<v2::Response, RpcError> {
            match request {
                $( v2::Request::Client(ClientRequestParams::$v(r)) => Ok(agent.$h(r, cx)?.into()), )*
                other => Err(RpcError::method_not_found(other.wire())),
            }
        }

        fn notify_agent_v2<A: AgentV2>(agent: &A, notification: v2::Notification) {
            match notification {
                v2::Notification::Client(ClientNotificationParams::Cancel(n)) => agent.session_cancelled(n),
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
/// returned, from any thread, for as long as the connection lives.
#[derive(Clone)]
pub struct AgentContextV2 {
    link: Link,
    id: InboundId,
    cancel: CancelToken,
    answered: Arc<Signal>,
    /// The typed calls' timeout: none (the config's `request_timeout` applies).
    timeout: Option<Duration>,
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
                typed_call! {
                    $(#[doc = $doc])*
                    #[doc = ""]
                    #[doc = acp_proto::__gate_note!([$($g),*])]
                    $call, $h(v2::$p) -> v2::$r, v2: Client(ClientResult::$v)
                }
            )*
        }
    };
}

acp_proto::method_table_v2!(context_calls_v2 {});

impl AgentContextV2 {
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

    /// Sends any v2 agent request and blocks until its result.
    pub fn request(&self, request: impl Into<v2::Request>) -> Result<v2::Response, Error> {
        call(&self.link, request.into(), self.timeout)
    }

    /// Sends a v2 agent notification, blocking while the outbound budget is used up.
    pub fn notify(&self, notification: impl Into<v2::Notification>) -> Result<(), Error> {
        notify(&self.link, notification.into())
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

impl std::fmt::Debug for AgentContextV2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentContextV2").field("id", &self.id).field("cancel", &self.cancel).finish()
    }
}

/// Runs an [`AgentV2`]'s handlers for the driver.
struct AgentServiceV2<A>(A);

impl<A: AgentV2> Service for AgentServiceV2<A> {
    fn request(&self, _: &Link, _: InboundId, _: &CancelToken, request: Request) -> Result<Response, RpcError> {
        // A v1 request (a client that offered only 1): this agent speaks v2 only.
        Err(RpcError::method_not_found(request.wire()))
    }

    fn notification(&self, _: &Link, _: Notification) {}

    fn v2(&self) -> Option<&dyn ServiceV2> {
        Some(self)
    }
}

impl<A: AgentV2> ServiceV2 for AgentServiceV2<A> {
    fn request(&self, link: &Link, id: InboundId, cancel: &CancelToken, request: v2::Request) {
        let answered = Arc::new(Signal::default());
        let cx = AgentContextV2 {
            link: link.clone(),
            id,
            cancel: cancel.clone(),
            answered: answered.clone(),
            timeout: None,
        };
        answer(link, id, || dispatch_agent_v2(&self.0, request, &cx));
        answered.set();
    }

    fn notification(&self, _: &Link, notification: v2::Notification) {
        notify_agent_v2(&self.0, notification);
    }
}

/// Serves a v2 `agent` on this process's stdin and stdout until stdin ends, as
/// [`serve_stdio`](crate::serve_stdio) does a v1 one (on Unix over pipes the calling thread
/// reads and writes them itself). Nothing else may write to stdout.
pub fn serve_stdio_v2<A: AgentV2>(agent: A) -> Result<(), Error> {
    let mut options = AgentOptions::default();
    speak_v2(&mut options.config);
    serve_stdio_service(Arc::new(AgentServiceV2(agent)), options)
}

/// Serves a v2 `agent` over any byte transport until the input ends, as
/// [`serve`](crate::serve) does a v1 one.
pub fn serve_v2<A: AgentV2>(
    agent: A,
    reader: impl Read + Send + 'static,
    writer: impl Write + Send + 'static,
) -> Result<(), Error> {
    serve_with_v2(agent, reader, writer, AgentOptions::default())
}

/// [`serve_v2`] with options, as [`serve_with`](crate::serve_with). Version 2 is added to
/// `options.config.supported_versions`; a client offering only 1 gets `-32601` for its
/// `initialize` (serve it with [`serve`](crate::serve)).
pub fn serve_with_v2<A: AgentV2>(
    agent: A,
    reader: impl Read + Send + 'static,
    writer: impl Write + Send + 'static,
    mut options: AgentOptions,
) -> Result<(), Error> {
    speak_v2(&mut options.config);
    serve_service(Arc::new(AgentServiceV2(agent)), reader, writer, options)
}

/// [`serve_with_v2`] over two descriptors (Unix), as [`serve_fds`](crate::serve_fds).
#[cfg(unix)]
pub fn serve_fds_v2<A: AgentV2>(
    agent: A,
    reader: impl Read + std::os::fd::AsFd + Send + 'static,
    writer: impl Write + std::os::fd::AsFd + Send + 'static,
    mut options: AgentOptions,
) -> Result<(), Error> {
    speak_v2(&mut options.config);
    crate::agent::serve_service_fds(Arc::new(AgentServiceV2(agent)), reader, writer, options)
}
