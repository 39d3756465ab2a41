//! The flood test's pieces (`echo_agent --tight`, `tests/blocking/flood.rs`), shared by the example and
//! the test (which include this file with `#[path]`).
#![allow(dead_code)]

use acp_blocking::Error;
use acp_blocking::acp_proto::Config;
use serde_json::{Value, json};

/// Tiny bounds: a 256-byte output budget, 4 requests in flight, 8 awaiting answers (twice
/// the peer's 4).
pub(crate) fn flood_config() -> Config {
    Config::default().with_outbound_budget(256).with_max_inbound(4).with_max_pending_outbound(8)
}

/// The answer to `_big {"i", "bytes"}`: `i` and `bytes` of padding.
pub(crate) fn big_answer(i: u64, bytes: u64) -> Value {
    json!({"i": i, "pad": "p".repeat(bytes as usize)})
}

/// The answer to a `_big` request's params.
pub(crate) fn answer_big(params: &Value) -> Value {
    big_answer(params["i"].as_u64().unwrap_or(0), params["bytes"].as_u64().unwrap_or(0))
}

/// Whether `e` is the refusal of a machine whose requests in flight were at their bound.
pub(crate) fn refused_for_bounds(e: &Error) -> bool {
    e.rpc().is_some_and(|rpc| {
        let reason = rpc.data.as_ref().and_then(|d| d["reason"].as_str());
        rpc.code.0 == -32603 && matches!(reason, Some("too many requests in flight" | "output queue full"))
    })
}

/// Calls `_big` through `call` for every `i` of `lane` (`lane`, `lane + lanes`, … below `n`);
/// how many came back right and how many were refused for the bounds, or what went wrong.
pub(crate) fn run_lane(
    call: impl Fn(Value) -> Result<Value, Error>,
    lane: u64,
    lanes: u64,
    n: u64,
    bytes: u64,
) -> Result<(u64, u64), String> {
    let (mut answered, mut refused) = (0, 0);
    for i in (lane..n).step_by(lanes as usize) {
        match call(json!({"i": i, "bytes": bytes})) {
            Ok(big) if big == big_answer(i, bytes) => answered += 1,
            Err(e) if refused_for_bounds(&e) => refused += 1,
            other => return Err(format!("_big {i}: {:?}", other.map(|v| v["i"].clone()))),
        }
    }
    Ok((answered, refused))
}

/// Makes this process's stdin and stdout pipes one page long (Linux), so both directions
/// fill after a few frames.
pub(crate) fn shrink_stdio_pipes() {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsFd;
        for fd in [std::io::stdin().as_fd(), std::io::stdout().as_fd()] {
            let _ = rustix::pipe::fcntl_setpipe_size(fd, 4096);
        }
    }
}
