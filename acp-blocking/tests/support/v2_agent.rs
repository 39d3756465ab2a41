//! A scripted ACP v2 agent on acp-blocking's `v2::Agent` (feature `unstable_protocol_v2`), the
//! same script as acp-tokio's `tests/support/v2_agent.rs`, for acp-blocking's v2 tests.
//!
//! | prompt (first text) | after the acknowledgement `user-<n>` |
//! |---|---|
//! | `wait` | `running`, tool call `call-w1` (`in_progress`, `capabilities.cancel`); then waits for `session/cancel`, sends `cancelled` for it, then `idle` `cancelled` |
//! | anything else | `running`, `agent_message_chunk` `echo: <text>`, tool call `call-1` (`pending`), asks `session/request_permission` (options `allow`, `reject`), `call-1` `completed` (allow) or `failed`, `idle` `end_turn`; a cancelled ask: `call-1` `cancelled`, `idle` `cancelled` |

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::v2::{self, SessionId, SessionUpdate};
use acp_blocking::v2::{Agent, AgentContext};
use serde_json::json;

/// The agent's name in `InitializeResponse.info`.
pub const AGENT_NAME: &str = "acp-blocking-v2-agent";

/// The scripted agent; see the module docs.
#[derive(Clone, Default)]
pub struct Scripted {
    counter: Arc<AtomicU32>,
    /// Per session: where `session/cancel` is told (replaced by each prompt).
    cancelled: Arc<Mutex<HashMap<SessionId, mpsc::Sender<()>>>>,
}

fn update(value: serde_json::Value) -> SessionUpdate {
    serde_json::from_value(value).expect("a valid v2 session update")
}

fn tool(id: &str, status: &str, cancellable: bool) -> SessionUpdate {
    let mut t = json!({ "sessionUpdate": "tool_call_update", "toolCallId": id, "status": status });
    if cancellable {
        t["capabilities"] = json!({ "cancel": {} });
    }
    update(t)
}

impl Scripted {
    fn next(&self) -> u32 {
        self.counter.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn turn(cx: AgentContext, session: SessionId, text: String, cancel: mpsc::Receiver<()>) {
        cx.answered();
        let _ = cx.send_update(&session, update(json!({ "sessionUpdate": "state_update", "state": "running" })));
        if text == "wait" {
            let _ = cx.send_update(&session, tool("call-w1", "in_progress", true));
            let _ = cancel.recv();
            let _ = cx.send_update(&session, tool("call-w1", "cancelled", false));
            let _ = cx.send_idle(&session, v2::IdleStopReason::Cancelled);
            return;
        }
        let chunk = json!({
            "sessionUpdate": "agent_message_chunk", "messageId": "agent-1",
            "content": { "type": "text", "text": format!("echo: {text}") },
        });
        let _ = cx.send_update(&session, update(chunk));
        let _ = cx.send_update(&session, tool("call-1", "pending", true));
        let ask: v2::RequestPermissionRequest = serde_json::from_value(json!({
            "sessionId": session, "title": "Run call-1?",
            "subject": { "type": "tool_call", "toolCall": { "toolCallId": "call-1" } },
            "options": [
                { "optionId": "allow", "name": "Allow", "kind": "allow_once" },
                { "optionId": "reject", "name": "Reject", "kind": "reject_once" },
            ],
        }))
        .expect("a valid permission request");
        let (status, stop) = match cx.request_permission(ask).map(|a| a.outcome) {
            Ok(v2::RequestPermissionOutcome::Selected(s)) if s.option_id.as_str() == "allow" => {
                ("completed", v2::IdleStopReason::EndTurn)
            }
            Ok(v2::RequestPermissionOutcome::Selected(_)) => ("failed", v2::IdleStopReason::EndTurn),
            _ => ("cancelled", v2::IdleStopReason::Cancelled),
        };
        let _ = cx.send_update(&session, tool("call-1", status, false));
        let _ = cx.send_idle(&session, stop);
    }
}

impl Agent for Scripted {
    fn initialize(&self, _: v2::InitializeRequest, _: &AgentContext) -> Result<v2::InitializeResponse, RpcError> {
        Ok(serde_json::from_value(json!({
            "protocolVersion": 2,
            "info": { "name": AGENT_NAME, "version": "0.1.0" },
            "capabilities": { "session": {} },
        }))
        .expect("a valid initialize response"))
    }

    fn new_session(&self, _: v2::NewSessionRequest, _: &AgentContext) -> Result<v2::NewSessionResponse, RpcError> {
        let session = format!("blocking-v2-session-{}", self.next());
        Ok(serde_json::from_value(json!({ "sessionId": session })).expect("a valid session/new response"))
    }

    fn prompt(&self, request: v2::PromptRequest, cx: &AgentContext) -> Result<v2::PromptResponse, RpcError> {
        let text = match request.prompt.first() {
            Some(v2::ContentBlock::Text(t)) => t.text.clone(),
            _ => String::new(),
        };
        let (tx, cancel) = mpsc::channel();
        self.cancelled.lock().expect("not poisoned").insert(request.session_id.clone(), tx);
        let cx = cx.clone();
        std::thread::spawn(move || Scripted::turn(cx, request.session_id, text, cancel));
        Ok(serde_json::from_value(json!({ "messageId": format!("user-{}", self.next()) }))
            .expect("a valid prompt response"))
    }

    fn session_cancelled(&self, notification: v2::CancelSessionNotification) {
        if let Some(tx) = self.cancelled.lock().expect("not poisoned").get(&notification.session_id) {
            let _ = tx.send(());
        }
    }
}
