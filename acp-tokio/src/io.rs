//! The byte transport as the driver sees it: two small poll traits, with wrappers for tokio's
//! `AsyncRead`/`AsyncWrite` and (feature `async-std`) for the `futures-io` traits async-std uses.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker, ready};

use crate::sync::lock;

/// A byte source.
pub(crate) trait ReadBytes: Unpin + 'static {
    /// Reads into `buf`; `Ok(0)` is end of input.
    fn poll_read_bytes(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>>;
}

/// A byte sink.
pub(crate) trait WriteBytes: Unpin + 'static {
    /// Writes a prefix of `buf`.
    fn poll_write_bytes(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>>;
    /// Flushes what was written.
    fn poll_flush_bytes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    /// Shuts the sink down (the peer sees end of input once it is dropped too).
    fn poll_close_bytes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
}

/// Polls the driver's reader only when it may have news: when it was not waiting, or after it
/// woke the task since it last returned `Pending`.
///
/// The driver runs a round per command, ack and answer (per update in an update storm), and
/// each round used to poll the reader again, which on tokio re-registers the task with the
/// reactor (a lock) although the pipe did not wake it. Here the reader gets a waker of its own
/// that notes the wake-up and then wakes the task, so a round skips a waiting reader it did not
/// hear from. Nothing is lost: a wake-up during or after the poll that returned `Pending` sets
/// the flag, and the task's waker is re-checked (cheaply, `will_wake`) on every call.
pub(crate) struct ReadGate {
    flag: Arc<ReadFlag>,
    /// `flag` as a waker, made once: the reader's registration keeps it between polls.
    waker: Waker,
    /// The task waker `flag` forwards to, as last stored there.
    task: Option<Waker>,
    /// The last poll returned `Pending`.
    waiting: bool,
}

/// What the reader's waker shares with the driver.
struct ReadFlag {
    woken: AtomicBool,
    task: Mutex<Option<Waker>>,
}

impl Wake for ReadFlag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        if let Some(task) = lock(&self.task).as_ref() {
            task.wake_by_ref();
        }
    }
}

impl ReadGate {
    pub(crate) fn new() -> ReadGate {
        let flag = Arc::new(ReadFlag { woken: AtomicBool::new(false), task: Mutex::new(None) });
        ReadGate { waker: Waker::from(flag.clone()), flag, task: None, waiting: false }
    }

    /// Polls `reader`, or answers `Pending` at once when it is waiting and has not woken the
    /// task since (its wake-up will wake the task of `cx`).
    pub(crate) fn poll_read<R: ReadBytes + ?Sized>(
        &mut self,
        cx: &mut Context<'_>,
        reader: &mut R,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if !self.task.as_ref().is_some_and(|task| task.will_wake(cx.waker())) {
            *lock(&self.flag.task) = Some(cx.waker().clone());
            self.task = Some(cx.waker().clone());
            // Another task polls now: whatever the reader heard went to the old one.
            self.waiting = false;
        }
        // Cleared before the poll: a wake-up from here on is kept for the next call.
        let woken = self.flag.woken.swap(false, Ordering::AcqRel);
        if self.waiting && !woken {
            return Poll::Pending;
        }
        let result = reader.poll_read_bytes(&mut Context::from_waker(&self.waker), buf);
        self.waiting = result.is_pending();
        result
    }
}

/// A tokio reader or writer.
pub(crate) struct TokioIo<T>(Pin<Box<T>>);

impl<T> TokioIo<T> {
    pub(crate) fn new(io: T) -> TokioIo<T> {
        TokioIo(Box::pin(io))
    }
}

impl<T: tokio::io::AsyncRead + 'static> ReadBytes for TokioIo<T> {
    fn poll_read_bytes(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let mut buf = tokio::io::ReadBuf::new(buf);
        ready!(self.0.as_mut().poll_read(cx, &mut buf))?;
        Poll::Ready(Ok(buf.filled().len()))
    }
}

impl<T: tokio::io::AsyncWrite + 'static> WriteBytes for TokioIo<T> {
    fn poll_write_bytes(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.0.as_mut().poll_write(cx, buf)
    }

    fn poll_flush_bytes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.as_mut().poll_flush(cx)
    }

    fn poll_close_bytes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.as_mut().poll_shutdown(cx)
    }
}

/// Stdin and stdout as reactor-driven pipes (see [`serve_stdio`](crate::serve_stdio)).
#[cfg(unix)]
pub(crate) struct StdioPipes {
    reader: tokio::net::unix::pipe::Receiver,
    writer: tokio::net::unix::pipe::Sender,
}

#[cfg(unix)]
impl StdioPipes {
    /// Both ends, when stdin and stdout are pipes and stderr does not share stdout's pipe
    /// (`2>&1`: stderr must stay blocking); `None` otherwise, with nothing changed.
    pub(crate) fn open() -> Option<StdioPipes> {
        use std::os::fd::AsFd;
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let dup = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().ok().map(std::fs::File::from);
        let stdin = dup(std::io::stdin().as_fd())?;
        let stdout = dup(std::io::stdout().as_fd())?;
        let (input, output) = (stdin.metadata().ok()?, stdout.metadata().ok()?);
        if !input.file_type().is_fifo() || !output.file_type().is_fifo() {
            return None;
        }
        if let Some(err) = dup(std::io::stderr().as_fd()).and_then(|e| e.metadata().ok())
            && (err.dev(), err.ino()) == (output.dev(), output.ino())
        {
            return None;
        }
        // Either conversion may fail (e.g. a runtime without I/O) after the other one (or
        // itself) set the pipe non-blocking: then blocking mode is restored.
        let pipes = tokio::net::unix::pipe::Receiver::from_file(stdin)
            .and_then(|reader| Ok(StdioPipes { reader, writer: tokio::net::unix::pipe::Sender::from_file(stdout)? }));
        match pipes {
            Ok(pipes) => Some(pipes),
            Err(_) => {
                StdioPipes::restore();
                None
            }
        }
    }

    /// Both ends, and the guard that puts stdin and stdout back into blocking mode when it is
    /// dropped: when serving ends, and also when its future is dropped or a panic unwinds.
    pub(crate) fn take(self) -> (tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender, BlockingOnDrop) {
        use std::os::fd::AsFd;
        let guard = BlockingOnDrop::new([std::io::stdin().as_fd(), std::io::stdout().as_fd()]);
        (self.reader, self.writer, guard)
    }

    /// Puts stdin and stdout back into blocking mode (the flag belongs to the pipe, which the
    /// rest of the process, and whoever inherits it, still uses).
    fn restore() {
        use std::os::fd::AsFd;
        drop(BlockingOnDrop::new([std::io::stdin().as_fd(), std::io::stdout().as_fd()]));
    }
}

/// Puts its descriptors (duplicates: the mode belongs to the open pipe, shared by every
/// duplicate) back into blocking mode when dropped.
#[cfg(unix)]
pub(crate) struct BlockingOnDrop(Vec<std::os::fd::OwnedFd>);

#[cfg(unix)]
impl BlockingOnDrop {
    pub(crate) fn new<'a>(fds: impl IntoIterator<Item = std::os::fd::BorrowedFd<'a>>) -> BlockingOnDrop {
        BlockingOnDrop(fds.into_iter().filter_map(|fd| fd.try_clone_to_owned().ok()).collect())
    }
}

#[cfg(unix)]
impl Drop for BlockingOnDrop {
    fn drop(&mut self) {
        for fd in &self.0 {
            let _ = rustix::io::ioctl_fionbio(fd, false);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::fd::AsFd;

    use super::BlockingOnDrop;

    fn nonblocking(fd: std::os::fd::BorrowedFd<'_>) -> bool {
        rustix::fs::fcntl_getfl(fd).expect("F_GETFL").contains(rustix::fs::OFlags::NONBLOCK)
    }

    #[test]
    fn the_guard_restores_blocking_mode_when_dropped_also_by_a_panic() {
        let (read, write) = rustix::pipe::pipe().expect("pipe");
        for fd in [read.as_fd(), write.as_fd()] {
            rustix::io::ioctl_fionbio(fd, true).expect("FIONBIO");
        }
        let guard = BlockingOnDrop::new([read.as_fd(), write.as_fd()]);
        assert!(nonblocking(read.as_fd()) && nonblocking(write.as_fd()));
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _guard = guard;
            panic!("serving failed");
        }));
        assert!(unwound.is_err());
        assert!(!nonblocking(read.as_fd()) && !nonblocking(write.as_fd()));
    }
}

/// A `futures-io` reader or writer (async-std's I/O types).
#[cfg(feature = "async-std")]
pub(crate) struct FuturesIo<T>(Pin<Box<T>>);

#[cfg(feature = "async-std")]
impl<T> FuturesIo<T> {
    pub(crate) fn new(io: T) -> FuturesIo<T> {
        FuturesIo(Box::pin(io))
    }
}

#[cfg(feature = "async-std")]
impl<T: futures_io::AsyncRead + 'static> ReadBytes for FuturesIo<T> {
    fn poll_read_bytes(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.0.as_mut().poll_read(cx, buf)
    }
}

#[cfg(feature = "async-std")]
impl<T: futures_io::AsyncWrite + 'static> WriteBytes for FuturesIo<T> {
    fn poll_write_bytes(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.0.as_mut().poll_write(cx, buf)
    }

    fn poll_flush_bytes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.as_mut().poll_flush(cx)
    }

    fn poll_close_bytes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.as_mut().poll_close(cx)
    }
}

#[cfg(test)]
mod gate_tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll, Wake, Waker};

    use super::{ReadBytes, ReadGate};

    /// A reader that is empty until `data` is set; it keeps the waker of its last poll.
    #[derive(Default)]
    struct Fake {
        polls: usize,
        data: bool,
        waker: Option<Waker>,
    }

    impl ReadBytes for Fake {
        fn poll_read_bytes(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<std::io::Result<usize>> {
            self.polls += 1;
            if std::mem::take(&mut self.data) {
                buf[0] = b'x';
                return Poll::Ready(Ok(1));
            }
            self.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    /// A task waker that counts its wake-ups.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_waiting_reader_is_polled_again_only_after_it_woke_the_task() {
        let (task, mut reader, mut gate, mut buf) =
            (Arc::new(Count::default()), Fake::default(), ReadGate::new(), [0u8; 8]);
        let waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(gate.poll_read(&mut cx, &mut reader, &mut buf).is_pending());
        // Rounds that the reader did not cause leave it alone.
        for _ in 0..5 {
            assert!(gate.poll_read(&mut cx, &mut reader, &mut buf).is_pending());
        }
        assert_eq!(reader.polls, 1);
        // Data arrives: the reader's wake-up reaches the task, and the next call reads.
        reader.data = true;
        reader.waker.take().expect("registered").wake();
        assert_eq!(task.0.load(Ordering::SeqCst), 1);
        assert!(matches!(gate.poll_read(&mut cx, &mut reader, &mut buf), Poll::Ready(Ok(1))));
        // After a read the reader is polled again at once (it may have more).
        assert!(gate.poll_read(&mut cx, &mut reader, &mut buf).is_pending());
        assert_eq!(reader.polls, 3);
    }

    #[test]
    fn a_wake_up_is_kept_and_a_new_task_waker_is_used() {
        let (mut reader, mut gate, mut buf) = (Fake::default(), ReadGate::new(), [0u8; 8]);
        let first = Arc::new(Count::default());
        let waker = Waker::from(first.clone());
        assert!(gate.poll_read(&mut Context::from_waker(&waker), &mut reader, &mut buf).is_pending());
        // Another task takes over: it polls the reader itself, and the reader's next wake-up
        // goes to it, not to the first.
        let second = Arc::new(Count::default());
        let waker = Waker::from(second.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(gate.poll_read(&mut cx, &mut reader, &mut buf).is_pending());
        assert_eq!(reader.polls, 2);
        let registered = reader.waker.take().expect("registered");
        registered.wake_by_ref();
        assert_eq!((first.0.load(Ordering::SeqCst), second.0.load(Ordering::SeqCst)), (0, 1));
        // A spurious wake-up costs one poll, and the one after it is not lost either.
        assert!(gate.poll_read(&mut cx, &mut reader, &mut buf).is_pending());
        assert_eq!(reader.polls, 3);
        reader.data = true;
        registered.wake();
        assert!(matches!(gate.poll_read(&mut cx, &mut reader, &mut buf), Poll::Ready(Ok(1))));
    }
}
