//! **Unstable** session cursors (feature `unstable_session_cursors`): named positions in a
//! session's timeline that the agent announces with the `cursor_update` session update, each
//! anchored before or after an entity the client holds (a message, a tool call, a compaction),
//! with the methods that accept it now (so far `session/fork`'s `cursorId`, see
//! [`CursorCapabilities`]).
//!
//! A client opts in with `session.cursors` ([`SessionCursorsCapabilities`], a field of
//! [`ClientSessionCapabilities`](super::ClientSessionCapabilities)); the connection refuses to
//! send `cursor_update` to a client that did not (see `acp_proto::gate`'s content rules). The
//! first update of a cursor carries its anchor, which never changes; later ones patch
//! `capabilities` and `_meta` (absent: unchanged, `null`: cleared, a value: replaced).
//! Upstream may change or remove this in any release.
//!
//! ```
//! use acp_schema::v1::*;
//! let mut update = CursorUpdate::new("c1", CursorAnchor::after_message(CursorAnchorKind::AgentMessage, "m7"));
//! update.capabilities = Some(Some(CursorCapabilities::forkable()));
//! let json = serde_json::to_value(SessionUpdate::CursorUpdate(update)).unwrap();
//! assert_eq!(json["sessionUpdate"], "cursor_update");
//! assert_eq!(json["anchor"], serde_json::json!({"type": "agent_message", "messageId": "m7", "position": "after"}));
//! assert_eq!(json["capabilities"], serde_json::json!({"fork": {}}));
//! // A later update clears the capabilities: `null` is kept apart from absence.
//! let later: CursorUpdate =
//!     serde_json::from_value(serde_json::json!({"cursorId": "c1", "capabilities": null})).unwrap();
//! assert_eq!(later.capabilities, Some(None));
//! assert_eq!(later.anchor, None);
//! ```
//!
//! [`SessionCursorsCapabilities`]: super::SessionCursorsCapabilities

use serde::{Deserialize, Serialize};

use super::ids::{CompactionId, CursorId, MessageId, ToolCallId};
use super::serde_ext::{lenient_nullable, lenient_object, meta_only};
use super::serde_util::{Meta, lenient};

/// The `cursor_update` session update: announces a cursor (with its [`anchor`](Self::anchor))
/// or patches what it accepts. Send only to a client that advertised `session.cursors`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CursorUpdate {
    /// The agent's id of the cursor, unique within the session (clients must not parse it).
    pub cursor_id: CursorId,
    /// The methods that accept the cursor now: absent leaves them unchanged, `Some(None)`
    /// (`null`) clears them, a value replaces them. A new cursor starts with none.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub capabilities: Option<Option<CursorCapabilities>>,
    /// Where the cursor is; required on its first update, fixed afterwards (a later update may
    /// omit it or repeat it; `null` equals absence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<CursorAnchor>,
    /// Extension metadata patch: absent unchanged, `Some(None)` (`null`) cleared, a value
    /// replaces it (a malformed value counts as absent).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub meta: Option<Option<Meta>>,
}

impl CursorUpdate {
    /// The first update of cursor `cursor_id`, at `anchor`, accepted by no method yet.
    pub fn new(cursor_id: impl Into<CursorId>, anchor: CursorAnchor) -> Self {
        CursorUpdate { cursor_id: cursor_id.into(), capabilities: None, anchor: Some(anchor), meta: None }
    }

    /// A later update of `cursor_id` that replaces what it accepts (`None`: nothing).
    pub fn capabilities(cursor_id: impl Into<CursorId>, capabilities: Option<CursorCapabilities>) -> Self {
        CursorUpdate { cursor_id: cursor_id.into(), capabilities: Some(capabilities), anchor: None, meta: None }
    }
}

/// The methods that accept a cursor now.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CursorCapabilities {
    /// Present when `session/fork` accepts the cursor as its `cursorId`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub fork: Option<CursorForkCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CursorCapabilities {
    /// `session/fork` accepts the cursor.
    pub fn forkable() -> Self {
        CursorCapabilities { fork: Some(CursorForkCapabilities::default()), meta: None }
    }
}

meta_only! {
    /// Marks a cursor as accepted by `session/fork` (its `cursorId`).
    CursorForkCapabilities
}

crate::v1::serde_util::tagged_union! {
    /// Where a cursor is, relative to an entity the client holds, discriminated by `type`. A
    /// known `type` with a malformed payload is an error; an unknown `type` is kept as
    /// `Unknown`.
    pub enum CursorAnchor, tag = "type", expecting = "a cursor anchor object" {
        /// Next to a user message.
        UserMessage(CursorMessageAnchor) = "user_message",
        /// Next to an agent message.
        AgentMessage(CursorMessageAnchor) = "agent_message",
        /// Next to a piece of the agent's reasoning.
        AgentThought(CursorMessageAnchor) = "agent_thought",
        /// Next to an inter-session message.
        SessionMessage(CursorMessageAnchor) = "session_message",
        /// Next to a tool call.
        ToolCall(CursorToolCallAnchor) = "tool_call",
        /// Next to a compaction.
        Compaction(CursorCompactionAnchor) = "compaction",
    }
}

/// The kind of message a [`CursorAnchor`] names (for [`CursorAnchor::after_message`] and
/// [`CursorAnchor::before_message`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorAnchorKind {
    /// `user_message`.
    UserMessage,
    /// `agent_message`.
    AgentMessage,
    /// `agent_thought`.
    AgentThought,
    /// `session_message`.
    SessionMessage,
}

impl CursorAnchor {
    /// Right after message `message_id` of the given kind.
    pub fn after_message(kind: CursorAnchorKind, message_id: impl Into<MessageId>) -> Self {
        Self::message(kind, message_id.into(), CursorAnchorPosition::After)
    }

    /// Right before message `message_id` of the given kind.
    pub fn before_message(kind: CursorAnchorKind, message_id: impl Into<MessageId>) -> Self {
        Self::message(kind, message_id.into(), CursorAnchorPosition::Before)
    }

    fn message(kind: CursorAnchorKind, message_id: MessageId, position: CursorAnchorPosition) -> Self {
        let anchor = CursorMessageAnchor { message_id, position, meta: None };
        match kind {
            CursorAnchorKind::UserMessage => CursorAnchor::UserMessage(anchor),
            CursorAnchorKind::AgentMessage => CursorAnchor::AgentMessage(anchor),
            CursorAnchorKind::AgentThought => CursorAnchor::AgentThought(anchor),
            CursorAnchorKind::SessionMessage => CursorAnchor::SessionMessage(anchor),
        }
    }
}

/// A cursor anchored to a message; the anchor's `type` names the kind of message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CursorMessageAnchor {
    /// The message.
    pub message_id: MessageId,
    /// On which side of it the cursor is.
    pub position: CursorAnchorPosition,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A cursor anchored to a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CursorToolCallAnchor {
    /// The tool call.
    pub tool_call_id: ToolCallId,
    /// On which side of it the cursor is.
    pub position: CursorAnchorPosition,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// A cursor anchored to a compaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CursorCompactionAnchor {
    /// The compaction.
    pub compaction_id: CompactionId,
    /// On which side of it the cursor is.
    pub position: CursorAnchorPosition,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

crate::v1::serde_util::string_enum! {
    /// On which side of the anchored entity a cursor is.
    pub enum CursorAnchorPosition {
        /// Before the entity.
        Before = "before",
        /// After the entity.
        After = "after",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn anchors_of_every_kind_round_trip_and_unknown_kinds_are_kept() {
        for wire in [
            json!({"type": "user_message", "messageId": "m", "position": "before"}),
            json!({"type": "tool_call", "toolCallId": "t", "position": "after"}),
            json!({"type": "compaction", "compactionId": "c", "position": "sideways"}),
            json!({"type": "bookmark", "at": 3}),
        ] {
            let anchor: CursorAnchor = serde_json::from_value(wire.clone()).unwrap();
            assert_eq!(serde_json::to_value(&anchor).unwrap(), wire);
        }
        let unknown: CursorAnchor = serde_json::from_value(json!({"type": "bookmark"})).unwrap();
        assert!(matches!(unknown, CursorAnchor::Unknown(_)));
        // A known type with a malformed payload is an error, not `Unknown`.
        assert!(serde_json::from_value::<CursorAnchor>(json!({"type": "tool_call", "position": "after"})).is_err());
    }

    #[test]
    fn patch_fields_keep_null_apart_from_absence() {
        let clear: CursorUpdate =
            serde_json::from_value(json!({"cursorId": "c", "capabilities": null, "_meta": null, "anchor": null}))
                .unwrap();
        assert_eq!(
            (clear.capabilities.clone(), clear.meta.clone(), clear.anchor.clone()),
            (Some(None), Some(None), None)
        );
        assert_eq!(
            serde_json::to_value(&clear).unwrap(),
            json!({"cursorId": "c", "capabilities": null, "_meta": null})
        );
        let malformed: CursorUpdate = serde_json::from_value(json!({"cursorId": "c", "capabilities": 3})).unwrap();
        assert_eq!(malformed.capabilities, None, "a malformed patch counts as absent");
        assert_eq!(CursorUpdate::capabilities("c", None).capabilities, Some(None));
    }
}
