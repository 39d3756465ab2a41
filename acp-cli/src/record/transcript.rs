//! The transcript a recording writes: one JSON object per line (NDJSON).
//!
//! * first, a header: `{"acp_record":1,"argv":[…],"started":"<RFC 3339, UTC>"}`;
//! * then one record per line that crossed, in the order the proxy read them:
//!   `{"t_ms":…,"dir":"c2a"|"a2c","line":"<the line, without its newline>"}`, where `t_ms` is
//!   monotonic milliseconds since the start; a line over [`LINE_CAP`] bytes is recorded cut
//!   there, with `"truncated":true,"len":<its full length>,"cap":LINE_CAP` (it is forwarded
//!   whole); a line that is not UTF-8 is recorded lossily with `"lossy":true`;
//! * `{"t_ms":…,"dir":…,"dropped":N}` when N lines could not be queued for the transcript
//!   (the writer fell [`QUEUE_BYTES`] behind; forwarding never waits for it);
//! * last, `{"t_ms":…,"exit":{"code":N}}` or `{"t_ms":…,"exit":{"signal":N}}`.
//!
//! The forwarding threads hand lines to the writer thread through a queue bounded in
//! bytes: a full queue drops the line from the transcript (and counts it), never blocks.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use serde_json::{Value, json};

/// Bytes of one line kept in the transcript; the rest is forwarded but not recorded.
pub const LINE_CAP: usize = 1 << 20;
/// Bytes of lines waiting for the writer; past it lines are dropped from the transcript.
pub const QUEUE_BYTES: usize = 8 << 20;

pub use crate::wire_dir::Dir;

/// A line that crossed: its time, direction, the kept bytes and its full length.
#[derive(Debug)]
pub(crate) struct Line {
    pub(crate) t_ms: u64,
    pub(crate) dir: Dir,
    pub(crate) bytes: Vec<u8>,
    pub(crate) len: usize,
}

#[derive(Debug, Default)]
struct State {
    lines: VecDeque<Line>,
    bytes: usize,
    dropped: [u64; 2],
    closed: bool,
}

/// The bounded queue between the forwarding threads and the writer.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    state: Mutex<State>,
    ready: Condvar,
}

/// What the writer takes next.
pub(crate) enum Item {
    Line(Line),
    Dropped(Dir, u64),
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a line, stamped with the milliseconds since `start` (under the lock, so that the
    /// times of the queue's lines never go backwards); when the queue is full, counts it
    /// dropped instead (never blocks).
    pub(crate) fn push(&self, start: std::time::Instant, mut line: Line) {
        let mut state = self.lock();
        line.t_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        if state.closed {
            return;
        }
        if state.bytes + line.bytes.len() > QUEUE_BYTES {
            state.dropped[line.dir.index()] += 1;
        } else {
            state.bytes += line.bytes.len();
            state.lines.push_back(line);
        }
        self.ready.notify_one();
    }

    /// No more lines: the writer ends once the queue is empty.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    /// The next item, waiting for one; `None` once closed and empty. `idle` runs when the
    /// queue is empty, before waiting (the writer flushes there).
    pub(crate) fn pop(&self, mut idle: impl FnMut()) -> Option<Item> {
        let mut state = self.lock();
        loop {
            for dir in [Dir::C2a, Dir::A2c] {
                let n = std::mem::take(&mut state.dropped[dir.index()]);
                if n > 0 {
                    return Some(Item::Dropped(dir, n));
                }
            }
            if let Some(line) = state.lines.pop_front() {
                state.bytes -= line.bytes.len();
                return Some(Item::Line(line));
            }
            if state.closed {
                return None;
            }
            drop(state);
            idle();
            state = self.lock();
            if state.lines.is_empty() && !state.closed && state.dropped == [0, 0] {
                state = self.ready.wait(state).unwrap_or_else(PoisonError::into_inner);
            }
        }
    }
}

/// The header record.
pub(crate) fn header(argv: &[String]) -> String {
    format!("{{\"acp_record\":1,\"argv\":{},\"started\":\"{}\"}}", json!(argv), rfc3339_now())
}

/// The record of one line (keys in the documented order: time, direction, line).
pub(crate) fn line_record(line: &Line) -> String {
    let text = String::from_utf8_lossy(&line.bytes);
    let mut record =
        format!("{{\"t_ms\":{},\"dir\":\"{}\",\"line\":{}", line.t_ms, line.dir.as_str(), Value::from(&*text));
    if matches!(text, std::borrow::Cow::Owned(_)) {
        record.push_str(",\"lossy\":true");
    }
    if line.len > line.bytes.len() {
        record.push_str(&format!(",\"truncated\":true,\"len\":{},\"cap\":{LINE_CAP}", line.len));
    }
    record.push('}');
    record
}

/// The record of lines dropped from the transcript.
pub(crate) fn dropped_record(t_ms: u64, dir: Dir, n: u64) -> String {
    format!("{{\"t_ms\":{t_ms},\"dir\":\"{}\",\"dropped\":{n}}}", dir.as_str())
}

/// The final record: how the agent ended.
pub(crate) fn exit_record(t_ms: u64, code: Option<i32>, signal: Option<i32>) -> String {
    let exit = match (code, signal) {
        (Some(code), _) => format!("{{\"code\":{code}}}"),
        (None, Some(signal)) => format!("{{\"signal\":{signal}}}"),
        (None, None) => "{}".to_owned(),
    };
    format!("{{\"t_ms\":{t_ms},\"exit\":{exit}}}")
}

/// Writes one record and its newline.
pub(crate) fn write_record(out: &mut impl Write, record: &str) -> io::Result<()> {
    out.write_all(record.as_bytes())?;
    out.write_all(b"\n")
}

/// The current time in RFC 3339, UTC, to the second.
pub(crate) fn rfc3339_now() -> String {
    crate::store::rfc3339(crate::store::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_blocking() {
        let queue = Queue::default();
        let big = || Line { t_ms: 0, dir: Dir::A2c, bytes: vec![b'x'; QUEUE_BYTES / 2], len: QUEUE_BYTES / 2 };
        for _ in 0..3 {
            queue.push(std::time::Instant::now(), big());
        }
        queue.close();
        let mut got = Vec::new();
        while let Some(item) = queue.pop(|| {}) {
            got.push(match item {
                Item::Line(_) => "line".to_owned(),
                Item::Dropped(dir, n) => format!("dropped {} {n}", dir.as_str()),
            });
        }
        assert_eq!(got, ["dropped a2c 1", "line", "line"]);
    }
}
