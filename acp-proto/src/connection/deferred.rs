//! Inbound requests deferred while the output is full: the machine takes on no new work until
//! the peer has read what is queued (see [`Config::outbound_budget`](super::Config::outbound_budget)).
//!
//! A deferred request has passed every check and is in flight (it counts toward
//! `max_inbound`, duplicates of its id are dropped, a cancellation answers it at once); only its
//! [`Event::Request`](super::Event::Request) waits. The queue keeps arrival order and the bytes
//! of the frames that carried the requests, which `max_held_bytes` bounds.

use std::collections::VecDeque;

use super::AnyEvent;

/// The deferred requests in arrival order, by inbound handle, each as the event that will tell
/// the application of it ([`Event::Request`], or with feature `unstable_protocol_v2` the
/// `Event::RequestV2`), with their frames' sizes.
/// Invariant: `bytes` is the sum of the sizes of the queued entries.
#[derive(Debug, Default)]
pub(super) struct Deferred {
    queue: VecDeque<(u64, AnyEvent, usize)>,
    bytes: usize,
}

impl Deferred {
    /// Defers request `key` (decoded from a frame of `size` bytes) after those already waiting.
    pub(super) fn push(&mut self, key: u64, event: AnyEvent, size: usize) {
        self.bytes += size;
        self.queue.push_back((key, event, size));
    }

    /// Takes the oldest deferred request.
    pub(super) fn pop(&mut self) -> Option<(u64, AnyEvent)> {
        let (key, event, size) = self.queue.pop_front()?;
        self.bytes -= size;
        Some((key, event))
    }

    /// Forgets request `key` (answered while it waited); returns whether it was deferred.
    pub(super) fn remove(&mut self, key: u64) -> bool {
        let Some(pos) = self.queue.iter().position(|(k, ..)| *k == key) else { return false };
        if let Some((_, _, size)) = self.queue.remove(pos) {
            self.bytes -= size;
        }
        true
    }

    /// Drops every deferred request.
    pub(super) fn clear(&mut self) {
        self.queue.clear();
        self.bytes = 0;
    }

    /// The number of deferred requests.
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing is deferred.
    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The bytes of the frames of the deferred requests.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::InboundId;
    use crate::methods::{ClientRequest, Request};
    use crate::types::PromptRequest;

    fn request(n: u64) -> AnyEvent {
        let request = Request::Client(ClientRequest::Prompt(PromptRequest::new(format!("s{n}"), vec![])));
        AnyEvent::Request { id: InboundId(n), request }
    }

    #[test]
    fn bytes_follow_every_change_and_order_is_kept() {
        let mut d = Deferred::default();
        d.push(1, request(1), 10);
        d.push(2, request(2), 20);
        d.push(3, request(3), 30);
        assert_eq!((d.len(), d.bytes()), (3, 60));
        assert!(!d.remove(9));
        assert!(d.remove(2));
        assert_eq!((d.len(), d.bytes()), (2, 40));
        assert_eq!(d.pop().map(|(k, _)| k), Some(1));
        assert_eq!(d.bytes(), 30);
        d.clear();
        assert!(d.is_empty() && d.bytes() == 0 && d.pop().is_none());
    }
}
