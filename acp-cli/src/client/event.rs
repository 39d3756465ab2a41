//! What the UI thread is told ([`UiEvent`]): every other thread (the turn's reader, the
//! connection's handlers, stdin, the agent's stderr, the signals) sends it one, and the
//! questions it is asked ([`PermissionAsk`], [`ElicitAsk`]) and what was done for the agent
//! ([`Activity`]) travel in them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;

use acp_blocking::acp_proto::types::*;

use super::elicit::ElicitNote;

/// What the UI thread is told.
#[derive(Debug)]
pub(crate) enum UiEvent {
    /// An update of the running turn.
    Update(SessionUpdate),
    /// The running turn ended.
    TurnEnded(Result<PromptResponse, acp_blocking::Error>),
    /// An update outside a turn.
    Outside(SessionNotification),
    /// The agent asks for permission.
    Permission(PermissionAsk),
    /// The agent asks for input, to be asked on the terminal.
    Elicit(ElicitAsk),
    /// An elicitation was answered (or a URL one completed).
    Elicitation(ElicitNote),
    /// The client served (or refused) an `fs/*` or `terminal/*` request.
    Activity(Activity),
    /// A line of the agent's stderr.
    Stderr(String),
    /// A line of stdin.
    Line(String),
    /// The end of stdin.
    InputEnd,
    /// Ctrl-C, `SIGTERM` or `SIGHUP` (a wake-up: the signal is noted in `Interrupts`).
    Interrupt,
    /// A background call finished.
    Wake,
    /// The answer to a steering request (`steer.rs`): the text, and the answer or the error.
    Steered {
        /// What was steered.
        text: String,
        /// The agent's outcome (`injected` when it was added), or the error in words.
        answer: Result<String, String>,
    },
}

/// A permission question waiting for the UI's answer.
#[derive(Debug)]
pub(crate) struct PermissionAsk {
    pub(crate) request: RequestPermissionRequest,
    /// Dropping it unanswered answers `cancelled`.
    pub(crate) reply: SyncSender<RequestPermissionOutcome>,
    /// The client's own question about a write or a command (not the agent's request).
    pub(crate) local: bool,
    /// Set when nobody waits for the answer any more (the request was cancelled).
    pub(crate) abandoned: Arc<AtomicBool>,
}

impl PermissionAsk {
    /// Whether somebody still waits for the answer.
    pub(crate) fn is_abandoned(&self) -> bool {
        self.abandoned.load(Ordering::Relaxed)
    }
}

/// An elicitation waiting for the user's answer on the terminal (see `form`).
#[derive(Debug)]
pub(crate) struct ElicitAsk {
    pub(crate) request: CreateElicitationRequest,
    /// Dropping it unanswered answers `cancel`.
    pub(crate) reply: SyncSender<CreateElicitationResponse>,
    /// Set when nobody waits for the answer any more (the request was cancelled).
    pub(crate) abandoned: Arc<AtomicBool>,
}

/// Something the client did for the agent, for the transcript.
#[derive(Debug, Clone)]
pub(crate) struct Activity {
    /// What was done: `read`, `write`, `terminal`.
    pub(crate) method: &'static str,
    /// The path or command concerned.
    pub(crate) target: String,
    /// A detail when served, the reason when refused.
    pub(crate) outcome: Result<String, String>,
}
