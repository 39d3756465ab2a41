//! Serde types for every definition of the pinned ACP v1 JSON schema (`spec/crate-1.20.0/v1`:
//! the schema of the official crate `agent-client-protocol-schema` 1.20.0, a superset of the
//! official release 1.21.0).
//!
//! Each schema definition is a public type of the same name, re-exported here. The JSON-RPC
//! envelope types (`RequestId`, `Error`, the per-side request/response/notification unions,
//! the extension messages) live elsewhere in the crate.
//!
//! # Wire fidelity
//!
//! Every value of these types encodes to JSON that validates against its schema definition.
//! Every schema-valid instance decodes, and re-encodes to the same JSON value up to these
//! normalizations:
//!
//! * (a) An optional property whose value is `null` decodes as absent (`None`) and is left
//!   out when encoding. Exception: the patch fields where `null` means "clear", which are
//!   `Option<Option<T>>` and keep `null`: `SessionInfoUpdate.title` and `.updatedAt`,
//!   `CompactionUpdate.summary` and `.error`, `SubagentUpdate.title`, `.description`,
//!   `.capabilities`, `.state`, `.cwd` and `.additionalDirectories`, and
//!   `SessionMessage.senderSessionId`, `.recipientSessionId`, `.senderMessageId`,
//!   `.recipientMessageId` and `.content`. A required array the schema marks
//!   `x-deserialize-default-on-null` (`McpServerHttp.headers`, `McpServerStdio.args`, …)
//!   decodes `null` as `[]`.
//! * (b) A property whose value equals its schema `default` may be added or removed. Flags and
//!   capability objects with a default are always written (`"loadSession": false`,
//!   `"sessionCapabilities": {}`), and so is `InitializeResponse.authMethods`, `[]` included.
//! * (c) Numbers compare by value: an integer in a `double` field (`Annotations.priority`,
//!   `Cost.amount`) re-encodes as a float (`1` becomes `1.0`).
//! * (d) Unknown object keys are dropped, except inside `_meta`, inside free-form JSON fields
//!   (`ToolCall.rawInput`/`rawOutput` and the same in `ToolCallUpdate`, which are
//!   `serde_json::Value`), inside unknown variants (see below), and in `IdleStateUpdate`,
//!   whose unknown stop reasons may carry any keys (kept in its `extra`).
//! * (e) Special cases:
//!   * `McpServer`: the stdio variant has no `type` on the wire and is encoded without one.
//!     The schema's stdio branch does not constrain `type`, so an object with no `type`,
//!     `"type": "stdio"` or a non-string `type` decodes as stdio, and so does an `http`/`sse`
//!     object that is only valid as a stdio server; that `type` key is dropped.
//!   * `AuthMethod`: an explicit `"type": "agent"` is accepted and dropped.
//!   * `MultiSelectItems`: labelled items have no `type`; a non-string `type` counts as none.
//!   * `ElicitationScope` (the scope part of an elicitation): an object with a `sessionId` is a
//!     session scope, otherwise a request scope.
//!   * `ElicitationSchema.type` and `.properties` are always written (`"object"`, `{}`).
//!   * `SetSessionConfigOptionRequest`: a string `value` is a value id whatever `type` says
//!     (the schema's `value_id` branch allows any `type`); the `type` key is then dropped. A
//!     boolean `value` is always encoded with `"type": "boolean"`.
//!   * Untagged unions pick their variant by shape: `EmbeddedResourceResource` is text when
//!     it decodes as text (it has a valid `text`), otherwise blob; `SessionConfigSelectOptions`
//!     is flat when every item decodes as a plain value (so `[]` is flat), otherwise grouped.
//!     Keys of the branch not taken are dropped as unknown.
//!   * `SessionConfigOption` with an unknown `type`: the common fields (`id`, `name`,
//!     `description`, `category`, `_meta`) decode as usual and the rest is kept in
//!     [`SessionConfigKind::Unknown`].
//!   * `f64` fields (`Cost.amount`, `Annotations.priority`) must hold finite numbers: JSON
//!     has no NaN or infinity, and serde_json writes them as `null`.
//!   * Key order: encoding follows the schema's property order, with the discriminator
//!     first in tagged unions. Decoding accepts any order.
//!
//! * (f) Integers must be written as JSON integers. A schema `integer` written with a fraction
//!   or an exponent (`1.0`, `1e0`) is refused in a strict field and dropped in a lenient one;
//!   likewise a request id with a fraction is not an id (`-32600`). Every SDK writes integers
//!   as integers.
//!
//! # Lenient decoding
//!
//! Fields the schema marks `x-deserialize-default-on-error` decode a malformed value as their
//! default (`None`, `false`, an empty capability object) instead of failing the message; arrays
//! marked `x-deserialize-skip-invalid-items` drop the items that do not decode. A malformed
//! `_meta` is dropped. Capability objects must be JSON objects: anything else (an array
//! included, which serde would otherwise accept for a struct) counts as "not supported".
//! Other fields are strict.
//!
//! # Forward compatibility
//!
//! Discriminated unions (`ContentBlock`, `ToolCallContent`, `SessionUpdate`,
//! `RequestPermissionOutcome`, `McpServer`, `AuthMethod` when its `type` is neither `agent` nor
//! `terminal`, `ElicitationMode`, `ElicitationAction`, `ElicitationPropertySchema`,
//! `MultiSelectItems`, `PlanUpdateContent`, `StateUpdate`)
//! decode an unknown discriminator value into an `Unknown(UnknownVariant)` variant holding the
//! whole JSON object, discriminator included: decoding does not fail, and the variant
//! re-encodes to the same object, so it can be logged or forwarded. For `SessionConfigOption`
//! the unknown part is [`SessionConfigKind::Unknown`], which holds every key except the common
//! fields. String enums (`StopReason`, `ToolKind`, …) keep an unknown value as
//! `Unknown(String)`. All these enums are `#[non_exhaustive]`.

pub mod serde_util;

pub(crate) mod serde_ext;

#[cfg(feature = "unstable_auth_status")]
pub mod auth_status;
pub mod capabilities;
pub mod config;
pub mod content;
pub mod elicitation;
pub mod elicitation_schema;
pub mod fs;
pub mod ids;
pub mod initialize;
pub mod mcp;
#[cfg(feature = "unstable_mcp_over_acp")]
pub mod mcp_over_acp;
pub mod notice;
pub mod permission;
pub mod plan;
pub mod prompt;
#[cfg(feature = "unstable_prompt_suggestions")]
pub mod prompt_suggestions;
#[cfg(feature = "unstable_llm_providers")]
pub mod providers;
#[cfg(feature = "unstable_proxy_chains")]
pub mod proxy_chains;
pub mod session;
#[cfg(feature = "unstable_session_cursors")]
pub mod session_cursors;
#[cfg(feature = "unstable_session_fork")]
pub mod session_fork;
pub mod session_options;
pub mod session_unstable;
pub mod subagent;
pub mod system_prompt;
pub mod terminal;
pub mod token_usage;
pub mod tool_call;
pub mod updates;

#[cfg(test)]
mod unstable_fields;

pub use serde_util::{Meta, UnknownVariant};

#[cfg(feature = "unstable_auth_status")]
pub use auth_status::*;
pub use capabilities::*;
pub use config::*;
pub use content::*;
pub use elicitation::*;
pub use elicitation_schema::*;
pub use fs::*;
pub use ids::*;
pub use initialize::*;
pub use mcp::*;
#[cfg(feature = "unstable_mcp_over_acp")]
pub use mcp_over_acp::*;
pub use notice::*;
pub use permission::*;
pub use plan::*;
pub use prompt::*;
#[cfg(feature = "unstable_prompt_suggestions")]
pub use prompt_suggestions::*;
#[cfg(feature = "unstable_llm_providers")]
pub use providers::*;
#[cfg(feature = "unstable_proxy_chains")]
pub use proxy_chains::*;
pub use session::*;
#[cfg(feature = "unstable_session_cursors")]
pub use session_cursors::*;
#[cfg(feature = "unstable_session_fork")]
pub use session_fork::*;
pub use session_options::*;
pub use session_unstable::*;
pub use subagent::*;
pub use system_prompt::*;
pub use terminal::*;
pub use token_usage::*;
pub use tool_call::*;
pub use updates::*;
