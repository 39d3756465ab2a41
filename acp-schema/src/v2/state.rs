//! v2 session state updates (the end of a turn is an `idle` state update).
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

use super::*;
use crate::v1::serde_util::{lenient, tagged_union};

tagged_union! {
    /// The v2 `BackgroundWork` union.
    pub enum BackgroundWork, tag = "type", expecting = "a BackgroundWork object" {
        /// `terminal`.
        Terminal(BackgroundTerminal) = "terminal",
        /// `tool_call`.
        ToolCall(BackgroundToolCall) = "tool_call",
        /// `subagent`.
        Subagent(BackgroundSubagent) = "subagent",
    }
}

/// The v2 `BackgroundSubagent` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundSubagent {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl BackgroundSubagent {
    /// A `BackgroundSubagent` of its required fields (`session_id`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        BackgroundSubagent { session_id: session_id.into(), meta: None }
    }
}

/// The v2 `RunningStateUpdate` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunningStateUpdate {
    /// The `background` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub background: Option<Vec<BackgroundWork>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `ErrorStopReason` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorStopReason {
    /// The `error` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub error: Option<Error>,
}

/// The v2 `RequiresActionStateUpdate` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequiresActionStateUpdate {
    /// The `background` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub background: Option<Vec<BackgroundWork>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `UnknownStateUpdate` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnknownStateUpdate {
    /// The `background` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub background: Option<Vec<BackgroundWork>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

tagged_union! {
    /// The v2 `StateUpdate` union.
    pub enum StateUpdate, tag = "state", expecting = "a StateUpdate object" {
        /// `running`.
        Running(RunningStateUpdate) = "running",
        /// `idle`.
        Idle(IdleStateUpdate) = "idle",
        /// `requires_action`.
        RequiresAction(RequiresActionStateUpdate) = "requires_action",
        /// `unknown`.
        UnknownState(UnknownStateUpdate) = "unknown",
    }
}
