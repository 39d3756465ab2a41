//! The v2 JSON-RPC messages of the schema (`ClientRequest`, `AgentRequest`, `ClientResponse`,
//! `AgentResponse`, `ClientNotification`, `AgentNotification`, `ProtocolLevelNotification`):
//! internal (the connection reads frames through `jsonrpc`), public with feature
//! `test-exports` for the oracles, which check them against the schema. Each is
//! an id, a method and its typed params (see [`v2::ClientRequest`](super::ClientRequest), …), or an id and a typed
//! result or an [`Error`]. The `"jsonrpc": "2.0"` member belongs to the framing, not to these
//! definitions: it is neither read nor written here.
//!
//! ```
//! use acp_proto::v2::{self, envelope::ClientRequest};
//! let req: ClientRequest = serde_json::from_str(
//!     r#"{"id":1,"method":"session/cancel_all","params":{"x":1}}"#,
//! ).unwrap();
//! assert!(matches!(req.params, v2::ClientRequest::Ext(_)));
//! let req: Result<ClientRequest, _> = serde_json::from_str(r#"{"id":2,"method":"session/prompt","params":{}}"#);
//! assert!(req.is_err(), "a table method's params must decode");
//! ```

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::*;

/// The readable error of a message of `method` that did not decode (an envelope's).
pub(crate) fn invalid_of(method: &str, e: &DecodeError) -> String {
    format!("invalid params of `{method}`: {}", e.reason())
}

/// What every envelope reads before its params are decoded.
#[derive(Deserialize)]
struct RawMessage {
    #[serde(default)]
    id: Option<RequestId>,
    method: String,
    #[serde(default)]
    params: Option<Value>,
}

/// What an envelope carries: one of the v2 unions of params (or results) keyed by method
/// ([`v2::ClientRequest`](super::ClientRequest), …). The generated unions implement it with
/// their own `method`, `has_value` and `decode`.
pub trait Keyed: Serialize + Sized {
    /// The wire method name.
    fn method(&self) -> &str;
    /// Whether there is a value to write.
    fn has_value(&self) -> bool;
    /// Decodes `value` as the params (or result) of `method`.
    fn decode(method: &str, value: Option<Value>) -> Result<Self, DecodeError>;
}

/// A request: an id, a method and its typed params.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestEnvelope<P> {
    /// The request id.
    pub id: RequestId,
    /// The method and its params.
    pub params: P,
}

/// A notification: a method and its typed params.
#[derive(Debug, Clone, PartialEq)]
pub struct NotificationEnvelope<P> {
    /// The method and its params.
    pub params: P,
}

/// A response: the id of the request it answers and its typed result, or an [`Error`].
///
/// A result is typed by the method of the request it answers, which the response does not
/// carry: decode with [`Self::decode`], giving that method.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseEnvelope<R> {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result, or the error.
    pub outcome: Result<R, Error>,
}

/// A request the client sends (`ClientRequest`).
pub type ClientRequest = RequestEnvelope<super::ClientRequest>;
/// A request the agent sends (`AgentRequest`).
pub type AgentRequest = RequestEnvelope<super::AgentRequest>;
/// A notification the client sends (`ClientNotification`).
pub type ClientNotification = NotificationEnvelope<super::ClientNotification>;
/// A notification the agent sends (`AgentNotification`).
pub type AgentNotification = NotificationEnvelope<super::AgentNotification>;
/// A protocol-level notification, `$/…`, either side (`ProtocolLevelNotification`).
pub type ProtocolLevelNotification = NotificationEnvelope<super::ProtocolNotification>;
/// The agent's answer to a client request (`AgentResponse`).
pub type AgentResponse = ResponseEnvelope<super::AgentResponse>;
/// The client's answer to an agent request (`ClientResponse`).
pub type ClientResponse = ResponseEnvelope<super::ClientResponse>;

/// Writes `{"id"?, "method", "params"?}`.
fn write_message<S: Serializer, P: Keyed>(s: S, id: Option<&RequestId>, params: &P) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(None)?;
    if let Some(id) = id {
        m.serialize_entry("id", id)?;
    }
    m.serialize_entry("method", params.method())?;
    if params.has_value() {
        m.serialize_entry("params", params)?;
    }
    m.end()
}

/// Reads a message's method and decodes its params.
fn read_params<'de, D: Deserializer<'de>, P: Keyed>(raw: RawMessage) -> Result<P, D::Error> {
    P::decode(&raw.method, raw.params).map_err(|e| D::Error::custom(invalid_of(&raw.method, &e)))
}

impl<P: Keyed> Serialize for RequestEnvelope<P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_message(s, Some(&self.id), &self.params)
    }
}

impl<'de, P: Keyed> Deserialize<'de> for RequestEnvelope<P> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut raw = RawMessage::deserialize(d)?;
        let id = raw.id.take().ok_or_else(|| D::Error::missing_field("id"))?;
        Ok(RequestEnvelope { id, params: read_params::<D, P>(raw)? })
    }
}

impl<P: Keyed> Serialize for NotificationEnvelope<P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_message(s, None, &self.params)
    }
}

impl<'de, P: Keyed> Deserialize<'de> for NotificationEnvelope<P> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawMessage::deserialize(d)?;
        Ok(NotificationEnvelope { params: read_params::<D, P>(raw)? })
    }
}

impl<R: Keyed> ResponseEnvelope<R> {
    /// Decodes a response object to a request of `method`.
    pub fn decode(value: Value, method: &str) -> Result<Self, DecodeError> {
        let bad = |reason: &str| DecodeError::Invalid(format!("a response to `{method}`: {reason}"));
        let Value::Object(mut fields) = value else { return Err(bad("a response must be an object")) };
        let id = fields.remove("id").ok_or_else(|| bad("missing field `id`"))?;
        let id = RequestId::deserialize(id).map_err(|e| bad(&e.to_string()))?;
        let outcome = match (fields.remove("result"), fields.remove("error")) {
            (Some(result), None) => Ok(R::decode(method, Some(result))?),
            (None, Some(error)) => Err(Error::deserialize(error).map_err(|e| bad(&e.to_string()))?),
            _ => return Err(bad("a response has exactly one of `result` and `error`")),
        };
        Ok(ResponseEnvelope { id, outcome })
    }
}

impl<R: Keyed> Serialize for ResponseEnvelope<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("id", &self.id)?;
        match &self.outcome {
            Ok(result) => m.serialize_entry("result", result)?,
            Err(error) => m.serialize_entry("error", error)?,
        }
        m.end()
    }
}
