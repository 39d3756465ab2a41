use serde_json::json;

use super::*;
use crate::v1::{ElicitationPropertySchema, StringPropertySchema};

#[test]
fn form_request_round_trips_with_its_scope_beside_the_mode() {
    let schema = ElicitationSchema::new().field(
        "name",
        ElicitationPropertySchema::String(StringPropertySchema { title: Some("Name".into()), ..Default::default() }),
        true,
    );
    let req = CreateElicitationRequest::form("Who are you?", "s1", schema);
    let v = serde_json::to_value(&req).unwrap();
    assert_eq!(
        v,
        json!({
            "message": "Who are you?", "mode": "form", "sessionId": "s1",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string", "title": "Name"}},
                                "required": ["name"]}
        })
    );
    assert_eq!(serde_json::from_value::<CreateElicitationRequest>(v).unwrap(), req);
    assert_eq!(req.session_id().map(|s| s.as_str()), Some("s1"));
}

#[test]
fn url_request_with_a_request_scope() {
    let v = json!({"message": "m", "mode": "url", "elicitationId": "e1", "url": "https://x", "requestId": 7});
    let req: CreateElicitationRequest = serde_json::from_value(v.clone()).unwrap();
    match &req.mode {
        ElicitationMode::Url(u) => {
            assert_eq!(u.elicitation_id.as_str(), "e1");
            assert_eq!(
                u.scope,
                ElicitationScope::Request(ElicitationRequestScope { request_id: RequestId::Number(7) })
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(serde_json::to_value(&req).unwrap(), v);
    assert_eq!(req.session_id(), None);
}

#[test]
fn unknown_modes_and_actions_round_trip_whole() {
    let v = json!({"message": "m", "mode": "_vendor_qr", "sessionId": "s", "payload": [1, {"a": null}]});
    let req: CreateElicitationRequest = serde_json::from_value(v.clone()).unwrap();
    assert!(matches!(&req.mode, ElicitationMode::Unknown(u) if u.tag("mode") == Some("_vendor_qr")));
    assert_eq!(serde_json::to_value(&req).unwrap(), v);
    let v = json!({"action": "snooze", "until": 5, "_meta": {"k": 1}});
    let resp: CreateElicitationResponse = serde_json::from_value(v.clone()).unwrap();
    assert!(matches!(resp.action, ElicitationAction::Unknown(_)));
    assert_eq!(serde_json::to_value(&resp).unwrap(), v);
}

#[test]
fn responses_and_content_values() {
    let v = json!({"action": "accept", "content": {"n": 3, "x": 1.5, "s": "a", "b": true, "l": ["p", "q"]}});
    let resp: CreateElicitationResponse = serde_json::from_value(v.clone()).unwrap();
    let ElicitationAction::Accept(a) = &resp.action else { panic!("{resp:?}") };
    let content = a.content.as_ref().unwrap();
    assert_eq!(content["n"], ElicitationContentValue::Integer(3));
    assert_eq!(content["x"], ElicitationContentValue::Number(1.5));
    assert_eq!(content["l"], ElicitationContentValue::StringArray(vec!["p".into(), "q".into()]));
    assert_eq!(serde_json::to_value(&resp).unwrap(), v);
    assert_eq!(serde_json::to_value(CreateElicitationResponse::decline()).unwrap(), json!({"action": "decline"}));
    assert!(
        serde_json::from_value::<CreateElicitationResponse>(json!({"action": "accept", "content": {"o": {}}})).is_err()
    );
}

#[test]
fn capabilities_count_only_objects() {
    let caps: ElicitationCapabilities = serde_json::from_value(json!({"form": {}, "url": true})).unwrap();
    assert!(caps.form.is_some());
    assert!(caps.url.is_none());
}
