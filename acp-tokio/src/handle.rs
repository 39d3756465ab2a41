//! What handles send to the driver, and the handle-side halves of requests, notifications and
//! handler completions.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;
use std::time::Duration;

use acp_proto::protocol::V1;
use acp_proto::role::{self, Role};
use acp_proto::types::SessionId;
use acp_proto::{Answer, CloseReason, InboundId, Negotiated, Outcome, RpcError, Stats, TypedRequest};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::Error;
use crate::sync::{QueueSender, Signal, lock};
use crate::version::{TurnItem, Version};

/// A command for the driver of a connection speaking `P`.
pub(crate) enum Command<P: Version, R: Role> {
    /// A handler finished: answer the inbound request. Boxed: a `Response` is large, and every
    /// command (one per streamed update) is as large as the largest variant.
    Complete(Box<Answer<R, P>>),
    /// Send a request; `reply` gets its outcome.
    Request(Box<RequestCommand<P, R>>),
    /// Send a notification; `ack` is answered once the core has queued it (or refused it).
    Notify { notification: Box<R::Notification<P>>, ack: oneshot::Sender<Result<(), Error>> },
    /// The future awaiting request `token` (or the stream of the turn its prompt opened) was
    /// dropped: cancel the request (a turn: `session/cancel`).
    Abandon { token: u64 },
    /// Client side (`client` proves it): cancel the running turn of a session
    /// (`session/cancel`).
    CancelTurn { session: SessionId, ack: oneshot::Sender<Result<(), Error>>, client: R::ClientOnly },
    /// Close the connection.
    Close,
}

/// A request for the driver to send.
pub(crate) struct RequestCommand<P: Version, R: Role> {
    pub(crate) token: u64,
    pub(crate) request: R::Request<P>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) reply: oneshot::Sender<Result<Outcome<P>, Error>>,
    /// Client prompts: where the turn's updates go, and who waits for the request to go out.
    pub(crate) turn: Option<TurnSink<P, R>>,
}

/// The driver's side of a client prompt turn (`client` proves the side).
pub(crate) struct TurnSink<P: Version, R: Role> {
    pub(crate) session: SessionId,
    pub(crate) updates: QueueSender<TurnItem<P>>,
    pub(crate) accepted: oneshot::Sender<Result<(), Error>>,
    pub(crate) client: R::ClientOnly,
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
pub(crate) struct Handle<P: Version, R: Role> {
    pub(crate) tx: mpsc::UnboundedSender<Command<P, R>>,
    pub(crate) shared: Arc<Shared>,
}

impl<P: Version, R: Role> Clone for Handle<P, R> {
    fn clone(&self) -> Self {
        Handle { tx: self.tx.clone(), shared: self.shared.clone() }
    }
}

/// The result of a request, or why there is none: [`Error::from_outcome`].
pub(crate) fn outcome_result<P: Version>(outcome: Outcome<P>) -> Result<P::Response, Error> {
    Error::from_outcome(outcome)
}

impl<P: Version, R: Role> Handle<P, R> {
    pub(crate) fn send(&self, command: Command<P, R>) -> Result<(), Error> {
        self.tx.send(command).map_err(|_| Error::ConnectionClosed)
    }

    pub(crate) fn token(&self) -> u64 {
        self.shared.next_token.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends a request and waits for its outcome. Dropping the future cancels the request.
    pub(crate) async fn request_outcome(
        &self,
        request: R::Request<P>,
        timeout: Option<Duration>,
    ) -> Result<Outcome<P>, Error> {
        let token = self.token();
        let (reply, rx) = oneshot::channel();
        self.send(Command::Request(Box::new(RequestCommand { token, request, timeout, reply, turn: None })))?;
        let guard = AbandonGuard { handle: self, token: Some(token) };
        let result = rx.await.unwrap_or(Err(Error::ConnectionClosed));
        guard.disarm();
        result
    }

    /// Sends a request and waits for its result. Dropping the future cancels the request.
    pub(crate) async fn request(
        &self,
        request: R::Request<P>,
        timeout: Option<Duration>,
    ) -> Result<P::Response, Error> {
        outcome_result(self.request_outcome(request, timeout).await?)
    }

    /// Sends a request and waits for its result, the peer's (a result of this side is
    /// [`Error::UnexpectedResponse`]). Dropping the future cancels the request.
    pub(crate) async fn ask(
        &self,
        request: R::Request<P>,
        timeout: Option<Duration>,
    ) -> Result<<R::Peer as Role>::Response<P>, Error> {
        R::Peer::own_response::<P>(self.request(request, timeout).await?).ok_or(Error::UnexpectedResponse)
    }

    /// Sends a notification once the outbound budget allows it.
    pub(crate) async fn notify(&self, notification: Box<R::Notification<P>>) -> Result<(), Error> {
        let (ack, rx) = oneshot::channel();
        self.send(Command::Notify { notification, ack })?;
        rx.await.unwrap_or(Err(Error::ConnectionClosed))
    }

    /// An extension request (its name starts with `_`), and its result.
    pub(crate) async fn ext_method(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, Error> {
        let response = self.request(R::ext_request::<P>(method, params), timeout).await?;
        P::ext_result(response).map_err(|_| Error::UnexpectedResponse)
    }

    /// An extension notification, once the outbound budget allows it.
    pub(crate) async fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        self.notify(Box::new(R::ext_notification::<P>(method, params))).await
    }

    pub(crate) fn stats(&self) -> DriverStats {
        *lock(&self.shared.stats)
    }
}

impl<P: Version> Handle<P, role::Client> {
    /// Cancels the running turn of `session` (`session/cancel`).
    pub(crate) async fn cancel_turn(&self, session: SessionId) -> Result<(), Error> {
        let (ack, rx) = oneshot::channel();
        self.send(Command::CancelTurn { session, ack, client: () })?;
        rx.await.unwrap_or(Err(Error::ConnectionClosed))
    }
}

impl<R: Role> Handle<V1, R> {
    /// [`request`](Self::request) with the typed result: a result of another method is
    /// [`Error::UnexpectedResponse`].
    pub(crate) async fn request_typed<Q: TypedRequest + Into<R::Request<V1>>>(
        &self,
        request: Q,
        timeout: Option<Duration>,
    ) -> Result<Q::Result, Error> {
        Q::result(self.request(request.into(), timeout).await?).ok_or(Error::UnexpectedResponse)
    }
}

/// Cancels a request whose future is dropped before its outcome.
pub(crate) struct AbandonGuard<'a, P: Version, R: Role> {
    pub(crate) handle: &'a Handle<P, R>,
    pub(crate) token: Option<u64>,
}

impl<P: Version, R: Role> AbandonGuard<'_, P, R> {
    pub(crate) fn disarm(mut self) {
        self.token = None;
    }
}

impl<P: Version, R: Role> Drop for AbandonGuard<'_, P, R> {
    fn drop(&mut self) {
        if let Some(token) = self.token {
            let _ = self.handle.send(Command::Abandon { token });
        }
    }
}

/// Reports a handler's completion exactly once: with its result, or `-32603` when the handler
/// panicked or its task was dropped before it finished.
pub(crate) struct Done<P: Version, R: Role> {
    id: InboundId,
    tx: Option<mpsc::UnboundedSender<Command<P, R>>>,
}

impl<P: Version, R: Role> Done<P, R> {
    /// The completion of request `id`, reported to the driver of `handle`.
    pub(crate) fn new(id: InboundId, handle: &Handle<P, R>) -> Done<P, R> {
        Done { id, tx: Some(handle.tx.clone()) }
    }

    /// The request's handle (what a panic's `-32603` answers).
    pub(crate) fn id(&self) -> InboundId {
        self.id
    }

    pub(crate) fn complete(mut self, answer: Answer<R, P>) {
        debug_assert_eq!(answer.id(), self.id, "a handler answers its own request");
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Command::Complete(Box::new(answer)));
        }
    }
}

impl<P: Version, R: Role> Drop for Done<P, R> {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let error = RpcError::internal_error("the handler was dropped before it completed");
            let _ = tx.send(Command::Complete(Box::new(Answer::error(self.id, error))));
        }
    }
}

/// Runs one request handler and reports its completion; a panic becomes `-32603` for this
/// request only.
///
/// With a `gate`, the handler starts only once it opens (or its turn is dropped): see
/// [`TurnItem::Gate`].
pub(crate) async fn run_handler<P: Version, R: Role>(
    done: Done<P, R>,
    gate: Option<oneshot::Receiver<()>>,
    handler: impl Future<Output = Answer<R, P>>,
) {
    if let Some(gate) = gate {
        // Err: the turn was dropped unread, so there is nothing to stay behind.
        let _ = gate.await;
    }
    let answer = match catch_unwind(handler).await {
        Ok(answer) => answer,
        Err(panic) => Answer::error(done.id(), acp_runtime::handler_panicked(&*panic)),
    };
    done.complete(answer);
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
