//! Inbound side: frames in, requests dispatched and answered exactly once, notifications,
//! `$/cancel_request` from the peer, and the agent's half of the handshake.

use std::borrow::Cow;

use serde_json::json;
use serde_json::value::RawValue;

use super::lane::Lane;
use super::{
    AnyConnection, AnyEvent, CancelReason, Completion, Event, InboundEntry, InboundExtra, InboundId, Phase,
    RespondError, Timer, handshake,
};
use crate::Side;
use crate::chunk_path;
use crate::error::{ErrorCode, RpcError};
use crate::fast_path::{self, Fast};
use crate::framer::FrameEvent;

use crate::jsonrpc::{self, Incoming, RequestId};
use crate::methods::{AgentResponse, Kind, Layer, Method, Notification, Request, Response};
#[cfg(feature = "unstable_protocol_v2")]
use crate::protocol::V2;
use crate::protocol::{Protocol, V1};
use crate::time::Instant;
#[cfg(feature = "unstable_protocol_v2")]
use crate::types::ProtocolVersion;
use crate::types::{CancelRequestNotification, PromptResponse, StopReason};

/// The params of an inbound request: raw, or already decoded by the (v1) fast path.
enum Params<'a, R> {
    Raw(Option<&'a RawValue>),
    Decoded(R),
}

impl AnyConnection {
    pub(super) fn on_frame_event(&mut self, ev: FrameEvent<'_>) {
        self.stats.frames_in += 1;
        if self.parking() {
            return self.park_or_handle(ev);
        }
        match ev {
            FrameEvent::Frame(frame) => self.on_frame(frame),
            FrameEvent::Oversized { len } => self.reply_oversized(len),
        }
    }

    /// Answers a line over the frame limit (`len` bytes long).
    pub(super) fn reply_oversized(&mut self, len: u64) {
        self.stats.oversized_frames += 1;
        let error = RpcError::invalid_request("frame exceeds the maximum frame length").with_data(json!({
            "reason": "frame exceeds the maximum frame length",
            "length": len,
            "limit": self.config.max_frame_len,
        }));
        self.reply_error(&RequestId::Null, &error);
    }

    pub(super) fn on_frame(&mut self, frame: &[u8]) {
        // The fast paths decode v1 messages only.
        #[cfg(feature = "unstable_protocol_v2")]
        if self.general_path_only() {
            if self.v2.active && super::batch::is_array(frame) {
                return self.on_batch(frame);
            }
            return self.on_frame_general(frame);
        }
        // Streamed text chunks, the bulk of a client's input, in their canonical layout.
        if let Some(notification) = chunk_path::decode(frame, self.side) {
            return self.on_decoded_notification(notification);
        }
        if let Some(fast) = fast_path::parse(frame, self.side) {
            match fast {
                Fast::Request { id, method, request } => self.on_request(id, method, Params::Decoded(request), frame),
                Fast::Notification(notification) => self.on_decoded_notification(notification),
            }
            return;
        }
        self.on_frame_general(frame);
    }

    /// A frame through the general path: classified, then decoded by its method.
    pub(super) fn on_frame_general(&mut self, frame: &[u8]) {
        self.on_incoming(jsonrpc::parse(frame), frame);
    }

    /// A classified message (a frame, or an entry of a batch) through the general path.
    pub(super) fn on_incoming(&mut self, incoming: Incoming<'_>, frame: &[u8]) {
        match incoming {
            Incoming::Request { id, method, params } => self.on_request(id, method, Params::Raw(params), frame),
            Incoming::Notification { method, params } => self.on_notification(&method, params),
            Incoming::Response { id, outcome } => self.on_response(id, outcome),
            Incoming::Invalid { id, error } => {
                self.stats.malformed_frames += 1;
                self.reply_error(&id, &error);
            }
            Incoming::MalformedResponse { .. } => self.stats.malformed_responses += 1,
        }
    }

    /// A notification the fast paths decoded (for a method this side receives).
    fn on_decoded_notification(&mut self, notification: Notification) {
        if self.phase != Phase::Ready {
            self.stats.notifications_dropped += 1;
        } else {
            self.deliver_notification(notification);
        }
    }

    /// Queues an error response (never refused by the budget: it answers the peer).
    pub(super) fn reply_error(&mut self, id: &RequestId, error: &RpcError) {
        self.machine_out += self.queue_response::<Response>(id, Err(error));
    }

    /// Queues the one response frame for `id` and returns its length. A result that fails to
    /// serialize is answered with an internal error instead, so the peer still gets its answer.
    pub(super) fn queue_response<R: serde::Serialize>(
        &mut self,
        id: &RequestId,
        result: Result<&R, &RpcError>,
    ) -> usize {
        let before = self.out.len();
        match result {
            Ok(response) => {
                if jsonrpc::encode_result(&mut self.out, id, response).is_err() {
                    let error = RpcError::internal_error("the result failed to serialize");
                    jsonrpc::encode_error(&mut self.out, id, &error);
                }
            }
            Err(error) => jsonrpc::encode_error(&mut self.out, id, error),
        }
        // The answer to an entry of a v2 batch waits for its siblings.
        #[cfg(feature = "unstable_protocol_v2")]
        if self.batches.len() > 0 && self.route_to_batch(id, before) {
            return 0;
        }
        self.stats.frames_out += 1;
        self.out.len() - before
    }

    fn on_request(&mut self, id: RequestId, method: Cow<'_, str>, params: Params<'_, Request>, frame: &[u8]) {
        // 1. The handshake gate.
        let is_init = handshake::is_handshake_wire(&method);
        match (self.side, self.phase) {
            (_, Phase::Closed) => return,
            (Side::Agent, Phase::AwaitingInit) if !is_init => {
                return self.reply_error(&id, &handshake_error(&method, "initialize required"));
            }
            (Side::Agent, Phase::Initializing) => return self.hold(id, frame),
            (Side::Agent, Phase::Ready) if is_init => {
                return self.reply_error(&id, &handshake_error(&method, "already initialized"));
            }
            (Side::Client, Phase::Initializing)
                if self.proxy_handshake
                    && handshake::allowed_while_pending(
                        Method::received_as(&method, Side::Client, Kind::Request),
                        true,
                    ) => {}
            (Side::Client, phase) if phase != Phase::Ready => {
                return self.reply_error(&id, &handshake_error(&method, "initialize required"));
            }
            _ => {}
        }
        // 2. A null id cannot be answered unambiguously.
        if id == RequestId::Null {
            return self.reply_error(&id, &RpcError::invalid_request("request id must not be null"));
        }
        // 3. A duplicate of an id in flight is dropped: a second answer would be mis-correlated.
        if self.by_wire.contains_key(&id) {
            self.stats.duplicate_ids += 1;
            return;
        }
        // 4. Bounded in-flight requests.
        if self.shed_if_full(&id) {
            return;
        }
        // A version this agent cannot answer with: -32022 (v2's rule; a v1 agent always can).
        #[cfg(feature = "unstable_protocol_v2")]
        if let Params::Raw(raw) = &params
            && let Some(error) = self.unsupported_version(&method, *raw)
        {
            return self.reply_error(&id, &error);
        }
        // The branch point: the version whose rules the request goes by.
        #[cfg(feature = "unstable_protocol_v2")]
        if let Params::Raw(raw) = &params
            && self.request_lane(&method, *raw) == ProtocolVersion::V2
        {
            return self.on_checked_request::<V2>(id, &method, Params::Raw(*raw), frame);
        }
        self.on_checked_request::<V1>(id, &method, params, frame);
    }

    /// Steps 5 to 8 of an inbound request, one road for both versions: `P` supplies what
    /// differs (module `lane`).
    fn on_checked_request<P: Lane>(
        &mut self,
        id: RequestId,
        method: &str,
        params: Params<'_, P::Request>,
        frame: &[u8],
    ) {
        // 5. Resolution and the capability gate, against this side's own capabilities.
        let Ok(row) = P::resolve(self.side, method, Kind::Request) else {
            return self.reply_error(&id, &RpcError::method_not_found(method));
        };
        if let Some(m) = row
            && let Some(capability) = P::own_gate(self, m, Kind::Request)
        {
            let error = RpcError::method_not_found(method).with_data(json!({
                "method": method,
                "reason": format!("capability `{}` was not advertised", capability.join(".")),
            }));
            return self.reply_error(&id, &error);
        }
        // 6. Decode (unless the fast path already did).
        let request = match params {
            Params::Decoded(r) => r,
            Params::Raw(params) => match P::decode_request(self.side, method, row, params) {
                Ok(r) => r,
                Err(e) => return self.reply_error(&id, &e),
            },
        };
        // 7. Turn rules, and what must be remembered until the answer.
        if let Some(response) = P::auto_answer(self, &request) {
            self.machine_out += self.queue_response(&id, Ok(&response));
            return;
        }
        let extra = match P::inbound_extra(self, &request) {
            Ok(extra) => extra,
            Err(error) => return self.reply_error(&id, &error),
        };
        // 8. Dispatch, or defer while the output is full.
        let method = P::entry_method(method, row, &request);
        let entry = InboundEntry { wire_id: id, method, cancelled: None, deferred: false, grace: None, extra };
        let proxy = P::is_proxy(&request);
        self.dispatch_request::<P>(entry, frame.len(), request, |conn, extra| conn.on_dispatch(extra, proxy));
    }

    /// What dispatching a request starts: a handshake (`proxy`: a conductor's), the v2 session
    /// bookkeeping.
    fn on_dispatch(&mut self, extra: &InboundExtra, proxy: bool) {
        match extra {
            InboundExtra::Initialize(_) => {
                self.phase = Phase::Initializing;
                self.proxy_handshake = proxy;
            }
            #[cfg(feature = "unstable_protocol_v2")]
            InboundExtra::Session(effect) => self.v2.on_dispatch(effect),
            _ => {}
        }
    }

    /// Step 8 of an inbound request of either version: dispatched, or deferred while the
    /// output is full (no new work until the peer reads). `entry` is recorded under the next
    /// key (its `deferred` set here); `setup` is the version's bookkeeping for it (the
    /// handshake's phase, its turn rules), run first; `request` is what the application is told of.
    pub(super) fn dispatch_request<P: Protocol>(
        &mut self,
        mut entry: InboundEntry,
        frame_len: usize,
        request: P::Request,
        setup: impl FnOnce(&mut Self, &InboundExtra),
    ) {
        let defer = !self.can_send() || !self.deferred.is_empty();
        if defer && self.refuse_if_deferral_full(&entry.wire_id) {
            return;
        }
        let key = self.next_inbound;
        self.next_inbound += 1;
        setup(self, &entry.extra);
        self.note_dispatch(key, &entry.extra);
        self.by_wire.insert(entry.wire_id.clone(), key);
        entry.deferred = defer;
        self.inbound.insert(key, entry);
        if defer {
            if self.deferred.is_empty() {
                self.stats.output_pauses += 1;
            }
            self.stats.requests_deferred += 1;
            let event = Event::<P>::Request(super::InboundRequest::new(InboundId(key), request));
            self.deferred.push(key, P::into_any(event), frame_len);
        } else {
            self.push_typed(|| Event::<P>::Request(super::InboundRequest::new(InboundId(key), request)));
        }
        debug_assert_eq!(self.inbound.len(), self.by_wire.len());
        if self.input_ended {
            // Released from behind `initialize` after the end of input (module `half_close`).
            self.cancel_at_eof(key);
        }
    }

    /// Refuses request `id` when the requests already deferred fill `max_held_bytes` and input
    /// must go on anyway (this side awaits answers of the peer, which may come behind it);
    /// returns whether it did. Without outbound requests, input stops at that point instead
    /// ([`Connection::wants_input`]) and nothing is refused.
    pub(super) fn refuse_if_deferral_full(&mut self, id: &RequestId) -> bool {
        let limit = self.config.max_held_bytes;
        if self.deferred.bytes() < limit || self.outbound.is_empty() {
            return false;
        }
        self.stats.requests_shed += 1;
        let error = RpcError::internal_error("output queue full")
            .with_data(json!({"reason": "output queue full", "limit": limit}));
        self.reply_error(id, &error);
        true
    }

    /// The oldest deferred request, once the output is below the bound again.
    pub(super) fn release_deferred(&mut self) -> Option<AnyEvent> {
        if !self.can_send() {
            return None;
        }
        let (key, event) = self.deferred.pop()?;
        let entry = self.inbound.get_mut(&key);
        debug_assert!(entry.as_ref().is_some_and(|e| e.deferred), "a deferred request is in flight");
        if let Some(entry) = entry {
            entry.deferred = false;
        }
        Some(event)
    }

    /// Refuses request `id` with an internal error when `max_inbound` requests are in flight
    /// (dispatched or held); returns whether it did.
    fn shed_if_full(&mut self, id: &RequestId) -> bool {
        if self.inbound_in_flight() < self.config.max_inbound {
            return false;
        }
        self.stats.requests_shed += 1;
        let limit = self.config.max_inbound;
        let error = RpcError::internal_error("too many requests in flight")
            .with_data(json!({"reason": "too many requests in flight", "limit": limit}));
        self.reply_error(id, &error);
        true
    }

    /// Holds a request that arrived while the agent's `initialize` response is pending.
    fn hold(&mut self, id: RequestId, frame: &[u8]) {
        if self.shed_if_full(&id) {
            return;
        }
        self.held.push(id, frame);
    }

    /// Runs the held requests through the pipeline again (after a successful `initialize`
    /// response), or refuses each (after a failed one).
    fn release_held(&mut self, committed: bool) {
        for (id, frame) in self.held.take() {
            if committed {
                self.on_frame(&frame);
            } else {
                let error = handshake_error("", "initialize failed");
                self.reply_error(&id, &error);
            }
        }
    }

    fn on_notification(&mut self, method: &str, params: Option<&RawValue>) {
        if method == Method::CancelRequest.wire() {
            return self.on_peer_cancel_request(params);
        }
        if self.phase != Phase::Ready {
            self.stats.notifications_dropped += 1;
            return;
        }
        // The branch point: the version the connection speaks.
        #[cfg(feature = "unstable_protocol_v2")]
        if self.v2.active {
            return self.on_checked_notification::<V2>(method, params);
        }
        self.on_checked_notification::<V1>(method, params);
    }

    /// A notification after the handshake gate, one road for both versions: resolved, gated
    /// (v2), decoded and delivered; unknown ones are ignored, as the spec asks, and bad params
    /// cannot be answered: both are counted.
    fn on_checked_notification<P: Lane>(&mut self, method: &str, params: Option<&RawValue>) {
        let row = match P::resolve(self.side, method, Kind::Notification) {
            Ok(row) if row.is_none_or(|m| P::own_gate(self, m, Kind::Notification).is_none()) => row,
            _ => {
                self.stats.notifications_dropped += 1;
                return;
            }
        };
        match P::decode_notification(self.side, method, row, params) {
            Some(notification) => P::deliver(self, notification),
            None => self.stats.notifications_dropped += 1,
        }
    }

    /// Hands a decoded notification to its owner: the turn bookkeeping for `session/cancel`,
    /// the application for the rest.
    pub(super) fn deliver_notification(&mut self, notification: Notification) {
        if notification.method().map(|m| m.row().layer) == Some(Layer::SessionControl) {
            if let Notification::Client(crate::methods::ClientNotification::Cancel(c)) = &notification {
                self.agent_session_cancel(&c.session_id);
            }
            return;
        }
        let turn = self.turns.client_stamp(&notification);
        self.push_typed(|| Event::<V1>::Notification { notification, turn });
    }

    /// `$/cancel_request` from the peer: accepted in every phase; unknown or finished ids are
    /// ignored.
    fn on_peer_cancel_request(&mut self, params: Option<&RawValue>) {
        let Some(cancel) = params.and_then(|p| serde_json::from_str::<CancelRequestNotification>(p.get()).ok()) else {
            self.stats.notifications_dropped += 1;
            return;
        };
        let id = cancel.request_id;
        if let Some((id, _)) = self.held.remove(&id) {
            // Never dispatched: answer it now.
            self.reply_error(&id, &RpcError::request_cancelled());
            return;
        }
        let Some(&key) = self.by_wire.get(&id) else { return };
        let grace_at = self.now + self.config.cancel_grace;
        let Some(entry) = self.inbound.get_mut(&key) else { return };
        if entry.deferred {
            // The application never saw it: answer it now.
            self.answer_error(key, RpcError::request_cancelled());
            return;
        }
        if entry.cancelled.is_some() {
            return;
        }
        entry.cancelled = Some(CancelReason::CancelRequest);
        entry.grace = Some(grace_at);
        self.arm(grace_at, Timer::Grace(key));
        self.push_event(AnyEvent::Cancelled { id: InboundId(key), reason: CancelReason::CancelRequest });
    }

    /// The grace period of a cancelled request ended without a completion: the machine
    /// answers it itself.
    pub(super) fn grace_expired(&mut self, key: u64, at: Instant) {
        let Some(entry) = self.inbound.get(&key) else { return };
        if entry.grace != Some(at) {
            return;
        }
        let result = match entry.cancelled {
            Some(CancelReason::SessionCancelled) => Ok(cancelled_prompt(None)),
            _ => Err(RpcError::request_cancelled()),
        };
        self.answer::<V1>(key, result);
    }

    /// Completes an inbound request with the handler's result or error. See [`Completion`]
    /// for what happens when the request is no longer in flight.
    ///
    /// The result must be the result type of the request's method (in its version: a v1
    /// result cannot answer a v2 request, nor the other way round); client side, a permission
    /// answer must name an offered option. Either mistake is a bug of the application: the
    /// request still gets its one answer (`-32603` for a result of the wrong type, the
    /// `cancelled` outcome for an option that was not offered, which grants nothing) and the
    /// mistake is returned as an error. Agent side, a cancelled v1 prompt turn is answered
    /// `stopReason: "cancelled"` whatever the completion; a v2 `initialize` result says
    /// `protocolVersion: 2` and loses its `terminal` auth methods unless the client advertised
    /// `auth.terminal` (the docs: an agent may advertise one only then).
    ///
    /// After the end of input, the answer to the last request owed closes the connection
    /// ([`half_close`](super::half_close)).
    pub(crate) fn respond<P: Lane>(
        &mut self,
        now: Instant,
        id: InboundId,
        result: Result<P::Response, RpcError>,
    ) -> Result<Completion, RespondError> {
        self.advance(now);
        let completion = self.complete::<P>(id, result);
        self.close_if_answered();
        completion
    }

    /// [`respond`](Self::respond), before the half-close's check.
    fn complete<P: Lane>(
        &mut self,
        id: InboundId,
        mut result: Result<P::Response, RpcError>,
    ) -> Result<Completion, RespondError> {
        let Some(entry) = self.inbound.get(&id.0) else {
            return Ok(Completion::Discarded);
        };
        if let Ok(response) = &result {
            if let Some(mismatch) = P::mismatch(self.side, &entry.method, response) {
                self.answer_error(id.0, RpcError::internal_error(mismatch.to_string()));
                return mismatch.reported();
            }
            if let InboundExtra::Permission(_, offered) = &entry.extra
                && let Some(option) = P::selected_option(response)
                && !offered.contains(option)
            {
                let error = RespondError::UnknownPermissionOption(option.to_string());
                self.answer_result::<P>(id.0, &mut P::cancelled_ask());
                return Err(error);
            }
        }
        P::prepare(entry, &mut result);
        self.answer::<P>(id.0, result);
        Ok(Completion::Sent)
    }

    /// Removes the entry and queues its single response frame.
    pub(super) fn answer<P: Lane>(&mut self, key: u64, mut result: Result<P::Response, RpcError>) {
        // The result is answered where it lies: moving a response out of its `Result` is a
        // copy of several hundred bytes (bench/RESULTS.md, "The typed event queue").
        if let Ok(response) = &mut result {
            return self.answer_result::<P>(key, response);
        }
        if let Err(error) = result {
            self.answer_error(key, error);
        }
    }

    /// Removes the entry and queues its successful response frame, after the version's
    /// bookkeeping (the handshake, the turn rules).
    pub(super) fn answer_result<P: Lane>(&mut self, key: u64, response: &mut P::Response) {
        let Some(entry) = self.take_inbound(key) else { return };
        let committed = P::on_answer(self, key, &entry.extra, response);
        self.queue_response(&entry.wire_id, Ok(&*response));
        debug_assert_eq!(self.inbound.len(), self.by_wire.len());
        if let Some(committed) = committed {
            self.end_handshake(committed);
        }
    }

    /// Removes the entry and queues its error response frame: the same for both versions (a
    /// handshake fails, the turn rules forget the request).
    pub(super) fn answer_error(&mut self, key: u64, error: RpcError) {
        let Some(entry) = self.take_inbound(key) else { return };
        let committed = match &entry.extra {
            InboundExtra::Initialize(_) => Some(false),
            _ => None,
        };
        self.turns.on_answer(key, &entry.extra, false);
        #[cfg(feature = "unstable_protocol_v2")]
        if let InboundExtra::Session(effect) = &entry.extra {
            self.v2.on_answer(effect, None);
        }
        self.queue_response::<Response>(&entry.wire_id, Err(&error));
        debug_assert_eq!(self.inbound.len(), self.by_wire.len());
        if let Some(committed) = committed {
            self.end_handshake(committed);
        }
    }

    /// Removes inbound request `key` from every table (it is being answered).
    pub(super) fn take_inbound(&mut self, key: u64) -> Option<InboundEntry> {
        let entry = self.inbound.remove(&key)?;
        if entry.deferred {
            self.deferred.remove(key);
        }
        self.by_wire.remove(&entry.wire_id);
        self.disarm(entry.grace, Timer::Grace(key));
        #[cfg(feature = "unstable_protocol_v2")]
        self.batch_answering(key, &entry.wire_id);
        Some(entry)
    }

    /// Agent side: the `initialize` response was queued; the handshake commits (the
    /// negotiated values are set) or fails, and the held requests follow.
    pub(super) fn end_handshake(&mut self, committed: bool) {
        if committed {
            self.phase = Phase::Ready;
            if let Some(n) = self.negotiated.clone() {
                self.push_event(AnyEvent::HandshakeCompleted(n));
            }
            self.release_held(true);
        } else {
            self.phase = Phase::AwaitingInit;
            self.release_held(false);
        }
    }
}

/// A `-32600` naming the method and why the handshake refused it.
fn handshake_error(method: &str, reason: &str) -> RpcError {
    let mut error = RpcError::invalid_request(reason);
    if !method.is_empty() {
        error = error.with_data(json!({"method": method, "reason": reason}));
    }
    debug_assert_eq!(error.code, ErrorCode::INVALID_REQUEST);
    error
}

/// The answer to a cancelled prompt turn.
pub(super) fn cancelled_prompt(meta: Option<crate::types::Meta>) -> Response {
    let mut response = PromptResponse::new(StopReason::Cancelled);
    response.meta = meta;
    Response::Agent(AgentResponse::Prompt(response))
}
