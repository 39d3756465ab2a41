//! ACP v2 (Preview, feature `unstable_protocol_v2`): the v2 method table ([`METHODS`], from
//! `acp-proto/methods/v2.toml`, expanded by `tools/acp-gen`), the unions [`Request`], [`Response`] and
//! [`Notification`] built from it, and every v2 schema type (re-exported from
//! `acp_schema::v2`, whose docs say which types are v1's, the wire conventions and how unknown
//! values are kept).
//!
//! v2 changes the turn model: `session/prompt` only acknowledges the prompt and the turn
//! ends with a `state_update` session update whose state is `idle`; updates are upserts
//! keyed by id (`tool_call_update`, `terminal_update`, …); `authenticate`/`logout` become
//! `auth/login`/`auth/logout`; `session/load`, `session/set_mode`, `fs/*` and
//! `terminal/*` (client-side terminals) are gone; `tool_call/cancel` and
//! `terminal/cancel` are new. See `spec/v2.0.0-alpha.3/docs/migration.mdx`.
//!
//! [`Request`], [`Response`] and [`Notification`] are what a [`crate::Connection`] that
//! negotiated v2 sends and delivers (see the connection's [`turns_v2`](crate::connection::turns_v2)
//! for the v2 rules it keeps). Unstable: it follows the v2 Preview and may change in any release.
//!
//! ```
//! use acp_proto::v2::{Method, PromptRequest, Request};
//! let prompt: PromptRequest = serde_json::from_str(r#"{"sessionId":"s1","prompt":[]}"#).unwrap();
//! let request: Request = prompt.into();
//! assert_eq!(request.method(), Some(Method::Prompt));
//! assert_eq!(Method::Prompt.wire(), "session/prompt");
//! ```

#[cfg(feature = "test-exports")]
#[doc(hidden)]
pub mod envelope;
#[cfg(all(test, not(feature = "test-exports")))]
#[allow(unreachable_pub, dead_code)]
mod envelope;
mod generated;
mod methods;
#[cfg(test)]
mod table_tests;
mod wrappers;

/// The extension messages, as v1's (one vocabulary): the schema's `ExtRequest`,
/// `ExtNotification` and `ExtResponse` (any JSON) with the method they go with.
pub use crate::ext::{ExtNotification, ExtRequest, ExtResponse};
pub use acp_schema::v2::*;
pub use generated::*;
pub use methods::*;
pub use wrappers::{Call, Notification, Request, Response};
