//! Rule 1 with feature `unstable_proxy_chains`: `proxy/initialize` is a handshake request like
//! `initialize`.

use super::*;
use crate::connection::{AnyConnection as Connection, AnyEvent as Event, AnyOutcome as Outcome};
use crate::protocol::V1;

/// Moves every queued frame of `from` into `to`.
fn pump(from: &mut Connection, to: &mut Connection) -> Vec<Value> {
    let mut buf = Vec::new();
    let _ = from.poll_transmit(&mut buf);
    let frames = String::from_utf8(buf.clone()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut fed = 0;
    while fed < buf.len() {
        fed += to.handle_input(T0, &buf[fed..]);
    }
    frames
}

#[test]
fn proxy_initialize_opens_the_connection_in_place_of_initialize() {
    let (mut conductor, mut proxy) = (Connection::client(T0), Connection::agent(T0));
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.terminal = true;
    conductor.send_request::<V1>(T0, InitializeProxyRequest(init), None).unwrap();
    // Nothing else goes out before the handshake, and a second handshake request neither.
    let second = conductor.send_request::<V1>(T0, InitializeRequest::new(ProtocolVersion::V1), None);
    assert_eq!(second.map_err(SendError::from), Err(SendError::AlreadyInitialized));
    let frames = pump(&mut conductor, &mut proxy);
    assert_eq!(frames[0]["method"], "proxy/initialize");
    // Requests pipelined behind it are held until it has answered, as behind `initialize`.
    feed(&mut proxy, T0, &[&new_session_line(7)]);
    let evs = events(&mut proxy);
    assert_eq!(evs.len(), 1, "{evs:?}");
    let Event::Request { id, request } = &evs[0] else { panic!("{evs:?}") };
    assert_eq!(request.method(), Some(Method::InitializeProxy));
    let result = InitializeProxyResponse(InitializeResponse::new(ProtocolVersion::V1));
    proxy.respond::<V1>(T0, *id, Ok(result.into())).unwrap();
    let evs = events(&mut proxy);
    let Event::HandshakeCompleted(n) = &evs[0] else { panic!("{evs:?}") };
    assert!(n.peer.json()["terminal"] == true, "the params' client capabilities are the peer's");
    assert!(matches!(&evs[1], Event::Request { request, .. } if request.method() == Some(Method::NewSession)));
    assert!(proxy.is_ready());
    pump(&mut proxy, &mut conductor);
    let evs = events(&mut conductor);
    assert!(matches!(evs[0], Event::HandshakeCompleted(_)), "{evs:?}");
    assert!(
        matches!(&evs[1], Event::Outcome { outcome: Outcome::Result(r), .. } if r.method() == Some(Method::InitializeProxy))
    );
    assert!(conductor.is_ready());
    // Once committed, neither handshake request is sent or accepted again.
    let again =
        conductor.send_request::<V1>(T0, InitializeProxyRequest(InitializeRequest::new(ProtocolVersion::V1)), None);
    assert_eq!(again.map_err(SendError::from), Err(SendError::AlreadyInitialized));
    let line = json!({"jsonrpc":"2.0","id":8,"method":"proxy/initialize","params":{"protocolVersion":1}});
    feed(&mut proxy, T0, &[&line.to_string(), &init_line("9", json!({}))]);
    let out = sent(&mut proxy);
    let reasons: Vec<&Value> = out.iter().map(|f| &f["error"]["data"]["reason"]).collect();
    assert_eq!(reasons, [&json!("already initialized"), &json!("already initialized")], "{out:?}");
}

#[test]
fn a_failed_proxy_initialize_leaves_the_connection_unopened() {
    let mut proxy = Connection::agent(T0);
    let line = json!({"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{"protocolVersion":1}});
    feed(&mut proxy, T0, &[&line.to_string(), &new_session_line(2)]);
    let Some(Event::Request { id, .. }) = proxy.poll_any() else { panic!() };
    proxy.respond::<V1>(T0, id, Err(RpcError::internal_error("no successor"))).unwrap();
    let out = sent(&mut proxy);
    assert_eq!((error_code(&out[0]), error_code(&out[1])), (-32603, -32600));
    assert!(!proxy.is_ready());
    // A retry with plain `initialize` may open it.
    feed(&mut proxy, T0, &[&init_line("3", json!({}))]);
    assert!(matches!(proxy.poll_any(), Some(Event::Request { .. })));
}

#[test]
fn the_proxy_forwards_initialize_to_its_successor_before_answering() {
    let (mut conductor, mut proxy) = (Connection::client(T0), Connection::agent(T0));
    conductor
        .send_request::<V1>(T0, InitializeProxyRequest(InitializeRequest::new(ProtocolVersion::V1)), None)
        .unwrap();
    pump(&mut conductor, &mut proxy);
    let Some(Event::Request { id: init_id, .. }) = proxy.poll_any() else { panic!("no proxy/initialize") };
    // While its proxy/initialize is pending, the proxy forwards `initialize` downstream.
    let forward = ProxySuccessorRequest::new("initialize").with_params(json!({"protocolVersion": 1}));
    let out = proxy.send_request::<V1>(T0, ProxyForwardRequest(forward.clone()), None).unwrap();
    assert_eq!(pump(&mut proxy, &mut conductor)[0]["method"], "proxy/successor");
    let evs = events(&mut conductor);
    let Event::Request { id, request } = &evs[0] else { panic!("{evs:?}") };
    assert_eq!(request, &Request::Agent(AgentRequest::ProxySuccessorForward(ProxyForwardRequest(forward))));
    let successor = ProxyForwardResponse(ProxySuccessorResponse(json!({"protocolVersion": 1})));
    conductor.respond::<V1>(T0, *id, Ok(successor.clone().into())).unwrap();
    pump(&mut conductor, &mut proxy);
    let evs = events(&mut proxy);
    assert!(
        matches!(&evs[0], Event::Outcome { id, outcome: Outcome::Result(Response::Client(r)) }
            if *id == out && *r == ClientResponse::ProxySuccessorForward(successor)),
        "{evs:?}"
    );
    proxy
        .respond::<V1>(T0, init_id, Ok(InitializeProxyResponse(InitializeResponse::new(ProtocolVersion::V1)).into()))
        .unwrap();
    pump(&mut proxy, &mut conductor);
    assert!(proxy.is_ready() && conductor.is_ready());
}

#[test]
fn only_a_proxy_handshake_lets_proxy_successor_through_early() {
    let mut agent = Connection::agent(T0);
    feed(&mut agent, T0, &[&init_line("0", json!({}))]);
    assert!(matches!(agent.poll_any(), Some(Event::Request { .. })));
    let early = agent.send_request::<V1>(T0, ProxyForwardRequest(ProxySuccessorRequest::new("initialize")), None);
    assert_eq!(early.map_err(SendError::from), Err(SendError::NotInitialized));
    // A client that sent plain `initialize` refuses an early `proxy/successor` request.
    let mut client = Connection::client(T0);
    client.send_request::<V1>(T0, InitializeRequest::new(ProtocolVersion::V1), None).unwrap();
    sent(&mut client);
    feed(&mut client, T0, &[r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize"}}"#]);
    let out = sent(&mut client);
    assert_eq!((error_code(&out[0]), &out[0]["error"]["data"]["reason"]), (-32600, &json!("initialize required")));
}
