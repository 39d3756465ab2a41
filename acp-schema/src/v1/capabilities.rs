//! Capabilities exchanged during `initialize`.
//!
//! Two rules from the protocol shape these types:
//!
//! * Anything omitted is unsupported. Boolean flags default to `false`, and a flag counts only
//!   when it is literally `true`: a malformed value decodes as `false`.
//! * Optional sub-capabilities such as `sessionCapabilities.list` are objects: `{}` means
//!   supported, while absent or `null` means not supported. They are `Option`s here, and a
//!   malformed value decodes as `None`.
//!
//! Flags are always encoded, `false` included.

use serde::{Deserialize, Serialize};

use super::elicitation::ElicitationCapabilities;
use super::serde_ext::{lenient_object, lenient_object_default, meta_only};
use super::serde_util::{Meta, lenient, lenient_default};
use super::system_prompt::SessionSystemPromptCapabilities;

/// What the agent supports, sent in the `initialize` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Whether `session/load` is available.
    #[serde(default, deserialize_with = "lenient_default")]
    pub load_session: bool,
    /// Which content types prompts may contain.
    #[serde(default, deserialize_with = "lenient_object_default")]
    pub prompt_capabilities: PromptCapabilities,
    /// Which MCP transports the agent can connect to.
    #[serde(default, deserialize_with = "lenient_object_default")]
    pub mcp_capabilities: McpCapabilities,
    /// Which optional session methods are available.
    #[serde(default, deserialize_with = "lenient_object_default")]
    pub session_capabilities: SessionCapabilities,
    /// Authentication-related capabilities.
    #[serde(default, deserialize_with = "lenient_object_default")]
    pub auth: AgentAuthCapabilities,
    /// **Unstable** (`unstable_llm_providers`): present when `providers/list`,
    /// `providers/set` and `providers/disable` are available.
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_llm_providers",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")
    )]
    #[cfg_attr(
        not(feature = "unstable_llm_providers"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_llm_providers"
        )
    )]
    pub providers: Option<super::ProvidersCapabilities>,
    /// Extension metadata; may advertise custom capabilities.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AgentCapabilities {
    /// `session/load` is available.
    pub fn supports_load_session(&self) -> bool {
        self.load_session
    }

    /// Prompts may contain images.
    pub fn supports_image(&self) -> bool {
        self.prompt_capabilities.image
    }

    /// Prompts may contain audio.
    pub fn supports_audio(&self) -> bool {
        self.prompt_capabilities.audio
    }

    /// Prompts may contain embedded resources.
    pub fn supports_embedded_context(&self) -> bool {
        self.prompt_capabilities.embedded_context
    }

    /// The agent can connect to MCP servers over HTTP.
    pub fn supports_mcp_http(&self) -> bool {
        self.mcp_capabilities.http
    }

    /// The agent can connect to MCP servers over SSE.
    pub fn supports_mcp_sse(&self) -> bool {
        self.mcp_capabilities.sse
    }

    /// `session/list` is available.
    pub fn supports_list_sessions(&self) -> bool {
        self.session_capabilities.list.is_some()
    }

    /// `session/delete` is available.
    pub fn supports_delete_session(&self) -> bool {
        self.session_capabilities.delete.is_some()
    }

    /// `additionalDirectories` is accepted on session requests.
    pub fn supports_additional_directories(&self) -> bool {
        self.session_capabilities.additional_directories.is_some()
    }

    /// `session/resume` is available.
    pub fn supports_resume_session(&self) -> bool {
        self.session_capabilities.resume.is_some()
    }

    /// `session/close` is available.
    pub fn supports_close_session(&self) -> bool {
        self.session_capabilities.close.is_some()
    }

    /// Session requests accept a `systemPrompt` in `append` mode.
    pub fn supports_system_prompt(&self) -> bool {
        self.session_capabilities.system_prompt.is_some()
    }

    /// Session requests accept a `systemPrompt` in `override` mode.
    pub fn supports_system_prompt_override(&self) -> bool {
        self.session_capabilities
            .system_prompt
            .as_ref()
            .and_then(|s| s.mode.as_ref())
            .is_some_and(|m| m.override_.is_some())
    }

    /// `logout` is available.
    pub fn supports_logout(&self) -> bool {
        self.auth.logout.is_some()
    }
}

/// Content types an agent accepts in prompts beyond the baseline (text and resource links).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptCapabilities {
    /// Prompts may contain image blocks.
    #[serde(default, deserialize_with = "lenient_default")]
    pub image: bool,
    /// Prompts may contain audio blocks.
    #[serde(default, deserialize_with = "lenient_default")]
    pub audio: bool,
    /// Prompts may contain embedded resource blocks.
    #[serde(default, deserialize_with = "lenient_default")]
    pub embedded_context: bool,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// MCP transports an agent supports beyond stdio.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpCapabilities {
    /// Streamable HTTP servers are supported.
    #[serde(default, deserialize_with = "lenient_default")]
    pub http: bool,
    /// SSE servers are supported.
    #[serde(default, deserialize_with = "lenient_default")]
    pub sse: bool,
    /// **Unstable** (`unstable_mcp_over_acp`): MCP servers of `type: "acp"` are supported,
    /// spoken to with `mcp/message` over this connection.
    /// Unlike the stable flags, written only when `true` (the stable encoding stays as it was).
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_mcp_over_acp",
        serde(default, skip_serializing_if = "std::ops::Not::not", deserialize_with = "lenient_default")
    )]
    #[cfg_attr(
        not(feature = "unstable_mcp_over_acp"),
        serde(
            skip_deserializing,
            skip_serializing_if = "std::ops::Not::not",
            serialize_with = "super::serde_ext::without::unstable_mcp_over_acp"
        )
    )]
    pub acp: bool,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Optional session methods an agent supports. `session/new`, `session/prompt`,
/// `session/cancel` and `session/update` are always available; `session/load` is announced by
/// [`AgentCapabilities::load_session`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCapabilities {
    /// Present when `session/list` is available.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub list: Option<SessionListCapabilities>,
    /// Present when `session/delete` is available.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub delete: Option<SessionDeleteCapabilities>,
    /// Present when session requests accept `additionalDirectories`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub additional_directories: Option<SessionAdditionalDirectoriesCapabilities>,
    /// Present when session requests accept a `systemPrompt` (in `append` mode, and in the
    /// modes it lists).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub system_prompt: Option<SessionSystemPromptCapabilities>,
    /// Present when `session/resume` is available.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub resume: Option<SessionResumeCapabilities>,
    /// Present when `session/close` is available.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub close: Option<SessionCloseCapabilities>,
    /// **Unstable** (`unstable_session_fork`): present when `session/fork` is available.
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_session_fork",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")
    )]
    #[cfg_attr(
        not(feature = "unstable_session_fork"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_session_fork"
        )
    )]
    pub fork: Option<SessionForkCapabilities>,
    /// **Unstable** (`unstable_session_archive`): present when `session/archive` and `session/unarchive` are available (with
    /// the `archived` filter of `session/list` and `SessionInfo.archived`); needs `list` too.
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_session_archive",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")
    )]
    #[cfg_attr(
        not(feature = "unstable_session_archive"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_session_archive"
        )
    )]
    pub archive: Option<SessionArchiveCapabilities>,
    /// **Unstable** (`unstable_session_status`): present when `session/status` is available.
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_session_status",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")
    )]
    #[cfg_attr(
        not(feature = "unstable_session_status"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_session_status"
        )
    )]
    pub status: Option<SessionStatusCapabilities>,
    /// **Unstable** (`unstable_session_options`): present when `session/options` is available (and initial config option
    /// values on session setup requests).
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_session_options",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")
    )]
    #[cfg_attr(
        not(feature = "unstable_session_options"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_session_options"
        )
    )]
    pub options: Option<SessionOptionsCapabilities>,
    /// **Unstable** (`unstable_session_set_title`): present when clients may set titles with `session/set_title`.
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_session_set_title",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")
    )]
    #[cfg_attr(
        not(feature = "unstable_session_set_title"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_session_set_title"
        )
    )]
    pub title: Option<SessionTitleCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

meta_only! {
    /// Marks `session/list` as supported (no options yet).
    SessionListCapabilities
}

meta_only! {
    /// Marks `session/delete` as supported (no options yet).
    SessionDeleteCapabilities
}

meta_only! {
    /// Marks `additionalDirectories` as supported on session requests (no options yet).
    SessionAdditionalDirectoriesCapabilities
}

meta_only! {
    /// Marks `session/resume` as supported (no options yet).
    SessionResumeCapabilities
}

meta_only! {
    /// Marks `session/close` as supported (no options yet).
    SessionCloseCapabilities
}

meta_only! {
    /// **Unstable**: marks `session/fork` as supported.
    SessionForkCapabilities
}

meta_only! {
    /// **Unstable**: marks `session/archive` and `session/unarchive` as supported.
    SessionArchiveCapabilities
}

meta_only! {
    /// **Unstable**: marks `session/status` as supported.
    SessionStatusCapabilities
}

meta_only! {
    /// **Unstable**: marks `session/options` as supported.
    SessionOptionsCapabilities
}

meta_only! {
    /// **Unstable**: marks `session/set_title` as supported.
    SessionTitleCapabilities
}

meta_only! {
    /// **Unstable**: marks `providers/list`, `providers/set` and `providers/disable` as
    /// supported. Advertised as `agentCapabilities.providers`.
    ProvidersCapabilities
}

meta_only! {
    /// **Unstable**: marks `auth/status` (and the agent's `auth/status_update` notifications)
    /// as supported. Advertised as `agentCapabilities.auth.status`.
    AuthStatusCapabilities
}

/// The client's `session.promptSuggestions`: `{}` accepts suggestions of `text` and
/// `resource_link` blocks; each field opts in to one more block kind.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptSuggestionsCapabilities {
    /// Present when suggestions may include `image` blocks.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub image: Option<PromptSuggestionsImageCapabilities>,
    /// Present when suggestions may include `audio` blocks.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub audio: Option<PromptSuggestionsAudioCapabilities>,
    /// Present when suggestions may include `resource` (embedded) blocks.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub embedded_context: Option<PromptSuggestionsEmbeddedContextCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

meta_only! {
    /// Marks `image` blocks as allowed in prompt suggestions.
    PromptSuggestionsImageCapabilities
}

meta_only! {
    /// Marks `audio` blocks as allowed in prompt suggestions.
    PromptSuggestionsAudioCapabilities
}

meta_only! {
    /// Marks `resource` (embedded context) blocks as allowed in prompt suggestions.
    PromptSuggestionsEmbeddedContextCapabilities
}

meta_only! {
    /// The client's `session.cursors`: it handles `cursor_update` session updates.
    SessionCursorsCapabilities
}

/// Authentication-related capabilities of an agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentAuthCapabilities {
    /// **Unstable** (`unstable_auth_status`): present when `auth/status` is available; the
    /// agent may then also send `auth/status_update` notifications.
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_auth_status",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")
    )]
    #[cfg_attr(
        not(feature = "unstable_auth_status"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_auth_status"
        )
    )]
    pub status: Option<super::AuthStatusCapabilities>,
    /// Present when `logout` is available.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub logout: Option<LogoutCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

meta_only! {
    /// Marks `logout` as supported (no options yet).
    LogoutCapabilities
}

/// What the client supports, sent in the `initialize` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Which `fs/*` methods are available.
    #[serde(default, deserialize_with = "lenient_object_default")]
    pub fs: FileSystemCapabilities,
    /// Whether the `terminal/*` methods are available.
    #[serde(default, deserialize_with = "lenient_default")]
    pub terminal: bool,
    /// Session-related extensions the client supports.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub session: Option<ClientSessionCapabilities>,
    /// Present when the client understands exposed subagent sessions (`subagent_update`,
    /// `session_message`, `session_message_chunk`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub subagents: Option<SubagentCapabilities>,
    /// Present when the client accepts `plan_update` and `plan_removed` updates.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub plan: Option<PlanCapabilities>,
    /// Which opt-in authentication method types the agent may offer (written only when not
    /// the default, `{"terminal": false}`).
    #[serde(
        default,
        skip_serializing_if = "AuthCapabilities::is_default",
        deserialize_with = "lenient_object_default"
    )]
    pub auth: AuthCapabilities,
    /// Which elicitation modes (`elicitation/create`) the client supports.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub elicitation: Option<ElicitationCapabilities>,
    /// Extension metadata; may advertise custom capabilities.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ClientCapabilities {
    /// `fs/read_text_file` is available.
    pub fn supports_read_text_file(&self) -> bool {
        self.fs.read_text_file
    }

    /// `fs/write_text_file` is available.
    pub fn supports_write_text_file(&self) -> bool {
        self.fs.write_text_file
    }

    /// The `terminal/*` methods are available.
    pub fn supports_terminal(&self) -> bool {
        self.terminal
    }

    /// Config options of type `boolean` may be sent to this client.
    pub fn supports_boolean_config_options(&self) -> bool {
        self.session.as_ref().and_then(|s| s.config_options.as_ref()).is_some_and(|c| c.boolean.is_some())
    }

    /// `notice` session updates may be sent to this client.
    pub fn supports_notices(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.notices.is_some())
    }

    /// **Unstable**: `prompt_suggestions_update` updates may be sent to this client.
    #[cfg(feature = "unstable_prompt_suggestions")]
    pub fn supports_prompt_suggestions(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.prompt_suggestions.is_some())
    }

    /// **Unstable**: `cursor_update` updates may be sent to this client.
    #[cfg(feature = "unstable_session_cursors")]
    pub fn supports_cursors(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.cursors.is_some())
    }

    /// `compaction_update` and `compaction_summary_chunk` updates may be sent to this client.
    pub fn supports_compaction(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.compaction.is_some())
    }

    /// `plan_update` and `plan_removed` updates may be sent to this client.
    pub fn supports_plan_updates(&self) -> bool {
        self.plan.is_some()
    }

    /// Subagent updates and session-directed messages may be sent to this client.
    pub fn supports_subagents(&self) -> bool {
        self.subagents.is_some()
    }

    /// `terminal` authentication methods may be offered to this client.
    pub fn supports_terminal_auth(&self) -> bool {
        self.auth.terminal
    }

    /// Form-mode `elicitation/create` may be sent to this client.
    pub fn supports_form_elicitation(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.form.is_some())
    }

    /// URL-mode `elicitation/create` and `elicitation/complete` may be sent to this client.
    pub fn supports_url_elicitation(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.url.is_some())
    }
}

/// File system methods a client offers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSystemCapabilities {
    /// `fs/read_text_file` is available.
    #[serde(default, deserialize_with = "lenient_default")]
    pub read_text_file: bool,
    /// `fs/write_text_file` is available.
    #[serde(default, deserialize_with = "lenient_default")]
    pub write_text_file: bool,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Session-related extensions a client supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientSessionCapabilities {
    /// Present when the client accepts ID-addressed context compaction updates.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub compaction: Option<CompactionCapabilities>,
    /// Config option extensions the client understands.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub config_options: Option<SessionConfigOptionsCapabilities>,
    /// Present when the client can present live `notice` updates to the user.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub notices: Option<NoticeCapabilities>,
    /// **Unstable** (`unstable_prompt_suggestions`): present when the client offers the
    /// agent's `prompt_suggestions_update`s to the user (which block kinds, beyond `text` and
    /// `resource_link`, they may hold).
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_prompt_suggestions",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")
    )]
    #[cfg_attr(
        not(feature = "unstable_prompt_suggestions"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_prompt_suggestions"
        )
    )]
    pub prompt_suggestions: Option<super::PromptSuggestionsCapabilities>,
    /// **Unstable** (`unstable_session_cursors`): present when the client handles the agent's
    /// `cursor_update`s.
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_session_cursors",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")
    )]
    #[cfg_attr(
        not(feature = "unstable_session_cursors"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_session_cursors"
        )
    )]
    pub cursors: Option<super::SessionCursorsCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// Kinds of session config options a client can display beyond `select`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigOptionsCapabilities {
    /// Present when the client handles `type: "boolean"` options.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub boolean: Option<BooleanConfigOptionCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

meta_only! {
    /// Marks boolean config options as supported by the client (no options yet).
    BooleanConfigOptionCapabilities
}

/// Authentication method types a client can handle beyond the agent-run kind.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthCapabilities {
    /// `terminal` auth methods are supported: the client can rerun the agent's command in an
    /// interactive terminal.
    #[serde(default, deserialize_with = "lenient_default")]
    pub terminal: bool,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AuthCapabilities {
    /// Equal to the schema default (`{"terminal": false}`, no `_meta`).
    pub fn is_default(&self) -> bool {
        *self == AuthCapabilities::default()
    }
}

meta_only! {
    /// Marks `plan_update` and `plan_removed` updates as supported by the client.
    PlanCapabilities
}

meta_only! {
    /// Marks exposed subagent sessions as understood by the client.
    SubagentCapabilities
}

meta_only! {
    /// Marks `session/cancel` as permitted on a subagent session.
    SessionCancelCapabilities
}

/// Client-initiated mutations permitted on a subagent session.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentSessionCapabilities {
    /// Present when the client may cancel the subagent's work.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub cancel: Option<SessionCancelCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

meta_only! {
    /// Marks `notice` session updates as supported by the client (the schema declares no
    /// fields; a `_meta` is kept if sent).
    NoticeCapabilities
}

meta_only! {
    /// Marks ID-addressed compaction updates as supported by the client (the schema declares
    /// no fields; a `_meta` is kept if sent).
    CompactionCapabilities
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn empty_agent_capabilities_are_all_false_and_encode_explicitly() {
        let caps: AgentCapabilities = serde_json::from_str("{}").unwrap();
        assert_eq!(caps, AgentCapabilities::default());
        assert!(!caps.supports_load_session());
        assert!(!caps.supports_image());
        assert!(!caps.supports_list_sessions());
        assert!(!caps.supports_logout());
        // Equal to the schema's default for `agentCapabilities`.
        assert_eq!(
            serde_json::to_value(&caps).unwrap(),
            json!({
                "loadSession": false,
                "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
                "mcpCapabilities": {"http": false, "sse": false},
                "sessionCapabilities": {},
                "auth": {}
            })
        );
    }

    #[test]
    fn empty_client_capabilities_are_all_false_and_encode_explicitly() {
        let caps: ClientCapabilities = serde_json::from_str("{}").unwrap();
        assert!(!caps.supports_read_text_file());
        assert!(!caps.supports_terminal());
        assert!(!caps.supports_boolean_config_options());
        assert_eq!(
            serde_json::to_value(&caps).unwrap(),
            json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false})
        );
    }

    #[test]
    fn flags_count_only_when_literally_true() {
        let caps: AgentCapabilities = serde_json::from_value(json!({
            "loadSession": "yes",
            "promptCapabilities": {"image": 1, "audio": true, "embeddedContext": null},
            "mcpCapabilities": [true],
            "sessionCapabilities": {"list": {}, "delete": null, "resume": true, "close": {"_meta": 5}},
            "auth": {"logout": {}}
        }))
        .unwrap();
        assert!(!caps.supports_load_session());
        assert!(!caps.supports_image());
        assert!(caps.supports_audio());
        assert!(!caps.supports_embedded_context());
        assert!(!caps.supports_mcp_http());
        assert!(caps.supports_list_sessions());
        assert!(!caps.supports_delete_session());
        assert!(!caps.supports_resume_session());
        assert!(caps.supports_close_session());
        assert!(caps.supports_logout());
    }

    #[test]
    fn docs_client_capabilities_decode() {
        // From docs/initialization.mdx and docs/session-config-options.mdx.
        let caps: ClientCapabilities = serde_json::from_value(json!({
            "fs": {"readTextFile": true, "writeTextFile": true},
            "terminal": true
        }))
        .unwrap();
        assert!(caps.supports_read_text_file() && caps.supports_write_text_file());
        assert!(caps.supports_terminal());
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"session": {"configOptions": {"boolean": {}}}})).unwrap();
        assert!(caps.supports_boolean_config_options());
        assert_eq!(
            serde_json::to_value(&caps).unwrap(),
            json!({
                "fs": {"readTextFile": false, "writeTextFile": false},
                "terminal": false,
                "session": {"configOptions": {"boolean": {}}}
            })
        );
    }
}
