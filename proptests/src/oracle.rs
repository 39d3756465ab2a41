//! A by-name hook into the schema types, for differential tests against the JSON schema.
//!
//! [`roundtrip`] decodes a JSON value as the Rust type of a schema definition (from its
//! serialized text, the same path as a frame off the wire) and encodes it back, so that a
//! test harness can check the normalizations documented in [`acp_proto::types`].

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn roundtrip_as<T: DeserializeOwned + Serialize>(value: Value) -> Result<Value, String> {
    let text = value.to_string();
    let decoded: T = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    serde_json::to_value(&decoded).map_err(|e| e.to_string())
}

/// Declares [`DEFS`] and [`roundtrip`] from one list of definition names, each of which is
/// also the name of its Rust type in [`acp_proto::types`].
macro_rules! schema_defs {
    ($($name:ident),* $(,)?) => {
        /// Names of every schema definition covered by this module.
        pub const DEFS: &[&str] = &[$(stringify!($name)),*];

        /// Decodes `value` as the Rust type of the schema definition `def` and encodes it back.
        /// `None` when `def` is not covered here; `Some(Err(reason))` when decoding fails.
        pub fn roundtrip(def: &str, value: Value) -> Option<Result<Value, String>> {
            match def {
                $(stringify!($name) => Some(roundtrip_as::<acp_proto::types::$name>(value)),)*
                _ => crate::oracle_unstable::roundtrip(def, value),
            }
        }
    };
}

schema_defs! {
    WriteTextFileRequest, SessionId, ReadTextFileRequest, RequestPermissionRequest,
    ToolCallUpdate, ToolCallId, ToolKind, ToolCallStatus, ToolCallContent, ContentBlock,
    Annotations, Role, TextContent, ImageContent, AudioContent, ResourceLink,
    EmbeddedResourceResource, TextResourceContents, BlobResourceContents, EmbeddedResource,
    Content, Diff, TerminalId, Terminal, ToolCallLocation, PermissionOption, PermissionOptionId,
    PermissionOptionKind, CreateTerminalRequest, EnvVariable, TerminalOutputRequest,
    ReleaseTerminalRequest, WaitForTerminalExitRequest, KillTerminalRequest, InitializeResponse,
    ProtocolVersion, AgentCapabilities, PromptCapabilities, McpCapabilities,
    SessionCapabilities, SessionListCapabilities, SessionDeleteCapabilities,
    SessionAdditionalDirectoriesCapabilities, SessionResumeCapabilities,
    SessionCloseCapabilities, AgentAuthCapabilities, LogoutCapabilities, AuthMethod,
    AuthMethodAgent, AuthMethodId, Implementation, AuthenticateResponse, LogoutResponse,
    NewSessionResponse, SessionModeState, SessionModeId, SessionMode, SessionConfigOption,
    SessionConfigId, SessionConfigOptionCategory, SessionConfigValueId,
    SessionConfigSelectOptions, SessionConfigSelectOption, SessionConfigSelectGroup,
    SessionConfigGroupId, SessionConfigSelect, SessionConfigBoolean, LoadSessionResponse,
    ListSessionsResponse, SessionInfo, DeleteSessionResponse, ResumeSessionResponse,
    CloseSessionResponse, SetSessionModeResponse, SetSessionConfigOptionResponse,
    PromptResponse, StopReason, SessionNotification, SessionUpdate, MessageId, ContentChunk,
    ToolCall, PlanEntry, PlanEntryPriority, PlanEntryStatus, Plan, AvailableCommand,
    AvailableCommandInput, UnstructuredCommandInput, AvailableCommandsUpdate, CurrentModeUpdate,
    ConfigOptionUpdate, SessionInfoUpdate, Cost, UsageUpdate, InitializeRequest,
    ClientCapabilities, FileSystemCapabilities, ClientSessionCapabilities,
    SessionConfigOptionsCapabilities, BooleanConfigOptionCapabilities, AuthenticateRequest,
    LogoutRequest, NewSessionRequest, McpServer, HttpHeader, McpServerHttp, McpServerSse,
    McpServerStdio, LoadSessionRequest, ListSessionsRequest, DeleteSessionRequest,
    ResumeSessionRequest, CloseSessionRequest, SetSessionModeRequest,
    SetSessionConfigOptionRequest, PromptRequest, WriteTextFileResponse, ReadTextFileResponse,
    RequestPermissionResponse, RequestPermissionOutcome, SelectedPermissionOutcome,
    CreateTerminalResponse, TerminalOutputResponse, TerminalExitStatus, ReleaseTerminalResponse,
    WaitForTerminalExitResponse, KillTerminalResponse, CancelNotification,
    CancelRequestNotification,
    // Added after v1.19.0 (schema 1.21.0 and crate 1.20.0):
    AuthCapabilities, AuthMethodTerminal, BooleanPropertySchema, CompactionCapabilities, CompactionId,
    CompactionStatus, CompactionSummaryChunk, CompactionUpdate, CompleteElicitationNotification,
    CreateElicitationRequest, CreateElicitationResponse, ElicitationAcceptAction,
    ElicitationCapabilities, ElicitationContentValue, ElicitationFormCapabilities, ElicitationFormMode,
    ElicitationId, ElicitationPropertySchema, ElicitationRequestScope, ElicitationSchema,
    ElicitationSchemaType, ElicitationSessionScope, ElicitationUrlCapabilities, ElicitationUrlMode,
    EnumOption, ErrorStopReason, IdleStateUpdate, IntegerPropertySchema, MultiSelectItems,
    MultiSelectPropertySchema, Notice, NoticeCapabilities, NoticeSeverity, NumberPropertySchema,
    PlanCapabilities, PlanId, PlanItems, PlanMarkdown, PlanRemoved, PlanUpdate, PlanUpdateContent,
    RequiresActionStateUpdate, RunningStateUpdate, SessionCancelCapabilities, SessionMessage,
    SessionMessageChunk, SessionReference, SessionSystemPromptCapabilities,
    SessionSystemPromptModeCapabilities, SessionSystemPromptOverrideCapabilities, StateUpdate,
    StringFormat, StringMultiSelectItems, StringPropertySchema, SubagentCapabilities,
    SubagentSessionCapabilities, SubagentUpdate, SystemPrompt, SystemPromptMode,
    TitledMultiSelectItems, UnknownStateUpdate,
}

/// The patch fields where `null` means "clear" and is kept (normalization (a) of
/// [`acp_proto::types`]): `(definition, property)`.
pub const KEEP_NULL: &[(&str, &str)] = &[
    ("SessionInfoUpdate", "title"),
    ("SessionInfoUpdate", "updatedAt"),
    ("CompactionUpdate", "summary"),
    ("CompactionUpdate", "error"),
    ("SubagentUpdate", "title"),
    ("SubagentUpdate", "description"),
    ("SubagentUpdate", "capabilities"),
    ("SubagentUpdate", "state"),
    ("SubagentUpdate", "cwd"),
    ("SubagentUpdate", "additionalDirectories"),
    ("SessionMessage", "senderSessionId"),
    ("SessionMessage", "recipientSessionId"),
    ("SessionMessage", "senderMessageId"),
    ("SessionMessage", "recipientMessageId"),
    ("SessionMessage", "content"),
    #[cfg(feature = "unstable_session_cursors")]
    ("CursorUpdate", "capabilities"),
    #[cfg(feature = "unstable_session_cursors")]
    ("CursorUpdate", "_meta"),
    #[cfg(feature = "unstable_mcp_over_acp")]
    ("McpError", "data"),
];

/// The schema-guided normalizer's options for comparing a round trip: [`KEEP_NULL`].
pub fn normalize_options() -> crate::schema_gen::NormalizeOptions {
    KEEP_NULL.iter().fold(crate::schema_gen::NormalizeOptions::default(), |o, (d, p)| o.keep_null(d, p))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;

    /// Definitions owned by the JSON-RPC layer, not by this module.
    const EXCLUDED: &[&str] = &[
        "RequestId",
        "Error",
        "ErrorCode",
        "AgentRequest",
        "AgentResponse",
        "AgentNotification",
        "ClientRequest",
        "ClientResponse",
        "ClientNotification",
        "ExtRequest",
        "ExtResponse",
        "ExtNotification",
    ];

    #[test]
    fn defs_match_the_schema() {
        let schema = crate::spec::read_json(&crate::spec::spec_dir("defs_match_the_schema"), "schema.json");
        let expected: BTreeSet<&str> = schema["$defs"]
            .as_object()
            .expect("schema has $defs")
            .keys()
            .map(String::as_str)
            .filter(|name| !EXCLUDED.contains(name))
            .collect();
        let covered: BTreeSet<&str> = DEFS.iter().copied().collect();
        assert_eq!(covered.len(), DEFS.len(), "a name is listed twice");
        let missing: Vec<_> = expected.difference(&covered).collect();
        let extra: Vec<_> = covered.difference(&expected).collect();
        assert!(missing.is_empty() && extra.is_empty(), "missing {missing:?}, extra {extra:?}");
        assert_eq!(DEFS.len(), 191);
    }

    #[test]
    fn roundtrip_dispatches_by_name() {
        assert!(roundtrip("RequestId", json!(1)).is_none());
        assert!(roundtrip("NoSuchDef", json!({})).is_none());
        assert_eq!(roundtrip("SessionId", json!("s")), Some(Ok(json!("s"))));
        assert_eq!(roundtrip("ProtocolVersion", json!(1)), Some(Ok(json!(1))));
        assert_eq!(roundtrip("StopReason", json!("refusal")), Some(Ok(json!("refusal"))));
        assert!(matches!(roundtrip("PromptRequest", json!({})), Some(Err(_))));
        assert_eq!(
            roundtrip("McpServer", json!({"name": "n", "command": "c", "args": [], "env": []})),
            Some(Ok(json!({"name": "n", "command": "c", "args": [], "env": []})))
        );
        assert_eq!(
            roundtrip("CancelRequestNotification", json!({"requestId": "r"})),
            Some(Ok(json!({"requestId": "r"})))
        );
    }

    #[test]
    fn every_def_has_a_working_roundtrip() {
        // Each def either decodes `{}` or rejects it; none panics, and a decoded `{}` encodes
        // back to an object.
        for def in DEFS {
            match roundtrip(def, json!({})).expect("covered") {
                Ok(v) => assert!(v.is_object(), "{def}: {v}"),
                Err(e) => assert!(!e.is_empty(), "{def}"),
            }
        }
    }
}
