//! The v2 turn drawn by the v1 renderer: each v2 `session/update` becomes the v1 update that
//! draws it, keeping v2's upsert rule (an update with an id already seen extends or replaces
//! the earlier one).
//!
//! * `tool_call_update`: the first one of an id is drawn as a tool call (its title, kind,
//!   locations), later ones as updates of it (the renderer keeps each call's title and status
//!   by id and redraws what changed); `tool_call_content_chunk` adds content to its call.
//! * Message, thought and user chunks stream in order: chunks of one `messageId` extend one
//!   message. A whole-message snapshot (`agent_message`, …) of a message whose chunks were
//!   drawn is not drawn again; one of a new message is drawn whole.
//! * `plan_update` of a `planId` replaces the plan: it is drawn again in full.
//! * `state_update` is the turn's lifecycle, not drawn here (see `super`); terminals
//!   (`terminal_update`, `terminal_output_chunk`) and `replay_complete` are not drawn.
//!
//! The other updates have the same shape in both versions and are decoded as v1's. The ids
//! remembered are bounded ([`MAX_IDS`]); past it an id is drawn as if seen before.

use std::collections::HashSet;

use acp_blocking::acp_proto::types as v1;
use acp_proto::v2;
use serde_json::{Value, json};

/// Tool call and message ids remembered per turn.
pub(crate) const MAX_IDS: usize = 4096;

/// The ids seen in the current turn.
#[derive(Debug, Default)]
pub(crate) struct Upserts {
    tools: HashSet<String>,
    messages: HashSet<String>,
}

fn remember(set: &mut HashSet<String>, id: &str) -> bool {
    if set.contains(id) || set.len() >= MAX_IDS {
        return false;
    }
    set.insert(id.to_owned())
}

impl Upserts {
    /// A new turn: forgets the ids of the last one (as the renderer forgets its tool calls).
    pub(crate) fn begin_turn(&mut self) {
        self.tools.clear();
        self.messages.clear();
    }

    /// The v1 update that draws `update`, or `None` when it is not drawn.
    pub(crate) fn map(&mut self, update: &v2::SessionUpdate) -> Option<v1::SessionUpdate> {
        let mut value = serde_json::to_value(update).ok()?;
        let kind = value.get("sessionUpdate")?.as_str()?.to_owned();
        match kind.as_str() {
            "state_update" | "terminal_update" | "terminal_output_chunk" | "replay_complete" => return None,
            "tool_call_update" => {
                let id = value.get("toolCallId")?.as_str()?.to_owned();
                if remember(&mut self.tools, &id) {
                    value["sessionUpdate"] = json!("tool_call");
                    if value.get("title").is_none_or(Value::is_null) {
                        value["title"] = json!(id);
                    }
                }
            }
            "tool_call_content_chunk" => {
                let id = value.get("toolCallId")?.clone();
                let content = value.get("content")?.clone();
                value = json!({ "sessionUpdate": "tool_call_update", "toolCallId": id, "content": [content] });
            }
            "config_option_update" => {
                if let Some(Value::Array(options)) = value.get_mut("configOptions") {
                    options.iter_mut().for_each(super::shape::config_option_v1);
                }
            }
            "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk" => {
                if let Some(id) = value.get("messageId").and_then(Value::as_str) {
                    remember(&mut self.messages, id);
                }
            }
            "agent_message" | "agent_thought" | "user_message" => {
                let id = value.get("messageId")?.as_str()?.to_owned();
                if !remember(&mut self.messages, &id) {
                    return None;
                }
                let text = snapshot_text(value.get("content"));
                let chunk = format!("{kind}_chunk");
                value = json!({ "sessionUpdate": chunk, "messageId": id, "content": { "type": "text", "text": text } });
            }
            _ => {}
        }
        serde_json::from_value(value).ok()
    }
}

/// The text blocks of a message snapshot, joined.
fn snapshot_text(content: Option<&Value>) -> String {
    let blocks = content.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let texts: Vec<&str> = blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect();
    texts.join("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(value: Value) -> v2::SessionUpdate {
        serde_json::from_value(value).expect("a v2 update")
    }

    fn tag(update: &v1::SessionUpdate) -> String {
        serde_json::to_value(update).expect("encodes")["sessionUpdate"].as_str().expect("a tag").to_owned()
    }

    #[test]
    fn a_tool_call_is_drawn_whole_once_then_updated_by_id() {
        let mut up = Upserts::default();
        let first =
            up.map(&v2(json!({ "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "pending" })));
        let first = first.expect("drawn");
        assert_eq!(tag(&first), "tool_call");
        match &first {
            v1::SessionUpdate::ToolCall(call) => assert_eq!(call.title, "c1", "no title: the id stands in"),
            other => panic!("{other:?}"),
        }
        let next =
            up.map(&v2(json!({ "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed" })));
        assert_eq!(tag(&next.expect("drawn")), "tool_call_update");
        let chunk = up.map(&v2(json!({
            "sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1",
            "content": { "type": "content", "content": { "type": "text", "text": "more" } },
        })));
        match chunk.expect("drawn") {
            v1::SessionUpdate::ToolCallUpdate(u) => assert_eq!(u.content.map(|c| c.len()), Some(1)),
            other => panic!("{other:?}"),
        }
        up.begin_turn();
        let again = up.map(&v2(json!({ "sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "T" })));
        assert_eq!(tag(&again.expect("drawn")), "tool_call", "a new turn forgets the ids");
    }

    #[test]
    fn a_snapshot_of_a_streamed_message_is_not_drawn_twice() {
        let mut up = Upserts::default();
        let chunk = json!({ "sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": { "type": "text", "text": "hi" } });
        assert_eq!(tag(&up.map(&v2(chunk)).expect("drawn")), "agent_message_chunk");
        let snapshot = |id: &str| {
            v2(
                json!({ "sessionUpdate": "agent_message", "messageId": id, "content": [{ "type": "text", "text": "whole" }] }),
            )
        };
        assert!(up.map(&snapshot("m1")).is_none());
        match up.map(&snapshot("m2")).expect("a new message is drawn") {
            v1::SessionUpdate::AgentMessageChunk(c) => assert_eq!(c.content, v1::ContentBlock::text("whole")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn plans_and_state_updates() {
        let mut up = Upserts::default();
        let plan = json!({ "sessionUpdate": "plan_update", "plan": { "type": "items", "planId": "p1", "entries": [
            { "content": "a", "priority": "high", "status": "pending" } ] } });
        assert_eq!(tag(&up.map(&v2(plan)).expect("drawn")), "plan_update");
        assert!(up.map(&v2(json!({ "sessionUpdate": "state_update", "state": "running" }))).is_none());
    }

    #[test]
    fn a_config_option_update_reads_as_v1s() {
        let mut up = Upserts::default();
        let update = json!({ "sessionUpdate": "config_option_update", "configOptions": [
            { "configId": "model", "name": "Model", "type": "select", "currentValue": "deep",
              "options": [{ "value": "deep", "name": "Deep" }] } ] });
        match up.map(&v2(update)).expect("drawn") {
            v1::SessionUpdate::ConfigOptionUpdate(u) => assert_eq!(u.config_options[0].id.0.as_ref(), "model"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ids_are_bounded() {
        let mut up = Upserts::default();
        for i in 0..MAX_IDS + 10 {
            let id = format!("c{i}");
            up.map(&v2(json!({ "sessionUpdate": "tool_call_update", "toolCallId": id, "title": "t" })));
        }
        assert_eq!(up.tools.len(), MAX_IDS);
    }
}
