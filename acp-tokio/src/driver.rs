//! The connection driver: one task owns the [`Connection`] and the transport.
//!
//! Shaped like quinn's `ConnectionDriver`: a hand-written future whose `poll` feeds every ready
//! input into the core, writes what the core produced, dispatches its events and sleeps until its
//! next deadline. Inputs are the bytes of the reader, the commands of the handles and handlers (one
//! channel for the application, one for handlers and their completions) and the timer.
//!
//! * **Reading** uses one buffer. The core may consume only part of it (`wants_input()` turned
//!   false): the rest is kept and fed again after the events are drained; nothing is dropped.
//! * **Writing** takes one batch from `poll_transmit` (the core hands over its whole queue) into one
//!   reused buffer and writes it, keeping the unwritten tail across `Pending`, then flushes once per
//!   batch. While a batch is being written the core keeps the newer frames, so its outbound budget
//!   (and [`Connection::can_send`]) reflects a slow peer.
//! * **Backpressure**: requests and notifications of handlers that the core refuses for
//!   backpressure come back from it ([`acp_proto::Refused`]) and are *held*, in order; their
//!   futures wait for the ack, so memory does not grow with the number of sends.
//!   Handlers' answers wait in the same queue (in order behind the sends they made), so the
//!   core's queued output stays within its bound plus one frame; while it is full the core
//!   dispatches no new request, so the answers held are those of requests already running.
//!   Deliveries to bounded consumers (a prompt turn's stream, the notification worker) that are
//!   full stall the event queue; the core then stops consuming input, and the peer's sends wait.
//! * **Time**: the clock is read before sleeping; the timer is re-armed only when the core's
//!   deadline changes.
//! * **Fairness**: after `budget` rounds with progress the driver yields.
//! * **The end of input** goes to the core, which half-closes (acp-proto's `half_close`): the
//!   driver keeps running the handlers and writing until the core reports `Closed` (every
//!   answer owed given, or its grace passed), then flushes and finishes. A write that fails
//!   after the end of input with a broken pipe only says the peer left
//!   ([`acp_runtime::peer_left`]): the connection closes without an error.
//!
//! The driver never awaits a handler: handlers are spawned tasks (`Send` or local, chosen by
//! [`Handlers`]) that report back through the command channel.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use acp_proto::role::{self, Role};
use acp_proto::types::SessionId;
use acp_proto::{
    Answer, Config, Connection, Event, InboundId, InboundRequest, Instant, OutboundId, Outcome, Refused, SendError,
    TurnStamp,
};
use tokio::sync::{mpsc, oneshot};

use crate::Error;
use crate::context::HandlerContext;
use crate::handle::{Command, Done, DriverStats, Handle, RequestCommand, Shared};
use crate::io::{ReadBytes, WriteBytes};
use crate::runtime::Runtime;
use crate::sync::{CancellationToken, QueueReceiver, QueueSender, lock, queue};
use crate::version::{Inbound, TurnItem, Version};
use acp_runtime::trace::Tracer;

/// While handlers keep sending, the driver lets them queue more before it writes, up to this
/// many bytes...
const COALESCE_BYTES: usize = 32 * 1024;
/// ...or this many consecutive deferrals.
const MAX_DEFERRALS: u32 = 64;

/// How the driver runs the handlers of a connection speaking `P`: on a `Send` task or a local
/// one. One implementation per handler trait (`Agent`, `LocalAgent`, `Client`, `LocalClient`,
/// and v2's); the driver is written once.
pub(crate) trait Handlers<P: Version, R: Role>: Unpin + 'static {
    /// Spawns the handler of one inbound request; it reports through `done`. With a `gate`,
    /// the handler starts once the gate opens (see [`TurnItem::Gate`]).
    fn spawn_request<Rt: Runtime>(
        &self,
        rt: &Rt,
        request: InboundRequest<P>,
        cx: HandlerContext<P, R>,
        done: Done<P, R>,
        gate: Option<oneshot::Receiver<()>>,
    );
    /// Spawns the task that handles inbound notifications (and the core's other news for the
    /// application), one at a time, in order.
    fn spawn_notifications<Rt: Runtime>(&self, rt: &Rt, queue: QueueReceiver<Inbound<P>>);
}

/// Where a client connection's driver `D` runs, by its handler trait: on a task of the runtime
/// for a `Send` trait, on a local task of the current thread for a local one.
pub(crate) trait DriverTask<D> {
    /// Spawns `driver`, detached.
    fn spawn_driver<Rt: Runtime>(rt: &Rt, driver: D);
}

/// The driver's settings.
pub(crate) struct DriverOptions {
    pub(crate) config: Config,
    pub(crate) read_buffer: usize,
    pub(crate) budget: u32,
    pub(crate) notification_buffer: usize,
    pub(crate) trace_payloads: bool,
}

/// A request sent and awaiting its outcome.
struct Pending<P: Version> {
    token: u64,
    reply: oneshot::Sender<Result<Outcome<P>, Error>>,
}

/// A turn this client reads: the prompt that opened it (the core's turn id, and the token of
/// the handle that waits for it) and where its items go.
struct OpenTurn<P: Version, R: Role> {
    turn: OutboundId,
    token: u64,
    items: QueueSender<TurnItem<P>>,
    /// Only a client reads turns.
    client: R::ClientOnly,
}

/// A send (or a handler's answer) held while the outbound budget is full.
pub(crate) enum Held<P: Version, R: Role> {
    Request(Box<RequestCommand<P, R>>, Option<Instant>),
    Notify(Box<R::Notification<P>>, oneshot::Sender<Result<(), Error>>),
    /// A finished handler's answer: it waits, in order behind the handler's earlier sends,
    /// until the peer has read enough (the core itself never refuses an answer).
    Complete(Box<Answer<R, P>>),
}

/// A client's driver.
pub(crate) type ClientDriver<P, Rt, H, Rd, Wr> = Driver<P, role::Client, Rt, H, Rd, Wr>;

/// The future that drives one connection; see the [module docs](self).
pub(crate) struct Driver<P: Version, R: Role, Rt: Runtime, H, Rd, Wr> {
    rt: Rt,
    conn: Connection<R, P>,
    /// The runtime instant that maps onto the core's `Instant::ZERO`.
    epoch: std::time::Instant,
    handlers: H,
    reader: Option<Rd>,
    writer: Option<Wr>,
    /// Read buffer; `input[start..end]` was read but not yet consumed by the core.
    input: Box<[u8]>,
    start: usize,
    end: usize,
    /// The batch being written; `output[written..]` is still to write.
    output: Vec<u8>,
    written: usize,
    unflushed: bool,
    app: Option<mpsc::UnboundedReceiver<Command<P, R>>>,
    internal: mpsc::UnboundedReceiver<Command<P, R>>,
    /// Closes the connection once its sender is gone (whoever awaited the driver went away).
    stop: Option<oneshot::Receiver<()>>,
    /// A handle on the internal channel, for handler contexts.
    handle: Handle<P, R>,
    timer: Option<Rt::Timer>,
    armed: Option<Instant>,
    inbound: HashMap<InboundId, CancellationToken>,
    pending: HashMap<OutboundId, Pending<P>>,
    tokens: HashMap<u64, OutboundId>,
    /// The open turns this client reads, by session. A turn whose stream was dropped is no
    /// longer here; in v2 it stays open in the core until it ends, and a new prompt of its
    /// session is refused until then (it would join that turn).
    turns: HashMap<SessionId, OpenTurn<P, R>>,
    held: VecDeque<Held<P, R>>,
    notifications: Option<QueueSender<Inbound<P>>>,
    /// An event whose consumer was full; dispatched before any other.
    stalled: Option<Event<P>>,
    saw_closed: bool,
    acked: bool,
    deferrals: u32,
    budget: u32,
    error: Option<io::Error>,
    stats: DriverStats,
    tracer: Tracer,
}

impl<P: Version, Rt: Runtime, H: Handlers<P, role::Agent>, Rd: ReadBytes, Wr: WriteBytes>
    Driver<P, role::Agent, Rt, H, Rd, Wr>
{
    /// An agent's driver over `reader`/`writer`, for `conn` (new, or handed on by an
    /// [`Acceptor`](acp_proto::Acceptor) with the bytes it read but did not consume in
    /// `unread`). Nothing but the peer and [`stop_with`](Self::stop_with) closes it.
    pub(crate) fn serving(
        rt: Rt,
        epoch: std::time::Instant,
        conn: Connection<role::Agent, P>,
        handlers: H,
        (reader, writer): (Rd, Wr),
        options: DriverOptions,
        unread: &[u8],
    ) -> Driver<P, role::Agent, Rt, H, Rd, Wr> {
        let mut driver = Driver::with_connection(rt, conn, handlers, (reader, writer), options, None);
        driver.epoch = epoch;
        if !unread.is_empty() {
            if driver.input.len() < unread.len() {
                driver.input = vec![0; unread.len()].into_boxed_slice();
            }
            driver.input[..unread.len()].copy_from_slice(unread);
            driver.end = unread.len();
        }
        driver
    }
}

impl<P: Version, Rt: Runtime, H: Handlers<P, role::Client>, Rd: ReadBytes, Wr: WriteBytes>
    Driver<P, role::Client, Rt, H, Rd, Wr>
{
    /// A client's driver over `reader`/`writer`, and the application's handle: the connection
    /// closes once every clone of it is dropped.
    pub(crate) fn client(
        rt: Rt,
        handlers: H,
        (reader, writer): (Rd, Wr),
        options: DriverOptions,
    ) -> (Self, Handle<P, role::Client>) {
        let conn = Connection::new(options.config.clone(), Instant::ZERO);
        let (tx, rx) = mpsc::unbounded_channel();
        let driver = Driver::with_connection(rt, conn, handlers, (reader, writer), options, Some(rx));
        let handle = Handle { tx, shared: driver.handle.shared.clone() };
        (driver, handle)
    }
}

impl<P: Version, R: Role, Rt: Runtime, H: Handlers<P, R>, Rd: ReadBytes, Wr: WriteBytes> Driver<P, R, Rt, H, Rd, Wr> {
    pub(crate) fn with_connection(
        rt: Rt,
        conn: Connection<R, P>,
        handlers: H,
        (reader, writer): (Rd, Wr),
        options: DriverOptions,
        app: Option<mpsc::UnboundedReceiver<Command<P, R>>>,
    ) -> Driver<P, R, Rt, H, Rd, Wr> {
        let shared = Shared::new();
        let (internal_tx, internal) = mpsc::unbounded_channel();
        let handle = Handle { tx: internal_tx, shared };
        let (notifications, worker_queue) = queue(options.notification_buffer);
        handlers.spawn_notifications(&rt, worker_queue);
        let side = conn.side();
        Driver {
            conn,
            epoch: rt.now(),
            handlers,
            reader: Some(reader),
            writer: Some(writer),
            input: vec![0; options.read_buffer.max(1)].into_boxed_slice(),
            start: 0,
            end: 0,
            output: Vec::new(),
            written: 0,
            unflushed: false,
            app,
            internal,
            stop: None,
            handle,
            timer: None,
            armed: None,
            inbound: HashMap::new(),
            pending: HashMap::new(),
            tokens: HashMap::new(),
            turns: HashMap::new(),
            held: VecDeque::new(),
            notifications: Some(notifications),
            stalled: None,
            saw_closed: false,
            acked: false,
            deferrals: 0,
            budget: options.budget.max(1),
            error: None,
            stats: DriverStats::default(),
            tracer: Tracer::new(side, options.trace_payloads),
            rt,
        }
    }
    fn now(&self) -> Instant {
        Instant::from_std(self.epoch, self.rt.now())
    }

    /// Makes the connection close once `stop`'s sender is dropped.
    pub(crate) fn stop_with(&mut self, stop: oneshot::Receiver<()>) {
        self.stop = Some(stop);
    }

    fn shared(&self) -> &Arc<Shared> {
        &self.handle.shared
    }

    fn poll_rounds(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        for _ in 0..self.budget {
            let now = self.now();
            let mut progress = self.drive_commands(cx, now);
            progress |= self.retry_held(now);
            progress |= self.drive_input(cx, now);
            progress |= self.drive_events(cx);
            if self.acked
                && self.deferrals < MAX_DEFERRALS
                && self.conn.bytes_queued() < COALESCE_BYTES
                && !self.conn.is_closed()
            {
                // The handlers whose sends were just acked are runnable: let them queue more
                // before this batch goes out, so a stream of updates is written in few batches.
                self.acked = false;
                self.deferrals += 1;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.acked = false;
            progress |= self.drive_transmit(cx, now);
            progress |= self.drive_timer(cx, now);
            if self.saw_closed && self.stalled.is_none() && self.output_drained() {
                return self.poll_finish(cx);
            }
            if !progress {
                return Poll::Pending;
            }
        }
        // Budget spent: yield so other tasks on this worker run.
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    // ---- commands -------------------------------------------------------------------------

    fn drive_commands(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let mut progress = false;
        if let Some(stop) = &mut self.stop
            && Pin::new(stop).poll(cx).is_ready()
        {
            self.stop = None;
            self.conn.close(now);
            progress = true;
        }
        // Completions and handler sends first: they free memory and unblock the peer.
        for _ in 0..self.budget * 4 {
            match self.internal.poll_recv(cx) {
                Poll::Ready(Some(command)) => {
                    self.apply(command, now);
                    progress = true;
                }
                _ => break,
            }
        }
        for _ in 0..self.budget * 4 {
            let Some(app) = &mut self.app else { break };
            match app.poll_recv(cx) {
                Poll::Ready(Some(command)) => {
                    self.apply(command, now);
                    progress = true;
                }
                Poll::Ready(None) => {
                    // Every application handle is gone: nobody can use the connection any more.
                    self.app = None;
                    self.conn.close(now);
                    progress = true;
                }
                Poll::Pending => break,
            }
        }
        progress
    }

    fn apply(&mut self, command: Command<P, R>, now: Instant) {
        match command {
            Command::Complete(answer) => {
                self.inbound.remove(&answer.id());
                self.send_or_hold(now, Held::Complete(answer));
            }
            Command::Request(request) => {
                let deadline = request.timeout.map(|t| now + t);
                self.send_or_hold(now, Held::Request(request, deadline));
            }
            Command::Notify { notification, ack } => self.send_or_hold(now, Held::Notify(notification, ack)),
            Command::Abandon { token } => self.abandon(now, token),
            Command::CancelTurn { session, ack, client } => {
                let cancelled = R::client(&mut self.conn, client).cancel_turn(now, &session);
                let _ = ack.send(cancelled.map(|_| ()).map_err(Error::from));
            }
            Command::Close => self.conn.close(now),
        }
    }

    fn respond(&mut self, now: Instant, answer: Answer<R, P>) {
        // A permission option never offered is answered `cancelled` by the core itself; the
        // mistake is traced.
        let id = answer.id();
        if let Err(error) = self.conn.respond(now, answer) {
            self.tracer.respond_refused(id, &error);
        }
    }

    fn send_or_hold(&mut self, now: Instant, send: Held<P, R>) {
        if !self.held.is_empty() {
            self.held.push_back(send);
        } else if let Some(back) = self.try_send(now, send) {
            self.held.push_back(back);
        }
    }

    /// Sends held requests, notifications and answers, in order, while the core takes them.
    fn retry_held(&mut self, now: Instant) -> bool {
        let mut progress = false;
        while let Some(send) = self.held.pop_front() {
            if let Some(back) = self.try_send(now, send) {
                self.held.push_front(back);
                break;
            }
            progress = true;
        }
        progress
    }

    /// Whether the core takes application sends now (a closed core refuses them at once, so
    /// they do not wait either).
    fn admits_sends(&self) -> bool {
        self.conn.can_send() || self.conn.is_closed()
    }

    /// Hands a send to the core; gives it back when the core has no room for it now
    /// ([`SendError::Backpressure`] hands the message back), to wait in `held`. An answer is
    /// never refused by the core, so it is held here while the output is full: the output then
    /// exceeds its bound by at most one frame.
    fn try_send(&mut self, now: Instant, send: Held<P, R>) -> Option<Held<P, R>> {
        match send {
            Held::Complete(answer) => {
                if !self.admits_sends() {
                    return Some(Held::Complete(answer));
                }
                self.respond(now, *answer);
            }
            Held::Notify(notification, ack) => match self.conn.send_notification(now, *notification) {
                Err(Refused { error: SendError::Backpressure { .. }, message }) => {
                    return Some(Held::Notify(Box::new(message), ack));
                }
                result => {
                    let result = result.map_err(Error::from);
                    self.acked |= result.is_ok();
                    let _ = ack.send(result);
                }
            },
            Held::Request(command, deadline) => return self.send_request(now, *command, deadline),
        }
        None
    }

    fn send_request(
        &mut self,
        now: Instant,
        command: RequestCommand<P, R>,
        deadline: Option<Instant>,
    ) -> Option<Held<P, R>> {
        let RequestCommand { token, request, timeout, reply, turn } = command;
        if let Some(t) = &turn
            && (self.turns.contains_key(&t.session) || P::turn_open(R::client(&mut self.conn, t.client), &t.session))
        {
            // This client reads that session's turn already (one stream per turn), or (v2) the
            // core has one open that no stream reads (dropped, or opened by a plain `request`):
            // the prompt would join it, and its stream would miss the turn's start.
            let error = SendError::TurnAlreadyRunning(t.session.clone());
            let _ = reply.send(Err(Error::from(error.clone())));
            if let Some(t) = turn {
                let _ = t.accepted.send(Err(Error::from(error)));
            }
            return None;
        }
        match self.conn.send_request(now, request, deadline) {
            Ok(id) => {
                if let Some(t) = turn {
                    let _ = t.accepted.send(Ok(()));
                    let open = OpenTurn { turn: id, token, items: t.updates, client: t.client };
                    self.turns.insert(t.session, open);
                }
                self.tokens.insert(token, id);
                self.pending.insert(id, Pending { token, reply });
            }
            Err(Refused { error: SendError::Backpressure { .. }, message }) => {
                let command = RequestCommand { token, request: message, timeout, reply, turn };
                return Some(Held::Request(Box::new(command), deadline));
            }
            Err(refused) => {
                if let Some(t) = turn {
                    let _ = t.accepted.send(Err(Error::from(refused.error.clone())));
                }
                let _ = reply.send(Err(Error::from(refused.error)));
            }
        }
        None
    }

    /// The future awaiting request `token` (or the stream of the turn it opened) was dropped.
    fn abandon(&mut self, now: Instant, token: u64) {
        // A turn is stopped with `session/cancel`; the agent still ends it (v1: answers the
        // prompt `cancelled`; v2: reports `idle`), and the updates in between are dropped.
        let turn = self.turns.iter().find(|(_, t)| t.token == token).map(|(session, t)| (session.clone(), t.client));
        if let Some((session, client)) = turn {
            self.turns.remove(&session);
            let _ = R::client(&mut self.conn, client).cancel_turn(now, &session);
            return;
        }
        match self.tokens.remove(&token) {
            Some(id) => {
                self.conn.cancel_request(now, id);
            }
            // Not sent yet (held), or already finished.
            None => self.held.retain(|h| !matches!(h, Held::Request(r, _) if r.token == token)),
        }
    }

    // ---- input ----------------------------------------------------------------------------

    fn drive_input(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        if self.conn.is_closed() {
            self.reader = None;
            self.start = 0;
            self.end = 0;
            return false;
        }
        let mut progress = self.feed(now);
        if self.start < self.end || !self.conn.wants_input() {
            return progress;
        }
        let Some(reader) = &mut self.reader else { return progress };
        match reader.poll_read_bytes(cx, &mut self.input) {
            Poll::Ready(Ok(0)) => {
                self.reader = None;
                self.conn.handle_eof(now);
                progress = true;
            }
            Poll::Ready(Ok(n)) => {
                self.stats.reads += 1;
                self.start = 0;
                self.end = n;
                self.feed(now);
                progress = true;
            }
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => progress = true,
            Poll::Ready(Err(e)) => {
                self.reader = None;
                self.error.get_or_insert(e);
                self.conn.handle_eof(now);
                progress = true;
            }
            Poll::Pending => {}
        }
        progress
    }

    /// Feeds the unconsumed input to the core; returns whether it took any.
    fn feed(&mut self, now: Instant) -> bool {
        if self.start == self.end {
            return false;
        }
        let n = self.conn.handle_input(now, &self.input[self.start..self.end]);
        self.tracer.frames_in(&self.input[self.start..self.start + n]);
        self.start += n;
        n > 0
    }

    // ---- events ---------------------------------------------------------------------------

    fn drive_events(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progress = false;
        if let Some(event) = self.stalled.take() {
            self.stalled = self.dispatch(event, cx);
            if self.stalled.is_some() {
                return false;
            }
            progress = true;
        }
        while let Some(event) = self.conn.poll_event() {
            progress = true;
            crate::version::trace(&self.tracer, &event);
            self.stalled = self.dispatch(event, cx);
            if self.stalled.is_some() {
                break;
            }
        }
        progress
    }

    /// Dispatches one event; hands it back when its consumer is full (it is then retried first,
    /// once the consumer made room and woke the driver).
    fn dispatch(&mut self, event: Event<P>, cx: &mut Context<'_>) -> Option<Event<P>> {
        // Once closed, what is left is delivered regardless of capacity: the core's own bounds
        // cap it, and nothing may keep the driver from finishing.
        let force = self.conn.is_closed();
        match event {
            Event::Request(request) => {
                let gate = self.turn_gate(request.request(), cx);
                let id = request.id();
                let cancel = CancellationToken::new();
                self.inbound.insert(id, cancel.clone());
                let done = Done::new(id, &self.handle);
                let cx = HandlerContext { handle: self.handle.clone(), id, cancel };
                self.handlers.spawn_request(&self.rt, request, cx, done, gate);
            }
            Event::Notification { notification, turn } => return self.deliver(notification, turn, cx, force),
            Event::Cancelled { id, reason } => {
                if let Some(token) = self.inbound.get(&id) {
                    token.cancel(reason);
                }
            }
            Event::Outcome { id, outcome } => {
                if let Some(pending) = self.pending.remove(&id) {
                    self.tokens.remove(&pending.token);
                    if P::OUTCOME_ENDS_TURN {
                        // Dropping the turn's sender ends its stream; every update came before.
                        self.turns.retain(|_, t| t.turn != id);
                    }
                    let _ = pending.reply.send(Ok(outcome));
                }
            }
            #[cfg(feature = "unstable_protocol_v2")]
            Event::TurnEnded { session, turn, reason } => {
                // A turn no stream reads (dropped, or opened by a plain `request`) ends unseen.
                let sink = self.read_turn(&session, turn)?;
                return match sink.push_as(reason, TurnItem::End, cx, force) {
                    Ok(()) => {
                        self.turns.remove(&session);
                        None
                    }
                    Err(reason) => Some(Event::TurnEnded { session, turn, reason }),
                };
            }
            #[cfg(feature = "unstable_protocol_v2")]
            Event::CancelGraceExpired { session } => {
                let worker = self.notifications.as_ref()?;
                return worker
                    .push_as(session, Inbound::CancelGraceExpired, cx, force)
                    .err()
                    .map(|session| Event::CancelGraceExpired { session });
            }
            Event::HandshakeCompleted(negotiated) => {
                let _ = self.shared().negotiated.set(negotiated);
            }
            Event::Closed { reason } => {
                *lock(&self.shared().close_reason) = Some(reason);
                self.notifications = None;
                self.saw_closed = true;
            }
            _ => {}
        }
        None
    }

    /// Delivers a notification: a `session/update` of a turn this client reads to the turn,
    /// anything else to the notification worker. Hands it back when that consumer is full.
    fn deliver(
        &mut self,
        notification: P::Notification,
        turn: Option<TurnStamp>,
        cx: &mut Context<'_>,
        force: bool,
    ) -> Option<Event<P>> {
        let notification = match P::turn_update(notification) {
            Ok(update) => match turn.and_then(|stamp| self.read_turn(P::update_session(&update), stamp.turn)) {
                Some(sink) => {
                    return sink
                        .push_as(update, TurnItem::Update, cx, force)
                        .err()
                        .map(|update| Event::Notification { notification: P::from_turn_update(update), turn });
                }
                // The update of a turn whose stream was dropped.
                None if turn.is_some() => return None,
                None => P::from_turn_update(update),
            },
            Err(other) => other,
        };
        let worker = self.notifications.as_ref()?;
        worker
            .push_as(notification, Inbound::Notification, cx, force)
            .err()
            .map(|notification| Event::Notification { notification, turn })
    }

    /// Where the items of `session`'s turn `turn` go, while this client reads that turn.
    fn read_turn(&self, session: &SessionId, turn: OutboundId) -> Option<&QueueSender<TurnItem<P>>> {
        self.turns.get(session).filter(|open| open.turn == turn).map(|open| &open.items)
    }

    /// Client side: when `request` belongs to a session whose turn this client reads (a
    /// permission ask, a session-scoped elicitation) and the turn's reader has not yet taken
    /// (or is still handling) every update so far, a gate placed in the turn after them (pushed
    /// past the turn's capacity: one small item per agent request, which the core's
    /// `max_inbound` bounds).
    fn turn_gate(&self, request: &P::Request, cx: &Context<'_>) -> Option<oneshot::Receiver<()>> {
        let session = P::request_turn_session(request)?;
        let items = &self.turns.get(session)?.items;
        if items.settled() {
            return None;
        }
        let (open, gate) = oneshot::channel();
        let _ = items.push(TurnItem::Gate(open), cx, true);
        Some(gate)
    }

    // ---- output ---------------------------------------------------------------------------

    fn output_drained(&self) -> bool {
        self.writer.is_none() || (self.written == self.output.len() && self.conn.bytes_queued() == 0)
    }

    fn drive_transmit(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let Some(writer) = &mut self.writer else {
            // The transport failed: what the core still produces has nowhere to go.
            self.output.clear();
            self.written = 0;
            let _ = self.conn.poll_transmit(&mut self.output);
            self.output.clear();
            return false;
        };
        let mut progress = false;
        loop {
            if self.written == self.output.len() {
                self.output.clear();
                self.written = 0;
                if self.conn.poll_transmit(&mut self.output) == 0 {
                    break;
                }
                self.tracer.frames_out(&self.output);
                self.stats.write_batches += 1;
                self.deferrals = 0;
                progress = true;
            }
            match writer.poll_write_bytes(cx, &self.output[self.written..]) {
                Poll::Ready(Ok(0)) => return self.fail(now, io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => {
                    self.written += n;
                    self.unflushed = true;
                    progress = true;
                }
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => return self.fail(now, e),
                Poll::Pending => return progress,
            }
        }
        if self.unflushed {
            match writer.poll_flush_bytes(cx) {
                Poll::Ready(Ok(())) => {
                    self.unflushed = false;
                    self.stats.flushes += 1;
                    progress = true;
                }
                Poll::Ready(Err(e)) => return self.fail(now, e),
                Poll::Pending => {}
            }
        }
        progress
    }

    /// The transport failed: nothing more can be written, so the connection closes. After the
    /// peer's end of input, a broken pipe only says it left: not an error (`peer_left`).
    fn fail(&mut self, now: Instant, e: io::Error) -> bool {
        if !acp_runtime::peer_left(self.conn.input_ended(), &e) {
            self.error.get_or_insert(e);
        }
        self.writer = None;
        self.output.clear();
        self.written = 0;
        self.conn.close(now);
        true
    }

    /// Closed and flushed: shut the writer down (the peer sees end of input) and finish.
    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        if let Some(writer) = &mut self.writer {
            let flushed = if self.unflushed { writer.poll_flush_bytes(cx) } else { Poll::Ready(Ok(())) };
            let closed = match flushed {
                Poll::Ready(Ok(())) => writer.poll_close_bytes(cx),
                other => other,
            };
            match closed {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) if e.kind() != io::ErrorKind::BrokenPipe => {
                    self.error.get_or_insert(e);
                }
                Poll::Ready(_) => {}
            }
            self.unflushed = false;
            self.writer = None;
        }
        self.reader = None;
        Poll::Ready(match self.error.take() {
            Some(e) => Err(Error::Io(e)),
            None => Ok(()),
        })
    }

    // ---- time -----------------------------------------------------------------------------

    fn drive_timer(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let Some(deadline) = self.conn.poll_timeout() else {
            self.armed = None;
            return false;
        };
        // The clock first: a deadline already due needs no sleep.
        if deadline <= now {
            self.conn.handle_timeout(now);
            return true;
        }
        let at = deadline.to_std(self.epoch);
        if self.armed != Some(deadline) {
            match &mut self.timer {
                Some(timer) => self.rt.reset(timer, at),
                None => self.timer = Some(self.rt.timer(at)),
            }
            self.armed = Some(deadline);
        }
        let Some(timer) = &mut self.timer else { return false };
        if Pin::new(timer).poll(cx).is_ready() {
            // The runtime says the deadline passed; its clock may round, the core's must agree.
            self.conn.handle_timeout(self.now().max(deadline));
            self.armed = None;
            return true;
        }
        false
    }

    fn publish_stats(&mut self) {
        let s = &mut self.stats;
        s.core = self.conn.stats();
        s.memory_estimate = self.conn.memory_estimate();
        s.peak_memory_estimate = s.peak_memory_estimate.max(s.memory_estimate);
        s.buffered_bytes = (self.end - self.start) + (self.output.len() - self.written);
        s.peak_buffered_bytes = s.peak_buffered_bytes.max(s.buffered_bytes);
        s.held_sends = self.held.len();
        s.peak_held_sends = s.peak_held_sends.max(s.held_sends);
        *lock(&self.handle.shared.stats) = *s;
    }
}

impl<P: Version, R: Role, Rt: Runtime, H: Handlers<P, R>, Rd: ReadBytes, Wr: WriteBytes> Future
    for Driver<P, R, Rt, H, Rd, Wr>
{
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let scope = this.tracer.scope();
        let _entered = scope.enter();
        let result = this.poll_rounds(cx);
        this.publish_stats();
        if result.is_ready() {
            // After the last stats: whoever waits for the end sees the final counters.
            this.handle.shared.finished.set();
        }
        result
    }
}

impl<P: Version, R: Role, Rt: Runtime, H, Rd, Wr> Drop for Driver<P, R, Rt, H, Rd, Wr> {
    fn drop(&mut self) {
        // A driver dropped before finishing (its runtime shut down) still releases the waiters.
        self.handle.shared.finished.set();
    }
}

/// The default read buffer.
pub(crate) const DEFAULT_READ_BUFFER: usize = 64 * 1024;
/// The default fairness budget (rounds with progress per poll).
pub(crate) const DEFAULT_BUDGET: u32 = 32;
/// The default depth of the notification worker's queue.
pub(crate) const DEFAULT_NOTIFICATION_BUFFER: usize = 256;
/// The default grace period of a child process after its stdin is closed.
pub(crate) const DEFAULT_CLOSE_GRACE: Duration = Duration::from_secs(1);
