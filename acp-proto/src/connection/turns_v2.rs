//! ACP v2 (Preview, feature `unstable_protocol_v2`): negotiation and the v2 rules of
//! `spec/v2.0.0-alpha.3/docs/` (prompt-lifecycle, cancellation, tool-calls, authentication,
//! elicitation) that the core keeps by construction.
//!
//! # Negotiation
//!
//! [`Config::supported_versions`] lists the versions a side speaks (default `[1]`: v1 only,
//! exactly as without the feature). A connection speaks the negotiated version for its whole
//! life ([`Negotiated::protocol_version`]); from then on every message is resolved, gated and
//! decoded against that version's table only, so a v1-only method on a v2 connection is
//! `-32601` when received and [`SendError::WrongProtocolVersion`] when sent (a v1 message
//! given to [`send_request`](Connection::send_request) on a v2 connection), and vice versa.
//!
//! | side | situation | what the machine does | test |
//! |---|---|---|---|
//! | agent | `initialize` with `protocolVersion` ≥ 2 (read before the params are decoded), 2 supported | decoded as v2: [`Event::Request`]; answered with [`respond`](Connection::respond) and a v2 `InitializeResponse`, whose `protocolVersion` the machine sets to 2; the connection speaks v2 | `negotiation_v2_client_with_v2_agent`, `negotiation_agent_asked_for_a_later_version_answers_2` |
//! | agent | `initialize` with `protocolVersion` 1 (or 2 not supported) | decoded as v1, [`Event::Request`], as without the feature: the application answers v1 (its latest); a `protocolVersion` 2 in that answer is sent as 1 (any other goes out as written, as without the feature: the client judges it) | `negotiation_v1_client_with_v2_agent`, `negotiation_v2_client_with_v1_only_agent`, `v2_peer::agent_v1_initialize_answer_never_claims_2` |
//! | agent speaking 2 but not 1 | `initialize` with `protocolVersion` 1 (v1 or v2 params) | `-32022` with `data: {requested, supported}`, never an event, nothing negotiated (the v2 schema's `InitializeResponse.protocolVersion`: no supported version at or below the requested one); with ≥ 2, as the first row | `v2_peer::v2_only_agent_never_reads_an_initialize_as_v1` |
//! | client | sent v2 `initialize` ([`send_request`](Connection::send_request)), answer with version 2, 2 supported | the result is decoded as v2 ([`Outcome::Result`]); the connection speaks v2 | `negotiation_v2_client_with_v2_agent` |
//! | client | sent v2 `initialize`, answer with version 1, 1 supported | the result is decoded as v1 ([`Outcome::Result`]); the connection speaks v1, with as its own capabilities what a v1 agent read from the v2 params sent (a v1 `clientCapabilities` is not among them, so: none; the agent will send no `fs/*` or `terminal/*`) | `negotiation_v2_client_with_v1_only_agent` |
//! | client | an answer with a version it does not support, or above the one it offered | closes ([`CloseReason::UnsupportedProtocolVersion`]) | `negotiation_client_answered_3_closes`, `v2_peer::client_that_offered_1_in_v2_shape_refuses_an_answer_of_2`; a v1 `initialize` offering 2 is refused: `negotiation_v1_client_with_v2_agent` |
//! | client | an answer whose `protocolVersion` is missing or not a uint16 (a string, negative, fractional, past 65535) | [`Outcome::InvalidResult`], nothing negotiated, `initialize` may be sent again (as in v1) | `v2_peer::client_answered_with_a_version_that_is_not_a_uint16_may_retry` |
//! | agent | `initialize` whose `protocolVersion` is not a uint16 | never v2: `-32602` from the v1 decoding (as without the feature), nothing negotiated | `v2_peer::agent_odd_protocol_versions_never_negotiate_v2` |
//! | agent | a second `initialize` on a v2 connection | `-32600`, the connection keeps v2 | `v2_peer::agent_initialize_twice_is_refused_and_keeps_v2` |
//!
//! # Example
//!
//! A client and an agent that speak v2, wired by moving bytes: the client prompts, the agent
//! acknowledges, reports `running`, streams a chunk and goes idle; the client sees the chunk
//! stamped into the turn and the turn's one end.
//!
//! ```
//! use acp_proto::role::{Agent, Client, Role};
//! use acp_proto::{Config, Connection, Event, Instant, TurnEndReason, V2};
//! use acp_proto::types::ProtocolVersion;
//! use acp_proto::v2;
//! use serde_json::json;
//!
//! fn of<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
//!     serde_json::from_value(v).unwrap()
//! }
//! fn pipe<A: Role, B: Role>(from: &mut Connection<A, V2>, to: &mut Connection<B, V2>) {
//!     let mut bytes = Vec::new();
//!     let _ = from.poll_transmit(&mut bytes);
//!     let mut at = 0;
//!     while at < bytes.len() {
//!         at += to.handle_input(Instant::ZERO, &bytes[at..]);
//!     }
//! }
//! fn next_call<R: Role>(c: &mut Connection<R, V2>) -> v2::ClientCall {
//!     std::iter::from_fn(|| c.poll_event())
//!         .find_map(|e| match e { Event::Request(request) => request.into_call().into_client(), _ => None })
//!         .unwrap()
//! }
//!
//! let now = Instant::ZERO;
//! let mut client: Connection<Client, V2> = Connection::new(Config::default(), now);
//! let mut agent: Connection<Agent, V2> = Connection::new(Config::default(), now);
//!
//! // Negotiation: the client offers 2, the agent answers (the machine sets `protocolVersion`).
//! let init: v2::InitializeRequest =
//!     of(json!({"protocolVersion": 2, "info": {"name": "editor", "version": "1"}, "capabilities": {}}));
//! client.send_request(now, init, None).unwrap();
//! pipe(&mut client, &mut agent);
//! let v2::ClientCall::Initialize(_, responder) = next_call(&mut agent) else { panic!() };
//! let answer: v2::InitializeResponse = of(json!({"protocolVersion": 2,
//!     "info": {"name": "agent", "version": "1"}, "capabilities": {"session": {}}}));
//! agent.respond(now, responder.answer(Ok(answer))).unwrap();
//! pipe(&mut agent, &mut client);
//! assert_eq!(client.negotiated().unwrap().protocol_version, ProtocolVersion::V2);
//!
//! // A session, then a prompt: the prompt's id names the turn.
//! client.send_request(now, of::<v2::NewSessionRequest>(json!({"cwd": "/w"})), None).unwrap();
//! pipe(&mut client, &mut agent);
//! let v2::ClientCall::NewSession(_, responder) = next_call(&mut agent) else { panic!() };
//! let session: v2::NewSessionResponse = of(json!({"sessionId": "s"}));
//! agent.respond(now, responder.answer(Ok(session))).unwrap();
//! let prompt: v2::PromptRequest = of(json!({"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}));
//! let turn = client.send_request(now, prompt, None).unwrap();
//! pipe(&mut client, &mut agent);
//! let v2::ClientCall::Prompt(_, responder) = next_call(&mut agent) else { panic!() };
//! agent.respond(now, responder.answer(Ok(of::<v2::PromptResponse>(json!({"messageId": "u1"}))))).unwrap();
//! for update in [
//!     json!({"sessionUpdate": "state_update", "state": "running"}),
//!     json!({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "hello"}}),
//!     json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
//! ] {
//!     let update: v2::UpdateSessionNotification = of(json!({"sessionId": "s", "update": update}));
//!     agent.send_notification(now, update).unwrap();
//! }
//! pipe(&mut agent, &mut client);
//!
//! let mut ordinals = Vec::new();
//! let mut ends = Vec::new();
//! while let Some(event) = client.poll_event() {
//!     match event {
//!         Event::Notification { turn: Some(stamp), .. } if stamp.turn == turn => ordinals.push(stamp.ordinal),
//!         Event::TurnEnded { turn: t, reason, .. } if t == turn => ends.push(reason),
//!         _ => {}
//!     }
//! }
//! assert_eq!(ordinals, [0, 1, 2]);
//! assert!(matches!(ends.as_slice(), [TurnEndReason::Idle { stop_reason: Some(_) }]));
//! ```
//!
//! # Agent side
//!
//! | state of a session | event | what the machine does | test |
//! |---|---|---|---|
//! | unknown | `session/new` answered with `sessionId` S, or `session/resume` of S answered successfully | S is **announced**; updates for S may be sent | `agent_updates_need_an_announced_session` |
//! | unknown | `session/resume` of S dispatched | updates for S allowed (the history replay) before the answer | `agent_resume_allows_replay_before_its_answer` |
//! | announced | `session/update` queued for S | sent; for a session neither announced nor resuming refused ([`SendError::UnknownSession`]) | `agent_updates_need_an_announced_session` |
//! | announced | the agent sends a permission ask of S, or an elicitation scoped to S | sent; for a session neither announced nor resuming (never opened, or closed / deleted) refused ([`SendError::UnknownSession`]), as its updates are | `agent_requests_of_a_session_need_it_announced` |
//! | announced, idle | `session/prompt` acknowledged (a successful answer), or the agent sends `state_update` `running` / `requires_action` | S is **working** | `agent_cancel_cascades_and_the_idle_says_cancelled` |
//! | working | another `session/prompt` | dispatched: in v2 a prompt "starts or contributes to foreground work" (no refusal) | `agent_second_prompt_while_working_is_dispatched` |
//! | working | the agent sends `state_update` `idle` | S is idle again | `agent_cancel_cascades_and_the_idle_says_cancelled` |
//! | working (not cancelling) | the agent sends an idle without `stopReason` (the docs: an idle that ends foreground work MUST give one) | refused ([`SendError::InvalidStopReason`]), nothing changes | `agent_idle_that_ends_work_needs_a_known_or_custom_stop_reason` |
//! | any | the agent sends an idle whose `stopReason` is neither known nor `_`-prefixed (the docs: custom reasons MUST begin with `_`) | refused ([`SendError::InvalidStopReason`]) | `agent_idle_that_ends_work_needs_a_known_or_custom_stop_reason` |
//! | working | `session/cancel` | delivered ([`Event::Notification`]: there is no request left to cancel); S is **cancelling**: `$/cancel_request` for every outstanding `session/request_permission` of S, each resolved [`Outcome::Cancelled`]; the grace deadline ([`Config::turn_cancel_grace`]) is armed | `agent_cancel_cascades_and_the_idle_says_cancelled` |
//! | any | `session/cancel` while a `session/prompt` of S waits deferred (the output was full; the application never saw it) | the machine answers that prompt `-32800` (never accepted) before delivering the cancel: delivered after it, the prompt would start the cancelled work | `v2_peer::agent_session_cancel_answers_a_deferred_prompt` |
//! | cancelling | a permission ask for S | resolves [`Outcome::Cancelled`] at once, no frame | `agent_cancel_cascades_and_the_idle_says_cancelled` |
//! | cancelling | the agent sends `state_update` `idle` | sent with `stopReason: "cancelled"` whatever it said (the docs' MUST) | `agent_cancel_cascades_and_the_idle_says_cancelled` |
//! | cancelling | the grace deadline passes | the machine sends the idle `state_update` with `stopReason: "cancelled"` itself, then tells the application with [`Event::CancelGraceExpired`] (its cancelled work should stop; its own idle would now be refused); S is idle | `agent_cancel_grace_sends_the_idle_itself` |
//! | idle after the machine's grace idle | the agent sends an idle | refused ([`SendError::WorkAlreadyEnded`]: a second idle would end the client's next turn) until S works again (`running` / `requires_action` sent or a prompt acknowledged) | `agent_cancel_grace_sends_the_idle_itself` |
//! | idle or unknown | `session/cancel` | delivered; nothing else (no state is kept for a session the agent did not announce: a flood of cancels and failed resumes leaves none) | `agent_cancel_cascades_and_the_idle_says_cancelled`, `v2_peer::agent_state_stays_empty_under_a_flood_of_cancels_and_failed_resumes` |
//! | announced | `session/close` / `session/delete` answered successfully | no longer announced | `agent_updates_need_an_announced_session` |
//!
//! Frames leave in the order they were queued, so every update the agent queued before its
//! idle `state_update` precedes it on the wire.
//!
//! # Client side
//!
//! | event | what the machine does | test |
//! |---|---|---|
//! | `session/prompt` sent for S, no turn open | a turn of S opens, named by that prompt's [`OutboundId`] | `client_turn_stamps_updates_and_ends_once_on_idle` |
//! | `session/prompt` sent for S while its turn is open | it joins the open turn (v2 allows prompts during foreground work) | `client_second_prompt_joins_the_open_turn` |
//! | after a prompt of S was sent as `id` | [`Connection::open_turn`]`(S)` is `Some(id)` when it opened the turn, the opener's id when it joined one: the application need not guess which | `client_second_prompt_joins_the_open_turn` |
//! | a prompt's successful answer | an acknowledgement only: the turn stays open | `client_turn_stamps_updates_and_ends_once_on_idle` |
//! | a prompt's answer after its turn ended (the idle overtook it) | belongs to no turn: it ends none | `client_late_prompt_answer_belongs_to_no_turn` |
//! | `session/update` of S while its turn is open | [`Event::Notification`] with a [`TurnStamp`]: the turn and a contiguous ordinal 0, 1, 2… | `client_turn_stamps_updates_and_ends_once_on_idle` |
//! | `state_update` `idle` of S while its turn is open | delivered stamped, then [`Event::TurnEnded`] ([`TurnEndReason::Idle`]): after every update received before it; the turn is over, later updates are unstamped | `client_turn_stamps_updates_and_ends_once_on_idle` |
//! | every prompt of the open turn failed (error, timeout, local cancel) and none was accepted | [`Event::TurnEnded`] ([`TurnEndReason::PromptFailed`]) after the outcome | `client_failed_prompt_ends_its_turn` |
//! | a successful answer to `session/close` / `session/delete` of S while its turn is open (close cancels the session's work: no idle will come) | [`Event::TurnEnded`] ([`TurnEndReason::SessionClosed`]) after the outcome; S's tool calls and terminals are no longer cancellable; a late idle of S ends nothing | `v2_peer::client_session_close_ends_its_open_turn` |
//! | an update of S with no turn open, a second idle, an update after the idle | delivered unstamped; ends nothing | `v2_peer::client_updates_outside_a_turn_are_unstamped_and_end_nothing` |
//! | the connection closes with a turn open | [`Event::TurnEnded`] ([`TurnEndReason::ConnectionClosed`]) before [`Event::Closed`] | `client_close_ends_open_turns` |
//! | the agent's output ends with a turn open (no idle can come; the client may still answer the agent's requests before it closes: [`half_close`](super::half_close)) | [`Event::TurnEnded`] ([`TurnEndReason::ConnectionClosed`]) at once, after the prompts' outcomes | `half_close::client_eof_ends_open_v2_turns_at_once` |
//! | [`Connection::cancel_turn`] | sends `session/cancel`; answers every pending permission ask of S `cancelled`: those the application holds reported ([`CancelReason::TurnCancelled`]), those received but not yet handed to it (deferred while the output was full) silently, never handed to it afterwards; returns how many, of both kinds (as on v1: `turns`); the turn stays open until the agent's idle | `client_cancel_answers_asks_and_waits_for_idle`, `client_cancel_answers_a_deferred_ask_it_never_shows` |
//! | a permission ask for S after the cancel, before the idle | answered `cancelled` by the machine, never dispatched | `client_cancel_answers_asks_and_waits_for_idle` |
//! | `tool_call/cancel` / `terminal/cancel` sent | refused ([`SendError::NotCancellable`]) unless the latest update of that tool call / terminal (in that session) advertised `capabilities.cancel` and it is not final | `client_tool_call_cancel_needs_the_advertised_capability`, `client_terminal_cancel_needs_the_advertised_capability` |
//!
//! **Upserts.** v2 updates are upserts keyed by id (`messageId`, `toolCallId`, `terminalId`,
//! `planId`): an omitted field leaves the stored value, `null` clears it, chunks append. The
//! machine does not merge them: it delivers every update in the order received, stamped into
//! the turn, so a client that applies them in delivery order per id gets the agent's state. A
//! client may rely on: order (per connection, hence per id), the stamps, and the turn's end
//! coming after every update received before it. It may not rely on an update belonging to
//! the turn's work: background work may send updates of S at any time, inside a turn or not.
//! The one upsert the machine follows itself is `capabilities.cancel` of tool calls and
//! terminals (an update with `capabilities` replaces the advertisement, one without it keeps
//! it, a final `status` or an `exitStatus` ends it), in a record bounded by
//! [`Config::max_cancellable`]: past the bound the oldest entry is forgotten, which can only
//! make the machine refuse a cancel the agent would have allowed, never send one it forbids.
//!
//! # Both sides
//!
//! | rule | test |
//! |---|---|
//! | the v2 table's `gate` against the receiver's own capabilities, both ways: a request failing it is `-32601` (received) or [`SendError::NotSupportedByPeer`] (sent); a notification failing it is dropped and counted (received) or refused (sent) | `gates_apply_both_ways` |
//! | `auth/login` and `auth/logout` need a non-empty `authMethods` in the agent's `initialize` answer (the docs: otherwise the client MUST NOT call either) | `auth_methods_gate_login_and_logout` |
//! | the agent's `initialize` answer keeps `terminal` auth methods only for a client with `auth.terminal` | `terminal_auth_methods_need_the_clients_auth_terminal` |
//! | `elicitation/create` needs the client's `elicitation`, and by mode `elicitation.form` or `elicitation.url` (sent); `elicitation/complete` needs `elicitation.url` | `elicitation_gates_by_mode` |
//! | `$/cancel_request`, correlation, timeouts, bounds and deferral: the engine's, shared with v1 (one road, module `connection`) | `cancel_request_works_on_v2`, `v2_peer::cancel_request_of_a_prompt_both_ways`, `held_and_deferred_requests_work_on_v2`, `v2_results_are_typed_by_the_request_method` |
//! | a v1 method on a v2 connection: `-32601` received, refused sent; a v2 message on a v1 connection: refused | `versions_do_not_mix`, `v2_peer::v1_frames_on_a_v2_connection_are_refused_both_ways` |
//!
//! Left to the application:
//! - an agent answers `-32602` to `tool_call/cancel` for an unknown, final or non-cancellable
//!   tool call (the docs make it the agent's check; the machine would have to hold every tool
//!   call to make it);
//! - an agent sends `running` when foreground work starts, and a `user_message` (or its chunks)
//!   after accepting a prompt (prompt-lifecycle.mdx's MUSTs): the machine cannot tell
//!   foreground output from background output, which may come at any time, so it cannot
//!   refuse an update for coming before them;
//! - after the machine's grace idle, the agent's further updates of the cancelled work come
//!   after the idle (the docs want them before it); the machine cannot tell them from
//!   background updates, so it sends them (only a second idle is refused);
//! - a client prompt cancelled locally ([`Connection::cancel_request`]) or timed out ends its
//!   turn ([`TurnEndReason::PromptFailed`]) though the agent's acknowledgement may have crossed
//!   the cancel: that work's updates and idle then arrive unstamped, and its idle would end a
//!   turn opened meanwhile. To stop accepted work use [`Connection::cancel_turn`]; to be safe,
//!   wait for the idle before prompting that session again.
//!
//! [`Config::supported_versions`]: super::Config::supported_versions
//! [`Config::turn_cancel_grace`]: super::Config::turn_cancel_grace
//! [`Config::max_cancellable`]: super::Config::max_cancellable
//! [`Negotiated::protocol_version`]: super::Negotiated::protocol_version
//! [`SendError::WrongProtocolVersion`]: super::SendError::WrongProtocolVersion
//! [`SendError::UnknownSession`]: super::SendError::UnknownSession
//! [`SendError::NotCancellable`]: super::SendError::NotCancellable
//! [`SendError::InvalidStopReason`]: super::SendError::InvalidStopReason
//! [`SendError::WorkAlreadyEnded`]: super::SendError::WorkAlreadyEnded
//! [`SendError::NotSupportedByPeer`]: super::SendError::NotSupportedByPeer
//! [`Event::Request`]: super::Event::Request
//! [`Event::Request`]: super::Event::Request
//! [`Event::Notification`]: super::Event::Notification
//! [`Event::TurnEnded`]: super::Event::TurnEnded
//! [`Event::CancelGraceExpired`]: super::Event::CancelGraceExpired
//! [`Event::Closed`]: super::Event::Closed
//! [`Outcome::Result`]: super::Outcome::Result
//! [`Outcome::Result`]: super::Outcome::Result
//! [`Outcome::InvalidResult`]: super::Outcome::InvalidResult
//! [`Outcome::Cancelled`]: super::Outcome::Cancelled
//! [`CloseReason::UnsupportedProtocolVersion`]: super::CloseReason::UnsupportedProtocolVersion
//! [`CancelReason::TurnCancelled`]: super::CancelReason::TurnCancelled
//! [`TurnStamp`]: super::TurnStamp
//! [`OutboundId`]: super::OutboundId

#[cfg(doc)]
use super::Connection;
use std::collections::{BTreeMap, BTreeSet};

use super::lane::Lane;
use super::turns::TurnRules;
use super::{AnyConnection, AnyEvent, AnyOutcome, Event, OutboundId, PendingOut, SendError, Timer, TurnStamp};
use crate::Side;
use crate::gate::CapabilitySnapshot;
use crate::protocol::V2;
use crate::time::Instant;
use crate::types::{ProtocolVersion, SessionId};
use crate::v2::{self, IdleStateUpdate, IdleStopReason, SessionUpdate, StateUpdate, ToolCallStatus};

/// How a client's v2 turn ended ([`Event::TurnEnded`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TurnEndReason {
    /// The agent reported `idle`; its stop reason, if it gave one.
    Idle {
        /// The `stopReason` of the idle `state_update`.
        stop_reason: Option<IdleStopReason>,
    },
    /// No prompt of the turn was accepted: each got an error, timed out or was cancelled.
    PromptFailed,
    /// The connection closed with the turn open.
    ConnectionClosed,
    /// The session was closed or deleted (a successful `session/close` / `session/delete`)
    /// with the turn open: its work is cancelled and no idle will come.
    SessionClosed,
}

/// What a successful answer to an inbound v2 request changes (agent side).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SessionEffect {
    /// `session/new`: the answer names the new session.
    New,
    /// `session/resume` of this session (replay allowed while it runs).
    Resume(SessionId),
    /// `session/close` / `session/delete` of this session.
    Forget(SessionId),
    /// `session/prompt` of this session: acknowledged, the session works.
    Prompt(SessionId),
}

#[derive(Debug, Clone)]
struct ClientTurn {
    prompt: i64,
    next_ordinal: u64,
    /// The wire ids of the turn's prompts still awaiting their answer (an answer that comes
    /// after the turn ended belongs to no turn).
    pending: Vec<i64>,
    /// Whether a prompt of the turn was accepted.
    accepted: bool,
}

/// A tool call or terminal of a session, for the cancel record.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum CancelKey {
    Tool(SessionId, String),
    Terminal(SessionId, String),
}

/// The v2 state of a connection.
#[derive(Debug, Default)]
pub(super) struct V2State {
    /// The connection negotiated v2.
    pub(super) active: bool,
    /// Client: the version of the `initialize` sent.
    pub(super) offered: Option<ProtocolVersion>,
    /// Client: its own capabilities as a v1 agent reads the v2 `initialize` params sent.
    pub(super) v1_reading: Option<CapabilitySnapshot>,
    /// The agent's `initialize` answer listed auth methods.
    pub(super) auth_methods: bool,
    /// Agent: announced sessions.
    announced: BTreeSet<SessionId>,
    /// Agent: `session/resume` in flight per session.
    resuming: BTreeMap<SessionId, usize>,
    /// Agent: working sessions, with the grace sequence number once cancelling.
    working: BTreeMap<SessionId, Option<u64>>,
    /// Agent: armed grace deadlines of cancelled sessions.
    graces: BTreeMap<u64, (SessionId, Instant)>,
    next_grace: u64,
    /// Agent: sessions whose cancelled work the machine ended with its own idle (the grace
    /// passed); the application's idle is refused until the session works again.
    ended_by_machine: BTreeSet<SessionId>,
    /// Agent: outstanding permission asks per session, by wire id.
    asks: BTreeMap<SessionId, BTreeSet<i64>>,
    /// Client: the open turn per session.
    turns: BTreeMap<SessionId, ClientTurn>,
    /// Client: sessions whose open turn the application cancelled.
    cancelling: BTreeSet<SessionId>,
    /// Client: tool calls and terminals that advertise `capabilities.cancel`, with their
    /// insertion sequence number, and the reverse index for eviction.
    cancellable: BTreeMap<CancelKey, u64>,
    cancellable_order: BTreeMap<u64, CancelKey>,
    next_cancellable: u64,
}

impl V2State {
    /// Entries held, for the memory estimate.
    pub(super) fn len(&self) -> usize {
        self.announced.len()
            + self.resuming.len()
            + self.working.len()
            + self.ended_by_machine.len()
            + self.graces.len()
            + self.asks.values().map(BTreeSet::len).sum::<usize>()
            + self.turns.values().map(|t| 1 + t.pending.len()).sum::<usize>()
            + self.cancelling.len()
            + self.cancellable.len() * 2
    }

    /// Agent: whether updates (and requests) for `session` may be sent.
    pub(super) fn may_update(&self, session: &SessionId) -> bool {
        self.announced.contains(session) || self.resuming.contains_key(session)
    }

    /// Agent: a request with this effect was dispatched.
    pub(super) fn on_dispatch(&mut self, effect: &SessionEffect) {
        if let SessionEffect::Resume(s) = effect {
            *self.resuming.entry(s.clone()).or_default() += 1;
        }
    }

    /// Agent: the request with this effect was answered (`result`: the result, if it succeeded).
    pub(super) fn on_answer(&mut self, effect: &SessionEffect, result: Option<&v2::Response>) {
        let ok = result.is_some();
        match effect {
            SessionEffect::New => {
                if let Some(v2::Response::Agent(v2::AgentResponse::NewSession(r))) = result {
                    self.announced.insert(r.session_id.clone());
                }
            }
            SessionEffect::Resume(s) => {
                if let Some(n) = self.resuming.get_mut(s) {
                    *n -= 1;
                    if *n == 0 {
                        self.resuming.remove(s);
                    }
                }
                if ok {
                    self.announced.insert(s.clone());
                }
            }
            SessionEffect::Forget(s) if ok => {
                self.announced.remove(s);
                self.working.remove(s);
                self.ended_by_machine.remove(s);
            }
            SessionEffect::Prompt(s) if ok && self.announced.contains(s) => {
                self.ended_by_machine.remove(s);
                self.working.entry(s.clone()).or_insert(None);
            }
            _ => {}
        }
    }

    /// Client: the application cancelled the turn of `session`.
    pub(super) fn client_cancel(&mut self, session: &SessionId) {
        if self.turns.contains_key(session) {
            self.cancelling.insert(session.clone());
        }
    }

    /// Client: whether a permission ask for `session` is answered `cancelled` by the machine.
    pub(super) fn ask_is_cancelled(&self, request: &v2::Request) -> bool {
        matches!(request, v2::Request::Agent(v2::AgentRequest::RequestPermission(p)) if self.cancelling.contains(&p.session_id))
    }

    /// Client: `tool_call/cancel` and `terminal/cancel` need the advertised capability.
    pub(super) fn check_cancellable(&self, request: &v2::Request) -> Result<(), SendError> {
        let key = match request {
            v2::Request::Client(v2::ClientRequest::CancelToolCall(r)) => {
                CancelKey::Tool(r.session_id.clone(), r.tool_call_id.to_string())
            }
            v2::Request::Client(v2::ClientRequest::CancelTerminal(r)) => {
                CancelKey::Terminal(r.session_id.clone(), r.terminal_id.to_string())
            }
            _ => return Ok(()),
        };
        if self.cancellable.contains_key(&key) {
            Ok(())
        } else {
            let (CancelKey::Tool(_, id) | CancelKey::Terminal(_, id)) = key;
            Err(SendError::NotCancellable { id })
        }
    }

    /// Client: follows `capabilities.cancel` in a received update.
    fn follow_cancellable(&mut self, session: &SessionId, update: &SessionUpdate, limit: usize) {
        let (key, caps, done) = match update {
            SessionUpdate::ToolCallUpdate(u) => {
                let done = matches!(
                    u.status,
                    Some(ToolCallStatus::Completed | ToolCallStatus::Failed | ToolCallStatus::Cancelled)
                );
                let caps = u.capabilities.as_ref().map(|c| c.cancel.is_some());
                (CancelKey::Tool(session.clone(), u.tool_call_id.to_string()), caps, done)
            }
            SessionUpdate::TerminalUpdate(u) => {
                let caps = u.capabilities.as_ref().map(|c| c.cancel.is_some());
                (CancelKey::Terminal(session.clone(), u.terminal_id.to_string()), caps, u.exit_status.is_some())
            }
            _ => return,
        };
        match (done, caps) {
            (true, _) | (false, Some(false)) => {
                if let Some(seq) = self.cancellable.remove(&key) {
                    self.cancellable_order.remove(&seq);
                }
            }
            (false, Some(true)) if !self.cancellable.contains_key(&key) => {
                while self.cancellable.len() >= limit.max(1) {
                    let Some((_, oldest)) = self.cancellable_order.pop_first() else { break };
                    self.cancellable.remove(&oldest);
                }
                let seq = self.next_cancellable;
                self.next_cancellable += 1;
                self.cancellable_order.insert(seq, key.clone());
                self.cancellable.insert(key, seq);
            }
            _ => {}
        }
        debug_assert_eq!(self.cancellable.len(), self.cancellable_order.len());
    }

    /// Client: `session` was closed or deleted: its tool calls and terminals are no longer
    /// cancellable.
    fn forget_client_session(&mut self, session: &SessionId) {
        let order = &mut self.cancellable_order;
        self.cancellable.retain(|key, seq| {
            let (CancelKey::Tool(s, _) | CancelKey::Terminal(s, _)) = key;
            let keep = s != session;
            if !keep {
                order.remove(seq);
            }
            keep
        });
        debug_assert_eq!(self.cancellable.len(), self.cancellable_order.len());
    }

    /// Client: a prompt of `session` was sent as wire id `id`.
    pub(super) fn on_send_prompt(&mut self, id: i64, session: &SessionId) {
        let turn = self.turns.entry(session.clone()).or_insert(ClientTurn {
            prompt: id,
            next_ordinal: 0,
            pending: Vec::new(),
            accepted: false,
        });
        turn.pending.push(id);
    }

    /// Agent: a permission ask of `session` was sent as wire id `id`.
    pub(super) fn on_send_ask(&mut self, id: i64, session: &SessionId) {
        self.asks.entry(session.clone()).or_default().insert(id);
    }

    /// Agent: forgets a finished permission ask.
    fn forget_ask(&mut self, id: i64, session: &SessionId) {
        if let Some(set) = self.asks.get_mut(session) {
            set.remove(&id);
            if set.is_empty() {
                self.asks.remove(session);
            }
        }
    }
}

impl AnyConnection {
    /// Client side, v2: the open turn of `session`, named by the `session/prompt` that opened
    /// it; `None` while no turn of it is open (and always on an agent or a v1 connection).
    ///
    /// After [`send_request`](Connection::send_request) of a prompt returned `id`, the prompt
    /// opened a turn exactly when this is `Some(id)`; otherwise it joined the turn named here,
    /// whose updates are stamped with that turn's id.
    pub(crate) fn open_turn(&self, session: &SessionId) -> Option<OutboundId> {
        self.v2.turns.get(session).map(|turn| OutboundId(turn.prompt))
    }

    /// Agent side, v2: the grace of a cancelled session passed: the machine ends the work.
    pub(super) fn turn_grace_expired(&mut self, seq: u64) {
        let Some((session, _)) = self.v2.graces.remove(&seq) else { return };
        if self.v2.working.get(&session) != Some(&Some(seq)) {
            return;
        }
        self.v2.working.remove(&session);
        self.v2.ended_by_machine.insert(session.clone());
        let idle = IdleStateUpdate { stop_reason: Some(IdleStopReason::Cancelled), ..IdleStateUpdate::default() };
        let update = v2::UpdateSessionNotification {
            session_id: session.clone(),
            update: SessionUpdate::StateUpdate(StateUpdate::Idle(idle)),
            meta: None,
        };
        // The machine's own notification: never refused by the budget.
        let _ = self.write_notification::<V2>(&update.into());
        self.push_event(AnyEvent::CancelGraceExpired { session });
    }
}

/// Client side: the stamp of a received update, and the turn it ends, if it does.
fn client_stamp(
    conn: &mut AnyConnection,
    notification: &v2::Notification,
) -> (Option<TurnStamp>, Option<(SessionId, OutboundId, TurnEndReason)>) {
    let v2::Notification::Agent(v2::AgentNotification::SessionUpdate(n)) = notification else {
        return (None, None);
    };
    let limit = conn.config.max_cancellable;
    conn.v2.follow_cancellable(&n.session_id, &n.update, limit);
    let Some(turn) = conn.v2.turns.get_mut(&n.session_id) else { return (None, None) };
    let stamp = TurnStamp { turn: OutboundId(turn.prompt), ordinal: turn.next_ordinal };
    turn.next_ordinal += 1;
    let SessionUpdate::StateUpdate(StateUpdate::Idle(idle)) = &n.update else { return (Some(stamp), None) };
    conn.v2.turns.remove(&n.session_id);
    conn.v2.cancelling.remove(&n.session_id);
    let reason = TurnEndReason::Idle { stop_reason: idle.stop_reason.clone() };
    (Some(stamp), Some((n.session_id.clone(), stamp.turn, reason)))
}

/// Agent side: `session/cancel` from the client (already delivered to the application).
fn session_cancel(conn: &mut AnyConnection, session: &SessionId) {
    let Some(state) = conn.v2.working.get_mut(session) else { return };
    if state.is_some() {
        return;
    }
    let seq = conn.v2.next_grace;
    conn.v2.next_grace += 1;
    *state = Some(seq);
    let at = conn.now + conn.config.turn_cancel_grace;
    conn.v2.graces.insert(seq, (session.clone(), at));
    conn.arm(at, Timer::TurnGrace(seq));
    let asks = conn.v2.asks.remove(session).unwrap_or_default();
    for id in asks {
        if conn.finish_outbound(id, AnyOutcome::Cancelled).is_some() {
            conn.send_cancel_request(id);
        }
    }
}

/// Agent side: checks an update before it is sent and applies its state change; an idle that
/// ends a cancelled turn is rewritten to say `cancelled`.
fn agent_update(conn: &mut AnyConnection, notification: &mut v2::Notification) -> Result<(), SendError> {
    let v2::Notification::Agent(v2::AgentNotification::SessionUpdate(n)) = notification else { return Ok(()) };
    if !conn.v2.may_update(&n.session_id) {
        return Err(SendError::UnknownSession(n.session_id.clone()));
    }
    let session = &n.session_id;
    match &mut n.update {
        SessionUpdate::StateUpdate(StateUpdate::Running(_) | StateUpdate::RequiresAction(_)) => {
            conn.v2.ended_by_machine.remove(session);
            conn.v2.working.entry(session.clone()).or_insert(None);
        }
        SessionUpdate::StateUpdate(StateUpdate::Idle(idle)) => {
            // Checks first: a refused idle changes nothing.
            if conn.v2.ended_by_machine.contains(session) {
                return Err(SendError::WorkAlreadyEnded(session.clone()));
            }
            let cancelling = matches!(conn.v2.working.get(session), Some(Some(_)));
            if cancelling {
                idle.stop_reason = Some(IdleStopReason::Cancelled);
            }
            let invalid = match &idle.stop_reason {
                None => conn.v2.working.contains_key(session),
                Some(IdleStopReason::Unknown(r)) => !r.starts_with('_'),
                Some(_) => false,
            };
            if invalid {
                let stop_reason = idle.stop_reason.as_ref().map(|r| r.as_str().to_owned());
                return Err(SendError::InvalidStopReason { session: session.clone(), stop_reason });
            }
            if let Some(Some(seq)) = conn.v2.working.remove(session)
                && let Some((_, at)) = conn.v2.graces.remove(&seq)
            {
                conn.disarm(Some(at), Timer::TurnGrace(seq));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The v2 turn rules at the engine's hook points (module `turns`' [`TurnRules`]).
impl TurnRules for V2 {
    fn auto_answer(conn: &AnyConnection, request: &v2::Request) -> Option<v2::Response> {
        conn.v2.ask_is_cancelled(request).then(<V2 as Lane>::cancelled_ask)
    }

    fn deliver(conn: &mut AnyConnection, notification: v2::Notification) {
        if let v2::Notification::Client(v2::ClientNotification::Cancel(c)) = &notification {
            let session = c.session_id.clone();
            conn.answer_deferred_prompts(&session);
            conn.push_typed(|| Event::<V2>::Notification { notification, turn: None });
            return session_cancel(conn, &session);
        }
        let (turn, end) = client_stamp(conn, &notification);
        conn.push_typed(|| Event::<V2>::Notification { notification, turn });
        if let Some((session, turn, reason)) = end {
            conn.push_event(AnyEvent::TurnEnded { session, turn, reason });
        }
    }

    fn check_turn(_: &AnyConnection, _: &v2::Request) -> Result<(), SendError> {
        Ok(())
    }

    /// Agent side: a permission ask resolves `Cancelled` at once while its session's work is
    /// being cancelled.
    fn ask_cancelled(conn: &AnyConnection, request: &v2::Request) -> bool {
        matches!(request, v2::Request::Agent(v2::AgentRequest::RequestPermission(p))
            if matches!(conn.v2.working.get(&p.session_id), Some(Some(_))))
    }

    fn before_send(conn: &mut AnyConnection, notification: &mut v2::Notification) -> Result<(), SendError> {
        if conn.side == Side::Agent { agent_update(conn, notification) } else { Ok(()) }
    }

    /// A client prompt's failure may end its turn (after the outcome), an agent's permission
    /// ask leaves the cancel cascade, a closed session's turn ends.
    fn on_outcome(conn: &mut AnyConnection, id: i64, pending: &PendingOut, ok: bool) {
        let (Some(s), Some(super::v2::V2Method::Table(m))) = (&pending.session, pending.method.v2()) else { return };
        match m {
            v2::Method::Prompt => {
                let Some(turn) = conn.v2.turns.get_mut(s) else { return };
                let Some(at) = turn.pending.iter().position(|p| *p == id) else { return };
                turn.pending.swap_remove(at);
                turn.accepted |= ok;
                if turn.pending.is_empty() && !turn.accepted {
                    let prompt = OutboundId(turn.prompt);
                    conn.v2.turns.remove(s);
                    conn.v2.cancelling.remove(s);
                    let reason = TurnEndReason::PromptFailed;
                    conn.push_event(AnyEvent::TurnEnded { session: s.clone(), turn: prompt, reason });
                }
            }
            v2::Method::RequestPermission => conn.v2.forget_ask(id, s),
            v2::Method::CloseSession | v2::Method::DeleteSession if ok && conn.side == Side::Client => {
                conn.v2.forget_client_session(s);
                if let Some(turn) = conn.v2.turns.remove(s) {
                    conn.v2.cancelling.remove(s);
                    let reason = TurnEndReason::SessionClosed;
                    conn.push_event(AnyEvent::TurnEnded { session: s.clone(), turn: OutboundId(turn.prompt), reason });
                }
            }
            _ => {}
        }
    }

    /// End of input, client side: no idle can come, so every open turn ends now, as on close
    /// (the connection may stay half-closed a while, answering the agent's requests). The
    /// turns are taken before `outcomes` runs (the prompts' outcomes: a turn left open would
    /// end `PromptFailed`), and end after it.
    fn at_eof(conn: &mut AnyConnection, outcomes: impl FnOnce(&mut AnyConnection)) {
        conn.v2.cancelling.clear();
        let turns = std::mem::take(&mut conn.v2.turns);
        outcomes(conn);
        for (session, turn) in turns {
            let reason = TurnEndReason::ConnectionClosed;
            conn.push_event(AnyEvent::TurnEnded { session, turn: OutboundId(turn.prompt), reason });
        }
    }

    /// Close: every open client turn ends.
    fn close(conn: &mut AnyConnection) {
        let state = std::mem::take(&mut conn.v2);
        for (session, turn) in state.turns {
            let reason = TurnEndReason::ConnectionClosed;
            conn.push_event(AnyEvent::TurnEnded { session, turn: OutboundId(turn.prompt), reason });
        }
        conn.v2 = V2State { active: state.active, auth_methods: state.auth_methods, ..V2State::default() };
    }
}
