//! Two processes flooding each other with requests over pipes: this test's client and a child
//! `echo_agent --tight`, both with tiny bounds (4 requests in flight, 8 awaiting answers, a
//! 256-byte output budget: `flood_config`) on one-page pipes. Each keeps more requests in
//! flight at the other than the other may hold, and the answers are big, so both outputs fill
//! and both machines refuse requests themselves; once their own answers fill the output they
//! park what needs an answer and read on (`acp_proto::connection::parked`). Every request must
//! be answered (or refused for the bounds) and the connection must settle, within bounds.
//! (The deadlock the parking removed is shown on two machines through 256-byte pipes, in
//! `acp_proto`'s `two_machines_flooding_each_other_through_full_pipes_settle`: over real
//! pipes it needs a timing this test cannot force.)

use crate::common;

use std::process::Command;
use std::time::Duration;

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::{InitializeRequest, ProtocolVersion};
use acp_blocking::{Client, ClientConnection, ClientContext, ClientOptions};
use common::{echo_agent, within};
use serde_json::{Value, json};

// The flood pieces the example `echo_agent --tight` shares.
#[path = "../../examples/support/flood.rs"]
mod pieces;

/// A client whose `_big {"i", "bytes"}` returns `i` and `bytes` of padding.
struct Big;

impl Client for Big {
    fn ext_method(&self, method: &str, params: Value, _: &ClientContext) -> Result<Value, RpcError> {
        match method {
            "_big" => Ok(pieces::answer_big(&params)),
            other => Err(RpcError::method_not_found(other)),
        }
    }
}

/// Requests each side sends the other, the padding of each answer, and how many requests
/// each keeps in flight (`max_pending_outbound`, twice the other's `max_inbound`; the
/// client's eighth is its `_flood` request).
const REQUESTS: u64 = 400;
const BYTES: u64 = 16 * 1024;
const LANES: u64 = 8;

#[test]
fn two_processes_flooding_each_other_over_pipes_settle() {
    // A generous bound: the run takes about a second; stuck, it never ends.
    within(Duration::from_secs(60), || {
        let mut options = ClientOptions::default();
        options.config = pieces::flood_config();
        let mut agent = Command::new(echo_agent());
        agent.arg("--tight");
        let conn = ClientConnection::spawn(Big, agent, options).expect("spawn");
        conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).expect("initialize");
        let results: Vec<Result<(u64, u64), String>> = std::thread::scope(|s| {
            let conn = &conn;
            let flood = s.spawn(move || {
                let reply = conn
                    .ext_method("_flood", json!({"n": REQUESTS, "bytes": BYTES, "lanes": LANES}))
                    .map_err(|e| format!("_flood: {e}"))?;
                match (reply["answered"].as_u64(), reply["refused"].as_u64()) {
                    (Some(a), Some(r)) if a + r == REQUESTS && a > 0 => Ok((a, r)),
                    _ => Err(format!("_flood: {reply}")),
                }
            });
            let call = |params| conn.ext_method("_big", params);
            let lanes: Vec<_> = (0..LANES - 1)
                .map(|lane| s.spawn(move || pieces::run_lane(call, lane, LANES - 1, REQUESTS, BYTES)))
                .collect();
            std::iter::once(flood).chain(lanes).map(|t| t.join().expect("a lane")).collect()
        });
        let failed: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
        assert!(failed.is_empty(), "{failed:?}");
        // Both machines reached their bounds: each refused some of the other's requests.
        let refused: Vec<u64> = results.iter().flatten().map(|(_, r)| *r).collect();
        assert!(refused[0] > 0, "the client's machine refused none of the agent's: {results:?}");
        assert!(refused[1..].iter().sum::<u64>() > 0, "the agent's machine refused none: {results:?}");
        let status = conn.close().expect("close").expect("an exit status");
        assert!(status.success(), "{status:?}: {}", conn.stderr_tail());
    });
}
