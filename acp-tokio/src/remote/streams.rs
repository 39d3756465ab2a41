//! The SSE streams of a Streamable HTTP connection on the server, bounded in bytes as the
//! core's `outbound_budget` bounds its output.
//!
//! Rules, each with a test (here, and `tests/remote_http_bounds.rs`):
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

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};

/// Bytes charged to each message besides its text (its queue entry and allocation).
pub(crate) const OVERHEAD: usize = 64;
/// A comment on an idle stream this often keeps intermediaries from closing it.
const KEEPALIVE: Duration = Duration::from_secs(15);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Bytes that may be buffered: a stream's own, or its connection's.
#[derive(Clone)]
pub(crate) struct Budget {
    bytes: Arc<Semaphore>,
    max: u32,
}

impl Budget {
    /// A budget of `max` bytes (at least 1, at most `u32::MAX`).
    pub(crate) fn new(max: usize) -> Budget {
        let max = u32::try_from(max).unwrap_or(u32::MAX).max(1);
        Budget { bytes: Arc::new(Semaphore::new(max as usize)), max }
    }

    /// Waits until `len` bytes of text fit; they are given back when the permit is dropped.
    async fn charge(&self, len: usize) -> Option<OwnedSemaphorePermit> {
        let cost = u32::try_from(len.saturating_add(OVERHEAD)).unwrap_or(u32::MAX).min(self.max);
        self.bytes.clone().acquire_many_owned(cost).await.ok()
    }

    /// Bytes buffered against this budget now.
    #[cfg(test)]
    fn used(&self) -> usize {
        self.max as usize - self.bytes.available_permits()
    }
}

/// A message waiting for its reader, with what it is charged.
struct Queued {
    text: String,
    _charged: [OwnedSemaphorePermit; 2],
}

/// One SSE stream (cheap to clone: a handle).
#[derive(Clone)]
pub(crate) struct Stream(Arc<Inner>);

struct Inner {
    tx: mpsc::UnboundedSender<Queued>,
    /// The receiver while no `GET` holds it.
    rx: Mutex<Option<mpsc::UnboundedReceiver<Queued>>>,
    budget: Budget,
}

impl Stream {
    /// A stream buffering at most `max` bytes.
    pub(crate) fn new(max: usize) -> Stream {
        let (tx, rx) = mpsc::unbounded_channel();
        Stream(Arc::new(Inner { tx, rx: Mutex::new(Some(rx)), budget: Budget::new(max) }))
    }

    /// Queues `text` for the reader once it fits this stream's budget and `connection`'s
    /// (waiting meanwhile); `false` if the stream is gone.
    pub(crate) async fn send(&self, text: String, connection: &Budget) -> bool {
        let Some(own) = self.0.budget.charge(text.len()).await else { return false };
        let Some(shared) = connection.charge(text.len()).await else { return false };
        self.0.tx.send(Queued { text, _charged: [own, shared] }).is_ok()
    }

    /// The stream as an SSE response body, until `closed` turns `true`; `None` while another
    /// response holds it.
    pub(crate) fn open(&self, closed: watch::Receiver<bool>) -> Option<Body> {
        let rx = lock(&self.0.rx).take()?;
        let held = Held { rx: Some(rx), stream: self.clone() };
        Some(Body::from_stream(futures_util::stream::unfold((held, closed), |(mut held, mut closed)| async move {
            let rx = held.rx.as_mut()?;
            // Biased: what was queued before the connection closed is still written (the last
            // messages of a drained turn: its idle, its answer).
            let event = tokio::select! {
                biased;
                queued = rx.recv() => format!("data: {}\n\n", queued?.text),
                _ = closed.wait_for(|c| *c) => return None,
                () = tokio::time::sleep(KEEPALIVE) => ": keepalive\n\n".to_owned(),
            };
            Some((Ok::<_, std::convert::Infallible>(Bytes::from(event)), (held, closed)))
        })))
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
        tokio::time::timeout(Duration::from_secs(1), stream.send(text.to_owned(), connection)).await.is_ok()
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_nobody_opens_holds_its_budget_and_no_more() {
        let connection = Budget::new(1 << 20);
        let stream = Stream::new(1000);
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
        let (a, b) = (Stream::new(1 << 20), Stream::new(1 << 20));
        assert!(sent(&a, &"x".repeat(600), &connection).await);
        assert!(!sent(&b, &"y".repeat(600), &connection).await, "the connection's budget is spent");
        let big = Stream::new(100);
        let connection = Budget::new(1 << 20);
        assert!(sent(&big, &"z".repeat(5000), &connection).await, "larger than the stream's budget: alone");
        assert!(!sent(&big, "small", &connection).await, "behind it, nothing more");
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_connections_stream_ends_after_what_was_queued() {
        let connection = Budget::new(1 << 20);
        let stream = Stream::new(1 << 20);
        for text in ["one", "two", "three"] {
            assert!(sent(&stream, text, &connection).await);
        }
        let (closed, watch) = watch::channel(true);
        let body: Vec<_> = stream.open(watch).expect("open").into_data_stream().collect().await;
        let events: Vec<_> = body.into_iter().map(|e| e.expect("data")).collect();
        assert_eq!(events, [&b"data: one\n\n"[..], b"data: two\n\n", b"data: three\n\n"]);
        drop(closed);
    }

    #[tokio::test(start_paused = true)]
    async fn reading_gives_the_budget_back_and_a_reopened_stream_goes_on_where_it_was() {
        let connection = Budget::new(1 << 20);
        let stream = Stream::new(300);
        assert!(sent(&stream, "first", &connection).await);
        assert!(sent(&stream, "second", &connection).await);
        let mut body = stream.open(never_closed()).expect("open").into_data_stream();
        assert!(stream.open(never_closed()).is_none(), "one reader at a time");
        let first = body.next().await.expect("an event").expect("data");
        assert_eq!(&first[..], b"data: first\n\n");
        assert!(sent(&stream, &"x".repeat(300 - 2 * OVERHEAD - 6), &connection).await, "first's bytes are back");
        drop(body);
        let mut body = stream.open(never_closed()).expect("open again").into_data_stream();
        let second = body.next().await.expect("an event").expect("data");
        assert_eq!(&second[..], b"data: second\n\n");
        assert_eq!(connection.used(), stream.0.budget.used());
    }
}
