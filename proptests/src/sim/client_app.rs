//! The simulated client application, and the outcome checks against the model.

use crate::link::{Event, Outcome};
use acp_proto::types::*;
use acp_proto::{
    AgentNotification, AgentRequest, AgentResponse, CancelReason, ClientNotification, ClientRequest, ClientResponse,
    Completion, Method, Notification, OutboundId, PermissionAnswer, Request, Response, RpcError, SendError, Side,
};
use serde_json::json;

use super::{BIG_ANSWER, Chooser, Out, Pending, Req, Sim, label_of, opt_in};

/// The client's view of a prompt turn it has open.
#[derive(Debug, Clone)]
pub(super) struct OpenTurn {
    pub(super) id: OutboundId,
    pub(super) label: u64,
    pub(super) ordinal: u64,
}

impl<C: Chooser> Sim<'_, C> {
    pub(super) fn deadline(&mut self) -> Option<acp_proto::Instant> {
        if self.c.chance(1, 2) {
            None
        } else {
            Some(self.now + std::time::Duration::from_millis(self.c.range(1, 1500)))
        }
    }

    pub(super) fn client_start_handshake(&mut self) {
        #[cfg(feature = "unstable_protocol_v2")]
        if self.config.protocol == super::Protocol::V2 {
            return self.client_handshake_v2();
        }
        let mut init = InitializeRequest::new(ProtocolVersion::V1);
        init.client_capabilities = opt_in::client_capabilities(&mut self.c);
        let label = self.label();
        let deadline = if self.c.chance(1, 4) { self.deadline() } else { None };
        let r = self.client.conn.send_request::<acp_proto::V1>(self.now, init, deadline).map_err(|r| r.error);
        self.log(format!("client initialize r{label} -> {r:?}"));
        match r {
            Ok(id) => {
                let out =
                    Out { label, method: Some(Method::Initialize), deadline, session: None, locally_cancelled: false };
                self.client.outstanding.insert(id, out);
            }
            Err(e) => self.client_handshake_refused(e),
        }
    }

    /// A (re)handshake the client's machine refused: its output is full (the answers to the
    /// agent's early input fill it: the message comes back and the application tries again
    /// later, from `client_start`), or the connection closed. Anything else is a violation.
    pub(super) fn client_handshake_refused(&mut self, e: SendError) {
        match e {
            SendError::Backpressure { .. } => assert!(!self.client.conn.can_send(), "Backpressure while it can send"),
            // A retry after the agent committed and the client's outcome was lost.
            SendError::AlreadyInitialized => assert!(self.client.conn.negotiated().is_none()),
            SendError::Closed => assert!(self.client.conn.is_closed()),
            e => panic!("client: initialize refused: {e}"),
        }
    }

    /// The client application starts something.
    pub(super) fn client_start(&mut self) {
        if self.client.closed {
            return;
        }
        let initializing = self.client.outstanding.values().any(|o| o.method == Some(Method::Initialize));
        if !self.client.conn.is_ready() && !initializing && self.c.chance(3, 4) {
            // The handshake failed (cancelled, timed out, refused): try again.
            return self.client_start_handshake();
        }
        #[cfg(feature = "unstable_protocol_v2")]
        if self.speaks_v2(Side::Client) {
            return self.client_start_v2();
        }
        let label = self.label();
        let deadline = self.deadline();
        let now = self.now;
        let (request, session): (Request, Option<String>) = match self.c.below(6) {
            0 | 1 => (NewSessionRequest::new(format!("/r{label}"), vec![]).into(), None),
            2 | 3 if !self.client.sessions.is_empty() => {
                let s = self.c.pick(&self.client.sessions).clone();
                let text = ContentBlock::Text(TextContent::new(format!("r{label}")));
                (PromptRequest::new(s.as_str(), vec![text]).into(), Some(s))
            }
            4 => {
                let n = Notification::Client(ClientNotification::Ext(acp_proto::ext::ExtNotification::new(
                    "_sim/note",
                    json!({"label": label}),
                )));
                let before = self.client.conn.bytes_queued();
                let r = self.client.conn.send_notification::<acp_proto::V1>(now, n).map_err(SendError::from);
                self.client.note_app_output(before);
                self.log(format!("client note -> {r:?}"));
                if self.client.conn.is_ready() {
                    assert!(matches!(r, Ok(()) | Err(SendError::Backpressure { .. })), "{r:?}");
                }
                return;
            }
            _ => {
                let ext = acp_proto::ext::ExtRequest::new("_sim/echo", json!({"label": label}));
                (ClientRequest::Ext(ext).into(), None)
            }
        };
        let method = request.method();
        let open_turn = session.as_ref().is_some_and(|s| self.client_turns.contains_key(s));
        let before = self.client.conn.bytes_queued();
        let sent = request.clone();
        let result = self.client.conn.send_request::<acp_proto::V1>(now, request, deadline).map_err(|refused| {
            assert_eq!(refused.message, sent, "a refused request comes back untouched");
            refused.error
        });
        self.client.note_app_output(before);
        self.log(format!("client send {method:?} r{label} -> {result:?}"));
        match result {
            Ok(id) => {
                assert!(self.client.conn.is_ready(), "a request other than initialize went out before the handshake");
                assert!(!open_turn, "a second prompt was accepted while a turn ran");
                if method == Some(Method::Prompt)
                    && let Some(s) = &session
                {
                    self.client_turns.insert(s.clone(), super::client_app::OpenTurn { id, label, ordinal: 0 });
                }
                self.client.outstanding.insert(id, Out { label, method, deadline, session, locally_cancelled: false });
            }
            Err(SendError::NotInitialized) => assert!(!self.client.conn.is_ready()),
            Err(SendError::TurnAlreadyRunning(_)) => assert!(open_turn),
            Err(SendError::Backpressure { .. } | SendError::TooManyPending { .. }) => {}
            Err(SendError::Closed) => assert!(self.client.conn.is_closed()),
            Err(e) => panic!("client: unexpected refusal {e}"),
        }
    }

    pub(super) fn client_cancel_turn(&mut self) {
        let sessions: Vec<String> = self.client_turns.keys().cloned().collect();
        #[cfg(feature = "unstable_protocol_v2")]
        if self.speaks_v2(Side::Client) {
            return self.client_cancel_turn_v2();
        }
        if sessions.is_empty() || !self.client.conn.is_ready() {
            return;
        }
        let s = self.c.pick(&sessions).clone();
        self.client_cancelled_sessions.insert(s.clone());
        let r = self.client.conn.cancel_turn(self.now, &SessionId::from(s.as_str()));
        self.log(format!("client cancel_turn {s} -> {r:?}"));
        let answered = r.expect("cancel_turn is accepted when ready");
        let asks: Vec<&Pending> = self
            .client
            .handlers
            .iter()
            .filter(|h| matches!(h.request.v1(), Some(Request::Agent(AgentRequest::RequestPermission(p))) if p.session_id.as_str() == s))
            .collect();
        self.check_cancel_turn_answers(&s, &asks, answered);
    }

    /// `cancel_turn` of `session` answered `answered` asks (the `turns` rule table): every ask
    /// the application holds (`asks`; one cancelled by `$/cancel_request` may already have
    /// been answered `-32800` by the machine, its grace passed), and the ones the machine
    /// received but has not shown it (deferred while the output was full), which it answers
    /// silently and never shows: at most the asks read from the wire and not answered there
    /// yet that the application does not hold. (Were one shown afterwards, the application's
    /// answer would be discarded although not cancelled: `client_complete` fails on that.)
    pub(super) fn check_cancel_turn_answers(&self, session: &str, asks: &[&Pending], answered: usize) {
        let held: std::collections::BTreeSet<Option<u64>> = self.client.handlers.iter().map(|h| h.label).collect();
        let unseen = self.client.wire.open_asks(session).filter(|l| !held.contains(l)).count();
        let surely_in_flight = asks.iter().filter(|h| !h.cancelled).count();
        assert!(
            (surely_in_flight..=asks.len() + unseen).contains(&answered),
            "cancel_turn must answer every pending permission ask of the session: {answered}, the application holds {} ({surely_in_flight} not cancelled), {unseen} more read and unanswered",
            asks.len()
        );
    }

    // Without v2, the arms above cover every event: the catch-all is for the v2 ones.
    #[cfg_attr(not(feature = "unstable_protocol_v2"), allow(unreachable_patterns))]
    pub(super) fn client_event(&mut self, event: Event) {
        #[cfg(feature = "unstable_protocol_v2")]
        self.client_check_turn_end_follows(&event);
        match event {
            Event::Request { id, request } => {
                let label = label_of(&serde_json::to_value(&request).expect("serializes"));
                if let Some(l) = label {
                    self.model.dispatched.insert(l);
                }
                if let Request::Agent(AgentRequest::CreateElicitation(e)) = &request {
                    self.client_check_elicitation(e);
                }
                let ready_at = self.now + std::time::Duration::from_millis(self.c.range(0, 300));
                let method = request.method();
                let request = Req::V1(request);
                self.client.handlers.push(Pending { id, label, method, request, ready_at, cancelled: false });
            }
            Event::Notification { notification, turn } => self.client_notification(notification, turn),
            Event::Cancelled { id, reason } => {
                let pos = self.client.handlers.iter().position(|h| h.id == id);
                match reason {
                    CancelReason::TurnCancelled => {
                        // The machine answered it `cancelled`; the application stops.
                        let h = self.client.handlers.remove(pos.expect("a pending permission ask"));
                        if let Some(l) = h.label {
                            self.model.replies.entry(l).or_default().push(Ok(Some("cancelled".into())));
                        }
                    }
                    CancelReason::CancelRequest => {
                        if let Some(i) = pos {
                            self.client.handlers[i].cancelled = true;
                            if let Some(l) = self.client.handlers[i].label {
                                self.model.cancel_requested.insert(l);
                            }
                        }
                    }
                    _ => {
                        if let Some(i) = pos {
                            self.client.handlers[i].cancelled = true;
                        }
                    }
                }
            }
            Event::Outcome { id, outcome } => self.check_outcome(Side::Client, id, outcome),
            Event::HandshakeCompleted(n) => {
                #[cfg(feature = "unstable_protocol_v2")]
                self.client_handshake_completed_v2(&n);
                self.client.peer_caps = Some(n.peer.json().clone())
            }
            Event::Closed { reason } => (self.client.closed, self.client.close_reason) = (true, Some(reason)),
            #[cfg(feature = "unstable_protocol_v2")]
            Event::RequestV2 { id, request } => self.client_request_v2(id, request),
            #[cfg(feature = "unstable_protocol_v2")]
            Event::NotificationV2 { notification, turn } => self.client_notification_v2(notification, turn),
            #[cfg(feature = "unstable_protocol_v2")]
            Event::TurnEnded { session, turn, reason } => self.client_turn_ended(session, turn, reason),
            other => panic!("client: unexpected event {other:?}"),
        }
    }

    fn client_notification(&mut self, notification: Notification, turn: Option<acp_proto::TurnStamp>) {
        // The gate invariant: never received what was not advertised.
        self.client_check_opt_in(&notification);
        let Notification::Agent(AgentNotification::SessionUpdate(n)) = notification else { return };
        let s = n.session_id.as_str().to_owned();
        let text = match &n.update {
            SessionUpdate::AgentMessageChunk(c) => match &c.content {
                ContentBlock::Text(t) => t.text.clone(),
                _ => String::new(),
            },
            _ => String::new(),
        };
        // "u<L>:<i>" inside the agent's turn L, "u-:<i>" outside any turn.
        let update_label: Option<u64> =
            text.strip_prefix('u').and_then(|r| r.split(':').next()).and_then(|l| l.parse().ok());
        let open = self.client_turns.get_mut(&s);
        match (turn, open) {
            (Some(stamp), Some(open)) => {
                assert_eq!(stamp.turn, open.id, "update stamped with a turn that is not the session's open turn");
                assert_eq!(stamp.ordinal, open.ordinal, "turn ordinals must be contiguous");
                open.ordinal += 1;
                if let Some(l) = update_label
                    && !self.client_abandoned.contains(&l)
                {
                    assert_eq!(l, open.label, "an update of turn r{l} was stamped into turn r{}", open.label);
                    *self.model.turn_received.entry(l).or_default() += 1;
                }
            }
            (Some(stamp), None) => panic!("update stamped {stamp:?} but session {s} has no open turn"),
            (None, open) => {
                if let (Some(l), Some(open)) = (update_label, open) {
                    assert_ne!(l, open.label, "an update of the open turn r{l} arrived unstamped");
                }
            }
        }
    }

    pub(super) fn client_complete(&mut self, pending: Pending) {
        let now = self.now;
        let label = pending.label.unwrap_or(0);
        let Some(request) = pending.request.v1() else { return };
        let (result, reply): (Result<Response, RpcError>, Result<Option<String>, i64>) = match request {
            Request::Agent(AgentRequest::RequestPermission(p)) => {
                let answer = match self.c.below(4) {
                    0 => PermissionAnswer::Cancelled,
                    _ => PermissionAnswer::Selected(self.c.pick(&p.options).option_id.clone()),
                };
                let before = self.client.conn.bytes_queued();
                let r = self.client.conn.answer_permission(now, pending.id, answer.clone());
                self.client.note_app_output(before);
                self.log(format!("client answers permission r{label} {answer:?} -> {r:?}"));
                if r == Ok(Completion::Sent) {
                    let tag = match answer {
                        PermissionAnswer::Cancelled => "cancelled".to_owned(),
                        PermissionAnswer::Selected(o) => o.to_string(),
                    };
                    self.model.replies.entry(label).or_default().push(Ok(Some(tag)));
                }
                assert!(r.is_ok(), "an offered option is always accepted");
                return;
            }
            _ if self.c.chance(1, 8) => (Err(RpcError::internal_error("handler panicked")), Err(-32603)),
            Request::Agent(AgentRequest::ReadTextFile(_)) => {
                // Some files are big: answers alone can fill the output (invariant 11).
                let pad = if self.c.chance(1, 3) { BIG_ANSWER } else { 0 };
                (Ok(ReadTextFileResponse::new(format!("c{label}{}", " ".repeat(pad))).into()), Ok(None))
            }
            Request::Agent(AgentRequest::WriteTextFile(_)) => (Ok(WriteTextFileResponse::default().into()), Ok(None)),
            Request::Agent(AgentRequest::CreateTerminal(_)) => {
                (Ok(CreateTerminalResponse::new(format!("t{label}")).into()), Ok(None))
            }
            Request::Agent(AgentRequest::CreateElicitation(_)) => {
                self.summary.opt_in.elicitations_answered += 1;
                let (answer, tag) = match self.c.below(3) {
                    0 => (CreateElicitationResponse::accept(Default::default()), "accept"),
                    1 => (CreateElicitationResponse::decline(), "decline"),
                    _ => (CreateElicitationResponse::cancel(), "cancel"),
                };
                (Ok(answer.into()), Ok(Some(tag.to_owned())))
            }
            Request::Agent(AgentRequest::Ext(e)) => {
                (Ok(Response::Client(ClientResponse::Ext(acp_proto::ext::ExtResponse(e.params.clone())))), Ok(None))
            }
            _ => (Err(RpcError::method_not_found(request.wire())), Err(-32601)),
        };
        let before = self.client.conn.bytes_queued();
        let r = self.client.conn.respond::<acp_proto::V1>(now, pending.id, result);
        self.client.note_app_output(before);
        self.log(format!("client completes r{label} -> {r:?}"));
        match r {
            Ok(Completion::Sent) => self.model.replies.entry(label).or_default().push(reply),
            Ok(Completion::Discarded) => {
                assert!(pending.cancelled || self.client.conn.is_closed(), "a completion was discarded while in flight")
            }
            Err(e) => panic!("client: typed result refused: {e}"),
        }
    }

    /// Checks one outcome against the model (invariant 1).
    pub(super) fn check_outcome(&mut self, side: Side, id: OutboundId, outcome: Outcome) {
        self.summary.outcomes += 1;
        let peer = self.peer(side);
        let out = peer.outstanding.remove(&id).unwrap_or_else(|| panic!("{side:?}: outcome for {id}, which had one"));
        let closed = peer.conn.is_closed();
        let label = out.label;
        if super::unstable::is_unstable(out.method) && matches!(outcome, Outcome::Result(_)) {
            self.summary.unstable.results += 1;
            if let Some(m) = out.method {
                self.summary.unstable.by_method.entry(m.row().wire).or_default().1 += 1;
            }
        }
        if side == Side::Client
            && out.method == Some(Method::Prompt)
            && let Some(s) = &out.session
            && self.client_turns.get(s).is_some_and(|t| t.id == id)
        {
            self.client_turns.remove(s);
            if matches!(outcome, Outcome::TimedOut | Outcome::Cancelled | Outcome::ConnectionClosed) {
                // The agent may still be running it: its updates can land in a later turn.
                self.client_abandoned.insert(label);
            }
        }
        let replies = self.model.replies.get(&label).cloned().unwrap_or_default();
        let dispatched = self.model.dispatched.contains(&label);
        #[cfg(feature = "unstable_protocol_v2")]
        let seen = outcome.clone();
        match outcome {
            Outcome::TimedOut => assert_eq!(out.deadline, Some(self.now), "{side:?}: {id} timed out off its deadline"),
            Outcome::Cancelled => {
                let cascade = side == Side::Agent
                    && out.session.as_ref().is_some_and(|s| self.agent_cancelled_sessions.contains(s));
                assert!(out.locally_cancelled || cascade, "{side:?}: {id} cancelled without a cancel");
                #[cfg(feature = "unstable_protocol_v2")]
                if cascade && !out.locally_cancelled && self.speaks_v2(side) {
                    self.summary.v2.asks[1] += 1;
                }
            }
            Outcome::ConnectionClosed => {
                let ended = self.peer(side).conn.input_ended();
                assert!(
                    closed || ended,
                    "{side:?}: {id} got ConnectionClosed on an open connection before its input ended"
                );
            }
            Outcome::Result(response) => {
                assert_eq!(response.method(), out.method, "{side:?}: result of the wrong method for {id}");
                self.check_result(side, &out, &response, &replies);
            }
            Outcome::Error(e) => {
                let code = i64::from(e.code.0);
                // The receiver's input ended: it cancels what it read before (invariant 12).
                let receiver_ended = self.peer(side.peer()).conn.input_ended();
                let ok = replies.contains(&Err(code))
                    || (code == -32800 && (self.model.cancel_requested.contains(&label) || receiver_ended))
                    || (code == -32800 && !dispatched && self.v2_prompt_cancelled_while_deferred(side, &out))
                    || ((!dispatched || self.model.duplicated.contains(&label))
                        && [-32600, -32601, -32602, -32603].contains(&code));
                assert!(ok, "{side:?}: {id} (r{label}) failed with {e}, replies {replies:?}, dispatched {dispatched}");
                if out.method == Some(Method::Prompt) {
                    self.check_turn_complete(label);
                }
            }
            #[cfg(feature = "unstable_protocol_v2")]
            Outcome::ResultV2(response) => self.check_result_v2(side, id, &out, &response, &replies),
            Outcome::InvalidResult(e) => panic!("{side:?}: {id} got an invalid result: {e}"),
        }
        #[cfg(feature = "unstable_protocol_v2")]
        self.after_outcome_v2(side, id, &seen);
    }

    /// v2: a prompt the agent deferred (its output was full) whose session the client cancelled
    /// before it was dispatched is answered `-32800` by the agent's machine itself.
    fn v2_prompt_cancelled_while_deferred(&self, side: Side, out: &Out) -> bool {
        #[cfg(feature = "unstable_protocol_v2")]
        if side == Side::Client && self.speaks_v2(side) {
            return out.session.as_ref().is_some_and(|s| self.client_cancelled_sessions.contains(s));
        }
        let _ = (side, out);
        false
    }

    fn check_result(&mut self, side: Side, out: &Out, response: &Response, replies: &[Result<Option<String>, i64>]) {
        let label = out.label;
        match response {
            Response::Agent(AgentResponse::Prompt(p)) => {
                let stop = p.stop_reason.as_str().to_owned();
                // A prompt deferred by the agent (its output was full) and cancelled before it
                // was dispatched is answered `cancelled` by the agent's machine itself.
                let cancelled_while_deferred = stop == "cancelled"
                    && !self.model.dispatched.contains(&label)
                    && out.session.as_ref().is_some_and(|s| self.client_cancelled_sessions.contains(s));
                if self.model.session_cancelled.contains(&label) {
                    assert_eq!(stop, "cancelled", "a turn cancelled by session/cancel ended {stop}");
                } else if !cancelled_while_deferred {
                    assert!(
                        replies.contains(&Ok(Some(stop.clone()))),
                        "turn r{label} ended {stop}, replies {replies:?}"
                    );
                }
                self.check_turn_complete(label);
            }
            Response::Client(ClientResponse::RequestPermission(p)) => {
                let tag = match &p.outcome {
                    RequestPermissionOutcome::Cancelled => "cancelled".to_owned(),
                    RequestPermissionOutcome::Selected(s) => s.option_id.to_string(),
                    other => panic!("unknown permission outcome {other:?}"),
                };
                // The client machine answers asks that cross its cancel itself.
                let crossed = tag == "cancelled"
                    && out.session.as_ref().is_some_and(|s| self.client_cancelled_sessions.contains(s));
                assert!(
                    crossed || replies.contains(&Ok(Some(tag.clone()))),
                    "permission r{label} answered {tag}, replies {replies:?}"
                );
            }
            Response::Client(ClientResponse::CreateElicitation(e)) => {
                // Every elicitation gets exactly one answer (its outcome was taken out of
                // `outstanding` once), and it is the one the client application gave.
                self.summary.opt_in.elicitation_outcomes += 1;
                let tag = match &e.action {
                    ElicitationAction::Accept(_) => "accept",
                    ElicitationAction::Decline => "decline",
                    ElicitationAction::Cancel => "cancel",
                    other => panic!("unknown elicitation action {other:?}"),
                };
                assert!(
                    replies.contains(&Ok(Some(tag.to_owned()))),
                    "elicitation r{label} answered {tag}, replies {replies:?}"
                );
            }
            Response::Agent(AgentResponse::Initialize(_)) | Response::Agent(AgentResponse::NewSession(_)) => {
                if let Response::Agent(AgentResponse::NewSession(n)) = response {
                    assert!(replies.contains(&Ok(None)), "session/new r{label} succeeded, replies {replies:?}");
                    self.client.sessions.push(n.session_id.as_str().to_owned());
                }
            }
            _ => assert!(replies.contains(&Ok(None)), "{side:?}: r{label} succeeded, replies {replies:?}"),
        }
    }

    /// A prompt answered on the wire: the client saw every update the agent sent for it.
    fn check_turn_complete(&self, label: u64) {
        let sent = self.model.turn_updates.get(&label).copied().unwrap_or(0);
        let received = self.model.turn_received.get(&label).copied().unwrap_or(0);
        assert_eq!(
            received, sent,
            "turn r{label}: the agent sent {sent} updates before answering, the client saw {received}"
        );
    }
}
