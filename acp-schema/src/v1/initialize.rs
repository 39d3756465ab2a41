//! `initialize`, `authenticate` and `logout`: connection setup and authentication.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::UnknownVariant;
use super::capabilities::{AgentCapabilities, ClientCapabilities};
use super::ids::{AuthMethodId, ProtocolVersion};
use super::serde_ext::{lenient_object_default, meta_only};
use super::serde_util::{Meta, lenient, lenient_items};

/// Parameters of `initialize` (client to agent): the first request of every connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequest {
    /// The newest protocol version the client supports.
    pub protocol_version: ProtocolVersion,
    /// What the client supports.
    #[serde(default, deserialize_with = "lenient_object_default")]
    pub client_capabilities: ClientCapabilities,
    /// The client's name and version.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub client_info: Option<Implementation>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl InitializeRequest {
    /// A request for `protocol_version` with no capabilities.
    pub fn new(protocol_version: ProtocolVersion) -> Self {
        InitializeRequest {
            protocol_version,
            client_capabilities: ClientCapabilities::default(),
            client_info: None,
            meta: None,
        }
    }
}

/// Result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// The version the agent chose: the client's if supported, otherwise the agent's newest.
    pub protocol_version: ProtocolVersion,
    /// What the agent supports.
    #[serde(default, deserialize_with = "lenient_object_default")]
    pub agent_capabilities: AgentCapabilities,
    /// The ways the client may authenticate. Malformed entries are dropped. Always written,
    /// `[]` included, as the protocol pages show it.
    #[serde(default, deserialize_with = "lenient_items")]
    pub auth_methods: Vec<AuthMethod>,
    /// The agent's name and version.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub agent_info: Option<Implementation>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl InitializeResponse {
    /// A response for `protocol_version` with no capabilities.
    pub fn new(protocol_version: ProtocolVersion) -> Self {
        InitializeResponse {
            protocol_version,
            agent_capabilities: AgentCapabilities::default(),
            auth_methods: Vec::new(),
            agent_info: None,
            meta: None,
        }
    }
}

/// Name and version of a client or agent implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// The programmatic name; also the display fallback when there is no title.
    pub name: String,
    /// A human-friendly display name.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub title: Option<String>,
    /// The implementation's version.
    pub version: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Implementation {
    /// `name` at `version`, without a title.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation { name: name.into(), title: None, version: version.into(), meta: None }
    }
}

/// An authentication method the agent offers in its `initialize` response.
///
/// [`AuthMethod::Agent`] carries no `type` on the wire (an explicit `"type": "agent"` is
/// accepted and not re-encoded); [`AuthMethod::Terminal`] is `"type": "terminal"` and may be
/// offered only to a client that advertised `auth.terminal` (the connection leaves it out of
/// the response otherwise). An object whose `type` is any other string is a kind this version
/// does not know and is kept whole in [`AuthMethod::Unknown`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AuthMethod {
    /// The agent runs the authentication flow itself.
    Agent(AuthMethodAgent),
    /// The client runs the agent's command in an interactive terminal for the user to log in.
    Terminal(AuthMethodTerminal),
    /// A kind of method this version does not know, kept as its whole JSON object.
    Unknown(UnknownVariant),
}

impl AuthMethod {
    /// The method's id, if its kind is known or the object has a string `id`.
    pub fn id(&self) -> Option<&str> {
        match self {
            AuthMethod::Agent(a) => Some(a.id.as_str()),
            AuthMethod::Terminal(t) => Some(t.id.as_str()),
            AuthMethod::Unknown(u) => u.0.get("id").and_then(Value::as_str),
        }
    }
}

impl From<AuthMethodAgent> for AuthMethod {
    fn from(a: AuthMethodAgent) -> Self {
        AuthMethod::Agent(a)
    }
}

impl From<AuthMethodTerminal> for AuthMethod {
    fn from(t: AuthMethodTerminal) -> Self {
        AuthMethod::Terminal(t)
    }
}

/// The tagged variant, borrowed, for encoding with the tag first.
#[derive(Serialize)]
#[serde(tag = "type")]
enum TaggedAuthRef<'a> {
    #[serde(rename = "terminal")]
    Terminal(&'a AuthMethodTerminal),
}

impl Serialize for AuthMethod {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AuthMethod::Agent(a) => a.serialize(s),
            AuthMethod::Terminal(t) => TaggedAuthRef::Terminal(t).serialize(s),
            AuthMethod::Unknown(u) => u.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for AuthMethod {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = Map::deserialize(d)?;
        match fields.get("type") {
            Some(Value::String(kind)) if kind == "terminal" => AuthMethodTerminal::deserialize(Value::Object(fields))
                .map(AuthMethod::Terminal)
                .map_err(|e| D::Error::custom(format_args!("terminal auth method: {e}"))),
            Some(Value::String(kind)) if kind != "agent" => Ok(AuthMethod::Unknown(UnknownVariant(fields))),
            _ => AuthMethodAgent::deserialize(Value::Object(fields))
                .map(AuthMethod::Agent)
                .map_err(|e| D::Error::custom(format_args!("agent auth method: {e}"))),
        }
    }
}

/// An authentication method run in a terminal: the client starts the agent's own command again
/// (with `args` appended and `env` set) as an interactive process; exit status 0 means success.
/// Never passed to `authenticate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthMethodTerminal {
    /// The method's id.
    pub id: AuthMethodId,
    /// The label shown to the user.
    pub name: String,
    /// A longer explanation for the user.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Arguments appended to the agent's command (`null` decodes as none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Environment variables set for the command, overriding the launch environment (`null`
    /// decodes as none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AuthMethodTerminal {
    /// A terminal method with an id and a label, without extra arguments or environment.
    pub fn new(id: impl Into<AuthMethodId>, name: impl Into<String>) -> Self {
        AuthMethodTerminal { id: id.into(), name: name.into(), description: None, args: None, env: None, meta: None }
    }
}

/// An authentication method handled entirely by the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthMethodAgent {
    /// The method's id, passed to `authenticate`.
    pub id: AuthMethodId,
    /// The label shown to the user.
    pub name: String,
    /// A longer explanation for the user.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AuthMethodAgent {
    /// A method with an id and a label.
    pub fn new(id: impl Into<AuthMethodId>, name: impl Into<String>) -> Self {
        AuthMethodAgent { id: id.into(), name: name.into(), description: None, meta: None }
    }
}

/// Parameters of `authenticate` (client to agent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticateRequest {
    /// One of the ids advertised in `authMethods`.
    pub method_id: AuthMethodId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AuthenticateRequest {
    /// Authenticates with `method_id`.
    pub fn new(method_id: impl Into<AuthMethodId>) -> Self {
        AuthenticateRequest { method_id: method_id.into(), meta: None }
    }
}

meta_only! {
    /// Result of `authenticate`.
    AuthenticateResponse
}

meta_only! {
    /// Parameters of `logout` (client to agent); needs the agent's `auth.logout` capability.
    LogoutRequest
}

meta_only! {
    /// Result of `logout`.
    LogoutResponse
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn docs_initialize_request_round_trips() {
        // From docs/initialization.mdx.
        let params = json!({
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": true, "writeTextFile": true},
                "terminal": true
            },
            "clientInfo": {"name": "my-client", "title": "My Client", "version": "1.0.0"}
        });
        let r: InitializeRequest = serde_json::from_value(params.clone()).unwrap();
        assert_eq!(r.protocol_version, ProtocolVersion::V1);
        assert!(r.client_capabilities.supports_terminal());
        assert_eq!(serde_json::to_value(&r).unwrap(), params);
    }

    #[test]
    fn docs_initialize_response_decodes() {
        // From docs/initialization.mdx: defaults are written out, the empty `authMethods` too.
        let result = json!({
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": {"image": true, "audio": true, "embeddedContext": true},
                "mcpCapabilities": {"http": true, "sse": true}
            },
            "agentInfo": {"name": "my-agent", "title": "My Agent", "version": "1.0.0"},
            "authMethods": []
        });
        let r: InitializeResponse = serde_json::from_value(result).unwrap();
        assert!(r.agent_capabilities.supports_load_session());
        assert!(r.agent_capabilities.supports_mcp_sse());
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({
                "protocolVersion": 1,
                "agentCapabilities": {
                    "loadSession": true,
                    "promptCapabilities": {"image": true, "audio": true, "embeddedContext": true},
                    "mcpCapabilities": {"http": true, "sse": true},
                    "sessionCapabilities": {},
                    "auth": {}
                },
                "agentInfo": {"name": "my-agent", "title": "My Agent", "version": "1.0.0"},
                "authMethods": []
            })
        );
    }

    #[test]
    fn minimal_initialize_request() {
        let r: InitializeRequest = serde_json::from_str(r#"{"protocolVersion":1}"#).unwrap();
        assert_eq!(r, InitializeRequest::new(ProtocolVersion::V1));
        let r: InitializeRequest =
            serde_json::from_str(r#"{"protocolVersion":1,"clientCapabilities":"bogus","clientInfo":{"name":1}}"#)
                .unwrap();
        assert_eq!(r, InitializeRequest::new(ProtocolVersion::V1));
        assert!(serde_json::from_str::<InitializeRequest>("{}").is_err());
    }

    #[test]
    fn auth_methods() {
        // From docs/authentication.mdx.
        let input = json!({
            "id": "agent-login",
            "name": "Agent login",
            "description": "Sign in using the agent's login flow"
        });
        let m: AuthMethod = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(m.id(), Some("agent-login"));
        assert!(matches!(m, AuthMethod::Agent(_)));
        assert_eq!(serde_json::to_value(&m).unwrap(), input);

        let explicit: AuthMethod = serde_json::from_value(json!({"type": "agent", "id": "a", "name": "A"})).unwrap();
        assert_eq!(explicit, AuthMethod::from(AuthMethodAgent::new("a", "A")));

        let newer = json!({"type": "env_var", "id": "key", "name": "API key", "varName": "K"});
        let m: AuthMethod = serde_json::from_value(newer.clone()).unwrap();
        assert!(matches!(m, AuthMethod::Unknown(_)));
        assert_eq!(m.id(), Some("key"));
        assert_eq!(serde_json::to_value(&m).unwrap(), newer);

        let e = serde_json::from_value::<AuthMethod>(json!({"id": "x"})).unwrap_err();
        assert!(e.to_string().contains("missing field `name`"), "{e}");
    }

    #[test]
    fn invalid_auth_methods_are_skipped() {
        let r: InitializeResponse = serde_json::from_value(json!({
            "protocolVersion": 1,
            "authMethods": [{"id": "a", "name": "A"}, {"id": 3}, "x"]
        }))
        .unwrap();
        assert_eq!(r.auth_methods, vec![AuthMethod::from(AuthMethodAgent::new("a", "A"))]);
    }
}
