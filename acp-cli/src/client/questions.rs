//! Questions, queued: permission questions and elicitations asked on the terminal (forms,
//! URLs). Each one is shown when its turn comes and answered only by lines read after it was
//! shown, by the policy, by a cancel or by the end of input (which rejects a permission and
//! cancels an elicitation). A `/cancel` line is never an answer: in a turn it cancels the turn
//! as at the prompt (`session/cancel`, then the questions are answered `cancelled`, the forms
//! cancelled); between turns it cancels the questions. A second request never replaces the
//! question on screen. Ctrl-C while an elicitation is on screen cancels that elicitation only
//! (a line that is just Esc too, where stdin is read without the line editor).
//!
//! The end of a turn answers no question: the agent still waits for the answers, and which
//! turn a question belongs to cannot be told here anyway (a request the agent sends right
//! after the turn's response may reach the UI before the response: the connection's handler
//! and the turn's reader are different threads). So a question on screen when the turn ends
//! is asked again below its end, and is answered, or cancelled by `/cancel`, between turns.

use acp_blocking::acp_proto::types::*;

use super::event::{ElicitAsk, PermissionAsk};
use super::form::Fill;
use crate::permission::{Policy, allow_option, reject_option};

/// A question in the queue.
#[derive(Debug)]
pub(crate) enum Question {
    Permission(PermissionAsk),
    /// An elicitation, with the form's answers so far once it is shown.
    Elicit(ElicitAsk, Option<Fill>),
}

impl Question {
    /// Whether somebody still waits for the answer.
    pub(crate) fn is_abandoned(&self) -> bool {
        match self {
            Question::Permission(ask) => ask.is_abandoned(),
            Question::Elicit(ask, _) => ask.abandoned.load(std::sync::atomic::Ordering::Relaxed),
        }
    }
}

/// Answers `ask` by `policy` (`--allow` or `--deny`; `why` says which, shown with the answer)
/// and draws the question and the answer; an ask without the option the policy picks is left
/// unanswered (dropped: `cancelled`). Both protocol versions' clients answer through here.
/// Returns what was drawn as the decision and why.
pub(super) fn answer_by_policy(
    render: &mut super::render::Renderer,
    ask: &PermissionAsk,
    policy: Policy,
    why: &str,
) -> (String, String) {
    let options = &ask.request.options;
    let choice = match policy {
        Policy::Allow => allow_option(options),
        Policy::Deny | Policy::Ask => reject_option(options),
    };
    render.permission_question(&ask.request, false);
    let decided = match choice {
        Some(option) => {
            let _ = ask.reply.send(RequestPermissionOutcome::selected(option.option_id.clone()));
            (option.name.clone(), why.to_owned())
        }
        None => ("cancelled".to_owned(), format!("{why}, but no such option was offered")),
    };
    render.permission_decided(&decided.0, &decided.1);
    decided
}
