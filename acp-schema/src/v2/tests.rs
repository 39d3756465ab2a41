//! Unit tests of the v2 types: the extension rule, the turn's end, the hand-written unions.

use serde_json::{Value, json};

use super::*;

fn trip<T: serde::de::DeserializeOwned + serde::Serialize>(v: Value) -> (T, Value) {
    let t: T = serde_json::from_value(v).expect("decodes");
    let out = serde_json::to_value(&t).expect("encodes");
    (t, out)
}

#[test]
fn underscore_values_are_extensions_others_are_future() {
    let (kind, out) = trip::<ToolCallStatus>(json!("_acme_queued"));
    assert_eq!(kind.unknown_kind(), Some(UnknownKind::Extension));
    assert_eq!(out, json!("_acme_queued"));
    let (kind, _) = trip::<ToolCallStatus>(json!("archived"));
    assert_eq!((kind.unknown_kind(), kind.unknown_value()), (Some(UnknownKind::Future), Some("archived")));
    assert_eq!(ToolCallStatus::Cancelled.unknown_kind(), None);
    // A v1 enum re-exported by v2 follows the same rule.
    assert_eq!(ToolKind::from_wire("_x").unknown_kind(), Some(UnknownKind::Extension));

    let update = json!({"sessionUpdate": "_acme/heartbeat", "beat": 3, "_meta": {"k": 1}});
    let (u, out) = trip::<SessionUpdate>(update.clone());
    assert_eq!(u.unknown_kind(), Some(UnknownKind::Extension));
    assert_eq!(u.unknown_value(), Some("_acme/heartbeat"));
    assert_eq!(out, update, "an unknown variant is kept whole");
    let (u, _) = trip::<SessionUpdate>(json!({"sessionUpdate": "mood", "level": 1}));
    assert_eq!(u.unknown_kind(), Some(UnknownKind::Future));
}

#[test]
fn a_turn_ends_with_an_idle_state_update() {
    let params = json!({
        "sessionId": "s1",
        "update": {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    });
    let (n, out) = trip::<UpdateSessionNotification>(params.clone());
    assert_eq!(out, params);
    let SessionUpdate::StateUpdate(StateUpdate::Idle(idle)) = n.update else { panic!("{:?}", n.update) };
    assert_eq!(idle.stop_reason, Some(IdleStopReason::EndTurn));
    assert!(idle.error.is_none() && idle.extra.is_empty());

    let failed = json!({"state": "idle", "stopReason": "error", "error": {"code": -32603, "message": "boom"}});
    let (s, out) = trip::<StateUpdate>(failed.clone());
    assert_eq!(out, failed);
    let StateUpdate::Idle(idle) = s else { panic!("{s:?}") };
    assert_eq!(idle.error.map(|e| e.code), Some(ErrorCode::INTERNAL_ERROR));
}

#[test]
fn prompt_response_only_acknowledges() {
    // No stop reason: the answer acknowledges the prompt by the id of its user message.
    let (r, out) = trip::<PromptResponse>(json!({"messageId": "m1"}));
    assert_eq!((r.message_id.as_str(), out), ("m1", json!({"messageId": "m1"})));
    assert!(serde_json::from_value::<PromptResponse>(json!({"stopReason": "end_turn"})).is_err());
}

#[test]
fn error_data_is_typed_only_when_lossless() {
    let (e, _) = trip::<Error>(json!({"code": -32022, "message": "m", "data": {"requested": 3, "supported": [1, 2]}}));
    assert!(matches!(e.data, Some(ErrorData::UnsupportedProtocolVersion(_))), "{e:?}");
    let other = json!({"code": -32002, "message": "m", "data": {"sessionId": "s", "hint": "gone"}});
    let (e, out) = trip::<Error>(other.clone());
    assert!(matches!(e.data, Some(ErrorData::Other(_))), "{e:?}");
    assert_eq!(out, other, "extra keys of a data object are kept");
}

#[test]
fn hand_written_unions_choose_by_shape() {
    let (items, out) = trip::<MultiSelectItems>(json!({"anyOf": [{"const": "a", "title": "A"}]}));
    assert!(matches!(items, MultiSelectItems::Titled(_)));
    assert_eq!(out, json!({"anyOf": [{"const": "a", "title": "A"}]}));
    let (items, out) = trip::<MultiSelectItems>(json!({"type": "string", "enum": ["a"]}));
    assert!(matches!(items, MultiSelectItems::String(_)));
    assert_eq!(out, json!({"type": "string", "enum": ["a"]}));
    let (items, _) = trip::<MultiSelectItems>(json!({"type": "_acme_color"}));
    assert_eq!(items.unknown_kind(), Some(UnknownKind::Extension));

    let (v, _) = trip::<ElicitationContentValue>(json!(3));
    assert_eq!(v, ElicitationContentValue::Integer(3));
    let (v, _) = trip::<ElicitationContentValue>(json!(1.5));
    assert_eq!(v, ElicitationContentValue::Number(1.5));
    let (v, out) = trip::<ElicitationContentValue>(json!({"x": [1]}));
    assert_eq!((matches!(v, ElicitationContentValue::Other(_)), out), (true, json!({"x": [1]})));

    let set = json!({"sessionId": "s", "configId": "c", "type": "boolean", "value": true});
    let (req, out) = trip::<SetSessionConfigOptionRequest>(set.clone());
    assert!(matches!(req.value, SessionConfigOptionValue::Boolean(ConfigBooleanSetting { value: true })));
    assert_eq!(out, set);
}

#[test]
fn elicitation_scope_follows_session_id() {
    let form = json!({"requestedSchema": {"type": "object", "properties": {}}, "requestId": 7});
    let (mode, out) = trip::<ElicitationFormMode>(form.clone());
    assert!(matches!(mode.scope, ElicitationScope::Request(_)));
    assert_eq!(out, form);
    let url = json!({"elicitationId": "e", "url": "https://x", "sessionId": "s", "toolCallId": "t"});
    let (mode, out) = trip::<ElicitationUrlMode>(url.clone());
    assert!(matches!(mode.scope, ElicitationScope::Session(_)));
    assert_eq!(out, url);
}

#[test]
fn same_wire_definitions_are_the_v1_types() {
    fn same<T>(_: T, _: T) {}
    same(SessionId::new("s"), crate::v1::SessionId::new("s"));
    same(ToolKind::Read, crate::v1::ToolKind::Read);
    same(TextContent::new("t"), crate::v1::TextContent::new("t"));
}

/// The generated constructors: the required fields given, every optional one absent, so a
/// built value encodes as the smallest valid object and decodes back to itself.
#[test]
fn constructors_build_the_smallest_valid_object() {
    fn check<T: serde::de::DeserializeOwned + serde::Serialize + PartialEq + std::fmt::Debug>(t: T, wire: Value) {
        assert_eq!(serde_json::to_value(&t).expect("encodes"), wire);
        assert_eq!(serde_json::from_value::<T>(wire).expect("decodes"), t);
    }
    check(PromptResponse::new("user-1"), json!({"messageId": "user-1"}));
    check(ToolCallUpdate::new("call-1"), json!({"toolCallId": "call-1"}));
    check(
        ContentChunk::new("agent-1", ContentBlock::Text(TextContent::new("hi"))),
        json!({"messageId": "agent-1", "content": {"type": "text", "text": "hi"}}),
    );
    check(
        PlanItems::new("plan-1", vec![PlanEntry::new("read", PlanEntryPriority::High, PlanEntryStatus::Pending)]),
        json!({"planId": "plan-1", "entries": [{"content": "read", "priority": "high", "status": "pending"}]}),
    );
    check(ToolCallLocation::new("/tmp/a"), json!({"path": "/tmp/a"}));
    check(NewSessionResponse::new("s1"), json!({"sessionId": "s1"}));
    let ask = RequestPermissionRequest::new("s1", "go?", vec![]);
    check(ask, json!({"sessionId": "s1", "title": "go?", "options": []}));
    check(Error::new(ErrorCode(-32002), "no such session"), json!({"code": -32002, "message": "no such session"}));
    let set = SetSessionConfigOptionRequest::new(
        "s1",
        "model",
        SessionConfigOptionValue::Boolean(ConfigBooleanSetting { value: true }),
    );
    check(set, json!({"sessionId": "s1", "configId": "model", "type": "boolean", "value": true}));
}
