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
