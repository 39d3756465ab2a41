//! A client's running prompt turn: its updates as a [`Stream`], then its stop reason.

use std::pin::Pin;
use std::task::{Context, Poll};

use acp_proto::types::{PromptRequest, PromptResponse, SessionId, SessionNotification, SessionUpdate, StopReason};
use acp_proto::{Response, TypedRequest};
use futures_core::Stream;
use tokio::sync::oneshot;

use crate::Error;
use crate::handle::{Command, Handle};
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
/// Dropping an unfinished turn cancels it (`session/cancel`) and drops its remaining updates.
#[must_use = "a prompt turn is cancelled when dropped"]
pub struct PromptTurn {
    session_id: SessionId,
    updates: QueueReceiver<SessionNotification>,
    outcome: oneshot::Receiver<Result<Response, Error>>,
    handle: Handle,
    /// Set while the turn may still run: dropping the turn then cancels it.
    token: Option<u64>,
}

impl PromptTurn {
    pub(crate) fn new(
        session_id: SessionId,
        updates: QueueReceiver<SessionNotification>,
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
    pub async fn next_update(&mut self) -> Option<SessionUpdate> {
        self.updates.pop().await.map(|n| n.update)
    }

    /// Asks the agent to stop the turn (`session/cancel`); the turn then ends with
    /// [`StopReason::Cancelled`].
    pub async fn cancel(&self) -> Result<(), Error> {
        self.handle.cancel_turn(self.session_id.clone()).await
    }

    /// Waits for the agent's answer, dropping the updates not taken yet.
    pub async fn response(mut self) -> Result<PromptResponse, Error> {
        while self.updates.pop().await.is_some() {}
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

impl Stream for PromptTurn {
    type Item = SessionUpdate;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<SessionUpdate>> {
        self.get_mut().updates.poll_pop(cx).map(|n| n.map(|n| n.update))
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
