//! v2 tool calls and permission requests.
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

use super::*;
use crate::v1::serde_ext::lenient_object;
use crate::v1::serde_util::{lenient, lenient_vec, string_enum, tagged_union};

/// The v2 `RequestPermissionRequest` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPermissionRequest {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// The `title` field (required).
    pub title: String,
    /// The `description` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The `subject` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<RequestPermissionSubject>,
    /// The `options` field (required).
    pub options: Vec<PermissionOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl RequestPermissionRequest {
    /// A `RequestPermissionRequest` of its required fields (`session_id`, `title`, `options`); the optional ones are absent.
    pub fn new(
        session_id: impl Into<SessionId>,
        title: impl Into<String>,
        options: impl Into<Vec<PermissionOption>>,
    ) -> Self {
        RequestPermissionRequest {
            session_id: session_id.into(),
            title: title.into(),
            description: None,
            subject: None,
            options: options.into(),
            meta: None,
        }
    }
}

tagged_union! {
    /// The v2 `RequestPermissionSubject` union.
    pub enum RequestPermissionSubject, tag = "type", expecting = "a RequestPermissionSubject object" {
        /// `tool_call`.
        ToolCall(ToolCallPermissionSubject) = "tool_call",
        /// `command`.
        Command(CommandPermissionSubject) = "command",
    }
}

/// The v2 `ToolCallUpdate` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallUpdate {
    /// The `toolCallId` field (required).
    pub tool_call_id: ToolCallId,
    /// The `name` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub name: Option<String>,
    /// The `title` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// The `kind` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub kind: Option<ToolKind>,
    /// The `status` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub status: Option<ToolCallStatus>,
    /// The `content` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub content: Option<Vec<ToolCallContent>>,
    /// The `locations` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub locations: Option<Vec<ToolCallLocation>>,
    /// The `rawInput` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub raw_input: Option<serde_json::Value>,
    /// The `rawOutput` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub raw_output: Option<serde_json::Value>,
    /// The `capabilities` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub capabilities: Option<ToolCallCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ToolCallUpdate {
    /// A `ToolCallUpdate` of its required fields (`tool_call_id`); the optional ones are absent.
    pub fn new(tool_call_id: impl Into<ToolCallId>) -> Self {
        ToolCallUpdate {
            tool_call_id: tool_call_id.into(),
            name: None,
            title: None,
            kind: None,
            status: None,
            content: None,
            locations: None,
            raw_input: None,
            raw_output: None,
            capabilities: None,
            meta: None,
        }
    }
}

string_enum! {
    /// The v2 `ToolCallStatus` values.
    pub enum ToolCallStatus {
        /// `pending`.
        Pending = "pending",
        /// `in_progress`.
        InProgress = "in_progress",
        /// `paused`.
        Paused = "paused",
        /// `completed`.
        Completed = "completed",
        /// `failed`.
        Failed = "failed",
        /// `cancelled`.
        Cancelled = "cancelled",
    }
}

/// The v2 `ToolCallLocation` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallLocation {
    /// The `path` field (required).
    pub path: AbsolutePath,
    /// The `line` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub line: Option<u32>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ToolCallLocation {
    /// A `ToolCallLocation` of its required fields (`path`); the optional ones are absent.
    pub fn new(path: impl Into<AbsolutePath>) -> Self {
        ToolCallLocation { path: path.into(), line: None, meta: None }
    }
}

/// The v2 `ToolCallCapabilities` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallCapabilities {
    /// The `cancel` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub cancel: Option<ToolCallCancelCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `ToolCallCancelCapabilities` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallCancelCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `ToolCallPermissionSubject` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallPermissionSubject {
    /// The `toolCall` field (required).
    pub tool_call: ToolCallUpdate,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ToolCallPermissionSubject {
    /// A `ToolCallPermissionSubject` of its required fields (`tool_call`); the optional ones are absent.
    pub fn new(tool_call: impl Into<ToolCallUpdate>) -> Self {
        ToolCallPermissionSubject { tool_call: tool_call.into(), meta: None }
    }
}

/// The v2 `CommandPermissionSubject` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandPermissionSubject {
    /// The `command` field (required).
    pub command: String,
    /// The `cwd` field (required).
    pub cwd: AbsolutePath,
    /// The `toolCallId` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub tool_call_id: Option<ToolCallId>,
    /// The `terminalId` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub terminal_id: Option<TerminalId>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CommandPermissionSubject {
    /// A `CommandPermissionSubject` of its required fields (`command`, `cwd`); the optional ones are absent.
    pub fn new(command: impl Into<String>, cwd: impl Into<AbsolutePath>) -> Self {
        CommandPermissionSubject {
            command: command.into(),
            cwd: cwd.into(),
            tool_call_id: None,
            terminal_id: None,
            meta: None,
        }
    }
}

/// The v2 `CancelToolCallResponse` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelToolCallResponse {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `BackgroundToolCall` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundToolCall {
    /// The `toolCallId` field (required).
    pub tool_call_id: ToolCallId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl BackgroundToolCall {
    /// A `BackgroundToolCall` of its required fields (`tool_call_id`); the optional ones are absent.
    pub fn new(tool_call_id: impl Into<ToolCallId>) -> Self {
        BackgroundToolCall { tool_call_id: tool_call_id.into(), meta: None }
    }
}

/// The v2 `CancelToolCallRequest` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelToolCallRequest {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// The `toolCallId` field (required).
    pub tool_call_id: ToolCallId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CancelToolCallRequest {
    /// A `CancelToolCallRequest` of its required fields (`session_id`, `tool_call_id`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>, tool_call_id: impl Into<ToolCallId>) -> Self {
        CancelToolCallRequest { session_id: session_id.into(), tool_call_id: tool_call_id.into(), meta: None }
    }
}

/// The v2 `RequestPermissionResponse` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPermissionResponse {
    /// The `outcome` field (required).
    pub outcome: RequestPermissionOutcome,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl RequestPermissionResponse {
    /// A `RequestPermissionResponse` of its required fields (`outcome`); the optional ones are absent.
    pub fn new(outcome: impl Into<RequestPermissionOutcome>) -> Self {
        RequestPermissionResponse { outcome: outcome.into(), meta: None }
    }
}

tagged_union! {
    /// The v2 `RequestPermissionOutcome` union.
    pub enum RequestPermissionOutcome, tag = "outcome", expecting = "a RequestPermissionOutcome object" {
        /// `cancelled`.
        Cancelled(CancelledPermissionOutcome) = "cancelled",
        /// `selected`.
        Selected(SelectedPermissionOutcome) = "selected",
    }
}

/// The v2 `CancelledPermissionOutcome` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledPermissionOutcome {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}
