//! The ordering gate: an agent request of a turn's session (a permission ask, an elicitation
//! scoped to the session) reaches the client's handler only after the turn's reader took every
//! update the agent sent before it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use acp_proto::v2::{CreateElicitationRequest, CreateElicitationResponse, ElicitationScope};
use acp_proto::{RpcError, v2};
use acp_tokio::v2 as tokio_v2;
use acp_tokio::{AgentOptions, ClientContext, ClientOptions};
use serde_json::json;
use tokio::sync::mpsc;

use super::{answer_v2, init, of, within};

/// Updates the agent sends before its ask (after `running`).
const CHUNKS: usize = 5;

/// An agent whose every prompt sends `running`, [`CHUNKS`] chunks, then asks (a permission,
/// or with `elicit` a session-scoped form elicitation), then goes idle.
struct Asking {
    elicit: bool,
}

impl Asking {
    async fn turn(cx: tokio_v2::AgentContext, session: v2::SessionId, elicit: bool) {
        cx.answered().await;
        let _ = cx.send_update(&session, of(json!({"sessionUpdate": "state_update", "state": "running"}))).await;
        for i in 0..CHUNKS {
            let chunk = json!({"sessionUpdate": "agent_message_chunk", "messageId": "m",
                "content": {"type": "text", "text": format!("{i}")}});
            let _ = cx.send_update(&session, of(chunk)).await;
        }
        if elicit {
            let ask: CreateElicitationRequest = of(json!({"mode": "form", "message": "name?", "sessionId": session,
                "requestedSchema": {"type": "object", "properties": {}}}));
            let _ = cx.create_elicitation(ask).await;
        } else {
            let ask: v2::RequestPermissionRequest = of(json!({"sessionId": session, "title": "go?",
                "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]}));
            let _ = cx.request_permission(ask).await;
        }
        let _ = cx.send_idle(&session, v2::IdleStopReason::EndTurn).await;
    }
}

impl tokio_v2::Agent for Asking {
    async fn initialize(
        &self,
        _: v2::InitializeRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::InitializeResponse, RpcError> {
        Ok(answer_v2("asking"))
    }

    async fn new_session(
        &self,
        _: v2::NewSessionRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::NewSessionResponse, RpcError> {
        Ok(of(json!({"sessionId": "s"})))
    }

    async fn prompt(
        &self,
        request: v2::PromptRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::PromptResponse, RpcError> {
        tokio::spawn(Asking::turn(cx, request.session_id, self.elicit));
        Ok(of(json!({"messageId": "u"})))
    }
}

/// A client whose handlers report how many updates the turn's reader had taken when they ran.
struct Counting {
    taken: Arc<AtomicUsize>,
    seen: mpsc::UnboundedSender<usize>,
}

impl tokio_v2::Client for Counting {
    async fn request_permission(
        &self,
        _: v2::RequestPermissionRequest,
        _: ClientContext,
    ) -> Result<v2::RequestPermissionResponse, RpcError> {
        let _ = self.seen.send(self.taken.load(Ordering::SeqCst));
        Ok(of(json!({"outcome": {"outcome": "selected", "optionId": "y"}})))
    }

    async fn create_elicitation(
        &self,
        request: CreateElicitationRequest,
        _: ClientContext,
    ) -> Result<CreateElicitationResponse, RpcError> {
        let v2::CreateElicitationRequestKind::Form(form) = request.kind else { panic!("a form") };
        assert!(matches!(form.scope, ElicitationScope::Session(_)), "scoped to the session");
        let _ = self.seen.send(self.taken.load(Ordering::SeqCst));
        Ok(of(json!({"action": "decline"})))
    }
}

/// Runs one turn against [`Asking`]: the reader waits until the agent's ask surely arrived,
/// then takes the updates one at a time; returns what the handler saw and the updates read.
async fn run(elicit: bool, then: bool) -> (usize, usize) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    tokio::spawn(acp_tokio::v2::serve(Asking { elicit }, reader, writer, AgentOptions::default()));
    let taken = Arc::new(AtomicUsize::new(0));
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let client = Counting { taken: Arc::clone(&taken), seen: seen_tx };
    let (reader, writer) = tokio::io::split(ours);
    let conn = tokio_v2::ClientConnection::connect(client, reader, writer, ClientOptions::default());
    let mut init = init();
    if elicit {
        init.capabilities = of(json!({"elicitation": {"form": {}}}));
    }
    within("initialize", conn.initialize(init)).await.expect("v2");
    let new = of(json!({"cwd": "/tmp"}));
    let session = within("session/new", conn.new_session(new)).await.expect("a session").session_id;
    let prompt = of(json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}));
    let mut turn = within("prompt", conn.prompt(prompt)).await.expect("sent");
    // Every update and the ask are in by now; unread, they hold the handler back.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(seen.try_recv().is_err(), "the handler ran before the reader took any update");
    let mut read = 0;
    loop {
        let next = if then {
            turn.next_update_then(|_| taken.fetch_add(1, Ordering::SeqCst)).await
        } else {
            let update = within("an update", turn.next_update()).await;
            update.map(|_| taken.fetch_add(1, Ordering::SeqCst))
        };
        if next.is_none() {
            break;
        }
        read += 1;
        tokio::task::yield_now().await;
    }
    let handler_saw = within("the handler", seen.recv()).await.expect("the handler ran");
    conn.close().await.expect("the connection closes");
    (handler_saw, read)
}

#[tokio::test]
async fn v2_permission_ask_waits_for_the_updates_before_it() {
    for then in [false, true] {
        let (saw, read) = run(false, then).await;
        // `running` and the chunks came before the ask; the idle after its answer.
        assert_eq!(saw, 1 + CHUNKS, "next_update_then: {then}");
        assert_eq!(read, 1 + CHUNKS + 1);
    }
}

#[tokio::test]
async fn v2_session_scoped_elicitation_waits_for_the_updates_before_it() {
    let (saw, read) = run(true, true).await;
    assert_eq!((saw, read), (1 + CHUNKS, 1 + CHUNKS + 1));
}
