//! `session/fork` (feature `unstable_session_fork`): the agent forks a session it knows and
//! may stream updates for the new one as soon as it has answered (the core announces a forked
//! session as it does a new one); against an agent without `sessionCapabilities.fork` the call
//! is refused in the client.

use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{ErrorCode, RpcError, SendError};
use acp_tokio::{Agent, ClientConnection, Error, PromptContext, RequestContext};

/// An agent with one session `s1`; each fork of it is `s1-fork-N`, whose first prompt streams
/// one chunk naming its source.
#[derive(Clone, Default)]
struct ForkingAgent {
    advertise: bool,
    /// (new session, source session) per successful fork, and every fork request's `cwd`.
    forks: Arc<Mutex<Vec<(String, String)>>>,
    cwds: Arc<Mutex<Vec<String>>>,
}

impl Agent for ForkingAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        let mut response = InitializeResponse::new(request.protocol_version);
        if self.advertise {
            response.agent_capabilities.session_capabilities.fork = Some(SessionForkCapabilities::default());
        }
        Ok(response)
    }

    async fn fork_session(
        &self,
        request: ForkSessionRequest,
        _: RequestContext,
    ) -> Result<ForkSessionResponse, RpcError> {
        self.cwds.lock().unwrap().push(request.cwd.clone());
        if request.session_id.as_str() != "s1" {
            return Err(RpcError::new(ErrorCode::RESOURCE_NOT_FOUND, "session not found"));
        }
        let mut forks = self.forks.lock().unwrap();
        let id = format!("s1-fork-{}", forks.len() + 1);
        forks.push((id.clone(), request.session_id.as_str().to_owned()));
        Ok(ForkSessionResponse::new(id))
    }

    async fn prompt(&self, request: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        let source = self.forks.lock().unwrap().iter().find(|(id, _)| id == request.session_id.as_str()).cloned();
        let text = match source {
            Some((_, from)) => format!("forked from {from}"),
            None => "not a fork".to_owned(),
        };
        let update = SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(text)));
        cx.send_update(update).await.map_err(|e| RpcError::internal_error(e.to_string()))?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

async fn connect(agent: ForkingAgent) -> ClientConnection {
    super::initialized(agent, InitializeRequest::new(ProtocolVersion::V1)).await
}

#[tokio::test]
async fn a_forked_session_answers_and_its_updates_reach_the_client() {
    let agent = ForkingAgent { advertise: true, ..ForkingAgent::default() };
    let conn = connect(agent.clone()).await;

    let fork = conn.fork_session(ForkSessionRequest::new("s1", "/work")).await.expect("fork");
    assert_eq!(fork.session_id.as_str(), "s1-fork-1");
    let unknown = conn.fork_session(ForkSessionRequest::new("nope", "/tmp")).await.expect_err("unknown source");
    assert!(matches!(&unknown, Error::Rpc(e) if e.code == ErrorCode::RESOURCE_NOT_FOUND), "{unknown:?}");
    assert_eq!(*agent.cwds.lock().unwrap(), ["/work", "/tmp"]);

    // The agent's update for the new session is accepted by its core (the fork announced it).
    let mut turn = conn
        .prompt(PromptRequest::new(fork.session_id.clone(), vec![ContentBlock::text("summarize")]))
        .await
        .expect("prompt the fork");
    let update = turn.next_update().await.expect("an update for the fork");
    let SessionUpdate::AgentMessageChunk(chunk) = update else { panic!("unexpected update {update:?}") };
    assert_eq!(chunk.content, ContentBlock::text("forked from s1"));
    assert_eq!(turn.finish().await.expect("turn"), StopReason::EndTurn);
}

#[tokio::test]
async fn fork_is_refused_in_the_client_when_the_agent_did_not_advertise_it() {
    let agent = ForkingAgent::default();
    let conn = connect(agent.clone()).await;
    let e = conn.fork_session(ForkSessionRequest::new("s1", "/work")).await.expect_err("gated");
    match e {
        Error::Send(SendError::NotSupportedByPeer { capability, .. }) => {
            assert_eq!(capability.join("."), "sessionCapabilities.fork")
        }
        other => panic!("expected a local refusal, got {other:?}"),
    }
    assert!(agent.cwds.lock().unwrap().is_empty(), "no handler ran");
}
