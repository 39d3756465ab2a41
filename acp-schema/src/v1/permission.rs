//! `session/request_permission`: the agent asks the user to approve a tool call.

use serde::{Deserialize, Serialize};

use super::ids::{PermissionOptionId, SessionId};
use super::serde_util::{Meta, lenient};
use super::tool_call::ToolCallUpdate;

/// Parameters of `session/request_permission` (agent to client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPermissionRequest {
    /// The session the tool call belongs to.
    pub session_id: SessionId,
    /// The tool call awaiting approval.
    pub tool_call: ToolCallUpdate,
    /// The choices offered to the user.
    pub options: Vec<PermissionOption>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl RequestPermissionRequest {
    /// A permission request for `tool_call` offering `options`.
    pub fn new(session_id: impl Into<SessionId>, tool_call: ToolCallUpdate, options: Vec<PermissionOption>) -> Self {
        RequestPermissionRequest { session_id: session_id.into(), tool_call, options, meta: None }
    }
}

/// One choice offered in a permission request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionOption {
    /// The option's id, sent back when the user picks it.
    pub option_id: PermissionOptionId,
    /// The label shown to the user.
    pub name: String,
    /// What picking this option means, so the client can style it.
    pub kind: PermissionOptionKind,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PermissionOption {
    /// An option with an id, a label and a kind.
    pub fn new(option_id: impl Into<PermissionOptionId>, name: impl Into<String>, kind: PermissionOptionKind) -> Self {
        PermissionOption { option_id: option_id.into(), name: name.into(), kind, meta: None }
    }
}

crate::v1::serde_util::string_enum! {
    /// What a permission option does.
    pub enum PermissionOptionKind {
        /// Allow this one call.
        AllowOnce = "allow_once",
        /// Allow this call and remember the choice.
        AllowAlways = "allow_always",
        /// Reject this one call.
        RejectOnce = "reject_once",
        /// Reject this call and remember the choice.
        RejectAlways = "reject_always",
    }
}

/// Result of `session/request_permission` (client to agent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPermissionResponse {
    /// What the user decided.
    pub outcome: RequestPermissionOutcome,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl RequestPermissionResponse {
    /// A response with the given outcome.
    pub fn new(outcome: RequestPermissionOutcome) -> Self {
        RequestPermissionResponse { outcome, meta: None }
    }

    /// The `cancelled` outcome: the answer when the prompt turn was cancelled, and what a
    /// client that does not ask the user answers.
    ///
    /// ```
    /// use acp_schema::v1::RequestPermissionResponse;
    /// let wire = serde_json::to_value(RequestPermissionResponse::cancelled()).unwrap();
    /// assert_eq!(wire, serde_json::json!({"outcome": {"outcome": "cancelled"}}));
    /// ```
    pub fn cancelled() -> Self {
        Self::new(RequestPermissionOutcome::Cancelled)
    }
}

crate::v1::serde_util::tagged_union! {
    /// The result of a permission request, discriminated by `outcome`.
    pub enum RequestPermissionOutcome, tag = "outcome", expecting = "a permission outcome object" {
        /// The prompt turn was cancelled before the user answered. Clients must answer pending
        /// permission requests this way after `session/cancel`.
        Cancelled = "cancelled",
        /// The user picked one of the options.
        Selected(SelectedPermissionOutcome) = "selected",
    }
}

impl RequestPermissionOutcome {
    /// The user picked `option_id`.
    pub fn selected(option_id: impl Into<PermissionOptionId>) -> Self {
        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option_id))
    }
}

/// The option the user picked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectedPermissionOutcome {
    /// The id of the chosen option.
    pub option_id: PermissionOptionId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl SelectedPermissionOutcome {
    /// The user picked `option_id`.
    pub fn new(option_id: impl Into<PermissionOptionId>) -> Self {
        SelectedPermissionOutcome { option_id: option_id.into(), meta: None }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn outcome_variants_round_trip() {
        for (input, expected) in [
            (
                json!({"outcome": "selected", "optionId": "allow-once"}),
                RequestPermissionOutcome::selected("allow-once"),
            ),
            (json!({"outcome": "cancelled"}), RequestPermissionOutcome::Cancelled),
        ] {
            let o: RequestPermissionOutcome = serde_json::from_value(input.clone()).unwrap();
            assert_eq!(o, expected);
            assert_eq!(serde_json::to_value(&o).unwrap(), input);
        }
    }

    #[test]
    fn unknown_outcome_is_kept() {
        let input = json!({"outcome": "deferred", "until": "later"});
        let o: RequestPermissionOutcome = serde_json::from_value(input.clone()).unwrap();
        assert!(matches!(&o, RequestPermissionOutcome::Unknown(u) if u.tag("outcome") == Some("deferred")));
        assert_eq!(serde_json::to_value(&o).unwrap(), input);
    }

    #[test]
    fn tag_not_first_decodes() {
        let o: RequestPermissionOutcome = serde_json::from_str(r#"{"optionId":"x","outcome":"selected"}"#).unwrap();
        assert_eq!(o, RequestPermissionOutcome::selected("x"));
    }

    #[test]
    fn docs_request_decodes() {
        // From docs/tool-calls.mdx.
        let params = json!({
            "sessionId": "sess_abc123def456",
            "toolCall": {"toolCallId": "call_001"},
            "options": [
                {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"}
            ]
        });
        let r: RequestPermissionRequest = serde_json::from_value(params.clone()).unwrap();
        assert_eq!(r.options[1].kind, PermissionOptionKind::RejectOnce);
        assert_eq!(serde_json::to_value(&r).unwrap(), params);
        let resp: RequestPermissionResponse =
            serde_json::from_value(json!({"outcome": {"outcome": "cancelled"}})).unwrap();
        assert_eq!(resp, RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled));
        let v: Value = serde_json::to_value(&resp).unwrap();
        assert_eq!(v, json!({"outcome": {"outcome": "cancelled"}}));
    }
}
