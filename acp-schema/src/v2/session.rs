//! v2 session lifecycle, initialization and errors.
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

use super::manual::skip_invalid_items;
use super::*;
use crate::v1::serde_ext::lenient_object_default;
use crate::v1::serde_util::{lenient, lenient_vec, tagged_union};

/// The v2 `InitializeResponse` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// The `protocolVersion` field (required).
    pub protocol_version: ProtocolVersion,
    /// The `info` field (required).
    pub info: Implementation,
    /// The `capabilities` field (optional).
    #[serde(default, deserialize_with = "lenient_object_default")]
    pub capabilities: AgentCapabilities,
    /// The `authMethods` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub auth_methods: Option<Vec<AuthMethod>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl InitializeResponse {
    /// A `InitializeResponse` of its required fields (`protocol_version`, `info`); the optional ones are absent.
    pub fn new(protocol_version: impl Into<ProtocolVersion>, info: impl Into<Implementation>) -> Self {
        InitializeResponse {
            protocol_version: protocol_version.into(),
            info: info.into(),
            capabilities: Default::default(),
            auth_methods: None,
            meta: None,
        }
    }
}

/// The v2 `NewSessionResponse` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionResponse {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// The `configOptions` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// The `availableCommands` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub available_commands: Option<Vec<AvailableCommand>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl NewSessionResponse {
    /// A `NewSessionResponse` of its required fields (`session_id`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        NewSessionResponse { session_id: session_id.into(), config_options: None, available_commands: None, meta: None }
    }
}

/// The v2 `SessionConfigOption` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigOption {
    /// The `configId` field (required).
    pub config_id: SessionConfigId,
    /// The `name` field (required).
    pub name: String,
    /// The `description` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The `category` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub category: Option<SessionConfigOptionCategory>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
    /// The variant, discriminated by `type`.
    #[serde(flatten)]
    pub kind: SessionConfigOptionKind,
}

impl SessionConfigOption {
    /// A `SessionConfigOption` of its required fields (`config_id`, `name`, `kind`); the optional ones are absent.
    pub fn new(config_id: impl Into<SessionConfigId>, name: impl Into<String>, kind: SessionConfigOptionKind) -> Self {
        SessionConfigOption {
            config_id: config_id.into(),
            name: name.into(),
            description: None,
            category: None,
            meta: None,
            kind,
        }
    }
}

tagged_union! {
    /// The v2 `SessionConfigOption` union.
    pub enum SessionConfigOptionKind, tag = "type", expecting = "a SessionConfigOption object" {
        /// `select`.
        Select(SessionConfigSelect) = "select",
        /// `boolean`.
        Boolean(SessionConfigBoolean) = "boolean",
    }
}

/// The v2 `SessionConfigSelectGroup` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigSelectGroup {
    /// The `groupId` field (required).
    pub group_id: SessionConfigGroupId,
    /// The `name` field (required).
    pub name: String,
    /// The `options` field (required).
    pub options: Vec<SessionConfigSelectOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionConfigSelectGroup {
    /// A `SessionConfigSelectGroup` of its required fields (`group_id`, `name`, `options`); the optional ones are absent.
    pub fn new(
        group_id: impl Into<SessionConfigGroupId>,
        name: impl Into<String>,
        options: impl Into<Vec<SessionConfigSelectOption>>,
    ) -> Self {
        SessionConfigSelectGroup { group_id: group_id.into(), name: name.into(), options: options.into(), meta: None }
    }
}

/// The v2 `SessionConfigSelect` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigSelect {
    /// The `currentValue` field (required).
    pub current_value: SessionConfigValueId,
    /// The `options` field (required).
    pub options: SessionConfigSelectOptions,
}

impl SessionConfigSelect {
    /// A `SessionConfigSelect` of its required fields (`current_value`, `options`); the optional ones are absent.
    pub fn new(current_value: impl Into<SessionConfigValueId>, options: impl Into<SessionConfigSelectOptions>) -> Self {
        SessionConfigSelect { current_value: current_value.into(), options: options.into() }
    }
}

/// The v2 `ListSessionsResponse` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsResponse {
    /// The `sessions` field (required).
    pub sessions: Vec<SessionInfo>,
    /// The `nextCursor` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<SessionListCursor>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ListSessionsResponse {
    /// A `ListSessionsResponse` of its required fields (`sessions`); the optional ones are absent.
    pub fn new(sessions: impl Into<Vec<SessionInfo>>) -> Self {
        ListSessionsResponse { sessions: sessions.into(), next_cursor: None, meta: None }
    }
}

/// The v2 `SessionInfo` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// The `cwd` field (required).
    pub cwd: AbsolutePath,
    /// The `additionalDirectories` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_directories: Option<Vec<AbsolutePath>>,
    /// The `title` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// The `updatedAt` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub updated_at: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionInfo {
    /// A `SessionInfo` of its required fields (`session_id`, `cwd`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<AbsolutePath>) -> Self {
        SessionInfo {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: None,
            title: None,
            updated_at: None,
            meta: None,
        }
    }
}

/// The v2 `SessionListCursor` string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionListCursor(pub String);

impl From<String> for SessionListCursor {
    fn from(s: String) -> Self {
        SessionListCursor(s)
    }
}

impl From<&str> for SessionListCursor {
    fn from(s: &str) -> Self {
        SessionListCursor(s.to_owned())
    }
}

/// The v2 `ResumeSessionResponse` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeSessionResponse {
    /// The `configOptions` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// The `availableCommands` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub available_commands: Option<Vec<AvailableCommand>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `SetSessionConfigOptionResponse` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetSessionConfigOptionResponse {
    /// The `configOptions` field (required).
    #[serde(deserialize_with = "skip_invalid_items")]
    pub config_options: Vec<SessionConfigOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SetSessionConfigOptionResponse {
    /// A `SetSessionConfigOptionResponse` of its required fields (`config_options`); the optional ones are absent.
    pub fn new(config_options: impl Into<Vec<SessionConfigOption>>) -> Self {
        SetSessionConfigOptionResponse { config_options: config_options.into(), meta: None }
    }
}

/// The v2 `PromptResponse` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptResponse {
    /// The `messageId` field (required).
    pub message_id: MessageId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PromptResponse {
    /// A `PromptResponse` of its required fields (`message_id`); the optional ones are absent.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        PromptResponse { message_id: message_id.into(), meta: None }
    }
}

/// The v2 `UnsupportedProtocolVersionErrorData` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnsupportedProtocolVersionErrorData {
    /// The `requested` field (required).
    pub requested: ProtocolVersion,
    /// The `supported` field (required).
    pub supported: Vec<ProtocolVersion>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl UnsupportedProtocolVersionErrorData {
    /// A `UnsupportedProtocolVersionErrorData` of its required fields (`requested`, `supported`); the optional ones are absent.
    pub fn new(requested: impl Into<ProtocolVersion>, supported: impl Into<Vec<ProtocolVersion>>) -> Self {
        UnsupportedProtocolVersionErrorData { requested: requested.into(), supported: supported.into(), meta: None }
    }
}

/// The v2 `SessionNotFoundErrorData` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionNotFoundErrorData {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionNotFoundErrorData {
    /// A `SessionNotFoundErrorData` of its required fields (`session_id`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        SessionNotFoundErrorData { session_id: session_id.into(), meta: None }
    }
}

/// The v2 `InitializeRequest` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequest {
    /// The `protocolVersion` field (required).
    pub protocol_version: ProtocolVersion,
    /// The `info` field (required).
    pub info: Implementation,
    /// The `capabilities` field (optional).
    #[serde(default, deserialize_with = "lenient_object_default")]
    pub capabilities: ClientCapabilities,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl InitializeRequest {
    /// A `InitializeRequest` of its required fields (`protocol_version`, `info`); the optional ones are absent.
    pub fn new(protocol_version: impl Into<ProtocolVersion>, info: impl Into<Implementation>) -> Self {
        InitializeRequest {
            protocol_version: protocol_version.into(),
            info: info.into(),
            capabilities: Default::default(),
            meta: None,
        }
    }
}

/// The v2 `NewSessionRequest` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionRequest {
    /// The `cwd` field (required).
    pub cwd: AbsolutePath,
    /// The `additionalDirectories` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_directories: Option<Vec<AbsolutePath>>,
    /// The `mcpServers` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<McpServer>>,
    /// The `systemPrompt` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<SystemPrompt>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl NewSessionRequest {
    /// A `NewSessionRequest` of its required fields (`cwd`); the optional ones are absent.
    pub fn new(cwd: impl Into<AbsolutePath>) -> Self {
        NewSessionRequest {
            cwd: cwd.into(),
            additional_directories: None,
            mcp_servers: None,
            system_prompt: None,
            meta: None,
        }
    }
}

tagged_union! {
    /// The v2 `McpServer` union.
    pub enum McpServer, tag = "type", expecting = "a McpServer object" {
        /// `http`.
        Http(McpServerHttp) = "http",
        /// `stdio`.
        Stdio(McpServerStdio) = "stdio",
    }
}

/// The v2 `McpServerHttp` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerHttp {
    /// The `name` field (required).
    pub name: String,
    /// The `url` field (required).
    pub url: String,
    /// The `headers` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<HttpHeader>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl McpServerHttp {
    /// A `McpServerHttp` of its required fields (`name`, `url`); the optional ones are absent.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServerHttp { name: name.into(), url: url.into(), headers: None, meta: None }
    }
}

/// The v2 `McpServerStdio` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStdio {
    /// The `name` field (required).
    pub name: String,
    /// The `command` field (required).
    pub command: AbsolutePath,
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

impl McpServerStdio {
    /// A `McpServerStdio` of its required fields (`name`, `command`); the optional ones are absent.
    pub fn new(name: impl Into<String>, command: impl Into<AbsolutePath>) -> Self {
        McpServerStdio { name: name.into(), command: command.into(), args: None, env: None, meta: None }
    }
}

/// The v2 `SystemPrompt` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemPrompt {
    /// The `mode` field (required).
    pub mode: SystemPromptMode,
    /// The `content` field (required).
    pub content: Vec<ContentBlock>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SystemPrompt {
    /// A `SystemPrompt` of its required fields (`mode`, `content`); the optional ones are absent.
    pub fn new(mode: impl Into<SystemPromptMode>, content: impl Into<Vec<ContentBlock>>) -> Self {
        SystemPrompt { mode: mode.into(), content: content.into(), meta: None }
    }
}

/// The v2 `ListSessionsRequest` definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsRequest {
    /// The `cwd` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<AbsolutePath>,
    /// The `cursor` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<SessionListCursor>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// The v2 `ResumeSessionRequest` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeSessionRequest {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// The `cwd` field (required).
    pub cwd: AbsolutePath,
    /// The `additionalDirectories` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_directories: Option<Vec<AbsolutePath>>,
    /// The `mcpServers` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<McpServer>>,
    /// The `replayFrom` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_from: Option<ReplayFrom>,
    /// The `systemPrompt` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<SystemPrompt>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ResumeSessionRequest {
    /// A `ResumeSessionRequest` of its required fields (`session_id`, `cwd`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<AbsolutePath>) -> Self {
        ResumeSessionRequest {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: None,
            mcp_servers: None,
            replay_from: None,
            system_prompt: None,
            meta: None,
        }
    }
}

/// The v2 `PromptRequest` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptRequest {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// The `prompt` field (required).
    pub prompt: Vec<ContentBlock>,
    /// The `idempotencyKey` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<IdempotencyKey>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PromptRequest {
    /// A `PromptRequest` of its required fields (`session_id`, `prompt`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>, prompt: impl Into<Vec<ContentBlock>>) -> Self {
        PromptRequest { session_id: session_id.into(), prompt: prompt.into(), idempotency_key: None, meta: None }
    }
}

/// The v2 `IdempotencyKey` string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct IdempotencyKey(pub String);

impl From<String> for IdempotencyKey {
    fn from(s: String) -> Self {
        IdempotencyKey(s)
    }
}

impl From<&str> for IdempotencyKey {
    fn from(s: &str) -> Self {
        IdempotencyKey(s.to_owned())
    }
}

/// The v2 `CancelSessionNotification` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelSessionNotification {
    /// The `sessionId` field (required).
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CancelSessionNotification {
    /// A `CancelSessionNotification` of its required fields (`session_id`); the optional ones are absent.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        CancelSessionNotification { session_id: session_id.into(), meta: None }
    }
}

/// The v2 `CancelRequestNotification` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelRequestNotification {
    /// The `requestId` field (required).
    pub request_id: RequestId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CancelRequestNotification {
    /// A `CancelRequestNotification` of its required fields (`request_id`); the optional ones are absent.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        CancelRequestNotification { request_id: request_id.into(), meta: None }
    }
}
