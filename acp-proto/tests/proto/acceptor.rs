//! The typed connection's branch point ([`acp_proto::Acceptor`]) and the version a
//! `Connection<P>` speaks (issue 29, step 1).

use acp_proto::{Accepted, Acceptor, Config, Event, Instant};
use serde_json::Value;

const T0: Instant = Instant::ZERO;

fn frames(out: &[u8]) -> Vec<Value> {
    out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect()
}

#[test]
fn acceptor_gives_a_v1_connection_for_a_v1_initialize_and_loses_no_byte() {
    let mut acceptor = Acceptor::new(Config::default(), T0);
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":"early","method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
        "\n"
    )
    .as_bytes();
    let consumed = acceptor.handle_input(T0, input);
    assert!(consumed < input.len(), "the acceptor stops after the initialize");
    assert!(acceptor.is_decided());
    let mut out = Vec::new();
    let _ = acceptor.poll_transmit(&mut out);
    let answers = frames(&out);
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], "early");
    assert_eq!(answers[0]["error"]["code"], -32600, "what a v1 machine answers before the handshake");
    let Ok(Accepted::V1(mut agent)) = acceptor.accept() else { panic!("a v1 connection") };
    assert_eq!(agent.handle_input(T0, &input[consumed..]), input.len() - consumed);
    let Some(Event::Request(request)) = agent.poll_event() else { panic!("the initialize") };
    assert_eq!(request.request().method(), Some(acp_proto::Method::Initialize));
    let Some(acp_proto::ClientCall::Initialize(_, responder)) = request.into_call().into_client() else { panic!() };
    let answer = acp_proto::types::InitializeResponse::new(acp_proto::types::ProtocolVersion::V1);
    agent.respond(T0, responder.answer(Ok(answer))).unwrap();
    assert!(agent.is_ready());
    let Some(Event::HandshakeCompleted(_)) = agent.poll_event() else { panic!("the handshake") };
    let Some(Event::Request(request)) = agent.poll_event() else { panic!("the pipelined request") };
    assert_eq!(request.request().method(), Some(acp_proto::Method::NewSession));
}

#[test]
fn acceptor_reads_on_until_an_initialize_and_an_early_eof_gives_a_closed_v1_connection() {
    let mut acceptor = Acceptor::new(Config::default(), T0);
    let garbage = b"not json\n";
    assert_eq!(acceptor.handle_input(T0, garbage), garbage.len());
    assert!(!acceptor.is_decided());
    let mut acceptor = acceptor.accept().expect_err("nothing chose a version yet");
    let mut out = Vec::new();
    let _ = acceptor.poll_transmit(&mut out);
    assert_eq!(frames(&out)[0]["error"]["code"], -32700);
    acceptor.handle_eof(T0);
    let Ok(Accepted::V1(mut agent)) = acceptor.accept() else { panic!("a v1 connection") };
    assert!(agent.is_closed());
    assert!(matches!(agent.poll_event(), Some(Event::Closed { .. })));
}

#[cfg(feature = "unstable_protocol_v2")]
mod v2 {
    use acp_proto::role::Client;
    use acp_proto::{Answer, CloseReason, Connection, Outcome, V2, v2};
    use serde_json::json;

    use super::*;

    fn of<T: serde::de::DeserializeOwned>(v: Value) -> T {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn acceptor_gives_a_v2_connection_for_an_initialize_offering_2() {
        let mut acceptor = Acceptor::new(Config::default(), T0);
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}});
        let mut input = serde_json::to_vec(&init).unwrap();
        input.push(b'\n');
        // Split mid-line: the acceptor buffers, as the connection would.
        let first = acceptor.handle_input(T0, &input[..10]);
        assert_eq!(first, 10);
        assert!(!acceptor.is_decided());
        assert_eq!(acceptor.handle_input(T0, &input[10..]), input.len() - 10);
        let Ok(Accepted::V2(mut agent)) = acceptor.accept() else { panic!("a v2 connection") };
        let Some(Event::Request(request)) = agent.poll_event() else { panic!("a request") };
        let v2::Call::Client(v2::ClientCall::Initialize(_, responder)) = request.into_call() else {
            panic!("the v2 initialize")
        };
        let answer: v2::InitializeResponse =
            of(json!({"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {}}));
        agent.respond(T0, responder.answer(Ok(answer))).unwrap();
        let mut out = Vec::new();
        let _ = agent.poll_transmit(&mut out);
        assert_eq!(frames(&out)[0]["result"]["protocolVersion"], 2);
        assert_eq!(agent.negotiated().unwrap().protocol_version, v2::ProtocolVersion::V2);
    }

    #[test]
    fn a_v2_only_agent_refuses_a_v1_initialize_with_32022() {
        // The acceptor hands a client offering 1 a v1 connection; an agent that serves only 2
        // answers its `initialize` -32022 with `{requested, supported}` (v2's version
        // negotiation, spec/crate-1.20.0/v2/schema.json), anything else -32601.
        let mut acceptor = Acceptor::new(Config::default(), T0);
        let init = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";
        assert_eq!(acceptor.handle_input(T0, init), init.len());
        let Ok(Accepted::V1(mut agent)) = acceptor.accept() else { panic!("a v1 connection") };
        let Some(Event::Request(request)) = agent.poll_event() else { panic!("the initialize") };
        let served = [v2::ProtocolVersion::V2];
        let refusal = Acceptor::refusal(request.request(), &served);
        agent.respond(T0, Answer::error(request.id(), refusal)).unwrap();
        let mut out = Vec::new();
        let _ = agent.poll_transmit(&mut out);
        let error = &frames(&out)[0]["error"];
        assert_eq!((&error["code"], &error["data"]), (&json!(-32022), &json!({"requested": 1, "supported": [2]})));
        assert!(!agent.is_ready(), "nothing was negotiated");
        // Only an `initialize` below every served version is -32022: one asking for 3 (a v1
        // connection cannot speak it) and any other request are -32601.
        let other: acp_proto::Request = acp_proto::types::NewSessionRequest::new("/", vec![]).into();
        assert_eq!(Acceptor::refusal(&other, &served).code.0, -32601);
        let three = acp_proto::types::InitializeRequest::new(v2::ProtocolVersion(3));
        assert_eq!(Acceptor::refusal(&three.into(), &served).code.0, -32601);
        let zero = acp_proto::types::InitializeRequest::new(v2::ProtocolVersion(0));
        let error = Acceptor::refusal(&zero.into(), &[v2::ProtocolVersion::V1, v2::ProtocolVersion::V2]);
        assert_eq!((error.code.0, error.data), (-32022, Some(json!({"requested": 0, "supported": [1, 2]}))));
    }

    #[test]
    fn a_v2_client_connection_speaks_only_v2_and_closes_on_an_answer_of_1() {
        let mut client: Connection<Client, V2> = Connection::new(Config::default(), T0);
        let init: v2::InitializeRequest =
            of(json!({"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}));
        let id = client.send_request(T0, init, None).unwrap();
        let answer = json!({"jsonrpc": "2.0", "id": id.wire(), "result": {"protocolVersion": 1}});
        let mut line = serde_json::to_vec(&answer).unwrap();
        line.push(b'\n');
        let _ = client.handle_input(T0, &line);
        let events: Vec<Event<V2>> = std::iter::from_fn(|| client.poll_event()).collect();
        assert!(matches!(events[0], Event::Outcome { outcome: Outcome::InvalidResult(_), .. }));
        assert!(matches!(
            events[1],
            Event::Closed { reason: CloseReason::UnsupportedProtocolVersion { version } } if version.0 == 1
        ));
    }
}
