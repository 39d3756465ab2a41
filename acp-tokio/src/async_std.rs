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
//! ACP v2 (feature `unstable_protocol_v2`): the same names in [`async_std::v2`](self::v2)
//! (`connect`, `serve`, `serve_stdio`; no `!Send` or child-process variants yet: the tokio v2
//! API has none either).
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

use acp_proto::protocol::V1;

use crate::handlers::{LocalHandlers, SendHandlers};
use crate::io::FuturesIo;
use crate::runtime::AsyncStd;
use crate::{Agent, AgentOptions, Client, ClientOptions, Error, LocalAgent, LocalClient};

connect_fns!(AsyncStd(FuturesIo, futures_io), V1 {
    /// [`ClientConnection::connect`](crate::ClientConnection::connect) on async-std.
    fn connect<C: Client>(Send) => SendHandlers;
    /// [`ClientConnection::connect_local`](crate::ClientConnection::connect_local) on async-std:
    /// the driver and the handlers run as local tasks of the current thread.
    fn connect_local<C: LocalClient>() => LocalHandlers;
    /// [`ClientConnection::spawn`](crate::ClientConnection::spawn) on async-std (`async_std::process`).
    fn spawn<C: Client> = process(spawn_async_std, SendHandlers);
});

serve_fns!(AsyncStd(FuturesIo, futures_io) {
    /// [`serve`](crate::serve) on async-std: the driver and the handlers run as
    /// `async_std::task::spawn`ed tasks, however this future is awaited.
    fn serve<A: Agent>(Send) => spawn_new(SendHandlers);
    /// [`serve_local`](crate::serve_local) on async-std (handlers on `spawn_local`).
    fn serve_local<A: LocalAgent>() => run_new(LocalHandlers);
});

/// [`serve_stdio`](crate::serve_stdio) on async-std.
pub async fn serve_stdio<A: Agent>(agent: A) -> Result<(), Error> {
    serve(agent, ::async_std::io::stdin(), ::async_std::io::stdout(), AgentOptions::default()).await
}

/// ACP v2 on async-std (feature `unstable_protocol_v2`): the functions of the parent module
/// under the same names, for `acp_tokio::v2`'s handler traits.
#[cfg(feature = "unstable_protocol_v2")]
pub mod v2 {
    use acp_proto::protocol::V2;

    use super::{AgentOptions, AsyncStd, ClientOptions, Error, FuturesIo};
    use crate::handlers::SendHandlers;
    use crate::serve::Unspoken;
    use crate::v2::{Agent, Client};

    connect_fns!(AsyncStd(FuturesIo, futures_io), V2 {
        /// [`v2::ClientConnection::connect`](crate::v2::ClientConnection::connect) on async-std:
        /// its driver and handlers on `async_std::task::spawn`.
        fn connect<C: Client>(Send) => SendHandlers;
    });

    serve_fns!(AsyncStd(FuturesIo, futures_io) {
        /// [`v2::serve`](crate::v2::serve) on async-std: its driver and handlers on
        /// `async_std::task::spawn`.
        ///
        /// ```no_run
        /// # use acp_tokio::acp_proto::{RpcError, v2};
        /// # struct Echo;
        /// # impl acp_tokio::v2::Agent for Echo {
        /// #     async fn initialize(&self, _: v2::InitializeRequest, _: acp_tokio::v2::AgentContext)
        /// #         -> Result<v2::InitializeResponse, RpcError> { unimplemented!() }
        /// # }
        /// fn main() -> Result<(), acp_tokio::Error> {
        ///     async_std::task::block_on(acp_tokio::async_std::v2::serve_stdio(Echo))
        /// }
        /// ```
        fn serve<A: Agent>(Send) => spawn_accepted(SendHandlers, Unspoken);
    });

    /// [`serve_stdio`](super::serve_stdio) for an ACP v2 agent.
    pub async fn serve_stdio<A: Agent>(agent: A) -> Result<(), Error> {
        serve(agent, ::async_std::io::stdin(), ::async_std::io::stdout(), AgentOptions::default()).await
    }
}
