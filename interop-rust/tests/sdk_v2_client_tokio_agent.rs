//! The official SDK's v2 client (`common::sdk_v2_client`) against our acp-tokio v2 agent
//! (`acp_tokio::v2::serve` serving the scripted agent of `acp-tokio/tests/support/v2_agent.rs`):
//! handshake, a full turn with a permission, and `tool_call/cancel` then `session/cancel`.

mod common;
#[path = "../../acp-tokio/tests/support/v2_agent.rs"]
#[allow(dead_code, unreachable_pub)]
mod v2_agent;

use acp_tokio::AgentOptions;
use acp_tokio::v2::serve;
use common::sdk_v2_client::{self, Negotiated, Report, Script};
use common::within;
use serde_json::Value;
use v2_agent::Scripted;

async fn run(agent: Scripted, script: Script) -> Report {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(ours);
    let served = tokio::spawn(serve(agent, reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(theirs);
    let report = within("the SDK client's turn", sdk_v2_client::run(reader, writer, script)).await.expect("a report");
    // The SDK client closed its side: our agent sees the end of its input and ends cleanly.
    within("the agent ends", served).await.expect("the agent task").expect("a clean end");
    report
}

/// A short name of a `session/update` as the SDK re-encoded it.
fn name(n: &Value) -> String {
    let u = &n["update"];
    let kind = u["sessionUpdate"].as_str().unwrap_or("?");
    match kind {
        "state_update" => format!("{} {}", u["state"].as_str().unwrap_or("?"), u["stopReason"].as_str().unwrap_or("")),
        "tool_call_update" => {
            let cancel = u["capabilities"]["cancel"].is_object();
            format!(
                "tool {} {} cancel={cancel}",
                u["toolCallId"].as_str().unwrap_or("?"),
                u["status"].as_str().unwrap_or("?")
            )
        }
        "agent_message_chunk" => format!("chunk {}", u["content"]["text"].as_str().unwrap_or("?")),
        other => other.to_owned(),
    }
}

/// The SDK's v2 extension request reaches our agent's `ext_method` and its answer comes back;
/// one our agent does not know is `-32601`; the turn after them runs as usual.
#[tokio::test]
async fn sdk_v2_client_extension_requests_against_tokio_v2_agent() {
    let report = run(Scripted::default(), Script::Ext).await;
    assert_eq!(report.negotiated, Negotiated::V2);
    assert_eq!(report.ext.len(), 2, "{:?}", report.ext);
    assert_eq!(report.ext[0], Ok(serde_json::json!({"x": 1})));
    assert_eq!(report.ext[1], Err(-32601));
    assert_eq!(report.updates.last().map(name).as_deref(), Some("idle end_turn"));
}

#[tokio::test]
async fn sdk_v2_client_full_turn_against_tokio_v2_agent() {
    let report = run(Scripted::default(), Script::Turn).await;
    assert_eq!(report.negotiated, Negotiated::V2);
    assert_eq!(report.session.as_deref(), Some("tokio-v2-session-1"));
    assert_eq!(report.ack.as_deref(), Some("user-2"));
    let seen: Vec<String> = report.updates.iter().map(name).collect();
    let expected = [
        "running ",
        "chunk echo: turn",
        "tool call-1 pending cancel=true",
        // `completed`: our agent read the SDK's `allow`.
        "tool call-1 completed cancel=false",
        "idle end_turn",
    ];
    assert_eq!(seen, expected);
    assert!(report.updates.iter().all(|u| u["sessionId"] == "tokio-v2-session-1"));
    assert_eq!(report.permissions.len(), 1, "one permission ask: {:?}", report.permissions);
    let ask = &report.permissions[0];
    assert_eq!(ask["subject"]["toolCall"]["toolCallId"], "call-1");
    let options: Vec<&str> =
        ask["options"].as_array().expect("options").iter().filter_map(|o| o["optionId"].as_str()).collect();
    assert_eq!(options, ["allow", "reject"]);
    assert_eq!(report.tool_cancel, None);
}

#[tokio::test]
async fn sdk_v2_client_tool_call_cancel_then_session_cancel_against_tokio_v2_agent() {
    let report = run(Scripted::waiting(), Script::Cancel).await;
    assert_eq!(report.negotiated, Negotiated::V2);
    assert_eq!(report.tool_cancel, Some(Ok(())), "our agent answers tool_call/cancel {{}}");
    let seen: Vec<String> = report.updates.iter().map(name).collect();
    let expected = [
        "running ",
        "tool call-w1 in_progress cancel=true",
        "tool call-w1 cancelled cancel=false",
        // The SDK's session/cancel: one idle, `cancelled`.
        "idle cancelled",
    ];
    assert_eq!(seen, expected);
    assert!(report.permissions.is_empty());
}
