//! Two processes flooding each other with requests over pipes: this test's client and a child
//! `tokio_echo_agent --tight`, both with tiny bounds (4 requests in flight, 8 awaiting answers,
//! a 256-byte output budget: `echo::flood_config`) on one-page pipes. Each keeps more requests
//! in flight at the other than the other may hold, and the answers are big, so both outputs
//! fill and both machines refuse requests themselves; once their own answers fill the output
//! they park what needs an answer and read on (`acp_proto::connection::parked`). Every request
//! must be answered (or refused for the bounds) and the connection must settle, within bounds.
//! (The deadlock the parking removed is shown on two machines through 256-byte pipes, in
//! `acp_proto`'s `two_machines_flooding_each_other_through_full_pipes_settle`: over real
//! pipes it needs a timing this test cannot force.)

use crate::common;

use std::process::Command;
use std::time::Duration;

use acp_tokio::acp_proto::RpcError;
use acp_tokio::{Client, ClientConnection, ClientContext, ClientOptions};
use common::echo::{SendFuture, big_answer, flood_config, refused_for_bounds};
use common::{example, init_with_caps, join_all};
use serde_json::{Value, json};

/// A client whose `_big {"i", "bytes"}` returns `i` and `bytes` of padding.
struct Big;

impl Client for Big {
    async fn ext_method(&self, method: &str, params: Value, _: ClientContext) -> Result<Value, RpcError> {
        match method {
            "_big" => Ok(big_answer(params["i"].as_u64().unwrap_or(0), params["bytes"].as_u64().unwrap_or(0))),
            other => Err(RpcError::method_not_found(other)),
        }
    }
}

/// Requests each side sends the other, the padding of each answer, and how many requests
/// each keeps in flight (`max_pending_outbound` of `flood_config`, twice the other's
/// `max_inbound`; the client's eighth is its `_flood` request).
const REQUESTS: u64 = 400;
const BYTES: u64 = 16 * 1024;
const LANES: u64 = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_flooding_each_other_over_pipes_settle() {
    let mut options = ClientOptions::default();
    options.config = flood_config();
    let mut agent = Command::new(example("tokio_echo_agent"));
    agent.arg("--tight");
    let conn = ClientConnection::spawn(Big, agent, options).expect("spawn");
    conn.initialize(init_with_caps()).await.expect("initialize");
    let flood = conn.ext_method("_flood", json!({"n": REQUESTS, "bytes": BYTES, "lanes": LANES}));
    let mut lanes: Vec<SendFuture<'_, Result<(u64, u64), String>>> = vec![Box::pin(async {
        let reply = flood.await.map_err(|e| format!("_flood: {e}"))?;
        match (reply["answered"].as_u64(), reply["refused"].as_u64()) {
            (Some(a), Some(r)) if a + r == REQUESTS && a > 0 => Ok((a, r)),
            _ => Err(format!("_flood: {reply}")),
        }
    })];
    for lane in 0..LANES - 1 {
        let conn = &conn;
        lanes.push(Box::pin(async move {
            let (mut answered, mut refused) = (0, 0);
            for i in (lane..REQUESTS).step_by(LANES as usize - 1) {
                match conn.ext_method("_big", json!({"i": i, "bytes": BYTES})).await {
                    Ok(big) if big == big_answer(i, BYTES) => answered += 1,
                    Err(e) if refused_for_bounds(&e) => refused += 1,
                    other => return Err(format!("_big {i}: {:?}", other.map(|v| v["i"].clone()))),
                }
            }
            Ok((answered, refused))
        }));
    }
    // A generous bound: the run takes about a second; stuck, it never ends.
    let results = tokio::time::timeout(Duration::from_secs(60), join_all(lanes)).await;
    let stats = conn.stats();
    let results = results.unwrap_or_else(|_| panic!("no progress in 60 s: {stats:?}"));
    let failed: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(failed.is_empty(), "{failed:?}");
    // Both machines reached their bounds: each refused some of the other's requests.
    let refused: Vec<u64> = results.iter().flatten().map(|(_, r)| *r).collect();
    assert!(refused[0] > 0, "the client's machine refused none of the agent's: {results:?}");
    assert!(refused[1..].iter().sum::<u64>() > 0, "the agent's machine refused none: {results:?}");
    // The core held a few answers and parked frames (its bounds), never the flood.
    assert!(stats.peak_memory_estimate < 256 * 1024, "{stats:?}");
    let status = conn.close().await.expect("close").expect("an exit status");
    assert!(status.success(), "{status:?}: {}", conn.stderr_tail());
}
