//! The JSON-RPC request id, kept at its exact wire type.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A JSON-RPC request id: an integer, a string or `null`, kept at its exact wire type (`1` and
/// `"1"` are different ids).
///
/// ```
/// use acp_schema::RequestId;
/// let a: RequestId = serde_json::from_str("1").unwrap();
/// let b: RequestId = serde_json::from_str("\"1\"").unwrap();
/// assert_ne!(a, b);
/// assert_eq!(serde_json::to_string(&b).unwrap(), "\"1\"");
/// assert!(serde_json::from_str::<RequestId>("1.5").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// `null`: discouraged for requests; used in error responses when the id is unknown.
    Null,
    /// An integer id.
    Number(i64),
    /// A string id.
    Str(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Null => f.write_str("null"),
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::Str(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Null => s.serialize_unit(),
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer, string or null request id")
            }
            fn visit_unit<E: de::Error>(self) -> Result<RequestId, E> {
                Ok(RequestId::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<RequestId, E> {
                Ok(RequestId::Null)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v).map(RequestId::Number).map_err(|_| E::custom("request id out of the int64 range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::Str(v.into()))
            }
        }
        d.deserialize_any(V)
    }
}
