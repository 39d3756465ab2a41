//! v2 plans.
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

use super::manual::skip_invalid_items;
use super::*;
use crate::v1::serde_util::{lenient, string_enum};

/// The v2 `PlanEntry` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanEntry {
    /// The `content` field (required).
    pub content: String,
    /// The `priority` field (required).
    pub priority: PlanEntryPriority,
    /// The `status` field (required).
    pub status: PlanEntryStatus,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PlanEntry {
    /// A `PlanEntry` of its required fields (`content`, `priority`, `status`); the optional ones are absent.
    pub fn new(
        content: impl Into<String>,
        priority: impl Into<PlanEntryPriority>,
        status: impl Into<PlanEntryStatus>,
    ) -> Self {
        PlanEntry { content: content.into(), priority: priority.into(), status: status.into(), meta: None }
    }
}

string_enum! {
    /// The v2 `PlanEntryStatus` values.
    pub enum PlanEntryStatus {
        /// `pending`.
        Pending = "pending",
        /// `in_progress`.
        InProgress = "in_progress",
        /// `completed`.
        Completed = "completed",
        /// `cancelled`.
        Cancelled = "cancelled",
    }
}

/// The v2 `PlanItems` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanItems {
    /// The `planId` field (required).
    pub plan_id: PlanId,
    /// The `entries` field (required).
    #[serde(deserialize_with = "skip_invalid_items")]
    pub entries: Vec<PlanEntry>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PlanItems {
    /// A `PlanItems` of its required fields (`plan_id`, `entries`); the optional ones are absent.
    pub fn new(plan_id: impl Into<PlanId>, entries: impl Into<Vec<PlanEntry>>) -> Self {
        PlanItems { plan_id: plan_id.into(), entries: entries.into(), meta: None }
    }
}

/// The v2 `PlanMarkdown` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanMarkdown {
    /// The `planId` field (required).
    pub plan_id: PlanId,
    /// The `content` field (required).
    pub content: String,
    /// The `path` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub path: Option<AbsolutePath>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PlanMarkdown {
    /// A `PlanMarkdown` of its required fields (`plan_id`, `content`); the optional ones are absent.
    pub fn new(plan_id: impl Into<PlanId>, content: impl Into<String>) -> Self {
        PlanMarkdown { plan_id: plan_id.into(), content: content.into(), path: None, meta: None }
    }
}

/// The v2 `PlanUpdate` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanUpdate {
    /// The `plan` field (required).
    pub plan: PlanUpdateContent,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PlanUpdate {
    /// A `PlanUpdate` of its required fields (`plan`); the optional ones are absent.
    pub fn new(plan: impl Into<PlanUpdateContent>) -> Self {
        PlanUpdate { plan: plan.into(), meta: None }
    }
}
