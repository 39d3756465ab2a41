//! The echo agent of `echo.rs` on acp-blocking: the same commands and extension methods, the
//! same observations, so either adapter's client drives either adapter's agent.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use acp_blocking::{PromptContext, RequestContext};
use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::types::*;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::echo::{chunk, storm_text};

/// The echo agent on the blocking adapter.
#[derive(Default)]
pub struct BlockingEcho {
    pub sessions: AtomicU64,
    /// What the handlers observed, worded as `EchoAgent` words it.
    pub observed: Option<UnboundedSender<String>>,
    /// How many `storm` updates the handlers have sent so far.
    pub sent: Arc<AtomicU64>,
}

impl BlockingEcho {
    fn observe(&self, what: String) {
        if let Some(tx) = &self.observed {
            let _ = tx.send(what);
        }
    }

    fn command(&self, text: &str, cx: &PromptContext) -> Result<(), acp_blocking::Error> {
        let mut words = text.split_whitespace();
        match words.next().unwrap_or("") {
            "storm" => {
                for i in 0..words.next().and_then(|n| n.parse().ok()).unwrap_or(0u64) {
                    if cx.is_cancelled() {
                        break;
                    }
                    cx.send_text(storm_text(i))?;
                    self.sent.fetch_add(1, Ordering::SeqCst);
                }
            }
            "interleave" => {
                for i in 0..words.next().and_then(|n| n.parse().ok()).unwrap_or(20u64) {
                    cx.send_text(format!("u{i}"))?;
                    let _ = cx.read_text_file(format!("/r{i}"), None, None);
                }
            }
            "permission" => {
                let options = vec![
                    PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
                    PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
                ];
                let answer = match cx.request_permission(ToolCallUpdate::new("call-1"), options)? {
                    RequestPermissionOutcome::Selected(s) => s.option_id.to_string(),
                    _ => "cancelled".to_owned(),
                };
                cx.send_text(format!("permission: {answer}"))?;
            }
            "read" => {
                let text = match cx.read_text_file(words.next().unwrap_or("/"), None, None) {
                    Ok(content) => content,
                    Err(e) => format!("error: {e}"),
                };
                cx.send_text(text)?;
            }
            "terminal" => {
                let command = words.next().unwrap_or("true");
                let text = match cx.create_terminal(command, words.map(str::to_owned).collect()) {
                    Ok(terminal) => {
                        cx.wait_for_terminal_exit(&terminal)?;
                        let output = cx.terminal_output(&terminal)?.output;
                        cx.release_terminal(&terminal)?;
                        output
                    }
                    Err(e) => format!("error: {e}"),
                };
                cx.send_text(text)?;
            }
            "wait" => {
                cx.send_text("waiting")?;
                if cx.cancellation().wait_timeout(Duration::from_secs(60)) {
                    self.observe(format!("cancelled prompt {:?}", cx.cancellation().reason()));
                }
            }
            "panic" => panic!("the blocking echo agent was asked to panic"),
            _ => cx.send_text(text)?,
        }
        Ok(())
    }
}

fn internal(e: acp_blocking::Error) -> RpcError {
    RpcError::internal_error(e.to_string())
}

impl acp_blocking::Agent for BlockingEcho {
    fn initialize(&self, _: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        let mut response = InitializeResponse::new(ProtocolVersion::V1);
        response.agent_info = Some(Implementation::new("echo_agent", "blocking"));
        Ok(response)
    }

    fn new_session(&self, _: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new(format!("sess-{}", self.sessions.fetch_add(1, Ordering::Relaxed))))
    }

    fn prompt(&self, request: PromptRequest, cx: &PromptContext) -> Result<PromptResponse, RpcError> {
        for block in request.prompt {
            if let ContentBlock::Text(text) = block {
                self.command(&text.text, cx).map_err(internal)?;
            }
        }
        let stop = if cx.is_cancelled() { StopReason::Cancelled } else { StopReason::EndTurn };
        Ok(PromptResponse::new(stop))
    }

    fn ext_method(&self, method: &str, params: Value, cx: &RequestContext) -> Result<Value, RpcError> {
        match method {
            "_echo" => Ok(params),
            "_wait" => {
                self.observe("started _wait".into());
                cx.cancellation().wait_timeout(Duration::from_secs(60));
                self.observe(format!("cancelled _wait {:?}", cx.cancellation().reason()));
                Err(RpcError::request_cancelled())
            }
            "_panic" => panic!("the blocking echo agent was asked to panic"),
            "_ask_client" => {
                Ok(crate::asked(cx.ext_method("_wait", json!({}), Some(crate::ask_deadline(Some(&params))))))
            }
            "_announce" => {
                let session = params["sessionId"].as_str().unwrap_or_default().to_owned();
                let update = chunk(params["text"].as_str().unwrap_or_default());
                cx.send_session_update(session, update).map_err(internal)?;
                Ok(Value::Null)
            }
            other => Err(RpcError::method_not_found(other)),
        }
    }

    fn ext_notification(&self, method: &str, params: Value) {
        self.observe(format!("notification {method} {params}"));
    }
}
