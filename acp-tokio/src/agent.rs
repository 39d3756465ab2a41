//! The agent side: the [`Agent`] and [`LocalAgent`] handler traits and the functions that serve
//! them over a transport.
//!
//! Both traits have the same methods; [`Agent`]'s futures are `Send` and its handlers run as
//! `tokio::spawn`ed tasks (any runtime flavour), [`LocalAgent`]'s need not be and run as
//! `spawn_local`ed tasks (a current-thread runtime inside a `LocalSet`). Both are written by
//! `tools/acp-gen` from the v1 method table (`crate::generated::v1`) and served by the same
//! driver.

use crate::io::TokioIo;
use crate::runtime::Tokio;
use crate::{AgentOptions, Error};

pub use crate::generated::v1::agent::Agent;
pub use crate::generated::v1::agent::LocalAgent;
use crate::handlers::{LocalHandlers, SendHandlers};

serve_fns!(Tokio(TokioIo, tokio::io) {
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
    fn serve<A: Agent>(Send) => spawn_new(SendHandlers);
    /// [`serve`] for a [`LocalAgent`]: must run inside a `tokio::task::LocalSet`; the driver runs in
    /// this future, the handlers as local tasks.
    fn serve_local<A: LocalAgent>() => run_new(LocalHandlers);
    /// Serves `agent` on this process's stdin and stdout (log to stderr only). Resolves once stdin
    /// ends and every answer was flushed.
    ///
    /// On Unix, when stdin and stdout are pipes (how a client spawns an agent), they are read and
    /// written by the runtime's reactor, so no read and no write goes through tokio's blocking
    /// pool; their blocking mode is restored when this returns, and also when its future is
    /// dropped or a panic unwinds it. Otherwise (a terminal, a file, a runtime without I/O)
    /// tokio's `stdin()`/`stdout()` are used.
    fn serve_stdio<A: Agent> = stdio(serve);
    /// [`serve_stdio`] for a [`LocalAgent`]: must run inside a `tokio::task::LocalSet`.
    fn serve_stdio_local<A: LocalAgent> = stdio(serve_local);
});
