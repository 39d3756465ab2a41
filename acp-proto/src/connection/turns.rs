//! Prompt turns: the rules of `docs/prompt-turn.mdx` and `docs/cancellation.mdx` that hold by
//! construction in the core, on both sides.
//!
//! # Agent side
//!
//! | state of a session | event | what the machine does |
//! |---|---|---|
//! | unknown | `session/new` (or the unstable `session/fork`) answered with `sessionId` S, or `session/load` / `session/resume` of S answered successfully | S is **announced**; `session/update`s for S may be sent from now on |
//! | unknown | `session/load` / `session/resume` of S dispatched | updates for S allowed (the history replay), before their response |
//! | announced, idle | `session/prompt` | the turn **runs**; dispatched to the application |
//! | running | `session/prompt` | answered `-32600` (one turn at a time per session) |
//! | running | `session/cancel` | the turn is **cancelling**: [`Event::Cancelled`] (`SessionCancelled`) for the prompt; `$/cancel_request` for every outstanding agent→client request of S, each resolved [`Outcome::Cancelled`]; the grace deadline is armed |
//! | cancelling | a permission ask for S | resolves [`Outcome::Cancelled`] at once, no frame |
//! | cancelling | the prompt handler completes, with anything | answered `stopReason: "cancelled"` (after every update queued before) |
//! | cancelling | the grace deadline passes | the machine answers `stopReason: "cancelled"` itself; the later completion is discarded |
//! | idle or unknown | `session/cancel` | nothing |
//! | announced | `session/close` / `session/delete` answered successfully | no longer announced |
//!
//! A `session/update` queued for a session that is neither announced nor loading is refused
//! ([`SendError::UnknownSession`]). Since frames leave in the order they were queued and the
//! prompt's response is queued only when the application completes it, every update the
//! application queued before completing a turn precedes that turn's response.
//!
//! A prompt for a session the agent never announced is dispatched untracked: the handler
//! decides (typically `-32002`).
//!
//! # Client side
//!
//! | event | what the machine does |
//! |---|---|
//! | `session/prompt` sent for S | a turn of S opens (a second one while it runs is refused, [`SendError::TurnAlreadyRunning`]) |
//! | `session/update` for S received while the turn runs | delivered with a [`TurnStamp`]: the turn and a contiguous ordinal 0, 1, 2… |
//! | `session/update` for S outside a turn | delivered unstamped |
//! | the prompt's outcome | delivered after every update received before it; the turn is over, later updates are unstamped |
//! | [`Connection::cancel_turn`] | sends `session/cancel`; answers every pending `session/request_permission` of S with the `cancelled` outcome: those the application holds, each reported as [`Event::Cancelled`] (`TurnCancelled`), and those received but not yet handed to it (deferred while the output was full), silently: they leave the queue and are never handed to it; returns how many it answered, of both kinds; the outbound prompt stays pending (the agent answers it `cancelled`) |
//! | a `session/request_permission` for S arrives after the cancel, before the prompt's outcome | answered `cancelled` by the machine at once, never dispatched (the agent may have asked before it saw the cancel) |
//!
//! An ask the application has not seen is answered too because it is pending for the agent
//! like any other (the spec: the client MUST answer every pending permission request
//! `cancelled` when it cancels a turn), and showing it afterwards would ask the user about a
//! turn they cancelled (`tests/output_bound.rs`,
//! `client_cancel_turn_answers_a_deferred_permission_ask`). An ask still parked unread behind
//! the machine's own answers (module `parked`) is not pending yet; the turn's end never
//! overtakes it, so when it is read the row after `cancel_turn` answers it
//! (`tests/parked_input.rs`, `a_turn_never_ends_before_an_ask_of_its_session_that_came_ahead`).
//!
//! A permission answer must name one of the offered options (or be `cancelled`):
//! [`Connection::respond`] answers anything else `cancelled` (granting nothing) and reports the
//! mistake, and [`Connection::answer_permission`] builds the answer from a [`PermissionAnswer`].
//!
//! [`Event::Cancelled`]: super::Event::Cancelled
//! [`Outcome::Cancelled`]: super::Outcome::Cancelled
//! [`SendError::UnknownSession`]: super::SendError::UnknownSession
//! [`SendError::TurnAlreadyRunning`]: super::SendError::TurnAlreadyRunning
//! [`TurnStamp`]: super::TurnStamp

#[cfg(doc)]
use super::Connection;
use std::collections::{BTreeMap, BTreeSet};

use super::lane::Lane;
use super::{
    AnyConnection, AnyEvent, CancelReason, InboundExtra, InboundId, OutboundId, PendingOut, Phase, SendError, Timer,
    TurnStamp,
};
use crate::Side;
use crate::error::RpcError;
use crate::methods::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest, Method, Notification, Request,
    Response,
};
use crate::protocol::{Protocol, V1};
use crate::time::Instant;
use crate::types::{
    CancelNotification, PermissionOptionId, RequestPermissionOutcome, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionId,
};

/// A client's answer to a permission request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionAnswer {
    /// One of the options the request offered.
    Selected(PermissionOptionId),
    /// The user dismissed the request (or the turn was cancelled).
    Cancelled,
}

impl PermissionAnswer {
    /// The `session/request_permission` result that says it.
    pub fn into_response(self) -> RequestPermissionResponse {
        RequestPermissionResponse::new(match self {
            PermissionAnswer::Selected(option) => {
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option))
            }
            PermissionAnswer::Cancelled => RequestPermissionOutcome::Cancelled,
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct ClientTurn {
    prompt: i64,
    next_ordinal: u64,
}

/// Session and turn bookkeeping of one connection.
#[derive(Debug, Default)]
pub(super) struct Turns {
    /// Agent: sessions announced to the client.
    announced: BTreeSet<SessionId>,
    /// Agent: `session/load` / `session/resume` in flight per session.
    loading: BTreeMap<SessionId, usize>,
    /// Agent: the running prompt turn (inbound handle) per session.
    running: BTreeMap<SessionId, u64>,
    /// Agent: sessions whose running turn is being cancelled.
    cancelling: BTreeSet<SessionId>,
    /// Agent: outstanding agent→client requests per session, by wire id.
    asks: BTreeMap<SessionId, BTreeSet<i64>>,
    /// Client: the open turn per session.
    client_turns: BTreeMap<SessionId, ClientTurn>,
    /// Client: pending inbound permission asks per session, by handle.
    permission_asks: BTreeMap<SessionId, BTreeSet<u64>>,
    /// Client: sessions whose open turn the application cancelled.
    client_cancelling: BTreeSet<SessionId>,
}

impl Turns {
    /// Entries held, for the memory estimate.
    pub(super) fn len(&self) -> usize {
        self.announced.len()
            + self.loading.len()
            + self.running.len()
            + self.cancelling.len()
            + self.asks.values().map(BTreeSet::len).sum::<usize>()
            + self.client_turns.len()
            + self.permission_asks.values().map(BTreeSet::len).sum::<usize>()
            + self.client_cancelling.len()
    }

    /// Client: the machine's own answer to a request that must not reach the application: a
    /// permission ask for a session whose turn it cancelled.
    pub(super) fn auto_answer(&self, request: &Request) -> Option<Response> {
        match request {
            Request::Agent(AgentRequest::RequestPermission(p)) if self.client_cancelling.contains(&p.session_id) => {
                Some(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled).into())
            }
            _ => None,
        }
    }

    /// Agent: whether updates for `session` may be sent.
    pub(super) fn may_update(&self, session: &SessionId) -> bool {
        self.announced.contains(session) || self.loading.contains_key(session)
    }

    /// Agent: what to remember for an inbound prompt, or the error refusing it.
    pub(super) fn agent_prompt_extra(&self, session: &SessionId) -> Result<InboundExtra, RpcError> {
        if self.running.contains_key(session) {
            return Err(RpcError::invalid_request("a prompt turn is already running for this session").with_data(
                serde_json::json!({
                    "reason": "a prompt turn is already running for this session",
                    "sessionId": session,
                }),
            ));
        }
        Ok(if self.announced.contains(session) { InboundExtra::Prompt(session.clone()) } else { InboundExtra::None })
    }

    /// Records what a dispatched request starts.
    fn on_dispatch(&mut self, key: u64, extra: &InboundExtra) {
        match extra {
            InboundExtra::Prompt(s) => {
                self.running.insert(s.clone(), key);
            }
            InboundExtra::Load(s) => *self.loading.entry(s.clone()).or_default() += 1,
            InboundExtra::Permission(s, _) => {
                self.permission_asks.entry(s.clone()).or_default().insert(key);
            }
            _ => {}
        }
    }

    /// Records what an answered inbound request changes.
    /// Records what an answered inbound request changes (`ok`: it succeeded).
    pub(super) fn on_answer(&mut self, key: u64, extra: &InboundExtra, ok: bool) {
        match extra {
            InboundExtra::Prompt(s) if self.running.get(s) == Some(&key) => {
                self.running.remove(s);
                self.cancelling.remove(s);
            }
            InboundExtra::Load(s) => {
                if let Some(n) = self.loading.get_mut(s) {
                    *n -= 1;
                    if *n == 0 {
                        self.loading.remove(s);
                    }
                }
                if ok {
                    self.announced.insert(s.clone());
                }
            }
            InboundExtra::Forget(s) if ok => {
                self.announced.remove(s);
            }
            InboundExtra::Permission(s, _) => remove_from(&mut self.permission_asks, s, &key),
            _ => {}
        }
    }

    /// Records what a successful v1 answer announces: a new (or forked) session.
    pub(super) fn on_result(&mut self, result: &Response) {
        if let Response::Agent(AgentResponse::NewSession(new)) = result {
            self.announced.insert(new.session_id.clone());
        }
        #[cfg(feature = "unstable_session_fork")]
        if let Response::Agent(AgentResponse::ForkSession(fork)) = result {
            self.announced.insert(fork.session_id.clone());
        }
    }

    /// Client: a permission ask answered outside [`Turns::on_answer`] (a v2 result).
    #[cfg(feature = "unstable_protocol_v2")]
    pub(super) fn forget_permission(&mut self, key: u64, extra: &InboundExtra) {
        if let InboundExtra::Permission(s, _) = extra {
            remove_from(&mut self.permission_asks, s, &key);
        }
    }

    /// Client: refuses a second prompt on a session whose turn runs.
    pub(super) fn check_client_prompt(&self, request: &Request) -> Result<(), SendError> {
        if let Request::Client(ClientRequest::Prompt(p)) = request
            && self.client_turns.contains_key(&p.session_id)
        {
            return Err(SendError::TurnAlreadyRunning(p.session_id.clone()));
        }
        Ok(())
    }

    /// Agent: refuses an update for a session that was never announced.
    pub(super) fn check_agent_update(&self, notification: &Notification) -> Result<(), SendError> {
        if let Notification::Agent(AgentNotification::SessionUpdate(n)) = notification
            && !self.may_update(&n.session_id)
        {
            return Err(SendError::UnknownSession(n.session_id.clone()));
        }
        Ok(())
    }

    /// Agent: a permission ask made while its turn is cancelling resolves at once.
    pub(super) fn agent_ask_resolves_cancelled(&self, request: &Request) -> bool {
        matches!(request, Request::Agent(AgentRequest::RequestPermission(p)) if self.cancelling.contains(&p.session_id))
    }

    /// Records a sent request.
    pub(super) fn on_send_request(&mut self, id: i64, request: &Request) {
        match request {
            Request::Agent(_) => {
                if let Some(s) = request.session_id() {
                    self.asks.entry(s.clone()).or_default().insert(id);
                }
            }
            Request::Client(ClientRequest::Prompt(p)) => {
                let turn = ClientTurn { prompt: id, next_ordinal: 0 };
                self.client_turns.insert(p.session_id.clone(), turn);
            }
            _ => {}
        }
    }

    /// Records the outcome of a sent request.
    pub(super) fn on_outcome(&mut self, id: i64, pending: &PendingOut) {
        let Some(s) = &pending.session else { return };
        if pending.method.v1() == Some(Method::Prompt) {
            if self.client_turns.get(s).is_some_and(|t| t.prompt == id) {
                self.client_turns.remove(s);
                self.client_cancelling.remove(s);
            }
        } else {
            remove_from(&mut self.asks, s, &id);
        }
    }

    /// Client: the stamp of an inbound update inside its session's running turn.
    #[inline]
    pub(super) fn client_stamp(&mut self, notification: &Notification) -> Option<TurnStamp> {
        let Notification::Agent(AgentNotification::SessionUpdate(n)) = notification else {
            return None;
        };
        let turn = self.client_turns.get_mut(&n.session_id)?;
        let stamp = TurnStamp { turn: OutboundId(turn.prompt), ordinal: turn.next_ordinal };
        turn.next_ordinal += 1;
        Some(stamp)
    }
}

fn remove_from<T: Ord>(map: &mut BTreeMap<SessionId, BTreeSet<T>>, session: &SessionId, item: &T) {
    if let Some(set) = map.get_mut(session) {
        set.remove(item);
        if set.is_empty() {
            map.remove(session);
        }
    }
}

/// The turn rules of one protocol version at the engine's hook points: [`Turns`] for v1 (this
/// module) and the v2 state of [`turns_v2`](super::turns_v2) for v2. Each version keeps its
/// own rule table; the engine calls them through this trait only (a supertrait of the
/// version's lane).
pub(crate) trait TurnRules: Protocol {
    /// Client: the machine's own answer to a request that must not reach the application (a
    /// permission ask of a turn the application cancelled).
    fn auto_answer(conn: &AnyConnection, request: &Self::Request) -> Option<Self::Response>;

    /// Hands a received notification to its owner: the turn bookkeeping (`session/cancel`,
    /// the update stamps), then the application.
    fn deliver(conn: &mut AnyConnection, notification: Self::Notification);

    /// The turn rules of a request to send, after the bounds (v1: a second client prompt).
    fn check_turn(conn: &AnyConnection, request: &Self::Request) -> Result<(), SendError>;

    /// Agent side: whether a request resolves `Cancelled` at once, without a frame (a
    /// permission ask of a turn being cancelled).
    fn ask_cancelled(conn: &AnyConnection, request: &Self::Request) -> bool;

    /// The turn rules of a notification to send, after the budget (agent: updates of
    /// announced sessions only; v2: an idle may be rewritten to say `cancelled`).
    fn before_send(conn: &mut AnyConnection, notification: &mut Self::Notification) -> Result<(), SendError>;

    /// The outcome of request `id` sent in this version was queued (`ok`: a result).
    fn on_outcome(conn: &mut AnyConnection, id: i64, pending: &PendingOut, ok: bool);

    /// The end of input: `outcomes` queues the outcomes of the requests awaiting the peer;
    /// the turns no answer can end now end around them.
    fn at_eof(conn: &mut AnyConnection, outcomes: impl FnOnce(&mut AnyConnection));

    /// Close: the version's turn bookkeeping ends.
    fn close(conn: &mut AnyConnection);
}

impl TurnRules for V1 {
    #[inline]
    fn auto_answer(conn: &AnyConnection, request: &Request) -> Option<Response> {
        conn.turns.auto_answer(request)
    }

    #[inline]
    fn deliver(conn: &mut AnyConnection, notification: Notification) {
        conn.deliver_notification(notification);
    }

    #[inline]
    fn check_turn(conn: &AnyConnection, request: &Request) -> Result<(), SendError> {
        conn.turns.check_client_prompt(request)
    }

    #[inline]
    fn ask_cancelled(conn: &AnyConnection, request: &Request) -> bool {
        conn.turns.agent_ask_resolves_cancelled(request)
    }

    #[inline]
    fn before_send(conn: &mut AnyConnection, notification: &mut Notification) -> Result<(), SendError> {
        conn.turns.check_agent_update(notification)
    }

    #[inline]
    fn on_outcome(conn: &mut AnyConnection, id: i64, pending: &PendingOut, _: bool) {
        conn.turns.on_outcome(id, pending);
    }

    #[inline]
    fn at_eof(conn: &mut AnyConnection, outcomes: impl FnOnce(&mut AnyConnection)) {
        outcomes(conn);
    }

    fn close(conn: &mut AnyConnection) {
        conn.turns = Turns::default();
    }
}

impl AnyConnection {
    /// Records what a dispatched inbound request starts.
    pub(super) fn note_dispatch(&mut self, key: u64, extra: &InboundExtra) {
        self.turns.on_dispatch(key, extra);
    }

    /// Agent: `session/cancel` from the client.
    pub(super) fn agent_session_cancel(&mut self, session: &SessionId) {
        let Some(&key) = self.turns.running.get(session) else { return };
        if self.inbound.get(&key).is_some_and(|e| e.deferred) {
            // The application never saw the prompt (the output was full): the machine answers
            // it, and nothing the application started is touched.
            self.answer_result::<V1>(key, &mut super::inbound::cancelled_prompt(None));
            return;
        }
        if !self.turns.cancelling.insert(session.clone()) {
            return;
        }
        let grace_at = self.now + self.config.turn_cancel_grace;
        if let Some(entry) = self.inbound.get_mut(&key) {
            let old = entry.grace.replace(grace_at);
            entry.cancelled = Some(CancelReason::SessionCancelled);
            self.disarm(old, Timer::Grace(key));
            self.arm(grace_at, Timer::Grace(key));
            self.push_event(AnyEvent::Cancelled { id: InboundId(key), reason: CancelReason::SessionCancelled });
        }
        let asks = self.turns.asks.get(session).cloned().unwrap_or_default();
        for id in asks {
            if self.finish_outbound(id, super::AnyOutcome::Cancelled).is_some() {
                self.send_cancel_request(id);
            }
        }
    }

    /// Client side: cancels the running prompt turn of `session`. Sends `session/cancel`,
    /// answers every pending `session/request_permission` of that session with the `cancelled`
    /// outcome (the spec's MUST) and reports each as [`Event::Cancelled`] with
    /// [`CancelReason::TurnCancelled`]. Returns how many permission asks it answered. The
    /// outbound prompt stays pending: the agent answers it with `stopReason: "cancelled"`.
    pub fn cancel_turn(&mut self, now: Instant, session: &SessionId) -> Result<usize, SendError> {
        self.advance(now);
        if self.phase == Phase::Closed {
            return Err(SendError::Closed);
        }
        // Only `Connection<Client, P>` has `cancel_turn`.
        debug_assert_eq!(self.side, Side::Client, "`session/cancel` is the client's");
        if self.phase != Phase::Ready {
            return Err(SendError::NotInitialized);
        }
        #[cfg(feature = "unstable_protocol_v2")]
        self.check_cancel_gate()?;
        let cancel = Notification::Client(ClientNotification::Cancel(CancelNotification::new(session.clone())));
        self.write_notification::<V1>(&cancel)?;
        #[cfg(feature = "unstable_protocol_v2")]
        self.v2.client_cancel(session);
        if self.turns.client_turns.contains_key(session) {
            self.turns.client_cancelling.insert(session.clone());
        }
        let asks = self.turns.permission_asks.get(session).cloned().unwrap_or_default();
        for key in &asks {
            let seen = self.inbound.get(key).is_some_and(|e| !e.deferred);
            self.answer_cancelled_ask(*key);
            if seen {
                self.push_event(AnyEvent::Cancelled { id: InboundId(*key), reason: CancelReason::TurnCancelled });
            }
        }
        // After the end of input, these may have been the last answers owed.
        self.close_if_answered();
        Ok(asks.len())
    }

    /// Client side: answers a `session/request_permission` with one of its offered options, or
    /// `cancelled` (an option the request did not offer is answered `cancelled`). The engine's
    /// tests' shorthand: the application answers through the ask's responder
    /// (`Connection::answer_permission`).
    #[cfg(test)]
    pub(crate) fn answer_permission(
        &mut self,
        now: Instant,
        id: InboundId,
        answer: PermissionAnswer,
    ) -> Result<super::Completion, super::RespondError> {
        self.respond::<V1>(now, id, Ok(answer.into_response().into()))
    }

    /// Client side: answers a permission ask `cancelled`, in the version it was asked in.
    fn answer_cancelled_ask(&mut self, key: u64) {
        #[cfg(feature = "unstable_protocol_v2")]
        if self.inbound.get(&key).is_some_and(|e| e.method.v2().is_some()) {
            return self.answer_result::<crate::protocol::V2>(key, &mut crate::protocol::V2::cancelled_ask());
        }
        self.answer_result::<V1>(key, &mut V1::cancelled_ask());
    }
}
