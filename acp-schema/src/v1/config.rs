//! Session configuration options (`configOptions`, `session/set_config_option`): selectors
//! and toggles the agent exposes for a session, such as the model or the mode.

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::ids::{SessionConfigGroupId, SessionConfigId, SessionConfigValueId, SessionId};
use super::serde_util::{Meta, lenient, lenient_items};

/// A configuration option of a session and its current value.
///
/// On the wire the common fields sit next to the fields of the `type`-specific part, which is
/// [`SessionConfigOption::kind`]. An unknown `type` decodes as
/// [`SessionConfigKind::Unknown`] holding the `type` and every key that is not a common field,
/// so the option still round-trips.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigOption {
    /// The option's id.
    pub id: SessionConfigId,
    /// The label shown to the user.
    pub name: String,
    /// A longer explanation for the user.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// What the option is about, to help clients lay it out. Purely cosmetic.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub category: Option<SessionConfigOptionCategory>,
    /// The kind of control and its current value (the `type`-tagged fields).
    #[serde(flatten)]
    pub kind: SessionConfigKind,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionConfigOption {
    /// An option of the given kind, without description or category.
    pub fn new(id: impl Into<SessionConfigId>, name: impl Into<String>, kind: SessionConfigKind) -> Self {
        SessionConfigOption { id: id.into(), name: name.into(), description: None, category: None, kind, meta: None }
    }

    /// A single-choice selector.
    pub fn select(
        id: impl Into<SessionConfigId>,
        name: impl Into<String>,
        current_value: impl Into<SessionConfigValueId>,
        options: SessionConfigSelectOptions,
    ) -> Self {
        let select = SessionConfigSelect::new(current_value, options);
        Self::new(id, name, SessionConfigKind::Select(select))
    }

    /// An on/off toggle. Only send it to clients that advertise
    /// `session.configOptions.boolean`.
    pub fn boolean(id: impl Into<SessionConfigId>, name: impl Into<String>, current_value: bool) -> Self {
        Self::new(id, name, SessionConfigKind::Boolean(SessionConfigBoolean::new(current_value)))
    }
}

crate::v1::serde_util::tagged_union! {
    /// The `type`-specific part of a [`SessionConfigOption`].
    pub enum SessionConfigKind, tag = "type", expecting = "a session config option object" {
        /// A single-choice selector (dropdown).
        Select(SessionConfigSelect) = "select",
        /// An on/off toggle.
        Boolean(SessionConfigBoolean) = "boolean",
    }
}

crate::v1::serde_util::string_enum! {
    /// What a configuration option is about. Cosmetic only; any other string is allowed
    /// (names starting with `_` are reserved for custom categories).
    pub enum SessionConfigOptionCategory {
        /// The session mode.
        Mode = "mode",
        /// The model.
        Model = "model",
        /// Settings of the model.
        ModelConfig = "model_config",
        /// **Unstable** (`unstable_speed_config_category`): response speed, such as a fast
        /// mode toggle. Without the feature, `"speed"` decodes as `Unknown("speed")`.
        Speed = "speed" [feature = "unstable_speed_config_category"],
        /// How much the model thinks or reasons.
        ThoughtLevel = "thought_level",
    }
}

/// The values a select option offers: a flat list, or a list of labelled groups.
///
/// Untagged on the wire. An array whose items all decode as plain values is flat (the empty
/// array included); otherwise it must be an array of groups.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SessionConfigSelectOptions {
    /// A flat list of values.
    Ungrouped(Vec<SessionConfigSelectOption>),
    /// Values arranged in groups.
    Grouped(Vec<SessionConfigSelectGroup>),
}

impl<'de> Deserialize<'de> for SessionConfigSelectOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        fn all<'a, T: Deserialize<'a>>(items: &'a [Value]) -> Result<Vec<T>, serde_json::Error> {
            items.iter().map(T::deserialize).collect()
        }
        let items = Vec::<Value>::deserialize(d)?;
        // The schema's order: flat first, then grouped.
        let flat_err = match all::<SessionConfigSelectOption>(&items) {
            Ok(flat) => return Ok(SessionConfigSelectOptions::Ungrouped(flat)),
            Err(e) => e,
        };
        let grouped_err = match all::<SessionConfigSelectGroup>(&items) {
            Ok(groups) => return Ok(SessionConfigSelectOptions::Grouped(groups)),
            Err(e) => e,
        };
        // Report the error of the shape the first item looks like.
        let looks_grouped = items.first().and_then(Value::as_object).is_some_and(|o| o.contains_key("group"));
        Err(if looks_grouped {
            D::Error::custom(format_args!("grouped select options: {grouped_err}"))
        } else {
            D::Error::custom(format_args!("select options: {flat_err}"))
        })
    }
}

impl From<Vec<SessionConfigSelectOption>> for SessionConfigSelectOptions {
    fn from(options: Vec<SessionConfigSelectOption>) -> Self {
        SessionConfigSelectOptions::Ungrouped(options)
    }
}

impl From<Vec<SessionConfigSelectGroup>> for SessionConfigSelectOptions {
    fn from(groups: Vec<SessionConfigSelectGroup>) -> Self {
        SessionConfigSelectOptions::Grouped(groups)
    }
}

/// One value of a select option.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigSelectOption {
    /// The value's id.
    pub value: SessionConfigValueId,
    /// The label shown to the user.
    pub name: String,
    /// A longer explanation for the user.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionConfigSelectOption {
    /// A value with an id and a label.
    pub fn new(value: impl Into<SessionConfigValueId>, name: impl Into<String>) -> Self {
        SessionConfigSelectOption { value: value.into(), name: name.into(), description: None, meta: None }
    }
}

/// A labelled group of values of a select option.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigSelectGroup {
    /// The group's id.
    pub group: SessionConfigGroupId,
    /// The label shown to the user.
    pub name: String,
    /// The values in the group. Malformed entries are dropped.
    #[serde(default, deserialize_with = "lenient_items")]
    pub options: Vec<SessionConfigSelectOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionConfigSelectGroup {
    /// A group holding `options`.
    pub fn new(
        group: impl Into<SessionConfigGroupId>,
        name: impl Into<String>,
        options: Vec<SessionConfigSelectOption>,
    ) -> Self {
        SessionConfigSelectGroup { group: group.into(), name: name.into(), options, meta: None }
    }
}

/// The fields of a `select` option.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigSelect {
    /// The selected value.
    pub current_value: SessionConfigValueId,
    /// The values to choose from.
    pub options: SessionConfigSelectOptions,
}

impl SessionConfigSelect {
    /// A selector over `options` with `current_value` selected.
    pub fn new(current_value: impl Into<SessionConfigValueId>, options: impl Into<SessionConfigSelectOptions>) -> Self {
        SessionConfigSelect { current_value: current_value.into(), options: options.into() }
    }
}

/// The fields of a `boolean` option.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigBoolean {
    /// Whether the option is on.
    pub current_value: bool,
}

impl SessionConfigBoolean {
    /// A toggle that is on when `current_value` is true.
    pub fn new(current_value: bool) -> Self {
        SessionConfigBoolean { current_value }
    }
}

/// Parameters of `session/set_config_option` (client to agent).
///
/// The new value is `{"type": "boolean", "value": true}` for a toggle and `{"value": "id"}`
/// for a select option; see [`SessionConfigOptionValue`] for the decoding rules.
#[derive(Debug, Clone, PartialEq)]
pub struct SetSessionConfigOptionRequest {
    /// The session concerned.
    pub session_id: SessionId,
    /// The option to set.
    pub config_id: SessionConfigId,
    /// The new value.
    pub value: SessionConfigOptionValue,
    /// Extension metadata.
    pub meta: Option<Meta>,
}

impl SetSessionConfigOptionRequest {
    /// Sets `config_id` of `session_id` to `value`.
    pub fn new(
        session_id: impl Into<SessionId>,
        config_id: impl Into<SessionConfigId>,
        value: impl Into<SessionConfigOptionValue>,
    ) -> Self {
        SetSessionConfigOptionRequest {
            session_id: session_id.into(),
            config_id: config_id.into(),
            value: value.into(),
            meta: None,
        }
    }
}

/// The value sent by `session/set_config_option`.
///
/// Decoding: a boolean `value` is [`Boolean`](Self::Boolean) (its `type` should be
/// `"boolean"`; a missing `type` is tolerated); a string `value` is
/// [`ValueId`](Self::ValueId) whatever the `type` says, as the schema's `value_id` branch
/// allows (the `type` key is then dropped). Anything else is an error.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SessionConfigOptionValue {
    /// The new state of a `boolean` option; encoded with `"type": "boolean"`.
    Boolean(bool),
    /// The id of the value chosen for a `select` option; encoded without `type`.
    ValueId(SessionConfigValueId),
}

impl From<bool> for SessionConfigOptionValue {
    fn from(b: bool) -> Self {
        SessionConfigOptionValue::Boolean(b)
    }
}

impl From<SessionConfigValueId> for SessionConfigOptionValue {
    fn from(id: SessionConfigValueId) -> Self {
        SessionConfigOptionValue::ValueId(id)
    }
}

impl From<&str> for SessionConfigOptionValue {
    fn from(id: &str) -> Self {
        SessionConfigOptionValue::ValueId(id.into())
    }
}

impl Serialize for SetSessionConfigOptionRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("sessionId", &self.session_id)?;
        map.serialize_entry("configId", &self.config_id)?;
        self.value.write_entries(&mut map)?;
        if let Some(meta) = &self.meta {
            map.serialize_entry("_meta", meta)?;
        }
        map.end()
    }
}

/// The wire form of [`SetSessionConfigOptionRequest`] before the value is interpreted.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SetConfigWire {
    session_id: SessionId,
    config_id: SessionConfigId,
    #[serde(rename = "type", default)]
    kind: Option<Value>,
    #[serde(default)]
    value: Option<Value>,
    #[serde(rename = "_meta", default, deserialize_with = "lenient")]
    meta: Option<Meta>,
}

impl SessionConfigOptionValue {
    /// Reads the `type` and `value` keys of a config value on the wire (`session/set_config_option`
    /// and the unstable initial values share the shape), as described on the type.
    pub(crate) fn from_wire<E: serde::de::Error>(kind: Option<&Value>, value: Option<Value>) -> Result<Self, E> {
        let boolean_or_untyped = match kind {
            None => true,
            Some(Value::String(t)) => t == "boolean",
            Some(_) => false,
        };
        match value {
            None => Err(E::missing_field("value")),
            Some(Value::String(id)) => Ok(SessionConfigOptionValue::ValueId(id.into())),
            Some(Value::Bool(b)) if boolean_or_untyped => Ok(SessionConfigOptionValue::Boolean(b)),
            Some(Value::Bool(_)) => Err(E::custom("a boolean config `value` needs `type: \"boolean\"`")),
            Some(other) => {
                Err(E::custom(format_args!("config `value` must be a boolean or a value id string, got {other}")))
            }
        }
    }

    /// Writes the `type` (booleans only) and `value` entries.
    pub(crate) fn write_entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        match self {
            SessionConfigOptionValue::Boolean(b) => {
                map.serialize_entry("type", "boolean")?;
                map.serialize_entry("value", b)
            }
            SessionConfigOptionValue::ValueId(id) => map.serialize_entry("value", id),
        }
    }
}

impl<'de> Deserialize<'de> for SetSessionConfigOptionRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = SetConfigWire::deserialize(d)?;
        let value = SessionConfigOptionValue::from_wire(wire.kind.as_ref(), wire.value)?;
        Ok(SetSessionConfigOptionRequest {
            session_id: wire.session_id,
            config_id: wire.config_id,
            value,
            meta: wire.meta,
        })
    }
}

/// Result of `session/set_config_option`: every option with its new state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetSessionConfigOptionResponse {
    /// All of the session's options, since one change may affect others. Malformed entries
    /// are dropped.
    #[serde(default, deserialize_with = "lenient_items")]
    pub config_options: Vec<SessionConfigOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SetSessionConfigOptionResponse {
    /// A response listing `config_options`.
    pub fn new(config_options: Vec<SessionConfigOption>) -> Self {
        SetSessionConfigOptionResponse { config_options, meta: None }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn speed_category_is_known_only_with_its_feature() {
        let category: SessionConfigOptionCategory = serde_json::from_str(r#""speed""#).unwrap();
        #[cfg(feature = "unstable_speed_config_category")]
        assert_eq!(category, SessionConfigOptionCategory::Speed);
        #[cfg(not(feature = "unstable_speed_config_category"))]
        assert_eq!(category, SessionConfigOptionCategory::Unknown("speed".into()));
        assert_eq!(serde_json::to_string(&category).unwrap(), r#""speed""#);
        assert_eq!(
            SessionConfigOptionCategory::KNOWN.len(),
            if cfg!(feature = "unstable_speed_config_category") { 5 } else { 4 }
        );
    }

    fn round_trip_option(input: Value) -> SessionConfigOption {
        let o: SessionConfigOption = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&o).unwrap(), input);
        let from_str: SessionConfigOption = serde_json::from_str(&input.to_string()).unwrap();
        assert_eq!(from_str, o);
        o
    }

    #[test]
    fn docs_select_option_round_trips() {
        // From docs/session-config-options.mdx.
        let o = round_trip_option(json!({
            "id": "mode",
            "name": "Session Mode",
            "description": "Controls how the agent requests permission",
            "category": "mode",
            "type": "select",
            "currentValue": "ask",
            "options": [
                {"value": "ask", "name": "Ask", "description": "Request permission before making any changes"},
                {"value": "code", "name": "Code", "description": "Write and modify code with full tool access"}
            ]
        }));
        assert_eq!(o.category, Some(SessionConfigOptionCategory::Mode));
        let SessionConfigKind::Select(select) = &o.kind else { panic!("not a select") };
        assert_eq!(select.current_value, "ask");
        assert!(matches!(select.options, SessionConfigSelectOptions::Ungrouped(ref v) if v.len() == 2));
    }

    #[test]
    fn docs_boolean_option_round_trips() {
        let o = round_trip_option(json!({
            "id": "brave_mode",
            "name": "Brave Mode",
            "description": "Skip confirmation prompts and act autonomously",
            "type": "boolean",
            "currentValue": true
        }));
        assert_eq!(o.kind, SessionConfigKind::Boolean(SessionConfigBoolean { current_value: true }));
        assert_eq!(
            serde_json::to_string(&SessionConfigOption::boolean("b", "B", false)).unwrap(),
            r#"{"id":"b","name":"B","type":"boolean","currentValue":false}"#
        );
    }

    #[test]
    fn grouped_options_and_custom_category_round_trip() {
        let o = round_trip_option(json!({
            "id": "model",
            "name": "Model",
            "category": "_vendor_speed",
            "type": "select",
            "currentValue": "m1",
            "options": [
                {"group": "fast", "name": "Fast", "options": [{"value": "m1", "name": "M1"}]},
                {"group": "smart", "name": "Smart", "options": [], "_meta": {"x": true}}
            ],
            "_meta": {"source": "test"}
        }));
        assert_eq!(o.category, Some(SessionConfigOptionCategory::Unknown("_vendor_speed".into())));
        let SessionConfigKind::Select(select) = &o.kind else { panic!("not a select") };
        assert!(matches!(select.options, SessionConfigSelectOptions::Grouped(ref g) if g.len() == 2));
        let empty = round_trip_option(json!({
            "id": "e", "name": "E", "type": "select", "currentValue": "x", "options": []
        }));
        assert!(matches!(
            empty.kind,
            SessionConfigKind::Select(SessionConfigSelect { options: SessionConfigSelectOptions::Ungrouped(_), .. })
        ));
    }

    #[test]
    fn unknown_option_type_is_kept() {
        let input = json!({
            "id": "temp", "name": "Temperature", "type": "slider", "min": 0, "max": 2, "currentValue": 0.7
        });
        let o = round_trip_option(input);
        let SessionConfigKind::Unknown(u) = &o.kind else { panic!("expected unknown kind") };
        assert_eq!(u.tag("type"), Some("slider"));
        assert!(!u.0.contains_key("id"));
    }

    #[test]
    fn option_errors() {
        let e = serde_json::from_value::<SessionConfigOption>(json!({"id": "x", "name": "X"})).unwrap_err();
        assert!(e.to_string().contains("missing field `type`"), "{e}");
        let e = serde_json::from_value::<SessionConfigOption>(json!({
            "id": "x", "name": "X", "type": "select", "currentValue": "a", "options": [{"name": "A"}]
        }))
        .unwrap_err();
        assert!(e.to_string().contains("missing field `value`"), "{e}");
    }

    #[test]
    fn set_config_option_both_forms() {
        // From docs/session-config-options.mdx.
        let id_form = json!({"sessionId": "sess_abc123def456", "configId": "mode", "value": "code"});
        let r: SetSessionConfigOptionRequest = serde_json::from_value(id_form.clone()).unwrap();
        assert_eq!(r, SetSessionConfigOptionRequest::new("sess_abc123def456", "mode", "code"));
        assert_eq!(serde_json::to_value(&r).unwrap(), id_form);

        let bool_form = r#"{"sessionId":"sess_abc123def456","configId":"brave_mode","type":"boolean","value":true}"#;
        let r: SetSessionConfigOptionRequest = serde_json::from_str(bool_form).unwrap();
        assert_eq!(r.value, SessionConfigOptionValue::Boolean(true));
        assert_eq!(serde_json::to_string(&r).unwrap(), bool_form);

        let with_meta =
            json!({"value": false, "type": "boolean", "configId": "c", "sessionId": "s", "_meta": {"a": 1}});
        let r: SetSessionConfigOptionRequest = serde_json::from_value(with_meta.clone()).unwrap();
        assert!(r.meta.is_some());
        assert_eq!(serde_json::to_value(&r).unwrap(), with_meta);
    }

    #[test]
    fn set_config_option_edge_cases() {
        // An unknown `type` with a string payload is a value id (the schema's `value_id`
        // branch); the `type` key is dropped.
        let r: SetSessionConfigOptionRequest =
            serde_json::from_value(json!({"sessionId": "s", "configId": "c", "type": "future", "value": "v"})).unwrap();
        assert_eq!(r.value, SessionConfigOptionValue::ValueId("v".into()));
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"sessionId": "s", "configId": "c", "value": "v"}));
        // A boolean without `type` is tolerated.
        let r: SetSessionConfigOptionRequest =
            serde_json::from_value(json!({"sessionId": "s", "configId": "c", "value": true})).unwrap();
        assert_eq!(r.value, SessionConfigOptionValue::Boolean(true));
        for bad in [
            json!({"sessionId": "s", "configId": "c"}),
            json!({"sessionId": "s", "configId": "c", "value": 3}),
            json!({"sessionId": "s", "configId": "c", "type": "number", "value": true}),
            json!({"sessionId": "s", "value": "v"}),
        ] {
            assert!(serde_json::from_value::<SetSessionConfigOptionRequest>(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn set_config_option_response_skips_bad_options() {
        let r: SetSessionConfigOptionResponse = serde_json::from_value(json!({
            "configOptions": [
                {"id": "b", "name": "B", "type": "boolean", "currentValue": true},
                {"id": "broken", "name": "Broken", "type": "boolean"}
            ]
        }))
        .unwrap();
        assert_eq!(r.config_options, vec![SessionConfigOption::boolean("b", "B", true)]);
    }
}
