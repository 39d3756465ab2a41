//! Property tests of the core (proptest):
//!
//! * any chunking of a frame sequence yields identical events and output;
//! * every typed message encodes, decodes and encodes again to the same bytes, for each method
//!   of the table, from random schema-valid params and results;
//! * the capability gate denies exactly the gated methods a random capability set does not
//!   advertise.

use acp_proto::gate::{CapabilitySnapshot, GateDecision, check_method};
use acp_proto::methods::{Kind, METHODS};
use acp_proto::role::Agent;
use acp_proto::{Answer, Call, ClientCall, Config, Connection, Event, Instant, Notification, Request, Response, Side};
use proptest::prelude::*;
use proptests::schema_gen::{Rng, Schema};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// A frame sequence exercising every inbound path of an agent: the handshake, requests
/// (valid, invalid params, unknown, gated), notifications, responses, garbage, blank lines
/// and CRLF, with non-ASCII text so that chunk boundaries split characters.
fn agent_input() -> Vec<u8> {
    let frames = [
        json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/h\u{e9}\u{1F600}","mcpServers":[]}}).to_string(),
        json!({"jsonrpc":"2.0","id":"two","method":"session/prompt","params":{"sessionId":"s\u{2028}","prompt":[{"type":"text","text":"\u{1F600}\u{e9}x"}]}}).to_string(),
        json!({"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"s","cwd":"/","mcpServers":[]}}).to_string(),
        json!({"jsonrpc":"2.0","id":4,"method":"session/new","params":{"mcpServers":[]}}).to_string(),
        json!({"jsonrpc":"2.0","id":5,"method":"no/such"}).to_string(),
        json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}).to_string(),
        json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"two"}}).to_string(),
        json!({"jsonrpc":"2.0","id":9,"result":{}}).to_string(),
        json!({"jsonrpc":"2.0","method":"_vendor/note","params":[1,"\u{e9}"]}).to_string(),
        "not json \u{1F600}".to_owned(),
        "[1,2]".to_owned(),
    ];
    let mut out = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        out.extend_from_slice(f.as_bytes());
        out.extend_from_slice(if i % 3 == 0 { b"\r\n" } else { b"\n" });
        if i % 4 == 1 {
            out.extend_from_slice(b"\n  \n");
        }
    }
    out
}

/// An agent that has completed the handshake (the application's timing must not depend on
/// the chunking, so it answers `initialize` before the chunked input starts).
fn ready_agent() -> Connection<Agent> {
    let mut conn = Connection::new(Config::default(), Instant::ZERO);
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}});
    let line = format!("{init}\n");
    assert_eq!(conn.handle_input(Instant::ZERO, line.as_bytes()), line.len());
    let Some(Event::Request(request)) = conn.poll_event() else { panic!("initialize dispatched") };
    let Call::Client(ClientCall::Initialize(_, responder)) = request.into_call() else { panic!("initialize") };
    let r = acp_proto::types::InitializeResponse::new(acp_proto::types::ProtocolVersion::V1);
    conn.respond(Instant::ZERO, responder.answer(Ok(r))).unwrap();
    while conn.poll_event().is_some() {}
    let _ = conn.poll_transmit(&mut Vec::new());
    conn
}

/// Feeds `input` to a ready agent split at `cuts` (offsets, any order), then the end of input,
/// and answers the requests it is still owed (the end of input is a half-close: the
/// connection closes once they have their answer); returns every event (debug-printed) and
/// every output byte.
fn run_chunked(input: &[u8], cuts: &[usize]) -> (Vec<String>, Vec<u8>) {
    let mut conn = ready_agent();
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    bounds.push(0);
    bounds.push(input.len());
    bounds.sort_unstable();
    bounds.dedup();
    let (mut events, mut requests, mut out) = (Vec::new(), Vec::new(), Vec::new());
    let mut take = |conn: &mut Connection<Agent>, events: &mut Vec<String>| {
        while let Some(event) = conn.poll_event() {
            if let Event::Request(request) = &event {
                requests.push(request.id());
            }
            events.push(format!("{event:?}"));
        }
    };
    for w in bounds.windows(2) {
        let mut chunk = &input[w[0]..w[1]];
        while !chunk.is_empty() {
            let n = conn.handle_input(Instant::ZERO, chunk);
            chunk = &chunk[n..];
            take(&mut conn, &mut events);
            let _ = conn.poll_transmit(&mut out);
        }
    }
    conn.handle_eof(Instant::ZERO);
    take(&mut conn, &mut events);
    for id in requests {
        let _ = conn.respond(Instant::ZERO, Answer::error(id, acp_proto::RpcError::request_cancelled()));
    }
    events.extend(std::iter::from_fn(|| conn.poll_event()).map(|e| format!("{e:?}")));
    let _ = conn.poll_transmit(&mut out);
    (events, out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_chunking_yields_identical_events(cuts in proptest::collection::vec(any::<usize>(), 0..40)) {
        let input = agent_input();
        let whole = run_chunked(&input, &[]);
        prop_assert!(whole.0.len() > 5, "the scenario produces events: {:?}", whole.0);
        prop_assert_eq!(run_chunked(&input, &cuts), whole);
    }

    #[test]
    fn the_gate_denies_exactly_what_is_not_advertised(
        load in any::<bool>(), list in any::<bool>(), delete in any::<bool>(), resume in any::<bool>(),
        close in any::<bool>(), logout in any::<bool>(), read in any::<bool>(), write in any::<bool>(),
        terminal in any::<bool>(), elicitation in any::<bool>(), url in any::<bool>(), junk in 0u8..4,
    ) {
        // A capability counts only as literally `true` or a present object; sprinkle
        // look-alikes that must not count.
        let fake = |on: bool| if on { json!(true) } else { [json!(false), json!("true"), json!(1), Value::Null][junk as usize].clone() };
        let obj = |on: bool| if on { json!({}) } else { [json!(null), json!(false), json!("x"), json!(null)][junk as usize].clone() };
        let agent = CapabilitySnapshot::from_json(json!({
            "loadSession": fake(load),
            "sessionCapabilities": {"list": obj(list), "delete": obj(delete), "resume": obj(resume), "close": obj(close)},
            "auth": {"logout": obj(logout)},
        }));
        let client = CapabilitySnapshot::from_json(json!({
            "fs": {"readTextFile": fake(read), "writeTextFile": fake(write)},
            "terminal": fake(terminal),
            "elicitation": if elicitation { json!({"url": obj(url)}) } else { obj(false) },
        }));
        for row in METHODS {
            let (snapshot, advertised) = match row.wire {
                "session/load" => (&agent, load),
                "session/list" => (&agent, list),
                "session/delete" => (&agent, delete),
                "session/resume" => (&agent, resume),
                "session/close" => (&agent, close),
                "logout" => (&agent, logout),
                "fs/read_text_file" => (&client, read),
                "fs/write_text_file" => (&client, write),
                w if w.starts_with("terminal/") => (&client, terminal),
                "elicitation/create" => (&client, elicitation),
                "elicitation/complete" => (&client, elicitation && url),
                // Every other row: allowed exactly when it has no gate, since the snapshots
                // advertise none of the other capabilities (the unstable rows' gates included).
                _ => (&agent, row.gate.is_empty()),
            };
            let decision = check_method(Some(snapshot), row.method);
            prop_assert_eq!(decision == GateDecision::Allowed, advertised, "{}", row.wire);
        }
    }
}

/// Every method's params (and result) from random schema-valid instances: decode through the
/// method table, encode, decode again, encode again: the two encodings are equal.
#[test]
fn typed_messages_round_trip_through_the_table() {
    let dir = proptests::spec::spec_dir("typed_messages_round_trip_through_the_table");
    // With `unstable`, the table has the unstable rows too: their definitions are in
    // `schema.unstable.json` (a superset of `schema.json`).
    let file = if cfg!(feature = "unstable") { "schema.unstable.json" } else { "schema.json" };
    let schema = Schema::new(proptests::spec::read_json(&dir, file));
    let mut rng = Rng::new(0x5eed_0001);
    let mut checked = 0;
    for row in METHODS {
        let receiver = if row.received_by(Side::Agent) { Side::Agent } else { Side::Client };
        for _ in 0..100 {
            let params = schema.generate(proptests::oracle_unstable::schema_name(row.params), &mut rng);
            let text = params.to_string();
            let raw = RawValue::from_string(text.clone()).unwrap();
            let encode_params = |raw: &RawValue| -> String {
                match row.kind {
                    Kind::Request => serde_json::to_string(&Request::decode(receiver, row.wire, Some(raw)).unwrap()),
                    Kind::Notification if row.wire == "$/cancel_request" => serde_json::to_string(
                        &serde_json::from_str::<acp_proto::types::CancelRequestNotification>(raw.get()).unwrap(),
                    ),
                    Kind::Notification => {
                        serde_json::to_string(&Notification::decode(receiver, row.wire, Some(raw)).unwrap())
                    }
                }
                .unwrap()
            };
            let first = encode_params(&raw);
            let second = encode_params(&RawValue::from_string(first.clone()).unwrap());
            assert_eq!(first, second, "{}: {text}", row.wire);
            checked += 1;
            if let Some(result_def) = row.result {
                let result = schema.generate(proptests::oracle_unstable::schema_name(result_def), &mut rng);
                let raw = RawValue::from_string(result.to_string()).unwrap();
                let requester = receiver.peer();
                let encode = |raw: &RawValue| {
                    serde_json::to_string(&Response::decode_result(requester, Some(row.method), raw).unwrap()).unwrap()
                };
                let first = encode(&raw);
                let second = encode(&RawValue::from_string(first.clone()).unwrap());
                assert_eq!(first, second, "{} result: {result}", row.wire);
                checked += 1;
            }
        }
    }
    println!("typed messages: {checked} params and results round-tripped through the method table");
}
