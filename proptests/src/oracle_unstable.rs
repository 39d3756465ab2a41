//! The by-name hook of [`crate::oracle`] for the definitions of `schema.unstable.json` that
//! acp-proto's `unstable_*` features add: [`UNSTABLE_DEFS`] (the ones compiled in) and
//! [`roundtrip`]. With the `unstable` feature, `tests/oracle.rs` checks them, and the stable
//! definitions the unstable schema changes, against `schema.unstable.json`; [`NOT_YET`] lists
//! the unstable definitions acp-proto does not cover yet, and the oracle asserts that list
//! exactly.

use serde_json::Value;

/// Declares [`UNSTABLE_DEFS`] and [`roundtrip`]: `feature: [Definition, …]` groups, each
/// definition the name of its type in `acp_proto::types`, compiled in with its feature.
macro_rules! unstable_defs {
    ($($feature:literal: [$($name:ident),* $(,)?])*) => {
        /// The unstable schema definitions covered here with the features compiled in.
        pub const UNSTABLE_DEFS: &[&str] = &[$($( #[cfg(feature = $feature)] stringify!($name), )*)*];

        /// Decodes `value` as the Rust type of the unstable definition `def` and encodes it back;
        /// `None` when `def` is not covered (or its feature is off).
        pub fn roundtrip(def: &str, value: Value) -> Option<Result<Value, String>> {
            let _ = &value;
            match def {
                $($(
                    #[cfg(feature = $feature)]
                    stringify!($name) => Some(roundtrip_as::<acp_proto::types::$name>(value)),
                )*)*
                _ => None,
            }
        }
    };
}

#[allow(dead_code)] // unused without unstable features
fn roundtrip_as<T: serde::de::DeserializeOwned + serde::Serialize>(value: Value) -> Result<Value, String> {
    let decoded: T = serde_json::from_str(&value.to_string()).map_err(|e| e.to_string())?;
    serde_json::to_value(&decoded).map_err(|e| e.to_string())
}

unstable_defs! {
    "unstable_session_set_title": [SetSessionTitleRequest, SetSessionTitleResponse, SessionTitleCapabilities]
    "unstable_session_status": [SessionStatusRequest, SessionStatusResponse, SessionStatus, SessionStatusCapabilities]
    "unstable_session_archive": [
        ArchiveSessionRequest, ArchiveSessionResponse, UnarchiveSessionRequest, UnarchiveSessionResponse,
        SessionArchiveCapabilities, SessionArchiveFilter,
    ]
    "unstable_session_fork": [SessionForkCapabilities, ForkSessionRequest, ForkSessionResponse]
    "unstable_session_cursors": [
        CursorId, CursorUpdate, CursorCapabilities, CursorForkCapabilities, SessionCursorsCapabilities, CursorAnchor,
        CursorAnchorPosition, CursorMessageAnchor, CursorToolCallAnchor, CursorCompactionAnchor,
    ]
    "unstable_mcp_over_acp": [
        McpServerAcp, McpServerAcpId, MessageMcpRequest, MessageMcpResponse, MessageMcpNotification, McpError,
        McpRequestId,
    ]
    "unstable_prompt_suggestions": [
        PromptSuggestion, PromptSuggestionsUpdate, PromptSuggestionsCapabilities, PromptSuggestionsAudioCapabilities,
        PromptSuggestionsEmbeddedContextCapabilities, PromptSuggestionsImageCapabilities,
    ]
    "unstable_session_options": [
        SessionOptionsCapabilities, SessionOptionsRequest, SessionOptionsResponse, InitialSessionConfigOption,
    ]
    "unstable_auth_status": [
        AuthAccount, AuthState, AuthStatusCapabilities, AuthStatusRequest, AuthStatusResponse,
        AuthStatusUpdateNotification,
    ]
    "unstable_llm_providers": [
        ListProvidersRequest, ListProvidersResponse, SetProviderRequest, SetProviderResponse,
        DisableProviderRequest, DisableProviderResponse, LlmProtocol, ProviderCurrentConfig, ProviderId,
        ProviderInfo, ProvidersCapabilities,
    ]
    "unstable_end_turn_token_usage": [Usage]
    "unstable_proxy_chains": [
        InitializeProxyRequest, InitializeProxyResponse, ProxySuccessorRequest, ProxySuccessorResponse,
        ProxySuccessorNotification,
    ]
}

/// The schema definition a method-table row's Rust params or result type stands for: the
/// proxy's own `proxy/successor` rows carry wrappers of the schema's types
/// (`acp_proto::types::ProxyForwardRequest` is a `ProxySuccessorRequest`), as the typed layer
/// maps each params type to one row. Any other name is its own.
pub fn schema_name(rust: &str) -> &str {
    match rust {
        "ProxyForwardRequest" => "ProxySuccessorRequest",
        "ProxyForwardResponse" => "ProxySuccessorResponse",
        "ProxyForwardNotification" => "ProxySuccessorNotification",
        other => other,
    }
}

/// The definitions of `schema.unstable.json` that are new or changed against `schema.json`
/// and that acp-proto does not cover yet (their groups are not implemented). The unstable
/// oracle checks every other new or changed definition, and asserts this list exactly.
pub const NOT_YET: &[&str] = &[];
