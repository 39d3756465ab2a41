//! Live session updates that are not history: user-facing notices (`notice`, needs the
//! client's `session.notices`) and context compactions (`compaction_update`,
//! `compaction_summary_chunk`, need `session.compaction`).

use serde::{Deserialize, Serialize};

use super::content::ContentBlock;
use super::ids::CompactionId;
use super::serde_ext::{lenient_nullable, lenient_nullable_items};
use super::serde_util::{Meta, lenient};

/// Fire-and-forget information for the user (a `notice` session update).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notice {
    /// How prominently to show it.
    pub severity: NoticeSeverity,
    /// A non-empty plain-text title that can stand alone.
    pub title: String,
    /// Optional plain-text detail.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Notice {
    /// A notice with a title and no description.
    pub fn new(severity: NoticeSeverity, title: impl Into<String>) -> Self {
        Notice { severity, title: title.into(), description: None, meta: None }
    }
}

crate::v1::serde_util::string_enum! {
    /// The presentation severity of a [`Notice`].
    pub enum NoticeSeverity {
        /// Informational.
        Info = "info",
        /// A warning.
        Warning = "warning",
        /// An error.
        Error = "error",
    }
}

crate::v1::serde_util::string_enum! {
    /// Where a context compaction stands.
    pub enum CompactionStatus {
        /// Running.
        InProgress = "in_progress",
        /// Done.
        Completed = "completed",
        /// Failed (see the update's `error`).
        Failed = "failed",
        /// Cancelled.
        Cancelled = "cancelled",
    }
}

/// A context compaction upsert (a `compaction_update` session update). The first update for
/// an id fixes its place in the timeline; later ones patch it.
///
/// `summary` and `error` are patches: `None` leaves the value unchanged (key absent),
/// `Some(None)` clears it (`null`), `Some(Some(v))` replaces it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionUpdate {
    /// The compaction, unique within the session.
    pub compaction_id: CompactionId,
    /// Its status.
    pub status: CompactionStatus,
    /// The complete summary for the user (malformed blocks are dropped; `[]` also clears).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable_items")]
    pub summary: Option<Option<Vec<ContentBlock>>>,
    /// Error details.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub error: Option<Option<String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CompactionUpdate {
    /// A status change that patches nothing else.
    pub fn new(compaction_id: impl Into<CompactionId>, status: CompactionStatus) -> Self {
        CompactionUpdate { compaction_id: compaction_id.into(), status, summary: None, error: None, meta: None }
    }
}

/// A streamed piece of a compaction's summary (a `compaction_summary_chunk` session update).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryChunk {
    /// The compaction.
    pub compaction_id: CompactionId,
    /// The block appended to the summary.
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CompactionSummaryChunk {
    /// A chunk of `compaction_id`'s summary.
    pub fn new(compaction_id: impl Into<CompactionId>, content: ContentBlock) -> Self {
        CompactionSummaryChunk { compaction_id: compaction_id.into(), content, meta: None }
    }
}
