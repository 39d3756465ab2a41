//! Proxy chains over acp-blocking (feature `unstable_proxy_chains`; CI runs it with
//! `--features acp-blocking/unstable`), end to end over OS pipes: a conductor (our blocking
//! `ClientConnection`) opens a served proxy with `proxy/initialize`; the proxy's handler
//! forwards `initialize` to its successor with a `proxy/successor` request before it answers
//! (the conductor's handler plays the successor). A version the client does not speak fails the
//! call as `initialize` would.
#![cfg(feature = "unstable_proxy_chains")]

use std::sync::{Arc, Mutex};
use std::thread;

use acp_blocking::acp_proto::ClientResponse;
use acp_blocking::acp_proto::types::*;
use acp_blocking::acp_proto::{RpcError, SendError};
use acp_blocking::{
    Agent, AgentOptions, Client, ClientConnection, ClientContext, ClientOptions, Error, RequestContext,
};
use serde_json::json;

struct Proxy;

impl Agent for Proxy {
    fn initialize(&self, _: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        Err(RpcError::invalid_request("this component runs as a proxy: proxy/initialize"))
    }

    fn initialize_proxy(
        &self,
        request: InitializeProxyRequest,
        cx: &RequestContext,
    ) -> Result<InitializeProxyResponse, RpcError> {
        let params = serde_json::to_value(&request.0).map_err(|e| RpcError::internal_error(e.to_string()))?;
        let forward = ProxyForwardRequest(ProxySuccessorRequest::new("initialize").with_params(params));
        let answer = cx.request(forward, None).map_err(|e| RpcError::internal_error(e.to_string()))?;
        let ClientResponse::ProxySuccessorForward(ProxyForwardResponse(ProxySuccessorResponse(result))) = answer else {
            return Err(RpcError::internal_error(format!("unexpected {answer:?}")));
        };
        let response = serde_json::from_value(result).map_err(|e| RpcError::internal_error(e.to_string()))?;
        Ok(InitializeProxyResponse(response))
    }
}

/// Plays the successor: answers the forwarded `initialize` with `version`.
#[derive(Clone)]
struct Conductor {
    version: u16,
    forwarded: Arc<Mutex<Vec<String>>>,
}

impl Client for Conductor {
    fn proxy_successor(
        &self,
        request: ProxyForwardRequest,
        _: &ClientContext,
    ) -> Result<ProxyForwardResponse, RpcError> {
        self.forwarded.lock().unwrap().push(request.0.method.clone());
        Ok(ProxyForwardResponse(ProxySuccessorResponse(json!({"protocolVersion": self.version}))))
    }
}

fn open(version: u16) -> (Result<InitializeProxyResponse, Error>, ClientConnection, Conductor) {
    let (agent_in, to_agent) = std::io::pipe().unwrap();
    let (from_agent, agent_out) = std::io::pipe().unwrap();
    thread::spawn(move || acp_blocking::serve_with(Proxy, agent_in, agent_out, AgentOptions::default()));
    let conductor = Conductor { version, forwarded: Arc::default() };
    let conn = ClientConnection::connect(conductor.clone(), from_agent, to_agent, ClientOptions::default()).unwrap();
    let result = conn.initialize_proxy(InitializeProxyRequest(InitializeRequest::new(ProtocolVersion::V1)));
    (result, conn, conductor)
}

#[test]
fn a_conductor_opens_a_proxy_which_asks_its_successor_first() {
    let (result, conn, conductor) = open(1);
    assert_eq!(result.expect("proxy/initialize").0.protocol_version, ProtocolVersion::V1);
    assert_eq!(conductor.forwarded.lock().unwrap().clone(), ["initialize"]);
    assert!(conn.negotiated().is_some());
    let again = conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).expect_err("once");
    assert!(matches!(again, Error::Send(SendError::AlreadyInitialized)), "{again:?}");
}

#[test]
fn an_unspoken_version_fails_proxy_initialize_like_initialize() {
    let (result, conn, _) = open(7);
    assert!(matches!(result, Err(Error::UnsupportedProtocolVersion(ProtocolVersion(7)))), "{result:?}");
    assert!(conn.negotiated().is_none());
}
