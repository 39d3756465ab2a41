//! The v2 definitions written by hand: the ones whose shape the generator does not map
//! (untagged unions chosen by shape, objects that carry a union beside their own fields, the
//! error object). Each keeps the v1 conventions: lossless where the schema allows any value,
//! an `Unknown` (or `Other`) variant for what this version does not know.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::*;
use crate::v1::serde_util::{lenient, tagged_union};

/// The JSON-RPC request id (`RequestId`): an integer or a string. The v1 type, which also
/// reads the `null` id of an error response that answers no request.
pub use crate::RequestId;

/// The error code of an [`Error`] (`ErrorCode`): any 32-bit integer, with the predefined codes
/// as constants ([`ErrorCode::RESOURCE_NOT_FOUND`], …). The v1 type: v2 only adds `-32022`
/// (unsupported protocol version), which it keeps like any other code.
pub use crate::ErrorCode;

/// A JSON-RPC error object (`Error`) with v2's typed `data`.
///
/// ```
/// use acp_schema::v2::{Error, ErrorCode, ErrorData};
/// let e: Error = serde_json::from_str(
///     r#"{"code":-32002,"message":"no such session","data":{"sessionId":"s1"}}"#,
/// ).unwrap();
/// assert_eq!(e.code, ErrorCode(-32002));
/// assert!(matches!(e.data, Some(ErrorData::SessionNotFound(_))));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Error {
    /// The error code.
    pub code: ErrorCode,
    /// A short description of the error.
    pub message: String,
    /// Details; a value that does not decode is dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub data: Option<ErrorData>,
}

impl Error {
    /// An error of `code` with `message`, without `data`.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> Self {
        Error { code: code.into(), message: message.into(), data: None }
    }
}

/// The `data` of an [`Error`] (`ErrorData`): one of the typed payloads when the value is
/// exactly one of them (it re-encodes to itself), otherwise any JSON value, kept verbatim.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ErrorData {
    /// The data of `-32022` (unsupported protocol version).
    UnsupportedProtocolVersion(UnsupportedProtocolVersionErrorData),
    /// The data of `-32002` for an unknown session.
    SessionNotFound(SessionNotFoundErrorData),
    /// Any other value.
    Other(Value),
}

/// `Some(t)` when `value` decodes as `T` and re-encodes to exactly `value` (nothing dropped).
fn lossless<T: DeserializeOwned + Serialize>(value: &Value) -> Option<T> {
    let t = T::deserialize(value).ok()?;
    (serde_json::to_value(&t).ok()? == *value).then_some(t)
}

impl Serialize for ErrorData {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ErrorData::UnsupportedProtocolVersion(d) => d.serialize(s),
            ErrorData::SessionNotFound(d) => d.serialize(s),
            ErrorData::Other(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ErrorData {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if let Some(t) = lossless(&v) {
            return Ok(ErrorData::UnsupportedProtocolVersion(t));
        }
        if let Some(t) = lossless(&v) {
            return Ok(ErrorData::SessionNotFound(t));
        }
        Ok(ErrorData::Other(v))
    }
}

/// Why an idle session's last turn stopped (`IdleStateUpdate.stopReason`): the v1 values,
/// and any other string kept as `Unknown`.
pub use crate::v1::IdleStopReason;

/// The session is idle (`IdleStateUpdate`): in v2, the update that ends a prompt turn.
///
/// A newer stop reason may carry any keys: keys this version does not know are kept in
/// [`IdleStateUpdate::extra`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdleStateUpdate {
    /// Work still running in the background after the turn ended.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub background: Option<Vec<BackgroundWork>>,
    /// Why the turn stopped, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub stop_reason: Option<IdleStopReason>,
    /// With [`IdleStopReason::Error`]: what went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub error: Option<Error>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
    /// Other keys (those of a newer stop reason), kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Where an elicitation belongs (the scope part of [`ElicitationFormMode`] and
/// [`ElicitationUrlMode`]): an object with a `sessionId` is a session scope, otherwise a
/// request scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitationScope {
    /// Tied to a session (and maybe a tool call).
    Session(ElicitationSessionScope),
    /// Tied to a JSON-RPC request outside any session.
    Request(ElicitationRequestScope),
}

/// A form elicitation (`ElicitationFormMode`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationFormMode {
    /// The form to fill.
    pub requested_schema: ElicitationSchema,
    /// What the elicitation belongs to.
    #[serde(flatten)]
    pub scope: ElicitationScope,
}

/// A URL elicitation (`ElicitationUrlMode`): the client sends the user to a URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationUrlMode {
    /// The elicitation's id, echoed by `elicitation/complete`.
    pub elicitation_id: ElicitationId,
    /// The URL to open.
    pub url: String,
    /// What the elicitation belongs to.
    #[serde(flatten)]
    pub scope: ElicitationScope,
}

/// The resource of an embedded resource (`EmbeddedResourceResource`): text when it decodes as
/// text (it has a valid `text`), otherwise a blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EmbeddedResourceResource {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

/// The choices of a select config option (`SessionConfigSelectOptions`): flat when every item
/// decodes as a plain option (so `[]` is flat), otherwise grouped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SessionConfigSelectOptions {
    /// A flat list.
    Flat(Vec<SessionConfigSelectOption>),
    /// Named groups.
    Grouped(Vec<SessionConfigSelectGroup>),
}

/// A value of an accepted elicitation form (`ElicitationContentValue`). Any other JSON value
/// (the schema allows one, for custom property types) is kept as `Other`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationContentValue {
    /// A string.
    String(String),
    /// An integer (a JSON integer that fits `i64`).
    Integer(i64),
    /// Any other number.
    Number(f64),
    /// A boolean.
    Boolean(bool),
    /// A list of strings.
    StringArray(Vec<String>),
    /// Any other value.
    Other(Value),
}

impl Serialize for ElicitationContentValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitationContentValue::String(v) => v.serialize(s),
            ElicitationContentValue::Integer(v) => v.serialize(s),
            ElicitationContentValue::Number(v) => v.serialize(s),
            ElicitationContentValue::Boolean(v) => v.serialize(s),
            ElicitationContentValue::StringArray(v) => v.serialize(s),
            ElicitationContentValue::Other(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitationContentValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => ElicitationContentValue::String(s),
            Value::Bool(b) => ElicitationContentValue::Boolean(b),
            Value::Number(n) if n.is_i64() => ElicitationContentValue::Integer(n.as_i64().unwrap_or_default()),
            Value::Number(n) if n.is_f64() => ElicitationContentValue::Number(n.as_f64().unwrap_or_default()),
            Value::Array(items) if items.iter().all(Value::is_string) => ElicitationContentValue::StringArray(
                items.into_iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
            ),
            other => ElicitationContentValue::Other(other),
        })
    }
}

/// The items of a multi-select property (`MultiSelectItems`): `"type": "string"` items,
/// titled items (no `type`; a non-string `type` counts as none), or a `type` this version does
/// not know, kept whole.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MultiSelectItems {
    /// Plain string choices.
    String(StringMultiSelectItems),
    /// Labelled choices.
    Titled(TitledMultiSelectItems),
    /// A kind this version does not know, kept as its whole JSON object.
    Unknown(UnknownVariant),
}

/// `value` encoded as an object, with `key: tag` first.
fn with_tag<T: Serialize, E: serde::ser::Error>(key: &str, tag: &str, value: &T) -> Result<Map<String, Value>, E> {
    let mut out = Map::new();
    out.insert(key.to_owned(), Value::String(tag.to_owned()));
    match serde_json::to_value(value).map_err(E::custom)? {
        Value::Object(fields) => out.extend(fields),
        _ => return Err(E::custom("a tagged variant must encode as an object")),
    }
    Ok(out)
}

impl Serialize for MultiSelectItems {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MultiSelectItems::String(items) => with_tag::<_, S::Error>("type", "string", items)?.serialize(s),
            MultiSelectItems::Titled(items) => items.serialize(s),
            MultiSelectItems::Unknown(u) => u.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for MultiSelectItems {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut fields = Map::<String, Value>::deserialize(d)?;
        match fields.get("type").and_then(Value::as_str) {
            Some("string") => {
                fields.remove("type");
                StringMultiSelectItems::deserialize(Value::Object(fields))
                    .map(MultiSelectItems::String)
                    .map_err(D::Error::custom)
            }
            Some(_) => Ok(MultiSelectItems::Unknown(UnknownVariant(fields))),
            None => {
                fields.remove("type");
                TitledMultiSelectItems::deserialize(Value::Object(fields))
                    .map(MultiSelectItems::Titled)
                    .map_err(D::Error::custom)
            }
        }
    }
}

/// The new value of a config option (`SetSessionConfigOptionRequest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetSessionConfigOptionRequest {
    /// The session.
    pub session_id: SessionId,
    /// The option to set.
    pub config_id: SessionConfigId,
    /// The value, discriminated by `type`.
    #[serde(flatten)]
    pub value: SessionConfigOptionValue,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SetSessionConfigOptionRequest {
    /// Sets the option `config_id` of `session_id` to `value`.
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

/// A select option's value id (`"type": "id"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigValueIdSetting {
    /// The chosen value.
    pub value: SessionConfigValueId,
}

/// A boolean option's value (`"type": "boolean"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigBooleanSetting {
    /// The new value.
    pub value: bool,
}

tagged_union! {
    /// The value part of [`SetSessionConfigOptionRequest`], discriminated by `type`.
    pub enum SessionConfigOptionValue, tag = "type", expecting = "a config option value" {
        /// A select option's value id.
        Id(ConfigValueIdSetting) = "id",
        /// A boolean option's value.
        Boolean(ConfigBooleanSetting) = "boolean",
    }
}

/// Decodes a required array the schema marks `x-deserialize-skip-invalid-items` (and not
/// `x-deserialize-default-on-error`): it must be an array; its items that do not decode are
/// dropped.
pub(crate) fn skip_invalid_items<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let items = Vec::<Value>::deserialize(d)?;
    Ok(items.into_iter().filter_map(|item| T::deserialize(item).ok()).collect())
}

impl RequestPermissionResponse {
    /// The `cancelled` outcome: the answer when the work that asked was cancelled, and what a
    /// client that does not ask the user answers.
    ///
    /// ```
    /// use acp_schema::v2::RequestPermissionResponse;
    /// let wire = serde_json::to_value(RequestPermissionResponse::cancelled()).unwrap();
    /// assert_eq!(wire, serde_json::json!({"outcome": {"outcome": "cancelled"}}));
    /// ```
    pub fn cancelled() -> Self {
        RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled(Default::default()))
    }
}
