//! Unstable methods over acp-blocking, end to end over OS pipes (CI runs it with
//! `--features acp-blocking/unstable`): `auth/status` and `auth/status_update` (feature
//! `unstable_auth_status`). The client's typed call reaches the agent's handler, and the
//! agent's `authenticate` handler pushes the new state to the client's notification handler;
//! against an agent that did not advertise `auth.status` the call is refused in the client and
//! the agent's own core refuses the notification, so no handler runs on either side.
#![cfg(feature = "unstable_auth_status")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use acp_blocking::acp_proto::types::*;
use acp_blocking::acp_proto::{RpcError, SendError};
use acp_blocking::{Agent, AgentOptions, Client, ClientConnection, ClientOptions, Error, RequestContext};

/// An agent signed out until `authenticate`, which announces the change.
#[derive(Clone, Default)]
struct AuthAgent {
    advertise: bool,
    signed_in: Arc<Mutex<bool>>,
    status_calls: Arc<AtomicUsize>,
    /// What sending `auth/status_update` from `authenticate` gave.
    notify_results: Arc<Mutex<Vec<Result<(), String>>>>,
}

impl AuthAgent {
    fn state(&self) -> AuthState {
        if *self.signed_in.lock().unwrap() { AuthState::Authenticated } else { AuthState::Unauthenticated }
    }
}

impl Agent for AuthAgent {
    fn initialize(&self, request: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        let mut response = InitializeResponse::new(request.protocol_version);
        if self.advertise {
            response.agent_capabilities.auth.status = Some(AuthStatusCapabilities::default());
        }
        Ok(response)
    }

    fn auth_status(&self, _: AuthStatusRequest, _: &RequestContext) -> Result<AuthStatusResponse, RpcError> {
        self.status_calls.fetch_add(1, Ordering::SeqCst);
        Ok(AuthStatusResponse::new(self.state()))
    }

    fn authenticate(&self, _: AuthenticateRequest, cx: &RequestContext) -> Result<AuthenticateResponse, RpcError> {
        *self.signed_in.lock().unwrap() = true;
        let mut update = AuthStatusUpdateNotification::new(self.state());
        update.accounts = Some(vec![AuthAccount::new("Example account")]);
        let sent = cx.notify(update).map_err(|e| match e {
            Error::Send(SendError::NotAdvertised { capability, .. }) => {
                format!("not advertised: {}", capability.join("."))
            }
            other => other.to_string(),
        });
        self.notify_results.lock().unwrap().push(sent);
        Ok(AuthenticateResponse::default())
    }
}

/// A client that forwards every `auth/status_update` it gets.
struct UpdatesClient(Mutex<mpsc::Sender<AuthStatusUpdateNotification>>);

impl Client for UpdatesClient {
    fn auth_status_update(&self, notification: AuthStatusUpdateNotification) {
        let _ = self.0.lock().unwrap().send(notification);
    }
}

fn connect(
    agent: AuthAgent,
) -> (ClientConnection, mpsc::Receiver<AuthStatusUpdateNotification>, JoinHandle<Result<(), Error>>) {
    let (agent_in, to_agent) = std::io::pipe().unwrap();
    let (from_agent, agent_out) = std::io::pipe().unwrap();
    let server = thread::spawn(move || acp_blocking::serve_with(agent, agent_in, agent_out, AgentOptions::default()));
    let (tx, rx) = mpsc::channel();
    let conn = ClientConnection::connect(UpdatesClient(Mutex::new(tx)), from_agent, to_agent, ClientOptions::default())
        .unwrap();
    conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).expect("initialize");
    (conn, rx, server)
}

#[test]
fn auth_status_answers_and_the_agent_pushes_its_change() {
    let agent = AuthAgent { advertise: true, ..AuthAgent::default() };
    let (conn, updates, server) = connect(agent.clone());

    assert_eq!(conn.auth_status(AuthStatusRequest::default()).expect("auth/status").state, AuthState::Unauthenticated);
    conn.authenticate(AuthenticateRequest::new("login")).expect("authenticate");
    assert_eq!(*agent.notify_results.lock().unwrap(), [Ok(())]);
    // Notifications run on the client's notification thread: a bound on a hang, not timing.
    let update = updates.recv_timeout(Duration::from_secs(10)).expect("auth/status_update");
    assert_eq!(update.state, AuthState::Authenticated);
    assert_eq!(update.accounts.expect("accounts")[0].label, "Example account");
    assert_eq!(conn.auth_status(AuthStatusRequest::default()).expect("auth/status").state, AuthState::Authenticated);
    assert_eq!(agent.status_calls.load(Ordering::SeqCst), 2);

    drop(conn);
    server.join().unwrap().expect("the agent ends cleanly");
}

#[test]
fn without_auth_status_nothing_is_sent_either_way() {
    let agent = AuthAgent::default();
    let (conn, updates, server) = connect(agent.clone());

    match conn.auth_status(AuthStatusRequest::default()) {
        Err(Error::Send(SendError::NotSupportedByPeer { capability, .. })) => {
            assert_eq!(capability, ["auth", "status"])
        }
        other => panic!("expected a local refusal, got {other:?}"),
    }
    assert_eq!(agent.status_calls.load(Ordering::SeqCst), 0, "no handler ran");
    conn.authenticate(AuthenticateRequest::new("login")).expect("authenticate");
    assert_eq!(*agent.notify_results.lock().unwrap(), [Err("not advertised: auth.status".to_owned())]);

    // Closing the connection ends the client's notification thread, which drops the sender:
    // every notification that arrived has been handled by then, and there was none.
    drop(conn);
    server.join().unwrap().expect("the agent ends cleanly");
    assert!(updates.recv_timeout(Duration::from_secs(10)).is_err(), "the client's handler got no update");
}
