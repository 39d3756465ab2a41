//! One test per rule of the [module docs](super), in their order.

use serde_json::{Value, json};

use super::*;

fn frame(value: Value) -> Vec<u8> {
    value.to_string().into_bytes()
}

fn request(id: Value, method: &str, params: Value) -> Vec<u8> {
    frame(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

fn notification(method: &str, params: Value) -> Vec<u8> {
    frame(json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

fn result(id: Value, result: Value) -> Vec<u8> {
    frame(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn error(id: Value) -> Vec<u8> {
    frame(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "no"}}))
}

fn prompt(id: i64, session: &str) -> Vec<u8> {
    request(json!(id), "session/prompt", json!({"sessionId": session, "prompt": []}))
}

fn state(session: &str, state: &str) -> Vec<u8> {
    notification(
        "session/update",
        json!({"sessionId": session, "update": {"sessionUpdate": "state_update", "state": state, "stopReason": "end_turn"}}),
    )
}

fn sessions(observer: &Observer) -> Vec<&str> {
    observer.sessions().collect()
}

fn open_ids(observer: &Observer, from: Side) -> Vec<RequestId> {
    observer.open_requests(from).map(|r| r.id.clone()).collect()
}

/// Rule 1.
#[test]
fn frames_are_classified_as_the_connection_classifies_them_and_batches_entry_by_entry() {
    let mut o = Observer::new();
    assert_eq!(o.observe_from_client(b"not json").kind, FrameKind::Invalid);
    assert_eq!(o.observe_from_client(br#"{"id":1,"method":"x"}"#).kind, FrameKind::Invalid, "no jsonrpc");
    assert_eq!(o.observe_from_client(b"[]").kind, FrameKind::Invalid, "an empty batch");
    assert_eq!(o.observe_from_client(b"[[1]]").kind, FrameKind::Batch);
    assert_eq!(o.counters().invalid, 4, "the nested array is an invalid entry");
    let batch = format!(
        "[{},{}]\n",
        String::from_utf8(prompt(1, "s1")).expect("utf-8"),
        String::from_utf8(request(json!("a"), "session/new", json!({"cwd": "/"}))).expect("utf-8")
    );
    let seen = o.observe_from_client(batch.as_bytes());
    assert_eq!((seen.kind, seen.turn_began.as_deref()), (FrameKind::Batch, Some("s1")));
    assert_eq!(open_ids(&o, Side::Client), [RequestId::Number(1), RequestId::Str("a".into())]);
    let seen = o.observe_from_agent(&notification("session/update", json!({"sessionId": "s1", "update": {}})));
    assert_eq!((seen.kind, seen.method), (FrameKind::Notification, Some(Method::SessionUpdate)));
    // A method name written with escapes is the method, as the connection reads it.
    let escaped = br#"{"jsonrpc":"2.0","id":2,"method":"session\/prompt","params":{"sessionId":"s2"}}"#;
    assert_eq!(o.observe_from_client(escaped).method, Some(Method::Prompt));
    // A key given twice is no valid message.
    assert_eq!(o.observe_from_client(br#"{"jsonrpc":"2.0","id":3,"id":4,"method":"x"}"#).kind, FrameKind::Invalid);
}

/// Rule 2.
#[test]
fn a_request_with_an_id_opens_a_request_of_its_sender_with_its_method_and_session() {
    let mut o = Observer::new();
    let seen = o.observe_from_client(&request(json!(7), "session/set_mode", json!({"sessionId": "s", "modeId": "m"})));
    assert_eq!(
        (seen.kind, seen.method, seen.session.as_deref()),
        (FrameKind::Request, Some(Method::SetSessionMode), Some("s"))
    );
    o.observe_from_agent(&request(json!(7), "fs/read_text_file", json!({"sessionId": "s", "path": "/a"})));
    o.observe_from_client(&request(json!(null), "session/new", json!({})));
    o.observe_from_client(&request(json!(8), "_x/thing", json!([1])));
    let open = o.open_request(Side::Client, &RequestId::Number(7)).expect("open");
    assert_eq!(
        (open.method, &*open.wire, open.session.as_deref()),
        (Some(Method::SetSessionMode), "session/set_mode", Some("s"))
    );
    let agent = o.open_request(Side::Agent, &RequestId::Number(7)).expect("the agent's own");
    assert_eq!(agent.method, Some(Method::ReadTextFile));
    let ext = o.open_request(Side::Client, &RequestId::Number(8)).expect("an extension");
    assert_eq!((ext.method, &*ext.wire, ext.session.as_deref()), (None, "_x/thing", None));
    assert_eq!((o.open_request_count(Side::Client), o.open_request_count(Side::Agent)), (2, 1), "id null opens none");
}

/// Rule 3.
#[test]
fn a_response_closes_the_oldest_open_request_of_the_other_peer_with_its_id() {
    let mut o = Observer::new();
    o.observe_from_client(&request(json!(1), "session/list", json!({})));
    o.observe_from_client(&request(json!(1), "session/list", json!({"cursor": "c"})));
    o.observe_from_agent(&request(json!(1), "session/request_permission", json!({"sessionId": "s"})));
    // The client's answer closes the agent's request, not its own.
    let seen = o.observe_from_client(&result(json!(1), json!({"outcome": {"outcome": "cancelled"}})));
    assert_eq!(seen.answered.map(|r| r.method), Some(Some(Method::RequestPermission)));
    assert_eq!(seen.session.as_deref(), Some("s"), "a response belongs to its request's session");
    assert_eq!(o.open_request_count(Side::Client), 2);
    // One answer per copy, oldest first; then none is open.
    assert!(o.observe_from_agent(&result(json!(1), json!({"sessions": []}))).answered.is_some());
    assert!(o.observe_from_agent(&error(json!(1))).answered.is_some());
    assert_eq!(o.open_request_count(Side::Client), 0);
    assert_eq!(o.observe_from_agent(&result(json!(1), json!({}))).answered, None);
    assert_eq!(o.counters().unmatched_responses, 1);
    // `1` answers `"1"` (and the other way), counted; `null` answers nothing and is not counted.
    o.observe_from_client(&request(json!("1"), "session/list", json!({})));
    o.observe_from_client(&request(json!(2), "session/list", json!({})));
    assert!(o.observe_from_agent(&result(json!(1), json!({}))).answered.is_some());
    assert!(o.observe_from_agent(&result(json!("2"), json!({}))).answered.is_some());
    assert_eq!(o.observe_from_agent(&result(json!("02"), json!({}))).answered, None, "not the same number");
    o.observe_from_agent(&error(json!(null)));
    assert_eq!((o.counters().loose_ids, o.counters().unmatched_responses), (2, 2));
}

/// Rule 4.
#[test]
fn sessions_are_announced_by_new_session_answers_and_by_load_and_resume_answers() {
    let mut o = Observer::new();
    o.observe_from_client(&request(json!(1), "session/new", json!({"cwd": "/"})));
    let seen = o.observe_from_agent(&result(json!(1), json!({"sessionId": "s1"})));
    assert_eq!((seen.announced.as_deref(), seen.session.as_deref()), (Some("s1"), Some("s1")));
    for (id, method, session) in [(2, "session/load", "s2"), (3, "session/resume", "s3")] {
        o.observe_from_client(&request(json!(id), method, json!({"sessionId": session, "cwd": "/"})));
        assert!(!o.has_session(session));
        assert_eq!(o.observe_from_agent(&result(json!(id), json!({}))).announced.as_deref(), Some(session));
    }
    // A refused load, a close, and an error carrying no result announce nothing.
    o.observe_from_client(&request(json!(4), "session/load", json!({"sessionId": "s4"})));
    o.observe_from_agent(&error(json!(4)));
    o.observe_from_client(&request(json!(5), "session/close", json!({"sessionId": "s5"})));
    o.observe_from_agent(&result(json!(5), json!({})));
    // A result naming a session announces it even unmatched (a fork, an extension).
    o.observe_from_agent(&result(json!(99), json!({"sessionId": "s6"})));
    assert_eq!(sessions(&o), ["s1", "s2", "s3", "s6"]);
}

/// Rule 5.
#[test]
fn a_message_belongs_to_the_session_its_params_or_its_request_named() {
    let mut o = Observer::new();
    let update = notification("session/update", json!({"sessionId": "s1", "update": {"sessionUpdate": "x"}}));
    assert_eq!(o.observe_from_agent(&update).session.as_deref(), Some("s1"));
    let ask = request(json!(0), "session/request_permission", json!({"sessionId": "s2"}));
    assert_eq!(o.observe_from_agent(&ask).session.as_deref(), Some("s2"));
    assert_eq!(o.observe_from_client(&result(json!(0), json!({}))).session.as_deref(), Some("s2"));
    assert_eq!(o.observe_from_agent(&notification("_x/ping", json!({}))).session, None);
    assert_eq!(o.observe_from_agent(&notification("_x/ping", json!({"sessionId": 3}))).session, None, "no string");
    let escaped = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\u0033"}}"#;
    assert_eq!(o.observe_from_agent(escaped).session.as_deref(), Some("s3"), "escapes decoded");
    o.observe_from_client(&request(json!(1), "session/new", json!({})));
    assert_eq!(o.observe_from_agent(&result(json!(1), json!({"sessionId": "s4"}))).session.as_deref(), Some("s4"));
}

/// Rule 6.
#[test]
fn a_prompt_opens_its_sessions_turn_and_a_second_joins_it() {
    let mut o = Observer::new();
    assert_eq!(o.observe_from_client(&prompt(1, "s1")).turn_began.as_deref(), Some("s1"));
    assert_eq!(o.turn("s1"), Some(&Turn { state: TurnState::Prompted, prompts: 1, cancel_requested: false }));
    o.observe_from_client(&prompt(2, "s1"));
    assert_eq!(o.turn("s1").map(|t| t.prompts), Some(2));
    assert_eq!(o.observe_from_client(&request(json!(3), "session/prompt", json!({"prompt": []}))).turn_began, None);
    assert_eq!(o.turns().count(), 1, "a prompt naming no session opens no turn");
}

/// Rule 7.
#[test]
fn a_v1_answer_or_an_error_ends_the_turn() {
    let mut o = Observer::new();
    o.observe_from_client(&prompt(1, "s1"));
    o.observe_from_client(&prompt(2, "s2"));
    // An update and a request of the agent with the prompt's id end nothing.
    o.observe_from_agent(&notification("session/update", json!({"sessionId": "s1", "update": {}})));
    o.observe_from_agent(&request(json!(1), "fs/read_text_file", json!({"sessionId": "s1"})));
    assert!(o.turn("s1").is_some());
    let end = o.observe_from_agent(&result(json!(1), json!({"stopReason": "cancelled"}))).turn_ended;
    assert_eq!(end, Some(TurnEnd { session: "s1".into(), stop_reason: Some("cancelled".into()), error: false }));
    let end = o.observe_from_agent(&error(json!(2))).turn_ended;
    assert_eq!(end, Some(TurnEnd { session: "s2".into(), stop_reason: None, error: true }));
    assert!(o.no_turn_open());
    // With two prompts open the turn ends with the last answer.
    o.observe_from_client(&prompt(3, "s3"));
    o.observe_from_client(&prompt(4, "s3"));
    assert_eq!(o.observe_from_agent(&error(json!(4))).turn_ended, None);
    assert!(o.observe_from_agent(&result(json!(3), json!({"stopReason": "end_turn"}))).turn_ended.is_some());
    assert!(o.no_turn_open());
}

/// Rule 8.
#[test]
fn a_v2_turn_runs_from_its_acknowledgement_to_its_idle_state_update() {
    let mut o = Observer::new();
    o.observe_from_client(&prompt(1, "s1"));
    assert_eq!(o.observe_from_agent(&result(json!(1), json!({"messageId": "m1"}))).turn_ended, None);
    assert_eq!(o.turn("s1").map(|t| t.state), Some(TurnState::Running));
    // Neither another session's idle, nor an idle outside `session/update`, nor a result
    // that is no object with a stop reason key ends it.
    o.observe_from_agent(&state("s2", "idle"));
    let outside = notification(
        "_x/update",
        json!({"sessionId": "s1", "update": {"sessionUpdate": "state_update", "state": "idle"}}),
    );
    o.observe_from_agent(&outside);
    o.observe_from_agent(&state("s1", "requires_action"));
    assert_eq!(o.turn("s1").map(|t| t.state), Some(TurnState::RequiresAction));
    o.observe_from_agent(&state("s1", "running"));
    assert_eq!(o.turn("s1").map(|t| t.state), Some(TurnState::Running));
    let end = o.observe_from_agent(&state("s1", "idle")).turn_ended;
    assert_eq!(end, Some(TurnEnd { session: "s1".into(), stop_reason: Some("end_turn".into()), error: false }));
    assert!(o.no_turn_open());
    // A state the agent reports opens a turn no prompt began; a result that is not an object
    // (or has a stopReason key of any value) is no acknowledgement.
    o.observe_from_agent(&state("s9", "running"));
    assert_eq!(o.turn("s9").map(|t| (t.state, t.prompts)), Some((TurnState::Running, 0)));
    for (id, answer) in [(2, json!(null)), (3, json!(["stopReason"])), (4, json!({"stopReason": null}))] {
        o.observe_from_client(&prompt(id, "s5"));
        assert!(o.observe_from_agent(&result(json!(id), answer)).turn_ended.is_some(), "{id}");
    }
}

/// Rule 8: `idle` while a prompt of the session is unanswered (the client sent it before the
/// agent's idle reached it) ends the work that ran; the next turn waits on that prompt.
#[test]
fn a_v2_idle_with_a_prompt_unanswered_leaves_the_next_turn_waiting_on_it() {
    let mut o = Observer::new();
    o.observe_from_client(&prompt(1, "s1"));
    o.observe_from_agent(&result(json!(1), json!({})));
    o.observe_from_client(&notification("session/cancel", json!({"sessionId": "s1"})));
    o.observe_from_client(&prompt(2, "s1"));
    let end = o.observe_from_agent(&state("s1", "idle")).turn_ended;
    assert_eq!(end, Some(TurnEnd { session: "s1".into(), stop_reason: Some("end_turn".into()), error: false }));
    assert_eq!(o.turn("s1"), Some(&Turn { state: TurnState::Prompted, prompts: 1, cancel_requested: false }));
    // Its acknowledgement runs it, the next idle ends it.
    assert_eq!(o.observe_from_agent(&result(json!(2), json!({}))).turn_ended, None);
    assert_eq!(o.turn("s1").map(|t| (t.state, t.prompts)), Some((TurnState::Running, 0)));
    assert!(o.observe_from_agent(&state("s1", "idle")).turn_ended.is_some());
    assert!(o.no_turn_open());
    // Refused instead, it ends the turn that never ran, as an error.
    o.observe_from_client(&prompt(3, "s1"));
    o.observe_from_agent(&result(json!(3), json!({})));
    o.observe_from_client(&prompt(4, "s1"));
    assert!(o.observe_from_agent(&state("s1", "idle")).turn_ended.is_some());
    let end = o.observe_from_agent(&error(json!(4))).turn_ended;
    assert_eq!(end, Some(TurnEnd { session: "s1".into(), stop_reason: None, error: true }));
    assert!(o.no_turn_open());
}

/// Rule 9.
#[test]
fn a_cancel_marks_the_open_turn_and_ends_nothing() {
    let mut o = Observer::new();
    o.observe_from_client(&notification("session/cancel", json!({"sessionId": "s1"})));
    assert!(o.no_turn_open(), "no turn to mark");
    o.observe_from_client(&prompt(1, "s1"));
    let seen = o.observe_from_client(&notification("session/cancel", json!({"sessionId": "s1"})));
    assert_eq!((seen.method, seen.session.as_deref()), (Some(Method::Cancel), Some("s1")));
    assert_eq!(o.turn("s1").map(|t| t.cancel_requested), Some(true));
    assert!(o.observe_from_agent(&result(json!(1), json!({"stopReason": "cancelled"}))).turn_ended.is_some());
}

/// Rule 10.
#[test]
fn turns_follow_each_peer_only_in_its_own_role() {
    let mut o = Observer::new();
    // The agent sending a prompt, the client an idle update or answering a client's prompt id.
    o.observe_from_agent(&prompt(1, "s1"));
    assert!(o.no_turn_open());
    o.observe_from_client(&prompt(2, "s2"));
    o.observe_from_client(&state("s2", "idle"));
    o.observe_from_agent(&notification("session/cancel", json!({"sessionId": "s2"})));
    assert_eq!(o.turn("s2"), Some(&Turn { state: TurnState::Prompted, prompts: 1, cancel_requested: false }));
    // The client answering the agent's "prompt" closes that request and no turn.
    let seen = o.observe_from_client(&result(json!(1), json!({"stopReason": "end_turn"})));
    assert_eq!((seen.answered.is_some(), seen.turn_ended), (true, None));
    assert!(o.turn("s2").is_some());
}

/// Rule 11.
#[test]
fn everything_kept_is_bounded_and_counted_past_its_bound() {
    let limits = Limits { max_open_requests: 3, max_sessions: 2, max_turns: 2, max_key_len: 8 };
    let mut o = Observer::with_limits(limits);
    for i in 0..5 {
        o.observe_from_client(&prompt(i, &format!("s{i}")));
    }
    assert_eq!((o.open_request_count(Side::Client), o.turns().count()), (3, 2));
    // Prompts 3 and 4 were not tracked as requests: they open no turn (rule 6); prompt 2 was,
    // past the turns' bound.
    assert_eq!((o.counters().requests_untracked, o.counters().turns_untracked), (2, 1));
    // The answer to a request not tracked is unmatched.
    o.observe_from_agent(&result(json!(4), json!({})));
    assert_eq!(o.counters().unmatched_responses, 1);
    for i in 0..4 {
        o.observe_from_agent(&result(json!(100 + i), json!({"sessionId": format!("n{i}")})));
    }
    assert_eq!((sessions(&o).len(), o.counters().sessions_untracked), (2, 2));
    // Too long: a session id, a string id, a method.
    let before = o.counters().keys_too_long;
    o.observe_from_agent(&result(json!(7), json!({"sessionId": "a-long-session"})));
    o.observe_from_agent(&request(json!("a-long-id"), "x", json!({})));
    o.observe_from_agent(&request(json!(1), "_a/long/method", json!({})));
    assert_eq!(o.counters().keys_too_long - before, 3);
    assert_eq!(o.open_request_count(Side::Agent), 0);
}

/// The tags this module reads are the ones the v2 types write.
#[cfg(feature = "unstable_protocol_v2")]
#[test]
fn the_v2_tags_are_the_v2_types_own() {
    use crate::v2::{IdleStateUpdate, SessionUpdate, StateUpdate};
    let idle =
        serde_json::to_value(SessionUpdate::StateUpdate(StateUpdate::Idle(IdleStateUpdate::default()))).expect("json");
    assert_eq!((idle["sessionUpdate"].as_str(), idle["state"].as_str()), (Some(STATE_UPDATE), Some(IDLE)));
    let running = serde_json::to_value(StateUpdate::Running(Default::default())).expect("json");
    assert_eq!(running["state"].as_str(), Some(RUNNING));
    let action = serde_json::to_value(StateUpdate::RequiresAction(Default::default())).expect("json");
    assert_eq!(action["state"].as_str(), Some(REQUIRES_ACTION));
}
