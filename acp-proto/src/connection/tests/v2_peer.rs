//! ACP v2 against a hostile or careless peer: frames out of place, odd versions, floods. Each
//! test names what it checks; none may panic or grow the machine's state.

use crate::protocol::{V1, V2};
use serde_json::{Value, json};

use super::v2::{pair_with, pair_with_session, pipe, request_v2, v2_init, v12};
use super::{T0, events, feed, sent};
use crate::connection::{
    AnyConnection as Connection, AnyEvent as Event, AnyOutcome as Outcome, CloseReason, Config, TurnStamp,
};
use crate::types::{ProtocolVersion, SessionId};
use crate::v2;
use crate::{Side, TurnEndReason};

fn update_line(session: &str, update: Value) -> String {
    json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":session,"update":update}}).to_string()
}

fn idle(reason: &str) -> Value {
    json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": reason})
}

fn chunk() -> Value {
    json!({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text", "text": "x"}})
}

fn prompt() -> v2::PromptRequest {
    super::v2::from(json!({"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}))
}

/// The stamps of the v2 notifications and the turn ends among `events`.
fn stamps(events: &[Event]) -> (Vec<Option<TurnStamp>>, usize) {
    let stamps = events
        .iter()
        .filter_map(|e| match e {
            Event::NotificationV2 { turn, .. } => Some(*turn),
            _ => None,
        })
        .collect();
    (stamps, events.iter().filter(|e| matches!(e, Event::TurnEnded { .. })).count())
}

#[test]
fn client_updates_outside_a_turn_are_unstamped_and_end_nothing() {
    let (mut c, _) = pair_with_session();
    // No turn at all: an idle for an unknown session, an idle and a chunk for `s`.
    let lines = [update_line("zz", idle("end_turn")), update_line("s", idle("end_turn")), update_line("s", chunk())];
    feed(&mut c, T0, &lines.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(stamps(&events(&mut c)), (vec![None, None, None], 0));
    // A turn: two idles end it once; an update after the end is unstamped.
    let turn = c.send_request::<V2>(T0, prompt(), None).unwrap();
    let lines = [update_line("s", idle("end_turn")), update_line("s", idle("end_turn")), update_line("s", chunk())];
    feed(&mut c, T0, &lines.iter().map(String::as_str).collect::<Vec<_>>());
    let first = Some(TurnStamp { turn, ordinal: 0 });
    assert_eq!(stamps(&events(&mut c)), (vec![first, None, None], 1));
    assert_eq!(c.v2.len(), 0, "no turn is left open");
}

#[test]
fn client_session_close_ends_its_open_turn() {
    // `session/close` cancels the session's work and frees it: no idle will come.
    let (mut c, mut a) = pair_with_session();
    let turn = c.send_request::<V2>(T0, prompt(), None).unwrap();
    let close = c.send_request::<V2>(T0, v2::CloseSessionRequest::new("s"), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let ev = events(&mut a);
    let ids: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Event::RequestV2 { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    let tool = json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "capabilities": {"cancel": {}}});
    a.send_notification::<V2>(
        T0,
        super::v2::from::<v2::UpdateSessionNotification>(json!({"sessionId": "s", "update": tool})),
    )
    .unwrap();
    let ack: v2::PromptResponse = super::v2::from(json!({"messageId": "u1"}));
    a.respond::<V2>(T0, ids[0], Ok(ack.into())).unwrap();
    a.respond::<V2>(T0, ids[1], Ok(v2::CloseSessionResponse::default().into())).unwrap();
    pipe(&mut a, &mut c, T0);
    let ev = events(&mut c);
    let session = SessionId::from("s");
    let ended = Event::TurnEnded { session, turn, reason: TurnEndReason::SessionClosed };
    let at = ev.iter().position(|e| *e == ended).expect("the turn ends");
    assert!(matches!(ev[at - 1], Event::Outcome { id, outcome: Outcome::ResultV2(_) } if id == close), "{ev:?}");
    assert_eq!(c.v2.len(), 0);
    // A late idle of the closed session ends nothing.
    feed(&mut c, T0, &[&update_line("s", idle("cancelled"))]);
    assert_eq!(stamps(&events(&mut c)), (vec![None], 0));
}

#[test]
fn agent_state_stays_empty_under_a_flood_of_cancels_and_failed_resumes() {
    let (_, mut a) = pair_with(json!({}), json!({"session": {"resume": {}}}), json!([]));
    let before = a.v2.len();
    for n in 0..200 {
        let cancel = json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":format!("x{n}")}});
        let resume =
            json!({"jsonrpc":"2.0","id":n,"method":"session/resume","params":{"sessionId":format!("r{n}"),"cwd":"/w"}});
        feed(&mut a, T0, &[&cancel.to_string(), &resume.to_string()]);
        let (id, _) = request_v2(events(&mut a));
        a.respond::<V2>(T0, id, Err(crate::RpcError::invalid_params("no such session"))).unwrap();
    }
    assert_eq!(a.v2.len(), before);
    let _ = sent(&mut a);
}

#[test]
fn agent_initialize_twice_is_refused_and_keeps_v2() {
    let (_, mut a) = pair_with_session();
    let init = json!({"jsonrpc":"2.0","id":77,"method":"initialize","params":
        {"protocolVersion":2,"info":{"name":"c","version":"1"},"capabilities":{}}});
    feed(&mut a, T0, &[&init.to_string()]);
    assert!(events(&mut a).is_empty());
    assert_eq!(sent(&mut a)[0]["error"]["code"], -32600);
    assert_eq!(a.negotiated().unwrap().protocol_version, ProtocolVersion::V2);
}

#[test]
fn agent_odd_protocol_versions_never_negotiate_v2() {
    // Not a uint16 (the schema's type): a string, a float, negative, past 65535, null, absent.
    for version in [json!("2"), json!(2.5), json!(-1), json!(70000), json!(null)] {
        let mut a = Connection::new(Side::Agent, v12(), T0);
        let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":
            {"protocolVersion":version,"info":{"name":"c","version":"1"},"capabilities":{}}});
        feed(&mut a, T0, &[&init.to_string()]);
        let ev = events(&mut a);
        assert!(ev.is_empty(), "{version}: {ev:?}");
        assert_eq!(sent(&mut a)[0]["error"]["code"], -32602, "{version}");
        assert!(a.negotiated().is_none());
    }
    // 65535 is a version: the agent answers with 2, its latest.
    let mut a = Connection::new(Side::Agent, v12(), T0);
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":
        {"protocolVersion":65535,"info":{"name":"c","version":"1"},"capabilities":{}}});
    feed(&mut a, T0, &[&init.to_string()]);
    let (_, request) = request_v2(events(&mut a));
    assert!(matches!(request, v2::Request::Client(v2::ClientRequest::Initialize(_))));
}

#[test]
fn client_answered_with_a_version_that_is_not_a_uint16_may_retry() {
    // As in v1: an invalid result, not a version choice; nothing is negotiated and the
    // handshake may be tried again (an answer with a version it does not speak closes).
    for version in [json!("2"), json!(-1), json!(70000), json!(2.5)] {
        let mut c = Connection::new(Side::Client, v12(), T0);
        let id = c.send_request::<V2>(T0, v2_init(2, json!({})), None).unwrap();
        let _ = sent(&mut c);
        let line = json!({"jsonrpc":"2.0","id":id.wire(),"result":
            {"protocolVersion":version,"info":{"name":"a","version":"1"},"capabilities":{}}});
        feed(&mut c, T0, &[&line.to_string()]);
        let ev = events(&mut c);
        assert!(matches!(&ev[0], Event::Outcome { outcome: Outcome::InvalidResult(_), .. }), "{version}: {ev:?}");
        assert_eq!(ev.len(), 1, "{version}: {ev:?}");
        assert!(c.negotiated().is_none());
        assert!(c.send_request::<V2>(T0, v2_init(2, json!({})), None).is_ok(), "{version}: a retry");
    }
}

#[test]
fn client_that_offered_1_in_v2_shape_refuses_an_answer_of_2() {
    let mut c = Connection::new(Side::Client, v12(), T0);
    let id = c.send_request::<V2>(T0, v2_init(1, json!({})), None).unwrap();
    let _ = sent(&mut c);
    let line = json!({"jsonrpc":"2.0","id":id.wire(),"result":
        {"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{}}});
    feed(&mut c, T0, &[&line.to_string()]);
    let ev = events(&mut c);
    let version = ProtocolVersion::V2;
    assert_eq!(ev.last(), Some(&Event::Closed { reason: CloseReason::UnsupportedProtocolVersion { version } }));
}

#[test]
fn v1_frames_on_a_v2_connection_are_refused_both_ways() {
    let (mut c, mut a) = pair_with_session();
    // A v1 `session/update` (no `messageId`) is not a v2 one: dropped and counted.
    let dropped = c.stats().notifications_dropped;
    let v1_chunk = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}});
    feed(&mut c, T0, &[&update_line("s", v1_chunk)]);
    assert!(events(&mut c).is_empty());
    assert_eq!(c.stats().notifications_dropped, dropped + 1);
    // A v1 `session/prompt` (`prompt` blocks are the same; no v2 field is missing) is read
    // as v2; a v1 `session/load` is not a v2 method at all.
    let load = json!({"jsonrpc":"2.0","id":9,"method":"session/load","params":
        {"sessionId":"s","cwd":"/w","mcpServers":[]}});
    feed(&mut a, T0, &[&load.to_string()]);
    assert!(events(&mut a).is_empty());
    assert_eq!(sent(&mut a)[0]["error"]["code"], -32601);
}

#[test]
fn v1_initialize_answered_with_2_closes_even_when_2_is_supported() {
    // The client offered 1 (a v1 `initialize`); an agent may only answer 1 or less.
    let mut c = Connection::new(Side::Client, v12(), T0);
    let id = c.send_request::<V1>(T0, crate::types::InitializeRequest::new(ProtocolVersion::V1), None).unwrap();
    let _ = sent(&mut c);
    let line = json!({"jsonrpc":"2.0","id":id.wire(),"result":{"protocolVersion":2,"agentCapabilities":{}}});
    feed(&mut c, T0, &[&line.to_string()]);
    let ev = events(&mut c);
    let version = ProtocolVersion::V2;
    assert_eq!(ev.last(), Some(&Event::Closed { reason: CloseReason::UnsupportedProtocolVersion { version } }));
    assert!(c.negotiated().is_none());
}

#[test]
fn v2_only_agent_never_reads_an_initialize_as_v1() {
    // v2 schema, `InitializeResponse.protocolVersion`: the agent answers the highest version it
    // supports at or below the requested one, and if there is none, initialization fails with
    // -32022 `{requested, supported}`. A v2-only agent asked for 1 has none, in either params'
    // shape; asked for 2 or later it answers 2.
    let v2_only = || Config::default().with_supported_versions(vec![ProtocolVersion::V2]);
    let refused = |a: &mut Connection| {
        assert!(events(a).is_empty(), "the refused initialize is never an event");
        let answer = &sent(a)[0]["error"];
        assert_eq!((&answer["code"], &answer["data"]), (&json!(-32022), &json!({"requested": 1, "supported": [2]})));
        assert!(a.negotiated().is_none());
    };
    // Asked for 1 in v2 params.
    let mut c = Connection::new(Side::Client, v12(), T0);
    let mut a = Connection::new(Side::Agent, v2_only(), T0);
    c.send_request::<V2>(T0, v2_init(1, json!({})), None).unwrap();
    pipe(&mut c, &mut a, T0);
    refused(&mut a);
    // Asked for 1 in v1 params (no v2 `info`): the same, never a v1 request it cannot answer.
    let mut c = Connection::new(Side::Client, v12(), T0);
    let mut a = Connection::new(Side::Agent, v2_only(), T0);
    c.send_request::<V1>(T0, crate::types::InitializeRequest::new(ProtocolVersion::V1), None).unwrap();
    pipe(&mut c, &mut a, T0);
    refused(&mut a);
    // Asked for 3: answered 2, its latest, and the v2 client takes it.
    let mut c = Connection::new(Side::Client, v12(), T0);
    let mut a = Connection::new(Side::Agent, v2_only(), T0);
    c.send_request::<V2>(T0, v2_init(3, json!({})), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    let answer = super::v2::v2_init_result(json!({}), json!([]));
    a.respond::<V2>(T0, id, Ok(answer.into())).unwrap();
    assert_eq!(a.negotiated().unwrap().protocol_version, ProtocolVersion::V2);
}

#[test]
fn cancel_request_of_a_prompt_both_ways() {
    use std::time::Duration;
    let agent = v12().with_cancel_grace(Duration::from_millis(5));
    let (mut c, mut a) = super::v2::pair_configured(v12(), agent, json!({}), json!({"session": {}}), json!([]));
    let new: v2::NewSessionRequest = super::v2::from(json!({"cwd": "/w"}));
    c.send_request::<V2>(T0, new, None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    let session: v2::NewSessionResponse = super::v2::from(json!({"sessionId": "s"}));
    a.respond::<V2>(T0, id, Ok(session.into())).unwrap();
    pipe(&mut a, &mut c, T0);
    let _ = events(&mut c);
    // Client: the local cancel ends the turn (no prompt of it was accepted) and tells the agent.
    let turn = c.send_request::<V2>(T0, prompt(), None).unwrap();
    assert!(c.cancel_request(T0, turn));
    let ev = events(&mut c);
    assert_eq!(ev[0], Event::Outcome { id: turn, outcome: Outcome::Cancelled });
    let ended = Event::TurnEnded { session: SessionId::from("s"), turn, reason: TurnEndReason::PromptFailed };
    assert_eq!(ev[1..], [ended]);
    // Agent: the prompt, then its `$/cancel_request`; the grace passes: -32800, and the
    // session does not work (the prompt was never accepted), so a bare idle is fine.
    pipe(&mut c, &mut a, T0);
    let ev = events(&mut a);
    let Some(Event::RequestV2 { id, .. }) = ev.first() else { panic!("{ev:?}") };
    assert!(matches!(ev[1], Event::Cancelled { .. }), "{ev:?}");
    a.handle_timeout(super::ms(5));
    assert_eq!(sent(&mut a)[0]["error"]["code"], -32800);
    let ack: v2::PromptResponse = super::v2::from(json!({"messageId": "u1"}));
    assert_eq!(a.respond::<V2>(super::ms(6), *id, Ok(ack.into())), Ok(crate::connection::Completion::Discarded));
    let bare = json!({"sessionUpdate": "state_update", "state": "idle"});
    let bare: v2::UpdateSessionNotification = super::v2::from(json!({"sessionId": "s", "update": bare}));
    assert!(a.send_notification::<V2>(super::ms(6), bare).is_ok());
}

#[test]
fn agent_v1_initialize_answer_never_claims_2() {
    // The v1 path speaks v1: an application's v1 answer saying 2 goes out (and is
    // negotiated) as 1, as the v2 path sets 2.
    let mut c = Connection::new(Side::Client, v12(), T0);
    let mut a = Connection::new(Side::Agent, v12(), T0);
    c.send_request::<V1>(T0, crate::types::InitializeRequest::new(ProtocolVersion::V1), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let ev = events(&mut a);
    let [Event::Request { id, .. }] = ev.as_slice() else { panic!("a v1 request: {ev:?}") };
    a.respond::<V1>(T0, *id, Ok(crate::types::InitializeResponse::new(ProtocolVersion::V2).into())).unwrap();
    assert_eq!(a.negotiated().unwrap().protocol_version, ProtocolVersion::V1);
    pipe(&mut a, &mut c, T0);
    assert_eq!(c.negotiated().unwrap().protocol_version, ProtocolVersion::V1);
}

#[test]
fn agent_session_cancel_answers_a_deferred_prompt() {
    // The prompt waits unseen (the output is full) when its `session/cancel` arrives: the
    // application must not see the cancel first and the prompt after it. The machine
    // answers the prompt -32800 (never accepted); the application sees only the cancel.
    let agent = v12().with_outbound_budget(1);
    let (mut c, mut a) = super::v2::pair_configured(v12(), agent, json!({}), json!({"session": {}}), json!([]));
    let new: v2::NewSessionRequest = super::v2::from(json!({"cwd": "/w"}));
    c.send_request::<V2>(T0, new, None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    let session: v2::NewSessionResponse = super::v2::from(json!({"sessionId": "s"}));
    a.respond::<V2>(T0, id, Ok(session.into())).unwrap();
    // The session/new answer fills the output: the prompt is deferred.
    let prompt = json!({"jsonrpc":"2.0","id":50,"method":"session/prompt","params":
        {"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}});
    let cancel = json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}});
    feed(&mut a, T0, &[&prompt.to_string(), &cancel.to_string()]);
    assert_eq!(a.deferred_requests(), 0);
    let frames = sent(&mut a);
    assert_eq!(frames.last().unwrap()["id"], 50);
    assert_eq!(frames.last().unwrap()["error"]["code"], -32800);
    let ev = events(&mut a);
    assert!(!ev.iter().any(|e| matches!(e, Event::RequestV2 { .. })), "{ev:?}");
    assert!(matches!(ev.as_slice(), [Event::NotificationV2 { .. }]), "{ev:?}");
}
