//! `auth/status` and `auth/status_update` (feature `unstable_auth_status`): the client reads
//! the agent's authentication state, signs in, and is told of the change by a notification the
//! agent sends from its `authenticate` handler. Against an agent that did not advertise
//! `auth.status`, the client's `auth/status` is refused in the client (no handler runs) and the
//! agent's own core refuses to send the notification (the gate's sender rule), so the client's
//! handler never sees one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{RpcError, SendError};
use acp_tokio::{Agent, AgentOptions, Client, ClientConnection, ClientOptions, Error, RequestContext};
use tokio::sync::mpsc;

/// An agent with one API-key account, signed out until `authenticate`.
#[derive(Clone, Default)]
struct AuthAgent {
    advertise: bool,
    signed_in: Arc<Mutex<bool>>,
    status_calls: Arc<AtomicUsize>,
    /// What sending `auth/status_update` from `authenticate` gave.
    notify_results: Arc<Mutex<Vec<Result<(), String>>>>,
}

impl AuthAgent {
    fn status(&self) -> AuthStatusResponse {
        let signed_in = *self.signed_in.lock().unwrap();
        let mut status =
            AuthStatusResponse::new(if signed_in { AuthState::Authenticated } else { AuthState::Unauthenticated });
        let mut account = AuthAccount::new("Example API key");
        account.active = Some(signed_in);
        status.accounts = Some(vec![account]);
        status
    }
}

impl Agent for AuthAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        let mut response = InitializeResponse::new(request.protocol_version);
        if self.advertise {
            response.agent_capabilities.auth.status = Some(AuthStatusCapabilities::default());
        }
        Ok(response)
    }

    async fn auth_status(&self, _: AuthStatusRequest, _: RequestContext) -> Result<AuthStatusResponse, RpcError> {
        self.status_calls.fetch_add(1, Ordering::SeqCst);
        Ok(self.status())
    }

    async fn authenticate(&self, _: AuthenticateRequest, cx: RequestContext) -> Result<AuthenticateResponse, RpcError> {
        *self.signed_in.lock().unwrap() = true;
        let sent = cx.notify(AuthStatusUpdateNotification::from(self.status())).await;
        self.notify_results.lock().unwrap().push(sent.map_err(|e| match e {
            Error::Send(SendError::NotAdvertised { capability, .. }) => {
                format!("not advertised: {}", capability.join("."))
            }
            other => other.to_string(),
        }));
        Ok(AuthenticateResponse::default())
    }
}

/// A client that forwards every `auth/status_update` it gets.
struct UpdatesClient(mpsc::UnboundedSender<AuthStatusUpdateNotification>);

impl Client for UpdatesClient {
    async fn auth_status_update(&self, notification: AuthStatusUpdateNotification) {
        let _ = self.0.send(notification);
    }
}

async fn connect(agent: AuthAgent) -> (ClientConnection, mpsc::UnboundedReceiver<AuthStatusUpdateNotification>) {
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    tokio::spawn(acp_tokio::serve(agent, reader, writer, AgentOptions::default()));
    let (tx, rx) = mpsc::unbounded_channel();
    let (reader, writer) = tokio::io::split(client_io);
    let conn = ClientConnection::connect(UpdatesClient(tx), reader, writer, ClientOptions::default());
    conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await.expect("initialize");
    (conn, rx)
}

#[tokio::test]
async fn auth_status_is_read_and_its_change_is_pushed_to_the_client() {
    let agent = AuthAgent { advertise: true, ..AuthAgent::default() };
    let (conn, mut updates) = connect(agent.clone()).await;

    let before = conn.auth_status(AuthStatusRequest::default()).await.expect("auth/status");
    assert_eq!(before.state, AuthState::Unauthenticated);
    let accounts = before.accounts.expect("accounts");
    assert_eq!((accounts[0].label.as_str(), accounts[0].active), ("Example API key", Some(false)));

    conn.authenticate(AuthenticateRequest::new("api-key")).await.expect("authenticate");
    assert_eq!(*agent.notify_results.lock().unwrap(), [Ok(())]);
    // A bound on a hang, not a timing assertion: the update was sent before the answer.
    let update = tokio::time::timeout(Duration::from_secs(10), updates.recv()).await.expect("update").expect("open");
    assert_eq!(update.state, AuthState::Authenticated);
    assert_eq!(update.accounts.expect("accounts")[0].active, Some(true));

    let after = conn.auth_status(AuthStatusRequest::default()).await.expect("auth/status");
    assert_eq!(after.state, AuthState::Authenticated);
    assert_eq!(agent.status_calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn without_auth_status_advertised_neither_the_call_nor_the_update_is_sent() {
    let agent = AuthAgent::default();
    let (conn, mut updates) = connect(agent.clone()).await;

    let e = conn.auth_status(AuthStatusRequest::default()).await.expect_err("gated");
    match e {
        Error::Send(SendError::NotSupportedByPeer { capability, .. }) => assert_eq!(capability, ["auth", "status"]),
        other => panic!("expected a local refusal, got {other:?}"),
    }
    assert_eq!(agent.status_calls.load(Ordering::SeqCst), 0, "no handler ran");

    // The agent tries to push an update; its own core refuses it (it never advertised
    // `auth.status`), so nothing reaches the client.
    conn.authenticate(AuthenticateRequest::new("api-key")).await.expect("authenticate");
    assert_eq!(*agent.notify_results.lock().unwrap(), [Err("not advertised: auth.status".to_owned())]);
    assert!(updates.try_recv().is_err(), "the client's handler got no update");
}
