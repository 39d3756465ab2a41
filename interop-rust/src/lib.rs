//! Interop tests of acp-rs against the official Rust SDK, `agent-client-protocol` (a
//! dev-dependency only): the SDK's agent against our clients (acp-tokio's and acp-blocking's
//! `ClientConnection`), and the SDK's client against our agents (acp-tokio's `serve`, and `acp
//! agent`'s reference agent from acp-cli, in-process). For ACP v2 (Preview; the SDK's
//! `unstable_protocol_v2`), the SDK's v2 agent and v2 client driven frame by frame with
//! `acp_proto::v2` types (see `KNOWN_DIFFERENCES.md`). The tests are in `tests/`; this library
//! is empty.
#![deny(missing_docs)]
