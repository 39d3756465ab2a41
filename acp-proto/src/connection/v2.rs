//! The v2 plumbing of the connection (feature `unstable_protocol_v2`): the v2 messages in and
//! out through the v1 machinery (handshake gate, correlation, `$/cancel_request`, timeouts,
//! bounds, deferral), with v2's method resolution, gates, decoding and negotiation. The rules
//! are in [`turns_v2`](super::turns_v2).
//!
//! # Why separate v2 entry points
//!
//! The application sends v2 messages with [`Connection::send_request`],
//! [`Connection::send_notification`] and [`Connection::respond`], and receives
//! [`Event::Request`], [`Event::Notification`] and [`Outcome::Result`], each carrying the
//! role-agnostic [`v2::Request`], [`v2::Notification`] and [`v2::Response`]. Variants of the v1
//! wrappers were the other choice; they would make every v1 match (`Request::method()` returns
//! a v1 [`Method`](crate::Method)) answer for v2 messages that have no v1 method, and a v1
//! adapter could then be handed a v2 message it cannot answer. Separate types keep the v1 API
//! and its hot path exactly as they are, and a connection speaks one version, so an adapter
//! picks one set of calls after the handshake.

use serde::Deserialize;
use serde_json::Value;
use serde_json::json;
use serde_json::value::RawValue;

use super::turns_v2::SessionEffect;
use super::{
    AnyConnection, AnyEvent, AnyOutcome, CloseReason, Completion, EntryMethod, InboundEntry, InboundExtra, InboundId,
    Negotiated, OutboundId, PendingOut, Phase, Refused, RespondError, SendError, Written,
};
use crate::Side;
use crate::error::RpcError;
use crate::ext::is_extension_name;
use crate::gate::CapabilitySnapshot;
use crate::jsonrpc::{self, RequestId};
use crate::methods::{AgentResponse, DecodeError, Direction, Kind};
use crate::time::Instant;
use crate::types::ProtocolVersion;
use crate::v2::{
    self, AgentNotificationParams, AgentRequestParams, AgentResult, ClientNotificationParams, ClientRequestParams,
    ClientResult, CreateElicitationRequestKind,
};

/// The method of a v2 request in flight: a row of the v2 table, or an extension's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum V2Method {
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

    /// Whether a request goes the v2 way: every request on a v2 connection, and an agent's
    /// `initialize` asking for version 2 or later when it speaks 2, or asking for any version
    /// when it speaks 2 but not 1 (it answers with 2, its latest).
    pub(super) fn routes_v2(&self, method: &str, params: Option<&RawValue>) -> bool {
        self.v2.active
            || (self.side == Side::Agent
                && self.phase == Phase::AwaitingInit
                && method == v2::Method::Initialize.wire()
                && self.supports(2)
                && version_of(params).is_some_and(|v| v >= ProtocolVersion(2) || !self.supports(1)))
    }

    fn own_caps(&self) -> Option<&CapabilitySnapshot> {
        self.negotiated.as_ref().map(|n| &n.own)
    }

    fn peer_caps_v2(&self) -> Option<&CapabilitySnapshot> {
        self.negotiated.as_ref().map(|n| &n.peer)
    }

    /// A v2 request after the handshake gate, the id checks and the bound (steps 1 to 4).
    pub(super) fn on_request_v2(&mut self, id: RequestId, method: &str, raw: Option<&RawValue>, frame: &[u8]) {
        // 5. Resolution and the capability gate, against this side's own capabilities.
        let row = v2::Method::from_wire(method).filter(|m| received(*m, self.side, Kind::Request));
        if row.is_none() && !is_extension_name(method) {
            return self.reply_error(&id, &RpcError::method_not_found(method));
        }
        if let Some(m) = row
            && let Some(capability) = denied(self.own_caps(), self.v2.auth_methods, m)
        {
            let error = RpcError::method_not_found(method).with_data(json!({
                "method": method,
                "reason": format!("capability `{}` was not advertised", capability.join(".")),
            }));
            return self.reply_error(&id, &error);
        }
        // 6. Decode.
        let value = match value_of(raw, row.is_some()) {
            Ok(v) => v,
            Err(e) => return self.reply_error(&id, &e),
        };
        let request = match self.side {
            Side::Agent => ClientRequestParams::decode(method, value).map(v2::Request::Client),
            Side::Client => AgentRequestParams::decode(method, value).map(v2::Request::Agent),
        };
        let request = match request {
            Ok(r) => r,
            Err(e) => return self.reply_error(&id, &e.to_rpc_error()),
        };
        // 7. Turn rules.
        if self.v2.ask_is_cancelled(&request) {
            let outcome = v2::RequestPermissionOutcome::Cancelled(v2::CancelledPermissionOutcome::default());
            let response: v2::Response = v2::RequestPermissionResponse { outcome, meta: None }.into();
            self.machine_out += self.queue_response(&id, Ok(&response));
            return;
        }
        let extra = inbound_extra(&request);
        // 8. Dispatch, or defer while the output is full (`dispatch_request`, as v1).
        let method = EntryMethod::V2(V2Method::of(row, method));
        let entry = InboundEntry { wire_id: id, method, cancelled: None, deferred: false, grace: None, extra };
        let event = |key| AnyEvent::RequestV2 { id: key, request };
        self.dispatch_request(entry, frame.len(), event, |conn, extra| match extra {
            InboundExtra::InitializeV2(_) => {
                conn.phase = Phase::Initializing;
                conn.proxy_handshake = false;
            }
            InboundExtra::SessionV2(effect) => conn.v2.on_dispatch(effect),
            _ => {}
        });
    }

    /// A notification on a v2 connection (`$/cancel_request` was handled before).
    pub(super) fn on_notification_v2(&mut self, method: &str, params: Option<&RawValue>) {
        let row = v2::Method::from_wire(method).filter(|m| received(*m, self.side, Kind::Notification));
        let gated = row.is_some_and(|m| denied(self.own_caps(), self.v2.auth_methods, m).is_some());
        if (row.is_none() && !is_extension_name(method)) || gated {
            self.stats.notifications_dropped += 1;
            return;
        }
        let Ok(value) = value_of(params, row.is_some()) else {
            self.stats.notifications_dropped += 1;
            return;
        };
        let notification = match self.side {
            Side::Agent => ClientNotificationParams::decode(method, value).map(v2::Notification::Client),
            Side::Client => AgentNotificationParams::decode(method, value).map(v2::Notification::Agent),
        };
        let Ok(notification) = notification else {
            self.stats.notifications_dropped += 1;
            return;
        };
        if let v2::Notification::Client(ClientNotificationParams::Cancel(c)) = &notification {
            let session = c.session_id.clone();
            self.answer_deferred_prompts_v2(&session);
            self.push_event(AnyEvent::NotificationV2 { notification, turn: None });
            return self.agent_session_cancel_v2(&session);
        }
        let (turn, end) = self.client_stamp_v2(&notification);
        self.push_event(AnyEvent::NotificationV2 { notification, turn });
        if let Some((session, turn, reason)) = end {
            self.push_event(AnyEvent::TurnEnded { session, turn, reason });
        }
    }

    /// Agent side: `session/cancel` of `session` answers its prompts still deferred (never
    /// seen by the application) `-32800`: delivered after the cancel, they would start the
    /// work the client just cancelled.
    fn answer_deferred_prompts_v2(&mut self, session: &v2::SessionId) {
        let keys: Vec<u64> = self
            .inbound
            .iter()
            .filter(|(_, e)| {
                e.deferred && matches!(&e.extra, InboundExtra::SessionV2(SessionEffect::Prompt(s)) if s == session)
            })
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            self.answer(key, Err(RpcError::request_cancelled()));
        }
    }

    /// Completes an inbound v2 request with the handler's result or error, as
    /// [`respond`](Self::respond) does for v1: the result must be the v2 result type of the
    /// request's method (else `-32603` is sent and the mistake returned), a permission answer
    /// must name an offered option (else `cancelled` is sent). A v1 request cannot be answered
    /// with a v2 result. An agent's v2 `initialize` result gets `protocolVersion: 2`, and
    /// loses its `terminal` auth methods unless the client advertised `auth.terminal` (the
    /// docs: an agent may advertise one only then).
    pub fn respond_v2(
        &mut self,
        now: Instant,
        id: InboundId,
        result: Result<v2::Response, RpcError>,
    ) -> Result<Completion, RespondError> {
        self.advance(now);
        let completion = self.complete_v2(id, result);
        self.close_if_answered();
        completion
    }

    /// [`respond`](Self::respond), before the half-close's check.
    fn complete_v2(
        &mut self,
        id: InboundId,
        result: Result<v2::Response, RpcError>,
    ) -> Result<Completion, RespondError> {
        let Some(entry) = self.inbound.get(&id.0) else {
            return Ok(Completion::Discarded);
        };
        let response = match result {
            Err(error) => {
                self.answer(id.0, Err(error));
                return Ok(Completion::Sent);
            }
            Ok(response) => response,
        };
        let expected = entry.method.v2().map(V2Method::table);
        if expected.is_none_or(|m| m != response.method()) || response.sender() != self.side {
            let error = RespondError::MismatchedResponse {
                expected: expected.flatten().map(v2::Method::wire),
                got: response.method().map(v2::Method::wire),
            };
            self.answer(id.0, Err(RpcError::internal_error(error.to_string())));
            return Err(error);
        }
        if let (InboundExtra::Permission(_, offered), v2::Response::Client(ClientResult::RequestPermission(answer))) =
            (&entry.extra, &response)
            && let v2::RequestPermissionOutcome::Selected(selected) = &answer.outcome
            && !offered.contains(&selected.option_id)
        {
            let error = RespondError::UnknownPermissionOption(selected.option_id.to_string());
            let outcome = v2::RequestPermissionOutcome::Cancelled(v2::CancelledPermissionOutcome::default());
            self.answer_v2(id.0, v2::RequestPermissionResponse { outcome, meta: None }.into());
            return Err(error);
        }
        self.answer_v2(id.0, response);
        Ok(Completion::Sent)
    }

    /// Removes the entry and queues its single (successful) v2 response frame.
    fn answer_v2(&mut self, key: u64, mut response: v2::Response) {
        let Some(entry) = self.take_inbound(key) else { return };
        let mut committed = None;
        if let InboundExtra::InitializeV2(peer) = &entry.extra {
            let init = match &mut response {
                v2::Response::Agent(AgentResult::Initialize(init)) => Some(init),
                _ => None,
            };
            committed = Some(init.is_some());
            if let Some(init) = init {
                init.protocol_version = ProtocolVersion(2);
                // Content rule: `terminal` auth methods only for a client with `auth.terminal`.
                if let Some(methods) = &mut init.auth_methods
                    && !peer.has_path(&["auth", "terminal"])
                {
                    methods.retain(|m| !matches!(m, v2::AuthMethod::Terminal(_)));
                }
                self.v2.auth_methods = init.auth_methods.as_ref().is_some_and(|m| !m.is_empty());
                self.v2.active = true;
                let own = CapabilitySnapshot::from_typed(&init.capabilities);
                let negotiated = Negotiated { protocol_version: ProtocolVersion(2), own, peer: peer.clone() };
                self.negotiated = Some(negotiated);
            }
        }
        match &entry.extra {
            InboundExtra::SessionV2(effect) => self.v2.on_answer(effect, Some(&response)),
            InboundExtra::Permission(..) => self.turns.forget_permission(key, &entry.extra),
            _ => {}
        }
        self.queue_response(&entry.wire_id, Ok(&response));
        debug_assert_eq!(self.inbound.len(), self.by_wire.len());
        if let Some(committed) = committed {
            self.end_handshake(committed);
        }
    }

    /// Sends a v2 request: as [`send_request`](Self::send_request), on a connection that
    /// negotiated v2, or a client's v2 `initialize` (which offers its `protocolVersion`; the
    /// client must list 2 in [`Config::supported_versions`](super::Config::supported_versions)).
    /// Refused as well ([`SendError::WrongProtocolVersion`]) on a v1 connection, and by the v2
    /// rules of [`turns_v2`](super::turns_v2) (gates, `authMethods`, elicitation modes, cancel
    /// capabilities).
    #[allow(clippy::result_large_err)]
    pub fn send_request_v2(
        &mut self,
        now: Instant,
        request: impl Into<v2::Request>,
        deadline: Option<Instant>,
    ) -> Result<OutboundId, Refused<v2::Request>> {
        let request = request.into();
        self.send_request_v2_ref(now, &request, deadline).map_err(|error| Refused { error, message: request })
    }

    fn send_request_v2_ref(
        &mut self,
        now: Instant,
        request: &v2::Request,
        deadline: Option<Instant>,
    ) -> Result<OutboundId, SendError> {
        self.advance(now);
        let method = request.method();
        self.check_send_v2(request.wire(), request.sender(), method)?;
        let init = match request {
            v2::Request::Client(ClientRequestParams::Initialize(init)) => Some(init),
            _ => None,
        };
        match self.phase {
            Phase::AwaitingInit if init.is_some() => {
                if !self.supports(2) {
                    return Err(SendError::WrongProtocolVersion { speaks: None });
                }
            }
            _ if init.is_some() => return Err(SendError::AlreadyInitialized),
            Phase::Ready if self.v2.active => {}
            Phase::Ready => return Err(self.wrong_version()),
            _ => return Err(SendError::NotInitialized),
        }
        self.check_request_gates_v2(request)?;
        // An agent's request of a session (an ask, a session-scoped elicitation) needs it
        // announced, as its updates do.
        if let Some(session) = request.turn_session()
            && !self.v2.may_update(session)
        {
            return Err(SendError::UnknownSession(session.clone()));
        }
        if self.outbound.len() >= self.config.max_pending_outbound {
            return Err(SendError::TooManyPending { limit: self.config.max_pending_outbound });
        }
        self.check_budget()?;
        let ask_cancelled = self.agent_ask_cancelled_v2(request);
        let session = request.session_id().cloned();
        let method = EntryMethod::V2(V2Method::of(method, request.wire()));
        let pending = PendingOut { method, deadline: None, session };
        let params = request.has_params().then_some(request);
        let id = match self.write_request(request.wire(), params, ask_cancelled, deadline, pending)? {
            Written::Resolved(id) => return Ok(id),
            Written::Sent(id) => id,
        };
        if let Some(init) = init {
            self.v2.offered = Some(init.protocol_version);
            self.v2.v1_reading = Some(v1_reading(init));
            self.init_caps = Some(CapabilitySnapshot::from_typed(&init.capabilities));
            self.proxy_handshake = false;
            self.phase = Phase::Initializing;
        }
        match request {
            v2::Request::Client(ClientRequestParams::Prompt(p)) => self.v2.on_send_prompt(id, &p.session_id),
            v2::Request::Agent(AgentRequestParams::RequestPermission(p)) => self.v2.on_send_ask(id, &p.session_id),
            _ => {}
        }
        Ok(OutboundId(id))
    }

    /// The peer's gates for a v2 request: the table's, `authMethods`, the elicitation mode, and
    /// (client) the advertised cancel capability of a tool call or terminal.
    fn check_request_gates_v2(&self, request: &v2::Request) -> Result<(), SendError> {
        let Some(method) = request.method() else { return Ok(()) };
        if method == v2::Method::Initialize {
            return Ok(());
        }
        self.check_peer_gate_v2(method)?;
        if let v2::Request::Agent(AgentRequestParams::CreateElicitation(r)) = request {
            let path: &'static [&'static str] = match &r.kind {
                CreateElicitationRequestKind::Form(_) => &["elicitation", "form"],
                CreateElicitationRequestKind::Url(_) => &["elicitation", "url"],
                _ => &[],
            };
            if !path.is_empty() && !self.peer_caps_v2().is_some_and(|c| c.has_path(path)) {
                return Err(SendError::NotSupportedByPeer { method: method.wire(), capability: path });
            }
        }
        self.v2.check_cancellable(request)
    }

    fn check_peer_gate_v2(&self, method: v2::Method) -> Result<(), SendError> {
        match denied(self.peer_caps_v2(), self.v2.auth_methods, method) {
            Some(capability) => Err(SendError::NotSupportedByPeer { method: method.wire(), capability }),
            None => Ok(()),
        }
    }

    fn check_send_v2(&self, wire: &str, sender: Side, method: Option<v2::Method>) -> Result<(), SendError> {
        self.check_send_any(wire, sender, method.is_some())
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
    pub(super) fn check_cancel_v2(&self) -> Result<(), SendError> {
        if self.v2.active { self.check_peer_gate_v2(v2::Method::Cancel) } else { Ok(()) }
    }

    /// Sends a v2 notification: as [`send_notification`](Self::send_notification), on a
    /// connection that negotiated v2. Client side, `session/cancel` is
    /// [`cancel_turn`](Self::cancel_turn). Agent side, a `session/update` for a session never
    /// announced is refused, and an idle `state_update` that ends cancelled work says
    /// `stopReason: "cancelled"` ([`turns_v2`](super::turns_v2)).
    #[allow(clippy::result_large_err)]
    pub fn send_notification_v2(
        &mut self,
        now: Instant,
        notification: impl Into<v2::Notification>,
    ) -> Result<(), Refused<v2::Notification>> {
        let mut notification = notification.into();
        match self.send_notification_v2_mut(now, &mut notification) {
            Ok(()) => Ok(()),
            Err(error) => Err(Refused { error, message: notification }),
        }
    }

    fn send_notification_v2_mut(&mut self, now: Instant, notification: &mut v2::Notification) -> Result<(), SendError> {
        if let v2::Notification::Client(ClientNotificationParams::Cancel(c)) = notification {
            if !self.v2.active && self.phase == Phase::Ready {
                return Err(self.wrong_version());
            }
            let session = c.session_id.clone();
            return self.cancel_turn(now, &session).map(|_| ());
        }
        self.advance(now);
        self.check_send_v2(notification.wire(), notification.sender(), notification.method())?;
        if self.phase != Phase::Ready {
            return Err(SendError::NotInitialized);
        }
        if !self.v2.active {
            return Err(self.wrong_version());
        }
        if let Some(m) = notification.method() {
            self.check_peer_gate_v2(m)?;
        }
        self.check_budget()?;
        if self.side == Side::Agent {
            self.agent_update_v2(notification)?;
        }
        self.write_v2_notification(notification)
    }

    pub(super) fn write_v2_notification(&mut self, notification: &v2::Notification) -> Result<(), SendError> {
        let params = notification.has_params().then_some(notification);
        jsonrpc::encode_notification(&mut self.out, notification.wire(), params)
            .map_err(|e| SendError::Encode(e.to_string()))?;
        self.stats.frames_out += 1;
        Ok(())
    }

    /// A response to a v2 request of ours.
    pub(super) fn on_response_v2(&mut self, n: i64, method: V2Method, outcome: Result<&RawValue, RpcError>) {
        let outcome = match outcome {
            Err(error) => AnyOutcome::Error(error),
            Ok(raw) if self.side == Side::Client && method == V2Method::Table(v2::Method::Initialize) => {
                return self.on_init_response_v2(n, raw);
            }
            Ok(raw) => {
                let decoded = value_of(Some(raw), method.table().is_some())
                    .map_err(|e| DecodeError::Invalid(e.message))
                    .and_then(|value| match self.side {
                        Side::Client => AgentResult::decode(method.wire(), value).map(v2::Response::Agent),
                        Side::Agent => ClientResult::decode(method.wire(), value).map(v2::Response::Client),
                    });
                match decoded {
                    Ok(response) => AnyOutcome::ResultV2(response),
                    Err(e) => AnyOutcome::InvalidResult(e),
                }
            }
        };
        self.finish_outbound(n, outcome);
    }

    /// Client side: the answer to a v2 `initialize`, read version-first (see the negotiation
    /// table of [`turns_v2`](super::turns_v2)).
    fn on_init_response_v2(&mut self, n: i64, raw: &RawValue) {
        let offered = self.v2.offered.unwrap_or(ProtocolVersion(2));
        let invalid = |reason: String| AnyOutcome::InvalidResult(DecodeError::Invalid(reason));
        let mut close = None;
        let outcome = match version_of(Some(raw)) {
            Some(v) if v == ProtocolVersion(2) && v <= offered && self.supports(2) => {
                match serde_json::from_str::<v2::InitializeResponse>(raw.get()) {
                    Ok(init) => {
                        self.v2.auth_methods = init.auth_methods.as_ref().is_some_and(|m| !m.is_empty());
                        self.v2.active = true;
                        self.commit_client(v, CapabilitySnapshot::from_typed(&init.capabilities), false);
                        AnyOutcome::ResultV2(v2::Response::Agent(AgentResult::Initialize(init)))
                    }
                    Err(e) => invalid(e.to_string()),
                }
            }
            Some(v) if v == ProtocolVersion::V1 && self.supports(1) => {
                match serde_json::from_str::<crate::types::InitializeResponse>(raw.get()) {
                    Ok(init) => {
                        self.commit_client(v, CapabilitySnapshot::from_typed(&init.agent_capabilities), true);
                        AnyOutcome::Result(AgentResponse::Initialize(init).into())
                    }
                    Err(e) => invalid(e.to_string()),
                }
            }
            Some(version) => {
                close = Some(CloseReason::UnsupportedProtocolVersion { version });
                invalid(format!("protocol version {} is not supported", version.0))
            }
            None => invalid("the initialize result has no protocolVersion".to_owned()),
        };
        self.finish_outbound(n, outcome);
        if let Some(reason) = close {
            self.close_with(reason);
        }
    }

    /// Client side: the handshake commits at `version`; `v1_fallback`: a v2 `initialize`
    /// answered with 1, so the own capabilities are what the v1 agent read.
    fn commit_client(&mut self, version: ProtocolVersion, peer: CapabilitySnapshot, v1_fallback: bool) {
        let v2_own = self.init_caps.take();
        let v1_own = self.v2.v1_reading.take();
        let own = if v1_fallback { v1_own } else { v2_own };
        let own = own.unwrap_or_else(|| CapabilitySnapshot::from_json(Value::Null));
        let negotiated = Negotiated { protocol_version: version, own, peer };
        self.negotiated = Some(negotiated.clone());
        self.phase = Phase::Ready;
        self.push_event(AnyEvent::HandshakeCompleted(negotiated));
    }
}

/// What to remember about an inbound v2 request until it is answered.
fn inbound_extra(request: &v2::Request) -> InboundExtra {
    match request {
        v2::Request::Client(p) => match p {
            ClientRequestParams::Initialize(init) => {
                InboundExtra::InitializeV2(CapabilitySnapshot::from_typed(&init.capabilities))
            }
            ClientRequestParams::NewSession(_) => InboundExtra::SessionV2(SessionEffect::New),
            ClientRequestParams::ResumeSession(r) => {
                InboundExtra::SessionV2(SessionEffect::Resume(r.session_id.clone()))
            }
            ClientRequestParams::CloseSession(r) => {
                InboundExtra::SessionV2(SessionEffect::Forget(r.session_id.clone()))
            }
            ClientRequestParams::DeleteSession(r) => {
                InboundExtra::SessionV2(SessionEffect::Forget(r.session_id.clone()))
            }
            ClientRequestParams::Prompt(r) => InboundExtra::SessionV2(SessionEffect::Prompt(r.session_id.clone())),
            _ => InboundExtra::None,
        },
        v2::Request::Agent(AgentRequestParams::RequestPermission(p)) => {
            InboundExtra::Permission(p.session_id.clone(), p.options.iter().map(|o| o.option_id.clone()).collect())
        }
        v2::Request::Agent(_) => InboundExtra::None,
    }
}
