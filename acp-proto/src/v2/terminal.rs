//! v2 terminals (agent-owned, reported by updates).
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); docs are the schema's own descriptions.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::manual::skip_invalid_items;
#[allow(unused_imports)]
use super::*;
#[allow(unused_imports)]
use crate::types::serde_ext::{
    lenient_nullable, lenient_nullable_items, lenient_object, lenient_object_default, null_as_default,
};
#[allow(unused_imports)]
use crate::types::serde_util::{lenient, lenient_default, lenient_items, lenient_vec, string_enum, tagged_union};
#[allow(unused_imports)]
use std::collections::BTreeMap;

/// Terminal-based authentication method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthMethodTerminal {
    /// Unique identifier for this authentication method.
    pub method_id: AuthMethodId,
    /// Human-readable name of the authentication method.
    pub name: String,
    /// Optional human-readable description of this authentication method.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Additional arguments to append to the configured Agent invocation for terminal auth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Additional environment variables to set on the configured Agent invocation for terminal auth. Names SHOULD be unique, and otherwise the last entry wins. These values override same-named variables in the base launch configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<EnvVariable>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Response from cancelling a terminal.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTerminalResponse {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A listed terminal running in the background.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundTerminal {
    /// The ID of the listed terminal.
    pub terminal_id: TerminalId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// An authoritative replacement snapshot of terminal output bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalOutput {
    /// Base64-encoded replacement terminal output bytes.
    pub data: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Exit information for an Agent-owned terminal.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalExitStatus {
    /// Process exit code as the platform reports it, when known. Negative values are allowed, for example signed Windows exit codes. Omitted and `null` are equivalent.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub exit_code: Option<i64>,
    /// Signal that terminated the process, when known.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub signal: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The size of an Agent-owned terminal in character cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalSize {
    /// Number of columns. At least 1.
    pub cols: u16,
    /// Number of rows. At least 1.
    pub rows: u16,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Client-initiated controls a terminal currently supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalCapabilities {
    /// Permits the Client to cancel this terminal with `terminal/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub cancel: Option<TerminalCancelCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Capability to cancel a terminal with `terminal/cancel`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalCancelCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// An upsert for the stored state of an Agent-owned terminal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalUpdate {
    /// Unique identifier for this terminal within the session.
    pub terminal_id: TerminalId,
    /// The command being run.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub command: Option<String>,
    /// The absolute working directory of the command.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub cwd: Option<AbsolutePath>,
    /// An authoritative replacement snapshot of terminal output bytes.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub output: Option<TerminalOutput>,
    /// Exit information. A concrete object marks the terminal as exited.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub exit_status: Option<TerminalExitStatus>,
    /// The terminal size the command runs with, when known.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub size: Option<TerminalSize>,
    /// Client-initiated controls this terminal currently supports, such as cancellation.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub capabilities: Option<TerminalCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A chunk of bytes appended to an Agent-owned terminal's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalOutputChunk {
    /// The terminal receiving these bytes.
    pub terminal_id: TerminalId,
    /// Independently base64-encoded terminal output bytes.
    pub data: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Capabilities for terminal authentication methods.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalAuthCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Request parameters for cancelling one terminal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTerminalRequest {
    /// The ID of the session that owns the terminal.
    pub session_id: SessionId,
    /// The ID of the terminal to cancel.
    pub terminal_id: TerminalId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}
