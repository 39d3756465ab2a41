//! What handles send to the driver, and the handle-side halves of requests, notifications and
//! handler completions.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;
use std::time::Duration;

use acp_proto::types::{SessionId, SessionNotification};
use acp_proto::{
    CloseReason, InboundId, Method, Negotiated, Notification, Request, Response, RpcError, Stats, TypedRequest,
};
use tokio::sync::{mpsc, oneshot};

use crate::Error;
use crate::sync::{QueueSender, Signal, lock};

/// A command for the driver.
pub(crate) enum Command {
    /// A handler finished: answer the inbound request. Boxed: a `Response` is large, and every
    /// command (one per streamed update) is as large as the largest variant.
    Complete { id: InboundId, result: Box<Result<Response, RpcError>> },
    /// Send a request; `reply` gets its result.
    Request(Box<RequestCommand>),
    /// Send a notification; `ack` is answered once the core has queued it (or refused it).
    Notify { notification: Box<Notification>, ack: oneshot::Sender<Result<(), Error>> },
    /// The future awaiting request `token` was dropped: cancel the request (a prompt: its turn).
    Abandon { token: u64 },
    /// Client side: cancel the running turn of a session (`session/cancel`).
    CancelTurn { session: SessionId, ack: oneshot::Sender<Result<(), Error>> },
    /// Close the connection.
    Close,
    /// A v2 command (feature `unstable_protocol_v2`).
    #[cfg(feature = "unstable_protocol_v2")]
    V2(crate::v2::CommandV2),
}

/// A request for the driver to send.
pub(crate) struct RequestCommand {
    pub(crate) token: u64,
    pub(crate) request: Request,
    pub(crate) timeout: Option<Duration>,
    pub(crate) reply: oneshot::Sender<Result<Response, Error>>,
    /// Client prompts: where the turn's updates go, and who waits for the request to go out.
    pub(crate) turn: Option<TurnSink>,
}

/// The driver's side of a client prompt turn.
pub(crate) struct TurnSink {
    pub(crate) session: SessionId,
    pub(crate) updates: QueueSender<TurnItem>,
    pub(crate) accepted: oneshot::Sender<Result<(), Error>>,
}

/// One item of a client's prompt turn.
pub(crate) enum TurnItem {
    /// A `session/update` of the turn.
    Update(SessionNotification),
    /// An agent request of the turn's session arrived here on the wire: its handler waits until
    /// the turn's reader has taken every update before it (and, with `next_update_then`,
    /// handled it), or dropped the turn, so that the application sees the turn's updates and
    /// requests in wire order, by construction. It never waits for the reader to ask for more,
    /// so a reader may wait for the handler without a deadlock.
    Gate(oneshot::Sender<()>),
}

/// Counters of one connection: the core's, and the driver's own buffers. Peaks are since the
/// connection started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DriverStats {
    /// The core's counters.
    pub core: Stats,
    /// The core's [`memory_estimate`](acp_proto::Connection::memory_estimate) now.
    pub memory_estimate: usize,
    /// The largest core memory estimate seen.
    pub peak_memory_estimate: usize,
    /// Bytes the driver holds: read but not yet consumed, taken but not yet written.
    pub buffered_bytes: usize,
    /// The largest `buffered_bytes` seen.
    pub peak_buffered_bytes: usize,
    /// Application sends held while the outbound budget was full, now.
    pub held_sends: usize,
    /// The most sends held at once.
    pub peak_held_sends: usize,
    /// Successful reads from the transport.
    pub reads: u64,
    /// Batches taken from the core and written (each may take several `write` calls).
    pub write_batches: u64,
    /// Flushes.
    pub flushes: u64,
}

/// What the driver and every handle of one connection share.
pub(crate) struct Shared {
    next_token: AtomicU64,
    pub(crate) negotiated: OnceLock<Negotiated>,
    pub(crate) stats: Mutex<DriverStats>,
    pub(crate) close_reason: Mutex<Option<CloseReason>>,
    /// Set when the driver has finished (or was dropped).
    pub(crate) finished: Signal,
}

impl Shared {
    pub(crate) fn new() -> Arc<Shared> {
        Arc::new(Shared {
            next_token: AtomicU64::new(0),
            negotiated: OnceLock::new(),
            stats: Mutex::new(DriverStats::default()),
            close_reason: Mutex::new(None),
            finished: Signal::default(),
        })
    }
}

/// A sender of commands to one connection's driver.
#[derive(Clone)]
pub(crate) struct Handle {
    pub(crate) tx: mpsc::UnboundedSender<Command>,
    pub(crate) shared: Arc<Shared>,
}

impl Handle {
    pub(crate) fn send(&self, command: Command) -> Result<(), Error> {
        self.tx.send(command).map_err(|_| Error::ConnectionClosed)
    }

    pub(crate) fn token(&self) -> u64 {
        self.shared.next_token.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends a request and waits for its outcome. Dropping the future cancels the request.
    pub(crate) async fn request(&self, request: Request, timeout: Option<Duration>) -> Result<Response, Error> {
        let token = self.token();
        let (reply, rx) = oneshot::channel();
        self.send(Command::Request(Box::new(RequestCommand { token, request, timeout, reply, turn: None })))?;
        let guard = AbandonGuard { handle: self, token: Some(token) };
        let result = rx.await.unwrap_or(Err(Error::ConnectionClosed));
        guard.disarm();
        result
    }

    /// [`request`](Self::request) with the typed result: a result of another method is
    /// [`Error::UnexpectedResponse`].
    pub(crate) async fn request_typed<R: TypedRequest>(
        &self,
        request: R,
        timeout: Option<Duration>,
    ) -> Result<R::Result, Error> {
        R::result(self.request(request.into(), timeout).await?).ok_or(Error::UnexpectedResponse)
    }

    /// Sends a notification once the outbound budget allows it.
    pub(crate) async fn notify(&self, notification: Box<Notification>) -> Result<(), Error> {
        let (ack, rx) = oneshot::channel();
        self.send(Command::Notify { notification, ack })?;
        rx.await.unwrap_or(Err(Error::ConnectionClosed))
    }

    /// Client side: cancels the running turn of `session` (`session/cancel`).
    pub(crate) async fn cancel_turn(&self, session: SessionId) -> Result<(), Error> {
        let (ack, rx) = oneshot::channel();
        self.send(Command::CancelTurn { session, ack })?;
        rx.await.unwrap_or(Err(Error::ConnectionClosed))
    }

    pub(crate) fn stats(&self) -> DriverStats {
        *lock(&self.shared.stats)
    }
}

/// The default answer of a handler method: `-32601` naming the method.
pub(crate) fn not_found<T>(method: Method) -> std::future::Ready<Result<T, RpcError>> {
    std::future::ready(Err(RpcError::method_not_found(method.wire())))
}

/// Cancels a request whose future is dropped before its outcome.
pub(crate) struct AbandonGuard<'a> {
    pub(crate) handle: &'a Handle,
    pub(crate) token: Option<u64>,
}

impl AbandonGuard<'_> {
    pub(crate) fn disarm(mut self) {
        self.token = None;
    }
}

impl Drop for AbandonGuard<'_> {
    fn drop(&mut self) {
        if let Some(token) = self.token {
            let _ = self.handle.send(Command::Abandon { token });
        }
    }
}

/// Reports a handler's completion exactly once: with its result, or `-32603` when the handler
/// panicked or its task was dropped before it finished.
pub(crate) struct Done {
    pub(crate) id: InboundId,
    pub(crate) tx: Option<mpsc::UnboundedSender<Command>>,
}

impl Done {
    pub(crate) fn complete(mut self, result: Result<Response, RpcError>) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Command::Complete { id: self.id, result: Box::new(result) });
        }
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let error = RpcError::internal_error("the handler was dropped before it completed");
            let _ = tx.send(Command::Complete { id: self.id, result: Box::new(Err(error)) });
        }
    }
}

/// Runs one request handler and reports its completion; a panic becomes `-32603` for this
/// request only.
///
/// With a `gate`, the handler starts only once it opens (or its turn is dropped): see
/// [`TurnItem::Gate`].
pub(crate) async fn run_handler(
    done: Done,
    gate: Option<oneshot::Receiver<()>>,
    handler: impl Future<Output = Result<Response, RpcError>>,
) {
    if let Some(gate) = gate {
        // Err: the turn was dropped unread, so there is nothing to stay behind.
        let _ = gate.await;
    }
    let result = match catch_unwind(handler).await {
        Ok(result) => result,
        Err(panic) => Err(acp_runtime::handler_panicked(&*panic)),
    };
    done.complete(result);
}

/// Polls `future`, turning a panic into an `Err`.
pub(crate) async fn catch_unwind<F: Future>(future: F) -> Result<F::Output, Box<dyn Any + Send>> {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(move |cx| match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
        Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
        Ok(Poll::Pending) => Poll::Pending,
        Err(panic) => Poll::Ready(Err(panic)),
    })
    .await
}
