//! JSON-RPC batch arrays on v2 connections: one test per rule of module `connection::batch`.

use crate::protocol::V2;
use serde_json::{Value, json};

use super::v2::{pair_configured, pair_with, v2_init, v12};
use super::{T0, error_code, events, feed, sent};
use crate::connection::{
    AnyConnection as Connection, AnyEvent as Event, AnyOutcome as Outcome, CancelReason, Completion, Config, InboundId,
};
use crate::v2::{self, AgentResponse, ClientRequest};
use crate::{Instant, Side};

/// An agent that negotiated v2 (with `session`), its handshake output drained.
fn agent_with(config: Config) -> Connection {
    let (_, a) = pair_configured(v12(), config, json!({}), json!({"session": {}}), json!([]));
    a
}

fn agent() -> Connection {
    agent_with(v12())
}

/// An extension request (answered by [`echo`]).
fn ext(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "_x/echo", "params": {"n": id}})
}

fn note() -> Value {
    json!({"jsonrpc": "2.0", "method": "_x/note", "params": {}})
}

fn batch(entries: &[Value]) -> String {
    Value::Array(entries.to_vec()).to_string()
}

/// The extension requests among `events`, with the `n` each carries, in order.
fn ext_requests(events: Vec<Event>) -> Vec<(InboundId, i64)> {
    events
        .into_iter()
        .filter_map(|e| match e {
            Event::RequestV2 {
                id,
                request: v2::Request::Client(ClientRequest::Ext(crate::ext::ExtRequest { params: value, .. })),
            } => Some((id, value["n"].as_i64().unwrap_or(-1))),
            _ => None,
        })
        .collect()
}

fn echo(a: &mut Connection, id: InboundId, n: i64) {
    let result = v2::Response::Agent(AgentResponse::Ext(crate::ext::ExtResponse(json!({"n": n}))));
    assert_eq!(a.respond::<V2>(T0, id, Ok(result)), Ok(Completion::Sent));
}

/// The one array frame among `frames`.
fn the_array(frames: &[Value]) -> &Vec<Value> {
    match frames {
        [Value::Array(items)] => items,
        other => panic!("one array frame expected: {other:?}"),
    }
}

#[test]
fn rule1_an_array_before_the_v2_handshake_is_one_invalid_request() {
    let mut a = Connection::new(Side::Agent, v12(), T0);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": v2_init(2, json!({}))});
    feed(&mut a, T0, &[&batch(&[init])]);
    let out = sent(&mut a);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].is_object(), "a single error, not an array: {out:?}");
    assert_eq!((error_code(&out[0]), &out[0]["id"]), (-32600, &Value::Null));
    assert!(events(&mut a).is_empty());
    assert_eq!(a.stats().batches, 0);
}

#[test]
fn rule2_entries_go_through_the_single_frame_pipeline_in_order() {
    let mut a = agent();
    let bad_params = json!({"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": 5}});
    let unknown = json!({"jsonrpc": "2.0", "id": 4, "method": "nope"});
    feed(&mut a, T0, &[&batch(&[ext(1), note(), bad_params, unknown, ext(2)])]);
    let evs = events(&mut a);
    let kinds: Vec<&str> = evs
        .iter()
        .map(|e| match e {
            Event::RequestV2 { .. } => "request",
            Event::NotificationV2 { .. } => "notification",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["request", "notification", "request"]);
    let requests = ext_requests(evs);
    assert_eq!(requests.iter().map(|r| r.1).collect::<Vec<_>>(), [1, 2]);
    for (id, n) in requests {
        echo(&mut a, id, n);
    }
    let out = sent(&mut a);
    let answers = the_array(&out);
    let codes: Vec<(Value, Value)> = answers.iter().map(|r| (r["id"].clone(), r["error"]["code"].clone())).collect();
    assert_eq!(
        codes,
        [(json!(3), json!(-32602)), (json!(4), json!(-32601)), (json!(1), Value::Null), (json!(2), Value::Null)]
    );
}

#[test]
fn rule3_one_answer_array_once_every_request_is_answered() {
    let mut a = agent();
    feed(&mut a, T0, &[&batch(&[ext(1), ext(2), json!({"jsonrpc": "2.0", "id": 3, "method": "nope"})])]);
    let requests = ext_requests(events(&mut a));
    // A request of another frame is answered on its own meanwhile.
    feed(&mut a, T0, &[&ext(7).to_string()]);
    let (single, _) = ext_requests(events(&mut a))[0];
    echo(&mut a, requests[1].0, 2);
    assert!(sent(&mut a).is_empty(), "the batch is not complete");
    echo(&mut a, single, 7);
    let out = sent(&mut a);
    assert_eq!(out, [json!({"jsonrpc": "2.0", "id": 7, "result": {"n": 7}})]);
    echo(&mut a, requests[0].0, 1);
    let out = sent(&mut a);
    let ids: Vec<&Value> = the_array(&out).iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!(3), &json!(2), &json!(1)], "in the order they were produced");
    assert_eq!(a.stats().batches, 1);
}

#[test]
fn rule4_notifications_only_responses_only_and_duplicates_write_nothing() {
    let mut a = agent();
    feed(&mut a, T0, &[&batch(&[note(), note()])]);
    assert_eq!(events(&mut a).len(), 2);
    assert!(sent(&mut a).is_empty());
    // A duplicate of an id in flight is dropped, as a single frame would be.
    feed(&mut a, T0, &[&ext(1).to_string()]);
    let (first, _) = ext_requests(events(&mut a))[0];
    feed(&mut a, T0, &[&batch(&[ext(1), note()])]);
    assert!(ext_requests(events(&mut a)).is_empty());
    assert_eq!(a.stats().duplicate_ids, 1);
    echo(&mut a, first, 1);
    assert_eq!(sent(&mut a), [json!({"jsonrpc": "2.0", "id": 1, "result": {"n": 1}})]);
}

#[test]
fn rule5_an_empty_array_and_broken_json_get_one_error_each() {
    let mut a = agent();
    feed(&mut a, T0, &["[]", " [ ] ", r#"[{"jsonrpc":"2.0","id":1,"method":"_x/echo"},"#]);
    let out = sent(&mut a);
    let got: Vec<(i64, &Value)> = out.iter().map(|f| (error_code(f), &f["id"])).collect();
    assert_eq!(got, [(-32600, &Value::Null), (-32600, &Value::Null), (-32700, &Value::Null)]);
    assert!(events(&mut a).is_empty());
}

#[test]
fn rule6_invalid_entries_get_their_own_invalid_request_in_the_array() {
    let mut a = agent();
    feed(&mut a, T0, &[&batch(&[json!(1), ext(1), json!("x"), json!([]), json!({"jsonrpc": "1.0", "id": 9})])]);
    let requests = ext_requests(events(&mut a));
    assert_eq!(requests.len(), 1);
    echo(&mut a, requests[0].0, 1);
    let out = sent(&mut a);
    let answers = the_array(&out);
    assert_eq!(answers.len(), 5, "{answers:?}");
    for invalid in [&answers[0], &answers[1], &answers[2]] {
        assert_eq!((error_code(invalid), &invalid["id"]), (-32600, &Value::Null));
    }
    // A valid id is echoed, as for a single frame.
    assert_eq!((error_code(&answers[3]), &answers[3]["id"]), (-32600, &json!(9)));
    assert_eq!(answers[4]["result"], json!({"n": 1}));
    assert_eq!(a.stats().malformed_frames, 4);
}

#[test]
fn rule7_a_batch_over_the_entry_limit_is_refused_unread() {
    let mut a = agent_with(v12().with_max_batch_entries(2));
    feed(&mut a, T0, &[&batch(&[ext(1), ext(2), note()])]);
    assert!(events(&mut a).is_empty(), "no entry is read");
    let out = sent(&mut a);
    assert_eq!(out.len(), 1);
    assert!(out[0].is_object());
    assert_eq!((error_code(&out[0]), &out[0]["id"]), (-32600, &Value::Null));
    assert_eq!(out[0]["error"]["data"], json!({"reason": "batch has too many entries", "entries": 3, "limit": 2}));
    // At the limit it is taken.
    feed(&mut a, T0, &[&batch(&[ext(1), ext(2)])]);
    assert_eq!(ext_requests(events(&mut a)).len(), 2);
}

/// A batch whose one request stays open while its refusals (long method names) fill `bytes`.
fn heavy_batch(id: i64, bytes: usize) -> String {
    let name = "n".repeat(bytes / 4);
    let refused = (0..4).map(|i| json!({"jsonrpc": "2.0", "id": 100 + i, "method": name}));
    batch(&std::iter::once(ext(id)).chain(refused).collect::<Vec<_>>())
}

#[test]
fn rule8_held_answers_count_against_the_output_budget() {
    let mut a = agent_with(v12().with_outbound_budget(2000));
    feed(&mut a, T0, &[&heavy_batch(1, 2400)]);
    let (held, _) = ext_requests(events(&mut a))[0];
    assert!(sent(&mut a).is_empty());
    // Awaiting nothing from the peer: input pauses, sends are still taken.
    assert!(!a.wants_input());
    assert!(a.can_send());
    assert_eq!(a.handle_input(T0, b"\n"), 0);
    echo(&mut a, held, 1);
    assert_eq!(the_array(&sent(&mut a)).len(), 5);
    assert!(a.wants_input());

    // Awaiting an answer: input goes on, and a new batch is refused as a whole.
    feed(&mut a, T0, &[&heavy_batch(2, 2400)]);
    let (held, _) = ext_requests(events(&mut a))[0];
    let ask = v2::Request::Agent(v2::AgentRequest::Ext(crate::ext::ExtRequest::new("_x/ask", serde_json::Value::Null)));
    a.send_request::<V2>(T0, ask, None).unwrap();
    let _ = sent(&mut a);
    assert!(a.wants_input());
    feed(&mut a, T0, &[&batch(&[ext(3)])]);
    assert!(ext_requests(events(&mut a)).is_empty());
    let out = sent(&mut a);
    assert_eq!(out.len(), 1);
    assert_eq!((error_code(&out[0]), &out[0]["id"]), (-32603, &Value::Null));
    assert_eq!(out[0]["error"]["data"], json!({"reason": "output queue full", "limit": 2000}));
    echo(&mut a, held, 2);
    assert_eq!(the_array(&sent(&mut a)).len(), 5);
    feed(&mut a, T0, &[&batch(&[ext(3)])]);
    assert_eq!(ext_requests(events(&mut a)).len(), 1, "taken again once the held answers left");
}

#[test]
fn rule9_close_drops_a_partly_answered_batch() {
    let mut a = agent();
    feed(&mut a, T0, &[&batch(&[ext(1), ext(2)])]);
    let requests = ext_requests(events(&mut a));
    echo(&mut a, requests[0].0, 1);
    a.close(T0);
    assert!(sent(&mut a).is_empty(), "the held answer is never written");
    let evs = events(&mut a);
    assert!(
        matches!(
            evs.as_slice(),
            [Event::Cancelled { reason: CancelReason::ConnectionClosed, .. }, Event::Closed { .. }]
        ),
        "{evs:?}"
    );
    let late = v2::Response::Agent(AgentResponse::Ext(crate::ext::ExtResponse(json!({}))));
    assert_eq!(a.respond::<V2>(T0, requests[1].0, Ok(late)), Ok(Completion::Discarded));
    assert!(sent(&mut a).is_empty());
}

#[test]
fn rule10_a_response_batch_is_routed_by_id() {
    let (mut c, _) = pair_with(json!({}), json!({"session": {}}), json!([]));
    let ask =
        |m: &str| v2::Request::Client(ClientRequest::Ext(crate::ext::ExtRequest::new(m, serde_json::Value::Null)));
    let first = c.send_request::<V2>(T0, ask("_x/a"), None).unwrap();
    let second = c.send_request::<V2>(T0, ask("_x/b"), None).unwrap();
    let _ = sent(&mut c);
    let answers = [
        json!({"jsonrpc": "2.0", "id": second.wire(), "result": {"b": 1}}),
        json!({"jsonrpc": "2.0", "id": first.wire(), "error": {"code": -32000, "message": "no"}}),
    ];
    feed(&mut c, T0, &[&batch(&answers)]);
    let evs = events(&mut c);
    match evs.as_slice() {
        [
            Event::Outcome { id: a, outcome: Outcome::ResultV2(_) },
            Event::Outcome { id: b, outcome: Outcome::Error(e) },
        ] => {
            assert_eq!((*a, *b, e.code.0), (second, first, -32000));
        }
        other => panic!("{other:?}"),
    }
    assert!(sent(&mut c).is_empty(), "responses are never answered");
}

#[test]
fn rule11_the_machine_writes_single_frames_beside_an_open_batch() {
    let mut a = agent();
    feed(&mut a, T0, &[&batch(&[ext(1), json!({"jsonrpc": "2.0", "id": 2, "method": "nope"})])]);
    let (held, _) = ext_requests(events(&mut a))[0];
    let ask = v2::Request::Agent(v2::AgentRequest::Ext(crate::ext::ExtRequest::new("_x/ask", serde_json::Value::Null)));
    a.send_request::<V2>(T0, ask, None).unwrap();
    feed(&mut a, T0, &[r#"{"jsonrpc":"2.0","id":5,"method":"nope"}"#]);
    let out = sent(&mut a);
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(out.iter().all(Value::is_object), "{out:?}");
    assert_eq!(out[0]["method"], "_x/ask");
    assert_eq!((error_code(&out[1]), &out[1]["id"]), (-32601, &json!(5)));
    echo(&mut a, held, 1);
    assert_eq!(the_array(&sent(&mut a)).len(), 2);
}

#[test]
fn a_cancel_in_the_batch_answers_a_deferred_sibling_inside_the_array() {
    // A budget of one byte: every request is deferred while anything is queued.
    let mut a = agent_with(v12().with_outbound_budget(1));
    let ask = v2::Request::Agent(v2::AgentRequest::Ext(crate::ext::ExtRequest::new("_x/ask", serde_json::Value::Null)));
    a.send_request::<V2>(T0, ask, None).unwrap();
    let cancel = json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}});
    feed(&mut a, T0, &[&batch(&[ext(1), cancel])]);
    assert_eq!(a.deferred_requests(), 0);
    let out = sent(&mut a);
    assert_eq!(out[0]["method"], "_x/ask");
    let answers = the_array(&out[1..]);
    assert_eq!((error_code(&answers[0]), &answers[0]["id"]), (-32800, &json!(1)));
    assert!(ext_requests(events(&mut a)).is_empty(), "never told to the application");
}

#[test]
fn an_oversized_batch_line_gets_the_single_oversized_error() {
    let mut a = agent_with(v12().with_max_frame_len(160));
    feed(&mut a, T0, &[&batch(&[ext(1), ext(2), ext(3)]), &batch(&[note()])]);
    let out = sent(&mut a);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].is_object());
    assert_eq!((error_code(&out[0]), &out[0]["id"]), (-32600, &Value::Null));
    assert_eq!(a.stats().oversized_frames, 1);
    assert_eq!(events(&mut a).len(), 1, "the short batch after it is read");
}

#[test]
fn a_batch_split_across_reads_is_one_frame() {
    let mut a = agent();
    let line = format!("{}\n", batch(&[ext(1), ext(2)]));
    for chunk in line.as_bytes().chunks(7) {
        assert_eq!(a.handle_input(Instant::from_millis(1), chunk), chunk.len());
    }
    let requests = ext_requests(events(&mut a));
    assert_eq!(requests.len(), 2);
    for (id, n) in requests {
        echo(&mut a, id, n);
    }
    assert_eq!(the_array(&sent(&mut a)).len(), 2);
}

#[test]
fn a_client_answers_a_batch_of_agent_requests_with_one_array() {
    let (mut c, _) = pair_with(json!({}), json!({"session": {}}), json!([]));
    let asks = [ext(1), json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/"}}), ext(3)];
    feed(&mut c, T0, &[&batch(&asks)]);
    let ids: Vec<InboundId> = events(&mut c)
        .into_iter()
        .filter_map(|e| match e {
            Event::RequestV2 { id, request: v2::Request::Agent(v2::AgentRequest::Ext(_)) } => Some(id),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 2);
    for id in ids {
        let result = v2::Response::Client(v2::ClientResponse::Ext(crate::ext::ExtResponse(json!({}))));
        assert_eq!(c.respond::<V2>(T0, id, Ok(result)), Ok(Completion::Sent));
    }
    let out = sent(&mut c);
    let answers = the_array(&out);
    // `session/new` is not a request a client receives.
    assert_eq!((error_code(&answers[0]), &answers[0]["id"]), (-32601, &json!(2)));
    assert_eq!((&answers[1]["id"], &answers[2]["id"]), (&json!(1), &json!(3)));
}
