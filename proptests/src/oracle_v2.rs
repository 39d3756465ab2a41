//! The by-name hook of the v2 schema oracle (`tests/oracle/v2.rs`, feature
//! `unstable_protocol_v2`): [`V2_DEFS`], the definitions of `spec/crate-1.20.0/v2/schema.json`
//! decoded with their type of `acp_proto::v2`, and [`roundtrip`]. The JSON-RPC message
//! envelopes and the free-form extension messages are routed by the test itself.

use serde_json::Value;

/// Declares [`V2_DEFS`] and [`roundtrip`]: each name is a definition and its type in
/// `acp_proto::v2` (the list comes from `with_v2_defs!`).
macro_rules! define_v2_defs {
    ($($name:ident),* $(,)?) => {
        /// The v2 definitions that have a type of `acp_proto::v2` of the same name.
        pub const V2_DEFS: &[&str] = &[$(stringify!($name)),*];

        /// Decodes `value` as the `acp_proto::v2` type of definition `def` and encodes it back;
        /// `None` when `def` is not one of [`V2_DEFS`].
        pub fn roundtrip(def: &str, value: Value) -> Option<Result<Value, String>> {
            match def {
                $(stringify!($name) => Some(roundtrip_as::<acp_proto::v2::$name>(value)),)*
                _ => None,
            }
        }
    };
}

fn roundtrip_as<T: serde::de::DeserializeOwned + serde::Serialize>(value: Value) -> Result<Value, String> {
    let decoded: T = serde_json::from_str(&value.to_string()).map_err(|e| e.to_string())?;
    serde_json::to_value(&decoded).map_err(|e| e.to_string())
}

/// Calls `$callback! { EXTRA…, SHARED… }`: `$extra` (what only one side lists) followed by the v2
/// definitions that have a type of the same name and shape both in `acp_proto::v2` (this
/// module's [`V2_DEFS`]) and in the official crate's `v2` module (`tests/official_oracle/v2.rs`),
/// so that the two oracles share one list. Only ours: `ProtocolVersion` (theirs is at the crate
/// root) and `ErrorData` (theirs keeps `Error.data` as any JSON); only theirs: the `Ext*`
/// messages (ours routes them as any JSON).
#[macro_export]
macro_rules! with_v2_defs {
    ($callback:ident; $($extra:ident),* $(,)?) => {
        $callback! {
            $($extra,)*
            RequestId, RequestPermissionRequest, SessionId, RequestPermissionSubject, ToolCallUpdate, ToolCallId,
            ToolKind, ToolCallStatus, ToolCallContent, ContentBlock, Annotations, Role, TextContent, MediaType,
            ImageContent, AudioContent, Icon, IconTheme, ResourceLink, EmbeddedResourceResource, TextResourceContents,
            BlobResourceContents, EmbeddedResource, Content, DiffChange, DiffFileType, AbsolutePath, DiffPathChange,
            DiffPathPairChange, DiffPatch, DiffPatchFormat, Diff, TerminalId, Terminal, SessionReference,
            ToolCallLocation, ToolCallCapabilities, ToolCallCancelCapabilities, ToolCallPermissionSubject,
            CommandPermissionSubject, PermissionOption, PermissionOptionId, PermissionOptionKind,
            CreateElicitationRequest, ElicitationSessionScope, ElicitationRequestScope, ElicitationSchema,
            ElicitationSchemaType, ElicitationPropertySchema, StringFormat, EnumOption, StringPropertySchema,
            NumberPropertySchema, IntegerPropertySchema, BooleanPropertySchema, MultiSelectItems,
            StringMultiSelectItems, TitledMultiSelectItems, MultiSelectPropertySchema, ElicitationFormMode,
            ElicitationId, ElicitationUrlMode, InitializeResponse, Implementation, AgentCapabilities,
            SessionCapabilities, PromptCapabilities, PromptImageCapabilities, PromptAudioCapabilities,
            PromptEmbeddedContextCapabilities, McpCapabilities, McpStdioCapabilities, McpHttpCapabilities,
            SessionDeleteCapabilities, SessionAdditionalDirectoriesCapabilities, SessionSystemPromptCapabilities,
            SessionSystemPromptModeCapabilities, SessionSystemPromptOverrideCapabilities, AgentAuthCapabilities,
            AuthMethod, AuthMethodId, EnvVariable, AuthMethodTerminal, AuthMethodAgent, LoginAuthResponse,
            LogoutAuthResponse, NewSessionResponse, SessionConfigOption, SessionConfigId, SessionConfigOptionCategory,
            SessionConfigValueId, SessionConfigSelectOptions, SessionConfigSelectOption, SessionConfigSelectGroup,
            SessionConfigGroupId, SessionConfigSelect, SessionConfigBoolean, AvailableCommand, AvailableCommandInput,
            TextCommandInput, Command, ListSessionsResponse, SessionInfo, SessionListCursor, DeleteSessionResponse,
            ResumeSessionResponse, CloseSessionResponse, CancelToolCallResponse, CancelTerminalResponse,
            SetSessionConfigOptionResponse, PromptResponse, MessageId, Error, ErrorCode,
            UnsupportedProtocolVersionErrorData, SessionNotFoundErrorData, UpdateSessionNotification, SessionUpdate,
            ContentChunk, UserMessage, AgentMessage, AgentThought, BackgroundWork, BackgroundTerminal,
            BackgroundToolCall, BackgroundSubagent, RunningStateUpdate, ErrorStopReason, IdleStateUpdate,
            RequiresActionStateUpdate, UnknownStateUpdate, StateUpdate, ToolCallContentChunk, TerminalOutput,
            TerminalExitStatus, TerminalSize, TerminalCapabilities, TerminalCancelCapabilities, TerminalUpdate,
            TerminalOutputChunk, PlanUpdateContent, PlanId, PlanEntry, PlanEntryPriority, PlanEntryStatus, PlanItems,
            PlanMarkdown, PlanUpdate, PlanRemoved, AvailableCommandsUpdate, ConfigOptionUpdate, SessionInfoUpdate, Cost,
            UsageUpdate, NoticeSeverity, Notice, CompactionId, CompactionStatus, CompactionUpdate,
            CompactionSummaryChunk, ReplayComplete, SubagentSessionCapabilities, SessionCancelCapabilities,
            SubagentUpdate, SessionMessage, SessionMessageChunk, CompleteElicitationNotification, InitializeRequest,
            ClientCapabilities, ClientAuthCapabilities, TerminalAuthCapabilities, ElicitationCapabilities,
            ElicitationFormCapabilities, ElicitationUrlCapabilities, LoginAuthRequest, LogoutAuthRequest,
            NewSessionRequest, McpServer, HttpHeader, McpServerHttp, McpServerStdio, SystemPrompt, SystemPromptMode,
            ListSessionsRequest, DeleteSessionRequest, ResumeSessionRequest, ReplayFrom, ReplayFromStart,
            CloseSessionRequest, CancelToolCallRequest, CancelTerminalRequest, SetSessionConfigOptionRequest,
            PromptRequest, IdempotencyKey, RequestPermissionResponse, RequestPermissionOutcome,
            CancelledPermissionOutcome, SelectedPermissionOutcome, CreateElicitationResponse, ElicitationContentValue,
            ElicitationAcceptAction, CancelSessionNotification, CancelRequestNotification,
        }
    };
}

with_v2_defs!(define_v2_defs; ProtocolVersion, ErrorData);

/// The v2 definitions the oracle does not check yet; it asserts this list exactly (each name
/// must be a v2 definition without a route).
pub const NOT_YET: &[&str] = &[];
