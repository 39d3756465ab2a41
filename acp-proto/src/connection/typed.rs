//! The application's view of the machine: [`Connection<R, P>`], [`Event<P>`] and
//! [`Outcome<P>`], one side ([`Role`]) and one protocol version ([`Protocol`]) each.
//!
//! The engine ([`AnyConnection`]) is the same for both versions and both sides; a
//! `Connection<R, P>` holds one that plays `R` and whose config speaks `P` only, so every event it
//! gives is a message of `P`, and every call takes one of `R`'s (the engine only asserts its side
//! in debug builds). The engine queues its events as `Event<P>` already (module `queue`), built where
//! the queue keeps them: `poll_event` pops, with no conversion and no copy beyond the pop;
//! everything is monomorphised per version, with no boxing and no dynamic dispatch on the
//! message path.

use std::marker::PhantomData;

use super::{
    Answer, AnyConnection, CancelReason, CloseReason, Completion, Config, InboundId, Negotiated, OutboundId, Refused,
    RespondError, SendError, Stats, TurnStamp,
};
use crate::Side;
use crate::error::RpcError;
use crate::methods::DecodeError;
use crate::protocol::{Protocol, V1};
use crate::role::{Agent, Client, Role};
use crate::time::Instant;
use crate::types::SessionId;
use serde_json::value::RawValue;

/// The single terminal outcome of an outbound request. Exhaustive: an adapter maps every
/// variant (`acp_runtime::Error::from_outcome`), so a new one is a compile error there rather
/// than a silent catch-all.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<P: Protocol = V1> {
    /// The peer answered with a result, decoded as the type the method's row names (for the
    /// version the connection speaks).
    Result(P::Response),
    /// The peer answered with an error.
    Error(RpcError),
    /// The peer answered with a result that does not decode as the method's result type.
    InvalidResult(DecodeError),
    /// The deadline passed first. A best-effort `$/cancel_request` was sent.
    TimedOut,
    /// Cancelled locally ([`Connection::cancel_request`], or the agent-side cascade of a
    /// `session/cancel`, or a permission ask made while its turn is cancelling). A
    /// `$/cancel_request` was sent if the request had gone out.
    Cancelled,
    /// The connection closed before an answer came.
    ConnectionClosed,
}

impl<P: Protocol> Outcome<P> {
    /// The result, if the request succeeded.
    pub fn into_result(self) -> Option<P::Response> {
        match self {
            Outcome::Result(r) => Some(r),
            _ => None,
        }
    }
}

/// An inbound request, as [`Event::Request`] gives it: its handle and the decoded request.
/// [`into_call`](Self::into_call) pairs the request with the [`Responder`](super::Responder) of
/// its method's result type; only the machine makes one, so that it answers its own request.
#[derive(Debug, Clone, PartialEq)]
pub struct InboundRequest<P: Protocol = V1> {
    pub(crate) id: InboundId,
    pub(crate) request: P::Request,
}

impl<P: Protocol> InboundRequest<P> {
    /// The request `id`, as the machine received it.
    pub(crate) fn new(id: InboundId, request: P::Request) -> InboundRequest<P> {
        InboundRequest { id, request }
    }

    /// The handle of the request: what [`Answer::error`](super::Answer::error) answers, and
    /// what [`Event::Cancelled`] names.
    pub fn id(&self) -> InboundId {
        self.id
    }

    /// The decoded request.
    pub fn request(&self) -> &P::Request {
        &self.request
    }

    /// The request with the responder that answers it, typed by its method's result
    /// (`ClientCall::Prompt(PromptRequest, Responder<PromptResponse>)`, …).
    pub fn into_call(self) -> P::Call {
        P::call(self.id, self.request)
    }

    /// The handle and the request, apart (an error answers any request by its handle alone).
    pub fn into_parts(self) -> (InboundId, P::Request) {
        (self.id, self.request)
    }

    /// The answer `result` given as JSON (a result a proxy forwards, or a replay repeats),
    /// decoded as the result type of the request's method: so it answers this request, as a
    /// [`Responder`](super::Responder)'s does. A result that does not decode as that type, or is
    /// not side `R`'s to give, is the error.
    pub fn answer_json<R: Role>(&self, result: Result<&RawValue, RpcError>) -> Result<Answer<R, P>, DecodeError> {
        let result = match result {
            Ok(raw) => {
                let response = P::decode_answer(&self.request, raw)?;
                let own = R::own_response::<P>(response);
                Ok(own.ok_or_else(|| DecodeError::Invalid("a result of the other side".to_owned()))?)
            }
            Err(error) => Err(error),
        };
        Ok(Answer::new(self.id, result))
    }
}

/// Why a refused send's message is always its side's: the engine hands back the message it was
/// given, and [`Connection`] gave it one of its side's.
const HANDED_BACK: &str = "a refused message is the one sent, of this side";

/// One entry of the connection's ordered event queue.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event<P: Protocol = V1> {
    /// An inbound request to handle: take it apart with [`InboundRequest::into_call`] and answer it
    /// with [`Connection::respond`] exactly once (later answers are harmless).
    Request(InboundRequest<P>),
    /// An inbound notification.
    Notification {
        /// The decoded notification.
        notification: P::Notification,
        /// Client side: the update's place in the running prompt turn of its session;
        /// `None` outside a turn and for other notifications.
        turn: Option<TurnStamp>,
    },
    /// An inbound request in flight was cancelled; see [`CancelReason`] for what the machine
    /// does about its response.
    Cancelled {
        /// The request's handle.
        id: InboundId,
        /// Why.
        reason: CancelReason,
    },
    /// The terminal outcome of an outbound request; exactly one per accepted request.
    Outcome {
        /// The request's handle.
        id: OutboundId,
        /// The outcome.
        outcome: Outcome<P>,
    },
    /// The handshake committed: the agent sent (or the client received) a successful
    /// `initialize` response. Emitted once.
    HandshakeCompleted(Negotiated),
    /// Client side, v2: a turn of a session ended; exactly one per turn, after every update
    /// of the turn.
    #[cfg(feature = "unstable_protocol_v2")]
    TurnEnded {
        /// The session.
        session: SessionId,
        /// The `session/prompt` request that opened the turn.
        turn: OutboundId,
        /// How it ended.
        reason: super::turns_v2::TurnEndReason,
    },
    /// Agent side, v2: the grace ([`Config::turn_cancel_grace`]) after a client's
    /// `session/cancel` passed before the agent reported `idle`, so the machine sent the idle
    /// (`stopReason: "cancelled"`) itself. The session is idle for the client: stop its
    /// cancelled work; an idle the application sends now is refused
    /// ([`SendError::WorkAlreadyEnded`]) until the session works again.
    #[cfg(feature = "unstable_protocol_v2")]
    CancelGraceExpired {
        /// The session whose work the machine ended.
        session: SessionId,
    },
    /// The connection closed. Emitted once, always last.
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

/// One peer link playing role `R` ([`Agent`] or [`Client`]) and speaking protocol version `P`
/// ([`V1`] by default). See the [crate docs](crate) for the contract.
///
/// Both are types: what the connection sends ([`send_request`](Self::send_request),
/// [`send_notification`](Self::send_notification)) and answers with
/// ([`respond`](Self::respond)) is its side's own message set of its version
/// ([`Role::Request`], [`Role::Notification`], [`Role::Response`]), so a message the other
/// side sends does not compile (module [`role`](crate::role)).
#[derive(Debug)]
pub struct Connection<R: Role, P: Protocol = V1> {
    engine: AnyConnection,
    protocol: PhantomData<(R, P)>,
}

impl<R: Role, P: Protocol> Connection<R, P> {
    /// A connection playing `R`, created at `now`. It speaks `P` only:
    /// [`Config::supported_versions`] is set to `[P::VERSION]`.
    pub fn new(mut config: Config, now: Instant) -> Connection<R, P> {
        config.supported_versions = vec![P::VERSION];
        Connection::from_engine(AnyConnection::new(R::SIDE, config, now))
    }

    /// Wraps an engine that plays `R` and speaks `P` only (its `supported_versions`, or the
    /// version it settled on: see [`Acceptor`](crate::Acceptor)).
    pub(crate) fn from_engine(engine: AnyConnection) -> Connection<R, P> {
        debug_assert_eq!(engine.side(), R::SIDE);
        Connection { engine, protocol: PhantomData }
    }

    /// The side this connection plays (`R::SIDE`).
    pub fn side(&self) -> Side {
        R::SIDE
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        self.engine.config()
    }

    /// Whether the handshake has committed (and the connection is not closed).
    pub fn is_ready(&self) -> bool {
        self.engine.is_ready()
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.engine.is_closed()
    }

    /// Both sides' capabilities, once the handshake has committed.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.engine.negotiated()
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        self.engine.stats()
    }

    /// Bytes queued for the peer, not yet taken by [`poll_transmit`](Self::poll_transmit).
    pub fn bytes_queued(&self) -> usize {
        self.engine.bytes_queued()
    }

    /// Whether application sends are currently accepted by the outbound byte budget.
    /// Adapters wait (draining the transport) while this is false.
    pub fn can_send(&self) -> bool {
        self.engine.can_send()
    }

    /// Inbound requests deferred because the output is full (see [`Config::outbound_budget`]).
    pub fn deferred_requests(&self) -> usize {
        self.engine.deferred_requests()
    }

    /// Whether [`poll_event`](Self::poll_event) has an event to give now: one is queued, or
    /// a deferred request would be released (the output dropped below the bound). An adapter
    /// whose application threads call into the machine (`respond`, `send_request`,
    /// `poll_transmit`) checks this afterwards to know whether the thread that drains events
    /// must be woken; it does not change the machine.
    ///
    /// ```
    /// use acp_proto::role::Agent;
    /// use acp_proto::{Connection, Instant};
    ///
    /// let mut agent: Connection<Agent> = Connection::agent(Instant::ZERO);
    /// assert!(!agent.has_events());
    /// let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    /// let _ = agent.handle_input(Instant::ZERO, init);
    /// let _ = agent.handle_input(Instant::ZERO, b"\n");
    /// assert!(agent.has_events());
    /// while agent.poll_event().is_some() {}
    /// assert!(!agent.has_events());
    /// ```
    #[must_use]
    pub fn has_events(&self) -> bool {
        self.engine.has_events()
    }

    /// Whether [`handle_input`](Self::handle_input) currently consumes bytes. It stops when
    /// the event queue, the frames parked while the machine's own answers fill the output
    /// (module `parked`), or the held requests reach their bounds, until the application
    /// drains them or the peer reads; and for good after the end of input or close.
    pub fn wants_input(&self) -> bool {
        self.engine.wants_input()
    }

    /// Inbound requests in flight: dispatched, deferred, held behind `initialize`, or parked
    /// unchecked while the machine's own answers fill the output.
    pub fn inbound_in_flight(&self) -> usize {
        self.engine.inbound_in_flight()
    }

    /// Outbound requests awaiting an outcome.
    pub fn outbound_pending(&self) -> usize {
        self.engine.outbound_pending()
    }

    /// A rough upper bound of the memory the machine holds, in bytes (see
    /// [`AnyConnection::memory_estimate`]).
    pub fn memory_estimate(&self) -> usize {
        self.engine.memory_estimate()
    }

    /// Whether the peer's output ended ([`handle_eof`](Self::handle_eof)) while the
    /// connection was open: it is then half-closed, answering the requests it owes, or
    /// closed after that (see [`half_close`](super::half_close)).
    pub fn input_ended(&self) -> bool {
        self.engine.input_ended()
    }

    /// Appends every queued frame (whole, `\n`-terminated, in queue order) to `buf` and
    /// returns the number of bytes appended.
    #[must_use]
    #[inline]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> usize {
        self.engine.poll_transmit(buf)
    }

    /// The next event, in order. Once the queue is empty and the output is below the bound,
    /// the requests deferred while it was full come out, in arrival order: events queued while
    /// they waited (notifications, outcomes) may have overtaken them; requests never overtake
    /// each other.
    #[must_use]
    #[inline]
    pub fn poll_event(&mut self) -> Option<Event<P>> {
        self.engine.poll_event::<P>()
    }

    /// The earliest deadline, when [`handle_timeout`](Self::handle_timeout) has work to do.
    /// `None` when nothing is scheduled (always `None` once closed).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.engine.poll_timeout()
    }

    /// Feeds bytes read from the peer, chunked any way at all. Returns how many were consumed:
    /// all of them unless [`wants_input`](Self::wants_input) turned false along the way, in
    /// which case the caller drains the outputs and feeds the rest again. Input after close or
    /// after the end of input is consumed and ignored.
    #[must_use = "bytes that were not consumed must be fed again"]
    #[inline]
    pub fn handle_input(&mut self, now: Instant, data: &[u8]) -> usize {
        self.engine.handle_input(now, data)
    }

    /// Signals that the peer's output ended: a half-close ([`half_close`](super::half_close)).
    /// A final line without `\n` is processed; outbound requests get
    /// [`Outcome::ConnectionClosed`]; the inbound requests received before are told
    /// ([`CancelReason::InputEnded`]) and still answered (by the machine, `-32800`, after
    /// [`Config::cancel_grace`]); once none is owed the connection closes
    /// ([`CloseReason::PeerEof`]). Later calls are no-ops.
    pub fn handle_eof(&mut self, now: Instant) {
        self.engine.handle_eof(now)
    }

    /// Fires every deadline at or before `now`. Early or repeated calls are no-ops.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.engine.handle_timeout(now)
    }

    /// Closes the connection: every pending outbound request gets
    /// [`Outcome::ConnectionClosed`], every inbound request in flight is reported
    /// [`CancelReason::ConnectionClosed`] (its later completion is discarded), queued frames
    /// stay available to [`poll_transmit`](Self::poll_transmit), and [`Event::Closed`] is
    /// emitted once.
    pub fn close(&mut self, now: Instant) {
        self.engine.close(now)
    }

    /// Sends a request of this side (`R::Request<P>`: a request the other side sends does not
    /// compile) and returns its handle; its single [`Outcome`] arrives later as an
    /// [`Event::Outcome`]. `deadline` (or, without one, [`Config::request_timeout`] from now)
    /// bounds the wait.
    ///
    /// Refused, with nothing sent and no id consumed, when: the connection is closed; the
    /// handshake has not completed (anything but `initialize`); an extension name lacks its
    /// `_`; the peer did not advertise the capability the
    /// method (or, by the gate's content rules, its elicitation mode or system prompt) needs;
    /// `max_pending_outbound` requests are pending; the outbound budget is used up; a client
    /// prompt targets a session whose turn is still running (v1); and by the version's own
    /// rules (v2: module `connection::turns_v2`).
    ///
    /// Agent side, a `session/request_permission` made while its session's turn is being
    /// cancelled is accepted and resolves at once as [`Outcome::Cancelled`], without a frame.
    /// After the end of input, any request is accepted and resolves at once as
    /// [`Outcome::ConnectionClosed`], without a frame: no answer could come
    /// ([`half_close`](super::half_close)).
    ///
    /// A refusal hands the request back ([`Refused`]).
    // The refused request comes back by value: a refusal is rare, a box would allocate per send.
    #[allow(clippy::result_large_err)]
    #[inline]
    pub fn send_request(
        &mut self,
        now: Instant,
        request: impl Into<R::Request<P>>,
        deadline: Option<Instant>,
    ) -> Result<OutboundId, Refused<R::Request<P>>> {
        P::send_request(&mut self.engine, now, request.into().into(), deadline)
            .map_err(|refused| refused.map(|request| R::own_request::<P>(request).expect(HANDED_BACK)))
    }

    /// Sends a notification. Client side, `session/cancel` is [`cancel_turn`](Self::cancel_turn)
    /// (the turn rules run); agent side, a `session/update` for a session never announced is
    /// refused, and content the peer did not opt in to is refused by the gate's content rules
    /// ([`SendError::NotSupportedByPeer`] naming the capability). A refusal hands the
    /// notification back ([`Refused`]).
    #[allow(clippy::result_large_err)]
    #[inline]
    pub fn send_notification(
        &mut self,
        now: Instant,
        notification: impl Into<R::Notification<P>>,
    ) -> Result<(), Refused<R::Notification<P>>> {
        P::send_notification(&mut self.engine, now, notification.into().into())
            .map_err(|refused| refused.map(|notification| R::own_notification::<P>(notification).expect(HANDED_BACK)))
    }

    /// Answers an inbound request: with a result of its own type, made by its
    /// [`Responder`](super::Responder), or with an error ([`Answer::error`]). Exactly one
    /// response frame goes out per request: an answer to a request no longer in flight is
    /// [`Completion::Discarded`]. A permission answer naming an option that was not offered is
    /// answered `cancelled` ([`RespondError::UnknownPermissionOption`]).
    ///
    /// The answer's handle must be one this connection gave: an answer made from another
    /// connection's request answers whatever request of this one has its number (in debug
    /// builds, one of another type panics; in release it is answered `-32603`, never with the
    /// wrong type).
    #[inline]
    pub fn respond(&mut self, now: Instant, answer: Answer<R, P>) -> Result<Completion, RespondError> {
        let (id, result) = answer.into_parts();
        P::respond(&mut self.engine, now, id, result.map(Into::into))
    }

    /// [`respond`](Self::respond) with any of the side's results, checked when it runs: one that
    /// is not the result type of the request's method is answered `-32603` and the mistake
    /// returned (`RespondError::MismatchedResponse`). For the simulation and the fuzz targets,
    /// which play applications that get it wrong; not part of the API.
    #[cfg(any(test, feature = "test-exports"))]
    #[doc(hidden)]
    pub fn respond_unchecked(
        &mut self,
        now: Instant,
        id: InboundId,
        result: Result<R::Response<P>, RpcError>,
    ) -> Result<Completion, RespondError> {
        P::respond(&mut self.engine, now, id, result.map(Into::into))
    }

    /// Cancels an outbound request: it resolves [`Outcome::Cancelled`] and a
    /// `$/cancel_request` goes out if it had been sent. Returns whether it was pending.
    pub fn cancel_request(&mut self, now: Instant, id: OutboundId) -> bool {
        self.engine.cancel_request(now, id)
    }
}

impl<P: Protocol> Connection<Agent, P> {
    /// An agent with the default config.
    pub fn agent(now: Instant) -> Connection<Agent, P> {
        Connection::new(Config::default(), now)
    }
}

impl<P: Protocol> Connection<Client, P> {
    /// A client with the default config.
    pub fn client(now: Instant) -> Connection<Client, P> {
        Connection::new(Config::default(), now)
    }

    /// Cancels the running prompt turn of `session`. Sends `session/cancel`,
    /// answers every pending `session/request_permission` of that session with the `cancelled`
    /// outcome (the spec's MUST) and reports each as [`Event::Cancelled`] with
    /// [`CancelReason::TurnCancelled`]. Returns how many permission asks it answered.
    ///
    /// A client's only: an agent has no such call.
    ///
    /// ```compile_fail
    /// use acp_proto::role::Agent;
    /// use acp_proto::types::SessionId;
    /// use acp_proto::{Connection, Instant};
    ///
    /// let mut agent: Connection<Agent> = Connection::agent(Instant::ZERO);
    /// let _ = agent.cancel_turn(Instant::ZERO, &SessionId::new("s"));
    /// ```
    pub fn cancel_turn(&mut self, now: Instant, session: &SessionId) -> Result<usize, SendError> {
        self.engine.cancel_turn(now, session)
    }
}

impl Connection<Client, V1> {
    /// Answers a `session/request_permission` (the responder of its `AgentCall`) with one of
    /// its offered options, or `cancelled`. An option the request did not offer is answered
    /// `cancelled` (which grants nothing) and the mistake returned
    /// ([`RespondError::UnknownPermissionOption`]).
    pub fn answer_permission(
        &mut self,
        now: Instant,
        asked: super::Responder<crate::types::RequestPermissionResponse>,
        answer: crate::PermissionAnswer,
    ) -> Result<Completion, RespondError> {
        self.respond(now, asked.answer(Ok(answer.into_response())))
    }
}

#[cfg(feature = "unstable_protocol_v2")]
impl Connection<Client, crate::protocol::V2> {
    /// The open turn of `session`, named by the `session/prompt` that opened
    /// it; `None` while no turn of it is open (and always on an agent).
    ///
    /// After [`send_request`](Self::send_request) of a prompt returned `id`, the prompt
    /// opened a turn exactly when this is `Some(id)`; otherwise it joined the turn named here,
    /// whose updates are stamped with that turn's id.
    pub fn open_turn(&self, session: &SessionId) -> Option<OutboundId> {
        self.engine.open_turn(session)
    }
}
