//! The simulated v2 agent application (feature `unstable_protocol_v2`; see `v2`).

use acp_proto::v2::{self, ClientNotification, ClientRequest};
use acp_proto::{Completion, InboundId, RpcError, SendError};
use serde_json::{Value, json};

use super::v2::{tool_effect, typed};
use super::{Chooser, Out, Pending, Req, Sim, label_of};

/// What a successful answer of the agent application changes in its own state.
pub(super) enum Effect {
    None,
    Announced(String),
    Working(String),
    /// A tool call (`tool:<id>`) or terminal (`term:<id>`) of the session was cancelled.
    Cancelled(String, String),
    /// The session was closed (`false`) or deleted (`true`).
    Forget(String, bool),
    /// Logged in (`true`) or out.
    LoggedIn(bool),
    /// Not answered now: the handler runs again later.
    Retry,
}

/// An answer of the agent application: the result, the model's reply, the effect.
pub(super) type Reply = (Result<v2::Response, RpcError>, Result<Option<String>, i64>, Effect);

impl<C: Chooser> Sim<'_, C> {
    /// Agent: a v2 request arrived.
    pub(super) fn agent_request_v2(&mut self, id: InboundId, request: v2::Request) {
        let label = label_of(&serde_json::to_value(&request).expect("serializes"));
        if let Some(l) = label {
            self.model.dispatched.insert(l);
        }
        let ready_at = self.now + std::time::Duration::from_millis(self.c.range(0, 400));
        let request = Req::V2(request);
        self.agent.handlers.push(Pending { id, label, method: None, request, ready_at, cancelled: false });
    }

    /// Agent: a v2 notification arrived (`session/cancel`).
    pub(super) fn agent_notification_v2(&mut self, notification: v2::Notification) {
        self.agent_prune_graces();
        let v2::Notification::Client(ClientNotification::Cancel(c)) = notification else { return };
        self.summary.v2.session_cancels[1] += 1;
        let s = c.session_id.as_str().to_owned();
        if let Some(cancelled_at @ None) = self.v2.agent_working.get_mut(&s) {
            // The machine arms its grace and cancels the session's asks: the application will
            // end the work (or the machine will, at the grace).
            *cancelled_at = Some(self.now);
            let next = self.v2.agent_seq.get(&s).copied().unwrap_or(0);
            self.v2.must_say_cancelled.insert(s.clone(), next);
            self.agent_cancel_elicitations(&s);
            self.agent_cancelled_sessions.insert(s);
        }
    }

    /// Agent: the machine ended cancelled work by its grace idle (`Event::CancelGraceExpired`):
    /// only for a session whose work a `session/cancel` reached, once its grace passed.
    pub(super) fn agent_grace_expired(&mut self, session: &str) {
        assert!(self.agent_cancelled_sessions.contains(session), "agent: grace end of {session}, never cancelled");
        let grace = self.agent.conn.config().turn_cancel_grace;
        if let Some(at) = self.v2.agent_working.remove(session) {
            let at = at.unwrap_or_else(|| panic!("agent: grace end of {session}, whose work was not cancelled"));
            assert!(self.now >= at + grace, "agent: grace end of {session} before its grace passed");
        }
        self.summary.v2.grace_ends += 1;
    }

    /// Agent: forgets work whose cancel grace passed (the machine sent its idle then).
    fn agent_prune_graces(&mut self) {
        let grace = self.agent.conn.config().turn_cancel_grace;
        let now = self.now;
        self.v2.agent_working.retain(|_, at| at.is_none_or(|at| now < at + grace));
    }

    /// Agent: answers a v2 request.
    pub(super) fn agent_complete_v2(&mut self, pending: Pending, request: v2::Request) {
        self.agent_prune_graces();
        let label = pending.label.unwrap_or(0);
        let panicked = self.c.chance(1, 10);
        let (result, reply, effect): Reply = match &request {
            v2::Request::Client(ClientRequest::Initialize(_)) => self.agent_initialize_reply(),
            _ if panicked => (Err(RpcError::internal_error("handler panicked")), Err(-32603), Effect::None),
            v2::Request::Client(ClientRequest::NewSession(_)) if self.v2.agent_auth && !self.v2.agent_logged_in => {
                self.summary.v2.auth[3] += 1;
                (Err(RpcError::auth_required()), Err(-32000), Effect::None)
            }
            v2::Request::Client(ClientRequest::NewSession(_)) if self.c.chance(1, 10) => {
                (Err(RpcError::resource_not_found("no such directory")), Err(-32002), Effect::None)
            }
            v2::Request::Client(ClientRequest::NewSession(_)) => {
                // A fresh id each time (a duplicated `session/new` frame is a new session).
                self.v2.next_tool += 1;
                let s = format!("s{label}.{}", self.v2.next_tool);
                let r = typed::<v2::NewSessionResponse>(json!({"sessionId": s}));
                (Ok(r.into()), Ok(None), Effect::Announced(s))
            }
            v2::Request::Client(ClientRequest::Prompt(p))
                if !self.agent.sessions.contains(&p.session_id.to_string()) =>
            {
                (Err(RpcError::resource_not_found("no such session")), Err(-32002), Effect::None)
            }
            v2::Request::Client(ClientRequest::Prompt(p)) => {
                let s = p.session_id.as_str().to_owned();
                let r = typed::<v2::PromptResponse>(json!({"messageId": format!("ack:{s}:{label}")}));
                (Ok(r.into()), Ok(Some("ack".into())), Effect::Working(s))
            }
            v2::Request::Client(ClientRequest::CancelToolCall(r)) => {
                self.agent_cancel_reply(r.session_id.as_str(), format!("tool:{}", r.tool_call_id))
            }
            v2::Request::Client(ClientRequest::CancelTerminal(r)) => {
                self.agent_cancel_reply(r.session_id.as_str(), format!("term:{}", r.terminal_id))
            }
            other => self.agent_lifecycle_reply(other, &pending),
        };
        if matches!(effect, Effect::Retry) {
            self.log(format!("agent retries r{label} later"));
            return self.agent.handlers.push(pending);
        }
        let before = self.agent.conn.bytes_queued();
        let r = self.agent.conn.respond::<acp_proto::V2>(self.now, pending.id, result);
        self.agent.note_app_output(before);
        self.log(format!("agent completes v2 r{label} -> {r:?}"));
        match r {
            Ok(Completion::Sent) => {
                self.model.replies.entry(label).or_default().push(reply);
                self.agent_apply(effect);
            }
            Ok(Completion::Discarded) => {
                assert!(pending.cancelled || self.agent.conn.is_closed(), "a completion was discarded while in flight")
            }
            Err(e) => panic!("agent: v2 result refused: {e}"),
        }
    }

    /// Agent: `tool_call/cancel` / `terminal/cancel` of `key` in session `s`: accepted only
    /// for one it made cancellable (the docs leave that check to the agent).
    fn agent_cancel_reply(&mut self, s: &str, key: String) -> Reply {
        if self.v2.agent_tools.get(&(s.to_owned(), key.clone())) == Some(&true) {
            let ok: v2::Response = if key.starts_with("term:") {
                typed::<v2::CancelTerminalResponse>(json!({})).into()
            } else {
                typed::<v2::CancelToolCallResponse>(json!({})).into()
            };
            (Ok(ok), Ok(None), Effect::Cancelled(s.to_owned(), key))
        } else {
            (Err(RpcError::invalid_params("nothing cancellable of that id")), Err(-32602), Effect::None)
        }
    }

    fn agent_apply(&mut self, effect: Effect) {
        match effect {
            Effect::None | Effect::Retry => {}
            Effect::Announced(s) => {
                self.v2.agent_history.insert(s.clone());
                if !self.agent.sessions.contains(&s) {
                    self.agent.sessions.push(s);
                }
            }
            Effect::Working(s) => {
                if self.agent.sessions.contains(&s) {
                    // The prompt's ack made the session work (the machine's rule too); the
                    // application echoes the prompt and says it runs.
                    self.v2.agent_working.entry(s.clone()).or_insert(None);
                    let user = json!({"sessionUpdate": "user_message", "messageId": "um", "content": []});
                    let _ = self.agent_send_update(&s, user);
                    let _ = self.agent_send_update(&s, json!({"sessionUpdate": "state_update", "state": "running"}));
                }
            }
            Effect::Cancelled(s, key) => {
                self.v2.agent_tools.insert((s.clone(), key.clone()), false);
                let u = match key.split_once(':') {
                    Some(("term", t)) => {
                        json!({"sessionUpdate": "terminal_update", "terminalId": t, "exitStatus": {"signal": "SIGTERM"}})
                    }
                    _ => {
                        let t = key.split_once(':').map_or(key.as_str(), |(_, t)| t);
                        json!({"sessionUpdate": "tool_call_update", "toolCallId": t, "status": "cancelled"})
                    }
                };
                let _ = self.agent_send_update(&s, u);
            }
            Effect::Forget(s, deleted) => self.agent_forget(&s, deleted),
            Effect::LoggedIn(on) => self.v2.agent_logged_in = on,
        }
    }

    /// Agent: sends one update with its session's sequence number; checks the verdict
    /// (invariant 6) and follows its own state (working, tool calls).
    pub(super) fn agent_send_update(&mut self, session: &str, update: Value) -> Result<(), SendError> {
        let seq = self.v2.agent_seq.get(session).copied().unwrap_or(0);
        let n = json!({"sessionId": session, "update": update, "_meta": {"simSeq": seq}});
        let n: v2::UpdateSessionNotification = typed(n);
        let effect = tool_effect(&n.update);
        let state = match &n.update {
            v2::SessionUpdate::StateUpdate(v2::StateUpdate::Idle(_)) => Some(false),
            v2::SessionUpdate::StateUpdate(v2::StateUpdate::Running(_) | v2::StateUpdate::RequiresAction(_)) => {
                Some(true)
            }
            _ => None,
        };
        let sent: v2::Notification = n.clone().into();
        let before = self.agent.conn.bytes_queued();
        let r = self.agent.conn.send_notification::<acp_proto::V2>(self.now, n).map_err(|refused| {
            assert_eq!(refused.message, sent, "a refused notification comes back untouched");
            refused.error
        });
        self.agent.note_app_output(before);
        self.log(format!("agent update v2 {session} {} -> {r:?}", update["sessionUpdate"]));
        let known =
            self.agent.sessions.iter().any(|s| s == session) || self.v2.agent_replaying.as_deref() == Some(session);
        match &r {
            Ok(()) => {
                assert!(known, "an update for an unannounced session was accepted");
                *self.v2.agent_seq.entry(session.to_owned()).or_default() += 1;
                if let Some((t, cancellable)) = effect {
                    let entry = self.v2.agent_tools.entry((session.to_owned(), t)).or_default();
                    *entry = cancellable.unwrap_or(*entry);
                }
                match state {
                    Some(true) => {
                        self.v2.agent_working.entry(session.to_owned()).or_insert(None);
                    }
                    Some(false) => {
                        self.v2.agent_working.remove(session);
                    }
                    None => {}
                }
            }
            Err(SendError::UnknownSession(_)) => assert!(!known, "an update for an announced session was refused"),
            Err(SendError::Backpressure { .. }) => {}
            // After the end of input, the answer to the last request owed closes the
            // connection: the updates that follow it are refused (module `half_close`).
            Err(SendError::Closed) => assert!(self.agent.conn.is_closed() && self.agent.conn.input_ended()),
            Err(e) => panic!("agent: v2 update refused: {e}"),
        }
        r
    }

    /// Agent: starts something on a v2 connection.
    pub(super) fn agent_start_v2(&mut self) {
        self.agent_prune_graces();
        let working: Vec<String> = self.v2.agent_working.keys().cloned().collect();
        let announced = self.agent.sessions.clone();
        let pick_working = |c: &mut C| (!working.is_empty()).then(|| c.pick(&working).clone());
        let any = |c: &mut C| (!announced.is_empty()).then(|| c.pick(&announced).clone());
        match self.c.below(12) {
            10 => {
                if let Some(s) = pick_working(&mut self.c).or_else(|| any(&mut self.c)) {
                    self.agent_terminal_upsert(&s);
                }
            }
            11 => {
                // Mostly scoped to a session the agent announced; at times to a request.
                let s = pick_working(&mut self.c).or_else(|| any(&mut self.c));
                let s = if self.c.chance(1, 5) { None } else { s };
                self.agent_elicit_v2(s);
            }
            0..=2 => {
                let s = pick_working(&mut self.c).or_else(|| any(&mut self.c)).unwrap_or("never-announced".into());
                let text = json!({"type": "text", "text": "x"});
                let _ = self.agent_send_update(
                    &s,
                    json!({"sessionUpdate": "agent_message_chunk", "messageId": "am", "content": text}),
                );
            }
            3 | 4 => {
                if let Some(s) = pick_working(&mut self.c).or_else(|| any(&mut self.c)) {
                    self.agent_tool_upsert(&s);
                }
            }
            5 => {
                if let Some(s) = pick_working(&mut self.c).or_else(|| any(&mut self.c)) {
                    self.agent_ask_v2(&s);
                }
            }
            6 | 7 => {
                // Cancelled work is often left to the machine's grace.
                if let Some(s) = pick_working(&mut self.c)
                    && (self.v2.agent_working[&s].is_none() || self.c.chance(1, 3))
                {
                    self.agent_idle(&s);
                }
            }
            8 => {
                // Background work starts (or work asks for the user).
                if let Some(s) = any(&mut self.c) {
                    let state = *self.c.pick(&["running", "requires_action"]);
                    let _ = self.agent_send_update(&s, json!({"sessionUpdate": "state_update", "state": state}));
                }
            }
            _ => {
                let u = json!({"sessionUpdate": "agent_message_chunk", "messageId": "am", "content": {"type": "text", "text": "x"}});
                let _ = self.agent_send_update("never-announced", u);
            }
        }
    }

    /// Agent: a tool call upsert, new or of a known tool call, with or without
    /// `capabilities.cancel` and a status.
    fn agent_tool_upsert(&mut self, s: &str) {
        let t = self.agent_upsert_id(s, "tool:", "t");
        let mut u = json!({"sessionUpdate": "tool_call_update", "toolCallId": t, "title": "tool"});
        let with_cancel = self.agent_cancel_caps(&mut u);
        match self.c.below(4) {
            0 => u["status"] = json!("completed"),
            1 => u["status"] = json!("in_progress"),
            _ => {}
        }
        if self.agent_send_update(s, u).is_ok() {
            self.summary.v2.tool_upserts[usize::from(!with_cancel)] += 1;
        }
    }

    /// Agent: the id of an upsert of session `s` whose bookkeeping key starts with `kind`
    /// (`tool:`, `term:`): a known one, or (when none is known, and at times anyway) a fresh
    /// `{fresh}{n}`.
    pub(super) fn agent_upsert_id(&mut self, s: &str, kind: &str, fresh: &str) -> String {
        let known: Vec<String> = self
            .v2
            .agent_tools
            .keys()
            .filter_map(|(ts, k)| k.strip_prefix(kind).filter(|_| ts == s).map(str::to_owned))
            .collect();
        if known.is_empty() || self.c.chance(1, 3) {
            self.v2.next_tool += 1;
            format!("{fresh}{}", self.v2.next_tool)
        } else {
            self.c.pick(&known).clone()
        }
    }

    /// Agent: gives upsert `u` the cancel capability, empty capabilities or none (a third each);
    /// whether it advertises cancel.
    pub(super) fn agent_cancel_caps(&mut self, u: &mut Value) -> bool {
        match self.c.below(3) {
            0 => {
                u["capabilities"] = json!({"cancel": {}});
                true
            }
            1 => {
                u["capabilities"] = json!({});
                false
            }
            _ => false,
        }
    }

    /// Agent: ends a session's work with an idle `state_update`.
    fn agent_idle(&mut self, s: &str) {
        let reason = *self.c.pick(&["end_turn", "max_tokens", "refusal"]);
        let idle = json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": reason});
        let _ = self.agent_send_update(s, idle);
    }

    /// Agent: a permission ask in session `s`.
    fn agent_ask_v2(&mut self, s: &str) {
        let label = self.label();
        let ask = json!({
            "sessionId": s, "title": format!("r{label}"), "_meta": {"label": label},
            "options": [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
        });
        let request: v2::RequestPermissionRequest = typed(ask);
        let deadline = self.deadline();
        let before = self.agent.conn.bytes_queued();
        let r = self.agent.conn.send_request::<acp_proto::V2>(self.now, request, deadline).map_err(|r| r.error);
        self.agent.note_app_output(before);
        self.log(format!("agent ask v2 {s} r{label} -> {r:?}"));
        match r {
            Ok(id) => {
                self.summary.v2.asks[0] += 1;
                let session = Some(s.to_owned());
                self.agent
                    .outstanding
                    .insert(id, Out { label, method: None, deadline, session, locally_cancelled: false });
            }
            Err(SendError::Backpressure { .. } | SendError::TooManyPending { .. }) => {}
            Err(e) => panic!("agent: v2 ask refused: {e}"),
        }
    }

    /// Settling: ends every piece of work left (an idle each). Whether it sent something.
    pub(super) fn agent_finish_work_v2(&mut self) -> bool {
        self.agent_prune_graces();
        if self.agent.closed || !self.speaks_v2(acp_proto::Side::Agent) {
            return false;
        }
        // Cancelled work is left to the machine's grace (time advances when nothing is sent). An
        // idle that ends work must give a stopReason (the core refuses it otherwise).
        let working: Vec<String> =
            self.v2.agent_working.iter().filter(|(_, cancelled)| cancelled.is_none()).map(|(s, _)| s.clone()).collect();
        let mut sent = false;
        for s in working {
            sent |= self
                .agent_send_update(
                    &s,
                    json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
                )
                .is_ok();
        }
        sent
    }
}
