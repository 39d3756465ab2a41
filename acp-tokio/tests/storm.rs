//! The update storm: 100 000 updates in one turn, agent and client in this process, with the
//! memory bounded. A test binary of its own, so that the resident-set samples see only it.

mod common;

use acp_tokio::{AgentOptions, ClientConnection, ClientOptions, DriverStats};
use common::{EchoAgent, rss_kb, scenarios};

const UPDATES: u64 = 100_000;
/// Generous bounds: an unbounded queue anywhere would hold the whole storm (over 20 MB of
/// frames, several times that decoded).
const MAX_RSS_GROWTH_KB: u64 = 12 * 1024;
const MAX_CORE_ESTIMATE: usize = 4 << 20;
const MAX_BUFFERED: usize = 2 << 20;

fn check(stats: &DriverStats) {
    assert!(stats.peak_memory_estimate <= MAX_CORE_ESTIMATE, "{stats:?}");
    assert!(stats.peak_buffered_bytes <= MAX_BUFFERED, "{stats:?}");
}

/// Runs the storm on `conn` and checks the client's counters and the process's resident set.
async fn storm(conn: ClientConnection, runtime: &str) {
    let baseline = rss_kb();
    let mut peak = baseline;
    let count = scenarios::storm(&conn, UPDATES, || {
        peak = peak.max(rss_kb());
        check(&conn.stats());
    })
    .await;
    assert_eq!(count, UPDATES);
    conn.close().await.expect("close");
    // Final counters: the driver publishes them before it reports its end.
    let stats = conn.stats();
    check(&stats);
    assert!(stats.core.frames_in > UPDATES, "{stats:?}");
    let growth = peak.saturating_sub(baseline);
    eprintln!("{runtime}: {UPDATES} updates, resident set grew by {growth} KiB (from {baseline} KiB)");
    assert!(growth <= MAX_RSS_GROWTH_KB, "{runtime}: the resident set grew by {growth} KiB");
}

#[test]
fn update_storm_with_bounded_memory() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(agent_io);
        tokio::spawn(acp_tokio::serve(EchoAgent::default(), reader, writer, AgentOptions::default()));
        let (reader, writer) = tokio::io::split(client_io);
        storm(ClientConnection::connect((), reader, writer, ClientOptions::default()), "tokio").await;
    });
    drop(rt);

    #[cfg(feature = "async-std")]
    async_std::task::block_on(async {
        let (client_io, agent_io) = async_std::os::unix::net::UnixStream::pair().expect("a socket pair");
        let agent_writer = agent_io.clone();
        async_std::task::spawn(acp_tokio::async_std::serve(
            EchoAgent::default(),
            agent_io,
            agent_writer,
            AgentOptions::default(),
        ));
        let client_writer = client_io.clone();
        storm(acp_tokio::async_std::connect((), client_io, client_writer, ClientOptions::default()), "async-std").await;
    });
}
