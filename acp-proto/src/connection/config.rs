//! [`Config`]: the limits and timings of a [`Connection`](super::Connection).

#[cfg(doc)]
use super::{Connection, Event};
use std::time::Duration;

#[cfg(doc)]
use super::{AnyConnection, AnyEvent, SendError};
use crate::framer::DEFAULT_MAX_FRAME_LEN;
use crate::types::ProtocolVersion;

/// Limits and timings of a [`Connection`]. Every field has a sane default.
///
/// Start from [`Config::default()`] and change what you need with the `with_*` methods (the
/// struct is `#[non_exhaustive]`, so other crates cannot write it as a literal):
///
/// ```
/// use acp_proto::Config;
/// use std::time::Duration;
///
/// let config = Config::default().with_max_inbound(64).with_request_timeout(Some(Duration::from_secs(30)));
/// assert_eq!(config.max_inbound, 64);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// Longest accepted line in bytes; longer lines are skipped and answered. Default 64 MiB.
    pub max_frame_len: usize,
    /// Inbound requests in flight (dispatched, deferred or held). At this many, input pauses
    /// while this side awaits no answer from the peer; otherwise (the answer may come behind
    /// them) new requests are refused with `-32603`. Also the frames that may be parked while
    /// the machine's own answers fill the output (see [`Config::outbound_budget`]). Default
    /// 1000.
    pub max_inbound: usize,
    /// Outbound requests awaiting answers before new sends are refused. Default 1000.
    pub max_pending_outbound: usize,
    /// The output bound: bytes of queued output (not yet taken by
    /// [`Connection::poll_transmit`]) at or above which the machine takes on no new work.
    /// While the output is full:
    ///
    /// * application sends are refused with [`SendError::Backpressure`] (adapters hold them
    ///   until [`Connection::can_send`]);
    /// * inbound requests are *deferred* instead of dispatched: they are in flight (checked,
    ///   counted, cancellable) but their [`Event::Request`] waits until the output drops below
    ///   the bound. Once deferred frames reach [`Config::max_held_bytes`] (or requests in
    ///   flight [`Config::max_inbound`]), input pauses until the peer reads; except while this
    ///   side awaits answers from the peer, when input goes on and further requests are refused
    ///   (`-32603`, `data.reason: "output queue full"`, or the `max_inbound` refusal);
    /// * responses are never refused (every request gets its one answer); adapters hold a
    ///   handler's result until [`Connection::can_send`], so the queue exceeds the bound by at
    ///   most one frame per running handler;
    /// * input keeps being read: responses to our own requests, notifications (cancellations
    ///   above all) and the deferred requests. Once the machine's *own* answers to peer input
    ///   (errors, refusals, `-32800`) reach this many bytes, what needs an answer is parked
    ///   unread and handled once they are written (module `connection::parked`; input stops
    ///   at [`Config::max_inbound`] parked frames or [`Config::max_held_bytes`]). Input also
    ///   stops when events are not drained, behind a pending `initialize`, on deferred
    ///   requests while nothing is awaited from the peer, and (v2) on the answers held for
    ///   unfinished batch arrays (module `batch`, rule 8). So two peers that both stall on a
    ///   full output never deadlock while each keeps at most the other's `max_inbound`
    ///   requests unanswered (`max_pending_outbound`; the defaults are equal).
    ///
    /// Default 1 MiB.
    pub outbound_budget: usize,
    /// Queued events above which input is no longer consumed until the application drains
    /// [`Connection::poll_event`]. Default 1024.
    pub max_events: usize,
    /// Bytes of requests held behind a pending `initialize` above which input is no longer
    /// consumed; also the bytes of requests deferred while the output is full above which
    /// further requests are refused, and of frames parked while the machine's own answers
    /// fill the output above which input stops (see [`Config::outbound_budget`]). Default
    /// 1 MiB.
    pub max_held_bytes: usize,
    /// The wire id of the first outbound request; later ones count up. Default 1.
    pub first_outbound_id: i64,
    /// How long a handler may take to answer after the peer's `$/cancel_request` before the
    /// machine answers `-32800` itself; the same after the peer's end of input, for the
    /// requests received before it (module [`half_close`](super::half_close)). Default 5 s.
    pub cancel_grace: Duration,
    /// Agent side: how long a cancelled prompt turn's handler may take before the machine
    /// answers `stopReason: "cancelled"` itself. Default 5 s.
    pub turn_cancel_grace: Duration,
    /// Deadline applied to outbound requests sent without one. Default none.
    pub request_timeout: Option<Duration>,
    /// The protocol versions this side speaks. Set by the constructors, whatever it held:
    /// [`Connection::new`](crate::Connection::new) (and `agent`, `client`) sets it to the
    /// connection's version, `[P::VERSION]`; [`Acceptor::new`](crate::Acceptor::new) to every
    /// version this build speaks (`[1]`, or `[1, 2]` with feature `unstable_protocol_v2`), and
    /// the connection it accepts speaks the one the client's `initialize` chose. A client
    /// closes the connection on an answer with a version it does not speak. Default `[1]`.
    /// (See the negotiation table of module `connection::turns_v2`.)
    pub supported_versions: Vec<ProtocolVersion>,
    /// v2, client side: tool calls and terminals whose advertised `capabilities.cancel` the
    /// machine remembers, to refuse `tool_call/cancel` / `terminal/cancel` for the others. Past
    /// this many the oldest is forgotten (its cancel is then refused: the safe side). Default
    /// 4096.
    #[cfg(feature = "unstable_protocol_v2")]
    pub max_cancellable: usize,
    /// v2: entries accepted in one JSON-RPC batch array; a longer batch is refused as a whole
    /// with one `-32600` (see [`batch`](super::batch)). Each entry may become one event and
    /// one response, and input is only checked against its bounds between lines, so one batch
    /// can take the event queue past [`max_events`](Config::max_events) by this many: the
    /// default 128 keeps that to an eighth of the default queue, far above the handful of
    /// calls a client batches in practice.
    #[cfg(feature = "unstable_protocol_v2")]
    pub max_batch_entries: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_frame_len: DEFAULT_MAX_FRAME_LEN,
            max_inbound: 1000,
            max_pending_outbound: 1000,
            outbound_budget: 1 << 20,
            max_events: 1024,
            max_held_bytes: 1 << 20,
            first_outbound_id: 1,
            cancel_grace: Duration::from_secs(5),
            turn_cancel_grace: Duration::from_secs(5),
            request_timeout: None,
            supported_versions: vec![ProtocolVersion::V1],
            #[cfg(feature = "unstable_protocol_v2")]
            max_cancellable: 4096,
            #[cfg(feature = "unstable_protocol_v2")]
            max_batch_entries: 128,
        }
    }
}

/// One `with_*` setter per field, documented by the field's own docs.
macro_rules! setters {
    ($($setter:ident: $field:ident: $ty:ty;)*) => {
        impl Config {
            $(
                #[doc = concat!("Sets [`Config::", stringify!($field), "`].")]
                #[must_use]
                pub fn $setter(mut self, value: $ty) -> Config {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

setters! {
    with_max_frame_len: max_frame_len: usize;
    with_max_inbound: max_inbound: usize;
    with_max_pending_outbound: max_pending_outbound: usize;
    with_outbound_budget: outbound_budget: usize;
    with_max_events: max_events: usize;
    with_max_held_bytes: max_held_bytes: usize;
    with_first_outbound_id: first_outbound_id: i64;
    with_cancel_grace: cancel_grace: Duration;
    with_turn_cancel_grace: turn_cancel_grace: Duration;
    with_request_timeout: request_timeout: Option<Duration>;
    with_supported_versions: supported_versions: Vec<ProtocolVersion>;
}

#[cfg(feature = "unstable_protocol_v2")]
setters! {
    with_max_cancellable: max_cancellable: usize;
    with_max_batch_entries: max_batch_entries: usize;
}
