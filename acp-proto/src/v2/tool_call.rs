//! v2 tool calls and permission requests.
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

/// Request for user permission to proceed with an operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPermissionRequest {
    /// The session ID for this request.
    pub session_id: SessionId,
    /// Human-readable title for the permission prompt.
    pub title: String,
    /// Optional human-readable explanation of why permission is needed.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Optional structured context about the operation requiring permission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<RequestPermissionSubject>,
    /// Available permission options for the user to choose from. Must contain at least one option.
    pub options: Vec<PermissionOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

tagged_union! {
    /// The operation requiring permission.
    pub enum RequestPermissionSubject, tag = "type", expecting = "a RequestPermissionSubject object" {
        /// Permission is requested before executing a tool call.
        ToolCall(ToolCallPermissionSubject) = "tool_call",
        /// Permission is requested before running a command.
        Command(CommandPermissionSubject) = "command",
    }
}

/// Represents an upsert for a tool call that the language model has requested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallUpdate {
    /// Unique identifier for this tool call within the session.
    pub tool_call_id: ToolCallId,
    /// Programmatic name of the tool being invoked.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub name: Option<String>,
    /// Human-readable plain-text title describing what the tool is doing.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// The category of tool being invoked. Helps Clients choose appropriate icons and UI treatment.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub kind: Option<ToolKind>,
    /// Current execution status of the tool call.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub status: Option<ToolCallStatus>,
    /// Content produced by the tool call.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub content: Option<Vec<ToolCallContent>>,
    /// File locations affected by this tool call. Enables "follow-along" features in Clients.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub locations: Option<Vec<ToolCallLocation>>,
    /// Raw input parameters sent to the tool.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub raw_input: Option<serde_json::Value>,
    /// Raw output returned by the tool.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub raw_output: Option<serde_json::Value>,
    /// Client-initiated controls this tool call currently supports, such as cancellation.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub capabilities: Option<ToolCallCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

string_enum! {
    /// Execution status of a tool call.
    pub enum ToolCallStatus {
        /// The tool call hasn't started running yet, for example because its input is streaming, it is awaiting approval, or it is scheduled to run later.
        Pending = "pending",
        /// The tool call is currently running.
        InProgress = "in_progress",
        /// The tool call has started, is not running now, and will not continue until something resumes it. It may return to `in_progress` any number of times.
        Paused = "paused",
        /// The tool call completed successfully.
        Completed = "completed",
        /// The tool call failed with an error.
        Failed = "failed",
        /// The tool call was cancelled before it completed.
        Cancelled = "cancelled",
    }
}

/// A file location being accessed or modified by a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallLocation {
    /// The absolute file path being accessed or modified.
    pub path: AbsolutePath,
    /// Optional 1-based line number within the file. Omitted and `null` are equivalent and mean no specific line. `0` is invalid.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub line: Option<u32>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Client-initiated controls a tool call currently supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallCapabilities {
    /// Permits the Client to cancel this tool call with `tool_call/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub cancel: Option<ToolCallCancelCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Capability to cancel a tool call with `tool_call/cancel`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallCancelCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Permission request details for a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallPermissionSubject {
    /// Details about the tool call requiring permission.
    pub tool_call: ToolCallUpdate,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Permission request details for a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandPermissionSubject {
    /// The command that would be run if permission is granted.
    pub command: String,
    /// The absolute working directory for the command.
    pub cwd: AbsolutePath,
    /// The associated tool call, when known. Omitted and `null` are equivalent.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub tool_call_id: Option<ToolCallId>,
    /// The associated terminal, when already known. Omitted and `null` are equivalent.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub terminal_id: Option<TerminalId>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Response from cancelling a tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelToolCallResponse {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A listed tool call whose work continues in the background.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundToolCall {
    /// The ID of the listed tool call.
    pub tool_call_id: ToolCallId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Request parameters for cancelling one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelToolCallRequest {
    /// The ID of the session that owns the tool call.
    pub session_id: SessionId,
    /// The ID of the tool call to cancel.
    pub tool_call_id: ToolCallId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Response to a permission request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPermissionResponse {
    /// The user's decision on the permission request.
    pub outcome: RequestPermissionOutcome,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

tagged_union! {
    /// The outcome of a permission request.
    pub enum RequestPermissionOutcome, tag = "outcome", expecting = "a RequestPermissionOutcome object" {
        /// The request was not approved and no option was selected: the session's work was cancelled, the user dismissed the prompt, or the Client declined it by policy. Agents MUST NOT proceed with the operation.
        Cancelled(CancelledPermissionOutcome) = "cancelled",
        /// The user selected an option. Selection is not approval by itself.
        Selected(SelectedPermissionOutcome) = "selected",
    }
}

/// The request was not approved and no option was selected.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledPermissionOutcome {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}
