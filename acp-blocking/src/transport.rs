//! How the driver's bytes move: through a reader and a writer thread, or (pipes and sockets
//! on Unix) on the driver thread itself with `poll(2)`. See the [driver's docs](crate::driver).

use std::io::{self, Read, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::driver::Input;
#[cfg(unix)]
use crate::fd_io::FdIo;
use crate::io_threads::{spawn_reader, spawn_writer};

/// The byte transport a connection was given: any `Read + Write` pair (moved by a reader and a
/// writer thread), or two descriptors (Unix: read and written by the driver thread with
/// `poll(2)` when they are pipes or sockets).
pub(crate) enum Io {
    Threads(Box<dyn Read + Send>, Box<dyn Write + Send>),
    #[cfg(unix)]
    Fds(Box<dyn crate::fd_io::FdRead>, Box<dyn crate::fd_io::FdWrite>),
}

impl Io {
    pub(crate) fn threads(reader: impl Read + Send + 'static, writer: impl Write + Send + 'static) -> Io {
        Io::Threads(Box::new(reader), Box::new(writer))
    }

    #[cfg(unix)]
    pub(crate) fn fds(
        reader: impl Read + std::os::fd::AsFd + Send + 'static,
        writer: impl Write + std::os::fd::AsFd + Send + 'static,
    ) -> Io {
        Io::Fds(Box::new(reader), Box::new(writer))
    }
}

/// The transport of one connection.
pub(crate) enum Transport {
    /// A reader thread (fed buffers through `credit`) and a writer thread (fed batches).
    Threads { credit: Sender<Vec<u8>>, writer: Sender<Vec<u8>> },
    /// The driver reads and writes the descriptors itself.
    #[cfg(unix)]
    Poll(FdIo),
}

/// What became of a batch handed to the output.
pub(crate) enum Sent {
    /// It is being written; an [`Input::Written`] or [`Input::WriteFailed`] follows.
    Writing,
    /// The output is gone (or, over the poll transport, is not written through here): the
    /// batch comes back.
    Gone(Vec<u8>),
}

impl Transport {
    /// Starts the reader and writer threads, which report to `tx`.
    pub(crate) fn threads(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
        tx: &Sender<Input>,
    ) -> io::Result<Transport> {
        let credit = spawn_reader(reader, tx.clone())?;
        let writer = spawn_writer(writer, tx.clone())?;
        Ok(Transport::Threads { credit, writer })
    }

    /// Gives a read buffer back once the core consumed it.
    pub(crate) fn recycle(&mut self, buf: Vec<u8>) {
        match self {
            Transport::Threads { credit, .. } => drop(credit.send(buf)),
            #[cfg(unix)]
            Transport::Poll(io) => io.recycle(buf),
        }
    }

    /// Hands a batch to the writer thread (only when the previous one is out). The poll
    /// transport's output is written through [`Core::output`](crate::link::Core::output)
    /// instead, by the driver and the sending threads: a batch handed here comes back.
    pub(crate) fn send(&mut self, batch: Vec<u8>) -> Sent {
        match self {
            Transport::Threads { writer, .. } => match writer.send(batch) {
                Ok(()) => Sent::Writing,
                Err(back) => Sent::Gone(back.0),
            },
            #[cfg(unix)]
            Transport::Poll(_) => Sent::Gone(batch),
        }
    }

    /// Waits for something to do, for at most `timeout` (`None`: no limit), and puts what
    /// happened in `happened` (nothing when the time passed). `read`: the driver may take
    /// more input; `writing`: a batch is partly out in the poll transport's output. Returns
    /// false when no input can ever come again (the channel is closed).
    pub(crate) fn wait(
        &mut self,
        rx: &Receiver<Input>,
        read: bool,
        writing: bool,
        timeout: Option<Duration>,
        happened: &mut Vec<Input>,
    ) -> bool {
        match self {
            Transport::Threads { .. } => {
                // The reader thread paces itself with its buffers, the writer with its batches.
                let _ = (read, writing);
                let input = match timeout {
                    None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                    Some(wait) => rx.recv_timeout(wait),
                };
                match input {
                    Ok(input) => happened.push(input),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return false,
                }
            }
            #[cfg(unix)]
            Transport::Poll(io) => {
                // What is already queued goes first; the descriptors are still looked at
                // (without waiting), so that a stream of commands cannot starve them.
                let queued = rx.try_recv().ok();
                let timeout = if queued.is_some() { Some(Duration::ZERO) } else { timeout };
                happened.extend(queued);
                io.wait(read, writing, timeout, happened);
            }
        }
        true
    }
}
