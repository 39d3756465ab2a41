//! The connection machine: one sans-IO [`Connection`] per peer link, for either role.
//!
//! See the [crate docs](crate) for the contract and the run loop. This module owns the
//! protocol rules: correlation, the exactly-one-response and exactly-one-outcome rules,
//! `$/cancel_request` both ways, the `initialize` handshake, capability gating in both
//! directions, deadlines, and bounds on everything the peer can make grow. The prompt-turn
//! rules (`session/cancel`, update ordering, permission asks) live in [`turns`].
//!
//! # One road for both versions
//! Every rule below is written once, for both protocol versions. What differs between them
//! (method resolution and the capability gates, decoding, the handshake answer, the send
//! checks) is a hook of the version's *lane* (module `lane`: a crate-private trait
//! implemented for [`V1`](crate::V1) there and for `V2` in module `v2`), and the turn rules
//! are reached through one trait, `turns::TurnRules`, implemented by [`turns`] (v1) and
//! `turns_v2` (v2), each keeping its own rule table. The engine picks the lane once per
//! message: an inbound request after rule 4 (every request on a v2 connection, and an agent's
//! `initialize` asking for v2, goes the v2 lane), a notification by the version negotiated, a
//! response by the version its request was sent in, a send by the type of the message. The
//! lanes are monomorphised: the v1 road has no boxing or dynamic dispatch.
//!
//! # Inbound requests
//! Checks, in this order, first hit wins:
//!
//! 1. **handshake gate**: before the handshake commits, anything but `initialize` gets
//!    `-32600`; requests that arrive while the agent's `initialize` response is pending are
//!    *held* in order and dispatched once a successful response is sent (`-32600` each if it
//!    fails); a second `initialize` after the handshake gets `-32600`. With feature
//!    `unstable_proxy_chains`, `proxy/initialize` (a conductor opening a proxy) is a handshake
//!    request exactly like `initialize`, both ways: it alone may open the connection in its
//!    place, it commits the handshake with its `initialize` params and result, and neither is
//!    accepted (nor sent) once the handshake has committed. While a `proxy/initialize` is
//!    pending, the proxy may already send `proxy/successor` requests (it must forward
//!    `initialize` to its successor before answering) and the conductor accepts them;
//! 2. **null id** → `-32600`;
//! 3. **duplicate** of an id still in flight → dropped silently and counted (a second answer
//!    would be mis-correlated by the peer);
//! 4. **`max_inbound`** requests in flight → `-32603` with `data: {reason, limit}`, not recorded
//!    (reached only while this side awaits an answer from the peer: otherwise input pauses at
//!    the bound, see [`Connection::wants_input`]);
//! 5. **capability gate** against this side's own capabilities → `-32601`;
//! 6. **decode** → `-32601` for a method this side does not handle, `-32602` for bad params
//!    (with the reason in `data.reason`);
//! 7. **turn rules**: agent side, a second `session/prompt` on a session whose turn is running
//!    → `-32600`; client side, a permission ask for a session whose turn the application
//!    cancelled → answered `cancelled` by the machine, never dispatched;
//! 8. **dispatch**: an [`Event::Request`]; or, while the queued output is at or over
//!    [`Config::outbound_budget`] (or earlier requests still wait), **deferred**: in flight but
//!    not yet told to the application, released by [`Connection::poll_event`] in arrival order
//!    once the output drops below the bound. A `$/cancel_request` (or, for a prompt,
//!    `session/cancel`) answers a deferred request at once (`-32800`, or
//!    `stopReason: "cancelled"`); close drops it silently. Once deferred frames reach
//!    [`Config::max_held_bytes`] (or `max_inbound` requests are in flight) input pauses, unless
//!    this side awaits answers from the peer: then it reads on and refuses further requests
//!    (`-32603`, `data.reason: "output queue full"`).
//!
//! A line holding a JSON-RPC batch array is one `-32600` on v1. On a v2 connection (feature
//! `unstable_protocol_v2`) it is taken apart and each entry goes through these checks in array
//! order; the answers to its requests go out together as one array (module `batch`).
//!
//! # Bounded output
//! Nothing the peer does makes the queued output grow without a bound: application sends stop
//! at the budget ([`SendError::Backpressure`]), no new request is dispatched while the output is
//! full (rule 8), each dispatched request adds its one response (adapters hold a handler's
//! result until [`Connection::can_send`]), and once the machine's own answers to peer input
//! alone fill the budget, what needs an answer is *parked* unread (module `parked`: responses
//! and notifications are still handled, the parked frames in arrival order once those answers
//! are written; input stops at `max_inbound` parked frames or `max_held_bytes`). So a side
//! reads on while its output is full, and two peers whose outputs are both full never
//! deadlock while neither has more than the other's `max_inbound` requests unanswered.
//! [`Stats::requests_deferred`], [`Stats::output_pauses`] and [`Stats::input_parked`] count
//! the pauses.
//!
//! # Lifecycles
//! Inbound: `Dispatched → (Cancelled →) Answered`. Exactly one response frame per request id:
//! from [`Connection::respond`], or from the machine (after the cancel grace period, or
//! `stopReason: "cancelled"` for a cancelled turn). After close nothing is answered.
//!
//! Outbound: `Pending → Result | Error | InvalidResult | TimedOut | Cancelled | ConnectionClosed`,
//! exactly one [`Event::Outcome`] each. A locally cancelled request gets a single
//! [`Outcome::Cancelled`]. A response arriving after the outcome is dropped and counted in
//! [`Stats::late_responses`].
//!
//! # End of input
//! The peer's end of input is a half-close ([`half_close`]): the requests it sent before are
//! still answered, as if it had cancelled each (the handler is told, and answers; the machine
//! answers `-32800` once [`Config::cancel_grace`] has passed), and only then does the
//! connection close; what this side awaits from the peer ends at once
//! ([`Outcome::ConnectionClosed`]).

#[cfg(feature = "unstable_protocol_v2")]
pub mod batch;
mod config;
mod deferred;
mod event;
pub mod half_close;
mod handshake;
mod held;
mod inbound;
mod lane;
mod outbound;
mod parked;
mod queue;
mod responder;
pub mod turns;
#[cfg(feature = "unstable_protocol_v2")]
pub mod turns_v2;
mod typed;
#[cfg(feature = "unstable_protocol_v2")]
mod v2;

use std::collections::{BTreeMap, BTreeSet};

pub use config::Config;
pub(crate) use event::Mismatch;
pub use event::{
    AnyEvent, AnyOutcome, CancelReason, CloseReason, Completion, InboundId, Negotiated, OutboundId, Refused,
    RespondError, SendError, Stats, TurnStamp,
};
pub use queue::Events;
pub use responder::{Answer, Responder};
pub use typed::{Connection, Event, InboundRequest, Outcome};
#[cfg(feature = "unstable_protocol_v2")]
pub(crate) use v2::decode_answer as decode_v2_answer;

use crate::Side;
use crate::framer::Framer;
use crate::gate::CapabilitySnapshot;
use crate::jsonrpc::RequestId;
use crate::methods::Method;
use crate::protocol::Protocol;
use crate::time::Instant;
use crate::types::{PermissionOptionId, SessionId};

/// Where the handshake stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No `initialize` yet (or the last one failed).
    AwaitingInit,
    /// `initialize` is in flight: received (agent) or sent (client), not yet answered.
    Initializing,
    /// The handshake committed.
    Ready,
    /// Closed; nothing more happens.
    Closed,
}

/// What the machine remembers about an inbound request in flight.
#[derive(Debug)]
pub(crate) struct InboundEntry {
    wire_id: RequestId,
    method: EntryMethod,
    cancelled: Option<CancelReason>,
    /// Deferred (output full): the application has not been told of it yet.
    deferred: bool,
    /// The grace deadline armed after a cancellation.
    grace: Option<Instant>,
    extra: InboundExtra,
}

/// The method of a request in flight, in the version it was sent in: what its answer is
/// decoded or checked against. One field for both versions (a v1 entry is the size of a v1
/// method without feature `unstable_protocol_v2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntryMethod {
    /// v1: a row of the table, or `None` for an extension method.
    V1(Option<Method>),
    /// v2: a row of the v2 table, or an extension's name.
    #[cfg(feature = "unstable_protocol_v2")]
    V2(v2::V2Method),
}

impl EntryMethod {
    /// The v1 method (`None` for an extension, and for a v2 request).
    #[inline]
    fn v1(&self) -> Option<Method> {
        match self {
            EntryMethod::V1(m) => *m,
            #[cfg(feature = "unstable_protocol_v2")]
            EntryMethod::V2(_) => None,
        }
    }

    /// The v2 method, for a v2 request.
    #[cfg(feature = "unstable_protocol_v2")]
    fn v2(&self) -> Option<&v2::V2Method> {
        match self {
            EntryMethod::V2(m) => Some(m),
            EntryMethod::V1(_) => None,
        }
    }
}

/// Per-method facts needed when the request is answered.
#[derive(Debug)]
pub(crate) enum InboundExtra {
    None,
    /// Agent: the client's capabilities from its `initialize` request, of either version (the
    /// entry's method says which).
    Initialize(CapabilitySnapshot),
    /// Agent: a prompt turn of an announced session.
    Prompt(SessionId),
    /// Agent: `session/load` or `session/resume` (history replay allowed meanwhile).
    Load(SessionId),
    /// Agent: `session/close` or `session/delete`.
    Forget(SessionId),
    /// Client: a permission ask and the option ids it offered.
    Permission(SessionId, Vec<PermissionOptionId>),
    /// Agent, v2: a request whose successful answer changes the v2 session bookkeeping (v1's
    /// is `Prompt`, `Load` and `Forget`: the two rule tables differ).
    #[cfg(feature = "unstable_protocol_v2")]
    Session(turns_v2::SessionEffect),
}

/// What the machine remembers about an outbound request awaiting its answer.
#[derive(Debug)]
pub(crate) struct PendingOut {
    method: EntryMethod,
    deadline: Option<Instant>,
    /// The session the request belongs to (agent: for the cancel cascade; client: prompts).
    session: Option<SessionId>,
}

/// What [`write_request`](AnyConnection::write_request) did with a request.
enum Written {
    /// Resolved at once, without a frame (its outcome is queued).
    Resolved(OutboundId),
    /// Sent under this wire id.
    Sent(i64),
}

/// A deadline the machine keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    /// An outbound request's deadline (its wire id).
    Outbound(i64),
    /// The grace period of a cancelled inbound request (its handle).
    Grace(u64),
    /// v2, agent side: the grace period of a cancelled turn (its sequence number).
    #[cfg(feature = "unstable_protocol_v2")]
    TurnGrace(u64),
}

/// The engine: one peer link, agent or client role, either protocol version (a client's
/// `initialize` picks it). The application uses [`Connection<R, P>`](Connection), which holds one
/// speaking a single version. Public and hidden only because the sealed
/// [`Protocol`](crate::protocol::Protocol)'s hooks name it; not part of the API.
#[doc(hidden)]
#[derive(Debug)]
pub struct AnyConnection {
    side: Side,
    config: Config,
    /// The latest `now` seen; time never goes backwards inside the machine.
    now: Instant,
    phase: Phase,
    /// Whether the handshake in progress (or last begun) is `proxy/initialize`: then the proxy
    /// forwards `initialize` to its successor with `proxy/successor` before it answers.
    proxy_handshake: bool,
    framer: Framer,
    /// Queued outbound frames, each `\n`-terminated.
    out: Vec<u8>,
    /// Bytes of `out` the machine wrote itself in answer to peer input (error responses).
    /// Invariant: `machine_out <= out.len()`.
    machine_out: usize,
    /// The event queue, of the version the connection speaks (module `queue`).
    events: Events,
    /// Inbound requests in flight by handle. Invariant: `inbound.len() == by_wire.len()`.
    inbound: BTreeMap<u64, InboundEntry>,
    /// Inbound requests in flight by wire id, for duplicate detection and `$/cancel_request`.
    by_wire: BTreeMap<RequestId, u64>,
    next_inbound: u64,
    /// Requests held behind a pending `initialize`, with their raw frames.
    held: held::Held,
    /// Requests deferred while the output is full.
    deferred: deferred::Deferred,
    /// Frames parked while the machine's own answers fill the output (module `parked`).
    parked: parked::Parked,
    /// Outbound requests awaiting answers, by wire id.
    outbound: BTreeMap<i64, PendingOut>,
    next_outbound: i64,
    timers: BTreeSet<(Instant, Timer)>,
    /// The peer's output ended: the connection is half-closed ([`half_close`]).
    input_ended: bool,
    /// Client: its own capabilities, from the `initialize` it sent.
    init_caps: Option<CapabilitySnapshot>,
    negotiated: Option<Negotiated>,
    turns: turns::Turns,
    /// The v2 state: whether the connection speaks v2, and the v2 turn rules' bookkeeping.
    #[cfg(feature = "unstable_protocol_v2")]
    v2: turns_v2::V2State,
    /// v2: the batches whose answers are being collected.
    #[cfg(feature = "unstable_protocol_v2")]
    batches: batch::Batches,
    stats: Stats,
}

impl AnyConnection {
    /// A connection playing `side`, created at `now`.
    pub fn new(side: Side, config: Config, now: Instant) -> AnyConnection {
        let events = Events::new(&config.supported_versions);
        AnyConnection {
            side,
            framer: Framer::new(config.max_frame_len),
            next_outbound: config.first_outbound_id,
            config,
            now,
            phase: Phase::AwaitingInit,
            proxy_handshake: false,
            out: Vec::new(),
            machine_out: 0,
            events,
            inbound: BTreeMap::new(),
            by_wire: BTreeMap::new(),
            next_inbound: 0,
            held: held::Held::default(),
            deferred: deferred::Deferred::default(),
            parked: parked::Parked::default(),
            outbound: BTreeMap::new(),
            timers: BTreeSet::new(),
            input_ended: false,
            init_caps: None,
            negotiated: None,
            turns: turns::Turns::default(),
            #[cfg(feature = "unstable_protocol_v2")]
            v2: turns_v2::V2State::default(),
            #[cfg(feature = "unstable_protocol_v2")]
            batches: batch::Batches::default(),
            stats: Stats::default(),
        }
    }

    /// An agent-role connection with the default config.
    pub fn agent(now: Instant) -> AnyConnection {
        AnyConnection::new(Side::Agent, Config::default(), now)
    }

    /// A client-role connection with the default config.
    pub fn client(now: Instant) -> AnyConnection {
        AnyConnection::new(Side::Client, Config::default(), now)
    }

    /// The side this connection plays.
    pub fn side(&self) -> Side {
        self.side
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether the handshake has committed (and the connection is not closed).
    pub fn is_ready(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Both sides' capabilities, once the handshake has committed.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.as_ref()
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        Stats { bytes_queued: self.out.len() as u64, ..self.stats }
    }

    /// Bytes queued for the peer, not yet taken by [`poll_transmit`](Self::poll_transmit).
    pub fn bytes_queued(&self) -> usize {
        self.out.len()
    }

    /// Whether application sends are currently accepted by the outbound byte budget.
    /// Adapters wait (draining the transport) while this is false.
    pub fn can_send(&self) -> bool {
        self.out.len() < self.config.outbound_budget
    }

    /// Inbound requests deferred because the output is full (see [`Config::outbound_budget`]).
    pub fn deferred_requests(&self) -> usize {
        self.deferred.len()
    }

    /// Whether [`poll_event`](Self::poll_event) has an event to give now (see
    /// [`Connection::has_events`]).
    #[must_use]
    pub fn has_events(&self) -> bool {
        !self.events.is_empty() || (!self.deferred.is_empty() && self.can_send()) || self.parked_ready()
    }

    /// Whether [`handle_input`](Self::handle_input) currently consumes bytes. It stops when
    /// the event queue, the frames parked while the machine's own answers fill the output
    /// (module `parked`), or the held requests reach their bounds, until the application
    /// drains them or the peer reads; and for good after the end of input or close.
    pub fn wants_input(&self) -> bool {
        self.phase != Phase::Closed
            && !self.input_ended
            && self.events.len() < self.config.max_events
            && !self.parked_full()
            && self.held.bytes() < self.config.max_held_bytes
            && !self.deferral_stops_input()
            && !self.v2_stops_input()
    }

    /// Whether the requests in flight (`max_inbound`) or those deferred while the output is
    /// full (`max_held_bytes`) have reached their bound at a time when this side awaits no
    /// answer from the peer: then nothing the peer may send next is needed to make progress,
    /// so input pauses until the application answers or the peer reads. With outbound
    /// requests pending, input goes on (the answers may be behind) and requests past the
    /// bound are refused instead.
    fn deferral_stops_input(&self) -> bool {
        let deferral_full = !self.deferred.is_empty() && self.deferred.bytes() >= self.config.max_held_bytes;
        let inbound_full = self.checked_in_flight() >= self.config.max_inbound;
        self.outbound.is_empty() && self.phase == Phase::Ready && (deferral_full || inbound_full)
    }

    /// Inbound requests in flight: dispatched, deferred, held behind `initialize`, or parked
    /// unchecked while the machine's own answers fill the output.
    pub fn inbound_in_flight(&self) -> usize {
        self.checked_in_flight() + self.parked.requests()
    }

    /// Inbound requests in flight that went through the checks (dispatched, deferred, held):
    /// what `max_inbound` bounds.
    fn checked_in_flight(&self) -> usize {
        self.inbound.len() + self.held.len()
    }

    /// Outbound requests awaiting an outcome.
    pub fn outbound_pending(&self) -> usize {
        self.outbound.len()
    }

    /// A rough upper bound of the memory the machine holds, in bytes: queued output, held
    /// frames, the framer's buffer and a per-entry estimate for the tables. Used by tests and
    /// the simulation to prove that nothing grows without a bound.
    pub fn memory_estimate(&self) -> usize {
        const ENTRY: usize = 128;
        self.out.capacity()
            + self.held.bytes()
            + self.deferred.bytes()
            + self.parked.bytes()
            + self.framer.buffered()
            + (self.inbound.len() + self.outbound.len() + self.timers.len() + self.events.len()) * ENTRY
            + self.parked.len() * ENTRY
            + self.turns.len() * ENTRY
            + self.v2_len() * ENTRY
    }

    /// v2 bookkeeping entries, plus the answers held for unfinished batches counted in
    /// entry-sized (128-byte) units.
    #[cfg(feature = "unstable_protocol_v2")]
    fn v2_len(&self) -> usize {
        self.v2.len() + self.batches.len() + self.batches.held().div_ceil(128)
    }

    #[cfg(not(feature = "unstable_protocol_v2"))]
    fn v2_len(&self) -> usize {
        0
    }

    /// Whether answers held for unfinished v2 batches stop input ([`batch`] rule 8).
    #[cfg(feature = "unstable_protocol_v2")]
    fn v2_stops_input(&self) -> bool {
        self.batches_stop_input()
    }

    #[cfg(not(feature = "unstable_protocol_v2"))]
    fn v2_stops_input(&self) -> bool {
        false
    }

    // ---- outputs ------------------------------------------------------------------------

    /// Appends every queued frame (whole, `\n`-terminated, in queue order) to `buf` and
    /// returns the number of bytes appended.
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> usize {
        let n = self.out.len();
        if n == 0 {
            return 0;
        }
        debug_assert!(self.machine_out <= n);
        self.machine_out = 0;
        if buf.is_empty() {
            // Hand the queue over without copying; the caller's (empty) buffer becomes the
            // queue, so both buffers are reused and neither grows past what it held.
            std::mem::swap(buf, &mut self.out);
        } else {
            buf.extend_from_slice(&self.out);
            self.out.clear();
        }
        n
    }

    /// The next event, in order. Once the queue is empty and the output is below the bound,
    /// the requests deferred while it was full come out, in arrival order: events queued while
    /// they waited (notifications, outcomes) may have overtaken them; requests never overtake
    /// each other.
    #[must_use]
    #[inline]
    pub fn poll_event<P: Protocol>(&mut self) -> Option<Event<P>> {
        if let Some(event) = self.events.pop::<P>() {
            return Some(event);
        }
        self.poll_event_slow()
    }

    /// The rest of [`poll_event`](Self::poll_event): the queue is empty.
    #[cold]
    fn poll_event_slow<P: Protocol>(&mut self) -> Option<Event<P>> {
        self.unpark();
        if let Some(event) = self.events.pop::<P>() {
            return Some(event);
        }
        let event = self.release_deferred()?;
        let event = P::event(event).ok();
        debug_assert!(event.is_some(), "a deferred request of the other protocol version");
        event
    }

    /// The next event whatever the version, as the engine's own (the engine's unit tests).
    #[cfg(test)]
    pub(crate) fn poll_any(&mut self) -> Option<AnyEvent> {
        if let Some(event) = self.events.pop_any() {
            return Some(event);
        }
        self.unpark();
        if let Some(event) = self.events.pop_any() {
            return Some(event);
        }
        self.release_deferred()
    }

    /// The earliest deadline, when [`handle_timeout`](Self::handle_timeout) has work to do.
    /// `None` when nothing is scheduled (always `None` once closed).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.first().map(|(t, _)| *t)
    }

    // ---- inputs ------------------------------------------------------------------------

    /// Feeds bytes read from the peer, chunked any way at all. Returns how many were consumed:
    /// all of them unless [`wants_input`](Self::wants_input) turned false along the way, in
    /// which case the caller drains the outputs and feeds the rest again. Input after close or
    /// after the end of input is consumed and ignored.
    #[must_use = "bytes that were not consumed must be fed again"]
    pub fn handle_input(&mut self, now: Instant, data: &[u8]) -> usize {
        self.advance(now);
        if self.phase == Phase::Closed || self.input_ended {
            return data.len();
        }
        self.unpark();
        if !self.wants_input() {
            return 0;
        }
        let mut framer = std::mem::take(&mut self.framer);
        let consumed = framer.push(data, |ev| {
            self.on_frame_event(ev);
            if self.wants_input() { std::ops::ControlFlow::Continue(()) } else { std::ops::ControlFlow::Break(()) }
        });
        self.framer = framer;
        consumed
    }

    /// Signals that the peer's output ended: a half-close ([`half_close`]). A final line
    /// without `\n` is processed; outbound requests get [`Outcome::ConnectionClosed`]; the
    /// inbound requests received before are told ([`CancelReason::InputEnded`]) and still
    /// answered (by the machine, `-32800`, after [`Config::cancel_grace`]); once none is owed
    /// the connection closes ([`CloseReason::PeerEof`]). Later calls are no-ops.
    pub fn handle_eof(&mut self, now: Instant) {
        self.advance(now);
        if self.phase == Phase::Closed || self.input_ended {
            return;
        }
        let mut framer = std::mem::take(&mut self.framer);
        framer.finish(|ev| {
            self.on_frame_event(ev);
            std::ops::ControlFlow::Continue(())
        });
        self.framer = framer;
        // What was parked, the final line last if it was parked too (module `parked`, rule 6),
        // then the half-close: what was received is still answered (module `half_close`).
        self.unpark_all();
        if self.phase != Phase::Closed {
            self.half_close();
        }
    }

    /// Fires every deadline at or before `now`. Early or repeated calls are no-ops.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance(now);
        while let Some(&(at, timer)) = self.timers.first() {
            if at > self.now {
                break;
            }
            self.timers.pop_first();
            match timer {
                Timer::Outbound(id) => self.outbound_timed_out(id, at),
                Timer::Grace(key) => self.grace_expired(key, at),
                #[cfg(feature = "unstable_protocol_v2")]
                Timer::TurnGrace(seq) => self.turn_grace_expired(seq),
            }
        }
        self.close_if_answered();
        debug_assert!(self.poll_timeout().is_none_or(|t| t > self.now));
    }

    /// Closes the connection: every pending outbound request gets
    /// [`Outcome::ConnectionClosed`], every inbound request in flight is reported
    /// [`CancelReason::ConnectionClosed`] (its later completion is discarded), queued frames
    /// stay available to [`poll_transmit`](Self::poll_transmit), and [`Event::Closed`] is
    /// emitted once.
    pub fn close(&mut self, now: Instant) {
        self.advance(now);
        self.close_with(CloseReason::Local);
    }

    // ---- internals shared by the submodules -------------------------------------------

    fn advance(&mut self, now: Instant) {
        // Time that goes backwards is clamped (see `Instant`).
        self.now = self.now.max(now);
    }

    fn push_event(&mut self, event: AnyEvent) {
        debug_assert!(
            self.phase != Phase::Closed || matches!(event, AnyEvent::Closed { .. }),
            "no event may follow Closed"
        );
        self.events.push(event);
    }

    /// [`push_event`](Self::push_event) of an event built as version `P`'s (the message paths).
    #[inline]
    fn push_typed<P: Protocol>(&mut self, make: impl FnOnce() -> Event<P>) {
        debug_assert!(self.phase != Phase::Closed, "no event may follow Closed");
        self.events.push_typed(make);
    }

    fn close_with(&mut self, reason: CloseReason) {
        if self.phase == Phase::Closed {
            return;
        }
        for (id, _) in std::mem::take(&mut self.outbound) {
            self.push_event(AnyEvent::Outcome { id: OutboundId(id), outcome: AnyOutcome::ConnectionClosed });
        }
        for (key, entry) in std::mem::take(&mut self.inbound) {
            // A deferred request never reached the application: nothing to tell it.
            if !entry.deferred {
                self.push_event(AnyEvent::Cancelled { id: InboundId(key), reason: CancelReason::ConnectionClosed });
            }
        }
        self.by_wire.clear();
        self.held.clear();
        self.deferred.clear();
        self.parked.clear();
        self.timers.clear();
        // Every version's turn bookkeeping ends (before the handshake an agent may hold both).
        <crate::protocol::V1 as turns::TurnRules>::close(self);
        #[cfg(feature = "unstable_protocol_v2")]
        <crate::protocol::V2 as turns::TurnRules>::close(self);
        #[cfg(feature = "unstable_protocol_v2")]
        self.drop_batches();
        self.phase = Phase::Closed;
        self.push_event(AnyEvent::Closed { reason });
    }

    /// Agent side: the version the first `initialize` chose, once one was dispatched (or
    /// deferred), or `None` while none was. A closed engine reports 1: what a v1 machine
    /// would have done.
    pub(crate) fn chosen_version(&self) -> Option<crate::types::ProtocolVersion> {
        use crate::types::ProtocolVersion;
        match self.phase {
            Phase::AwaitingInit => None,
            #[cfg(feature = "unstable_protocol_v2")]
            _ if self.v2.active || self.inbound.values().any(|e| e.method.v2().is_some()) => Some(ProtocolVersion::V2),
            _ => Some(ProtocolVersion::V1),
        }
    }

    /// From now on the engine speaks `version` only (the [`Acceptor`](crate::Acceptor)'s choice).
    pub(crate) fn speak_only(&mut self, version: crate::types::ProtocolVersion) {
        self.config.supported_versions = vec![version];
    }

    fn arm(&mut self, at: Instant, timer: Timer) {
        self.timers.insert((at, timer));
    }

    fn disarm(&mut self, at: Option<Instant>, timer: Timer) {
        if let Some(at) = at {
            self.timers.remove(&(at, timer));
        }
    }
}

#[cfg(test)]
mod tests;
