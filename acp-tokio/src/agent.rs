//! The agent side: the [`Agent`] and [`LocalAgent`] handler traits and the functions that serve
//! them over a transport.
//!
//! Both traits have the same methods; [`Agent`]'s futures are `Send` and its handlers run as
//! `tokio::spawn`ed tasks (any runtime flavour), [`LocalAgent`]'s need not be and run as
//! `spawn_local`ed tasks (a current-thread runtime inside a `LocalSet`). Both are generated from
//! one definition and served by the same driver.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use acp_proto::ext::ExtResponse;
use acp_proto::methods::{AgentResponse, ClientNotification, ClientRequest};
use acp_proto::protocol::V1;
use acp_proto::types::*;
use acp_proto::{Notification, Request, Response, RpcError};
use serde_json::Value;

use crate::context::RequestContext;
use crate::handle::catch_unwind;
use crate::io::TokioIo;
use crate::runtime::Tokio;
use crate::serve::Launch;
use crate::version::Inbound;
use crate::{AgentOptions, Error};

fn agent_result(response: impl Into<AgentResponse>) -> Response {
    Response::Agent(response.into())
}

macro_rules! agent_trait {
    (
        {
            $(#[$attr:meta])*
            trait $Trait:ident: [$($bounds:tt)*], futures: $futures:tt,
            handlers: $Handlers:ident($Ptr:ident), spawn: $spawn:ident, dispatch: $dispatch:ident, notify: $notify:ident;
        }
        client_requests: [ $( {
            $(#[doc = $doc:literal])* $v:ident = $w:literal, $p:ident => $r:ident, gate: [$($g:literal),*],
            handler: $h:ident($cx:ident), default: $def:ident, call: $call:ident $(, feature: $f:literal)?
        } )* ]
        agent_requests: $agent_requests:tt
        client_notifications: [ $( {
            $(#[doc = $ndoc:literal])* $nv:ident = $nw:literal, $np:ident, gate: [$($ng:literal),*], layer: $nl:ident, handler: $nh:tt
            $(, feature: $nf:literal)?
        } )* ]
        $($rest:tt)*
    ) => {
        $(#[$attr])*
        pub trait $Trait: $($bounds)* 'static {
            $(
                handler_method! {
                    $(#[cfg(feature = $f)])?
                    $(#[doc = $doc])*
                    method: acp_proto::Method, gate: [$($g),*], $def, $v, $h($p, context_type!($cx)) -> $r, $futures
                }
            )*

            ext_handler_methods!(RequestContext, $futures);

            $(
                notification_method! {
                    $(#[cfg(feature = $nf)])?
                    $(#[doc = $ndoc])*
                    #[doc = ""]
                    #[doc = "Default: ignored."]
                    $nh($np), $futures
                }
            )*
        }

        /// Calls the handler method for `request`.
        async fn $dispatch<A: $Trait>(agent: &A, request: Request, cx: RequestContext) -> Result<Response, RpcError> {
            let request = match request {
                Request::Client(request) => request,
                other => return Err(RpcError::method_not_found(other.wire())),
            };
            Ok(match request {
                $(
                    $(#[cfg(feature = $f)])?
                    ClientRequest::$v(r) => {
                        let cx = make_context!($cx, cx, r);
                        agent_result(agent.$h(r, cx).await?)
                    }
                )*
                ClientRequest::Ext(e) => {
                    agent_result(AgentResponse::Ext(ExtResponse(agent.ext_method(&e.method, e.params, cx).await?)))
                }
                other => return Err(RpcError::method_not_found(other.wire())),
            })
        }

        /// Calls the handler method for `notification`; a panic loses that notification only.
        async fn $notify<A: $Trait>(agent: &A, item: Inbound<V1>) {
            let Some(notification) = item.notification() else { return };
            match notification {
                $(
                    $(#[cfg(feature = $nf)])?
                    Notification::Client(ClientNotification::$nv(n)) => call_notification!($nh, agent, n),
                )*
                Notification::Client(ClientNotification::Ext(e)) => {
                    let _ = catch_unwind(agent.ext_notification(&e.method, e.params)).await;
                }
                _ => {}
            }
        }

        handlers_impl!($Handlers($Ptr): $Trait, version: V1, spawn: $spawn,
            context: |cx| (RequestContext::new(cx), None), dispatch: $dispatch, notify: $notify);
    };
}

acp_proto::method_table!(agent_trait {
    /// An ACP agent whose handler futures are `Send`: handlers run as spawned tasks, so they run
    /// concurrently (and in parallel on a multi-thread runtime).
    ///
    /// Implement the methods with `async fn`; every method except
    /// [`initialize`](Agent::initialize) has a default answering `-32601`. Each handler gets its
    /// request's context, whose cancellation token fires on `$/cancel_request`, on
    /// `session/cancel` (prompts), at the end of the client's input (the answer still goes
    /// out: acp-proto's `half_close`) and when the connection closes. A handler that panics answers
    /// `-32603`; the connection and the other handlers carry on.
    ///
    /// For handlers that hold `Rc`s or other `!Send` state, implement [`LocalAgent`] instead.
    trait Agent: [Send + Sync +], futures: [+ Send],
    handlers: AgentHandlers(Arc), spawn: spawn, dispatch: dispatch_agent, notify: notify_agent;
});

acp_proto::method_table!(agent_trait {
    /// An ACP agent whose handler futures need not be `Send`: the same methods as [`Agent`], run
    /// as local tasks on the current thread. Serve it with [`serve_local`] (or
    /// [`serve_stdio_local`]) from inside a `tokio::task::LocalSet` on a current-thread runtime.
    trait LocalAgent: [], futures: [],
    handlers: LocalAgentHandlers(Rc), spawn: spawn_local, dispatch: dispatch_local_agent, notify: notify_local_agent;
});

/// Serves `agent` over `reader`/`writer` (the client's output and input). Resolves when the
/// client's input ended and the requests it sent before were answered (their handlers are
/// told: the token's reason is [`CancelReason::InputEnded`](acp_proto::CancelReason::InputEnded);
/// one that has not answered within `config.cancel_grace` is answered `-32800` for it), or
/// the transport failed, and everything queued was written: `Ok(())` after a clean end of
/// input (also when the client then stopped reading: [`acp_runtime::peer_left`]). Dropping
/// the future closes the connection.
///
/// The driver and the handlers run as `tokio::spawn`ed tasks, so they share the runtime's
/// workers however this future is awaited (even from `block_on` on a multi-thread runtime).
pub async fn serve<A: Agent>(
    agent: A,
    reader: impl tokio::io::AsyncRead + Send + 'static,
    writer: impl tokio::io::AsyncWrite + Send + 'static,
    options: AgentOptions,
) -> Result<(), Error> {
    let launch = Launch::new(Tokio, TokioIo::new(reader), TokioIo::new(writer), &options);
    let conn = launch.connection::<V1>();
    launch.spawn(conn, AgentHandlers(Arc::new(agent))).await
}

/// [`serve`] for a [`LocalAgent`]: must run inside a `tokio::task::LocalSet`; the driver runs in
/// this future, the handlers as local tasks.
pub async fn serve_local<A: LocalAgent>(
    agent: A,
    reader: impl tokio::io::AsyncRead + 'static,
    writer: impl tokio::io::AsyncWrite + 'static,
    options: AgentOptions,
) -> Result<(), Error> {
    let launch = Launch::new(Tokio, TokioIo::new(reader), TokioIo::new(writer), &options);
    let conn = launch.connection::<V1>();
    launch.run(conn, LocalAgentHandlers(Rc::new(agent))).await
}

/// Serves `agent` on this process's stdin and stdout (log to stderr only). Resolves once stdin
/// ends and every answer was flushed.
///
/// On Unix, when stdin and stdout are pipes (how a client spawns an agent), they are read and
/// written by the runtime's reactor, so no read and no write goes through tokio's blocking
/// pool; their blocking mode is restored when this returns, and also when its future is
/// dropped or a panic unwinds it. Otherwise (a terminal, a file, a runtime without I/O)
/// tokio's `stdin()`/`stdout()` are used.
pub async fn serve_stdio<A: Agent>(agent: A) -> Result<(), Error> {
    #[cfg(unix)]
    if let Some(pipes) = crate::io::StdioPipes::open() {
        // Blocking mode comes back when the guard drops: at the end, or when this future is
        // dropped or unwinds.
        let (reader, writer, _blocking) = pipes.take();
        return serve(agent, reader, writer, AgentOptions::default()).await;
    }
    serve(agent, tokio::io::stdin(), tokio::io::stdout(), AgentOptions::default()).await
}

/// [`serve_stdio`] for a [`LocalAgent`]: must run inside a `tokio::task::LocalSet`.
pub async fn serve_stdio_local<A: LocalAgent>(agent: A) -> Result<(), Error> {
    #[cfg(unix)]
    if let Some(pipes) = crate::io::StdioPipes::open() {
        // Blocking mode comes back when the guard drops: at the end, or when this future is
        // dropped or unwinds.
        let (reader, writer, _blocking) = pipes.take();
        return serve_local(agent, reader, writer, AgentOptions::default()).await;
    }
    serve_local(agent, tokio::io::stdin(), tokio::io::stdout(), AgentOptions::default()).await
}
