//! ACP v2 (Preview): every definition of `spec/crate-1.20.0/v2/schema.json` (215 `$defs`),
//! behind the cargo feature `unstable_protocol_v2`. The v2 method table and its
//! `Request`/`Response`/`Notification` unions are acp-proto's (`acp_proto::v2`, which
//! re-exports every type of this module).
//!
//! v2 changes the turn model: `session/prompt` only acknowledges the prompt and the turn
//! ends with a `state_update` session update whose state is `idle`; updates are upserts
//! keyed by id (`tool_call_update`, `terminal_update`, …); `authenticate`/`logout` become
//! `auth/login`/`auth/logout`; `session/load`, `session/set_mode`, `fs/*` and
//! `terminal/*` (client-side terminals) are gone; `tool_call/cancel` and
//! `terminal/cancel` are new. See `spec/v2.0.0-alpha.3/docs/migration.mdx`.
//!
//! Unstable: it follows the v2 Preview and may change in any release.
//!
//! # Which types are v1's
//!
//! A v2 definition that is the same on the wire as the v1 one is the v1 type, re-exported here
//! (58 of them, plus [`RequestId`] and [`ErrorCode`]): same properties, requiredness,
//! markers and types, transitively through every definition it references. Descriptions,
//! titles, v2's `x-scope`/`x-state` annotations and value bounds (`minimum`, `minItems`,
//! …) are not compared: the v1 types do not check bounds either. An enum v1 spells as a
//! closed `oneOf` of constants and v2 as an open `anyOf` with a string fallback counts as
//! the same, because the v1 types already keep unknown values (`Unknown(String)`), and
//! so does a tagged union v1 spells as a `oneOf` with a discriminator and v2 as an `anyOf`
//! with an `other` branch (the v1 types keep an `Unknown(UnknownVariant)`). Every other
//! definition is a type of this module; most are generated from the schema by
//! `tools/acp-gen` (`cargo run -p acp-gen`), the rest are in `manual.rs`.
//!
//! # Wire conventions
//!
//! Those of [`crate::v1`] (null, defaults, numbers, unknown keys, lenient decoding, key
//! order), with the v1 patch fields where `null` means "clear" (`SessionInfoUpdate.title`,
//! …) kept as `Option<Option<T>>`.
//!
//! # Extensions and future values
//!
//! v2 makes every enum and tagged union open (`extensibility.mdx`, "Enum and Tagged-Union
//! Variants"): a value that begins with `_` is an implementation-specific extension, any
//! other unknown value is reserved for a future ACP version. Every open enum and union of this
//! module keeps an unknown value (`Unknown`) and re-encodes it unchanged, as v2 asks of
//! receivers that store or forward; [`OpenValue`] tells the two kinds apart:
//!
//! ```
//! use acp_schema::v2::{OpenValue, ToolCallStatus, UnknownKind};
//! let s: ToolCallStatus = serde_json::from_str(r#""_acme_queued""#).unwrap();
//! assert_eq!(s.unknown_kind(), Some(UnknownKind::Extension));
//! let s: ToolCallStatus = serde_json::from_str(r#""archived""#).unwrap();
//! assert_eq!(s.unknown_kind(), Some(UnknownKind::Future));
//! assert_eq!(serde_json::to_string(&s).unwrap(), r#""archived""#);
//! assert_eq!(ToolCallStatus::Paused.unknown_kind(), None);
//! ```

//! # Building values
//!
//! Every struct with required fields has a `new` of those fields (each `impl Into<…>`), the
//! optional ones absent; set those with struct update syntax. What this builds encodes as the
//! smallest valid object:
//!
//! ```
//! use acp_schema::v2::{SessionUpdate, ToolCallStatus, ToolCallUpdate};
//! let update = SessionUpdate::ToolCallUpdate(ToolCallUpdate {
//!     status: Some(ToolCallStatus::InProgress),
//!     ..ToolCallUpdate::new("call-1")
//! });
//! assert_eq!(
//!     serde_json::to_string(&update).unwrap(),
//!     r#"{"sessionUpdate":"tool_call_update","toolCallId":"call-1","status":"in_progress"}"#,
//! );
//! ```

mod auth;
mod capabilities;
mod content;
mod diff;
mod elicitation;
mod manual;
mod open;
mod plan;
mod session;
mod state;
mod terminal;
#[cfg(test)]
mod tests;
mod tool_call;
mod updates;

/// The v2 definitions that are the v1 ones on the wire (see the module docs).
pub use crate::v1::{
    Annotations, AuthMethodId, BooleanPropertySchema, CloseSessionRequest, CloseSessionResponse, CompactionId,
    CompactionStatus, CompleteElicitationNotification, Cost, DeleteSessionRequest, DeleteSessionResponse,
    ElicitationCapabilities, ElicitationFormCapabilities, ElicitationId, ElicitationSchemaType,
    ElicitationUrlCapabilities, EnumOption, EnvVariable, HttpHeader, Implementation, IntegerPropertySchema, MessageId,
    Notice, NoticeSeverity, NumberPropertySchema, PermissionOption, PermissionOptionId, PermissionOptionKind,
    PlanEntryPriority, PlanId, PlanRemoved, ProtocolVersion, Role, SelectedPermissionOutcome,
    SessionAdditionalDirectoriesCapabilities, SessionCancelCapabilities, SessionConfigBoolean, SessionConfigGroupId,
    SessionConfigId, SessionConfigOptionCategory, SessionConfigSelectOption, SessionConfigValueId,
    SessionDeleteCapabilities, SessionId, SessionReference, SessionSystemPromptCapabilities,
    SessionSystemPromptModeCapabilities, SessionSystemPromptOverrideCapabilities, StringFormat, StringMultiSelectItems,
    SubagentSessionCapabilities, SystemPromptMode, Terminal, TerminalId, TextContent, ToolCallId, ToolKind,
    UsageUpdate,
};
pub use crate::v1::{Meta, UnknownVariant};

pub use auth::*;
pub use capabilities::*;
pub use content::*;
pub use diff::*;
pub use elicitation::*;
pub use manual::*;
pub use open::*;
pub use plan::*;
pub use session::*;
pub use state::*;
pub use terminal::*;
pub use tool_call::*;
pub use updates::*;
