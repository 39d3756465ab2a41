//! ACP v2 in the simulation (feature `unstable_protocol_v2`).
//!
//! [`SimConfig::protocol`](super::SimConfig::protocol) picks the versions: [`Protocol::V2`]
//! (both peers list 1 and 2, the client offers 2: the session runs v2) or [`Protocol::Mixed`]
//! (the client offers 2, the agent speaks 1 only: the session runs v1, through the v1
//! applications, with the client's own capabilities what a v1 agent reads from v2 params:
//! none). On a v2 connection the applications are these:
//!
//! * **client**: `session/new`; `session/prompt` (one opens a turn of its session, one sent
//!   while the turn is open joins it); `tool_call/cancel` for a tool call it has seen, cancellable
//!   or not (and for one it has not); [`cancel_turn`](acp_proto::Connection::cancel_turn)
//!   (`session/cancel`) for a session with an open turn; `$/cancel_request`, deadlines and the
//!   faults as for v1; it answers permission asks (an offered option or `cancelled`).
//! * **agent**: answers `initialize` (with the `session` capability, or without it at times:
//!   every `session/*` send is then refused), `session/new`, acknowledges prompts (then sends a
//!   `user_message` and `state_update` `running`), answers `tool_call/cancel` (`-32602` unless
//!   the tool call is cancellable); sends message chunks (to a working session, an idle one, a
//!   session never announced), tool call upserts with and without `capabilities.cancel` and
//!   with or without a final status, background `running`, permission asks, and ends work with
//!   an idle `state_update`. Each accepted update carries `_meta.simSeq`, its session's
//!   sequence number. Settling, it ends the work it still has.
//!
//! # Invariants (v2)
//! 1. Every outbound request gets exactly one outcome, the one the model predicts (the v1
//!    check, [`Sim::check_outcome`], with [`Sim::check_result_v2`] for v2 results).
//! 2. Client: each turn it opened ends exactly once ([`Event::TurnEnded`] for the turn it
//!    opened, `client_turn_ended`), and once settled none is left open (`check_v2_settled`).
//!    A turn ended by an idle ends right after that idle (`client_check_turn_end_follows`); one
//!    ended `PromptFailed` had no prompt acknowledged; one ended by the close is on a closed
//!    connection.
//! 3. Client: while its session's turn is open every update is stamped with that turn, with
//!    ordinals 0, 1, 2…; no update is stamped without an open turn (`client_notification_v2`).
//! 4. Client: per session, the updates arrive in the order the agent sent them, none lost or
//!    doubled (`_meta.simSeq`), except the machine's own idle after a cancel grace, which says
//!    `cancelled` (`client_notification_v2`).
//! 5. Agent, on its wire: an idle `state_update` only ends work (an acknowledged prompt or a
//!    `running` / `requires_action` since the last idle): never a second idle for one piece of
//!    work; the first idle after a `session/cancel` that reached working says `cancelled`
//!    (`V2Sim::agent_emitted`); once settled no work is left without its idle.
//! 6. Gates: a `session/*` request is accepted exactly when the agent advertised `session`; a
//!    `tool_call/cancel` exactly when the tool call's latest update advertised
//!    `capabilities.cancel` and was not final (the client application's own record); an update
//!    exactly for an announced session (`client_send_v2`, `agent_send_update`).
//! 7. `cancel_turn` answers every pending permission ask of the session (`client_cancel_turn_v2`).
//!
//! The v1 invariants on bounds, memory, busy loops, events after `Closed` and the wire checker
//! ([`acp_proto::wire_check`]) run unchanged on both peers.

use std::collections::{BTreeMap, BTreeSet};

use acp_proto::types::{ProtocolVersion, SessionId};
use acp_proto::v2::{
    self, AgentNotificationParams, AgentRequestParams, AgentResult, ClientRequestParams, ClientResult, SessionUpdate,
    StateUpdate,
};
use acp_proto::{Completion, Event, InboundId, Method, Negotiated, OutboundId, RpcError, SendError, Side};
use acp_proto::{TurnEndReason, TurnStamp};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{Chooser, Out, Pending, Protocol, Req, Sim, label_of};

/// A v2 message of the simulation's own making (always valid: a failure is the simulation's bug).
pub(super) fn typed<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("the simulation's v2 message decodes")
}

/// The client's view of an open turn.
#[derive(Debug, Clone)]
struct ClientTurn {
    id: OutboundId,
    next_ordinal: u64,
    /// Its prompts sent, and whether one was acknowledged.
    prompts: Vec<OutboundId>,
    accepted: bool,
}

/// The state of the v2 applications and of the agent's wire tracker.
#[derive(Debug, Default)]
pub(super) struct V2Sim {
    /// Agent: working sessions, with when `session/cancel` reached that work (if it did).
    pub(super) agent_working: BTreeMap<String, Option<acp_proto::Instant>>,
    /// Agent: the sequence number of each session's next update.
    pub(super) agent_seq: BTreeMap<String, u64>,
    /// Agent: tool calls by (session, id): whether cancellable now.
    pub(super) agent_tools: BTreeMap<(String, String), bool>,
    pub(super) next_tool: u64,
    /// Client: open turns by session.
    client_turns: BTreeMap<String, ClientTurn>,
    /// Client: the sequence number expected next per session.
    client_seq: BTreeMap<String, u64>,
    /// Client: tool calls seen, by (session, id): whether cancellable (the client's own record).
    client_tools: BTreeMap<(String, String), bool>,
    /// Client: the turn whose idle was just delivered: its end must be the next event.
    expect_end: Option<(String, OutboundId)>,
    /// Agent's wire: sessions working (acknowledged prompt or `running` since the last idle).
    wire_working: BTreeSet<String>,
    /// Agent's wire: sessions whose work a `session/cancel` reached, with the first update
    /// sequence number sent after it: the idle ending that work must say `cancelled`.
    pub(super) must_say_cancelled: BTreeMap<String, u64>,
}

impl V2Sim {
    /// Agent: checks the frames it emitted (invariant 5).
    pub(super) fn agent_emitted(&mut self, bytes: &[u8]) {
        for frame in bytes.split(|b| *b == b'\n').filter(|f| !f.is_empty()) {
            // The wire checker has already required every frame to be JSON.
            let Ok(v) = serde_json::from_slice::<Value>(frame) else { continue };
            if let Some(ack) = v["result"]["messageId"].as_str().and_then(|m| m.strip_prefix("ack:")) {
                let session = ack.split(':').next().unwrap_or_default();
                self.wire_working.insert(session.to_owned());
                continue;
            }
            let update = &v["params"]["update"];
            if v["method"] != "session/update" || update["sessionUpdate"] != "state_update" {
                continue;
            }
            let session = v["params"]["sessionId"].as_str().unwrap_or_default().to_owned();
            match update["state"].as_str() {
                Some("running" | "requires_action") => {
                    self.wire_working.insert(session);
                }
                Some("idle") => {
                    assert!(
                        self.wire_working.remove(&session),
                        "agent: a second idle for one piece of work of {session}"
                    );
                    let seq = v["params"]["_meta"]["simSeq"].as_u64();
                    if let Some(after) = self.must_say_cancelled.get(&session)
                        && seq.is_none_or(|s| s >= *after)
                    {
                        assert_eq!(
                            update["stopReason"], "cancelled",
                            "agent: cancelled work of {session} ended {update}"
                        );
                        self.must_say_cancelled.remove(&session);
                    }
                }
                _ => {}
            }
        }
    }
}

/// The tool call a v2 update upserts, with whether it is cancellable after it (`None`: the
/// update leaves that as it was), as the machine follows it (its module docs).
pub(super) fn tool_effect(update: &SessionUpdate) -> Option<(String, Option<bool>)> {
    let SessionUpdate::ToolCallUpdate(u) = update else { return None };
    let status = serde_json::to_value(&u.status).unwrap_or(Value::Null);
    let done = matches!(status.as_str(), Some("completed" | "failed" | "cancelled"));
    let caps = u.capabilities.as_ref().map(|c| c.cancel.is_some());
    let cancellable = if done { Some(false) } else { caps };
    Some((u.tool_call_id.to_string(), cancellable))
}

impl<C: Chooser> Sim<'_, C> {
    /// Client: the v2 `initialize` (also in the mixed runs).
    pub(super) fn client_handshake_v2(&mut self) {
        let label = self.label();
        let init: v2::InitializeRequest = typed(json!({
            "protocolVersion": 2, "info": {"name": "sim-client", "version": "1"}, "capabilities": {},
            "_meta": {"label": label},
        }));
        let deadline = if self.c.chance(1, 4) { self.deadline() } else { None };
        let r = self.client.conn.send_request_v2(self.now, init, deadline).map_err(|r| r.error);
        self.log(format!("client initialize v2 r{label} -> {r:?}"));
        match r {
            Ok(id) => {
                let out =
                    Out { label, method: Some(Method::Initialize), deadline, session: None, locally_cancelled: false };
                self.client.outstanding.insert(id, out);
            }
            // A retry after the agent committed and the client's outcome was lost.
            Err(SendError::AlreadyInitialized) => assert!(self.client.conn.negotiated().is_none()),
            Err(SendError::Closed) => assert!(self.client.conn.is_closed()),
            Err(e) => panic!("client: v2 initialize refused: {e}"),
        }
    }

    /// Client: the handshake completed; the version is the one the configuration implies.
    pub(super) fn client_handshake_completed_v2(&mut self, n: &Negotiated) {
        match self.config.protocol {
            Protocol::V1 => assert_eq!(n.protocol_version, ProtocolVersion::V1),
            Protocol::V2 => {
                assert_eq!(n.protocol_version, ProtocolVersion::V2, "both speak 2: v2 is negotiated");
                self.summary.v2.negotiated_v2 += 1;
            }
            Protocol::Mixed => {
                assert_eq!(n.protocol_version, ProtocolVersion::V1, "a v1-only agent: the session runs v1");
                self.summary.v2.fell_back_to_v1 += 1;
            }
        }
    }

    /// Client: starts a v2 request.
    pub(super) fn client_start_v2(&mut self) {
        let label = self.label();
        let sessions = self.client.sessions.clone();
        let request: v2::Request = match self.c.below(6) {
            0 => typed::<v2::NewSessionRequest>(json!({"cwd": format!("/r{label}"), "_meta": {"label": label}})).into(),
            1..=3 if !sessions.is_empty() => {
                let s = self.c.pick(&sessions).clone();
                let prompt = json!({"sessionId": s, "prompt": [{"type": "text", "text": format!("r{label}")}]});
                typed::<v2::PromptRequest>(prompt).into()
            }
            4 | 5 => {
                let tools: Vec<(String, String)> = self.v2.client_tools.keys().cloned().collect();
                let (s, t) = match tools.is_empty() || self.c.chance(1, 8) {
                    true if !sessions.is_empty() => (self.c.pick(&sessions).clone(), "unknown".to_owned()),
                    true => return,
                    false => self.c.pick(&tools).clone(),
                };
                let r = json!({"sessionId": s, "toolCallId": t, "_meta": {"label": label}});
                typed::<v2::CancelToolCallRequest>(r).into()
            }
            _ => typed::<v2::NewSessionRequest>(json!({"cwd": format!("/r{label}"), "_meta": {"label": label}})).into(),
        };
        let deadline = self.deadline();
        self.client_send_v2(label, request, deadline);
    }

    /// Client: sends a v2 request and checks the verdict against its own gates (invariant 6).
    fn client_send_v2(&mut self, label: u64, request: v2::Request, deadline: Option<acp_proto::Instant>) {
        let method = request.method();
        let session = request.session_id().map(|s| s.as_str().to_owned());
        let tool = match &request {
            v2::Request::Client(ClientRequestParams::CancelToolCall(r)) => {
                Some((r.session_id.as_str().to_owned(), r.tool_call_id.to_string()))
            }
            _ => None,
        };
        let gated = method.is_some_and(|m| m.row().gate == ["session"]);
        let advertised = super::opt_in::advertises(self.client.peer_caps.as_ref(), &["session"]);
        let cancellable = tool.as_ref().is_some_and(|t| self.v2.client_tools.get(t) == Some(&true));
        let before = self.client.conn.bytes_queued();
        let sent = request.clone();
        let r = self.client.conn.send_request_v2(self.now, request, deadline).map_err(|refused| {
            assert_eq!(refused.message, sent, "a refused request comes back untouched");
            refused.error
        });
        self.client.note_app_output(before);
        self.log(format!("client send v2 {} r{label} -> {r:?}", sent.wire()));
        match r {
            Ok(id) => {
                assert!(!gated || advertised, "{} accepted without the agent's `session`", sent.wire());
                if tool.is_some() {
                    assert!(cancellable, "tool_call/cancel accepted for a tool call not cancellable: {tool:?}");
                    self.summary.v2.tool_cancels[0] += 1;
                }
                if method == Some(v2::Method::Prompt)
                    && let Some(s) = &session
                {
                    self.client_open_turn(s, id);
                }
                let out = Out { label, method: None, deadline, session, locally_cancelled: false };
                self.client.outstanding.insert(id, out);
            }
            Err(SendError::NotSupportedByPeerV2 { .. }) => assert!(gated && !advertised, "{sent:?} refused"),
            Err(SendError::NotCancellable { .. }) => {
                assert!(!cancellable, "tool_call/cancel refused for a cancellable tool call {tool:?}");
                self.summary.v2.tool_cancels[1] += 1;
            }
            Err(SendError::Backpressure { .. } | SendError::TooManyPending { .. }) => {}
            Err(SendError::Closed) => assert!(self.client.conn.is_closed()),
            Err(e) => panic!("client: unexpected refusal of {}: {e}", sent.wire()),
        }
    }

    /// Client: a prompt was sent: it opens its session's turn, or joins the open one.
    fn client_open_turn(&mut self, session: &str, id: OutboundId) {
        // The machine says which, and it agrees with the model (`Connection::open_turn_v2`).
        let open = self.client.conn.open_turn_v2(&SessionId::from(session));
        let expected = self.v2.client_turns.get(session).map_or(id, |turn| turn.id);
        assert_eq!(open, Some(expected), "client: the turn prompt {id} of {session} opened or joined");
        match self.v2.client_turns.get_mut(session) {
            Some(turn) => {
                turn.prompts.push(id);
                self.summary.v2.prompts_joined += 1;
            }
            None => {
                let turn = ClientTurn { id, next_ordinal: 0, prompts: vec![id], accepted: false };
                self.v2.client_turns.insert(session.to_owned(), turn);
                self.summary.v2.turns_opened += 1;
            }
        }
    }

    /// Client: `cancel_turn` for a session with an open turn (invariant 7).
    pub(super) fn client_cancel_turn_v2(&mut self) {
        let sessions: Vec<String> = self.v2.client_turns.keys().cloned().collect();
        if sessions.is_empty() {
            return;
        }
        let s = self.c.pick(&sessions).clone();
        self.client_cancelled_sessions.insert(s.clone());
        let r = self.client.conn.cancel_turn(self.now, &SessionId::from(s.as_str()));
        self.log(format!("client cancel_turn v2 {s} -> {r:?}"));
        if self.client.conn.is_closed() {
            return;
        }
        let answered = r.expect("cancel_turn is accepted for an open turn");
        self.summary.v2.session_cancels[0] += 1;
        let asks: Vec<&Pending> = self
            .client
            .handlers
            .iter()
            .filter(|h| matches!(&h.request, Req::V2(v2::Request::Agent(AgentRequestParams::RequestPermission(p))) if p.session_id.as_str() == s))
            .collect();
        let surely_in_flight = asks.iter().filter(|h| !h.cancelled).count();
        assert!(
            (surely_in_flight..=asks.len()).contains(&answered),
            "cancel_turn must answer every pending permission ask of the session: {answered} of {}",
            asks.len()
        );
    }

    /// Client: a v2 request arrived (a permission ask).
    pub(super) fn client_request_v2(&mut self, id: InboundId, request: v2::Request) {
        let label = label_of(&serde_json::to_value(&request).expect("serializes"));
        if let Some(l) = label {
            self.model.dispatched.insert(l);
        }
        let ready_at = self.now + std::time::Duration::from_millis(self.c.range(0, 300));
        let request = Req::V2(request);
        self.client.handlers.push(Pending { id, label, method: None, request, ready_at, cancelled: false });
    }

    /// Client: answers a v2 request.
    pub(super) fn client_complete_v2(&mut self, pending: Pending, request: v2::Request) {
        let label = pending.label.unwrap_or(0);
        let (result, reply): (Result<v2::Response, RpcError>, Result<Option<String>, i64>) = match &request {
            v2::Request::Agent(AgentRequestParams::RequestPermission(p)) => {
                let (outcome, tag) = match self.c.below(4) {
                    0 => (json!({"outcome": "cancelled"}), "cancelled".to_owned()),
                    _ => {
                        let o = self.c.pick(&p.options).option_id.to_string();
                        (json!({"outcome": "selected", "optionId": o}), o)
                    }
                };
                (Ok(typed::<v2::RequestPermissionResponse>(json!({"outcome": outcome})).into()), Ok(Some(tag)))
            }
            _ => (Err(RpcError::method_not_found(request.wire())), Err(-32601)),
        };
        let before = self.client.conn.bytes_queued();
        let r = self.client.conn.respond_v2(self.now, pending.id, result);
        self.client.note_app_output(before);
        self.log(format!("client completes v2 r{label} -> {r:?}"));
        match r {
            Ok(Completion::Sent) => self.model.replies.entry(label).or_default().push(reply),
            Ok(Completion::Discarded) => {
                assert!(pending.cancelled || self.client.conn.is_closed(), "a completion was discarded while in flight")
            }
            Err(e) => panic!("client: v2 result refused: {e}"),
        }
    }

    /// Client: a v2 notification (invariants 3 and 4).
    pub(super) fn client_notification_v2(&mut self, notification: v2::Notification, turn: Option<TurnStamp>) {
        let v2::Notification::Agent(AgentNotificationParams::SessionUpdate(n)) = notification else { return };
        let s = n.session_id.as_str().to_owned();
        let idle = match &n.update {
            SessionUpdate::StateUpdate(StateUpdate::Idle(i)) => Some(serde_json::to_value(&i.stop_reason).ok()),
            _ => None,
        };
        match n.meta.as_ref().and_then(|m| m.get("simSeq")).and_then(Value::as_u64) {
            Some(seq) => {
                let expected = self.v2.client_seq.entry(s.clone()).or_default();
                assert_eq!(seq, *expected, "client: update {seq} of {s} arrived, {expected} expected");
                *expected += 1;
            }
            None => {
                let reason = idle.clone().flatten();
                assert_eq!(
                    reason,
                    Some(json!("cancelled")),
                    "client: an update the agent did not send: {:?}",
                    n.update
                );
                self.summary.v2.machine_idles += 1;
            }
        }
        if let Some((key, cancellable)) = tool_effect(&n.update) {
            let entry = self.v2.client_tools.entry((s.clone(), key)).or_default();
            *entry = cancellable.unwrap_or(*entry);
        }
        match (turn, self.v2.client_turns.get_mut(&s)) {
            (Some(stamp), Some(open)) => {
                assert_eq!(stamp.turn, open.id, "update stamped with a turn that is not the session's open turn");
                assert_eq!(stamp.ordinal, open.next_ordinal, "turn ordinals must be contiguous");
                open.next_ordinal += 1;
                self.summary.v2.updates_stamped += 1;
                if idle.is_some() {
                    self.v2.expect_end = Some((s, open.id));
                }
            }
            (Some(stamp), None) => panic!("update stamped {stamp:?} but session {s} has no open turn"),
            (None, Some(open)) => panic!("an update of {s} arrived unstamped while its turn {} is open", open.id),
            (None, None) => self.summary.v2.updates_unstamped += 1,
        }
    }

    /// Client: the turn that an idle just ended must end with the very next event (invariant 2).
    pub(super) fn client_check_turn_end_follows(&mut self, event: &Event) {
        if let Some((s, id)) = self.v2.expect_end.take() {
            let follows = matches!(event, Event::TurnEnded { session, turn, reason: TurnEndReason::Idle { .. } }
                if session.as_str() == s && *turn == id);
            assert!(follows, "the idle of turn {id} of {s} was followed by {event:?}, not its end");
        }
    }

    /// Client: a turn ended (invariant 2).
    pub(super) fn client_turn_ended(&mut self, session: SessionId, turn: OutboundId, reason: TurnEndReason) {
        let open = self.v2.client_turns.remove(session.as_str());
        let open = open.unwrap_or_else(|| panic!("turn {turn} of {session} ended, but none is open"));
        assert_eq!(open.id, turn, "turn {turn} ended, the open turn of {session} is {}", open.id);
        let i = match reason {
            TurnEndReason::Idle { .. } => 0,
            TurnEndReason::PromptFailed => {
                assert!(!open.accepted, "turn {turn} ended PromptFailed although a prompt was acknowledged");
                1
            }
            TurnEndReason::ConnectionClosed => {
                assert!(self.client.conn.is_closed(), "turn {turn} ended ConnectionClosed on an open connection");
                2
            }
            other => panic!("unknown turn end {other:?}"),
        };
        self.summary.v2.turns_ended[i] += 1;
    }

    /// Checks a v2 result against the model (invariant 1).
    pub(super) fn check_result_v2(
        &mut self,
        side: Side,
        id: OutboundId,
        out: &Out,
        response: &v2::Response,
        replies: &[Result<Option<String>, i64>],
    ) {
        let label = out.label;
        match response {
            v2::Response::Agent(AgentResult::Prompt(p)) => {
                let s = out.session.clone().unwrap_or_default();
                assert_eq!(p.message_id.to_string(), format!("ack:{s}:{label}"), "the ack of another prompt");
                assert!(replies.contains(&Ok(Some("ack".into()))), "prompt r{label} acknowledged, replies {replies:?}");
                self.summary.v2.prompts_acknowledged += 1;
                if let Some(turn) = self.v2.client_turns.get_mut(&s)
                    && turn.prompts.contains(&id)
                {
                    turn.accepted = true;
                }
            }
            v2::Response::Agent(AgentResult::NewSession(n)) => {
                assert!(replies.contains(&Ok(None)), "session/new r{label} succeeded, replies {replies:?}");
                self.client.sessions.push(n.session_id.as_str().to_owned());
            }
            v2::Response::Client(ClientResult::RequestPermission(p)) => {
                let tag = match serde_json::to_value(&p.outcome).expect("serializes") {
                    v if v["outcome"] == "selected" => v["optionId"].as_str().unwrap_or_default().to_owned(),
                    v => v["outcome"].as_str().unwrap_or_default().to_owned(),
                };
                let crossed = tag == "cancelled"
                    && out.session.as_ref().is_some_and(|s| self.client_cancelled_sessions.contains(s));
                assert!(
                    crossed || replies.contains(&Ok(Some(tag.clone()))),
                    "ask r{label} answered {tag}, {replies:?}"
                );
            }
            _ => assert!(replies.contains(&Ok(None)), "{side:?}: r{label} succeeded, replies {replies:?}"),
        }
    }

    /// Once settled: no client turn is left open, no agent work is left without its idle
    /// (invariants 2 and 5).
    pub(super) fn check_v2_settled(&self) {
        let open: Vec<&String> = self.v2.client_turns.keys().collect();
        assert!(open.is_empty(), "client turns never ended: {open:?}");
        if !self.agent.closed {
            let working = &self.v2.wire_working;
            assert!(working.is_empty(), "agent work never ended by an idle: {working:?}");
        }
        let ended: u64 = self.summary.v2.turns_ended.iter().sum();
        assert_eq!(ended, self.summary.v2.turns_opened, "turns opened and ended");
    }
}
