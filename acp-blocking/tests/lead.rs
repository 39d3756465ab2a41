//! Leader/follower on the client side: a caller waiting for its reply drives the connection
//! itself while no other thread does, and hands back to the driver thread when it leaves.
//! Over the poll transport (a spawned `echo_agent`, or a scripted peer on a socket pair).

#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use acp_blocking::acp_proto::types::*;
use acp_blocking::{ClientConnection, ClientOptions, Error};
use common::*;
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(60);

/// The tests of this file run one at a time: `sequential_callers_read_their_own_replies`
/// finds its connection's driver thread as the one that appeared when it connected.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Many caller threads at once, each on its own session, mixing plain turns, turns with an
/// agent request to the client's handler, update storms, and turns that time out while their
/// thread may be leading (the core's timer must fire in whoever drives): every call ends
/// as it should, and the connection still works afterwards.
#[test]
fn many_callers_with_agent_requests_storms_and_timeouts_all_complete() {
    let _serial = serial();
    within(LIMIT, || {
        let client = TestClient { permission: Some("allow"), ..TestClient::default() };
        let conn = Arc::new(spawn_echo(client));
        handshake(&conn, false);
        let threads: Vec<_> = (0..6)
            .map(|t| {
                let conn = conn.clone();
                thread::spawn(move || {
                    let session = conn.new_session(NewSessionRequest::new("/tmp", vec![])).unwrap().session_id;
                    for i in 0..24 {
                        match (t + i) % 5 {
                            0 => {
                                let mut seen = Vec::new();
                                let stop =
                                    conn.prompt_with(prompt(&session, &format!("hi {t} {i}")), |u| seen.push(text(&u)));
                                assert_eq!(stop.unwrap(), StopReason::EndTurn);
                                assert_eq!(seen, [format!("hi {t} {i}")]);
                            }
                            1 => {
                                let turn = conn.prompt(prompt(&session, "permission")).unwrap();
                                let seen: Vec<String> = turn.map(|u| text(&u)).collect();
                                assert_eq!(seen, ["permission: allow"]);
                            }
                            2 => {
                                let mut turn = conn.prompt(prompt(&session, "storm 40")).unwrap();
                                let indices: Vec<u64> = turn
                                    .by_ref()
                                    .map(|u| text(&u).split(' ').next().unwrap().parse().unwrap())
                                    .collect();
                                assert_eq!(indices, (0..40).collect::<Vec<_>>());
                                assert_eq!(turn.finish().unwrap(), StopReason::EndTurn);
                            }
                            3 => {
                                // The caller drops its turn after three updates (the turn is
                                // cancelled); on a session of its own, which stays busy until
                                // the agent answers `cancelled`.
                                let request = NewSessionRequest::new("/tmp", vec![]);
                                let dropped = conn.new_session(request).unwrap().session_id;
                                let mut turn = conn.prompt(prompt(&dropped, "storm 100000")).unwrap();
                                let first: Vec<String> = turn.by_ref().take(3).map(|u| text(&u)).collect();
                                assert_eq!(first.len(), 3);
                                assert!(first[2].starts_with("2 "), "{first:?}");
                            }
                            _ => {
                                // The agent waits for a cancel; the caller gives up first. (On a
                                // session of its own: the timed-out turn runs on in the agent
                                // until the cancel reaches it.)
                                let request = NewSessionRequest::new("/tmp", vec![]);
                                let waiting = conn.new_session(request).unwrap().session_id;
                                let started = Instant::now();
                                let turn =
                                    conn.with_timeout(Duration::from_millis(40)).prompt(prompt(&waiting, "wait"));
                                let end = turn.and_then(|turn| turn.finish());
                                assert!(matches!(end, Err(Error::TimedOut)), "{end:?}");
                                assert!(started.elapsed() < Duration::from_secs(10), "the timer fired late");
                            }
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("a caller failed");
        }
        let session = conn.new_session(NewSessionRequest::new("/tmp", vec![])).unwrap().session_id;
        assert_eq!(conn.prompt(prompt(&session, "still here")).unwrap().finish().unwrap(), StopReason::EndTurn);
        let conn = Arc::try_unwrap(conn).expect("the callers are gone");
        assert!(conn.close().unwrap().unwrap().success());
    });
}

/// A scripted agent on a socket pair: answers `initialize`, `session/new` and `session/prompt`
/// (`end_turn`). `trailing` notifications follow each prompt's answer *in the same write*;
/// `later` more follow 5 ms afterwards, while no caller waits. A prompt saying `hang up` makes
/// it close its end instead of answering.
fn scripted_agent(peer: UnixStream, trailing: usize, later: usize) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut out = peer.try_clone().unwrap();
        let mut sent = 0usize;
        for line in BufReader::new(peer).lines() {
            let Ok(line) = line else { return };
            let message: Value = serde_json::from_str(&line).unwrap();
            let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else { continue };
            let result = match method {
                "initialize" => json!({"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}),
                "session/new" => json!({"sessionId": "s1"}),
                "session/prompt" if message["params"]["prompt"][0]["text"] == "hang up" => return,
                "session/prompt" => json!({"stopReason": "end_turn"}),
                _ => continue,
            };
            let mut batch = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string() + "\n";
            let update = |n: usize| {
                let params = json!({"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": n.to_string()}}});
                json!({"jsonrpc": "2.0", "method": "session/update", "params": params}).to_string() + "\n"
            };
            if method == "session/prompt" {
                for _ in 0..trailing {
                    batch += &update(sent);
                    sent += 1;
                }
            }
            if out.write_all(batch.as_bytes()).is_err() {
                return;
            }
            if method == "session/prompt" && later > 0 {
                thread::sleep(Duration::from_millis(5));
                let mut rest = String::new();
                for _ in 0..later {
                    rest += &update(sent);
                    sent += 1;
                }
                if out.write_all(rest.as_bytes()).is_err() {
                    return;
                }
            }
        }
    })
}

fn connect_scripted(
    client: Arc<TestClient>,
    trailing: usize,
    later: usize,
) -> (ClientConnection, thread::JoinHandle<()>) {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let agent = scripted_agent(theirs, trailing, later);
    let conn =
        ClientConnection::connect_fds(client, ours.try_clone().unwrap(), ours, ClientOptions::default()).unwrap();
    (conn, agent)
}

fn handshake_scripted(conn: &ClientConnection) -> SessionId {
    conn.with_timeout(Duration::from_secs(10)).initialize(InitializeRequest::new(ProtocolVersion::V1)).unwrap();
    conn.new_session(NewSessionRequest::new("/tmp", vec![])).unwrap().session_id
}

/// Notifications that arrive in the same read as a caller's reply, after it (the caller may
/// leave with them not yet dispatched), and notifications that arrive while no caller waits:
/// all reach the client's handler, in order.
#[test]
fn input_after_the_leaders_reply_or_between_calls_is_not_lost() {
    let _serial = serial();
    within(LIMIT, || {
        const ROUNDS: usize = 60;
        let client = Arc::new(TestClient::default());
        let (conn, agent) = connect_scripted(client.clone(), 3, 2);
        let session = handshake_scripted(&conn);
        // The later notifications may land in the next round's turn (they are that session's
        // updates while its prompt is in flight): those are collected from the turn.
        let mut in_turns = Vec::new();
        for _ in 0..ROUNDS {
            let stop = conn.prompt_with(prompt(&session, "go"), |u| in_turns.push(text(&u).parse::<usize>().unwrap()));
            assert_eq!(stop.unwrap(), StopReason::EndTurn);
        }
        // The last round's later notifications come 5 ms after its reply, with no one calling.
        let deadline = Instant::now() + Duration::from_secs(10);
        let outside = loop {
            let outside: Vec<usize> =
                client.outside.lock().unwrap().iter().map(|n| text(&n.update).parse().unwrap()).collect();
            if outside.len() + in_turns.len() >= ROUNDS * 5 || Instant::now() > deadline {
                break outside;
            }
            thread::sleep(Duration::from_millis(5));
        };
        assert!(outside.is_sorted() && in_turns.is_sorted(), "out of order: {outside:?} {in_turns:?}");
        let mut all = [outside, in_turns].concat();
        all.sort_unstable();
        assert_eq!(all, (0..ROUNDS * 5).collect::<Vec<_>>());
        conn.close().unwrap();
        agent.join().unwrap();
    });
}

/// The agent hangs up while a caller waits for its prompt's end (leading, after earlier
/// round trips handed the driving to callers): the caller learns the connection closed, and
/// closing it does not hang.
#[test]
fn the_peer_hanging_up_while_a_caller_leads_ends_the_call() {
    let _serial = serial();
    within(LIMIT, || {
        let (conn, agent) = connect_scripted(Arc::default(), 0, 0);
        let session = handshake_scripted(&conn);
        for _ in 0..20 {
            assert_eq!(conn.prompt(prompt(&session, "go")).unwrap().finish().unwrap(), StopReason::EndTurn);
        }
        let end = conn.prompt(prompt(&session, "hang up")).and_then(|turn| turn.finish());
        assert!(matches!(end, Err(Error::ConnectionClosed)), "{end:?}");
        let after = conn.new_session(NewSessionRequest::new("/tmp", vec![]));
        assert!(matches!(after, Err(Error::ConnectionClosed)), "{after:?}");
        conn.close().unwrap();
        agent.join().unwrap();
    });
}

/// The point of leading: over sequential round trips the caller reads its own replies, so
/// the driver thread (`acp-client`) sleeps through them instead of waking for each one
/// (before leader/follower it woke at least once per round trip).
#[cfg(target_os = "linux")]
#[test]
fn sequential_callers_read_their_own_replies() {
    let _serial = serial();
    within(LIMIT, || {
        const ROUNDS: u64 = 400;
        let others = driver_threads();
        let (conn, agent) = connect_scripted(Arc::default(), 0, 0);
        // This connection's driver thread (other tests run their own meanwhile).
        // (The new thread names itself once it runs.)
        let deadline = Instant::now() + Duration::from_secs(5);
        let ours = loop {
            let ours: Vec<_> = driver_threads().into_iter().filter(|t| !others.contains(t)).collect();
            if !ours.is_empty() || Instant::now() > deadline {
                break ours;
            }
            thread::sleep(Duration::from_millis(1));
        };
        let [ours] = ours[..] else { panic!("not one new driver thread: {ours:?}") };
        let session = handshake_scripted(&conn);
        for _ in 0..20 {
            conn.prompt(prompt(&session, "go")).unwrap().finish().unwrap();
        }
        let before = switches_of(ours);
        let started = Instant::now();
        for _ in 0..ROUNDS {
            assert_eq!(conn.prompt(prompt(&session, "go")).unwrap().finish().unwrap(), StopReason::EndTurn);
        }
        let elapsed = started.elapsed();
        let switches = switches_of(ours) - before;
        // The parked driver thread looks about once a millisecond whether callers still lead;
        // without leading it wakes about once per round trip.
        let allowed = ROUNDS / 2 + elapsed.as_millis() as u64;
        eprintln!("lead: {ROUNDS} round trips in {elapsed:?}; the driver thread switched {switches} times");
        assert!(switches < allowed.min(ROUNDS), "{switches} switches of the driver thread (allowed {allowed})");
        conn.close().unwrap();
        agent.join().unwrap();
    });
}

/// The ids of this process's `acp-client` threads.
#[cfg(target_os = "linux")]
fn driver_threads() -> Vec<u64> {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap().flatten();
    let named = |task: &std::fs::DirEntry| {
        std::fs::read_to_string(task.path().join("comm")).is_ok_and(|comm| comm.trim() == "acp-client")
    };
    tasks.filter(named).filter_map(|task| task.file_name().to_str()?.parse().ok()).collect()
}

/// The voluntary context switches of thread `tid` of this process.
#[cfg(target_os = "linux")]
fn switches_of(tid: u64) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("voluntary_ctxt_switches:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}
