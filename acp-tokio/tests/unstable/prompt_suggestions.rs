//! `prompt_suggestions_update` (feature `unstable_prompt_suggestions`): a session update kind a
//! client opts in to with `session.promptSuggestions`. The agent streams suggestions in a turn;
//! the client that advertised the capability gets them in the turn's updates. To a client that
//! did not, the agent's connection refuses to send them (the agent sees the refusal, nothing
//! reaches the client).

use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{RpcError, SendError};
use acp_tokio::{Agent, ClientConnection, Error, PromptContext, RequestContext};

/// An agent whose every turn suggests two follow-up prompts, then says how that went.
#[derive(Clone, Default)]
struct SuggestingAgent {
    /// The outcome of each turn's suggestions send (`Ok` or the refused capability path).
    outcomes: Arc<Mutex<Vec<Result<(), String>>>>,
}

impl Agent for SuggestingAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(request.protocol_version))
    }

    async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s1"))
    }

    async fn prompt(&self, _: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        let suggestions = PromptSuggestionsUpdate::new(vec![
            PromptSuggestion::text("Run the tests"),
            PromptSuggestion::new(vec![ContentBlock::text("Explain "), ContentBlock::text("main.rs")]).unwrap(),
        ]);
        let outcome = match cx.send_update(SessionUpdate::PromptSuggestionsUpdate(suggestions)).await {
            Ok(()) => Ok(()),
            Err(Error::Send(SendError::NotSupportedByPeer { capability, .. })) => Err(capability.join(".")),
            Err(e) => return Err(RpcError::internal_error(e.to_string())),
        };
        self.outcomes.lock().unwrap().push(outcome);
        cx.send_text("done").await.map_err(|e| RpcError::internal_error(e.to_string()))?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

/// Connects a client advertising `session.promptSuggestions` or not, and opens session `s1`.
async fn connect(agent: SuggestingAgent, advertise: bool) -> ClientConnection {
    let session = advertise.then(|| ClientSessionCapabilities {
        prompt_suggestions: Some(PromptSuggestionsCapabilities::default()),
        ..ClientSessionCapabilities::default()
    });
    super::with_session(agent, session).await
}

#[tokio::test]
async fn suggestions_reach_a_client_that_advertised_them() {
    let agent = SuggestingAgent::default();
    let conn = connect(agent.clone(), true).await;
    let updates = super::turn_updates(&conn).await;
    assert_eq!(*agent.outcomes.lock().unwrap(), [Ok(())]);
    assert_eq!(updates.len(), 2, "{updates:?}");
    let SessionUpdate::PromptSuggestionsUpdate(got) = &updates[0] else { panic!("unexpected {updates:?}") };
    assert_eq!(got.suggestions.len(), 2);
    assert_eq!(got.suggestions[0].prompt, [ContentBlock::text("Run the tests")]);
    assert_eq!(got.suggestions[1].prompt.len(), 2);
    // The client can send a suggestion back unchanged as its next prompt.
    let again = conn.prompt(PromptRequest::new("s1", got.suggestions[0].prompt.clone())).await.expect("prompt");
    assert_eq!(again.finish().await.expect("turn"), StopReason::EndTurn);
}

#[tokio::test]
async fn suggestions_are_refused_by_the_agent_when_the_client_did_not_advertise_them() {
    let agent = SuggestingAgent::default();
    let conn = connect(agent.clone(), false).await;
    let updates = super::turn_updates(&conn).await;
    assert_eq!(*agent.outcomes.lock().unwrap(), [Err("session.promptSuggestions".to_owned())]);
    // Only the text chunk arrived: the refused update never reached the client.
    assert_eq!(updates, [SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text("done")))]);
}
