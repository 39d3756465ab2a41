//! v2 session state updates (the end of a turn is an `idle` state update).
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

tagged_union! {
    /// One piece of work running independently of the session's foreground work.
    pub enum BackgroundWork, tag = "type", expecting = "a BackgroundWork object" {
        /// A process that keeps running after its tool call returned control to the model. Live until its `terminal_update` reports `exitStatus`.
        Terminal(BackgroundTerminal) = "terminal",
        /// Work started by a tool call that continues without a process of its own, such as a watcher, a workflow, or a scheduled wakeup. `pending` and `paused` tool calls stay listed.
        ToolCall(BackgroundToolCall) = "tool_call",
        /// A detached subagent session that has anything running: its state is not `idle`, or its own `background` list is non-empty or not reported.
        Subagent(BackgroundSubagent) = "subagent",
    }
}

/// A listed subagent session associated with this session through `subagent_update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundSubagent {
    /// The ID of the listed session.
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Foreground work is in progress.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunningStateUpdate {
    /// Work running independently of foreground work, as a complete snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub background: Option<Vec<BackgroundWork>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Details of a failure that ended active work.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorStopReason {
    /// The failure, as a JSON-RPC error object.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub error: Option<Error>,
}

/// The foreground workflow as a whole is blocked on user action.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequiresActionStateUpdate {
    /// Work running independently of foreground work, as a complete snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub background: Option<Vec<BackgroundWork>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The Agent cannot currently determine foreground activity.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnknownStateUpdate {
    /// Work running independently of foreground work, as a complete snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub background: Option<Vec<BackgroundWork>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

tagged_union! {
    /// A snapshot of the session's aggregate foreground activity.
    pub enum StateUpdate, tag = "state", expecting = "a StateUpdate object" {
        /// Foreground work is in progress.
        Running(RunningStateUpdate) = "running",
        /// No foreground work is active. Background activity may continue.
        Idle(IdleStateUpdate) = "idle",
        /// Foreground work is blocked on user action.
        RequiresAction(RequiresActionStateUpdate) = "requires_action",
        /// The Agent cannot currently determine foreground activity. This replaces previously confirmed activity without ending the work or session.
        UnknownState(UnknownStateUpdate) = "unknown",
    }
}
