//! What the checker learns of the agent's sessions from the wire, message by message in the
//! order the agent wrote them: which session ids the client knows yet, which turns run, which
//! sessions are being replayed, and the tool calls announced with their latest status. The
//! run-wide requirements are judged from it (see [`super::wide`]):
//!
//! * an update naming a session before the answer that gave its id (`session/new`) is early;
//! * a content update (message, thought, plan, tool call) of a session whose turn has ended,
//!   with no prompt running and no `session/load` replaying it, is late;
//! * a permission ask about a tool call no `tool_call` update announced is unannounced.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// The most notes kept per kind (the rest are counted).
const NOTES_MAX: usize = 8;

/// Update kinds that belong to a turn: after the turn's response they are late. The others
/// (commands, modes, config options, session info, usage) may come at any time.
const TURN_CONTENT: [&str; 6] =
    ["user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"];

/// Whether an update of this kind belongs to a turn (see [`TURN_CONTENT`]).
pub(crate) fn is_turn_content(kind: &str) -> bool {
    TURN_CONTENT.contains(&kind)
}

/// Descriptions of what went wrong, bounded.
#[derive(Debug, Default, Clone)]
pub(crate) struct Notes {
    pub(crate) kept: Vec<String>,
    pub(crate) total: usize,
}

impl Notes {
    fn push(&mut self, note: String) {
        self.total += 1;
        if self.kept.len() < NOTES_MAX {
            self.kept.push(note);
        }
    }

    /// The first note and how many there were, in one sentence.
    pub(crate) fn summary(&self) -> String {
        let first = self.kept.first().map(String::as_str).unwrap_or("");
        if self.total > 1 { format!("{first} (and {} more)", self.total - 1) } else { first.to_owned() }
    }
}

/// A request of ours awaiting its answer.
#[derive(Debug)]
struct Pending {
    method: String,
    session: Option<String>,
}

/// See the [module docs](self).
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    pending: HashMap<i64, Pending>,
    known: HashSet<String>,
    /// Sessions with a prompt running: the prompt's id.
    running: HashMap<String, i64>,
    /// Sessions whose `session/load` has not been answered yet.
    loading: HashSet<String>,
    /// Sessions whose last turn has ended.
    ended: HashSet<String>,
    /// Turns whose response came.
    pub(crate) turns_ended: usize,
    /// Updates naming a session before its id was given.
    pub(crate) early: Notes,
    /// Content updates of a session between turns.
    pub(crate) late: Notes,
    /// Permission asks about a tool call not announced before.
    pub(crate) unannounced: Notes,
    /// Permission asks seen.
    pub(crate) asks: usize,
    /// Tool calls announced: (session, id) → latest status.
    tool_calls: HashMap<(String, String), String>,
}

fn session_of(params: &Value) -> Option<String> {
    params.get("sessionId").and_then(Value::as_str).map(str::to_owned)
}

impl Tracker {
    /// We sent request `id`.
    pub(crate) fn sent_request(&mut self, id: i64, method: &str, params: &Value) {
        let session = session_of(params);
        if let Some(session) = &session {
            match method {
                "session/prompt" => {
                    self.running.insert(session.clone(), id);
                    self.ended.remove(session);
                }
                "session/load" => {
                    self.loading.insert(session.clone());
                    self.known.insert(session.clone());
                }
                "session/resume" => {
                    self.known.insert(session.clone());
                }
                _ => {}
            }
        }
        self.pending.insert(id, Pending { method: method.to_owned(), session });
    }

    /// The agent answered our request `id`.
    pub(crate) fn got_response(&mut self, id: i64, message: &Value) {
        let Some(pending) = self.pending.remove(&id) else { return };
        let result = message.get("result");
        match (pending.method.as_str(), pending.session) {
            ("session/new" | "session/fork", _) => {
                if let Some(session) = result.and_then(session_of) {
                    self.known.insert(session);
                }
            }
            ("session/prompt", Some(session)) if self.running.get(&session) == Some(&id) => {
                self.running.remove(&session);
                self.ended.insert(session);
                self.turns_ended += 1;
            }
            ("session/load", Some(session)) => {
                self.loading.remove(&session);
            }
            _ => {}
        }
    }

    /// The agent sent a `session/update` with these params.
    pub(crate) fn got_update(&mut self, params: &Value) {
        let session = session_of(params).unwrap_or_default();
        let update = params.get("update").unwrap_or(&Value::Null);
        let kind = update.get("sessionUpdate").and_then(Value::as_str).unwrap_or("");
        if !self.known.contains(&session) {
            self.early.push(format!("a `{kind}` update named session {session:?} before an answer gave that id"));
            return;
        }
        let between_turns =
            self.ended.contains(&session) && !self.running.contains_key(&session) && !self.loading.contains(&session);
        if between_turns && is_turn_content(kind) {
            self.late.push(format!("a `{kind}` update of session {session:?} after its turn's response"));
        }
        let call = update.get("toolCallId").and_then(Value::as_str).map(str::to_owned);
        let status = update.get("status").and_then(Value::as_str);
        match (kind, call) {
            ("tool_call", Some(call)) => {
                self.tool_calls.insert((session, call), status.unwrap_or("pending").to_owned());
            }
            ("tool_call_update", Some(call)) => {
                let entry = self.tool_calls.entry((session, call)).or_insert_with(|| "pending".to_owned());
                if let Some(status) = status {
                    *entry = status.to_owned();
                }
            }
            _ => {}
        }
    }

    /// The agent asked permission with these params.
    pub(crate) fn got_ask(&mut self, params: &Value) {
        self.asks += 1;
        let session = session_of(params).unwrap_or_default();
        let call = params.pointer("/toolCall/toolCallId").and_then(Value::as_str).unwrap_or("");
        if !self.tool_calls.contains_key(&(session.clone(), call.to_owned())) {
            self.unannounced.push(format!(
                "session/request_permission about tool call {call:?} of session {session:?}, which no `tool_call` update announced before"
            ));
        }
    }

    /// Whether the agent gave (or we named) any session.
    pub(crate) fn has_sessions(&self) -> bool {
        !self.known.is_empty()
    }

    /// The latest status of a tool call (`None`: never announced).
    pub(crate) fn status(&self, session: &str, call: &str) -> Option<&str> {
        self.tool_calls.get(&(session.to_owned(), call.to_owned())).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn update(session: &str, update: Value) -> Value {
        json!({"sessionId": session, "update": update})
    }

    fn chunk(session: &str) -> Value {
        update(session, json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}))
    }

    #[test]
    fn an_update_before_the_answer_that_gives_its_session_is_early() {
        let mut t = Tracker::default();
        t.sent_request(1, "session/new", &json!({"cwd": "/"}));
        t.got_update(&update("s1", json!({"sessionUpdate": "available_commands_update", "availableCommands": []})));
        t.got_response(1, &json!({"id": 1, "result": {"sessionId": "s1"}}));
        t.got_update(&update("s1", json!({"sessionUpdate": "available_commands_update", "availableCommands": []})));
        assert_eq!(t.early.total, 1, "{:?}", t.early);
        assert!(t.early.summary().contains("available_commands_update"));
        // A session named by our own session/load is known at once (its replay comes first).
        t.sent_request(2, "session/load", &json!({"sessionId": "old"}));
        t.got_update(&chunk("old"));
        assert_eq!(t.early.total, 1);
    }

    #[test]
    fn content_between_turns_is_late_but_not_metadata_nor_a_replay() {
        let mut t = Tracker::default();
        t.sent_request(1, "session/new", &json!({}));
        t.got_response(1, &json!({"result": {"sessionId": "s"}}));
        t.got_update(&chunk("s"));
        assert_eq!(t.late.total, 0, "before any turn: not late");
        t.sent_request(2, "session/prompt", &json!({"sessionId": "s"}));
        t.got_update(&chunk("s"));
        t.got_response(2, &json!({"result": {"stopReason": "end_turn"}}));
        assert_eq!((t.turns_ended, t.late.total), (1, 0));
        t.got_update(&update("s", json!({"sessionUpdate": "usage_update", "used": 1, "size": 2})));
        assert_eq!(t.late.total, 0, "usage may come any time");
        t.sent_request(3, "session/load", &json!({"sessionId": "s"}));
        t.got_update(&chunk("s"));
        t.got_response(3, &json!({"result": {}}));
        assert_eq!(t.late.total, 0, "a replay before the load's answer is not late");
        t.got_update(&chunk("s"));
        assert_eq!(t.late.total, 1);
    }

    #[test]
    fn asks_about_unannounced_tool_calls_and_statuses() {
        let mut t = Tracker::default();
        t.sent_request(1, "session/new", &json!({}));
        t.got_response(1, &json!({"result": {"sessionId": "s"}}));
        t.got_ask(&json!({"sessionId": "s", "toolCall": {"toolCallId": "c1"}}));
        assert_eq!(t.unannounced.total, 1);
        t.got_update(&update("s", json!({"sessionUpdate": "tool_call", "toolCallId": "c2", "title": "t"})));
        t.got_ask(&json!({"sessionId": "s", "toolCall": {"toolCallId": "c2"}}));
        assert_eq!((t.unannounced.total, t.asks), (1, 2));
        assert_eq!(t.status("s", "c2"), Some("pending"));
        t.got_update(&update(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": "failed"}),
        ));
        assert_eq!(t.status("s", "c2"), Some("failed"));
        assert_eq!(t.status("s", "c9"), None);
    }
}
