//! [`ClientServices`] end to end: wire params in, wire results out.

use crate::common;

use acp_proto::AgentRequest;
use acp_proto::types::RequestPermissionRequest;
use acp_services::{ClientServices, FsSandbox, TerminalConfig, Terminals};
use common::TempDir;
use serde_json::{Value, json};

/// Decodes `params` as the agent's `method` request, as a connection would, and answers it.
fn call(services: &ClientServices, method: &str, params: Value) -> Option<Result<Value, Value>> {
    let raw = serde_json::value::to_raw_value(&params).unwrap();
    let request = AgentRequest::decode(method, Some(&raw)).unwrap();
    let answer = services.handle(&request)?;
    Some(match answer {
        Ok(result) => Ok(serde_json::to_value(result).unwrap()),
        Err(error) => Err(serde_json::to_value(error).unwrap()),
    })
}

#[test]
fn capabilities_advertise_exactly_what_is_served() {
    let dir = TempDir::new("svc-caps");
    let full = ClientServices::new()
        .with_fs(FsSandbox::new([dir.path()]).unwrap())
        .with_terminals(Terminals::new(TerminalConfig::new([dir.path()])).unwrap());
    assert_eq!(
        serde_json::to_value(full.capabilities()).unwrap(),
        json!({"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true})
    );
    let none = ClientServices::new();
    let refused = call(&none, "terminal/create", json!({"sessionId": "s", "command": "true"})).unwrap();
    assert_eq!(refused.unwrap_err()["code"], -32601);
}

#[test]
fn fs_requests_on_the_wire() {
    let dir = TempDir::new("svc-fs");
    let services = ClientServices::new().with_fs(FsSandbox::new([dir.path()]).unwrap());
    let path = dir.join("config.json");
    let wrote = call(&services, "fs/write_text_file", json!({"sessionId": "s", "path": path, "content": "{\n}\n"}));
    assert_eq!(wrote.unwrap().unwrap(), json!({}));
    let read = call(&services, "fs/read_text_file", json!({"sessionId": "s", "path": path, "line": 2, "limit": 5}));
    assert_eq!(read.unwrap().unwrap(), json!({"content": "}\n"}));
    let escape = call(&services, "fs/read_text_file", json!({"sessionId": "s", "path": dir.join("../etc/passwd")}));
    let error = escape.unwrap().unwrap_err();
    assert_eq!(error["code"], -32602);
    assert_eq!(error["message"], "Invalid params");
    assert_eq!(error["data"]["kind"], "path_traversal");
    assert!(error["data"]["reason"].as_str().unwrap().contains("leaves the allowed roots"));
    let missing = call(&services, "fs/read_text_file", json!({"sessionId": "s", "path": dir.join("nope")}));
    let error = missing.unwrap().unwrap_err();
    assert_eq!((error["code"].clone(), error["data"]["kind"].clone()), (json!(-32002), json!("not_found")));
}

#[test]
fn other_requests_are_left_to_the_client() {
    let services = ClientServices::new();
    let permission: RequestPermissionRequest = serde_json::from_value(json!({
        "sessionId": "s",
        "toolCall": {"toolCallId": "c"},
        "options": []
    }))
    .unwrap();
    assert!(services.handle(&AgentRequest::RequestPermission(permission)).is_none());
}

#[cfg(unix)]
#[test]
fn a_terminal_on_the_wire() {
    let dir = TempDir::new("svc-term");
    let services = ClientServices::new().with_terminals(Terminals::new(TerminalConfig::new([dir.path()])).unwrap());
    let created = call(
        &services,
        "terminal/create",
        json!({"sessionId": "s", "command": "sh", "args": ["-c", "echo \"$X\"; exit 7"],
               "env": [{"name": "X", "value": "wire"}], "cwd": dir.path(), "outputByteLimit": 1048576}),
    )
    .unwrap()
    .unwrap();
    let id = json!({"sessionId": "s", "terminalId": created["terminalId"]});
    let exit = call(&services, "terminal/wait_for_exit", id.clone()).unwrap().unwrap();
    assert_eq!(exit, json!({"exitCode": 7}));
    let output = call(&services, "terminal/output", id.clone()).unwrap().unwrap();
    assert_eq!(output, json!({"output": "wire\n", "truncated": false, "exitStatus": {"exitCode": 7}}));
    assert_eq!(call(&services, "terminal/kill", id.clone()).unwrap().unwrap(), json!({}));
    assert_eq!(call(&services, "terminal/release", id.clone()).unwrap().unwrap(), json!({}));
    let gone = call(&services, "terminal/output", id).unwrap().unwrap_err();
    assert_eq!(gone["code"], -32002);
}
