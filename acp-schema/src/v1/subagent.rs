//! Exposed subagent sessions (`subagent_update`, `session_message`, `session_message_chunk`
//! session updates, the `session` tool call content), sent only to a client that advertised
//! `clientCapabilities.subagents`, except [`SessionReference`], which is display-only.
//!
//! Patch fields are `Option<Option<T>>`: `None` leaves the value unchanged (key absent),
//! `Some(None)` clears it (`null`), `Some(Some(v))` replaces it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::capabilities::SubagentSessionCapabilities;
use super::content::ContentBlock;
use super::ids::{MessageId, SessionId};
use super::serde_ext::{lenient_nullable, lenient_nullable_items};
use super::serde_util::{Meta, lenient};
use crate::error::RpcError;

/// A display-only reference to another session a tool call works with (`"type": "session"`
/// tool call content). The session must already be known to the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionReference {
    /// The referenced session.
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionReference {
    /// A reference to `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        SessionReference { session_id: session_id.into(), meta: None }
    }
}

/// The parent session created (or changed the metadata of) a child session (a
/// `subagent_update` session update, sent on the parent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentUpdate {
    /// The child session.
    pub session_id: SessionId,
    /// The parent's display title for the child (patch).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub title: Option<Option<String>>,
    /// The parent's description of the child's role (patch).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub description: Option<Option<String>>,
    /// Client-initiated mutations permitted on the child (patch; `null` disables them).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub capabilities: Option<Option<SubagentSessionCapabilities>>,
    /// The child's current state (patch).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub state: Option<Option<StateUpdate>>,
    /// The child's working directory, absolute (patch; unset inherits the parent's).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub cwd: Option<Option<String>>,
    /// The child's additional workspace roots, absolute (patch).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub additional_directories: Option<Option<Vec<String>>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SubagentUpdate {
    /// Announces (or touches) `session_id` without patching anything.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        SubagentUpdate {
            session_id: session_id.into(),
            title: None,
            description: None,
            capabilities: None,
            state: None,
            cwd: None,
            additional_directories: None,
            meta: None,
        }
    }
}

crate::v1::serde_util::tagged_union! {
    /// A snapshot of a session's work state, discriminated by `state`.
    pub enum StateUpdate, tag = "state", expecting = "a state update object" {
        /// Working.
        Running(RunningStateUpdate) = "running",
        /// Not working; with the reason the last turn stopped.
        Idle(IdleStateUpdate) = "idle",
        /// Waiting for the user.
        RequiresAction(RequiresActionStateUpdate) = "requires_action",
        /// The agent does not know (the wire value `"unknown"`, not an unknown variant).
        UnknownState(UnknownStateUpdate) = "unknown",
    }
}

crate::v1::serde_ext::meta_only! {
    /// The session is working.
    RunningStateUpdate
}

crate::v1::serde_ext::meta_only! {
    /// The session waits for the user.
    RequiresActionStateUpdate
}

crate::v1::serde_ext::meta_only! {
    /// The agent does not know the session's state.
    UnknownStateUpdate
}

/// The session is idle.
///
/// Exception to the unknown-key rule: because the schema lets an unknown `stopReason` carry
/// any keys, keys this version does not know are kept in [`IdleStateUpdate::extra`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdleStateUpdate {
    /// Why the last turn stopped, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub stop_reason: Option<IdleStopReason>,
    /// With [`IdleStopReason::Error`]: what went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub error: Option<RpcError>,
    /// **Unstable** (`unstable_end_turn_token_usage`): token usage of the completed
    /// foreground work, if reported (without the feature it stays in [`extra`](Self::extra)).
    /// Present without the feature too, so that struct literals compile whatever features cargo
    /// unifies; then it is never decoded and a value set on it is refused when encoded (see
    /// [`session_options`](super::session_options)).
    #[cfg_attr(
        feature = "unstable_end_turn_token_usage",
        serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")
    )]
    #[cfg_attr(
        not(feature = "unstable_end_turn_token_usage"),
        serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            serialize_with = "super::serde_ext::without::unstable_end_turn_token_usage"
        )
    )]
    pub usage: Option<super::Usage>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
    /// Other keys (those of a newer stop reason), kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

crate::v1::serde_util::string_enum! {
    /// Why an idle session's last turn stopped: the prompt stop reasons plus `error`.
    pub enum IdleStopReason {
        /// The turn ended normally.
        EndTurn = "end_turn",
        /// The token limit was reached.
        MaxTokens = "max_tokens",
        /// The model request limit of the turn was reached.
        MaxTurnRequests = "max_turn_requests",
        /// The model refused.
        Refusal = "refusal",
        /// The turn was cancelled.
        Cancelled = "cancelled",
        /// The turn failed (see [`IdleStateUpdate::error`]).
        Error = "error",
    }
}

/// The fields of an idle state whose `stopReason` is `error`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ErrorStopReason {
    /// What went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub error: Option<RpcError>,
}

/// An upsert of an inter-session message in the enclosing session's transcript (a
/// `session_message` session update). Every field but the id is a patch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessage {
    /// The message within the enclosing session's transcript.
    pub message_id: MessageId,
    /// The sending session.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub sender_session_id: Option<Option<SessionId>>,
    /// The receiving session.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub recipient_session_id: Option<Option<SessionId>>,
    /// On an incoming view, the id of the outgoing view in the sender's transcript.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub sender_message_id: Option<Option<MessageId>>,
    /// On an outgoing view, the id of the incoming view in the recipient's transcript.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable")]
    pub recipient_message_id: Option<Option<MessageId>>,
    /// The whole content (malformed blocks dropped; `[]` also clears).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_nullable_items")]
    pub content: Option<Option<Vec<ContentBlock>>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionMessage {
    /// An upsert of `message_id` that patches nothing yet.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        SessionMessage {
            message_id: message_id.into(),
            sender_session_id: None,
            recipient_session_id: None,
            sender_message_id: None,
            recipient_message_id: None,
            content: None,
            meta: None,
        }
    }
}

/// A streamed content block of an inter-session message (a `session_message_chunk` update).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessageChunk {
    /// The message.
    pub message_id: MessageId,
    /// The block appended to it.
    pub content: ContentBlock,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SessionMessageChunk {
    /// A chunk of `message_id`.
    pub fn new(message_id: impl Into<MessageId>, content: ContentBlock) -> Self {
        SessionMessageChunk { message_id: message_id.into(), content, meta: None }
    }
}
