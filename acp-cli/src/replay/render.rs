//! `acp replay FILE`: the transcript drawn by `acp client`'s renderer, as the client would
//! have shown it: the prompts (from the client's `session/prompt` requests), the agent's
//! `session/update`s, its permission asks and the client's answers, and each turn's end.

use std::collections::HashMap;
use std::io::Write;

use acp_blocking::acp_proto::types::{
    PromptResponse, RequestPermissionOutcome, RequestPermissionRequest, SessionNotification,
};
use serde_json::Value;

use super::read::{Kind, Record, describe_exit};
use crate::client::{Renderer, Style};
use crate::record::transcript::Dir;

/// What the replay remembers between lines.
struct Replay {
    render: Renderer,
    /// The client's open `session/prompt` requests, by id.
    prompts: HashMap<String, ()>,
    /// The agent's open permission asks, by id.
    asks: HashMap<String, RequestPermissionRequest>,
}

/// Draws `records` on `out` in `style`.
pub(crate) fn render(records: &[Record], out: Box<dyn Write + Send>, style: Style) {
    let render = Renderer::new(out, Box::new(std::io::stderr()), Style { spinner: false, ..style });
    let mut replay = Replay { render, prompts: HashMap::new(), asks: HashMap::new() };
    for record in records {
        match &record.kind {
            Kind::Header { argv, started } => {
                replay.render.info(&format!("transcript of `{}`, started {started}", argv.join(" ")))
            }
            Kind::Line { dir, text, .. } => {
                let Ok(message) = serde_json::from_str::<Value>(text) else { continue };
                match dir {
                    Dir::C2a => replay.client_line(&message),
                    Dir::A2c => replay.agent_line(&message),
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

/// The id of a message, as a map key.
fn key(message: &Value) -> Option<String> {
    message.get("id").map(Value::to_string)
}

impl Replay {
    fn client_line(&mut self, message: &Value) {
        match message["method"].as_str() {
            Some("session/prompt") => {
                let text: Vec<&str> = message["params"]["prompt"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|block| block["text"].as_str())
                    .collect();
                self.render.heading(&format!("> {}", text.join(" ")));
                self.render.begin_turn();
                if let Some(id) = key(message) {
                    self.prompts.insert(id, ());
                }
            }
            Some("session/cancel") => self.render.cancelling(),
            Some(_) => {}
            None => self.permission_answered(message),
        }
    }

    fn permission_answered(&mut self, message: &Value) {
        let Some(ask) = key(message).and_then(|id| self.asks.remove(&id)) else { return };
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

    fn agent_line(&mut self, message: &Value) {
        match message["method"].as_str() {
            Some("session/update") => {
                if let Ok(n) = serde_json::from_value::<SessionNotification>(message["params"].clone()) {
                    self.render.update(&n.update);
                }
            }
            Some("session/request_permission") => {
                if let Ok(ask) = serde_json::from_value::<RequestPermissionRequest>(message["params"].clone()) {
                    self.render.permission_question(&ask, false);
                    if let Some(id) = key(message) {
                        self.asks.insert(id, ask);
                    }
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
        if key(message).and_then(|id| self.prompts.remove(&id)).is_none() {
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
