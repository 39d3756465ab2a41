//! What only ACP v2 (Preview, feature `unstable_protocol_v2`) has: a `session/prompt` that is
//! only acknowledged, its turn ending later with the agent's `idle`.

use acp_proto::{Outcome, V2, v2};

use crate::Error;

/// The acknowledgement of a v2 `session/prompt` ([`Error::from_outcome`] of its outcome), or
/// [`Error::UnexpectedResponse`] for another method's result (both adapters' v2 turns read
/// the acknowledgement through here).
///
/// ```
/// use acp_proto::{Outcome, v2};
///
/// let ack: v2::PromptResponse = serde_json::from_str(r#"{"messageId": "u1"}"#).unwrap();
/// let outcome = Outcome::Result(v2::Response::from(ack.clone()));
/// assert_eq!(acp_runtime::v2::prompt_ack(outcome).unwrap(), ack);
/// ```
pub fn prompt_ack(outcome: Outcome<V2>) -> Result<v2::PromptResponse, Error> {
    match Error::from_outcome(outcome)? {
        v2::Response::Agent(v2::AgentResponse::Prompt(ack)) => Ok(ack),
        _ => Err(Error::UnexpectedResponse),
    }
}
