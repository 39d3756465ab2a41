//! Optional `tracing` output (feature `tracing`): a span per connection, a `TRACE` event per
//! frame in and out, a `DEBUG` event per dispatched event. Payloads are left out unless
//! `trace_payloads` is set. Without the feature every call here compiles to nothing.

#[cfg(feature = "tracing")]
pub(crate) use imp::*;
#[cfg(not(feature = "tracing"))]
pub(crate) use noop::*;

#[cfg(feature = "tracing")]
mod imp {
    use std::sync::atomic::{AtomicU64, Ordering};

    use acp_proto::{Event, Outcome, Side};
    use tracing::{Level, debug, info, trace};

    /// Longest payload written into one event; longer frames are cut.
    const MAX_PAYLOAD: usize = 64 * 1024;

    /// The tracing state of one connection.
    pub(crate) struct Tracer {
        span: tracing::Span,
        payloads: bool,
        /// Length of the incoming frame read so far (it may span several reads).
        partial_len: usize,
        /// Its first bytes, when payloads are traced.
        partial: Vec<u8>,
    }

    /// The connection's span, entered by the driver and by every handler job.
    #[derive(Clone)]
    pub(crate) struct Scope(tracing::Span);

    impl Scope {
        pub(crate) fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
            self.0.in_scope(f)
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

    impl Tracer {
        pub(crate) fn new(side: Side, payloads: bool) -> Tracer {
            static NEXT: AtomicU64 = AtomicU64::new(0);
            let conn = NEXT.fetch_add(1, Ordering::Relaxed);
            let span = tracing::info_span!("acp_connection", side = ?side, conn);
            Tracer { span, payloads, partial_len: 0, partial: Vec::new() }
        }

        pub(crate) fn scope(&self) -> Scope {
            Scope(self.span.clone())
        }

        /// Bytes the core consumed: one event per frame they complete.
        pub(crate) fn frames_in(&mut self, bytes: &[u8]) {
            if !tracing::enabled!(Level::TRACE) {
                return;
            }
            let mut rest = bytes;
            while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
                let (head, tail) = rest.split_at(nl);
                let len = self.partial_len + head.len();
                if self.payloads {
                    self.keep(head);
                    trace!(len, payload = %payload(&self.partial), "frame in");
                    self.partial.clear();
                } else {
                    trace!(len, "frame in");
                }
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

        /// A batch handed to the writer: one event per frame.
        pub(crate) fn frames_out(&self, batch: &[u8]) {
            if !tracing::enabled!(Level::TRACE) {
                return;
            }
            for frame in batch.split(|&b| b == b'\n').filter(|f| !f.is_empty()) {
                if self.payloads {
                    trace!(len = frame.len(), payload = %payload(frame), "frame out");
                } else {
                    trace!(len = frame.len(), "frame out");
                }
            }
        }

        /// An event of the core, about to be dispatched.
        pub(crate) fn event(&self, event: &Event) {
            match event {
                Event::Request { id, request } => {
                    if self.payloads {
                        let params = serde_json::to_string(request).unwrap_or_default();
                        debug!(%id, method = request.wire(), %params, "dispatch request");
                    } else {
                        debug!(%id, method = request.wire(), "dispatch request");
                    }
                }
                Event::Notification { notification, turn } => {
                    let turn = turn.map(|t| t.turn.wire());
                    if self.payloads {
                        let params = serde_json::to_string(notification).unwrap_or_default();
                        debug!(method = notification.wire(), ?turn, %params, "dispatch notification");
                    } else {
                        debug!(method = notification.wire(), ?turn, "dispatch notification");
                    }
                }
                Event::Cancelled { id, reason } => debug!(%id, ?reason, "dispatch cancellation"),
                Event::Outcome { id, outcome } => {
                    let kind = match outcome {
                        Outcome::Result(_) => "result",
                        Outcome::Error(_) => "error",
                        Outcome::InvalidResult(_) => "invalid result",
                        Outcome::TimedOut => "timed out",
                        Outcome::Cancelled => "cancelled",
                        Outcome::ConnectionClosed => "connection closed",
                        _ => "other",
                    };
                    if self.payloads {
                        debug!(%id, outcome = kind, detail = ?outcome, "dispatch outcome");
                    } else {
                        debug!(%id, outcome = kind, "dispatch outcome");
                    }
                }
                Event::HandshakeCompleted(n) => info!(version = n.protocol_version.0, "handshake completed"),
                Event::Closed { reason } => info!(%reason, "connection closed"),
                _ => debug!("dispatch event"),
            }
        }
    }
}

#[cfg(not(feature = "tracing"))]
mod noop {
    use acp_proto::{Event, Side};

    /// Nothing to trace without the `tracing` feature.
    pub(crate) struct Tracer;

    /// Nothing to enter.
    #[derive(Clone)]
    pub(crate) struct Scope;

    impl Scope {
        #[inline]
        pub(crate) fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
            f()
        }
    }

    impl Tracer {
        #[inline]
        pub(crate) fn new(_side: Side, _payloads: bool) -> Tracer {
            Tracer
        }
        #[inline]
        pub(crate) fn scope(&self) -> Scope {
            Scope
        }
        #[inline]
        pub(crate) fn frames_in(&mut self, _bytes: &[u8]) {}
        #[inline]
        pub(crate) fn frames_out(&self, _batch: &[u8]) {}
        #[inline]
        pub(crate) fn event(&self, _event: &Event) {}
    }
}
