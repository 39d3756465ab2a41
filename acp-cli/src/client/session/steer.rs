//! What is typed while a turn runs: steered into it, or queued for its end; the rules are in
//! [`crate::client::steer`].

use super::Session;
use crate::client::event::UiEvent;
use crate::client::link::Link;
use acp_blocking::acp_proto::types::SessionId;
use std::sync::Arc;

impl Session {
    /// A turn begins: nothing steered yet.
    pub(super) fn steering_begins(&mut self) {
        self.steering.in_turn = true;
        self.steering.pending = false;
        self.steering.refused = false;
    }

    /// The turn ended.
    pub(super) fn steering_ends(&mut self) {
        self.steering.in_turn = false;
    }

    /// A line arrived: typed on a terminal during a turn of an agent that cannot be steered,
    /// it says that the line waits (piped lines are typed ahead: nothing to say).
    pub(super) fn line_arrived(&mut self, line: &str) {
        let typed = self.settings.stdin_tty && self.steering.in_turn;
        if typed && !self.steering.supported && !line.trim_start().starts_with('/') {
            self.render.info(&format!("queued for when this turn ends: {}", crate::sanitize::clean_line(line)));
        }
    }

    /// During a turn: takes a `/queue` waiting anywhere in the input (it lists the rest), or
    /// the line at the front when it is steering; whether it took one.
    pub(super) fn steer_front(&mut self, link: &Arc<dyn Link>, session: &SessionId) -> bool {
        if let Some(at) = self.lines.iter().position(|l| l.trim() == "/queue") {
            let line = self.lines.remove(at).unwrap_or_default();
            self.render.input_read(&line, self.settings.stdin_tty);
            self.list_queue();
            return true;
        }
        let Some(front) = self.lines.front() else { return false };
        let trimmed = front.trim();
        let text = match trimmed.strip_prefix("/steer") {
            Some(rest) if rest.is_empty() || rest.starts_with(' ') => rest.trim().to_owned(),
            Some(_) => return false,
            None if trimmed.starts_with('/') || trimmed.is_empty() || !self.settings.stdin_tty => return false,
            None => trimmed.to_owned(),
        };
        if !self.steering.supported || self.steering.pending || self.steering.refused || text.is_empty() {
            return false;
        }
        let line = self.lines.pop_front().unwrap_or_default();
        self.render.input_read(&line, self.settings.stdin_tty);
        self.steering.pending = true;
        let (link, tx, session) = (link.clone(), self.tx.clone(), session.clone());
        // Bounded: an agent that never answers leaves the rest of the turn's lines queued.
        let limit = self.settings.connect_timeout;
        let spawned = std::thread::Builder::new().name("acp-steer".into()).spawn(move || {
            let answer = link.steer(&session, &text, limit);
            let _ = tx.send(UiEvent::Steered { text, answer });
        });
        if let Err(e) = spawned {
            self.render.error(&format!("cannot start a thread: {e}"));
            self.steering.pending = false;
        }
        true
    }

    /// The answer to a steering request: `injected` says so; anything else puts the text back
    /// at the front of the input, to be sent when the turn ends.
    pub(super) fn steered(&mut self, text: String, answer: Result<String, String>) {
        self.steering.pending = false;
        let outcome = answer.unwrap_or_else(|e| e);
        if outcome == "injected" {
            self.render.info(&format!("steered the running turn: {}", crate::sanitize::clean_line(&text)));
            return;
        }
        self.steering.refused = true;
        self.render.info(&format!(
            "could not steer ({}): queued for when this turn ends",
            crate::sanitize::clean_line(&outcome)
        ));
        self.lines.push_front(text);
    }

    /// `/queue`: the lines waiting for the turn's end.
    fn list_queue(&mut self) {
        if self.lines.is_empty() {
            self.render.info("nothing is queued");
            return;
        }
        let waiting: Vec<String> = self.lines.iter().map(|l| crate::sanitize::clean_line(l).into_owned()).collect();
        self.render.info(&format!("queued for when this turn ends ({}):", waiting.len()));
        for (n, line) in waiting.iter().enumerate() {
            self.render.info(&format!("  {}. {line}", n + 1));
        }
    }
}
