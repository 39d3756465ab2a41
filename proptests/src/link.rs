//! A machine of either protocol version, as an application that speaks both holds it: the
//! simulation's and the `connection` fuzz target's peers.
//!
//! An agent that speaks v1 and v2 starts as an [`Acceptor`] and becomes a `Connection<Agent, V1>`
//! or a `Connection<Agent, V2>` once the client's `initialize` chose (the accepted connection is fed the
//! rest of the chunk that held the `initialize`, as an adapter does); an agent that speaks one
//! version, and every client, is that version's [`Connection`] from the start (a client offers
//! its version: a `Connection<Client, V2>` offers 2). [`Event`] and [`Outcome`] are the union of
//! both versions' events, so that one application model handles either.
//!
//! A message of the other version than the connection speaks is refused here, as the engine
//! refused it when one engine spoke both: [`SendError::Closed`] once closed,
//! [`SendError::NotInitialized`] before the handshake, `SendError::WrongProtocolVersion` after.

use acp_proto::role::{Agent, Client};
use acp_proto::types::{ProtocolVersion, SessionId};
use acp_proto::{
    Accepted, Acceptor, CancelReason, CloseReason, Completion, Config, Connection, InboundId, Instant, Negotiated,
    Notification, OutboundId, PermissionAnswer, Refused, Request, RespondError, Response, RpcError, SendError, Side,
    Stats, TurnStamp, V1,
};
#[cfg(feature = "unstable_protocol_v2")]
use acp_proto::{TurnEndReason, V2, v2};

/// One entry of either version's event queue (see [`acp_proto::Event`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A v1 request.
    Request {
        /// Its handle.
        id: InboundId,
        /// The request.
        request: Request,
    },
    /// A v1 notification.
    Notification {
        /// The notification.
        notification: Notification,
        /// Its turn stamp.
        turn: Option<TurnStamp>,
    },
    /// A v2 request.
    #[cfg(feature = "unstable_protocol_v2")]
    RequestV2 {
        /// Its handle.
        id: InboundId,
        /// The request.
        request: v2::Request,
    },
    /// A v2 notification.
    #[cfg(feature = "unstable_protocol_v2")]
    NotificationV2 {
        /// The notification.
        notification: v2::Notification,
        /// Its turn stamp.
        turn: Option<TurnStamp>,
    },
    /// An inbound request was cancelled.
    Cancelled {
        /// Its handle.
        id: InboundId,
        /// Why.
        reason: CancelReason,
    },
    /// An outbound request's outcome.
    Outcome {
        /// Its handle.
        id: OutboundId,
        /// The outcome.
        outcome: Outcome,
    },
    /// The handshake committed.
    HandshakeCompleted(Negotiated),
    /// v2, client side: a turn ended.
    #[cfg(feature = "unstable_protocol_v2")]
    TurnEnded {
        /// The session.
        session: SessionId,
        /// The prompt that opened the turn.
        turn: OutboundId,
        /// How it ended.
        reason: TurnEndReason,
    },
    /// v2, agent side: the machine ended cancelled work itself.
    #[cfg(feature = "unstable_protocol_v2")]
    CancelGraceExpired {
        /// The session.
        session: SessionId,
    },
    /// The connection closed.
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

/// The outcome of an outbound request of either version (see [`acp_proto::Outcome`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A v1 result.
    Result(Response),
    /// A v2 result.
    #[cfg(feature = "unstable_protocol_v2")]
    ResultV2(v2::Response),
    /// An error answer.
    Error(RpcError),
    /// A result that does not decode.
    InvalidResult(acp_proto::methods::DecodeError),
    /// The deadline passed.
    TimedOut,
    /// Cancelled locally.
    Cancelled,
    /// The connection closed first.
    ConnectionClosed,
}

/// Converts an event of one version; `result` converts its results.
macro_rules! convert_event {
    ($event:expr, $request:ident, $notification:ident, $result:ident) => {
        match $event {
            acp_proto::Event::Request(request) => {
                let (id, request) = request.into_parts();
                Event::$request { id, request }
            }
            acp_proto::Event::Notification { notification, turn } => Event::$notification { notification, turn },
            acp_proto::Event::Cancelled { id, reason } => Event::Cancelled { id, reason },
            acp_proto::Event::Outcome { id, outcome } => Event::Outcome {
                id,
                outcome: match outcome {
                    acp_proto::Outcome::Result(r) => Outcome::$result(r),
                    acp_proto::Outcome::Error(e) => Outcome::Error(e),
                    acp_proto::Outcome::InvalidResult(e) => Outcome::InvalidResult(e),
                    acp_proto::Outcome::TimedOut => Outcome::TimedOut,
                    acp_proto::Outcome::Cancelled => Outcome::Cancelled,
                    acp_proto::Outcome::ConnectionClosed => Outcome::ConnectionClosed,
                },
            },
            acp_proto::Event::HandshakeCompleted(n) => Event::HandshakeCompleted(n),
            #[cfg(feature = "unstable_protocol_v2")]
            acp_proto::Event::TurnEnded { session, turn, reason } => Event::TurnEnded { session, turn, reason },
            #[cfg(feature = "unstable_protocol_v2")]
            acp_proto::Event::CancelGraceExpired { session } => Event::CancelGraceExpired { session },
            acp_proto::Event::Closed { reason } => Event::Closed { reason },
            other => panic!("an event this harness does not know: {other:?}"),
        }
    };
}

/// A machine of either version and either side; see the [module docs](self).
#[derive(Debug)]
pub enum Link {
    /// An agent that speaks both, before the client's `initialize` (`None` only while it is
    /// being accepted).
    Accepting(Option<Acceptor>),
    /// A v1 agent.
    AgentV1(Connection<Agent, V1>),
    /// A v1 client.
    ClientV1(Connection<Client, V1>),
    /// A v2 agent.
    #[cfg(feature = "unstable_protocol_v2")]
    AgentV2(Connection<Agent, V2>),
    /// A v2 client.
    #[cfg(feature = "unstable_protocol_v2")]
    ClientV2(Connection<Client, V2>),
}

/// Runs `$body` with `$c` bound to the connection of either side and version, or `$acceptor`
/// before the version is chosen, the acceptor borrowed with `$borrow` (`as_ref` or `as_mut`).
macro_rules! each {
    ($link:expr, $borrow:ident, $c:ident => $body:expr, $a:ident => $acceptor:expr) => {
        match $link {
            Link::AgentV1($c) => $body,
            Link::ClientV1($c) => $body,
            #[cfg(feature = "unstable_protocol_v2")]
            Link::AgentV2($c) => $body,
            #[cfg(feature = "unstable_protocol_v2")]
            Link::ClientV2($c) => $body,
            Link::Accepting(a) => {
                let $a = a.$borrow().expect("an acceptor");
                $acceptor
            }
        }
    };
}

impl Link {
    /// A `side` machine that speaks `versions` (with `config`'s other settings): an agent that
    /// speaks more than one is an [`Acceptor`]; otherwise the connection of the latest listed.
    pub fn new(side: Side, config: Config, versions: &[ProtocolVersion], now: Instant) -> Link {
        if side == Side::Agent && versions.len() > 1 {
            return Link::Accepting(Some(Acceptor::new(config, now)));
        }
        #[cfg(feature = "unstable_protocol_v2")]
        if versions.contains(&ProtocolVersion::V2) {
            return match side {
                Side::Agent => Link::AgentV2(Connection::new(config, now)),
                Side::Client => Link::ClientV2(Connection::new(config, now)),
            };
        }
        let _ = versions;
        match side {
            Side::Agent => Link::AgentV1(Connection::new(config, now)),
            Side::Client => Link::ClientV1(Connection::new(config, now)),
        }
    }

    /// The version chosen, once it is.
    pub fn version(&self) -> Option<ProtocolVersion> {
        match self {
            Link::AgentV1(_) | Link::ClientV1(_) => Some(ProtocolVersion::V1),
            #[cfg(feature = "unstable_protocol_v2")]
            Link::AgentV2(_) | Link::ClientV2(_) => Some(ProtocolVersion::V2),
            Link::Accepting(_) => None,
        }
    }

    /// Becomes the accepted connection once the acceptor has decided.
    fn settle(&mut self) {
        if let Link::Accepting(slot) = self
            && slot.as_ref().is_some_and(Acceptor::is_decided)
        {
            match slot.take().expect("an acceptor").accept() {
                Ok(Accepted::V1(c)) => *self = Link::AgentV1(c),
                #[cfg(feature = "unstable_protocol_v2")]
                Ok(Accepted::V2(c)) => *self = Link::AgentV2(c),
                Ok(other) => panic!("an accepted connection this harness does not know: {other:?}"),
                Err(_) => unreachable!("a decided acceptor accepts"),
            }
        }
    }

    /// Feeds bytes read from the peer; returns how many were consumed. An acceptor that
    /// decides hands the rest of `data` to its connection.
    pub fn handle_input(&mut self, now: Instant, data: &[u8]) -> usize {
        let n = each!(self, as_mut, c => c.handle_input(now, data), a => a.handle_input(now, data));
        if matches!(self, Link::Accepting(_)) {
            self.settle();
            if n < data.len() && !matches!(self, Link::Accepting(_)) {
                return n + self.handle_input(now, &data[n..]);
            }
        }
        n
    }

    /// The peer's output ended.
    pub fn handle_eof(&mut self, now: Instant) {
        each!(self, as_mut, c => c.handle_eof(now), a => a.handle_eof(now));
        self.settle();
    }

    /// Fires the deadlines at or before `now` (an acceptor has none).
    pub fn handle_timeout(&mut self, now: Instant) {
        each!(self, as_mut, c => c.handle_timeout(now), _a => {});
    }

    /// The earliest deadline.
    pub fn poll_timeout(&self) -> Option<Instant> {
        each!(self, as_ref, c => c.poll_timeout(), _a => None)
    }

    /// Appends the queued frames to `buf`.
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> usize {
        each!(self, as_mut, c => c.poll_transmit(buf), a => a.poll_transmit(buf))
    }

    /// The next event (an acceptor has none: what it read before `initialize` the machine
    /// answered itself).
    pub fn poll_event(&mut self) -> Option<Event> {
        match self {
            Link::AgentV1(c) => c.poll_event().map(|e| convert_event!(e, Request, Notification, Result)),
            Link::ClientV1(c) => c.poll_event().map(|e| convert_event!(e, Request, Notification, Result)),
            #[cfg(feature = "unstable_protocol_v2")]
            Link::AgentV2(c) => c.poll_event().map(|e| convert_event!(e, RequestV2, NotificationV2, ResultV2)),
            #[cfg(feature = "unstable_protocol_v2")]
            Link::ClientV2(c) => c.poll_event().map(|e| convert_event!(e, RequestV2, NotificationV2, ResultV2)),
            Link::Accepting(_) => None,
        }
    }

    /// Bytes queued for the peer.
    pub fn bytes_queued(&self) -> usize {
        each!(self, as_ref, c => c.bytes_queued(), a => a.bytes_queued())
    }

    /// Whether application sends are accepted by the output budget.
    pub fn can_send(&self) -> bool {
        each!(self, as_ref, c => c.can_send(), a => a.can_send())
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        each!(self, as_ref, c => c.config(), a => a.config())
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        each!(self, as_ref, c => c.stats(), a => a.stats())
    }

    /// The memory estimate.
    pub fn memory_estimate(&self) -> usize {
        each!(self, as_ref, c => c.memory_estimate(), a => a.memory_estimate())
    }

    /// Whether the handshake committed (never before the version is chosen).
    pub fn is_ready(&self) -> bool {
        each!(self, as_ref, c => c.is_ready(), _a => false)
    }

    /// Whether it is closed (an acceptor never is: a closed engine has chosen v1).
    pub fn is_closed(&self) -> bool {
        each!(self, as_ref, c => c.is_closed(), _a => false)
    }

    /// Whether the peer's output ended (an acceptor's end of input chooses v1).
    pub fn input_ended(&self) -> bool {
        each!(self, as_ref, c => c.input_ended(), _a => false)
    }

    /// Both sides' capabilities, once negotiated.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        each!(self, as_ref, c => c.negotiated(), _a => None)
    }

    /// Inbound requests in flight (an acceptor answered all it read).
    pub fn inbound_in_flight(&self) -> usize {
        each!(self, as_ref, c => c.inbound_in_flight(), _a => 0)
    }

    /// Inbound requests deferred behind a full output.
    pub fn deferred_requests(&self) -> usize {
        each!(self, as_ref, c => c.deferred_requests(), _a => 0)
    }

    /// The refusal of a message of the other version (see the [module docs](self)).
    fn other_version(&self) -> SendError {
        if self.is_closed() {
            return SendError::Closed;
        }
        match self.negotiated() {
            None => SendError::NotInitialized,
            #[cfg(feature = "unstable_protocol_v2")]
            Some(n) => SendError::WrongProtocolVersion { speaks: Some(n.protocol_version) },
            #[cfg(not(feature = "unstable_protocol_v2"))]
            Some(_) => unreachable!("a v1 connection takes every v1 message"),
        }
    }

    /// Sends a request of version `P` (refused as the engine would on a link of the other
    /// version). The simulation's applications send only their side's messages: a message of
    /// the other side is a bug of the harness, and panics (the core's types refuse it).
    #[allow(clippy::result_large_err)]
    pub fn send_request<P: Speaks>(
        &mut self,
        now: Instant,
        request: impl Into<P::Request>,
        deadline: Option<Instant>,
    ) -> Result<OutboundId, Refused<P::Request>> {
        let request = request.into();
        match P::connection(self) {
            Some(Sided::Agent(c)) => {
                c.send_request(now, own(P::agent_request(request)), deadline).map_err(|r| r.map(Into::into))
            }
            Some(Sided::Client(c)) => {
                c.send_request(now, own(P::client_request(request)), deadline).map_err(|r| r.map(Into::into))
            }
            None => Err(Refused { error: self.other_version(), message: request }),
        }
    }

    /// Sends a notification of version `P` (of this side, as [`send_request`](Self::send_request)).
    #[allow(clippy::result_large_err)]
    pub fn send_notification<P: Speaks>(
        &mut self,
        now: Instant,
        notification: impl Into<P::Notification>,
    ) -> Result<(), Refused<P::Notification>> {
        let n = notification.into();
        match P::connection(self) {
            Some(Sided::Agent(c)) => {
                c.send_notification(now, own(P::agent_notification(n))).map_err(|r| r.map(Into::into))
            }
            Some(Sided::Client(c)) => {
                c.send_notification(now, own(P::client_notification(n))).map_err(|r| r.map(Into::into))
            }
            None => Err(Refused { error: self.other_version(), message: n }),
        }
    }

    /// Answers a request of version `P` with a result of this side (as
    /// [`send_request`](Self::send_request)); a link of the other version refuses it as a
    /// result of no method.
    pub fn respond<P: Speaks>(
        &mut self,
        now: Instant,
        id: InboundId,
        result: Result<P::Response, RpcError>,
    ) -> Result<Completion, RespondError> {
        match P::connection(self) {
            Some(Sided::Agent(c)) => c.respond_unchecked(now, id, result.map(|r| own(P::agent_response(r)))),
            Some(Sided::Client(c)) => c.respond_unchecked(now, id, result.map(|r| own(P::client_response(r)))),
            None => Err(RespondError::MismatchedResponse { expected: None, got: None }),
        }
    }

    /// Client side, v1: answers a permission ask.
    pub fn answer_permission(
        &mut self,
        now: Instant,
        id: InboundId,
        answer: PermissionAnswer,
    ) -> Result<Completion, RespondError> {
        match self {
            Link::ClientV1(c) => c.respond_unchecked(now, id, Ok(answer.into_response().into())),
            _ => Err(RespondError::MismatchedResponse { expected: None, got: None }),
        }
    }

    /// v2, client side: the open turn of `session`.
    #[cfg(feature = "unstable_protocol_v2")]
    pub fn open_turn(&self, session: &SessionId) -> Option<OutboundId> {
        match self {
            Link::ClientV2(c) => c.open_turn(session),
            _ => None,
        }
    }

    /// Cancels an outbound request.
    pub fn cancel_request(&mut self, now: Instant, id: OutboundId) -> bool {
        each!(self, as_mut, c => c.cancel_request(now, id), _a => false)
    }

    /// Client side: cancels the running turn of `session` (a harness bug on an agent).
    pub fn cancel_turn(&mut self, now: Instant, session: &SessionId) -> Result<usize, SendError> {
        match self {
            Link::ClientV1(c) => c.cancel_turn(now, session),
            #[cfg(feature = "unstable_protocol_v2")]
            Link::ClientV2(c) => c.cancel_turn(now, session),
            Link::Accepting(_) => Err(SendError::NotInitialized),
            _ => panic!("only a client cancels a turn"),
        }
    }
}

/// A message of the link's own side: the simulation's applications send no other.
fn own<T>(message: Option<T>) -> T {
    message.expect("the simulation sends only its own side's messages")
}

/// A link's connection of one version, by side.
pub enum Sided<'a, P: acp_proto::protocol::Protocol> {
    /// An agent's.
    Agent(&'a mut Connection<Agent, P>),
    /// A client's.
    Client(&'a mut Connection<Client, P>),
}

/// A protocol version a [`Link`] may speak: where its connection of that version is.
pub trait Speaks: acp_proto::protocol::Protocol {
    /// The link's connection, when it speaks this version.
    fn connection(link: &mut Link) -> Option<Sided<'_, Self>>;
}

impl Speaks for V1 {
    fn connection(link: &mut Link) -> Option<Sided<'_, V1>> {
        match link {
            Link::AgentV1(c) => Some(Sided::Agent(c)),
            Link::ClientV1(c) => Some(Sided::Client(c)),
            _ => None,
        }
    }
}

#[cfg(feature = "unstable_protocol_v2")]
impl Speaks for V2 {
    fn connection(link: &mut Link) -> Option<Sided<'_, V2>> {
        match link {
            Link::AgentV2(c) => Some(Sided::Agent(c)),
            Link::ClientV2(c) => Some(Sided::Client(c)),
            _ => None,
        }
    }
}
