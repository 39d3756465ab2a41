//! The echo agent's logic, shared by the `echo_agent` example and the tests (which include this
//! file with `#[path]`). It speaks the same commands as the blocking adapter's `echo_agent`, so
//! either adapter's client drives either agent.
//!
//! Every text block of a prompt is echoed back as an `agent_message_chunk`, unless it starts
//! with a command:
//!
//! | prompt | what the agent does |
//! |---|---|
//! | `storm N` | sends N updates `"<i> <64 bytes>"`, i = 0..N (stops early if cancelled) |
//! | `interleave N` | N times: sends update `u<i>`, then reads `/r<i>` through the client |
//! | `permission` | asks permission (options `allow`, `reject`) and echoes the outcome |
//! | `read PATH` | reads PATH through the client (`fs/read_text_file`) and echoes it |
//! | `terminal CMD ARGS...` | runs CMD in a client terminal and echoes its output |
//! | `wait` | sends `waiting`, then waits (up to 60 s) until the turn is cancelled |
//! | `panic` | panics in the handler (the client gets `-32603`) |
//!
//! With `updates_per_prompt` set (`--updates N`, the benchmark workloads) every prompt streams N
//! copies of [`CHUNK`] instead. Extension methods: `_echo` returns its params; `_sleep {"ms"}`
//! sleeps without looking at cancellation; for the tests, `_wait` waits until it is cancelled,
//! `_panic` panics, `_announce {"sessionId", "text"}` sends an update outside any turn and
//! `_ask_client {"ms"}` calls the client's `_wait` with a deadline of `ms` and returns
//! `"timed out"` when it passed; extension notifications are reported to `observed`.
#![allow(dead_code)]

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::types::*;
use acp_tokio::{Agent, PromptContext, RequestContext};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The benchmark's 64-byte chunk (`shared/bench/WORKLOADS.md`).
pub(crate) const CHUNK: &str = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ._";

/// The echo agent.
#[derive(Default)]
pub(crate) struct EchoAgent {
    /// Benchmark mode: every prompt streams this many [`CHUNK`]s.
    pub(crate) updates_per_prompt: Option<u64>,
    pub(crate) sessions: AtomicU64,
    /// Tests: what the handlers observed (e.g. `cancelled _wait Some(CancelRequest)`).
    pub(crate) observed: Option<mpsc::UnboundedSender<String>>,
    /// Tests: how many `storm` updates the handlers have sent so far (backpressure checks).
    pub(crate) sent: Arc<AtomicU64>,
}

/// An `agent_message_chunk` of `text`.
pub(crate) fn chunk(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(text)))
}

/// The text of a chunk update, if it is one.
pub(crate) fn chunk_text(update: &SessionUpdate) -> Option<&str> {
    match update {
        SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => Some(&t.text),
        _ => None,
    }
}

/// The text of the `i`-th update of `storm N`.
pub(crate) fn storm_text(i: u64) -> String {
    format!("{i} {CHUNK}")
}

/// Sleeps on whichever runtime runs the handler (the agent knows none: a timer thread).
async fn sleep(duration: Duration) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        std::thread::sleep(duration);
        let _ = tx.send(());
    });
    let _ = rx.await;
}

impl EchoAgent {
    fn observe(&self, what: String) {
        if let Some(tx) = &self.observed {
            let _ = tx.send(what);
        }
    }

    async fn command(&self, text: &str, cx: &PromptContext) -> Result<(), RpcError> {
        let mut words = text.split_whitespace();
        match words.next().unwrap_or("") {
            "storm" => {
                let n: u64 = words.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
                for i in 0..n {
                    if cx.is_cancelled() {
                        break;
                    }
                    cx.send_text(storm_text(i)).await?;
                    self.sent.fetch_add(1, Ordering::SeqCst);
                }
            }
            "interleave" => {
                for i in 0..words.next().and_then(|n| n.parse().ok()).unwrap_or(20u64) {
                    cx.send_text(format!("u{i}")).await?;
                    let _ = cx.read_text_file(format!("/r{i}"), None, None).await;
                }
            }
            "permission" => {
                let options = vec![
                    PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
                    PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
                ];
                let mut tool_call = ToolCallUpdate::new("call-1");
                tool_call.title = Some("touch /tmp/echo".into());
                let answer = match cx.request_permission(tool_call, options).await? {
                    RequestPermissionOutcome::Selected(s) => s.option_id.to_string(),
                    _ => "cancelled".to_owned(),
                };
                cx.send_text(format!("permission: {answer}")).await?;
            }
            "read" => {
                let path = words.next().unwrap_or("/");
                let text = match cx.read_text_file(path, None, None).await {
                    Ok(content) => content,
                    Err(e) => format!("error: {e}"),
                };
                cx.send_text(text).await?;
            }
            "terminal" => {
                let command = words.next().unwrap_or("true");
                let text = match cx.create_terminal(command, words.map(str::to_owned).collect()).await {
                    Ok(terminal) => {
                        cx.wait_for_terminal_exit(&terminal).await?;
                        let output = cx.terminal_output(&terminal).await?.output;
                        cx.release_terminal(&terminal).await?;
                        output
                    }
                    Err(e) => format!("error: {e}"),
                };
                cx.send_text(text).await?;
            }
            "wait" => {
                cx.send_text("waiting").await?;
                let mut cancelled = std::pin::pin!(cx.cancelled());
                let mut timeout = std::pin::pin!(sleep(Duration::from_secs(60)));
                let was_cancelled = std::future::poll_fn(|task| match cancelled.as_mut().poll(task) {
                    std::task::Poll::Ready(()) => std::task::Poll::Ready(true),
                    std::task::Poll::Pending => timeout.as_mut().poll(task).map(|()| false),
                })
                .await;
                if was_cancelled {
                    self.observe(format!("cancelled prompt {:?}", cx.cancellation().reason()));
                }
            }
            "panic" => panic!("echo_agent was asked to panic"),
            _ => cx.send_text(text).await?,
        }
        Ok(())
    }
}

impl Agent for EchoAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        eprintln!("echo_agent: initialize (client speaks version {})", request.protocol_version.0);
        let mut response = InitializeResponse::new(ProtocolVersion::V1);
        response.agent_info = Some(Implementation::new("echo_agent", env!("CARGO_PKG_VERSION")));
        Ok(response)
    }

    async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed);
        Ok(NewSessionResponse::new(format!("sess-{n}")))
    }

    async fn prompt(&self, request: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        if let Some(n) = self.updates_per_prompt {
            for _ in 0..n {
                cx.send_text(CHUNK).await?;
            }
            return Ok(PromptResponse::new(StopReason::EndTurn));
        }
        for block in request.prompt {
            if let ContentBlock::Text(text) = block {
                self.command(&text.text, &cx).await?;
            }
        }
        let stop = if cx.is_cancelled() { StopReason::Cancelled } else { StopReason::EndTurn };
        Ok(PromptResponse::new(stop))
    }

    async fn ext_method(&self, method: &str, params: Value, cx: RequestContext) -> Result<Value, RpcError> {
        match method {
            "_echo" => Ok(params),
            "_sleep" => {
                sleep(Duration::from_millis(params.get("ms").and_then(Value::as_u64).unwrap_or(1000))).await;
                Ok(json!({}))
            }
            "_wait" => {
                self.observe("started _wait".into());
                cx.cancelled().await;
                self.observe(format!("cancelled _wait {:?}", cx.cancellation().reason()));
                Err(RpcError::request_cancelled())
            }
            "_panic" => panic!("echo_agent was asked to panic"),
            "_ask_client" => {
                let deadline = Duration::from_millis(params.get("ms").and_then(Value::as_u64).unwrap_or(200));
                Ok(match cx.ext_method("_wait", json!({}), Some(deadline)).await {
                    Ok(value) => value,
                    Err(acp_tokio::Error::TimedOut) => json!("timed out"),
                    Err(e) => json!(e.to_string()),
                })
            }
            "_announce" => {
                let session = params["sessionId"].as_str().unwrap_or_default().to_owned();
                let text = params["text"].as_str().unwrap_or_default().to_owned();
                cx.send_session_update(session, chunk(text)).await?;
                Ok(Value::Null)
            }
            other => Err(RpcError::method_not_found(other)),
        }
    }

    async fn ext_notification(&self, method: &str, params: Value) {
        self.observe(format!("notification {method} {params}"));
    }
}
