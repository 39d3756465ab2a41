//! The output bound (`Config::outbound_budget`): while the queued output is full the machine
//! takes on no new work, keeps reading what the peer may be waiting for, and resumes once the
//! peer has read. One test per rule of the config's docs.

use super::*;
use crate::connection::{AnyConnection as Connection, AnyEvent as Event, AnyOutcome as Outcome};
use crate::protocol::V1;

/// An agent whose output is filled past a small budget by the application's own updates, with
/// an announced session `s` and a client that advertised `fs.readTextFile`.
fn agent_with_full_output(budget: usize, held: usize) -> Connection {
    let config = Config::default().with_outbound_budget(budget).with_max_held_bytes(held);
    let mut a = ready_agent_with(config, json!({"fs":{"readTextFile":true}}), AgentCapabilities::default());
    feed(&mut a, T0, &[&new_session_line(1)]);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!("no session/new") };
    a.respond::<V1>(T0, id, Ok(NewSessionResponse::new("s").into())).unwrap();
    fill(&mut a);
    a
}

/// Queues updates for session `s` until the budget refuses the next one.
pub(super) fn fill(a: &mut Connection) {
    let update = || {
        let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new("x".repeat(100))));
        SessionNotification::new("s", SessionUpdate::AgentMessageChunk(chunk))
    };
    while a.can_send() {
        a.send_notification::<V1>(T0, update()).unwrap();
    }
    assert!(matches!(
        a.send_notification::<V1>(T0, update()).map_err(SendError::from),
        Err(SendError::Backpressure { .. })
    ));
}

fn ext_request(id: i64) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"_x/work","params":{"n":id}}).to_string()
}

fn prompt_line(id: i64) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}).to_string()
}

#[test]
fn a_full_output_defers_new_requests_until_the_peer_reads() {
    let mut a = agent_with_full_output(2000, 1 << 20);
    feed(&mut a, T0, &[&ext_request(7), &ext_request(8)]);
    assert!(a.poll_any().is_none(), "no new work while the output is full");
    assert_eq!((a.deferred_requests(), a.inbound_in_flight()), (2, 2));
    let stats = a.stats();
    assert_eq!((stats.requests_deferred, stats.output_pauses), (2, 1));
    // The peer reads: the deferred requests come out, in order.
    let _ = a.poll_transmit(&mut Vec::new());
    let ids: Vec<Value> = events(&mut a)
        .into_iter()
        .map(|e| match e {
            Event::Request { request, .. } => serde_json::to_value(&request).unwrap()["n"].clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ids, [json!(7), json!(8)]);
    assert_eq!(a.deferred_requests(), 0);
    // A new pause is counted once more.
    fill(&mut a);
    feed(&mut a, T0, &[&ext_request(9)]);
    assert_eq!(a.stats().output_pauses, 2);
}

#[test]
fn responses_and_notifications_are_read_while_requests_wait() {
    let mut a = agent_with_full_output(2000, 1 << 20);
    // Undo the fill to send a request of our own, then fill again.
    let _ = a.poll_transmit(&mut Vec::new());
    let read = a.send_request::<V1>(T0, ReadTextFileRequest::new("s", "/x"), None).unwrap();
    fill(&mut a);
    let response = json!({"jsonrpc":"2.0","id":read.wire(),"result":{"content":"hi"}}).to_string();
    feed(&mut a, T0, &[&ext_request(7), &response, r#"{"jsonrpc":"2.0","method":"_x/note"}"#]);
    assert!(a.wants_input(), "input never stops on a full output alone");
    let evs = events(&mut a);
    assert!(matches!(evs[0], Event::Outcome { id, outcome: Outcome::Result(_) } if id == read), "{evs:?}");
    assert!(matches!(evs[1], Event::Notification { .. }), "{evs:?}");
    assert_eq!(evs.len(), 2, "the request still waits: {evs:?}");
    assert_eq!(a.deferred_requests(), 1);
}

#[test]
fn cancel_request_answers_a_deferred_request_at_once() {
    let mut a = agent_with_full_output(2000, 1 << 20);
    feed(&mut a, T0, &[&ext_request(7), r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#]);
    assert_eq!((a.deferred_requests(), a.inbound_in_flight()), (0, 0));
    let out = sent(&mut a);
    let last = out.last().unwrap();
    assert_eq!((last["id"].clone(), error_code(last)), (json!(7), -32800));
    assert!(events(&mut a).is_empty(), "the application never hears of it");
    assert_eq!(a.poll_timeout(), None, "no grace timer for a request nobody runs");
}

#[test]
fn session_cancel_answers_a_deferred_prompt_cancelled() {
    let mut a = agent_with_full_output(2000, 1 << 20);
    // A read the application sent for the session before: the deferred prompt's cancel does
    // not touch it (the application never started that turn).
    let _ = a.poll_transmit(&mut Vec::new());
    let read = a.send_request::<V1>(T0, ReadTextFileRequest::new("s", "/x"), None).unwrap();
    fill(&mut a);
    feed(&mut a, T0, &[&prompt_line(7), r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#]);
    let out = sent(&mut a);
    let last = out.last().unwrap();
    assert_eq!(last["id"], 7);
    assert_eq!(last["result"]["stopReason"], "cancelled");
    assert!(events(&mut a).is_empty());
    assert_eq!(a.outbound_pending(), 1, "the read {read:?} is still pending");
    // The session is free for the next turn.
    feed(&mut a, T0, &[&prompt_line(8)]);
    assert!(matches!(a.poll_any(), Some(Event::Request { .. })));
}

#[test]
fn deferral_past_its_bounds_pauses_input_while_nothing_is_awaited() {
    let mut a = agent_with_full_output(2000, 200);
    let big = json!({"jsonrpc":"2.0","id":1000,"method":"_x/work","params":{"pad":"p".repeat(300)}}).to_string();
    let data = format!("{big}\n{}\n", ext_request(11));
    // The big request is deferred (one always is); then input pauses: nothing is refused.
    let n = a.handle_input(T0, data.as_bytes());
    assert_eq!(n, big.len() + 1);
    assert!(!a.wants_input());
    assert_eq!(a.handle_input(T0, &data.as_bytes()[n..]), 0);
    assert!(sent(&mut a).iter().all(|f| f.get("error").is_none()), "nothing refused");
    // The peer read: the deferred request comes out and input resumes.
    assert!(matches!(a.poll_any(), Some(Event::Request { .. })));
    assert!(a.wants_input());
    feed(&mut a, T0, &[&ext_request(11)]);
    assert!(matches!(a.poll_any(), Some(Event::Request { .. })));
    assert_eq!(a.stats().requests_shed, 0);
}

#[test]
fn deferral_past_max_inbound_pauses_input_too() {
    let mut a = agent_with_full_output(2000, 1 << 20);
    let limit = a.config().max_inbound;
    let lines: String = (0..limit as i64 + 5).map(|i| ext_request(10 + i) + "\n").collect();
    let n = a.handle_input(T0, lines.as_bytes());
    assert!(n < lines.len() && !a.wants_input());
    assert_eq!(a.deferred_requests(), limit);
    assert_eq!(a.stats().requests_shed, 0, "paused, not refused");
}

#[test]
fn deferral_past_its_bounds_is_refused_while_an_answer_is_awaited() {
    let mut a = agent_with_full_output(2000, 200);
    // This side awaits the peer's answer to a read: it must read on, whatever comes first.
    let _ = a.poll_transmit(&mut Vec::new());
    let read = a.send_request::<V1>(T0, ReadTextFileRequest::new("s", "/x"), None).unwrap();
    fill(&mut a);
    let big = json!({"jsonrpc":"2.0","id":1000,"method":"_x/work","params":{"pad":"p".repeat(300)}}).to_string();
    // One request is always deferred, whatever its size; the next ones are refused.
    feed(&mut a, T0, &[&big, &ext_request(11), &ext_request(12)]);
    assert_eq!(a.deferred_requests(), 1);
    assert!(a.wants_input());
    let out = sent(&mut a);
    let refused: Vec<(Value, i64, Value)> = out
        .iter()
        .filter(|f| f.get("error").is_some())
        .map(|f| (f["id"].clone(), error_code(f), f["error"]["data"]["reason"].clone()))
        .collect();
    let reason = json!("output queue full");
    assert_eq!(refused, [(json!(11), -32603, reason.clone()), (json!(12), -32603, reason)]);
    assert_eq!(a.stats().requests_shed, 2);
    // The answer behind them got through; the one deferred comes out once the peer read.
    let response = json!({"jsonrpc":"2.0","id":read.wire(),"result":{"content":"hi"}}).to_string();
    feed(&mut a, T0, &[&response]);
    assert!(matches!(a.poll_any(), Some(Event::Outcome { id, .. }) if id == read));
    assert!(matches!(a.poll_any(), Some(Event::Request { .. })));
}

#[test]
fn responses_are_never_refused_over_the_bound() {
    let config = Config::default().with_outbound_budget(2000);
    let mut a = ready_agent_with(config, json!({}), AgentCapabilities::default());
    feed(&mut a, T0, &[&ext_request(1), &ext_request(2)]);
    let evs = events(&mut a);
    for e in evs {
        let Event::Request { id, .. } = e else { panic!() };
        let big = Response::Agent(AgentResponse::Ext(crate::ext::ExtResponse(json!("r".repeat(3000)))));
        assert_eq!(a.respond::<V1>(T0, id, Ok(big)), Ok(Completion::Sent));
    }
    assert!(!a.can_send());
    assert_eq!(sent(&mut a).len(), 2, "each request got its one answer");
}

#[test]
fn close_drops_deferred_requests_without_telling_the_application() {
    let mut a = agent_with_full_output(2000, 1 << 20);
    feed(&mut a, T0, &[&ext_request(7)]);
    a.close(T0);
    let evs = events(&mut a);
    assert_eq!(evs, [Event::Closed { reason: CloseReason::Local }]);
    assert_eq!(a.deferred_requests(), 0);
}

#[test]
fn client_cancel_turn_answers_a_deferred_permission_ask() {
    let config = Config::default().with_outbound_budget(300);
    let mut c = ready_client_with(config, ClientCapabilities::default(), json!({}));
    let prompt =
        c.send_request::<V1>(T0, PromptRequest::new("s", vec![ContentBlock::text("x".repeat(400))]), None).unwrap();
    assert!(!c.can_send(), "the prompt alone fills the output");
    let ask = json!({"jsonrpc":"2.0","id":"p","method":"session/request_permission","params":{
        "sessionId":"s","toolCall":{"toolCallId":"t"},
        "options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}});
    feed(&mut c, T0, &[&ask.to_string()]);
    assert_eq!(c.deferred_requests(), 1);
    assert_eq!(c.cancel_turn(T0, &"s".into()), Ok(1));
    let out = sent(&mut c);
    let answer = out.iter().find(|f| f["id"] == "p").expect("the ask is answered");
    assert_eq!(answer["result"], json!({"outcome":{"outcome":"cancelled"}}));
    assert!(events(&mut c).is_empty(), "the ask was never shown, so nothing to cancel");
    let _ = prompt;
}

/// `has_events` says what `poll_event` would give: nothing while the deferred requests wait
/// on a full output, something as soon as a `poll_transmit` made room (the release happens
/// in `poll_event`, so an adapter that drains the output on another thread must ask).
#[test]
fn has_events_sees_the_deferred_requests_a_drained_output_releases() {
    let mut a = agent_with_full_output(2000, 1 << 20);
    assert!(!a.has_events());
    feed(&mut a, T0, &[&ext_request(7)]);
    assert!(!a.has_events(), "deferred while the output is full");
    assert!(a.poll_any().is_none());
    let _ = a.poll_transmit(&mut Vec::new());
    assert!(a.has_events(), "released by the drained output");
    assert!(matches!(a.poll_any(), Some(Event::Request { .. })));
    assert!(!a.has_events());
    // A queued event (a notification) counts too.
    feed(&mut a, T0, &[r#"{"jsonrpc":"2.0","method":"_x/note"}"#]);
    assert!(a.has_events());
    assert!(matches!(a.poll_any(), Some(Event::Notification { .. })));
    assert!(!a.has_events());
}
