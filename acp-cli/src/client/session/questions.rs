//! Asking the queued questions (permissions, forms, URLs) on the terminal and taking their
//! answers; the rules are in [`crate::client::questions`].

use super::Session;
use crate::client::event::UiEvent;
use crate::client::event::{ElicitAsk, PermissionAsk};
use crate::client::form::{Fill, Step};
use crate::client::questions::{Question, answer_by_policy};
use crate::permission::{Policy, parse_answer, reject_option};
use acp_blocking::acp_proto::types::*;
use std::io::{BufRead, IsTerminal};
use std::thread;

impl Session {
    /// A permission request, the agent's or the client's own: answered by the policy, or
    /// queued and asked.
    pub(super) fn permission(&mut self, ask: PermissionAsk) {
        if self.cancelling {
            // The core already answered `cancelled`; dropping the ask says the same.
            return;
        }
        if self.settings.policy == Policy::Ask {
            self.asks.push_back(Question::Permission(ask));
            self.ensure_input();
            self.answer_questions();
            return;
        }
        let (decided, why) = answer_by_policy(&mut self.render, &ask, self.settings.policy, &self.settings.note);
        self.journal_permission(&ask, &decided, &why);
    }

    /// Records a permission question and its answer in the session's journal (if recorded).
    fn journal_permission(&mut self, ask: &PermissionAsk, decided: &str, why: &str) {
        if let Some(journal) = &mut self.journal
            && !ask.local
        {
            journal.permission(&ask.request, decided, why);
        }
    }

    /// An elicitation to ask on the terminal: queued.
    pub(super) fn elicit(&mut self, ask: ElicitAsk) {
        if self.cancelling {
            return;
        }
        self.asks.push_back(Question::Elicit(ask, None));
        self.ensure_input();
        self.answer_questions();
    }

    /// After the end of a turn: the question on screen, if any, asks for its answer again
    /// below the turn's last line.
    pub(super) fn ask_again_after_turn(&mut self) {
        if !self.asked {
            return;
        }
        match self.asks.front() {
            Some(Question::Permission(ask)) => self.render.ask_again(ask.request.options.len()),
            Some(Question::Elicit(ask, fill)) => match (&ask.request.mode, fill) {
                (ElicitationMode::Form(form), Some(fill)) => self.render.form_step(&form.requested_schema, fill),
                (ElicitationMode::Url(url), _) => {
                    self.render.url_question(&ask.request.message, &url.url, url.elicitation_id.as_ref())
                }
                _ => {}
            },
            None => {}
        }
    }

    /// Drops every queued question (each is answered `cancelled`, or `cancel`).
    pub(super) fn drop_questions(&mut self) {
        self.asks.clear();
        self.set_asked(false);
    }

    /// Whether the question at the front is on screen; the editor knows when an elicitation is.
    fn set_asked(&mut self, asked: bool) {
        self.asked = asked;
        let eliciting = asked && matches!(self.asks.front(), Some(Question::Elicit(..)));
        self.shared.eliciting.store(eliciting, std::sync::atomic::Ordering::Relaxed);
    }

    /// Ctrl-C: cancels the elicitation on screen, if one is (then `true`).
    pub(super) fn cancel_elicitation(&mut self) -> bool {
        if !self.asked || !matches!(self.asks.front(), Some(Question::Elicit(..))) {
            return false;
        }
        if let Some(Question::Elicit(ask, _)) = self.asks.pop_front() {
            let _ = ask.reply.send(CreateElicitationResponse::cancel());
        }
        self.set_asked(false);
        self.render.elicit_decided("cancelled", "Ctrl-C");
        self.answer_questions();
        true
    }

    /// Shows the question at the front of the queue if it is not shown yet, and answers
    /// questions from the lines read (or the end of input) in order.
    pub(super) fn answer_questions(&mut self) {
        loop {
            // A question nobody waits for any more is skipped (or taken off the screen).
            while self.asks.front().is_some_and(Question::is_abandoned) {
                self.asks.pop_front();
                if self.asked {
                    self.set_asked(false);
                    self.render.permission_decided("cancelled", "the agent withdrew the question");
                }
            }
            let answered = match self.asks.front() {
                None => return,
                Some(Question::Permission(_)) => self.answer_permission(),
                Some(Question::Elicit(..)) => self.answer_elicitation(),
            };
            if !answered {
                return;
            }
        }
    }

    /// Shows the elicitation at the front, and takes the lines read; `false` while it waits
    /// for a line.
    fn answer_elicitation(&mut self) -> bool {
        let Some(Question::Elicit(ask, fill)) = self.asks.front_mut() else { return true };
        let request = &ask.request;
        if !self.asked {
            match &request.mode {
                ElicitationMode::Form(form) => match Fill::new(&form.requested_schema) {
                    Ok(started) => {
                        self.render.form_opened(&request.message, &form.requested_schema);
                        self.render.form_step(&form.requested_schema, &started);
                        *fill = Some(started);
                    }
                    Err(why) => {
                        self.render.form_opened(&request.message, &ElicitationSchema::new());
                        self.render.elicit_decided("declined", &why);
                        return self.elicitation_answered(CreateElicitationResponse::decline());
                    }
                },
                ElicitationMode::Url(url) => {
                    self.render.url_question(&request.message, &url.url, url.elicitation_id.as_ref())
                }
                _ => return self.elicitation_answered(CreateElicitationResponse::decline()),
            }
            self.set_asked(true);
            return self.answer_elicitation();
        }
        if self.cancel_line_waits() {
            return false;
        }
        let Some(line) = self.lines.pop_front() else {
            if self.input_ended {
                self.render.elicit_decided("cancelled", "end of input");
                return self.elicitation_answered(CreateElicitationResponse::cancel());
            }
            return false;
        };
        if line.trim() == "\x1b" {
            // Esc, then Enter, where the terminal reads lines itself.
            self.render.elicit_decided("cancelled", "Esc");
            return self.elicitation_answered(CreateElicitationResponse::cancel());
        }
        self.render.input_read(&line, self.settings.stdin_tty);
        let Some(Question::Elicit(ask, fill)) = self.asks.front_mut() else { return true };
        let step = match (&ask.request.mode, fill) {
            (ElicitationMode::Form(form), Some(fill)) => match fill.take(&form.requested_schema, &line) {
                Step::Next => {
                    self.render.form_step(&form.requested_schema, fill);
                    Step::Next
                }
                step => step,
            },
            _ => match line.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" | "a" | "accept" => Step::Done(CreateElicitationResponse::new(ElicitationAction::Accept(
                    ElicitationAcceptAction::default(),
                ))),
                "n" | "no" | "d" | "decline" => Step::Done(CreateElicitationResponse::decline()),
                _ => Step::Again("type y (accept) or n (decline)".to_owned()),
            },
        };
        match step {
            Step::Next => true,
            Step::Again(why) => {
                self.render.form_again(&why);
                true
            }
            Step::Done(response) => {
                let (action, why) = match &response.action {
                    ElicitationAction::Accept(accept) => {
                        let fields: Vec<&str> = accept.content.iter().flatten().map(|(k, _)| k.as_str()).collect();
                        ("accepted", format!("your answers: {}", fields.join(", ")))
                    }
                    ElicitationAction::Decline => ("declined", "your answer".to_owned()),
                    _ => ("cancelled", "your answer".to_owned()),
                };
                let why = if why == "your answers: " { "your answer".to_owned() } else { why };
                self.render.elicit_decided(action, &why);
                self.elicitation_answered(response)
            }
        }
    }

    /// Sends the answer to the elicitation at the front and takes it off the queue.
    fn elicitation_answered(&mut self, response: CreateElicitationResponse) -> bool {
        if let Some(Question::Elicit(ask, _)) = self.asks.pop_front() {
            let _ = ask.reply.send(response);
        }
        self.set_asked(false);
        self.render.waiting(Some("waiting for the agent…"));
        true
    }

    /// Shows the permission question at the front, and answers it from a line read (or the
    /// end of input); `false` while it waits for a line.
    fn answer_permission(&mut self) -> bool {
        let Some(Question::Permission(ask)) = self.asks.front() else { return true };
        if !self.asked {
            self.render.permission_question(&ask.request, true);
            self.set_asked(true);
        }
        if self.cancel_line_waits() {
            return false;
        }
        let Some(Question::Permission(ask)) = self.asks.front() else { return true };
        let outcome = if let Some(line) = self.lines.pop_front() {
            self.render.input_read(&line, self.settings.stdin_tty);
            match parse_answer(&ask.request.options, &line) {
                Some(option) => Some((option.clone(), "your answer")),
                None => {
                    let n = ask.request.options.len();
                    self.render.warn(&format!("`{}` is not one of the options", line.trim()));
                    self.render.ask_again(n);
                    return true;
                }
            }
        } else if self.input_ended {
            reject_option(&ask.request.options).map(|o| (o.clone(), "end of input"))
        } else {
            return false;
        };
        let Some(Question::Permission(ask)) = self.asks.pop_front() else { return true };
        self.set_asked(false);
        match outcome {
            Some((option, why)) => {
                let allowed =
                    matches!(option.kind, PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways);
                if allowed && !ask.local {
                    self.shared.approvals.approve(&ask.request.session_id, &ask.request.tool_call.tool_call_id);
                }
                let _ = ask.reply.send(RequestPermissionOutcome::selected(option.option_id.clone()));
                self.render.permission_decided(&option.name, why);
                self.journal_permission(&ask, &option.name, why);
            }
            None => {
                self.render.permission_decided("cancelled", "end of input");
                self.journal_permission(&ask, "cancelled", "end of input");
            }
        }
        true
    }

    /// Starts reading stdin (once), a line at a time, into the UI queue.
    pub(super) fn ensure_input(&mut self) {
        if self.input_started {
            return;
        }
        self.input_started = true;
        if self.settings.stdin_tty && std::io::stdout().is_terminal() {
            let (tx, interrupts) = (self.tx.clone(), self.shared.interrupts.clone());
            if let Some((running, out, err)) = crate::client::editor::start(
                tx,
                interrupts,
                self.control.completions.clone(),
                self.shared.eliciting.clone(),
            ) {
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
