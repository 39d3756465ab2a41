//! What the connection tells the application: events, outcomes, handles and counters.

use std::fmt;

use crate::error::RpcError;
use crate::gate::CapabilitySnapshot;
use crate::methods::{DecodeError, Notification, Request, Response};
use crate::types::{ProtocolVersion, SessionId};

/// Handle of an inbound request, for completing it with [`Connection::respond`].
///
/// Handles are never reused within a connection. Completing a handle that is no longer in
/// flight (answered, cancelled by the machine, closed) is harmless: it is discarded and
/// reported as [`Completion::Discarded`].
///
/// [`Connection::respond`]: crate::Connection::respond
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InboundId(pub(crate) u64);

impl InboundId {
    /// The handle's sequence number (0 for the first inbound request of the connection).
    pub fn seq(self) -> u64 {
        self.0
    }
}

impl fmt::Display for InboundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "in#{}", self.0)
    }
}

/// Handle of an outbound request: its integer id on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OutboundId(pub(crate) i64);

impl OutboundId {
    /// The id as sent on the wire.
    pub fn wire(self) -> i64 {
        self.0
    }
}

impl fmt::Display for OutboundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "out#{}", self.0)
    }
}

/// Position of a `session/update` inside a client's prompt turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TurnStamp {
    /// The `session/prompt` request that opened the turn.
    pub turn: OutboundId,
    /// 0 for the turn's first update, then 1, 2, … without gaps.
    pub ordinal: u64,
}

/// The engine's outcome of an outbound request, of either version: what
/// [`Outcome<P>`](super::Outcome) is made from. Hidden: the engine's own type, named by the
/// sealed [`Protocol`](crate::protocol::Protocol)'s hooks; not part of the API.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AnyOutcome {
    /// The peer answered with a result, decoded as the type the method's row names.
    Result(Response),
    /// The peer answered with an error.
    Error(RpcError),
    /// The peer answered with a result that does not decode as the method's result type.
    InvalidResult(DecodeError),
    /// The deadline passed first. A best-effort `$/cancel_request` was sent.
    TimedOut,
    /// Cancelled locally ([`Connection::cancel_request`], or the agent-side cascade of a
    /// `session/cancel`, or a permission ask made while its turn is cancelling). A
    /// `$/cancel_request` was sent if the request had gone out.
    ///
    /// [`Connection::cancel_request`]: crate::Connection::cancel_request
    Cancelled,
    /// The connection closed before an answer came.
    ConnectionClosed,
    /// The peer answered a v2 request with a result, decoded as the type the v2 table names
    /// (feature `unstable_protocol_v2`; on a connection that negotiated v2, and for a client's
    /// v2 `initialize` answered with version 2).
    #[cfg(feature = "unstable_protocol_v2")]
    ResultV2(crate::v2::Response),
}

impl AnyOutcome {
    /// The result, if the request succeeded.
    pub fn into_result(self) -> Option<Response> {
        match self {
            AnyOutcome::Result(r) => Some(r),
            _ => None,
        }
    }
}

/// Why an inbound request was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancelReason {
    /// The peer sent `$/cancel_request` for it. Complete it as usual (a result, or a `-32800`
    /// error); if the handler does not complete within the grace period, the machine answers
    /// `-32800` itself and a later completion is discarded.
    CancelRequest,
    /// Agent side: the client sent `session/cancel` for the session of this `session/prompt`.
    /// Whatever the handler completes with, the machine answers `stopReason: "cancelled"`
    /// (after every update queued before); it does so itself after the turn's grace period.
    SessionCancelled,
    /// Client side: the application cancelled the turn, and the machine has already answered
    /// this `session/request_permission` with the `cancelled` outcome; a later completion is
    /// discarded.
    TurnCancelled,
    /// The connection closed; a later completion is discarded.
    ConnectionClosed,
    /// The peer's input ended (a half-close: module
    /// [`half_close`](crate::connection::half_close)): it will send nothing more, but it may
    /// still read, and the answer still goes out. Complete it as usual, and soon (a result, or
    /// a `-32800` error); if the handler does not complete within the grace period, the
    /// machine answers `-32800` itself and a later completion is discarded.
    InputEnded,
}

/// Why the connection closed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The peer's input ended.
    PeerEof,
    /// [`Connection::close`] was called.
    ///
    /// [`Connection::close`]: crate::Connection::close
    Local,
    /// The agent answered `initialize` with a protocol version this client does not speak.
    UnsupportedProtocolVersion {
        /// The version the agent chose.
        version: ProtocolVersion,
    },
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::PeerEof => f.write_str("the peer closed its output"),
            CloseReason::Local => f.write_str("closed locally"),
            CloseReason::UnsupportedProtocolVersion { version } => {
                write!(f, "the agent chose protocol version {}, which this client does not support", version.0)
            }
        }
    }
}

/// The capabilities both sides advertised, fixed when the handshake commits.
#[derive(Debug, Clone, PartialEq)]
pub struct Negotiated {
    /// The protocol version the agent answered. The connection speaks it for its whole life
    /// (feature `unstable_protocol_v2`: version 2 or version 1, see the negotiation table of
    /// module `connection::turns_v2`).
    pub protocol_version: ProtocolVersion,
    /// This side's own capabilities (the inbound gate).
    pub own: CapabilitySnapshot,
    /// The peer's capabilities (the outbound gate).
    pub peer: CapabilitySnapshot,
}

/// The engine's event, of either version: what [`Event<P>`](super::Event) is made from.
/// Hidden: the engine's own type, named by the sealed
/// [`Protocol`](crate::protocol::Protocol)'s hooks; not part of the API.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AnyEvent {
    /// An inbound request to handle. Complete it with [`Connection::respond`] exactly once
    /// (later completions are harmless).
    ///
    /// [`Connection::respond`]: crate::Connection::respond
    Request {
        /// The handle to complete.
        id: InboundId,
        /// The decoded request.
        request: Request,
    },
    /// An inbound notification.
    Notification {
        /// The decoded notification.
        notification: Notification,
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
        outcome: AnyOutcome,
    },
    /// The handshake committed: the agent sent (or the client received) a successful
    /// `initialize` response. Emitted once.
    HandshakeCompleted(Negotiated),
    /// An inbound v2 request to handle (a connection that negotiated v2, or an agent's v2
    /// `initialize`). Complete it with [`Connection::respond`] exactly once.
    ///
    /// [`Connection::respond`]: crate::Connection::respond
    #[cfg(feature = "unstable_protocol_v2")]
    RequestV2 {
        /// The handle to complete.
        id: InboundId,
        /// The decoded request.
        request: crate::v2::Request,
    },
    /// An inbound v2 notification.
    #[cfg(feature = "unstable_protocol_v2")]
    NotificationV2 {
        /// The decoded notification.
        notification: crate::v2::Notification,
        /// Client side: the update's place in the running turn of its session (see
        /// [`turns_v2`](crate::connection::turns_v2)); `None` outside a turn.
        turn: Option<TurnStamp>,
    },
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
    ///
    /// [`Config::turn_cancel_grace`]: crate::Config::turn_cancel_grace
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

/// What happened to a completion passed to [`Connection::respond`].
///
/// [`Connection::respond`]: crate::Connection::respond
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// The response frame was queued.
    Sent,
    /// The request was no longer in flight (already answered, answered by the machine after a
    /// cancellation, or the connection closed); nothing was sent.
    Discarded,
}

/// Counters for introspection. All are cumulative except `bytes_queued`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Frames read (non-blank lines, oversized ones included).
    pub frames_in: u64,
    /// Frames queued for the peer.
    pub frames_out: u64,
    /// Frames that were not valid messages (answered `-32700`/`-32600`).
    pub malformed_frames: u64,
    /// Lines over the frame limit (skipped and answered).
    pub oversized_frames: u64,
    /// Responses that were not well formed (dropped, never answered).
    pub malformed_responses: u64,
    /// Responses matching no pending request: late (after a timeout or cancel) or unknown.
    pub late_responses: u64,
    /// Requests reusing an id still in flight (dropped without an answer).
    pub duplicate_ids: u64,
    /// Requests refused because `max_inbound` were in flight.
    pub requests_shed: u64,
    /// Notifications dropped: before the handshake, unknown, or with bad params.
    pub notifications_dropped: u64,
    /// Bytes queued for the peer and not yet taken by `poll_transmit`.
    pub bytes_queued: u64,
    /// Inbound requests deferred because the output was full (dispatched once it drained).
    pub requests_deferred: u64,
    /// Times the machine paused new work: a request had to be deferred while none was.
    pub output_pauses: u64,
    /// Frames parked unchecked because the machine's own answers filled the output (module
    /// `connection::parked`); each is handled later, in arrival order.
    pub input_parked: u64,
    /// v2: batch arrays taken apart (each counts one frame in `frames_in`; its answer array
    /// one in `frames_out`). Refused batches (empty, too long) count as malformed frames.
    pub batches: u64,
}

/// Why an application command was refused. Nothing was sent and no id was consumed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SendError {
    /// The connection is closed.
    Closed,
    /// The handshake has not completed (only `initialize` may be sent before).
    NotInitialized,
    /// `initialize` was already sent or answered.
    AlreadyInitialized,
    /// An extension method name must start with `_`.
    InvalidExtensionName {
        /// The method name.
        method: String,
    },
    /// The peer did not advertise the capability this method needs.
    NotSupportedByPeer {
        /// The method's wire name.
        method: &'static str,
        /// The missing capability path in the peer's capabilities.
        capability: &'static [&'static str],
    },
    /// This side did not advertise, in its own capabilities, what the method needs from its
    /// sender (a sender rule of the capability gate, e.g. an agent sending `auth/status_update`
    /// without `auth.status`).
    NotAdvertised {
        /// The method's wire name.
        method: &'static str,
        /// The missing capability path in this side's own capabilities.
        capability: &'static [&'static str],
    },
    /// `max_pending_outbound` requests are already waiting for answers.
    TooManyPending {
        /// The limit.
        limit: usize,
    },
    /// The outbound byte budget is used up; drain `poll_transmit` first. The adapters wait
    /// for the buffer to drain instead of surfacing this.
    Backpressure {
        /// Bytes queued now.
        queued: usize,
        /// The budget.
        budget: usize,
    },
    /// Agent side: a `session/update` for a session that was never announced by a successful
    /// `session/new`, `session/load` or `session/resume` response (or is being loaded); on v2
    /// also a permission ask or a session-scoped elicitation of such a session (or of one
    /// closed or deleted since).
    UnknownSession(SessionId),
    /// Client side: a prompt turn of this session is still running.
    TurnAlreadyRunning(SessionId),
    /// The params could not be serialized.
    Encode(String),
    /// The message is of another protocol version than the one the connection negotiated
    /// (or, before the handshake, than the `initialize` sent).
    #[cfg(feature = "unstable_protocol_v2")]
    WrongProtocolVersion {
        /// The version the connection speaks; `None` before the handshake.
        speaks: Option<ProtocolVersion>,
    },
    /// v2, client side: `tool_call/cancel` or `terminal/cancel` for a tool call or terminal
    /// whose latest update did not advertise `capabilities.cancel` (or that the bounded record
    /// no longer holds, see [`Config::max_cancellable`](super::Config::max_cancellable)).
    #[cfg(feature = "unstable_protocol_v2")]
    NotCancellable {
        /// The tool call or terminal id.
        id: String,
    },
    /// v2, agent side: an idle `state_update` that breaks prompt-lifecycle.mdx's stop-reason
    /// rules: it ends foreground work (the session works: a prompt was acknowledged or
    /// `running` / `requires_action` sent) without a `stopReason`, or gives a custom one that
    /// does not begin with `_`.
    #[cfg(feature = "unstable_protocol_v2")]
    InvalidStopReason {
        /// The session.
        session: SessionId,
        /// The stop reason given, if any.
        stop_reason: Option<String>,
    },
    /// v2, agent side: an idle `state_update` for a session whose cancelled work the machine
    /// already ended with its own idle (the grace of
    /// [`Config::turn_cancel_grace`](super::Config::turn_cancel_grace) passed). A second idle
    /// would end the client's next turn; refused until the session works again.
    #[cfg(feature = "unstable_protocol_v2")]
    WorkAlreadyEnded(SessionId),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::Closed => f.write_str("the connection is closed"),
            SendError::NotInitialized => f.write_str("the initialize handshake has not completed"),
            SendError::AlreadyInitialized => f.write_str("initialize was already sent"),
            SendError::InvalidExtensionName { method } => {
                write!(f, "`{method}` is not an extension method name (must start with `_`)")
            }
            SendError::NotSupportedByPeer { method, capability } => {
                write!(f, "the peer did not advertise `{}`, which `{method}` requires", capability.join("."))
            }
            SendError::NotAdvertised { method, capability } => {
                write!(f, "this side did not advertise `{}`, which sending `{method}` requires", capability.join("."))
            }
            SendError::TooManyPending { limit } => write!(f, "{limit} requests are already pending"),
            SendError::Backpressure { queued, budget } => {
                write!(f, "{queued} bytes queued, over the outbound budget of {budget}")
            }
            SendError::UnknownSession(s) => write!(f, "session `{s}` was never announced to the client"),
            SendError::TurnAlreadyRunning(s) => write!(f, "a prompt turn of session `{s}` is still running"),
            SendError::Encode(e) => write!(f, "params failed to serialize: {e}"),
            #[cfg(feature = "unstable_protocol_v2")]
            SendError::WrongProtocolVersion { speaks } => match speaks {
                Some(v) => write!(f, "the connection speaks protocol version {}", v.0),
                None => f.write_str("the message is not of the version of the initialize sent"),
            },
            #[cfg(feature = "unstable_protocol_v2")]
            SendError::NotCancellable { id } => write!(f, "`{id}` does not advertise `capabilities.cancel`"),
            #[cfg(feature = "unstable_protocol_v2")]
            SendError::InvalidStopReason { session, stop_reason: None } => {
                write!(f, "the idle that ends the work of session `{session}` needs a stopReason")
            }
            #[cfg(feature = "unstable_protocol_v2")]
            SendError::InvalidStopReason { session, stop_reason: Some(r) } => {
                write!(f, "stop reason `{r}` of session `{session}` is neither known nor custom (`_`-prefixed)")
            }
            #[cfg(feature = "unstable_protocol_v2")]
            SendError::WorkAlreadyEnded(s) => {
                write!(f, "the machine already sent the idle that ends the cancelled work of session `{s}`")
            }
        }
    }
}

impl std::error::Error for SendError {}

/// A send the machine refused: why, and the message itself, handed back untouched (nothing
/// was sent and no id was consumed). An adapter that waits for room on
/// [`SendError::Backpressure`] keeps the message it got back and sends it again later.
///
/// It compares equal to its [`SendError`], and `?` turns it into one.
///
/// ```
/// use acp_proto::role::Client;
/// use acp_proto::types::NewSessionRequest;
/// use acp_proto::{ClientRequest, Connection, Instant, SendError};
///
/// let mut client: Connection<Client> = Connection::client(Instant::ZERO);
/// // Before the handshake, only `initialize` goes out.
/// let refused = client.send_request(Instant::ZERO, NewSessionRequest::new("/work", vec![]), None).unwrap_err();
/// assert_eq!(refused.error, SendError::NotInitialized);
/// assert!(matches!(refused.message, ClientRequest::NewSession(_)), "the request comes back, as the client's");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Refused<T> {
    /// Why it was refused.
    pub error: SendError,
    /// The message, as it was given.
    pub message: T,
}

impl<T> Refused<T> {
    /// The message back, for another try.
    pub fn into_message(self) -> T {
        self.message
    }

    /// The same refusal, with the message converted.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Refused<U> {
        Refused { error: self.error, message: f(self.message) }
    }
}

impl<T> PartialEq<SendError> for Refused<T> {
    fn eq(&self, other: &SendError) -> bool {
        self.error == *other
    }
}

impl<T> From<Refused<T>> for SendError {
    fn from(refused: Refused<T>) -> SendError {
        refused.error
    }
}

impl<T> fmt::Display for Refused<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl<T: fmt::Debug> std::error::Error for Refused<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// A completion the application got wrong. The request was still answered once (see
/// [`Connection::respond`]); this reports the application's bug.
///
/// [`Connection::respond`]: crate::Connection::respond
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RespondError {
    /// The result is not the result type of the request's method: only through the
    /// simulation's unchecked answers (`respond_unchecked`), as a typed answer cannot be one.
    #[cfg(any(test, feature = "test-exports"))]
    #[doc(hidden)]
    MismatchedResponse {
        /// The request's method, by its wire name (`None`: an extension, or a request of the
        /// other protocol version).
        expected: Option<&'static str>,
        /// The result's method, by its wire name (`None`: an extension result).
        got: Option<&'static str>,
    },
    /// Client side: the permission answer names an option the request did not offer.
    UnknownPermissionOption(String),
}

impl fmt::Display for RespondError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(any(test, feature = "test-exports"))]
            RespondError::MismatchedResponse { expected, got } => Mismatch { expected: *expected, got: *got }.fmt(f),
            RespondError::UnknownPermissionOption(o) => write!(f, "option `{o}` was not offered"),
        }
    }
}

impl std::error::Error for RespondError {}

/// A result that does not answer the request it was given to (its method is another's, or it
/// is the other side's or the other version's): what the machine reports when it sends `-32603`
/// in its place. A typed answer ([`Responder`](super::Responder)) is never one; an answer made
/// from another connection's request can be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mismatch {
    /// The request's method, by its wire name (`None`: an extension, or a request of the
    /// other protocol version).
    pub(crate) expected: Option<&'static str>,
    /// The result's method, by its wire name (`None`: an extension result).
    pub(crate) got: Option<&'static str>,
}

impl Mismatch {
    /// What [`respond`](crate::Connection::respond) returns once `-32603` went out in the
    /// result's place: the mistake, where the simulation's unchecked answers can make one; else
    /// a debug build's panic (the application answered with another connection's responder).
    pub(crate) fn reported(self) -> Result<Completion, RespondError> {
        #[cfg(any(test, feature = "test-exports"))]
        return Err(RespondError::MismatchedResponse { expected: self.expected, got: self.got });
        #[cfg(not(any(test, feature = "test-exports")))]
        {
            debug_assert!(false, "{self} (an answer made from another connection's request?)");
            Ok(Completion::Sent)
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |m: Option<&'static str>| m.unwrap_or("an extension method");
        write!(f, "a result of `{}` cannot answer `{}`", name(self.got), name(self.expected))
    }
}
