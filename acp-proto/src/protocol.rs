//! The protocol version as a type: [`Protocol`], implemented by [`V1`] and (feature
//! `unstable_protocol_v2`) `V2`.
//!
//! A [`Connection<R, P>`](crate::Connection) speaks one version for its whole life, so the
//! version is a type parameter rather than a runtime mode (as the side is, module
//! [`role`](crate::role)): `Connection<R, V1>` (the default) and `Connection<R, V2>` have the
//! same calls ([`send_request`](crate::Connection::send_request),
//! [`send_notification`](crate::Connection::send_notification),
//! [`respond`](crate::Connection::respond), [`poll_event`](crate::Connection::poll_event), …),
//! and their [`Event<P>`](crate::Event) and [`Outcome<P>`](crate::Outcome) carry that version's
//! [`Protocol::Request`], [`Protocol::Notification`] and [`Protocol::Response`]. The same
//! road, one branch point: an agent that speaks both picks the version from the client's
//! `initialize` with an [`Acceptor`](crate::Acceptor), as rustls picks TLS 1.2 or 1.3 from the
//! hello and then drives one state machine.
//!
//! What the versions share (the handshake gate, ids, bounds, deferral, correlation,
//! `$/cancel_request`, deadlines, the output budget) is the engine's; what differs (the method
//! tables and their gates, decoding, the turn rules of [`turns`](crate::connection::turns) and
//! `turns_v2`) is reached through the version. The trait is sealed: the two versions are the
//! protocol's, not the application's.
//!
//! ```
//! use acp_proto::protocol::{Protocol, V1};
//! use acp_proto::types::ProtocolVersion;
//!
//! fn version<P: Protocol>() -> ProtocolVersion {
//!     P::VERSION
//! }
//! assert_eq!(version::<V1>(), ProtocolVersion::V1);
//! assert_eq!(V1::wire(acp_proto::Method::Prompt), "session/prompt");
//! ```

use std::collections::VecDeque;
use std::fmt::Debug;

use crate::Side;
use crate::connection::{
    AnyConnection, AnyEvent, AnyOutcome, Completion, Event, Events, InboundId, InboundRequest, OutboundId, Outcome,
    Refused, RespondError, TurnStamp,
};
use crate::error::RpcError;
use crate::ext::{ExtNotification, ExtRequest, ExtResponse};
use crate::methods::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest, ClientResponse, DecodeError,
    Response,
};
use crate::time::Instant;
use crate::types::ProtocolVersion;
use serde_json::Value;
use serde_json::value::RawValue;

mod sealed {
    /// Only this crate implements [`Protocol`](super::Protocol).
    pub trait Sealed {}
}

/// A version of the Agent Client Protocol: what differs between versions, as types and hooks
/// the one engine calls. Sealed: implemented by [`V1`] and `V2` only.
pub trait Protocol: sealed::Sealed + Debug + Clone + Copy + PartialEq + Eq + Default + Send + Sync + 'static {
    /// The version number on the wire (`protocolVersion` of `initialize`).
    const VERSION: ProtocolVersion;
    /// A row of this version's method table.
    type Method: Copy + Debug + PartialEq + Eq + Send + Sync + 'static;
    /// A request of either side (role-agnostic), as sent and as received.
    type Request: Debug + Clone + PartialEq;
    /// A notification of either side.
    type Notification: Debug + Clone + PartialEq;
    /// A result of either side, answering a request.
    type Response: Debug + Clone + PartialEq;
    /// A request the client sends (and the agent handles).
    type ClientRequest: Debug + Clone + PartialEq + Send + Unpin + 'static + Into<Self::Request>;
    /// A request the agent sends (and the client handles).
    type AgentRequest: Debug + Clone + PartialEq + Send + Unpin + 'static + Into<Self::Request>;
    /// A notification the client sends.
    type ClientNotification: Debug + Clone + PartialEq + Send + Unpin + 'static + Into<Self::Notification>;
    /// A notification the agent sends.
    type AgentNotification: Debug + Clone + PartialEq + Send + Unpin + 'static + Into<Self::Notification>;
    /// A result the agent answers a client's request with.
    type AgentResponse: Debug + Clone + PartialEq + Send + Unpin + 'static + Into<Self::Response>;
    /// A result the client answers an agent's request with.
    type ClientResponse: Debug + Clone + PartialEq + Send + Unpin + 'static + Into<Self::Response>;
    /// A request of either side with the responder that answers it
    /// ([`InboundRequest::into_call`](crate::InboundRequest::into_call)).
    type Call: Debug + Send + Unpin + 'static;

    /// The wire name of a method of this version.
    fn wire(method: Self::Method) -> &'static str;

    /// An extension request (a method outside the table: its name starts with `_`) that
    /// `sender` sends, with `params` kept as they are. The name is checked when it is sent.
    fn ext_request(sender: Side, method: &str, params: Value) -> Self::Request {
        match sender {
            Side::Agent => Self::agent_ext_request(method, params).into(),
            Side::Client => Self::client_ext_request(method, params).into(),
        }
    }

    /// An extension notification that `sender` sends (the name is checked when it is sent).
    fn ext_notification(sender: Side, method: &str, params: Value) -> Self::Notification {
        match sender {
            Side::Agent => Self::agent_ext_notification(method, params).into(),
            Side::Client => Self::client_ext_notification(method, params).into(),
        }
    }

    /// An extension request the agent sends ([`ext_request`](Self::ext_request)).
    fn agent_ext_request(method: &str, params: Value) -> Self::AgentRequest;

    /// An extension request the client sends.
    fn client_ext_request(method: &str, params: Value) -> Self::ClientRequest;

    /// An extension notification the agent sends.
    fn agent_ext_notification(method: &str, params: Value) -> Self::AgentNotification;

    /// An extension notification the client sends.
    fn client_ext_notification(method: &str, params: Value) -> Self::ClientNotification;

    /// The result of an extension request, or the response handed back when it is a result of
    /// the table.
    #[allow(clippy::result_large_err)]
    fn ext_result(response: Self::Response) -> Result<Value, Self::Response>;

    /// The agent's result, if `response` is one.
    fn agent_response(response: Self::Response) -> Option<Self::AgentResponse>;

    /// The client's result, if `response` is one.
    fn client_response(response: Self::Response) -> Option<Self::ClientResponse>;

    /// The agent's request, if `request` is one.
    fn agent_request(request: Self::Request) -> Option<Self::AgentRequest>;

    /// The client's request, if `request` is one.
    fn client_request(request: Self::Request) -> Option<Self::ClientRequest>;

    /// The agent's notification, if `notification` is one.
    fn agent_notification(notification: Self::Notification) -> Option<Self::AgentNotification>;

    /// The client's notification, if `notification` is one.
    fn client_notification(notification: Self::Notification) -> Option<Self::ClientNotification>;

    /// The request `id` with its responder.
    #[doc(hidden)]
    fn call(id: InboundId, request: Self::Request) -> Self::Call;

    /// The result `raw` of `request`, decoded as its method's result type.
    #[doc(hidden)]
    fn decode_answer(request: &Self::Request, raw: &RawValue) -> Result<Self::Response, DecodeError>;

    /// The engine's event, as this version's; a message of the other version is handed back
    /// (the event queue then changes version, module `connection::queue`).
    #[doc(hidden)]
    #[allow(clippy::result_large_err)]
    fn event(event: AnyEvent) -> Result<Event<Self>, AnyEvent>;

    /// This version's event as the engine's (the inverse of [`event`](Self::event)).
    #[doc(hidden)]
    fn into_any(event: Event<Self>) -> AnyEvent;

    /// The event queue, when it holds this version's events.
    #[doc(hidden)]
    fn queue(events: &mut Events) -> Option<&mut VecDeque<Event<Self>>>;

    /// Sends a request of this version.
    #[doc(hidden)]
    #[allow(clippy::result_large_err)]
    fn send_request(
        conn: &mut AnyConnection,
        now: Instant,
        request: Self::Request,
        deadline: Option<Instant>,
    ) -> Result<OutboundId, Refused<Self::Request>>;

    /// Sends a notification of this version.
    #[doc(hidden)]
    #[allow(clippy::result_large_err)]
    fn send_notification(
        conn: &mut AnyConnection,
        now: Instant,
        notification: Self::Notification,
    ) -> Result<(), Refused<Self::Notification>>;

    /// Answers an inbound request of this version.
    #[doc(hidden)]
    fn respond(
        conn: &mut AnyConnection,
        now: Instant,
        id: InboundId,
        result: Result<Self::Response, RpcError>,
    ) -> Result<Completion, RespondError>;
}

/// ACP v1, the stable protocol (`protocolVersion: 1`): the [`v1`](crate::v1) message set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct V1;

impl sealed::Sealed for V1 {}

/// An outcome of the other version's result: never produced on a connection of one version.
fn foreign_result() -> DecodeError {
    DecodeError::Invalid("a result of the other protocol version".to_owned())
}

/// The shared part of an event conversion: every variant that does not carry a message.
#[allow(clippy::result_large_err)]
#[inline]
fn common<P: Protocol>(event: AnyEvent, outcome: impl FnOnce(AnyOutcome) -> Outcome<P>) -> Result<Event<P>, AnyEvent> {
    Ok(match event {
        AnyEvent::Cancelled { id, reason } => Event::Cancelled { id, reason },
        AnyEvent::Outcome { id, outcome: o } => Event::Outcome { id, outcome: outcome(o) },
        AnyEvent::HandshakeCompleted(n) => Event::HandshakeCompleted(n),
        AnyEvent::Closed { reason } => Event::Closed { reason },
        #[cfg(feature = "unstable_protocol_v2")]
        AnyEvent::TurnEnded { session, turn, reason } => Event::TurnEnded { session, turn, reason },
        #[cfg(feature = "unstable_protocol_v2")]
        AnyEvent::CancelGraceExpired { session } => Event::CancelGraceExpired { session },
        other => return Err(other),
    })
}

/// The variants of the engine's event that carry a message of one version.
struct Messages<P: Protocol> {
    request: fn(InboundId, P::Request) -> AnyEvent,
    notification: fn(P::Notification, Option<TurnStamp>) -> AnyEvent,
    result: fn(P::Response) -> AnyOutcome,
}

/// This version's event as the engine's, with `messages` building the version's own variants.
fn any_of<P: Protocol>(event: Event<P>, messages: Messages<P>) -> AnyEvent {
    match event {
        Event::Cancelled { id, reason } => AnyEvent::Cancelled { id, reason },
        Event::Outcome { id, outcome } => AnyEvent::Outcome {
            id,
            outcome: match outcome {
                Outcome::Result(r) => (messages.result)(r),
                Outcome::Error(e) => AnyOutcome::Error(e),
                Outcome::InvalidResult(e) => AnyOutcome::InvalidResult(e),
                Outcome::TimedOut => AnyOutcome::TimedOut,
                Outcome::Cancelled => AnyOutcome::Cancelled,
                Outcome::ConnectionClosed => AnyOutcome::ConnectionClosed,
            },
        },
        Event::HandshakeCompleted(n) => AnyEvent::HandshakeCompleted(n),
        Event::Closed { reason } => AnyEvent::Closed { reason },
        #[cfg(feature = "unstable_protocol_v2")]
        Event::TurnEnded { session, turn, reason } => AnyEvent::TurnEnded { session, turn, reason },
        #[cfg(feature = "unstable_protocol_v2")]
        Event::CancelGraceExpired { session } => AnyEvent::CancelGraceExpired { session },
        Event::Request(incoming) => {
            let (id, request) = incoming.into_parts();
            (messages.request)(id, request)
        }
        Event::Notification { notification, turn } => (messages.notification)(notification, turn),
    }
}

/// The shared part of an outcome conversion.
fn common_outcome<P: Protocol>(outcome: AnyOutcome) -> Outcome<P> {
    match outcome {
        AnyOutcome::Error(e) => Outcome::Error(e),
        AnyOutcome::InvalidResult(e) => Outcome::InvalidResult(e),
        AnyOutcome::TimedOut => Outcome::TimedOut,
        AnyOutcome::Cancelled => Outcome::Cancelled,
        AnyOutcome::ConnectionClosed => Outcome::ConnectionClosed,
        _ => Outcome::InvalidResult(foreign_result()),
    }
}

/// The hooks that take a role-agnostic message apart by side: the same for both versions,
/// whose wrappers have the same `into_agent`/`into_client` (module `sided`).
macro_rules! side_hooks {
    () => {
        fn agent_response(response: Self::Response) -> Option<Self::AgentResponse> {
            response.into_agent()
        }

        fn client_response(response: Self::Response) -> Option<Self::ClientResponse> {
            response.into_client()
        }

        fn agent_request(request: Self::Request) -> Option<Self::AgentRequest> {
            request.into_agent()
        }

        fn client_request(request: Self::Request) -> Option<Self::ClientRequest> {
            request.into_client()
        }

        fn agent_notification(notification: Self::Notification) -> Option<Self::AgentNotification> {
            notification.into_agent()
        }

        fn client_notification(notification: Self::Notification) -> Option<Self::ClientNotification> {
            notification.into_client()
        }
    };
}

/// The hooks written the same for both versions, over the version's module `$m` (`methods`,
/// `v2`), whose enums have the same names and the same `Ext` variants of the same extension
/// types.
macro_rules! version_hooks {
    ($m:ident) => {
        fn wire(method: Self::Method) -> &'static str {
            method.wire()
        }

        fn call(id: InboundId, request: Self::Request) -> Self::Call {
            request.into_call(id)
        }

        fn agent_ext_request(method: &str, params: Value) -> Self::AgentRequest {
            crate::$m::AgentRequest::Ext(ExtRequest::new(method, params))
        }

        fn client_ext_request(method: &str, params: Value) -> Self::ClientRequest {
            crate::$m::ClientRequest::Ext(ExtRequest::new(method, params))
        }

        fn agent_ext_notification(method: &str, params: Value) -> Self::AgentNotification {
            crate::$m::AgentNotification::Ext(ExtNotification::new(method, params))
        }

        fn client_ext_notification(method: &str, params: Value) -> Self::ClientNotification {
            crate::$m::ClientNotification::Ext(ExtNotification::new(method, params))
        }

        fn ext_result(response: Self::Response) -> Result<Value, Self::Response> {
            match response {
                crate::$m::Response::Agent(crate::$m::AgentResponse::Ext(ExtResponse(value)))
                | crate::$m::Response::Client(crate::$m::ClientResponse::Ext(ExtResponse(value))) => Ok(value),
                other => Err(other),
            }
        }
    };
}

impl Protocol for V1 {
    const VERSION: ProtocolVersion = ProtocolVersion::V1;
    type Method = crate::methods::Method;
    type Request = crate::methods::Request;
    type Notification = crate::methods::Notification;
    type Response = crate::methods::Response;
    type ClientRequest = ClientRequest;
    type AgentRequest = AgentRequest;
    type ClientNotification = ClientNotification;
    type AgentNotification = AgentNotification;
    type AgentResponse = AgentResponse;
    type ClientResponse = ClientResponse;
    type Call = crate::methods::Call;

    fn decode_answer(request: &Self::Request, raw: &RawValue) -> Result<Self::Response, DecodeError> {
        Response::decode_result(request.sender(), request.method(), raw)
    }

    side_hooks!();
    version_hooks!(methods);

    #[inline]
    fn event(event: AnyEvent) -> Result<Event<V1>, AnyEvent> {
        match event {
            AnyEvent::Request { id, request } => Ok(Event::Request(InboundRequest::new(id, request))),
            AnyEvent::Notification { notification, turn } => Ok(Event::Notification { notification, turn }),
            other => common(other, |outcome| match outcome {
                AnyOutcome::Result(r) => Outcome::Result(r),
                other => common_outcome(other),
            }),
        }
    }

    fn into_any(event: Event<V1>) -> AnyEvent {
        let messages = Messages::<V1> {
            request: |id, request| AnyEvent::Request { id, request },
            notification: |notification, turn| AnyEvent::Notification { notification, turn },
            result: AnyOutcome::Result,
        };
        any_of(event, messages)
    }

    #[inline]
    fn queue(events: &mut Events) -> Option<&mut VecDeque<Event<V1>>> {
        match events {
            Events::V1(queue) => Some(queue),
            #[cfg(feature = "unstable_protocol_v2")]
            Events::V2(_) => None,
        }
    }

    #[inline]
    fn send_request(
        conn: &mut AnyConnection,
        now: Instant,
        request: Self::Request,
        deadline: Option<Instant>,
    ) -> Result<OutboundId, Refused<Self::Request>> {
        conn.send_request::<V1>(now, request, deadline)
    }

    #[inline]
    fn send_notification(
        conn: &mut AnyConnection,
        now: Instant,
        notification: Self::Notification,
    ) -> Result<(), Refused<Self::Notification>> {
        conn.send_notification::<V1>(now, notification)
    }

    #[inline]
    fn respond(
        conn: &mut AnyConnection,
        now: Instant,
        id: InboundId,
        result: Result<Self::Response, RpcError>,
    ) -> Result<Completion, RespondError> {
        conn.respond::<V1>(now, id, result)
    }
}

/// ACP v2 (Preview, feature `unstable_protocol_v2`, `protocolVersion: 2`): the
/// [`v2`](crate::v2) message set.
#[cfg(feature = "unstable_protocol_v2")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct V2;

#[cfg(feature = "unstable_protocol_v2")]
impl sealed::Sealed for V2 {}

#[cfg(feature = "unstable_protocol_v2")]
impl Protocol for V2 {
    const VERSION: ProtocolVersion = ProtocolVersion::V2;
    type Method = crate::v2::Method;
    type Request = crate::v2::Request;
    type Notification = crate::v2::Notification;
    type Response = crate::v2::Response;
    type ClientRequest = crate::v2::ClientRequest;
    type AgentRequest = crate::v2::AgentRequest;
    type ClientNotification = crate::v2::ClientNotification;
    type AgentNotification = crate::v2::AgentNotification;
    type AgentResponse = crate::v2::AgentResponse;
    type ClientResponse = crate::v2::ClientResponse;
    type Call = crate::v2::Call;

    fn decode_answer(request: &Self::Request, raw: &RawValue) -> Result<Self::Response, DecodeError> {
        crate::connection::decode_v2_answer(request, raw)
    }

    side_hooks!();
    version_hooks!(v2);

    fn event(event: AnyEvent) -> Result<Event<V2>, AnyEvent> {
        match event {
            AnyEvent::RequestV2 { id, request } => Ok(Event::Request(InboundRequest::new(id, request))),
            AnyEvent::NotificationV2 { notification, turn } => Ok(Event::Notification { notification, turn }),
            other => common(other, |outcome| match outcome {
                AnyOutcome::ResultV2(r) => Outcome::Result(r),
                other => common_outcome(other),
            }),
        }
    }

    fn into_any(event: Event<V2>) -> AnyEvent {
        let messages = Messages::<V2> {
            request: |id, request| AnyEvent::RequestV2 { id, request },
            notification: |notification, turn| AnyEvent::NotificationV2 { notification, turn },
            result: AnyOutcome::ResultV2,
        };
        any_of(event, messages)
    }

    #[inline]
    fn queue(events: &mut Events) -> Option<&mut VecDeque<Event<V2>>> {
        match events {
            Events::V2(queue) => Some(queue),
            Events::V1(_) => None,
        }
    }

    #[inline]
    fn send_request(
        conn: &mut AnyConnection,
        now: Instant,
        request: Self::Request,
        deadline: Option<Instant>,
    ) -> Result<OutboundId, Refused<Self::Request>> {
        conn.send_request::<V2>(now, request, deadline)
    }

    #[inline]
    fn send_notification(
        conn: &mut AnyConnection,
        now: Instant,
        notification: Self::Notification,
    ) -> Result<(), Refused<Self::Notification>> {
        conn.send_notification::<V2>(now, notification)
    }

    #[inline]
    fn respond(
        conn: &mut AnyConnection,
        now: Instant,
        id: InboundId,
        result: Result<Self::Response, RpcError>,
    ) -> Result<Completion, RespondError> {
        conn.respond::<V2>(now, id, result)
    }
}
