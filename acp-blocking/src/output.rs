//! The output of the poll transport (Unix pipes and sockets), shared by the driver and the
//! threads that send: **the thread that queues a frame writes it**.
//!
//! A calling thread (its request) and a handler thread (its answer) take everything the core
//! has queued, with the connection locked, and write it to the non-blocking descriptor
//! themselves, holding only the output's mutex, when no batch is partly out
//! ([`Core::write_through`]). The driver writes the same way. The driver then only
//! finishes partial writes (it polls the descriptor while a batch is partly out), writes the
//! frames queued by itself or by notification senders, and reads. That takes the hand-off to
//! the driver off a round trip on both sides.
//!
//! # When the writing thread wakes the driver
//!
//! The driver did not see the call, so the thread checks, under the connection's mutex, what
//! the driver would have done after it, and wakes it ([`Input::Wake`]) when:
//!
//! 1. **the write left work**: the descriptor took part of the batch (the driver polls it for
//!    room), or the write failed ([`Input::WriteFailed`]: the driver closes the connection);
//! 2. **a timer is earlier** than the one the driver sleeps to (a request's deadline): the
//!    driver publishes the core timer it sleeps to ([`Core::sleeps_until`]) while it holds
//!    the connection;
//! 3. **events are queued** ([`Connection::has_events`]): `respond` may complete the
//!    handshake and release the requests held behind it, and a drained output releases the
//!    requests deferred while it was full;
//! 4. **input is wanted again** that was not before the call ([`Connection::wants_input`]):
//!    the driver holds a chunk the core stopped taking (its queued answers filled the output),
//!    and does not read or feed until it is woken.
//!
//! Every check reads state that only changes under the connection's mutex, and the thread
//! makes it (after taking the batch, before writing it) before letting go, so the driver either sees the change when it next locks the
//! connection or finds the wake-up pending when it polls. Notifications are not written
//! through: they linger in the core for the driver to write in large batches (see the
//! [driver's docs](crate::driver)).

#[cfg(unix)]
use std::io;
use std::sync::MutexGuard;
#[cfg(unix)]
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use acp_proto::Connection;
use acp_proto::role::Role;
#[cfg(unix)]
use acp_runtime::fd::NonBlocking;
#[cfg(unix)]
use rustix::io::Errno;
#[cfg(unix)]
use std::os::fd::AsFd;

use crate::driver::{Input, Version};
#[cfg(unix)]
use crate::fd_io::FdWrite;
use crate::link::Core;
#[cfg(unix)]
use crate::sync::lock;

/// A batch buffer larger than this is not kept for reuse after a big batch went out.
#[cfg(unix)]
const KEEP_BUFFER: usize = 4 << 20;

/// The output descriptor and the batch being written to it.
#[cfg(unix)]
pub(crate) struct Output {
    fd: NonBlocking<Box<dyn FdWrite>>,
    batch: Vec<u8>,
    /// How much of `batch` is out.
    written: usize,
    /// A write failed: nothing is written any more (frames are dropped).
    failed: bool,
}

/// What a write did.
#[cfg(unix)]
pub(crate) enum Wrote {
    /// The whole batch is out.
    Done,
    /// The descriptor is full: the rest waits for room.
    Partial,
    /// The write failed (a closed pipe: `EPIPE`, since Rust programs ignore `SIGPIPE`).
    Failed(io::Error),
}

#[cfg(unix)]
impl Output {
    /// The output over `fd`, which is non-blocking while this lives.
    pub(crate) fn new(fd: NonBlocking<Box<dyn FdWrite>>) -> Output {
        Output { fd, batch: Vec::new(), written: 0, failed: false }
    }

    /// Whether a batch is partly out: the driver polls the descriptor and finishes it.
    pub(crate) fn busy(&self) -> bool {
        self.written < self.batch.len()
    }

    /// Whether a new batch may be written now.
    fn idle(&self) -> bool {
        !self.failed && !self.busy()
    }

    /// Takes every frame `conn` has queued as the next batch (only when no batch is partly
    /// out), to be written by [`flush`](Self::flush) once the connection is let go. After a
    /// failure the frames are dropped. The caller then signals [`Core::drained`] (room in
    /// the budget), after letting the connection go, so that a woken sender does not block
    /// on it at once.
    pub(crate) fn take_queued<P: Version, R: Role>(&mut self, conn: &mut Connection<R, P>, core: &Core<P, R>) {
        debug_assert!(!self.busy(), "a batch is partly out");
        if self.batch.capacity() > KEEP_BUFFER {
            self.batch = Vec::new();
        }
        self.batch.clear();
        self.written = 0;
        let _ = conn.poll_transmit(&mut self.batch);
        if self.failed {
            self.batch.clear();
            return;
        }
        let tracer = lock(&core.tracer);
        tracer.scope().in_scope(|| tracer.frames_out(&self.batch));
    }

    /// Writes (more of) the current batch. The output's mutex is held meanwhile, not the
    /// connection's: threads go on queuing, and a batch taken later is written later.
    /// `partial` ([`Core::partial`]) is set while a batch is left partly out.
    pub(crate) fn flush(&mut self, partial: &AtomicBool) -> Wrote {
        let wrote = self.write_more();
        partial.store(matches!(wrote, Wrote::Partial), Ordering::Release);
        wrote
    }

    fn write_more(&mut self) -> Wrote {
        while self.written < self.batch.len() {
            match rustix::io::write(self.fd.get_ref().as_fd(), &self.batch[self.written..]) {
                Ok(0) => return self.fail(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.written += n,
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => return Wrote::Partial,
                Err(e) => return self.fail(e.into()),
            }
        }
        Wrote::Done
    }

    fn fail(&mut self, error: io::Error) -> Wrote {
        self.failed = true;
        self.batch.clear();
        self.written = 0;
        Wrote::Failed(error)
    }
}

/// What a sending thread saw before it queued its frame.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Before {
    wants_input: bool,
}

impl Before {
    /// Taken with the connection locked, before the call.
    pub(crate) fn of<P: Version, R: Role>(conn: &Connection<R, P>) -> Before {
        Before { wants_input: conn.wants_input() }
    }
}

/// What [`Core::write_through`] did.
pub(crate) enum Through {
    /// Nothing: no output of its own, a batch is partly out, or it failed. The driver writes,
    /// woken by the caller's usual rule.
    NotWritten,
    /// Written (or started); `Some`: what the driver must be woken with (see the module docs).
    Written(Option<Input>),
}

impl<P: Version, R: Role> Core<P, R> {
    /// After a thread queued a frame into `conn` (locked; let go here): writes everything
    /// queued to the output itself when the output is idle, and says whether the driver must
    /// be woken. The batch is taken and the rules checked with the connection locked; the
    /// write happens after it is let go, under the output's mutex alone.
    pub(crate) fn write_through(&self, mut conn: MutexGuard<'_, Connection<R, P>>, before: Before) -> Through {
        #[cfg(unix)]
        {
            let mut output = lock(&self.output);
            let Some(out) = output.as_mut().filter(|out| out.idle()) else { return Through::NotWritten };
            out.take_queued(&mut conn, self);
            // Whatever the driver lingered for goes out with this batch.
            self.lingering.store(false, Ordering::Release);
            let needed = self.driver_needed(&conn, before);
            drop(conn);
            // Room in the budget again: threads waiting to send go on.
            self.signal_drained();
            let wake = match out.flush(&self.partial) {
                Wrote::Failed(e) => Some(Input::WriteFailed(e)),
                Wrote::Partial => Some(Input::Wake),
                Wrote::Done => needed.then_some(Input::Wake),
            };
            Through::Written(wake)
        }
        #[cfg(not(unix))]
        {
            let _ = (conn, before);
            Through::NotWritten
        }
    }

    /// Rules 2 to 4 of the module docs.
    fn driver_needed(&self, conn: &Connection<R, P>, before: Before) -> bool {
        let sleeps_until = self.sleeps_until.load(Ordering::Relaxed);
        let earlier_timer = conn.poll_timeout().is_some_and(|t| t.as_nanos() < sleeps_until);
        earlier_timer || conn.has_events() || (!before.wants_input && conn.wants_input())
    }
}

/// Rules 1 and 3 of the module docs, on the core directly: what a write-through leaves the
/// driver is decided under the connection's mutex, whatever the threads' timing. (Rules 2 to
/// 4 are also driven over real pipes in `tests/blocking/write_through.rs`.)
#[cfg(all(test, unix))]
mod tests {
    use std::io::PipeReader;

    use acp_proto::ext::ExtResponse;
    use acp_proto::role;
    use acp_proto::{Answer, Call, ClientCall, Config, Event, Responder, Side, V1};
    use acp_runtime::trace::Tracer;
    use serde_json::json;

    use super::*;

    /// A ready agent core writing to a fresh pipe (nobody reads it yet: the read end comes
    /// back), with a small output budget.
    fn agent() -> (Core<V1, role::Agent>, PipeReader) {
        let (read, write) = std::io::pipe().expect("pipe");
        let output = Output::new(NonBlocking::new(Box::new(write) as Box<dyn FdWrite>).expect("non-blocking"));
        let config = Config::default().with_outbound_budget(2_000);
        let mut conn: Connection<role::Agent> = Connection::new(config, acp_proto::Instant::ZERO);
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
        let _ = conn.handle_input(acp_proto::Instant::ZERO, init);
        let _ = conn.handle_input(acp_proto::Instant::ZERO, b"\n");
        let Some(Event::Request(request)) = conn.poll_event() else { panic!("no initialize") };
        let Call::Client(ClientCall::Initialize(_, responder)) = request.into_call() else { panic!("no initialize") };
        let answer = acp_proto::types::InitializeResponse::new(acp_proto::types::ProtocolVersion::V1);
        conn.respond(acp_proto::Instant::ZERO, responder.answer(Ok(answer))).expect("answered");
        let _ = conn.poll_event();
        let _ = conn.poll_transmit(&mut Vec::new());
        (Core::new(conn, Some(output), Tracer::new(Side::Agent, false)), read)
    }

    /// Feeds one extension request and returns its responder, as dispatched.
    fn ext_request(conn: &mut Connection<role::Agent, V1>, n: u64) -> Option<Responder<ExtResponse>> {
        let line = json!({"jsonrpc": "2.0", "id": n, "method": "_work", "params": {}}).to_string() + "\n";
        assert_eq!(conn.handle_input(acp_proto::Instant::ZERO, line.as_bytes()), line.len());
        match conn.poll_event() {
            Some(Event::Request(request)) => match request.into_call() {
                Call::Client(ClientCall::Ext(_, responder)) => Some(responder),
                other => panic!("{other:?}"),
            },
            None => None,
            Some(other) => panic!("{other:?}"),
        }
    }

    /// The extension request's answer, `pad` bytes long.
    fn answer(responder: Responder<ExtResponse>, pad: usize) -> Answer<role::Agent, V1> {
        responder.answer(Ok(ExtResponse(json!({"pad": "x".repeat(pad)}))))
    }

    fn through(core: &Core<V1, role::Agent>, respond: Option<(Responder<ExtResponse>, usize)>) -> Through {
        let mut conn = lock(&core.conn);
        let before = Before::of(&conn);
        if let Some((responder, pad)) = respond {
            conn.respond(acp_proto::Instant::ZERO, answer(responder, pad)).expect("answered");
        }
        core.write_through(conn, before)
    }

    #[test]
    fn a_partial_write_wakes_the_driver_and_leaves_the_output_to_it() {
        let (core, _read) = agent();
        let id = ext_request(&mut lock(&core.conn), 1).expect("dispatched");
        // More than a pipe holds: the descriptor takes part of it.
        let partial = through(&core, Some((id, 1 << 20)));
        assert!(matches!(partial, Through::Written(Some(Input::Wake))));
        assert!(lock(&core.output).as_ref().is_some_and(Output::busy));
        assert!(core.partial.load(Ordering::Acquire), "published for the driver");
        // While it is partly out, the next thread leaves its frame to the driver.
        let id = ext_request(&mut lock(&core.conn), 2).expect("dispatched");
        assert!(matches!(through(&core, Some((id, 10))), Through::NotWritten));
    }

    #[test]
    fn a_failed_write_is_reported_to_the_driver_and_nothing_is_written_after_it() {
        let (core, read) = agent();
        drop(read);
        let id = ext_request(&mut lock(&core.conn), 1).expect("dispatched");
        let failed = through(&core, Some((id, 10)));
        let Through::Written(Some(Input::WriteFailed(e))) = failed else { panic!("not reported") };
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
        let id = ext_request(&mut lock(&core.conn), 2).expect("dispatched");
        assert!(matches!(through(&core, Some((id, 10))), Through::NotWritten));
    }

    #[test]
    fn a_write_through_that_releases_deferred_requests_wakes_the_driver() {
        let (core, mut read) = agent();
        // Reading the pipe in the background keeps the output idle.
        let reader = std::thread::spawn(move || io::copy(&mut read, &mut io::sink()));
        let mut conn = lock(&core.conn);
        let first = ext_request(&mut conn, 1).expect("dispatched");
        let second = ext_request(&mut conn, 2).expect("dispatched");
        // The first answer fills the output past its budget: the next request is deferred.
        conn.respond(acp_proto::Instant::ZERO, answer(first, 4_000)).expect("answered");
        assert!(ext_request(&mut conn, 3).is_none(), "deferred");
        drop(conn);
        // The second answer's thread writes everything: the deferred request is released.
        assert!(matches!(through(&core, Some((second, 10))), Through::Written(Some(Input::Wake))));
        // With nothing new for the driver, no wake-up.
        let mut conn = lock(&core.conn);
        assert!(matches!(conn.poll_event(), Some(Event::Request(_))));
        let before = Before::of(&conn);
        assert!(matches!(core.write_through(conn, before), Through::Written(None)));
        *lock(&core.output) = None;
        reader.join().expect("reader").expect("copied");
    }
}
