//! Small synchronization pieces shared by the driver and the application threads: the
//! cancellation signal handed to handlers, and the bounded-by-backpressure queues through which
//! the driver hands items to application threads without ever blocking.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use acp_proto::CancelReason;

use crate::driver::Input;
use crate::wake::Mailbox;

/// Locks a mutex, ignoring poisoning: every critical section in this crate leaves the data
/// consistent, and handler panics are caught before they could poison anything shared.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The calls every handler context has (the agent's of both versions, the client's), over its
/// fields `id: InboundId` and `cancel: CancelToken`; `$cancelled_by` says what cancels the
/// context's request, in `is_cancelled`'s docs.
macro_rules! request_context_methods {
    ($cancelled_by:literal) => {
        /// The core's handle of the request being handled.
        pub fn id(&self) -> acp_proto::InboundId {
            self.id
        }

        #[doc = concat!("Whether the request was cancelled (", $cancelled_by, ").")]
        pub fn is_cancelled(&self) -> bool {
            self.cancel.is_cancelled()
        }

        /// The request's cancellation signal, to wait on.
        pub fn cancellation(&self) -> &crate::CancelToken {
            &self.cancel
        }
    };
}
pub(crate) use request_context_methods;

/// The cancellation signal of one inbound request, set when the core reports it cancelled
/// (`$/cancel_request` from the peer, `session/cancel` of its prompt turn, a turn cancelled
/// locally, or the connection closing). Cheap to clone; every clone sees the same signal.
///
/// ```
/// # use acp_blocking::CancelToken;
/// # fn handler(cancel: &CancelToken) {
/// // Work in slices, stopping early once the request is cancelled.
/// for _step in 0..100 {
///     if cancel.wait_timeout(std::time::Duration::from_millis(10)) {
///         break;
///     }
/// }
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<CancelInner>,
}

#[derive(Debug, Default)]
struct CancelInner {
    set: AtomicBool,
    reason: Mutex<Option<CancelReason>>,
    changed: Condvar,
}

impl CancelToken {
    /// A signal that is not set.
    pub(crate) fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Sets the signal; the first reason is kept.
    pub(crate) fn cancel(&self, reason: CancelReason) {
        let mut slot = lock(&self.inner.reason);
        if slot.is_none() {
            *slot = Some(reason);
            self.inner.set.store(true, Ordering::Release);
            self.inner.changed.notify_all();
        }
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.set.load(Ordering::Acquire)
    }

    /// Why the request was cancelled, once it was.
    pub fn reason(&self) -> Option<CancelReason> {
        *lock(&self.inner.reason)
    }

    /// Blocks until the request is cancelled.
    pub fn wait(&self) {
        let mut slot = lock(&self.inner.reason);
        while slot.is_none() {
            slot = self.inner.changed.wait(slot).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Blocks until the request is cancelled or `timeout` passes; returns whether it was
    /// cancelled. A handler that sleeps should sleep this way.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut slot = lock(&self.inner.reason);
        while slot.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            slot = self.inner.changed.wait_timeout(slot, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        true
    }
}

/// Counts the items the driver handed to application threads that they have not taken yet
/// (prompt-turn updates, notifications for the ordered notification thread). While the count
/// is at `max` the driver stops feeding input to the core, so a slow consumer slows the peer
/// down instead of growing memory. A consumer that takes the count below `max` wakes the driver.
#[derive(Debug)]
pub(crate) struct Backlog {
    count: AtomicUsize,
    max: usize,
    wake: Mailbox,
}

impl Backlog {
    pub(crate) fn new(max: usize, wake: impl Into<Mailbox>) -> Backlog {
        Backlog { count: AtomicUsize::new(0), max: max.max(1), wake: wake.into() }
    }

    /// Whether the driver may feed more input.
    pub(crate) fn has_room(&self) -> bool {
        self.count.load(Ordering::Acquire) < self.max
    }

    fn add(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    fn take(&self, n: usize) {
        if n == 0 {
            return;
        }
        let before = self.count.fetch_sub(n, Ordering::AcqRel);
        // Wake the driver exactly when this call crossed the threshold downwards.
        if before >= self.max && before - n < self.max {
            let _ = self.wake.send(Input::Wake);
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }
}

#[derive(Debug)]
struct InboxState<T> {
    items: VecDeque<T>,
    sender_gone: bool,
    receiver_gone: bool,
    /// The receiver sleeps on the condvar (a notify is a syscall: skipped when nobody waits).
    waiting: bool,
    /// The receiver said it is still handling the item it took ([`InboxReceiver::set_busy`]).
    busy: bool,
}

/// A queue from the driver to one application thread. Pushing never blocks; every queued item
/// counts in the connection's [`Backlog`].
#[derive(Debug)]
struct Inbox<T> {
    state: Mutex<InboxState<T>>,
    ready: Condvar,
    backlog: Arc<Backlog>,
}

/// The driver's end of an inbox. Dropping it ends the stream: the receiver sees `None` once
/// the queued items are taken.
#[derive(Debug)]
pub(crate) struct InboxSender<T> {
    inbox: Arc<Inbox<T>>,
    /// [`push_last`](Self::push_last) ended the stream already: dropping does nothing more.
    ended: bool,
}

/// The application's end of an inbox. Dropping it discards what is queued and what comes later.
#[derive(Debug)]
pub(crate) struct InboxReceiver<T>(Arc<Inbox<T>>);

/// A new inbox whose items count in `backlog`.
pub(crate) fn inbox<T>(backlog: Arc<Backlog>) -> (InboxSender<T>, InboxReceiver<T>) {
    let inbox = Arc::new(Inbox {
        state: Mutex::new(InboxState {
            items: VecDeque::new(),
            sender_gone: false,
            receiver_gone: false,
            waiting: false,
            busy: false,
        }),
        ready: Condvar::new(),
        backlog,
    });
    (InboxSender { inbox: inbox.clone(), ended: false }, InboxReceiver(inbox))
}

impl<T> InboxSender<T> {
    /// Whether the receiver is done with everything pushed so far: it took every item and is
    /// not busy with the last one (or is gone).
    pub(crate) fn settled(&self) -> bool {
        let state = lock(&self.inbox.state);
        state.receiver_gone || (state.items.is_empty() && !state.busy)
    }

    /// Whether the receiver was dropped.
    pub(crate) fn receiver_gone(&self) -> bool {
        lock(&self.inbox.state).receiver_gone
    }

    /// Queues an item; returns false (and drops it) when the receiver is gone.
    pub(crate) fn push(&self, item: T) -> bool {
        self.push_ending(item, false)
    }

    /// Queues the stream's last item and ends the stream, in one lock hold: the receiver,
    /// woken by the item, never waits for the sender's drop to mark the end.
    pub(crate) fn push_last(mut self, item: T) -> bool {
        self.ended = true;
        self.push_ending(item, true)
    }

    fn push_ending(&self, item: T, last: bool) -> bool {
        let mut state = lock(&self.inbox.state);
        state.sender_gone |= last;
        if state.receiver_gone {
            return false;
        }
        state.items.push_back(item);
        self.inbox.backlog.add();
        // One notify per sleep: the receiver takes everything queued once it runs.
        let wake = std::mem::take(&mut state.waiting);
        drop(state);
        if wake {
            self.inbox.ready.notify_one();
        }
        true
    }
}

impl<T> Drop for InboxSender<T> {
    /// Ends the stream; the receiver is woken only when it sleeps (a notify is a syscall).
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let mut state = lock(&self.inbox.state);
        state.sender_gone = true;
        let wake = std::mem::take(&mut state.waiting);
        drop(state);
        if wake {
            self.inbox.ready.notify_all();
        }
    }
}

impl<T> InboxReceiver<T> {
    /// The next item, blocking until one is queued; `None` once the sender is gone and the
    /// queue is empty.
    pub(crate) fn recv(&self) -> Option<T> {
        self.recv_holding(|_| false)
    }

    /// [`recv`](Self::recv), and when `hold` accepts the item, the receiver counts as busy with
    /// it ([`set_busy`](Self::set_busy)) from the same lock hold that took it: the sender never
    /// sees the queue settled between the take and the handling.
    pub(crate) fn recv_holding(&self, hold: impl Fn(&T) -> bool) -> Option<T> {
        let mut state = lock(&self.0.state);
        loop {
            if let Some(item) = state.items.pop_front() {
                state.busy |= hold(&item);
                drop(state);
                self.0.backlog.take(1);
                return Some(item);
            }
            if state.sender_gone {
                return None;
            }
            state.waiting = true;
            state = self.0.ready.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl<T> InboxReceiver<T> {
    /// Whether [`recv`](Self::recv) returns without blocking.
    pub(crate) fn ready(&self) -> bool {
        let state = lock(&self.0.state);
        !state.items.is_empty() || state.sender_gone
    }

    /// Takes the next item without waiting, if `take` accepts it.
    pub(crate) fn take_if(&self, take: impl FnOnce(&T) -> bool) -> Option<T> {
        let mut state = lock(&self.0.state);
        if !state.items.front().is_some_and(take) {
            return None;
        }
        let item = state.items.pop_front();
        drop(state);
        self.0.backlog.take(1);
        item
    }

    /// Says whether the receiver is still handling the item it took last (see
    /// [`InboxSender::settled`]).
    pub(crate) fn set_busy(&self, busy: bool) {
        lock(&self.0.state).busy = busy;
    }

    /// Discards what is queued and what comes later, as dropping the receiver does.
    pub(crate) fn close(&self) {
        let mut state = lock(&self.0.state);
        state.receiver_gone = true;
        let dropped = std::mem::take(&mut state.items);
        drop(state);
        self.0.backlog.take(dropped.len());
    }
}

impl<T> Drop for InboxReceiver<T> {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::thread;

    use super::*;

    /// The ordering gate's race (seen once in CI): a reader that took an update and only then
    /// said it was busy left a moment in which the driver saw the inbox settled and let an
    /// agent request of the turn start before the update was handled. A holding take is busy
    /// from the take on.
    #[test]
    fn a_holding_take_leaves_the_inbox_unsettled_until_the_reader_is_done() {
        let (wake, _woken) = mpsc::channel();
        let (tx, rx) = inbox::<u32>(Arc::new(Backlog::new(8, wake)));
        tx.push(1);
        tx.push(2);
        assert_eq!(rx.recv_holding(|n| *n == 1), Some(1));
        assert!(!tx.settled(), "taken but not handled: not settled");
        rx.set_busy(false);
        assert_eq!(rx.recv_holding(|n| *n == 1), Some(2));
        assert!(tx.settled(), "a take that does not hold leaves nothing behind");
    }

    #[test]
    fn cancel_token_keeps_the_first_reason_and_wakes_waiters() {
        let token = CancelToken::new();
        assert!(!token.is_cancelled());
        assert!(!token.wait_timeout(Duration::from_millis(5)));
        let waiter = {
            let token = token.clone();
            thread::spawn(move || {
                token.wait();
                token.reason()
            })
        };
        token.cancel(CancelReason::CancelRequest);
        token.cancel(CancelReason::ConnectionClosed);
        assert_eq!(waiter.join().unwrap(), Some(CancelReason::CancelRequest));
        assert!(token.is_cancelled());
        assert!(token.wait_timeout(Duration::ZERO));
    }

    #[test]
    fn backlog_counts_queued_items_and_wakes_once_on_the_way_down() {
        let (tx, rx) = mpsc::channel();
        let backlog = Arc::new(Backlog::new(2, tx));
        let (sender, receiver) = inbox::<u32>(backlog.clone());
        for i in 0..4 {
            assert!(sender.push(i));
        }
        assert_eq!(backlog.len(), 4);
        assert!(!backlog.has_room());
        assert_eq!(receiver.recv(), Some(0));
        assert_eq!(receiver.recv(), Some(1));
        assert!(rx.try_recv().is_err(), "still at the limit: no wake yet");
        assert_eq!(receiver.recv(), Some(2));
        assert!(matches!(rx.try_recv(), Ok(Input::Wake)), "crossed below the limit");
        assert!(backlog.has_room());
        drop(sender);
        assert_eq!(receiver.recv(), Some(3));
        assert_eq!(receiver.recv(), None);
        assert_eq!(backlog.len(), 0);
    }

    /// The end of a turn: the last item and the end of the stream arrive together, to a
    /// receiver already asleep or not yet waiting; a sender dropped while nobody waits still
    /// ends the stream.
    #[test]
    fn push_last_delivers_the_item_then_ends_the_stream() {
        let (tx, _rx) = mpsc::channel();
        let backlog = Arc::new(Backlog::new(8, tx));
        let (sender, receiver) = inbox::<u32>(backlog.clone());
        let waiter = thread::spawn(move || (receiver.recv(), receiver.recv()));
        while !lock(&sender.inbox.state).waiting {
            thread::yield_now();
        }
        assert!(sender.push_last(7));
        assert_eq!(waiter.join().expect("receiver"), (Some(7), None));
        assert_eq!(backlog.len(), 0);

        let (sender, receiver) = inbox::<u32>(backlog.clone());
        assert!(sender.push(1));
        assert!(sender.push_last(2));
        assert_eq!((receiver.recv(), receiver.recv(), receiver.recv()), (Some(1), Some(2), None));

        let (sender, receiver) = inbox::<u32>(backlog);
        drop(sender);
        assert_eq!(receiver.recv(), None);
    }

    #[test]
    fn a_dropped_receiver_releases_its_items_and_refuses_more() {
        let (tx, rx) = mpsc::channel();
        let backlog = Arc::new(Backlog::new(2, tx));
        let (sender, receiver) = inbox::<u32>(backlog.clone());
        sender.push(1);
        sender.push(2);
        drop(receiver);
        assert_eq!(backlog.len(), 0);
        assert!(matches!(rx.try_recv(), Ok(Input::Wake)));
        assert!(!sender.push(3));
        assert_eq!(backlog.len(), 0);
    }
}
