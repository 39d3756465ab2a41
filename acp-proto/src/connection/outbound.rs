//! Outbound side: application sends, correlation of responses, deadlines, local cancels and
//! the client's half of the handshake.

use serde::Serialize;
use serde_json::value::RawValue;

use super::lane::Lane;
use super::turns::TurnRules;
use super::{
    AnyConnection, AnyEvent, AnyOutcome, EntryMethod, Event, Negotiated, OutboundId, Outcome, PendingOut, Phase,
    Refused, SendError, Timer, Written,
};
use crate::Side;
use crate::error::RpcError;
use crate::ext::is_extension_name;
use crate::gate::{
    CapabilitySnapshot, GateDecision, check_elicitation, check_initial_config, check_method, check_sender,
    check_system_prompt,
};
use crate::jsonrpc::{self, RequestId};
use crate::methods::{AgentRequest, ClientRequest, Method, Request};
use crate::protocol::V1;
#[cfg(feature = "unstable_protocol_v2")]
use crate::protocol::V2;
use crate::time::Instant;
use crate::types::{InitialSessionConfigOption, ProtocolVersion, SystemPrompt};

/// The params of `$/cancel_request`, written without building a value.
#[derive(Serialize)]
struct CancelParams {
    #[serde(rename = "requestId")]
    request_id: i64,
}

impl AnyConnection {
    /// Sends a request and returns its handle; its single [`Outcome`] arrives later as an
    /// [`Event::Outcome`]. `deadline` (or, without one, [`Config::request_timeout`] from now)
    /// bounds the wait.
    ///
    /// Refused, with nothing sent and no id consumed, when: the connection is closed; the
    /// handshake has not completed (anything but `initialize`); this side does not send the
    /// method; an extension name lacks its `_`; the peer did not advertise the capability the
    /// method (or, by the gate's content rules, its elicitation mode or system prompt) needs;
    /// `max_pending_outbound` requests are pending; the outbound budget is used
    /// up; a client prompt targets a session whose turn is still running.
    ///
    /// Agent side, a `session/request_permission` made while its session's turn is being
    /// cancelled is accepted and resolves at once as [`Outcome::Cancelled`], without a frame.
    /// After the end of input, any request is accepted and resolves at once as
    /// [`Outcome::ConnectionClosed`], without a frame: no answer could come
    /// ([`half_close`](super::half_close)).
    ///
    /// A refusal hands the request back ([`Refused`]).
    ///
    /// [`Config::request_timeout`]: super::Config::request_timeout
    ///
    /// The version's own rules refuse as well: a v1 message on a v2 connection and the other
    /// way round ([`SendError::WrongProtocolVersion`]); v2, the rules of
    /// [`turns_v2`](super::turns_v2) (gates, `authMethods`, elicitation modes, cancel
    /// capabilities). A client's v2 `initialize` offers its `protocolVersion` (the client must
    /// list 2 in [`Config::supported_versions`](super::Config::supported_versions)).
    // The refused request comes back by value: a refusal is rare, a box would allocate per send.
    #[allow(clippy::result_large_err)]
    pub(crate) fn send_request<P: Lane>(
        &mut self,
        now: Instant,
        request: impl Into<P::Request>,
        deadline: Option<Instant>,
    ) -> Result<OutboundId, Refused<P::Request>> {
        let request = request.into();
        self.send_request_ref::<P>(now, &request, deadline).map_err(|error| Refused { error, message: request })
    }

    /// [`send_request`](Self::send_request), one road for both versions: the shared checks, and
    /// the version's at its hook points (module `lane`).
    fn send_request_ref<P: Lane>(
        &mut self,
        now: Instant,
        request: &P::Request,
        deadline: Option<Instant>,
    ) -> Result<OutboundId, SendError> {
        self.advance(now);
        let head = P::request_head(request);
        self.check_send_any(head.wire, head.sender, head.method.is_some())?;
        P::check_request(self, request, head.method)?;
        if self.outbound.len() >= self.config.max_pending_outbound {
            return Err(SendError::TooManyPending { limit: self.config.max_pending_outbound });
        }
        self.check_budget()?;
        P::check_turn(self, request)?;
        let ask_cancelled = P::ask_cancelled(self, request);
        let session = P::session_of(request).cloned();
        let method = P::entry_method(head.wire, head.method, request);
        let pending = PendingOut { method, deadline: None, session };
        let params = head.has_params.then_some(request);
        let id = match self.write_request(head.wire, params, ask_cancelled, deadline, pending)? {
            Written::Resolved(id) => return Ok(id),
            Written::Sent(id) => id,
        };
        P::on_sent(self, id, request);
        Ok(OutboundId(id))
    }

    /// The shared tail of sending a request of either version, once every rule allowed it:
    /// after the end of input it resolves at once ([`AnyOutcome::ConnectionClosed`]), an
    /// agent's ask of a turn being cancelled (`ask_cancelled`) as [`AnyOutcome::Cancelled`],
    /// both without a frame; otherwise the frame goes out under the next id, with its deadline
    /// (or the config's default) armed and `pending` recorded. The caller's version-specific
    /// bookkeeping (handshake, turn rules) follows a [`Written::Sent`].
    pub(super) fn write_request<T: serde::Serialize + ?Sized>(
        &mut self,
        wire: &str,
        params: Option<&T>,
        ask_cancelled: bool,
        deadline: Option<Instant>,
        mut pending: PendingOut,
    ) -> Result<Written, SendError> {
        if let Some(id) = self.resolve_after_eof() {
            return Ok(Written::Resolved(id));
        }
        let id = self.next_outbound;
        if ask_cancelled {
            self.next_outbound += 1;
            self.push_event(AnyEvent::Outcome { id: OutboundId(id), outcome: AnyOutcome::Cancelled });
            return Ok(Written::Resolved(OutboundId(id)));
        }
        jsonrpc::encode_request(&mut self.out, &RequestId::Number(id), wire, params)
            .map_err(|e| SendError::Encode(e.to_string()))?;
        self.stats.frames_out += 1;
        self.next_outbound += 1;
        pending.deadline = deadline.or_else(|| self.config.request_timeout.map(|t| self.now + t));
        if let Some(at) = pending.deadline {
            self.arm(at, Timer::Outbound(id));
        }
        self.outbound.insert(id, pending);
        Ok(Written::Sent(id))
    }

    /// Sends a notification. Refused like [`send_request`](Self::send_request) (closed, not
    /// initialized, wrong direction, bad extension name, budget), and, agent side, a
    /// `session/update` for a session never announced to the client or of a kind the client did
    /// not opt in to (the gate's content rules: [`SendError::NotSupportedByPeer`] naming
    /// `session/update` and the missing capability).
    ///
    /// Client side, `session/cancel` is [`cancel_turn`](Self::cancel_turn). A refusal hands
    /// the notification back ([`Refused`]).
    ///
    /// v2: client side, `session/cancel` needs a v2 connection; agent side, an idle
    /// `state_update` that ends cancelled work says `stopReason: "cancelled"`
    /// ([`turns_v2`](super::turns_v2)).
    #[allow(clippy::result_large_err)]
    #[inline]
    pub(crate) fn send_notification<P: Lane>(
        &mut self,
        now: Instant,
        notification: impl Into<P::Notification>,
    ) -> Result<(), Refused<P::Notification>> {
        let mut notification = notification.into();
        match self.send_notification_mut::<P>(now, &mut notification) {
            Ok(()) => Ok(()),
            Err(error) => Err(Refused { error, message: notification }),
        }
    }

    fn send_notification_mut<P: Lane>(
        &mut self,
        now: Instant,
        notification: &mut P::Notification,
    ) -> Result<(), SendError> {
        if let Some(session) = P::session_cancel(self, notification) {
            return self.cancel_turn(now, &session?).map(|_| ());
        }
        self.advance(now);
        let head = P::notification_head(notification);
        self.check_send_any(head.wire, head.sender, head.method.is_some())?;
        P::check_notification(self, notification, head.method)?;
        self.check_budget()?;
        P::before_send(self, notification)?;
        self.write_notification::<P>(notification)
    }

    /// Queues a notification frame (the version's fast road, or serde's).
    pub(super) fn write_notification<P: Lane>(&mut self, notification: &P::Notification) -> Result<(), SendError> {
        if !P::encode_fast(&mut self.out, notification) {
            let head = P::notification_head(notification);
            let params = head.has_params.then_some(notification);
            jsonrpc::encode_notification(&mut self.out, head.wire, params)
                .map_err(|e| SendError::Encode(e.to_string()))?;
        }
        self.stats.frames_out += 1;
        Ok(())
    }

    /// The send checks of either version: open, and a name that is
    /// either in the version's table (`in_table`) or a valid extension name.
    pub(super) fn check_send_any(&self, wire: &str, sender: Side, in_table: bool) -> Result<(), SendError> {
        if self.phase == Phase::Closed {
            return Err(SendError::Closed);
        }
        // `Connection<R, P>` takes only its side's messages (module `role`).
        debug_assert_eq!(sender, self.side, "`{wire}` sent by the wrong side");
        if !in_table && !is_extension_name(wire) {
            return Err(SendError::InvalidExtensionName { method: wire.to_owned() });
        }
        Ok(())
    }

    /// The outbound capability gate: the peer must have advertised what the method needs, and
    /// this side what the gate's sender rules ask of it.
    pub(super) fn check_gate(&self, method: Option<Method>) -> Result<(), SendError> {
        let Some(m) = method else { return Ok(()) };
        let peer = self.negotiated.as_ref().map(|n| &n.peer);
        if let GateDecision::Denied { capability } = check_method(peer, m) {
            return Err(SendError::NotSupportedByPeer { method: m.wire(), capability });
        }
        let own = self.negotiated.as_ref().map(|n| &n.own);
        match check_sender(own, m) {
            GateDecision::Denied { capability } => Err(SendError::NotAdvertised { method: m.wire(), capability }),
            _ => Ok(()),
        }
    }

    pub(super) fn peer_caps(&self) -> Option<&CapabilitySnapshot> {
        self.negotiated.as_ref().map(|n| &n.peer)
    }

    /// The gate's content rules for requests: elicitation modes and system prompts.
    pub(super) fn check_request_content(&self, request: &Request) -> Result<(), SendError> {
        let peer = self.peer_caps();
        match request {
            Request::Agent(AgentRequest::CreateElicitation(r)) => {
                self.check_content(Method::CreateElicitation, check_elicitation(peer, r))
            }
            Request::Client(ClientRequest::NewSession(r)) => {
                self.check_setup(Method::NewSession, &r.system_prompt, &r.config_options)
            }
            Request::Client(ClientRequest::LoadSession(r)) => {
                self.check_setup(Method::LoadSession, &r.system_prompt, &r.config_options)
            }
            Request::Client(ClientRequest::ResumeSession(r)) => {
                self.check_setup(Method::ResumeSession, &r.system_prompt, &r.config_options)
            }
            #[cfg(feature = "unstable_session_fork")]
            Request::Client(ClientRequest::ForkSession(r)) => {
                self.check_setup(Method::ForkSession, &r.system_prompt, &r.config_options)
            }
            _ => Ok(()),
        }
    }

    /// A session setup request's content rules: its system prompt and (unstable) initial
    /// config option values. Without `unstable_session_options` the values cannot be encoded,
    /// so a non-empty list is refused rather than silently dropped.
    fn check_setup(
        &self,
        method: Method,
        prompt: &Option<SystemPrompt>,
        config_options: &Option<Vec<InitialSessionConfigOption>>,
    ) -> Result<(), SendError> {
        if let Some(p) = prompt {
            self.check_content(method, check_system_prompt(self.peer_caps(), p))?;
        }
        let options = config_options.as_deref();
        if cfg!(not(feature = "unstable_session_options")) && options.is_some_and(|o| !o.is_empty()) {
            return Err(SendError::Encode(
                "`configOptions` is only sent with the `unstable_session_options` feature".to_owned(),
            ));
        }
        self.check_content(method, check_initial_config(self.peer_caps(), options))
    }

    pub(super) fn check_content(&self, method: Method, decision: GateDecision) -> Result<(), SendError> {
        match decision {
            GateDecision::Denied { capability } => {
                Err(SendError::NotSupportedByPeer { method: method.wire(), capability })
            }
            _ => Ok(()),
        }
    }

    pub(super) fn check_budget(&self) -> Result<(), SendError> {
        if self.can_send() {
            Ok(())
        } else {
            Err(SendError::Backpressure { queued: self.out.len(), budget: self.config.outbound_budget })
        }
    }

    /// Cancels an outbound request: it gets a single [`Outcome::Cancelled`] and the peer a
    /// best-effort `$/cancel_request`. Returns false (and does nothing) when the request
    /// already has its outcome.
    pub fn cancel_request(&mut self, now: Instant, id: OutboundId) -> bool {
        self.advance(now);
        if self.finish_outbound(id.0, AnyOutcome::Cancelled).is_none() {
            return false;
        }
        self.send_cancel_request(id.0);
        true
    }

    pub(super) fn send_cancel_request(&mut self, id: i64) {
        // A notification the machine owns: never refused by the budget.
        if jsonrpc::encode_notification(
            &mut self.out,
            Method::CancelRequest.wire(),
            Some(&CancelParams { request_id: id }),
        )
        .is_ok()
        {
            self.stats.frames_out += 1;
        }
    }

    /// Removes a pending request and emits its outcome; `None` if it was not pending. A
    /// handshake request that failed lets `initialize` be sent again; the turn rules of the
    /// version the request was sent in follow the outcome.
    pub(super) fn finish_outbound(&mut self, id: i64, outcome: AnyOutcome) -> Option<PendingOut> {
        let ok = matches!(outcome, AnyOutcome::Result(_));
        #[cfg(feature = "unstable_protocol_v2")]
        let ok = ok || matches!(outcome, AnyOutcome::ResultV2(_));
        self.finish_outbound_with(id, ok, |conn| conn.push_event(AnyEvent::Outcome { id: OutboundId(id), outcome }))
    }

    /// [`finish_outbound`](Self::finish_outbound) with the outcome's event pushed by `push`
    /// (`ok`: it carries a result).
    #[inline]
    fn finish_outbound_with(&mut self, id: i64, ok: bool, push: impl FnOnce(&mut Self)) -> Option<PendingOut> {
        let pending = self.outbound.remove(&id)?;
        self.disarm(pending.deadline, Timer::Outbound(id));
        let opens = match &pending.method {
            EntryMethod::V1(_) => V1::opens(&pending.method),
            #[cfg(feature = "unstable_protocol_v2")]
            EntryMethod::V2(_) => V2::opens(&pending.method),
        };
        if opens && self.phase == Phase::Initializing {
            self.phase = Phase::AwaitingInit;
        }
        push(self);
        match &pending.method {
            EntryMethod::V1(_) => <V1 as TurnRules>::on_outcome(self, id, &pending, ok),
            #[cfg(feature = "unstable_protocol_v2")]
            EntryMethod::V2(_) => <V2 as TurnRules>::on_outcome(self, id, &pending, ok),
        }
        Some(pending)
    }

    pub(super) fn outbound_timed_out(&mut self, id: i64, at: Instant) {
        if self.outbound.get(&id).is_some_and(|p| p.deadline == Some(at)) {
            self.finish_outbound(id, AnyOutcome::TimedOut);
            self.send_cancel_request(id);
        }
    }

    pub(super) fn on_response(&mut self, id: RequestId, outcome: Result<&RawValue, RpcError>) {
        // Our ids are integers: a string id never matches, even "1" for 1.
        let RequestId::Number(n) = id else {
            self.stats.late_responses += 1;
            return;
        };
        let Some(pending) = self.outbound.get(&n) else {
            self.stats.late_responses += 1;
            return;
        };
        // The branch point: the version the request was sent in.
        let method = pending.method.clone();
        match method {
            EntryMethod::V1(_) => self.on_result::<V1>(n, &method, outcome),
            #[cfg(feature = "unstable_protocol_v2")]
            EntryMethod::V2(_) => self.on_result::<V2>(n, &method, outcome),
        }
    }

    /// The answer to our request `n` (recorded under `method`), one road for both versions.
    fn on_result<P: Lane>(&mut self, n: i64, method: &EntryMethod, outcome: Result<&RawValue, RpcError>) {
        let mut close = None;
        let outcome = match outcome {
            Err(error) => AnyOutcome::Error(error),
            // The client's handshake commits when it receives a successful initialize response.
            Ok(raw) if self.side == Side::Client && P::opens(method) => {
                let (outcome, closing) = P::handshake_result(self, method, raw);
                close = closing;
                outcome
            }
            Ok(raw) => match P::decode_result(self.side, method, raw) {
                // The hot road: the event is built as the queue keeps it (module `queue`).
                Ok(response) => {
                    let id = OutboundId(n);
                    let push = |conn: &mut Self| {
                        conn.push_typed(|| Event::<P>::Outcome { id, outcome: Outcome::Result(response) })
                    };
                    self.finish_outbound_with(n, true, push);
                    return;
                }
                Err(e) => AnyOutcome::InvalidResult(e),
            },
        };
        self.finish_outbound(n, outcome);
        if let Some(reason) = close {
            self.close_with(reason);
        }
    }

    /// Client side: the handshake commits at `version`; `v1_fallback`: a v2 `initialize`
    /// answered with 1, so the own capabilities are what the v1 agent read.
    pub(super) fn commit_client(&mut self, version: ProtocolVersion, peer: CapabilitySnapshot, v1_fallback: bool) {
        let own = self.init_caps.take();
        #[cfg(feature = "unstable_protocol_v2")]
        let own = {
            let v1_own = self.v2.v1_reading.take();
            if v1_fallback { v1_own } else { own }
        };
        let _ = v1_fallback;
        let own = own.unwrap_or_else(|| CapabilitySnapshot::from_json(serde_json::Value::Null));
        let negotiated = Negotiated { protocol_version: version, own, peer };
        self.negotiated = Some(negotiated.clone());
        self.phase = Phase::Ready;
        self.push_event(AnyEvent::HandshakeCompleted(negotiated));
    }
}
