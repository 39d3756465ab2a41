//! The same driver on async-std (feature `async-std`).
//!
//! async-std is deprecated upstream in favour of [smol](https://docs.rs/smol); this module is
//! kept small so that smol support is a small addition: the runtime-specific part of the crate
//! is one `Runtime` implementation (a clock, a timer, two spawn functions), the `futures-io`
//! wrappers and a process-spawning function.
//!
//! The functions mirror the tokio ones: transports are `futures-io` types (async-std's
//! `UnixStream`, `ChildStdin`, `stdin()`...); drivers and `Send` handlers run on
//! `async_std::task::spawn`, `!Send` handlers on `async_std::task::spawn_local` (call those
//! functions inside `async_std::task::block_on`, which runs the local tasks).
//!
//! ACP v2 (feature `unstable_protocol_v2`): `connect_v2`, `serve_v2` and `serve_stdio_v2`
//! (no `!Send` or child-process variants yet: the tokio v2 API has none either).
//!
//! ```no_run
//! # use acp_tokio::acp_proto::{RpcError, types::*};
//! # struct Echo;
//! # impl acp_tokio::Agent for Echo {
//! #     async fn initialize(&self, _: InitializeRequest, _: acp_tokio::RequestContext)
//! #         -> Result<InitializeResponse, RpcError> { Ok(InitializeResponse::new(ProtocolVersion::V1)) }
//! # }
//! fn main() -> Result<(), acp_tokio::Error> {
//!     async_std::task::block_on(acp_tokio::async_std::serve_stdio(Echo))
//! }
//! ```

use std::rc::Rc;
use std::sync::Arc;

use crate::agent::{AgentHandlers, LocalAgentHandlers, serve_on, serve_spawned};
use crate::client::{ClientHandlers, LocalClientHandlers};
use crate::io::FuturesIo;
use crate::runtime::{AsyncStd, Runtime};
use crate::{Agent, AgentOptions, Client, ClientConnection, ClientOptions, Error, LocalAgent, LocalClient};

/// [`ClientConnection::connect`] on async-std.
pub fn connect<C: Client>(
    client: C,
    reader: impl futures_io::AsyncRead + Send + 'static,
    writer: impl futures_io::AsyncWrite + Send + 'static,
    options: ClientOptions,
) -> ClientConnection {
    let handlers = ClientHandlers(Arc::new(client));
    let (driver, conn) =
        ClientConnection::build(AsyncStd, handlers, FuturesIo::new(reader), FuturesIo::new(writer), &options);
    AsyncStd.spawn(async move {
        let _ = driver.await;
    });
    conn
}

/// [`ClientConnection::connect_local`] on async-std: the driver and the handlers run as local
/// tasks of the current thread.
pub fn connect_local<C: LocalClient>(
    client: C,
    reader: impl futures_io::AsyncRead + 'static,
    writer: impl futures_io::AsyncWrite + 'static,
    options: ClientOptions,
) -> ClientConnection {
    let handlers = LocalClientHandlers(Rc::new(client));
    let (driver, conn) =
        ClientConnection::build(AsyncStd, handlers, FuturesIo::new(reader), FuturesIo::new(writer), &options);
    AsyncStd.spawn_local(async move {
        let _ = driver.await;
    });
    conn
}

/// [`ClientConnection::spawn`] on async-std (`async_std::process`).
pub fn spawn<C: Client>(
    client: C,
    command: std::process::Command,
    options: ClientOptions,
) -> Result<ClientConnection, Error> {
    let child = crate::process::spawn_async_std(command)?;
    let handlers = ClientHandlers(Arc::new(client));
    let (driver, mut conn) = ClientConnection::build(
        AsyncStd,
        handlers,
        FuturesIo::new(child.stdout),
        FuturesIo::new(child.stdin),
        &options,
    );
    AsyncStd.spawn(async move {
        let _ = driver.await;
    });
    let pid = Some(child.child.id());
    let shared = conn.shared().clone();
    let process = crate::process::supervise(AsyncStd, child.child, pid, FuturesIo::new(child.stderr), shared, &options);
    conn.set_process(process);
    Ok(conn)
}

/// [`serve`](crate::serve) on async-std: the driver and the handlers run as
/// `async_std::task::spawn`ed tasks, however this future is awaited.
pub async fn serve<A: Agent>(
    agent: A,
    reader: impl futures_io::AsyncRead + Send + 'static,
    writer: impl futures_io::AsyncWrite + Send + 'static,
    options: AgentOptions,
) -> Result<(), Error> {
    let handlers = AgentHandlers(Arc::new(agent));
    serve_spawned(AsyncStd, handlers, FuturesIo::new(reader), FuturesIo::new(writer), &options).await
}

/// [`serve_local`](crate::serve_local) on async-std (handlers on `spawn_local`).
pub async fn serve_local<A: LocalAgent>(
    agent: A,
    reader: impl futures_io::AsyncRead + 'static,
    writer: impl futures_io::AsyncWrite + 'static,
    options: AgentOptions,
) -> Result<(), Error> {
    let handlers = LocalAgentHandlers(Rc::new(agent));
    serve_on(AsyncStd, handlers, FuturesIo::new(reader), FuturesIo::new(writer), &options).await
}

/// [`serve_stdio`](crate::serve_stdio) on async-std.
pub async fn serve_stdio<A: Agent>(agent: A) -> Result<(), Error> {
    serve(agent, ::async_std::io::stdin(), ::async_std::io::stdout(), AgentOptions::default()).await
}

/// [`ClientConnectionV2::connect`](crate::v2::ClientConnectionV2::connect) on async-std: an
/// ACP v2 client (feature `unstable_protocol_v2`), its driver and handlers on
/// `async_std::task::spawn`.
#[cfg(feature = "unstable_protocol_v2")]
pub fn connect_v2<C: crate::v2::ClientV2>(
    client: C,
    reader: impl futures_io::AsyncRead + Send + 'static,
    writer: impl futures_io::AsyncWrite + Send + 'static,
    options: ClientOptions,
) -> crate::v2::ClientConnectionV2 {
    crate::v2::ClientConnectionV2::over(AsyncStd, client, FuturesIo::new(reader), FuturesIo::new(writer), options)
}

/// [`serve_v2`](crate::v2::serve_v2) on async-std: an ACP v2 agent (feature
/// `unstable_protocol_v2`), its driver and handlers on `async_std::task::spawn`.
///
/// ```no_run
/// # use acp_tokio::acp_proto::{RpcError, v2};
/// # use acp_tokio::v2::AgentContextV2;
/// # struct Echo;
/// # impl acp_tokio::v2::AgentV2 for Echo {
/// #     async fn initialize(&self, _: v2::InitializeRequest, _: AgentContextV2)
/// #         -> Result<v2::InitializeResponse, RpcError> { unimplemented!() }
/// # }
/// fn main() -> Result<(), acp_tokio::Error> {
///     async_std::task::block_on(acp_tokio::async_std::serve_stdio_v2(Echo))
/// }
/// ```
#[cfg(feature = "unstable_protocol_v2")]
pub async fn serve_v2<A: crate::v2::AgentV2>(
    agent: A,
    reader: impl futures_io::AsyncRead + Send + 'static,
    writer: impl futures_io::AsyncWrite + Send + 'static,
    options: AgentOptions,
) -> Result<(), Error> {
    crate::v2::serve_v2_on(AsyncStd, agent, FuturesIo::new(reader), FuturesIo::new(writer), options).await
}

/// [`serve_stdio`] for an ACP v2 agent (feature `unstable_protocol_v2`).
#[cfg(feature = "unstable_protocol_v2")]
pub async fn serve_stdio_v2<A: crate::v2::AgentV2>(agent: A) -> Result<(), Error> {
    serve_v2(agent, ::async_std::io::stdin(), ::async_std::io::stdout(), AgentOptions::default()).await
}
