//! v2 session updates (upserts keyed by id).
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
    /// A command the Agent advertises to the Client.
    pub enum AvailableCommand, tag = "type", expecting = "a AvailableCommand object" {
        /// A slash command the user can invoke by including it in a prompt.
        Command(Command) = "command",
    }
}

tagged_union! {
    /// The input specification for a command.
    pub enum AvailableCommandInput, tag = "type", expecting = "a AvailableCommandInput object" {
        /// All text after the command name and the whitespace following it is provided as input.
        Text(TextCommandInput) = "text",
    }
}

/// A slash command the user can invoke by including it in a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Command {
    /// Command name without the leading `/` (e.g., `create_plan`, `research_codebase`).
    pub name: String,
    /// Human-readable description of what the command does.
    pub description: String,
    /// Input for the command if required
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub input: Option<AvailableCommandInput>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Notification containing a session update from the Agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateSessionNotification {
    /// The ID of the session this update pertains to.
    pub session_id: SessionId,
    /// The actual update content.
    pub update: SessionUpdate,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

tagged_union! {
    /// Different types of updates that can be sent while a session exists.
    pub enum SessionUpdate, tag = "sessionUpdate", expecting = "a SessionUpdate object" {
        /// A chunk of the user's message being streamed.
        UserMessageChunk(ContentChunk) = "user_message_chunk",
        /// A user message has been created or updated.
        UserMessage(UserMessage) = "user_message",
        /// A chunk of the Agent's response being streamed.
        AgentMessageChunk(ContentChunk) = "agent_message_chunk",
        /// An Agent message has been created or updated.
        AgentMessage(AgentMessage) = "agent_message",
        /// A chunk of the Agent's internal reasoning being streamed.
        AgentThoughtChunk(ContentChunk) = "agent_thought_chunk",
        /// An Agent thought or reasoning message has been created or updated.
        AgentThought(AgentThought) = "agent_thought",
        /// A snapshot of the session's aggregate foreground activity.
        StateUpdate(StateUpdate) = "state_update",
        /// A chunk of tool-call content being streamed.
        ToolCallContentChunk(ToolCallContentChunk) = "tool_call_content_chunk",
        /// A tool call has been created or updated.
        ToolCallUpdate(ToolCallUpdate) = "tool_call_update",
        /// An Agent-owned terminal has been created or updated.
        TerminalUpdate(TerminalUpdate) = "terminal_update",
        /// A chunk of bytes appended to an Agent-owned terminal's output.
        TerminalOutputChunk(TerminalOutputChunk) = "terminal_output_chunk",
        /// A content update for a plan identified by ID. See protocol docs: [Agent Plan](https://agentclientprotocol.com/protocol/v2/agent-plan)
        PlanUpdate(PlanUpdate) = "plan_update",
        /// Removal notice for a plan identified by ID.
        PlanRemoved(PlanRemoved) = "plan_removed",
        /// Available commands are ready or have changed
        AvailableCommandsUpdate(AvailableCommandsUpdate) = "available_commands_update",
        /// Session configuration options have been updated.
        ConfigOptionUpdate(ConfigOptionUpdate) = "config_option_update",
        /// Session metadata has been updated (title, timestamps, custom metadata)
        SessionInfoUpdate(SessionInfoUpdate) = "session_info_update",
        /// Context window and cost update for the session.
        UsageUpdate(UsageUpdate) = "usage_update",
        /// Information for the user that is not part of session history.
        Notice(Notice) = "notice",
        /// A context compaction has been created or updated.
        CompactionUpdate(CompactionUpdate) = "compaction_update",
        /// A content block appended to a context compaction's retained summary.
        CompactionSummaryChunk(CompactionSummaryChunk) = "compaction_summary_chunk",
        /// The history replay requested by `session/resume` is complete for this session.
        ReplayComplete(ReplayComplete) = "replay_complete",
        /// Announces a child session created and owned by this session, or updates that ownership association's metadata.
        SubagentUpdate(SubagentUpdate) = "subagent_update",
        /// A message upsert observed in this session's transcript, sent to or received from another session.
        SessionMessage(SessionMessage) = "session_message",
        /// One content block appended to a sent or received session message.
        SessionMessageChunk(SessionMessageChunk) = "session_message_chunk",
    }
}

/// A user message upsert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// A unique identifier for the message.
    pub message_id: MessageId,
    /// Complete replacement content for this message.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub content: Option<Vec<ContentBlock>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// An Agent message upsert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentMessage {
    /// A unique identifier for the message.
    pub message_id: MessageId,
    /// Complete replacement content for this message.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub content: Option<Vec<ContentBlock>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// An Agent thought or reasoning message upsert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentThought {
    /// A unique identifier for the thought message.
    pub message_id: MessageId,
    /// Complete replacement content for this thought message.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub content: Option<Vec<ContentBlock>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Available commands are ready or have changed
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailableCommandsUpdate {
    /// Commands the Agent can execute.
    #[serde(deserialize_with = "skip_invalid_items")]
    pub available_commands: Vec<AvailableCommand>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Session configuration options have been updated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigOptionUpdate {
    /// The full set of configuration options and their current values.
    #[serde(deserialize_with = "skip_invalid_items")]
    pub config_options: Vec<SessionConfigOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Update to session metadata. All fields are optional to support partial updates.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoUpdate {
    /// Human-readable title for the session. Set to null to clear.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub title: Option<Option<String>>,
    /// RFC 3339 timestamp of last activity. Set to null to clear.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub updated_at: Option<Option<String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A context compaction upsert. The first notification fixes the compaction's timeline position. Later updates with the same ID patch that entity in place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionUpdate {
    /// The Agent-owned ID of this compaction, unique within the session.
    pub compaction_id: CompactionId,
    /// Current lifecycle status.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub status: Option<CompactionStatus>,
    /// Complete replacement user-displayable summary content for the compaction.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable_items")]
    pub summary: Option<Option<Vec<ContentBlock>>>,
    /// Human-readable error details for the compaction.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub error: Option<Option<String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A content block appended to a compaction's summary. A first-seen ID creates an in-progress compaction. Chunks append in receive order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryChunk {
    /// ID of the compaction whose summary receives this content.
    pub compaction_id: CompactionId,
    /// One content block to append.
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Marks the end of the history replay requested by `session/resume`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayComplete {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Notification that the enclosing parent session created and owns a child session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentUpdate {
    /// The opaque session ID identifying the child in all ACP messages.
    pub session_id: SessionId,
    /// The parent's human-readable display title for this child. It need not be unique.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub title: Option<Option<String>>,
    /// The parent's human-readable description of the child's role or purpose.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub description: Option<Option<String>>,
    /// Client-initiated session mutations permitted for this subagent session.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub capabilities: Option<Option<SubagentSessionCapabilities>>,
    /// The child's current foreground state, mirrored onto its parent association.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub state: Option<Option<StateUpdate>>,
    /// The child's working directory. Must be an absolute path.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub cwd: Option<Option<AbsolutePath>>,
    /// Additional workspace roots for the child. Each path MUST be absolute.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub additional_directories: Option<Option<Vec<AbsolutePath>>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// An upsert for an inter-session message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessage {
    /// Identifier of this message within the enclosing session's transcript.
    pub message_id: MessageId,
    /// The sending session.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub sender_session_id: Option<Option<SessionId>>,
    /// The receiving session.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub recipient_session_id: Option<Option<SessionId>>,
    /// On an incoming view, the `messageId` of the same message's outgoing view in the sender's transcript.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub sender_message_id: Option<Option<MessageId>>,
    /// On an outgoing view, the `messageId` of the same message's incoming view in the recipient's transcript.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub recipient_message_id: Option<Option<MessageId>>,
    /// Omitted leaves content unchanged. `null` clears it. A concrete array replaces the whole content collection.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable_items")]
    pub content: Option<Option<Vec<ContentBlock>>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A streamed content block of an inter-session message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessageChunk {
    /// Identifier of this message within the enclosing session's transcript.
    pub message_id: MessageId,
    /// A single content block appended to the message.
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

tagged_union! {
    /// Inclusive cursor describing where replayed session history begins.
    pub enum ReplayFrom, tag = "type", expecting = "a ReplayFrom object" {
        /// Replay all retained conversation history from its first replayable entry.
        Start(ReplayFromStart) = "start",
    }
}

/// Inclusive replay cursor requesting replay from the start of retained conversation history.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayFromStart {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}
