//! Proxy chains (feature `unstable_proxy_chains`) over a duplex pipe, conductor (our
//! `ClientConnection`) to proxy (our `serve`d agent): the conductor opens the connection with
//! `proxy/initialize` instead of `initialize`; before answering, the proxy forwards `initialize`
//! to its successor with a `proxy/successor` request (the conductor's handler plays the
//! successor); then `proxy/successor` requests and notifications run both ways between the
//! generated handlers.

use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{ClientResponse, RpcError, SendError};
use acp_tokio::{Agent, AgentOptions, Client, ClientConnection, ClientContext, ClientOptions, Error, RequestContext};
use serde_json::json;
use tokio::sync::mpsc;

/// A proxy: answers `proxy/initialize` with its successor's capabilities plus `loadSession`,
/// and answers each request the conductor delivers from the successor, forwarding a
/// notification downstream for it.
#[derive(Clone)]
struct Proxy {
    notifications: mpsc::UnboundedSender<ProxySuccessorNotification>,
}

fn internal(e: Error) -> RpcError {
    RpcError::internal_error(e.to_string())
}

impl Agent for Proxy {
    async fn initialize(&self, _: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        Err(RpcError::invalid_request("this component runs as a proxy: proxy/initialize"))
    }

    async fn initialize_proxy(
        &self,
        request: InitializeProxyRequest,
        cx: RequestContext,
    ) -> Result<InitializeProxyResponse, RpcError> {
        let params = serde_json::to_value(&request.0).map_err(|e| RpcError::internal_error(e.to_string()))?;
        let forward = ProxySuccessorRequest::new("initialize").with_params(params);
        let answer = cx.request(ProxyForwardRequest(forward), None).await.map_err(internal)?;
        let ClientResponse::ProxySuccessorForward(ProxyForwardResponse(ProxySuccessorResponse(result))) = answer else {
            return Err(RpcError::internal_error(format!("unexpected {answer:?}")));
        };
        let mut response: InitializeResponse =
            serde_json::from_value(result).map_err(|e| RpcError::internal_error(e.to_string()))?;
        response.agent_capabilities.load_session = true;
        Ok(InitializeProxyResponse(response))
    }

    async fn proxy_successor(
        &self,
        request: ProxySuccessorRequest,
        cx: RequestContext,
    ) -> Result<ProxySuccessorResponse, RpcError> {
        let seen = ProxySuccessorNotification::new("seen").with_params(json!({"method": request.method}));
        cx.notify(ProxyForwardNotification(seen)).await.map_err(internal)?;
        Ok(ProxySuccessorResponse(json!({"handledBy": "proxy", "method": request.method})))
    }

    async fn proxy_successor_notification(&self, notification: ProxySuccessorNotification) {
        let _ = self.notifications.send(notification);
    }
}

/// The conductor's side, playing the successor: answers the forwarded `initialize`.
#[derive(Clone)]
struct Conductor {
    /// The protocol version the successor answers (`None`: the one asked for).
    version: Option<u16>,
    forwarded: Arc<Mutex<Vec<String>>>,
    notifications: mpsc::UnboundedSender<ProxySuccessorNotification>,
}

impl Client for Conductor {
    async fn proxy_successor(
        &self,
        request: ProxyForwardRequest,
        _: ClientContext,
    ) -> Result<ProxyForwardResponse, RpcError> {
        self.forwarded.lock().unwrap().push(request.0.method.clone());
        match request.0.method.as_str() {
            "initialize" => {
                let asked = request.0.params.as_ref().and_then(|p| p.get("protocolVersion")).cloned();
                let version = self.version.map_or(asked, |v| Some(json!(v)));
                let result =
                    json!({"protocolVersion": version, "agentCapabilities": {"promptCapabilities": {"image": true}}});
                Ok(ProxyForwardResponse(ProxySuccessorResponse(result)))
            }
            other => Err(RpcError::method_not_found(other)),
        }
    }

    async fn proxy_successor_notification(&self, notification: ProxyForwardNotification) {
        let _ = self.notifications.send(notification.0);
    }
}

type Received = mpsc::UnboundedReceiver<ProxySuccessorNotification>;

/// A conductor connected to a served proxy; the receivers get what each side's notification
/// handler got.
fn connect(version: Option<u16>) -> (ClientConnection, Conductor, Received, Received) {
    let (to_conductor, at_conductor) = mpsc::unbounded_channel();
    let (to_proxy, at_proxy) = mpsc::unbounded_channel();
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    tokio::spawn(acp_tokio::serve(Proxy { notifications: to_proxy }, reader, writer, AgentOptions::default()));
    let conductor = Conductor { version, forwarded: Arc::default(), notifications: to_conductor };
    let (reader, writer) = tokio::io::split(client_io);
    let conn = ClientConnection::connect(conductor.clone(), reader, writer, ClientOptions::default());
    (conn, conductor, at_conductor, at_proxy)
}

#[tokio::test]
async fn a_conductor_opens_a_proxy_and_messages_are_wrapped_both_ways() {
    let (conn, conductor, mut at_conductor, mut at_proxy) = connect(None);

    // Before the handshake nothing else goes out.
    let early = conn.proxy_successor(ProxySuccessorRequest::new("session/new")).await.expect_err("not yet");
    assert!(matches!(early, Error::Send(SendError::NotInitialized)), "{early:?}");

    let init = conn
        .initialize_proxy(InitializeProxyRequest(InitializeRequest::new(ProtocolVersion::V1)))
        .await
        .expect("proxy/initialize");
    assert_eq!(conductor.forwarded.lock().unwrap().clone(), ["initialize"], "forwarded before the answer");
    let caps = &init.0.agent_capabilities;
    assert!(caps.load_session && caps.prompt_capabilities.image, "the proxy's and the successor's: {caps:?}");
    assert!(conn.negotiated().is_some(), "proxy/initialize committed the handshake");
    let again = conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await.expect_err("once");
    assert!(matches!(again, Error::Send(SendError::AlreadyInitialized)), "{again:?}");

    // The conductor delivers a request from the successor; the proxy answers it and forwards a
    // notification downstream meanwhile.
    let delivered = ProxySuccessorRequest::new("fs/read_text_file").with_params(json!({"path": "/a"}));
    let result = conn.proxy_successor(delivered).await.expect("proxy/successor");
    assert_eq!(result.0, json!({"handledBy": "proxy", "method": "fs/read_text_file"}));
    let seen = at_conductor.recv().await.expect("the proxy's notification");
    assert_eq!((seen.method.as_str(), seen.params), ("seen", Some(json!({"method": "fs/read_text_file"}))));

    // And a notification from the successor, delivered to the proxy.
    let update = ProxySuccessorNotification::new("session/update").with_params(json!({"sessionId": "s"}));
    conn.notify(update.clone()).await.expect("notify");
    assert_eq!(at_proxy.recv().await, Some(update));
    conn.close().await.expect("close");
}

#[tokio::test]
async fn proxy_initialize_checks_the_version_the_chain_picked() {
    let (conn, conductor, ..) = connect(Some(7));
    let e = conn
        .initialize_proxy(InitializeProxyRequest(InitializeRequest::new(ProtocolVersion::V1)))
        .await
        .expect_err("version 7 is not spoken");
    assert!(matches!(e, Error::UnsupportedProtocolVersion(ProtocolVersion(7))), "{e:?}");
    assert_eq!(conductor.forwarded.lock().unwrap().clone(), ["initialize"]);
    assert!(conn.negotiated().is_none());
}
