//! [`Tracer`]: the one tracing vocabulary of every adapter (feature `tracing`; without it every
//! method is an empty inline function and no `tracing` is in the tree).
//!
//! | what | level | target | name | fields |
//! |---|---|---|---|---|
//! | one connection | `INFO` span | `acp` | `acp_connection` | `side`, `conn` (a sequence number) |
//! | a frame read by the core | `TRACE` | `acp::frame` | `frame in` | `len`; `payload` when asked for |
//! | a frame written | `TRACE` | `acp::frame` | `frame out` | `len`; `payload` when asked for |
//! | a request handed to a handler | `DEBUG` | `acp` | `dispatch request` | `id`, `method`; `params` |
//! | a notification handed on | `DEBUG` | `acp` | `dispatch notification` | `method`, `turn`; `params` |
//! | a request cancelled under its handler | `DEBUG` | `acp` | `dispatch cancellation` | `id`, `reason` |
//! | the outcome of our request | `DEBUG` | `acp` | `dispatch outcome` | `id`, `outcome`; `detail` |
//! | the handshake | `INFO` | `acp` | `handshake completed` | `version` |
//! | the end | `INFO` | `acp` | `connection closed` | `reason` |
//! | a handler's result the core refused | `WARN` | `acp` | `result refused` | `id`, `error` |
//!
//! Payloads (frame text, params, outcome details) are written only when the adapter's
//! `trace_payloads` option asks for them, cut at [`MAX_PAYLOAD`] bytes (a cut ends in `…`).

#[cfg(feature = "tracing")]
pub use enabled::{Scope, Tracer};

/// A message the tracer names by its method (and shows, with payloads): the requests and
/// notifications of either protocol version, so that [`Tracer::event`] takes the `Event<P>` of
/// a connection of either.
pub trait Traced {
    /// The wire method name.
    fn wire(&self) -> &str;
    /// The message as JSON, for a payload.
    #[cfg(feature = "tracing")]
    fn to_json(&self) -> String;
}

macro_rules! traced {
    ($($t:ty),*) => {$(
        impl Traced for $t {
            fn wire(&self) -> &str {
                <$t>::wire(self)
            }
            #[cfg(feature = "tracing")]
            fn to_json(&self) -> String {
                serde_json::to_string(self).unwrap_or_default()
            }
        }
    )*};
}

traced!(acp_proto::Request, acp_proto::Notification);
#[cfg(feature = "unstable_protocol_v2")]
traced!(acp_proto::v2::Request, acp_proto::v2::Notification);

#[cfg(not(feature = "tracing"))]
pub use disabled::{NotEntered, Scope, Tracer};

/// Longest payload written into one event; longer ones are cut.
pub const MAX_PAYLOAD: usize = 64 * 1024;

#[cfg(feature = "tracing")]
mod enabled {
    use std::sync::atomic::{AtomicU64, Ordering};

    use acp_proto::protocol::Protocol;
    use acp_proto::{Event, InboundId, Outcome, RespondError, Side};
    use tracing::{Level, debug, info, trace, warn};

    use super::{MAX_PAYLOAD, Traced};

    /// The tracing state of one connection: its span and the frame being read.
    #[derive(Debug)]
    pub struct Tracer {
        span: tracing::Span,
        payloads: bool,
        /// Length of the incoming frame read so far (it may span several reads).
        partial_len: usize,
        /// Its first bytes, when payloads are traced.
        partial: Vec<u8>,
    }

    /// The connection's span, for the driver and every handler to enter.
    #[derive(Debug, Clone)]
    pub struct Scope(tracing::Span);

    impl Scope {
        /// Runs `f` inside the connection's span.
        pub fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
            self.0.in_scope(f)
        }

        /// Enters the span until the guard is dropped (for a future's `poll`).
        pub fn enter(&self) -> tracing::span::Entered<'_> {
            self.0.enter()
        }
    }

    fn payload(frame: &[u8]) -> String {
        let cut = &frame[..frame.len().min(MAX_PAYLOAD)];
        let mut text = String::from_utf8_lossy(cut).into_owned();
        if cut.len() < frame.len() {
            text.push('…');
        }
        text
    }

    fn outcome_kind<P: Protocol>(outcome: &Outcome<P>) -> &'static str {
        match outcome {
            Outcome::Result(_) => "result",
            Outcome::Error(_) => "error",
            Outcome::InvalidResult(_) => "invalid result",
            Outcome::TimedOut => "timed out",
            Outcome::Cancelled => "cancelled",
            Outcome::ConnectionClosed => "connection closed",
        }
    }

    impl Tracer {
        /// The tracer of a new connection of `side`; `payloads` puts frame text, params and
        /// outcome details into the events.
        pub fn new(side: Side, payloads: bool) -> Tracer {
            static NEXT: AtomicU64 = AtomicU64::new(0);
            let conn = NEXT.fetch_add(1, Ordering::Relaxed);
            let span = tracing::info_span!(target: "acp", "acp_connection", side = ?side, conn);
            Tracer { span, payloads, partial_len: 0, partial: Vec::new() }
        }

        /// The connection's span.
        pub fn scope(&self) -> Scope {
            Scope(self.span.clone())
        }

        /// Bytes the core consumed: one event per frame they complete.
        pub fn frames_in(&mut self, bytes: &[u8]) {
            if !tracing::enabled!(target: "acp::frame", Level::TRACE) {
                return;
            }
            let mut rest = bytes;
            while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
                let (head, tail) = rest.split_at(nl);
                let head = head.strip_suffix(b"\r").unwrap_or(head);
                let len = self.partial_len + head.len();
                if len > 0 {
                    if self.payloads {
                        self.keep(head);
                        trace!(target: "acp::frame", len, payload = %payload(&self.partial), "frame in");
                    } else {
                        trace!(target: "acp::frame", len, "frame in");
                    }
                }
                self.partial.clear();
                self.partial_len = 0;
                rest = &tail[1..];
            }
            self.partial_len += rest.len();
            if self.payloads {
                self.keep(rest);
            }
        }

        /// Keeps the start of the frame being read, one byte past the payload limit so that
        /// `payload` can tell the frame was cut.
        fn keep(&mut self, bytes: &[u8]) {
            let room = (MAX_PAYLOAD + 1).saturating_sub(self.partial.len());
            self.partial.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }

        /// A batch handed to the writer (whole frames): one event per frame.
        pub fn frames_out(&self, batch: &[u8]) {
            if !tracing::enabled!(target: "acp::frame", Level::TRACE) {
                return;
            }
            for frame in batch.split(|&b| b == b'\n').filter(|f| !f.is_empty()) {
                if self.payloads {
                    trace!(target: "acp::frame", len = frame.len(), payload = %payload(frame), "frame out");
                } else {
                    trace!(target: "acp::frame", len = frame.len(), "frame out");
                }
            }
        }

        /// An event of the core, as the adapter takes it from `poll_event` (once per event), on
        /// a connection of either protocol version.
        pub fn event<P: Protocol>(&self, event: &Event<P>)
        where
            P::Request: Traced,
            P::Notification: Traced,
        {
            match event {
                Event::Request(inbound) => {
                    let (id, request) = (inbound.id(), inbound.request());
                    if self.payloads {
                        let params = payload(request.to_json().as_bytes());
                        debug!(target: "acp", %id, method = request.wire(), %params, "dispatch request");
                    } else {
                        debug!(target: "acp", %id, method = request.wire(), "dispatch request");
                    }
                }
                Event::Notification { notification, turn } => {
                    let turn = turn.map(|t| t.turn.wire());
                    if self.payloads {
                        let params = payload(notification.to_json().as_bytes());
                        debug!(target: "acp", method = notification.wire(), ?turn, %params, "dispatch notification");
                    } else {
                        debug!(target: "acp", method = notification.wire(), ?turn, "dispatch notification");
                    }
                }
                Event::Cancelled { id, reason } => debug!(target: "acp", %id, ?reason, "dispatch cancellation"),
                Event::Outcome { id, outcome } => {
                    let kind = outcome_kind(outcome);
                    if self.payloads {
                        debug!(target: "acp", %id, outcome = kind, detail = ?outcome, "dispatch outcome");
                    } else {
                        debug!(target: "acp", %id, outcome = kind, "dispatch outcome");
                    }
                }
                Event::HandshakeCompleted(n) => {
                    info!(target: "acp", version = n.protocol_version.0, "handshake completed");
                }
                Event::Closed { reason } => info!(target: "acp", %reason, "connection closed"),
                _ => debug!(target: "acp", "dispatch event"),
            }
        }

        /// A handler's result that the core refused (it answered the request itself).
        pub fn respond_refused(&self, id: InboundId, error: &RespondError) {
            warn!(target: "acp", %id, %error, "result refused");
        }
    }
}

#[cfg(not(feature = "tracing"))]
mod disabled {
    use acp_proto::protocol::Protocol;
    use acp_proto::{Event, InboundId, RespondError, Side};

    use super::Traced;

    /// Nothing to trace without the `tracing` feature.
    #[derive(Debug)]
    pub struct Tracer;

    /// Nothing to enter without the `tracing` feature.
    #[derive(Debug, Clone)]
    pub struct Scope;

    /// What [`Scope::enter`] returns without the `tracing` feature.
    #[derive(Debug)]
    #[must_use]
    pub struct NotEntered;

    impl Scope {
        /// Runs `f`.
        #[inline]
        pub fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
            f()
        }

        /// Enters nothing (the guard stands for an entered span).
        #[inline]
        pub fn enter(&self) -> NotEntered {
            NotEntered
        }
    }

    impl Tracer {
        /// A tracer that traces nothing.
        #[inline]
        pub fn new(_side: Side, _payloads: bool) -> Tracer {
            Tracer
        }

        /// Nothing to enter.
        #[inline]
        pub fn scope(&self) -> Scope {
            Scope
        }

        /// Traces nothing.
        #[inline]
        pub fn frames_in(&mut self, _bytes: &[u8]) {}

        /// Traces nothing.
        #[inline]
        pub fn frames_out(&self, _batch: &[u8]) {}

        /// Traces nothing.
        #[inline]
        pub fn event<P: Protocol>(&self, _event: &Event<P>)
        where
            P::Request: Traced,
            P::Notification: Traced,
        {
        }

        /// Traces nothing.
        #[inline]
        pub fn respond_refused(&self, _id: InboundId, _error: &RespondError) {}
    }
}
