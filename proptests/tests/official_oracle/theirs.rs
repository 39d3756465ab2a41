//! The official crate's types by schema definition name: the same shape as
//! `proptests::oracle` (one macro list), over `agent_client_protocol_schema` 1.20.0.
//!
//! schemars names each `$def` after its Rust type, so a definition's name is also the name of
//! the official type, in `agent_client_protocol_schema::v1` (every name of the v1.19.0 and
//! crate-1.20.0 schemas, stable and unstable, is there) or, for `ProtocolVersion`, at the crate
//! root. The six message envelopes are not listed: the official types of those names are the
//! *params* enums that the SDK decodes by method (`from_method_and_params`), not the
//! `{id, method, params}` objects the schema defines; see `ENVELOPES`.

use agent_client_protocol_schema as official;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The schema definitions whose official type of the same name has another shape.
pub(crate) const ENVELOPES: &[&str] =
    &["ClientRequest", "AgentRequest", "ClientResponse", "AgentResponse", "ClientNotification", "AgentNotification"];

fn roundtrip_as<T: DeserializeOwned + Serialize>(text: &str) -> Result<Value, String> {
    let decoded: T = serde_json::from_str(text).map_err(|e| e.to_string())?;
    serde_json::to_value(&decoded).map_err(|e| e.to_string())
}

macro_rules! official_defs {
    ($($name:ident),* $(,)?) => {
        /// Every schema definition name with an official type of the same shape.
        pub(crate) const DEFS: &[&str] = &["ProtocolVersion", $(stringify!($name)),*];

        /// Decodes the JSON text `text` as the official type of `def` and encodes it back.
        /// `None` when `def` has no official type here.
        pub(crate) fn roundtrip(def: &str, text: &str) -> Option<Result<Value, String>> {
            match def {
                "ProtocolVersion" => Some(roundtrip_as::<official::ProtocolVersion>(text)),
                $(stringify!($name) => Some(roundtrip_as::<official::v1::$name>(text)),)*
                _ => None,
            }
        }
    };
}

official_defs! {
    AgentAuthCapabilities, AgentCapabilities, Annotations, ArchiveSessionRequest, ArchiveSessionResponse,
    AudioContent, AuthAccount, AuthCapabilities, AuthMethod, AuthMethodAgent, AuthMethodId,
    AuthMethodTerminal, AuthState, AuthStatusCapabilities, AuthStatusRequest, AuthStatusResponse,
    AuthStatusUpdateNotification, AuthenticateRequest, AuthenticateResponse, AvailableCommand,
    AvailableCommandInput, AvailableCommandsUpdate, BlobResourceContents, BooleanConfigOptionCapabilities,
    BooleanPropertySchema, CancelNotification, CancelRequestNotification, ClientCapabilities,
    ClientSessionCapabilities, CloseSessionRequest, CloseSessionResponse, CompactionCapabilities,
    CompactionId, CompactionStatus, CompactionSummaryChunk, CompactionUpdate,
    CompleteElicitationNotification, ConfigOptionUpdate, Content, ContentBlock, ContentChunk, Cost,
    CreateElicitationRequest, CreateElicitationResponse, CreateTerminalRequest, CreateTerminalResponse,
    CurrentModeUpdate, CursorAnchor, CursorAnchorPosition, CursorCapabilities, CursorCompactionAnchor,
    CursorForkCapabilities, CursorId, CursorMessageAnchor, CursorToolCallAnchor, CursorUpdate,
    DeleteSessionRequest, DeleteSessionResponse, Diff, DisableProviderRequest, DisableProviderResponse,
    ElicitationAcceptAction, ElicitationCapabilities, ElicitationContentValue, ElicitationFormCapabilities,
    ElicitationFormMode, ElicitationId, ElicitationPropertySchema, ElicitationRequestScope,
    ElicitationSchema, ElicitationSchemaType, ElicitationSessionScope, ElicitationUrlCapabilities,
    ElicitationUrlMode, EmbeddedResource, EmbeddedResourceResource, EnumOption, EnvVariable, Error,
    ErrorCode, ErrorStopReason, ExtNotification, ExtRequest, ExtResponse, FileSystemCapabilities,
    ForkSessionRequest, ForkSessionResponse, HttpHeader, IdleStateUpdate, ImageContent, Implementation,
    InitialSessionConfigOption, InitializeProxyRequest, InitializeProxyResponse, InitializeRequest,
    InitializeResponse, IntegerPropertySchema, KillTerminalRequest, KillTerminalResponse,
    ListProvidersRequest, ListProvidersResponse, ListSessionsRequest, ListSessionsResponse, LlmProtocol,
    LoadSessionRequest, LoadSessionResponse, LogoutCapabilities, LogoutRequest, LogoutResponse,
    McpCapabilities, McpError, McpRequestId, McpServer, McpServerAcp, McpServerAcpId, McpServerHttp,
    McpServerSse, McpServerStdio, MessageId, MessageMcpNotification, MessageMcpRequest, MessageMcpResponse,
    MultiSelectItems, MultiSelectPropertySchema, NewSessionRequest, NewSessionResponse, Notice,
    NoticeCapabilities, NoticeSeverity, NumberPropertySchema, PermissionOption, PermissionOptionId,
    PermissionOptionKind, Plan, PlanCapabilities, PlanEntry, PlanEntryPriority, PlanEntryStatus, PlanId,
    PlanItems, PlanMarkdown, PlanRemoved, PlanUpdate, PlanUpdateContent, PromptCapabilities, PromptRequest,
    PromptResponse, PromptSuggestion, PromptSuggestionsAudioCapabilities, PromptSuggestionsCapabilities,
    PromptSuggestionsEmbeddedContextCapabilities, PromptSuggestionsImageCapabilities,
    PromptSuggestionsUpdate, ProviderCurrentConfig, ProviderId, ProviderInfo, ProvidersCapabilities,
    ProxyNotification, ProxyRequest, ProxyResponse, ProxySuccessorNotification, ProxySuccessorRequest,
    ProxySuccessorResponse, ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest,
    ReleaseTerminalResponse, RequestId, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, RequiresActionStateUpdate, ResourceLink, ResumeSessionRequest,
    ResumeSessionResponse, Role, RunningStateUpdate, SelectedPermissionOutcome,
    SessionAdditionalDirectoriesCapabilities, SessionArchiveCapabilities, SessionArchiveFilter,
    SessionCancelCapabilities, SessionCapabilities, SessionCloseCapabilities, SessionConfigBoolean,
    SessionConfigGroupId, SessionConfigId, SessionConfigOption, SessionConfigOptionCategory,
    SessionConfigOptionsCapabilities, SessionConfigSelect, SessionConfigSelectGroup,
    SessionConfigSelectOption, SessionConfigSelectOptions, SessionConfigValueId, SessionCursorsCapabilities,
    SessionDeleteCapabilities, SessionForkCapabilities, SessionId, SessionInfo, SessionInfoUpdate,
    SessionListCapabilities, SessionMessage, SessionMessageChunk, SessionMode, SessionModeId,
    SessionModeState, SessionNotification, SessionOptionsCapabilities, SessionOptionsRequest,
    SessionOptionsResponse, SessionReference, SessionResumeCapabilities, SessionStatus,
    SessionStatusCapabilities, SessionStatusRequest, SessionStatusResponse, SessionSystemPromptCapabilities,
    SessionSystemPromptModeCapabilities, SessionSystemPromptOverrideCapabilities, SessionTitleCapabilities,
    SessionUpdate, SetProviderRequest, SetProviderResponse, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse, SetSessionTitleRequest,
    SetSessionTitleResponse, StateUpdate, StopReason, StringFormat, StringMultiSelectItems,
    StringPropertySchema, SubagentCapabilities, SubagentSessionCapabilities, SubagentUpdate, SystemPrompt,
    SystemPromptMode, Terminal, TerminalExitStatus, TerminalId, TerminalOutputRequest,
    TerminalOutputResponse, TextContent, TextResourceContents, TitledMultiSelectItems, ToolCall,
    ToolCallContent, ToolCallId, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolKind,
    UnarchiveSessionRequest, UnarchiveSessionResponse, UnknownStateUpdate, UnstructuredCommandInput, Usage,
    UsageUpdate, WaitForTerminalExitRequest, WaitForTerminalExitResponse, WriteTextFileRequest,
    WriteTextFileResponse,
}
