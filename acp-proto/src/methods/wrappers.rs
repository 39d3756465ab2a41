//! The role-agnostic wrappers: a request, result or notification of either side.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::{
    AgentCall, AgentNotification, AgentRequest, AgentResponse, ClientCall, ClientNotification, ClientRequest,
    ClientResponse, DecodeError, Method,
};
use crate::types::SessionId;

/// A request of either side.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Request {
    /// Sent by the client.
    Client(ClientRequest),
    /// Sent by the agent.
    Agent(AgentRequest),
}

/// A result of either side.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Response {
    /// Sent by the agent (answers a [`ClientRequest`]).
    Agent(AgentResponse),
    /// Sent by the client (answers an [`AgentRequest`]).
    Client(ClientResponse),
}

/// A notification of either side.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Notification {
    /// Sent by the client.
    Client(ClientNotification),
    /// Sent by the agent.
    Agent(AgentNotification),
}

impl Request {
    /// The table row's method, or `None` for an extension request.
    pub fn method(&self) -> Option<Method> {
        match self {
            Request::Client(r) => r.method(),
            Request::Agent(r) => r.method(),
        }
    }

    /// The method name on the wire.
    pub fn wire(&self) -> &str {
        match self {
            Request::Client(r) => r.wire(),
            Request::Agent(r) => r.wire(),
        }
    }

    /// The side that sends this request.
    pub fn sender(&self) -> crate::Side {
        match self {
            Request::Client(_) => crate::Side::Client,
            Request::Agent(_) => crate::Side::Agent,
        }
    }

    /// Decodes a request received by `receiver`.
    pub fn decode(receiver: crate::Side, method: &str, params: Option<&RawValue>) -> Result<Request, DecodeError> {
        match receiver {
            crate::Side::Agent => ClientRequest::decode(method, params).map(Request::Client),
            crate::Side::Client => AgentRequest::decode(method, params).map(Request::Agent),
        }
    }

    /// Whether the params member is sent.
    pub fn has_params(&self) -> bool {
        match self {
            Request::Client(r) => r.has_params(),
            Request::Agent(r) => r.has_params(),
        }
    }

    /// The session the request belongs to, for requests that carry a `sessionId`.
    pub fn session_id(&self) -> Option<&SessionId> {
        match self {
            Request::Client(r) => match r {
                ClientRequest::LoadSession(p) => Some(&p.session_id),
                ClientRequest::SetSessionMode(p) => Some(&p.session_id),
                ClientRequest::SetSessionConfigOption(p) => Some(&p.session_id),
                ClientRequest::Prompt(p) => Some(&p.session_id),
                ClientRequest::DeleteSession(p) => Some(&p.session_id),
                ClientRequest::ResumeSession(p) => Some(&p.session_id),
                ClientRequest::CloseSession(p) => Some(&p.session_id),
                _ => None,
            },
            Request::Agent(r) => match r {
                AgentRequest::RequestPermission(p) => Some(&p.session_id),
                AgentRequest::WriteTextFile(p) => Some(&p.session_id),
                AgentRequest::ReadTextFile(p) => Some(&p.session_id),
                AgentRequest::CreateTerminal(p) => Some(&p.session_id),
                AgentRequest::TerminalOutput(p) => Some(&p.session_id),
                AgentRequest::ReleaseTerminal(p) => Some(&p.session_id),
                AgentRequest::WaitForTerminalExit(p) => Some(&p.session_id),
                AgentRequest::KillTerminal(p) => Some(&p.session_id),
                AgentRequest::CreateElicitation(p) => p.session_id(),
                _ => None,
            },
        }
    }
}

impl Serialize for Request {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Request::Client(r) => r.serialize(s),
            Request::Agent(r) => r.serialize(s),
        }
    }
}

impl Response {
    /// The table row's method, or `None` for an extension result.
    pub fn method(&self) -> Option<Method> {
        match self {
            Response::Agent(r) => r.method(),
            Response::Client(r) => r.method(),
        }
    }

    /// The side that sends this response.
    pub fn sender(&self) -> crate::Side {
        match self {
            Response::Agent(_) => crate::Side::Agent,
            Response::Client(_) => crate::Side::Client,
        }
    }

    /// Decodes the raw result of a request that `requester` sent with `method`.
    pub fn decode_result(
        requester: crate::Side,
        method: Option<Method>,
        result: &RawValue,
    ) -> Result<Response, DecodeError> {
        match requester {
            crate::Side::Client => AgentResponse::decode_result(method, result).map(Response::Agent),
            crate::Side::Agent => ClientResponse::decode_result(method, result).map(Response::Client),
        }
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Response::Agent(r) => r.serialize(s),
            Response::Client(r) => r.serialize(s),
        }
    }
}

impl Notification {
    /// The table row's method, or `None` for an extension notification.
    pub fn method(&self) -> Option<Method> {
        match self {
            Notification::Client(n) => n.method(),
            Notification::Agent(n) => n.method(),
        }
    }

    /// The method name on the wire.
    pub fn wire(&self) -> &str {
        match self {
            Notification::Client(n) => n.wire(),
            Notification::Agent(n) => n.wire(),
        }
    }

    /// The side that sends this notification.
    pub fn sender(&self) -> crate::Side {
        match self {
            Notification::Client(_) => crate::Side::Client,
            Notification::Agent(_) => crate::Side::Agent,
        }
    }

    /// Decodes a notification received by `receiver`.
    pub fn decode(receiver: crate::Side, method: &str, params: Option<&RawValue>) -> Result<Notification, DecodeError> {
        match receiver {
            crate::Side::Agent => ClientNotification::decode(method, params).map(Notification::Client),
            crate::Side::Client => AgentNotification::decode(method, params).map(Notification::Agent),
        }
    }

    /// Whether the params member is sent.
    pub fn has_params(&self) -> bool {
        match self {
            Notification::Client(n) => n.has_params(),
            Notification::Agent(n) => n.has_params(),
        }
    }
}

impl Serialize for Notification {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Notification::Client(n) => n.serialize(s),
            Notification::Agent(n) => n.serialize(s),
        }
    }
}

crate::sided::sided!(Request, ClientRequest, AgentRequest, "request");
crate::sided::sided!(Response, ClientResponse, AgentResponse, "result");
crate::sided::sided!(Notification, ClientNotification, AgentNotification, "notification");
crate::sided::calls!();

/// An extension result answers an extension request of either side (`ClientCall::Ext`'s and
/// `AgentCall::Ext`'s responders take one).
impl From<crate::ext::ExtResponse> for AgentResponse {
    fn from(result: crate::ext::ExtResponse) -> AgentResponse {
        AgentResponse::Ext(result)
    }
}

impl From<crate::ext::ExtResponse> for ClientResponse {
    fn from(result: crate::ext::ExtResponse) -> ClientResponse {
        ClientResponse::Ext(result)
    }
}
