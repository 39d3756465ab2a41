//! Unit tests of the connection rules, one machine at a time, with hand-written frames.

use crate::protocol::V1;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
// White-box tests of the engine (either version), under the names they were written with; the
// typed `Connection<R, P>` and the `Acceptor` are tested through the public API in the crate's
// integration tests (`acp-proto/tests/`, `acceptor.rs` for the branch point) and doctests.
use super::{AnyConnection as Connection, AnyEvent as Event, AnyOutcome as Outcome};
use crate::Side;
use crate::connection::turns::PermissionAnswer;
use crate::methods::{AgentRequest, AgentResponse, ClientRequest, ClientResponse, Request, Response};
use crate::types::*;
use crate::{ErrorCode, RpcError};

mod content_gate;
mod half_close;
mod output_bound;
mod parked_input;
#[cfg(feature = "unstable_proxy_chains")]
mod proxy_handshake;
#[cfg(feature = "unstable_protocol_v2")]
mod v2;
#[cfg(feature = "unstable_protocol_v2")]
mod v2_batch;
#[cfg(feature = "unstable_protocol_v2")]
mod v2_peer;
#[cfg(feature = "unstable_protocol_v2")]
mod v2_turns;

const T0: Instant = Instant::ZERO;

fn ms(n: u64) -> Instant {
    Instant::from_millis(n)
}

/// Feeds `lines` (each gets a `\n`) completely.
fn feed(c: &mut Connection, now: Instant, lines: &[&str]) {
    let mut data = Vec::new();
    for l in lines {
        data.extend_from_slice(l.as_bytes());
        data.push(b'\n');
    }
    let mut fed = 0;
    while fed < data.len() {
        let n = c.handle_input(now, &data[fed..]);
        assert!(n > 0, "input stalled; drain first");
        fed += n;
    }
}

/// Every frame queued, parsed.
fn sent(c: &mut Connection) -> Vec<Value> {
    let mut buf = Vec::new();
    let _ = c.poll_transmit(&mut buf);
    let text = String::from_utf8(buf).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'));
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn events(c: &mut Connection) -> Vec<Event> {
    std::iter::from_fn(|| c.poll_any()).collect()
}

fn error_code(frame: &Value) -> i64 {
    frame["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {frame}"))
}

fn init_line(id: &str, caps: Value) -> String {
    json!({"jsonrpc":"2.0","id":serde_json::from_str::<Value>(id).unwrap(),"method":"initialize",
           "params":{"protocolVersion":1,"clientCapabilities":caps}})
    .to_string()
}

/// An agent that has completed the handshake with a client advertising `client_caps`, its own
/// capabilities being `agent_caps`.
fn ready_agent_with(config: Config, client_caps: Value, agent_caps: AgentCapabilities) -> Connection {
    let mut a = Connection::new(Side::Agent, config, T0);
    feed(&mut a, T0, &[&init_line("0", client_caps)]);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!("no initialize") };
    let mut resp = InitializeResponse::new(ProtocolVersion::V1);
    resp.agent_capabilities = agent_caps;
    assert_eq!(a.respond::<V1>(T0, id, Ok(resp.into())), Ok(Completion::Sent));
    assert!(matches!(a.poll_any(), Some(Event::HandshakeCompleted(_))));
    assert_eq!(sent(&mut a).len(), 1);
    a
}

fn ready_agent() -> Connection {
    ready_agent_with(Config::default(), json!({}), AgentCapabilities::default())
}

/// A client that has completed the handshake with an agent answering `agent_caps`.
fn ready_client_with(config: Config, client_caps: ClientCapabilities, agent_caps: Value) -> Connection {
    let mut c = Connection::new(Side::Client, config, T0);
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities = client_caps;
    let id = c.send_request::<V1>(T0, init, None).unwrap();
    sent(&mut c);
    let resp = json!({"jsonrpc":"2.0","id":id.wire(),"result":{"protocolVersion":1,"agentCapabilities":agent_caps}});
    feed(&mut c, T0, &[&resp.to_string()]);
    let evs = events(&mut c);
    assert!(matches!(evs[0], Event::HandshakeCompleted(_)), "{evs:?}");
    assert!(matches!(evs[1], Event::Outcome { outcome: Outcome::Result(_), .. }));
    c
}

fn ready_client() -> Connection {
    ready_client_with(Config::default(), ClientCapabilities::default(), json!({}))
}

fn new_session_line(id: i64) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}).to_string()
}

// ---- rule 1: exactly one outcome per accepted outbound request ----------------------------

#[test]
fn response_is_correlated_at_its_exact_id_type() {
    let mut c = ready_client();
    let id = c.send_request::<V1>(ms(1), NewSessionRequest::new("/", vec![]), None).unwrap();
    let frame = &sent(&mut c)[0];
    assert_eq!(frame["id"], json!(id.wire()));
    // A string id "N" is not the integer N: dropped and counted.
    feed(&mut c, ms(2), &[&json!({"jsonrpc":"2.0","id":id.wire().to_string(),"result":{"sessionId":"s"}}).to_string()]);
    assert!(events(&mut c).is_empty());
    assert_eq!(c.stats().late_responses, 1);
    feed(&mut c, ms(3), &[&json!({"jsonrpc":"2.0","id":id.wire(),"result":{"sessionId":"s"}}).to_string()]);
    match &events(&mut c)[..] {
        [Event::Outcome { id: got, outcome: Outcome::Result(Response::Agent(AgentResponse::NewSession(r))) }] => {
            assert_eq!(*got, id);
            assert_eq!(r.session_id.as_str(), "s");
        }
        other => panic!("{other:?}"),
    }
    // A second answer is late.
    feed(&mut c, ms(4), &[&json!({"jsonrpc":"2.0","id":id.wire(),"result":{"sessionId":"s"}}).to_string()]);
    assert!(events(&mut c).is_empty());
    assert_eq!(c.stats().late_responses, 2);
}

#[test]
fn deadline_gives_timed_out_and_a_cancel_request() {
    let mut c = ready_client();
    let id = c.send_request::<V1>(ms(10), NewSessionRequest::new("/", vec![]), Some(ms(110))).unwrap();
    sent(&mut c);
    assert_eq!(c.poll_timeout(), Some(ms(110)));
    c.handle_timeout(ms(109));
    assert!(events(&mut c).is_empty());
    c.handle_timeout(ms(110));
    assert_eq!(events(&mut c), [Event::Outcome { id, outcome: Outcome::TimedOut }]);
    assert_eq!(sent(&mut c), [json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":id.wire()}})]);
    assert_eq!(c.poll_timeout(), None);
    // The late answer is dropped and counted, never delivered.
    feed(&mut c, ms(200), &[&json!({"jsonrpc":"2.0","id":id.wire(),"result":{"sessionId":"s"}}).to_string()]);
    assert!(events(&mut c).is_empty());
    assert_eq!(c.stats().late_responses, 1);
}

#[test]
fn default_request_timeout_applies() {
    let config = Config::default().with_request_timeout(Some(Duration::from_secs(2)));
    let mut c = ready_client_with(config, ClientCapabilities::default(), json!({}));
    c.send_request::<V1>(ms(5), NewSessionRequest::new("/", vec![]), None).unwrap();
    assert_eq!(c.poll_timeout(), Some(ms(2005)));
}

#[test]
fn local_cancel_gives_one_cancelled_outcome() {
    let mut c = ready_client();
    let id = c.send_request::<V1>(ms(1), NewSessionRequest::new("/", vec![]), Some(ms(50))).unwrap();
    sent(&mut c);
    assert!(c.cancel_request(ms(2), id));
    assert!(!c.cancel_request(ms(3), id));
    assert_eq!(events(&mut c), [Event::Outcome { id, outcome: Outcome::Cancelled }]);
    assert_eq!(sent(&mut c)[0]["method"], "$/cancel_request");
    assert_eq!(c.poll_timeout(), None, "the deadline is disarmed");
    feed(&mut c, ms(4), &[&json!({"jsonrpc":"2.0","id":id.wire(),"error":{"code":-32800,"message":"x"}}).to_string()]);
    assert!(events(&mut c).is_empty());
}

#[test]
fn outbound_ids_count_up_from_the_configured_start() {
    let config = Config::default().with_first_outbound_id(40);
    let mut c = ready_client_with(config, ClientCapabilities::default(), json!({}));
    let a = c.send_request::<V1>(T0, NewSessionRequest::new("/", vec![]), None).unwrap();
    let b = c.send_request::<V1>(T0, NewSessionRequest::new("/", vec![]), None).unwrap();
    assert_eq!((a.wire(), b.wire()), (41, 42), "40 went to initialize");
}

#[test]
fn error_and_invalid_results_are_outcomes() {
    let mut c = ready_client();
    let a = c.send_request::<V1>(T0, NewSessionRequest::new("/", vec![]), None).unwrap();
    let b = c.send_request::<V1>(T0, NewSessionRequest::new("/", vec![]), None).unwrap();
    feed(
        &mut c,
        T0,
        &[
            &json!({"jsonrpc":"2.0","id":a.wire(),"error":{"code":-32002,"message":"nope"}}).to_string(),
            &json!({"jsonrpc":"2.0","id":b.wire(),"result":{"noSessionId":1}}).to_string(),
        ],
    );
    match &events(&mut c)[..] {
        [
            Event::Outcome { outcome: Outcome::Error(e), .. },
            Event::Outcome { outcome: Outcome::InvalidResult(_), .. },
        ] => {
            assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND)
        }
        other => panic!("{other:?}"),
    }
}

// ---- rule 2: exactly one response frame per inbound request id ----------------------------

#[test]
fn inbound_checks_run_in_order() {
    let config = Config::default().with_max_inbound(2);
    let mut a = ready_agent_with(config, json!({"fs":{"readTextFile":true}}), AgentCapabilities::default());
    // The agent awaits an answer of the client, so it reads on past `max_inbound` (and refuses)
    // instead of pausing its input there.
    a.send_request::<V1>(T0, ReadTextFileRequest::new("s", "/x"), None).unwrap();
    sent(&mut a);
    // null id
    feed(&mut a, T0, &[r#"{"jsonrpc":"2.0","id":null,"method":"session/new","params":{}}"#]);
    let f = &sent(&mut a)[0];
    assert_eq!((error_code(f), &f["id"]), (-32600, &Value::Null));
    // two in flight, then a duplicate (dropped silently), then one over the limit
    feed(&mut a, T0, &[&new_session_line(1), &new_session_line(2), &new_session_line(1), &new_session_line(3)]);
    let out = sent(&mut a);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!((error_code(&out[0]), &out[0]["id"]), (-32603, &json!(3)));
    assert_eq!(out[0]["error"]["data"], json!({"reason":"too many requests in flight","limit":2}));
    assert_eq!(a.stats().duplicate_ids, 1);
    assert_eq!(a.stats().requests_shed, 1);
    assert_eq!(events(&mut a).len(), 2);
}

#[test]
fn unknown_method_beats_invalid_params() {
    let mut a = ready_agent();
    feed(
        &mut a,
        T0,
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"no/such","params":"garbage"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"mcpServers":[]}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"session/update","params":{}}"#,
        ],
    );
    let out = sent(&mut a);
    let codes: Vec<i64> = out.iter().map(error_code).collect();
    assert_eq!(codes, [-32601, -32601, -32602, -32601]);
    assert_eq!(out[0]["error"]["data"], json!({"method":"no/such"}));
    assert!(out[2]["error"]["data"]["reason"].as_str().unwrap().contains("cwd"), "{}", out[2]);
}

#[test]
fn completing_twice_or_late_is_harmless() {
    let mut a = ready_agent();
    feed(&mut a, T0, &[&new_session_line(7)]);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!() };
    let ok: Response = NewSessionResponse::new("s1").into();
    assert_eq!(a.respond::<V1>(T0, id, Ok(ok.clone())), Ok(Completion::Sent));
    assert_eq!(a.respond::<V1>(T0, id, Ok(ok.clone())), Ok(Completion::Discarded));
    assert_eq!(a.respond::<V1>(T0, InboundId(999), Ok(ok)), Ok(Completion::Discarded));
    assert_eq!(sent(&mut a).len(), 1);
}

#[test]
fn a_result_of_the_wrong_type_is_answered_internal_error() {
    let mut a = ready_agent();
    feed(&mut a, T0, &[&new_session_line(7)]);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!() };
    let wrong: Response = PromptResponse::new(StopReason::EndTurn).into();
    assert!(matches!(a.respond::<V1>(T0, id, Ok(wrong)), Err(RespondError::MismatchedResponse { .. })));
    // The request still gets its one answer: an internal error.
    let out = sent(&mut a);
    assert_eq!((error_code(&out[0]), &out[0]["id"]), (-32603, &json!(7)));
    assert_eq!(a.respond::<V1>(T0, id, Err(RpcError::internal_error("x"))), Ok(Completion::Discarded));
}

#[test]
fn extension_requests_are_dispatched_raw() {
    let mut a = ready_agent();
    feed(&mut a, T0, &[r#"{"jsonrpc":"2.0","id":"e","method":"_test/echo","params":{"x":[1]}}"#]);
    let Some(Event::Request { id, request: Request::Client(ClientRequest::Ext(ext)) }) = a.poll_any() else { panic!() };
    assert_eq!((&*ext.method, &ext.params), ("_test/echo", &json!({"x":[1]})));
    let echo = Response::Agent(AgentResponse::Ext(crate::ext::ExtResponse(ext.params)));
    assert_eq!(a.respond::<V1>(T0, id, Ok(echo)), Ok(Completion::Sent));
    assert_eq!(sent(&mut a), [json!({"jsonrpc":"2.0","id":"e","result":{"x":[1]}})]);
}

/// `Protocol::ext_request`, `ext_notification` and `ext_result` (v1): what they build goes out
/// as the extension frame, comes in as the same message, and a result of the table is handed
/// back.
#[test]
fn the_extension_hooks_build_the_messages_either_side_sends() {
    use crate::Protocol;
    let mut c = ready_client();
    let ask = V1::ext_request(Side::Client, "_x/ask", json!({"a": 1}));
    assert!(c.send_request::<V1>(T0, ask, None).is_ok());
    assert!(c.send_notification::<V1>(T0, V1::ext_notification(Side::Client, "_x/tell", json!([2]))).is_ok());
    let out = sent(&mut c);
    assert_eq!((&out[0]["method"], &out[0]["params"]), (&json!("_x/ask"), &json!({"a": 1})));
    assert_eq!(out[1], json!({"jsonrpc": "2.0", "method": "_x/tell", "params": [2]}));
    feed(&mut c, T0, &[&format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"b":3}}}}"#, out[0]["id"])]);
    let Some(Event::Outcome { outcome: Outcome::Result(result), .. }) = c.poll_any() else { panic!("an outcome") };
    assert_eq!(V1::ext_result(result), Ok(json!({"b": 3})));
    let table: Response = PromptResponse::new(StopReason::EndTurn).into();
    assert_eq!(V1::ext_result(table.clone()), Err(table));

    let mut a = ready_agent();
    feed(&mut a, T0, &[r#"{"jsonrpc":"2.0","id":9,"method":"_x/ask","params":{"a":1}}"#]);
    let Some(Event::Request { request, .. }) = a.poll_any() else { panic!("a request") };
    assert_eq!(request, V1::ext_request(Side::Client, "_x/ask", json!({"a": 1})));
    assert!(a.send_request::<V1>(T0, V1::ext_request(Side::Agent, "_x/back", json!(null)), None).is_ok());
    let out = sent(&mut a);
    assert_eq!(out[0]["method"], json!("_x/back"));
}

// ---- rule 3: $/cancel_request both directions ----------------------------------------------

#[test]
fn peer_cancel_request_then_handler_result() {
    let mut a = ready_agent();
    feed(
        &mut a,
        T0,
        &[&new_session_line(5), r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}"#],
    );
    let evs = events(&mut a);
    let Event::Request { id, .. } = evs[0] else { panic!() };
    assert_eq!(evs[1], Event::Cancelled { id, reason: CancelReason::CancelRequest });
    assert_eq!(a.poll_timeout(), Some(T0 + a.config().cancel_grace));
    assert_eq!(a.respond::<V1>(ms(1), id, Ok(NewSessionResponse::new("s").into())), Ok(Completion::Sent));
    assert_eq!(sent(&mut a)[0]["result"]["sessionId"], "s");
    assert_eq!(a.poll_timeout(), None);
}

#[test]
fn peer_cancel_request_grace_expires_into_32800() {
    let mut a = ready_agent();
    feed(
        &mut a,
        T0,
        &[&new_session_line(5), r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}"#],
    );
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!() };
    let grace = a.poll_timeout().unwrap();
    a.handle_timeout(grace);
    let out = sent(&mut a);
    assert_eq!((error_code(&out[0]), &out[0]["id"]), (-32800, &json!(5)));
    assert_eq!(a.respond::<V1>(grace, id, Ok(NewSessionResponse::new("s").into())), Ok(Completion::Discarded));
    assert!(sent(&mut a).is_empty());
}

#[test]
fn cancel_request_for_unknown_ids_is_ignored_in_every_phase() {
    let mut a = Connection::agent(T0);
    feed(&mut a, T0, &[r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"nope"}}"#]);
    assert!(sent(&mut a).is_empty() && events(&mut a).is_empty());
    let mut a = ready_agent();
    feed(&mut a, T0, &[r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":99}}"#]);
    assert!(sent(&mut a).is_empty() && events(&mut a).is_empty());
}

// ---- rule 4: the handshake -------------------------------------------------------------------

#[test]
fn requests_before_initialize_are_refused_and_notifications_dropped() {
    let mut a = Connection::agent(T0);
    feed(
        &mut a,
        T0,
        &[&new_session_line(1), r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#],
    );
    let out = sent(&mut a);
    assert_eq!(out.len(), 1);
    assert_eq!(error_code(&out[0]), -32600);
    assert_eq!(out[0]["error"]["data"]["reason"], "initialize required");
    assert_eq!(a.stats().notifications_dropped, 1);
    assert!(events(&mut a).is_empty());
}

#[test]
fn pipelined_requests_are_held_until_initialize_succeeds() {
    let mut a = Connection::agent(T0);
    feed(&mut a, T0, &[&init_line("0", json!({})), &new_session_line(1), &new_session_line(2)]);
    let evs = events(&mut a);
    assert_eq!(evs.len(), 1, "only initialize is dispatched: {evs:?}");
    let Event::Request { id, .. } = evs[0] else { panic!() };
    assert!(sent(&mut a).is_empty());
    a.respond::<V1>(T0, id, Ok(InitializeResponse::new(ProtocolVersion::V1).into())).unwrap();
    let evs = events(&mut a);
    assert!(matches!(evs[0], Event::HandshakeCompleted(_)));
    let dispatched: Vec<u64> = evs[1..]
        .iter()
        .map(|e| match e {
            Event::Request { id, request } => {
                assert_eq!(request.method(), Some(Method::NewSession));
                id.seq()
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(dispatched, [1, 2], "in order");
    assert_eq!(sent(&mut a).len(), 1, "only the initialize response so far");
}

#[test]
fn held_requests_are_refused_when_initialize_fails() {
    let mut a = Connection::agent(T0);
    feed(&mut a, T0, &[&init_line("\"i\"", json!({})), &new_session_line(1)]);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!() };
    a.respond::<V1>(T0, id, Err(RpcError::auth_required())).unwrap();
    let out = sent(&mut a);
    assert_eq!(error_code(&out[0]), -32000);
    assert_eq!((error_code(&out[1]), &out[1]["id"]), (-32600, &json!(1)));
    assert!(!a.is_ready());
    // A retry may succeed.
    feed(&mut a, T0, &[&init_line("\"j\"", json!({}))]);
    assert!(matches!(a.poll_any(), Some(Event::Request { .. })));
}

#[test]
fn second_initialize_is_refused() {
    let mut a = ready_agent();
    feed(&mut a, T0, &[&init_line("9", json!({}))]);
    let out = sent(&mut a);
    assert_eq!(error_code(&out[0]), -32600);
    assert_eq!(out[0]["error"]["data"]["reason"], "already initialized");
}

#[test]
fn client_sends_nothing_before_the_handshake() {
    let mut c = Connection::client(T0);
    assert_eq!(
        c.send_request::<V1>(T0, NewSessionRequest::new("/", vec![]), None).map_err(SendError::from),
        Err(SendError::NotInitialized)
    );
    c.send_request::<V1>(T0, InitializeRequest::new(ProtocolVersion::V1), None).unwrap();
    assert_eq!(
        c.send_request::<V1>(T0, InitializeRequest::new(ProtocolVersion::V1), None).map_err(SendError::from),
        Err(SendError::AlreadyInitialized)
    );
    assert_eq!(
        c.send_request::<V1>(T0, NewSessionRequest::new("/", vec![]), None).map_err(SendError::from),
        Err(SendError::NotInitialized)
    );
}

#[test]
fn client_closes_on_an_unsupported_protocol_version() {
    let mut c = Connection::client(T0);
    let id = c.send_request::<V1>(T0, InitializeRequest::new(ProtocolVersion::V1), None).unwrap();
    feed(&mut c, T0, &[&json!({"jsonrpc":"2.0","id":id.wire(),"result":{"protocolVersion":7}}).to_string()]);
    let evs = events(&mut c);
    assert!(matches!(evs[0], Event::Outcome { outcome: Outcome::Result(_), .. }));
    assert_eq!(
        evs[1],
        Event::Closed { reason: CloseReason::UnsupportedProtocolVersion { version: ProtocolVersion(7) } }
    );
    assert!(c.is_closed());
}

// ---- rule 5: capabilities, fail closed, both directions --------------------------------------

#[test]
fn inbound_gated_methods_need_own_capabilities() {
    let mut a = ready_agent();
    feed(
        &mut a,
        T0,
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s","cwd":"/","mcpServers":[]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"logout"}"#,
        ],
    );
    let out = sent(&mut a);
    assert_eq!(out.iter().map(error_code).collect::<Vec<_>>(), [-32601, -32601, -32601]);
    assert!(out[0]["error"]["data"]["reason"].as_str().unwrap().contains("loadSession"));
    let caps = AgentCapabilities { load_session: true, ..Default::default() };
    let mut a = ready_agent_with(Config::default(), json!({}), caps);
    feed(
        &mut a,
        T0,
        &[r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s","cwd":"/","mcpServers":[]}}"#],
    );
    assert!(matches!(a.poll_any(), Some(Event::Request { .. })));
}

#[test]
fn outbound_requests_the_peer_did_not_advertise_are_refused_locally() {
    let mut a = ready_agent_with(Config::default(), json!({"fs":{"readTextFile":true}}), AgentCapabilities::default());
    feed(&mut a, T0, &[&new_session_line(1)]);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!() };
    a.respond::<V1>(T0, id, Ok(NewSessionResponse::new("s").into())).unwrap();
    sent(&mut a);
    assert!(a.send_request::<V1>(T0, ReadTextFileRequest::new("s", "/etc/hosts"), None).is_ok());
    let write = WriteTextFileRequest::new("s", "/x", "y");
    assert!(matches!(
        a.send_request::<V1>(T0, write, None).map_err(SendError::from),
        Err(SendError::NotSupportedByPeer { method: "fs/write_text_file", capability: ["fs", "writeTextFile"] })
    ));
    assert!(matches!(
        a.send_request::<V1>(T0, CreateTerminalRequest::new("s", "ls"), None).map_err(SendError::from),
        Err(SendError::NotSupportedByPeer { capability: ["terminal"], .. })
    ));
    assert_eq!(sent(&mut a).len(), 1, "only the read went out");
    let mut c = ready_client();
    let load = LoadSessionRequest::new("s", "/", vec![]);
    assert!(matches!(
        c.send_request::<V1>(T0, load, None).map_err(SendError::from),
        Err(SendError::NotSupportedByPeer { .. })
    ));
}

#[test]
fn bad_extension_names_are_refused() {
    // A message of the other side does not compile (`Connection<R, P>`, module `role`'s
    // `compile_fail` examples); the engine below it only asserts its side in debug builds.
    let mut a = ready_agent();
    let bad = AgentRequest::Ext(crate::ext::ExtRequest::new("vendor/x", Value::Null));
    assert!(matches!(
        a.send_request::<V1>(T0, bad, None).map_err(SendError::from),
        Err(SendError::InvalidExtensionName { .. })
    ));
    let ok = AgentRequest::Ext(crate::ext::ExtRequest::new("_vendor/x", Value::Null));
    assert!(a.send_request::<V1>(T0, ok, None).is_ok());
    assert_eq!(sent(&mut a), [json!({"jsonrpc":"2.0","id":1,"method":"_vendor/x"})]);
}

// ---- rule 6: bounded resources ----------------------------------------------------------------

#[test]
fn a_flood_of_frames_stays_within_fixed_bounds() {
    let config = Config::default().with_max_frame_len(4096);
    let mut a = ready_agent_with(config, json!({"fs":{"readTextFile":true}}), AgentCapabilities::default());
    // Awaiting an answer of its own, the agent reads on at `max_inbound` and refuses (without
    // one it would pause its input there: `tests/output_bound.rs`).
    a.send_request::<V1>(T0, ReadTextFileRequest::new("s", "/x"), None).unwrap();
    let garbage = "x".repeat(100);
    let oversize = "y".repeat(10_000);
    let mut peak = 0;
    let mut buf = Vec::new();
    for i in 0..100_000u64 {
        let line = match i % 5 {
            0 => new_session_line(i as i64),
            1 => garbage.clone(),
            2 => json!({"jsonrpc":"2.0","method":"_x/note","params":{"i":i}}).to_string(),
            3 => oversize.clone(),
            _ => json!({"jsonrpc":"2.0","id":i,"result":{}}).to_string(),
        };
        let data = format!("{line}\n");
        let mut fed = 0;
        while fed < data.len() {
            fed += a.handle_input(T0, &data.as_bytes()[fed..]);
            peak = peak.max(a.memory_estimate());
            // The application answers nothing and drains lazily: only every 1000 frames.
            if i % 1000 == 0 || !a.wants_input() {
                buf.clear();
                let _ = a.poll_transmit(&mut buf);
                while a.poll_any().is_some() {}
            }
        }
    }
    assert_eq!(a.inbound_in_flight(), 1000, "requests beyond max_inbound were shed");
    assert!(a.stats().requests_shed > 0);
    assert!(peak < 4 << 20, "peak memory estimate {peak}");
}

#[test]
fn input_pauses_while_events_are_not_drained() {
    let config = Config::default().with_max_events(3);
    let mut c = ready_client_with(config, ClientCapabilities::default(), json!({}));
    let line = "{\"jsonrpc\":\"2.0\",\"method\":\"_x\"}\n".repeat(10);
    let n = c.handle_input(T0, line.as_bytes());
    assert_eq!(n, line.len() / 10 * 3, "stopped after three events");
    assert!(!c.wants_input());
    assert_eq!(c.handle_input(T0, &line.as_bytes()[n..]), 0);
    while c.poll_any().is_some() {}
    assert!(c.wants_input());
}

#[test]
fn the_applications_full_output_never_stops_input() {
    let config = Config::default().with_outbound_budget(2000);
    let mut a = ready_agent_with(config, json!({}), AgentCapabilities::default());
    feed(&mut a, T0, &[&new_session_line(1)]);
    let Some(Event::Request { id, .. }) = a.poll_any() else { panic!() };
    a.respond::<V1>(T0, id, Ok(NewSessionResponse::new("s").into())).unwrap();
    // The application fills its output past the budget (the peer is not reading)...
    output_bound::fill(&mut a);
    // ...which never stops input: both peers doing that would deadlock. (A request read now
    // is deferred until the output drains: see `tests/output_bound.rs`; the machine's own
    // answers park what owes an answer once they fill the budget: `tests/parked_input.rs`.)
    assert!(a.wants_input());
    feed(&mut a, T0, &[&new_session_line(2)]);
    assert_eq!(a.deferred_requests(), 1);
}

// ---- rule 7: bad input never kills the connection; close ----------------------------------

#[test]
fn garbage_gets_errors_and_the_connection_lives() {
    let mut a = ready_agent();
    feed(&mut a, T0, &["not json", "[]", "42", r#"{"jsonrpc":"2.0"}"#, "", "\r", &new_session_line(1)]);
    let out = sent(&mut a);
    assert_eq!(out.iter().map(error_code).collect::<Vec<_>>(), [-32700, -32600, -32600, -32600]);
    assert!(out.iter().all(|f| f["id"].is_null()));
    assert!(matches!(a.poll_any(), Some(Event::Request { .. })));
    assert_eq!(a.stats().malformed_frames, 4);
    assert!(!a.is_closed());
}

/// v1 has no batches (v2's are in `v2_batch.rs`): an array of requests is one `-32600` with
/// `id: null` and nothing is dispatched, with or without feature `unstable_protocol_v2`.
#[test]
fn a_v1_connection_answers_an_array_with_one_invalid_request() {
    let mut a = ready_agent();
    let note = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#;
    feed(&mut a, T0, &[&format!("[{},{note}]", new_session_line(1)), &format!(" [{note}]")]);
    let out = sent(&mut a);
    assert_eq!(out.len(), 2, "{out:?}");
    for frame in &out {
        assert!(frame.is_object(), "a single error, not an array: {frame}");
        assert_eq!((error_code(frame), &frame["id"]), (-32600, &Value::Null));
    }
    assert!(events(&mut a).is_empty());
    assert_eq!(a.stats().malformed_frames, 2);
    assert_eq!(a.stats().batches, 0);
}

#[test]
fn invalid_utf8_and_oversize_are_answered() {
    let config = Config::default().with_max_frame_len(200);
    let mut a = ready_agent_with(config, json!({}), AgentCapabilities::default());
    let _ = a.handle_input(T0, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\x28\"}\n");
    let _ = a.handle_input(T0, format!("{}\n", "z".repeat(300)).as_bytes());
    let out = sent(&mut a);
    assert_eq!(error_code(&out[0]), -32700);
    assert_eq!(error_code(&out[1]), -32600);
    assert_eq!(out[1]["error"]["data"]["limit"], 200);
    assert_eq!(a.stats().oversized_frames, 1);
}

#[test]
fn close_resolves_everything_once() {
    let mut a = ready_agent_with(Config::default(), json!({"fs":{"readTextFile":true}}), AgentCapabilities::default());
    feed(&mut a, T0, &[&new_session_line(1), &new_session_line(2)]);
    let evs = events(&mut a);
    let Event::Request { id: first, .. } = evs[0] else { panic!() };
    a.respond::<V1>(T0, first, Ok(NewSessionResponse::new("s").into())).unwrap();
    let out_id = a.send_request::<V1>(T0, ReadTextFileRequest::new("s", "/a"), Some(ms(100))).unwrap();
    a.close(ms(1));
    let evs = events(&mut a);
    assert_eq!(
        evs,
        [
            Event::Outcome { id: out_id, outcome: Outcome::ConnectionClosed },
            Event::Cancelled { id: InboundId(2), reason: CancelReason::ConnectionClosed },
            Event::Closed { reason: CloseReason::Local },
        ]
    );
    assert_eq!(sent(&mut a).len(), 2, "queued frames are still flushed");
    a.close(ms(2));
    a.handle_eof(ms(2));
    feed(&mut a, ms(3), &[&new_session_line(9)]);
    assert!(events(&mut a).is_empty(), "Closed is emitted once and nothing follows");
    assert_eq!(a.poll_timeout(), None);
    assert_eq!(
        a.send_request::<V1>(ms(3), ReadTextFileRequest::new("s", "/a"), None).map_err(SendError::from),
        Err(SendError::Closed)
    );
    assert_eq!(a.respond::<V1>(ms(3), InboundId(2), Err(RpcError::internal_error("late"))), Ok(Completion::Discarded));
}

// ---- rule 8: determinism -------------------------------------------------------------------

#[test]
fn the_same_inputs_give_the_same_outputs() {
    fn script() -> (Vec<u8>, String) {
        let mut a = ready_agent_with(Config::default(), json!({"terminal":true}), AgentCapabilities::default());
        let mut out = Vec::new();
        let mut log = String::new();
        feed(&mut a, ms(1), &[&new_session_line(1), &new_session_line(2), "junk", &new_session_line(3)]);
        let mut ids = Vec::new();
        while let Some(e) = a.poll_any() {
            log.push_str(&format!("{e:?}\n"));
            if let Event::Request { id, .. } = e {
                ids.push(id);
            }
        }
        for (i, id) in ids.iter().rev().enumerate() {
            let r = NewSessionResponse::new(format!("s{i}"));
            a.respond::<V1>(ms(2), *id, Ok(r.into())).unwrap();
        }
        a.send_request::<V1>(ms(3), CreateTerminalRequest::new("s0", "ls"), Some(ms(9))).unwrap();
        a.handle_timeout(ms(9));
        while let Some(e) = a.poll_any() {
            log.push_str(&format!("{e:?}\n"));
        }
        let _ = a.poll_transmit(&mut out);
        (out, log)
    }
    assert_eq!(script(), script());
}

// ---- client permission answers ----------------------------------------------------------------

#[test]
fn permission_answers_must_name_an_offered_option() {
    let mut c = ready_client();
    feed(
        &mut c,
        T0,
        &[&json!({"jsonrpc":"2.0","id":"p","method":"session/request_permission","params":{
        "sessionId":"s","toolCall":{"toolCallId":"t"},
        "options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}})
        .to_string()],
    );
    let Some(Event::Request { id, .. }) = c.poll_any() else { panic!() };
    assert_eq!(
        c.answer_permission(T0, id, PermissionAnswer::Selected("other".into())),
        Err(RespondError::UnknownPermissionOption("other".into()))
    );
    // Fail closed: the ask is answered `cancelled`, which grants nothing.
    let out = sent(&mut c);
    assert_eq!(out[0]["result"], json!({"outcome":{"outcome":"cancelled"}}));
    assert_eq!(c.answer_permission(T0, id, PermissionAnswer::Selected("allow".into())), Ok(Completion::Discarded));
    // A second ask, answered with an offered option.
    feed(
        &mut c,
        T0,
        &[&json!({"jsonrpc":"2.0","id":"q","method":"session/request_permission","params":{
        "sessionId":"s","toolCall":{"toolCallId":"t"},
        "options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}})
        .to_string()],
    );
    let Some(Event::Request { id, .. }) = c.poll_any() else { panic!() };
    assert_eq!(c.answer_permission(T0, id, PermissionAnswer::Selected("allow".into())), Ok(Completion::Sent));
    let out = sent(&mut c);
    assert_eq!(out[0]["result"], json!({"outcome":{"outcome":"selected","optionId":"allow"}}));
    let _ = ClientResponse::decode_result; // the client's results are typed by the table
}
