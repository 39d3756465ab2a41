//! The v2 turn rules (`connection::turns_v2`), one test per row of its tables.

use crate::protocol::V2;
use std::time::Duration;

use serde_json::{Value, json};

use super::v2::{from, pair_configured, pair_with, pair_with_session, pipe, request_v2, v12};
use super::{T0, events, feed, ms, sent};
use crate::connection::{
    AnyConnection as Connection, AnyEvent as Event, AnyOutcome as Outcome, CancelReason, Completion, OutboundId,
    SendError, TurnStamp,
};
use crate::types::{IdleStopReason, SessionId};
use crate::v2::{self, ClientRequest};
use crate::{RpcError, TurnEndReason};

fn update(session: &str, update: Value) -> v2::UpdateSessionNotification {
    from(json!({"sessionId": session, "update": update}))
}

fn update_line(update: Value) -> String {
    json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":update}}).to_string()
}

fn idle(reason: &str) -> Value {
    json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": reason})
}

fn running() -> Value {
    json!({"sessionUpdate": "state_update", "state": "running"})
}

fn chunk(text: &str) -> Value {
    json!({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text", "text": text}})
}

pub(super) fn prompt() -> v2::PromptRequest {
    from(json!({"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}))
}

pub(super) fn ack() -> v2::Response {
    let ack: v2::PromptResponse = from(json!({"messageId": "u1"}));
    ack.into()
}

pub(super) fn ask() -> v2::RequestPermissionRequest {
    from(
        json!({"sessionId": "s", "title": "run?", "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]}),
    )
}

/// The turn stamps of the v2 notifications among `events`, and the turn ends.
fn stamps(events: &[Event]) -> (Vec<Option<TurnStamp>>, Vec<TurnEndReason>) {
    let stamps = events
        .iter()
        .filter_map(|e| match e {
            Event::NotificationV2 { turn, .. } => Some(*turn),
            _ => None,
        })
        .collect();
    let ends = events
        .iter()
        .filter_map(|e| match e {
            Event::TurnEnded { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    (stamps, ends)
}

/// A v2 pair with session `s` whose prompt was sent (and, with `ack`, acknowledged).
pub(super) fn prompted(acknowledged: bool) -> (Connection, Connection, OutboundId) {
    let (mut c, mut a) = pair_with_session();
    let turn = c.send_request::<V2>(T0, prompt(), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    if acknowledged {
        a.respond::<V2>(T0, id, Ok(ack())).unwrap();
        pipe(&mut a, &mut c, T0);
        assert!(matches!(events(&mut c).as_slice(), [Event::Outcome { outcome: Outcome::ResultV2(_), .. }]));
    }
    (c, a, turn)
}

#[test]
fn agent_updates_need_an_announced_session() {
    let (_, mut fresh) = pair_with(json!({}), json!({"session": {}}), json!([]));
    let refused = fresh.send_notification::<V2>(T0, update("s", chunk("x"))).unwrap_err();
    assert_eq!(refused.error, SendError::UnknownSession(SessionId::from("s")));
    let (mut c, mut a) = pair_with_session();
    assert!(a.send_notification::<V2>(T0, update("s", chunk("x"))).is_ok());
    let close = v2::CloseSessionRequest::new("s");
    c.send_request::<V2>(T0, close, None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    a.respond::<V2>(T0, id, Ok(v2::CloseSessionResponse::default().into())).unwrap();
    let refused = a.send_notification::<V2>(T0, update("s", chunk("x"))).unwrap_err();
    assert_eq!(refused.error, SendError::UnknownSession(SessionId::from("s")));
}

#[test]
fn agent_resume_allows_replay_before_its_answer() {
    let (_, mut a) = pair_with(json!({}), json!({"session": {}}), json!([]));
    let line = json!({"jsonrpc":"2.0","id":4,"method":"session/resume","params":{"sessionId":"r","cwd":"/w"}});
    feed(&mut a, T0, &[&line.to_string()]);
    let (id, _) = request_v2(events(&mut a));
    assert!(a.send_notification::<V2>(T0, update("r", chunk("old"))).is_ok(), "the replay");
    a.respond::<V2>(T0, id, Err(RpcError::invalid_params("no such session"))).unwrap();
    assert!(a.send_notification::<V2>(T0, update("r", chunk("x"))).is_err(), "a failed resume announces nothing");
    feed(&mut a, T0, &[&line.to_string().replace("\"id\":4", "\"id\":5")]);
    let (id, _) = request_v2(events(&mut a));
    a.respond::<V2>(T0, id, Ok(v2::ResumeSessionResponse::default().into())).unwrap();
    assert!(a.send_notification::<V2>(T0, update("r", chunk("x"))).is_ok());
}

#[test]
fn agent_second_prompt_while_working_is_dispatched() {
    let (mut c, mut a, _) = prompted(true);
    c.send_request::<V2>(T0, prompt(), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, request) = request_v2(events(&mut a));
    assert!(matches!(request, v2::Request::Client(ClientRequest::Prompt(_))));
    assert_eq!(a.respond::<V2>(T0, id, Ok(ack())), Ok(Completion::Sent));
    assert!(sent(&mut a)[0]["result"].is_object());
}

#[test]
fn agent_cancel_cascades_and_the_idle_says_cancelled() {
    let (mut c, mut a, _) = prompted(true);
    // Idle session: a cancel is delivered, nothing else.
    let (mut c2, mut a2) = pair_with_session();
    c2.cancel_turn(T0, &SessionId::from("s")).unwrap();
    pipe(&mut c2, &mut a2, T0);
    assert!(matches!(events(&mut a2).as_slice(), [Event::NotificationV2 { .. }]));
    assert!(sent(&mut a2).is_empty());
    // Working (acknowledged prompt): the ask is cancelled, with a `$/cancel_request`.
    a.send_notification::<V2>(T0, update("s", running())).unwrap();
    let asked = a.send_request::<V2>(T0, ask(), None).unwrap();
    let _ = sent(&mut a);
    c.cancel_turn(T0, &SessionId::from("s")).unwrap();
    pipe(&mut c, &mut a, T0);
    let ev = events(&mut a);
    assert!(matches!(&ev[0], Event::NotificationV2 { notification: v2::Notification::Client(_), .. }));
    assert_eq!(ev[1], Event::Outcome { id: asked, outcome: Outcome::Cancelled });
    let frames = sent(&mut a);
    assert_eq!(frames[0]["method"], "$/cancel_request");
    assert_eq!(frames[0]["params"]["requestId"], asked.wire());
    // Cancelling: a new ask resolves at once, without a frame.
    let late = a.send_request::<V2>(T0, ask(), None).unwrap();
    assert_eq!(events(&mut a), [Event::Outcome { id: late, outcome: Outcome::Cancelled }]);
    assert!(sent(&mut a).is_empty());
    // The idle that ends the cancelled work says `cancelled`; the next one is as sent.
    a.send_notification::<V2>(T0, update("s", idle("end_turn"))).unwrap();
    a.send_notification::<V2>(T0, update("s", idle("end_turn"))).unwrap();
    let frames = sent(&mut a);
    assert_eq!(frames[0]["params"]["update"]["stopReason"], "cancelled");
    assert_eq!(frames[1]["params"]["update"]["stopReason"], "end_turn");
}

#[test]
fn agent_cancel_grace_sends_the_idle_itself() {
    let agent = v12().with_turn_cancel_grace(Duration::from_millis(10));
    let (mut c, mut a) = pair_configured(v12(), agent, json!({}), json!({"session": {}}), json!([]));
    let new: v2::NewSessionRequest = from(json!({"cwd": "/w"}));
    c.send_request::<V2>(T0, new, None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    a.respond::<V2>(T0, id, Ok(from::<v2::NewSessionResponse>(json!({"sessionId": "s"})).into())).unwrap();
    a.send_notification::<V2>(T0, update("s", running())).unwrap();
    let _ = sent(&mut a);
    feed(&mut a, T0, &[r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#]);
    assert_eq!(a.poll_timeout(), Some(ms(10)));
    let delivered = events(&mut a);
    assert!(!delivered.iter().any(|e| matches!(e, Event::CancelGraceExpired { .. })), "{delivered:?}");
    a.handle_timeout(ms(9));
    assert!(sent(&mut a).is_empty());
    assert!(events(&mut a).is_empty());
    a.handle_timeout(ms(10));
    // The application is told, so that it stops the cancelled work.
    assert_eq!(events(&mut a), [Event::CancelGraceExpired { session: SessionId::from("s") }]);
    let frames = sent(&mut a);
    assert_eq!(frames.len(), 1);
    assert_eq!(
        frames[0]["params"]["update"],
        json!({"sessionUpdate":"state_update","state":"idle","stopReason":"cancelled"})
    );
    assert_eq!(a.poll_timeout(), None);
    // The application's own idle after that is refused: on the wire it would end the
    // client's next turn. Once the session works again, its idle goes out as given.
    let refused = a.send_notification::<V2>(ms(11), update("s", idle("end_turn"))).unwrap_err();
    assert_eq!(refused.error, SendError::WorkAlreadyEnded(SessionId::from("s")));
    assert!(sent(&mut a).is_empty());
    a.send_notification::<V2>(ms(12), update("s", running())).unwrap();
    a.send_notification::<V2>(ms(12), update("s", idle("end_turn"))).unwrap();
    assert_eq!(sent(&mut a)[1]["params"]["update"]["stopReason"], "end_turn");
}

#[test]
fn agent_idle_that_ends_work_needs_a_known_or_custom_stop_reason() {
    let (_, mut a, _) = prompted(true);
    let s = SessionId::from("s");
    let bare = json!({"sessionUpdate": "state_update", "state": "idle"});
    let refused = a.send_notification::<V2>(T0, update("s", bare.clone())).unwrap_err();
    assert_eq!(refused.error, SendError::InvalidStopReason { session: s.clone(), stop_reason: None });
    let refused = a.send_notification::<V2>(T0, update("s", idle("tired"))).unwrap_err();
    let stop_reason = Some("tired".to_owned());
    assert_eq!(refused.error, SendError::InvalidStopReason { session: s, stop_reason });
    assert!(sent(&mut a).is_empty(), "nothing was sent");
    // A custom reason; then, the work over, a bare idle ("ready") is fine.
    a.send_notification::<V2>(T0, update("s", idle("_paused"))).unwrap();
    a.send_notification::<V2>(T0, update("s", bare)).unwrap();
    assert_eq!(sent(&mut a).len(), 2);
}

#[test]
fn client_turn_stamps_updates_and_ends_once_on_idle() {
    let (mut c, _, turn) = prompted(true);
    let lines = [update_line(running()), update_line(chunk("a")), update_line(idle("end_turn"))];
    feed(&mut c, T0, &lines.iter().map(String::as_str).collect::<Vec<_>>());
    feed(&mut c, T0, &[&update_line(chunk("background")), &update_line(idle("end_turn"))]);
    let ev = events(&mut c);
    let (stamps, ends) = stamps(&ev);
    let stamp = |ordinal| Some(TurnStamp { turn, ordinal });
    assert_eq!(stamps, [stamp(0), stamp(1), stamp(2), None, None]);
    assert_eq!(ends, [TurnEndReason::Idle { stop_reason: Some(IdleStopReason::EndTurn) }]);
    // The end comes right after the idle update, after every update before it.
    let end = ev.iter().position(|e| matches!(e, Event::TurnEnded { .. })).unwrap();
    assert!(matches!(&ev[end - 1], Event::NotificationV2 { turn: Some(s), .. } if s.ordinal == 2));
    assert!(matches!(&ev[end], Event::TurnEnded { session, turn: t, .. } if session.0.as_ref() == "s" && *t == turn));
}

#[test]
fn client_second_prompt_joins_the_open_turn() {
    let (mut c, mut a, turn) = prompted(true);
    let s = SessionId::from("s");
    // The opening prompt names the open turn; a joining one does not.
    assert_eq!(c.open_turn(&s), Some(turn));
    let second = c.send_request::<V2>(T0, prompt(), None).expect("a prompt while the turn runs is allowed");
    assert_ne!(second, turn);
    assert_eq!(c.open_turn(&s), Some(turn), "the second prompt joined the turn of the first");
    assert_eq!(a.open_turn(&s), None, "an agent reads no turns");
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    a.respond::<V2>(T0, id, Ok(ack())).unwrap();
    pipe(&mut a, &mut c, T0);
    feed(&mut c, T0, &[&update_line(chunk("x")), &update_line(idle("end_turn"))]);
    let (stamps, ends) = stamps(&events(&mut c));
    assert_eq!(stamps, [Some(TurnStamp { turn, ordinal: 0 }), Some(TurnStamp { turn, ordinal: 1 })]);
    assert_eq!(ends.len(), 1);
    assert_eq!(c.open_turn(&s), None, "the idle closed the turn");
    let third = c.send_request::<V2>(T0, prompt(), None).unwrap();
    assert_eq!(c.open_turn(&s), Some(third), "a prompt after the idle opens a new turn");
}

#[test]
fn client_failed_prompt_ends_its_turn() {
    let (mut c, mut a) = pair_with_session();
    let turn = c.send_request::<V2>(T0, prompt(), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    // The prompt is refused: the turn ends after its outcome.
    a.respond::<V2>(T0, id, Err(RpcError::invalid_params("bad prompt"))).unwrap();
    pipe(&mut a, &mut c, T0);
    let ev = events(&mut c);
    assert!(matches!(&ev[0], Event::Outcome { id, outcome: Outcome::Error(_) } if *id == turn), "{ev:?}");
    assert_eq!(stamps(&ev).1, [TurnEndReason::PromptFailed]);
    feed(&mut c, T0, &[&update_line(chunk("x"))]);
    assert_eq!(stamps(&events(&mut c)).0, [None]);
    // Accepted, then a joining prompt times out: the turn goes on.
    let first = c.send_request::<V2>(T0, prompt(), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    a.respond::<V2>(T0, id, Ok(ack())).unwrap();
    pipe(&mut a, &mut c, T0);
    let second = c.send_request::<V2>(T0, prompt(), Some(ms(5))).unwrap();
    c.handle_timeout(ms(5));
    let ev = events(&mut c);
    assert!(ev.contains(&Event::Outcome { id: second, outcome: Outcome::TimedOut }));
    assert!(stamps(&ev).1.is_empty());
    feed(&mut c, ms(6), &[&update_line(chunk("x"))]);
    assert_eq!(stamps(&events(&mut c)).0, [Some(TurnStamp { turn: first, ordinal: 0 })]);
}

#[test]
fn client_late_prompt_answer_belongs_to_no_turn() {
    // The idle overtakes the first prompt's answer; a second turn opens; the first prompt's
    // failure must not end it.
    let (mut c, mut a) = pair_with_session();
    let first = c.send_request::<V2>(T0, prompt(), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    feed(&mut c, T0, &[&update_line(idle("end_turn"))]);
    let second = c.send_request::<V2>(T0, prompt(), None).unwrap();
    a.respond::<V2>(T0, id, Err(RpcError::invalid_params("late"))).unwrap();
    pipe(&mut a, &mut c, T0);
    let ev = events(&mut c);
    assert_eq!(stamps(&ev).1, [TurnEndReason::Idle { stop_reason: Some(IdleStopReason::EndTurn) }]);
    assert!(ev.iter().any(|e| matches!(e, Event::Outcome { id, .. } if *id == first)));
    feed(&mut c, T0, &[&update_line(chunk("x"))]);
    assert_eq!(stamps(&events(&mut c)).0, [Some(TurnStamp { turn: second, ordinal: 0 })]);
}

#[test]
fn client_close_ends_open_turns() {
    let (mut c, _, turn) = prompted(false);
    c.close(T0);
    let ev = events(&mut c);
    assert_eq!(ev[0], Event::Outcome { id: turn, outcome: Outcome::ConnectionClosed });
    assert!(matches!(&ev[1], Event::TurnEnded { turn: t, reason: TurnEndReason::ConnectionClosed, .. } if *t == turn));
    assert!(matches!(ev[2], Event::Closed { .. }));
    assert_eq!(ev.len(), 3);
}

#[test]
fn client_cancel_answers_asks_and_waits_for_idle() {
    let (mut c, mut a, _) = prompted(true);
    a.send_request::<V2>(T0, ask(), None).unwrap();
    pipe(&mut a, &mut c, T0);
    let (asked, _) = request_v2(events(&mut c));
    assert_eq!(c.cancel_turn(T0, &SessionId::from("s")), Ok(1));
    assert_eq!(events(&mut c), [Event::Cancelled { id: asked, reason: CancelReason::TurnCancelled }]);
    let frames = sent(&mut c);
    assert_eq!(frames[0]["method"], "session/cancel");
    assert_eq!(frames[1]["result"]["outcome"], json!({"outcome": "cancelled"}));
    assert_eq!(c.respond::<V2>(T0, asked, Err(RpcError::internal_error("late"))), Ok(Completion::Discarded));
    // An ask after the cancel, before the idle: answered by the machine.
    let line = json!({"jsonrpc":"2.0","id":40,"method":"session/request_permission","params":
        {"sessionId":"s","title":"t","options":[{"optionId":"y","name":"Y","kind":"allow_once"}]}});
    feed(&mut c, T0, &[&line.to_string()]);
    assert!(events(&mut c).is_empty());
    assert_eq!(sent(&mut c)[0]["result"]["outcome"], json!({"outcome": "cancelled"}));
    // The idle ends the turn; asks are dispatched again.
    feed(&mut c, T0, &[&update_line(idle("cancelled"))]);
    let (_, ends) = stamps(&events(&mut c));
    assert_eq!(ends, [TurnEndReason::Idle { stop_reason: Some(IdleStopReason::Cancelled) }]);
    feed(&mut c, T0, &[&line.to_string().replace("\"id\":40", "\"id\":41")]);
    let (id, _) = request_v2(events(&mut c));
    // An option that was not offered grants nothing.
    let wrong: v2::RequestPermissionResponse = from(json!({"outcome": {"outcome": "selected", "optionId": "n"}}));
    assert!(c.respond::<V2>(T0, id, Ok(wrong.into())).is_err());
    assert_eq!(sent(&mut c)[0]["result"]["outcome"], json!({"outcome": "cancelled"}));
}

/// An ask that arrived while the client's output was full waits deferred, unseen: the
/// cancel answers it `cancelled` and counts it, and it is never handed to the application,
/// not even once the output drained.
#[test]
fn client_cancel_answers_a_deferred_ask_it_never_shows() {
    let (mut c, mut a, _) = prompted(true);
    // The client's output fills (the agent is not reading): a big prompt joining the turn.
    let text = "x".repeat(c.config().outbound_budget);
    let big: v2::PromptRequest = from(json!({"sessionId": "s", "prompt": [{"type": "text", "text": text}]}));
    c.send_request::<V2>(T0, big, None).unwrap();
    assert!(!c.can_send());
    a.send_request::<V2>(T0, ask(), None).unwrap();
    pipe(&mut a, &mut c, T0);
    assert!(events(&mut c).is_empty(), "deferred, not shown");
    assert_eq!(c.cancel_turn(T0, &SessionId::from("s")), Ok(1));
    let frames = sent(&mut c);
    let answer = frames.iter().find(|f| f["id"].is_number() && f.get("result").is_some()).expect("the ask's answer");
    assert_eq!(answer["result"]["outcome"], json!({"outcome": "cancelled"}));
    assert!(events(&mut c).is_empty(), "never shown, not even with the output drained");
}

fn tool(caps: Value, status: Option<&str>) -> String {
    let mut u = json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1"});
    if !caps.is_null() {
        u["capabilities"] = caps;
    }
    if let Some(s) = status {
        u["status"] = json!(s);
    }
    update_line(u)
}

fn cancel_tool(c: &mut Connection, id: &str) -> Result<OutboundId, SendError> {
    let r = v2::CancelToolCallRequest { session_id: "s".into(), tool_call_id: id.into(), meta: None };
    c.send_request::<V2>(T0, r, None).map_err(|r| r.error)
}

#[test]
fn client_tool_call_cancel_needs_the_advertised_capability() {
    let (mut c, _, _) = prompted(true);
    let not = |id: &str| Err(SendError::NotCancellable { id: id.to_owned() });
    assert_eq!(cancel_tool(&mut c, "t1"), not("t1"));
    feed(&mut c, T0, &[&tool(json!({"cancel": {}}), Some("in_progress"))]);
    assert!(cancel_tool(&mut c, "t1").is_ok());
    feed(&mut c, T0, &[&tool(Value::Null, None)]);
    assert!(cancel_tool(&mut c, "t1").is_ok(), "an update without `capabilities` keeps it");
    feed(&mut c, T0, &[&tool(json!({}), None)]);
    assert_eq!(cancel_tool(&mut c, "t1"), not("t1"), "`capabilities` without `cancel` withdraws it");
    feed(&mut c, T0, &[&tool(json!({"cancel": {}}), None), &tool(Value::Null, Some("completed"))]);
    assert_eq!(cancel_tool(&mut c, "t1"), not("t1"), "a final status ends it");
    // The record is bounded: the oldest entry is forgotten.
    let client = v12().with_max_cancellable(1);
    let (mut c, _) = pair_configured(client, v12(), json!({}), json!({"session": {}}), json!([]));
    feed(&mut c, T0, &[&tool(json!({"cancel": {}}), None), &tool(json!({"cancel": {}}), None).replace("t1", "t2")]);
    assert_eq!(cancel_tool(&mut c, "t1"), not("t1"));
    assert!(cancel_tool(&mut c, "t2").is_ok());
    assert!(c.memory_estimate() < 1 << 20);
}

#[test]
fn client_terminal_cancel_needs_the_advertised_capability() {
    let (mut c, _, _) = prompted(true);
    let cancel = |c: &mut Connection| {
        let r = v2::CancelTerminalRequest { session_id: "s".into(), terminal_id: "x".into(), meta: None };
        c.send_request::<V2>(T0, r, None).map_err(|r| r.error)
    };
    let term = |extra: Value| {
        let mut u = json!({"sessionUpdate": "terminal_update", "terminalId": "x"});
        u.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        update_line(u)
    };
    assert!(cancel(&mut c).is_err());
    feed(&mut c, T0, &[&term(json!({"capabilities": {"cancel": {}}}))]);
    assert!(cancel(&mut c).is_ok());
    feed(&mut c, T0, &[&term(json!({"exitStatus": {"exitCode": 0}}))]);
    assert_eq!(cancel(&mut c), Err(SendError::NotCancellable { id: "x".to_owned() }), "an exited terminal");
}

#[test]
fn agent_requests_of_a_session_need_it_announced() {
    let ask = |session: &str| -> v2::RequestPermissionRequest {
        from(json!({"sessionId": session, "title": "go?",
            "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]}))
    };
    let unknown = |s: &str| SendError::UnknownSession(SessionId::from(s));
    let (mut c, mut a) = pair_with_session();
    assert!(a.send_request::<V2>(T0, ask("s"), None).is_ok());
    assert_eq!(a.send_request::<V2>(T0, ask("other"), None).unwrap_err().error, unknown("other"));
    c.send_request::<V2>(T0, v2::CloseSessionRequest::new("s"), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let close = events(&mut a)
        .into_iter()
        .find_map(|e| match e {
            Event::RequestV2 { id, request: v2::Request::Client(ClientRequest::CloseSession(_)) } => Some(id),
            _ => None,
        })
        .expect("the close");
    a.respond::<V2>(T0, close, Ok(v2::CloseSessionResponse::default().into())).unwrap();
    assert_eq!(a.send_request::<V2>(T0, ask("s"), None).unwrap_err().error, unknown("s"), "closed");
    // An elicitation scoped to a session needs it announced; one scoped to a request does not.
    let caps = json!({"elicitation": {"form": {}, "url": {}}});
    let (_, mut fresh) = pair_with(caps, json!({"session": {}}), json!([]));
    let form: v2::CreateElicitationRequest = from(json!({"mode": "form", "message": "m", "sessionId": "x",
        "requestedSchema": {"type": "object", "properties": {}}}));
    assert_eq!(fresh.send_request::<V2>(T0, form, None).unwrap_err().error, unknown("x"));
    let url: v2::CreateElicitationRequest = from(json!({"mode": "url", "message": "m", "requestId": 1,
        "elicitationId": "e", "url": "https://x.y/"}));
    assert!(fresh.send_request::<V2>(T0, url, None).is_ok());
}
