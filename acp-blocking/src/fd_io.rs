//! The transport of a connection over pipes or sockets (Unix): the driver thread reads the
//! input itself, non-blocking, and waits for it, for room in the output while a batch is
//! partly out, and for its wake-up descriptor in one `poll(2)`; no reader or writer thread,
//! no hand-off per chunk or batch. The output itself is an [`Output`], shared with the
//! threads that send, which write their own frames when it is idle (see
//! [`output`](crate::output)).
//!
//! It speaks to the driver in the same [`Input`]s the transport threads send (a chunk read,
//! the end of the stream, a failure), so the driver's rules (read only while everything read
//! is consumed and the backlog has room) do not depend on the transport.

use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use acp_runtime::fd::{NonBlocking, is_pollable};
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::io::Errno;

use crate::driver::{Input, READ_BUFFERS, READ_CHUNK};
use crate::output::Output;
use crate::wake::WakeFd;

/// What the driver reads from: a `Read` over a pollable descriptor.
pub(crate) trait FdRead: Read + AsFd + Send {}
impl<T: Read + AsFd + Send> FdRead for T {}

/// What the driver writes to: a pollable descriptor. Bytes go to the descriptor directly,
/// bypassing any buffer of the value that owns it (flushed once, before).
pub(crate) trait FdWrite: io::Write + AsFd + Send {}
impl<T: io::Write + AsFd + Send> FdWrite for T {}

/// The input, non-blocking while this lives (its mode is restored when it is dropped, on
/// every exit path of the driver, unwinding included), and a duplicate of the output's
/// descriptor to poll (the [`Output`] is shared behind a mutex that is not held meanwhile).
pub(crate) struct FdIo {
    input: NonBlocking<Box<dyn FdRead>>,
    output: OwnedFd,
    wake: Arc<WakeFd>,
    /// Read buffers not in the driver's hands.
    spare: Vec<Vec<u8>>,
    /// The input ended or failed: it is not polled any more.
    input_done: bool,
}

/// Why the descriptors cannot be driven with `poll(2)`: the caller falls back to threads.
pub(crate) enum NotPollable {
    /// One of them is not a pipe or a socket ([`is_pollable`]); they come back unchanged.
    Kind(Box<dyn FdRead>, Box<dyn FdWrite>),
    /// Setting them up failed.
    Failed(io::Error),
}

impl FdIo {
    /// Takes over `input` and `output` when both are pipes or sockets.
    pub(crate) fn new(
        input: Box<dyn FdRead>,
        mut output: Box<dyn FdWrite>,
        wake: Arc<WakeFd>,
    ) -> Result<(FdIo, Output), NotPollable> {
        if !is_pollable(input.as_fd()) || !is_pollable(output.as_fd()) {
            return Err(NotPollable::Kind(input, output));
        }
        // Whatever the owner buffered goes first, while the descriptor still blocks.
        output.flush().map_err(NotPollable::Failed)?;
        let polled = output.as_fd().try_clone_to_owned().map_err(NotPollable::Failed)?;
        let input = NonBlocking::new(input).map_err(NotPollable::Failed)?;
        let output = NonBlocking::new(output).map_err(NotPollable::Failed)?;
        let io = FdIo { input, output: polled, wake, spare: Vec::new(), input_done: false };
        Ok((io, Output::new(output)))
    }

    /// Waits until a descriptor is ready, the driver is woken, or `timeout` passes; reads
    /// (when `read` allows it) and reports it in `happened`, with [`Input::Writable`] when the
    /// output (polled while `writing`: a batch is partly out) has room.
    pub(crate) fn wait(&mut self, read: bool, writing: bool, timeout: Option<Duration>, happened: &mut Vec<Input>) {
        let read = read && !self.input_done;
        let timeout = timeout.map(|t| Timespec::try_from(t).unwrap_or(Timespec { tv_sec: i64::MAX, tv_nsec: 0 }));
        let (woken, readable, writable) = {
            let unused = || PollFd::from_borrowed_fd(self.wake.fd(), PollFlags::empty());
            let mut fds = [PollFd::from_borrowed_fd(self.wake.fd(), PollFlags::IN), unused(), unused()];
            // Only the descriptors waited for are passed: the wake-up one, then the input
            // while reading is allowed, then the output while a batch is being written.
            let (mut used, mut input_at, mut output_at) = (1, None, None);
            if read {
                fds[used] = PollFd::from_borrowed_fd(self.input.get_ref().as_fd(), PollFlags::IN);
                input_at = Some(used);
                used += 1;
            }
            if writing {
                fds[used] = PollFd::from_borrowed_fd(self.output.as_fd(), PollFlags::OUT);
                output_at = Some(used);
                used += 1;
            }
            match poll(&mut fds[..used], timeout.as_ref()) {
                Ok(_) => {}
                Err(Errno::INTR) => return,
                Err(e) => {
                    // Only a bug (or exhausted kernel memory) makes poll fail: end the input.
                    self.input_done = true;
                    happened.push(Input::ReadFailed(e.into()));
                    return;
                }
            }
            // Readiness, a hang-up or an error: the read or write that follows tells which.
            let ready = |at: Option<usize>| at.is_some_and(|i| !fds[i].revents().is_empty());
            (ready(Some(0)), ready(input_at), ready(output_at))
        };
        if woken {
            self.wake.reset();
        }
        if writable {
            happened.push(Input::Writable);
        }
        if readable && let Some(input) = self.read() {
            happened.push(input);
        }
    }

    /// Reads one chunk; `None` when nothing is there after all.
    fn read(&mut self) -> Option<Input> {
        let mut buf = self.spare.pop().unwrap_or_else(|| vec![0; READ_CHUNK]);
        loop {
            return match self.input.get_mut().read(&mut buf) {
                Ok(0) => {
                    self.input_done = true;
                    Some(Input::Eof)
                }
                Ok(n) => Some(Input::Read(buf, n)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.spare.push(buf);
                    None
                }
                Err(e) => {
                    self.input_done = true;
                    Some(Input::ReadFailed(e))
                }
            };
        }
    }

    /// Gives a read buffer back once the core consumed it.
    pub(crate) fn recycle(&mut self, buf: Vec<u8>) {
        if self.spare.len() < READ_BUFFERS {
            self.spare.push(buf);
        }
    }
}
