//! The echo agent's logic, shared by the `echo_agent` example and the tests (acp-scenarios's
//! library includes this file with `#[path]`). It speaks the same commands as the blocking
//! adapter's `echo_agent`, so either adapter's client drives either agent.
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
//! `"timed out"` when it passed; `_big {"i", "bytes"}` returns `i` and `bytes` of padding;
//! `_flood {"n", "bytes", "lanes"}` calls the client's `_big` `n` times, `lanes` at once, and
//! returns how many came back right (`answered`) and how many the client's machine refused
//! (`refused`: `-32603`, its requests in flight were at their bound); extension notifications
//! are reported to `observed`.
#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{Config, RpcError};
use acp_tokio::{Agent, PromptContext, RequestContext};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The tight bounds of the flood test (`tokio_echo_agent --tight`, `tests/tokio/flood.rs`): a 256-byte
/// output budget, 4 requests in flight, 8 awaiting answers (twice the peer's 4).
pub fn flood_config() -> Config {
    Config::default().with_outbound_budget(256).with_max_inbound(4).with_max_pending_outbound(8)
}

/// A boxed future that may move between threads, for [`join_all`].
pub type SendFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Polls every future until all are done; results in order.
pub async fn join_all<T, F: Future<Output = T> + Unpin>(futures: Vec<F>) -> Vec<T> {
    let mut futures: Vec<_> = futures.into_iter().map(Some).collect();
    let mut results: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, result) in futures.iter_mut().zip(results.iter_mut()) {
            if let Some(future) = slot {
                match std::pin::Pin::new(future).poll(cx) {
                    std::task::Poll::Ready(v) => {
                        *result = Some(v);
                        *slot = None;
                    }
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending { std::task::Poll::Pending } else { std::task::Poll::Ready(()) }
    })
    .await;
    results.into_iter().map(|r| r.expect("every future completed")).collect()
}

/// The answer to `_big {"i", "bytes"}`: `i` and `bytes` of padding.
pub fn big_answer(i: u64, bytes: u64) -> Value {
    json!({"i": i, "pad": "p".repeat(bytes as usize)})
}

/// Whether `e` is the refusal of a machine whose requests in flight were at their bound.
pub fn refused_for_bounds(e: &acp_tokio::Error) -> bool {
    e.rpc().is_some_and(|rpc| {
        let reason = rpc.data.as_ref().and_then(|d| d["reason"].as_str());
        rpc.code.0 == -32603 && matches!(reason, Some("too many requests in flight" | "output queue full"))
    })
}

/// The benchmark's 64-byte chunk (`shared/bench/WORKLOADS.md`).
pub const CHUNK: &str = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ._";

/// The echo agent.
#[derive(Default)]
pub struct EchoAgent {
    /// Benchmark mode: every prompt streams this many [`CHUNK`]s.
    pub updates_per_prompt: Option<u64>,
    pub sessions: AtomicU64,
    /// Tests: what the handlers observed (e.g. `cancelled _wait Some(CancelRequest)`).
    pub observed: Option<mpsc::UnboundedSender<String>>,
    /// Tests: how many `storm` updates the handlers have sent so far (backpressure checks).
    pub sent: Arc<AtomicU64>,
}

/// An `agent_message_chunk` of `text`.
pub fn chunk(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(text)))
}

/// The text of a chunk update, if it is one.
pub fn chunk_text(update: &SessionUpdate) -> Option<&str> {
    match update {
        SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => Some(&t.text),
        _ => None,
    }
}

/// The text of the `i`-th update of `storm N`.
pub fn storm_text(i: u64) -> String {
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
            "_big" => Ok(big_answer(params["i"].as_u64().unwrap_or(0), params["bytes"].as_u64().unwrap_or(0))),
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
            "_flood" => {
                let n = params["n"].as_u64().unwrap_or(1);
                let lanes = params["lanes"].as_u64().unwrap_or(1).max(1);
                let bytes = params["bytes"].as_u64().unwrap_or(0);
                let cx = &cx;
                let lanes: Vec<SendFuture<'_, Result<(u64, u64), RpcError>>> = (0..lanes)
                    .map(|lane| {
                        Box::pin(async move {
                            let (mut answered, mut refused) = (0u64, 0u64);
                            for i in (lane..n).step_by(lanes as usize) {
                                match cx.ext_method("_big", json!({"i": i, "bytes": bytes}), None).await {
                                    Ok(big) if big == big_answer(i, bytes) => answered += 1,
                                    Err(e) if refused_for_bounds(&e) => refused += 1,
                                    other => return Err(RpcError::internal_error(format!("_echo {i}: {other:?}"))),
                                }
                            }
                            Ok((answered, refused))
                        }) as SendFuture<'_, _>
                    })
                    .collect();
                let (mut answered, mut refused) = (0, 0);
                for lane in join_all(lanes).await {
                    let (a, r) = lane?;
                    (answered, refused) = (answered + a, refused + r);
                }
                Ok(json!({"answered": answered, "refused": refused}))
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
