//! A prompt turn: `session/prompt`, why it stopped, and cancellation (`session/cancel`,
//! `$/cancel_request`).

use serde::{Deserialize, Serialize};

use super::content::ContentBlock;
use super::ids::SessionId;
use super::serde_util::{Meta, lenient};
use crate::RequestId;

/// Parameters of `session/prompt` (client to agent): a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptRequest {
    /// The session to prompt.
    pub session_id: SessionId,
    /// The message. Content types other than text and resource links need the matching
    /// prompt capability.
    pub prompt: Vec<ContentBlock>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl PromptRequest {
    /// Prompts `session_id` with `prompt`.
    pub fn new(session_id: impl Into<SessionId>, prompt: Vec<ContentBlock>) -> Self {
        PromptRequest { session_id: session_id.into(), prompt, meta: None }
    }
}

/// Result of `session/prompt`, sent when the turn is over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptResponse {
    /// Why the turn ended.
    pub stop_reason: StopReason,
    /// **Unstable** (`unstable_end_turn_token_usage`): the turn's token usage, if the agent
    /// reports it; a malformed one reads as `None`.
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
}

impl PromptResponse {
    /// A turn that ended for `stop_reason`.
    pub fn new(stop_reason: StopReason) -> Self {
        PromptResponse { stop_reason, usage: None, meta: None }
    }
}

crate::v1::serde_util::string_enum! {
    /// Why a prompt turn ended.
    pub enum StopReason {
        /// The model finished without asking for more tools.
        EndTurn = "end_turn",
        /// The token limit was reached.
        MaxTokens = "max_tokens",
        /// The limit of model requests within one turn was reached.
        MaxTurnRequests = "max_turn_requests",
        /// The agent refused to continue.
        Refusal = "refusal",
        /// The client cancelled the turn (`session/cancel`).
        Cancelled = "cancelled",
    }
}

/// Parameters of the `session/cancel` notification (client to agent): stop the current
/// prompt turn. The agent still answers the `session/prompt` request, with
/// [`StopReason::Cancelled`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelNotification {
    /// The session whose turn to cancel.
    pub session_id: SessionId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CancelNotification {
    /// Cancels the turn of `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        CancelNotification { session_id: session_id.into(), meta: None }
    }
}

/// Parameters of the `$/cancel_request` notification (either direction): the sender no
/// longer needs the answer to one of its requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelRequestNotification {
    /// The id of the request to cancel.
    pub request_id: RequestId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CancelRequestNotification {
    /// Cancels the request `request_id`.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        CancelRequestNotification { request_id: request_id.into(), meta: None }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::v1::EmbeddedResourceResource;

    #[test]
    fn docs_prompt_round_trips() {
        // From docs/prompt-turn.mdx.
        let params = json!({
            "sessionId": "sess_abc123def456",
            "prompt": [
                {"type": "text", "text": "Can you analyze this code for potential issues?"},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "file:///home/user/project/main.py",
                        "mimeType": "text/x-python",
                        "text": "def process_data(items):\n    for item in items:\n        print(item)"
                    }
                }
            ]
        });
        let p: PromptRequest = serde_json::from_value(params.clone()).unwrap();
        let ContentBlock::Resource(r) = &p.prompt[1] else { panic!("not a resource") };
        assert!(matches!(r.resource, EmbeddedResourceResource::TextResourceContents(_)));
        assert_eq!(serde_json::to_value(&p).unwrap(), params);
        let r: PromptResponse = serde_json::from_value(json!({"stopReason": "end_turn"})).unwrap();
        assert_eq!(r, PromptResponse::new(StopReason::EndTurn));
    }

    #[test]
    fn unknown_stop_reason_is_kept() {
        let r: PromptResponse = serde_json::from_str(r#"{"stopReason":"tired"}"#).unwrap();
        assert_eq!(r.stop_reason, StopReason::Unknown("tired".into()));
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"stopReason":"tired"}"#);
    }

    #[test]
    fn cancel_notifications() {
        let c: CancelNotification = serde_json::from_value(json!({"sessionId": "sess_abc123def456"})).unwrap();
        assert_eq!(c, CancelNotification::new("sess_abc123def456"));
        for id in [json!(7), json!("req-7"), json!(null)] {
            let input = json!({"requestId": id});
            let c: CancelRequestNotification = serde_json::from_value(input.clone()).unwrap();
            assert_eq!(serde_json::to_value(&c).unwrap(), input);
        }
        assert!(serde_json::from_str::<CancelRequestNotification>("{}").is_err());
    }
}
