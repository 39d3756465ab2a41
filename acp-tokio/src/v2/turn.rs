//! A client's running v2 turn: its `session/update`s as a [`Stream`], then how it ended.

use std::pin::Pin;
use std::task::{Context, Poll};

use acp_proto::v2::{self, SessionId, UpdateSessionNotification};
use acp_proto::{TurnEndReason, compat::AnyOutcome as Outcome};
use futures_core::Stream;
use tokio::sync::oneshot;

use super::{CommandV2, TurnItemV2};
use crate::Error;
use crate::handle::{Command, Handle};
use crate::sync::QueueReceiver;
use crate::turn::{handle_then_open, open_gates};

/// A v2 turn in progress, from [`ClientConnectionV2::prompt`](super::ClientConnectionV2::prompt).
///
/// It yields the turn's `session/update`s in wire order (the agent's `idle` `state_update`
/// last), as a [`Stream`] or with [`next_update`](Self::next_update), and ends exactly once,
/// when the core reports the turn over; [`finish`](Self::finish) then says how. Updates are
/// buffered up to [`ClientOptions::turn_buffer`](crate::ClientOptions::turn_buffer); while the
/// buffer is full the connection stops reading.
///
/// The agent's requests of this turn's session (a permission ask, an elicitation scoped to the
/// session) reach their [`ClientV2`](super::ClientV2) handlers in wire order with the updates,
/// by construction: a handler starts only once this turn's reader has taken every update sent
/// before its request (as a stream or with [`next_update`](Self::next_update)), or has
/// handled it (with [`next_update_then`](Self::next_update_then)), or dropped the turn.
///
/// Dropping an unfinished turn cancels it (`session/cancel`) and drops its remaining updates.
#[must_use = "a turn is cancelled when dropped"]
pub struct PromptTurnV2 {
    session_id: SessionId,
    updates: QueueReceiver<TurnItemV2>,
    ack: Option<oneshot::Receiver<Result<Outcome, Error>>>,
    handle: Handle,
    end: Option<TurnEndReason>,
    /// Whether dropping the turn cancels it.
    armed: bool,
}

impl PromptTurnV2 {
    pub(super) fn new(
        session_id: SessionId,
        updates: QueueReceiver<TurnItemV2>,
        ack: oneshot::Receiver<Result<Outcome, Error>>,
        handle: Handle,
    ) -> PromptTurnV2 {
        PromptTurnV2 { session_id, updates, ack: Some(ack), handle, end: None, armed: true }
    }

    pub(super) fn disarm(&mut self) {
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

    /// The next update of the turn, or `None` once the turn is over.
    ///
    /// The agent's requests of this turn's session that arrived right after the update may
    /// reach their handlers as soon as it is returned (so a reader may wait for such a
    /// handler). To handle an update before them, use
    /// [`next_update_then`](Self::next_update_then).
    pub async fn next_update(&mut self) -> Option<UpdateSessionNotification> {
        let update = std::future::poll_fn(|cx| self.poll_update(cx)).await;
        self.open_gates();
        update
    }

    /// Takes the next update and runs `handle` with it before any agent request of this turn's
    /// session that arrived after that update reaches its handler; `None` once the turn is
    /// over. `handle` must not wait for such a handler.
    pub async fn next_update_then<R>(&mut self, handle: impl FnOnce(UpdateSessionNotification) -> R) -> Option<R> {
        let update = std::future::poll_fn(|cx| self.poll_update(cx)).await?;
        Some(handle_then_open(&mut self.updates, update, handle))
    }

    /// The next update; the gates before it open on the way.
    fn poll_update(&mut self, cx: &mut Context<'_>) -> Poll<Option<UpdateSessionNotification>> {
        if self.end.is_some() {
            return Poll::Ready(None);
        }
        loop {
            match self.updates.poll_pop(cx) {
                Poll::Ready(Some(TurnItemV2::Update(update))) => return Poll::Ready(Some(update)),
                Poll::Ready(Some(TurnItemV2::Gate(open))) => drop(open.send(())),
                Poll::Ready(Some(TurnItemV2::End(reason))) => {
                    self.end = Some(reason);
                    self.armed = false;
                    return Poll::Ready(None);
                }
                Poll::Ready(None) => {
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

    /// Asks the agent to stop the turn (`session/cancel`); the turn then ends when the agent
    /// reports `idle` (`cancelled`).
    pub async fn cancel(&self) -> Result<(), Error> {
        self.handle.cancel_turn(self.session_id.clone()).await
    }

    /// The prompt's acknowledgement (`PromptResponse`: the id of its user message); waits for
    /// it. `None` after the first call.
    pub async fn ack(&mut self) -> Option<Result<v2::PromptResponse, Error>> {
        let ack = self.ack.take()?;
        Some(prompt_response(ack.await.unwrap_or(Err(Error::ConnectionClosed))))
    }

    /// Waits for the end of the turn (dropping the updates not taken yet) and says how it
    /// ended. A turn whose prompt failed gives the prompt's error; a connection that closed
    /// before the end, [`Error::ConnectionClosed`].
    pub async fn finish(mut self) -> Result<TurnEndReason, Error> {
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

/// The prompt's acknowledgement, or why there is none.
fn prompt_response(outcome: Result<Outcome, Error>) -> Result<v2::PromptResponse, Error> {
    let outcome = crate::outcome_compat::v2_result(outcome?);
    acp_runtime::v2::prompt_ack(acp_proto::Outcome::Result(outcome?))
}

impl Stream for PromptTurnV2 {
    type Item = UpdateSessionNotification;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<UpdateSessionNotification>> {
        let this = self.get_mut();
        let update = this.poll_update(cx);
        if update.is_ready() {
            this.open_gates();
        }
        update
    }
}

impl Drop for PromptTurnV2 {
    fn drop(&mut self) {
        if self.armed {
            let session = self.session_id.clone();
            let _ = self.handle.send(Command::V2(CommandV2::AbandonTurn { session }));
        }
    }
}

impl std::fmt::Debug for PromptTurnV2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptTurnV2").field("session_id", &self.session_id).field("end", &self.end).finish()
    }
}
