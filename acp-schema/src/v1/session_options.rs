//! **Unstable** session options (feature `unstable_session_options`): `session/options` (client
//! to agent) tells which modes and config options a session would start with, without creating
//! or changing one; and session setup requests (`session/new`, `session/load`,
//! `session/resume`, the unstable `session/fork`) carry initial config option values
//! ([`InitialSessionConfigOption`], their `config_options` field). Both need the agent's
//! `sessionCapabilities.options`: the client's core refuses `session/options`, and a setup
//! request with a non-empty `config_options`, to an agent that did not advertise it.
//!
//! # Why `config_options` exists without the feature
//!
//! The field is on stable request structs. Were it `#[cfg]`-gated, a crate that builds
//! `NewSessionRequest { cwd, .. }` with a struct literal would stop compiling as soon as another
//! crate of the same build turned the feature on (cargo unifies features). So the field always
//! exists (literals name it, or use the constructors) and only its wire form depends on the
//! feature: with it, it is (de)serialized; without it, it never is. Then a non-empty list is
//! refused by the core when sent (`acp_proto::SendError::Encode`, naming the
//! feature, rather than silently dropped) and an inbound one is ignored like any unknown key.
//! [`InitialSessionConfigOption`] is therefore always compiled too; the method and its types
//! are not.
//!
//! ```
//! use acp_schema::v1::{InitialSessionConfigOption, NewSessionRequest};
//! let mut new = NewSessionRequest::new("/work", Vec::new());
//! new.config_options = Some(vec![InitialSessionConfigOption::new("model", "fast")]);
//! # #[cfg(feature = "unstable_session_options")]
//! assert_eq!(
//!     serde_json::to_value(&new).unwrap()["configOptions"],
//!     serde_json::json!([{"configId": "model", "value": "fast"}])
//! );
//! ```

use serde::de::Deserializer;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::config::SessionConfigOptionValue;
use super::ids::SessionConfigId;
use super::serde_util::{Meta, lenient};

/// **Unstable** (`unstable_session_options`): an initial value for one config option, sent
/// with a session setup request: `session/set_config_option`'s shape without `sessionId`.
/// Unlike that method, an unknown `configId`, a `type` that does not match the option or a
/// value that is not allowed is ignored by the agent, not refused (malformed entries and
/// duplicate ids fail the request with `-32602`). Send a boolean only if this client
/// advertised `sessionCapabilities.configOptions.boolean`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitialSessionConfigOption {
    /// The option to set.
    pub config_id: SessionConfigId,
    /// Its initial value (decoded as for `session/set_config_option`).
    pub value: SessionConfigOptionValue,
    /// Extension metadata.
    pub meta: Option<Meta>,
}

impl InitialSessionConfigOption {
    /// Starts `config_id` at `value`.
    pub fn new(config_id: impl Into<SessionConfigId>, value: impl Into<SessionConfigOptionValue>) -> Self {
        InitialSessionConfigOption { config_id: config_id.into(), value: value.into(), meta: None }
    }
}

impl Serialize for InitialSessionConfigOption {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("configId", &self.config_id)?;
        self.value.write_entries(&mut map)?;
        if let Some(meta) = &self.meta {
            map.serialize_entry("_meta", meta)?;
        }
        map.end()
    }
}

/// The wire form of [`InitialSessionConfigOption`] before the value is interpreted.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitialWire {
    config_id: SessionConfigId,
    #[serde(rename = "type", default)]
    kind: Option<Value>,
    #[serde(default)]
    value: Option<Value>,
    #[serde(rename = "_meta", default, deserialize_with = "lenient")]
    meta: Option<Meta>,
}

impl<'de> Deserialize<'de> for InitialSessionConfigOption {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = InitialWire::deserialize(d)?;
        let value = SessionConfigOptionValue::from_wire(wire.kind.as_ref(), wire.value)?;
        Ok(InitialSessionConfigOption { config_id: wire.config_id, value, meta: wire.meta })
    }
}

#[cfg(feature = "unstable_session_options")]
pub use method::*;

#[cfg(feature = "unstable_session_options")]
mod method {
    use serde::{Deserialize, Serialize};

    use super::super::config::SessionConfigOption;
    use super::super::ids::SessionId;
    use super::super::serde_util::{Meta, lenient, lenient_vec};
    use super::super::session::SessionModeState;

    /// Parameters of `session/options` (client to agent); needs the agent's
    /// `sessionCapabilities.options`. The agent must not create, resume or change a session
    /// for it, nor send `session/update`s.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionOptionsRequest {
        /// The absolute working directory to resolve options for.
        pub cwd: String,
        /// Extra absolute workspace roots to resolve options for (absent: none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub additional_directories: Option<Vec<String>>,
        /// An existing session: the options `session/load` or `session/resume` would give it
        /// (unknown: `-32002`). Absent: a new session. Send only to an agent that supports
        /// `session/load` or `session/resume`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub session_id: Option<SessionId>,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
        pub meta: Option<Meta>,
    }

    impl SessionOptionsRequest {
        /// The options a new session in `cwd` would start with.
        pub fn new(cwd: impl Into<String>) -> Self {
            SessionOptionsRequest { cwd: cwd.into(), additional_directories: None, session_id: None, meta: None }
        }
    }

    /// Result of `session/options`: a snapshot; the options a session really starts with are
    /// those of its setup answer.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionOptionsResponse {
        /// The modes the session would start with, if the agent has modes.
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
        pub modes: Option<SessionModeState>,
        /// The config options it would start with (as on `session/new`'s answer). Malformed
        /// entries are dropped.
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
        pub config_options: Option<Vec<SessionConfigOption>>,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
        pub meta: Option<Meta>,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn initial_values_share_the_set_config_option_shape() {
        let entries = json!([
            {"configId": "model", "value": "fast"},
            {"configId": "web", "type": "boolean", "value": true, "_meta": {"k": 1}},
            {"configId": "x", "type": "_future", "value": "v"}
        ]);
        let decoded: Vec<InitialSessionConfigOption> = serde_json::from_value(entries).unwrap();
        assert_eq!(decoded[0], InitialSessionConfigOption::new("model", "fast"));
        assert_eq!(decoded[1].value, SessionConfigOptionValue::Boolean(true));
        assert_eq!(decoded[2].value, SessionConfigOptionValue::ValueId("v".into()));
        assert_eq!(
            serde_json::to_value(&decoded).unwrap(),
            json!([
                {"configId": "model", "value": "fast"},
                {"configId": "web", "type": "boolean", "value": true, "_meta": {"k": 1}},
                {"configId": "x", "value": "v"}
            ])
        );
        for bad in
            [json!({"configId": "m"}), json!({"configId": "m", "type": "select", "value": true}), json!({"value": "v"})]
        {
            assert!(serde_json::from_value::<InitialSessionConfigOption>(bad.clone()).is_err(), "{bad}");
        }
    }

    /// The oracle cannot reach the setup requests yet (they reference `McpServer`, whose
    /// unstable variant is another group's), so one instance of each round-trips here.
    #[cfg(feature = "unstable_session_options")]
    #[test]
    fn setup_requests_carry_initial_values_with_the_feature() {
        use super::super::{LoadSessionRequest, NewSessionRequest, ResumeSessionRequest};
        let values = json!([{"configId": "web", "type": "boolean", "value": false}]);
        let new = json!({"cwd": "/w", "mcpServers": [], "configOptions": values});
        let decoded: NewSessionRequest = serde_json::from_value(new.clone()).unwrap();
        assert_eq!(decoded.config_options.as_ref().map(Vec::len), Some(1));
        assert_eq!(serde_json::to_value(&decoded).unwrap(), new);
        let load = json!({"sessionId": "s", "cwd": "/w", "mcpServers": [], "configOptions": values});
        let decoded: LoadSessionRequest = serde_json::from_value(load.clone()).unwrap();
        assert_eq!(serde_json::to_value(&decoded).unwrap(), load);
        let resume = json!({"sessionId": "s", "cwd": "/w", "configOptions": values});
        let decoded: ResumeSessionRequest = serde_json::from_value(resume.clone()).unwrap();
        assert_eq!(serde_json::to_value(&decoded).unwrap(), resume);
        // `null` means none; a malformed entry fails the request (`-32602` from the agent).
        let null: NewSessionRequest = serde_json::from_value(json!({"cwd": "/w", "configOptions": null})).unwrap();
        assert_eq!(null.config_options, None);
        let bad = json!({"cwd": "/w", "configOptions": [{"configId": "m"}]});
        assert!(serde_json::from_value::<NewSessionRequest>(bad).is_err());
    }

    /// Without the feature the field never reaches the wire, either way.
    #[cfg(not(feature = "unstable_session_options"))]
    #[test]
    fn without_the_feature_config_options_stay_off_the_wire() {
        let mut new = super::super::NewSessionRequest::new("/w", Vec::new());
        new.config_options = Some(vec![InitialSessionConfigOption::new("model", "fast")]);
        assert!(serde_json::to_value(&new).unwrap().get("configOptions").is_none());
        let wire = json!({"cwd": "/w", "mcpServers": [], "configOptions": [{"configId": "m", "value": "v"}]});
        let decoded: super::super::NewSessionRequest = serde_json::from_value(wire).unwrap();
        assert_eq!(decoded.config_options, None);
    }
}
