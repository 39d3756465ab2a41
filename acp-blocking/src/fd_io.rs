//! The transport of a connection over pipes or sockets (Unix): the driver thread reads and
//! writes the descriptors itself, non-blocking, and waits for them and for its wake-up
//! descriptor in one `poll(2)`; no reader or writer thread, no hand-off per chunk or batch.
//!
//! It speaks to the driver in the same [`Input`]s the transport threads send (a chunk read,
//! the end of the stream, a batch written, a failure), so the driver's rules (read only while
//! everything read is consumed and the backlog has room, one batch at a time) do not depend
//! on the transport.

use std::io::{self, Read};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use acp_runtime::fd::{NonBlocking, is_pollable};
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::io::Errno;

use crate::driver::{Input, READ_BUFFERS, READ_CHUNK};
use crate::wake::WakeFd;

/// What the driver reads from: a `Read` over a pollable descriptor.
pub(crate) trait FdRead: Read + AsFd + Send {}
impl<T: Read + AsFd + Send> FdRead for T {}

/// What the driver writes to: a pollable descriptor. Bytes go to the descriptor directly,
/// bypassing any buffer of the value that owns it (flushed once, before).
pub(crate) trait FdWrite: io::Write + AsFd + Send {}
impl<T: io::Write + AsFd + Send> FdWrite for T {}

/// Both descriptors, non-blocking while this lives (their mode is restored when it is
/// dropped, on every exit path of the driver, unwinding included).
pub(crate) struct FdIo {
    input: NonBlocking<Box<dyn FdRead>>,
    output: NonBlocking<Box<dyn FdWrite>>,
    wake: Arc<WakeFd>,
    /// Read buffers not in the driver's hands.
    spare: Vec<Vec<u8>>,
    /// The input ended or failed: it is not polled any more.
    input_done: bool,
    /// The batch being written and how much of it is out.
    out: Vec<u8>,
    written: usize,
    writing: bool,
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
    ) -> Result<FdIo, NotPollable> {
        if !is_pollable(input.as_fd()) || !is_pollable(output.as_fd()) {
            return Err(NotPollable::Kind(input, output));
        }
        // Whatever the owner buffered goes first, while the descriptor still blocks.
        output.flush().map_err(NotPollable::Failed)?;
        let input = NonBlocking::new(input).map_err(NotPollable::Failed)?;
        let output = NonBlocking::new(output).map_err(NotPollable::Failed)?;
        Ok(FdIo {
            input,
            output,
            wake,
            spare: Vec::new(),
            input_done: false,
            out: Vec::new(),
            written: 0,
            writing: false,
        })
    }

    /// Waits until a descriptor is ready, the driver is woken, or `timeout` passes; reads
    /// (when `read` allows it) and writes what readiness allows, and reports it in `happened`.
    pub(crate) fn wait(&mut self, read: bool, timeout: Option<Duration>, happened: &mut Vec<Input>) {
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
            if self.writing {
                fds[used] = PollFd::from_borrowed_fd(self.output.get_ref().as_fd(), PollFlags::OUT);
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
        if writable && let Some(input) = self.flush() {
            happened.push(input);
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

    /// Starts writing `batch` (the driver sends one only when the previous one is out) and
    /// writes what the descriptor takes now; `Some` when it is all out, or failed.
    pub(crate) fn write(&mut self, batch: Vec<u8>) -> Option<Input> {
        self.out = batch;
        self.written = 0;
        self.writing = true;
        self.flush()
    }

    /// Writes more of the current batch: [`Input::Written`] with the buffer once it is all
    /// out, [`Input::WriteFailed`] on an error (a closed pipe: `EPIPE`, since Rust programs
    /// ignore `SIGPIPE`), `None` while the descriptor is full.
    fn flush(&mut self) -> Option<Input> {
        while self.written < self.out.len() {
            match rustix::io::write(self.output.get_ref().as_fd(), &self.out[self.written..]) {
                Ok(0) => return Some(self.write_failed(io::ErrorKind::WriteZero.into())),
                Ok(n) => self.written += n,
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => return None,
                Err(e) => return Some(self.write_failed(e.into())),
            }
        }
        self.writing = false;
        Some(Input::Written(std::mem::take(&mut self.out)))
    }

    fn write_failed(&mut self, error: io::Error) -> Input {
        self.writing = false;
        self.out = Vec::new();
        Input::WriteFailed(error)
    }
}
