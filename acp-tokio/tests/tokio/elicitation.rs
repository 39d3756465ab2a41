//! Elicitation both ways and the opt-in update gate, over a real duplex pipe: the agent asks
//! for a form and a URL (and completes the URL one), the client answers through its
//! `create_elicitation` handler and sees the completion; a `notice` to a client that did not
//! advertise `session.notices` fails locally in the agent and never reaches the client.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{RpcError, SendError};
use acp_tokio::{
    Agent, AgentOptions, Client, ClientConnection, ClientContext, ClientOptions, Error, PromptContext, RequestContext,
};

/// An agent whose every prompt sends a notice, then a form and a URL elicitation, and reports
/// each outcome as a text chunk.
struct ElicitingAgent;

impl ElicitingAgent {
    async fn run(&self, cx: &PromptContext) -> Result<(), Error> {
        match cx.send_notice(NoticeSeverity::Info, "indexing").await {
            Ok(()) => cx.send_text("notice sent").await?,
            Err(Error::Send(SendError::NotSupportedByPeer { capability, .. })) => {
                cx.send_text(format!("notice refused: {}", capability.join("."))).await?
            }
            Err(e) => return Err(e),
        }
        let schema = ElicitationSchema::new().field(
            "name",
            ElicitationPropertySchema::String(StringPropertySchema::default()),
            true,
        );
        let form = cx.elicit("Your name?", schema).await?;
        let name = match &form.action {
            ElicitationAction::Accept(a) => format!("{:?}", a.content.as_ref().and_then(|c| c.get("name"))),
            other => format!("{other:?}"),
        };
        cx.send_text(format!("form: {name}")).await?;
        let url = cx.elicit_url("Log in", "e1", "https://example.com/login").await?;
        cx.complete_elicitation("e1").await?;
        cx.send_text(format!("url: {}", matches!(url.action, ElicitationAction::Accept(_)))).await
    }
}

impl Agent for ElicitingAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(request.protocol_version))
    }

    async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s"))
    }

    async fn prompt(&self, _: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        self.run(&cx).await.map_err(|e| RpcError::internal_error(e.to_string()))?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

/// A client that fills every form with `name: "Ada"`, accepts URLs and records what it saw.
#[derive(Clone, Default)]
struct FormClient {
    seen: Arc<Mutex<Vec<String>>>,
}

impl Client for FormClient {
    async fn create_elicitation(
        &self,
        request: CreateElicitationRequest,
        _: ClientContext,
    ) -> Result<CreateElicitationResponse, RpcError> {
        self.seen.lock().unwrap().push(format!("create {}", request.message));
        Ok(match request.mode {
            ElicitationMode::Form(_) => CreateElicitationResponse::accept(BTreeMap::from([(
                "name".into(),
                ElicitationContentValue::String("Ada".into()),
            )])),
            _ => CreateElicitationResponse::new(ElicitationAction::Accept(ElicitationAcceptAction::default())),
        })
    }

    async fn complete_elicitation(&self, notification: CompleteElicitationNotification) {
        self.seen.lock().unwrap().push(format!("complete {}", notification.elicitation_id));
    }
}

fn connect(client: FormClient) -> ClientConnection {
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    tokio::spawn(acp_tokio::serve(ElicitingAgent, reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(client_io);
    ClientConnection::connect(client, reader, writer, ClientOptions::default())
}

/// Runs one prompt with `caps`: the texts and whether a notice arrived.
async fn run(client: FormClient, caps: ClientCapabilities) -> (Vec<String>, bool) {
    let conn = connect(client);
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities = caps;
    conn.initialize(init).await.expect("initialize");
    let session = conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("session/new").session_id;
    let mut turn = conn.prompt(PromptRequest::new(session, vec![ContentBlock::text("go")])).await.expect("prompt");
    let (mut texts, mut notice) = (Vec::new(), false);
    while let Some(update) = turn.next_update().await {
        match update {
            SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => texts.push(t.text),
            SessionUpdate::Notice(_) => notice = true,
            _ => {}
        }
    }
    assert_eq!(turn.response().await.expect("response").stop_reason, StopReason::EndTurn);
    (texts, notice)
}

fn elicitation_caps() -> ClientCapabilities {
    ClientCapabilities { elicitation: Some(ElicitationCapabilities::all()), ..ClientCapabilities::default() }
}

#[tokio::test]
async fn elicitation_both_ways_and_a_notice_refused_locally() {
    let client = FormClient::default();
    let (texts, notice) = run(client.clone(), elicitation_caps()).await;
    assert_eq!(texts, ["notice refused: session.notices", "form: Some(String(\"Ada\"))", "url: true"]);
    assert!(!notice, "the client never sees a notice it did not opt in to");
    assert_eq!(*client.seen.lock().unwrap(), ["create Your name?", "create Log in", "complete e1"]);
}

#[tokio::test]
async fn notices_and_elicitation_modes_follow_the_advertised_capabilities() {
    let mut caps = elicitation_caps();
    caps.session =
        Some(ClientSessionCapabilities { notices: Some(NoticeCapabilities::default()), ..Default::default() });
    let (texts, notice) = run(FormClient::default(), caps).await;
    assert_eq!(texts[0], "notice sent");
    assert!(notice);
    // Without `elicitation.form` the form is refused in the agent: the turn fails, and the
    // client's handler is never called.
    let client = FormClient::default();
    let caps = ClientCapabilities {
        elicitation: Some(ElicitationCapabilities { url: Some(Default::default()), ..Default::default() }),
        ..ClientCapabilities::default()
    };
    let conn = connect(client.clone());
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities = caps;
    conn.initialize(init).await.expect("initialize");
    let session = conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.expect("session/new").session_id;
    let turn = conn.prompt(PromptRequest::new(session, vec![ContentBlock::text("go")])).await.expect("prompt");
    let error = turn.response().await.expect_err("the form is refused");
    assert!(error.to_string().contains("elicitation.form"), "{error}");
    assert!(client.seen.lock().unwrap().is_empty());
}
