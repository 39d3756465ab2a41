//! The official SDK's v2 client (`common::sdk_v2_client`) against `acp agent --protocol 2`'s
//! reference agent (acp-cli's `agent::v2::ReferenceAgent`, served in-process over a pipe): the handshake,
//! and the scripted turn as the SDK decodes it. The SDK client answers a permission ask with an
//! option whose id is `allow`, else `cancelled`; the reference agent offers `allow-once` and
//! `reject-once`, so the turn takes the cancelled branch: the tool call `cancelled`, then `idle`
//! `cancelled`.

mod common;

use acp_cli::agent::v2::ReferenceAgent;
use acp_cli::agent::{ALLOW_ONCE, AgentConfig, REJECT_ONCE};
use common::sdk_v2_client::{self, Negotiated, Script};
use common::within;
use serde_json::Value;

/// A short name of a `session/update` as the SDK re-encoded it.
fn name(n: &Value) -> String {
    let u = &n["update"];
    let kind = u["sessionUpdate"].as_str().unwrap_or("?");
    match kind {
        "state_update" => format!("{} {}", u["state"].as_str().unwrap_or("?"), u["stopReason"].as_str().unwrap_or("")),
        "tool_call_update" => {
            format!("tool {} {}", u["toolCallId"].as_str().unwrap_or("?"), u["status"].as_str().unwrap_or("?"))
        }
        "agent_message_chunk" | "agent_thought_chunk" => {
            format!(
                "{kind} {} {}",
                u["messageId"].as_str().unwrap_or("?"),
                u["content"]["text"].as_str().unwrap_or("?")
            )
        }
        "plan_update" => {
            format!("plan {} {}", u["plan"]["planId"].as_str().unwrap_or("?"), u["plan"]["entries"][0]["status"])
        }
        other => other.to_owned(),
    }
}

#[tokio::test]
async fn sdk_v2_client_runs_the_reference_agents_v2_turn() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(ours);
    let mut config = AgentConfig::default();
    config.log = false;
    let served = tokio::spawn(ReferenceAgent::with_config(config).serve(reader, writer));
    let (reader, writer) = tokio::io::split(theirs);
    let report =
        within("the SDK client's turn", sdk_v2_client::run(reader, writer, Script::Turn)).await.expect("a report");
    within("the agent ends", served).await.expect("the agent task").expect("a clean end of input");

    assert_eq!(report.negotiated, Negotiated::V2);
    assert_eq!(report.session.as_deref(), Some("sess-1"));
    assert_eq!(report.ack.as_deref(), Some("user-1"));
    let seen: Vec<String> = report.updates.iter().map(name).collect();
    let thought = "The prompt names no absolute path, so there is nothing to read.";
    let expected = [
        // Where the prompt went in the session's history (the ack's message).
        "user_message".to_owned(),
        "running ".to_owned(),
        "agent_message_chunk agent-1 echo: turn".to_owned(),
        format!("agent_thought_chunk thought-1 {thought}"),
        "plan plan-1 \"in_progress\"".to_owned(),
        "tool call-1 pending".to_owned(),
        // The SDK client found no option `allow`: it answered `cancelled`.
        "tool call-1 cancelled".to_owned(),
        "idle cancelled".to_owned(),
    ];
    assert_eq!(seen, expected);
    assert!(report.updates.iter().all(|u| u["sessionId"] == "sess-1"));
    assert_eq!(report.permissions.len(), 1, "one permission ask: {:?}", report.permissions);
    let ask = &report.permissions[0];
    assert_eq!(ask["subject"]["toolCall"]["toolCallId"], "call-1");
    let options: Vec<&str> =
        ask["options"].as_array().expect("options").iter().filter_map(|o| o["optionId"].as_str()).collect();
    assert_eq!(options, [ALLOW_ONCE, REJECT_ONCE]);
}
