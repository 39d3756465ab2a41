//! The gate's content rules as the connection applies them: outbound refusals (nothing sent),
//! the terminal auth method left out of the `initialize` result, inbound tolerance.

use super::*;
use crate::connection::{AnyConnection as Connection, AnyEvent as Event};
use crate::protocol::V1;

/// An agent ready with a session `s`, its client advertising `client_caps`.
fn agent_with_session(client_caps: Value) -> Connection {
    let mut a = ready_agent_with(Config::default(), client_caps, AgentCapabilities::default());
    feed(&mut a, T0, &[&new_session_line(1)]);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!("no session/new") };
    a.respond::<V1>(T0, id, Ok(NewSessionResponse::new("s").into())).unwrap();
    sent(&mut a);
    a
}

fn update(u: SessionUpdate) -> SessionNotification {
    SessionNotification::new("s", u)
}

#[test]
fn opt_in_update_kinds_are_refused_locally_without_the_capability() {
    let mut a = agent_with_session(json!({}));
    let kinds = [
        (SessionUpdate::Notice(Notice::new(NoticeSeverity::Info, "n")), &["session", "notices"][..]),
        (SessionUpdate::PlanRemoved(PlanRemoved::new("p")), &["plan"][..]),
        (
            SessionUpdate::CompactionUpdate(CompactionUpdate::new("c", CompactionStatus::Completed)),
            &["session", "compaction"][..],
        ),
        (SessionUpdate::SubagentUpdate(Box::new(SubagentUpdate::new("child"))), &["subagents"][..]),
    ];
    for (kind, needs) in kinds {
        let refused = a.send_notification::<V1>(T0, update(kind)).map_err(SendError::from);
        assert_eq!(
            refused,
            Err(SendError::NotSupportedByPeer { method: Method::SessionUpdate.wire(), capability: needs })
        );
    }
    assert!(sent(&mut a).is_empty(), "nothing went out");
    let chunk = SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text("ok")));
    a.send_notification::<V1>(T0, update(chunk)).unwrap();
    assert_eq!(sent(&mut a).len(), 1);
}

#[test]
fn opt_in_update_kinds_go_out_when_advertised() {
    let mut a = agent_with_session(json!({"session": {"notices": {}}, "plan": {}}));
    a.send_notification::<V1>(T0, update(SessionUpdate::Notice(Notice::new(NoticeSeverity::Info, "n")))).unwrap();
    a.send_notification::<V1>(T0, update(SessionUpdate::PlanUpdate(PlanUpdate::markdown("p", "x")))).unwrap();
    let out = sent(&mut a);
    assert_eq!(out[0]["params"]["update"]["sessionUpdate"], "notice");
    assert_eq!(out[1]["params"]["update"]["sessionUpdate"], "plan_update");
}

#[test]
fn elicitation_is_gated_by_method_and_by_mode() {
    let form = || CreateElicitationRequest::form("m", "s", ElicitationSchema::new());
    let url = || CreateElicitationRequest::url("m", "s", "e1", "https://example.com");
    let mut a = agent_with_session(json!({}));
    let refused = a.send_request::<V1>(T0, form(), None).map_err(SendError::from);
    assert_eq!(
        refused,
        Err(SendError::NotSupportedByPeer { method: Method::CreateElicitation.wire(), capability: &["elicitation"] })
    );
    let complete = a.send_notification::<V1>(T0, CompleteElicitationNotification::new("e1")).map_err(SendError::from);
    assert_eq!(
        complete,
        Err(SendError::NotSupportedByPeer {
            method: Method::CompleteElicitation.wire(),
            capability: &["elicitation", "url"]
        })
    );
    let mut a = agent_with_session(json!({"elicitation": {"form": {}}}));
    a.send_request::<V1>(T0, form(), None).unwrap();
    let refused = a.send_request::<V1>(T0, url(), None).map_err(SendError::from);
    assert_eq!(
        refused,
        Err(SendError::NotSupportedByPeer {
            method: Method::CreateElicitation.wire(),
            capability: &["elicitation", "url"]
        })
    );
    assert!(a.send_notification::<V1>(T0, CompleteElicitationNotification::new("e1")).is_err());
    let out = sent(&mut a);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["method"], "elicitation/create");
    assert_eq!(out[0]["params"]["mode"], "form");
}

#[test]
fn terminal_auth_methods_are_left_out_for_clients_without_auth_terminal() {
    for (caps, expected) in [(json!({}), vec!["agent"]), (json!({"auth": {"terminal": true}}), vec!["agent", "tui"])] {
        let mut a = Connection::new(Side::Agent, Config::default(), T0);
        feed(&mut a, T0, &[&init_line("0", caps)]);
        let Some(Event::Request { id, .. }) = a.poll_any() else { panic!("no initialize") };
        let mut resp = InitializeResponse::new(ProtocolVersion::V1);
        resp.auth_methods = vec![AuthMethodAgent::new("agent", "A").into(), AuthMethodTerminal::new("tui", "T").into()];
        a.respond::<V1>(T0, id, Ok(resp.into())).unwrap();
        let out = sent(&mut a);
        let ids: Vec<&str> =
            out[0]["result"]["authMethods"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
        assert_eq!(ids, expected);
    }
}

#[test]
fn system_prompts_need_the_agents_capability() {
    let mut c = ready_client();
    let mut req = NewSessionRequest::new("/", vec![]);
    req.system_prompt = Some(SystemPrompt::append("be brief"));
    let refused = c.send_request::<V1>(T0, req.clone(), None).map_err(SendError::from);
    assert!(matches!(refused, Err(SendError::NotSupportedByPeer { method: "session/new", .. })));
    let caps = json!({"sessionCapabilities": {"systemPrompt": {}}});
    let mut c = ready_client_with(Config::default(), ClientCapabilities::default(), caps);
    c.send_request::<V1>(T0, req, None).unwrap();
    let mut over = ResumeSessionRequest::new("s", "/");
    over.system_prompt = Some(SystemPrompt::override_with("x"));
    assert!(c.send_request::<V1>(T0, over, None).is_err());
    assert_eq!(sent(&mut c).len(), 1);
}

/// Initial config option values need the agent's `sessionCapabilities.options`; without the
/// `unstable_session_options` feature they cannot be encoded and any non-empty list is refused.
#[test]
fn initial_config_values_need_the_feature_and_the_agents_capability() {
    let mut req = NewSessionRequest::new("/", vec![]);
    req.config_options = Some(vec![InitialSessionConfigOption::new("model", "fast")]);
    let caps = json!({"sessionCapabilities": {"options": {}}});
    let mut c = ready_client_with(Config::default(), ClientCapabilities::default(), caps);
    let with_caps = c.send_request::<V1>(T0, req.clone(), None).map_err(SendError::from);
    let mut plain = ready_client();
    let without_caps = plain.send_request::<V1>(T0, req, None).map_err(SendError::from);
    if cfg!(feature = "unstable_session_options") {
        assert!(with_caps.is_ok(), "{with_caps:?}");
        assert_eq!(sent(&mut c)[0]["params"]["configOptions"], json!([{"configId": "model", "value": "fast"}]));
        let denied = SendError::NotSupportedByPeer {
            method: Method::NewSession.wire(),
            capability: &["sessionCapabilities", "options"],
        };
        assert_eq!(without_caps, Err(denied));
    } else {
        assert!(matches!(&with_caps, Err(SendError::Encode(e)) if e.contains("unstable_session_options")));
        assert!(matches!(without_caps, Err(SendError::Encode(_))));
        assert!(sent(&mut c).is_empty());
    }
    // An empty list is no list: always allowed.
    let mut empty = NewSessionRequest::new("/", vec![]);
    empty.config_options = Some(Vec::new());
    plain.send_request::<V1>(T0, empty, None).unwrap();
    assert_eq!(sent(&mut plain).len(), 1);
}

#[test]
fn inbound_opt_in_content_is_delivered_whatever_was_advertised() {
    let mut c = ready_client();
    feed(
        &mut c,
        T0,
        &[
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"info","title":"t"}}}"#,
            r#"{"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"e"}}"#,
        ],
    );
    let evs = events(&mut c);
    assert_eq!(evs.len(), 2, "{evs:?}");
    assert!(evs.iter().all(|e| matches!(e, Event::Notification { .. })));
    feed(
        &mut c,
        T0,
        &[
            r#"{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"message":"m","mode":"url","elicitationId":"e","url":"u","sessionId":"s"}}"#,
        ],
    );
    assert_eq!(error_code(&sent(&mut c)[0]), -32601, "the method itself is gated inbound");
}
