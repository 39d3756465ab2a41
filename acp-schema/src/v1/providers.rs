//! **Unstable** LLM provider configuration (feature `unstable_llm_providers`): the client lists
//! the agent's configurable providers (`providers/list`), replaces one's routing configuration
//! (`providers/set`) or disables one (`providers/disable`). All three are client to agent and
//! need the agent's `providers` capability ([`ProvidersCapabilities`], the `providers` field
//! of [`AgentCapabilities`](super::AgentCapabilities)); the client's core refuses them locally
//! otherwise. Upstream may change or remove them in any release.
//!
//! `providers/set` carries the provider's full header map, which may hold credentials: the
//! `Debug` output of [`SetProviderRequest`] names the headers but never shows their values.
//!
//! ```
//! use acp_schema::v1::{LlmProtocol, SetProviderRequest};
//! let mut set = SetProviderRequest::new("main", LlmProtocol::Anthropic, "https://llm.example.com");
//! set.headers = Some([("authorization".to_owned(), "Bearer sk-secret".to_owned())].into());
//! assert!(!format!("{set:?}").contains("sk-secret"));
//! let wire = serde_json::to_value(&set).unwrap();
//! assert_eq!(wire["apiType"], "anthropic");
//! assert_eq!(wire["headers"]["authorization"], "Bearer sk-secret");
//! ```
//!
//! [`ProvidersCapabilities`]: super::ProvidersCapabilities

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::ids::ProviderId;
use super::serde_util::{Meta, lenient, lenient_items, string_enum};

crate::v1::serde_ext::meta_only! {
    /// Parameters of `providers/list` (client to agent); needs the agent's `providers`.
    ListProvidersRequest
}

crate::v1::serde_ext::meta_only! {
    /// Result of `providers/set`.
    SetProviderResponse
}

crate::v1::serde_ext::meta_only! {
    /// Result of `providers/disable`.
    DisableProviderResponse
}

string_enum! {
    /// The API protocol a provider speaks. Handle values this version does not know (kept in
    /// `Unknown`) gracefully; names starting with `_` are free for custom use, the others are
    /// reserved for the spec.
    pub enum LlmProtocol {
        /// The Anthropic API.
        Anthropic = "anthropic",
        /// The OpenAI API.
        OpenAi = "openai",
        /// The Azure OpenAI API.
        Azure = "azure",
        /// The Google Vertex AI API.
        Vertex = "vertex",
        /// The AWS Bedrock API.
        Bedrock = "bedrock",
    }
}

/// A provider's current effective routing configuration (never secrets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderCurrentConfig {
    /// The protocol in use.
    pub api_type: LlmProtocol,
    /// The base URL requests go to.
    pub base_url: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ProviderCurrentConfig {
    /// Requests go to `base_url`, speaking `api_type`.
    pub fn new(api_type: LlmProtocol, base_url: impl Into<String>) -> Self {
        ProviderCurrentConfig { api_type, base_url: base_url.into(), meta: None }
    }
}

/// One configurable provider, as `providers/list` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderInfo {
    /// The provider's id (`"main"`, `"openai"`, …).
    pub provider_id: ProviderId,
    /// The protocols it can speak. Entries that do not decode are dropped; a value that is not
    /// an array reads as none.
    #[serde(deserialize_with = "lenient_items")]
    pub supported: Vec<LlmProtocol>,
    /// Mandatory: it cannot be disabled, and a client must not call `providers/disable` for it.
    pub required: bool,
    /// Its current routing; `None` (absent or `null`) means the provider is disabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<ProviderCurrentConfig>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ProviderInfo {
    /// A provider that speaks `supported`, currently disabled (set [`current`](Self::current)
    /// to report its routing).
    pub fn new(provider_id: impl Into<ProviderId>, supported: Vec<LlmProtocol>, required: bool) -> Self {
        ProviderInfo { provider_id: provider_id.into(), supported, required, current: None, meta: None }
    }

    /// Whether the provider is enabled (it reports a current configuration).
    pub fn is_enabled(&self) -> bool {
        self.current.is_some()
    }
}

/// Result of `providers/list`: every configurable provider, for display.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListProvidersResponse {
    /// The providers with their current routing.
    pub providers: Vec<ProviderInfo>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ListProvidersResponse {
    /// The agent's `providers`.
    pub fn new(providers: Vec<ProviderInfo>) -> Self {
        ListProvidersResponse { providers, meta: None }
    }
}

/// Parameters of `providers/set` (client to agent); needs the agent's `providers`. Replaces
/// the whole configuration of one provider (and enables it).
///
/// `Debug` shows the header names only: their values may be credentials.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetProviderRequest {
    /// The provider to configure.
    pub provider_id: ProviderId,
    /// The protocol it should speak.
    pub api_type: LlmProtocol,
    /// The base URL requests should go to.
    pub base_url: String,
    /// The provider's full header map (authorization, routing, …); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SetProviderRequest {
    /// Routes `provider_id` to `base_url`, speaking `api_type`, without headers.
    pub fn new(provider_id: impl Into<ProviderId>, api_type: LlmProtocol, base_url: impl Into<String>) -> Self {
        SetProviderRequest {
            provider_id: provider_id.into(),
            api_type,
            base_url: base_url.into(),
            headers: None,
            meta: None,
        }
    }
}

impl fmt::Debug for SetProviderRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SetProviderRequest")
            .field("provider_id", &self.provider_id)
            .field("api_type", &self.api_type)
            .field("base_url", &self.base_url)
            .field("headers", &self.headers.as_ref().map(|h| h.keys().map(|k| format!("{k}: …")).collect::<Vec<_>>()))
            .field("meta", &self.meta)
            .finish()
    }
}

/// Parameters of `providers/disable` (client to agent); needs the agent's `providers`. Not for
/// a provider that [`ProviderInfo::required`] marks mandatory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DisableProviderRequest {
    /// The provider to disable.
    pub provider_id: ProviderId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl DisableProviderRequest {
    /// Disables `provider_id`.
    pub fn new(provider_id: impl Into<ProviderId>) -> Self {
        DisableProviderRequest { provider_id: provider_id.into(), meta: None }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn provider_info_is_lenient_where_the_schema_says_and_strict_elsewhere() {
        let wire = json!({
            "providerId": "main", "supported": ["openai", 3, "_local"], "required": true,
            "current": {"apiType": "openai", "baseUrl": "https://api.example.com"}
        });
        let info: ProviderInfo = serde_json::from_value(wire).unwrap();
        assert_eq!(info.supported, [LlmProtocol::OpenAi, LlmProtocol::Unknown("_local".into())]);
        assert!(info.is_enabled());
        let bad_supported: ProviderInfo =
            serde_json::from_value(json!({"providerId": "p", "supported": "x", "required": false, "current": null}))
                .unwrap();
        assert!(bad_supported.supported.is_empty() && !bad_supported.is_enabled());
        // `supported` and `required` must be present.
        assert!(serde_json::from_value::<ProviderInfo>(json!({"providerId": "p", "required": false})).is_err());
        assert!(serde_json::from_value::<ProviderInfo>(json!({"providerId": "p", "supported": []})).is_err());
        let set: SetProviderRequest = serde_json::from_value(json!({
            "providerId": "main", "apiType": "bedrock", "baseUrl": "u", "headers": {"x-key": "secret"}
        }))
        .unwrap();
        let debug = format!("{set:?}");
        assert!(debug.contains("x-key") && !debug.contains("secret"), "{debug}");
    }
}
