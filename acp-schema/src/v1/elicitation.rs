//! Elicitation (`elicitation/create`, `elicitation/complete`): the agent asks the user for
//! structured input through the client, with a form the client renders or a URL the user
//! visits.
//!
//! The client opts in per mode: `clientCapabilities.elicitation.form` for forms,
//! `.elicitation.url` for URLs (and `elicitation/complete`, which only follows a URL
//! elicitation). The form's fields are described by [`ElicitationSchema`].

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::elicitation_schema::ElicitationSchema;
use super::ids::{ElicitationId, SessionId, ToolCallId};
use super::serde_ext::{lenient_object, meta_only};
use super::serde_util::{Meta, lenient};
use crate::RequestId;

/// Elicitation modes a client supports; absent modes are not supported.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapabilities {
    /// Present when form elicitations are supported.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub form: Option<ElicitationFormCapabilities>,
    /// Present when URL elicitations (and `elicitation/complete`) are supported.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_object")]
    pub url: Option<ElicitationUrlCapabilities>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl ElicitationCapabilities {
    /// Both modes supported.
    pub fn all() -> Self {
        ElicitationCapabilities {
            form: Some(ElicitationFormCapabilities::default()),
            url: Some(ElicitationUrlCapabilities::default()),
            meta: None,
        }
    }
}

meta_only! {
    /// Marks form elicitations as supported (no options yet).
    ElicitationFormCapabilities
}

meta_only! {
    /// Marks URL elicitations as supported (no options yet).
    ElicitationUrlCapabilities
}

/// Parameters of `elicitation/create` (agent to client): ask the user for input.
///
/// On the wire `message` and `_meta` sit next to the `mode`-tagged fields, which are
/// [`CreateElicitationRequest::mode`]. An unknown mode is kept whole in
/// [`ElicitationMode::Unknown`] (without `message` and `_meta`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateElicitationRequest {
    /// What input is needed, for the user.
    pub message: String,
    /// The form or URL, and what the elicitation is tied to.
    #[serde(flatten)]
    pub mode: ElicitationMode,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CreateElicitationRequest {
    /// A request in the given mode.
    pub fn new(message: impl Into<String>, mode: ElicitationMode) -> Self {
        CreateElicitationRequest { message: message.into(), mode, meta: None }
    }

    /// A form elicitation within `session_id`.
    pub fn form(message: impl Into<String>, session_id: impl Into<SessionId>, schema: ElicitationSchema) -> Self {
        let scope = ElicitationScope::Session(ElicitationSessionScope::new(session_id));
        Self::new(message, ElicitationMode::Form(ElicitationFormMode { requested_schema: schema, scope }))
    }

    /// A URL elicitation within `session_id`; complete it later with `elicitation/complete`.
    pub fn url(
        message: impl Into<String>,
        session_id: impl Into<SessionId>,
        elicitation_id: impl Into<ElicitationId>,
        url: impl Into<String>,
    ) -> Self {
        let scope = ElicitationScope::Session(ElicitationSessionScope::new(session_id));
        let mode = ElicitationUrlMode { elicitation_id: elicitation_id.into(), url: url.into(), scope };
        Self::new(message, ElicitationMode::Url(mode))
    }

    /// The session the elicitation is tied to, if it is tied to one (`None` for an unknown
    /// mode).
    pub fn session_id(&self) -> Option<&SessionId> {
        let scope = match &self.mode {
            ElicitationMode::Form(f) => &f.scope,
            ElicitationMode::Url(u) => &u.scope,
            ElicitationMode::Unknown(_) => return None,
        };
        match scope {
            ElicitationScope::Session(s) => Some(&s.session_id),
            ElicitationScope::Request(_) => None,
        }
    }
}

crate::v1::serde_util::tagged_union! {
    /// The `mode`-specific part of a [`CreateElicitationRequest`].
    pub enum ElicitationMode, tag = "mode", expecting = "an elicitation object" {
        /// A form the client renders from a schema (needs `elicitation.form`).
        Form(ElicitationFormMode) = "form",
        /// A URL the user visits (needs `elicitation.url`).
        Url(ElicitationUrlMode) = "url",
    }
}

/// A form elicitation: the client renders a form from `requested_schema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationFormMode {
    /// The form's fields.
    pub requested_schema: ElicitationSchema,
    /// What the elicitation is tied to (its keys sit beside the others on the wire).
    #[serde(flatten)]
    pub scope: ElicitationScope,
}

/// A URL elicitation: the client directs the user to `url`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationUrlMode {
    /// The elicitation's id, named again by `elicitation/complete`.
    pub elicitation_id: ElicitationId,
    /// Where to send the user.
    pub url: String,
    /// What the elicitation is tied to (its keys sit beside the others on the wire).
    #[serde(flatten)]
    pub scope: ElicitationScope,
}

/// What an elicitation is tied to: a session (and maybe a tool call), or a request outside
/// any session. Untagged: an object with a `sessionId` is a session scope.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitationScope {
    /// Tied to a session.
    Session(ElicitationSessionScope),
    /// Tied to a JSON-RPC request (e.g. during authentication).
    Request(ElicitationRequestScope),
}

impl<'de> Deserialize<'de> for ElicitationScope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = Map::<String, Value>::deserialize(d)?;
        if fields.contains_key("sessionId") {
            ElicitationSessionScope::deserialize(Value::Object(fields))
                .map(ElicitationScope::Session)
                .map_err(D::Error::custom)
        } else {
            ElicitationRequestScope::deserialize(Value::Object(fields))
                .map(ElicitationScope::Request)
                .map_err(|e| D::Error::custom(format_args!("elicitation scope (sessionId or requestId): {e}")))
        }
    }
}

/// An elicitation tied to a session, optionally to one of its tool calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationSessionScope {
    /// The session.
    pub session_id: SessionId,
    /// The tool call, if any.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub tool_call_id: Option<ToolCallId>,
}

impl ElicitationSessionScope {
    /// Tied to `session_id`, no tool call.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        ElicitationSessionScope { session_id: session_id.into(), tool_call_id: None }
    }
}

/// An elicitation tied to a JSON-RPC request outside any session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationRequestScope {
    /// The request.
    pub request_id: RequestId,
}

/// Result of `elicitation/create`: what the user did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateElicitationResponse {
    /// Accepted (with content), declined or cancelled.
    #[serde(flatten)]
    pub action: ElicitationAction,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CreateElicitationResponse {
    /// The user's answer.
    pub fn new(action: ElicitationAction) -> Self {
        CreateElicitationResponse { action, meta: None }
    }

    /// The user accepted a form with these values.
    pub fn accept(content: BTreeMap<String, ElicitationContentValue>) -> Self {
        Self::new(ElicitationAction::Accept(ElicitationAcceptAction { content: Some(content) }))
    }

    /// The user declined.
    pub fn decline() -> Self {
        Self::new(ElicitationAction::Decline)
    }

    /// The user dismissed the request.
    pub fn cancel() -> Self {
        Self::new(ElicitationAction::Cancel)
    }
}

crate::v1::serde_util::tagged_union! {
    /// What the user did with an elicitation, discriminated by `action`.
    pub enum ElicitationAction, tag = "action", expecting = "an elicitation response object" {
        /// Accepted; a form's values are in the content.
        Accept(ElicitationAcceptAction) = "accept",
        /// Explicitly declined.
        Decline = "decline",
        /// Dismissed without a choice.
        Cancel = "cancel",
    }
}

/// The accepted answer to an elicitation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ElicitationAcceptAction {
    /// The form's values by field name (absent for URL elicitations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitationContentValue>>,
}

/// One value of an accepted form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitationContentValue {
    /// A string.
    String(String),
    /// An integer.
    Integer(i64),
    /// A (finite) number.
    Number(f64),
    /// A boolean.
    Boolean(bool),
    /// Several strings (a multi-select).
    StringArray(Vec<String>),
}

impl<'de> Deserialize<'de> for ElicitationContentValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => ElicitationContentValue::String(s),
            Value::Bool(b) => ElicitationContentValue::Boolean(b),
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => ElicitationContentValue::Integer(i),
                (None, Some(f)) => ElicitationContentValue::Number(f),
                (None, None) => return Err(D::Error::custom("an elicitation number out of range")),
            },
            Value::Array(items) => ElicitationContentValue::StringArray(
                Vec::<String>::deserialize(Value::Array(items)).map_err(D::Error::custom)?,
            ),
            _ => return Err(D::Error::custom("a string, number, boolean or array of strings")),
        })
    }
}

/// Parameters of `elicitation/complete` (agent to client): a URL elicitation has completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteElicitationNotification {
    /// The URL elicitation that completed.
    pub elicitation_id: ElicitationId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CompleteElicitationNotification {
    /// `elicitation_id` has completed.
    pub fn new(elicitation_id: impl Into<ElicitationId>) -> Self {
        CompleteElicitationNotification { elicitation_id: elicitation_id.into(), meta: None }
    }
}

#[cfg(test)]
mod tests;
