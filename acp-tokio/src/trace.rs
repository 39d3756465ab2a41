//! Optional `tracing` instrumentation (feature `tracing`): one span per connection
//! (`acp_connection`, with the side and a sequence number), a `TRACE` event per frame in and out
//! (its length; its text only when payloads were asked for), and `DEBUG` events for dispatch,
//! cancellation, outcomes and close. Without the feature every method is an empty inline
//! function.

use acp_proto::{CancelReason, CloseReason, InboundId, OutboundId, Outcome, Side};

#[cfg(feature = "tracing")]
pub(crate) use enabled::Tracer;

#[cfg(not(feature = "tracing"))]
pub(crate) use disabled::Tracer;

#[cfg(feature = "tracing")]
mod enabled {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    /// Payloads longer than this are cut in events.
    const MAX_PAYLOAD: usize = 16 * 1024;

    static CONNECTIONS: AtomicU64 = AtomicU64::new(0);

    pub(crate) struct Tracer {
        span: tracing::Span,
        payloads: bool,
        /// The start of an inbound line not yet complete (kept only for payloads, capped).
        partial: Vec<u8>,
        partial_len: usize,
    }

    impl Tracer {
        pub(crate) fn new(side: Side, payloads: bool) -> Tracer {
            let seq = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
            let span = tracing::debug_span!(target: "acp_tokio", "acp_connection", side = ?side, seq);
            Tracer { span, payloads, partial: Vec::new(), partial_len: 0 }
        }

        pub(crate) fn enter(&self) -> tracing::span::EnteredSpan {
            self.span.clone().entered()
        }

        /// One frame of `len` bytes (without its line end); `payload` is its text, possibly cut.
        fn frame(&self, direction: &'static str, len: usize, payload: &[u8]) {
            if len == 0 {
                return;
            }
            if self.payloads {
                let shown = String::from_utf8_lossy(&payload[..payload.len().min(MAX_PAYLOAD)]);
                tracing::trace!(target: "acp_tokio::frame", direction, len, payload = %shown, "frame");
            } else {
                tracing::trace!(target: "acp_tokio::frame", direction, len, "frame");
            }
        }

        fn whole_frame(&self, direction: &'static str, line: &[u8]) {
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            self.frame(direction, line.len(), line);
        }

        /// Bytes the core consumed; a frame may span several calls.
        pub(crate) fn input(&mut self, mut bytes: &[u8]) {
            if !tracing::enabled!(target: "acp_tokio::frame", tracing::Level::TRACE) {
                return;
            }
            while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
                let (line, rest) = bytes.split_at(end + 1);
                bytes = rest;
                if self.partial_len == 0 {
                    self.whole_frame("in", line);
                    continue;
                }
                self.keep(line);
                let payload = std::mem::take(&mut self.partial);
                self.frame("in", self.partial_len - 1, payload.strip_suffix(b"\n").unwrap_or(&payload));
                self.partial = payload;
                self.partial.clear();
                self.partial_len = 0;
            }
            self.keep(bytes);
        }

        fn keep(&mut self, bytes: &[u8]) {
            self.partial_len += bytes.len();
            if self.payloads {
                let room = MAX_PAYLOAD.saturating_sub(self.partial.len());
                self.partial.extend_from_slice(&bytes[..bytes.len().min(room)]);
            }
        }

        /// A batch written (whole frames).
        pub(crate) fn output(&self, batch: &[u8]) {
            if tracing::enabled!(target: "acp_tokio::frame", tracing::Level::TRACE) {
                batch.split_inclusive(|&b| b == b'\n').for_each(|frame| self.whole_frame("out", frame));
            }
        }

        pub(crate) fn request(&self, id: InboundId, method: &str) {
            tracing::debug!(target: "acp_tokio", %id, method, "dispatch request");
        }

        pub(crate) fn notification(&self, method: &str, in_turn: bool) {
            tracing::debug!(target: "acp_tokio", method, in_turn, "dispatch notification");
        }

        pub(crate) fn cancelled(&self, id: InboundId, reason: CancelReason) {
            tracing::debug!(target: "acp_tokio", %id, ?reason, "request cancelled");
        }

        pub(crate) fn outcome(&self, id: OutboundId, outcome: &Outcome) {
            let kind = match outcome {
                Outcome::Result(_) => "result",
                Outcome::Error(_) => "error",
                Outcome::InvalidResult(_) => "invalid result",
                Outcome::TimedOut => "timed out",
                Outcome::Cancelled => "cancelled",
                Outcome::ConnectionClosed => "connection closed",
                _ => "other",
            };
            tracing::debug!(target: "acp_tokio", %id, outcome = kind, "outcome");
        }

        pub(crate) fn closed(&self, reason: &CloseReason) {
            tracing::debug!(target: "acp_tokio", %reason, "connection closed");
        }
    }
}

#[cfg(not(feature = "tracing"))]
mod disabled {
    use super::*;

    pub(crate) struct Tracer;

    /// Stands for an entered span.
    pub(crate) struct NotEntered;

    impl Tracer {
        #[inline(always)]
        pub(crate) fn new(_side: Side, _payloads: bool) -> Tracer {
            Tracer
        }
        #[inline(always)]
        pub(crate) fn enter(&self) -> NotEntered {
            NotEntered
        }
        #[inline(always)]
        pub(crate) fn input(&mut self, _bytes: &[u8]) {}
        #[inline(always)]
        pub(crate) fn output(&self, _batch: &[u8]) {}
        #[inline(always)]
        pub(crate) fn request(&self, _id: InboundId, _method: &str) {}
        #[inline(always)]
        pub(crate) fn notification(&self, _method: &str, _in_turn: bool) {}
        #[inline(always)]
        pub(crate) fn cancelled(&self, _id: InboundId, _reason: CancelReason) {}
        #[inline(always)]
        pub(crate) fn outcome(&self, _id: OutboundId, _outcome: &Outcome) {}
        #[inline(always)]
        pub(crate) fn closed(&self, _reason: &CloseReason) {}
    }
}
