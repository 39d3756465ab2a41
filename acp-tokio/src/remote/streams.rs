//! The SSE streams of a Streamable HTTP connection on the server, bounded in bytes as the
//! core's `outbound_budget` bounds its output.
//!
//! Rules, each with a test (here, and `tests/tokio/remote_http_bounds.rs`):
//! * A stream buffers at most `stream_buffer` bytes for its reader, and all the streams of a
//!   connection `connection_buffer` bytes together ([`Budget`]). A message is charged its length
//!   plus [`OVERHEAD`] (a flood of tiny messages is bounded too); one larger than a budget takes
//!   all of it, so it passes alone.
//! * The charge is given back when the stream's reader takes the message (the HTTP layer then
//!   writes it on under the transport's own flow control: one chunk at a time).
//! * Past a budget the router waits: the agent's output is not read (backpressure) until the
//!   reader catches up. The router's caller bounds the wait (`stream_stall`, then the
//!   connection ends with its reason given to the backend).
//! * A session's stream exists from its first message, before any `GET` opens it: it fills
//!   within the same budgets, never past them.
//! * A stream ends when its connection closes, after what was queued before.
//! * One reader at a time: a second `GET` of an open stream is refused; the receiver goes back
//!   to the stream when its response ends, and what it had not taken yet stays queued.
//! * Resumable (feature `unstable_resumable_transport`, a stream made with a [`Retention`]):
//!   each message gets the stream's next cursor (`1`, `2`, …, written as the SSE `id:`); what a
//!   reader took stays in a replay ring, still charged to both budgets, for `messages` messages
//!   and `max_age` at most. A message that needs budget held by a ring evicts the oldest
//!   retained message (of this stream, then of any stream of the connection) instead of
//!   waiting. A reader resuming after cursor `c` gets the retained messages after `c` (again,
//!   with their cursors: a second resume from `c` gets them again), then what is queued; a
//!   cursor the stream never sent, or one whose successors left the ring, is refused
//!   ([`Refusal::Gone`]): never a stream with a hole.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use futures_util::StreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::time::Instant;

/// Bytes charged to each message besides its text (its queue entry and allocation).
pub(crate) const OVERHEAD: usize = 64;
/// A comment on an idle stream this often keeps intermediaries from closing it.
pub(crate) const KEEPALIVE: Duration = Duration::from_secs(15);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Bytes that may be buffered: a stream's own, or its connection's.
#[derive(Clone)]
pub(crate) struct Budget {
    bytes: Arc<Semaphore>,
    max: u32,
    /// Told when a reader took a message into a replay ring (its bytes can now be evicted).
    retained: Arc<tokio::sync::Notify>,
}

impl Budget {
    /// A budget of `max` bytes (at least 1, at most `u32::MAX`).
    pub(crate) fn new(max: usize) -> Budget {
        let max = u32::try_from(max).unwrap_or(u32::MAX).max(1);
        Budget { bytes: Arc::new(Semaphore::new(max as usize)), max, retained: Arc::default() }
    }

    fn cost(&self, len: usize) -> u32 {
        u32::try_from(len.saturating_add(OVERHEAD)).unwrap_or(u32::MAX).min(self.max)
    }

    /// Waits until `len` bytes of text fit; they are given back when the permit is dropped.
    /// While they do not, `evict` is asked to free retained bytes (`false`: none left), again
    /// each time a reader retains a message.
    async fn charge(&self, len: usize, mut evict: impl FnMut() -> bool) -> Option<OwnedSemaphorePermit> {
        let cost = self.cost(len);
        loop {
            let retained = self.retained.notified();
            tokio::pin!(retained);
            retained.as_mut().enable();
            match self.bytes.clone().try_acquire_many_owned(cost) {
                Ok(permit) => return Some(permit),
                Err(tokio::sync::TryAcquireError::Closed) => return None,
                Err(tokio::sync::TryAcquireError::NoPermits) if evict() => continue,
                Err(tokio::sync::TryAcquireError::NoPermits) => {}
            }
            tokio::select! {
                permit = self.bytes.clone().acquire_many_owned(cost) => return permit.ok(),
                () = retained => {}
            }
        }
    }

    /// Bytes buffered against this budget now.
    #[cfg(test)]
    fn used(&self) -> usize {
        self.max as usize - self.bytes.available_permits()
    }
}

/// A message waiting for its reader (or, taken, retained for a resume), with what it is
/// charged.
struct Queued {
    /// Its cursor (0 on a stream without retention).
    seq: u64,
    text: String,
    _charged: [OwnedSemaphorePermit; 2],
    /// The budgets' [`Budget::retained`], told when a reader retains it.
    retained: [Arc<tokio::sync::Notify>; 2],
}

/// What a resumable stream keeps of the messages its readers took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Retention {
    /// Messages kept at most.
    pub(crate) messages: usize,
    /// How long a message is kept at most.
    pub(crate) max_age: Duration,
}

/// Why a stream could not be opened.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Another response holds it.
    Busy,
    /// The cursor to resume after is not one this stream can go on from.
    Gone,
}

/// The replay ring of a resumable stream.
#[derive(Default)]
struct Ring {
    /// The messages taken most recently (cursors `taken - len + 1 ..= taken`), with when.
    kept: VecDeque<(Instant, Queued)>,
    /// The cursor of the last message a reader took (0: none).
    taken: u64,
}

impl Ring {
    /// Forgets what is past the retention.
    fn trim(&mut self, retention: Retention, now: Instant) {
        while self.kept.len() > retention.messages
            || self.kept.front().is_some_and(|(at, _)| now.saturating_duration_since(*at) > retention.max_age)
        {
            self.kept.pop_front();
        }
    }
}

/// One SSE stream (cheap to clone: a handle).
#[derive(Clone)]
pub(crate) struct Stream(Arc<Inner>);

struct Inner {
    tx: mpsc::UnboundedSender<Queued>,
    /// The receiver while no `GET` holds it.
    rx: Mutex<Option<mpsc::UnboundedReceiver<Queued>>>,
    budget: Budget,
    retention: Option<Retention>,
    /// The cursor of the last message queued.
    sent: std::sync::atomic::AtomicU64,
    ring: Mutex<Ring>,
    /// Whether a response holds the stream (a reader is attached).
    held: watch::Sender<bool>,
}

impl Stream {
    /// A stream buffering at most `max` bytes; resumable when `retention` is given.
    pub(crate) fn new(max: usize, retention: Option<Retention>) -> Stream {
        let (tx, rx) = mpsc::unbounded_channel();
        Stream(Arc::new(Inner {
            tx,
            rx: Mutex::new(Some(rx)),
            budget: Budget::new(max),
            retention,
            sent: std::sync::atomic::AtomicU64::new(0),
            ring: Mutex::new(Ring::default()),
            held: watch::channel(false).0,
        }))
    }

    /// Queues `text` for the reader once it fits this stream's budget and `connection`'s
    /// (waiting meanwhile, after `evict` found no retained message of the connection left to
    /// drop); `false` if the stream is gone.
    pub(crate) async fn send(&self, text: String, connection: &Budget, mut evict: impl FnMut() -> bool) -> bool {
        let Some(own) = self.0.budget.charge(text.len(), || self.evict_oldest().is_some()).await else {
            return false;
        };
        let Some(shared) = connection.charge(text.len(), &mut evict).await else { return false };
        let seq = match self.0.retention {
            Some(_) => self.0.sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
            None => 0,
        };
        let retained = [self.0.budget.retained.clone(), connection.retained.clone()];
        self.0.tx.send(Queued { seq, text, _charged: [own, shared], retained }).is_ok()
    }

    /// When the oldest message this stream retains was taken, if it retains any.
    pub(crate) fn oldest_retained(&self) -> Option<Instant> {
        lock(&self.0.ring).kept.front().map(|(at, _)| *at)
    }

    /// Drops the oldest message retained (its bytes go back to the budgets); when it was
    /// taken, if there was one.
    pub(crate) fn evict_oldest(&self) -> Option<Instant> {
        lock(&self.0.ring).kept.pop_front().map(|(at, _)| at)
    }

    /// Whether a reader holds the stream, as it changes.
    pub(crate) fn held(&self) -> watch::Receiver<bool> {
        self.0.held.subscribe()
    }

    /// The stream as an SSE response body, until `closed` turns `true`. With `resume_after` (a
    /// `Last-Event-ID`), the retained messages after that cursor come first; `preface` (whole
    /// SSE events) before them.
    pub(crate) fn open(
        &self,
        closed: watch::Receiver<bool>,
        resume_after: Option<&str>,
        preface: Option<String>,
    ) -> Result<Body, Refusal> {
        let frames = self.frames(closed, resume_after, sse_event)?;
        let preface = futures_util::stream::iter(preface.map(Frame::Message));
        Ok(Body::from_stream(preface.chain(frames).map(|frame| {
            let text = match frame {
                Frame::Message(event) => event,
                Frame::Keepalive => ": keepalive\n\n".to_owned(),
            };
            Ok::<_, std::convert::Infallible>(Bytes::from(text))
        })))
    }

    /// The stream's messages for one reader, each written by `format` (with its cursor), and
    /// a [`Frame::Keepalive`] after [`KEEPALIVE`] without one, until `closed` turns `true`
    /// (after what was queued before). With `resume_after`, the retained messages after that
    /// cursor come first. The stream is held until what this returns is dropped.
    pub(crate) fn frames(
        &self,
        closed: watch::Receiver<bool>,
        resume_after: Option<&str>,
        format: Format,
    ) -> Result<impl futures_util::Stream<Item = Frame> + Send + 'static, Refusal> {
        let mut rx = lock(&self.0.rx);
        if rx.is_none() {
            return Err(Refusal::Busy);
        }
        let replay = match resume_after {
            Some(cursor) => self.replay_after(cursor, format)?,
            None => VecDeque::new(),
        };
        let held = Held { rx: rx.take(), stream: self.clone() };
        drop(rx);
        self.0.held.send_replace(true);
        let state = (held, closed, replay);
        Ok(futures_util::stream::unfold(state, move |(mut held, mut closed, mut replay)| async move {
            if let Some(event) = replay.pop_front() {
                return Some((Frame::Message(event), (held, closed, replay)));
            }
            let rx = held.rx.as_mut()?;
            // Biased: what was queued before the connection closed is still written (the last
            // messages of a drained turn: its idle, its answer).
            let frame = tokio::select! {
                biased;
                queued = rx.recv() => Frame::Message(held.stream.taken(queued?, format)),
                _ = closed.wait_for(|c| *c) => return None,
                () = tokio::time::sleep(KEEPALIVE) => Frame::Keepalive,
            };
            Some((frame, (held, closed, replay)))
        }))
    }

    /// A message a reader took, written by `format`; retained, when the stream is resumable.
    fn taken(&self, queued: Queued, format: Format) -> String {
        let event = format(queued.seq, &queued.text);
        let Some(retention) = self.0.retention else { return event };
        let now = Instant::now();
        let retained = queued.retained.clone();
        let mut ring = lock(&self.0.ring);
        ring.taken = queued.seq;
        ring.kept.push_back((now, queued));
        ring.trim(retention, now);
        drop(ring);
        for budget in retained {
            budget.notify_waiters();
        }
        event
    }

    /// The messages after `cursor`, written by `format`, if the ring still holds every one of
    /// them.
    fn replay_after(&self, cursor: &str, format: Format) -> Result<VecDeque<String>, Refusal> {
        let retention = self.0.retention.ok_or(Refusal::Gone)?;
        let cursor: u64 = cursor.trim().parse().map_err(|_| Refusal::Gone)?;
        let mut ring = lock(&self.0.ring);
        ring.trim(retention, Instant::now());
        let first_kept = ring.taken + 1 - ring.kept.len() as u64;
        if cursor > ring.taken || cursor + 1 < first_kept {
            return Err(Refusal::Gone);
        }
        Ok(ring.kept.iter().filter(|(_, q)| q.seq > cursor).map(|(_, q)| format(q.seq, &q.text)).collect())
    }
}

/// How a reader's transport writes one message with its cursor (0: the stream keeps none).
pub(crate) type Format = fn(u64, &str) -> String;

/// What a reader of a stream gets.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A message, written for the reader's transport.
    Message(String),
    /// Nothing came for a while: the transport's keepalive is due.
    Keepalive,
}

/// One SSE event, with its cursor as the event id when the stream keeps cursors.
fn sse_event(seq: u64, text: &str) -> String {
    match seq {
        0 => format!("data: {text}\n\n"),
        seq => format!("id: {seq}\ndata: {text}\n\n"),
    }
}

/// A stream's receiver while a response holds it; given back when that response ends (the
/// client may open the stream again after a dropped connection).
struct Held {
    rx: Option<mpsc::UnboundedReceiver<Queued>>,
    stream: Stream,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(rx) = self.rx.take() {
            *lock(&self.stream.0.rx) = Some(rx);
        }
        self.stream.0.held.send_replace(false);
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    fn never_closed() -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        std::mem::forget(tx);
        rx
    }

    /// Whether `send` completes within a generous bound (it waits on a full budget forever).
    async fn sent(stream: &Stream, text: &str, connection: &Budget) -> bool {
        tokio::time::timeout(Duration::from_secs(1), stream.send(text.to_owned(), connection, || false)).await.is_ok()
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_nobody_opens_holds_its_budget_and_no_more() {
        let connection = Budget::new(1 << 20);
        let stream = Stream::new(1000, None);
        let mut sends = 0;
        while sent(&stream, &"x".repeat(100), &connection).await {
            sends += 1;
        }
        assert_eq!(sends, 1000 / (100 + OVERHEAD), "only what fits was queued");
        assert!(stream.0.budget.used() <= 1000 && connection.used() == stream.0.budget.used());
    }

    #[tokio::test(start_paused = true)]
    async fn the_streams_of_a_connection_share_its_budget_and_a_large_message_passes_alone() {
        let connection = Budget::new(1000);
        let (a, b) = (Stream::new(1 << 20, None), Stream::new(1 << 20, None));
        assert!(sent(&a, &"x".repeat(600), &connection).await);
        assert!(!sent(&b, &"y".repeat(600), &connection).await, "the connection's budget is spent");
        let big = Stream::new(100, None);
        let connection = Budget::new(1 << 20);
        assert!(sent(&big, &"z".repeat(5000), &connection).await, "larger than the stream's budget: alone");
        assert!(!sent(&big, "small", &connection).await, "behind it, nothing more");
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_connections_stream_ends_after_what_was_queued() {
        let connection = Budget::new(1 << 20);
        let stream = Stream::new(1 << 20, None);
        for text in ["one", "two", "three"] {
            assert!(sent(&stream, text, &connection).await);
        }
        let (closed, watch) = watch::channel(true);
        let body: Vec<_> = stream.open(watch, None, None).expect("open").into_data_stream().collect().await;
        let events: Vec<_> = body.into_iter().map(|e| e.expect("data")).collect();
        assert_eq!(events, [&b"data: one\n\n"[..], b"data: two\n\n", b"data: three\n\n"]);
        drop(closed);
    }

    #[tokio::test(start_paused = true)]
    async fn reading_gives_the_budget_back_and_a_reopened_stream_goes_on_where_it_was() {
        let connection = Budget::new(1 << 20);
        let stream = Stream::new(300, None);
        assert!(sent(&stream, "first", &connection).await);
        assert!(sent(&stream, "second", &connection).await);
        let mut body = stream.open(never_closed(), None, None).expect("open").into_data_stream();
        assert!(stream.open(never_closed(), None, None).is_err(), "one reader at a time");
        let first = body.next().await.expect("an event").expect("data");
        assert_eq!(&first[..], b"data: first\n\n");
        assert!(sent(&stream, &"x".repeat(300 - 2 * OVERHEAD - 6), &connection).await, "first's bytes are back");
        drop(body);
        let mut body = stream.open(never_closed(), None, None).expect("open again").into_data_stream();
        let second = body.next().await.expect("an event").expect("data");
        assert_eq!(&second[..], b"data: second\n\n");
        assert_eq!(connection.used(), stream.0.budget.used());
    }
}
