//! An ACP agent on stdio that echoes prompts, built on `acp-blocking`.
//!
//! `echo_agent` echoes every text block of a prompt back as an `agent_message_chunk`. A prompt
//! whose text starts with a command does something else instead (the adapter's tests and the
//! `client` example use these):
//!
//! | prompt | what the agent does |
//! |---|---|
//! | `storm N` | sends N updates `"<i> <64 bytes>"`, i = 0..N, then ends the turn |
//! | `permission` | asks permission for a tool call and echoes the outcome |
//! | `read PATH` | reads PATH through the client (`fs/read_text_file`) and echoes it |
//! | `terminal CMD ARGS...` | runs CMD in a client terminal and echoes its output |
//! | `wait` | sends `waiting`, then waits (up to 60 s) until the turn is cancelled |
//! | `panic` | panics in the handler (the client gets `-32603`) |
//!
//! `echo_agent --updates N` follows the benchmark workloads instead (`shared/bench`): every
//! prompt gets N identical 64-byte chunks, then `end_turn`. `echo_agent --tight` runs with tiny
//! bounds (4 requests in flight, 8 awaiting answers, a 256-byte output budget) on one-page
//! stdio pipes: the flood test (`tests/blocking/flood.rs`).
//!
//! Extension methods: `_echo` returns its params; `_sleep {"ms": N}` sleeps N ms without
//! looking at cancellation (an unresponsive handler); `_big {"i", "bytes"}` returns `i` and
//! `bytes` of padding; `_flood {"n", "bytes", "lanes"}` calls the client's `_big` `n` times,
//! `lanes` at once, and returns how many came back right (`answered`) and how many the
//! client's machine refused for its bounds (`refused`). Logs go to stderr only; the process
//! exits when stdin ends.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use acp_blocking::{Agent, PromptContext, RequestContext};
use serde_json::{Value, json};

#[path = "support/flood.rs"]
mod flood;

/// The benchmark's 64-byte chunk.
const CHUNK: &str = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ._";

struct EchoAgent {
    sessions: AtomicU64,
    /// `--updates N`: the benchmark behaviour.
    bench_updates: Option<u64>,
}

impl EchoAgent {
    fn command(&self, text: &str, cx: &PromptContext) -> Result<(), RpcError> {
        let mut words = text.split_whitespace();
        match words.next().unwrap_or("") {
            "storm" => {
                let n: u64 = words.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
                for i in 0..n {
                    if cx.is_cancelled() {
                        break;
                    }
                    cx.send_text(format!("{i} {CHUNK}"))?;
                }
            }
            "permission" => {
                let options = vec![
                    PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
                    PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
                ];
                let mut tool_call = ToolCallUpdate::new("call-1");
                tool_call.title = Some("touch /tmp/echo".into());
                let answer = match cx.request_permission(tool_call, options)? {
                    RequestPermissionOutcome::Selected(s) => s.option_id.to_string(),
                    _ => "cancelled".to_owned(),
                };
                cx.send_text(format!("permission: {answer}"))?;
            }
            "read" => {
                let path = words.next().unwrap_or("/");
                let text = match cx.read_text_file(path, None, None) {
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
                cx.cancellation().wait_timeout(Duration::from_secs(60));
            }
            "panic" => panic!("echo_agent was asked to panic"),
            _ => cx.send_text(text)?,
        }
        Ok(())
    }
}

impl Agent for EchoAgent {
    fn initialize(&self, request: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        eprintln!("echo_agent: initialize (client speaks version {})", request.protocol_version.0);
        let mut response = InitializeResponse::new(ProtocolVersion::V1);
        response.agent_info = Some(Implementation::new("echo_agent", env!("CARGO_PKG_VERSION")));
        Ok(response)
    }

    fn new_session(&self, _: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed);
        Ok(NewSessionResponse::new(format!("sess-{n}")))
    }

    fn prompt(&self, request: PromptRequest, cx: &PromptContext) -> Result<PromptResponse, RpcError> {
        if let Some(n) = self.bench_updates {
            for _ in 0..n {
                cx.send_text(CHUNK)?;
            }
            return Ok(PromptResponse::new(StopReason::EndTurn));
        }
        for block in request.prompt {
            if let ContentBlock::Text(text) = block {
                self.command(&text.text, cx)?;
            }
        }
        let stop = if cx.is_cancelled() { StopReason::Cancelled } else { StopReason::EndTurn };
        Ok(PromptResponse::new(stop))
    }

    fn ext_method(&self, method: &str, params: Value, cx: &RequestContext) -> Result<Value, RpcError> {
        match method {
            "_echo" => Ok(params),
            "_big" => Ok(flood::answer_big(&params)),
            "_flood" => {
                let n = params["n"].as_u64().unwrap_or(1);
                let lanes = params["lanes"].as_u64().unwrap_or(1).max(1);
                let bytes = params["bytes"].as_u64().unwrap_or(0);
                let call = |params| cx.ext_method("_big", params, None);
                let results: Vec<_> = std::thread::scope(|s| {
                    let lanes: Vec<_> =
                        (0..lanes).map(|lane| s.spawn(move || flood::run_lane(call, lane, lanes, n, bytes))).collect();
                    lanes.into_iter().map(|l| l.join().expect("a lane")).collect()
                });
                let (mut answered, mut refused) = (0, 0);
                for lane in results {
                    let (a, r) = lane.map_err(RpcError::internal_error)?;
                    (answered, refused) = (answered + a, refused + r);
                }
                Ok(json!({"answered": answered, "refused": refused}))
            }
            "_sleep" => {
                let ms = params.get("ms").and_then(Value::as_u64).unwrap_or(1000);
                std::thread::sleep(Duration::from_millis(ms));
                Ok(json!({}))
            }
            _ => Err(RpcError::method_not_found(method)),
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut bench_updates = None;
    let mut tight = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--updates" => bench_updates = args.next().and_then(|n| n.parse().ok()),
            "--tight" => tight = true,
            other => {
                eprintln!("echo_agent: unknown argument `{other}`; usage: echo_agent [--updates N] [--tight]");
                std::process::exit(2);
            }
        }
    }
    let agent = EchoAgent { sessions: AtomicU64::new(0), bench_updates };
    let result = if tight {
        flood::shrink_stdio_pipes();
        let mut options = acp_blocking::AgentOptions::default();
        options.config = flood::flood_config();
        acp_blocking::serve_with(agent, std::io::stdin(), std::io::stdout(), options)
    } else {
        acp_blocking::serve_stdio(agent)
    };
    if let Err(e) = result {
        eprintln!("echo_agent: {e}");
        std::process::exit(1);
    }
    eprintln!("echo_agent: stdin closed, exiting");
}
