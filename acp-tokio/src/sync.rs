//! Runtime-agnostic synchronisation: the per-request cancellation signal, and the bounded
//! queues that carry inbound updates and notifications from the driver to their consumers.
//!
//! Built on `std` locks, wakers and `tokio::sync::Notify`, none of which needs the tokio
//! runtime, so the same code serves async-std.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};

use acp_proto::CancelReason;
use tokio::sync::Notify;

/// Locks a mutex, ignoring poisoning (every critical section here leaves the state consistent).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A one-way flag that tasks can wait on.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    notify: Notify,
    set: std::sync::atomic::AtomicBool,
}

impl Signal {
    pub(crate) fn set(&self) {
        self.set.store(true, std::sync::atomic::Ordering::Release);
        self.notify.notify_waiters();
    }

    pub(crate) fn is_set(&self) -> bool {
        self.set.load(std::sync::atomic::Ordering::Acquire)
    }

    pub(crate) async fn wait(&self) {
        loop {
            // A `Notified` sees every `notify_waiters` made after its creation, so checking the
            // flag after creating it cannot miss the wake-up.
            let notified = self.notify.notified();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}

/// Tells a handler that its request was cancelled: by the peer's `$/cancel_request`, by the
/// client's `session/cancel` (agent side, prompt turns and the requests the turn made), by the
/// client cancelling the turn (client side, permission requests), or because the connection
/// closed. The request still gets exactly one answer; the core chooses it (see
/// [`CancelReason`]).
#[derive(Clone, Default)]
pub struct CancellationToken(Arc<TokenInner>);

#[derive(Default)]
struct TokenInner {
    reason: OnceLock<CancelReason>,
    signal: Signal,
}

impl CancellationToken {
    pub(crate) fn new() -> CancellationToken {
        CancellationToken::default()
    }

    pub(crate) fn cancel(&self, reason: CancelReason) {
        if self.0.reason.set(reason).is_ok() {
            self.0.signal.set();
        }
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.reason.get().is_some()
    }

    /// Why the request was cancelled, once it was.
    pub fn reason(&self) -> Option<CancelReason> {
        self.0.reason.get().copied()
    }

    /// Completes once the request is cancelled (at once if it already was).
    pub async fn cancelled(&self) {
        self.0.signal.wait().await;
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancellationToken").field("reason", &self.reason()).finish()
    }
}

/// A bounded single-consumer queue whose producer (the driver) is told, through its waker,
/// when room frees up, instead of waiting.
pub(crate) fn queue<T>(capacity: usize) -> (QueueSender<T>, QueueReceiver<T>) {
    let inner = Arc::new(Mutex::new(QueueInner {
        items: VecDeque::new(),
        capacity: capacity.max(1),
        closed: false,
        receiver_gone: false,
        busy: false,
        rx_waker: None,
        tx_waker: None,
    }));
    (QueueSender(inner.clone()), QueueReceiver(inner))
}

struct QueueInner<T> {
    items: VecDeque<T>,
    capacity: usize,
    closed: bool,
    receiver_gone: bool,
    /// The consumer said it is still handling the item it took ([`QueueReceiver::set_busy`]).
    busy: bool,
    rx_waker: Option<Waker>,
    tx_waker: Option<Waker>,
}

/// The driver's end of a [`queue`].
pub(crate) struct QueueSender<T>(Arc<Mutex<QueueInner<T>>>);

/// The consumer's end of a [`queue`].
pub(crate) struct QueueReceiver<T>(Arc<Mutex<QueueInner<T>>>);

impl<T> QueueSender<T> {
    /// Queues `item`; when the queue is full it is handed back and `cx`'s waker is woken once
    /// room frees up. `force` ignores the capacity (used once the connection is closed, when
    /// the core's own bounds already cap what is left). An item for a consumer that is gone is
    /// dropped.
    pub(crate) fn push(&self, item: T, cx: &Context<'_>, force: bool) -> Result<(), T> {
        self.push_as(item, |item| item, cx, force)
    }

    /// [`push`](Self::push) of `value` made an item by `wrap` only once there is room: a full
    /// queue hands `value` back as it came, in its own type.
    pub(crate) fn push_as<U>(
        &self,
        value: U,
        wrap: impl FnOnce(U) -> T,
        cx: &Context<'_>,
        force: bool,
    ) -> Result<(), U> {
        let mut q = lock(&self.0);
        if q.receiver_gone {
            return Ok(());
        }
        if q.items.len() >= q.capacity && !force {
            q.tx_waker = Some(cx.waker().clone());
            return Err(value);
        }
        q.items.push_back(wrap(value));
        if let Some(w) = q.rx_waker.take() {
            w.wake();
        }
        Ok(())
    }

    /// Whether the consumer is done with everything pushed so far: it took every item and is
    /// not busy with the last one (or is gone).
    pub(crate) fn settled(&self) -> bool {
        let q = lock(&self.0);
        q.receiver_gone || (q.items.is_empty() && !q.busy)
    }

    /// Ends the queue: the consumer gets what is queued, then `None`.
    pub(crate) fn close(&self) {
        let mut q = lock(&self.0);
        q.closed = true;
        if let Some(w) = q.rx_waker.take() {
            w.wake();
        }
    }
}

impl<T> Drop for QueueSender<T> {
    fn drop(&mut self) {
        self.close();
    }
}

impl<T> QueueReceiver<T> {
    /// The next item, or `None` once the queue is closed and empty.
    pub(crate) fn poll_pop(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.poll_pop_holding(cx, |_| false)
    }

    /// [`poll_pop`](Self::poll_pop), and when `hold` accepts the item, the consumer counts as
    /// busy with it ([`set_busy`](Self::set_busy)) from the same lock hold that took it: the
    /// producer never sees the queue settled between the take and the handling.
    pub(crate) fn poll_pop_holding(&mut self, cx: &mut Context<'_>, hold: impl FnOnce(&T) -> bool) -> Poll<Option<T>> {
        let mut q = lock(&self.0);
        if let Some(item) = q.items.pop_front() {
            q.busy |= hold(&item);
            // A producer waits only on a full queue; waking it once half is free (not on every
            // pop) lets it push a batch per wake-up instead of one item per round trip.
            if q.items.len() <= q.capacity / 2
                && let Some(w) = q.tx_waker.take()
            {
                w.wake();
            }
            return Poll::Ready(Some(item));
        }
        if q.closed {
            return Poll::Ready(None);
        }
        q.rx_waker = Some(cx.waker().clone());
        Poll::Pending
    }

    /// The next item, or `None` once the queue is closed and empty.
    pub(crate) async fn pop(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_pop(cx)).await
    }

    /// Takes the next item without waiting, if `take` accepts it.
    pub(crate) fn pop_if(&mut self, take: impl FnOnce(&T) -> bool) -> Option<T> {
        let mut q = lock(&self.0);
        if !q.items.front().is_some_and(take) {
            return None;
        }
        q.items.pop_front()
    }

    /// Says whether the consumer is still handling the item it took last (see
    /// [`QueueSender::settled`]).
    pub(crate) fn set_busy(&self, busy: bool) {
        lock(&self.0).busy = busy;
    }

    /// Items waiting.
    pub(crate) fn len(&self) -> usize {
        lock(&self.0).items.len()
    }
}

impl<T> Drop for QueueReceiver<T> {
    fn drop(&mut self) {
        let mut q = lock(&self.0);
        q.receiver_gone = true;
        q.items.clear();
        if let Some(w) = q.tx_waker.take() {
            w.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::task::{Context, Poll, Waker};

    use super::queue;

    /// The ordering gate's race (seen once in CI): a turn's reader that took an update and only
    /// then said it was busy left a moment in which the driver saw the queue settled and let an
    /// agent request of the turn start before the update was handled. A holding take is busy
    /// from the take on.
    #[test]
    fn a_holding_take_leaves_the_queue_unsettled_until_the_consumer_is_done() {
        let (tx, mut rx) = queue::<u32>(4);
        let mut cx = Context::from_waker(Waker::noop());
        tx.push(1, &cx, false).unwrap();
        tx.push(2, &cx, false).unwrap();
        assert_eq!(rx.poll_pop_holding(&mut cx, |n| *n == 1), Poll::Ready(Some(1)));
        assert!(!tx.settled(), "taken but not handled: not settled");
        rx.set_busy(false);
        assert_eq!(rx.poll_pop_holding(&mut cx, |n| *n == 1), Poll::Ready(Some(2)));
        assert!(tx.settled(), "a take that does not hold leaves nothing behind");
    }
}
