//! Issue 28 §7: `SIGTERM` and `SIGHUP` end an interactive `acp client` and its agent, while
//! Ctrl-C keeps its meaning at the prompt (cancel the turn; a second one quits). The client
//! runs on a pseudo-terminal (`script`), as a user runs it, a turn of the reference agent
//! running (`slow`, kept open for as long as the marker's milliseconds). Before, the three
//! signals were one to the client: the first `SIGTERM` or `SIGHUP` only cancelled the turn,
//! and the client went back to its prompt and stayed. Now the client must be gone, with its
//! agent, within a generous bound, with 128 + the signal. Both protocol versions.
#![cfg(target_os = "linux")]

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use rustix::process::Signal;

/// How long the client and its agent get to be gone after the signal (a generous bound: the
/// client acts on it within about a second).
const GONE_WITHIN: Duration = Duration::from_secs(10);

/// The process of `acp client` (its first argument `client`) among those with `marker`.
fn client_process(marker: &str) -> u32 {
    let clients: Vec<u32> = processes_with_arg(marker)
        .into_iter()
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            cmdline.split(|&b| b == 0).nth(1) == Some(b"client".as_slice())
        })
        .collect();
    assert_eq!(clients.len(), 1, "one client process: {clients:?}");
    clients[0]
}

fn send(pid: u32, signal: Signal) {
    rustix::process::kill_process(rustix::process::Pid::from_raw(pid as i32).unwrap(), signal).unwrap();
}

/// Starts the client on a terminal, a turn running; the client's pid, or `None` without
/// `script`.
fn client_in_a_turn(dir: &TempDir, marker: &str, protocol: &[&str]) -> Option<(Pty, u32)> {
    let acp = acp().display().to_string();
    let protocol = protocol.join(" ");
    let command = format!("{acp} client {protocol} --deny -- {acp} agent {protocol} --quiet --slow-ms {marker}");
    let mut pty = Pty::start(dir.path(), &command, marker)?;
    pty.keys("slow\r");
    pty.wait_for("echo: slow");
    let client = client_process(marker);
    // The agent runs (its own process, with the marker too).
    assert!(processes_with_arg(marker).iter().any(|&p| p != client), "the agent runs");
    Some((pty, client))
}

/// `signal` to an interactive client in a turn: it must end, with its agent, with `code`.
fn a_signal_ends_the_client_in_a_turn(signal: Signal, code: i32, protocol: &[&str]) {
    let dir = TempDir::new("termination");
    let marker = unique_marker();
    let Some((pty, client)) = client_in_a_turn(&dir, &marker, protocol) else { return };
    send(client, signal);
    let deadline = Instant::now() + GONE_WITHIN;
    while processes_with_arg(&marker).contains(&client) {
        assert!(
            Instant::now() < deadline,
            "the client outlived {signal:?} by {GONE_WITHIN:?}; the screen:\n{}",
            pty.text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = survivors(&marker, Duration::from_secs(5));
    assert!(left.is_empty(), "the agent outlived the client: {left:?}");
    // `script -e` exits with the client's status.
    let out = pty.finish();
    assert_eq!(out.code(), code, "{out:?}");
}

#[test]
fn sigterm_ends_an_interactive_client_and_its_agent_mid_turn() {
    a_signal_ends_the_client_in_a_turn(Signal::TERM, 143, &[]);
}

#[test]
fn sighup_ends_an_interactive_client_and_its_agent_mid_turn() {
    a_signal_ends_the_client_in_a_turn(Signal::HUP, 129, &[]);
}

#[cfg(feature = "unstable_protocol_v2")]
#[test]
fn sigterm_ends_an_interactive_v2_client_and_its_agent_mid_turn() {
    a_signal_ends_the_client_in_a_turn(Signal::TERM, 143, &["--protocol", "2"]);
}

#[cfg(feature = "unstable_protocol_v2")]
#[test]
fn sighup_ends_an_interactive_v2_client_and_its_agent_mid_turn() {
    a_signal_ends_the_client_in_a_turn(Signal::HUP, 129, &["--protocol", "2"]);
}

/// Ctrl-C keeps its meaning: it cancels the turn and the client stays at its prompt.
#[test]
fn sigint_still_only_cancels_the_turn_of_an_interactive_client() {
    let dir = TempDir::new("termination-int");
    let marker = unique_marker();
    let Some((mut pty, client)) = client_in_a_turn(&dir, &marker, &[]) else { return };
    let from = pty.len();
    send(client, Signal::INT);
    pty.wait_after(from, "turn cancelled");
    // Still there, and still answering.
    let from = pty.len();
    pty.keys("again\r");
    pty.wait_after(from, "echo: again");
    assert!(processes_with_arg(&marker).contains(&client));
    pty.keys("\x04");
    let out = pty.finish();
    assert_eq!(out.code(), 0, "{out:?}");
}
