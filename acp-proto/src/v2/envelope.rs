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
//! assert!(matches!(req.params, v2::ClientRequest::Other { .. }));
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

macro_rules! request_envelope {
    ($(#[$doc:meta])* $name:ident, $params:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            /// The request id.
            pub id: RequestId,
            /// The method and its params.
            pub params: $params,
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("id", &self.id)?;
                m.serialize_entry("method", self.params.method())?;
                if self.params.has_value() {
                    m.serialize_entry("params", &self.params)?;
                }
                m.end()
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = RawMessage::deserialize(d)?;
                let id = raw.id.ok_or_else(|| D::Error::missing_field("id"))?;
                let params = <$params>::decode(&raw.method, raw.params)
                    .map_err(|e| D::Error::custom(invalid_of(&raw.method, &e)))?;
                Ok($name { id, params })
            }
        }
    };
}

macro_rules! notification_envelope {
    ($(#[$doc:meta])* $name:ident, $params:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            /// The method and its params.
            pub params: $params,
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("method", self.params.method())?;
                if self.params.has_value() {
                    m.serialize_entry("params", &self.params)?;
                }
                m.end()
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = RawMessage::deserialize(d)?;
                let params = <$params>::decode(&raw.method, raw.params)
                    .map_err(|e| D::Error::custom(invalid_of(&raw.method, &e)))?;
                Ok($name { params })
            }
        }
    };
}

macro_rules! response_envelope {
    ($(#[$doc:meta])* $name:ident, $result:path) => {
        $(#[$doc])*
        ///
        /// A result is typed by the method of the request it answers, which the response does
        /// not carry: decode with [`Self::decode`], giving that method.
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            /// The id of the request it answers.
            pub id: RequestId,
            /// The result, or the error.
            pub outcome: Result<$result, Error>,
        }

        impl $name {
            /// Decodes a response object to a request of `method`.
            pub fn decode(value: Value, method: &str) -> Result<Self, DecodeError> {
                let bad = |reason: &str| DecodeError::Invalid(format!("a response to `{method}`: {reason}"));
                let Value::Object(mut fields) = value else { return Err(bad("a response must be an object")) };
                let id = fields.remove("id").ok_or_else(|| bad("missing field `id`"))?;
                let id = RequestId::deserialize(id).map_err(|e| bad(&e.to_string()))?;
                let outcome = match (fields.remove("result"), fields.remove("error")) {
                    (Some(result), None) => Ok(<$result>::decode(method, Some(result))?),
                    (None, Some(error)) => Err(Error::deserialize(error).map_err(|e| bad(&e.to_string()))?),
                    _ => return Err(bad("a response has exactly one of `result` and `error`")),
                };
                Ok($name { id, outcome })
            }
        }

        impl Serialize for $name {
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
    };
}

request_envelope! {
    /// A request the client sends (`ClientRequest`).
    ClientRequest, super::ClientRequest
}
request_envelope! {
    /// A request the agent sends (`AgentRequest`).
    AgentRequest, super::AgentRequest
}
notification_envelope! {
    /// A notification the client sends (`ClientNotification`).
    ClientNotification, super::ClientNotification
}
notification_envelope! {
    /// A notification the agent sends (`AgentNotification`).
    AgentNotification, super::AgentNotification
}
notification_envelope! {
    /// A protocol-level notification, `$/…`, either side (`ProtocolLevelNotification`).
    ProtocolLevelNotification, super::ProtocolNotification
}
response_envelope! {
    /// The agent's answer to a client request (`AgentResponse`).
    AgentResponse, super::AgentResponse
}
response_envelope! {
    /// The client's answer to an agent request (`ClientResponse`).
    ClientResponse, super::ClientResponse
}
