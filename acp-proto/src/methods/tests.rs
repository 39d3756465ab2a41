use std::collections::BTreeSet;

use serde_json::Value;
use serde_json::value::RawValue;

use super::*;
use crate::Side;
use crate::spec::{read_json, spec_dir};

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

#[test]
fn table_equals_meta_json() {
    let dir = spec_dir("table_equals_meta_json");
    let meta = read_json(&dir, "meta.json");
    let wires = |key: &str| -> BTreeSet<String> {
        meta[key].as_object().unwrap().values().map(|v| v.as_str().unwrap().to_owned()).collect()
    };
    let rows = |dir: Direction| -> BTreeSet<String> {
        METHODS.iter().filter(|r| r.direction == dir).map(|r| r.wire.to_owned()).collect()
    };
    assert_eq!(rows(Direction::ClientToAgent), wires("agentMethods"), "methods the agent handles");
    assert_eq!(rows(Direction::AgentToClient), wires("clientMethods"), "methods the client handles");
    assert_eq!(rows(Direction::Both), wires("protocolMethods"), "protocol methods");
    assert_eq!(METHODS.len(), 25);
    println!("method table: {} rows equal meta.json", METHODS.len());
}

/// The schema names each method's params and result types with `x-method` and `x-side`.
#[test]
fn row_types_are_the_schema_types() {
    let dir = spec_dir("row_types_are_the_schema_types");
    let schema = read_json(&dir, "schema.json");
    let defs = schema["$defs"].as_object().unwrap();
    for row in METHODS {
        let named: Vec<&String> = defs
            .iter()
            .filter(|(_, d)| d.get("x-method").and_then(Value::as_str) == Some(row.wire))
            .map(|(name, _)| name)
            .collect();
        let params = named
            .iter()
            .find(|n| !n.ends_with("Response"))
            .unwrap_or_else(|| panic!("{}: no params type in schema", row.wire));
        assert_eq!(row.params, params.as_str(), "{}", row.wire);
        let result = named.iter().find(|n| n.ends_with("Response")).map(|s| s.as_str());
        assert_eq!(row.result, result, "{}", row.wire);
        // x-side names the side that handles the method.
        let side = defs[row.params]["x-side"].as_str().unwrap();
        let expected = match row.direction {
            Direction::ClientToAgent => "agent",
            Direction::AgentToClient => "client",
            Direction::Both => "protocol",
        };
        assert_eq!(side, expected, "{}", row.wire);
    }
}

/// Every gate path names a real field of the receiver's capability definition (following
/// `$ref`s), whose final value is a boolean or a capability object.
#[test]
fn gate_paths_resolve_to_capability_fields() {
    let dir = spec_dir("gate_paths_resolve_to_capability_fields");
    let schema = read_json(&dir, "schema.json");
    let defs = &schema["$defs"];
    let resolve = |node: &Value| -> Value {
        let mut node = node.clone();
        loop {
            let r = node
                .get("$ref")
                .or_else(|| node.get("allOf").and_then(|a| a[0].get("$ref")))
                .or_else(|| node.get("anyOf").and_then(|a| a[0].get("$ref")))
                .and_then(Value::as_str)
                .map(str::to_owned);
            match r {
                Some(r) => node = defs[r.trim_start_matches("#/$defs/")].clone(),
                None => return node,
            }
        }
    };
    let mut checked = 0;
    for row in METHODS.iter().filter(|r| !r.gate.is_empty()) {
        let root = match row.direction {
            Direction::ClientToAgent => "AgentCapabilities",
            Direction::AgentToClient => "ClientCapabilities",
            Direction::Both => panic!("protocol rows are never gated"),
        };
        let mut node = defs[root].clone();
        for (i, seg) in row.gate.iter().enumerate() {
            let field = node["properties"]
                .get(*seg)
                .unwrap_or_else(|| panic!("{}: `{seg}` is not a field of {root} path", row.wire));
            node = resolve(field);
            if i + 1 == row.gate.len() {
                let leaf_ok = node["type"] == "boolean" || node["type"] == "object";
                assert!(leaf_ok, "{}: gate leaf is {node}", row.wire);
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 15);
}

#[test]
fn method_index_matches_table() {
    for (i, m) in Method::ALL.iter().enumerate() {
        assert_eq!(*m as usize, i);
        assert_eq!(m.row().method, *m);
        assert_eq!(Method::from_wire(m.wire()), Some(*m));
    }
    assert_eq!(Method::from_wire("nope"), None);
    assert!(Method::Initialize.row().received_by(Side::Agent));
    assert!(!Method::Initialize.row().received_by(Side::Client));
    assert!(Method::CancelRequest.row().received_by(Side::Client));
}

#[test]
fn decode_by_side() {
    let p = raw(r#"{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}"#);
    let req = Request::decode(Side::Agent, "session/prompt", Some(&p)).unwrap();
    assert_eq!(req.method(), Some(Method::Prompt));
    assert_eq!(req.session_id().map(SessionId::as_str), Some("s1"));
    // The client does not handle session/prompt.
    assert_eq!(
        Request::decode(Side::Client, "session/prompt", Some(&p)),
        Err(DecodeError::UnknownMethod("session/prompt".into()))
    );
    let bad = raw(r#"{"prompt":[]}"#);
    match Request::decode(Side::Agent, "session/prompt", Some(&bad)) {
        Err(DecodeError::Invalid(reason)) => assert!(reason.contains("sessionId"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // Absent params decode as {} (all fields of LogoutRequest are optional).
    assert!(matches!(Request::decode(Side::Agent, "logout", None), Ok(Request::Client(ClientRequest::Logout(_)))));
}

#[test]
fn extensions_pass_through_raw() {
    let p = raw(r#"{"language":"rust","n":[1,2]}"#);
    let req = ClientRequest::decode("_zed.dev/workspace/buffers", Some(&p)).unwrap();
    assert_eq!(req.method(), None);
    assert_eq!(req.wire(), "_zed.dev/workspace/buffers");
    assert_eq!(serde_json::to_string(&req).unwrap(), r#"{"language":"rust","n":[1,2]}"#);
    let bare = AgentNotification::decode("_x", None).unwrap();
    assert!(!bare.has_params());
    let res = AgentResponse::decode_result(None, &raw(r#"[1,"a"]"#)).unwrap();
    assert_eq!(serde_json::to_string(&res).unwrap(), r#"[1,"a"]"#);
}

#[test]
fn results_decode_by_the_requested_method() {
    let r = raw(r#"{"stopReason":"end_turn"}"#);
    let res = Response::decode_result(Side::Client, Some(Method::Prompt), &r).unwrap();
    assert_eq!(res.method(), Some(Method::Prompt));
    assert_eq!(serde_json::to_string(&res).unwrap(), r#"{"stopReason":"end_turn"}"#);
    // A null result reads as {} for results without required fields.
    assert!(ClientResponse::decode_result(Some(Method::WriteTextFile), &raw("null")).is_ok());
    assert!(ClientResponse::decode_result(Some(Method::ReadTextFile), &raw("null")).is_err());
    // A method of the other side is refused.
    assert!(ClientResponse::decode_result(Some(Method::Prompt), &r).is_err());
}
