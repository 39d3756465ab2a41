//! The server's accept loop: each TCP connection (after its TLS handshake, with feature `tls`)
//! is served by hyper (HTTP/1.1 and HTTP/2, with upgrades for WebSockets) under deadlines, and
//! the connections that have not authenticated yet are capped.
//!
//! Rules, each with a test (`tests/tokio/remote_http_deadlines.rs`):
//! * Head deadline: a connection must complete a request head within `header_timeout` of its
//!   opening (the end of its TLS handshake), and every later head within `header_timeout` of
//!   its first byte; else it is closed. A silent connection, or one dripping header lines, is
//!   held `header_timeout` at most.
//! * Keep-alive: a connection with no request in flight (no response still being sent: an SSE
//!   stream is one) for `keep_alive_timeout` (at most the `idle_timeout`) is closed.
//! * Body deadline: a POST's body must arrive whole within `body_timeout` (`408`; `http.rs`).
//! * Unauthenticated cap: a connection is unauthenticated until one of its requests passes the
//!   bearer check (with no token configured: until its first complete request head). At most
//!   `max_unauthenticated` of them are held, TLS handshakes included; one more closes the
//!   oldest. A flood of silent sockets so never keeps a client out: a new client's
//!   connection is the newest, and its request comes at once.
//! * A TLS handshake must end within [`HANDSHAKE_TIMEOUT`](super::HANDSHAKE_TIMEOUT).
//! * A WebSocket counts as a request in flight for as long as it is open.
//! * Shutdown: nothing more is accepted; each connection ends its requests in flight (an SSE
//!   stream ends with its ACP connection) and closes. The caller bounds this (`drained`).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use super::auth::Peer;
use super::server::{Shared, stop_seen};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The deadlines of one TCP connection.
#[derive(Debug, Clone, Copy)]
struct Deadlines {
    header: Duration,
    keep_alive: Duration,
}

impl Deadlines {
    fn of(shared: &Shared) -> Deadlines {
        let options = &shared.options;
        let keep_alive = options.idle_timeout.map_or(options.keep_alive_timeout, |i| i.min(options.keep_alive_timeout));
        Deadlines { header: options.header_timeout, keep_alive }
    }
}

/// Accepts and serves connections until `stop` turns `true`; then accepts nothing more and
/// returns once every connection ended.
pub(crate) async fn serve(listener: TcpListener, app: Router, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let pool = Arc::new(Unauthenticated::new(shared.options.max_unauthenticated));
    let (open_tx, open) = watch::channel(());
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(_) => {
                    // Out of descriptors and the like: wait instead of spinning.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop_seen(&mut stop) => break,
        };
        // Small messages must not wait for Nagle's algorithm (a round trip would take 40+ ms).
        let _ = tcp.set_nodelay(true);
        unsent_low(&tcp);
        let liveness = Arc::new(Liveness::new());
        let ticket = pool.admit(&liveness);
        let (app, shared, stop, open) = (app.clone(), shared.clone(), stop.clone(), open.clone());
        tokio::spawn(async move {
            connection(tcp, liveness, app, shared, stop).await;
            drop((ticket, open));
        });
    }
    drop((listener, open));
    open_tx.closed().await;
}

/// How many bytes an accepted socket may hold unsent before it stops taking more.
pub(crate) const UNSENT_LOW_WATER: u32 = 128 * 1024;

/// Keeps little unsent data in the kernel (`TCP_NOTSENT_LOWAT`, [`UNSENT_LOW_WATER`]): on
/// loopback and fast links the send buffer grows to megabytes, which a stream's reader would
/// count as taken. What a dead link loses is then mostly in flight, and a resumable stream
/// still holds the rest (its ring retains what was taken). Linux only; a refusal is ignored.
fn unsent_low(tcp: &TcpStream) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let _ = socket2::SockRef::from(tcp).set_tcp_notsent_lowat(UNSENT_LOW_WATER);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = tcp;
}

/// One TCP connection, from its TLS handshake (with `tls`) to its end.
async fn connection(
    tcp: TcpStream,
    liveness: Arc<Liveness>,
    app: Router,
    shared: Arc<Shared>,
    stop: watch::Receiver<bool>,
) {
    #[cfg(feature = "tls")]
    if let Some(tls) = shared.options.tls.clone() {
        let handshake = tokio::time::timeout(super::HANDSHAKE_TIMEOUT, super::tls::handshake(&tls, tcp));
        let tls = tokio::select! {
            done = handshake => match done {
                Ok(Some(tls)) => tls,
                _ => return,
            },
            () = liveness.evicted() => return,
        };
        let certificate = tls.get_ref().1.peer_certificates().and_then(|c| c.first()).map(|c| Arc::from(c.as_ref()));
        liveness.restart();
        return serve_io(tls, Peer { certificate }, liveness, app, shared, stop).await;
    }
    serve_io(tcp, Peer::default(), liveness, app, shared, stop).await;
}

/// Serves HTTP on `io` until the connection ends, a deadline passes, it is evicted, or the
/// server shuts down (then gracefully).
async fn serve_io<I>(
    io: I,
    peer: Peer,
    liveness: Arc<Liveness>,
    app: Router,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let deadlines = Deadlines::of(&shared);
    let service = {
        let liveness = liveness.clone();
        hyper::service::service_fn(move |request| {
            handle(request, app.clone(), shared.clone(), peer.clone(), liveness.clone())
        })
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // Deadlines are this module's (see `Liveness`): hyper's own header timer would also close
    // idle keep-alive connections at the header deadline.
    builder.http1().timer(TokioTimer::new()).header_read_timeout(None).keep_alive(true);
    // The extended CONNECT of WebSockets over HTTP/2.
    builder.http2().timer(TokioTimer::new()).enable_connect_protocol();
    let io = TokioIo::new(Watched { io, liveness: liveness.clone() });
    let conn = builder.serve_connection_with_upgrades(io, service);
    tokio::pin!(conn);
    let mut stopping = false;
    loop {
        tokio::select! {
            _ = conn.as_mut() => return,
            () = stop_seen(&mut stop), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
            // Dropping the connection closes it.
            () = liveness.expired(deadlines) => return,
        }
    }
}

/// One request: the transport's [`Peer`] and the connection's [`Liveness`] go along as
/// extensions; the response counts as in flight until its body ends.
async fn handle(
    request: hyper::Request<Incoming>,
    mut app: Router,
    shared: Arc<Shared>,
    peer: Peer,
    liveness: Arc<Liveness>,
) -> Result<axum::response::Response, Infallible> {
    let busy = liveness.busy();
    if super::auth::caller(&shared.options, request.headers(), Some(&peer)).is_some() {
        liveness.authenticated();
    }
    let mut request = request.map(Body::new);
    request.extensions_mut().insert(peer);
    #[cfg(feature = "ws")]
    request.extensions_mut().insert(Connection(liveness));
    let response = tower_service::Service::call(&mut app, request).await?;
    Ok(response.map(|body| Body::new(Tracked { body, _busy: busy })))
}

/// The TCP connection a request came on (a request extension): a WebSocket holds it busy.
#[cfg(feature = "ws")]
#[derive(Clone)]
pub(crate) struct Connection(Arc<Liveness>);

#[cfg(feature = "ws")]
impl Connection {
    /// Counts as a request in flight until dropped.
    pub(crate) fn busy(&self) -> Busy {
        self.0.busy()
    }
}

/// What a connection's deadlines and the unauthenticated cap read.
struct Liveness {
    state: Mutex<State>,
    /// Woken on every change of `state` (one waiter: the connection's task).
    changed: Notify,
}

struct State {
    /// When the connection opened (the end of its TLS handshake).
    opened: Instant,
    /// Requests in flight (their responses not yet sent whole) and open WebSockets.
    in_flight: usize,
    /// Whether a request head ever came.
    served: bool,
    /// When the last request in flight ended.
    idle_since: Instant,
    /// When the first byte after that came (a next request's head has begun).
    head_started: Option<Instant>,
    authenticated: bool,
    evicted: bool,
}

impl Liveness {
    fn new() -> Liveness {
        let now = Instant::now();
        let state = State {
            opened: now,
            in_flight: 0,
            served: false,
            idle_since: now,
            head_started: None,
            authenticated: false,
            evicted: false,
        };
        Liveness { state: Mutex::new(state), changed: Notify::new() }
    }

    fn update(&self, change: impl FnOnce(&mut State)) {
        change(&mut lock(&self.state));
        self.changed.notify_one();
    }

    /// The handshake ended: the head deadline runs from now.
    #[cfg(feature = "tls")]
    fn restart(&self) {
        self.update(|s| s.opened = Instant::now());
    }

    fn busy(self: &Arc<Self>) -> Busy {
        self.update(|s| {
            s.in_flight += 1;
            s.served = true;
            s.head_started = None;
        });
        Busy(self.clone())
    }

    fn authenticated(&self) {
        self.update(|s| s.authenticated = true);
    }

    fn evict(&self) {
        self.update(|s| s.evicted = true);
    }

    /// Bytes arrived.
    fn read(&self) {
        let mut state = lock(&self.state);
        if state.served && state.in_flight == 0 && state.head_started.is_none() {
            state.head_started = Some(Instant::now());
            drop(state);
            self.changed.notify_one();
        }
    }

    /// When the connection is to be closed, if nothing changes (`None`: not while busy).
    fn deadline(&self, deadlines: Deadlines) -> Option<Instant> {
        let state = lock(&self.state);
        if state.evicted {
            return Some(state.opened);
        }
        if state.in_flight > 0 {
            return None;
        }
        if !state.served {
            return Some(state.opened + deadlines.header);
        }
        let idle = state.idle_since + deadlines.keep_alive;
        Some(state.head_started.map_or(idle, |h| idle.min(h + deadlines.header)))
    }

    /// Resolves when a deadline passed (or the connection was evicted).
    async fn expired(&self, deadlines: Deadlines) {
        loop {
            match self.deadline(deadlines) {
                Some(at) if at <= Instant::now() => return,
                Some(at) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {}
                        () = self.changed.notified() => {}
                    }
                }
                None => self.changed.notified().await,
            }
        }
    }

    /// Resolves when the connection was evicted.
    #[cfg(feature = "tls")]
    async fn evicted(&self) {
        while !lock(&self.state).evicted {
            self.changed.notified().await;
        }
    }
}

/// A request in flight (or an open WebSocket) on a connection, until dropped.
pub(crate) struct Busy(Arc<Liveness>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.update(|s| {
            s.in_flight -= 1;
            if s.in_flight == 0 {
                s.idle_since = Instant::now();
                s.head_started = None;
            }
        });
    }
}

/// A response body that holds its request in flight until it ends (or is dropped).
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The transport, telling the connection's [`Liveness`] when bytes arrive.
struct Watched<I> {
    io: I,
    liveness: Arc<Liveness>,
}

impl<I: AsyncRead + Unpin> AsyncRead for Watched<I> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.liveness.read();
        }
        read
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Watched<I> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// The connections not authenticated yet, oldest first.
struct Unauthenticated {
    max: usize,
    next: AtomicU64,
    held: Mutex<BTreeMap<u64, Arc<Liveness>>>,
}

impl Unauthenticated {
    fn new(max: usize) -> Unauthenticated {
        Unauthenticated { max: max.max(1), next: AtomicU64::new(0), held: Mutex::new(BTreeMap::new()) }
    }

    /// Holds a new connection, evicting the oldest unauthenticated one when full. The ticket
    /// leaves the pool when dropped.
    fn admit(self: &Arc<Self>, liveness: &Arc<Liveness>) -> Ticket {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let mut held = lock(&self.held);
        // Those authenticated since their admission leave first.
        held.retain(|_, l| !lock(&l.state).authenticated);
        while held.len() >= self.max {
            let Some((_, oldest)) = held.pop_first() else { break };
            oldest.evict();
        }
        held.insert(key, liveness.clone());
        Ticket { pool: self.clone(), key }
    }
}

/// A connection's place in [`Unauthenticated`].
struct Ticket {
    pool: Arc<Unauthenticated>,
    key: u64,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        lock(&self.pool.held).remove(&self.key);
    }
}
