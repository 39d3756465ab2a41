//! The v2 lane of the engine (feature `unstable_protocol_v2`): [`Lane`] for [`V2`], v2's
//! method resolution, gates, decoding and negotiation at the hook points of the one road
//! (module `lane`: handshake gate, correlation, `$/cancel_request`, timeouts, bounds and
//! deferral are the engine's, shared with v1). The turn rules are in
//! [`turns_v2`](super::turns_v2).
//!
//! The application sends and receives v2 messages through a `Connection<R, V2>`, whose events
//! carry the role-agnostic [`v2::Request`], [`v2::Notification`] and [`v2::Response`]: separate
//! types from v1's, so that a v1 match never has to answer for a v2 message it cannot handle,
//! and the v1 hot path stays as it is.

use serde::Deserialize;
use serde_json::Value;
use serde_json::json;
use serde_json::value::RawValue;

use super::lane::{Head, Lane};
use super::turns_v2::SessionEffect;
use super::{
    AnyConnection, AnyOutcome, CloseReason, EntryMethod, InboundEntry, InboundExtra, Mismatch, Negotiated, Phase,
    SendError,
};
use crate::Side;
use crate::error::RpcError;
use crate::ext::is_extension_name;
use crate::gate::CapabilitySnapshot;
use crate::methods::{DecodeError, Direction, Kind};
use crate::protocol::V2;
use crate::types::{ProtocolVersion, SessionId};
use crate::v2::{self, CreateElicitationRequestKind};

/// The method of a v2 request in flight: a row of the v2 table, or an extension's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum V2Method {
    /// A row of the v2 table.
    Table(v2::Method),
    /// An extension method.
    Ext(Box<str>),
}

impl V2Method {
    fn of(method: Option<v2::Method>, wire: &str) -> V2Method {
        method.map_or_else(|| V2Method::Ext(wire.into()), V2Method::Table)
    }

    fn wire(&self) -> &str {
        match self {
            V2Method::Table(m) => m.wire(),
            V2Method::Ext(w) => w,
        }
    }

    fn table(&self) -> Option<v2::Method> {
        match self {
            V2Method::Table(m) => Some(*m),
            V2Method::Ext(_) => None,
        }
    }
}

/// Whether `side` receives `method` as a message of `kind`.
fn received(method: v2::Method, side: Side, kind: Kind) -> bool {
    let row = method.row();
    row.kind == kind
        && matches!(
            (row.direction, side),
            (Direction::Both, _) | (Direction::ClientToAgent, Side::Agent) | (Direction::AgentToClient, Side::Client)
        )
}

/// The `protocolVersion` of an `initialize` request or result, read before anything else.
#[derive(Deserialize)]
struct VersionOnly {
    #[serde(rename = "protocolVersion")]
    protocol_version: ProtocolVersion,
}

fn version_of(raw: Option<&RawValue>) -> Option<ProtocolVersion> {
    raw.and_then(|r| serde_json::from_str::<VersionOnly>(r.get()).ok()).map(|v| v.protocol_version)
}

/// The params (or result) as a value; absent ones read as `{}` for a table method.
fn value_of(raw: Option<&RawValue>, typed: bool) -> Result<Option<Value>, RpcError> {
    match raw {
        Some(r) => match serde_json::from_str::<Value>(r.get()) {
            Ok(Value::Null) if typed => Ok(Some(json!({}))),
            Ok(v) => Ok(Some(v)),
            Err(e) => Err(RpcError::invalid_params(e.to_string())),
        },
        None if typed => Ok(Some(json!({}))),
        None => Ok(None),
    }
}

/// The capabilities a v1 agent reads from v2 `initialize` params: it finds no v1
/// `clientCapabilities` there, so (today) none.
fn v1_reading(init: &v2::InitializeRequest) -> CapabilitySnapshot {
    let caps = serde_json::to_value(init)
        .ok()
        .and_then(|v| serde_json::from_value::<crate::types::InitializeRequest>(v).ok())
        .map(|r| r.client_capabilities)
        .unwrap_or_default();
    CapabilitySnapshot::from_typed(&caps)
}

/// The capability path `method` lacks in `caps` (the receiver's own), if it lacks one:
/// the table's gate, and for `auth/login` / `auth/logout` a non-empty `authMethods`.
fn denied(
    caps: Option<&CapabilitySnapshot>,
    auth_methods: bool,
    method: v2::Method,
) -> Option<&'static [&'static str]> {
    if matches!(method, v2::Method::Login | v2::Method::Logout) && !auth_methods {
        return Some(&["authMethods"]);
    }
    let path = method.row().gate;
    match caps {
        _ if path.is_empty() => None,
        Some(c) if c.has_path(path) => None,
        _ => Some(path),
    }
}

impl AnyConnection {
    /// Whether frames skip the fast paths, which decode v1 only: on a v2 connection, and on an
    /// agent that may negotiate v2 before its handshake (its `initialize` is read version-first).
    pub(super) fn general_path_only(&self) -> bool {
        self.v2.active || (self.side == Side::Agent && self.phase == Phase::AwaitingInit && self.supports(2))
    }

    fn supports(&self, version: u16) -> bool {
        self.config.supported_versions.contains(&ProtocolVersion(version))
    }

    /// The version whose rules an inbound request goes by: 2 for every request on a v2
    /// connection, and for an agent's `initialize` asking for version 2 or later when it speaks
    /// 2, or asking for any version when it speaks 2 but not 1 (one below 2 was refused -32022
    /// before, `unsupported_version`);
    /// 1 otherwise.
    pub(super) fn request_lane(&self, method: &str, params: Option<&RawValue>) -> ProtocolVersion {
        let is_v2 = self.v2.active
            || (self.side == Side::Agent
                && self.phase == Phase::AwaitingInit
                && method == v2::Method::Initialize.wire()
                && self.supports(2)
                && version_of(params).is_some_and(|v| v >= ProtocolVersion(2) || !self.supports(1)));
        if is_v2 { ProtocolVersion::V2 } else { ProtocolVersion::V1 }
    }

    /// Agent side, before the handshake: an `initialize` asking for a version below every one
    /// this agent speaks (a v2-only agent asked for 1) fails with `-32022` and
    /// `{requested, supported}` (v2 schema, `InitializeResponse.protocolVersion`: the highest
    /// supported version at or below the requested one, and if there is none, -32022). An
    /// agent that speaks 1 always has one, so v1's rule (answer the latest) is untouched.
    pub(super) fn unsupported_version(&self, method: &str, params: Option<&RawValue>) -> Option<RpcError> {
        if self.side != Side::Agent || self.phase != Phase::AwaitingInit || method != v2::Method::Initialize.wire() {
            return None;
        }
        RpcError::refusing_version(version_of(params)?, &self.config.supported_versions)
    }

    fn own_caps(&self) -> Option<&CapabilitySnapshot> {
        self.negotiated.as_ref().map(|n| &n.own)
    }

    /// Agent side: `session/cancel` of `session` answers its prompts still deferred (never
    /// seen by the application) `-32800`: delivered after the cancel, they would start the
    /// work the client just cancelled.
    pub(super) fn answer_deferred_prompts(&mut self, session: &v2::SessionId) {
        let keys: Vec<u64> = self
            .inbound
            .iter()
            .filter(|(_, e)| {
                e.deferred && matches!(&e.extra, InboundExtra::Session(SessionEffect::Prompt(s)) if s == session)
            })
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            self.answer_error(key, RpcError::request_cancelled());
        }
    }

    /// The peer's gates for a v2 request: the table's, `authMethods`, the elicitation mode, and
    /// (client) the advertised cancel capability of a tool call or terminal.
    fn check_request_gates(&self, request: &v2::Request) -> Result<(), SendError> {
        let Some(method) = request.method() else { return Ok(()) };
        if method == v2::Method::Initialize {
            return Ok(());
        }
        self.check_peer_gate(method)?;
        if let v2::Request::Agent(v2::AgentRequest::CreateElicitation(r)) = request {
            let path: &'static [&'static str] = match &r.kind {
                CreateElicitationRequestKind::Form(_) => &["elicitation", "form"],
                CreateElicitationRequestKind::Url(_) => &["elicitation", "url"],
                _ => &[],
            };
            if !path.is_empty() && !self.peer_caps().is_some_and(|c| c.has_path(path)) {
                return Err(SendError::NotSupportedByPeer { method: method.wire(), capability: path });
            }
        }
        self.v2.check_cancellable(request)
    }

    fn check_peer_gate(&self, method: v2::Method) -> Result<(), SendError> {
        match denied(self.peer_caps(), self.v2.auth_methods, method) {
            Some(capability) => Err(SendError::NotSupportedByPeer { method: method.wire(), capability }),
            None => Ok(()),
        }
    }

    fn wrong_version(&self) -> SendError {
        SendError::WrongProtocolVersion { speaks: self.negotiated.as_ref().map(|n| n.protocol_version) }
    }

    /// Refuses a v1 message on a connection that speaks v2, and a v1 `initialize` offering
    /// a version other than 1.
    pub(super) fn check_speaks_v1(&self, request: Option<&crate::methods::Request>) -> Result<(), SendError> {
        if self.v2.active {
            return Err(self.wrong_version());
        }
        if let Some(init) = request.and_then(super::handshake::params)
            && init.protocol_version != ProtocolVersion::V1
        {
            return Err(SendError::WrongProtocolVersion { speaks: None });
        }
        Ok(())
    }

    /// `session/cancel` on a v2 connection needs the agent's `session`.
    pub(super) fn check_cancel_gate(&self) -> Result<(), SendError> {
        if self.v2.active { self.check_peer_gate(v2::Method::Cancel) } else { Ok(()) }
    }

    /// Agent side: a v2 `initialize` result is answered: it says `protocolVersion: 2`, and
    /// loses its `terminal` auth methods unless the client advertised `auth.terminal` (the
    /// docs: an agent may advertise one only then); the handshake commits at 2.
    fn commit_agent(&mut self, peer: &CapabilitySnapshot, init: &mut v2::InitializeResponse) {
        init.protocol_version = ProtocolVersion(2);
        // Content rule: `terminal` auth methods only for a client with `auth.terminal`.
        if let Some(methods) = &mut init.auth_methods
            && !peer.has_path(&["auth", "terminal"])
        {
            methods.retain(|m| !matches!(m, v2::AuthMethod::Terminal(_)));
        }
        self.v2.auth_methods = init.auth_methods.as_ref().is_some_and(|m| !m.is_empty());
        self.v2.active = true;
        self.events.speak::<V2>();
        let own = CapabilitySnapshot::from_typed(&init.capabilities);
        self.negotiated = Some(Negotiated { protocol_version: ProtocolVersion(2), own, peer: peer.clone() });
    }
}

/// The v2 lane: v2's method resolution, gates, decoding, negotiation and turn rules
/// ([`turns_v2`](super::turns_v2)) at the engine's hook points (module `lane`).
impl Lane for V2 {
    fn resolve(side: Side, wire: &str, kind: Kind) -> Result<Option<v2::Method>, ()> {
        let row = v2::Method::from_wire(wire).filter(|m| received(*m, side, kind));
        if row.is_none() && !is_extension_name(wire) { Err(()) } else { Ok(row) }
    }

    fn own_gate(conn: &AnyConnection, method: v2::Method, _: Kind) -> Option<&'static [&'static str]> {
        denied(conn.own_caps(), conn.v2.auth_methods, method)
    }

    fn decode_request(
        side: Side,
        wire: &str,
        row: Option<v2::Method>,
        params: Option<&RawValue>,
    ) -> Result<v2::Request, RpcError> {
        let value = value_of(params, row.is_some())?;
        let request = match side {
            Side::Agent => v2::ClientRequest::decode(wire, value).map(v2::Request::Client),
            Side::Client => v2::AgentRequest::decode(wire, value).map(v2::Request::Agent),
        };
        request.map_err(|e| e.to_rpc_error())
    }

    fn inbound_extra(_: &AnyConnection, request: &v2::Request) -> Result<InboundExtra, RpcError> {
        Ok(inbound_extra(request))
    }

    fn is_proxy(_: &v2::Request) -> bool {
        false
    }

    fn entry_method(wire: &str, row: Option<v2::Method>, _: &v2::Request) -> EntryMethod {
        EntryMethod::V2(V2Method::of(row, wire))
    }

    fn decode_notification(
        side: Side,
        wire: &str,
        row: Option<v2::Method>,
        params: Option<&RawValue>,
    ) -> Option<v2::Notification> {
        let value = value_of(params, row.is_some()).ok()?;
        let notification = match side {
            Side::Agent => v2::ClientNotification::decode(wire, value).map(v2::Notification::Client),
            Side::Client => v2::AgentNotification::decode(wire, value).map(v2::Notification::Agent),
        };
        notification.ok()
    }

    fn mismatch(side: Side, method: &EntryMethod, response: &v2::Response) -> Option<Mismatch> {
        let expected = method.v2().map(V2Method::table);
        if expected.is_none_or(|m| m != response.method()) || response.sender() != side {
            let expected = expected.flatten().map(v2::Method::wire);
            return Some(Mismatch { expected, got: response.method().map(v2::Method::wire) });
        }
        None
    }

    fn selected_option(response: &v2::Response) -> Option<&crate::types::PermissionOptionId> {
        match response {
            v2::Response::Client(v2::ClientResponse::RequestPermission(answer)) => match &answer.outcome {
                v2::RequestPermissionOutcome::Selected(selected) => Some(&selected.option_id),
                _ => None,
            },
            _ => None,
        }
    }

    fn cancelled_ask() -> v2::Response {
        let outcome = v2::RequestPermissionOutcome::Cancelled(v2::CancelledPermissionOutcome::default());
        v2::RequestPermissionResponse { outcome, meta: None }.into()
    }

    fn prepare(_: &InboundEntry, _: &mut Result<v2::Response, RpcError>) {}

    fn on_answer(
        conn: &mut AnyConnection,
        key: u64,
        extra: &InboundExtra,
        response: &mut v2::Response,
    ) -> Option<bool> {
        let mut committed = None;
        if let InboundExtra::Initialize(peer) = extra {
            let init = match response {
                v2::Response::Agent(v2::AgentResponse::Initialize(init)) => Some(init),
                _ => None,
            };
            committed = Some(init.is_some());
            if let Some(init) = init {
                conn.commit_agent(peer, init);
            }
        }
        match extra {
            InboundExtra::Session(effect) => conn.v2.on_answer(effect, Some(response)),
            InboundExtra::Permission(..) => conn.turns.forget_permission(key, extra),
            _ => {}
        }
        committed
    }

    fn opens(method: &EntryMethod) -> bool {
        method.v2() == Some(&V2Method::Table(v2::Method::Initialize))
    }

    /// The answer to a v2 `initialize`, read version-first (see the negotiation table of
    /// [`turns_v2`](super::turns_v2)).
    fn handshake_result(
        conn: &mut AnyConnection,
        _: &EntryMethod,
        raw: &RawValue,
    ) -> (AnyOutcome, Option<CloseReason>) {
        let offered = conn.v2.offered.unwrap_or(ProtocolVersion(2));
        let invalid = |reason: String| AnyOutcome::InvalidResult(DecodeError::Invalid(reason));
        let outcome = match version_of(Some(raw)) {
            Some(v) if v == ProtocolVersion(2) && v <= offered && conn.supports(2) => {
                match serde_json::from_str::<v2::InitializeResponse>(raw.get()) {
                    Ok(init) => {
                        conn.v2.auth_methods = init.auth_methods.as_ref().is_some_and(|m| !m.is_empty());
                        conn.v2.active = true;
                        conn.events.speak::<V2>();
                        conn.commit_client(v, CapabilitySnapshot::from_typed(&init.capabilities), false);
                        AnyOutcome::ResultV2(init.into())
                    }
                    Err(e) => invalid(e.to_string()),
                }
            }
            Some(v) if v == ProtocolVersion::V1 && conn.supports(1) => {
                match serde_json::from_str::<crate::types::InitializeResponse>(raw.get()) {
                    Ok(init) => {
                        conn.commit_client(v, CapabilitySnapshot::from_typed(&init.agent_capabilities), true);
                        AnyOutcome::Result(init.into())
                    }
                    Err(e) => invalid(e.to_string()),
                }
            }
            Some(version) => {
                let close = CloseReason::UnsupportedProtocolVersion { version };
                return (invalid(format!("protocol version {} is not supported", version.0)), Some(close));
            }
            None => invalid("the initialize result has no protocolVersion".to_owned()),
        };
        (outcome, None)
    }

    fn decode_result(side: Side, method: &EntryMethod, raw: &RawValue) -> Result<v2::Response, DecodeError> {
        let Some(method) = method.v2() else {
            return Err(DecodeError::Invalid("a v1 request cannot have a v2 result".to_owned()));
        };
        let value = value_of(Some(raw), method.table().is_some()).map_err(|e| DecodeError::Invalid(e.message))?;
        match side {
            Side::Client => v2::AgentResponse::decode(method.wire(), value).map(v2::Response::Agent),
            Side::Agent => v2::ClientResponse::decode(method.wire(), value).map(v2::Response::Client),
        }
    }

    fn request_head(request: &v2::Request) -> Head<'_, v2::Method> {
        Head {
            wire: request.wire(),
            sender: request.sender(),
            method: request.method(),
            has_params: request.has_params(),
        }
    }

    fn check_request(conn: &AnyConnection, request: &v2::Request, _: Option<v2::Method>) -> Result<(), SendError> {
        let init = matches!(request, v2::Request::Client(v2::ClientRequest::Initialize(_)));
        match conn.phase {
            Phase::AwaitingInit if init => {
                if !conn.supports(2) {
                    return Err(SendError::WrongProtocolVersion { speaks: None });
                }
            }
            _ if init => return Err(SendError::AlreadyInitialized),
            Phase::Ready if conn.v2.active => {}
            Phase::Ready => return Err(conn.wrong_version()),
            _ => return Err(SendError::NotInitialized),
        }
        conn.check_request_gates(request)?;
        // An agent's request of a session (an ask, a session-scoped elicitation) needs it
        // announced, as its updates do.
        match request.turn_session() {
            Some(session) if !conn.v2.may_update(session) => Err(SendError::UnknownSession(session.clone())),
            _ => Ok(()),
        }
    }

    fn session_of(request: &v2::Request) -> Option<&SessionId> {
        request.session_id()
    }

    fn on_sent(conn: &mut AnyConnection, id: i64, request: &v2::Request) {
        match request {
            v2::Request::Client(v2::ClientRequest::Initialize(init)) => {
                conn.v2.offered = Some(init.protocol_version);
                conn.v2.v1_reading = Some(v1_reading(init));
                conn.init_caps = Some(CapabilitySnapshot::from_typed(&init.capabilities));
                conn.proxy_handshake = false;
                conn.phase = Phase::Initializing;
            }
            v2::Request::Client(v2::ClientRequest::Prompt(p)) => conn.v2.on_send_prompt(id, &p.session_id),
            v2::Request::Agent(v2::AgentRequest::RequestPermission(p)) => conn.v2.on_send_ask(id, &p.session_id),
            _ => {}
        }
    }

    fn notification_head(notification: &v2::Notification) -> Head<'_, v2::Method> {
        Head {
            wire: notification.wire(),
            sender: notification.sender(),
            method: notification.method(),
            has_params: notification.has_params(),
        }
    }

    fn session_cancel(conn: &AnyConnection, notification: &v2::Notification) -> Option<Result<SessionId, SendError>> {
        let v2::Notification::Client(v2::ClientNotification::Cancel(c)) = notification else { return None };
        if !conn.v2.active && conn.phase == Phase::Ready {
            return Some(Err(conn.wrong_version()));
        }
        Some(Ok(c.session_id.clone()))
    }

    fn check_notification(
        conn: &AnyConnection,
        _: &v2::Notification,
        method: Option<v2::Method>,
    ) -> Result<(), SendError> {
        if conn.phase != Phase::Ready {
            return Err(SendError::NotInitialized);
        }
        if !conn.v2.active {
            return Err(conn.wrong_version());
        }
        match method {
            Some(m) => conn.check_peer_gate(m),
            None => Ok(()),
        }
    }

    fn encode_fast(_: &mut Vec<u8>, _: &v2::Notification) -> bool {
        false
    }
}

/// What to remember about an inbound v2 request until it is answered.
fn inbound_extra(request: &v2::Request) -> InboundExtra {
    match request {
        v2::Request::Client(p) => match p {
            v2::ClientRequest::Initialize(init) => {
                InboundExtra::Initialize(CapabilitySnapshot::from_typed(&init.capabilities))
            }
            v2::ClientRequest::NewSession(_) => InboundExtra::Session(SessionEffect::New),
            v2::ClientRequest::ResumeSession(r) => InboundExtra::Session(SessionEffect::Resume(r.session_id.clone())),
            v2::ClientRequest::CloseSession(r) => InboundExtra::Session(SessionEffect::Forget(r.session_id.clone())),
            v2::ClientRequest::DeleteSession(r) => InboundExtra::Session(SessionEffect::Forget(r.session_id.clone())),
            v2::ClientRequest::Prompt(r) => InboundExtra::Session(SessionEffect::Prompt(r.session_id.clone())),
            _ => InboundExtra::None,
        },
        v2::Request::Agent(v2::AgentRequest::RequestPermission(p)) => {
            InboundExtra::Permission(p.session_id.clone(), p.options.iter().map(|o| o.option_id.clone()).collect())
        }
        v2::Request::Agent(_) => InboundExtra::None,
    }
}

/// The result `raw` of the v2 `request`, decoded as its method's result type (for
/// [`InboundRequest::answer_json`](crate::InboundRequest::answer_json)).
pub(crate) fn decode_answer(request: &v2::Request, raw: &RawValue) -> Result<v2::Response, DecodeError> {
    let method = EntryMethod::V2(V2Method::of(request.method(), request.wire()));
    <V2 as Lane>::decode_result(request.sender(), &method, raw)
}
