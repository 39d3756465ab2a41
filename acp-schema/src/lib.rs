//! # acp-schema: the Agent Client Protocol's schema as Rust types
//!
//! Every definition of the pinned ACP schemas as a Rust type with its serde: [`v1`] (the
//! stable protocol, `spec/crate-1.20.0/v1`: the schema of the official crate
//! `agent-client-protocol-schema` 1.20.0, a superset of the official release 1.21.0) and, with
//! the feature `unstable_protocol_v2`, `v2` (the v2 Preview, `spec/crate-1.20.0/v2`); the
//! JSON-RPC pieces the schemas name ([`RequestId`], the error object [`RpcError`] and its
//! [`ErrorCode`]). No I/O, no state machine, no method table: what a program needs that only
//! reads or writes ACP messages, or stores them. The connection machine that owns the
//! protocol's rules is `acp-proto`, which re-exports this crate (`acp_proto::types` is
//! [`v1`], `acp_proto::v2` holds `v2`'s types beside the v2 method table).
//!
//! The wire conventions (what a value re-encodes to, lenient decoding, unknown variants kept
//! for forwarding) are written down in [`v1`]'s docs; `v2` keeps them.
//!
//! ```
//! use acp_schema::v1::{ContentBlock, SessionUpdate};
//!
//! let update: SessionUpdate = serde_json::from_str(
//!     r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}"#,
//! )
//! .unwrap();
//! let SessionUpdate::AgentMessageChunk(chunk) = &update else { panic!("{update:?}") };
//! assert!(matches!(&chunk.content, ContentBlock::Text(t) if t.text == "hi"));
//! // An update of a kind this version does not know is kept whole, to log or forward.
//! let later: SessionUpdate = serde_json::from_str(r#"{"sessionUpdate":"hologram","depth":3}"#).unwrap();
//! assert!(matches!(later, SessionUpdate::Unknown(_)));
//! ```
//!
//! Features: `unstable` turns on every unstable type of the v1 schema (or one group at a
//! time, `unstable_session_fork`, …, named as upstream names them); `unstable_protocol_v2`
//! adds `v2`. Unstable types may change or go in any release, as upstream says of them.
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod error;
mod request_id;
pub mod v1;
#[cfg(feature = "unstable_protocol_v2")]
pub mod v2;

pub use error::{ErrorCode, RpcError};
pub use request_id::RequestId;
