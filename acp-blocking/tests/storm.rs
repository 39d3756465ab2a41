//! The update storm: 300 000 updates from the `echo_agent` child process through OS pipes, with
//! a consumer that starts late, in bounded memory on both sides. Its own test binary, so that
//! this process's memory is the storm's alone.

mod common;

use std::thread;
use std::time::{Duration, Instant};

use acp_blocking::acp_proto::types::StopReason;
use common::*;

const UPDATES: u64 = 300_000;
/// Peak resident memory either process may gain during the storm. Queuing every update would
/// take far more than this on each side (the agent's frames are 70 MB on the wire, the
/// client's decoded updates over 250 MiB: a `SessionNotification` is 832 bytes before its
/// text). The adapter's bounds keep the agent at a few MiB and the client near
/// `ClientOptions::max_buffered` (4096) queued updates: 8 MiB measured when acp-blocking is
/// built alone, 16 MiB in a workspace build, where the official schema crate (a test
/// dependency) turns on serde_json's `preserve_order` and the decoded updates grow. The peak
/// grows with `max_buffered`, not with the number of updates.
const MAX_GROWTH_KIB: u64 = 32 * 1024;

#[cfg(target_os = "linux")]
#[test]
fn a_storm_of_300k_updates_arrives_in_order_in_bounded_memory() {
    within(Duration::from_secs(120), || {
        let conn = spawn_echo(TestClient::default());
        let session = handshake(&conn, false);
        let agent_pid = conn.child_id().unwrap().to_string();
        let agent_before = proc_kib(&agent_pid, "VmRSS:").unwrap();
        // Reset this process's peak to its current size (Linux >= 4.0), then take the baseline.
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let client_before = proc_kib("self", "VmRSS:").unwrap();

        let started = Instant::now();
        let mut turn = conn.prompt(prompt(&session, &format!("storm {UPDATES}"))).unwrap();
        // A consumer that starts late: meanwhile every queue between the two fills to its bound.
        thread::sleep(Duration::from_secs(1));
        let mut next = 0u64;
        for update in &mut turn {
            let text = text(&update);
            let index = text.split(' ').next().unwrap();
            assert_eq!(index, next.to_string(), "updates out of order");
            next += 1;
        }
        assert_eq!(turn.finish().unwrap(), StopReason::EndTurn);
        assert_eq!(next, UPDATES);
        let elapsed = started.elapsed();

        let agent_peak = proc_kib(&agent_pid, "VmHWM:").unwrap();
        let client_peak = proc_kib("self", "VmHWM:").unwrap();
        eprintln!(
            "storm: {UPDATES} updates in {elapsed:?} ({:.0}/s, debug build incl. a 1 s pause); \
             agent RSS {agent_before} KiB -> peak {agent_peak} KiB; client RSS {client_before} KiB -> peak {client_peak} KiB",
            UPDATES as f64 / elapsed.as_secs_f64()
        );
        assert!(
            agent_peak.saturating_sub(agent_before) < MAX_GROWTH_KIB,
            "the agent grew from {agent_before} KiB to a peak of {agent_peak} KiB"
        );
        assert!(
            client_peak.saturating_sub(client_before) < MAX_GROWTH_KIB,
            "the client grew from {client_before} KiB to a peak of {client_peak} KiB"
        );
        assert!(conn.close().unwrap().unwrap().success());
    });
}
