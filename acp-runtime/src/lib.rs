//! The layer the ACP adapters share, so that the same names behave the same on every runtime.
//!
//! `acp-tokio` (async) and `acp-blocking` (plain threads) both drive the sans-IO core of
//! `acp-proto`; what they have in common that is not protocol lives here, once: no async
//! runtime is in this crate's dependency tree, so acp-blocking stays free of one.
//!
//! * [`Error`]: why a call failed, one type for both adapters (each re-exports it), with
//!   `From<Error> for RpcError` so that `?` answers a handler's request on either.
#![deny(missing_docs)]

mod error;

pub use error::Error;
