//! The connector of the Streamable HTTP client: `http://` over TCP, `https://` over TLS (feature
//! `tls`) with the same trust as `wss://` ([`Target::dial`]), offering ALPN `h2` and
//! `http/1.1`. When the server picks `h2` the connection says so
//! ([`Connected::negotiated_h2`]) and hyper speaks HTTP/2 on it; otherwise HTTP/1.1.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;

use super::dial::{Target, Transport, Trust};

/// The ALPN protocols an `https://` connection offers, HTTP/2 first (the RFD requires it).
pub(crate) const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// Opens connections for hyper-util's client.
#[derive(Clone)]
pub(crate) struct Connector {
    trust: Trust,
    timeout: Duration,
}

impl Connector {
    /// Connections trusting `trust`, each within `timeout` (TCP and TLS handshake).
    pub(crate) fn new(trust: Trust, timeout: Duration) -> Connector {
        Connector { trust, timeout }
    }
}

/// One connection: TCP or TLS, and whether ALPN chose `h2`.
pub(crate) struct Stream {
    io: TokioIo<Box<dyn Transport>>,
    h2: bool,
}

impl tower_service::Service<Uri> for Connector {
    type Response = Stream;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Stream>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let (trust, timeout) = (self.trust.clone(), self.timeout);
        Box::pin(async move {
            let target = Target::of(&uri, "http", "https")?;
            let dialing = tokio::time::timeout(timeout, target.dial(&trust, &ALPN));
            let timed_out = || io::Error::new(io::ErrorKind::TimedOut, format!("{uri}: connect timed out"));
            let (transport, chosen) = dialing.await.map_err(|_| timed_out())??;
            Ok(Stream { io: TokioIo::new(transport), h2: chosen.as_deref() == Some(b"h2") })
        })
    }
}

impl Connection for Stream {
    fn connected(&self) -> Connected {
        let connected = Connected::new();
        if self.h2 { connected.negotiated_h2() } else { connected }
    }
}

impl hyper::rt::Read for Stream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Stream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}
