//! Serving both versions on one transport: [`serve_negotiated`] (and
//! [`serve_negotiated_local`]) answer a client offering 2 with a v2 agent and a client offering
//! only 1 with a v1 one.
//!
//! An [`acp_proto::Acceptor`] reads the client's first frame (`initialize`) and hands on a
//! `Connection<Agent, V1>` or a `Connection<Agent, V2>` (with the bytes it read); the driver of that version
//! then runs with that version's handlers, as for an agent of one version.

use super::{Agent, LocalAgent};
use crate::handlers::{LocalHandlers, SendHandlers};
use crate::io::TokioIo;
use crate::runtime::Tokio;
use crate::serve::Launch;
use crate::{AgentOptions, Error};

/// Serves a client of either protocol version over `reader`/`writer` (the client's output and
/// input): a client whose `initialize` offers 2 (or later) is served by `v2_agent`, one that
/// offers only 1 by `v1_agent`, as the docs' version negotiation asks of an agent that speaks
/// both ("an agent that supports v2 answers 2, otherwise its latest"). Resolves when the
/// client's input ends, as [`serve`](crate::serve) does.
///
/// Each connection speaks one version, so only one of the two agents ever sees a request on
/// it. The two may share state (an `Arc` in both, or one type implementing both traits and
/// cloned).
///
/// [`serve`](super::serve) alone answers a v1-only client's `initialize` `-32022` (unsupported
/// protocol version).
///
/// ```no_run
/// use acp_tokio::acp_proto::types::{InitializeRequest, InitializeResponse, ProtocolVersion};
/// use acp_tokio::acp_proto::{RpcError, v2};
/// use acp_tokio::v2::{self as acp_v2, serve_negotiated};
/// use acp_tokio::{Agent, AgentOptions, RequestContext};
///
/// struct Modern;
/// impl acp_v2::Agent for Modern {
///     async fn initialize(&self, _: v2::InitializeRequest, _: acp_v2::AgentContext)
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
pub async fn serve_negotiated<A2: Agent, A1: crate::Agent>(
    v2_agent: A2,
    v1_agent: A1,
    reader: impl tokio::io::AsyncRead + Send + 'static,
    writer: impl tokio::io::AsyncWrite + Send + 'static,
    options: AgentOptions,
) -> Result<(), Error> {
    let launch = Launch::new(Tokio, TokioIo::new(reader), TokioIo::new(writer), &options);
    let v1 = SendHandlers::new(v1_agent);
    launch.spawn_accepted(SendHandlers::new(v2_agent), v1).await
}

/// [`serve_negotiated`] for a [`LocalAgent`] and a [`crate::LocalAgent`]: must run inside a
/// `tokio::task::LocalSet`; the driver runs in this future, the handlers as local tasks.
pub async fn serve_negotiated_local<A2: LocalAgent, A1: crate::LocalAgent>(
    v2_agent: A2,
    v1_agent: A1,
    reader: impl tokio::io::AsyncRead + 'static,
    writer: impl tokio::io::AsyncWrite + 'static,
    options: AgentOptions,
) -> Result<(), Error> {
    let launch = Launch::new(Tokio, TokioIo::new(reader), TokioIo::new(writer), &options);
    let v1 = LocalHandlers::new(v1_agent);
    launch.run_accepted(LocalHandlers::new(v2_agent), v1).await
}
