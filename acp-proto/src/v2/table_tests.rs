//! The v2 method table against `spec/crate-1.20.0/v2/meta.json` and `schema.json`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::envelope;
use super::*;
use crate::methods::{Direction, Kind};
use crate::spec::{read_json, vendored};

fn v2_dir() -> std::path::PathBuf {
    vendored().join("crate-1.20.0/v2")
}

/// `meta.json`'s `{group: {wire: name}}` and the table's, grouped the same way.
#[test]
fn v2_table_equals_meta_json() {
    let meta = read_json(&v2_dir(), "meta.json");
    assert_eq!(meta["version"], json!(2));
    let mut expected: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for group in ["agentMethods", "clientMethods", "protocolMethods"] {
        let mut wires: Vec<String> =
            meta[group].as_object().expect("a method group").values().map(|v| v.as_str().unwrap().to_owned()).collect();
        wires.sort();
        expected.insert(group, wires);
    }
    let mut actual: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for row in METHODS {
        let group = match row.direction {
            Direction::ClientToAgent => "agentMethods",
            Direction::AgentToClient => "clientMethods",
            Direction::Both => "protocolMethods",
        };
        actual.entry(group).or_default().push(row.wire.to_owned());
    }
    actual.values_mut().for_each(|v| v.sort());
    assert_eq!(actual, expected);
    assert_eq!(METHODS.len(), 18);
    println!("method table (v2): {} rows equal meta.json", METHODS.len());
}

/// Each row's params and result are the schema's definitions for that method and side
/// (`x-method`, `x-side`), and a row is a notification exactly when it has no result.
#[test]
fn v2_rows_match_the_schema_definitions() {
    let schema = read_json(&v2_dir(), "schema.json");
    let defs = schema["$defs"].as_object().expect("$defs");
    // Sorted: the order of `$defs` is serde_json's, which a workspace build with
    // `preserve_order` turned on by another crate changes.
    let by_method = |wire: &str, side: &str| -> Vec<&str> {
        let mut names: Vec<&str> = defs
            .iter()
            .filter(|(_, d)| d["x-method"] == json!(wire) && d["x-side"] == json!(side))
            .map(|(k, _)| k.as_str())
            .collect();
        names.sort();
        names
    };
    for row in METHODS {
        assert_eq!(Method::from_wire(row.wire), Some(row.method));
        assert_eq!(row.method.wire(), row.wire);
        let receiver = match row.direction {
            Direction::ClientToAgent => "agent",
            Direction::AgentToClient => "client",
            Direction::Both => "protocol",
        };
        let mut want = vec![row.params];
        want.extend(row.result);
        want.sort();
        assert_eq!(by_method(row.wire, receiver), want, "{}", row.wire);
        assert_eq!(row.kind == Kind::Request, row.result.is_some(), "{}", row.wire);
    }
}

#[test]
fn envelopes_type_params_by_method_and_keep_extensions() {
    let prompt = json!({"id": 3, "method": "session/prompt",
        "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}});
    let req: envelope::ClientRequest = serde_json::from_value(prompt.clone()).unwrap();
    assert!(matches!(req.params, ClientRequest::Prompt(_)));
    assert_eq!(serde_json::to_value(&req).unwrap(), prompt);

    let ext = json!({"method": "_acme/ping"});
    let n: envelope::AgentNotification = serde_json::from_value(ext.clone()).unwrap();
    assert_eq!(n.params.wire(), "_acme/ping");
    assert_eq!(serde_json::to_value(&n).unwrap(), ext, "no params stays no params");

    let resp =
        envelope::AgentResponse::decode(json!({"id": 3, "result": {"messageId": "m"}}), "session/prompt").unwrap();
    assert!(matches!(resp.outcome, Ok(AgentResponse::Prompt(_))));
    let err = json!({"id": 3, "error": {"code": -32002, "message": "gone", "data": {"sessionId": "s"}}});
    let resp = envelope::AgentResponse::decode(err.clone(), "session/prompt").unwrap();
    assert_eq!(serde_json::to_value(&resp).unwrap(), err);
    assert!(envelope::AgentResponse::decode(json!({"id": 3}), "session/prompt").is_err());
    assert!(envelope::AgentResponse::decode(Value::Null, "session/prompt").is_err());

    // v1 methods gone from v2 are plain extensions here: not decoded, kept verbatim.
    let load: envelope::ClientRequest =
        serde_json::from_value(json!({"id": 1, "method": "session/load", "params": {}})).unwrap();
    assert!(matches!(load.params, ClientRequest::Ext(_)));
}

/// `Request::turn_session`: a permission ask's session, a session-scoped elicitation's session;
/// not a request-scoped elicitation, nor a client request.
#[test]
fn turn_session_of_agent_requests() {
    fn of<T: serde::de::DeserializeOwned + Into<Request>>(v: Value) -> Request {
        serde_json::from_value::<T>(v).expect("v2").into()
    }
    let ask = of::<RequestPermissionRequest>(json!({"sessionId": "s1", "title": "go?",
        "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]}));
    assert_eq!(ask.turn_session().map(SessionId::as_str), Some("s1"));
    let form = of::<CreateElicitationRequest>(json!({"mode": "form", "message": "m", "sessionId": "s2",
        "requestedSchema": {"type": "object", "properties": {}}}));
    assert_eq!(form.turn_session().map(SessionId::as_str), Some("s2"));
    assert_eq!(form.session_id(), None, "session_id names only the requests that carry one");
    let url = of::<CreateElicitationRequest>(json!({"mode": "url", "message": "m", "requestId": 1,
        "elicitationId": "e", "url": "https://x.y/"}));
    assert_eq!(url.turn_session(), None);
    let prompt = of::<PromptRequest>(json!({"sessionId": "s3", "prompt": []}));
    assert_eq!(prompt.turn_session(), None);
}
