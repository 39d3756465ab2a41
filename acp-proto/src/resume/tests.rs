//! One test per rule of the module docs, and the stamping against a full re-encode.

use serde_json::{Value, json};

use super::*;
use crate::observer::Observer;

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).expect("json")
}

#[test]
fn rule_1_the_cursor_goes_into_each_envelopes_meta_keeping_what_is_there() {
    let text = r#"{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{}},"_meta":{"x":1}}"#;
    let stamped = parsed(&with_cursor(text, 7));
    assert_eq!(stamped["_meta"], json!({"x": 1, "acp/cursor": "7"}));
    assert_eq!(stamped["params"], json!({"_meta": {}}), "a nested _meta is not the envelope's");
    let none = parsed(&with_cursor(r#" { "id" : 1, "result" : {} } "#, 8));
    assert_eq!(none, json!({"id": 1, "result": {}, "_meta": {"acp/cursor": "8"}}));
    assert_eq!(parsed(&with_cursor("{}", 1)), json!({"_meta": {"acp/cursor": "1"}}));
    // An agent's own cursor is replaced, never doubled.
    let own = parsed(&with_cursor(r#"{"id":1,"result":{},"_meta":{"acp/cursor":"x"}}"#, 2));
    assert_eq!(own["_meta"], json!({"acp/cursor": "2"}));
    let batch = parsed(&with_cursor(r#"[{"id":1,"result":{}}, 3, {"method":"m","_meta":{"y":2}}]"#, 9));
    assert_eq!(
        batch,
        json!([{"id": 1, "result": {}, "_meta": {"acp/cursor": "9"}}, 3, {"method": "m", "_meta": {"y": 2, "acp/cursor": "9"}}])
    );
    for unchanged in ["not json", "3", r#"{"_meta":null,"id":1}"#, "[1,", r#"{"a":1,"a":2,"_meta":{},"_meta":{}}"#] {
        assert_eq!(with_cursor(unchanged, 4), unchanged);
    }
    assert_eq!(cursor_of(&with_cursor(r#"{"id":1,"result":{}}"#, 5)).as_deref(), Some("5"));
    assert_eq!(cursor_of(r#"{"id":1,"result":{"_meta":{"acp/cursor":"7"}}}"#), None);
    assert_eq!(cursor_of(r#"[{"_meta":{"acp/cursor":"8"}},{"_meta":{"acp/cursor":"9"}},3]"#).as_deref(), Some("9"));
    assert_eq!(cursor_of("not json"), None);
}

#[test]
fn rule_1_stamping_the_text_equals_stamping_the_parsed_message() {
    let frames = [
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"text":"é\n\"}"}}}"#,
        r#"{"jsonrpc":"2.0","id":"a","result":{"stopReason":"end_turn"},"_meta":{"k":[1,{"_meta":2}]}}"#,
        r#"  {"_meta":{},"id":3,"error":{"code":-32603,"message":"x"}}"#,
        r#"[{"id":1,"result":null},{"method":"x","params":[]}]"#,
    ];
    for frame in frames {
        let mut expected = parsed(frame);
        let put = |message: &mut Value| {
            if let Value::Object(envelope) = message {
                let meta = envelope.entry("_meta").or_insert_with(|| json!({}));
                meta["acp/cursor"] = json!("11");
            }
        };
        match &mut expected {
            Value::Array(batch) => batch.iter_mut().for_each(put),
            message => put(message),
        }
        assert_eq!(parsed(&with_cursor(frame, 11)), expected, "{frame}");
    }
}

#[test]
fn rule_2_a_resume_names_its_cursor_as_a_string_or_an_integer() {
    let request = r#"{"jsonrpc":"2.0","id":5,"method":"stream/resume","params":{"cursor":"12"}}"#;
    assert_eq!(ResumeRequest::read(request), Some(ResumeRequest::new("12").with_id(5)));
    let notification = r#"{"jsonrpc":"2.0","method":"stream/resume","params":{"cursor":3}}"#;
    assert_eq!(ResumeRequest::read(notification), Some(ResumeRequest::new("3")));
    for refused in [
        r#"{"jsonrpc":"2.0","method":"initialize","params":{"cursor":"1"}}"#,
        r#"{"jsonrpc":"2.0","method":"stream/resume","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"stream/resume","params":{"cursor":1.5}}"#,
        r#"{"jsonrpc":"2.0","method":"stream/resume","params":{"cursor":null}}"#,
        r#"{"jsonrpc":"2.0","id":[1],"method":"stream/resume","params":{"cursor":"1"}}"#,
        "stream/resume",
    ] {
        assert_eq!(ResumeRequest::read(refused), None, "{refused}");
    }
    let request = ResumeRequest::new("9").with_id("acp/resume");
    assert_eq!(
        parsed(&request.to_frame()),
        json!({"jsonrpc": "2.0", "id": "acp/resume", "method": "stream/resume", "params": {"cursor": "9"}})
    );
    assert_eq!(ResumeRequest::read(&request.to_frame()), Some(request));
}

#[test]
fn rule_3_the_answer_says_what_arrived_and_a_refusal_says_why() {
    let id = RequestId::from("acp/resume");
    let answer = r#"{"jsonrpc":"2.0","id":"acp/resume","result":{"_meta":{"acp/received":4}}}"#;
    assert_eq!(ResumeAnswer::read(answer, &id), Ok(ResumeAnswer { received: 4, turns: Vec::new() }));
    let answer = r#"{"jsonrpc":"2.0","id":"acp/resume","result":{"_meta":{"acp/received":4,
        "acp/turnState":{"s":{"state":"running","promptRequestId":3}}}}}"#;
    let turns = ResumeAnswer::read(answer, &id).expect("an answer").turns;
    assert_eq!((turns[0].session.as_str(), turns[0].prompt_request_id.as_deref()), ("s", Some("3")));
    assert_eq!(ResumeAnswer::read(&resume_failed("gone"), &id), Err("the server refused to resume: gone".to_owned()));
    assert!(ResumeAnswer::read(r#"{"jsonrpc":"2.0","id":"acp/resume","result":{}}"#, &id).is_err());
    assert!(
        ResumeAnswer::read(r#"{"jsonrpc":"2.0","id":"other","result":{"_meta":{"acp/received":1}}}"#, &id).is_err()
    );
    assert!(ResumeAnswer::read(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#, &id).is_err());
    // What a server writes, a client reads back whole.
    let mut running = ResumedTurn::new("a", "running");
    running.prompt_request_id = Some(r#""p-1""#.to_owned());
    let answer = ResumeAnswer { received: 2, turns: vec![running, ResumedTurn::new("b", "idle")] };
    assert_eq!(ResumeAnswer::read(&answer.to_frame(&id), &id), Ok(answer));
}

#[test]
fn rule_4_turn_states_come_from_the_observer_and_a_peers_map_is_bounded() {
    let mut observer = Observer::new();
    let frames = [
        (Side::Client, r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#),
        (Side::Agent, r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"busy"}}"#),
        (Side::Client, r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#),
        (Side::Agent, r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"calm"}}"#),
        (
            Side::Client,
            r#"{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"busy","prompt":[]}}"#,
        ),
    ];
    for (from, frame) in frames {
        observer.observe(from, frame.as_bytes());
    }
    let turns = turn_states(&observer);
    let mut busy = ResumedTurn::new("busy", "running");
    busy.prompt_request_id = Some(r#""p""#.to_owned());
    assert_eq!(turns, [busy, ResumedTurn::new("calm", "idle")]);
    assert_eq!(read_turn_states(&turn_state_json(&turns)), turns);

    let many: Map<String, Value> = (0..100).map(|n| (format!("s{n:03}"), json!({}))).collect();
    let read = read_turn_states(&Value::Object(many).to_string());
    assert_eq!(read.len(), MAX_TURNS);
    assert_eq!(read[0], ResumedTurn::new("s000", "unknown"));
    assert_eq!(read_turn_states("[1]"), []);
}

#[test]
fn rule_5_the_retention_is_advertised_in_a_successful_initialize_answer_only() {
    let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"_meta":{"k":1}}}}"#;
    let answer = parsed(&advertise(ok, 8, 30).expect("a successful answer"));
    let caps = &answer["result"]["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["_meta"]["k"], 1);
    assert_eq!(caps["_meta"]["acp/transport"], json!({"resumable": {"retentionMessages": 8, "retentionSeconds": 30}}));
    assert_eq!(advertise(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}"#, 8, 30), None);
    assert_eq!(advertise(r#"{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{"_meta":[]}}}"#, 8, 30), None);
}

#[test]
fn rule_6_no_reader_panics_on_arbitrary_text() {
    let id = RequestId::from(1);
    for text in ["", "[", "{", "[[]]", "{\"_meta\":", "\u{feff}{}", "[{\"_meta\":[]}]", "{\"id\":1,\"result\":[]}"] {
        let _ = (with_cursor(text, 1), cursor_of(text), ResumeRequest::read(text), read_turn_states(text));
        let _ = ResumeAnswer::read(text, &id);
    }
}
