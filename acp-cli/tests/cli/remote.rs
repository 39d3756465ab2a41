//! `acp serve` and `acp client --connect`: the reference agent served over WebSocket on
//! loopback, driven by the terminal client as a user would.

use crate::common;

use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

/// `acp serve --listen 127.0.0.1:0 [EXTRA] -- acp agent --quiet --slow-ms MARKER`, with its
/// stderr collected; the URL it listens on. The marker names its agent processes.
struct Served {
    child: Child,
    stderr: Arc<Mutex<String>>,
    url: String,
    marker: String,
    _reaper: KillOnDrop,
}

impl Served {
    fn start(extra: &[&str], cwd: &std::path::Path) -> Served {
        let acp = acp();
        let acp = acp.to_str().unwrap();
        let marker = unique_marker();
        let mut args = vec!["serve", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", acp, "agent", "--quiet", "--slow-ms", &marker]);
        let Serving { child, stderr, addr } = start_serving(&args, cwd);
        let reaper = KillOnDrop(vec![marker.clone()]);
        Served { child, stderr, url: format!("ws://{addr}/acp"), marker, _reaper: reaper }
    }

    /// The agent processes still running (the server's own command line holds the marker too).
    fn agents_left(&self, timeout: Duration) -> Vec<u32> {
        let server = self.child.id();
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left: Vec<u32> = survivors(&self.marker, Duration::ZERO).into_iter().filter(|&p| p != server).collect();
            if left.is_empty() || std::time::Instant::now() >= deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// SIGTERM, then the server must exit 0 within 10 s, having drained.
    fn stop(self) -> String {
        let run = stop_serving(self.child, self.stderr);
        assert!(run.stderr.contains("event=stopped"), "{}", run.stderr);
        run.stderr
    }
}

#[test]
fn a_remote_turn_with_a_permission_and_a_file_read_of_the_clients_machine() {
    let dir = TempDir::new("remote-turn");
    let path = dir.file("notes.txt", "remote hello\n");
    let served = Served::start(&[], dir.path());
    let prompt = format!("read {path}");
    let run = run(&["client", "--allow", "--connect", &served.url, "-p", &prompt], dir.path(), "");
    assert_eq!(run.code(), 0, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(&format!("connected to {}", served.url)), "{}", run.stdout);
    assert!(run.stdout.contains("remote hello"), "the agent read the client's file: {}", run.stdout);
    assert!(run.stdout.contains("permission"), "{}", run.stdout);
    // The agent process of the connection ended with it, and was reaped.
    assert_eq!(served.agents_left(Duration::from_secs(5)), Vec::<u32>::new());
    wait_for(&served.stderr, "event=connection_closed", Duration::from_secs(5));
    let log = served.stop();
    assert!(log.contains("agent_exit=\"exit status: 0\""), "{log}");
}

#[test]
fn a_token_file_is_required_from_clients_and_a_wrong_token_is_refused() {
    let dir = TempDir::new("remote-token");
    let token = dir.file("token", "correct-horse\n");
    let wrong = dir.file("wrong", "battery-staple\n");
    let served = Served::start(&["--token-file", &token], dir.path());
    let without = run(&["client", "--deny", "--connect", &served.url, "-p", "hi"], dir.path(), "");
    assert_eq!(without.code(), 1, "{}", without.stdout);
    assert!(
        without.stdout.contains("could not connect: ws://") && without.stdout.contains("401"),
        "{}",
        without.stdout
    );
    let wrong =
        run(&["client", "--deny", "--connect", &served.url, "--token-file", &wrong, "-p", "hi"], dir.path(), "");
    assert!(wrong.stdout.contains("401 Unauthorized"), "{}", wrong.stdout);
    let right =
        run(&["client", "--deny", "--connect", &served.url, "--token-file", &token, "-p", "hi"], dir.path(), "");
    assert_eq!(right.code(), 0, "{}\n{}", right.stdout, right.stderr);
    assert!(!served.log().contains("correct-horse"), "the token is never logged");
    served.stop();
}

#[test]
fn without_a_token_only_loopback_addresses_are_served() {
    let dir = TempDir::new("remote-open");
    let run = run(&["serve", "--listen", "0.0.0.0:0", "--", "true"], dir.path(), "");
    assert_eq!(run.code(), 1);
    assert!(run.stderr.contains("without --token-file"), "{}", run.stderr);
}

#[test]
fn a_client_killed_mid_turn_leaves_no_agent_behind_and_the_server_serves_on() {
    let dir = TempDir::new("remote-vanish");
    // A resumable build keeps a vanished client's agent for the grace period: one second here.
    let grace: &[&str] = if cfg!(feature = "unstable_resumable_transport") { &["--resume-grace", "1"] } else { &[] };
    let served = Served::start(grace, dir.path());
    let mut client = start(&["client", "--deny", "--connect", &served.url, "-p", "slow"], dir.path(), "", true);
    let stdout = collect(client.stdout.take().unwrap());
    wait_for(&served.stderr, "event=connection_opened", Duration::from_secs(10));
    wait_for(&stdout, "slow", Duration::from_secs(10));
    client.kill().unwrap();
    client.wait().unwrap();
    assert_eq!(served.agents_left(Duration::from_secs(10)), Vec::<u32>::new(), "the agent outlived its connection");
    wait_for(&served.stderr, "event=connection_closed", Duration::from_secs(5));
    let again = run(&["client", "--deny", "--connect", &served.url, "-p", "hello"], dir.path(), "");
    assert_eq!(again.code(), 0, "{}", again.stderr);
    served.stop();
}

#[test]
fn sigterm_cancels_and_answers_the_turn_in_flight_reaps_the_agent_and_exits() {
    let dir = TempDir::new("remote-drain");
    let served = Served::start(&[], dir.path());
    let mut client = start(&["client", "--deny", "--connect", &served.url, "-p", "slow"], dir.path(), "", true);
    let stdout = collect(client.stdout.take().unwrap());
    let stderr = collect(client.stderr.take().unwrap());
    wait_for(&stdout, "slow", Duration::from_secs(10));
    let pid = {
        let log = served.log();
        let at = log.find("agent_pid=").expect("the agent's pid is logged") + "agent_pid=".len();
        log[at..].split_whitespace().next().expect("a pid").to_owned()
    };
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists(), "the agent runs");
    let log = served.stop();
    assert!(log.contains("event=draining signal=SIGTERM"), "{log}");
    assert!(log.contains("event=connection_closed"), "{log}");
    // The server sent session/cancel; the agent answered the prompt `cancelled`, which reached
    // the client before the connection closed: the client exits with "cancelled" (3).
    let run = finish(client, stdout, stderr, Duration::from_secs(10));
    assert_eq!(run.code(), 3, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    // The server reaped its agent before it exited.
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "agent {pid} is left: {log}");
}
