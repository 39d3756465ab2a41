//! Which requests open the connection: `initialize`, and with feature `unstable_proxy_chains`
//! also `proxy/initialize` (a conductor's handshake with a proxy, same params and result; the
//! proxy chains RFD: "instead of `initialize`"). The connection treats both alike: one of them
//! commits the handshake, and neither is accepted once it has committed.

use crate::methods::{AgentResponse, ClientRequest, Method, Request, Response};
use crate::types::{InitializeRequest, InitializeResponse};

/// Whether `method` is a handshake request.
pub(super) fn is_handshake(method: Option<Method>) -> bool {
    match method {
        Some(Method::Initialize) => true,
        #[cfg(feature = "unstable_proxy_chains")]
        Some(Method::InitializeProxy) => true,
        _ => false,
    }
}

/// Whether the wire string names a handshake request.
pub(super) fn is_handshake_wire(wire: &str) -> bool {
    wire == Method::Initialize.wire() || (cfg!(feature = "unstable_proxy_chains") && wire == "proxy/initialize")
}

/// The `initialize` params of a handshake request.
pub(super) fn params(request: &Request) -> Option<&InitializeRequest> {
    match request {
        Request::Client(ClientRequest::Initialize(init)) => Some(init),
        #[cfg(feature = "unstable_proxy_chains")]
        Request::Client(ClientRequest::InitializeProxy(init)) => Some(&init.0),
        _ => None,
    }
}

/// The `initialize` result of a handshake response.
pub(super) fn result(response: &Response) -> Option<&InitializeResponse> {
    match response {
        Response::Agent(AgentResponse::Initialize(init)) => Some(init),
        #[cfg(feature = "unstable_proxy_chains")]
        Response::Agent(AgentResponse::InitializeProxy(init)) => Some(&init.0),
        _ => None,
    }
}

/// The `initialize` result of a handshake response, to edit (the agent's content rules).
pub(super) fn result_mut(response: &mut Response) -> Option<&mut InitializeResponse> {
    match response {
        Response::Agent(AgentResponse::Initialize(init)) => Some(init),
        #[cfg(feature = "unstable_proxy_chains")]
        Response::Agent(AgentResponse::InitializeProxy(init)) => Some(&mut init.0),
        _ => None,
    }
}

/// Whether `method` may be sent, or received, while a handshake is pending
/// (`proxy_handshake`: it is `proxy/initialize`): the proxy's `proxy/successor` requests, with
/// which it forwards `initialize` to its successor before answering.
pub(super) fn allowed_while_pending(method: Option<Method>, proxy_handshake: bool) -> bool {
    #[cfg(feature = "unstable_proxy_chains")]
    if proxy_handshake && method == Some(Method::ProxySuccessorForward) {
        return true;
    }
    let _ = (method, proxy_handshake);
    false
}

/// Whether `request` opens the connection as a conductor opens a proxy.
pub(super) fn is_proxy(request: &Request) -> bool {
    #[cfg(feature = "unstable_proxy_chains")]
    if let Request::Client(ClientRequest::InitializeProxy(_)) = request {
        return true;
    }
    let _ = request;
    false
}
