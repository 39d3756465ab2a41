//! The unstable session methods (features `unstable_session_set_title`,
//! `unstable_session_status`, `unstable_session_archive`) end to end over a duplex pipe: the
//! agent implements the handlers and advertises the capabilities, the client calls them with the
//! typed calls the features add; against an agent that does not advertise them the calls are
//! refused in the client (nothing is sent, no handler runs).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{ErrorCode, RpcError, SendError};
use acp_tokio::{Agent, AgentOptions, ClientConnection, ClientOptions, Error, RequestContext};

/// `session/fork` (`unstable_session_fork`).
#[path = "../unstable/fork.rs"]
mod fork;

/// `prompt_suggestions_update` (`unstable_prompt_suggestions`).
#[path = "../unstable/prompt_suggestions.rs"]
mod prompt_suggestions;

/// `cursor_update` and forking at a cursor (`unstable_session_cursors`).
#[path = "../unstable/cursors.rs"]
mod cursors;

/// `mcp/message` in both directions (`unstable_mcp_over_acp`).
#[path = "../unstable/mcp_over_acp.rs"]
mod mcp_over_acp;

/// `auth/status`, `auth/status_update` (`unstable_auth_status`).
#[path = "../unstable/auth_status.rs"]
mod auth_status;

/// `providers/list`, `providers/set`, `providers/disable` (`unstable_llm_providers`).
#[path = "../unstable/providers.rs"]
mod providers;

/// `PromptResponse.usage` (`unstable_end_turn_token_usage`).
#[path = "../unstable/token_usage.rs"]
mod token_usage;

/// `session/options` and `configOptions` on `session/new` (`unstable_session_options`).
#[path = "../unstable/session_options.rs"]
mod session_options;

/// `proxy/initialize` as the handshake, `proxy/successor` both ways (`unstable_proxy_chains`).
#[path = "../unstable/proxy_chains.rs"]
mod proxy_chains;

/// An agent with one saved session `s1`, whose title and archive state the methods change.
#[derive(Clone, Default)]
struct SessionsAgent {
    advertise: bool,
    title: Arc<Mutex<String>>,
    archived: Arc<Mutex<bool>>,
    calls: Arc<AtomicUsize>,
}

impl SessionsAgent {
    fn known(&self, id: &SessionId) -> Result<(), RpcError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if id.as_str() == "s1" {
            Ok(())
        } else {
            Err(RpcError::new(ErrorCode::RESOURCE_NOT_FOUND, "session not found"))
        }
    }
}

impl Agent for SessionsAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        let mut response = InitializeResponse::new(request.protocol_version);
        if self.advertise {
            let session = &mut response.agent_capabilities.session_capabilities;
            session.list = Some(SessionListCapabilities::default());
            session.title = Some(SessionTitleCapabilities::default());
            session.status = Some(SessionStatusCapabilities::default());
            session.archive = Some(SessionArchiveCapabilities::default());
        }
        Ok(response)
    }

    async fn set_session_title(
        &self,
        request: SetSessionTitleRequest,
        _: RequestContext,
    ) -> Result<SetSessionTitleResponse, RpcError> {
        self.known(&request.session_id)?;
        // Normalizes as the schema allows: trimmed, refused when empty.
        let title = request.title.trim();
        if title.is_empty() {
            return Err(RpcError::invalid_params("empty title"));
        }
        *self.title.lock().unwrap() = title.to_owned();
        Ok(SetSessionTitleResponse::new(title))
    }

    async fn session_status(
        &self,
        request: SessionStatusRequest,
        _: RequestContext,
    ) -> Result<SessionStatusResponse, RpcError> {
        self.known(&request.session_id)?;
        Ok(SessionStatusResponse::new(SessionStatus::Saved))
    }

    async fn archive_session(
        &self,
        request: ArchiveSessionRequest,
        _: RequestContext,
    ) -> Result<ArchiveSessionResponse, RpcError> {
        self.known(&request.session_id)?;
        *self.archived.lock().unwrap() = true;
        Ok(ArchiveSessionResponse::default())
    }

    async fn unarchive_session(
        &self,
        request: UnarchiveSessionRequest,
        _: RequestContext,
    ) -> Result<UnarchiveSessionResponse, RpcError> {
        self.known(&request.session_id)?;
        *self.archived.lock().unwrap() = false;
        Ok(UnarchiveSessionResponse::default())
    }
}

async fn connect(agent: SessionsAgent) -> ClientConnection {
    initialized(agent, InitializeRequest::new(ProtocolVersion::V1)).await
}

/// Serves `agent` on one end of an in-memory pipe and returns a client (no handlers of its own)
/// on the other, initialised with `init`. Shared by the modules below.
async fn initialized(agent: impl Agent, init: InitializeRequest) -> ClientConnection {
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    tokio::spawn(acp_tokio::serve(agent, reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(client_io);
    let conn = ClientConnection::connect((), reader, writer, ClientOptions::default());
    conn.initialize(init).await.expect("initialize");
    conn
}

/// Initialises a client on `agent` advertising the session capabilities `session` (none when
/// `None`), and opens one session (the agents here call it `s1`).
async fn with_session(agent: impl Agent, session: Option<ClientSessionCapabilities>) -> ClientConnection {
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.session = session;
    let conn = initialized(agent, init).await;
    conn.new_session(NewSessionRequest::new("/work", Vec::new())).await.expect("session/new");
    conn
}

/// Runs one turn of session `s1` to its `end_turn` and returns its updates.
async fn turn_updates(conn: &ClientConnection) -> Vec<SessionUpdate> {
    let mut turn = conn.prompt(PromptRequest::new("s1", vec![ContentBlock::text("hi")])).await.expect("prompt");
    let mut updates = Vec::new();
    while let Some(update) = turn.next_update().await {
        updates.push(update);
    }
    assert_eq!(turn.finish().await.expect("turn"), StopReason::EndTurn);
    updates
}

#[tokio::test]
async fn title_status_and_archive_round_trip_through_the_agent_handlers() {
    let agent = SessionsAgent { advertise: true, ..SessionsAgent::default() };
    let conn = connect(agent.clone()).await;

    let stored = conn.set_session_title(SetSessionTitleRequest::new("s1", "  Fix the parser ")).await.expect("title");
    assert_eq!(stored.title, "Fix the parser");
    assert_eq!(*agent.title.lock().unwrap(), "Fix the parser");
    let empty = conn.set_session_title(SetSessionTitleRequest::new("s1", "  ")).await.expect_err("empty title");
    assert!(matches!(&empty, Error::Rpc(e) if e.code == ErrorCode::INVALID_PARAMS), "{empty:?}");

    let status = conn.session_status(SessionStatusRequest::new("s1")).await.expect("status");
    assert_eq!(status.status, SessionStatus::Saved);
    let unknown = conn.session_status(SessionStatusRequest::new("nope")).await.expect_err("unknown session");
    assert!(matches!(&unknown, Error::Rpc(e) if e.code == ErrorCode::RESOURCE_NOT_FOUND), "{unknown:?}");

    conn.archive_session(ArchiveSessionRequest::new("s1")).await.expect("archive");
    assert!(*agent.archived.lock().unwrap());
    conn.unarchive_session(UnarchiveSessionRequest::new("s1")).await.expect("unarchive");
    assert!(!*agent.archived.lock().unwrap());
    assert_eq!(agent.calls.load(Ordering::SeqCst), 6);
}

#[tokio::test]
async fn calls_to_an_agent_that_did_not_advertise_them_are_refused_in_the_client() {
    let agent = SessionsAgent::default();
    let conn = connect(agent.clone()).await;
    let refused = |e: Error| match e {
        Error::Send(SendError::NotSupportedByPeer { capability, .. }) => capability.join("."),
        other => panic!("expected a local refusal, got {other:?}"),
    };
    let e = conn.set_session_title(SetSessionTitleRequest::new("s1", "t")).await.expect_err("gated");
    assert_eq!(refused(e), "sessionCapabilities.title");
    let e = conn.session_status(SessionStatusRequest::new("s1")).await.expect_err("gated");
    assert_eq!(refused(e), "sessionCapabilities.status");
    let e = conn.archive_session(ArchiveSessionRequest::new("s1")).await.expect_err("gated");
    assert_eq!(refused(e), "sessionCapabilities.archive");
    let e = conn.unarchive_session(UnarchiveSessionRequest::new("s1")).await.expect_err("gated");
    assert_eq!(refused(e), "sessionCapabilities.archive");
    assert_eq!(agent.calls.load(Ordering::SeqCst), 0, "no handler ran");
}
