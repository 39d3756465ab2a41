//! The byte transport as the driver sees it: two small poll traits, with wrappers for tokio's
//! `AsyncRead`/`AsyncWrite` and (feature `async-std`) for the `futures-io` traits async-std uses.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

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

/// [`WriteBytes`] for the wrapper `$Io` of a runtime's writer trait `$Write` (whose methods are
/// `poll_write`, `poll_flush` and `$close`): one forwarding for tokio's and `futures-io`'s.
macro_rules! write_bytes {
    ($Io:ident: $($Write:ident)::+, $close:ident) => {
        impl<T: $($Write)::+ + 'static> WriteBytes for $Io<T> {
            fn poll_write_bytes(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.0.as_mut().poll_write(cx, buf)
            }

            fn poll_flush_bytes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.0.as_mut().poll_flush(cx)
            }

            fn poll_close_bytes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.0.as_mut().$close(cx)
            }
        }
    };
}

write_bytes!(TokioIo: tokio::io::AsyncWrite, poll_shutdown);

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
write_bytes!(FuturesIo: futures_io::AsyncWrite, poll_close);
