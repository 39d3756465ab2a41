//! A scripted ACP v2 agent on acp-tokio's `tokio_v2::Agent` (feature `unstable_protocol_v2`), shared by
//! acp-tokio's own v2 tests and interop-rust's (which includes this file by path).
//!
//! | prompt (first text) | after the acknowledgement `user-<n>` |
//! |---|---|
//! With [`Scripted::announcing`], each `session/new` answer is followed by a
//! `session_info_update` titled `scripted`, outside any turn. The extension request `_echo`
//! answers its params (`null` when it has none); any other is `-32601`.
//!
//! | `wait` (every prompt, for [`Scripted::waiting`]) | `running`, tool call `call-w1` (`in_progress`, `capabilities.cancel`); then waits: `tool_call/cancel` of it answers `{}` and sends its `cancelled` update (the turn stays open); `session/cancel` sends `cancelled` for it if still open, then `idle` |
//! | anything else | `running`, `agent_message_chunk` `echo: <text>`, tool call `call-1` (`pending`, `capabilities.cancel`), asks `session/request_permission` (options `allow`, `reject`), `call-1` `completed` (allow) or `failed`, `idle` `end_turn`; a `session/cancel` during the ask: `call-1` `cancelled`, `idle` |

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::v2::{self, SessionId, SessionUpdate};
use acp_tokio::v2 as tokio_v2;
use serde_json::json;
use tokio::sync::watch;

/// The agent's name in `InitializeResponse.info`.
pub const AGENT_NAME: &str = "acp-tokio-v2-agent";

/// The scripted agent; see the module docs.
#[derive(Clone, Default)]
pub struct Scripted {
    counter: Arc<AtomicU32>,
    /// Per session: `true` once `session/cancel` came (reset by each prompt).
    cancelled: Arc<Mutex<HashMap<SessionId, watch::Sender<bool>>>>,
    /// Per session: the open `wait` tool call, if any.
    open_tool: Arc<Mutex<HashMap<SessionId, String>>>,
    /// Every prompt is a `wait` one.
    always_wait: bool,
    /// After answering `session/new`, send a `session_info_update` (outside any turn).
    announce: bool,
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
    /// The agent whose every prompt is a `wait` one (for a peer that cannot choose its text).
    pub fn waiting() -> Scripted {
        Scripted { always_wait: true, ..Scripted::default() }
    }

    /// The agent that sends a `session_info_update` titled `scripted` after each `session/new`.
    pub fn announcing() -> Scripted {
        Scripted { announce: true, ..Scripted::default() }
    }

    fn next(&self) -> u32 {
        self.counter.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn cancel_watch(&self, session: &SessionId) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        self.cancelled.lock().expect("not poisoned").insert(session.clone(), tx);
        rx
    }

    async fn turn(
        &self,
        cx: tokio_v2::AgentContext,
        session: SessionId,
        text: String,
        mut cancel: watch::Receiver<bool>,
    ) {
        cx.answered().await;
        let running = update(json!({ "sessionUpdate": "state_update", "state": "running" }));
        let _ = cx.send_update(&session, running).await;
        if text == "wait" || self.always_wait {
            self.open_tool.lock().expect("not poisoned").insert(session.clone(), "call-w1".into());
            let _ = cx.send_update(&session, tool("call-w1", "in_progress", true)).await;
            let _ = cancel.wait_for(|c| *c).await;
            let open = self.open_tool.lock().expect("not poisoned").remove(&session);
            if let Some(open) = open {
                let _ = cx.send_update(&session, tool(&open, "cancelled", false)).await;
            }
            let _ = cx.send_idle(&session, v2::IdleStopReason::Cancelled).await;
            return;
        }
        let chunk = json!({
            "sessionUpdate": "agent_message_chunk", "messageId": "agent-1",
            "content": { "type": "text", "text": format!("echo: {text}") },
        });
        let _ = cx.send_update(&session, update(chunk)).await;
        let _ = cx.send_update(&session, tool("call-1", "pending", true)).await;
        let ask: v2::RequestPermissionRequest = serde_json::from_value(json!({
            "sessionId": session, "title": "Run call-1?",
            "subject": { "type": "tool_call", "toolCall": { "toolCallId": "call-1" } },
            "options": [
                { "optionId": "allow", "name": "Allow", "kind": "allow_once" },
                { "optionId": "reject", "name": "Reject", "kind": "reject_once" },
            ],
        }))
        .expect("a valid permission request");
        let (status, stop) = match cx.request_permission(ask).await {
            Ok(answer) => match answer.outcome {
                v2::RequestPermissionOutcome::Selected(s) if s.option_id.as_str() == "allow" => {
                    ("completed", v2::IdleStopReason::EndTurn)
                }
                v2::RequestPermissionOutcome::Selected(_) => ("failed", v2::IdleStopReason::EndTurn),
                _ => ("cancelled", v2::IdleStopReason::Cancelled),
            },
            Err(_) => ("cancelled", v2::IdleStopReason::Cancelled),
        };
        let _ = cx.send_update(&session, tool("call-1", status, false)).await;
        let _ = cx.send_idle(&session, stop).await;
    }
}

impl tokio_v2::Agent for Scripted {
    async fn initialize(
        &self,
        _: v2::InitializeRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::InitializeResponse, RpcError> {
        Ok(serde_json::from_value(json!({
            "protocolVersion": 2,
            "info": { "name": AGENT_NAME, "version": "0.1.0" },
            "capabilities": { "session": {} },
        }))
        .expect("a valid initialize response"))
    }

    async fn new_session(
        &self,
        _: v2::NewSessionRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::NewSessionResponse, RpcError> {
        let session = SessionId::from(format!("tokio-v2-session-{}", self.next()));
        if self.announce {
            let session = session.clone();
            tokio::spawn(async move {
                cx.answered().await;
                let info = update(json!({ "sessionUpdate": "session_info_update", "title": "scripted" }));
                let _ = cx.send_update(&session, info).await;
            });
        }
        Ok(serde_json::from_value(json!({ "sessionId": session })).expect("a valid session/new response"))
    }

    async fn prompt(
        &self,
        request: v2::PromptRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::PromptResponse, RpcError> {
        let text = match request.prompt.first() {
            Some(v2::ContentBlock::Text(t)) => t.text.clone(),
            _ => String::new(),
        };
        let cancel = self.cancel_watch(&request.session_id);
        let this = self.clone();
        tokio::spawn(async move { this.turn(cx, request.session_id, text, cancel).await });
        Ok(serde_json::from_value(json!({ "messageId": format!("user-{}", self.next()) }))
            .expect("a valid prompt response"))
    }

    async fn cancel_tool_call(
        &self,
        request: v2::CancelToolCallRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::CancelToolCallResponse, RpcError> {
        let open = self.open_tool.lock().expect("not poisoned").remove(&request.session_id);
        match open {
            Some(id) if id == request.tool_call_id.as_str() => {
                let session = request.session_id.clone();
                let cx2 = cx.clone();
                tokio::spawn(async move {
                    cx2.answered().await;
                    let _ = cx2.send_update(&session, tool(&id, "cancelled", false)).await;
                });
                Ok(v2::CancelToolCallResponse { meta: None })
            }
            other => {
                if let Some(id) = other {
                    self.open_tool.lock().expect("not poisoned").insert(request.session_id.clone(), id);
                }
                Err(RpcError::invalid_params("no such cancellable tool call"))
            }
        }
    }

    async fn session_cancelled(&self, notification: v2::CancelSessionNotification) {
        if let Some(tx) = self.cancelled.lock().expect("not poisoned").get(&notification.session_id) {
            let _ = tx.send(true);
        }
    }

    async fn ext_method(
        &self,
        method: &str,
        params: serde_json::Value,
        _: tokio_v2::AgentContext,
    ) -> Result<serde_json::Value, RpcError> {
        match method {
            "_echo" => Ok(params),
            other => Err(RpcError::method_not_found(other)),
        }
    }
}
