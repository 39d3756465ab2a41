//! ACP v2 in the simulation (feature `unstable_protocol_v2`).
//!
//! [`SimConfig::protocol`](super::SimConfig::protocol) picks the versions: [`Protocol::V2`]
//! (the client offers 2, the agent speaks 1 and 2: the session runs v2) or [`Protocol::Mixed`]
//! (the client offers 2, the agent speaks 1 only: the session runs v1, through the v1
//! applications, with the client's own capabilities what a v1 agent reads from v2 params:
//! none). On a v2 connection the applications are these:
//!
//! * **client**: offers capabilities drawn at random (`elicitation` with `form` and / or
//!   `url`, `auth.terminal`) and tries an `auth/login` before its handshake completed (refused);
//!   then `session/new`; `session/prompt` (one opens a turn of its session, one sent while the
//!   turn is open joins it); `tool_call/cancel` and `terminal/cancel` for one it has seen,
//!   cancellable or not (and for one it has not, or a tool call's id as a terminal's);
//!   `session/resume` of a session it created (closed or not) or of one the agent never heard
//!   of; `session/close` and `session/delete` (of an open session, a closed one, an unknown
//!   one; with no deadline and never cancelled, see `v2_client::never_given_up`);
//!   `auth/login` and `auth/logout`; [`cancel_turn`](acp_proto::Connection::cancel_turn)
//!   (`session/cancel`) for a session with an open turn; `$/cancel_request`, deadlines and the
//!   faults as for v1; it answers permission asks (an offered option or `cancelled`) and
//!   elicitations (accept, decline or cancel).
//! * **agent** (`v2_agent`, `v2_lifecycle`, `v2_elicit`): answers `initialize` (with the
//!   `session` capability, or without it at times: every `session/*` send is then refused;
//!   with `session.delete` at times; auth methods at random: none, `agent`, `terminal` or both;
//!   with an `agent` one it may require a login before `session/new`, `-32000`),
//!   `session/new`, acknowledges prompts of a session it knows (then sends a `user_message` and
//!   `state_update` `running`; a prompt of a closed or unknown session is `-32002`), answers
//!   `tool_call/cancel` / `terminal/cancel` (`-32602` unless it is cancellable, else a final
//!   upsert follows), `session/resume` (a session it created and did not delete: a few history
//!   updates replayed before the answer; another: `-32002`), `session/close` and
//!   `session/delete` (first `$/cancel_request` for its asks and elicitations of the session and,
//!   3 times in 4, an idle `cancelled` for working foreground; the answer's `_meta.simClosed`
//!   names the session), `auth/login` / `auth/logout`; sends message chunks (to a working
//!   session, an idle one, a session never announced), tool call and terminal upserts with and
//!   without `capabilities.cancel` and with or without a final status / exit status,
//!   background `running`, permission asks, elicitations (form or URL, scoped to a session or
//!   a request; an accepted URL one is followed by `elicitation/complete`), cancels its
//!   elicitations of a session whose work a `session/cancel` reached, and ends work with an
//!   idle `state_update`. Each accepted update carries `_meta.simSeq`, its session's sequence
//!   number. Settling, it ends the work it still has.
//!
//! # Invariants (v2)
//! 1. Every outbound request gets exactly one outcome, the one the model predicts (the v1
//!    check, [`Sim::check_outcome`], with [`Sim::check_result_v2`] for v2 results): the
//!    resume, close, delete, login, logout and elicitation answers the peer application gave,
//!    `Cancelled` for the elicitations and asks the agent cancelled.
//! 2. Client: each turn it opened ends exactly once ([`Event::TurnEnded`] for the turn it
//!    opened, `client_turn_ended`), and once settled none is left open (`check_v2_settled`).
//!    A turn ended by an idle ends right after that idle (`client_check_turn_end_follows`); one
//!    open when its session's close (or delete) answer arrives ends `SessionClosed` right after
//!    that answer, and only then; one ended `PromptFailed` had no prompt acknowledged; one
//!    ended by the connection's close is on a closed connection.
//! 3. Client: while its session's turn is open every update is stamped with that turn, with
//!    ordinals 0, 1, 2…; no update is stamped without an open turn (`client_notification_v2`).
//! 4. Client: per session, the updates arrive in the order the agent sent them, none lost or
//!    doubled (`_meta.simSeq`), except the machine's own idle after a cancel grace, which says
//!    `cancelled` (`client_notification_v2`).
//! 5. Agent, on its wire: an idle `state_update` only ends work (an acknowledged prompt or a
//!    `running` / `requires_action` since the last idle): never a second idle for one piece of
//!    work (so no grace idle after the session's close); the first idle after a
//!    `session/cancel` that reached working says `cancelled` (`V2Sim::agent_emitted`); once
//!    settled no work is left without its idle or its session's close.
//! 6. Gates: a `session/*` request is accepted exactly when the agent advertised `session`
//!    (`session/delete`: `session.delete`); `auth/login` / `auth/logout` exactly when the
//!    agent's `initialize` answer, as received, lists auth methods, and never before the
//!    handshake; that answer lists a `terminal` method only for a client with `auth.terminal`;
//!    a `tool_call/cancel` / `terminal/cancel` exactly when that one's latest update advertised
//!    `capabilities.cancel` and was not final (the client application's own record, forgotten
//!    with its session's close); an elicitation exactly when the client advertised its mode,
//!    and the client receives none other, nor an `elicitation/complete` without `url` or for
//!    an elicitation it did not accept; an update exactly for an announced (or resuming)
//!    session (`client_send_v2`, `agent_send_update`, `agent_elicit_v2`, `v2_elicit`).
//! 7. `cancel_turn` answers every pending permission ask of the session (`client_cancel_turn_v2`).
//! 8. Client: nothing of a session (update, ask, session-scoped elicitation) arrives after its
//!    close (or delete) answer, until the client sends a resume of it (a resume in flight, or
//!    one it gave up on, exempts that session: the agent may still resume it).
//! 9. Once settled, every elicitation of the agent has its outcome.
//!
//! The v1 invariants on bounds, memory, busy loops, events after `Closed` and the wire checker
//! ([`acp_proto::wire_check`]) run unchanged on both peers.

use std::collections::{BTreeMap, BTreeSet};

use crate::link::Event;
use acp_proto::types::{ProtocolVersion, SessionId};
use acp_proto::v2::{self, AgentNotification, AgentRequest, AgentResponse, ClientResponse, SessionUpdate, StateUpdate};
use acp_proto::{Completion, InboundId, Negotiated, OutboundId, RpcError, Side};
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
pub(super) struct ClientTurn {
    pub(super) id: OutboundId,
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
    /// Agent: the counter behind its tool call, terminal and session ids.
    pub(super) next_tool: u64,
    /// Client: open turns by session.
    pub(super) client_turns: BTreeMap<String, ClientTurn>,
    /// Client: the sequence number expected next per session.
    client_seq: BTreeMap<String, u64>,
    /// Client: tool calls seen, by (session, id): whether cancellable (the client's own record).
    pub(super) client_tools: BTreeMap<(String, String), bool>,
    /// Client: the turn whose idle (`false`) or whose session's close answer (`true`) was just
    /// delivered: its end must be the next event.
    pub(super) expect_end: Option<(String, OutboundId, bool)>,
    /// Client: the turn the close answer just ended (checked by `client_turn_ended`).
    pub(super) close_ended: Option<OutboundId>,
    /// Client: the v2 requests in flight (method, session).
    pub(super) client_sent: BTreeMap<OutboundId, (Option<v2::Method>, Option<String>)>,
    /// Client: sessions it created (it may resume them, closed or not).
    pub(super) client_known: BTreeSet<String>,
    /// Client: sessions whose close (or delete) answer arrived and that were not resumed
    /// since: nothing of them may arrive.
    pub(super) client_closed: BTreeSet<String>,
    /// Client: sessions with a resume it gave up on (the agent may still have resumed them):
    /// never marked closed.
    pub(super) client_doubtful: BTreeSet<String>,
    /// Client: the agent's `initialize` answer listed auth methods.
    pub(super) client_auth: bool,
    /// Client: the capabilities it sent in `initialize`.
    pub(super) client_caps: Value,
    /// Client: URL elicitations it accepted (their ids): `elicitation/complete` names one.
    pub(super) client_url_accepted: BTreeSet<String>,
    /// Agent: sessions it knows (created, not deleted): a resume of one succeeds.
    pub(super) agent_history: BTreeSet<String>,
    /// Agent: the session whose history it is replaying (inside a resume's handler).
    pub(super) agent_replaying: Option<String>,
    /// Agent: it listed an `agent` auth method: `session/new` needs a login first.
    pub(super) agent_auth: bool,
    pub(super) agent_logged_in: bool,
    /// Agent: its elicitations in flight: the session of a session-scoped one, and the id of
    /// a URL one.
    pub(super) agent_elicitations: BTreeMap<OutboundId, (Option<String>, Option<String>)>,
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
            if let Some(closed) = v["result"]["_meta"]["simClosed"].as_str() {
                // A close (or delete) answer: that session's work is over (its idle, if it
                // worked, went before).
                self.wire_working.remove(closed);
                self.must_say_cancelled.remove(closed);
                continue;
            }
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

/// The tool call (`tool:<id>`) or terminal (`term:<id>`) a v2 update upserts, with whether it
/// is cancellable after it (`None`: the update leaves that as it was), as the machine follows
/// it (its module docs).
pub(super) fn tool_effect(update: &SessionUpdate) -> Option<(String, Option<bool>)> {
    let (key, done, caps) = match update {
        SessionUpdate::ToolCallUpdate(u) => {
            let status = serde_json::to_value(&u.status).unwrap_or(Value::Null);
            let done = matches!(status.as_str(), Some("completed" | "failed" | "cancelled"));
            (format!("tool:{}", u.tool_call_id), done, u.capabilities.as_ref().map(|c| c.cancel.is_some()))
        }
        SessionUpdate::TerminalUpdate(u) => {
            let caps = u.capabilities.as_ref().map(|c| c.cancel.is_some());
            (format!("term:{}", u.terminal_id), u.exit_status.is_some(), caps)
        }
        _ => return None,
    };
    Some((key, if done { Some(false) } else { caps }))
}

impl<C: Chooser> Sim<'_, C> {
    /// Client: the handshake completed; the version is the one the configuration implies.
    pub(super) fn client_handshake_completed_v2(&mut self, n: &Negotiated) {
        match self.config.protocol {
            Protocol::V1 => assert_eq!(n.protocol_version, ProtocolVersion::V1),
            Protocol::V2 => {
                assert_eq!(n.protocol_version, ProtocolVersion::V2, "both speak 2: v2 is negotiated");
                self.summary.v2.negotiated_v2 += 1;
            }
            Protocol::Mixed => {
                assert_eq!(n.protocol_version, ProtocolVersion::V1, "a v1 client: the acceptor picks v1");
                self.summary.v2.accepted_v1 += 1;
            }
        }
    }

    /// Client: a prompt was sent: it opens its session's turn, or joins the open one.
    pub(super) fn client_open_turn(&mut self, session: &str, id: OutboundId) {
        // The machine says which, and it agrees with the model (`Connection::open_turn`).
        let open = self.client.conn.open_turn(&SessionId::from(session));
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
            .filter(|h| matches!(&h.request, Req::V2(v2::Request::Agent(AgentRequest::RequestPermission(p))) if p.session_id.as_str() == s))
            .collect();
        self.check_cancel_turn_answers(&s, &asks, answered);
    }

    /// Client: a v2 request arrived (a permission ask, an elicitation): never of a session it
    /// closed, an elicitation only of a mode it advertised.
    pub(super) fn client_request_v2(&mut self, id: InboundId, request: v2::Request) {
        let session = match &request {
            v2::Request::Agent(AgentRequest::CreateElicitation(e)) => {
                self.client_elicitation_received(e);
                super::v2_elicit::session_of(e)
            }
            other => other.session_id().map(|s| s.as_str().to_owned()),
        };
        if let Some(s) = session {
            assert!(!self.v2.client_closed.contains(&s), "client: {} of {s} after its close answer", request.wire());
        }
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
            v2::Request::Agent(AgentRequest::RequestPermission(p)) => {
                let (outcome, tag) = match self.c.below(4) {
                    0 => (json!({"outcome": "cancelled"}), "cancelled".to_owned()),
                    _ => {
                        let o = self.c.pick(&p.options).option_id.to_string();
                        (json!({"outcome": "selected", "optionId": o}), o)
                    }
                };
                (Ok(typed::<v2::RequestPermissionResponse>(json!({"outcome": outcome})).into()), Ok(Some(tag)))
            }
            v2::Request::Agent(AgentRequest::CreateElicitation(e)) => self.client_elicitation_answer(e),
            _ => (Err(RpcError::method_not_found(request.wire())), Err(-32601)),
        };
        let before = self.client.conn.bytes_queued();
        let r = self.client.conn.respond::<acp_proto::V2>(self.now, pending.id, result);
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

    /// Client: a v2 notification (invariants 3 and 4; nothing of a closed session).
    pub(super) fn client_notification_v2(&mut self, notification: v2::Notification, turn: Option<TurnStamp>) {
        if let v2::Notification::Agent(AgentNotification::CompleteElicitation(c)) = &notification {
            return self.client_elicitation_complete(c);
        }
        let v2::Notification::Agent(AgentNotification::SessionUpdate(n)) = notification else { return };
        let s = n.session_id.as_str().to_owned();
        assert!(!self.v2.client_closed.contains(&s), "client: an update of {s} after its close answer: {:?}", n.update);
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
                    self.v2.expect_end = Some((s, open.id, false));
                }
            }
            (Some(stamp), None) => panic!("update stamped {stamp:?} but session {s} has no open turn"),
            (None, Some(open)) => panic!("an update of {s} arrived unstamped while its turn {} is open", open.id),
            (None, None) => self.summary.v2.updates_unstamped += 1,
        }
    }

    /// Client: the turn that an idle, or the close of its session, just ended must end with
    /// the very next event (invariant 2).
    pub(super) fn client_check_turn_end_follows(&mut self, event: &Event) {
        if let Some((s, id, by_close)) = self.v2.expect_end.take() {
            let follows = match event {
                Event::TurnEnded { session, turn, reason } if session.as_str() == s && *turn == id => {
                    matches!(
                        (reason, by_close),
                        (TurnEndReason::Idle { .. }, false) | (TurnEndReason::SessionClosed, true)
                    )
                }
                _ => false,
            };
            let what = if by_close { "the close answer of" } else { "the idle of turn" };
            assert!(follows, "{what} {s} (turn {id}) was followed by {event:?}, not the turn's end");
            if by_close {
                self.v2.close_ended = Some(id);
            }
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
                let ended = self.client.conn.is_closed() || self.client.conn.input_ended();
                assert!(ended, "turn {turn} ended ConnectionClosed on an open connection before its input ended");
                2
            }
            TurnEndReason::SessionClosed => {
                let expected = self.v2.close_ended.take();
                assert_eq!(expected, Some(turn), "turn {turn} ended SessionClosed without its session's close answer");
                3
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
            v2::Response::Agent(AgentResponse::Prompt(p)) => {
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
            v2::Response::Agent(AgentResponse::NewSession(n)) => {
                assert!(replies.contains(&Ok(None)), "session/new r{label} succeeded, replies {replies:?}");
                self.client.sessions.push(n.session_id.as_str().to_owned());
                self.v2.client_known.insert(n.session_id.as_str().to_owned());
            }
            v2::Response::Client(ClientResponse::RequestPermission(p)) => {
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
            v2::Response::Client(ClientResponse::CreateElicitation(e)) => {
                self.agent_elicitation_result(id, label, e, replies)
            }
            _ => {
                assert!(replies.contains(&Ok(None)), "{side:?}: r{label} succeeded, replies {replies:?}");
                if side == Side::Client {
                    self.client_lifecycle_result(id, out.session.as_deref(), response);
                }
            }
        }
    }

    /// Once settled: no client turn is left open, no agent work is left without its idle
    /// (invariants 2 and 5).
    pub(super) fn check_v2_settled(&self) {
        let open: Vec<&String> = self.v2.client_turns.keys().collect();
        assert!(open.is_empty(), "client turns never ended: {open:?}");
        let waiting: Vec<&OutboundId> = self.v2.agent_elicitations.keys().collect();
        assert!(waiting.is_empty(), "agent elicitations without an outcome: {waiting:?}");
        if !self.agent.closed {
            let working = &self.v2.wire_working;
            assert!(working.is_empty(), "agent work never ended by an idle: {working:?}");
        }
        let ended: u64 = self.summary.v2.turns_ended.iter().sum();
        assert_eq!(ended, self.summary.v2.turns_opened, "turns opened and ended");
    }
}
