//! `acp client --connect http://…`: the reference agent served by `acp serve` on loopback,
//! reached over Streamable HTTP (POSTs and SSE streams), driven by the terminal client as a
//! user would.

use crate::common;

use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

/// `acp serve --listen 127.0.0.1:0 [EXTRA] -- acp agent --quiet`, with its stderr
/// collected; the Streamable HTTP URL it listens on.
struct Served {
    child: Child,
    stderr: Arc<Mutex<String>>,
    url: String,
}

impl Served {
    fn start(extra: &[&str], cwd: &std::path::Path) -> Served {
        let acp = acp();
        let acp = acp.to_str().unwrap();
        let mut args = vec!["serve", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", acp, "agent", "--quiet"]);
        let Serving { child, stderr, addr } = start_serving(&args, cwd);
        Served { child, stderr, url: format!("http://{addr}/acp") }
    }

    /// SIGTERM, then the server must exit 0 within 10 s.
    fn stop(self) -> String {
        stop_serving(self.child, self.stderr).stderr
    }
}

#[test]
fn a_turn_over_streamable_http_with_a_permission_and_a_file_read_of_the_clients_machine() {
    let dir = TempDir::new("remote-http-turn");
    let path = dir.file("notes.txt", "remote http hello\n");
    let served = Served::start(&[], dir.path());
    let prompt = format!("read {path}");
    let run = run(&["client", "--allow", "--connect", &served.url, "-p", &prompt], dir.path(), "");
    assert_eq!(run.code(), 0, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(&format!("connected to {}", served.url)), "{}", run.stdout);
    assert!(run.stdout.contains("remote http hello"), "the agent read the client's file: {}", run.stdout);
    assert!(run.stdout.contains("permission"), "{}", run.stdout);
    // The client's DELETE ended the connection on the server (its idle timeout is 10 minutes).
    wait_for(&served.stderr, "event=connection_closed", Duration::from_secs(5));
    let log = served.stop();
    assert!(log.contains("agent_exit=\"exit status: 0\""), "{log}");
}

#[test]
fn without_the_servers_token_initialize_fails_with_401_and_with_it_the_turn_runs() {
    let dir = TempDir::new("remote-http-token");
    let token = dir.file("token", "correct-horse\n");
    let served = Served::start(&["--token-file", &token], dir.path());
    let without = run(&["client", "--deny", "--connect", &served.url, "-p", "hi"], dir.path(), "");
    // Refused as over WebSocket: a local failure (1), not a protocol error.
    assert_eq!(without.code(), 1, "{}", without.stdout);
    assert!(without.stdout.contains("401 Unauthorized"), "{}\n{}", without.stdout, without.stderr);
    let right =
        run(&["client", "--deny", "--connect", &served.url, "--token-file", &token, "-p", "hi"], dir.path(), "");
    assert_eq!(right.code(), 0, "{}\n{}", right.stdout, right.stderr);
    assert!(right.stdout.contains("end of turn"), "{}", right.stdout);
    served.stop();
}

#[test]
fn nothing_listening_is_reported_and_exits_1() {
    let dir = TempDir::new("remote-http-refused");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/acp", listener.local_addr().expect("addr"));
    drop(listener);
    let run = run(&["client", "--deny", "--connect", &url, "-p", "hi"], dir.path(), "");
    assert_eq!(run.code(), 1, "{}", run.stdout);
    assert!(run.stdout.contains("could not connect: http://"), "{}", run.stdout);
}
