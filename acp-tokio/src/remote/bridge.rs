//! The bridge from a link of newline-delimited lines (Streamable HTTP's link) to a client
//! connection, v1 or v2, over an in-memory pipe.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncWrite, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::oneshot;

use super::dial::RemoteInfo;

/// Connects a client over a link of newline-delimited lines: `pump` gets the link's two ends
/// (what the core writes, where the agent's messages go) and a sender to drop once the link
/// is done with the end of the core's output (e.g. the `DELETE` was answered); it runs on its
/// own task. `connect` puts the client's driver on the other ends (a v1
/// [`ClientConnection`](crate::ClientConnection) or a v2 one). The core's writer closes only
/// then, so a connection's `close` returns after the link said goodbye.
pub(crate) fn bridge<T, P, F>(
    info: RemoteInfo,
    pump: P,
    connect: impl FnOnce(ReadHalf<DuplexStream>, ClosedAfter<WriteHalf<DuplexStream>>) -> T,
) -> (T, RemoteInfo)
where
    P: FnOnce(ReadHalf<DuplexStream>, WriteHalf<DuplexStream>, oneshot::Sender<()>) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let (ours, theirs) = tokio::io::duplex(super::BRIDGE_BUFFER);
    let (read, write) = tokio::io::split(ours);
    let (lines_out, lines_in) = tokio::io::split(theirs);
    let (done, said_goodbye) = oneshot::channel();
    tokio::spawn(pump(lines_out, lines_in, done));
    let write = ClosedAfter { inner: write, after: Some(said_goodbye) };
    (connect(read, write), info)
}

/// A writer whose shutdown completes once `after` resolved (or its sender is gone).
pub(crate) struct ClosedAfter<W> {
    inner: W,
    after: Option<oneshot::Receiver<()>>,
}

impl<W: AsyncWrite + Unpin> AsyncWrite for ClosedAfter<W> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(Pin::new(&mut self.inner).poll_shutdown(cx))?;
        if let Some(after) = &mut self.after {
            let _ = ready!(Pin::new(after).poll(cx));
            self.after = None;
        }
        Poll::Ready(Ok(()))
    }
}
