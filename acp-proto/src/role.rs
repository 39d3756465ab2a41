//! The side a connection plays, as a type: [`Role`], implemented by [`Agent`] and [`Client`].
//!
//! A [`Connection<R, P>`](crate::Connection) plays one side for its whole life, so the side is
//! a type parameter, as the version is ([`Protocol`]): what the connection sends and what it
//! answers with are that side's own message sets, chosen at compile time. A client cannot send
//! an agent's request, nor answer its peer with an agent's result:
//!
//! ```compile_fail
//! use acp_proto::role::Client;
//! use acp_proto::types::{RequestPermissionRequest, SessionId, ToolCallUpdate};
//! use acp_proto::{Connection, Instant};
//!
//! let mut client: Connection<Client> = Connection::client(Instant::ZERO);
//! let ask = RequestPermissionRequest::new(SessionId::new("s"), ToolCallUpdate::new("call-1"), Vec::new());
//! // `session/request_permission` is the agent's request: no conversion into a client's.
//! let _ = client.send_request(Instant::ZERO, ask, None);
//! ```
//!
//! ```compile_fail
//! use acp_proto::role::Agent;
//! use acp_proto::types::RequestPermissionResponse;
//! use acp_proto::{Connection, Instant, Responder};
//!
//! fn answer(agent: &mut Connection<Agent>, asked: Responder<RequestPermissionResponse>, r: RequestPermissionResponse) {
//!     // A permission answer is the client's result: an agent never gives one.
//!     let _ = agent.respond(Instant::ZERO, asked.answer(Ok(r)));
//! }
//! ```
//!
//! What each side sends is its [`Protocol`]'s side enums ([`Protocol::ClientRequest`],
//! [`Protocol::AgentRequest`], …); what it receives comes out of
//! [`poll_event`](crate::Connection::poll_event) as the version's role-agnostic message, which
//! the machine only ever fills with the peer's side.
//!
//! ```
//! use acp_proto::role::{Agent, Client, Role};
//! use acp_proto::types::{InitializeRequest, ProtocolVersion};
//! use acp_proto::{ClientRequest, Connection, Instant, Side, V1};
//!
//! fn request_of<R: Role>(request: R::Request<V1>) -> acp_proto::Request {
//!     request.into()
//! }
//! let init: ClientRequest = InitializeRequest::new(ProtocolVersion::V1).into();
//! assert_eq!(request_of::<Client>(init).sender(), Side::Client);
//! assert_eq!(Agent::SIDE, Side::Agent);
//!
//! let mut client: Connection<Client> = Connection::client(Instant::ZERO);
//! assert!(client.send_request(Instant::ZERO, InitializeRequest::new(ProtocolVersion::V1), None).is_ok());
//! ```

use std::fmt::Debug;

use serde_json::Value;

use crate::Side;
use crate::connection::Connection;
use crate::protocol::Protocol;

mod sealed {
    /// Only this crate implements [`Role`](super::Role).
    pub trait Sealed {}
}

/// A side of the protocol, and the message sets it sends: sealed, implemented by [`Agent`]
/// and [`Client`] only.
pub trait Role:
    sealed::Sealed + Debug + Clone + Copy + PartialEq + Eq + Default + Send + Sync + Unpin + 'static
{
    /// The side as a value.
    const SIDE: Side;
    /// The other side: whose requests this one handles, and whose results answer its own.
    type Peer: Role<Peer = Self>;
    /// A request this side sends (its peer handles it).
    type Request<P: Protocol>: Debug + Clone + PartialEq + Send + Unpin + 'static + Into<P::Request>;
    /// A notification this side sends.
    type Notification<P: Protocol>: Debug + Clone + PartialEq + Send + Unpin + 'static + Into<P::Notification>;
    /// A result this side answers its peer's requests with.
    type Response<P: Protocol>: Debug + Clone + PartialEq + Send + Unpin + 'static + Into<P::Response>;

    /// The proof that code generic over the role holds a client: `()` for [`Client`],
    /// uninhabited ([`NotClient`]) for [`Agent`]. An adapter's client-only command (cancel a
    /// turn) carries one, so that an agent cannot even build it, and the code that handles it
    /// reaches the client's calls through [`client`](Self::client).
    type ClientOnly: Debug + Clone + Copy + Send + Sync + Unpin + 'static;

    /// The connection as the client's, given the proof that it is one.
    fn client<P: Protocol>(conn: &mut Connection<Self, P>, proof: Self::ClientOnly) -> &mut Connection<Client, P>;

    /// An extension request this side sends (its name starts with `_`; checked when sent).
    fn ext_request<P: Protocol>(method: &str, params: Value) -> Self::Request<P>;

    /// An extension notification this side sends.
    fn ext_notification<P: Protocol>(method: &str, params: Value) -> Self::Notification<P>;

    /// This side's request, if `request` (of either side) is one.
    fn own_request<P: Protocol>(request: P::Request) -> Option<Self::Request<P>>;

    /// This side's notification, if `notification` is one.
    fn own_notification<P: Protocol>(notification: P::Notification) -> Option<Self::Notification<P>>;

    /// This side's result, if `response` is one.
    fn own_response<P: Protocol>(response: P::Response) -> Option<Self::Response<P>>;
}

/// The agent: it handles the client's prompts and sends the agent's requests and notifications
/// (`session/request_permission`, `session/update`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Agent;

/// The client: it drives the agent (`initialize`, `session/prompt`, …) and answers the
/// agent's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Client;

/// No value: the agent's [`Role::ClientOnly`], so that a client-only command cannot be built
/// for an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotClient {}

impl sealed::Sealed for Agent {}
impl sealed::Sealed for Client {}

impl Role for Agent {
    const SIDE: Side = Side::Agent;
    type Peer = Client;
    type Request<P: Protocol> = P::AgentRequest;
    type Notification<P: Protocol> = P::AgentNotification;
    type Response<P: Protocol> = P::AgentResponse;
    type ClientOnly = NotClient;

    fn client<P: Protocol>(_: &mut Connection<Agent, P>, proof: NotClient) -> &mut Connection<Client, P> {
        match proof {}
    }

    fn ext_request<P: Protocol>(method: &str, params: Value) -> P::AgentRequest {
        P::agent_ext_request(method, params)
    }

    fn ext_notification<P: Protocol>(method: &str, params: Value) -> P::AgentNotification {
        P::agent_ext_notification(method, params)
    }

    fn own_request<P: Protocol>(request: P::Request) -> Option<P::AgentRequest> {
        P::agent_request(request)
    }

    fn own_notification<P: Protocol>(notification: P::Notification) -> Option<P::AgentNotification> {
        P::agent_notification(notification)
    }

    fn own_response<P: Protocol>(response: P::Response) -> Option<P::AgentResponse> {
        P::agent_response(response)
    }
}

impl Role for Client {
    const SIDE: Side = Side::Client;
    type Peer = Agent;
    type Request<P: Protocol> = P::ClientRequest;
    type Notification<P: Protocol> = P::ClientNotification;
    type Response<P: Protocol> = P::ClientResponse;
    type ClientOnly = ();

    fn client<P: Protocol>(conn: &mut Connection<Client, P>, (): ()) -> &mut Connection<Client, P> {
        conn
    }

    fn ext_request<P: Protocol>(method: &str, params: Value) -> P::ClientRequest {
        P::client_ext_request(method, params)
    }

    fn ext_notification<P: Protocol>(method: &str, params: Value) -> P::ClientNotification {
        P::client_ext_notification(method, params)
    }

    fn own_request<P: Protocol>(request: P::Request) -> Option<P::ClientRequest> {
        P::client_request(request)
    }

    fn own_notification<P: Protocol>(notification: P::Notification) -> Option<P::ClientNotification> {
        P::client_notification(notification)
    }

    fn own_response<P: Protocol>(response: P::Response) -> Option<P::ClientResponse> {
        P::client_response(response)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::methods::{AgentNotification, AgentRequest, ClientNotification, ClientRequest, Notification, Request};
    use crate::types::{CancelNotification, InitializeRequest, ProtocolVersion, ReadTextFileRequest};
    use crate::{Instant, SendError, V1};

    /// Each side takes its own messages out of a role-agnostic one, and only those.
    #[test]
    fn a_side_owns_its_messages_and_not_its_peers() {
        let client: Request = ClientRequest::from(InitializeRequest::new(ProtocolVersion::V1)).into();
        let agent: Request = AgentRequest::from(ReadTextFileRequest::new("s", "/x")).into();
        assert!(Client::own_request::<V1>(client.clone()).is_some());
        assert!(Agent::own_request::<V1>(client).is_none());
        assert!(Agent::own_request::<V1>(agent.clone()).is_some());
        assert!(Client::own_request::<V1>(agent).is_none());
        let cancel: Notification = ClientNotification::Cancel(CancelNotification::new("s")).into();
        assert!(Client::own_notification::<V1>(cancel.clone()).is_some());
        assert!(Agent::own_notification::<V1>(cancel).is_none());
    }

    /// An extension message is built as its side's, and its side's connection sends it.
    #[test]
    fn extension_messages_are_the_sides_own() {
        assert!(matches!(Agent::ext_request::<V1>("_x/ask", json!({})), AgentRequest::Ext(_)));
        assert!(matches!(Client::ext_request::<V1>("_x/ask", json!({})), ClientRequest::Ext(_)));
        assert!(matches!(Agent::ext_notification::<V1>("_x/note", json!(1)), AgentNotification::Ext(_)));
        assert!(matches!(Client::ext_notification::<V1>("_x/note", json!(1)), ClientNotification::Ext(_)));
        // Before the handshake the client's extension request is refused, and handed back as
        // the client's.
        let mut client: Connection<Client> = Connection::client(Instant::ZERO);
        let refused = client.send_request(Instant::ZERO, Client::ext_request::<V1>("_x/ask", json!({})), None);
        let refused = refused.expect_err("not initialized");
        assert_eq!(refused.error, SendError::NotInitialized);
        assert!(matches!(refused.message, ClientRequest::Ext(e) if &*e.method == "_x/ask"));
    }

    /// The client-only proof reaches the client's calls from code generic over the role.
    #[test]
    fn the_client_proof_reaches_the_clients_calls() {
        fn cancel<R: Role>(conn: &mut Connection<R>, proof: R::ClientOnly) -> Result<usize, SendError> {
            R::client(conn, proof).cancel_turn(Instant::ZERO, &"s".into())
        }
        let mut client: Connection<Client> = Connection::client(Instant::ZERO);
        assert_eq!(cancel(&mut client, ()), Err(SendError::NotInitialized));
    }
}
