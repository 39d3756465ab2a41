//! The role-agnostic v2 messages a [`Connection`](crate::Connection) sends and delivers: a
//! request, result or notification of either side, without the JSON-RPC id (the connection
//! owns ids and correlation).
//!
//! They wrap the per-sender params and results of the v2 table ([`ClientRequest`](super::ClientRequest), …: the same names as v1's),
//! so a message is typed exactly when its method is a row of the v2 table; an `Ext` is an
//! extension method (`_`-prefixed) with its params kept verbatim, of the same types as v1's
//! (`ExtRequest`, `ExtNotification`, `ExtResponse`). The connection refuses to send an `Ext`
//! whose name is not an extension name.
//!
//! ```
//! use acp_proto::v2;
//! let request: v2::Request = v2::CancelToolCallRequest {
//!     session_id: "s".into(),
//!     tool_call_id: "t".into(),
//!     meta: None,
//! }
//! .into();
//! assert_eq!(request.wire(), "tool_call/cancel");
//! assert_eq!(request.method(), Some(v2::Method::CancelToolCall));
//! assert!(matches!(request, v2::Request::Client(v2::ClientRequest::CancelToolCall(_))));
//! ```

use serde::{Serialize, Serializer};

use super::*;
use crate::Side;

/// A v2 request of either side.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Request {
    /// Sent by the client.
    Client(ClientRequest),
    /// Sent by the agent.
    Agent(AgentRequest),
}

/// A v2 result of either side.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Response {
    /// Sent by the agent (answers a client request).
    Agent(AgentResponse),
    /// Sent by the client (answers an agent request).
    Client(ClientResponse),
}

/// A v2 notification of either side (`$/cancel_request` is the connection's own).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Notification {
    /// Sent by the client.
    Client(ClientNotification),
    /// Sent by the agent.
    Agent(AgentNotification),
}

impl Request {
    /// The v2 table's method, or `None` for an extension request.
    pub fn method(&self) -> Option<Method> {
        match self {
            Request::Client(p) => p.method(),
            Request::Agent(p) => p.method(),
        }
    }

    /// The method name on the wire.
    pub fn wire(&self) -> &str {
        match self {
            Request::Client(p) => p.wire(),
            Request::Agent(p) => p.wire(),
        }
    }

    /// The side that sends it.
    pub fn sender(&self) -> Side {
        match self {
            Request::Client(_) => Side::Client,
            Request::Agent(_) => Side::Agent,
        }
    }

    /// Whether there are params to write.
    pub fn has_params(&self) -> bool {
        match self {
            Request::Client(p) => p.has_value(),
            Request::Agent(p) => p.has_value(),
        }
    }

    /// The session the request belongs to, for the requests that name one.
    pub fn session_id(&self) -> Option<&SessionId> {
        match self {
            Request::Client(p) => match p {
                ClientRequest::SetSessionConfigOption(r) => Some(&r.session_id),
                ClientRequest::Prompt(r) => Some(&r.session_id),
                ClientRequest::DeleteSession(r) => Some(&r.session_id),
                ClientRequest::ResumeSession(r) => Some(&r.session_id),
                ClientRequest::CloseSession(r) => Some(&r.session_id),
                ClientRequest::CancelToolCall(r) => Some(&r.session_id),
                ClientRequest::CancelTerminal(r) => Some(&r.session_id),
                _ => None,
            },
            Request::Agent(AgentRequest::RequestPermission(r)) => Some(&r.session_id),
            Request::Agent(_) => None,
        }
    }

    /// The session whose turn an agent request belongs to, for a client's ordering gate (the
    /// request reaches its handler after the updates of that turn sent before it): a
    /// permission ask's session, or the session a session-scoped elicitation names.
    pub fn turn_session(&self) -> Option<&SessionId> {
        let scope = match self {
            Request::Agent(AgentRequest::CreateElicitation(e)) => match &e.kind {
                CreateElicitationRequestKind::Form(form) => &form.scope,
                CreateElicitationRequestKind::Url(url) => &url.scope,
                _ => return None,
            },
            Request::Agent(_) => return self.session_id(),
            Request::Client(_) => return None,
        };
        match scope {
            ElicitationScope::Session(s) => Some(&s.session_id),
            ElicitationScope::Request(_) => None,
        }
    }
}

impl Response {
    /// The v2 table's method this result answers, or `None` for an extension result.
    pub fn method(&self) -> Option<Method> {
        match self {
            Response::Agent(r) => r.method(),
            Response::Client(r) => r.method(),
        }
    }

    /// The side that sends it.
    pub fn sender(&self) -> Side {
        match self {
            Response::Agent(_) => Side::Agent,
            Response::Client(_) => Side::Client,
        }
    }
}

impl Notification {
    /// The v2 table's method, or `None` for an extension notification.
    pub fn method(&self) -> Option<Method> {
        match self {
            Notification::Client(p) => p.method(),
            Notification::Agent(p) => p.method(),
        }
    }

    /// The method name on the wire.
    pub fn wire(&self) -> &str {
        match self {
            Notification::Client(p) => p.wire(),
            Notification::Agent(p) => p.wire(),
        }
    }

    /// The side that sends it.
    pub fn sender(&self) -> Side {
        match self {
            Notification::Client(_) => Side::Client,
            Notification::Agent(_) => Side::Agent,
        }
    }

    /// Whether there are params to write.
    pub fn has_params(&self) -> bool {
        match self {
            Notification::Client(p) => p.has_value(),
            Notification::Agent(p) => p.has_value(),
        }
    }
}

impl Serialize for Request {
    /// Writes the params.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Request::Client(p) => p.serialize(s),
            Request::Agent(p) => p.serialize(s),
        }
    }
}

impl Serialize for Response {
    /// Writes the result.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Response::Agent(r) => r.serialize(s),
            Response::Client(r) => r.serialize(s),
        }
    }
}

impl Serialize for Notification {
    /// Writes the params.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Notification::Client(p) => p.serialize(s),
            Notification::Agent(p) => p.serialize(s),
        }
    }
}

crate::sided::sided!(Request, ClientRequest, AgentRequest, "request");
crate::sided::sided!(Response, ClientResponse, AgentResponse, "result");
crate::sided::sided!(Notification, ClientNotification, AgentNotification, "notification");
crate::sided::calls!();

/// An extension result answers an extension request of either side (`ClientCall::Ext`'s and
/// `AgentCall::Ext`'s responders take one), as in v1.
impl From<ExtResponse> for AgentResponse {
    fn from(result: ExtResponse) -> AgentResponse {
        AgentResponse::Ext(result)
    }
}

impl From<ExtResponse> for ClientResponse {
    fn from(result: ExtResponse) -> ClientResponse {
        ClientResponse::Ext(result)
    }
}
