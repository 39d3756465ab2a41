//! Faults on a real network (issue 32 §5): `acp serve` runs in a network namespace the test
//! creates (see `common/netns.rs`: skipped with a message where it cannot make one, required in
//! CI), `acp client --connect` reaches it over a veth pair, and Linux's own tools hurt the link:
//! `tc netem` delay and loss, `ss -K` killing the TCP connection mid-turn, the server killed
//! and started again. Each test asserts what the user sees: the rendered turn, the error and
//! the exit code, and that no agent process is left behind.

use crate::common;

use std::path::Path;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

/// The server's port inside its namespace (a namespace has its own ports).
const PORT: u16 = 8765;

/// `acp serve` inside a namespace, serving `acp agent --quiet --slow-ms MARKER` (a `slow`
/// turn stays open until cancelled; the marker names its agent processes).
struct Served {
    ns: NetNs,
    child: Child,
    stderr: Arc<Mutex<String>>,
    token: String,
    marker: String,
    _reaper: KillOnDrop,
}

impl Served {
    fn start(test: &str, dir: &TempDir) -> Option<Served> {
        let ns = NetNs::create(test)?;
        let token = dir.file("token", "fault-token\n");
        let marker = unique_marker();
        let reaper = KillOnDrop(vec![marker.clone()]);
        let (child, stderr) = serve(&ns, &token, &marker, dir.path());
        Some(Served { ns, child, stderr, token, marker, _reaper: reaper })
    }

    fn url(&self, scheme: &str) -> String {
        format!("{scheme}://{}:{PORT}/acp", self.ns.ns_ip)
    }

    /// `acp client --token-file … --connect URL ARGS`, started (stdin kept open).
    fn client(&self, url: &str, args: &[&str], cwd: &Path) -> Child {
        let mut all = vec!["client", "--token-file", &self.token, "--connect", url];
        all.extend_from_slice(args);
        start(&all, cwd, "", true)
    }

    /// The same, run to its end.
    fn run_client(&self, url: &str, args: &[&str], cwd: &Path) -> Run {
        let mut child = self.client(url, args, cwd);
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        finish(child, stdout, stderr, Duration::from_secs(60))
    }

    /// The agent processes still running after up to `timeout` (the server's own command line
    /// holds the marker too).
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

    /// SIGTERM: the server drains and exits 0.
    fn stop(self) -> String {
        let Served { ns, child, stderr, _reaper, .. } = self;
        let run = stop_serving(child, stderr);
        drop(ns);
        run.stderr
    }
}

fn serve(ns: &NetNs, token: &str, marker: &str, cwd: &Path) -> (Child, Arc<Mutex<String>>) {
    let acp = acp();
    let acp = acp.to_str().unwrap();
    ns.serve(PORT, token, &["--", acp, "agent", "--quiet", "--slow-ms", marker], cwd)
}

/// The rendered output without the line naming the connection (its id differs per run).
fn rendered(stdout: &str) -> String {
    stdout
        .lines()
        .filter(|l| !l.starts_with("connected to ws://") && !l.starts_with("connected to http://"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A turn with every kind of update the reference agent sends (echo, thought, plan, tool call,
/// permission, the client's file read, tool call updates, done) on a clean link, then the same
/// turn with `delay 20ms loss 2%` both ways: the user sees exactly the same output.
fn a_turn_under_delay_and_loss(scheme: &str) {
    let test = format!("a_turn_over_{scheme}_under_delay_and_loss");
    let dir = TempDir::new(&format!("fault-netem-{scheme}"));
    let Some(served) = Served::start(&test, &dir) else { return };
    let path = dir.file("notes.txt", "read across a lossy link\n");
    let url = served.url(scheme);
    let prompt = format!("read {path}");
    let clean = served.run_client(&url, &["--allow", "-p", &prompt], dir.path());
    assert_eq!(clean.code(), 0, "stdout:\n{}\nstderr:\n{}", clean.stdout, clean.stderr);
    assert!(clean.stdout.contains("read across a lossy link"), "{}", clean.stdout);
    match served.ns.netem(&test, "delay 20ms loss 2%") {
        Ok(true) => {}
        Ok(false) => return,
        Err(why) => panic!("tc netem: {why}"),
    }
    let started = std::time::Instant::now();
    let lossy = served.run_client(&url, &["--allow", "-p", &prompt], dir.path());
    println!("{test}: the turn took {:?} with delay 20ms loss 2%", started.elapsed());
    assert_eq!(lossy.code(), 0, "stdout:\n{}\nstderr:\n{}", lossy.stdout, lossy.stderr);
    assert_eq!(rendered(&lossy.stdout), rendered(&clean.stdout), "every update once, in order");
    assert_eq!(served.agents_left(Duration::from_secs(10)), Vec::<u32>::new());
    served.stop();
}

#[test]
fn a_websocket_turn_under_delay_and_loss_renders_every_update_once_in_order() {
    a_turn_under_delay_and_loss("ws");
}

#[test]
fn a_streamable_http_turn_under_delay_and_loss_renders_every_update_once_in_order() {
    a_turn_under_delay_and_loss("http");
}

/// A `slow` turn whose TCP connection(s) are killed (`ss -K` inside the namespace) after its
/// first update: the client says the connection closed during the prompt and exits 7, the
/// server reaps the agent, and serves the next client. A build with resumable streams resumes
/// the connection instead, which `remote_resume.rs` checks (a client cut off three times
/// through a relay; a client gone mid-turn whose agent lives for the grace period).
#[cfg(not(feature = "unstable_resumable_transport"))]
fn a_connection_cut_mid_turn(scheme: &str) {
    let test = format!("a_{scheme}_connection_cut_mid_turn");
    let dir = TempDir::new(&format!("fault-cut-{scheme}"));
    let Some(served) = Served::start(&test, &dir) else { return };
    let url = served.url(scheme);
    let mut client = served.client(&url, &["--deny", "-p", "slow"], dir.path());
    let stdout = collect(client.stdout.take().unwrap());
    let stderr = collect(client.stderr.take().unwrap());
    wait_for(&stdout, "echo: slow", Duration::from_secs(20));
    wait_for(&served.stderr, "event=connection_opened", Duration::from_secs(5));
    assert!(!served.ns.connections().is_empty(), "the client's TCP connection is established");
    served.ns.kill_connections();
    let run = finish(client, stdout, stderr, Duration::from_secs(20));
    assert_eq!(run.code(), 7, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(&format!("during session/prompt (the connection to {url} closed)")), "{}", run.stdout);
    assert_eq!(served.agents_left(Duration::from_secs(15)), Vec::<u32>::new(), "the agent outlived its connection");
    wait_for(&served.stderr, "event=connection_closed", Duration::from_secs(5));
    let again = served.run_client(&url, &["--deny", "-p", "hello"], dir.path());
    assert_eq!(again.code(), 0, "{}\n{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("end of turn"), "{}", again.stdout);
    let log = served.stop();
    assert_eq!(log.matches("event=connection_closed").count(), 2, "{log}");
}

#[cfg(not(feature = "unstable_resumable_transport"))]
#[test]
fn a_websocket_connection_cut_mid_turn_is_reported_and_the_agent_reaped() {
    a_connection_cut_mid_turn("ws");
}

#[cfg(not(feature = "unstable_resumable_transport"))]
#[test]
fn a_streamable_http_connection_cut_mid_turn_is_reported_and_the_agent_reaped() {
    a_connection_cut_mid_turn("http");
}

/// The server is killed (SIGKILL: no drain) mid-turn and started again on the same address:
/// the client of the lost server says its connection closed and exits 7, the agent does not
/// outlive its server, and a client of the new server runs its turn.
fn a_server_restart_mid_turn(scheme: &str) {
    let test = format!("a_{scheme}_server_restart_mid_turn");
    let dir = TempDir::new(&format!("fault-restart-{scheme}"));
    let Some(mut served) = Served::start(&test, &dir) else { return };
    let url = served.url(scheme);
    let mut client = served.client(&url, &["--deny", "-p", "slow"], dir.path());
    let stdout = collect(client.stdout.take().unwrap());
    let stderr = collect(client.stderr.take().unwrap());
    wait_for(&stdout, "echo: slow", Duration::from_secs(20));
    served.child.kill().unwrap();
    served.child.wait().unwrap();
    let run = finish(client, stdout, stderr, Duration::from_secs(20));
    assert_eq!(run.code(), 7, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(&format!("(the connection to {url} closed)")), "{}", run.stdout);
    // The agent's stdin closed with its server: it ends.
    assert_eq!(served.agents_left(Duration::from_secs(15)), Vec::<u32>::new(), "the agent outlived its server");
    let (child, stderr) = serve(&served.ns, &served.token, &served.marker, dir.path());
    served.child = child;
    served.stderr = stderr;
    let again = served.run_client(&url, &["--deny", "-p", "hello"], dir.path());
    assert_eq!(again.code(), 0, "{}\n{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("echo: hello"), "{}", again.stdout);
    assert!(again.stdout.contains("end of turn"), "{}", again.stdout);
    served.stop();
}

#[test]
fn a_websocket_client_is_told_when_its_server_restarts_mid_turn() {
    a_server_restart_mid_turn("ws");
}

#[test]
fn a_streamable_http_client_is_told_when_its_server_restarts_mid_turn() {
    a_server_restart_mid_turn("http");
}
