//! v2 terminals (agent-owned, reported by updates).
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

use super::*;
use crate::v1::serde_ext::lenient_object;
use crate::v1::serde_util::lenient;

/// The v2 `AuthMethodTerminal` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthMethodTerminal {
    /// The `methodId` field (required).
    pub method_id: AuthMethodId,
    /// The `name` field (required).
    pub name: String,
    /// The `description` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The `args` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// The `env` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<EnvVariable>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AuthMethodTerminal {
    /// A `AuthMethodTerminal` of its required fields (`method_id`, `name`); the optional ones are absent.
    pub fn new(method_id: impl Into<AuthMethodId>, name: impl Into<String>) -> Self {
        AuthMethodTerminal {
            method_id: method_id.into(),
            name: name.into(),
            description: None,
            args: None,
            env: None,
            meta: None,
        }
    }
}

/// The v2 `CancelTerminalResponse` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTerminalResponse {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `BackgroundTerminal` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundTerminal {
    /// The `terminalId` field (required).
    pub terminal_id: TerminalId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl BackgroundTerminal {
    /// A `BackgroundTerminal` of its required fields (`terminal_id`); the optional ones are absent.
    pub fn new(terminal_id: impl Into<TerminalId>) -> Self {
        BackgroundTerminal { terminal_id: terminal_id.into(), meta: None }
    }
}

/// The v2 `TerminalOutput` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalOutput {
    /// The `data` field (required).
    pub data: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl TerminalOutput {
    /// A `TerminalOutput` of its required fields (`data`); the optional ones are absent.
    pub fn new(data: impl Into<String>) -> Self {
        TerminalOutput { data: data.into(), meta: None }
    }
}

/// The v2 `TerminalExitStatus` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalExitStatus {
    /// The `exitCode` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub exit_code: Option<i64>,
    /// The `signal` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub signal: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `TerminalSize` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalSize {
    /// The `cols` field (required).
    pub cols: u16,
    /// The `rows` field (required).
    pub rows: u16,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl TerminalSize {
    /// A `TerminalSize` of its required fields (`cols`, `rows`); the optional ones are absent.
    pub fn new(cols: impl Into<u16>, rows: impl Into<u16>) -> Self {
        TerminalSize { cols: cols.into(), rows: rows.into(), meta: None }
    }
}

/// The v2 `TerminalCapabilities` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalCapabilities {
    /// The `cancel` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub cancel: Option<TerminalCancelCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `TerminalCancelCapabilities` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalCancelCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `TerminalUpdate` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalUpdate {
    /// The `terminalId` field (required).
    pub terminal_id: TerminalId,
    /// The `command` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub command: Option<String>,
    /// The `cwd` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub cwd: Option<AbsolutePath>,
    /// The `output` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub output: Option<TerminalOutput>,
    /// The `exitStatus` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub exit_status: Option<TerminalExitStatus>,
    /// The `size` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub size: Option<TerminalSize>,
    /// The `capabilities` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub capabilities: Option<TerminalCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl TerminalUpdate {
    /// A `TerminalUpdate` of its required fields (`terminal_id`); the optional ones are absent.
    pub fn new(terminal_id: impl Into<TerminalId>) -> Self {
        TerminalUpdate {
            terminal_id: terminal_id.into(),
            command: None,
            cwd: None,
            output: None,
            exit_status: None,
            size: None,
            capabilities: None,
            meta: None,
        }
    }
}

/// The v2 `TerminalOutputChunk` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalOutputChunk {
    /// The `terminalId` field (required).
    pub terminal_id: TerminalId,
    /// The `data` field (required).
    pub data: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl TerminalOutputChunk {
    /// A `TerminalOutputChunk` of its required fields (`terminal_id`, `data`); the optional ones are absent.
    pub fn new(terminal_id: impl Into<TerminalId>, data: impl Into<String>) -> Self {
        TerminalOutputChunk { terminal_id: terminal_id.into(), data: data.into(), meta: None }
    }
}

/// The v2 `TerminalAuthCapabilities` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalAuthCapabilities {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `CancelTerminalRequest` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTerminalRequest {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// The `terminalId` field (required).
    pub terminal_id: TerminalId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CancelTerminalRequest {
    /// A `CancelTerminalRequest` of its required fields (`session_id`, `terminal_id`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>, terminal_id: impl Into<TerminalId>) -> Self {
        CancelTerminalRequest { session_id: session_id.into(), terminal_id: terminal_id.into(), meta: None }
    }
}
