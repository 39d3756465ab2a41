use serde_json::{Value, json};

use super::*;
use crate::v1::{SessionConfigKind, TextContent, ToolCallContent, ToolCallStatus, ToolKind};

/// The params of the W1 benchmark line.
const W1_PARAMS: &str = r#"{"sessionId":"sess-0","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ._"}}}"#;

#[test]
fn w1_line_round_trips_byte_for_byte() {
    let n: SessionNotification = serde_json::from_str(W1_PARAMS).unwrap();
    assert_eq!(n.session_id, "sess-0");
    let SessionUpdate::AgentMessageChunk(chunk) = &n.update else {
        panic!("expected an agent message chunk, got {:?}", n.update)
    };
    assert_eq!(
        chunk.content,
        ContentBlock::Text(TextContent::new("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ._"))
    );
    assert_eq!(serde_json::to_string(&n).unwrap(), W1_PARAMS);
}

fn round_trip(update: Value) -> SessionUpdate {
    let params = json!({"sessionId": "s", "update": update});
    let n: SessionNotification = serde_json::from_value(params.clone()).unwrap();
    assert_eq!(serde_json::to_value(&n).unwrap(), params);
    let from_str: SessionNotification = serde_json::from_str(&params.to_string()).unwrap();
    assert_eq!(from_str, n);
    n.update
}

#[test]
fn every_session_update_variant_round_trips() {
    let text = json!({"type": "text", "text": "t"});
    let u = round_trip(json!({"sessionUpdate": "user_message_chunk", "content": text, "messageId": "m1"}));
    assert!(matches!(u, SessionUpdate::UserMessageChunk(ref c) if c.message_id.as_ref().is_some_and(|m| m == "m1")));
    let u = round_trip(json!({"sessionUpdate": "agent_message_chunk", "content": text}));
    assert!(matches!(u, SessionUpdate::AgentMessageChunk(_)));
    let u = round_trip(json!({"sessionUpdate": "agent_thought_chunk", "content": text, "_meta": {"k": 1}}));
    assert!(matches!(u, SessionUpdate::AgentThoughtChunk(ref c) if c.meta.is_some()));
    let u = round_trip(json!({
        "sessionUpdate": "tool_call",
        "toolCallId": "call_002",
        "title": "Running tests",
        "kind": "execute",
        "status": "in_progress",
        "content": [{"type": "terminal", "terminalId": "term_xyz789"}]
    }));
    let SessionUpdate::ToolCall(call) = &u else { panic!("not a tool call") };
    assert_eq!(call.kind, Some(ToolKind::Execute));
    assert!(matches!(call.content.as_deref(), Some([ToolCallContent::Terminal(_)])));
    let u = round_trip(json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "Analysis complete"}}]
    }));
    assert!(matches!(u, SessionUpdate::ToolCallUpdate(ref t) if t.status == Some(ToolCallStatus::Completed)));
    let u = round_trip(json!({
        "sessionUpdate": "plan",
        "entries": [
            {"content": "Check for syntax errors", "priority": "high", "status": "pending"},
            {"content": "Suggest improvements", "priority": "low", "status": "in_progress"}
        ]
    }));
    assert!(matches!(u, SessionUpdate::Plan(ref p) if p.entries[1].status == PlanEntryStatus::InProgress));
    let u = round_trip(json!({
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "web", "description": "Search the web for information", "input": {"hint": "query to search for"}},
            {"name": "test", "description": "Run tests for the current project"}
        ]
    }));
    assert!(matches!(u, SessionUpdate::AvailableCommandsUpdate(ref a) if a.available_commands[0].input.is_some()));
    let u = round_trip(json!({"sessionUpdate": "current_mode_update", "currentModeId": "code"}));
    assert_eq!(u, SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new("code")));
    let u = round_trip(json!({
        "sessionUpdate": "config_option_update",
        "configOptions": [{"id": "brave", "name": "Brave", "type": "boolean", "currentValue": false}]
    }));
    let SessionUpdate::ConfigOptionUpdate(c) = &u else { panic!("not a config option update") };
    assert!(matches!(c.config_options[0].kind, SessionConfigKind::Boolean(_)));
    let u = round_trip(json!({
        "sessionUpdate": "session_info_update",
        "title": "Implement user authentication",
        "_meta": {"tags": ["feature", "auth"], "priority": "high"}
    }));
    assert!(
        matches!(u, SessionUpdate::SessionInfoUpdate(ref i) if i.title == Some(Some("Implement user authentication".into())))
    );
    let u = round_trip(json!({
        "sessionUpdate": "usage_update",
        "used": 53000,
        "size": 200000,
        "cost": {"amount": 0.045, "currency": "USD"}
    }));
    assert!(
        matches!(u, SessionUpdate::UsageUpdate(ref usage) if usage.cost.as_ref().is_some_and(|c| c.amount == 0.045))
    );
}

#[test]
fn unknown_session_update_is_kept_whole() {
    let update = json!({"sessionUpdate": "telepathy_update", "thoughts": ["a", {"b": null}], "_meta": {}});
    let u = round_trip(update);
    assert!(matches!(&u, SessionUpdate::Unknown(v) if v.tag("sessionUpdate") == Some("telepathy_update")));
}

#[test]
fn tag_not_first_decodes() {
    let n: SessionNotification = serde_json::from_str(
        r#"{"update":{"content":{"text":"x","type":"text"},"messageId":"m","sessionUpdate":"agent_thought_chunk"},"sessionId":"s"}"#,
    )
    .unwrap();
    let mut chunk = ContentChunk::new(ContentBlock::text("x"));
    chunk.message_id = Some("m".into());
    assert_eq!(n, SessionNotification::new("s", SessionUpdate::AgentThoughtChunk(chunk)));
    assert_eq!(
        serde_json::to_string(&n).unwrap(),
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"x"},"messageId":"m"}}"#
    );
}

#[test]
fn session_info_update_distinguishes_null_from_absent() {
    for (update, title) in [
        (json!({"sessionUpdate": "session_info_update"}), None),
        (json!({"sessionUpdate": "session_info_update", "title": null}), Some(None)),
        (json!({"sessionUpdate": "session_info_update", "title": "T"}), Some(Some("T".to_owned()))),
    ] {
        let u = round_trip(update);
        let SessionUpdate::SessionInfoUpdate(info) = u else { panic!("not a session info update") };
        assert_eq!(info.title, title);
        assert_eq!(info.updated_at, None);
    }
}

#[test]
fn lenient_update_fields() {
    let n: SessionNotification = serde_json::from_value(json!({
        "sessionId": "s",
        "_meta": "not an object",
        "update": {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "ok", "priority": "urgent", "status": "pending"},
                {"content": "no status", "priority": "low"},
                42
            ]
        }
    }))
    .unwrap();
    assert_eq!(n.meta, None);
    let SessionUpdate::Plan(plan) = n.update else { panic!("not a plan") };
    assert_eq!(
        plan.entries,
        vec![PlanEntry::new("ok", PlanEntryPriority::Unknown("urgent".into()), PlanEntryStatus::Pending)]
    );

    let u: SessionUpdate = serde_json::from_value(json!({
        "sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": "free"}
    }))
    .unwrap();
    assert_eq!(u, SessionUpdate::UsageUpdate(UsageUpdate::new(1, 2)));

    let u: SessionUpdate = serde_json::from_value(json!({
        "sessionUpdate": "available_commands_update",
        "availableCommands": [{"name": "x", "description": "d", "input": {"nohint": true}}]
    }))
    .unwrap();
    assert_eq!(
        u,
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(vec![AvailableCommand::new("x", "d")]))
    );
}

#[test]
fn integer_cost_re_encodes_as_double() {
    let u: SessionUpdate = serde_json::from_str(
        r#"{"sessionUpdate":"usage_update","used":1,"size":2,"cost":{"amount":1,"currency":"EUR"}}"#,
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(&u).unwrap(),
        r#"{"sessionUpdate":"usage_update","used":1,"size":2,"cost":{"amount":1.0,"currency":"EUR"}}"#
    );
}

#[test]
fn errors_in_known_updates_are_reported() {
    let e = serde_json::from_str::<SessionNotification>(
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("missing field `content`"), "{e}");
    let e = serde_json::from_str::<SessionNotification>(r#"{"sessionId":"s","update":{}}"#).unwrap_err();
    assert!(e.to_string().contains("missing field `sessionUpdate`"), "{e}");
}

/// `prompt_suggestions_update` is a known kind only with `unstable_prompt_suggestions`;
/// without it the update is `Unknown` and still round-trips.
#[test]
fn prompt_suggestions_update_is_known_only_with_its_feature() {
    let wire = json!({"sessionUpdate": "prompt_suggestions_update", "suggestions": [{"prompt": [{"type": "text", "text": "go"}]}]});
    let update: SessionUpdate = serde_json::from_value(wire.clone()).unwrap();
    #[cfg(feature = "unstable_prompt_suggestions")]
    {
        let SessionUpdate::PromptSuggestionsUpdate(u) = &update else { panic!("{update:?}") };
        assert_eq!(u.suggestions[0].prompt, [ContentBlock::text("go")]);
    }
    #[cfg(not(feature = "unstable_prompt_suggestions"))]
    assert!(matches!(update, SessionUpdate::Unknown(_)), "{update:?}");
    assert_eq!(serde_json::to_value(&update).unwrap(), wire);
}

/// `cursor_update` is a known kind only with `unstable_session_cursors`; without it the update
/// is `Unknown` and still round-trips.
#[test]
fn cursor_update_is_known_only_with_its_feature() {
    let wire = json!({"sessionUpdate": "cursor_update", "cursorId": "c1", "capabilities": {"fork": {}},
                      "anchor": {"type": "tool_call", "toolCallId": "t1", "position": "after"}});
    let update: SessionUpdate = serde_json::from_value(wire.clone()).unwrap();
    #[cfg(feature = "unstable_session_cursors")]
    {
        let SessionUpdate::CursorUpdate(u) = &update else { panic!("{update:?}") };
        assert_eq!(u.cursor_id.as_str(), "c1");
        assert!(matches!(&u.anchor, Some(crate::v1::CursorAnchor::ToolCall(a)) if a.tool_call_id.as_str() == "t1"));
    }
    #[cfg(not(feature = "unstable_session_cursors"))]
    assert!(matches!(update, SessionUpdate::Unknown(_)), "{update:?}");
    assert_eq!(serde_json::to_value(&update).unwrap(), wire);
}

/// Every update is moved at the size of the largest kind; the rare, large `subagent_update` is
/// boxed so that it does not set that size (the text chunks of a reply are the common kind).
#[test]
fn a_rare_large_update_does_not_set_the_size_of_every_update() {
    let (update, subagent, chunk) = (
        std::mem::size_of::<SessionUpdate>(),
        std::mem::size_of::<SubagentUpdate>(),
        std::mem::size_of::<ContentChunk>(),
    );
    assert!(update < subagent, "SessionUpdate is {update} bytes, SubagentUpdate {subagent}");
    assert!(update <= chunk + 16, "SessionUpdate is {update} bytes where a chunk is {chunk}");
    let json = json!({"sessionUpdate": "subagent_update", "sessionId": "child-1"});
    let decoded: SessionUpdate = serde_json::from_value(json.clone()).unwrap();
    assert!(matches!(&decoded, SessionUpdate::SubagentUpdate(s) if s.session_id == "child-1"), "{decoded:?}");
    assert_eq!(serde_json::to_value(&decoded).unwrap(), json);
}
