//! The summary of a one-prompt run, gathered from the frames on the wire (see [`super::tap`]):
//! the stop reason, the assistant's final message, the tool calls, the permission questions and their
//! answers, the usage. Reading the wire rather than the UI's state means the summary says
//! what the agent and the client actually exchanged.
//!
//! The final message is the text of the `agent_message_chunk`s after the turn's last tool
//! call (all of them when it made none): what the agent said once its work was done.
//! Everything is about the last `session/prompt` turn (a one-prompt run has one) and bounded:
//! the text keeps [`MAX_TEXT`] bytes, at most [`MAX_TOOLS`] tool calls and [`MAX_ASKS`]
//! permission questions are kept, each with at most [`MAX_OPTIONS`] options.

use std::collections::HashMap;

use serde_json::Value;

/// Bytes of assistant text kept (the rest is dropped and `textTruncated` set).
pub(crate) const MAX_TEXT: usize = 16 * 1024 * 1024;
/// Tool calls kept.
pub(crate) const MAX_TOOLS: usize = 1024;
/// Permission questions kept.
pub(crate) const MAX_ASKS: usize = 256;
/// Options kept per permission question.
pub(crate) const MAX_OPTIONS: usize = 32;

pub(crate) use crate::wire_dir::Dir;

/// A tool call as last reported.
#[derive(Debug, Default)]
struct Tool {
    id: String,
    title: Value,
    kind: Value,
    status: Value,
}

/// A permission question and its answer.
#[derive(Debug)]
struct Ask {
    tool_call_id: Value,
    options: Vec<Value>,
    chosen: Value,
    outcome: Value,
}

/// What the frames said so far.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    /// The id (as JSON text) of the last `session/prompt` request.
    prompt_id: Option<String>,
    stop_reason: Value,
    prompt_usage: Option<Value>,
    last_usage_update: Option<Value>,
    text: String,
    text_truncated: bool,
    /// A tool call was reported since the last message chunk: the next one starts a new
    /// message.
    new_message: bool,
    tools: Vec<Tool>,
    tool_index: HashMap<String, usize>,
    asks: Vec<Ask>,
    /// A turn runs (v1: its prompt is not answered yet; v2: no `idle` since its prompt): a
    /// v2 prompt sent now joins it (steering) and starts no new summary.
    in_turn: bool,
    /// The `messageId` of the last message chunk (v2): a whole-message snapshot of it is not
    /// its text again.
    chunked: Option<String>,
    /// Permission request ids (as JSON text) not answered yet, to their index in `asks`.
    pending: HashMap<String, usize>,
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key)?.as_str()
}

impl Summary {
    /// Takes in one frame.
    pub(crate) fn observe(&mut self, dir: Dir, msg: &Value) {
        let method = str_field(msg, "method");
        let id = msg.get("id").map(Value::to_string);
        match (dir, method, id) {
            (Dir::C2a, Some("session/prompt"), Some(_)) if self.in_turn => {}
            (Dir::C2a, Some("session/prompt"), Some(id)) => self.new_turn(id),
            (Dir::C2a, None, Some(id)) => self.answered(&id, msg),
            (Dir::A2c, Some("session/update"), _) => {
                if let Some(update) = msg.get("params").and_then(|p| p.get("update")) {
                    self.update(update);
                }
            }
            (Dir::A2c, Some("session/request_permission"), Some(id)) => self.asked(id, msg.get("params")),
            (Dir::A2c, None, Some(id)) if self.prompt_id.as_ref() == Some(&id) => {
                if let Some(result) = msg.get("result") {
                    self.stop_reason = result.get("stopReason").cloned().unwrap_or(Value::Null);
                    // v1's answer ends the turn; v2's (no stop reason) only acknowledges it.
                    self.in_turn = self.stop_reason.is_null();
                    self.prompt_usage = result.get("usage").cloned();
                }
            }
            _ => {}
        }
    }

    fn new_turn(&mut self, id: String) {
        *self = Summary { prompt_id: Some(id), in_turn: true, ..Summary::default() };
    }

    fn update(&mut self, update: &Value) {
        match str_field(update, "sessionUpdate") {
            Some("agent_message_chunk") => {
                let content = update.get("content");
                if content.and_then(|c| str_field(c, "type")) == Some("text")
                    && let Some(text) = content.and_then(|c| str_field(c, "text"))
                {
                    if let Some(id) = str_field(update, "messageId") {
                        self.chunked = Some(id.to_owned());
                    }
                    self.new_message_text(text);
                }
            }
            Some("tool_call" | "tool_call_update") => {
                self.new_message = true;
                self.tool(update);
            }
            // v2: the turn's end is the agent's `idle`, with its stop reason.
            Some("state_update") if str_field(update, "state") == Some("idle") => {
                self.stop_reason = update.get("stopReason").cloned().unwrap_or_else(|| Value::from("end_turn"));
                self.in_turn = false;
            }
            // v2: a whole message; its text unless its chunks gave it already.
            Some("agent_message") if str_field(update, "messageId") != self.chunked.as_deref() => {
                let blocks = update.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                let texts = blocks.iter().filter(|b| str_field(b, "type") == Some("text"));
                let text: String = texts.filter_map(|b| str_field(b, "text")).collect();
                self.new_message_text(&text);
            }
            Some("usage_update") => {
                let mut usage = update.clone();
                if let Some(object) = usage.as_object_mut() {
                    object.remove("sessionUpdate");
                }
                self.last_usage_update = Some(usage);
            }
            _ => {}
        }
    }

    /// Text of the agent's message: after a tool call, the start of a new message.
    fn new_message_text(&mut self, text: &str) {
        if std::mem::take(&mut self.new_message) {
            self.text.clear();
            self.text_truncated = false;
        }
        self.push_text(text);
    }

    fn push_text(&mut self, text: &str) {
        let room = MAX_TEXT.saturating_sub(self.text.len());
        if text.len() <= room {
            self.text.push_str(text);
            return;
        }
        let mut cut = room;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        self.text.push_str(&text[..cut]);
        self.text_truncated = true;
    }

    fn tool(&mut self, update: &Value) {
        let Some(id) = str_field(update, "toolCallId") else { return };
        let index = match self.tool_index.get(id) {
            Some(&index) => index,
            None if self.tools.len() < MAX_TOOLS => {
                self.tools.push(Tool { id: id.to_owned(), ..Tool::default() });
                self.tool_index.insert(id.to_owned(), self.tools.len() - 1);
                self.tools.len() - 1
            }
            None => return,
        };
        let tool = &mut self.tools[index];
        for (key, slot) in [("title", &mut tool.title), ("kind", &mut tool.kind), ("status", &mut tool.status)] {
            if let Some(value) = update.get(key) {
                *slot = value.clone();
            }
        }
    }

    fn asked(&mut self, id: String, params: Option<&Value>) {
        if self.asks.len() >= MAX_ASKS {
            return;
        }
        let params = params.unwrap_or(&Value::Null);
        // v1 names the tool call `toolCall`; v2 in its `subject`.
        let call = params.get("toolCall").or_else(|| params.get("subject").and_then(|s| s.get("toolCall")));
        let tool_call_id = call.and_then(|c| c.get("toolCallId")).cloned().unwrap_or(Value::Null);
        let options = match params.get("options") {
            Some(Value::Array(options)) => options.iter().take(MAX_OPTIONS).cloned().collect(),
            _ => Vec::new(),
        };
        self.asks.push(Ask { tool_call_id, options, chosen: Value::Null, outcome: Value::Null });
        self.pending.insert(id, self.asks.len() - 1);
    }

    /// The client's answer to one of the agent's requests.
    fn answered(&mut self, id: &str, msg: &Value) {
        let Some(index) = self.pending.remove(id) else { return };
        let ask = &mut self.asks[index];
        let Some(outcome) = msg.get("result").and_then(|r| r.get("outcome")) else {
            ask.outcome = Value::from("error");
            return;
        };
        ask.outcome = outcome.get("outcome").cloned().unwrap_or(Value::Null);
        ask.chosen = outcome.get("optionId").cloned().unwrap_or(Value::Null);
    }

    /// The assistant's final message of the turn.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The summary record, one line of JSON (keys in a fixed order).
    pub(crate) fn record(&self, exit: u8) -> String {
        let tools: Vec<String> = self
            .tools
            .iter()
            .map(|t| {
                object(&[
                    ("id", Value::from(t.id.as_str()).to_string()),
                    ("title", t.title.to_string()),
                    ("kind", t.kind.to_string()),
                    ("status", t.status.to_string()),
                ])
            })
            .collect();
        let asks: Vec<String> = self
            .asks
            .iter()
            .map(|a| {
                object(&[
                    ("toolCallId", a.tool_call_id.to_string()),
                    ("options", Value::from(a.options.clone()).to_string()),
                    ("chosen", a.chosen.to_string()),
                    ("outcome", a.outcome.to_string()),
                ])
            })
            .collect();
        let usage = self.prompt_usage.as_ref().or(self.last_usage_update.as_ref()).unwrap_or(&Value::Null);
        let mut fields = vec![
            ("type", "\"summary\"".to_owned()),
            ("stopReason", self.stop_reason.to_string()),
            ("text", Value::from(self.text.as_str()).to_string()),
        ];
        if self.text_truncated {
            fields.push(("textTruncated", "true".to_owned()));
        }
        fields.extend([
            ("toolCalls", format!("[{}]", tools.join(","))),
            ("permissions", format!("[{}]", asks.join(","))),
            ("usage", usage.to_string()),
            ("exit", exit.to_string()),
        ]);
        object(&fields)
    }
}

/// A JSON object from keys and values already serialized, in the order given.
pub(crate) fn object(fields: &[(&str, String)]) -> String {
    let body: Vec<String> = fields.iter().map(|(key, value)| format!("{}:{value}", Value::from(*key))).collect();
    format!("{{{}}}", body.join(","))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_turn_with_a_tool_call_and_an_answered_question() {
        let mut s = Summary::default();
        s.observe(Dir::C2a, &json!({"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}));
        let chunk = |t: &str| json!({"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":t}}}});
        s.observe(Dir::A2c, &chunk("echo: hi"));
        s.observe(Dir::A2c, &json!({"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read","kind":"read","status":"pending"}}}));
        s.observe(Dir::A2c, &json!({"id":0,"method":"session/request_permission","params":{"toolCall":{"toolCallId":"t1"},"options":[{"optionId":"a"}]}}));
        s.observe(Dir::C2a, &json!({"id":0,"result":{"outcome":{"outcome":"selected","optionId":"a"}}}));
        s.observe(Dir::A2c, &json!({"method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}}}));
        s.observe(Dir::A2c, &chunk("\ndone"));
        s.observe(Dir::A2c, &json!({"method":"session/update","params":{"update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hm"}}}}));
        s.observe(Dir::A2c, &chunk("\nbye"));
        // An answer to another request with the same id but a string: not the prompt's.
        s.observe(Dir::A2c, &json!({"id":"2","result":{"stopReason":"refusal"}}));
        s.observe(Dir::A2c, &json!({"id":2,"result":{"stopReason":"end_turn"}}));
        let record: Value = serde_json::from_str(&s.record(0)).unwrap();
        assert_eq!(
            record,
            json!({"type":"summary","stopReason":"end_turn","text":"\ndone\nbye",
                "toolCalls":[{"id":"t1","title":"Read","kind":"read","status":"completed"}],
                "permissions":[{"toolCallId":"t1","options":[{"optionId":"a"}],"chosen":"a","outcome":"selected"}],
                "usage":null,"exit":0})
        );
        assert!(s.record(0).starts_with("{\"type\":\"summary\",\"stopReason\""));
    }

    #[test]
    fn a_v2_turn_ends_at_idle_and_names_the_asks_subject() {
        let mut s = Summary::default();
        s.observe(Dir::C2a, &json!({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}));
        s.observe(Dir::A2c, &json!({"id":3,"result":{"messageId":"user-1"}}));
        s.observe(Dir::A2c, &json!({"id":0,"method":"session/request_permission","params":{"subject":{"type":"tool_call","toolCall":{"toolCallId":"c1"}},"options":[]}}));
        assert_eq!(s.stop_reason, Value::Null, "the acknowledgement is not the turn's end");
        s.observe(Dir::A2c, &json!({"method":"session/update","params":{"update":{"sessionUpdate":"state_update","state":"idle","stopReason":"cancelled"}}}));
        assert_eq!(s.stop_reason, json!("cancelled"));
        assert_eq!(s.asks[0].tool_call_id, json!("c1"));
    }

    #[test]
    fn a_v2_prompt_that_joins_the_turn_keeps_its_summary_and_snapshots_count_once() {
        let mut s = Summary::default();
        let update = |u: Value| json!({"method": "session/update", "params": {"update": u}});
        s.observe(Dir::C2a, &json!({"id": 3, "method": "session/prompt", "params": {}}));
        s.observe(Dir::A2c, &json!({"id": 3, "result": {"messageId": "user-1"}}));
        let chunk = json!({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": {"type": "text", "text": "one"}});
        s.observe(Dir::A2c, &update(chunk));
        // A steer: a second prompt while the turn runs.
        s.observe(Dir::C2a, &json!({"id": 4, "method": "session/prompt", "params": {}}));
        s.observe(Dir::A2c, &json!({"id": 4, "result": {"messageId": "user-2"}}));
        let whole = |id: &str, text: &str| json!({"sessionUpdate": "agent_message", "messageId": id, "content": [{"type": "text", "text": text}]});
        s.observe(Dir::A2c, &update(whole("a1", "one")));
        assert_eq!(s.text, "one", "the steer kept the turn's text; the snapshot of a streamed message adds nothing");
        s.observe(Dir::A2c, &update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1"})));
        s.observe(Dir::A2c, &update(whole("a2", "two")));
        assert_eq!(s.text, "two", "a new message's snapshot is its text");
        s.observe(
            Dir::A2c,
            &update(json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})),
        );
        assert_eq!((s.text.as_str(), &s.stop_reason), ("two", &json!("end_turn")));
        // The next prompt, after idle, starts a new summary.
        s.observe(Dir::C2a, &json!({"id": 5, "method": "session/prompt", "params": {}}));
        assert!(s.text.is_empty() && s.stop_reason.is_null());
    }

    #[test]
    fn text_is_bounded_on_a_char_boundary() {
        let mut s = Summary::default();
        s.push_text(&"é".repeat(MAX_TEXT));
        assert!(s.text.len() <= MAX_TEXT && s.text_truncated);
        assert!(s.record(0).contains("\"textTruncated\":true"));
    }
}
