//! A client's running v2 turn: its `session/update`s as an [`Iterator`], then how it ended;
//! and [`Turns`], where the driver finds the reader of a session's turn.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{self, Receiver};
use std::time::Instant as StdInstant;

use acp_proto::role;
use acp_proto::types::SessionId;
use acp_proto::v2::{self, AgentNotification, UpdateSessionNotification};
use acp_proto::{Instant, Outcome, SendError, TurnEndReason, V2};
use std::sync::{Arc, Mutex};

use crate::driver::{Input, Link};
use crate::error::Error;
use crate::sync::{InboxReceiver, InboxSender, lock};

/// One item of a client's v2 turn: an update, a gate, or how the turn ended.
pub(crate) type TurnItem = crate::turn_gate::TurnItem<UpdateSessionNotification, TurnEndReason>;

/// The open turns a v2 client reads, by session (at most one each), and the sessions whose
/// turn was dropped unfinished and has not ended yet (a prompt sent meanwhile would join it,
/// so none is).
#[derive(Debug, Default)]
pub(crate) struct Turns {
    state: Mutex<TurnsState>,
}

#[derive(Debug, Default)]
struct TurnsState {
    open: HashMap<SessionId, InboxSender<TurnItem>>,
    abandoned: HashSet<SessionId>,
}

impl Turns {
    /// Registers the reader of a turn about to be prompted; refused while the session has one.
    pub(crate) fn open(&self, session: &SessionId, sink: InboxSender<TurnItem>) -> Result<(), Error> {
        let mut state = lock(&self.state);
        if state.open.contains_key(session) || state.abandoned.contains(session) {
            return Err(Error::from(SendError::TurnAlreadyRunning(session.clone())));
        }
        state.open.insert(session.clone(), sink);
        Ok(())
    }

    /// Forgets the reader of a prompt that was not sent.
    pub(crate) fn forget(&self, session: &SessionId) {
        lock(&self.state).open.remove(session);
    }

    /// Hands a turn's update to its reader; gives the notification back when it is not one.
    pub(crate) fn route(&self, notification: v2::Notification, in_turn: bool) -> Option<v2::Notification> {
        let v2::Notification::Agent(AgentNotification::SessionUpdate(update)) = notification else {
            return Some(notification);
        };
        if !in_turn {
            return Some(v2::Notification::Agent(AgentNotification::SessionUpdate(update)));
        }
        // A turn without a reader here was dropped: its updates go with it.
        if let Some(sink) = lock(&self.state).open.get(&update.session_id) {
            sink.push(TurnItem::Update(update));
        }
        None
    }

    /// Client side: when `request` belongs to a session whose turn is read here (a permission
    /// ask, a session-scoped elicitation) and the reader has not yet taken every update so far,
    /// a gate placed in the turn after them, for the request's handler to wait on. As v1's
    /// `turn_gate`.
    pub(crate) fn gate(&self, request: &v2::Request) -> Option<Receiver<()>> {
        let session = request.turn_session()?;
        let state = lock(&self.state);
        let sink = state.open.get(session)?;
        if sink.settled() {
            return None;
        }
        let (open, gate) = mpsc::sync_channel(1);
        sink.push(TurnItem::Gate(open)).then_some(gate)
    }

    /// The core ended the session's turn: its reader gets the end, last.
    pub(crate) fn ended(&self, session: &SessionId, reason: TurnEndReason) {
        let mut state = lock(&self.state);
        state.abandoned.remove(session);
        if let Some(sink) = state.open.remove(session) {
            sink.push_last(TurnItem::End(reason));
        }
    }

    /// The connection is gone: every reader sees its turn end (with the connection closed).
    pub(crate) fn close_all(&self) {
        let mut state = lock(&self.state);
        state.open.clear();
        state.abandoned.clear();
    }

    /// The reader of the session's turn is gone before its end: cancels the turn in the core
    /// (`session/cancel`) unless it ended already. Done under this registry's lock, so that a
    /// prompt of the session waits until the cancel is queued (and is refused until the turn
    /// ended); the driver never takes the connection while holding the registry.
    fn abandon(&self, session: &SessionId, link: &Link<V2, role::Client>) {
        let mut state = lock(&self.state);
        if state.open.remove(session).is_none() {
            return;
        }
        let mut conn = lock(&link.core.conn);
        if conn.cancel_turn(Instant::from_std(link.epoch, StdInstant::now()), session).is_ok() {
            state.abandoned.insert(session.clone());
        }
        drop(conn);
        drop(state);
        // The driver writes the cancel at once.
        let _ = link.mailbox.send(Input::Queued { linger: false });
    }
}

/// A v2 turn in progress, from [`ClientConnection::prompt`](super::ClientConnection::prompt).
///
/// An [`Iterator`] of the turn's `session/update`s in wire order (the agent's `idle`
/// `state_update` last), blocking for each; it ends exactly once, when the core reports the
/// turn over, and [`finish`](Self::finish) then says how. Updates wait in the connection's
/// shared queue (`ClientOptions::max_buffered`); while it is full the connection stops reading.
///
/// Dropping an unfinished turn cancels it (`session/cancel`) and drops its remaining updates;
/// a new prompt of its session is refused
/// ([`SendError::TurnAlreadyRunning`](acp_proto::SendError::TurnAlreadyRunning)) until the
/// agent has ended it.
#[must_use = "a turn is cancelled when dropped"]
pub struct PromptTurn {
    session_id: SessionId,
    items: InboxReceiver<TurnItem>,
    ack: Option<Receiver<Result<Outcome<V2>, Error>>>,
    link: Link<V2, role::Client>,
    turns: Arc<Turns>,
    end: Option<TurnEndReason>,
    /// Whether dropping the turn cancels it.
    armed: bool,
}

impl PromptTurn {
    pub(super) fn new(
        session_id: SessionId,
        items: InboxReceiver<TurnItem>,
        ack: Receiver<Result<Outcome<V2>, Error>>,
        link: Link<V2, role::Client>,
        turns: Arc<Turns>,
    ) -> PromptTurn {
        PromptTurn { session_id, items, ack: Some(ack), link, turns, end: None, armed: true }
    }

    /// The turn's session.
    pub fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    /// The next update of the turn, blocking until it arrives; `None` once the turn is over.
    /// Agent requests of the turn's session that came after it (a permission ask, a
    /// session-scoped elicitation) may reach their handlers once it is taken; to run something
    /// with the update before they do, use [`next_update_then`](Self::next_update_then).
    pub fn next_update(&mut self) -> Option<UpdateSessionNotification> {
        self.next_update_then(|update| update)
    }

    /// Takes the next update and runs `handle` with it before any agent request of this turn's
    /// session that arrived after that update reaches its handler; `None` once the turn is
    /// over. So what `handle` does (e.g. drawing the update) comes before what those handlers
    /// do, by construction. `handle` must not wait for such a handler.
    pub fn next_update_then<R>(&mut self, handle: impl FnOnce(UpdateSessionNotification) -> R) -> Option<R> {
        if !self.armed {
            return None;
        }
        match crate::turn_gate::next(&self.link, &self.items) {
            Some(Ok(update)) => Some(crate::turn_gate::handle_then_open(&self.items, update, handle)),
            Some(Err(reason)) => {
                self.end = Some(reason);
                self.armed = false;
                None
            }
            None => {
                self.armed = false;
                None
            }
        }
    }

    /// Asks the agent to stop the turn (`session/cancel`); the turn then ends when the agent
    /// reports `idle` (`cancelled`). Keep reading it for the last updates.
    pub fn cancel(&self) -> Result<(), Error> {
        self.link.cancel_turn(self.session_id.clone())
    }

    /// The prompt's acknowledgement (`PromptResponse`: the id of its user message); blocks
    /// until it came. `None` after the first call.
    pub fn ack(&mut self) -> Option<Result<v2::PromptResponse, Error>> {
        let ack = self.ack.take()?;
        Some(self.link.reply(&ack).and_then(acp_runtime::v2::prompt_ack))
    }

    /// Waits for the end of the turn (dropping the updates not taken yet) and says how it
    /// ended. A turn whose prompt failed gives the prompt's error; a connection that closed
    /// before the end, [`Error::ConnectionClosed`].
    pub fn finish(mut self) -> Result<TurnEndReason, Error> {
        while self.next_update().is_some() {}
        match self.end.take() {
            Some(TurnEndReason::PromptFailed) => match self.ack() {
                Some(Err(e)) => Err(e),
                _ => Ok(TurnEndReason::PromptFailed),
            },
            Some(TurnEndReason::ConnectionClosed) | None => Err(Error::ConnectionClosed),
            Some(reason) => Ok(reason),
        }
    }
}

impl Iterator for PromptTurn {
    type Item = UpdateSessionNotification;

    fn next(&mut self) -> Option<UpdateSessionNotification> {
        self.next_update()
    }
}

impl Drop for PromptTurn {
    fn drop(&mut self) {
        if self.armed {
            // Closed first: updates still coming are dropped, not queued.
            self.items.close();
            self.turns.abandon(&self.session_id, &self.link);
        }
    }
}

impl std::fmt::Debug for PromptTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptTurn").field("session_id", &self.session_id).field("end", &self.end).finish()
    }
}
