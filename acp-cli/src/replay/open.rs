//! The requests of a transcript still waiting for their responses, tracked within a bound.
//!
//! Every mode of `acp replay` matches responses to requests, so it remembers the requests not
//! answered yet. A transcript can hold any number of them (a peer that never answers), so the
//! tracking is bounded as a connection bounds its requests in flight (`max_inbound`): at most
//! [`MAX_OPEN`] requests, and [`MAX_OPEN_BYTES`] bytes of their lines, each way. A line whose
//! requests do not fit is not tracked ([`OpenRequests::fits`]); the caller says so (`--check`:
//! a violation, and the line is not judged; `--summary`: a count; the drawing: a warning).
//! Once a line was not tracked, a response that matches no tracked request may answer one
//! that was not ([`OpenRequests::untracked`]).

use std::collections::{HashMap, VecDeque};

use acp_blocking::acp_proto::jsonrpc::{Incoming, RequestId, parse};
use serde_json::value::RawValue;

use crate::record::transcript::Dir;

/// The most requests tracked unanswered at once, each way.
pub(crate) const MAX_OPEN: usize = 1 << 14;
/// The most bytes of the lines of the requests tracked unanswered at once, each way.
pub(crate) const MAX_OPEN_BYTES: usize = 8 << 20;

/// The ids in one recorded line: its requests (with the bytes of each) and its responses.
#[derive(Debug, Default)]
pub(crate) struct LineIds {
    /// Requests, and invalid messages that carry an id (they too must be answered).
    pub(crate) requests: Vec<(RequestId, usize)>,
    pub(crate) responses: Vec<RequestId>,
}

impl LineIds {
    /// The ids of `text`, a message or a batch array of messages.
    pub(crate) fn of(text: &str) -> LineIds {
        let mut ids = LineIds::default();
        match serde_json::from_str::<Vec<&RawValue>>(text) {
            Ok(entries) => {
                for entry in entries {
                    ids.add(entry.get());
                }
            }
            Err(_) => ids.add(text),
        }
        ids
    }

    fn add(&mut self, message: &str) {
        match parse(message.as_bytes()) {
            Incoming::Request { id: RequestId::Null, .. } | Incoming::Invalid { id: RequestId::Null, .. } => {}
            Incoming::Request { id, .. } | Incoming::Invalid { id, .. } => self.requests.push((id, message.len())),
            Incoming::Response { id, .. } if id != RequestId::Null => self.responses.push(id),
            _ => {}
        }
    }

    /// The bytes of the requests.
    pub(crate) fn request_bytes(&self) -> usize {
        self.requests.iter().map(|(_, bytes)| bytes).sum()
    }
}

/// One request tracked: the bytes it counts, and what the caller keeps with it.
struct Entry<T> {
    bytes: usize,
    value: T,
}

/// The requests not answered yet, each way, with a `T` each (see the [module docs](self)).
pub(crate) struct OpenRequests<T> {
    /// By the direction the request went and its id; copies of an id oldest first.
    open: HashMap<(Dir, RequestId), VecDeque<Entry<T>>>,
    count: [usize; 2],
    bytes: [usize; 2],
    /// Lines not tracked, by the direction they went.
    refused: [u64; 2],
}

impl<T> Default for OpenRequests<T> {
    fn default() -> Self {
        OpenRequests { open: HashMap::new(), count: [0; 2], bytes: [0; 2], refused: [0; 2] }
    }
}

impl<T> OpenRequests<T> {
    /// Whether `ids`' requests, going `dir`, fit within the bounds; when they do not, the line
    /// is counted as not tracked.
    pub(crate) fn fits(&mut self, dir: Dir, ids: &LineIds) -> bool {
        let i = dir.index();
        let fits = ids.requests.is_empty()
            || (self.count[i] + ids.requests.len() <= MAX_OPEN
                && self.bytes[i] + ids.request_bytes() <= MAX_OPEN_BYTES);
        if !fits {
            self.refused[i] += 1;
        }
        fits
    }

    /// Tracks a request that went `dir` (after [`fits`](Self::fits) said it fits).
    pub(crate) fn insert(&mut self, dir: Dir, id: RequestId, bytes: usize, value: T) {
        let i = dir.index();
        self.count[i] += 1;
        self.bytes[i] += bytes;
        self.open.entry((dir, id)).or_default().push_back(Entry { bytes, value });
    }

    /// The oldest request with `id` that went `dir`, now answered.
    pub(crate) fn answer(&mut self, dir: Dir, id: &RequestId) -> Option<T> {
        let key = (dir, id.clone());
        let queue = self.open.get_mut(&key)?;
        let entry = queue.pop_front()?;
        if queue.is_empty() {
            self.open.remove(&key);
        }
        let i = dir.index();
        self.count[i] -= 1;
        self.bytes[i] -= entry.bytes;
        Some(entry.value)
    }

    /// Whether a request with `id` that went `dir` is tracked.
    pub(crate) fn contains(&self, dir: Dir, id: &RequestId) -> bool {
        self.open.contains_key(&(dir, id.clone()))
    }

    /// Lines going `dir` that were not tracked: a response going the other way that matches no
    /// tracked request may answer one of them.
    pub(crate) fn untracked(&self, dir: Dir) -> u64 {
        self.refused[dir.index()]
    }

    /// How many requests are tracked, each way.
    pub(crate) fn len(&self, dir: Dir) -> usize {
        self.count[dir.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_responses_of_a_line_and_of_a_batch() {
        let ids = LineIds::of(r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#);
        assert_eq!(ids.requests.len(), 1);
        assert!(ids.responses.is_empty());
        let batch = LineIds::of(r#"[{"jsonrpc":"2.0","id":"a","result":{}},{"jsonrpc":"2.0","id":2,"method":"x"}]"#);
        assert_eq!(batch.responses, [RequestId::Str("a".into())]);
        assert_eq!(batch.requests.iter().map(|r| r.0.clone()).collect::<Vec<_>>(), [RequestId::Number(2)]);
        assert!(LineIds::of(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#).requests.is_empty());
        assert!(LineIds::of("not json").requests.is_empty());
    }

    #[test]
    fn the_tracking_stops_at_its_bound_and_says_so() {
        let mut open = OpenRequests::<usize>::default();
        let one = |id: i64| LineIds { requests: vec![(RequestId::Number(id), 10)], responses: vec![] };
        for id in 0..MAX_OPEN as i64 {
            assert!(open.fits(Dir::C2a, &one(id)));
            open.insert(Dir::C2a, RequestId::Number(id), 10, id as usize);
        }
        assert!(!open.fits(Dir::C2a, &one(-1)), "one more does not fit");
        assert_eq!((open.len(Dir::C2a), open.untracked(Dir::C2a), open.untracked(Dir::A2c)), (MAX_OPEN, 1, 0));
        assert!(open.fits(Dir::A2c, &one(0)), "the other way has its own bound");
        assert_eq!(open.answer(Dir::C2a, &RequestId::Number(7)), Some(7));
        assert_eq!(open.answer(Dir::C2a, &RequestId::Number(7)), None);
        assert!(open.fits(Dir::C2a, &one(-1)), "an answer makes room");
        let big = LineIds { requests: vec![(RequestId::Number(-2), MAX_OPEN_BYTES)], responses: vec![] };
        assert!(!open.fits(Dir::C2a, &big), "the bytes are bounded too");
    }
}
