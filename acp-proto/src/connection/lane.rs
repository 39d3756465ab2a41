//! What differs between the protocol versions, as the one engine asks for it: [`Lane`], the
//! internal face of [`Protocol`], implemented for [`V1`] here and for `V2` in module `v2`.
//!
//! The engine runs the steps of every message once (module docs: the checks of an inbound
//! request, the send checks, the exactly-one-answer rule, correlation); at each step that
//! depends on the version it calls the hook of the lane the message belongs to. It picks the
//! lane once per message: an inbound request by `AnyConnection::request_lane` (every request
//! on a v2 connection, and an agent's `initialize` that asks for v2), a notification by the
//! version the connection negotiated, a response by the version its request was sent in
//! (recorded in its [`EntryMethod`]), and a send by the type of the message. Everything is
//! monomorphised: the v1 road is the code it was before, without boxing or dynamic dispatch.

use serde::Serialize;
use serde_json::value::RawValue;

use super::turns::TurnRules;
use super::{AnyConnection, AnyOutcome, CloseReason, EntryMethod, InboundEntry, InboundExtra};
use super::{CancelReason, Mismatch, Negotiated, Phase, SendError, handshake};
use crate::Side;
use crate::error::RpcError;
use crate::gate::{CapabilitySnapshot, GateDecision, allows_auth_method, check_method, check_update};
use crate::methods::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest, ClientResponse, DecodeError,
    Kind, Method, Notification, Request, Response,
};
use crate::protocol::{Protocol, V1};
use crate::types::{PermissionOptionId, RequestPermissionOutcome, RequestPermissionResponse, SessionId};

/// What the send checks read of a message before anything else.
pub(crate) struct Head<'a, M> {
    /// The wire name.
    pub(super) wire: &'a str,
    /// The side that sends it.
    pub(super) sender: Side,
    /// Its row of the version's table (`None`: an extension).
    pub(super) method: Option<M>,
    /// Whether it has params to write.
    pub(super) has_params: bool,
}

/// The hooks of one protocol version (see the module docs). Crate-private and implemented for
/// the two versions only, as [`Protocol`] is sealed.
pub(crate) trait Lane:
    TurnRules + Protocol<Request: Serialize, Notification: Serialize, Response: Serialize, Method: Copy>
{
    // ---- inbound requests and notifications -------------------------------------------

    /// Resolves a received `wire` name as a message of `kind`: its row, `None` for a name the
    /// decoder judges (an extension), or `Err` for a name this side does not receive that way
    /// (`-32601` for a request; a notification is dropped).
    fn resolve(side: Side, wire: &str, kind: Kind) -> Result<Option<Self::Method>, ()>;

    /// The capability of this side's own that a received `method` needs and it did not
    /// advertise (rule 5).
    fn own_gate(conn: &AnyConnection, method: Self::Method, kind: Kind) -> Option<&'static [&'static str]>;

    /// Decodes a request's params (rule 6): `-32601` or `-32602` when they do not decode.
    fn decode_request(
        side: Side,
        wire: &str,
        row: Option<Self::Method>,
        params: Option<&RawValue>,
    ) -> Result<Self::Request, RpcError>;

    /// What to remember about a request until it is answered, or the turn rule refusing it.
    fn inbound_extra(conn: &AnyConnection, request: &Self::Request) -> Result<InboundExtra, RpcError>;

    /// Whether `request` opens the connection as a conductor opens a proxy.
    fn is_proxy(request: &Self::Request) -> bool;

    /// The method a request in flight is recorded under.
    fn entry_method(wire: &str, row: Option<Self::Method>, request: &Self::Request) -> EntryMethod;

    /// Decodes a notification's params; `None` when they do not decode (it is dropped).
    fn decode_notification(
        side: Side,
        wire: &str,
        row: Option<Self::Method>,
        params: Option<&RawValue>,
    ) -> Option<Self::Notification>;

    // ---- answers to the peer's requests -------------------------------------------------

    /// The mistake, when `response` does not answer a request recorded under `method` on
    /// `side` (the machine sends `-32603` in its place).
    fn mismatch(side: Side, method: &EntryMethod, response: &Self::Response) -> Option<Mismatch>;

    /// The option a permission answer selected, if it is one.
    fn selected_option(response: &Self::Response) -> Option<&PermissionOptionId>;

    /// The `cancelled` answer to a permission ask.
    fn cancelled_ask() -> Self::Response;

    /// The answer the application's completion becomes (the content rules of a handshake
    /// result, a cancelled prompt turn), changed in place.
    fn prepare(entry: &InboundEntry, result: &mut Result<Self::Response, RpcError>);

    /// Applies what a successful answer changes, before it is queued; returns whether it
    /// commits (`Some(true)`) or fails (`Some(false)`) the handshake.
    fn on_answer(
        conn: &mut AnyConnection,
        key: u64,
        extra: &InboundExtra,
        response: &mut Self::Response,
    ) -> Option<bool>;

    // ---- answers to ours ------------------------------------------------------------------

    /// Whether a request recorded under `method` opens the connection (`initialize`).
    fn opens(method: &EntryMethod) -> bool;

    /// Client side: the outcome of the agent's answer to our `initialize`, committing the
    /// handshake or naming why the connection closes.
    fn handshake_result(
        conn: &mut AnyConnection,
        method: &EntryMethod,
        raw: &RawValue,
    ) -> (AnyOutcome, Option<CloseReason>);

    /// Decodes the result of a request recorded under `method`.
    fn decode_result(side: Side, method: &EntryMethod, raw: &RawValue) -> Result<Self::Response, DecodeError>;

    // ---- sending ----------------------------------------------------------------------------

    /// The head of a request to send.
    fn request_head(request: &Self::Request) -> Head<'_, Self::Method>;

    /// The version's checks of a request to send, before the bounds: the handshake phase and
    /// the version spoken, the peer's gates and the content rules.
    fn check_request(
        conn: &AnyConnection,
        request: &Self::Request,
        method: Option<Self::Method>,
    ) -> Result<(), SendError>;

    /// The session a request belongs to.
    fn session_of(request: &Self::Request) -> Option<&SessionId>;

    /// Records a request sent under wire id `id` (the handshake, the turn rules).
    fn on_sent(conn: &mut AnyConnection, id: i64, request: &Self::Request);

    /// The head of a notification to send.
    fn notification_head(notification: &Self::Notification) -> Head<'_, Self::Method>;

    /// Client side: the session a `session/cancel` cancels (sent by `cancel_turn`), once the
    /// version allows it.
    fn session_cancel(conn: &AnyConnection, notification: &Self::Notification) -> Option<Result<SessionId, SendError>>;

    /// The version's checks of a notification to send, before the budget.
    fn check_notification(
        conn: &AnyConnection,
        notification: &Self::Notification,
        method: Option<Self::Method>,
    ) -> Result<(), SendError>;

    /// Writes a notification by a faster road than serde's, when the version has one.
    fn encode_fast(out: &mut Vec<u8>, notification: &Self::Notification) -> bool;
}

impl Lane for V1 {
    #[inline]
    fn resolve(side: Side, wire: &str, kind: Kind) -> Result<Option<Method>, ()> {
        let row = Method::received_as(wire, side, kind);
        // A method of the table, but not one this side receives as `kind`.
        if row.is_none() && Method::from_wire(wire).is_some() { Err(()) } else { Ok(row) }
    }

    #[inline]
    fn own_gate(conn: &AnyConnection, method: Method, kind: Kind) -> Option<&'static [&'static str]> {
        if kind == Kind::Notification {
            return None;
        }
        match check_method(conn.negotiated.as_ref().map(|n| &n.own), method) {
            GateDecision::Denied { capability } => Some(capability),
            _ => None,
        }
    }

    #[inline]
    fn decode_request(
        side: Side,
        wire: &str,
        _: Option<Method>,
        params: Option<&RawValue>,
    ) -> Result<Request, RpcError> {
        Request::decode(side, wire, params).map_err(|e| e.to_rpc_error())
    }

    fn inbound_extra(conn: &AnyConnection, request: &Request) -> Result<InboundExtra, RpcError> {
        Ok(match request {
            _ if handshake::params(request).is_some() => {
                let init = handshake::params(request).expect("checked by the guard");
                InboundExtra::Initialize(CapabilitySnapshot::from_typed(&init.client_capabilities))
            }
            Request::Client(ClientRequest::Prompt(p)) => return conn.turns.agent_prompt_extra(&p.session_id),
            Request::Client(ClientRequest::LoadSession(p)) => InboundExtra::Load(p.session_id.clone()),
            Request::Client(ClientRequest::ResumeSession(p)) => InboundExtra::Load(p.session_id.clone()),
            Request::Client(ClientRequest::CloseSession(p)) => InboundExtra::Forget(p.session_id.clone()),
            Request::Client(ClientRequest::DeleteSession(p)) => InboundExtra::Forget(p.session_id.clone()),
            Request::Agent(AgentRequest::RequestPermission(p)) => {
                InboundExtra::Permission(p.session_id.clone(), p.options.iter().map(|o| o.option_id.clone()).collect())
            }
            _ => InboundExtra::None,
        })
    }

    #[inline]
    fn is_proxy(request: &Request) -> bool {
        handshake::is_proxy(request)
    }

    #[inline]
    fn entry_method(_: &str, _: Option<Method>, request: &Request) -> EntryMethod {
        EntryMethod::V1(request.method())
    }

    #[inline]
    fn decode_notification(
        side: Side,
        wire: &str,
        _: Option<Method>,
        params: Option<&RawValue>,
    ) -> Option<Notification> {
        // Unknown notifications are ignored, as the spec asks; bad params cannot be answered.
        Notification::decode(side, wire, params).ok()
    }

    fn mismatch(side: Side, method: &EntryMethod, response: &Response) -> Option<Mismatch> {
        #[cfg(feature = "unstable_protocol_v2")]
        if let EntryMethod::V2(_) = method {
            return Some(Mismatch { expected: None, got: response.method().map(Method::wire) });
        }
        if response.method() != method.v1() || response.sender() != side {
            return Some(Mismatch {
                expected: method.v1().map(Method::wire),
                got: response.method().map(Method::wire),
            });
        }
        None
    }

    fn selected_option(response: &Response) -> Option<&PermissionOptionId> {
        match response {
            Response::Client(ClientResponse::RequestPermission(answer)) => match &answer.outcome {
                RequestPermissionOutcome::Selected(selected) => Some(&selected.option_id),
                _ => None,
            },
            _ => None,
        }
    }

    fn cancelled_ask() -> Response {
        RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled).into()
    }

    fn prepare(entry: &InboundEntry, result: &mut Result<Response, RpcError>) {
        match (&entry.extra, entry.cancelled) {
            (InboundExtra::Prompt(_), Some(CancelReason::SessionCancelled)) => {
                let meta = match result {
                    Ok(Response::Agent(AgentResponse::Prompt(p))) => p.meta.take(),
                    _ => None,
                };
                *result = Ok(super::inbound::cancelled_prompt(meta));
            }
            (InboundExtra::Initialize(peer), _) => {
                // Content rule: opt-in auth method types the client did not advertise are left out.
                if let Some(init) = result.as_mut().ok().and_then(handshake::result_mut) {
                    init.auth_methods.retain(|m| allows_auth_method(Some(peer), m));
                    // With v2 compiled in, the v1 road speaks v1: an answer saying 2 (the v2
                    // road's version) goes out as 1. Any other version goes out as written, as
                    // without the feature (a proxy relays its successor's choice; the client
                    // judges it).
                    #[cfg(feature = "unstable_protocol_v2")]
                    if init.protocol_version == crate::types::ProtocolVersion::V2 {
                        init.protocol_version = crate::types::ProtocolVersion::V1;
                    }
                }
            }
            _ => {}
        }
    }

    fn on_answer(conn: &mut AnyConnection, key: u64, extra: &InboundExtra, response: &mut Response) -> Option<bool> {
        let committed = match extra {
            InboundExtra::Initialize(peer) => handshake::result(response).map(|init| {
                conn.negotiated = Some(Negotiated {
                    protocol_version: init.protocol_version,
                    own: CapabilitySnapshot::from_typed(&init.agent_capabilities),
                    peer: peer.clone(),
                });
            }),
            _ => None,
        };
        let handshake = matches!(extra, InboundExtra::Initialize(_));
        conn.turns.on_answer(key, extra, true);
        conn.turns.on_result(response);
        handshake.then_some(committed.is_some())
    }

    #[inline]
    fn opens(method: &EntryMethod) -> bool {
        handshake::is_handshake(method.v1())
    }

    fn handshake_result(
        conn: &mut AnyConnection,
        method: &EntryMethod,
        raw: &RawValue,
    ) -> (AnyOutcome, Option<CloseReason>) {
        let response = match Self::decode_result(conn.side, method, raw) {
            Ok(response) => response,
            Err(e) => return (AnyOutcome::InvalidResult(e), None),
        };
        let mut close = None;
        if let Some(init) = handshake::result(&response) {
            // With v2 compiled in, a v1 `initialize` (which offers 1) accepts no later version.
            let offered_or_lower = cfg!(not(feature = "unstable_protocol_v2"))
                || init.protocol_version <= crate::types::ProtocolVersion::V1;
            if offered_or_lower && conn.config.supported_versions.contains(&init.protocol_version) {
                let peer = CapabilitySnapshot::from_typed(&init.agent_capabilities);
                conn.commit_client(init.protocol_version, peer, false);
            } else {
                close = Some(CloseReason::UnsupportedProtocolVersion { version: init.protocol_version });
            }
        }
        (AnyOutcome::Result(response), close)
    }

    #[inline]
    fn decode_result(side: Side, method: &EntryMethod, raw: &RawValue) -> Result<Response, DecodeError> {
        Response::decode_result(side, method.v1(), raw)
    }

    #[inline]
    fn request_head(request: &Request) -> Head<'_, Method> {
        Head {
            wire: request.wire(),
            sender: request.sender(),
            method: request.method(),
            has_params: request.has_params(),
        }
    }

    fn check_request(conn: &AnyConnection, request: &Request, method: Option<Method>) -> Result<(), SendError> {
        #[cfg(feature = "unstable_protocol_v2")]
        conn.check_speaks_v1(Some(request))?;
        match (method, conn.phase) {
            (m, Phase::AwaitingInit) if handshake::is_handshake(m) => {}
            (m, _) if handshake::is_handshake(m) => return Err(SendError::AlreadyInitialized),
            (_, Phase::Ready) => {}
            (m, Phase::Initializing) if handshake::allowed_while_pending(m, conn.proxy_handshake) => {}
            _ => return Err(SendError::NotInitialized),
        }
        conn.check_gate(method)?;
        conn.check_request_content(request)
    }

    #[inline]
    fn session_of(request: &Request) -> Option<&SessionId> {
        request.session_id()
    }

    fn on_sent(conn: &mut AnyConnection, id: i64, request: &Request) {
        if let Some(init) = handshake::params(request) {
            conn.proxy_handshake = handshake::is_proxy(request);
            conn.init_caps = Some(CapabilitySnapshot::from_typed(&init.client_capabilities));
            conn.phase = Phase::Initializing;
        }
        conn.turns.on_send_request(id, request);
    }

    #[inline]
    fn notification_head(notification: &Notification) -> Head<'_, Method> {
        Head {
            wire: notification.wire(),
            sender: notification.sender(),
            method: notification.method(),
            has_params: notification.has_params(),
        }
    }

    #[inline]
    fn session_cancel(_: &AnyConnection, notification: &Notification) -> Option<Result<SessionId, SendError>> {
        match notification {
            Notification::Client(ClientNotification::Cancel(c)) => Some(Ok(c.session_id.clone())),
            _ => None,
        }
    }

    fn check_notification(
        conn: &AnyConnection,
        notification: &Notification,
        method: Option<Method>,
    ) -> Result<(), SendError> {
        #[cfg(feature = "unstable_protocol_v2")]
        conn.check_speaks_v1(None)?;
        if conn.phase != Phase::Ready {
            return Err(SendError::NotInitialized);
        }
        conn.check_gate(method)?;
        if let Notification::Agent(AgentNotification::SessionUpdate(n)) = notification {
            conn.check_content(Method::SessionUpdate, check_update(conn.peer_caps(), &n.update))?;
        }
        Ok(())
    }

    #[inline]
    fn encode_fast(out: &mut Vec<u8>, notification: &Notification) -> bool {
        // Streamed text chunks, the bulk of an agent's output, without serde's generic path.
        crate::chunk_path::encode(out, notification)
    }
}
