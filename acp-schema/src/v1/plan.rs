//! ID-addressed plans (`plan_update`, `plan_removed` session updates): a session may hold
//! several plans, each replaced whole by its updates. Sent only to a client that advertised
//! `clientCapabilities.plan`; the older whole-plan `plan` update is [`Plan`](super::Plan).

use serde::{Deserialize, Serialize};

use super::ids::PlanId;
use super::serde_util::{Meta, lenient, lenient_items};
use super::updates::PlanEntry;

/// A plan's new content (a `plan_update` session update).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanUpdate {
    /// Replaces the whole plan with this id, even if its kind changes.
    pub plan: PlanUpdateContent,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PlanUpdate {
    /// An update to `plan`.
    pub fn new(plan: PlanUpdateContent) -> Self {
        PlanUpdate { plan, meta: None }
    }

    /// A plan of steps.
    pub fn items(plan_id: impl Into<PlanId>, entries: Vec<PlanEntry>) -> Self {
        Self::new(PlanUpdateContent::Items(PlanItems { plan_id: plan_id.into(), entries, meta: None }))
    }

    /// A plan written as Markdown.
    pub fn markdown(plan_id: impl Into<PlanId>, content: impl Into<String>) -> Self {
        let plan = PlanMarkdown { plan_id: plan_id.into(), content: content.into(), path: None, meta: None };
        Self::new(PlanUpdateContent::Markdown(plan))
    }

    /// The id of the plan this update replaces, if its kind is known.
    pub fn plan_id(&self) -> Option<&PlanId> {
        match &self.plan {
            PlanUpdateContent::Items(p) => Some(&p.plan_id),
            PlanUpdateContent::Markdown(p) => Some(&p.plan_id),
            PlanUpdateContent::Unknown(_) => None,
        }
    }
}

crate::v1::serde_util::tagged_union! {
    /// The content of a plan, discriminated by `type`.
    pub enum PlanUpdateContent, tag = "type", expecting = "a plan content object" {
        /// A list of steps.
        Items(PlanItems) = "items",
        /// Free-form Markdown.
        Markdown(PlanMarkdown) = "markdown",
    }
}

/// A plan made of steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanItems {
    /// The plan's id.
    pub plan_id: PlanId,
    /// The steps, in order. Malformed entries are dropped.
    #[serde(default, deserialize_with = "lenient_items")]
    pub entries: Vec<PlanEntry>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A plan written as Markdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanMarkdown {
    /// The plan's id.
    pub plan_id: PlanId,
    /// The Markdown text.
    pub content: String,
    /// A file the plan is stored in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub path: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A plan was removed (a `plan_removed` session update); clients ignore unknown ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanRemoved {
    /// The removed plan.
    pub plan_id: PlanId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PlanRemoved {
    /// `plan_id` was removed.
    pub fn new(plan_id: impl Into<PlanId>) -> Self {
        PlanRemoved { plan_id: plan_id.into(), meta: None }
    }
}
