//! What the driver shares with the application threads: the connection behind its mutex, the
//! outbound requests awaiting their outcomes, and [`Link`], the handle through which threads
//! send requests, notifications, answers and commands.
//!
//! A thread queues its request, notification or handler answer into the core itself, under
//! the connection's mutex, and gets the core's verdict on the spot. Over the poll transport a
//! request or an answer is also written by its own thread when the output is idle (see
//! [`output`](crate::output)); otherwise the driver writes the frames. The driver routes the
//! outcomes. It is woken when the frame starts a new batch (or a request or an answer ends a
//! linger), or when a write-through left it something to do; otherwise a write or a wake-up is
//! already on its way.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant as StdInstant};

use std::panic::{AssertUnwindSafe, catch_unwind};

use acp_proto::role::{self, Role};
use acp_proto::types::{SessionId, SessionNotification};
use acp_proto::{
    Answer, ClientRequest, CloseReason, Connection, InboundId, Instant, Negotiated, OutboundId, Outcome, Refused,
    SendError, TypedRequest, V1,
};
use serde_json::Value;

use acp_runtime::trace::Tracer;

use crate::driver::{Following, Input, Lead, Version};
use crate::error::Error;
#[cfg(unix)]
use crate::output::Output;
use crate::output::{Before, Through};
use crate::sync::{Backlog, CancelToken, InboxReceiver, InboxSender, inbox, lock};
use crate::wake::Mailbox;

/// What application threads and handlers ask of the driver (on its command channel, each
/// announced by an [`Input::Command`] in its mailbox).
pub(crate) enum Command<P: Version, R: Role> {
    /// Send a request; the reply says how it ended. Used while earlier requests or commands
    /// are on their way through the driver (see [`Core::detour`]), so that they keep their
    /// order.
    Request { request: R::Request<P>, deadline: Option<StdInstant>, reply: Reply<P> },
    /// Client side (`client` proves it): cancel the session's running prompt turn.
    CancelTurn { session: SessionId, reply: SyncSender<Result<(), Error>>, client: R::ClientOnly },
    /// Client side: a `PromptTurn` was dropped before its end; cancel every turn in flight
    /// whose reader is gone.
    AbandonTurns(R::ClientOnly),
    /// Close the connection.
    Close,
}

/// Where the outcome of an outbound request goes.
pub(crate) enum Reply<P: Version> {
    /// To a thread blocked on the call.
    Once(SyncSender<Result<Outcome<P>, Error>>),
    /// To a thread told first whether the core took the request (a v2 prompt, whose turn is
    /// read meanwhile), then its outcome.
    #[cfg_attr(not(feature = "unstable_protocol_v2"), allow(dead_code))]
    Acked { accepted: SyncSender<Result<(), Error>>, outcome: SyncSender<Result<Outcome<P>, Error>> },
    /// Client side, a v1 prompt of `session`: acceptance to the caller, then the turn's updates
    /// and its outcome to the turn's inbox, in order.
    Turn { session: SessionId, accepted: SyncSender<Result<(), Error>>, sink: InboxSender<TurnItem<P>> },
}

impl<P: Version> Reply<P> {
    pub(crate) fn fail(self, error: Error) {
        match self {
            Reply::Once(tx) => drop(tx.send(Err(error))),
            Reply::Turn { accepted, .. } | Reply::Acked { accepted, .. } => drop(accepted.send(Err(error))),
        }
    }

    /// The core accepted the request: what waits for its outcome.
    pub(crate) fn accepted(self) -> Pending<P> {
        match self {
            Reply::Once(tx) => Pending::Once(tx),
            Reply::Turn { session, accepted, sink } => {
                let _ = accepted.send(Ok(()));
                Pending::Turn { session, sink }
            }
            Reply::Acked { accepted, outcome } => {
                let _ = accepted.send(Ok(()));
                Pending::Once(outcome)
            }
        }
    }
}

/// An outbound request awaiting its outcome.
pub(crate) enum Pending<P: Version> {
    Once(SyncSender<Result<Outcome<P>, Error>>),
    /// Client side: a v1 prompt turn in flight (at most one per session: the core refuses a
    /// second), whose agent requests are ordered behind its updates.
    Turn {
        session: SessionId,
        sink: InboxSender<TurnItem<P>>,
    },
}

/// One item of a client's v1 prompt turn: an update, a gate, or the prompt's outcome.
pub(crate) type TurnItem<P> = crate::turn_gate::TurnItem<SessionNotification, Outcome<P>>;

/// State the driver publishes to the application threads.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) negotiated: Mutex<Option<Negotiated>>,
    pub(crate) closed: Mutex<Option<CloseReason>>,
    pub(crate) backlog: Arc<Backlog>,
}

/// The connection, shared by the driver and the threads that send.
pub(crate) struct Core<P: Version, R: Role> {
    pub(crate) conn: Mutex<Connection<R, P>>,
    /// Signalled when the driver took the queued output (room in the outbound budget again) or
    /// the connection closed.
    pub(crate) drained: Condvar,
    /// Threads waiting on `drained` (changed under `conn`): a signal with none is skipped,
    /// since a notify is a system call even when nobody waits.
    drain_waiters: AtomicUsize,
    /// Outbound requests by id. A sender inserts its own while it still holds `conn`, so the
    /// outcome (which needs the frame written first) always finds it. Lock order: `conn`,
    /// then `calls`; the driver never locks `conn` while holding `calls`.
    pub(crate) calls: Mutex<HashMap<OutboundId, Pending<P>>>,
    /// Requests and ordering commands (`AbandonTurns`, `Close`) on their way through the
    /// driver, and requests it holds back for room in the outbound budget: while there are
    /// any, a new request goes behind them through the driver instead of into the core.
    pub(crate) detour: AtomicUsize,
    /// The driver waits a little for more notifications before writing: a request queued
    /// meanwhile wakes it, to be written at once.
    pub(crate) lingering: AtomicBool,
    /// The poll transport's output, written by the driver and by sending threads (`None`
    /// with transport threads, and once the driver ended). Lock order: `conn`, then `output`.
    #[cfg(unix)]
    pub(crate) output: Mutex<Option<Output>>,
    /// The output has a batch partly out, which the driver finishes (set and cleared under
    /// `output`; read without it, so that the driver never waits for a thread's write).
    pub(crate) partial: AtomicBool,
    /// The core timer (nanoseconds since the epoch) the driver last chose to sleep to,
    /// published while it held `conn`; `u64::MAX`: none. A thread that adds an earlier one
    /// wakes it.
    pub(crate) sleeps_until: AtomicU64,
    /// The cancellation tokens of the inbound requests whose handlers run: inserted by the
    /// driver when it starts one, removed by the handler's thread when it answers.
    pub(crate) running: Mutex<HashMap<InboundId, CancelToken>>,
    /// The connection's tracing state. Locked last (nothing is locked while it is held).
    pub(crate) tracer: Mutex<Tracer>,
}

impl<P: Version, R: Role> std::fmt::Debug for Core<P, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core").field("detour", &self.detour).finish_non_exhaustive()
    }
}

impl<P: Version, R: Role> Core<P, R> {
    /// `output`: the poll transport's (Unix), `None` with transport threads.
    pub(crate) fn new(conn: Connection<R, P>, #[cfg(unix)] output: Option<Output>, tracer: Tracer) -> Core<P, R> {
        Core {
            conn: Mutex::new(conn),
            drained: Condvar::new(),
            drain_waiters: AtomicUsize::new(0),
            calls: Mutex::new(HashMap::new()),
            detour: AtomicUsize::new(0),
            lingering: AtomicBool::new(false),
            #[cfg(unix)]
            output: Mutex::new(output),
            partial: AtomicBool::new(false),
            sleeps_until: AtomicU64::new(u64::MAX),
            running: Mutex::new(HashMap::new()),
            tracer: Mutex::new(tracer),
        }
    }

    /// Waits on [`drained`](Self::drained) with the connection (`conn`, locked) let go
    /// meanwhile.
    pub(crate) fn wait_drained<'a>(&self, conn: MutexGuard<'a, Connection<R, P>>) -> MutexGuard<'a, Connection<R, P>> {
        self.drain_waiters.fetch_add(1, Ordering::SeqCst);
        let conn = self.drained.wait(conn).unwrap_or_else(PoisonError::into_inner);
        self.drain_waiters.fetch_sub(1, Ordering::SeqCst);
        conn
    }

    /// Signals [`drained`](Self::drained) when a thread waits on it. Called after a change
    /// made under `conn`: a waiter counted itself under `conn` before it let it go, so the
    /// caller, which held `conn` after it, sees the count; a thread that locks `conn` later
    /// sees the change itself.
    pub(crate) fn signal_drained(&self) {
        if self.drain_waiters.load(Ordering::SeqCst) > 0 {
            self.drained.notify_all();
        }
    }
}

/// A handle to the driver: how application threads and handlers send.
#[derive(Clone, Debug)]
pub(crate) struct Link<P: Version, R: Role> {
    pub(crate) mailbox: Mailbox,
    /// The driver's commands; each is announced in the mailbox ([`Input::Command`]).
    pub(crate) commands: Sender<Command<P, R>>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) core: Arc<Core<P, R>>,
    pub(crate) epoch: StdInstant,
    /// Who drives: a caller waiting for its reply may (see `driver::lead`).
    pub(crate) lead: Arc<Lead<P, R>>,
}

impl<P: Version, R: Role> Link<P, R> {
    fn command(&self, command: Command<P, R>) -> Result<(), Error> {
        self.commands.send(command).map_err(|_| Error::ConnectionClosed)?;
        self.mailbox.send(Input::Command).map_err(|_| Error::ConnectionClosed)
    }

    /// Sends a command that requests queued later must not overtake: they take the driver's
    /// path until it was handled (the driver counts it down).
    fn ordered_command(&self, command: Command<P, R>) -> Result<(), Error> {
        self.core.detour.fetch_add(1, Ordering::AcqRel);
        let sent = self.command(command);
        if sent.is_err() {
            self.core.detour.fetch_sub(1, Ordering::AcqRel);
        }
        sent
    }

    pub(crate) fn deadline(timeout: Option<Duration>) -> Option<StdInstant> {
        timeout.and_then(|t| StdInstant::now().checked_add(t))
    }

    /// Queues a request into the core on this thread, or through the driver while earlier
    /// requests wait there for room (or this one finds none); its outcome goes to `reply`.
    pub(crate) fn request(
        &self,
        request: R::Request<P>,
        deadline: Option<StdInstant>,
        reply: Reply<P>,
    ) -> Result<(), Error> {
        if self.core.detour.load(Ordering::Acquire) > 0 {
            return self.ordered_command(Command::Request { request, deadline, reply });
        }
        let mut conn = lock(&self.core.conn);
        let first = conn.bytes_queued() == 0;
        let before = Before::of(&conn);
        let now = Instant::from_std(self.epoch, StdInstant::now());
        match conn.send_request(now, request, deadline.map(|d| Instant::from_std(self.epoch, d))) {
            Ok(id) => {
                lock(&self.core.calls).insert(id, reply.accepted());
                let wake = match self.core.write_through(conn, before) {
                    Through::Written(wake) => wake,
                    Through::NotWritten => (first || self.core.lingering.load(Ordering::Acquire))
                        .then_some(Input::Queued { linger: false }),
                };
                if let Some(wake) = wake {
                    let _ = self.mailbox.send(wake);
                }
                Ok(())
            }
            // No room: the request waits in the driver. Closed: the driver answers it once it
            // has published why the connection closed (as before requests went direct).
            Err(Refused { error: SendError::Backpressure { .. } | SendError::Closed, message }) => {
                drop(conn);
                self.ordered_command(Command::Request { request: message, deadline, reply })
            }
            Err(refused) => {
                drop(conn);
                reply.fail(refused.error.into());
                Ok(())
            }
        }
    }

    /// Sends a request and blocks until its result.
    pub(crate) fn call(&self, request: R::Request<P>, timeout: Option<Duration>) -> Result<P::Response, Error> {
        Error::from_outcome(self.call_outcome(request, timeout)?)
    }

    /// Sends a request and blocks until its result, the peer's (a result of this side is
    /// [`Error::UnexpectedResponse`]).
    pub(crate) fn ask(
        &self,
        request: R::Request<P>,
        timeout: Option<Duration>,
    ) -> Result<<R::Peer as Role>::Response<P>, Error> {
        R::Peer::own_response::<P>(self.call(request, timeout)?).ok_or(Error::UnexpectedResponse)
    }

    /// An extension request (its name starts with `_`): blocks until its result.
    pub(crate) fn ext_method(&self, method: &str, params: Value, timeout: Option<Duration>) -> Result<Value, Error> {
        P::ext_result(self.call(R::ext_request::<P>(method, params), timeout)?).map_err(|_| Error::UnexpectedResponse)
    }

    /// An extension notification, blocking while the outbound budget is used up.
    pub(crate) fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        self.notify(R::ext_notification::<P>(method, params))
    }

    /// Sends a request and blocks until its outcome, as the core reported it.
    pub(crate) fn call_outcome(&self, request: R::Request<P>, timeout: Option<Duration>) -> Result<Outcome<P>, Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.request(request, Self::deadline(timeout), Reply::Once(tx))?;
        self.reply(&rx)
    }

    /// Blocks until a reply comes on `rx`, driving the connection meanwhile while no other
    /// thread does (`until`); a dropped reply slot is the connection's close.
    pub(crate) fn reply<T>(&self, rx: &Receiver<Result<T, Error>>) -> Result<T, Error> {
        // `Some(None)`: the reply slot was dropped (the connection closed).
        let mut got = None;
        let following = self.until(&mut || {
            if got.is_none() {
                got = match rx.try_recv() {
                    Ok(reply) => Some(Some(reply)),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => Some(None),
                };
            }
            got.is_some()
        });
        let got = got.unwrap_or_else(|| rx.recv().ok());
        drop(following);
        got.unwrap_or(Err(Error::ConnectionClosed))
    }

    /// Before this thread blocks until `ready()`: drives the connection itself while no other
    /// thread does (client side), else counts it as a follower while it blocks (see
    /// `driver::lead`).
    pub(crate) fn until<'a>(&'a self, ready: &mut dyn FnMut() -> bool) -> Option<Following<'a, P, R>> {
        self.lead.until(&self.mailbox, ready)
    }

    /// Sends a notification, blocking while the outbound budget is used up. The core takes it
    /// right here (the result is its verdict); the driver is woken only when this frame starts
    /// a new batch, since otherwise a write or a wake-up is already on its way.
    pub(crate) fn notify(&self, notification: R::Notification<P>) -> Result<(), Error> {
        let mut conn = lock(&self.core.conn);
        let mut notification = notification;
        loop {
            let first = conn.bytes_queued() == 0;
            match conn.send_notification(Instant::from_std(self.epoch, StdInstant::now()), notification) {
                Ok(()) => {
                    drop(conn);
                    if first {
                        let _ = self.mailbox.send(Input::Queued { linger: true });
                    }
                    return Ok(());
                }
                // No room: the notification comes back; wait until the writer drained some.
                Err(Refused { error: SendError::Backpressure { .. }, message }) => {
                    notification = message;
                    conn = self.core.wait_drained(conn);
                }
                Err(refused) => return Err(refused.error.into()),
            }
        }
    }

    /// Queues a handler's answer into the core once the outbound budget has room: the
    /// handler's thread waits meanwhile (the pool then starts no more handlers than it has
    /// threads), so the core's queued output exceeds its bound by at most one answer per pool
    /// thread. Over the poll transport this thread then writes it (see
    /// [`output`](crate::output)); else the driver is woken to write it at once.
    pub(crate) fn respond(&self, answer: Answer<R, P>) {
        let id = answer.id();
        let mut conn = lock(&self.core.conn);
        while !conn.can_send() && !conn.is_closed() {
            conn = self.core.wait_drained(conn);
        }
        lock(&self.core.running).remove(&id);
        let before = Before::of(&conn);
        // A permission option never offered is answered `cancelled` by the core itself.
        if let Err(error) = conn.respond(Instant::from_std(self.epoch, StdInstant::now()), answer) {
            lock(&self.core.tracer).respond_refused(id, &error);
        }
        let wake = match self.core.write_through(conn, before) {
            Through::Written(wake) => wake,
            // An answer ends a burst (and someone waits for it): no lingering.
            Through::NotWritten => Some(Input::Queued { linger: false }),
        };
        if let Some(wake) = wake {
            let _ = self.mailbox.send(wake);
        }
    }

    /// Runs a request handler and queues its answer (a panic answers `-32603`).
    pub(crate) fn answer(&self, id: InboundId, handler: impl FnOnce() -> Answer<R, P>) {
        let answer = catch_unwind(AssertUnwindSafe(handler))
            .unwrap_or_else(|panic| Answer::error(id, acp_runtime::handler_panicked(&*panic)));
        self.respond(answer);
    }

    /// Asks the driver to close the connection (a no-op once it is gone).
    pub(crate) fn close(&self) {
        let _ = self.ordered_command(Command::Close);
    }

    /// Both sides' capabilities, once the handshake committed.
    pub(crate) fn negotiated(&self) -> Option<Negotiated> {
        lock(&self.shared.negotiated).clone()
    }

    /// Why the connection closed, once it did.
    pub(crate) fn close_reason(&self) -> Option<CloseReason> {
        lock(&self.shared.closed).clone()
    }
}

impl<P: Version> Link<P, role::Client> {
    /// Cancels the session's running prompt turn.
    pub(crate) fn cancel_turn(&self, session: SessionId) -> Result<(), Error> {
        let (reply, rx) = mpsc::sync_channel(1);
        self.command(Command::CancelTurn { session, reply, client: () })?;
        rx.recv().unwrap_or(Err(Error::ConnectionClosed))
    }

    /// A turn was dropped before its end (see [`Command::AbandonTurns`]).
    pub(crate) fn abandon_turns(&self) {
        let _ = self.ordered_command(Command::AbandonTurns(()));
    }
}

impl<R: Role> Link<V1, R> {
    /// [`call`](Self::call) with the typed result.
    pub(crate) fn call_typed<Q: TypedRequest + Into<R::Request<V1>>>(
        &self,
        request: Q,
        timeout: Option<Duration>,
    ) -> Result<Q::Result, Error> {
        Q::result(self.call(request.into(), timeout)?).ok_or(Error::UnexpectedResponse)
    }
}

impl Link<V1, role::Client> {
    /// Client side: sends a prompt of `session`; its updates and outcome arrive on the
    /// returned inbox.
    pub(crate) fn start_turn(
        &self,
        request: ClientRequest,
        session: SessionId,
        timeout: Option<Duration>,
    ) -> Result<InboxReceiver<TurnItem<V1>>, Error> {
        let (sink, items) = inbox(self.shared.backlog.clone());
        let (accepted, rx) = mpsc::sync_channel(1);
        self.request(request, Self::deadline(timeout), Reply::Turn { session, accepted, sink })?;
        rx.recv().unwrap_or(Err(Error::ConnectionClosed))?;
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::thread;

    use acp_proto::{Config, Side};

    use super::*;

    fn core() -> Core<V1, role::Agent> {
        let conn = Connection::new(Config::default(), Instant::ZERO);
        let tracer = Tracer::new(Side::Agent, false);
        #[cfg(unix)]
        return Core::new(conn, None, tracer);
        #[cfg(not(unix))]
        Core::new(conn, tracer)
    }

    /// A thread waiting for room counts itself before it lets the connection go, so a signal
    /// sent after a change made under the connection always reaches it (a signal with no
    /// waiter is skipped).
    #[test]
    fn a_drained_signal_reaches_a_counted_waiter() {
        let core = Arc::new(core());
        core.signal_drained();
        let (done, finished) = mpsc::channel();
        let waiter = {
            let core = core.clone();
            thread::spawn(move || {
                let conn = lock(&core.conn);
                drop(core.wait_drained(conn));
                done.send(()).expect("test alive");
            })
        };
        while core.drain_waiters.load(Ordering::SeqCst) == 0 {
            thread::yield_now();
        }
        // The change: made under the connection, which the waiter let go inside the wait.
        drop(lock(&core.conn));
        core.signal_drained();
        finished.recv_timeout(Duration::from_secs(10)).expect("the waiter was woken");
        waiter.join().expect("waiter");
        assert_eq!(core.drain_waiters.load(Ordering::SeqCst), 0);
    }
}
