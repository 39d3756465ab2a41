//! Interop tests of acp-rs against the official Rust SDK, `agent-client-protocol` (a
//! dev-dependency only): the SDK's agent against our clients (acp-tokio's and acp-blocking's
//! `ClientConnection`), and the SDK's client against our agents (acp-tokio's `serve`, and `acp
//! agent`'s reference agent from acp-cli, in-process). The
//! tests are in `tests/`; this library is empty.
#![deny(missing_docs)]
