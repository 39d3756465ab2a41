//! The driver: one thread runs the [`Connection`]: it alone feeds it input, takes its frames
//! and events and answers its timers.
//!
//! Everything reaches the driver through one `mpsc` channel of [`Input`]s: chunks from the
//! reader thread, buffers coming back from the writer thread, handler completions and
//! application commands. The loop waits on that channel with `recv_timeout(deadline - now)`,
//! where the deadline is the core's [`Connection::poll_timeout`], and after every input it
//! feeds pending bytes, retries sends held back by backpressure, hands queued frames to the
//! writer, and dispatches every event. It makes no protocol decision: it moves bytes, maps the
//! clock, runs handlers and routes outcomes.
//!
//! The one exception to "everything through the channel" is notifications (`session/update`
//! above all): the sending thread queues them into the core itself, under the connection's
//! mutex, and gets the core's verdict (accepted, or why not) on the spot, without a round trip
//! through the driver per update. It wakes the driver ([`Input::Queued`]) only when its frame
//! is the first of a new batch; otherwise a write or a wake-up is already on its way.
//!
//! # Bounded memory
//!
//! * The reader owns two buffers and reads into one only after the driver gave it back, so at
//!   most two chunks wait in the driver. A chunk the core did not fully consume
//!   ([`Connection::wants_input`] false) is kept and fed again after the events are drained.
//! * The writer thread gets one batch at a time; while it writes, frames pile up in the core,
//!   whose outbound budget then refuses application sends. Requests are then *held* in the
//!   driver (one per blocked caller thread) and retried when the writer drained; a thread
//!   sending a notification waits on the connection's condition variable, which the driver
//!   signals whenever it takes the queued output. Either way the caller blocks instead of
//!   memory growing. A handler's answer waits the same way (on its pool thread), and while the
//!   output is full the core dispatches no new request, so a peer that never reads cannot make
//!   the answers pile up.
//! * Items handed to application threads (prompt-turn updates, ordered notifications) count
//!   in a [`Backlog`]; while it is full the driver stops feeding input, and the peer's writes
//!   block in the pipe.
//!
//! # Batching
//!
//! Frames go to the writer only when it is idle, so while it writes, the next batch builds up
//! in the core. A notification queued while the writer is idle starts a short linger
//! ([`LINGER`], at most [`LINGER_BYTES`]) before the write, so that a handler streaming
//! updates gets them out in large writes; a response or a request ends the linger at once.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant as StdInstant};

use acp_proto::types::{SessionId, SessionNotification};
use acp_proto::{
    AgentNotification, CloseReason, Config, Connection, Event, InboundId, Instant, Negotiated, Notification,
    OutboundId, Outcome, Refused, Request, Response, RpcError, SendError, Side, TypedRequest,
};

use crate::error::Error;
use crate::io_threads::{spawn_reader, spawn_writer};
use crate::pool::{Job, Pool, spawn_ordered};
use crate::sync::{Backlog, CancelToken, InboxReceiver, InboxSender, inbox, lock};
use acp_runtime::trace::Tracer;

/// Bytes asked of the transport per read.
pub(crate) const READ_CHUNK: usize = 64 * 1024;
/// Buffers the reader may fill before the driver gives one back.
pub(crate) const READ_BUFFERS: usize = 2;
/// Inputs taken from the channel per wake-up before the state is pumped.
const INPUT_BATCH: usize = 64;
/// A writer buffer larger than this is not kept for reuse after a big frame went out.
const KEEP_WRITE_BUFFER: usize = 4 << 20;
/// After a notification is accepted with the writer idle, how long the driver waits for the
/// sender's next one before writing, so that a burst of updates leaves in a few large writes
/// instead of one write (and two thread switches) per update.
const LINGER: Duration = Duration::from_micros(50);
/// Queued bytes that end the lingering early.
const LINGER_BYTES: usize = 64 * 1024;

/// Something for the driver.
pub(crate) enum Input {
    /// A chunk from the reader: the buffer and how many of its bytes were read.
    Read(Vec<u8>, usize),
    /// The reader hit the end of the stream.
    Eof,
    /// Reading failed (treated as the end of the stream).
    ReadFailed(io::Error),
    /// The writer wrote and flushed a batch; the buffer comes back for reuse.
    Written(Vec<u8>),
    /// Writing failed; the writer is gone.
    WriteFailed(io::Error),
    /// An application thread made room in the backlog.
    Wake,
    /// A thread queued a notification into an empty output queue: a batch may need writing.
    Queued,
    /// A command from the application or a handler.
    Command(Command),
}

/// What application threads and handlers ask of the driver.
pub(crate) enum Command {
    /// Send a request; the reply says how it ended.
    Request { request: Request, deadline: Option<StdInstant>, reply: Reply },
    /// A handler's result for an inbound request.
    Respond { id: InboundId, result: Result<Response, RpcError> },
    /// Client side: cancel the session's running prompt turn.
    CancelTurn { session: SessionId, reply: SyncSender<Result<(), Error>> },
    /// Client side: a `PromptTurn` was dropped before its end; cancel every turn in flight
    /// whose reader is gone.
    AbandonTurns,
    /// Close the connection.
    Close,
}

/// A request to send, as the application asked for it.
struct Outgoing {
    request: Request,
    deadline: Option<StdInstant>,
    reply: Reply,
}

/// Where the outcome of an outbound request goes.
pub(crate) enum Reply {
    /// To a thread blocked on the call.
    Once(SyncSender<Result<Outcome, Error>>),
    /// Client side, a prompt: acceptance to the caller, then the turn's updates and its outcome
    /// to the turn's inbox, in order.
    Turn { accepted: SyncSender<Result<(), Error>>, sink: InboxSender<TurnItem> },
}

impl Reply {
    fn fail(self, error: Error) {
        match self {
            Reply::Once(tx) => drop(tx.send(Err(error))),
            Reply::Turn { accepted, .. } => drop(accepted.send(Err(error))),
        }
    }
}

/// One item of a client's prompt turn.
#[derive(Debug)]
pub(crate) enum TurnItem {
    /// A `session/update` of the turn.
    Update(SessionNotification),
    /// An agent request of the turn's session arrived here on the wire: its handler waits until
    /// the reader has taken every update before it (and, with `next_update_then`, handled it),
    /// or dropped the turn, so that the application sees the turn's updates and requests in
    /// wire order, by construction. It never waits for the reader to ask for more, so a
    /// reader may block on the handler without a deadlock.
    Gate(SyncSender<()>),
    /// The prompt's outcome; nothing follows.
    Done(Outcome),
}

/// The application side of a connection: what runs inbound requests and notifications.
pub(crate) trait Service: Send + Sync + 'static {
    /// Handles an inbound request on a worker thread.
    fn request(&self, link: &Link, id: InboundId, cancel: &CancelToken, request: Request)
    -> Result<Response, RpcError>;
    /// Handles an inbound notification on the ordered notification thread.
    fn notification(&self, link: &Link, notification: Notification);
}

/// State the driver publishes to the application threads.
#[derive(Debug)]
pub(crate) struct Shared {
    negotiated: Mutex<Option<Negotiated>>,
    closed: Mutex<Option<CloseReason>>,
    backlog: Arc<Backlog>,
}

/// The connection, shared by the driver and the threads that send notifications.
#[derive(Debug)]
pub(crate) struct Core {
    conn: Mutex<Connection>,
    /// Signalled when the driver took the queued output (room in the outbound budget again) or
    /// the connection closed.
    drained: Condvar,
}

/// A handle to the driver: how application threads and handlers send commands.
#[derive(Clone, Debug)]
pub(crate) struct Link {
    tx: Sender<Input>,
    shared: Arc<Shared>,
    core: Arc<Core>,
    epoch: StdInstant,
}

impl Link {
    fn command(&self, command: Command) -> Result<(), Error> {
        self.tx.send(Input::Command(command)).map_err(|_| Error::ConnectionClosed)
    }

    fn deadline(timeout: Option<Duration>) -> Option<StdInstant> {
        timeout.and_then(|t| StdInstant::now().checked_add(t))
    }

    /// Sends a request and blocks until its outcome.
    pub(crate) fn call(&self, request: Request, timeout: Option<Duration>) -> Result<Response, Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.command(Command::Request { request, deadline: Self::deadline(timeout), reply: Reply::Once(tx) })?;
        match rx.recv() {
            Ok(Ok(outcome)) => Error::from_outcome(outcome),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::ConnectionClosed),
        }
    }

    /// [`call`](Self::call) with the typed result.
    pub(crate) fn call_typed<R: TypedRequest>(
        &self,
        request: R,
        timeout: Option<Duration>,
    ) -> Result<R::Result, Error> {
        R::result(self.call(request.into(), timeout)?).ok_or(Error::UnexpectedResponse)
    }

    /// Sends a notification, blocking while the outbound budget is used up. The core takes it
    /// right here (the result is its verdict); the driver is woken only when this frame starts
    /// a new batch, since otherwise a write or a wake-up is already on its way.
    pub(crate) fn notify(&self, notification: Notification) -> Result<(), Error> {
        let mut conn = lock(&self.core.conn);
        let mut notification = notification;
        loop {
            let first = conn.bytes_queued() == 0;
            match conn.send_notification(Instant::from_std(self.epoch, StdInstant::now()), notification) {
                Ok(()) => {
                    drop(conn);
                    if first {
                        let _ = self.tx.send(Input::Queued);
                    }
                    return Ok(());
                }
                // No room: the notification comes back; wait until the writer drained some.
                Err(Refused { error: SendError::Backpressure { .. }, message }) => {
                    notification = message;
                    conn = self.core.drained.wait(conn).unwrap_or_else(PoisonError::into_inner);
                }
                Err(refused) => return Err(refused.error.into()),
            }
        }
    }

    /// Hands a handler's answer to the driver once the outbound budget has room: the handler's
    /// thread waits meanwhile (the pool then starts no more handlers than it has threads), so
    /// the core's queued output exceeds its bound by at most one answer per pool thread.
    pub(crate) fn respond(&self, id: InboundId, result: Result<Response, RpcError>) {
        let mut conn = lock(&self.core.conn);
        while !conn.can_send() && !conn.is_closed() {
            conn = self.core.drained.wait(conn).unwrap_or_else(PoisonError::into_inner);
        }
        drop(conn);
        let _ = self.command(Command::Respond { id, result });
    }

    /// Client side: sends a prompt; its updates and outcome arrive on the returned inbox.
    pub(crate) fn start_turn(
        &self,
        request: Request,
        timeout: Option<Duration>,
    ) -> Result<InboxReceiver<TurnItem>, Error> {
        let (sink, items) = inbox(self.shared.backlog.clone());
        let (accepted, rx) = mpsc::sync_channel(1);
        let reply = Reply::Turn { accepted, sink };
        self.command(Command::Request { request, deadline: Self::deadline(timeout), reply })?;
        rx.recv().unwrap_or(Err(Error::ConnectionClosed))?;
        Ok(items)
    }

    /// Client side: cancels the session's running prompt turn.
    pub(crate) fn cancel_turn(&self, session: SessionId) -> Result<(), Error> {
        let (reply, rx) = mpsc::sync_channel(1);
        self.command(Command::CancelTurn { session, reply })?;
        rx.recv().unwrap_or(Err(Error::ConnectionClosed))
    }

    /// Client side: a turn was dropped before its end (see [`Command::AbandonTurns`]).
    pub(crate) fn abandon_turns(&self) {
        let _ = self.command(Command::AbandonTurns);
    }

    /// Asks the driver to close the connection (a no-op once it is gone).
    pub(crate) fn close(&self) {
        let _ = self.command(Command::Close);
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

/// How a driver is set up.
#[derive(Debug, Clone)]
pub(crate) struct DriverOptions {
    pub(crate) side: Side,
    pub(crate) config: Config,
    pub(crate) max_handlers: usize,
    pub(crate) max_buffered: usize,
    pub(crate) flush_timeout: Duration,
    pub(crate) trace_payloads: bool,
}

/// An outbound request awaiting its outcome.
enum Pending {
    Once(SyncSender<Result<Outcome, Error>>),
    /// Client side: a prompt turn in flight (at most one per session: the core refuses a
    /// second), whose agent requests are ordered behind its updates.
    Turn {
        session: Option<SessionId>,
        sink: InboxSender<TurnItem>,
    },
}

/// The driver of one connection. See the [module docs](self).
pub(crate) struct Driver {
    core: Arc<Core>,
    epoch: StdInstant,
    rx: Receiver<Input>,
    link: Link,
    service: Arc<dyn Service>,
    pool: Pool,
    /// The ordered notification thread's queue, started on first use.
    ordered: Option<InboxSender<Job>>,
    /// Gives buffers back to the reader.
    credit: Sender<Vec<u8>>,
    /// Chunks not yet fully fed to the core, and how far the first one is fed.
    inputs: VecDeque<(Vec<u8>, usize)>,
    fed: usize,
    /// The reader reported the end of the stream; passed to the core once `inputs` is empty.
    eof: bool,
    writer: Option<Sender<Vec<u8>>>,
    writer_busy: bool,
    spare: Vec<u8>,
    /// Until when frames wait for more before going to the idle writer.
    linger: Option<StdInstant>,
    calls: HashMap<OutboundId, Pending>,
    running: HashMap<InboundId, CancelToken>,
    /// Requests held back while the outbound budget is used up, oldest first.
    held: VecDeque<Outgoing>,
    /// The core reported `Closed` (the reason is kept in `Shared`).
    closed: bool,
    /// After close: when to stop waiting for the writer.
    flush_deadline: Option<StdInstant>,
    error: Option<io::Error>,
    options: DriverOptions,
    tracer: Tracer,
}

impl Driver {
    /// A driver over `reader` and `writer`, with its reader and writer threads started.
    pub(crate) fn new(
        service: Arc<dyn Service>,
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
        options: DriverOptions,
    ) -> io::Result<(Driver, Link)> {
        let epoch = StdInstant::now();
        let (tx, rx) = mpsc::channel();
        let backlog = Arc::new(Backlog::new(options.max_buffered, tx.clone()));
        let shared = Arc::new(Shared { negotiated: Mutex::new(None), closed: Mutex::new(None), backlog });
        let conn = Connection::new(options.side, options.config.clone(), Instant::ZERO);
        let core = Arc::new(Core { conn: Mutex::new(conn), drained: Condvar::new() });
        let link = Link { tx: tx.clone(), shared, core: core.clone(), epoch };
        let credit = spawn_reader(reader, tx.clone())?;
        let writer = spawn_writer(writer, tx)?;
        let driver = Driver {
            core,
            epoch,
            rx,
            link: link.clone(),
            service,
            pool: Pool::new(options.max_handlers, "acp-handler"),
            ordered: None,
            credit,
            inputs: VecDeque::new(),
            fed: 0,
            eof: false,
            writer: Some(writer),
            writer_busy: false,
            spare: Vec::new(),
            linger: None,
            calls: HashMap::new(),
            running: HashMap::new(),
            held: VecDeque::new(),
            closed: false,
            flush_deadline: None,
            error: None,
            tracer: Tracer::new(options.side, options.trace_payloads),
            options,
        };
        Ok((driver, link))
    }

    fn now(&self) -> Instant {
        Instant::from_std(self.epoch, StdInstant::now())
    }

    /// The connection. Never held across a call that locks it again.
    fn conn(&self) -> MutexGuard<'_, Connection> {
        lock(&self.core.conn)
    }

    fn to_std(&self, t: Instant) -> Option<StdInstant> {
        self.epoch.checked_add(Duration::from_nanos(t.as_nanos()))
    }

    /// Runs until the connection is closed and its last frames are written (or the flush
    /// timeout passed). Returns the I/O error that ended the connection, if one did.
    pub(crate) fn run(mut self) -> Option<io::Error> {
        let scope = self.tracer.scope();
        scope.in_scope(|| {
            loop {
                self.pump();
                if self.finished() {
                    break;
                }
                let first = match self.wait_time() {
                    None => match self.rx.recv() {
                        Ok(input) => Some(input),
                        Err(_) => break,
                    },
                    Some(wait) => match self.rx.recv_timeout(wait) {
                        Ok(input) => Some(input),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => break,
                    },
                };
                let mut next = first;
                for _ in 0..INPUT_BATCH {
                    let Some(input) = next else { break };
                    self.on_input(input);
                    next = self.rx.try_recv().ok();
                }
                if let Some(input) = next {
                    self.on_input(input);
                }
                let now = self.now();
                self.conn().handle_timeout(now);
                self.expire_held();
            }
            self.error.take()
        })
    }

    /// Moves everything that can move without waiting: input into the core, held sends,
    /// frames to the writer, events to their consumers.
    fn pump(&mut self) {
        loop {
            let mut progress = self.feed();
            progress |= self.retry_held();
            progress |= self.transmit();
            progress |= self.drain_events();
            if !progress {
                break;
            }
        }
    }

    fn finished(&self) -> bool {
        let flushed = !self.writer_busy && self.conn().bytes_queued() == 0;
        let gave_up = self.flush_deadline.is_some_and(|d| StdInstant::now() >= d);
        self.closed && (flushed || self.writer.is_none() || gave_up)
    }

    /// How long to wait for input: until the core's next deadline, a held request's deadline,
    /// the end of the flush period or of the lingering, whichever comes first.
    fn wait_time(&self) -> Option<Duration> {
        let held = self.held.iter().filter_map(|r| r.deadline);
        let (timeout, queued) = {
            let conn = self.conn();
            (conn.poll_timeout(), conn.bytes_queued())
        };
        let core = timeout.and_then(|t| self.to_std(t));
        let linger = self.linger.filter(|_| !self.writer_busy && queued > 0);
        let next = core.into_iter().chain(held).chain(self.flush_deadline).chain(linger).min()?;
        Some(next.saturating_duration_since(StdInstant::now()))
    }

    fn on_input(&mut self, input: Input) {
        match input {
            Input::Read(buf, n) => self.inputs.push_back((buf, n)),
            Input::Eof => self.eof = true,
            Input::ReadFailed(e) => {
                if !self.closed {
                    self.error.get_or_insert(e);
                }
                self.eof = true;
            }
            Input::Written(mut buf) => {
                self.writer_busy = false;
                if buf.capacity() <= KEEP_WRITE_BUFFER {
                    buf.clear();
                    self.spare = buf;
                }
            }
            Input::WriteFailed(e) => {
                self.writer_busy = false;
                self.writer = None;
                if !self.closed {
                    self.error.get_or_insert(e);
                    let now = self.now();
                    self.conn().close(now);
                }
            }
            Input::Wake => {}
            Input::Queued => {
                if !self.writer_busy && self.linger.is_none() {
                    self.linger = StdInstant::now().checked_add(LINGER);
                }
            }
            Input::Command(command) => self.on_command(command),
        }
    }

    fn on_command(&mut self, command: Command) {
        let now = self.now();
        match command {
            Command::Request { request, deadline, reply } => {
                self.send(Outgoing { request, deadline, reply });
            }
            Command::Respond { id, result } => {
                // A response ends a burst (and someone waits for it): no lingering.
                self.linger = None;
                self.running.remove(&id);
                // A result that does not fit its request is answered by the core itself (an
                // internal error, or `cancelled` for a permission option never offered).
                if let Err(error) = self.conn().respond(now, id, result) {
                    self.tracer.respond_refused(id, &error);
                }
            }
            Command::CancelTurn { session, reply } => {
                let result = self.conn().cancel_turn(now, &session);
                let _ = reply.send(result.map(drop).map_err(Error::from));
            }
            Command::AbandonTurns => {
                let abandoned: Vec<SessionId> = self
                    .calls
                    .values()
                    .filter_map(|pending| match pending {
                        Pending::Turn { session: Some(session), sink } if sink.receiver_gone() => Some(session.clone()),
                        _ => None,
                    })
                    .collect();
                for session in abandoned {
                    // The agent still answers the prompt (`cancelled`); the updates in between
                    // are dropped with the turn's inbox.
                    let _ = self.conn().cancel_turn(now, &session);
                }
            }
            Command::Close => self.conn().close(now),
        }
    }

    /// Hands a send to the core; gives it back when the outbound budget is used up (the core
    /// hands a request refused for backpressure back), to wait in `held`.
    fn try_send(&mut self, outgoing: Outgoing) -> Option<Outgoing> {
        let now = self.now();
        let Outgoing { request, deadline, reply } = outgoing;
        self.linger = None;
        let deadline = deadline.map(|d| Instant::from_std(self.epoch, d));
        let session = request.session_id().cloned();
        let sent = self.conn().send_request(now, request, deadline);
        match sent {
            Ok(id) => {
                let pending = match reply {
                    Reply::Once(tx) => Pending::Once(tx),
                    Reply::Turn { accepted, sink } => {
                        let _ = accepted.send(Ok(()));
                        Pending::Turn { session, sink }
                    }
                };
                self.calls.insert(id, pending);
            }
            Err(Refused { error: SendError::Backpressure { .. }, message }) => {
                let deadline = deadline.map(|d| d.to_std(self.epoch));
                return Some(Outgoing { request: message, deadline, reply });
            }
            Err(refused) => reply.fail(refused.error.into()),
        }
        None
    }

    /// Sends `outgoing` now, or after the sends held before it.
    fn send(&mut self, outgoing: Outgoing) {
        if !self.held.is_empty() {
            self.held.push_back(outgoing);
        } else if let Some(back) = self.try_send(outgoing) {
            self.held.push_back(back);
        }
    }

    fn retry_held(&mut self) -> bool {
        let mut progress = false;
        while let Some(outgoing) = self.held.pop_front() {
            if let Some(back) = self.try_send(outgoing) {
                self.held.push_front(back);
                break;
            }
            progress = true;
        }
        progress
    }

    /// A held request whose deadline passed never reached the core: it times out here.
    fn expire_held(&mut self) {
        let now = StdInstant::now();
        let expired = |r: &Outgoing| r.deadline.is_some_and(|d| d <= now);
        if !self.held.iter().any(expired) {
            return;
        }
        let (gone, kept) = std::mem::take(&mut self.held).into_iter().partition(expired);
        self.held = kept;
        for outgoing in gone {
            outgoing.reply.fail(Error::TimedOut);
        }
    }

    /// Feeds pending input while the core and the application backlog take it.
    fn feed(&mut self) -> bool {
        let mut progress = false;
        while self.link.shared.backlog.has_room()
            && let Some((buf, len)) = self.inputs.front()
        {
            let now = self.now();
            let chunk = &buf[self.fed..*len];
            let n = {
                let mut conn = lock(&self.core.conn);
                if !conn.wants_input() {
                    break;
                }
                conn.handle_input(now, chunk)
            };
            self.tracer.frames_in(&chunk[..n]);
            self.fed += n;
            progress |= n > 0;
            if self.fed < *len {
                // The core stopped taking input: drain its events first, then feed the rest.
                break;
            }
            if let Some((buf, _)) = self.inputs.pop_front() {
                self.fed = 0;
                let _ = self.credit.send(buf);
            }
        }
        if self.eof && self.inputs.is_empty() && !self.conn().is_closed() {
            let now = self.now();
            self.conn().handle_eof(now);
            self.eof = false;
            progress = true;
        }
        progress
    }

    /// Hands the queued frames to the writer when it is idle (one write and one flush per
    /// batch). Without a writer (it failed) they are dropped.
    fn transmit(&mut self) -> bool {
        let queued = self.conn().bytes_queued();
        if queued == 0 || self.writer_busy {
            return false;
        }
        if let Some(until) = self.linger {
            let more_may_come = !self.closed && queued < LINGER_BYTES;
            if more_may_come && StdInstant::now() < until {
                return false;
            }
            self.linger = None;
        }
        let mut batch = std::mem::take(&mut self.spare);
        let _ = self.conn().poll_transmit(&mut batch);
        // Room in the budget again: threads waiting to send a notification go on.
        self.core.drained.notify_all();
        self.tracer.frames_out(&batch);
        match &self.writer {
            Some(writer) => match writer.send(batch) {
                Ok(()) => self.writer_busy = true,
                Err(_) => self.writer = None,
            },
            None => {
                batch.clear();
                self.spare = batch;
            }
        }
        true
    }

    fn drain_events(&mut self) -> bool {
        let mut progress = false;
        loop {
            let next = self.conn().poll_event();
            let Some(event) = next else { break };
            progress = true;
            self.tracer.event(&event);
            self.dispatch(event);
        }
        progress
    }

    fn dispatch(&mut self, event: Event) {
        match event {
            Event::Request { id, request } => {
                let gate = self.turn_gate(&request);
                self.spawn_handler(id, request, gate);
            }
            Event::Notification { notification, turn } => {
                let pending = turn.and_then(|stamp| self.calls.get(&stamp.turn));
                match (pending, notification) {
                    (
                        Some(Pending::Turn { sink, .. }),
                        Notification::Agent(AgentNotification::SessionUpdate(update)),
                    ) => {
                        sink.push(TurnItem::Update(update));
                    }
                    (_, notification) => self.run_ordered(notification),
                }
            }
            Event::Cancelled { id, reason } => {
                if let Some(token) = self.running.get(&id) {
                    token.cancel(reason);
                }
            }
            Event::Outcome { id, outcome } => match self.calls.remove(&id) {
                Some(Pending::Once(tx)) => {
                    let _ = tx.send(Ok(outcome));
                }
                Some(Pending::Turn { sink, .. }) => {
                    sink.push(TurnItem::Done(outcome));
                }
                None => {}
            },
            Event::HandshakeCompleted(negotiated) => *lock(&self.link.shared.negotiated) = Some(negotiated),
            Event::Closed { reason } => {
                *lock(&self.link.shared.closed) = Some(reason);
                self.closed = true;
                self.flush_deadline = StdInstant::now().checked_add(self.options.flush_timeout);
                self.running.clear();
                // Threads waiting for room learn that nothing more will be sent.
                self.core.drained.notify_all();
            }
            _ => {}
        }
    }

    /// Client side: when `request` belongs to a session whose prompt turn is in flight and that
    /// turn's reader has not yet taken (or is still handling) every update so far, a gate
    /// placed in the turn after them.
    fn turn_gate(&mut self, request: &Request) -> Option<Receiver<()>> {
        let session = request.session_id()?;
        let turn = self.calls.values().find_map(|pending| match pending {
            Pending::Turn { session: Some(s), sink } if s == session => Some(sink),
            _ => None,
        });
        let sink = turn?;
        if sink.settled() {
            // The reader has taken every earlier update: nothing to wait for.
            return None;
        }
        let (open, gate) = mpsc::sync_channel(1);
        sink.push(TurnItem::Gate(open)).then_some(gate)
    }

    /// Runs a request handler on the pool; its result comes back as a command. With a `gate`,
    /// the handler first waits until the turn's reader reached it (or dropped the turn).
    fn spawn_handler(&mut self, id: InboundId, request: Request, gate: Option<Receiver<()>>) {
        let cancel = CancelToken::new();
        self.running.insert(id, cancel.clone());
        let (service, link, scope) = (self.service.clone(), self.link.clone(), self.tracer.scope());
        self.pool.execute(Box::new(move || {
            if let Some(gate) = gate {
                // Err: the turn was dropped unread, so there is nothing to stay behind.
                let _ = gate.recv();
            }
            scope.in_scope(|| {
                let result = catch_unwind(AssertUnwindSafe(|| service.request(&link, id, &cancel, request)))
                    .unwrap_or_else(|panic| Err(acp_runtime::handler_panicked(&*panic)));
                link.respond(id, result);
            })
        }));
    }

    /// Runs a notification handler on the ordered notification thread.
    fn run_ordered(&mut self, notification: Notification) {
        if self.ordered.is_none() {
            let (sink, jobs) = inbox(self.link.shared.backlog.clone());
            if spawn_ordered(jobs, "acp-notifications").is_err() {
                return;
            }
            self.ordered = Some(sink);
        }
        let (service, link, scope) = (self.service.clone(), self.link.clone(), self.tracer.scope());
        if let Some(ordered) = &self.ordered {
            ordered.push(Box::new(move || scope.in_scope(|| service.notification(&link, notification))));
        }
    }
}
