//! End of input is a half-close: the peer will send nothing more, but it may still read, so
//! the requests it sent before are answered before the connection closes.
//!
//! # Rules
//!
//! [`Connection::handle_eof`], in this order:
//!
//! 1. **The last line** without its `\n` is processed as a frame
//!    (`a_request_right_before_eof_is_answered_then_the_connection_closes`).
//! 2. **Nothing more can be answered to us**: every outbound request still pending gets
//!    [`Outcome::ConnectionClosed`] at once; a request sent later resolves so at once, without
//!    a frame. Client side (v2, feature `unstable_protocol_v2`), every open turn ends
//!    (`TurnEndReason::ConnectionClosed`): no idle can come (`outbound_requests_end_at_eof_and_later_ones_resolve_at_once`,
//!    `v2::client_eof_ends_open_v2_turns_at_once`).
//! 3. **What we owe is still answered**: every inbound request received before the end keeps
//!    its exactly one response, as if the peer had sent `$/cancel_request` for it: its
//!    handler is told ([`CancelReason::InputEnded`]) so that long work can wrap up, and its
//!    completion goes out as usual (a result, or a `-32800` error); the application may still
//!    send notifications (a turn's updates precede its answer). A request deferred behind a
//!    full output, never seen by the application, is answered `-32800` at once. Requests held
//!    behind a pending `initialize` are dispatched once it is answered, each told at once in
//!    the same way (`-32600` each if it fails)
//!    (`initialize_and_the_requests_held_behind_it_are_answered_after_eof`,
//!    `a_request_deferred_behind_a_full_output_at_eof_is_answered_at_once`,
//!    `notifications_still_go_out_while_answers_are_owed`,
//!    `v2::agent_answers_a_v2_prompt_received_before_eof`).
//! 4. **A bound**: a handler that has not answered [`Config::cancel_grace`] after it was told
//!    is answered by the machine (`-32800`; a prompt whose turn `session/cancel` cancelled
//!    before, `stopReason: "cancelled"` after its own grace), and its later completion is
//!    discarded. A handler that never finishes cannot keep the connection open: the end
//!    comes within `cancel_grace` (twice that when requests wait behind `initialize`)
//!    (`the_grace_answers_what_is_still_owed_and_closes`,
//!    `the_grace_answers_initialize_and_what_is_held_behind_it`).
//! 5. **Then the close**: once no request is owed, the connection closes
//!    ([`CloseReason::PeerEof`]); its answers stay queued for
//!    [`poll_transmit`](Connection::poll_transmit), so an adapter writes them before it
//!    lets the transport go (`eof_with_nothing_owed_closes_at_once`,
//!    `cancelling_a_turn_after_eof_can_answer_the_last_request_owed`).
//!
//! Input after the end is consumed and ignored ([`Connection::wants_input`] is false:
//! `input_after_eof_is_consumed_and_ignored`). An adapter whose output fails closes the
//! connection itself ([`Connection::close`]): from then on nothing is answered, and nothing
//! waits for a bound (`a_local_close_while_half_closed_ends_it_at_once`). The tests are in
//! `connection::tests::half_close`.
//!
//! ```
//! use acp_proto::role::Agent;
//! use acp_proto::{Call, CancelReason, ClientCall, CloseReason, Connection, Event, Instant};
//! use acp_proto::types::{InitializeResponse, ProtocolVersion};
//!
//! let mut agent: Connection<Agent> = Connection::agent(Instant::ZERO);
//! // `printf '<initialize>\n' | agent`: the request, then the end of input at once.
//! let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
//! let _ = agent.handle_input(Instant::ZERO, init);
//! agent.handle_eof(Instant::ZERO);
//! let Some(Event::Request(request)) = agent.poll_event() else { panic!("the request") };
//! let Call::Client(ClientCall::Initialize(_, responder)) = request.into_call() else { panic!() };
//! let id = responder.id();
//! assert_eq!(agent.poll_event(), Some(Event::Cancelled { id, reason: CancelReason::InputEnded }));
//! assert!(!agent.is_closed() && agent.input_ended(), "half-closed: the answer is owed");
//! let answer = InitializeResponse::new(ProtocolVersion::V1);
//! agent.respond(Instant::ZERO, responder.answer(Ok(answer))).unwrap();
//! assert!(agent.is_closed(), "nothing owed any more");
//! let mut out = Vec::new();
//! let _ = agent.poll_transmit(&mut out);
//! assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":0,"result":"#));
//! let events: Vec<Event> = std::iter::from_fn(|| agent.poll_event()).collect();
//! assert!(matches!(events[..], [.., Event::Closed { reason: CloseReason::PeerEof }]));
//! ```
//!
//! [`Outcome::ConnectionClosed`]: super::Outcome::ConnectionClosed
//! [`CloseReason::PeerEof`]: super::CloseReason::PeerEof
//! [`CancelReason::InputEnded`]: super::CancelReason::InputEnded
//! [`Config::cancel_grace`]: super::Config::cancel_grace

#[cfg(doc)]
use super::Connection;
use super::{AnyConnection, AnyEvent, AnyOutcome, CancelReason, CloseReason, InboundId, OutboundId, Phase, Timer};
use crate::error::RpcError;

impl AnyConnection {
    /// Whether the peer's output ended ([`handle_eof`](Self::handle_eof)) while the
    /// connection was open: it is then half-closed, answering the requests it owes, or
    /// closed after that (see [`half_close`](super::half_close)).
    pub fn input_ended(&self) -> bool {
        self.input_ended
    }

    /// Rules 2 to 5 (the last line was processed): half-closes, or closes when nothing is owed.
    pub(super) fn half_close(&mut self) {
        self.input_ended = true;
        // v1 has no turn the end of input ends; v2's client turns end around the outcomes.
        #[cfg(feature = "unstable_protocol_v2")]
        <crate::protocol::V2 as super::turns::TurnRules>::at_eof(self, AnyConnection::close_outbound);
        #[cfg(not(feature = "unstable_protocol_v2"))]
        <crate::protocol::V1 as super::turns::TurnRules>::at_eof(self, AnyConnection::close_outbound);
        let keys: Vec<u64> = self.inbound.keys().copied().collect();
        for key in keys {
            self.cancel_at_eof(key);
        }
        self.close_if_answered();
    }

    /// Rule 2: every outbound request pending gets its outcome, as on close.
    fn close_outbound(&mut self) {
        let pending: Vec<i64> = self.outbound.keys().copied().collect();
        for id in pending {
            self.finish_outbound(id, AnyOutcome::ConnectionClosed);
        }
    }

    /// Rule 3 for inbound request `key`, in flight at the end of input or dispatched after it
    /// (released from behind `initialize`): a deferred one is answered at once, a dispatched
    /// one is told, with its grace armed (unless a cancellation already armed one).
    pub(super) fn cancel_at_eof(&mut self, key: u64) {
        let grace_at = self.now + self.config.cancel_grace;
        let Some(entry) = self.inbound.get_mut(&key) else { return };
        if entry.deferred {
            self.answer_error(key, RpcError::request_cancelled());
            return;
        }
        if entry.cancelled.is_some() {
            return;
        }
        entry.cancelled = Some(CancelReason::InputEnded);
        entry.grace = Some(grace_at);
        self.arm(grace_at, Timer::Grace(key));
        self.push_event(AnyEvent::Cancelled { id: InboundId(key), reason: CancelReason::InputEnded });
    }

    /// Rule 5: after the end of input, closes once no request is owed. Called by every input
    /// and command that may answer the last one.
    pub(super) fn close_if_answered(&mut self) {
        debug_assert!(!self.input_ended || self.outbound.is_empty(), "nothing awaits the peer after its end");
        if self.input_ended && self.phase != Phase::Closed && self.inbound.is_empty() && self.held.len() == 0 {
            self.close_with(CloseReason::PeerEof);
        }
    }

    /// Rule 2: a request sent after the end of input resolves at once; returns its handle when
    /// it did (the caller sends nothing).
    pub(super) fn resolve_after_eof(&mut self) -> Option<OutboundId> {
        if !self.input_ended {
            return None;
        }
        let id = OutboundId(self.next_outbound);
        self.next_outbound += 1;
        self.push_event(AnyEvent::Outcome { id, outcome: AnyOutcome::ConnectionClosed });
        Some(id)
    }
}
