//! A client's running prompt turn: its updates as a [`Stream`], then how it ended.

use std::pin::Pin;
use std::task::{Context, Poll};

use acp_proto::protocol::V1;
use acp_proto::role;
use acp_proto::types::{PromptRequest, PromptResponse, SessionId, StopReason};
use acp_proto::{Outcome, TypedRequest};
use futures_core::Stream;
use tokio::sync::oneshot;

use crate::Error;
use crate::handle::{Command, Handle, outcome_result};
use crate::sync::QueueReceiver;
use crate::version::{TurnItem, Version};

/// A prompt turn in progress, from [`ClientConnection::prompt`](crate::versioned::ClientConnection)
/// (`PromptTurn<V1>` is [`acp_tokio::PromptTurn`](crate::PromptTurn), `PromptTurn<V2>` is
/// `acp_tokio::v2::PromptTurn`).
///
/// It yields the turn's `session/update`s in the order the agent sent them (as a
/// [`Stream`], or with [`next_update`](Self::next_update)). In v1 the stream ends when the agent
/// has answered the prompt, and `finish` (the stop reason) or `response` (the whole answer)
/// then give it; in v2 the prompt is only acknowledged (`ack`), the agent's `idle`
/// `state_update` comes last, and the stream ends exactly when the core reports the turn over
/// (`finish` then says how). Updates are buffered up to
/// [`ClientOptions::turn_buffer`](crate::ClientOptions::turn_buffer); while the buffer is full
/// the connection stops reading, so a slow consumer slows the agent down instead of growing
/// memory.
///
/// The agent's requests of this turn's session (a permission question, a file read, a
/// session-scoped elicitation) reach their handlers in wire order with the updates, by
/// construction: a handler starts only once this turn's reader has taken every update sent
/// before its request (as a stream or with [`next_update`](Self::next_update)), or has handled
/// it (with [`next_update_then`](Self::next_update_then)), or dropped the turn.
///
/// Dropping an unfinished turn cancels it (`session/cancel`) and drops its remaining updates.
#[must_use = "a prompt turn is cancelled when dropped"]
pub struct PromptTurn<P: Version> {
    session_id: SessionId,
    updates: QueueReceiver<TurnItem<P>>,
    /// The prompt's outcome (v1: its answer; v2: its acknowledgement); `None` once taken.
    outcome: Option<oneshot::Receiver<Result<Outcome<P>, Error>>>,
    handle: Handle<P, role::Client>,
    token: u64,
    /// Whether dropping the turn cancels it: while it may still run.
    armed: bool,
    /// v2: how the turn ended, once its stream said so.
    #[cfg(feature = "unstable_protocol_v2")]
    end: Option<acp_proto::TurnEndReason>,
}

impl<P: Version> PromptTurn<P> {
    pub(crate) fn new(
        session_id: SessionId,
        updates: QueueReceiver<TurnItem<P>>,
        outcome: oneshot::Receiver<Result<Outcome<P>, Error>>,
        handle: Handle<P, role::Client>,
        token: u64,
    ) -> PromptTurn<P> {
        PromptTurn {
            session_id,
            updates,
            outcome: Some(outcome),
            handle,
            token,
            armed: true,
            #[cfg(feature = "unstable_protocol_v2")]
            end: None,
        }
    }

    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }

    /// The turn's session.
    pub fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    /// Updates received and not yet taken.
    pub fn buffered(&self) -> usize {
        self.updates.len()
    }

    /// The next update of the turn, or `None` once the turn is over (v1: the agent answered
    /// the prompt; v2: the core reported the turn's end).
    ///
    /// The agent's requests of this turn's session that arrived right after the update may
    /// reach their handlers as soon as it is returned (so a reader may wait for such a
    /// handler). To handle an update before them, use
    /// [`next_update_then`](Self::next_update_then).
    pub async fn next_update(&mut self) -> Option<P::Item> {
        let update = std::future::poll_fn(|cx| self.poll_update(cx, false)).await;
        self.open_gates();
        update
    }

    /// Takes the next update and runs `handle` with it before any agent request of this turn's
    /// session that arrived after that update reaches its handler; `None` once the turn is
    /// over. So what `handle` does comes before what those handlers do, by construction.
    /// `handle` must not wait for such a handler.
    pub async fn next_update_then<R>(&mut self, handle: impl FnOnce(P::Item) -> R) -> Option<R> {
        // Taken with the reader counted busy (`hold`), in one lock hold with the take.
        let update = std::future::poll_fn(|cx| self.poll_update(cx, true)).await?;
        Some(handle_then_open(&mut self.updates, update, handle))
    }

    /// The next update; the gates before it open on the way. With `hold`, the update is taken
    /// with the reader counted busy (see [`handle_then_open`]).
    fn poll_update(&mut self, cx: &mut Context<'_>, hold: bool) -> Poll<Option<P::Item>> {
        #[cfg(feature = "unstable_protocol_v2")]
        if self.end.is_some() {
            return Poll::Ready(None);
        }
        loop {
            match self.updates.poll_pop_holding(cx, |item| hold && matches!(item, TurnItem::Update(_))) {
                Poll::Ready(Some(TurnItem::Update(update))) => return Poll::Ready(Some(P::into_item(update))),
                Poll::Ready(Some(TurnItem::Gate(open))) => drop(open.send(())),
                #[cfg(feature = "unstable_protocol_v2")]
                Poll::Ready(Some(TurnItem::End(reason))) => {
                    self.end = Some(reason);
                    self.armed = false;
                    return Poll::Ready(None);
                }
                Poll::Ready(None) => {
                    // v1: the prompt was answered (its outcome is kept for `response`); either
                    // version: the connection closed. Nothing is left to cancel.
                    self.armed = false;
                    return Poll::Ready(None);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Lets the agent requests that came right after the update taken last start.
    fn open_gates(&mut self) {
        open_gates(&mut self.updates);
    }

    /// Asks the agent to stop the turn (`session/cancel`); the turn then ends cancelled (v1:
    /// [`StopReason::Cancelled`]; v2: when the agent reports `idle`).
    pub async fn cancel(&self) -> Result<(), Error> {
        self.handle.cancel_turn(self.session_id.clone()).await
    }

    /// The prompt's outcome as a result, once (`None` after that).
    async fn take_outcome(&mut self) -> Option<Result<P::Response, Error>> {
        let outcome = self.outcome.take()?;
        Some(outcome.await.unwrap_or(Err(Error::ConnectionClosed)).and_then(outcome_result))
    }
}

impl PromptTurn<V1> {
    /// Waits for the agent's answer, dropping the updates not taken yet.
    pub async fn response(mut self) -> Result<PromptResponse, Error> {
        while self.next_update().await.is_some() {}
        let result = self.take_outcome().await.unwrap_or(Err(Error::UnexpectedResponse));
        self.armed = false;
        PromptRequest::result(result?).ok_or(Error::UnexpectedResponse)
    }

    /// Waits for the agent's answer (dropping the updates not taken yet) and returns its stop
    /// reason.
    pub async fn finish(self) -> Result<StopReason, Error> {
        Ok(self.response().await?.stop_reason)
    }
}

#[cfg(feature = "unstable_protocol_v2")]
impl PromptTurn<acp_proto::protocol::V2> {
    /// The prompt's acknowledgement (`PromptResponse`: the id of its user message); waits for
    /// it. `None` after the first call.
    pub async fn ack(&mut self) -> Option<Result<acp_proto::v2::PromptResponse, Error>> {
        use acp_proto::v2::{AgentResponse, Response};
        Some(self.take_outcome().await?.and_then(|response| match response {
            Response::Agent(AgentResponse::Prompt(ack)) => Ok(ack),
            _ => Err(Error::UnexpectedResponse),
        }))
    }

    /// Waits for the end of the turn (dropping the updates not taken yet) and says how it
    /// ended. A turn whose prompt failed gives the prompt's error; a connection that closed
    /// before the end, [`Error::ConnectionClosed`].
    pub async fn finish(mut self) -> Result<acp_proto::TurnEndReason, Error> {
        use acp_proto::TurnEndReason;
        while self.next_update().await.is_some() {}
        match self.end.take() {
            Some(TurnEndReason::PromptFailed) => match self.ack().await {
                Some(Err(e)) => Err(e),
                _ => Ok(TurnEndReason::PromptFailed),
            },
            Some(TurnEndReason::ConnectionClosed) | None => Err(Error::ConnectionClosed),
            Some(reason) => Ok(reason),
        }
    }
}

/// Lets the agent requests that came right after the update taken last start.
fn open_gates<P: Version>(queue: &mut QueueReceiver<TurnItem<P>>) {
    while let Some(item) = queue.pop_if(|item| matches!(item, TurnItem::Gate(_))) {
        if let TurnItem::Gate(open) = item {
            let _ = open.send(());
        }
    }
}

/// Runs `handle` with the update just taken (with `hold`: the queue counts as busy since the
/// take, in the same lock hold, so no gate is skipped for a request that arrives before or
/// during `handle`; a request the driver saw between a take and a later `set_busy(true)` would
/// start early), then ends the busy spell (also if `handle` panics) and opens the gates after it.
fn handle_then_open<P: Version, U, R>(
    queue: &mut QueueReceiver<TurnItem<P>>,
    update: U,
    handle: impl FnOnce(U) -> R,
) -> R {
    /// Ends the busy spell however `handle` returns.
    struct Idle<'a, T>(&'a QueueReceiver<T>);
    impl<T> Drop for Idle<'_, T> {
        fn drop(&mut self) {
            self.0.set_busy(false);
        }
    }
    let idle = Idle(queue);
    let result = handle(update);
    drop(idle);
    open_gates(queue);
    result
}

impl<P: Version> Stream for PromptTurn<P> {
    type Item = P::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<P::Item>> {
        let this = self.get_mut();
        let update = this.poll_update(cx, false);
        if update.is_ready() {
            this.open_gates();
        }
        update
    }
}

impl<P: Version> Drop for PromptTurn<P> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.handle.send(Command::Abandon { token: self.token });
        }
    }
}

impl<P: Version> std::fmt::Debug for PromptTurn<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptTurn").field("session_id", &self.session_id).field("buffered", &self.buffered()).finish()
    }
}
