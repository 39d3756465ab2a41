//! One pass of the driver over the core, under **one hold** of the connection's mutex.
//!
//! A pass ([`Driver::step`]) locks the connection once and, while it holds it, answers the
//! core's timers, feeds the pending input, retries the held requests, takes every queued
//! event and the queued output (the batch to write), and notes the core's next timer and its
//! queued bytes for the wait that follows. Only after letting the connection go does it write
//! the batch and dispatch the events: start handlers, hand updates and outcomes to the
//! threads that wait for them. So a thread woken by the driver (a caller whose outcome
//! arrived, a handler that answers) finds the connection free instead of blocking on it at
//! once, and a round trip costs the driver one lock instead of one per kind of work.
//!
//! A pass says whether another may move more ([`Driver::step`] returns true): input left
//! that the core or the backlog did not take yet, output taken (which frees room in the core,
//! releasing deferred requests and held sends), a write that failed (the core is closed), or
//! the connection just reported closed (the lingering ends). Dispatching the events changes
//! nothing in the core, so a pass that moved nothing of that kind is the last; a thread that
//! changes the core later wakes the driver by the rules of [`output`](crate::output).

use std::sync::MutexGuard;
use std::sync::atomic::Ordering;
use std::time::Instant as StdInstant;

use acp_proto::role::Role;
use acp_proto::{Connection, Event, Instant, Refused, SendError};

use super::{Driver, LINGER_BYTES, Outgoing, Version};
use crate::link::Core;
#[cfg(unix)]
use crate::output::{Output, Wrote};
use crate::sync::lock;
use crate::transport::{Sent, Transport};

/// Output taken from the core in a pass, written once the connection is let go.
pub(super) enum Batch<'a> {
    /// The poll transport's output, locked, with the batch taken into it.
    #[cfg(unix)]
    Output(MutexGuard<'a, Option<Output>>),
    /// For the writer thread.
    Writer(Vec<u8>, std::marker::PhantomData<&'a ()>),
}

impl<P: Version, R: Role> Driver<P, R> {
    /// Moves everything that can move without waiting, in passes (see the module docs).
    pub(super) fn pump(&mut self) {
        while self.step() {}
    }

    /// One pass (see the module docs); returns whether another may move more.
    pub(super) fn step(&mut self) -> bool {
        let core = self.core.clone();
        let mut conn = lock(&core.conn);
        let now = self.now();
        conn.handle_timeout(now);
        let mut progress = self.feed(&mut conn, now);
        progress |= self.retry_held(&mut conn, now);
        while let Some(event) = conn.poll_event() {
            self.events.push(event);
        }
        progress |= !self.events.is_empty();
        // Why the connection closed is published before the outcomes it came with are routed,
        // so that a caller woken by one sees it (a v2 client's `initialize` answered by a
        // version it does not speak).
        if let Some(Event::Closed { reason }) = self.events.last() {
            *lock(&self.link.shared.closed) = Some(reason.clone());
        }
        let batch = self.take_output(&mut conn, &core);
        let mut again = progress && (!self.inputs.is_empty() || (self.eof && !conn.is_closed()));
        if batch.is_some() {
            again |= conn.has_events() || !self.held.is_empty() || conn.bytes_queued() > 0;
        }
        // For the wait: published under the connection, so that a sending thread that adds
        // an earlier timer wakes the driver (see `output`).
        self.core_timeout = conn.poll_timeout();
        self.core.sleeps_until.store(self.core_timeout.map_or(u64::MAX, Instant::as_nanos), Ordering::Relaxed);
        self.queued = conn.bytes_queued();
        drop(conn);
        if let Some(batch) = batch {
            // Room in the budget again: threads waiting to send go on.
            self.core.signal_drained();
            again |= self.write(batch);
        }
        let was_closed = self.closed;
        let mut events = std::mem::take(&mut self.events);
        for event in events.drain(..) {
            self.tracer().event(&event);
            self.dispatch(event);
        }
        self.events = events;
        again || self.closed != was_closed
    }

    /// Feeds pending input while the core and the application backlog take it.
    fn feed(&mut self, conn: &mut Connection<R, P>, now: Instant) -> bool {
        let mut progress = false;
        while self.link.shared.backlog.has_room()
            && conn.wants_input()
            && let Some((buf, len)) = self.inputs.front()
        {
            let chunk = &buf[self.fed..*len];
            let n = conn.handle_input(now, chunk);
            self.tracer().frames_in(&chunk[..n]);
            self.fed += n;
            progress |= n > 0;
            if self.fed < *len {
                // The core stopped taking input: its events go first, then the rest.
                break;
            }
            if let Some((buf, _)) = self.inputs.pop_front() {
                self.fed = 0;
                self.transport.recycle(buf);
            }
        }
        if self.eof && self.inputs.is_empty() && !conn.is_closed() {
            conn.handle_eof(now);
            self.eof = false;
            progress = true;
        }
        progress
    }

    /// Hands a send to the core; gives it back when the outbound budget is used up (the core
    /// hands a request refused for backpressure back), to wait in `held`.
    fn try_send(
        &mut self,
        conn: &mut Connection<R, P>,
        now: Instant,
        outgoing: Outgoing<P, R>,
    ) -> Option<Outgoing<P, R>> {
        let Outgoing { request, deadline, reply } = outgoing;
        self.set_linger(None);
        let deadline = deadline.map(|d| Instant::from_std(self.epoch, d));
        match conn.send_request(now, request, deadline) {
            Ok(id) => {
                // Registered before the connection is let go, as a sending thread does.
                lock(&self.core.calls).insert(id, reply.accepted());
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
    pub(super) fn send(&mut self, outgoing: Outgoing<P, R>) {
        let held = if !self.held.is_empty() {
            Some(outgoing)
        } else {
            let core = self.core.clone();
            let now = self.now();
            self.try_send(&mut lock(&core.conn), now, outgoing)
        };
        if let Some(outgoing) = held {
            // Requests from other threads go behind it (see `Core::detour`).
            self.core.detour.fetch_add(1, Ordering::AcqRel);
            self.held.push_back(outgoing);
        }
    }

    fn retry_held(&mut self, conn: &mut Connection<R, P>, now: Instant) -> bool {
        let mut progress = false;
        while let Some(outgoing) = self.held.pop_front() {
            if let Some(back) = self.try_send(conn, now, outgoing) {
                self.held.push_front(back);
                break;
            }
            self.core.detour.fetch_sub(1, Ordering::AcqRel);
            progress = true;
        }
        progress
    }

    /// Takes the queued frames as the next batch when the output is idle and no lingering
    /// holds them back.
    fn take_output<'a>(&mut self, conn: &mut Connection<R, P>, core: &'a Core<P, R>) -> Option<Batch<'a>> {
        let queued = conn.bytes_queued();
        if queued == 0 || self.output_busy() {
            return None;
        }
        self.sync_linger();
        if let Some(until) = self.linger {
            let more_may_come = !self.closed && queued < LINGER_BYTES;
            if more_may_come && StdInstant::now() < until {
                return None;
            }
            self.set_linger(None);
        }
        #[cfg(unix)]
        if matches!(self.transport, Transport::Poll(_)) {
            // As a sending thread does (see `output`): taken with the connection locked,
            // written after it is let go.
            let mut output = lock(&core.output);
            output.as_mut().filter(|out| !out.busy())?.take_queued(conn, core);
            return Some(Batch::Output(output));
        }
        let _ = core;
        let mut batch = std::mem::take(&mut self.spare);
        let _ = conn.poll_transmit(&mut batch);
        self.tracer().frames_out(&batch);
        Some(Batch::Writer(batch, std::marker::PhantomData))
    }

    /// Writes a batch taken by [`take_output`](Self::take_output) (one write and one flush
    /// per batch), or hands it to the writer thread; without a writer (it failed) it is
    /// dropped. Returns whether the write failed (the connection is closed then).
    fn write(&mut self, batch: Batch<'_>) -> bool {
        match batch {
            #[cfg(unix)]
            Batch::Output(mut output) => {
                let wrote = output.as_mut().map(|out| out.flush(&self.core.partial));
                drop(output);
                let Some(Wrote::Failed(e)) = wrote else { return false };
                self.on_input(super::Input::WriteFailed(e));
                true
            }
            Batch::Writer(mut batch, _) => {
                if !self.output_open {
                    batch.clear();
                    self.spare = batch;
                    return false;
                }
                self.writer_busy = true;
                if let Sent::Gone(mut batch) = self.transport.send(batch) {
                    self.writer_busy = false;
                    self.output_open = false;
                    batch.clear();
                    self.spare = batch;
                }
                false
            }
        }
    }
}
