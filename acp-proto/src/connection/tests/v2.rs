//! ACP v2 through the connection: negotiation, the gates, and the v1 machinery on v2. The turn
//! rules are in `v2_turns.rs`. Two machines are wired together by moving their output.

use crate::protocol::{V1, V2};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{T0, events, feed, ms, sent};
use crate::connection::{
    AnyConnection as Connection, AnyEvent as Event, AnyOutcome as Outcome, CloseReason, Completion, Config, InboundId,
    SendError,
};
use crate::types::ProtocolVersion;
use crate::v2::{self, AgentResponse, ClientRequest};
use crate::{RpcError, Side};

pub(super) fn from<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

pub(super) fn v12() -> Config {
    Config::default().with_supported_versions(vec![ProtocolVersion::V1, ProtocolVersion::V2])
}

pub(super) fn v2_init(version: u16, caps: Value) -> v2::InitializeRequest {
    from(json!({"protocolVersion": version, "info": {"name": "client", "version": "1"}, "capabilities": caps}))
}

pub(super) fn v2_init_result(caps: Value, auth: Value) -> v2::InitializeResponse {
    from(
        json!({"protocolVersion": 2, "info": {"name": "agent", "version": "1"}, "capabilities": caps, "authMethods": auth}),
    )
}

/// Moves everything `from` queued into `to`.
pub(super) fn pipe(from: &mut Connection, to: &mut Connection, now: crate::Instant) {
    let mut buf = Vec::new();
    let _ = from.poll_transmit(&mut buf);
    let mut fed = 0;
    while fed < buf.len() {
        let n = to.handle_input(now, &buf[fed..]);
        assert!(n > 0, "input stalled");
        fed += n;
    }
}

/// The one inbound v2 request among `events`.
pub(super) fn request_v2(events: Vec<Event>) -> (InboundId, v2::Request) {
    let mut found = events.into_iter().filter_map(|e| match e {
        Event::RequestV2 { id, request } => Some((id, request)),
        _ => None,
    });
    let first = found.next().expect("a v2 request");
    assert!(found.next().is_none(), "one v2 request");
    first
}

/// A client and an agent that negotiated v2 with these capabilities and auth methods.
pub(super) fn pair_with(client_caps: Value, agent_caps: Value, auth: Value) -> (Connection, Connection) {
    pair_configured(v12(), v12(), client_caps, agent_caps, auth)
}

/// [`pair_with`], with each side's config.
pub(super) fn pair_configured(
    client: Config,
    agent: Config,
    client_caps: Value,
    agent_caps: Value,
    auth: Value,
) -> (Connection, Connection) {
    let mut c = Connection::new(Side::Client, client, T0);
    let mut a = Connection::new(Side::Agent, agent, T0);
    c.send_request::<V2>(T0, v2_init(2, client_caps), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, request) = request_v2(events(&mut a));
    assert!(matches!(request, v2::Request::Client(ClientRequest::Initialize(_))));
    assert_eq!(a.respond::<V2>(T0, id, Ok(v2_init_result(agent_caps, auth).into())), Ok(Completion::Sent));
    assert!(matches!(events(&mut a).as_slice(), [Event::HandshakeCompleted(n)] if n.protocol_version.0 == 2));
    pipe(&mut a, &mut c, T0);
    let ev = events(&mut c);
    assert!(matches!(&ev[0], Event::HandshakeCompleted(n) if n.protocol_version.0 == 2), "{ev:?}");
    assert!(matches!(&ev[1], Event::Outcome { outcome: Outcome::ResultV2(_), .. }), "{ev:?}");
    (c, a)
}

/// A v2 pair whose agent announced session `s` (the agent advertises `session`).
pub(super) fn pair_with_session() -> (Connection, Connection) {
    let (mut c, mut a) = pair_with(json!({}), json!({"session": {}}), json!([]));
    let new: v2::NewSessionRequest = from(json!({"cwd": "/w"}));
    c.send_request::<V2>(T0, new, None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    let result: v2::NewSessionResponse = from(json!({"sessionId": "s"}));
    assert_eq!(a.respond::<V2>(T0, id, Ok(result.into())), Ok(Completion::Sent));
    pipe(&mut a, &mut c, T0);
    assert!(matches!(events(&mut c).as_slice(), [Event::Outcome { outcome: Outcome::ResultV2(_), .. }]));
    (c, a)
}

#[test]
fn negotiation_v2_client_with_v2_agent() {
    let (c, a) = pair_with(json!({"elicitation": {}}), json!({"session": {}}), json!([]));
    for side in [&c, &a] {
        let n = side.negotiated().unwrap();
        assert_eq!(n.protocol_version, ProtocolVersion::V2);
    }
    assert_eq!(c.negotiated().unwrap().own.json()["elicitation"], json!({}));
    assert_eq!(a.negotiated().unwrap().peer.json()["elicitation"], json!({}));
    assert_eq!(c.negotiated().unwrap().peer.json()["session"], json!({}));
}

#[test]
fn negotiation_agent_asked_for_a_later_version_answers_2() {
    let mut a = Connection::new(Side::Agent, v12(), T0);
    let line = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":
        {"protocolVersion":3,"info":{"name":"c","version":"1"},"capabilities":{}}});
    feed(&mut a, T0, &[&line.to_string()]);
    let (id, _) = request_v2(events(&mut a));
    let mut result = v2_init_result(json!({}), json!([]));
    result.protocol_version = ProtocolVersion(7);
    a.respond::<V2>(T0, id, Ok(result.into())).unwrap();
    assert_eq!(sent(&mut a)[0]["result"]["protocolVersion"], 2, "the machine writes the negotiated version");
    assert_eq!(a.negotiated().unwrap().protocol_version, ProtocolVersion::V2);
}

#[test]
fn negotiation_v2_client_with_v1_only_agent() {
    let mut c = Connection::new(Side::Client, v12(), T0);
    let mut a = Connection::agent(T0);
    c.send_request::<V2>(T0, v2_init(2, json!({"elicitation": {}})), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let ev = events(&mut a);
    let Some(Event::Request { id, request }) = ev.into_iter().next() else { panic!("a v1 request") };
    let crate::Request::Client(crate::ClientRequest::Initialize(init)) = request else { panic!("initialize") };
    assert_eq!(init.protocol_version, ProtocolVersion::V2, "the v1 agent sees what was asked");
    let mut result = crate::types::InitializeResponse::new(ProtocolVersion::V1);
    result.agent_capabilities.load_session = true;
    a.respond::<V1>(T0, id, Ok(result.into())).unwrap();
    pipe(&mut a, &mut c, T0);
    let ev = events(&mut c);
    let Event::HandshakeCompleted(n) = &ev[0] else { panic!("{ev:?}") };
    assert_eq!(n.protocol_version, ProtocolVersion::V1);
    assert_eq!(n.own, crate::gate::CapabilitySnapshot::from_typed(&crate::types::ClientCapabilities::default()));
    assert!(matches!(&ev[1], Event::Outcome { outcome: Outcome::Result(_), .. }));
    // The connection speaks v1 now: v1 sends go, v2 sends are refused.
    let prompt: v2::PromptRequest = from(json!({"sessionId": "s", "prompt": []}));
    let refused = c.send_request::<V2>(T0, prompt, None).unwrap_err();
    assert_eq!(refused.error, SendError::WrongProtocolVersion { speaks: Some(ProtocolVersion::V1) });
    let new = crate::types::NewSessionRequest::new("/w", vec![]);
    assert!(c.send_request::<V1>(T0, new, None).is_ok());
    // The agent's v1 fs requests meet the client's (empty) v1 capabilities.
    let read = json!({"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}});
    feed(&mut c, T0, &[&read.to_string()]);
    assert_eq!(sent(&mut c).last().unwrap()["error"]["code"], -32601);
}

#[test]
fn negotiation_v1_client_with_v2_agent() {
    let mut c = Connection::client(T0);
    let mut a = Connection::new(Side::Agent, v12(), T0);
    c.send_request::<V1>(T0, crate::types::InitializeRequest::new(ProtocolVersion::V1), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let ev = events(&mut a);
    let [Event::Request { id, .. }] = ev.as_slice() else { panic!("a v1 request: {ev:?}") };
    a.respond::<V1>(T0, *id, Ok(crate::types::InitializeResponse::new(ProtocolVersion::V1).into())).unwrap();
    pipe(&mut a, &mut c, T0);
    assert!(matches!(events(&mut c).as_slice(), [Event::HandshakeCompleted(n), _] if n.protocol_version.0 == 1));
    assert_eq!(a.negotiated().unwrap().protocol_version, ProtocolVersion::V1);
    // A v1 `initialize` offering 2 is refused: 2 is offered with a v2 `initialize` (`send_request::<V2>`).
    let mut other = Connection::new(Side::Client, v12(), T0);
    let refused = other.send_request::<V1>(T0, crate::types::InitializeRequest::new(ProtocolVersion::V2), None);
    assert_eq!(refused.unwrap_err().error, SendError::WrongProtocolVersion { speaks: None });
}

#[test]
fn negotiation_client_answered_3_closes() {
    for (config, answered) in [(v12(), 3), (Config::default().with_supported_versions(vec![ProtocolVersion::V2]), 1)] {
        let mut c = Connection::new(Side::Client, config, T0);
        let id = c.send_request::<V2>(T0, v2_init(2, json!({})), None).unwrap();
        let _ = sent(&mut c);
        let line = json!({"jsonrpc":"2.0","id":id.wire(),"result":
            {"protocolVersion":answered,"info":{"name":"a","version":"1"},"agentCapabilities":{}}});
        feed(&mut c, T0, &[&line.to_string()]);
        let ev = events(&mut c);
        assert!(matches!(&ev[0], Event::Outcome { outcome: Outcome::InvalidResult(_), .. }), "{ev:?}");
        let version = ProtocolVersion(answered);
        assert_eq!(ev.last(), Some(&Event::Closed { reason: CloseReason::UnsupportedProtocolVersion { version } }));
    }
}

#[test]
fn versions_do_not_mix() {
    let (mut c, mut a) = pair_with_session();
    // v1 sends on a v2 connection.
    let v1_prompt = crate::types::PromptRequest::new("s", vec![]);
    let speaks = Some(ProtocolVersion::V2);
    assert_eq!(
        c.send_request::<V1>(T0, v1_prompt, None).unwrap_err().error,
        SendError::WrongProtocolVersion { speaks }
    );
    // A v1-only method received on v2: method not found; a v2 method is not a v1 one.
    let load =
        json!({"jsonrpc":"2.0","id":5,"method":"session/load","params":{"sessionId":"s","cwd":"/w","mcpServers":[]}});
    feed(&mut a, T0, &[&load.to_string()]);
    assert_eq!(sent(&mut a)[0]["error"]["code"], -32601);
    let read = json!({"jsonrpc":"2.0","id":6,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}});
    feed(&mut c, T0, &[&read.to_string()]);
    assert_eq!(sent(&mut c)[0]["error"]["code"], -32601);
    // A v1 result cannot answer a v2 request.
    let list = json!({"jsonrpc":"2.0","id":7,"method":"session/list","params":{}});
    feed(&mut a, T0, &[&list.to_string()]);
    let (id, _) = request_v2(events(&mut a));
    let v1_result = crate::types::ListSessionsResponse::new(vec![]);
    assert!(a.respond::<V1>(T0, id, Ok(v1_result.into())).is_err());
    assert_eq!(sent(&mut a)[0]["error"]["code"], -32603);
    // A v2 message on a v1 connection.
    let mut v1 = super::ready_agent();
    let update: v2::UpdateSessionNotification =
        from(json!({"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle"}}));
    let refused = v1.send_notification::<V2>(T0, update).unwrap_err();
    assert_eq!(refused.error, SendError::WrongProtocolVersion { speaks: Some(ProtocolVersion::V1) });
}

#[test]
fn gates_apply_both_ways() {
    // The agent advertises no `session`: session methods are refused both ways.
    let (mut c, mut a) = pair_with(json!({}), json!({}), json!([]));
    let new: v2::NewSessionRequest = from(json!({"cwd": "/w"}));
    let refused = c.send_request::<V2>(T0, new, None).unwrap_err();
    let capability: &[&str] = &["session"];
    assert_eq!(refused.error, SendError::NotSupportedByPeer { method: v2::Method::NewSession.wire(), capability });
    let line = json!({"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/w"}});
    feed(&mut a, T0, &[&line.to_string()]);
    let answer = &sent(&mut a)[0];
    assert_eq!(answer["error"]["code"], -32601);
    assert!(answer["error"]["data"]["reason"].as_str().unwrap().contains("session"));
    // A notification failing its gate is dropped and counted.
    let before = a.stats().notifications_dropped;
    feed(&mut a, T0, &[r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#]);
    assert_eq!(a.stats().notifications_dropped, before + 1);
    assert!(events(&mut a).is_empty());
    // Extensions pass; a name that is neither a row nor an extension does not.
    let ext = json!({"jsonrpc":"2.0","id":4,"method":"_acme/x","params":{"k":1}});
    feed(&mut a, T0, &[&ext.to_string(), r#"{"jsonrpc":"2.0","id":5,"method":"acme/x"}"#]);
    let (_, request) = request_v2(events(&mut a));
    assert!(matches!(request, v2::Request::Client(ClientRequest::Ext(_))));
    assert_eq!(sent(&mut a)[0]["error"]["code"], -32601);
    let bad = ClientRequest::Ext(crate::ext::ExtRequest::new("acme/x", serde_json::Value::Null));
    assert!(matches!(c.send_request::<V2>(T0, bad, None).unwrap_err().error, SendError::InvalidExtensionName { .. }));
}

#[test]
fn auth_methods_gate_login_and_logout() {
    let login: v2::LoginAuthRequest = from(json!({"methodId": "m"}));
    // No auth methods: neither side lets `auth/login` through.
    let (mut c, mut a) = pair_with(json!({}), json!({}), json!([]));
    let refused = c.send_request::<V2>(T0, login.clone(), None).unwrap_err();
    let capability: &[&str] = &["authMethods"];
    assert_eq!(refused.error, SendError::NotSupportedByPeer { method: v2::Method::Login.wire(), capability });
    let line = json!({"jsonrpc":"2.0","id":3,"method":"auth/logout","params":{}});
    feed(&mut a, T0, &[&line.to_string()]);
    assert_eq!(sent(&mut a)[0]["error"]["code"], -32601);
    // With one, both pass.
    let (mut c, mut a) = pair_with(json!({}), json!({}), json!([{"type": "agent", "methodId": "m", "name": "M"}]));
    c.send_request::<V2>(T0, login, None).unwrap();
    c.send_request::<V2>(T0, v2::LogoutAuthRequest { meta: None }, None).unwrap();
    pipe(&mut c, &mut a, T0);
    let kinds: Vec<_> = events(&mut a)
        .into_iter()
        .map(|e| match e {
            Event::RequestV2 { request, .. } => request.method(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, [Some(v2::Method::Login), Some(v2::Method::Logout)]);
}

#[test]
fn elicitation_gates_by_mode() {
    // Scoped to a request: a session-scoped one needs its session announced (`turns_v2`).
    let url: v2::CreateElicitationRequest = from(json!({"message": "m", "mode": "url", "elicitationId": "e",
        "url": "https://example.com", "requestId": 1}));
    let form: v2::CreateElicitationRequest = from(json!({"message": "m", "mode": "form", "requestId": 1,
        "requestedSchema": {"type": "object", "properties": {}}}));
    let complete = crate::types::CompleteElicitationNotification::new("e");
    // The client advertises forms only.
    let (mut c, mut a) = pair_with(json!({"elicitation": {"form": {}}}), json!({}), json!([]));
    assert!(a.send_request::<V2>(T0, form, None).is_ok());
    let refused = a.send_request::<V2>(T0, url.clone(), None).unwrap_err();
    let capability: &[&str] = &["elicitation", "url"];
    assert_eq!(
        refused.error,
        SendError::NotSupportedByPeer { method: v2::Method::CreateElicitation.wire(), capability }
    );
    let refused = a.send_notification::<V2>(T0, complete.clone()).unwrap_err();
    assert_eq!(
        refused.error,
        SendError::NotSupportedByPeer { method: v2::Method::CompleteElicitation.wire(), capability }
    );
    // Received without the capability: the notification is dropped.
    let before = c.stats().notifications_dropped;
    feed(&mut c, T0, &[r#"{"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"e"}}"#]);
    assert_eq!(c.stats().notifications_dropped, before + 1);
    // No `elicitation` at all: the request is refused when received.
    let (mut c, mut a) = pair_with(json!({}), json!({}), json!([]));
    assert!(a.send_request::<V2>(T0, url, None).is_err());
    let line = json!({"jsonrpc":"2.0","id":8,"method":"elicitation/create","params":
        {"message":"m","mode":"url","elicitationId":"e","url":"https://example.com","sessionId":"s"}});
    feed(&mut c, T0, &[&line.to_string()]);
    assert_eq!(sent(&mut c)[0]["error"]["code"], -32601);
    // With `elicitation.url`, both pass.
    let (mut c, mut a) = pair_with(json!({"elicitation": {"url": {}}}), json!({}), json!([]));
    a.send_notification::<V2>(T0, complete).unwrap();
    pipe(&mut a, &mut c, T0);
    assert!(matches!(events(&mut c).as_slice(), [Event::NotificationV2 { turn: None, .. }]));
}

#[test]
fn cancel_request_works_on_v2() {
    let agent = v12().with_cancel_grace(std::time::Duration::from_millis(10));
    let (mut c, mut a) = pair_configured(v12(), agent, json!({}), json!({"session": {}}), json!([]));
    // The client cancels its request: one Cancelled outcome and a `$/cancel_request`.
    let list = v2::ListSessionsRequest { cwd: None, cursor: None, meta: None };
    let out = c.send_request::<V2>(T0, list, Some(ms(100))).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    assert!(c.cancel_request(T0, out));
    assert_eq!(events(&mut c), [Event::Outcome { id: out, outcome: Outcome::Cancelled }]);
    pipe(&mut c, &mut a, T0);
    assert!(matches!(events(&mut a).as_slice(), [Event::Cancelled { .. }]));
    // The handler does not answer: the machine answers -32800 after the grace.
    a.handle_timeout(ms(10));
    assert_eq!(sent(&mut a)[0]["error"]["code"], -32800);
    assert_eq!(a.respond::<V2>(ms(11), id, Err(RpcError::internal_error("late"))), Ok(Completion::Discarded));
    // A v2 request times out like a v1 one.
    let list = v2::ListSessionsRequest { cwd: None, cursor: None, meta: None };
    let out = c.send_request::<V2>(T0, list, Some(ms(5))).unwrap();
    c.handle_timeout(ms(5));
    assert_eq!(events(&mut c), [Event::Outcome { id: out, outcome: Outcome::TimedOut }]);
    // A late answer is counted, never delivered.
    let late = json!({"jsonrpc":"2.0","id":out.wire(),"result":{"sessions":[]}});
    let _ = sent(&mut c);
    feed(&mut c, ms(6), &[&late.to_string()]);
    assert!(events(&mut c).is_empty());
    assert_eq!(c.stats().late_responses, 1);
}

#[test]
fn v2_results_are_typed_by_the_request_method() {
    let (mut c, mut a) = pair_with(json!({}), json!({"session": {}}), json!([]));
    let list = v2::ListSessionsRequest { cwd: None, cursor: None, meta: None };
    let out = c.send_request::<V2>(T0, list, None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, _) = request_v2(events(&mut a));
    let result: v2::ListSessionsResponse = from(json!({"sessions": []}));
    a.respond::<V2>(T0, id, Ok(result.into())).unwrap();
    pipe(&mut a, &mut c, T0);
    let ev = events(&mut c);
    assert!(
        matches!(&ev[..], [Event::Outcome { id, outcome: Outcome::ResultV2(v2::Response::Agent(AgentResponse::ListSessions(_))) }] if *id == out)
    );
}

#[test]
fn held_and_deferred_requests_work_on_v2() {
    // A request behind the pending v2 `initialize` is held, then dispatched as v2.
    let mut a = Connection::new(Side::Agent, v12().with_outbound_budget(1), T0);
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":
        {"protocolVersion":2,"info":{"name":"c","version":"1"},"capabilities":{}}});
    let list = json!({"jsonrpc":"2.0","id":1,"method":"session/list","params":{}});
    feed(&mut a, T0, &[&init.to_string(), &list.to_string()]);
    let (id, _) = request_v2(events(&mut a));
    assert_eq!(a.inbound_in_flight(), 2, "the list is held");
    a.respond::<V2>(T0, id, Ok(v2_init_result(json!({"session": {}}), json!([])).into())).unwrap();
    // The output holds the initialize answer, over the budget of 1: the list is deferred.
    assert!(matches!(events(&mut a).as_slice(), [Event::HandshakeCompleted(_)]));
    assert_eq!((a.deferred_requests(), a.stats().requests_deferred), (1, 1));
    assert_eq!(sent(&mut a).len(), 1);
    let (id, request) = request_v2(events(&mut a));
    assert!(matches!(request, v2::Request::Client(ClientRequest::ListSessions(_))));
    let result: v2::ListSessionsResponse = from(json!({"sessions": []}));
    assert_eq!(a.respond::<V2>(T0, id, Ok(result.into())), Ok(Completion::Sent));
    assert_eq!(sent(&mut a)[0]["id"], 1);
}

#[test]
fn terminal_auth_methods_need_the_clients_auth_terminal() {
    let auth = json!([{"type": "terminal", "methodId": "t", "name": "T"}]);
    for (client_caps, kept) in [(json!({}), 0), (json!({"auth": {"terminal": {}}}), 1)] {
        let mut c = Connection::new(Side::Client, v12(), T0);
        let mut a = Connection::new(Side::Agent, v12(), T0);
        c.send_request::<V2>(T0, v2_init(2, client_caps), None).unwrap();
        pipe(&mut c, &mut a, T0);
        let (id, _) = request_v2(events(&mut a));
        a.respond::<V2>(T0, id, Ok(v2_init_result(json!({}), auth.clone()).into())).unwrap();
        let frames = sent(&mut a);
        assert_eq!(frames[0]["result"]["authMethods"].as_array().unwrap().len(), kept);
        // Without a method left, `auth/login` is gated off.
        let line = json!({"jsonrpc":"2.0","id":3,"method":"auth/login","params":{"methodId":"t"}});
        feed(&mut a, T0, &[&line.to_string()]);
        let dispatched = events(&mut a).iter().any(|e| matches!(e, Event::RequestV2 { .. }));
        assert_eq!(dispatched, kept == 1);
    }
}

/// `Protocol::ext_request`, `ext_notification` and `ext_result` (v2): an extension request
/// each way and its result, and an extension notification, between two v2 machines.
#[test]
fn the_extension_hooks_build_the_messages_either_side_sends() {
    use crate::Protocol;
    let (mut c, mut a) = pair_with(json!({}), json!({}), json!([]));
    let ask = V2::ext_request(Side::Client, "_x/ask", json!({"a": 1}));
    c.send_request::<V2>(T0, ask.clone(), None).unwrap();
    pipe(&mut c, &mut a, T0);
    let (id, request) = request_v2(events(&mut a));
    assert_eq!(request, ask);
    let answer = v2::Response::Agent(AgentResponse::Ext(crate::ext::ExtResponse(json!({"b": 3}))));
    assert_eq!(a.respond::<V2>(T0, id, Ok(answer)), Ok(Completion::Sent));
    a.send_notification::<V2>(T0, V2::ext_notification(Side::Agent, "_x/tell", json!([2]))).unwrap();
    a.send_request::<V2>(T0, V2::ext_request(Side::Agent, "_x/back", json!(null)), None).unwrap();
    pipe(&mut a, &mut c, T0);
    let ev = events(&mut c);
    let Some(Event::Outcome { outcome: Outcome::ResultV2(result), .. }) = ev.first() else { panic!("{ev:?}") };
    assert_eq!(V2::ext_result(result.clone()), Ok(json!({"b": 3})));
    assert!(
        matches!(&ev[1], Event::NotificationV2 { notification, .. } if *notification == V2::ext_notification(Side::Agent, "_x/tell", json!([2]))),
        "{ev:?}"
    );
    assert!(
        matches!(&ev[2], Event::RequestV2 { request, .. } if *request == V2::ext_request(Side::Agent, "_x/back", json!(null))),
        "{ev:?}"
    );
    let table = v2::Response::Agent(AgentResponse::NewSession(from(json!({"sessionId": "s"}))));
    assert_eq!(V2::ext_result(table.clone()), Err(table));
}
