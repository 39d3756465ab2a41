//! `PromptResponse.usage` (feature `unstable_end_turn_token_usage`): the agent's prompt handler
//! reports the turn's token usage and the client reads it, typed, from the turn's answer. The
//! schema ties the field to no capability (a client that does not know it ignores it), so there
//! is no refusal to test; a turn without usage answers `None`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::types::*;
use acp_tokio::{Agent, PromptContext, RequestContext};

/// An agent that bills each prompt one input token per character and 2 output tokens, and
/// reports usage only for prompts that are not `quiet`.
#[derive(Clone, Default)]
struct BillingAgent {
    input_so_far: Arc<AtomicU64>,
}

impl Agent for BillingAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(request.protocol_version))
    }

    async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s1"))
    }

    async fn prompt(&self, request: PromptRequest, _: PromptContext) -> Result<PromptResponse, RpcError> {
        let text: String = request
            .prompt
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        let input = self.input_so_far.fetch_add(text.len() as u64, Ordering::SeqCst) + text.len() as u64;
        let mut response = PromptResponse::new(StopReason::EndTurn);
        if text != "quiet" {
            let mut usage = Usage::new(input + 2, input, 2);
            usage.cached_read_tokens = Some(1);
            response.usage = Some(usage);
        }
        Ok(response)
    }
}

#[tokio::test]
async fn the_turns_token_usage_reaches_the_client_typed() {
    let conn = super::initialized(BillingAgent::default(), InitializeRequest::new(ProtocolVersion::V1)).await;
    let session = conn.new_session(NewSessionRequest::new("/work", Vec::new())).await.expect("session/new").session_id;

    let turn =
        conn.prompt(PromptRequest::new(session.clone(), vec![ContentBlock::text("hello")])).await.expect("prompt");
    let answer = turn.response().await.expect("answer");
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let usage = answer.usage.expect("usage reported");
    assert_eq!((usage.total_tokens, usage.input_tokens, usage.output_tokens), (7, 5, 2));
    assert_eq!((usage.cached_read_tokens, usage.thought_tokens), (Some(1), None));

    let turn = conn.prompt(PromptRequest::new(session, vec![ContentBlock::text("quiet")])).await.expect("prompt");
    assert_eq!(turn.response().await.expect("answer").usage, None);
}
