//! The capability gate: may this method be used, given the capabilities a side advertised?
//!
//! Capabilities fail closed. A gated method (see the `gate` column of [`METHODS`]) is allowed
//! only when the path it names in the **receiver's own** advertised capabilities ends in
//! literally `true` or in a present capability object (e.g. `sessionCapabilities.list: {}`).
//! Absent, `null`, `false` or anything else denies it; so does having no snapshot at all
//! (before the handshake). Ungated methods are always allowed. A method that is not in the
//! table (an extension, or an unknown name) is [`GateDecision::UnknownMethod`]: not a denial,
//! because the decoder answers `-32601` for unknown methods itself.
//!
//! The connection uses the gate both ways: inbound against its own capabilities (answering
//! `-32601`), outbound against the peer's (refusing locally, nothing sent). Notifications are
//! gated outbound only (`elicitation/complete` needs `elicitation.url`).
//!
//! Beyond methods, the [content rules](check_update) gate opt-in *kinds of content* inside
//! ungated methods (new `session/update` kinds, elicitation modes, terminal auth methods,
//! system prompts), outbound only; their table is in the docs of [`check_update`]'s module,
//! repeated here:
//!
//! * `plan_update`, `plan_removed` updates need the client's `plan`;
//! * `notice` updates need `session.notices`;
//! * `compaction_update`, `compaction_summary_chunk` need `session.compaction`;
//! * `subagent_update`, `session_message`, `session_message_chunk` need `subagents`;
//! * `elicitation/create` in form mode needs `elicitation.form`, in URL mode `elicitation.url`;
//! * a `terminal` auth method is left out of the `initialize` result unless the client
//!   advertised `auth.terminal`;
//! * a `systemPrompt` on `session/new|load|resume` needs the agent's
//!   `sessionCapabilities.systemPrompt`, and `.mode.override` for the `override` mode.
//!
//! The unit test `tests::module_docs_example` checks a client's `fs` and `terminal` gates, no
//! snapshot, an ungated method and an extension.
//!
//! ## Sender rules
//!
//! A few methods are tied by the schema to what the **sender** advertised, not the receiver:
//! an agent "that advertises `auth.status` MAY send" `auth/status_update`. Their rows have no
//! receiver gate; [`sender_capability`] names the path in the sender's own capabilities and
//! the connection refuses the send locally without it ([`SendError::NotAdvertised`], nothing
//! sent). Like every outbound rule it is not applied to what is received.
//!
//! | method (sent by) | needs, in the sender's own capabilities | feature |
//! |---|---|---|
//! | `auth/status_update` (agent) | `auth.status` | `unstable_auth_status` |
//!
//! [`SendError::NotAdvertised`]: crate::SendError::NotAdvertised
//!
//! ## Internal
//!
//! The connection applies it on its own, and an application learns a refusal from the send
//! ([`SendError::NotSupportedByPeer`](crate::SendError::NotSupportedByPeer) names the
//! capability): it is not part of the API. [`CapabilitySnapshot`], which
//! [`Negotiated`](crate::Negotiated) carries, is re-exported at the crate root. Feature
//! `test-exports` makes the module public for proptests only.

use serde::Serialize;
use serde_json::Value;

use crate::methods::{METHODS, Method};

mod content;

pub use content::{
    allows_auth_method, check_elicitation, check_initial_config, check_system_prompt, check_update,
    elicitation_capability, system_prompt_capability, update_capability,
};

/// The gate's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateDecision {
    /// The method is ungated, or its capability is advertised.
    Allowed,
    /// The method's capability is not advertised (or there is no snapshot yet).
    Denied {
        /// The capability path that is missing, e.g. `["fs", "readTextFile"]`.
        capability: &'static [&'static str],
    },
    /// Not a method of the table; left to the decoder.
    UnknownMethod,
}

/// A snapshot of the capabilities one side advertised, as the JSON object it sent, with the
/// verdict for every table method computed once.
#[derive(Clone, PartialEq)]
pub struct CapabilitySnapshot {
    json: Value,
    allowed: Vec<bool>,
}

impl std::fmt::Debug for CapabilitySnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CapabilitySnapshot({})", self.json)
    }
}

impl CapabilitySnapshot {
    /// A snapshot of a capability object as it appears on the wire.
    pub fn from_json(json: Value) -> CapabilitySnapshot {
        let allowed = METHODS.iter().map(|row| path_allows(&json, row.gate)).collect();
        CapabilitySnapshot { json, allowed }
    }

    /// A snapshot of typed capabilities (`AgentCapabilities` or `ClientCapabilities`).
    pub fn from_typed<T: Serialize>(caps: &T) -> CapabilitySnapshot {
        CapabilitySnapshot::from_json(serde_json::to_value(caps).unwrap_or(Value::Null))
    }

    /// The capability object.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// Whether `path` is advertised (an object or `true` at its end; `[]` always is). The v2
    /// gates read the snapshot this way (feature `unstable_protocol_v2`).
    #[cfg(feature = "unstable_protocol_v2")]
    pub(crate) fn has_path(&self, path: &[&str]) -> bool {
        path_allows(&self.json, path)
    }

    /// Whether the table method is allowed by this snapshot.
    pub fn allows(&self, method: Method) -> bool {
        self.allowed.get(method as usize).copied().unwrap_or(false)
    }
}

fn path_allows(caps: &Value, path: &[&str]) -> bool {
    if path.is_empty() {
        return true;
    }
    let mut node = caps;
    for seg in path {
        match node.get(seg) {
            Some(next) => node = next,
            None => return false,
        }
    }
    matches!(node, Value::Bool(true) | Value::Object(_))
}

/// Decides whether `method` may be used against `snapshot`, the receiver's own capabilities.
/// A wire string that two rows share (`mcp/message`) is looked up as [`Method::from_wire`]
/// does; use [`check_method`] with the row's [`Method`] for the other.
pub fn check(snapshot: Option<&CapabilitySnapshot>, method: &str) -> GateDecision {
    match Method::from_wire(method) {
        Some(m) => check_method(snapshot, m),
        None => GateDecision::UnknownMethod,
    }
}

/// [`check`] for a method already looked up in the table.
pub fn check_method(snapshot: Option<&CapabilitySnapshot>, method: Method) -> GateDecision {
    let capability = method.row().gate;
    if capability.is_empty() {
        return GateDecision::Allowed;
    }
    match snapshot {
        Some(s) if s.allows(method) => GateDecision::Allowed,
        _ => GateDecision::Denied { capability },
    }
}

/// The path a method needs in the **sender's own** advertised capabilities (see the sender
/// rules in the module docs); `[]` for every method the receiver's gate alone decides.
///
/// (Unit test `tests::sender_capability_example`.)
pub fn sender_capability(method: Method) -> &'static [&'static str] {
    #[cfg(feature = "unstable_auth_status")]
    if method == Method::AuthStatusUpdate {
        return &["auth", "status"];
    }
    let _ = method;
    &[]
}

/// May this side send `method`, given its own advertised capabilities `own` (`None`: before
/// the handshake, which denies every method with a sender rule)?
pub fn check_sender(own: Option<&CapabilitySnapshot>, method: Method) -> GateDecision {
    let capability = sender_capability(method);
    if capability.is_empty() {
        return GateDecision::Allowed;
    }
    match own {
        Some(s) if path_allows(s.json(), capability) => GateDecision::Allowed,
        _ => GateDecision::Denied { capability },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The example of the module docs (their doctest while the module was public).
    #[test]
    fn module_docs_example() {
        let client_caps = CapabilitySnapshot::from_json(serde_json::json!({
            "fs": {"readTextFile": true, "writeTextFile": false},
            "terminal": "yes"
        }));
        assert_eq!(check(Some(&client_caps), "fs/read_text_file"), GateDecision::Allowed);
        assert!(matches!(check(Some(&client_caps), "fs/write_text_file"), GateDecision::Denied { .. }));
        assert!(matches!(check(Some(&client_caps), "terminal/create"), GateDecision::Denied { .. }));
        assert!(matches!(check(None, "fs/read_text_file"), GateDecision::Denied { .. }));
        assert_eq!(check(None, "session/prompt"), GateDecision::Allowed);
        assert_eq!(check(None, "_vendor/thing"), GateDecision::UnknownMethod);
    }

    /// The example of [`sender_capability`]'s docs.
    #[test]
    fn sender_capability_example() {
        assert!(sender_capability(Method::SessionUpdate).is_empty());
        #[cfg(feature = "unstable_auth_status")]
        assert_eq!(sender_capability(Method::AuthStatusUpdate), ["auth", "status"]);
    }

    /// The sender rule reads the sender's own capabilities, fail closed like the method gate.
    #[cfg(feature = "unstable_auth_status")]
    #[test]
    fn auth_status_update_needs_the_senders_own_auth_status() {
        let m = Method::AuthStatusUpdate;
        let advertised = CapabilitySnapshot::from_json(json!({"auth": {"status": {}, "logout": {}}}));
        assert_eq!(check_sender(Some(&advertised), m), GateDecision::Allowed);
        for caps in [json!({"auth": {"logout": {}}}), json!({"auth": {"status": null}}), json!({})] {
            let s = CapabilitySnapshot::from_json(caps.clone());
            assert_eq!(check_sender(Some(&s), m), GateDecision::Denied { capability: &["auth", "status"] }, "{caps}");
        }
        assert!(matches!(check_sender(None, m), GateDecision::Denied { .. }));
        // The receiver's gate does not apply: any client may receive it.
        assert_eq!(check(Some(&CapabilitySnapshot::from_json(json!({}))), m.wire()), GateDecision::Allowed);
        assert_eq!(check_sender(None, Method::SessionUpdate), GateDecision::Allowed);
    }

    #[test]
    fn only_literal_true_or_an_object_counts() {
        for (caps, allowed) in [
            (json!({"loadSession": true}), true),
            (json!({"loadSession": false}), false),
            (json!({"loadSession": "true"}), false),
            (json!({"loadSession": 1}), false),
            (json!({"loadSession": null}), false),
            (json!({}), false),
        ] {
            let s = CapabilitySnapshot::from_json(caps.clone());
            assert_eq!(check(Some(&s), "session/load") == GateDecision::Allowed, allowed, "{caps}");
        }
        let s = CapabilitySnapshot::from_json(json!({"sessionCapabilities": {"list": {}, "close": null}}));
        assert_eq!(check(Some(&s), "session/list"), GateDecision::Allowed);
        assert_eq!(
            check(Some(&s), "session/close"),
            GateDecision::Denied { capability: &["sessionCapabilities", "close"] }
        );
        let s = CapabilitySnapshot::from_json(json!({"auth": {"logout": {}}}));
        assert_eq!(check(Some(&s), "logout"), GateDecision::Allowed);
    }

    #[test]
    fn no_snapshot_denies_every_gated_method() {
        for row in METHODS {
            let d = check_method(None, row.method);
            assert_eq!(d == GateDecision::Allowed, row.gate.is_empty(), "{}", row.wire);
        }
    }

    #[test]
    fn unknown_methods_are_not_denials() {
        let s = CapabilitySnapshot::from_json(json!({}));
        assert_eq!(check(Some(&s), "_ext/x"), GateDecision::UnknownMethod);
        assert_eq!(check(Some(&s), "no/such"), GateDecision::UnknownMethod);
    }
}
