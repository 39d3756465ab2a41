//! Elicitation both ways and the opt-in update gate, over real OS pipes: the agent asks for a
//! form and a URL (and completes the URL one), the client answers through its
//! `create_elicitation` handler and sees the completion; a `notice` to a client that did not
//! advertise `session.notices` fails locally in the agent and never reaches the client.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use acp_blocking::acp_proto::types::*;
use acp_blocking::acp_proto::{RpcError, SendError};
use acp_blocking::{
    Agent, AgentOptions, Client, ClientConnection, ClientContext, ClientOptions, Error, PromptContext, RequestContext,
};

/// An agent whose every prompt sends a notice, then a form and a URL elicitation, and reports
/// each outcome as a text chunk.
struct ElicitingAgent;

impl ElicitingAgent {
    fn run(&self, cx: &PromptContext) -> Result<(), Error> {
        match cx.send_notice(NoticeSeverity::Info, "indexing") {
            Ok(()) => cx.send_text("notice sent")?,
            Err(Error::Send(SendError::NotSupportedByPeer { capability, .. })) => {
                cx.send_text(format!("notice refused: {}", capability.join(".")))?
            }
            Err(e) => return Err(e),
        }
        let schema = ElicitationSchema::new().field(
            "name",
            ElicitationPropertySchema::String(StringPropertySchema::default()),
            true,
        );
        let form = cx.elicit("Your name?", schema)?;
        let name = match &form.action {
            ElicitationAction::Accept(a) => format!("{:?}", a.content.as_ref().and_then(|c| c.get("name"))),
            other => format!("{other:?}"),
        };
        cx.send_text(format!("form: {name}"))?;
        let url = cx.elicit_url("Log in", "e1", "https://example.com/login")?;
        cx.complete_elicitation("e1")?;
        cx.send_text(format!("url: {}", matches!(url.action, ElicitationAction::Accept(_))))
    }
}

impl Agent for ElicitingAgent {
    fn initialize(&self, request: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(request.protocol_version))
    }

    fn new_session(&self, _: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s"))
    }

    fn prompt(&self, _: PromptRequest, cx: &PromptContext) -> Result<PromptResponse, RpcError> {
        self.run(cx).map_err(|e| RpcError::internal_error(e.to_string()))?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

/// A client that fills every form with `name: "Ada"`, accepts URLs and records what it saw.
#[derive(Clone, Default)]
struct FormClient {
    seen: Arc<Mutex<Vec<String>>>,
}

impl Client for FormClient {
    fn create_elicitation(
        &self,
        request: CreateElicitationRequest,
        _: &ClientContext,
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

    fn complete_elicitation(&self, notification: CompleteElicitationNotification) {
        self.seen.lock().unwrap().push(format!("complete {}", notification.elicitation_id));
    }
}

/// A client connected over OS pipes to an [`ElicitingAgent`] served on its own thread, after
/// the handshake (advertising `caps`) and `session/new`.
fn connect(
    client: FormClient,
    caps: ClientCapabilities,
) -> (ClientConnection, SessionId, JoinHandle<Result<(), Error>>) {
    let (agent_in, to_agent) = std::io::pipe().unwrap();
    let (from_agent, agent_out) = std::io::pipe().unwrap();
    let server =
        thread::spawn(move || acp_blocking::serve_with(ElicitingAgent, agent_in, agent_out, AgentOptions::default()));
    let conn = ClientConnection::connect(client, from_agent, to_agent, ClientOptions::default()).unwrap();
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities = caps;
    conn.initialize(init).expect("initialize");
    let session = conn.new_session(NewSessionRequest::new("/tmp", Vec::new())).expect("session/new").session_id;
    (conn, session, server)
}

/// Runs one prompt with `caps`: the texts and whether a notice arrived.
fn run(client: FormClient, caps: ClientCapabilities) -> (Vec<String>, bool) {
    let (conn, session, server) = connect(client, caps);
    let mut turn = conn.prompt(PromptRequest::new(session, vec![ContentBlock::text("go")])).expect("prompt");
    let (mut texts, mut notice) = (Vec::new(), false);
    while let Some(update) = turn.next_update() {
        match update {
            SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => texts.push(t.text),
            SessionUpdate::Notice(_) => notice = true,
            _ => {}
        }
    }
    assert_eq!(turn.response().expect("response").stop_reason, StopReason::EndTurn);
    drop(conn);
    server.join().unwrap().expect("the agent ends cleanly");
    (texts, notice)
}

fn elicitation_caps() -> ClientCapabilities {
    ClientCapabilities { elicitation: Some(ElicitationCapabilities::all()), ..ClientCapabilities::default() }
}

#[test]
fn elicitation_both_ways_and_a_notice_refused_locally() {
    let client = FormClient::default();
    let (texts, notice) = run(client.clone(), elicitation_caps());
    assert_eq!(texts, ["notice refused: session.notices", "form: Some(String(\"Ada\"))", "url: true"]);
    assert!(!notice, "the client never sees a notice it did not opt in to");
    // `elicitation/complete` is a notification: its handler runs on the ordered notification
    // thread, which may still be at it when the turn's answer reaches this thread.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while client.seen.lock().unwrap().len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(*client.seen.lock().unwrap(), ["create Your name?", "create Log in", "complete e1"]);
}

#[test]
fn notices_and_elicitation_modes_follow_the_advertised_capabilities() {
    let mut caps = elicitation_caps();
    caps.session =
        Some(ClientSessionCapabilities { notices: Some(NoticeCapabilities::default()), ..Default::default() });
    let (texts, notice) = run(FormClient::default(), caps);
    assert_eq!(texts[0], "notice sent");
    assert!(notice);
    // Without `elicitation.form` the form is refused in the agent: the turn fails, and the
    // client's handler is never called.
    let client = FormClient::default();
    let caps = ClientCapabilities {
        elicitation: Some(ElicitationCapabilities { url: Some(Default::default()), ..Default::default() }),
        ..ClientCapabilities::default()
    };
    let (conn, session, server) = connect(client.clone(), caps);
    let turn = conn.prompt(PromptRequest::new(session, vec![ContentBlock::text("go")])).expect("prompt");
    let error = turn.response().expect_err("the form is refused");
    assert!(error.to_string().contains("elicitation.form"), "{error}");
    assert!(client.seen.lock().unwrap().is_empty());
    drop(conn);
    server.join().unwrap().expect("the agent ends cleanly");
}
