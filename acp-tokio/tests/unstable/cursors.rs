//! `cursor_update` (feature `unstable_session_cursors`): the agent announces a cursor after its
//! reply in a turn, forkable; a client that advertised `session.cursors` gets it in the turn's
//! updates and forks the session there with `session/fork`'s `cursorId`. To a client that did
//! not advertise it, the agent's connection refuses to send the update.

use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{RpcError, SendError};
use acp_tokio::{Agent, ClientConnection, Error, PromptContext, RequestContext};

/// An agent with session `s1` whose turns reply with message `m1` and announce cursor `c1`
/// after it.
#[derive(Clone, Default)]
struct CursorAgent {
    /// The outcome of each turn's cursor announcement (`Ok` or the refused capability path).
    outcomes: Arc<Mutex<Vec<Result<(), String>>>>,
    /// The `cursorId` of each fork request.
    forked_at: Arc<Mutex<Vec<Option<String>>>>,
}

impl Agent for CursorAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        let mut response = InitializeResponse::new(request.protocol_version);
        response.agent_capabilities.session_capabilities.fork = Some(SessionForkCapabilities::default());
        Ok(response)
    }

    async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s1"))
    }

    async fn prompt(&self, _: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        let mut reply = ContentChunk::new(ContentBlock::text("answer"));
        reply.message_id = Some("m1".into());
        cx.send_update(SessionUpdate::AgentMessageChunk(reply))
            .await
            .map_err(|e| RpcError::internal_error(e.to_string()))?;
        let mut cursor = CursorUpdate::new("c1", CursorAnchor::after_message(CursorAnchorKind::AgentMessage, "m1"));
        cursor.capabilities = Some(Some(CursorCapabilities::forkable()));
        let outcome = match cx.send_update(SessionUpdate::CursorUpdate(cursor)).await {
            Ok(()) => Ok(()),
            Err(Error::Send(SendError::NotSupportedByPeer { capability, .. })) => Err(capability.join(".")),
            Err(e) => return Err(RpcError::internal_error(e.to_string())),
        };
        self.outcomes.lock().unwrap().push(outcome);
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    async fn fork_session(
        &self,
        request: ForkSessionRequest,
        _: RequestContext,
    ) -> Result<ForkSessionResponse, RpcError> {
        let at = request.cursor_id.map(|c| c.as_str().to_owned());
        if at.as_deref().is_some_and(|c| c != "c1") {
            return Err(RpcError::invalid_params("not a forkable cursor"));
        }
        self.forked_at.lock().unwrap().push(at);
        Ok(ForkSessionResponse::new("s2"))
    }
}

async fn connect(agent: CursorAgent, advertise: bool) -> ClientConnection {
    let session = advertise.then(|| ClientSessionCapabilities {
        cursors: Some(SessionCursorsCapabilities::default()),
        ..ClientSessionCapabilities::default()
    });
    super::with_session(agent, session).await
}

#[tokio::test]
async fn an_announced_cursor_reaches_the_client_which_forks_there() {
    let agent = CursorAgent::default();
    let conn = connect(agent.clone(), true).await;
    let updates = super::turn_updates(&conn).await;
    assert_eq!(*agent.outcomes.lock().unwrap(), [Ok(())]);
    assert_eq!(updates.len(), 2, "{updates:?}");
    let SessionUpdate::CursorUpdate(cursor) = &updates[1] else { panic!("unexpected {updates:?}") };
    assert_eq!(cursor.anchor, Some(CursorAnchor::after_message(CursorAnchorKind::AgentMessage, "m1")));
    assert!(cursor.capabilities.as_ref().is_some_and(|c| c.as_ref().is_some_and(|c| c.fork.is_some())));

    let mut fork = ForkSessionRequest::new("s1", "/work");
    fork.cursor_id = Some(cursor.cursor_id.clone());
    assert_eq!(conn.fork_session(fork).await.expect("fork at the cursor").session_id.as_str(), "s2");
    assert_eq!(*agent.forked_at.lock().unwrap(), [Some("c1".to_owned())]);
}

#[tokio::test]
async fn a_cursor_is_refused_by_the_agent_when_the_client_did_not_advertise_cursors() {
    let agent = CursorAgent::default();
    let conn = connect(agent.clone(), false).await;
    let updates = super::turn_updates(&conn).await;
    assert_eq!(*agent.outcomes.lock().unwrap(), [Err("session.cursors".to_owned())]);
    assert_eq!(updates.len(), 1, "only the reply arrived: {updates:?}");
    assert!(matches!(&updates[0], SessionUpdate::AgentMessageChunk(_)));
}
