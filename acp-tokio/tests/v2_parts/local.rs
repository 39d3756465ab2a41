//! `tokio_v2::LocalClient` and `tokio_v2::LocalAgent`: handlers holding `Rc` state (so their futures are not
//! `Send`), run as local tasks on a `LocalSet`; and `serve_negotiated_local`.

use std::cell::RefCell;
use std::rc::Rc;

use acp_proto::types::{InitializeRequest, InitializeResponse};
use acp_proto::{RpcError, v2};
use acp_tokio::v2 as tokio_v2;
use acp_tokio::v2::serve_negotiated_local;
use acp_tokio::{AgentOptions, ClientConnection, ClientContext, ClientOptions, LocalAgent, RequestContext};
use serde_json::json;

use super::{answer_v2, init, of, within};

/// A local agent: counts prompts in an `Rc<RefCell<_>>`, and per prompt sends `running`, asks
/// a permission, and goes idle saying the answer in a chunk.
#[derive(Clone, Default)]
struct LocalAgentImpl {
    prompts: Rc<RefCell<u32>>,
}

impl tokio_v2::LocalAgent for LocalAgentImpl {
    async fn initialize(
        &self,
        _: v2::InitializeRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::InitializeResponse, RpcError> {
        Ok(answer_v2("local"))
    }

    async fn new_session(
        &self,
        _: v2::NewSessionRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::NewSessionResponse, RpcError> {
        Ok(of(json!({"sessionId": "local-s"})))
    }

    async fn prompt(
        &self,
        request: v2::PromptRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::PromptResponse, RpcError> {
        let prompts = Rc::clone(&self.prompts);
        *prompts.borrow_mut() += 1;
        // `!Send` work beside the acknowledgement: a local task.
        tokio::task::spawn_local(async move {
            cx.answered().await;
            let session = request.session_id;
            let _ = cx.send_update(&session, of(json!({"sessionUpdate": "state_update", "state": "running"}))).await;
            let ask = of(json!({"sessionId": session, "title": "go?",
                "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]}));
            let said = match cx.request_permission(ask).await.map(|a| a.outcome) {
                Ok(v2::RequestPermissionOutcome::Selected(s)) => s.option_id.as_str().to_owned(),
                other => format!("{other:?}"),
            };
            let text = format!("prompt {} got {said}", prompts.borrow());
            let chunk = json!({"sessionUpdate": "agent_message_chunk", "messageId": "m",
                "content": {"type": "text", "text": text}});
            let _ = cx.send_update(&session, of(chunk)).await;
            let _ = cx.send_idle(&session, v2::IdleStopReason::EndTurn).await;
        });
        Ok(of(json!({"messageId": "u"})))
    }
}

/// A local client: records each ask's title in an `Rc<RefCell<_>>` and selects `y`.
#[derive(Clone, Default)]
struct LocalClientImpl {
    asked: Rc<RefCell<Vec<String>>>,
}

impl tokio_v2::LocalClient for LocalClientImpl {
    async fn request_permission(
        &self,
        request: v2::RequestPermissionRequest,
        _: ClientContext,
    ) -> Result<v2::RequestPermissionResponse, RpcError> {
        tokio::task::yield_now().await;
        self.asked.borrow_mut().push(request.title.clone());
        Ok(of(json!({"outcome": {"outcome": "selected", "optionId": "y"}})))
    }
}

/// Runs two prompts of a local client against a served local agent; the texts of the chunks.
async fn two_turns(conn: &tokio_v2::ClientConnection) -> Vec<String> {
    within("initialize", conn.initialize(init())).await.expect("v2");
    let session = within("session/new", conn.new_session(of(json!({"cwd": "/tmp"})))).await.expect("s").session_id;
    let mut texts = Vec::new();
    for _ in 0..2 {
        let prompt = of(json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}));
        let mut turn = within("prompt", conn.prompt(prompt)).await.expect("sent");
        while let Some(update) = within("an update", turn.next_update()).await {
            if let v2::SessionUpdate::AgentMessageChunk(c) = update.update
                && let v2::ContentBlock::Text(t) = c.content
            {
                texts.push(t.text);
            }
        }
    }
    texts
}

#[tokio::test]
async fn v2_local_client_and_local_agent_on_a_local_set() {
    tokio::task::LocalSet::new()
        .run_until(async {
            let (ours, theirs) = tokio::io::duplex(64 * 1024);
            let (reader, writer) = tokio::io::split(theirs);
            let agent = LocalAgentImpl::default();
            tokio::task::spawn_local(tokio_v2::serve_local(agent.clone(), reader, writer, AgentOptions::default()));
            let client = LocalClientImpl::default();
            let (reader, writer) = tokio::io::split(ours);
            let conn =
                tokio_v2::ClientConnection::connect_local(client.clone(), reader, writer, ClientOptions::default());
            assert_eq!(two_turns(&conn).await, ["prompt 1 got y", "prompt 2 got y"]);
            assert_eq!(*client.asked.borrow(), ["go?", "go?"]);
            assert_eq!(*agent.prompts.borrow(), 2);
            conn.close().await.expect("the connection closes");
        })
        .await;
}

/// The v1 side of a local agent that speaks both versions.
struct LocalClassic(Rc<RefCell<u32>>);

impl LocalAgent for LocalClassic {
    async fn initialize(&self, _: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        *self.0.borrow_mut() += 1;
        Ok(InitializeResponse::new(acp_proto::types::ProtocolVersion::V1))
    }
}

#[tokio::test]
async fn v2_negotiated_local_agent_serves_both_versions() {
    tokio::task::LocalSet::new()
        .run_until(async {
            let v1_inits = Rc::new(RefCell::new(0));
            for offer_v2 in [true, false] {
                let (ours, theirs) = tokio::io::duplex(64 * 1024);
                let (reader, writer) = tokio::io::split(theirs);
                let agents = (LocalAgentImpl::default(), LocalClassic(Rc::clone(&v1_inits)));
                let options = AgentOptions::default();
                tokio::task::spawn_local(serve_negotiated_local(agents.0, agents.1, reader, writer, options));
                let (reader, writer) = tokio::io::split(ours);
                if offer_v2 {
                    let conn = tokio_v2::ClientConnection::connect_local((), reader, writer, ClientOptions::default());
                    let answer = within("initialize", conn.initialize(init())).await.expect("v2");
                    assert_eq!(answer.info.name, "local");
                    conn.close().await.expect("the connection closes");
                } else {
                    let conn = ClientConnection::connect_local((), reader, writer, ClientOptions::default());
                    let request = InitializeRequest::new(acp_proto::types::ProtocolVersion::V1);
                    let answer = within("initialize", conn.initialize(request)).await.expect("v1");
                    assert_eq!(answer.protocol_version, acp_proto::types::ProtocolVersion::V1);
                    conn.close().await.expect("a clean close");
                }
            }
            assert_eq!(*v1_inits.borrow(), 1, "only the v1 client reached the v1 agent");
        })
        .await;
}
