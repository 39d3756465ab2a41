//! `acp replay FILE`: the transcript drawn by `acp client`'s renderer, as the client would
//! have shown it: the prompts (from the client's `session/prompt` requests), the agent's
//! `session/update`s, its permission asks and the client's answers, and each turn's end.
//!
//! The prompts and permission asks awaiting their answers are tracked within the bounds of
//! [`super::open`]; one past them is drawn, and a warning says that its answer will not be.

use std::io::Write;

use acp_blocking::acp_proto::jsonrpc::RequestId;
use acp_blocking::acp_proto::types::{
    PromptResponse, RequestPermissionOutcome, RequestPermissionRequest, SessionNotification,
};
use serde_json::Value;

use super::open::{LineIds, OpenRequests};
use super::read::{Kind, Record, describe_exit};
use crate::client::{Renderer, Style};
use crate::record::transcript::Dir;

/// A request whose answer is drawn: the client's `session/prompt` (going c2a), or the agent's
/// permission ask (a2c).
enum Pending {
    Prompt,
    Ask(RequestPermissionRequest),
}

/// What the replay remembers between lines.
struct Replay {
    render: Renderer,
    /// The prompts and permission asks not answered yet.
    open: OpenRequests<Pending>,
}

/// Draws `records` on `out` in `style`.
pub(crate) fn render(records: impl Iterator<Item = Record>, out: Box<dyn Write + Send>, style: Style) {
    let render = Renderer::new(out, Box::new(std::io::stderr()), Style { spinner: false, ..style });
    let mut replay = Replay { render, open: OpenRequests::default() };
    for record in records {
        match &record.kind {
            Kind::Header { argv, started } => {
                replay.render.info(&format!("transcript of `{}`, started {started}", argv.join(" ")))
            }
            Kind::Line { dir, text, .. } => {
                let Ok(message) = serde_json::from_str::<Value>(text) else { continue };
                match dir {
                    Dir::C2a => replay.client_line(record.lineno, text, &message),
                    Dir::A2c => replay.agent_line(record.lineno, text, &message),
                }
            }
            Kind::Dropped { n, .. } => {
                replay.render.warn(&format!("{n} lines missing here (the recorder fell behind)"))
            }
            Kind::Exit(exit) => replay.render.info(&format!("the agent ended: {}", describe_exit(exit))),
            Kind::Bad(why) => replay.render.warn(&format!("transcript line {}: {why}", record.lineno)),
        }
    }
    replay.render.finish();
}

/// The id of a message.
fn key(message: &Value) -> Option<RequestId> {
    message.get("id").and_then(|id| serde_json::from_value(id.clone()).ok())
}

impl Replay {
    /// Remembers a request going `dir` whose answer is to be drawn, within the bounds.
    fn track(&mut self, lineno: usize, dir: Dir, text: &str, message: &Value, pending: Pending) {
        let Some(id) = key(message) else { return };
        let ids = LineIds { requests: vec![(id.clone(), text.len())], responses: Vec::new() };
        if self.open.fits(dir, &ids) {
            self.open.insert(dir, id, text.len(), pending);
        } else {
            self.render.warn(&format!(
                "transcript line {lineno}: too many requests awaiting answers to track another: its answer will not be drawn"
            ));
        }
    }

    fn client_line(&mut self, lineno: usize, text: &str, message: &Value) {
        match message["method"].as_str() {
            Some("session/prompt") => {
                let prompt: Vec<&str> = message["params"]["prompt"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|block| block["text"].as_str())
                    .collect();
                self.render.heading(&format!("> {}", prompt.join(" ")));
                self.render.begin_turn();
                self.track(lineno, Dir::C2a, text, message, Pending::Prompt);
            }
            Some("session/cancel") => self.render.cancelling(),
            Some(_) => {}
            None => self.permission_answered(message),
        }
    }

    fn permission_answered(&mut self, message: &Value) {
        let Some(Pending::Ask(ask)) = key(message).and_then(|id| self.open.answer(Dir::A2c, &id)) else { return };
        let outcome = serde_json::from_value::<RequestPermissionOutcome>(message["result"]["outcome"].clone());
        match outcome {
            Ok(RequestPermissionOutcome::Selected(selected)) => {
                let name = ask.options.iter().find(|o| o.option_id == selected.option_id).map(|o| o.name.clone());
                let choice = name.unwrap_or_else(|| format!("{} (not offered)", selected.option_id));
                self.render.permission_decided(&choice, "the client's answer");
            }
            Ok(_) => self.render.permission_decided("cancelled", "the client's answer"),
            Err(_) => self.render.permission_decided("no valid answer", "the client's answer"),
        }
    }

    fn agent_line(&mut self, lineno: usize, text: &str, message: &Value) {
        match message["method"].as_str() {
            Some("session/update") => {
                if let Ok(n) = serde_json::from_value::<SessionNotification>(message["params"].clone()) {
                    self.render.update(&n.update);
                }
            }
            Some("session/request_permission") => {
                if let Ok(ask) = serde_json::from_value::<RequestPermissionRequest>(message["params"].clone()) {
                    self.render.permission_question(&ask, false);
                    self.track(lineno, Dir::A2c, text, message, Pending::Ask(ask));
                }
            }
            Some(method) if method.starts_with("fs/") || method.starts_with("terminal/") => {
                let params = &message["params"];
                let target = params["path"].as_str().or(params["command"].as_str()).unwrap_or("");
                self.render.info(&format!("  · {method} {target}"));
            }
            Some(_) => {}
            None => self.turn_ended(message),
        }
    }

    fn turn_ended(&mut self, message: &Value) {
        if !matches!(key(message).and_then(|id| self.open.answer(Dir::C2a, &id)), Some(Pending::Prompt)) {
            return;
        }
        if let Some(error) = message.get("error") {
            let text = error["message"].as_str().unwrap_or("an error");
            self.render.error(&format!("session/prompt failed: {text}"));
        } else if let Ok(response) = serde_json::from_value::<PromptResponse>(message["result"].clone()) {
            self.render.end_turn(&response.stop_reason);
        } else {
            self.render.error("session/prompt: the agent's answer is not a prompt response");
        }
    }
}
