//! The layer the ACP adapters share, so that the same names behave the same on every runtime.
//!
//! `acp-tokio` (async) and `acp-blocking` (plain threads) both drive the sans-IO core of
//! `acp-proto`; what they have in common that is not protocol lives here, once: no async
//! runtime is in this crate's dependency tree, so acp-blocking stays free of one.
//!
//! * [`Error`]: why a call failed, one type for both adapters (each re-exports it), with
//!   `From<Error> for RpcError` so that `?` answers a handler's request on either;
//!   [`Error::from_outcome`] maps the core's `Outcome<P>` of either protocol version.
//! * `v2` (feature `unstable_protocol_v2`): what only ACP v2 has (a prompt's acknowledgement).
//! * [`trace`]: one tracing vocabulary (spans, targets, event names, fields, the payload cap)
//!   for every adapter, behind the `tracing` feature.
//! * [`handler_panicked`]: the one answer to a request whose handler panicked.
//! * [`peer_left`]: a failed write after the peer's end of input that only says it went away
//!   (not an error of the connection).
//! * [`fd`] (Unix): pollable descriptors and the guard that keeps one non-blocking while an
//!   adapter multiplexes it with `poll(2)`, restoring its mode when dropped.
//! * [`process`]: the one supervision of an agent process (own process group, bounded
//!   stderr, the close sequence), for every adapter and `acp client`.
#![deny(missing_docs)]

mod error;
#[cfg(unix)]
pub mod fd;
mod panic;
mod peer_left;
pub mod process;
pub mod trace;
#[cfg(feature = "unstable_protocol_v2")]
pub mod v2;

pub use error::Error;
pub use panic::handler_panicked;
pub use peer_left::peer_left;
