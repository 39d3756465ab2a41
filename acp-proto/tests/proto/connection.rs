//! Scenario tests: an agent-role and a client-role machine back to back.

use crate::common;

use acp_proto::types::*;
use acp_proto::{
    AgentCall, AgentRequest, AgentResponse, Answer, CancelReason, ClientCall, ClientRequest, ClientResponse,
    CloseReason, Completion, Config, Event, Method, Outcome, Request, Response, RpcError, SendError, Side,
};
use common::*;
use serde_json::json;

#[test]
fn handshake_negotiates_both_capability_sets() {
    let mut p = Pair::new();
    let mut client_caps = ClientCapabilities::default();
    client_caps.fs.read_text_file = true;
    let agent_caps = AgentCapabilities { load_session: true, ..Default::default() };
    p.handshake(client_caps, agent_caps);
    let a = p.agent.negotiated().unwrap();
    let c = p.client.negotiated().unwrap();
    assert_eq!(a.own, c.peer, "the agent's own capabilities are the client's view of its peer");
    assert_eq!(a.peer, c.own);
    assert!(a.own.allows(Method::LoadSession) && !a.own.allows(Method::ListSessions));
    assert!(c.own.allows(Method::ReadTextFile) && !c.own.allows(Method::WriteTextFile));
    let init = &p.frames_from(Side::Client)[0];
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"]["clientCapabilities"]["fs"]["readTextFile"], true);
}

#[test]
fn request_and_response_in_each_direction() {
    let mut p = Pair::new();
    let mut caps = ClientCapabilities::default();
    caps.fs.read_text_file = true;
    p.handshake(caps, AgentCapabilities::default());
    let session = p.open_session("s1");

    // Agent → client: fs/read_text_file.
    let read = p.agent.send_request(p.now, ReadTextFileRequest::new(session.clone(), "/etc/motd"), None).unwrap();
    p.pump();
    let AgentCall::ReadTextFile(r, responder) = agent_call(p.client.poll_event()) else { panic!() };
    assert_eq!(r.path, "/etc/motd");
    p.client.respond(p.now, responder.answer(Ok(ReadTextFileResponse::new("hello")))).unwrap();
    p.pump();
    match p.agent_events().as_slice() {
        [Event::Outcome { id, outcome: Outcome::Result(Response::Client(ClientResponse::ReadTextFile(r))) }] => {
            assert_eq!(*id, read);
            assert_eq!(r.content, "hello");
        }
        other => panic!("{other:?}"),
    }

    // Client → agent: an extension request.
    let ext = ClientRequest::Ext(acp_proto::ext::ExtRequest::new("_test/echo", json!({"n": 1})));
    let out = p.client.send_request(p.now, ext, None).unwrap();
    p.pump();
    let ClientCall::Ext(e, responder) = client_call(p.agent.poll_event()) else { panic!() };
    p.agent.respond(p.now, responder.answer(Ok(acp_proto::ext::ExtResponse(e.params)))).unwrap();
    p.pump();
    match outcome_of(&p.client_events(), out) {
        Some(Outcome::Result(Response::Agent(AgentResponse::Ext(v)))) => assert_eq!(v.0, json!({"n": 1})),
        other => panic!("{other:?}"),
    }
}

#[test]
fn deadline_fires_exactly_at_poll_timeout() {
    let mut p = Pair::new();
    p.handshake(ClientCapabilities::default(), AgentCapabilities::default());
    let start = p.now;
    let id = p.client.send_request(p.now, NewSessionRequest::new("/", vec![]), Some(start + ms(250))).unwrap();
    p.pump();
    let Some(Event::Request(request)) = p.agent.poll_event() else { panic!() };
    let inbound = request.id();
    assert_eq!(p.next_timeout(), Some(start + ms(250)));
    let fired = p.advance_to_next_timeout();
    assert_eq!(fired, start + ms(250));
    assert_eq!(p.client_events(), [Event::Outcome { id, outcome: Outcome::TimedOut }]);
    // The best-effort $/cancel_request reaches the agent's handler as a cancellation.
    p.pump();
    assert_eq!(p.agent_events(), [Event::Cancelled { id: inbound, reason: CancelReason::CancelRequest }]);
    // The handler still answers exactly once; the client drops it as late.
    p.agent.respond(p.now, Answer::error(inbound, RpcError::request_cancelled())).unwrap();
    p.pump();
    assert!(p.client_events().is_empty());
    assert_eq!(p.client.stats().late_responses, 1);
    let answers = p.frames_from(Side::Agent).iter().filter(|f| f["id"] == json!(id.wire())).count();
    assert_eq!(answers, 1);
}

#[test]
fn cancel_both_ways() {
    let mut p = Pair::new();
    p.handshake(ClientCapabilities::default(), AgentCapabilities::default());
    // Client cancels its own request: one Cancelled outcome, the agent is told.
    let id = p.client.send_request(p.now, NewSessionRequest::new("/", vec![]), None).unwrap();
    p.pump();
    let Some(Event::Request(request)) = p.agent.poll_event() else { panic!() };
    let inbound = request.id();
    assert!(p.client.cancel_request(p.now, id));
    p.pump();
    assert_eq!(p.client_events(), [Event::Outcome { id, outcome: Outcome::Cancelled }]);
    assert_eq!(p.agent_events(), [Event::Cancelled { id: inbound, reason: CancelReason::CancelRequest }]);
    // The agent's handler ignores it; after the grace period the machine answers -32800.
    p.advance_to_next_timeout();
    p.pump();
    let last = p.frames_from(Side::Agent).last().copied().cloned().unwrap();
    assert_eq!(last["error"]["code"], -32800);
    let late = Answer::error(inbound, RpcError::internal_error("late"));
    assert_eq!(p.agent.respond(p.now, late), Ok(Completion::Discarded));

    // Agent cancels its own request to the client.
    let s = p.open_session("s");
    let perm = RequestPermissionRequest::new(
        s.clone(),
        ToolCallUpdate::new("t1"),
        vec![PermissionOption::new("ok", "OK", PermissionOptionKind::AllowOnce)],
    );
    let out = p.agent.send_request(p.now, perm, None).unwrap();
    p.pump();
    let Some(Event::Request(request)) = p.client.poll_event() else { panic!() };
    let client_in = request.id();
    assert!(p.agent.cancel_request(p.now, out));
    p.pump();
    assert_eq!(p.agent_events(), [Event::Outcome { id: out, outcome: Outcome::Cancelled }]);
    assert_eq!(p.client_events(), [Event::Cancelled { id: client_in, reason: CancelReason::CancelRequest }]);
}

#[test]
fn pipelined_requests_wait_for_the_initialize_response() {
    let mut p = Pair::new();
    p.client.send_request(p.now, InitializeRequest::new(ProtocolVersion::V1), None).unwrap();
    p.pump();
    // A client that does not wait: these frames go out before the initialize response.
    let extra = [
        json!({"jsonrpc":"2.0","id":100,"method":"session/new","params":{"cwd":"/a","mcpServers":[]}}),
        json!({"jsonrpc":"2.0","id":101,"method":"session/new","params":{"cwd":"/b","mcpServers":[]}}),
    ];
    for f in &extra {
        let line = format!("{f}\n");
        assert_eq!(p.agent.handle_input(p.now, line.as_bytes()), line.len());
    }
    let evs = p.agent_events();
    assert_eq!(evs.len(), 1, "only initialize is dispatched");
    let ClientCall::Initialize(_, responder) = client_call(evs.into_iter().next()) else { panic!() };
    p.agent.respond(p.now, responder.answer(Ok(InitializeResponse::new(ProtocolVersion::V1)))).unwrap();
    let evs = p.agent_events();
    assert!(matches!(evs[0], Event::HandshakeCompleted(_)));
    let cwds: Vec<String> = evs[1..]
        .iter()
        .map(|e| match e {
            Event::Request(request) => match request.request() {
                Request::Client(ClientRequest::NewSession(n)) => n.cwd.clone(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(cwds, ["/a", "/b"], "dispatched in order, no -32600 race");
}

#[test]
fn capability_refusals_both_ways() {
    let mut p = Pair::new();
    p.handshake(ClientCapabilities::default(), AgentCapabilities::default());
    let s = p.open_session("s");
    // Outbound: refused locally, nothing on the wire.
    let before = p.wire.len();
    for req in [
        AgentRequest::from(ReadTextFileRequest::new(s.clone(), "/x")),
        AgentRequest::from(WriteTextFileRequest::new(s.clone(), "/x", "y")),
        AgentRequest::from(CreateTerminalRequest::new(s.clone(), "ls")),
    ] {
        assert!(matches!(
            p.agent.send_request(p.now, req, None).map_err(SendError::from),
            Err(SendError::NotSupportedByPeer { .. })
        ));
    }
    let load = LoadSessionRequest::new(s.clone(), "/", vec![]);
    assert!(matches!(
        p.client.send_request(p.now, load, None).map_err(SendError::from),
        Err(SendError::NotSupportedByPeer { .. })
    ));
    p.pump();
    assert_eq!(p.wire.len(), before);
    // Inbound: a peer that ignores the gate gets -32601.
    let raw = json!({"jsonrpc":"2.0","id":"x","method":"terminal/create","params":{"sessionId":"s","command":"ls"}});
    let _ = p.client.handle_input(p.now, format!("{raw}\n").as_bytes());
    let mut out = Vec::new();
    let _ = p.client.poll_transmit(&mut out);
    let answer: serde_json::Value = serde_json::from_slice(out.trim_ascii_end()).unwrap();
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!("x"), json!(-32601)));
}

#[test]
fn peer_eof_with_requests_pending() {
    let mut p = Pair::new();
    p.handshake(ClientCapabilities::default(), AgentCapabilities::default());
    let a = p.client.send_request(p.now, NewSessionRequest::new("/", vec![]), None).unwrap();
    let b = p.client.send_request(p.now, NewSessionRequest::new("/", vec![]), Some(p.now + ms(10))).unwrap();
    p.pump();
    let inbound: Vec<_> = p.agent_events();
    assert_eq!(inbound.len(), 2);
    // The agent process dies: the client sees EOF.
    p.client.handle_eof(p.now);
    assert_eq!(
        p.client_events(),
        [
            Event::Outcome { id: a, outcome: Outcome::ConnectionClosed },
            Event::Outcome { id: b, outcome: Outcome::ConnectionClosed },
            Event::Closed { reason: CloseReason::PeerEof },
        ]
    );
    assert_eq!(p.client.poll_timeout(), None);
    // And the agent, seeing its stdin close, tells its handlers but still owes the two
    // answers (a half-close): it closes once they are queued.
    p.agent.handle_eof(p.now);
    let evs = p.agent_events();
    assert_eq!(evs.len(), 2);
    assert!(evs.iter().all(|e| matches!(e, Event::Cancelled { reason: CancelReason::InputEnded, .. })));
    assert!(!p.agent.is_closed());
    for (i, event) in inbound.into_iter().enumerate() {
        let ClientCall::NewSession(_, responder) = client_call(Some(event)) else { panic!() };
        p.agent.respond(p.now, responder.answer(Ok(NewSessionResponse::new(format!("s{i}"))))).unwrap();
    }
    assert_eq!(p.agent_events(), [Event::Closed { reason: CloseReason::PeerEof }]);
    let mut out = Vec::new();
    let _ = p.agent.poll_transmit(&mut out);
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 2, "both answers go out");
}

#[test]
fn any_chunking_gives_the_same_events() {
    fn run(size: usize) -> (Vec<Event>, Vec<Event>) {
        let mut p = Pair::with_configs(Config::default(), Config::default());
        p.client.send_request(p.now, InitializeRequest::new(ProtocolVersion::V1), None).unwrap();
        p.pump_chunked(size);
        let ClientCall::Initialize(_, responder) = client_call(p.agent.poll_event()) else { panic!() };
        p.agent.respond(p.now, responder.answer(Ok(InitializeResponse::new(ProtocolVersion::V1)))).unwrap();
        let s = SessionId::from("s\u{e9}\u{1F600}");
        p.pump_chunked(size);
        let n = p.client.send_request(p.now, NewSessionRequest::new("/", vec![]), None).unwrap();
        p.pump_chunked(size);
        let _ = n;
        let evs: Vec<Event> = p.agent_events();
        let ClientCall::NewSession(_, responder) = client_call(evs.last().cloned()) else { panic!() };
        p.agent.respond(p.now, responder.answer(Ok(NewSessionResponse::new(s.clone())))).unwrap();
        for i in 0..5 {
            p.agent.send_notification(p.now, chunk(&s, &format!("\u{2028}part {i} \u{1F600}"))).unwrap();
        }
        p.pump_chunked(size);
        (evs, p.client_events())
    }
    let whole = run(usize::MAX);
    for size in [1, 2, 3, 7, 64] {
        assert_eq!(run(size), whole, "chunk size {size}");
    }
}
