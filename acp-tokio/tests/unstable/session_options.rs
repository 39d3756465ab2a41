//! `session/options` and initial config option values (feature `unstable_session_options`): the
//! client asks which options a new session would start with, then opens one with initial
//! values, which the agent's `session/new` handler applies (ignoring an unknown id, as the
//! schema says). Against an agent without `sessionCapabilities.options`, `session/options` and a
//! `session/new` carrying values are refused in the client, and no handler runs; a `session/new`
//! without values still goes through.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{RpcError, SendError};
use acp_tokio::{Agent, ClientConnection, Error, RequestContext};

/// An agent whose sessions have one boolean option, `web` (off by default).
#[derive(Clone, Default)]
struct OptionsAgent {
    advertise: bool,
    options_calls: Arc<AtomicUsize>,
    new_calls: Arc<AtomicUsize>,
}

fn web(on: bool) -> Vec<SessionConfigOption> {
    vec![SessionConfigOption::boolean("web", "Web search", on)]
}

impl Agent for OptionsAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        let mut response = InitializeResponse::new(request.protocol_version);
        if self.advertise {
            response.agent_capabilities.session_capabilities.options = Some(SessionOptionsCapabilities::default());
        }
        Ok(response)
    }

    async fn session_options(
        &self,
        request: SessionOptionsRequest,
        _: RequestContext,
    ) -> Result<SessionOptionsResponse, RpcError> {
        self.options_calls.fetch_add(1, Ordering::SeqCst);
        if request.session_id.is_some() {
            return Err(RpcError::invalid_params("this agent cannot load sessions"));
        }
        Ok(SessionOptionsResponse { config_options: Some(web(false)), ..SessionOptionsResponse::default() })
    }

    async fn new_session(&self, request: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        self.new_calls.fetch_add(1, Ordering::SeqCst);
        let mut on = false;
        // Applied in order; an unknown id or a value of the wrong type is ignored.
        for initial in request.config_options.unwrap_or_default() {
            if let ("web", SessionConfigOptionValue::Boolean(b)) = (initial.config_id.as_str(), &initial.value) {
                on = *b;
            }
        }
        let mut response = NewSessionResponse::new(format!("s{}", self.new_calls.load(Ordering::SeqCst)));
        response.config_options = Some(web(on));
        Ok(response)
    }
}

async fn connect(agent: OptionsAgent) -> ClientConnection {
    // Boolean options may be sent and shown only by a client that advertises them.
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.session = Some(ClientSessionCapabilities {
        config_options: Some(SessionConfigOptionsCapabilities {
            boolean: Some(BooleanConfigOptionCapabilities::default()),
            ..Default::default()
        }),
        ..Default::default()
    });
    super::initialized(agent, init).await
}

fn web_is_on(options: &Option<Vec<SessionConfigOption>>) -> bool {
    let option = &options.as_ref().expect("config options")[0];
    matches!(&option.kind, SessionConfigKind::Boolean(b) if b.current_value)
}

fn new_with_web() -> NewSessionRequest {
    let mut request = NewSessionRequest::new("/work", Vec::new());
    request.config_options =
        Some(vec![InitialSessionConfigOption::new("unknown", "ignored"), InitialSessionConfigOption::new("web", true)]);
    request
}

#[tokio::test]
async fn options_are_previewed_then_set_on_a_new_session() {
    let agent = OptionsAgent { advertise: true, ..OptionsAgent::default() };
    let conn = connect(agent.clone()).await;

    let preview = conn.session_options(SessionOptionsRequest::new("/work")).await.expect("session/options");
    assert!(!web_is_on(&preview.config_options));
    let session = conn.new_session(new_with_web()).await.expect("session/new");
    assert_eq!(session.session_id.as_str(), "s1");
    assert!(web_is_on(&session.config_options), "the initial value was applied");
    assert_eq!((agent.options_calls.load(Ordering::SeqCst), agent.new_calls.load(Ordering::SeqCst)), (1, 1));
}

#[tokio::test]
async fn without_the_capability_options_are_refused_in_the_client() {
    let agent = OptionsAgent::default();
    let conn = connect(agent.clone()).await;
    let refused = |e: Error| match e {
        Error::Send(SendError::NotSupportedByPeer { capability, .. }) => capability.join("."),
        other => panic!("expected a local refusal, got {other:?}"),
    };
    let e = conn.session_options(SessionOptionsRequest::new("/work")).await.expect_err("gated");
    assert_eq!(refused(e), "sessionCapabilities.options");
    let e = conn.new_session(new_with_web()).await.expect_err("initial values gated");
    assert_eq!(refused(e), "sessionCapabilities.options");
    assert_eq!((agent.options_calls.load(Ordering::SeqCst), agent.new_calls.load(Ordering::SeqCst)), (0, 0));

    // Without initial values the same request goes through.
    let session = conn.new_session(NewSessionRequest::new("/work", Vec::new())).await.expect("session/new");
    assert!(!web_is_on(&session.config_options));
    assert_eq!(agent.new_calls.load(Ordering::SeqCst), 1);
}
