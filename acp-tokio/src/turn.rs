//! A client's running prompt turn: its updates as a [`Stream`], then its stop reason.

use std::pin::Pin;
use std::task::{Context, Poll};

use acp_proto::types::{PromptRequest, PromptResponse, SessionId, SessionUpdate, StopReason};
use acp_proto::{Response, TypedRequest};
use futures_core::Stream;
use tokio::sync::oneshot;

use crate::Error;
use crate::handle::{Command, Handle, TurnItem};
use crate::sync::QueueReceiver;

/// A prompt turn in progress, from [`ClientConnection::prompt`](crate::ClientConnection::prompt).
///
/// It yields the turn's `session/update`s in the order the agent sent them (as a
/// [`Stream`], or with [`next_update`](Self::next_update)); the stream ends when the agent has
/// answered the prompt, and [`finish`](Self::finish) (the stop reason) or
/// [`response`](Self::response) (the whole answer) then give it. Updates are buffered up to
/// [`ClientOptions::turn_buffer`](crate::ClientOptions::turn_buffer); while the buffer is full
/// the connection stops reading, so a slow consumer slows the agent down instead of growing
/// memory.
///
/// The agent's requests of this turn's session (a permission question, a file read) reach
/// their handlers in wire order with the updates, by construction: a handler starts only once
/// this turn's reader has taken every update sent before its request (as a stream or with
/// [`next_update`](Self::next_update)), or has handled it (with
/// [`next_update_then`](Self::next_update_then)), or dropped the turn.
///
/// Dropping an unfinished turn cancels it (`session/cancel`) and drops its remaining updates.
#[must_use = "a prompt turn is cancelled when dropped"]
pub struct PromptTurn {
    session_id: SessionId,
    updates: QueueReceiver<TurnItem>,
    outcome: oneshot::Receiver<Result<Response, Error>>,
    handle: Handle,
    /// Set while the turn may still run: dropping the turn then cancels it.
    token: Option<u64>,
}

impl PromptTurn {
    pub(crate) fn new(
        session_id: SessionId,
        updates: QueueReceiver<TurnItem>,
        outcome: oneshot::Receiver<Result<Response, Error>>,
        handle: Handle,
        token: u64,
    ) -> PromptTurn {
        PromptTurn { session_id, updates, outcome, handle, token: Some(token) }
    }

    pub(crate) fn disarm(&mut self) {
        self.token = None;
    }

    /// The turn's session.
    pub fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    /// Updates received and not yet taken.
    pub fn buffered(&self) -> usize {
        self.updates.len()
    }

    /// The next update of the turn, or `None` once the agent has answered the prompt.
    ///
    /// The agent's requests of this turn that arrived right after the update may reach their
    /// handlers as soon as it is returned (so a reader may wait for such a handler). To handle
    /// an update before them, use [`next_update_then`](Self::next_update_then).
    pub async fn next_update(&mut self) -> Option<SessionUpdate> {
        let update = std::future::poll_fn(|cx| self.poll_update(cx)).await;
        self.open_gates();
        update
    }

    /// Takes the next update and runs `handle` with it before any agent request of this turn
    /// that arrived after that update reaches its handler; `None` once the turn is over. So
    /// what `handle` does comes before what those handlers do, by construction. `handle` must
    /// not wait for such a handler.
    pub async fn next_update_then<R>(&mut self, handle: impl FnOnce(SessionUpdate) -> R) -> Option<R> {
        let update = std::future::poll_fn(|cx| self.poll_update(cx)).await?;
        Some(handle_then_open(&mut self.updates, update, handle))
    }

    /// The next update; the gates before it open on the way.
    fn poll_update(&mut self, cx: &mut Context<'_>) -> Poll<Option<SessionUpdate>> {
        loop {
            match self.updates.poll_pop(cx) {
                Poll::Ready(Some(TurnItem::Update(notification))) => return Poll::Ready(Some(notification.update)),
                Poll::Ready(Some(TurnItem::Gate(open))) => drop(open.send(())),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Lets the agent requests that came right after the update taken last start.
    fn open_gates(&mut self) {
        open_gates(&mut self.updates);
    }

    /// Asks the agent to stop the turn (`session/cancel`); the turn then ends with
    /// [`StopReason::Cancelled`].
    pub async fn cancel(&self) -> Result<(), Error> {
        self.handle.cancel_turn(self.session_id.clone()).await
    }

    /// Waits for the agent's answer, dropping the updates not taken yet.
    pub async fn response(mut self) -> Result<PromptResponse, Error> {
        while self.next_update().await.is_some() {}
        let result = (&mut self.outcome).await.unwrap_or(Err(Error::ConnectionClosed));
        self.token = None;
        PromptRequest::result(result?).ok_or(Error::UnexpectedResponse)
    }

    /// Waits for the agent's answer (dropping the updates not taken yet) and returns its stop
    /// reason.
    pub async fn finish(self) -> Result<StopReason, Error> {
        Ok(self.response().await?.stop_reason)
    }
}

/// An item of a client turn's queue (v1 [`TurnItem`], v2 `TurnItemV2`): an update, or the
/// ordering gate of an agent request of the turn's session.
pub(crate) trait GateItem: Sized {
    /// The gate's opener, or the item back when it is none.
    fn into_gate(self) -> Result<oneshot::Sender<()>, Self>;
    /// Whether this is a gate.
    fn is_gate(&self) -> bool;
}

impl GateItem for TurnItem {
    fn into_gate(self) -> Result<oneshot::Sender<()>, Self> {
        match self {
            TurnItem::Gate(open) => Ok(open),
            other => Err(other),
        }
    }

    fn is_gate(&self) -> bool {
        matches!(self, TurnItem::Gate(_))
    }
}

/// Lets the agent requests that came right after the update taken last start.
pub(crate) fn open_gates<T: GateItem>(queue: &mut QueueReceiver<T>) {
    while let Some(item) = queue.pop_if(T::is_gate) {
        if let Ok(open) = item.into_gate() {
            let _ = open.send(());
        }
    }
}

/// Runs `handle` with the update just taken, before the gates after it open (the queue counts
/// as busy meanwhile, so no gate is skipped for a request that arrives during it).
pub(crate) fn handle_then_open<T: GateItem, U, R>(
    queue: &mut QueueReceiver<T>,
    update: U,
    handle: impl FnOnce(U) -> R,
) -> R {
    queue.set_busy(true);
    let result = handle(update);
    queue.set_busy(false);
    open_gates(queue);
    result
}

impl Stream for PromptTurn {
    type Item = SessionUpdate;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<SessionUpdate>> {
        let this = self.get_mut();
        let update = this.poll_update(cx);
        if update.is_ready() {
            this.open_gates();
        }
        update
    }
}

impl Drop for PromptTurn {
    fn drop(&mut self) {
        if let Some(token) = self.token {
            let _ = self.handle.send(Command::Abandon { token });
        }
    }
}

impl std::fmt::Debug for PromptTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptTurn").field("session_id", &self.session_id).field("buffered", &self.buffered()).finish()
    }
}
