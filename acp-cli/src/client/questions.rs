//! Permission questions, queued: each one is shown when its turn comes and answered only by
//! a line read after it was shown, by the policy, by a cancel or by the end of input (which
//! rejects). A second `session/request_permission` never replaces the one on screen.

use std::io::{BufRead, IsTerminal};
use std::thread;

use acp_blocking::acp_proto::types::*;

use super::UiEvent;
use super::handler::PermissionAsk;
use super::permission::{Policy, allow_option, parse_answer, reject_option};
use super::session::Session;

impl Session {
    /// A permission request, the agent's or the client's own: answered by the policy, or
    /// queued and asked.
    pub(super) fn permission(&mut self, ask: PermissionAsk) {
        if self.cancelling {
            // The core already answered `cancelled`; dropping the ask says the same.
            return;
        }
        let options = &ask.request.options;
        let choice = match self.settings.policy {
            Policy::Ask => {
                self.asks.push_back(ask);
                self.ensure_input();
                self.answer_questions();
                return;
            }
            Policy::Allow => allow_option(options),
            Policy::Deny => reject_option(options),
        };
        let why = self.settings.note.clone();
        self.render.permission_question(&ask.request, false);
        match choice {
            Some(option) => {
                let _ = ask.reply.send(RequestPermissionOutcome::selected(option.option_id.clone()));
                self.render.permission_decided(&option.name, &why);
            }
            None => self.render.permission_decided("cancelled", &format!("{why}, but no such option was offered")),
        }
    }

    /// Drops every queued question (each is answered `cancelled`).
    pub(super) fn drop_questions(&mut self) {
        self.asks.clear();
        self.asked = false;
    }

    /// Shows the question at the front of the queue if it is not shown yet, and answers
    /// questions from the lines read (or rejects them at the end of input) in order.
    pub(super) fn answer_questions(&mut self) {
        loop {
            // A question nobody waits for any more is skipped (or taken off the screen).
            while self.asks.front().is_some_and(PermissionAsk::is_abandoned) {
                self.asks.pop_front();
                if self.asked {
                    self.asked = false;
                    self.render.permission_decided("cancelled", "the agent withdrew the question");
                }
            }
            let Some(ask) = self.asks.front() else { return };
            if !self.asked {
                self.render.permission_question(&ask.request, true);
                self.asked = true;
            }
            let outcome = if let Some(line) = self.lines.pop_front() {
                self.render.input_read(&line, self.settings.stdin_tty);
                match parse_answer(&ask.request.options, &line) {
                    Some(option) => Some((option.clone(), "your answer")),
                    None => {
                        let n = ask.request.options.len();
                        self.render.warn(&format!("`{}` is not one of the options", line.trim()));
                        self.render.ask_again(n);
                        continue;
                    }
                }
            } else if self.input_ended {
                reject_option(&ask.request.options).map(|o| (o.clone(), "end of input"))
            } else {
                return;
            };
            let Some(ask) = self.asks.pop_front() else { return };
            self.asked = false;
            match outcome {
                Some((option, why)) => {
                    let allowed =
                        matches!(option.kind, PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways);
                    if allowed && !ask.local {
                        self.shared.approvals.approve(&ask.request.session_id, &ask.request.tool_call.tool_call_id);
                    }
                    let _ = ask.reply.send(RequestPermissionOutcome::selected(option.option_id.clone()));
                    self.render.permission_decided(&option.name, why);
                }
                None => self.render.permission_decided("cancelled", "end of input"),
            }
        }
    }

    /// Starts reading stdin (once), a line at a time, into the UI queue.
    pub(super) fn ensure_input(&mut self) {
        if self.input_started {
            return;
        }
        self.input_started = true;
        if self.settings.stdin_tty && std::io::stdout().is_terminal() {
            let (tx, interrupts) = (self.tx.clone(), self.shared.interrupts.clone());
            if let Some((running, out, err)) = super::editor::start(tx, interrupts, self.control.completions.clone()) {
                let partial = out.clone();
                self.render.redirect(Box::new(out), Box::new(err), Box::new(move || partial.show_partial()));
                self.editor = Some(running);
                return;
            }
        }
        let tx = self.tx.clone();
        let spawned = thread::Builder::new().name("acp-stdin".into()).spawn(move || {
            let stdin = std::io::stdin();
            let mut line = String::new();
            loop {
                line.clear();
                match stdin.lock().read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(UiEvent::InputEnd);
                        return;
                    }
                    Ok(_) => {
                        if tx.send(UiEvent::Line(line.trim_end_matches(['\n', '\r']).to_owned())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        if spawned.is_err() {
            self.input_ended = true;
        }
    }
}
