//! The tokio client driving a real agent process: the `tokio_echo_agent` example, and shell scripts
//! for the process-group close sequence. Real time: nothing here sleeps longer than it must.

use crate::common;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::{Duration, Instant};

use acp_tokio::acp_proto::types::*;
use acp_tokio::{ClientConnection, ClientOptions, Error};
use common::{TestClient, example, handshake, prompt, scenarios};
use serde_json::json;

fn echo_agent() -> Command {
    Command::new(example("tokio_echo_agent"))
}

fn quick_close() -> ClientOptions {
    let mut options = ClientOptions::default();
    options.close_grace = Duration::from_millis(300);
    options.kill_grace = Duration::from_millis(300);
    options
}

/// Waits (a bounded while) until `condition` holds.
async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn handshake_prompt_stream_permission_and_fs_with_a_child_agent() {
    let (mut client, mut events) = TestClient::with_events();
    client.permission = Some("allow");
    let conn = ClientConnection::spawn(client.clone(), echo_agent(), ClientOptions::default()).expect("spawn");
    assert!(conn.child_id().is_some());
    let session = scenarios::handshake_and_sessions(&conn).await;
    scenarios::prompt_stream(&conn, &session).await;
    scenarios::permission_granted(&conn, &session, &mut events).await;
    scenarios::fs_read(&conn, &session, &client).await;
    scenarios::terminal(&conn, &session).await;
    scenarios::update_outside_turn(&conn, &session, &mut events).await;
    let start = Instant::now();
    let status = conn.close().await.expect("close").expect("an exit status");
    assert!(status.success(), "the agent exits by itself on end of input: {status:?}");
    assert!(start.elapsed() < Duration::from_millis(900), "no grace period was needed");
    assert_eq!(conn.close().await.expect("close again").map(|s| s.code()), Some(Some(0)), "same status twice");
}

#[tokio::test]
async fn cancel_mid_turn_dropped_request_and_timeout_with_a_child_agent() {
    let conn = ClientConnection::spawn(TestClient::default(), echo_agent(), ClientOptions::default()).expect("spawn");
    let session = handshake(&conn).await;
    scenarios::cancel_mid_turn(&conn, &session, None).await;

    // A dropped request: the agent is told (`$/cancel_request`) and answers `-32800`, which
    // arrives after the outcome and is dropped as late.
    let late = conn.stats().core.late_responses;
    let call = tokio::time::timeout(Duration::from_millis(50), conn.ext_method("_wait", json!({}))).await;
    assert!(call.is_err(), "`_wait` answers only when cancelled");
    eventually("the agent's answer to the cancelled request", || conn.stats().core.late_responses == late + 1).await;

    let result = conn.with_timeout(Duration::from_millis(100)).ext_method("_wait", json!({})).await;
    assert!(matches!(result, Err(Error::TimedOut)), "{result:?}");
    eventually("the agent's answer to the timed-out request", || conn.stats().core.late_responses == late + 2).await;
    assert!(conn.close().await.expect("close").expect("status").success());
}

#[tokio::test]
async fn handler_panic_in_a_child_answers_internal_error_and_stderr_is_kept() {
    let conn = ClientConnection::spawn(TestClient::default(), echo_agent(), ClientOptions::default()).expect("spawn");
    let session = handshake(&conn).await;
    scenarios::panic_isolated(&conn, &session).await;
    eventually("the panic message on stderr", || conn.stderr_tail().contains("echo_agent was asked to panic")).await;
    assert!(conn.close().await.expect("close").expect("status").success());
}

#[tokio::test]
async fn agent_killed_mid_turn() {
    let conn = ClientConnection::spawn(TestClient::default(), echo_agent(), ClientOptions::default()).expect("spawn");
    let session = handshake(&conn).await;
    let mut turn = conn.prompt(prompt(&session, "wait")).await.expect("prompt accepted");
    assert!(turn.next_update().await.is_some(), "the turn runs");
    let pid = conn.child_id().expect("a pid");
    let pid = rustix::process::Pid::from_raw(pid as i32).expect("a valid pid");
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("kill");
    assert!(turn.next_update().await.is_none());
    assert!(matches!(turn.finish().await, Err(Error::ConnectionClosed)));
    assert!(matches!(conn.new_session(NewSessionRequest::new("/", Vec::new())).await, Err(Error::ConnectionClosed)));
    let status = conn.close().await.expect("close").expect("status");
    assert_eq!(status.signal(), Some(9), "{status:?}");
}

#[tokio::test]
async fn close_terminates_then_kills_the_process_group() {
    // Exits on SIGTERM: terminated after the grace period.
    let mut sleeper = Command::new("sh");
    sleeper.args(["-c", "sleep 300"]);
    let conn = ClientConnection::spawn((), sleeper, quick_close()).expect("spawn");
    let start = Instant::now();
    let status = conn.close().await.expect("close").expect("status");
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert!(start.elapsed() >= Duration::from_millis(300));

    // Ignores SIGTERM (and so does the grandchild it starts): both are killed with the group.
    let mut stubborn = Command::new("sh");
    stubborn.args(["-c", "trap '' TERM; sleep 300 & echo \"grandchild $!\" >&2; wait"]);
    let conn = ClientConnection::spawn((), stubborn, quick_close()).expect("spawn");
    eventually("the grandchild's pid on stderr", || conn.stderr_tail().ends_with('\n')).await;
    let tail = conn.stderr_tail();
    let grandchild: u32 = tail.trim().strip_prefix("grandchild ").and_then(|p| p.parse().ok()).expect("a pid");
    assert!(!process_gone(grandchild));
    let start = Instant::now();
    let status = conn.close().await.expect("close").expect("status");
    assert_eq!(status.signal(), Some(9), "{status:?}");
    assert!(start.elapsed() >= Duration::from_millis(600), "two grace periods");
    eventually("the grandchild's death", || process_gone(grandchild)).await;
}

#[tokio::test]
async fn dropping_the_connection_ends_the_child() {
    let conn = ClientConnection::spawn(TestClient::default(), echo_agent(), quick_close()).expect("spawn");
    handshake(&conn).await;
    let pid = conn.child_id().expect("a pid");
    assert!(!process_gone(pid));
    drop(conn);
    eventually("the agent's exit", || process_gone(pid)).await;
}

#[tokio::test]
async fn spawning_a_missing_program_fails_cleanly() {
    let result = ClientConnection::spawn((), Command::new("/nonexistent/agent"), ClientOptions::default());
    assert!(matches!(result, Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound));
}

#[tokio::test]
async fn close_returns_with_the_agents_last_stderr_line_in_the_tail() {
    // Writes its last words after its input ends, then exits by itself.
    let mut command = Command::new("sh");
    command.args(["-c", "cat >/dev/null; sleep 0.05; echo 'last words' >&2"]);
    let conn = ClientConnection::spawn((), command, quick_close()).expect("spawn");
    let status = conn.close().await.expect("close").expect("a child");
    assert!(status.success(), "{status:?}");
    // No waiting here: `close` itself waited for stderr to be read to its end.
    assert_eq!(conn.stderr_tail(), "last words\n");
}
