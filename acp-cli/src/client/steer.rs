//! Steering and queued prompts (issue 30 §2): what is typed while a turn runs.
//!
//! * An agent that advertises the `_session/steering` extension (`_meta.steering.supported`
//!   in its answer to `initialize`, as the official Claude and Codex adapters do) gets each
//!   `/steer TEXT`, and on a terminal each plain line typed during a turn, added to the
//!   running turn (`{sessionId, prompt}` → `{outcome}`). Lines piped in are typed ahead by a
//!   script: they stay prompts of their own. One steering request is in flight at a time; an
//!   outcome other than `injected` (or an error) puts the text back at the front of the input,
//!   to be the next prompt, and no more lines are offered to that turn.
//! * Otherwise a line typed during a turn is queued: it is sent as the next prompt when the
//!   turn ends, and the client says so when it arrives (on a terminal).
//! * `/queue` during a turn lists what waits (wherever it was typed among the waiting lines).

use serde_json::Value;

/// The extension's method.
pub(crate) const STEERING_METHOD: &str = "_session/steering";

/// What the client knows of steering.
#[derive(Debug, Default)]
pub(crate) struct Steering {
    /// The agent advertised the extension.
    pub(crate) supported: bool,
    /// A turn runs.
    pub(crate) in_turn: bool,
    /// A steering request of this turn awaits its answer.
    pub(crate) pending: bool,
    /// This turn refused a steering: the rest waits for its end.
    pub(crate) refused: bool,
}

/// Whether the answer to `initialize` advertises steering (`_meta.steering.supported`).
pub(crate) fn advertised(meta: Option<&serde_json::Map<String, Value>>) -> bool {
    meta.and_then(|m| m.get("steering")).and_then(|s| s.get("supported")).and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn steering_is_advertised_only_as_supported_true() {
        let meta = |v: Value| v.as_object().cloned();
        assert!(advertised(meta(json!({"steering": {"supported": true}})).as_ref()));
        assert!(!advertised(meta(json!({"steering": {"supported": "yes"}})).as_ref()));
        assert!(!advertised(meta(json!({"steering": true})).as_ref()));
        assert!(!advertised(None));
    }
}
