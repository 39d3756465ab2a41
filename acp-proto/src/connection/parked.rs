//! Input parked while the machine's own answers fill the output.
//!
//! The machine answers some peer input itself: errors for bad lines and refused requests,
//! `-32800` after a cancellation, the turn rules' automatic answers. Those answers are *owed*
//! to the peer and wait in the output until it reads. Once they reach
//! [`Config::outbound_budget`](super::Config::outbound_budget), handling more input that
//! needs an answer would grow the output without a bound; stopping all input instead
//! deadlocks two peers whose outputs are both full (each waits for the other to read). So
//! the machine reads on, and:
//!
//! 1. a **response** or a **notification** is handled at once: it owes nothing, and a
//!    response frees what its request held;
//! 2. a frame that **owes an answer** (a request, an invalid line, an oversized line, a v2
//!    batch array) is **parked**: kept as it came, not yet checked;
//! 3. except that order is kept **per session** and for **cancellations**: a notification
//!    naming the session of a parked request (`session/update`, `session/cancel`), or the
//!    answer to a request of ours of that session (a prompt, a permission ask), is kept with
//!    the newest parked request of that session, and `$/cancel_request` naming a parked
//!    request with that request, to be handled right after it. So a session's turn never
//!    ends, and a request is never cancelled, before a request that came ahead is handled;
//! 4. parked frames are handled in arrival order, through every check as if they had just
//!    arrived, once the owed answers have been taken ([`Connection::poll_transmit`]): by the
//!    next [`Connection::handle_input`] (before its bytes) or [`Connection::poll_event`]
//!    ([`Connection::has_events`] says when), until the owed answers fill the budget again;
//!    while frames are parked, every later frame that owes an answer is parked behind them;
//! 5. input stops once more than [`Config::max_inbound`](super::Config::max_inbound) frames
//!    are parked, or [`Config::max_held_bytes`](super::Config::max_held_bytes) bytes (an
//!    oversized line is parked as its length only);
//! 6. at the end of input the parked frames are handled before the final line; a close drops
//!    them (as it drops deferred requests).
//!
//! Requests may thus be handled after notifications and responses that came behind them, of
//! other sessions or of none (rule 3). Parked requests count in
//! [`Connection::inbound_in_flight`] and in [`Connection::memory_estimate`].
//!
//! Why two peers do not deadlock on it: a side stops reading on its own answers only once
//! the peer has more than `max_inbound` requests unanswered at it (parked ones, besides those
//! checked, answered or refused whose answers it has not read), or `max_held_bytes` of them
//! parked (rule 5). A peer built on this machine keeps at most its
//! [`Config::max_pending_outbound`](super::Config::max_pending_outbound) requests
//! unanswered; while that is at most this side's `max_inbound` (the defaults are equal) and
//! they fit `max_held_bytes`, this side reads everything the peer writes: the peer's output
//! drains, the peer reads again, and this side's owed answers drain in turn.

use std::collections::VecDeque;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::AnyConnection;
use crate::framer::FrameEvent;
use crate::jsonrpc::{self, Incoming, RequestId};
use crate::methods::Method;
use crate::types::CancelRequestNotification;

/// One parked frame, and the frames kept with it.
#[derive(Debug)]
pub(super) struct Entry {
    /// The frame; `None` for an oversized line (only its length is kept).
    frame: Option<Box<[u8]>>,
    /// The length of the line.
    len: u64,
    /// The id of a parked request (for rule 3).
    id: Option<RequestId>,
    /// The `sessionId` of a parked request (for rule 3).
    session: Option<String>,
    /// Frames kept with this one, to handle right after it (rule 3).
    then: Vec<Box<[u8]>>,
}

impl Entry {
    fn bytes(&self) -> usize {
        self.frame.as_ref().map_or(0, |f| f.len()) + self.then.iter().map(|f| f.len()).sum::<usize>()
    }
}

/// The parked frames in arrival order. Invariants: `bytes` is the sum of the kept frames'
/// lengths (cancellations kept with them included) and `requests` the number of entries
/// with an id; every change goes through the methods below, which keep them.
#[derive(Debug, Default)]
pub(super) struct Parked {
    queue: VecDeque<Entry>,
    bytes: usize,
    requests: usize,
}

impl Parked {
    fn push(&mut self, entry: Entry) {
        self.bytes += entry.bytes();
        self.requests += usize::from(entry.id.is_some());
        self.queue.push_back(entry);
    }

    /// Keeps `frame` with the parked entry at `index`, to be handled right after it.
    fn attach(&mut self, index: usize, frame: &[u8]) {
        self.bytes += frame.len();
        self.queue[index].then.push(frame.into());
    }

    /// Takes the oldest parked frame.
    pub(super) fn pop(&mut self) -> Option<Entry> {
        let entry = self.queue.pop_front()?;
        self.bytes -= entry.bytes();
        self.requests -= usize::from(entry.id.is_some());
        Some(entry)
    }

    /// Drops every parked frame.
    pub(super) fn clear(&mut self) {
        *self = Parked::default();
    }

    /// The number of parked frames.
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing is parked.
    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The bytes of the parked frames.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The parked requests (frames with an id).
    pub(super) fn requests(&self) -> usize {
        self.requests
    }

    /// The newest parked request with wire id `id`.
    fn request(&self, id: &RequestId) -> Option<usize> {
        self.queue.iter().rposition(|e| e.id.as_ref() == Some(id))
    }

    /// The newest parked request of `session`.
    fn newest_of(&self, session: &str) -> Option<usize> {
        self.queue.iter().rposition(|e| e.session.as_deref() == Some(session))
    }
}

/// What a frame read while parking is (rules 1 to 3).
enum Class {
    /// It owes an answer: parked, with the id and the session of a request.
    Owes(Option<RequestId>, Option<String>),
    /// It must follow the parked entry at this index: kept with it.
    Follows(usize),
    /// It owes nothing: handled at once.
    Free,
}

/// The `sessionId` of a message's params.
#[derive(Deserialize)]
struct SessionParams {
    #[serde(rename = "sessionId")]
    session_id: String,
}

fn session_of(params: Option<&RawValue>) -> Option<String> {
    params.and_then(|p| serde_json::from_str::<SessionParams>(p.get()).ok()).map(|p| p.session_id)
}

impl AnyConnection {
    /// Whether frames read now go through the parking rules: the owed answers fill the
    /// output budget, or frames are parked already (later ones must not overtake them).
    pub(super) fn parking(&self) -> bool {
        self.machine_out >= self.config.outbound_budget || !self.parked.is_empty()
    }

    /// Whether the parked frames passed their bounds (rule 5): input stops.
    pub(super) fn parked_full(&self) -> bool {
        self.parked.len() > self.config.max_inbound || self.parked.bytes() >= self.config.max_held_bytes
    }

    /// Whether parked frames can be handled now (rule 4).
    pub(super) fn parked_ready(&self) -> bool {
        !self.parked.is_empty() && self.machine_out < self.config.outbound_budget
    }

    /// A frame read while [`parking`](Self::parking): parked, or handled at once.
    pub(super) fn park_or_handle(&mut self, ev: FrameEvent<'_>) {
        let frame = match ev {
            FrameEvent::Oversized { len } => {
                self.stats.input_parked += 1;
                let entry = Entry { frame: None, len, id: None, session: None, then: Vec::new() };
                return self.parked.push(entry);
            }
            FrameEvent::Frame(frame) => frame,
        };
        match self.classify(frame) {
            Class::Free => self.on_frame(frame),
            Class::Follows(index) => self.parked.attach(index, frame),
            Class::Owes(id, session) => {
                self.stats.input_parked += 1;
                let len = frame.len() as u64;
                self.parked.push(Entry { frame: Some(frame.into()), len, id, session, then: Vec::new() });
            }
        }
    }

    fn classify(&self, frame: &[u8]) -> Class {
        match jsonrpc::parse(frame) {
            Incoming::Request { id, params, .. } => Class::Owes(Some(id), session_of(params)),
            // Bad lines (v1 arrays among them) and v2 batch arrays are answered.
            Incoming::Invalid { .. } => Class::Owes(None, None),
            Incoming::Notification { method, params } => {
                let target = if method == Method::CancelRequest.wire() {
                    params
                        .and_then(|p| serde_json::from_str::<CancelRequestNotification>(p.get()).ok())
                        .and_then(|c| self.parked.request(&c.request_id))
                } else {
                    session_of(params).and_then(|s| self.parked.newest_of(&s))
                };
                target.map_or(Class::Free, Class::Follows)
            }
            Incoming::Response { id: RequestId::Number(n), .. } => {
                let session = self.outbound.get(&n).and_then(|p| p.session.as_ref());
                session.and_then(|s| self.parked.newest_of(s.as_str())).map_or(Class::Free, Class::Follows)
            }
            Incoming::Response { .. } | Incoming::MalformedResponse { .. } => Class::Free,
        }
    }

    /// Handles parked frames in arrival order while the owed answers are under the budget and
    /// the events under their bound (rule 4).
    pub(super) fn unpark(&mut self) {
        while self.parked_ready() && self.events.len() < self.config.max_events && !self.is_closed() {
            let Some(entry) = self.parked.pop() else { break };
            self.handle_parked(entry);
        }
    }

    /// Handles every parked frame, whatever the owed answers (rule 6: the end of input; they
    /// are bounded by rule 5).
    pub(super) fn unpark_all(&mut self) {
        while !self.is_closed() {
            let Some(entry) = self.parked.pop() else { break };
            self.handle_parked(entry);
        }
    }

    fn handle_parked(&mut self, entry: Entry) {
        match entry.frame {
            Some(frame) => self.on_frame(&frame),
            None => self.reply_oversized(entry.len),
        }
        for cancel in entry.then {
            self.on_frame(&cancel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(frame: Option<&[u8]>, len: u64, id: Option<i64>, session: Option<&str>) -> Entry {
        Entry {
            frame: frame.map(Into::into),
            len,
            id: id.map(RequestId::Number),
            session: session.map(Into::into),
            then: Vec::new(),
        }
    }

    #[test]
    fn counts_follow_every_change_and_order_is_kept() {
        let mut p = Parked::default();
        p.push(entry(Some(b"abc"), 3, Some(1), Some("s")));
        p.push(entry(None, 9000, None, None));
        p.push(entry(Some(b"de"), 2, None, None));
        assert_eq!((p.len(), p.bytes(), p.requests()), (3, 5, 1));
        assert_eq!((p.request(&RequestId::Number(1)), p.request(&RequestId::Number(2))), (Some(0), None));
        assert_eq!((p.newest_of("s"), p.newest_of("t")), (Some(0), None));
        p.attach(0, b"cancel");
        assert_eq!((p.len(), p.bytes()), (3, 11), "a cancellation counts its bytes, not as a frame");
        let first = p.pop().unwrap();
        assert_eq!((first.len, first.id, first.then.len()), (3, Some(RequestId::Number(1)), 1));
        assert_eq!((p.len(), p.bytes(), p.requests()), (2, 2, 0));
        assert_eq!(p.pop().unwrap().len, 9000);
        p.clear();
        assert!(p.is_empty() && p.bytes() == 0 && p.pop().is_none());
    }
}
