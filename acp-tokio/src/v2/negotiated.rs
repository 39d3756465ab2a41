//! Serving both versions on one transport: [`serve_negotiated`] (and
//! [`serve_negotiated_local`]) answer a client offering 2 with a v2 agent and a client offering
//! only 1 with a v1 one.
//!
//! The core fixes the connection's version at `initialize` (see `acp_proto::connection::turns_v2`,
//! "Negotiation"): with 1 and 2 in `Config::supported_versions`, an `initialize` offering 2 or
//! more is read as v2 and answered 2, one offering 1 is read as v1; every later message is of
//! that version only. So the adapter only routes: v2 requests and notifications to the
//! [`AgentV2`] handlers, v1 ones to the [`Agent`](crate::Agent) handlers.

use std::rc::Rc;
use std::sync::Arc;

use acp_proto::types::ProtocolVersion;
use acp_proto::{Config, Notification, Request, v2};
use tokio::sync::oneshot;

use super::agent::{AgentV2Handlers, LocalAgentV2Handlers};
use super::{AgentV2, DoneV2, InboundV2, LocalAgentV2, offer_v2};
use crate::agent::{AgentHandlers, LocalAgentHandlers};
use crate::context::HandlerContext;
use crate::driver::Handlers;
use crate::handle::Done;
use crate::io::TokioIo;
use crate::runtime::{Runtime, Tokio};
use crate::sync::QueueReceiver;
use crate::{Agent, AgentOptions, Error, LocalAgent};

/// Serves a client of either protocol version over `reader`/`writer` (the client's output and
/// input): a client whose `initialize` offers 2 (or later) is served by `v2_agent`, one that
/// offers only 1 by `v1_agent`, as the docs' version negotiation asks of an agent that speaks
/// both ("an agent that supports v2 answers 2, otherwise its latest"). Resolves when the
/// client's input ends, as [`serve`](crate::serve) does. Versions 1 and 2 are added to
/// `options.config.supported_versions`.
///
/// Each connection speaks one version, so only one of the two agents ever sees a request on
/// it. The two may share state (an `Arc` in both, or one type implementing both traits and
/// cloned).
///
/// [`serve_v2`](super::serve_v2) alone answers a v1-only client's `initialize` `-32601`.
///
/// ```no_run
/// use acp_tokio::acp_proto::types::{InitializeRequest, InitializeResponse, ProtocolVersion};
/// use acp_tokio::acp_proto::{RpcError, v2};
/// use acp_tokio::v2::{AgentContextV2, AgentV2, serve_negotiated};
/// use acp_tokio::{Agent, AgentOptions, RequestContext};
///
/// struct Modern;
/// impl AgentV2 for Modern {
///     async fn initialize(&self, _: v2::InitializeRequest, _: AgentContextV2)
///         -> Result<v2::InitializeResponse, RpcError> {
///         let answer = serde_json::json!({"protocolVersion": 2,
///             "info": {"name": "both", "version": "1"}, "capabilities": {"session": {}}});
///         Ok(serde_json::from_value(answer).expect("a v2 answer"))
///     }
/// }
///
/// struct Classic;
/// impl Agent for Classic {
///     async fn initialize(&self, _: InitializeRequest, _: RequestContext)
///         -> Result<InitializeResponse, RpcError> {
///         Ok(InitializeResponse::new(ProtocolVersion::V1))
///     }
/// }
///
/// # async fn run() -> Result<(), acp_tokio::Error> {
/// // Whichever version the editor on stdin/stdout offers, it gets an agent that speaks it.
/// serve_negotiated(Modern, Classic, tokio::io::stdin(), tokio::io::stdout(), AgentOptions::default()).await
/// # }
/// ```
pub async fn serve_negotiated<A2: AgentV2, A1: Agent>(
    v2_agent: A2,
    v1_agent: A1,
    reader: impl tokio::io::AsyncRead + Send + 'static,
    writer: impl tokio::io::AsyncWrite + Send + 'static,
    mut options: AgentOptions,
) -> Result<(), Error> {
    offer_both(&mut options.config);
    let handlers = ByVersion { v1: AgentHandlers(Arc::new(v1_agent)), v2: AgentV2Handlers(Arc::new(v2_agent)) };
    crate::agent::serve_spawned(Tokio, handlers, TokioIo::new(reader), TokioIo::new(writer), &options).await
}

/// [`serve_negotiated`] for a [`LocalAgentV2`] and a [`LocalAgent`]: must run inside a
/// `tokio::task::LocalSet`; the driver runs in this future, the handlers as local tasks.
pub async fn serve_negotiated_local<A2: LocalAgentV2, A1: LocalAgent>(
    v2_agent: A2,
    v1_agent: A1,
    reader: impl tokio::io::AsyncRead + 'static,
    writer: impl tokio::io::AsyncWrite + 'static,
    mut options: AgentOptions,
) -> Result<(), Error> {
    offer_both(&mut options.config);
    let handlers = ByVersion { v1: LocalAgentHandlers(Rc::new(v1_agent)), v2: LocalAgentV2Handlers(Rc::new(v2_agent)) };
    crate::agent::serve_on(Tokio, handlers, TokioIo::new(reader), TokioIo::new(writer), &options).await
}

fn offer_both(config: &mut Config) {
    if !config.supported_versions.contains(&ProtocolVersion::V1) {
        config.supported_versions.insert(0, ProtocolVersion::V1);
    }
    offer_v2(config);
}

/// The driver's handlers of a connection that speaks whichever version the client offered:
/// v1 messages to `v1`, v2 ones to `v2`.
struct ByVersion<H1, H2> {
    v1: H1,
    v2: H2,
}

impl<H1: Handlers, H2: Handlers> Handlers for ByVersion<H1, H2> {
    fn spawn_request<Rt: Runtime>(
        &self,
        rt: &Rt,
        request: Request,
        cx: HandlerContext,
        done: Done,
        gate: Option<oneshot::Receiver<()>>,
    ) {
        self.v1.spawn_request(rt, request, cx, done, gate);
    }

    fn spawn_notifications<Rt: Runtime>(&self, rt: &Rt, queue: QueueReceiver<Notification>) {
        self.v1.spawn_notifications(rt, queue);
    }

    fn spawn_request_v2<Rt: Runtime>(
        &self,
        rt: &Rt,
        request: v2::Request,
        cx: HandlerContext,
        done: DoneV2,
        gate: Option<oneshot::Receiver<()>>,
    ) {
        self.v2.spawn_request_v2(rt, request, cx, done, gate);
    }

    fn spawn_notifications_v2<Rt: Runtime>(&self, rt: &Rt, queue: QueueReceiver<InboundV2>) {
        self.v2.spawn_notifications_v2(rt, queue);
    }
}
