//! The simulated agent application.

use crate::link::Event;
use acp_proto::types::*;
use acp_proto::{
    AgentRequest, AgentResponse, CancelReason, ClientRequest, Completion, InboundId, Method, Request, Response,
    RpcError, SendError, Side,
};
use serde_json::json;

use super::{Chooser, Out, Pending, Req, Sim, label_of, opt_in};

/// A prompt turn the agent application is running.
#[derive(Debug, Clone)]
pub(super) struct AgentTurn {
    pub(super) id: InboundId,
    pub(super) label: u64,
    /// The application saw the turn cancelled and sends nothing more for it.
    pub(super) cancelled: bool,
    pub(super) updates: u64,
}

impl<C: Chooser> Sim<'_, C> {
    // Without v2, the arms above cover every event: the catch-all is for the v2 ones.
    #[cfg_attr(not(feature = "unstable_protocol_v2"), allow(unreachable_patterns))]
    pub(super) fn agent_event(&mut self, event: Event) {
        match event {
            Event::Request { id, request } => {
                let label = label_of(&serde_json::to_value(&request).expect("serializes"));
                if let Some(l) = label {
                    self.model.dispatched.insert(l);
                }
                self.agent_check_unstable(&request);
                if let Request::Client(ClientRequest::Prompt(p)) = &request {
                    let s = p.session_id.as_str().to_owned();
                    if self.agent.sessions.contains(&s) {
                        // A turn the machine already ended (cancel grace) may still be running
                        // in the application; any other overlap is a violation.
                        let overlap = self.agent_turns.get(&s).is_some_and(|t| !t.cancelled);
                        assert!(!overlap, "two turns of {s} dispatched at once");
                        let turn = AgentTurn { id, label: label.unwrap_or(0), cancelled: false, updates: 0 };
                        self.agent_turns.insert(s, turn);
                    }
                }
                let ready_at = self.now + std::time::Duration::from_millis(self.c.range(0, 400));
                let method = request.method();
                let request = Req::V1(request);
                self.agent.handlers.push(Pending { id, label, method, request, ready_at, cancelled: false });
            }
            Event::Cancelled { id, reason } => {
                let pos = self.agent.handlers.iter().position(|h| h.id == id);
                let label = pos.and_then(|i| self.agent.handlers[i].label);
                if let Some(i) = pos {
                    self.agent.handlers[i].cancelled = true;
                }
                for turn in self.agent_turns.values_mut().filter(|t| t.id == id) {
                    turn.cancelled = true;
                }
                match reason {
                    CancelReason::SessionCancelled => {
                        let l = label.expect("a session cancel targets a pending prompt");
                        self.model.session_cancelled.insert(l);
                        self.agent.wire.must_cancel(l);
                        let s = self.agent_turns.iter().find(|(_, t)| t.id == id).map(|(s, _)| s.clone());
                        self.agent_cancelled_sessions.extend(s);
                    }
                    CancelReason::CancelRequest => {
                        if let Some(l) = label {
                            self.model.cancel_requested.insert(l);
                        }
                    }
                    _ => {}
                }
            }
            Event::Outcome { id, outcome } => self.check_outcome(Side::Agent, id, outcome),
            Event::Notification { .. } => {}
            Event::HandshakeCompleted(n) => {
                // The capabilities the agent committed to: checked against every fs/terminal
                // request it sends from now on.
                self.agent.wire.set_client_caps(n.peer.json().clone());
                self.agent.peer_caps = Some(n.peer.json().clone());
            }
            Event::Closed { reason } => (self.agent.closed, self.agent.close_reason) = (true, Some(reason)),
            #[cfg(feature = "unstable_protocol_v2")]
            Event::RequestV2 { id, request } => self.agent_request_v2(id, request),
            #[cfg(feature = "unstable_protocol_v2")]
            Event::NotificationV2 { notification, .. } => self.agent_notification_v2(notification),
            #[cfg(feature = "unstable_protocol_v2")]
            Event::CancelGraceExpired { session } => self.agent_grace_expired(session.as_str()),
            other => panic!("agent: unexpected event {other:?}"),
        }
    }

    pub(super) fn agent_complete(&mut self, pending: Pending) {
        let now = self.now;
        let label = pending.label.unwrap_or(0);
        let panicked = self.c.chance(1, 10);
        let Some(request) = pending.request.v1() else { return };
        let (result, reply): (Result<Response, RpcError>, Result<Option<String>, i64>) = match request {
            Request::Client(ClientRequest::Initialize(_)) => {
                let mut r = InitializeResponse::new(ProtocolVersion::V1);
                r.agent_capabilities.load_session = self.c.chance(1, 2);
                super::unstable::advertise(&mut self.c, &mut r.agent_capabilities);
                (Ok(r.into()), Ok(None))
            }
            _ if panicked => (Err(RpcError::internal_error("handler panicked")), Err(-32603)),
            Request::Client(ClientRequest::NewSession(_)) if self.c.chance(1, 10) => {
                (Err(RpcError::resource_not_found("no such directory")), Err(-32002))
            }
            Request::Client(ClientRequest::NewSession(_)) => {
                (Ok(NewSessionResponse::new(format!("s{label}")).into()), Ok(None))
            }
            Request::Client(ClientRequest::Prompt(_)) => {
                let stop = self.c.pick(&[StopReason::EndTurn, StopReason::MaxTokens, StopReason::Refusal]).clone();
                let tag = stop.as_str().to_owned();
                (Ok(PromptResponse::new(stop).into()), Ok(Some(tag)))
            }
            Request::Client(ClientRequest::Ext(e)) => {
                (Ok(Response::Agent(AgentResponse::Ext(acp_proto::ext::ExtResponse(e.params.clone())))), Ok(None))
            }
            Request::Client(_) if super::unstable::is_unstable(pending.method) => {
                let r = self.agent_unstable_result(pending.method.expect("an unstable row has a method"));
                let reply = r.as_ref().map(|_| None).map_err(|e| i64::from(e.code.0));
                (r, reply)
            }
            _ => (Err(RpcError::method_not_found(request.wire())), Err(-32601)),
        };
        let session_new = matches!(&result, Ok(Response::Agent(AgentResponse::NewSession(_))));
        let new_session = match &result {
            Ok(Response::Agent(AgentResponse::NewSession(n))) => Some(n.session_id.as_str().to_owned()),
            _ => None,
        };
        let before = self.agent.conn.bytes_queued();
        let r = self.agent.conn.respond::<acp_proto::V1>(now, pending.id, result);
        self.agent.note_app_output(before);
        self.log(format!("agent completes r{label} -> {r:?}"));
        if pending.method == Some(Method::Prompt) {
            self.agent_turns.retain(|_, t| t.id != pending.id);
        }
        match r {
            Ok(Completion::Sent) => {
                self.model.replies.entry(label).or_default().push(reply);
                if session_new && let Some(s) = new_session {
                    self.agent.sessions.push(s);
                }
            }
            Ok(Completion::Discarded) => {
                assert!(pending.cancelled || self.agent.conn.is_closed(), "a completion was discarded while in flight")
            }
            Err(e) => panic!("agent: typed result refused: {e}"),
        }
    }

    /// The agent application starts something: an update, a permission ask, an fs or
    /// terminal request, an extension request.
    pub(super) fn agent_start(&mut self) {
        if self.agent.closed || !self.agent.conn.is_ready() {
            return;
        }
        #[cfg(feature = "unstable_protocol_v2")]
        if self.speaks_v2(Side::Agent) {
            return self.agent_start_v2();
        }
        match self.c.below(8) {
            0..=2 => self.agent_update(),
            3 => self.agent_permission(),
            6 => self.agent_elicit(),
            7 => self.agent_complete_elicitation(),
            4 => {
                // Sometimes a burst: several answers then race for the client's output.
                for _ in 0..1 + self.c.below(4) {
                    self.agent_client_call();
                }
            }
            _ => {
                let label = self.label();
                let ext = AgentRequest::Ext(acp_proto::ext::ExtRequest::new("_sim/echo", json!({"label": label})));
                self.agent_send(label, ext.into(), None);
            }
        }
    }

    fn agent_update(&mut self) {
        let running: Vec<String> =
            self.agent_turns.iter().filter(|(_, t)| !t.cancelled).map(|(s, _)| s.clone()).collect();
        let choice = self.c.below(4);
        let (session, text, turn) = if choice < 2 && !running.is_empty() {
            let s = self.c.pick(&running).clone();
            let t = &self.agent_turns[&s];
            (s, format!("u{}:{}", t.label, t.updates), true)
        } else if choice < 3 && !self.agent.sessions.is_empty() {
            let s = self.c.pick(&self.agent.sessions).clone();
            (s, "u-:0".to_owned(), false)
        } else {
            ("never-announced".to_owned(), "u-:0".to_owned(), false)
        };
        // Sometimes an opt-in kind, which the gate lets out only to a client that advertised
        // its capability.
        let opt_in = self.c.chance(1, 4);
        let update = if opt_in {
            opt_in::opt_in_update(&mut self.c, text)
        } else {
            SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(text))))
        };
        let needed = opt_in::needed_by_update(&update);
        let advertised = needed.is_none_or(|path| opt_in::advertises(self.agent.peer_caps.as_ref(), path));
        let before = self.agent.conn.bytes_queued();
        let sent: acp_proto::Notification = SessionNotification::new(session.as_str(), update).into();
        let r = self.agent.conn.send_notification::<acp_proto::V1>(self.now, sent.clone()).map_err(|refused| {
            assert_eq!(refused.message, sent, "a refused notification comes back untouched");
            refused.error
        });
        self.agent.note_app_output(before);
        self.log(format!("agent update {session} opt-in {needed:?} -> {r:?}"));
        let known = self.agent.sessions.contains(&session);
        if let Some(path) = needed {
            if !advertised {
                assert!(
                    matches!(r, Err(SendError::NotSupportedByPeer { capability, .. }) if capability == path),
                    "{path:?} content to a client that did not advertise it: {r:?}"
                );
                self.summary.opt_in.updates_refused += 1;
                return;
            }
            self.summary.opt_in.updates_sent += u64::from(r.is_ok());
        }
        match r {
            Ok(()) => {
                assert!(known, "an update for an unannounced session was accepted");
                if turn
                    && !opt_in
                    && let Some(t) = self.agent_turns.get_mut(&session)
                {
                    t.updates += 1;
                    *self.model.turn_updates.entry(t.label).or_default() += 1;
                }
            }
            Err(SendError::UnknownSession(_)) => assert!(!known, "an update for an announced session was refused"),
            Err(SendError::Backpressure { .. }) => {}
            Err(e) => panic!("agent: update refused: {e}"),
        }
    }

    fn agent_permission(&mut self) {
        let sessions: Vec<String> = self.agent_turns.keys().cloned().collect();
        if sessions.is_empty() {
            return;
        }
        let s = self.c.pick(&sessions).clone();
        let label = self.label();
        let options = vec![
            PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        ];
        let req = RequestPermissionRequest::new(s.as_str(), ToolCallUpdate::new(format!("r{label}")), options);
        let deadline = self.deadline();
        self.agent_send(label, AgentRequest::from(req).into(), deadline);
    }

    fn agent_client_call(&mut self) {
        if self.agent.sessions.is_empty() {
            return;
        }
        let s = self.c.pick(&self.agent.sessions).clone();
        let label = self.label();
        let request: Request = match self.c.below(3) {
            0 => ReadTextFileRequest::new(s.as_str(), format!("/r{label}")).into(),
            1 => WriteTextFileRequest::new(s.as_str(), format!("/r{label}"), "x").into(),
            _ => CreateTerminalRequest::new(s.as_str(), format!("r{label}")).into(),
        };
        let deadline = self.deadline();
        self.agent_send(label, request, deadline);
    }

    pub(super) fn agent_send(&mut self, label: u64, request: Request, deadline: Option<acp_proto::Instant>) {
        let method = request.method();
        let session = request.session_id().map(|s| s.as_str().to_owned());
        let caps = self.agent.peer_caps.as_ref();
        let allowed = match (method, caps) {
            (Some(m), Some(_)) => {
                let path = m.row().gate;
                let content = match &request {
                    Request::Agent(AgentRequest::CreateElicitation(e)) => opt_in::needed_by_elicitation(e),
                    _ => &[],
                };
                (path.is_empty() || opt_in::advertises(caps, path))
                    && (content.is_empty() || opt_in::advertises(caps, content))
            }
            _ => true,
        };
        let elicitation = method == Some(Method::CreateElicitation);
        let before = self.agent.conn.bytes_queued();
        let sent = request.clone();
        let r = self.agent.conn.send_request::<acp_proto::V1>(self.now, request, deadline).map_err(|refused| {
            assert_eq!(refused.message, sent, "a refused request comes back untouched");
            refused.error
        });
        self.agent.note_app_output(before);
        self.log(format!("agent send {method:?} r{label} -> {r:?}"));
        match r {
            Ok(id) => {
                assert!(allowed, "a request the client did not advertise was accepted");
                self.summary.opt_in.elicitations_sent += u64::from(elicitation);
                self.agent.outstanding.insert(id, Out { label, method, deadline, session, locally_cancelled: false });
            }
            Err(SendError::NotSupportedByPeer { .. }) => {
                assert!(!allowed, "an advertised request was refused");
                self.summary.opt_in.elicitations_refused += u64::from(elicitation);
            }
            Err(SendError::Backpressure { .. } | SendError::TooManyPending { .. }) => {}
            Err(e) => panic!("agent: unexpected refusal {e}"),
        }
    }
}
