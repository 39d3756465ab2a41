//! String identifiers and the protocol version.
//!
//! Every id of the schema is an opaque string on the wire. Each gets its own newtype so that a
//! session id cannot be passed where a tool call id is expected. The text is held in an
//! `Arc<str>`, so cloning an id (which the connection layer does a lot) never copies it.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// Reads a JSON string straight into an `Arc<str>` (one allocation).
fn deserialize_arc_str<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
    struct ArcStrVisitor;

    impl Visitor<'_> for ArcStrVisitor {
        type Value = Arc<str>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string id")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Arc<str>, E> {
            Ok(Arc::from(v))
        }

        fn visit_string<E: de::Error>(self, v: String) -> Result<Arc<str>, E> {
            Ok(Arc::from(v))
        }
    }

    d.deserialize_str(ArcStrVisitor)
}

/// Declares a string id newtype. Serde's `rc` feature is not enabled in this workspace, so the
/// transparent `Serialize`/`Deserialize` impls are written out here instead of derived.
macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        ///
        /// Encoded as a plain JSON string. Cheap to clone.
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub Arc<str>);

        impl $name {
            /// Wraps a string.
            pub fn new(id: impl Into<Arc<str>>) -> Self {
                $name(id.into())
            }

            /// The id's text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(Arc::from(s))
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(Arc::from(s))
            }
        }

        impl From<Arc<str>> for $name {
            fn from(s: Arc<str>) -> Self {
                $name(s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                &*self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                &*self.0 == *other
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                deserialize_arc_str(d).map($name)
            }
        }
    };
}

string_id! {
    /// Identifies a conversation session between a client and an agent.
    SessionId
}

#[cfg(feature = "unstable_llm_providers")]
string_id! {
    /// **Unstable** (`unstable_llm_providers`): identifies a configurable LLM provider of the
    /// agent (`"main"`, `"openai"`, …), as `providers/list` names it.
    ProviderId
}

string_id! {
    /// Identifies a tool call within a session.
    ToolCallId
}

string_id! {
    /// Identifies a terminal created with `terminal/create`.
    TerminalId
}

#[cfg(feature = "unstable_session_cursors")]
string_id! {
    /// **Unstable** (`unstable_session_cursors`): identifies a cursor the agent announced on a
    /// session (a point in its history; `session/fork` can fork there).
    CursorId
}

string_id! {
    /// Identifies one of the options offered in a permission request.
    PermissionOptionId
}

string_id! {
    /// Identifies a session mode (e.g. `ask`, `code`).
    SessionModeId
}

string_id! {
    /// Identifies a session configuration option.
    SessionConfigId
}

string_id! {
    /// Identifies a possible value of a select configuration option.
    SessionConfigValueId
}

string_id! {
    /// Identifies a group of values of a select configuration option.
    SessionConfigGroupId
}

string_id! {
    /// Identifies an authentication method offered by the agent.
    AuthMethodId
}

string_id! {
    /// Identifies a message, so that the chunks streamed for it can be grouped together.
    MessageId
}

string_id! {
    /// Identifies a URL elicitation, so that `elicitation/complete` can name it.
    ElicitationId
}

string_id! {
    /// Identifies one of a session's plans (`plan_update`, `plan_removed`).
    PlanId
}

string_id! {
    /// Identifies one context compaction of a session, unique within the session.
    CompactionId
}

/// The major version of the protocol, exchanged during `initialize`.
///
/// Only bumped for breaking changes; additions are negotiated through capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProtocolVersion(pub u16);

impl ProtocolVersion {
    /// Protocol version 1.
    pub const V1: ProtocolVersion = ProtocolVersion(1);
    /// The newest version this crate implements.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V1;
}

impl From<u16> for ProtocolVersion {
    fn from(v: u16) -> Self {
        ProtocolVersion(v)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn ids_are_plain_strings() {
        let id: SessionId = serde_json::from_str(r#""sess-1""#).unwrap();
        assert_eq!(id, "sess-1");
        assert_eq!(id.as_str(), "sess-1");
        assert_eq!(id.to_string(), "sess-1");
        assert_eq!(serde_json::to_string(&id).unwrap(), r#""sess-1""#);
        assert_eq!(SessionId::from(String::from("x")), SessionId::from("x"));
        let escaped: ToolCallId = serde_json::from_str(r#""a\nb""#).unwrap();
        assert_eq!(escaped.as_str(), "a\nb");
    }

    #[test]
    fn ids_look_up_by_str() {
        let mut map = HashMap::new();
        map.insert(TerminalId::from("t1"), 1);
        assert_eq!(map.get("t1"), Some(&1));
    }

    #[test]
    fn ids_reject_non_strings() {
        let e = serde_json::from_str::<MessageId>("5").unwrap_err();
        assert!(e.to_string().contains("a string id"), "{e}");
    }

    #[test]
    fn protocol_version_is_an_integer() {
        let v: ProtocolVersion = serde_json::from_str("1").unwrap();
        assert_eq!(v, ProtocolVersion::V1);
        assert_eq!(ProtocolVersion::LATEST, ProtocolVersion::V1);
        assert_eq!(serde_json::to_string(&v).unwrap(), "1");
        assert!(serde_json::from_str::<ProtocolVersion>("70000").is_err());
        assert!(serde_json::from_str::<ProtocolVersion>(r#""1""#).is_err());
    }
}
