//! The simulated v2 client application's requests (feature `unstable_protocol_v2`; see `v2`):
//! the handshake, what it starts, the gates it expects, and what their answers change.

use crate::link::Outcome;
use acp_proto::v2::{self, AgentResponse, ClientRequest};
use acp_proto::{Method, OutboundId, SendError, Side};
use serde_json::{Value, json};

use super::opt_in::advertises;
use super::v2::typed;
use super::{Chooser, Out, Sim};

/// Whether the client never gives up on a request of `method` (no deadline, no local cancel):
/// `session/close` and `session/delete`. An agent may end a session's work by the close alone
/// (no idle; the machine then sends nothing more of it); a client that gave up on the close
/// would never learn the session closed, and its turn would stay open.
pub(super) fn never_given_up(method: Option<v2::Method>) -> bool {
    matches!(method, Some(v2::Method::CloseSession | v2::Method::DeleteSession))
}

impl<C: Chooser> Sim<'_, C> {
    /// Client: the v2 `initialize`, with capabilities drawn at random
    /// (elicitation and its modes, `auth.terminal`); then an `auth/login` before the handshake
    /// completed, which the machine must refuse.
    pub(super) fn client_handshake_v2(&mut self) {
        let label = self.label();
        let mut caps = json!({});
        if self.c.chance(2, 3) {
            caps["elicitation"] = json!({});
            if self.c.chance(2, 3) {
                caps["elicitation"]["form"] = json!({});
            }
            if self.c.chance(1, 2) {
                caps["elicitation"]["url"] = json!({});
            }
        }
        if self.c.chance(1, 2) {
            caps["auth"] = json!({"terminal": {}});
        }
        self.v2.client_caps = caps.clone();
        let init: v2::InitializeRequest = typed(json!({
            "protocolVersion": 2, "info": {"name": "sim-client", "version": "1"}, "capabilities": caps,
            "_meta": {"label": label},
        }));
        let deadline = if self.c.chance(1, 4) { self.deadline() } else { None };
        let r = self.client.conn.send_request::<acp_proto::V2>(self.now, init, deadline).map_err(|r| r.error);
        self.log(format!("client initialize v2 r{label} -> {r:?}"));
        match r {
            Ok(id) => {
                let out =
                    Out { label, method: Some(Method::Initialize), deadline, session: None, locally_cancelled: false };
                self.client.outstanding.insert(id, out);
                let login = typed::<v2::LoginAuthRequest>(json!({"methodId": "m"}));
                let early = self.client.conn.send_request::<acp_proto::V2>(self.now, login, None).map_err(|r| r.error);
                assert!(matches!(early, Err(SendError::NotInitialized)), "auth/login before the handshake: {early:?}");
                self.summary.v2.auth[2] += 1;
            }
            Err(e) => self.client_handshake_refused(e),
        }
    }

    /// Client: starts a v2 request.
    pub(super) fn client_start_v2(&mut self) {
        let label = self.label();
        let sessions = self.client.sessions.clone();
        let meta = json!({"label": label});
        let new_session = || typed::<v2::NewSessionRequest>(json!({"cwd": format!("/r{label}"), "_meta": meta}));
        let request: v2::Request = match self.c.below(16) {
            1..=4 if !sessions.is_empty() => {
                let s = self.c.pick(&sessions).clone();
                let prompt = json!({"sessionId": s, "prompt": [{"type": "text", "text": format!("r{label}")}]});
                typed::<v2::PromptRequest>(prompt).into()
            }
            5 | 6 => match self.client_cancel_target(&sessions) {
                Some((s, key)) => match key.split_once(':') {
                    Some(("term", t)) => typed::<v2::CancelTerminalRequest>(
                        json!({"sessionId": s, "terminalId": t, "_meta": {"label": label}}),
                    )
                    .into(),
                    _ => {
                        let t = key.split_once(':').map_or(key.as_str(), |(_, t)| t);
                        let r = json!({"sessionId": s, "toolCallId": t, "_meta": {"label": label}});
                        typed::<v2::CancelToolCallRequest>(r).into()
                    }
                },
                None => return,
            },
            7 | 8 => {
                // A session it created (closed or not), or one the agent never heard of.
                let known: Vec<String> = self.v2.client_known.iter().cloned().collect();
                let s = match (known.is_empty(), self.c.chance(1, 6)) {
                    (false, false) => self.c.pick(&known).clone(),
                    (true, _) if !self.c.chance(1, 4) => return,
                    _ => "s-unknown".into(),
                };
                let r = json!({"sessionId": s, "cwd": format!("/r{label}"), "_meta": {"label": label}});
                typed::<v2::ResumeSessionRequest>(r).into()
            }
            9 | 10 => {
                let known: Vec<String> = self.v2.client_known.iter().cloned().collect();
                let s = match (sessions.is_empty(), self.c.chance(1, 5)) {
                    (false, false) => self.c.pick(&sessions).clone(),
                    _ if !known.is_empty() => self.c.pick(&known).clone(),
                    _ => "s-unknown".into(),
                };
                let r = json!({"sessionId": s, "_meta": {"label": label}});
                match self.c.chance(2, 3) {
                    true => typed::<v2::CloseSessionRequest>(r).into(),
                    false => typed::<v2::DeleteSessionRequest>(r).into(),
                }
            }
            11 => typed::<v2::LoginAuthRequest>(json!({"methodId": "m", "_meta": {"label": label}})).into(),
            12 => typed::<v2::LogoutAuthRequest>(json!({"_meta": {"label": label}})).into(),
            _ => new_session().into(),
        };
        let deadline = if never_given_up(request.method()) { None } else { self.deadline() };
        self.client_send_v2(label, request, deadline);
    }

    /// Client: a tool call or terminal to cancel (`tool:<id>` / `term:<id>`): one it has seen,
    /// cancellable or not, at times one it has not (or a tool call's id as a terminal's).
    fn client_cancel_target(&mut self, sessions: &[String]) -> Option<(String, String)> {
        let seen: Vec<(String, String)> = self.v2.client_tools.keys().cloned().collect();
        if seen.is_empty() || self.c.chance(1, 8) {
            let s = (!sessions.is_empty()).then(|| self.c.pick(sessions).clone())?;
            let key = *self.c.pick(&["tool:unknown", "term:unknown"]);
            return Some((s, key.to_owned()));
        }
        let (s, key) = self.c.pick(&seen).clone();
        if self.c.chance(1, 10) {
            // The same id as the other kind: a separate record in the machine.
            let swapped = match key.split_once(':') {
                Some(("tool", id)) => format!("term:{id}"),
                Some((_, id)) => format!("tool:{id}"),
                None => key,
            };
            return Some((s, swapped));
        }
        Some((s, key))
    }

    /// The gate the client expects its machine to apply to `request`: whether it is refused
    /// with `NotSupportedByPeer`.
    fn client_expects_gate_refusal(&self, method: Option<v2::Method>) -> bool {
        let caps = self.client.peer_caps.as_ref();
        match method {
            Some(v2::Method::Login | v2::Method::Logout) => !self.v2.client_auth,
            Some(m) if !m.row().gate.is_empty() => !advertises(caps, m.row().gate),
            _ => false,
        }
    }

    /// Client: sends a v2 request and checks the verdict against its own gates (invariant 6).
    pub(super) fn client_send_v2(&mut self, label: u64, request: v2::Request, deadline: Option<acp_proto::Instant>) {
        let method = request.method();
        let session = request.session_id().map(|s| s.as_str().to_owned());
        let cancel_key = match &request {
            v2::Request::Client(ClientRequest::CancelToolCall(r)) => Some(format!("tool:{}", r.tool_call_id)),
            v2::Request::Client(ClientRequest::CancelTerminal(r)) => Some(format!("term:{}", r.terminal_id)),
            _ => None,
        };
        let terminal = cancel_key.as_ref().is_some_and(|k| k.starts_with("term:"));
        let gated = self.client_expects_gate_refusal(method);
        let cancellable = cancel_key.as_ref().is_some_and(|k| {
            self.v2.client_tools.get(&(session.clone().unwrap_or_default(), k.clone())) == Some(&true)
        });
        let before = self.client.conn.bytes_queued();
        let sent = request.clone();
        let r = self.client.conn.send_request::<acp_proto::V2>(self.now, request, deadline).map_err(|refused| {
            assert_eq!(refused.message, sent, "a refused request comes back untouched");
            refused.error
        });
        self.client.note_app_output(before);
        self.log(format!("client send v2 {} r{label} -> {r:?}", sent.wire()));
        let cancels = if terminal { &mut self.summary.v2.terminal_cancels } else { &mut self.summary.v2.tool_cancels };
        match r {
            Ok(id) => {
                assert!(!gated, "{} accepted without the agent's advertising it", sent.wire());
                if cancel_key.is_some() {
                    assert!(cancellable, "{} accepted for one not cancellable: {cancel_key:?}", sent.wire());
                    cancels[0] += 1;
                }
                if let Some(s) = &session {
                    match method {
                        // After the end of input a prompt resolves `ConnectionClosed` at
                        // once: it opens no turn (module `half_close`).
                        Some(v2::Method::Prompt) if !self.client.conn.input_ended() => self.client_open_turn(s, id),
                        // From now on the agent may replay the session's history.
                        Some(v2::Method::ResumeSession) => _ = self.v2.client_closed.remove(s),
                        _ => {}
                    }
                }
                self.v2.client_sent.insert(id, (method, session.clone()));
                let out = Out { label, method: None, deadline, session, locally_cancelled: false };
                self.client.outstanding.insert(id, out);
            }
            Err(SendError::NotSupportedByPeer { .. }) => {
                assert!(gated, "{sent:?} refused");
                if matches!(method, Some(v2::Method::Login | v2::Method::Logout)) {
                    self.summary.v2.auth[2] += 1;
                }
            }
            Err(SendError::NotCancellable { .. }) => {
                assert!(
                    cancel_key.is_some() && !cancellable,
                    "{} refused for a cancellable {cancel_key:?}",
                    sent.wire()
                );
                cancels[1] += 1;
            }
            Err(SendError::Backpressure { .. } | SendError::TooManyPending { .. }) => {}
            Err(SendError::Closed) => assert!(self.client.conn.is_closed()),
            Err(e) => panic!("client: unexpected refusal of {}: {e}", sent.wire()),
        }
    }

    /// Client: the result of one of its lifecycle or auth requests (invariant 1 checked by the
    /// caller); what it changes. Whether `response` was one of them.
    pub(super) fn client_lifecycle_result(
        &mut self,
        id: OutboundId,
        session: Option<&str>,
        response: &v2::Response,
    ) -> bool {
        let v2::Response::Agent(result) = response else { return false };
        let s = session.unwrap_or_default().to_owned();
        match result {
            AgentResponse::Initialize(init) => {
                let methods = serde_json::to_value(&init.auth_methods).unwrap_or(Value::Null);
                let kinds: Vec<&str> =
                    methods.as_array().into_iter().flatten().filter_map(|m| m["type"].as_str()).collect();
                let terminal_ok = advertises(Some(&self.v2.client_caps), &["auth", "terminal"]);
                assert!(terminal_ok || !kinds.contains(&"terminal"), "a terminal auth method without auth.terminal");
                self.v2.client_auth = !kinds.is_empty();
            }
            AgentResponse::ResumeSession(_) => {
                self.summary.v2.resumes[0] += 1;
                if !self.client.sessions.contains(&s) {
                    self.client.sessions.push(s);
                }
            }
            AgentResponse::CloseSession(_) | AgentResponse::DeleteSession(_) => {
                let deleted = matches!(result, AgentResponse::DeleteSession(_));
                self.summary.v2.closes[usize::from(deleted)] += 1;
                self.client_session_closed(id, s);
            }
            AgentResponse::Login(_) => self.summary.v2.auth[0] += 1,
            AgentResponse::Logout(_) => self.summary.v2.auth[1] += 1,
            _ => return false,
        }
        true
    }

    /// Client: a successful close (or delete) of `s`: its open turn ends `SessionClosed` with
    /// the next event, its tool calls and terminals are no longer cancellable, and nothing of
    /// it may arrive until the client resumes it (unless a resume is already in flight).
    fn client_session_closed(&mut self, id: OutboundId, s: String) {
        self.client.sessions.retain(|k| *k != s);
        self.v2.client_tools.retain(|(ts, _), _| *ts != s);
        if let Some(turn) = self.v2.client_turns.get(&s) {
            self.v2.expect_end = Some((s.clone(), turn.id, true));
        }
        let resuming =
            self.v2.client_sent.iter().any(|(o, (m, ms))| {
                *o != id && *m == Some(v2::Method::ResumeSession) && ms.as_deref() == Some(s.as_str())
            });
        if !resuming && !self.v2.client_doubtful.contains(&s) {
            self.v2.client_closed.insert(s);
        }
    }

    /// After every outcome: forgets the request (client) or the elicitation (agent).
    pub(super) fn after_outcome_v2(&mut self, side: Side, id: OutboundId, outcome: &Outcome) {
        match side {
            Side::Client => {
                let sent = self.v2.client_sent.remove(&id);
                // A resume given up (timed out, cancelled locally) may still be answered, and
                // so take effect, at the agent: the client cannot know whether that session is
                // closed any more.
                if let Some((Some(v2::Method::ResumeSession), Some(s))) = sent
                    && matches!(outcome, Outcome::TimedOut | Outcome::Cancelled)
                {
                    self.v2.client_closed.remove(&s);
                    self.v2.client_doubtful.insert(s);
                }
            }
            Side::Agent => {
                if self.v2.agent_elicitations.remove(&id).is_some() && matches!(outcome, Outcome::Cancelled) {
                    self.summary.v2.elicitations[4] += 1;
                }
            }
        }
    }
}
