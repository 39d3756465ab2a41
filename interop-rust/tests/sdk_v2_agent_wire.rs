//! The official SDK's ACP v2 agent (`common::sdk_v2_agent`) driven over a pipe by frames our
//! side builds from `acp_proto::v2` types; every frame it sends is decoded with our types and
//! re-encoded (`common::wire`). Handshake, a full turn, `session/cancel`, `tool_call/cancel`, and
//! version negotiation (v2 agent offered 1; the SDK's v1 agent offered 2).

mod common;

use acp_proto::v2::envelope::{AgentRequest, ClientNotification, ClientRequest, ClientResponse};
use acp_proto::v2::{
    self, CancelSessionNotification, CancelToolCallRequest, CancelledPermissionOutcome, ClientCapabilities,
    ContentBlock, ErrorData, IdempotencyKey, IdleStopReason, Implementation, InitializeRequest, NewSessionRequest,
    PromptRequest, ProtocolVersion, RequestPermissionOutcome, RequestPermissionResponse, RequestPermissionSubject,
    SelectedPermissionOutcome, SessionId, SessionUpdate, StateUpdate, TextContent, UpdateSessionNotification,
};
use common::wire::{FromAgent, Wire, assert_differences, id};
use common::{sdk_agent, sdk_v2_agent};

fn connect() -> (Wire, tokio::task::JoinHandle<agent_client_protocol::Result<()>>) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    (Wire::new(ours), tokio::spawn(sdk_v2_agent::serve(reader, writer)))
}

fn initialize(n: i64, version: u16) -> ClientRequest {
    let params = InitializeRequest {
        protocol_version: ProtocolVersion(version),
        info: Implementation::new("acp-rs-wire", "0.1.0"),
        capabilities: ClientCapabilities::default(),
        meta: None,
    };
    ClientRequest { id: id(n), params: v2::ClientRequest::Initialize(Box::new(params)) }
}

/// The result of the response to request `n`, which must be the next frame.
async fn result(wire: &mut Wire, n: i64) -> v2::AgentResponse {
    match wire.next_from_agent().await {
        Some(FromAgent::Response(r)) if r.id == id(n) => r.outcome.expect("a result, not an error"),
        other => panic!("expected the response to {n}, got {other:?}"),
    }
}

/// Handshake offering 2 and a session in `/tmp`: the session id.
async fn open(wire: &mut Wire) -> SessionId {
    wire.client_request(initialize(1, 2)).await;
    let v2::AgentResponse::Initialize(init) = result(wire, 1).await else { panic!("an initialize result") };
    assert_eq!(init.protocol_version, ProtocolVersion(2));
    assert_eq!(init.info.name, sdk_v2_agent::NAME);
    assert!(init.capabilities.session.is_some(), "the agent advertises sessions");
    let new = NewSessionRequest {
        cwd: acp_proto::v2::AbsolutePath("/tmp".into()),
        additional_directories: None,
        mcp_servers: None,
        system_prompt: None,
        meta: None,
    };
    wire.client_request(ClientRequest { id: id(2), params: v2::ClientRequest::NewSession(new) }).await;
    let v2::AgentResponse::NewSession(session) = result(wire, 2).await else { panic!("a session/new result") };
    session.session_id
}

/// Sends `session/prompt` `text` as request `n`; its acknowledgement's `messageId`.
async fn prompt(wire: &mut Wire, n: i64, session: &SessionId, text: &str) -> String {
    prompt_keyed(wire, n, session, text, None).await
}

/// As [`prompt`], with an `idempotencyKey`.
async fn prompt_keyed(wire: &mut Wire, n: i64, session: &SessionId, text: &str, key: Option<&str>) -> String {
    let params = PromptRequest {
        session_id: session.clone(),
        prompt: vec![ContentBlock::Text(TextContent::new(text))],
        idempotency_key: key.map(|k| IdempotencyKey(k.into())),
        meta: None,
    };
    wire.client_request(ClientRequest { id: id(n), params: v2::ClientRequest::Prompt(params) }).await;
    let v2::AgentResponse::Prompt(ack) = result(wire, n).await else { panic!("a session/prompt result") };
    ack.message_id.to_string()
}

fn session_update(frame: &FromAgent) -> Option<&UpdateSessionNotification> {
    match frame {
        FromAgent::Notification(n) => match &n.params {
            v2::AgentNotification::SessionUpdate(u) => Some(u),
            _ => None,
        },
        _ => None,
    }
}

/// A short name of an update: its kind, and the tool call's id and status or the state.
fn name(update: &SessionUpdate) -> String {
    match update {
        SessionUpdate::StateUpdate(StateUpdate::Idle(i)) => format!("idle {:?}", i.stop_reason),
        SessionUpdate::StateUpdate(StateUpdate::Running(_)) => "running".into(),
        SessionUpdate::ToolCallUpdate(t) => {
            let cancel = t.capabilities.as_ref().is_some_and(|c| c.cancel.is_some());
            format!("tool {} {:?} cancel={cancel}", t.tool_call_id.as_str(), t.status)
        }
        SessionUpdate::AgentMessageChunk(c) => match &c.content {
            ContentBlock::Text(t) => format!("chunk {}", t.text),
            other => format!("chunk {other:?}"),
        },
        SessionUpdate::UserMessage(m) => format!("user {}", m.message_id.as_str()),
        SessionUpdate::PlanUpdate(_) => "plan".into(),
        SessionUpdate::AgentThoughtChunk(c) => format!("thought {}", c.message_id.as_str()),
        SessionUpdate::AgentMessage(m) => {
            format!("message {} ({} blocks)", m.message_id.as_str(), m.content.as_ref().map_or(0, Vec::len))
        }
        SessionUpdate::ToolCallContentChunk(c) => format!("tool content {}", c.tool_call_id.as_str()),
        SessionUpdate::UsageUpdate(u) => format!("usage {}/{}", u.used, u.size),
        SessionUpdate::SessionInfoUpdate(_) => "info".into(),
        SessionUpdate::Notice(n) => format!("notice {}", n.title),
        other => format!("{other:?}"),
    }
}

/// Runs a full turn up to the permission request: the names seen, and the request.
async fn until_permission(wire: &mut Wire, session: &SessionId) -> (Vec<String>, AgentRequest) {
    let mut seen = Vec::new();
    loop {
        let frame = wire.next_from_agent().await.expect("the agent keeps the pipe open");
        if let FromAgent::Request(r) = frame {
            let v2::AgentRequest::RequestPermission(ask) = &r.params else { panic!("unexpected request {r:?}") };
            let Some(RequestPermissionSubject::ToolCall(subject)) = &ask.subject else { panic!("a tool call subject") };
            seen.push(format!("permission {}", subject.tool_call.tool_call_id.as_str()));
            let ids: Vec<&str> = ask.options.iter().map(|o| o.option_id.as_str()).collect();
            assert_eq!(ids, ["allow", "reject"]);
            return (seen, r);
        }
        let update = session_update(&frame).unwrap_or_else(|| panic!("a session/update, got {frame:?}"));
        assert_eq!(&update.session_id, session);
        seen.push(name(&update.update));
    }
}

async fn answer_permission(wire: &mut Wire, r: &AgentRequest, outcome: RequestPermissionOutcome) {
    let answer = v2::ClientResponse::RequestPermission(RequestPermissionResponse { outcome, meta: None });
    wire.client_response("session/request_permission", ClientResponse { id: r.id.clone(), outcome: Ok(answer) }).await;
}

const TURN_START: [&str; 7] = [
    "user user-2",
    "running",
    "thought thought-2",
    "chunk echo: hello",
    "tool call-1 Some(Pending) cancel=true",
    "tool content call-1",
    "permission call-1",
];

#[tokio::test]
async fn v2_agent_full_turn_acknowledges_streams_asks_and_ends_with_one_idle() {
    let (mut wire, _agent) = connect();
    let session = open(&mut wire).await;
    let ack = prompt_keyed(&mut wire, 3, &session, "hello", Some("k-1")).await;
    assert_eq!(ack, "user-2", "the acknowledgement names the inserted user message");
    let (mut seen, ask) = until_permission(&mut wire, &session).await;
    assert_eq!(seen, TURN_START);
    answer_permission(&mut wire, &ask, RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow")))
        .await;
    seen = until_idle(&mut wire).await;
    let expected = [
        "tool call-1 Some(Completed) cancel=false",
        "plan",
        "message agent-2 (1 blocks)",
        "usage 10/100",
        "info",
        "notice careful",
        "idle Some(EndTurn)",
    ];
    assert_eq!(seen, expected);
    // Nothing after the idle that ends the turn: a second prompt's acknowledgement is next.
    assert_eq!(prompt(&mut wire, 4, &session, "again").await, "user-3");
    // The SDK (schema crate 1.17.0) has no `PromptRequest.idempotencyKey`.
    assert_differences(&wire.differences, &["ours→sdk session/prompt idempotencyKey: lost"]);
}

#[tokio::test]
async fn v2_agent_session_cancel_while_permission_is_asked_cascades_and_ends_the_turn_cancelled() {
    let (mut wire, _agent) = connect();
    let session = open(&mut wire).await;
    assert_eq!(prompt(&mut wire, 3, &session, "hello").await, "user-2");
    let (seen, ask) = until_permission(&mut wire, &session).await;
    assert_eq!(seen, TURN_START);
    let cancel = CancelSessionNotification { session_id: session.clone(), meta: None };
    wire.client_notification(ClientNotification { params: v2::ClientNotification::Cancel(cancel) }).await;
    // The agent cascades: `$/cancel_request` for its pending permission request.
    match wire.next_from_agent().await {
        Some(FromAgent::Protocol(n)) => match n.params {
            v2::ProtocolNotification::CancelRequest(c) => assert_eq!(c.request_id, ask.id),
            other => panic!("expected $/cancel_request, got {other:?}"),
        },
        other => panic!("expected $/cancel_request, got {other:?}"),
    }
    // As the v2 docs ask of a client: the pending permission answered `cancelled`.
    answer_permission(&mut wire, &ask, RequestPermissionOutcome::Cancelled(CancelledPermissionOutcome::default()))
        .await;
    let end = until_idle(&mut wire).await;
    assert_eq!(end, ["tool call-1 Some(Cancelled) cancel=false", "idle Some(Cancelled)"]);
    assert_eq!(prompt(&mut wire, 4, &session, "again").await, "user-3", "nothing between the idle and the next ack");
    assert_differences(&wire.differences, &[]);
}

/// Reads updates until `idle`; their names.
async fn until_idle(wire: &mut Wire) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let frame = wire.next_from_agent().await.expect("open");
        let update = session_update(&frame).unwrap_or_else(|| panic!("a session/update, got {frame:?}"));
        seen.push(name(&update.update));
        if matches!(update.update, SessionUpdate::StateUpdate(StateUpdate::Idle(_))) {
            return seen;
        }
    }
}

/// Reads `n` frames, which must be session updates; their names.
async fn updates(wire: &mut Wire, n: usize) -> Vec<String> {
    let mut seen = Vec::new();
    for _ in 0..n {
        let frame = wire.next_from_agent().await.expect("open");
        seen.push(name(&session_update(&frame).unwrap_or_else(|| panic!("a session/update, got {frame:?}")).update));
    }
    seen
}

fn cancel_tool(n: i64, session: &SessionId, tool: &str) -> ClientRequest {
    let params = CancelToolCallRequest { session_id: session.clone(), tool_call_id: tool.into(), meta: None };
    ClientRequest { id: id(n), params: v2::ClientRequest::CancelToolCall(params) }
}

#[tokio::test]
async fn v2_agent_tool_call_cancel_then_session_cancel_ends_the_turn_cancelled_once() {
    let (mut wire, _agent) = connect();
    let session = open(&mut wire).await;
    assert_eq!(prompt(&mut wire, 3, &session, "wait").await, "user-2");
    let start = updates(&mut wire, 4).await;
    let open_calls = ["tool call-w1 Some(InProgress) cancel=true", "tool call-w2 Some(InProgress) cancel=true"];
    assert_eq!(start, ["user user-2", "running", open_calls[0], open_calls[1]]);

    // tool_call/cancel: answered `{}`, then the tool call's final `cancelled`; the turn stays open.
    wire.client_request(cancel_tool(4, &session, "call-w1")).await;
    assert!(matches!(result(&mut wire, 4).await, v2::AgentResponse::CancelToolCall(_)));
    assert_eq!(updates(&mut wire, 1).await, ["tool call-w1 Some(Cancelled) cancel=false"]);
    // A finished one is no longer cancellable: -32602.
    wire.client_request(cancel_tool(5, &session, "call-w1")).await;
    match wire.next_from_agent().await {
        Some(FromAgent::Response(r)) => assert_eq!(r.outcome.expect_err("an error").code.0, -32602),
        other => panic!("expected the -32602 answer, got {other:?}"),
    }

    // session/cancel: the open tool call ends `cancelled`, then one idle `cancelled`.
    let cancel = CancelSessionNotification { session_id: session.clone(), meta: None };
    wire.client_notification(ClientNotification { params: v2::ClientNotification::Cancel(cancel) }).await;
    let end = until_idle(&mut wire).await;
    assert_eq!(
        end,
        ["tool call-w2 Some(Cancelled) cancel=false", format!("idle {:?}", Some(IdleStopReason::Cancelled)).as_str()]
    );
    // A second session/cancel with nothing running sends nothing: the next frame is the ack.
    let cancel = CancelSessionNotification { session_id: session.clone(), meta: None };
    wire.client_notification(ClientNotification { params: v2::ClientNotification::Cancel(cancel) }).await;
    assert_eq!(prompt(&mut wire, 6, &session, "hi").await, "user-3");
    assert_differences(&wire.differences, &[]);
}

#[tokio::test]
async fn v2_agent_offered_1_answers_unsupported_protocol_version() {
    let (mut wire, _agent) = connect();
    wire.client_request(initialize(1, 1)).await;
    let error = match wire.next_from_agent().await {
        Some(FromAgent::Response(r)) => r.outcome.expect_err("v1 is refused"),
        other => panic!("expected the answer to initialize, got {other:?}"),
    };
    assert_eq!(error.code.0, -32022);
    match error.data {
        Some(ErrorData::UnsupportedProtocolVersion(d)) => {
            assert_eq!(d.requested, ProtocolVersion(1));
            assert_eq!(d.supported, [ProtocolVersion(2)]);
        }
        other => panic!("expected UnsupportedProtocolVersionErrorData, got {other:?}"),
    }
    // It stays uninitialised but usable: offering 2 next works.
    wire.client_request(initialize(2, 2)).await;
    let v2::AgentResponse::Initialize(init) = result(&mut wire, 2).await else { panic!("an initialize result") };
    assert_eq!(init.protocol_version, ProtocolVersion(2));
    assert_differences(&wire.differences, &[]);
}

#[tokio::test]
async fn v1_sdk_agent_offered_2_by_our_v2_frame_answers_1() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    let _agent = tokio::spawn(sdk_agent::serve(reader, writer));
    let mut wire = Wire::new(ours);
    wire.client_request(initialize(1, 2)).await;
    let value = wire.read().await.expect("an answer");
    let response: acp_proto::types::InitializeResponse =
        serde_json::from_value(value["result"].clone()).expect("a v1 InitializeResponse");
    assert_eq!(response.protocol_version, acp_proto::types::ProtocolVersion::V1);
    assert_eq!(response.agent_info.map(|i| i.name).as_deref(), Some(sdk_agent::NAME));
    assert_differences(&wire.differences, &[]);
}

#[test]
fn wire_diff_names_lost_added_and_changed_keys() {
    let sent = serde_json::json!({"a": 1, "b": {"c": [1, {"d": true}]}, "e": "x"});
    let back = serde_json::json!({"a": 2, "b": {"c": [1, {}]}, "f": null});
    let mut out = Vec::new();
    common::wire::diff("t", "", &sent, &back, &mut out);
    out.sort();
    assert_eq!(out, ["t a: changed (1 → 2)", "t b.c[].d: lost", "t e: lost", "t f: added"]);
}
