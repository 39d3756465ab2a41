//! Requests held behind a pending `initialize` (agent side), with their raw frames.

use std::collections::VecDeque;

use crate::jsonrpc::RequestId;

/// A held request: its id and its raw frame, run through the pipeline again on release.
pub(super) type HeldRequest = (RequestId, Box<[u8]>);

/// The held requests in arrival order, and the bytes of their frames (bounded by
/// `max_held_bytes`). Invariant: `bytes` is the sum of the frames' lengths; every change goes
/// through the methods below, which keep it.
#[derive(Debug, Default)]
pub(super) struct Held {
    queue: VecDeque<HeldRequest>,
    bytes: usize,
}

impl Held {
    /// Holds request `id` with a copy of its frame, after those already held.
    pub(super) fn push(&mut self, id: RequestId, frame: &[u8]) {
        self.bytes += frame.len();
        self.queue.push_back((id, frame.into()));
    }

    /// Removes the first held request with wire id `id`, if there is one.
    pub(super) fn remove(&mut self, id: &RequestId) -> Option<HeldRequest> {
        let pos = self.queue.iter().position(|(held_id, _)| held_id == id)?;
        let held = self.queue.remove(pos)?;
        self.bytes -= held.1.len();
        Some(held)
    }

    /// Takes every held request, in arrival order, leaving none.
    pub(super) fn take(&mut self) -> VecDeque<HeldRequest> {
        self.bytes = 0;
        std::mem::take(&mut self.queue)
    }

    /// Drops every held request.
    pub(super) fn clear(&mut self) {
        self.queue.clear();
        self.bytes = 0;
    }

    /// The number of held requests.
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    /// The bytes of the held frames.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_follow_every_change() {
        let mut held = Held::default();
        held.push(RequestId::Number(1), b"abc");
        held.push(RequestId::Number(2), b"de");
        held.push(RequestId::Number(1), b"f");
        assert_eq!((held.len(), held.bytes()), (3, 6));
        assert!(held.remove(&RequestId::Number(7)).is_none());
        // The first one with that id goes.
        let (id, frame) = held.remove(&RequestId::Number(1)).unwrap();
        assert_eq!((id, &*frame), (RequestId::Number(1), &b"abc"[..]));
        assert_eq!((held.len(), held.bytes()), (2, 3));
        let all: Vec<_> = held.take().into_iter().map(|(_, f)| f.into_vec()).collect();
        assert_eq!(all, [b"de".to_vec(), b"f".to_vec()]);
        assert_eq!((held.len(), held.bytes()), (0, 0));
        held.push(RequestId::Number(3), b"xyz");
        held.clear();
        assert_eq!((held.len(), held.bytes()), (0, 0));
    }
}
