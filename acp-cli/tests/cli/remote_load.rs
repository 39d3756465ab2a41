//! Load (issue 32 §5; the official Java SDK's gate is 0 errors and a bounded heap): 300
//! concurrent remote clients on loopback, half over WebSocket and half over Streamable HTTP,
//! each running a few turns against `acp serve` with `acp agent` (one agent process per
//! connection). Every client must see only its own session's updates (each prompt carries the
//! client's own nonce and session id, which the agent echoes), with 0 errors; `acp serve`'s RSS
//! (`VmRSS` in `/proc/PID/status`) stays bounded and comes back near its start once they left.
//! It prints what it measured.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use acp_tokio::acp_proto::types::*;
use acp_tokio::remote::{HttpClientOptions, WsClientOptions, connect_http, connect_ws};
use acp_tokio::{ClientConnection, Error};
use common::*;

const CLIENTS: usize = 300;
const TURNS: usize = 3;

/// Counts the updates that reached a client outside its turns (none should).
#[derive(Clone, Default)]
struct LoadClient {
    strays: Arc<AtomicUsize>,
}

impl acp_tokio::Client for LoadClient {
    async fn session_update(&self, _: SessionNotification) {
        self.strays.fetch_add(1, Ordering::Relaxed);
    }
}

/// One client's life: connect, initialize, a session, `TURNS` turns, close. `Ok` with the
/// number of updates it saw, or what went wrong.
async fn one_client(i: usize, base: &str, client: LoadClient) -> Result<usize, String> {
    let fail = |what: &str, e: Error| format!("client {i}: {what}: {e}");
    let conn: ClientConnection = if i.is_multiple_of(2) {
        connect_ws(client, &format!("ws://{base}/acp"), WsClientOptions::default())
            .await
            .map_err(|e| fail("connect", e))?
            .0
    } else {
        connect_http(client, &format!("http://{base}/acp"), HttpClientOptions::default())
            .await
            .map_err(|e| fail("connect", e))?
            .0
    };
    conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await.map_err(|e| fail("initialize", e))?;
    let session = conn
        .new_session(NewSessionRequest::new("/tmp", Vec::new()))
        .await
        .map_err(|e| fail("session/new", e))?
        .session_id;
    let mut seen = 0;
    for turn in 0..TURNS {
        // The agent's echo carries the nonce and the session id: an update of another client's
        // session cannot pass for this one's.
        let nonce = format!("client-{i}-turn-{turn} of {session}");
        let prompt = PromptRequest::new(session.clone(), vec![ContentBlock::text(format!("{nonce} commands"))]);
        let mut texts = Vec::new();
        let mut kinds = Vec::new();
        let stop = conn
            .prompt_with(prompt, |update| {
                if let SessionUpdate::AgentMessageChunk(chunk) = &update
                    && let ContentBlock::Text(text) = &chunk.content
                {
                    texts.push(text.text.clone());
                }
                kinds.push(std::mem::discriminant(&update));
            })
            .await
            .map_err(|e| fail("session/prompt", e))?;
        if stop != StopReason::EndTurn {
            return Err(format!("client {i}: turn {turn} ended {stop:?}"));
        }
        // echo, available_commands_update, done: each once, in this order.
        let echo = format!("echo: {nonce} commands");
        if texts != [echo.as_str(), "done"] || kinds.len() != 3 {
            return Err(format!("client {i}: turn {turn} saw {texts:?} ({} updates)", kinds.len()));
        }
        seen += kinds.len();
    }
    conn.close().await.map_err(|e| fail("close", e))?;
    Ok(seen)
}

/// What one wave of `CLIENTS` clients measured.
struct Wave {
    elapsed: Duration,
    errors: Vec<String>,
    updates: usize,
    peak_kib: u64,
    end_kib: u64,
    agents_left: Vec<u32>,
}

/// `CLIENTS` clients at once against the server at `addr` (pid `server`, its agents named by
/// `marker`); the server's peak RSS while they run, and its RSS once they left and every
/// agent was reaped.
fn wave(runtime: &tokio::runtime::Runtime, addr: &str, server: u32, marker: &str, strays: &Arc<AtomicUsize>) -> Wave {
    let started = Instant::now();
    let done = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || max_rss_while(server, || done.load(Ordering::Relaxed) == 1))
    };
    let results = runtime.block_on(async {
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let (addr, client) = (addr.to_owned(), LoadClient { strays: strays.clone() });
                tokio::spawn(async move { one_client(i, &addr, client).await })
            })
            .collect();
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await.unwrap_or_else(|e| Err(format!("a client task panicked: {e}"))));
        }
        results
    });
    let elapsed = started.elapsed();
    done.store(1, Ordering::Relaxed);
    let peak_kib = sampler.join().unwrap();
    let errors: Vec<String> = results.iter().filter_map(|r| r.as_ref().err().cloned()).collect();
    let updates: usize = results.iter().filter_map(|r| r.as_ref().ok()).sum();
    // The connections closed: the server reaps every agent and lets go of their buffers.
    let agents_left = {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left: Vec<u32> = processes_with_arg(marker).into_iter().filter(|&p| p != server).collect();
            if left.is_empty() || Instant::now() >= deadline {
                break left;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    std::thread::sleep(Duration::from_millis(500));
    let end_kib = rss_kib(server).expect("the server runs");
    Wave { elapsed, errors, updates, peak_kib, end_kib, agents_left }
}

#[test]
fn three_hundred_concurrent_remote_clients_see_only_their_own_updates_and_the_servers_rss_comes_back() {
    let dir = TempDir::new("remote-load");
    let acp = acp();
    let acp = acp.to_str().unwrap();
    let marker = unique_marker();
    let _reaper = KillOnDrop(vec![marker.clone()]);
    let max = CLIENTS.to_string();
    // A burst of 300 connects: each HTTP client opens up to three TCP connections (POSTs, its
    // connection stream, its session stream) before any has sent a complete request, which
    // is what the server counts as unauthenticated without a token (default 128: more are
    // closed, oldest first, a slowloris guard).
    let unauthenticated = (4 * CLIENTS).to_string();
    let args = [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--max-connections",
        &max,
        "--max-unauthenticated",
        &unauthenticated,
        "--",
        acp,
        "agent",
        "--quiet",
        "--slow-ms",
        &marker,
    ];
    let Serving { child, stderr, addr } = start_serving(&args, dir.path());
    let server = child.id();
    // A connection first, so that the start is measured with the server's runtime warm.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let strays = Arc::new(AtomicUsize::new(0));
    let warm = runtime.block_on(one_client(0, &addr, LoadClient { strays: strays.clone() }));
    assert!(warm.is_ok(), "{warm:?}");
    let start_kib = rss_kib(server).expect("the server runs");
    // Two waves: the second shows whether what the first left in RSS is the allocator's
    // retention (the same again) or growth per client (more).
    let waves = [wave(&runtime, &addr, server, &marker, &strays), wave(&runtime, &addr, server, &marker, &strays)];
    for (n, w) in waves.iter().enumerate() {
        println!(
            "remote load, wave {}: {CLIENTS} clients x {TURNS} turns ({} over WebSocket, {} over Streamable HTTP) in \
             {:.1?}: {} errors, {} updates; acp serve RSS start {start_kib} KiB, peak {} KiB, after {} KiB",
            n + 1,
            CLIENTS.div_ceil(2),
            CLIENTS / 2,
            w.elapsed,
            w.errors.len(),
            w.updates,
            w.peak_kib,
            w.end_kib,
        );
    }
    let bound = 3 * start_kib + 64 * 1024;
    for w in &waves {
        assert!(w.errors.is_empty(), "{} errors, the first: {:?}", w.errors.len(), &w.errors[..w.errors.len().min(5)]);
        assert_eq!(w.updates, CLIENTS * TURNS * 3);
        assert_eq!(w.agents_left, Vec::<u32>::new(), "agents outlived their connections");
        assert!(w.peak_kib < bound, "peak RSS {} KiB, bound {bound} KiB (3 x start + 64 MiB)", w.peak_kib);
        assert!(w.end_kib < bound, "RSS after {} KiB, bound {bound} KiB (3 x start + 64 MiB)", w.end_kib);
    }
    assert_eq!(strays.load(Ordering::Relaxed), 0, "updates reached a client outside its turns");
    // No growth per wave: the second leaves the server within 16 MiB of where the first did.
    let (first, second) = (waves[0].end_kib, waves[1].end_kib);
    assert!(second < first + 16 * 1024, "RSS after the first wave {first} KiB, after the second {second} KiB");
    let log = stop_serving(child, stderr).stderr;
    assert_eq!(
        log.matches("event=connection_closed").count(),
        2 * CLIENTS + 1,
        "{}",
        &log[log.len().saturating_sub(2000)..]
    );
}
