//! `session/update`: what the agent streams to the client during a session (message chunks,
//! tool calls, plans, commands, mode and config changes, session info, usage, and the opt-in
//! kinds: ID-addressed plans, notices, compactions, subagents and inter-session messages).

use serde::{Deserialize, Serialize};

use super::config::SessionConfigOption;
use super::content::ContentBlock;
use super::ids::{MessageId, SessionId, SessionModeId};
use super::notice::{CompactionSummaryChunk, CompactionUpdate, Notice};
use super::plan::{PlanRemoved, PlanUpdate};
use super::serde_ext::lenient_nullable;
use super::serde_util::{Meta, lenient, lenient_items};
use super::subagent::{SessionMessage, SessionMessageChunk, SubagentUpdate};
use super::tool_call::{ToolCall, ToolCallUpdate};

/// Parameters of the `session/update` notification (agent to client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionNotification {
    /// The session the update is about.
    pub session_id: SessionId,
    /// The update.
    pub update: SessionUpdate,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionNotification {
    /// An update about `session_id`.
    pub fn new(session_id: impl Into<SessionId>, update: SessionUpdate) -> Self {
        SessionNotification { session_id: session_id.into(), update, meta: None }
    }
}

crate::v1::serde_util::tagged_union! {
    /// One session update, discriminated by `sessionUpdate`.
    pub enum SessionUpdate, tag = "sessionUpdate", expecting = "a session update object" {
        /// A piece of the user's message (e.g. replayed by `session/load`).
        UserMessageChunk(ContentChunk) = "user_message_chunk",
        /// A piece of the agent's reply.
        AgentMessageChunk(ContentChunk) = "agent_message_chunk",
        /// A piece of the agent's reasoning.
        AgentThoughtChunk(ContentChunk) = "agent_thought_chunk",
        /// A new tool call.
        ToolCall(ToolCall) = "tool_call",
        /// A change to an existing tool call.
        ToolCallUpdate(ToolCallUpdate) = "tool_call_update",
        /// The agent's current plan, in full.
        Plan(Plan) = "plan",
        /// One of the session's ID-addressed plans, replaced whole (needs the client's `plan`).
        PlanUpdate(PlanUpdate) = "plan_update",
        /// An ID-addressed plan was removed (needs the client's `plan`).
        PlanRemoved(PlanRemoved) = "plan_removed",
        /// The slash commands available now, in full.
        AvailableCommandsUpdate(AvailableCommandsUpdate) = "available_commands_update",
        /// The session switched modes.
        CurrentModeUpdate(CurrentModeUpdate) = "current_mode_update",
        /// The configuration options changed.
        ConfigOptionUpdate(ConfigOptionUpdate) = "config_option_update",
        /// The session's title or activity time changed.
        SessionInfoUpdate(SessionInfoUpdate) = "session_info_update",
        /// How much of the context window (and money) the session uses.
        UsageUpdate(UsageUpdate) = "usage_update",
        /// Fire-and-forget information for the user (needs the client's `session.notices`).
        Notice(Notice) = "notice",
        /// A context compaction upsert (needs the client's `session.compaction`).
        CompactionUpdate(CompactionUpdate) = "compaction_update",
        /// A piece of a compaction's summary (needs the client's `session.compaction`).
        CompactionSummaryChunk(CompactionSummaryChunk) = "compaction_summary_chunk",
        /// A child session of this one was created or changed (needs the client's `subagents`).
        ///
        /// In a `Box`: the largest kind (456 bytes, a text chunk 312) and a rare one; every
        /// update is moved at the size of the largest.
        SubagentUpdate(Box<SubagentUpdate>) = "subagent_update",
        /// An inter-session message upsert (needs the client's `subagents`).
        SessionMessage(SessionMessage) = "session_message",
        /// A piece of an inter-session message (needs the client's `subagents`).
        SessionMessageChunk(SessionMessageChunk) = "session_message_chunk",
        /// **Unstable** (`unstable_prompt_suggestions`): the prompts the agent predicts the user
        /// sends next, replacing the list (needs the client's `session.promptSuggestions`).
        /// Without the feature the kind decodes as `Unknown`.
        PromptSuggestionsUpdate(super::PromptSuggestionsUpdate) = "prompt_suggestions_update"
            [feature = "unstable_prompt_suggestions"],
        /// **Unstable** (`unstable_session_cursors`): a session cursor was announced or what
        /// accepts it changed (needs the client's `session.cursors`). Without the feature the
        /// kind decodes as `Unknown`.
        CursorUpdate(super::CursorUpdate) = "cursor_update" [feature = "unstable_session_cursors"],
    }
}

/// A piece of a streamed message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentChunk {
    /// The content of this piece.
    pub content: ContentBlock,
    /// The message this piece belongs to; all pieces of a message share it.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub message_id: Option<MessageId>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ContentChunk {
    /// A chunk without a message id.
    pub fn new(content: ContentBlock) -> Self {
        ContentChunk { content, message_id: None, meta: None }
    }
}

/// A step of the agent's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanEntry {
    /// What the step does.
    pub content: String,
    /// How important the step is.
    pub priority: PlanEntryPriority,
    /// Where the step stands.
    pub status: PlanEntryStatus,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PlanEntry {
    /// A step with the given priority and status.
    pub fn new(content: impl Into<String>, priority: PlanEntryPriority, status: PlanEntryStatus) -> Self {
        PlanEntry { content: content.into(), priority, status, meta: None }
    }
}

crate::v1::serde_util::string_enum! {
    /// The importance of a plan step.
    pub enum PlanEntryPriority {
        /// High.
        High = "high",
        /// Medium.
        Medium = "medium",
        /// Low.
        Low = "low",
    }
}

crate::v1::serde_util::string_enum! {
    /// The progress of a plan step.
    pub enum PlanEntryStatus {
        /// Not started.
        Pending = "pending",
        /// Being worked on.
        InProgress = "in_progress",
        /// Done.
        Completed = "completed",
    }
}

/// The agent's plan. Each update carries the whole plan, which replaces the previous one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The steps, in order. Malformed entries are dropped.
    #[serde(default, deserialize_with = "lenient_items")]
    pub entries: Vec<PlanEntry>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Plan {
    /// A plan of `entries`.
    pub fn new(entries: Vec<PlanEntry>) -> Self {
        Plan { entries, meta: None }
    }
}

/// A slash command the user can invoke.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailableCommand {
    /// The command's name, without the slash (e.g. `web`).
    pub name: String,
    /// What the command does.
    pub description: String,
    /// How to pass input to the command, if it takes any.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub input: Option<AvailableCommandInput>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AvailableCommand {
    /// A command without input.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        AvailableCommand { name: name.into(), description: description.into(), input: None, meta: None }
    }
}

/// The input a slash command takes. Untagged on the wire; the only kind so far is free text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AvailableCommandInput {
    /// Free text typed after the command name.
    Unstructured(UnstructuredCommandInput),
}

impl<'de> Deserialize<'de> for AvailableCommandInput {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Decoding the one variant directly keeps its error messages.
        UnstructuredCommandInput::deserialize(d).map(AvailableCommandInput::Unstructured)
    }
}

/// Free-text input of a slash command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnstructuredCommandInput {
    /// A placeholder shown while no input has been typed.
    pub hint: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl UnstructuredCommandInput {
    /// Input with the given placeholder.
    pub fn new(hint: impl Into<String>) -> Self {
        UnstructuredCommandInput { hint: hint.into(), meta: None }
    }
}

/// The slash commands available now; replaces the previous list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailableCommandsUpdate {
    /// The commands. Malformed entries are dropped.
    #[serde(default, deserialize_with = "lenient_items")]
    pub available_commands: Vec<AvailableCommand>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AvailableCommandsUpdate {
    /// The full list of `available_commands`.
    pub fn new(available_commands: Vec<AvailableCommand>) -> Self {
        AvailableCommandsUpdate { available_commands, meta: None }
    }
}

/// The session is now in another mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CurrentModeUpdate {
    /// The new mode.
    pub current_mode_id: SessionModeId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CurrentModeUpdate {
    /// The session switched to `current_mode_id`.
    pub fn new(current_mode_id: impl Into<SessionModeId>) -> Self {
        CurrentModeUpdate { current_mode_id: current_mode_id.into(), meta: None }
    }
}

/// The session's configuration options changed; carries all of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigOptionUpdate {
    /// Every option with its current value. Malformed entries are dropped.
    #[serde(default, deserialize_with = "lenient_items")]
    pub config_options: Vec<SessionConfigOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ConfigOptionUpdate {
    /// The full list of `config_options`.
    pub fn new(config_options: Vec<SessionConfigOption>) -> Self {
        ConfigOptionUpdate { config_options, meta: None }
    }
}

/// A change to the session's listing metadata.
///
/// Each field is a patch: `None` leaves the value unchanged (key absent), `Some(None)` clears
/// it (`null` on the wire), `Some(Some(v))` sets it. A malformed value counts as absent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoUpdate {
    /// The session's human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub title: Option<Option<String>>,
    /// When the session was last active (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub updated_at: Option<Option<String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A cost in some currency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// The amount.
    pub amount: f64,
    /// An ISO 4217 currency code, e.g. `USD`.
    pub currency: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Cost {
    /// `amount` of `currency`.
    pub fn new(amount: f64, currency: impl Into<String>) -> Self {
        Cost { amount, currency: currency.into(), meta: None }
    }
}

/// Context window use (in tokens) and optionally the cost so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageUpdate {
    /// Tokens currently in the context.
    pub used: u64,
    /// The size of the context window.
    pub size: u64,
    /// The cumulative cost of the session.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub cost: Option<Cost>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl UsageUpdate {
    /// `used` of `size` tokens, without cost.
    pub fn new(used: u64, size: u64) -> Self {
        UsageUpdate { used, size, cost: None, meta: None }
    }
}

#[cfg(test)]
mod tests;
