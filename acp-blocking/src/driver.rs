//! The driver: one thread runs the [`Connection`]: it alone feeds it input, takes its frames
//! and events and answers its timers.
//!
//! # Structure
//!
//! **Who drives.** On the agent side the driver thread (the one that called `serve`) always
//! does. On the client side, a caller thread waiting for its reply drives while no other
//! thread does (*leader/follower*, see [`lead`]): it takes the driver's state (the token, held
//! by exactly one thread at a time), runs the same passes and waits the driver thread would,
//! and puts it back once its reply is in, so that the reply wakes no other thread. The
//! dedicated driver thread parks while callers lead and drives for everything else (input
//! while no caller waits, timers, the close); it takes over when a leader leaves work or
//! followers behind. Below, "the driver" is whichever thread holds the token.
//!
//! Application threads and handlers reach the driver through one `mpsc` channel of
//! [`Input`]s (handler answers, commands, wake-ups) behind a [`Mailbox`]. The bytes move one
//! of two ways:
//!
//! * **Pipes and sockets** (Unix: stdin/stdout in `serve_stdio`, a spawned agent's pipes,
//!   `serve_fds`, `ClientConnection::connect_fds`): the driver thread reads the input itself
//!   ([`FdIo`]), non-blocking for the driver's life (the descriptors' mode is restored on
//!   every exit path, unwinding included), and waits in one `poll(2)` on the input (while it
//!   may read), the output (only while a batch is partly out) and a wake-up descriptor that
//!   every send to the mailbox signals. The output ([`Output`]) is written by the driver and
//!   by the threads that queue a request or an answer, whichever queued last while it was
//!   idle (see [`output`](crate::output)). No thread hand-off per chunk or batch.
//! * **Anything else** (a generic `Read + Write`, and descriptors `poll(2)` says nothing
//!   useful about: a regular file, which always polls ready, a terminal, which is shared with
//!   the user's shell, or a character device such as `/dev/null`): a **reader** thread sends
//!   chunks and a **writer** thread writes batches ([`io_threads`](crate::io_threads)); the
//!   driver waits on the channel with `recv_timeout`.
//!
//! Either way the driver waits until the core's [`Connection::poll_timeout`] at the latest,
//! and after every input it feeds pending bytes, retries sends held back by backpressure,
//! hands queued frames to the output, and dispatches every event, in passes that each lock
//! the connection once and wake other threads only after letting it go (see [`step`]). It
//! makes no protocol decision: it moves bytes, maps the clock, runs handlers and routes
//! outcomes.
//!
//! Requests, notifications and handler answers do not pass through the driver: the sending
//! thread queues them into the core itself, under the connection's mutex, and gets the
//! core's verdict on the spot; a request's reply slot is registered (in [`Core::calls`])
//! before the mutex is let go, so the driver, which routes every outcome, always finds it.
//! Over the poll transport a request or an answer is written by its own thread when the
//! output is idle, which wakes the driver only by the rules of [`output`](crate::output).
//! Otherwise the sender wakes the driver ([`Input::Queued`]) only when its frame is the first
//! of a new batch, or a request or an answer ends a linger; else a write or a wake-up is
//! already on its way. A request goes
//! through the driver instead ([`Command::Request`]) while earlier ones wait there for room
//! or a `Close`/`AbandonTurns` is on its way ([`Core::detour`]), so that it overtakes none.
//!
//! # Bounded memory
//!
//! * Input is read only while everything read before was consumed: the reader thread owns
//!   two buffers and reads into one only after the driver gave it back; the poll path reads
//!   one chunk, and polls the input again only once the core took all of it. A chunk the core
//!   did not fully consume ([`Connection::wants_input`] false) is kept and fed again after the
//!   events are drained.
//! * The output takes one batch at a time (the writer thread, or the poll path until the
//!   descriptor took all of it); meanwhile frames pile up in the core, whose outbound budget
//!   then refuses application sends. Requests are then *held* in the driver (one per blocked
//!   caller thread) and retried when the output drained; a thread sending a notification
//!   waits on the connection's condition variable, which the driver signals whenever it takes
//!   the queued output. Either way the caller blocks instead of memory growing. A handler's
//!   answer waits the same way (on its pool thread), and while the output is full the core
//!   dispatches no new request, so a peer that never reads cannot make the answers pile up.
//! * Items handed to application threads (prompt-turn updates, ordered notifications) count
//!   in a [`Backlog`]; while it is full the driver stops feeding (and reading) input, and the
//!   peer's writes block in the pipe.
//!
//! # Batching
//!
//! Frames go to the output only when it is idle, so while it writes, the next batch builds
//! up in the core. A notification queued while the output is idle starts a short linger
//! ([`LINGER`], at most [`LINGER_BYTES`]) before the write, so that a handler streaming
//! updates gets them out in large writes; a response or a request ends the linger at once.
//!
//! # Closing
//!
//! The end of the input is passed to the core, which half-closes: it tells the handlers still
//! running and keeps the connection open until each has answered (or its grace passed), so
//! the driver keeps writing meanwhile. Once the core reports `Closed`, the driver writes what is queued for at most
//! `flush_timeout`, then returns; the transport is dropped with it (the peer sees the end of
//! its input). A write that fails (the peer closed its end: `EPIPE`, since Rust programs
//! ignore `SIGPIPE`) closes the connection with that I/O error, unless the peer's input had
//! ended before: then it only says the peer left ([`acp_runtime::peer_left`]).

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant as StdInstant};

use acp_proto::role::Role;
use acp_proto::types::SessionId;
use acp_proto::{Config, Connection, Event, InboundId, InboundRequest, Instant, Protocol, Side, TurnStamp};
use acp_runtime::trace::Traced;

use crate::error::Error;
#[cfg(unix)]
use crate::fd_io::{FdIo, FdRead, FdWrite, NotPollable};
pub(crate) use crate::link::{Command, Core, Link, Pending, Reply, Shared, TurnItem};
#[cfg(unix)]
use crate::output::{Output, Wrote};
use crate::pool::{Job, Pool, spawn_ordered};
use crate::sync::{Backlog, CancelToken, InboxSender, inbox, lock};
use crate::transport::Transport;
use crate::wake::Mailbox;
#[cfg(unix)]
use crate::wake::WakeFd;
use acp_runtime::trace::Tracer;

mod lead;
mod step;

pub(crate) use lead::{Following, Lead, Poke};

/// A protocol version this adapter runs: what its one driver needs of a version's messages
/// (they cross threads; the tracer names them). [`V1`](acp_proto::V1) and (feature
/// `unstable_protocol_v2`) `V2`; only the handler traits and their dispatch are written per
/// version.
pub(crate) trait Version: Protocol<Request: Send + Traced, Notification: Send + Traced, Response: Send> {}

impl Version for acp_proto::V1 {}
#[cfg(feature = "unstable_protocol_v2")]
impl Version for acp_proto::V2 {}

/// Bytes asked of the transport per read.
pub(crate) const READ_CHUNK: usize = 64 * 1024;
/// Buffers the reader may fill before the driver gives one back.
pub(crate) const READ_BUFFERS: usize = 2;
/// Inputs taken from the channel per wake-up before the state is pumped.
const INPUT_BATCH: usize = 64;
/// A writer buffer larger than this is not kept for reuse after a big frame went out.
const KEEP_WRITE_BUFFER: usize = 4 << 20;
/// After a notification is accepted with the output idle, how long the driver waits for the
/// sender's next one before writing, so that a burst of updates leaves in a few large writes
/// instead of one write (and, with a writer thread, two thread switches) per update.
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
    /// The poll transport's output, which has a batch partly out, has room.
    #[cfg(unix)]
    Writable,
    /// Writing failed; the writer is gone.
    WriteFailed(io::Error),
    /// An application thread made room in the backlog.
    Wake,
    /// A thread queued a frame into an empty output queue (or a request while the driver
    /// lingers): a batch may need writing, after a linger for a notification (`linger`).
    Queued { linger: bool },
    /// A command from the application or a handler is on the driver's command channel.
    Command,
}

/// A request to send, as the application asked for it.
struct Outgoing<P: Version, R: Role> {
    request: R::Request<P>,
    deadline: Option<StdInstant>,
    reply: Reply<P>,
}

/// The application side of a connection of version `P`: what runs inbound requests and
/// notifications (each version's handler traits, see `agent`, `client` and `v2`).
pub(crate) trait Service<P: Version, R: Role>: Send + Sync + 'static {
    /// Handles an inbound request on a worker thread and answers it ([`Link::answer`], with the
    /// responder of its result type: [`InboundRequest::into_call`]).
    fn request(&self, link: &Link<P, R>, cancel: &CancelToken, request: InboundRequest<P>);

    /// Handles an inbound notification on the ordered notification thread.
    fn notification(&self, link: &Link<P, R>, notification: P::Notification);

    /// On the driver thread: takes a turn's `session/update` (`turn`: its place in a running
    /// prompt turn) for the turn's reader, or gives the notification back for
    /// [`notification`](Self::notification).
    fn route(
        &self,
        link: &Link<P, R>,
        notification: P::Notification,
        turn: Option<TurnStamp>,
    ) -> Option<P::Notification> {
        let _ = (link, turn);
        Some(notification)
    }

    /// On the driver thread, before `request` goes to the pool: the ordering gate its handler
    /// waits on first (client side: behind the updates of its session's turn read so far).
    fn turn_gate(&self, link: &Link<P, R>, request: &P::Request) -> Option<Receiver<()>> {
        let _ = (link, request);
        None
    }

    /// On the driver thread: the core ended the session's turn (v2).
    #[cfg(feature = "unstable_protocol_v2")]
    fn turn_ended(&self, session: SessionId, reason: acp_proto::TurnEndReason) {
        let _ = (session, reason);
    }
}

/// The connection a driver starts with: a new one, or one an [`Acceptor`](acp_proto::Acceptor)
/// handed on, with the bytes read after the client's `initialize` (`unread`).
pub(crate) struct Start<P: Version, R: Role> {
    pub(crate) conn: Connection<R, P>,
    /// When the connection's clock started (its `Instant::ZERO`).
    pub(crate) epoch: StdInstant,
    pub(crate) unread: Vec<u8>,
}

impl<P: Version, R: Role> Start<P, R> {
    /// A new connection as `options` say.
    pub(crate) fn new(options: &DriverOptions) -> Start<P, R> {
        let conn = Connection::new(options.config.clone(), Instant::ZERO);
        Start { conn, epoch: StdInstant::now(), unread: Vec::new() }
    }
}

/// How a driver is set up.
#[derive(Debug, Clone)]
pub(crate) struct DriverOptions {
    pub(crate) config: Config,
    pub(crate) max_handlers: usize,
    pub(crate) max_buffered: usize,
    pub(crate) flush_timeout: Duration,
    pub(crate) trace_payloads: bool,
}

/// The driver of one connection. See the [module docs](self).
pub(crate) struct Driver<P: Version, R: Role> {
    core: Arc<Core<P, R>>,
    epoch: StdInstant,
    rx: Receiver<Input>,
    /// The commands announced by [`Input::Command`].
    commands: Receiver<Command<P, R>>,
    link: Link<P, R>,
    service: Arc<dyn Service<P, R>>,
    pool: Pool,
    /// The ordered notification thread's queue, started on first use.
    ordered: Option<InboxSender<Job>>,
    transport: Transport,
    /// Chunks not yet fully fed to the core, and how far the first one is fed.
    inputs: VecDeque<(Vec<u8>, usize)>,
    fed: usize,
    /// The reader reported the end of the stream; passed to the core once `inputs` is empty.
    eof: bool,
    /// The output can still be written (no write failed).
    output_open: bool,
    /// A batch is being written by the writer thread (the poll transport's [`Output`] knows
    /// for itself: see [`output_busy`](Self::output_busy)).
    writer_busy: bool,
    spare: Vec<u8>,
    /// Events taken from the core in a pass, dispatched once it let the connection go.
    events: Vec<Event<P>>,
    /// What one wait brought (kept for its buffer).
    happened: Vec<Input>,
    /// The core's next timer and its queued bytes, as the last pass left them.
    core_timeout: Option<Instant>,
    queued: usize,
    /// Until when frames wait for more before going to the idle output.
    linger: Option<StdInstant>,
    /// Requests held back while the outbound budget is used up, oldest first.
    held: VecDeque<Outgoing<P, R>>,
    /// The core reported `Closed` (the reason is kept in `Shared`).
    closed: bool,
    /// After close: when to stop waiting for the output.
    flush_deadline: Option<StdInstant>,
    error: Option<io::Error>,
    options: DriverOptions,
}

/// The channel, the mailbox and the link of a new driver, before its transport exists.
struct Parts<P: Version, R: Role> {
    rx: Receiver<Input>,
    tx: Sender<Input>,
    commands: Receiver<Command<P, R>>,
    link: Link<P, R>,
    unread: Vec<u8>,
}

impl<P: Version, R: Role> Driver<P, R> {
    /// A driver of `start` over `reader` and `writer`, with its reader and writer threads
    /// started.
    pub(crate) fn new(
        service: Arc<dyn Service<P, R>>,
        start: Start<P, R>,
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
        options: DriverOptions,
    ) -> io::Result<(Driver<P, R>, Link<P, R>)> {
        let (tx, rx) = mpsc::channel();
        let parts = Driver::parts(start, tx.clone().into(), tx, rx, &options, None);
        let transport = Transport::threads(reader, writer, &parts.tx)?;
        Ok(Driver::assemble(service, parts, transport, options))
    }

    /// A driver of `start` over `io`.
    pub(crate) fn open(
        service: Arc<dyn Service<P, R>>,
        start: Start<P, R>,
        io: crate::transport::Io,
        options: DriverOptions,
    ) -> io::Result<(Driver<P, R>, Link<P, R>)> {
        match io {
            crate::transport::Io::Threads(reader, writer) => Driver::new(service, start, reader, writer, options),
            #[cfg(unix)]
            crate::transport::Io::Fds(reader, writer) => Driver::with_fds(service, start, reader, writer, options),
        }
    }

    /// A driver over two descriptors: read and written on the driver thread with `poll(2)`
    /// when both are pipes or sockets, else by reader and writer threads as in [`new`](Self::new).
    #[cfg(unix)]
    pub(crate) fn with_fds(
        service: Arc<dyn Service<P, R>>,
        start: Start<P, R>,
        reader: impl FdRead + 'static,
        writer: impl FdWrite + 'static,
        options: DriverOptions,
    ) -> io::Result<(Driver<P, R>, Link<P, R>)> {
        let wake = Arc::new(WakeFd::new()?);
        let (tx, rx) = mpsc::channel();
        match FdIo::new(Box::new(reader), Box::new(writer), wake.clone()) {
            Ok((io, output)) => {
                let mailbox = Mailbox::with_wake(tx.clone(), wake);
                let parts = Driver::parts(start, mailbox, tx, rx, &options, Some(output));
                Ok(Driver::assemble(service, parts, Transport::Poll(io), options))
            }
            Err(NotPollable::Kind(reader, writer)) => Driver::new(service, start, reader, writer, options),
            Err(NotPollable::Failed(e)) => Err(e),
        }
    }

    fn parts(
        start: Start<P, R>,
        mailbox: Mailbox,
        tx: Sender<Input>,
        rx: Receiver<Input>,
        options: &DriverOptions,
        #[cfg(unix)] output: Option<Output>,
        #[cfg(not(unix))] _output: Option<std::convert::Infallible>,
    ) -> Parts<P, R> {
        let Start { conn, epoch, unread } = start;
        // Callers lead on the client side only (see `lead`).
        let lead = Arc::new(Lead::new(R::SIDE == Side::Client));
        let mailbox = mailbox.with_lead(lead.clone());
        let (commands, commands_rx) = mpsc::channel();
        let backlog = Arc::new(Backlog::new(options.max_buffered, mailbox.clone()));
        let shared = Arc::new(Shared { negotiated: Mutex::new(None), closed: Mutex::new(None), backlog });
        let tracer = Tracer::new(R::SIDE, options.trace_payloads);
        #[cfg(unix)]
        let core = Arc::new(Core::new(conn, output, tracer));
        #[cfg(not(unix))]
        let core = Arc::new(Core::new(conn, tracer));
        let link = Link { mailbox, commands, shared, core, epoch, lead };
        Parts { rx, tx, commands: commands_rx, link, unread }
    }

    fn assemble(
        service: Arc<dyn Service<P, R>>,
        parts: Parts<P, R>,
        transport: Transport,
        options: DriverOptions,
    ) -> (Driver<P, R>, Link<P, R>) {
        let Parts { rx, commands, link, unread, .. } = parts;
        let mut inputs = VecDeque::new();
        if !unread.is_empty() {
            let len = unread.len();
            inputs.push_back((unread, len));
        }
        let driver = Driver {
            core: link.core.clone(),
            epoch: link.epoch,
            rx,
            commands,
            link: link.clone(),
            service,
            pool: Pool::new(options.max_handlers, "acp-handler"),
            ordered: None,
            transport,
            inputs,
            fed: 0,
            eof: false,
            output_open: true,
            writer_busy: false,
            spare: Vec::new(),
            events: Vec::new(),
            happened: Vec::new(),
            core_timeout: None,
            queued: 0,
            linger: None,
            held: VecDeque::new(),
            closed: false,
            flush_deadline: None,
            error: None,
            options,
        };
        (driver, link)
    }

    fn now(&self) -> Instant {
        Instant::from_std(self.epoch, StdInstant::now())
    }

    /// The connection. Never held across a call that locks it again.
    fn conn(&self) -> MutexGuard<'_, Connection<R, P>> {
        lock(&self.core.conn)
    }

    /// The connection's tracing state. Never held across a call that locks anything.
    fn tracer(&self) -> MutexGuard<'_, Tracer> {
        lock(&self.core.tracer)
    }

    /// Whether a batch is being written: by the writer thread, or partly out in the poll
    /// transport's output (a thread's write under way, not yet partial, does not count: its
    /// thread wakes the driver if it leaves one partly out).
    fn output_busy(&self) -> bool {
        self.writer_busy || self.core.partial.load(Ordering::Acquire)
    }

    fn to_std(&self, t: Instant) -> Option<StdInstant> {
        self.epoch.checked_add(Duration::from_nanos(t.as_nanos()))
    }

    /// Runs until the connection is closed and its last frames are written (or the flush
    /// timeout passed). Returns the I/O error that ended the connection, if one did. On the
    /// client side the thread parks while callers lead (see [`lead`]).
    pub(crate) fn run(self) -> Option<io::Error> {
        let lead = self.link.lead.clone();
        // However the thread ends (also by a panic), callers stop waiting for it to park.
        let _end = lead::EndOnDrop(&lead);
        let scope = self.tracer().scope();
        let mut driver = Box::new(self);
        scope.in_scope(|| {
            loop {
                driver.pump();
                if driver.finished() {
                    break;
                }
                if lead.should_park() {
                    let next = driver.wait_time();
                    driver = lead.park(driver, next);
                    continue;
                }
                if !driver.wait_once() {
                    break;
                }
            }
            driver.error.take()
        })
    }

    /// Drives for a caller until `ready()` (see [`lead`]). Returns whether the driver is
    /// done (closed and flushed, or no input can come): its thread ends it.
    fn lead(&mut self, ready: &mut dyn FnMut() -> bool) -> bool {
        loop {
            self.pump();
            if self.finished() {
                return true;
            }
            if ready() {
                return false;
            }
            if !self.wait_once() {
                return true;
            }
        }
    }

    /// Waits once for something to do (until the next deadline at the latest) and takes what
    /// happened, then what else the channel holds (up to [`INPUT_BATCH`]). Returns false when
    /// no input can ever come again.
    fn wait_once(&mut self) -> bool {
        let read = self.inputs.is_empty() && self.link.shared.backlog.has_room();
        let wait = self.wait_time();
        let writing = self.output_busy();
        let mut happened = std::mem::take(&mut self.happened);
        if !self.transport.wait(&self.rx, read, writing, wait, &mut happened) {
            return false;
        }
        let mut taken = 0;
        for input in happened.drain(..) {
            self.on_input(input);
            taken += 1;
        }
        self.happened = happened;
        while taken <= INPUT_BATCH {
            let Ok(input) = self.rx.try_recv() else { break };
            self.on_input(input);
            taken += 1;
        }
        self.expire_held();
        true
    }

    /// Whether a leader that leaves must hand over to the driver thread at once rather than
    /// within a park period: work is left that only waiting on the transport moves on.
    fn needs_its_thread(&self) -> bool {
        let soon = self.wait_time().is_some_and(|d| d < lead::PARK);
        self.closed
            || self.eof
            || soon
            || self.queued > 0
            || self.output_busy()
            || !self.inputs.is_empty()
            || !self.held.is_empty()
            || self.linger.is_some()
    }

    fn finished(&self) -> bool {
        if !self.closed {
            return false;
        }
        // Waits for a thread's write under way, so that its batch is not cut off.
        #[cfg(unix)]
        let writing = lock(&self.core.output).as_ref().is_some_and(Output::busy);
        #[cfg(not(unix))]
        let writing = false;
        let flushed = !writing && !self.output_busy() && self.conn().bytes_queued() == 0;
        let gave_up = self.flush_deadline.is_some_and(|d| StdInstant::now() >= d);
        self.closed && (flushed || !self.output_open || gave_up)
    }

    /// How long to wait for input: until the core's next deadline, a held request's deadline,
    /// the end of the flush period or of the lingering, whichever comes first.
    /// The core's timer and queued bytes are those the last pass noted (see [`step`]).
    fn wait_time(&self) -> Option<Duration> {
        let held = self.held.iter().filter_map(|r| r.deadline);
        let core = self.core_timeout.and_then(|t| self.to_std(t));
        let linger = self.linger.filter(|_| !self.output_busy() && self.queued > 0);
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
                self.output_open = false;
                if !self.closed {
                    let now = self.now();
                    let mut conn = self.conn();
                    // After the peer's end of input, a broken pipe only says it left.
                    let left = acp_runtime::peer_left(conn.input_ended(), &e);
                    conn.close(now);
                    drop(conn);
                    if !left {
                        self.error.get_or_insert(e);
                    }
                }
            }
            #[cfg(unix)]
            Input::Writable => {
                let wrote = lock(&self.core.output).as_mut().map(|out| out.flush(&self.core.partial));
                if let Some(Wrote::Failed(e)) = wrote {
                    self.on_input(Input::WriteFailed(e));
                }
            }
            Input::Wake => {}
            Input::Queued { linger: true } => {
                self.sync_linger();
                if !self.output_busy() && self.linger.is_none() {
                    self.set_linger(StdInstant::now().checked_add(LINGER));
                }
            }
            // A request: written at once.
            Input::Queued { linger: false } => self.set_linger(None),
            Input::Command => {
                while let Ok(command) = self.commands.try_recv() {
                    self.on_command(command);
                }
            }
        }
    }

    fn on_command(&mut self, command: Command<P, R>) {
        let now = self.now();
        match command {
            Command::Request { request, deadline, reply } => {
                self.send(Outgoing { request, deadline, reply });
                self.core.detour.fetch_sub(1, Ordering::AcqRel);
            }
            Command::CancelTurn { session, reply, client } => {
                let result = R::client(&mut self.conn(), client).cancel_turn(now, &session);
                let _ = reply.send(result.map(drop).map_err(Error::from));
            }
            Command::AbandonTurns(client) => {
                self.core.detour.fetch_sub(1, Ordering::AcqRel);
                let abandoned: Vec<SessionId> = lock(&self.core.calls)
                    .values()
                    .filter_map(|pending| match pending {
                        Pending::Turn { session, sink } if sink.receiver_gone() => Some(session.clone()),
                        _ => None,
                    })
                    .collect();
                for session in abandoned {
                    // The agent still answers the prompt (`cancelled`); the updates in between
                    // are dropped with the turn's inbox.
                    let _ = R::client(&mut self.conn(), client).cancel_turn(now, &session);
                }
            }
            Command::Close => {
                self.conn().close(now);
                self.core.detour.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    /// Starts (`Some`) or ends the wait for more notifications before writing; a request
    /// queued by a thread while the driver lingers wakes it (see [`Core::lingering`]).
    fn set_linger(&mut self, until: Option<StdInstant>) {
        self.linger = until;
        self.core.lingering.store(until.is_some(), Ordering::Release);
    }

    /// A thread that wrote the queued frames itself ended the linger (see `output`).
    fn sync_linger(&mut self) {
        if self.linger.is_some() && !self.core.lingering.load(Ordering::Acquire) {
            self.linger = None;
        }
    }

    /// A held request whose deadline passed never reached the core: it times out here.
    fn expire_held(&mut self) {
        let now = StdInstant::now();
        let expired = |r: &Outgoing<P, R>| r.deadline.is_some_and(|d| d <= now);
        if !self.held.iter().any(expired) {
            return;
        }
        let (gone, kept): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.held).into_iter().partition(expired);
        self.held = kept;
        self.core.detour.fetch_sub(gone.len(), Ordering::AcqRel);
        for outgoing in gone {
            outgoing.reply.fail(Error::TimedOut);
        }
    }

    fn dispatch(&mut self, event: Event<P>) {
        match event {
            Event::Request(request) => {
                let gate = self.service.turn_gate(&self.link, request.request());
                let id = request.id();
                self.spawn_on_pool(id, gate, move |service, link, cancel| service.request(link, cancel, request));
            }
            Event::Notification { notification, turn } => {
                if let Some(notification) = self.service.route(&self.link, notification, turn) {
                    self.run_ordered(notification);
                }
            }
            Event::Cancelled { id, reason } => {
                if let Some(token) = lock(&self.core.running).get(&id) {
                    token.cancel(reason);
                }
            }
            Event::Outcome { id, outcome } => {
                // `calls` is let go before the caller is woken: its next request locks it.
                let pending = lock(&self.core.calls).remove(&id);
                match pending {
                    Some(Pending::Once(tx)) => drop(tx.send(Ok(outcome))),
                    Some(Pending::Turn { sink, .. }) => drop(sink.push_last(TurnItem::End(outcome))),
                    None => {}
                }
            }
            #[cfg(feature = "unstable_protocol_v2")]
            Event::TurnEnded { session, reason, .. } => self.service.turn_ended(session, reason),
            Event::HandshakeCompleted(negotiated) => *lock(&self.link.shared.negotiated) = Some(negotiated),
            Event::Closed { reason } => self.on_closed(reason),
            _ => {}
        }
    }

    /// The core reported `Closed` (also published early by the pass: see `step`).
    fn on_closed(&mut self, reason: acp_proto::CloseReason) {
        *lock(&self.link.shared.closed) = Some(reason);
        if !self.closed {
            self.closed = true;
            self.flush_deadline = StdInstant::now().checked_add(self.options.flush_timeout);
        }
        lock(&self.core.running).clear();
        // Threads waiting for room learn that nothing more will be sent.
        self.core.signal_drained();
    }

    /// Runs the handler `job` of inbound request `id` on the pool, with the request's
    /// cancellation token (registered while it runs); after `gate`, when there is one.
    fn spawn_on_pool(
        &mut self,
        id: InboundId,
        gate: Option<Receiver<()>>,
        job: impl FnOnce(&dyn Service<P, R>, &Link<P, R>, &CancelToken) + Send + 'static,
    ) {
        let cancel = CancelToken::new();
        lock(&self.core.running).insert(id, cancel.clone());
        let (service, link, scope) = (self.service.clone(), self.link.clone(), self.tracer().scope());
        self.pool.execute(Box::new(move || {
            if let Some(gate) = gate {
                // Err: the turn was dropped unread, so there is nothing to stay behind.
                let _ = gate.recv();
            }
            scope.in_scope(|| job(&*service, &link, &cancel))
        }));
    }

    /// Runs a notification handler on the ordered notification thread.
    fn run_ordered(&mut self, notification: P::Notification) {
        if self.ordered.is_none() {
            let (sink, jobs) = inbox(self.link.shared.backlog.clone());
            if spawn_ordered(jobs, "acp-notifications").is_err() {
                return;
            }
            self.ordered = Some(sink);
        }
        let (service, link, scope) = (self.service.clone(), self.link.clone(), self.tracer().scope());
        if let Some(ordered) = &self.ordered {
            ordered.push(Box::new(move || scope.in_scope(|| service.notification(&link, notification))));
        }
    }
}

impl<P: Version, R: Role> Drop for Driver<P, R> {
    /// However the driver ends (also by a panic), nothing waits for it any more: the core is
    /// closed (later sends fail with `ConnectionClosed`), every reply slot still registered is
    /// dropped (its caller sees the connection closed), and threads waiting for room go on.
    fn drop(&mut self) {
        let now = self.now();
        let mut conn = self.conn();
        if !conn.is_closed() {
            conn.close(now);
        }
        let calls = std::mem::take(&mut *lock(&self.core.calls));
        // The output goes with the driver: the peer sees the end of its input.
        #[cfg(unix)]
        let output = lock(&self.core.output).take();
        drop(conn);
        drop(calls);
        #[cfg(unix)]
        drop(output);
        self.core.drained.notify_all();
    }
}
