//! The official SDK's ACP v2 client (`common::sdk_v2_client`) against a scripted agent written
//! with raw `acp_proto::v2` frames (`common::wire`): every frame the SDK client sends is decoded
//! with our types and re-encoded, every frame we send is decoded with the SDK's type and
//! re-encoded, and the SDK's report says what it made of the turn. A full turn (with a wide set of
//! update kinds), cancellation (`tool_call/cancel`, then `session/cancel`), and the SDK client
//! answered version 1.

mod common;

use acp_proto::v2::envelope::{AgentNotification, AgentRequest, AgentResponse, ClientRequest};
use acp_proto::v2::{
    self, AbsolutePath, AgentCapabilities, CancelToolCallResponse, ContentBlock, Implementation, InitializeResponse,
    NewSessionResponse, PermissionOption, PermissionOptionKind, PromptResponse, ProtocolVersion,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionSubject, SessionId, SessionUpdate,
    ToolCallPermissionSubject, UpdateSessionNotification,
};
use common::sdk_v2_client::{self, Negotiated, Report, Script};
use common::wire::{FromClient, Wire, assert_differences, id};
use serde_json::{Value, json};

type Client = tokio::task::JoinHandle<agent_client_protocol::Result<Report>>;

fn connect(script: Script) -> (Wire, Client) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    (Wire::new(ours), tokio::spawn(sdk_v2_client::run(reader, writer, script)))
}

/// The next frame, which must be a request from the client.
async fn request(wire: &mut Wire) -> ClientRequest {
    match wire.next_from_client().await {
        Some(FromClient::Request(r)) => r,
        other => panic!("expected a client request, got {other:?}"),
    }
}

async fn answer(wire: &mut Wire, r: &ClientRequest, result: v2::AgentResponse) {
    let method = r.params.wire().to_owned();
    wire.agent_response(&method, AgentResponse { id: r.id.clone(), outcome: Ok(result) }).await;
}

/// Answers `initialize` (with 2) and `session/new`; the session id.
async fn open(wire: &mut Wire) -> SessionId {
    let r = request(wire).await;
    let v2::ClientRequest::Initialize(init) = &r.params else { panic!("initialize first, got {r:?}") };
    assert_eq!(init.protocol_version, ProtocolVersion(2), "the SDK v2 client offers 2");
    assert_eq!(init.info.name, sdk_v2_client::NAME);
    // Every stable capability and an auth method, so the SDK reads all of them.
    let capabilities: AgentCapabilities = typed(json!({
        "session": {"prompt": {"image": {}, "audio": {}, "embeddedContext": {}}, "mcp": {"stdio": {}, "http": {}},
                    "delete": {}, "additionalDirectories": {}},
        "auth": {}
    }));
    let auth = typed(json!([{"type": "agent", "methodId": "m-1", "name": "Log in", "description": "in the agent"}]));
    let info = Implementation::new("acp-rs-scripted", "0.1.0");
    let response = InitializeResponse {
        protocol_version: ProtocolVersion(2),
        info,
        capabilities,
        auth_methods: Some(auth),
        meta: None,
    };
    answer(wire, &r, v2::AgentResponse::Initialize(Box::new(response))).await;
    let r = request(wire).await;
    let v2::ClientRequest::NewSession(new) = &r.params else { panic!("session/new, got {r:?}") };
    assert_eq!(new.cwd, AbsolutePath("/tmp".into()));
    let session = SessionId::from("ours-1");
    let response = NewSessionResponse {
        session_id: session.clone(),
        config_options: Some(typed(json!([model_option("fast")]))),
        available_commands: Some(typed(json!([{"type": "command", "name": "plan", "description": "Make a plan",
                                                "input": {"type": "text", "hint": "what to plan"}}]))),
        meta: None,
    };
    answer(wire, &r, v2::AgentResponse::NewSession(response)).await;
    session
}

/// Decodes `value` into one of our types (the frames are then that type's encoding).
fn typed<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("our type decodes it")
}

/// A `select` config option `model` at `current`.
fn model_option(current: &str) -> Value {
    json!({"type": "select", "configId": "model", "name": "Model", "category": "model", "currentValue": current,
           "options": [{"value": "fast", "name": "Fast"}, {"value": "deep", "name": "Deep", "description": "slower"}]})
}

/// Answers `session/prompt` with `messageId` `u-1`.
async fn acknowledge(wire: &mut Wire, session: &SessionId) {
    let r = request(wire).await;
    let v2::ClientRequest::Prompt(prompt) = &r.params else { panic!("session/prompt, got {r:?}") };
    assert_eq!(&prompt.session_id, session);
    assert!(matches!(&prompt.prompt[..], [ContentBlock::Text(t)] if t.text == "turn"));
    let ack = PromptResponse { message_id: "u-1".into(), meta: None };
    answer(wire, &r, v2::AgentResponse::Prompt(ack)).await;
}

/// Sends one `session/update` of ours: `update` is decoded into our `SessionUpdate` first.
async fn update(wire: &mut Wire, session: &SessionId, update: Value) {
    let update: SessionUpdate = serde_json::from_value(update).expect("our type decodes the update");
    let params = UpdateSessionNotification { session_id: session.clone(), update, meta: None };
    wire.agent_notification(AgentNotification { params: v2::AgentNotification::SessionUpdate(params) }).await;
}

/// The updates of the full turn between `running` and the permission request: one of most kinds.
fn turn_updates() -> Vec<Value> {
    vec![
        json!({"sessionUpdate": "user_message", "messageId": "u-1", "content": [{"type": "text", "text": "turn"}]}),
        json!({"sessionUpdate": "state_update", "state": "running"}),
        json!({"sessionUpdate": "agent_thought_chunk", "messageId": "t-1", "content": {"type": "text", "text": "hmm"}}),
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "a-1", "content": {"type": "text", "text": "hel"}}),
        json!({"sessionUpdate": "agent_message", "messageId": "a-1",
               "content": [{"type": "text", "text": "hello"}], "_meta": {"x": 1}}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "title": "Edit /tmp/a", "kind": "edit",
               "status": "pending", "locations": [{"path": "/tmp/a", "line": 3}], "rawInput": {"p": "/tmp/a"},
               "capabilities": {"cancel": {}}}),
        json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "call-1",
               "content": {"type": "content", "content": {"type": "text", "text": "partial"}}}),
        json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p-1",
               "entries": [{"content": "edit", "priority": "high", "status": "in_progress"}]}}),
        json!({"sessionUpdate": "plan_update",
               "plan": {"type": "markdown", "planId": "p-2", "content": "# Plan", "path": "/tmp/PLAN.md"}}),
        json!({"sessionUpdate": "plan_removed", "planId": "p-2"}),
        json!({"sessionUpdate": "state_update", "state": "running",
               "background": [{"type": "subagent", "sessionId": "ours-2"}]}),
        json!({"sessionUpdate": "session_info_update", "title": "A title"}),
        json!({"sessionUpdate": "usage_update", "used": 10, "size": 100, "cost": {"amount": 0.5, "currency": "USD"}}),
        json!({"sessionUpdate": "notice", "severity": "warning", "title": "Careful"}),
        json!({"sessionUpdate": "config_option_update", "configOptions": [model_option("deep")]}),
        json!({"sessionUpdate": "available_commands_update", "availableCommands": [
               {"type": "command", "name": "plan", "description": "Make a plan"}]}),
    ]
}

async fn ask_permission(wire: &mut Wire, session: &SessionId) {
    let tool = serde_json::from_value(json!({"toolCallId": "call-1", "status": "pending"})).expect("a ToolCallUpdate");
    let subject = RequestPermissionSubject::ToolCall(ToolCallPermissionSubject { tool_call: tool, meta: None });
    let options = vec![
        PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
    ];
    let ask = RequestPermissionRequest {
        session_id: session.clone(),
        title: "Edit /tmp/a?".into(),
        description: None,
        subject: Some(subject),
        options,
        meta: None,
    };
    wire.agent_request(AgentRequest { id: id(100), params: v2::AgentRequest::RequestPermission(ask) }).await;
    match wire.next_from_client().await {
        Some(FromClient::Response(r)) => {
            assert_eq!(r.id, id(100));
            let Ok(v2::ClientResponse::RequestPermission(answer)) = r.outcome else {
                panic!("a permission answer: {r:?}")
            };
            let RequestPermissionOutcome::Selected(s) = answer.outcome else { panic!("selected: {answer:?}") };
            assert_eq!(s.option_id.as_str(), "allow");
        }
        other => panic!("expected the permission answer, got {other:?}"),
    }
}

fn kinds(report: &Report) -> Vec<String> {
    report.updates.iter().map(|u| u["update"]["sessionUpdate"].as_str().unwrap_or("?").to_owned()).collect()
}

#[tokio::test]
async fn sdk_v2_client_full_turn_against_our_frames() {
    let (mut wire, client) = connect(Script::Turn);
    let session = open(&mut wire).await;
    acknowledge(&mut wire, &session).await;
    let sent = turn_updates();
    for u in &sent {
        update(&mut wire, &session, u.clone()).await;
    }
    ask_permission(&mut wire, &session).await;
    let tail = [
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "completed"}),
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
    ];
    for u in &tail {
        update(&mut wire, &session, u.clone()).await;
    }
    let report = common::within("the SDK client", client).await.expect("joined").expect("the SDK client's turn");
    assert_eq!(report.negotiated, Negotiated::V2);
    assert_eq!(report.session.as_deref(), Some("ours-1"));
    assert_eq!(report.ack.as_deref(), Some("u-1"));
    // It saw every update once, in order, and stopped at the idle.
    let expected: Vec<String> =
        sent.iter().chain(&tail).map(|u| u["sessionUpdate"].as_str().unwrap_or("?").to_owned()).collect();
    assert_eq!(kinds(&report), expected);
    assert_eq!(report.updates.last().map(|u| u["update"]["stopReason"].clone()), Some(json!("end_turn")));
    assert_eq!(report.permissions.len(), 1);
    assert_eq!(report.permissions[0]["subject"]["toolCall"]["toolCallId"], "call-1");
    // The SDK client then closes its end: nothing more from it.
    assert!(wire.read().await.is_none(), "no frame after the turn");
    // The SDK (schema crate 1.17.0) keeps three of our stable v2 values only as unknown ones.
    let expected = [
        "ours→sdk session/update plan: kept as unknown (Other OtherPlanUpdateContent)",
        "ours→sdk session/update update: kept as unknown (Other OtherSessionUpdate)",
        "ours→sdk session/update background: kept as unknown (Other OtherBackgroundWork)",
    ];
    assert_differences(&wire.differences, &expected);
}

#[tokio::test]
async fn sdk_v2_client_cancels_tool_call_then_session_and_sees_cancelled_idle() {
    let (mut wire, client) = connect(Script::Cancel);
    let session = open(&mut wire).await;
    acknowledge(&mut wire, &session).await;
    update(&mut wire, &session, json!({"sessionUpdate": "state_update", "state": "running"})).await;
    let w1 = json!({"sessionUpdate": "tool_call_update", "toolCallId": "w-1", "status": "in_progress",
                    "capabilities": {"cancel": {}}});
    update(&mut wire, &session, w1).await;
    // tool_call/cancel for w-1.
    let r = request(&mut wire).await;
    let v2::ClientRequest::CancelToolCall(c) = &r.params else { panic!("tool_call/cancel, got {r:?}") };
    assert_eq!((c.session_id.as_str(), c.tool_call_id.as_str()), ("ours-1", "w-1"));
    answer(&mut wire, &r, v2::AgentResponse::CancelToolCall(CancelToolCallResponse { meta: None })).await;
    update(
        &mut wire,
        &session,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "w-1", "status": "cancelled"}),
    )
    .await;
    // Then session/cancel.
    match wire.next_from_client().await {
        Some(FromClient::Notification(n)) => {
            let v2::ClientNotification::Cancel(c) = &n.params else { panic!("session/cancel, got {n:?}") };
            assert_eq!(c.session_id, session);
        }
        other => panic!("expected session/cancel, got {other:?}"),
    }
    update(&mut wire, &session, json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}))
        .await;
    let report = common::within("the SDK client", client).await.expect("joined").expect("the SDK client's turn");
    assert_eq!(report.tool_cancel, Some(Ok(())));
    assert_eq!(kinds(&report), ["state_update", "tool_call_update", "tool_call_update", "state_update"]);
    assert_eq!(report.updates[3]["update"]["stopReason"], "cancelled");
    assert!(wire.read().await.is_none(), "no frame after the turn");
    assert_differences(&wire.differences, &[]);
}

#[tokio::test]
async fn sdk_v2_client_answered_1_reports_lower_version_and_sends_nothing_more() {
    let (mut wire, client) = connect(Script::Turn);
    let r = request(&mut wire).await;
    assert!(matches!(&r.params, v2::ClientRequest::Initialize(i) if i.protocol_version == ProtocolVersion(2)));
    // A v1 agent's answer: acp-proto's v1 InitializeResponse selecting 1.
    let v1 = acp_proto::types::InitializeResponse::new(acp_proto::types::ProtocolVersion::V1);
    let frame = json!({"jsonrpc": "2.0", "id": serde_json::to_value(&r.id).expect("id"), "result": v1});
    wire.send_json(&frame).await;
    let report = common::within("the SDK client", client).await.expect("joined").expect("the SDK client's report");
    let Negotiated::Lower { selected, then_new_session } = report.negotiated else {
        panic!("expected LowerVersion, got {:?}", report.negotiated)
    };
    assert_eq!(selected, 1);
    // The connection stays uninitialised: the SDK refuses session/new locally.
    let code = then_new_session.expect_err("no session on an uninitialised connection");
    assert_eq!(code, -32600, "the SDK's local error code");
    assert!(wire.read().await.is_none(), "the SDK sent nothing after initialize");
    assert_differences(&wire.differences, &[]);
}

/// The stable v2 session updates of crate-1.20.0 that no scenario here sends (replay belongs to
/// `session/resume`, the rest to agents with subagents), read by the SDK's
/// `UpdateSessionNotification` as the SDK client would: each is kept only as an unknown value.
#[test]
fn sdk_v2_types_keep_our_newer_stable_updates_only_as_unknown() {
    let updates = [
        json!({"sessionUpdate": "replay_complete"}),
        json!({"sessionUpdate": "subagent_update", "sessionId": "sub-1", "title": "helper",
               "capabilities": {"cancel": {}}, "state": {"state": "running"}}),
        json!({"sessionUpdate": "session_message", "messageId": "m-1", "senderSessionId": "sub-1",
               "content": [{"type": "text", "text": "hi"}]}),
        json!({"sessionUpdate": "session_message_chunk", "messageId": "m-1", "content": {"type": "text", "text": "h"}}),
        json!({"sessionUpdate": "state_update", "state": "unknown"}),
    ];
    let mut seen = Vec::new();
    for update in updates {
        let ours: UpdateSessionNotification = typed(json!({"sessionId": "ours-1", "update": update.clone()}));
        let frame = serde_json::to_value(&ours).expect("encodes");
        assert_eq!(frame["update"], update, "our type keeps every key");
        let mut found = Vec::new();
        common::wire::sdk_reads("session/update", &frame, &mut found);
        seen.push(found);
    }
    let update = "ours→sdk session/update update: kept as unknown (Other OtherSessionUpdate)";
    let state = "ours→sdk session/update StateUpdate: kept as unknown (Other OtherStateUpdate)";
    assert_eq!(seen, [vec![update], vec![update], vec![update], vec![update], vec![state]]);
    for found in &seen {
        assert_differences(found, &[found[0].as_str()]);
    }
}
