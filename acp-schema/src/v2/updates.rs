//! v2 session updates (upserts keyed by id).
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

use super::manual::skip_invalid_items;
use super::*;
use crate::v1::serde_ext::{lenient_nullable, lenient_nullable_items};
use crate::v1::serde_util::{lenient, lenient_vec, tagged_union};

tagged_union! {
    /// The v2 `AvailableCommand` union.
    pub enum AvailableCommand, tag = "type", expecting = "a AvailableCommand object" {
        /// `command`.
        Command(Command) = "command",
    }
}

tagged_union! {
    /// The v2 `AvailableCommandInput` union.
    pub enum AvailableCommandInput, tag = "type", expecting = "a AvailableCommandInput object" {
        /// `text`.
        Text(TextCommandInput) = "text",
    }
}

/// The v2 `Command` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Command {
    /// The `name` field (required).
    pub name: String,
    /// The `description` field (required).
    pub description: String,
    /// The `input` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub input: Option<AvailableCommandInput>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Command {
    /// A `Command` of its required fields (`name`, `description`); the optional ones are absent.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Command { name: name.into(), description: description.into(), input: None, meta: None }
    }
}

/// The v2 `UpdateSessionNotification` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateSessionNotification {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// The `update` field (required).
    pub update: SessionUpdate,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl UpdateSessionNotification {
    /// A `UpdateSessionNotification` of its required fields (`session_id`, `update`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>, update: impl Into<SessionUpdate>) -> Self {
        UpdateSessionNotification { session_id: session_id.into(), update: update.into(), meta: None }
    }
}

tagged_union! {
    /// The v2 `SessionUpdate` union.
    pub enum SessionUpdate, tag = "sessionUpdate", expecting = "a SessionUpdate object" {
        /// `user_message_chunk`.
        UserMessageChunk(ContentChunk) = "user_message_chunk",
        /// `user_message`.
        UserMessage(UserMessage) = "user_message",
        /// `agent_message_chunk`.
        AgentMessageChunk(ContentChunk) = "agent_message_chunk",
        /// `agent_message`.
        AgentMessage(AgentMessage) = "agent_message",
        /// `agent_thought_chunk`.
        AgentThoughtChunk(ContentChunk) = "agent_thought_chunk",
        /// `agent_thought`.
        AgentThought(AgentThought) = "agent_thought",
        /// `state_update`.
        StateUpdate(StateUpdate) = "state_update",
        /// `tool_call_content_chunk`.
        ToolCallContentChunk(ToolCallContentChunk) = "tool_call_content_chunk",
        /// `tool_call_update`.
        ToolCallUpdate(ToolCallUpdate) = "tool_call_update",
        /// `terminal_update`.
        TerminalUpdate(TerminalUpdate) = "terminal_update",
        /// `terminal_output_chunk`.
        TerminalOutputChunk(TerminalOutputChunk) = "terminal_output_chunk",
        /// `plan_update`.
        PlanUpdate(PlanUpdate) = "plan_update",
        /// `plan_removed`.
        PlanRemoved(PlanRemoved) = "plan_removed",
        /// `available_commands_update`.
        AvailableCommandsUpdate(AvailableCommandsUpdate) = "available_commands_update",
        /// `config_option_update`.
        ConfigOptionUpdate(ConfigOptionUpdate) = "config_option_update",
        /// `session_info_update`.
        SessionInfoUpdate(SessionInfoUpdate) = "session_info_update",
        /// `usage_update`.
        UsageUpdate(UsageUpdate) = "usage_update",
        /// `notice`.
        Notice(Notice) = "notice",
        /// `compaction_update`.
        CompactionUpdate(CompactionUpdate) = "compaction_update",
        /// `compaction_summary_chunk`.
        CompactionSummaryChunk(CompactionSummaryChunk) = "compaction_summary_chunk",
        /// `replay_complete`.
        ReplayComplete(ReplayComplete) = "replay_complete",
        /// `subagent_update`.
        SubagentUpdate(SubagentUpdate) = "subagent_update",
        /// `session_message`.
        SessionMessage(SessionMessage) = "session_message",
        /// `session_message_chunk`.
        SessionMessageChunk(SessionMessageChunk) = "session_message_chunk",
    }
}

/// The v2 `UserMessage` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// The `messageId` field (required).
    pub message_id: MessageId,
    /// The `content` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub content: Option<Vec<ContentBlock>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl UserMessage {
    /// A `UserMessage` of its required fields (`message_id`); the optional ones are absent.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        UserMessage { message_id: message_id.into(), content: None, meta: None }
    }
}

/// The v2 `AgentMessage` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentMessage {
    /// The `messageId` field (required).
    pub message_id: MessageId,
    /// The `content` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub content: Option<Vec<ContentBlock>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AgentMessage {
    /// A `AgentMessage` of its required fields (`message_id`); the optional ones are absent.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        AgentMessage { message_id: message_id.into(), content: None, meta: None }
    }
}

/// The v2 `AgentThought` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentThought {
    /// The `messageId` field (required).
    pub message_id: MessageId,
    /// The `content` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub content: Option<Vec<ContentBlock>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AgentThought {
    /// A `AgentThought` of its required fields (`message_id`); the optional ones are absent.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        AgentThought { message_id: message_id.into(), content: None, meta: None }
    }
}

/// The v2 `AvailableCommandsUpdate` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailableCommandsUpdate {
    /// The `availableCommands` field (required).
    #[serde(deserialize_with = "skip_invalid_items")]
    pub available_commands: Vec<AvailableCommand>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AvailableCommandsUpdate {
    /// A `AvailableCommandsUpdate` of its required fields (`available_commands`); the optional ones are absent.
    pub fn new(available_commands: impl Into<Vec<AvailableCommand>>) -> Self {
        AvailableCommandsUpdate { available_commands: available_commands.into(), meta: None }
    }
}

/// The v2 `ConfigOptionUpdate` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigOptionUpdate {
    /// The `configOptions` field (required).
    #[serde(deserialize_with = "skip_invalid_items")]
    pub config_options: Vec<SessionConfigOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ConfigOptionUpdate {
    /// A `ConfigOptionUpdate` of its required fields (`config_options`); the optional ones are absent.
    pub fn new(config_options: impl Into<Vec<SessionConfigOption>>) -> Self {
        ConfigOptionUpdate { config_options: config_options.into(), meta: None }
    }
}

/// The v2 `SessionInfoUpdate` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoUpdate {
    /// The `title` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub title: Option<Option<String>>,
    /// The `updatedAt` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub updated_at: Option<Option<String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `CompactionUpdate` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionUpdate {
    /// The `compactionId` field (required).
    pub compaction_id: CompactionId,
    /// The `status` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub status: Option<CompactionStatus>,
    /// The `summary` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable_items")]
    pub summary: Option<Option<Vec<ContentBlock>>>,
    /// The `error` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub error: Option<Option<String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CompactionUpdate {
    /// A `CompactionUpdate` of its required fields (`compaction_id`); the optional ones are absent.
    pub fn new(compaction_id: impl Into<CompactionId>) -> Self {
        CompactionUpdate { compaction_id: compaction_id.into(), status: None, summary: None, error: None, meta: None }
    }
}

/// The v2 `CompactionSummaryChunk` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryChunk {
    /// The `compactionId` field (required).
    pub compaction_id: CompactionId,
    /// The `content` field (required).
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CompactionSummaryChunk {
    /// A `CompactionSummaryChunk` of its required fields (`compaction_id`, `content`); the optional ones are absent.
    pub fn new(compaction_id: impl Into<CompactionId>, content: impl Into<ContentBlock>) -> Self {
        CompactionSummaryChunk { compaction_id: compaction_id.into(), content: content.into(), meta: None }
    }
}

/// The v2 `ReplayComplete` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayComplete {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `SubagentUpdate` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentUpdate {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// The `title` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub title: Option<Option<String>>,
    /// The `description` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub description: Option<Option<String>>,
    /// The `capabilities` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub capabilities: Option<Option<SubagentSessionCapabilities>>,
    /// The `state` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub state: Option<Option<StateUpdate>>,
    /// The `cwd` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub cwd: Option<Option<AbsolutePath>>,
    /// The `additionalDirectories` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub additional_directories: Option<Option<Vec<AbsolutePath>>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SubagentUpdate {
    /// A `SubagentUpdate` of its required fields (`session_id`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        SubagentUpdate {
            session_id: session_id.into(),
            title: None,
            description: None,
            capabilities: None,
            state: None,
            cwd: None,
            additional_directories: None,
            meta: None,
        }
    }
}

/// The v2 `SessionMessage` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessage {
    /// The `messageId` field (required).
    pub message_id: MessageId,
    /// The `senderSessionId` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub sender_session_id: Option<Option<SessionId>>,
    /// The `recipientSessionId` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub recipient_session_id: Option<Option<SessionId>>,
    /// The `senderMessageId` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub sender_message_id: Option<Option<MessageId>>,
    /// The `recipientMessageId` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub recipient_message_id: Option<Option<MessageId>>,
    /// The `content` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable_items")]
    pub content: Option<Option<Vec<ContentBlock>>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionMessage {
    /// A `SessionMessage` of its required fields (`message_id`); the optional ones are absent.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        SessionMessage {
            message_id: message_id.into(),
            sender_session_id: None,
            recipient_session_id: None,
            sender_message_id: None,
            recipient_message_id: None,
            content: None,
            meta: None,
        }
    }
}

/// The v2 `SessionMessageChunk` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessageChunk {
    /// The `messageId` field (required).
    pub message_id: MessageId,
    /// The `content` field (required).
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionMessageChunk {
    /// A `SessionMessageChunk` of its required fields (`message_id`, `content`); the optional ones are absent.
    pub fn new(message_id: impl Into<MessageId>, content: impl Into<ContentBlock>) -> Self {
        SessionMessageChunk { message_id: message_id.into(), content: content.into(), meta: None }
    }
}

tagged_union! {
    /// The v2 `ReplayFrom` union.
    pub enum ReplayFrom, tag = "type", expecting = "a ReplayFrom object" {
        /// `start`.
        Start(ReplayFromStart) = "start",
    }
}

/// The v2 `ReplayFromStart` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayFromStart {
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}
