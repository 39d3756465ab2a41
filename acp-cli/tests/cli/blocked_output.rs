//! Issue 28 §7: a termination signal ends `acp client` and its agent whatever stdout does. A
//! client whose stdout nobody reads (a full pipe, a paused terminal) used to catch `SIGTERM`
//! but sit in `write(2)` on its UI thread, so that the signal was never acted on (`timeout
//! 120` left one alive for 29 minutes). Here the reference agent echoes a 1 MB prompt into a
//! pipe nobody reads, and keeps the turn open (`slow`); once the pipe is full, `SIGTERM`
//! must end the client and the agent well within 10 s, with 143 (128 + `SIGTERM`). Both
//! protocol versions, with one prompt (`--file`) and in the interactive loop (the prompt a
//! line of stdin, which stays open: there the first `SIGTERM` used to cancel the turn only,
//! and the client waited at its prompt for more); and `acp serve`, whose log (the agents'
//! stderr among it) goes to a stderr nobody reads.
#![cfg(target_os = "linux")]

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// How long the client and its agent get to be gone after `SIGTERM` (a generous bound: the
/// client acts on it within about a second).
const GONE_WITHIN: Duration = Duration::from_secs(10);

/// Whether process `pid` writes into the pipe `reader` reads and nobody else does: a thread of
/// it waits in `write(2)` on a pipe (its `wchan`), or the pipe is (about) full.
fn blocked_writing(pid: u32, reader: &impl AsFd) -> bool {
    let in_pipe_write =
        std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten().any(|task| {
            std::fs::read_to_string(task.path().join("wchan")).is_ok_and(|wchan| wchan.contains("pipe_write"))
        });
    in_pipe_write || rustix::io::ioctl_fionread(reader.as_fd()).unwrap() >= 60_000
}

/// How the prompt reaches the client.
#[derive(Clone, Copy, PartialEq)]
enum Prompt {
    /// One prompt, from a file (`--file`).
    One,
    /// A line of stdin to the interactive loop; stdin stays open.
    Interactive,
}

fn sigterm_ends_a_client_whose_stdout_nobody_reads(protocol: &[&str], how: Prompt) {
    let dir = TempDir::new("blocked-output");
    let text = format!("slow {}", "x".repeat(1 << 20));
    let prompt = dir.file("prompt.txt", &text);
    let marker = unique_marker();
    let _reaper = KillOnDrop(vec![marker.clone()]);
    let acp = acp().display().to_string();
    let mut args = vec!["client"];
    args.extend_from_slice(protocol);
    args.push("--deny");
    if how == Prompt::One {
        args.extend_from_slice(&["--file", &prompt]);
    }
    args.extend_from_slice(&["--", &acp, "agent"]);
    args.extend_from_slice(protocol);
    // The marker, a number of milliseconds, keeps the turn open for days and names the agent.
    args.extend_from_slice(&["--quiet", "--slow-ms", &marker]);
    let mut client = Command::new(&acp)
        .args(&args)
        .current_dir(dir.path())
        .env("ACP_STATE_DIR", dir.path().join("state"))
        .env("XDG_CONFIG_HOME", dir.path().join("no-config"))
        .env_remove("ACP_CONFIG")
        .stdin(if how == Prompt::One { Stdio::null() } else { Stdio::piped() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The line, and stdin open until the end of the test (the client reads it on a thread).
    let _stdin = client.stdin.take().map(|mut stdin| {
        std::thread::spawn(move || {
            let _ = stdin.write_all(format!("{text}\n").as_bytes());
            std::thread::sleep(GONE_WITHIN + Duration::from_secs(60));
        })
    });
    // Nobody reads stdout: it stays open, and full.
    let stdout = client.stdout.take().unwrap();
    let stderr = collect(client.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !blocked_writing(client.id(), &stdout) {
        assert!(client.try_wait().unwrap().is_none(), "the client ended early: {}", stderr.lock().unwrap());
        assert!(Instant::now() < deadline, "stdout never filled: {}", stderr.lock().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    let agent: Vec<u32> = processes_with_arg(&marker).into_iter().filter(|&p| p != client.id()).collect();
    assert!(!agent.is_empty(), "the agent runs");
    signal(&client, rustix::process::Signal::TERM);
    let deadline = Instant::now() + GONE_WITHIN;
    let status = loop {
        if let Some(status) = client.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = client.kill();
            let _ = client.wait();
            panic!("the client ignored SIGTERM with its stdout blocked; stderr:\n{}", stderr.lock().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(143), "{}", stderr.lock().unwrap());
    let left: Vec<u32> = survivors(&marker, Duration::from_secs(5)).into_iter().filter(|&p| p != client.id()).collect();
    assert!(left.is_empty(), "the agent outlived the client: {left:?}");
    drop(stdout);
}

#[test]
fn sigterm_ends_a_v1_client_and_its_agent_while_nobody_reads_its_stdout() {
    sigterm_ends_a_client_whose_stdout_nobody_reads(&[], Prompt::One);
}

#[test]
fn sigterm_ends_an_interactive_v1_client_and_its_agent_while_nobody_reads_its_stdout() {
    sigterm_ends_a_client_whose_stdout_nobody_reads(&[], Prompt::Interactive);
}

#[cfg(feature = "unstable_protocol_v2")]
#[test]
fn sigterm_ends_a_v2_client_and_its_agent_while_nobody_reads_its_stdout() {
    sigterm_ends_a_client_whose_stdout_nobody_reads(&["--protocol", "2"], Prompt::One);
}

#[cfg(feature = "unstable_protocol_v2")]
#[test]
fn sigterm_ends_an_interactive_v2_client_and_its_agent_while_nobody_reads_its_stdout() {
    sigterm_ends_a_client_whose_stdout_nobody_reads(&["--protocol", "2"], Prompt::Interactive);
}

/// Waits up to [`GONE_WITHIN`] for `child` to exit; panics (after killing it) otherwise.
fn exits_within(child: &mut Child, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} ignored SIGTERM with its output blocked");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_ends_acp_serve_while_nobody_reads_its_log() {
    let dir = TempDir::new("blocked-serve");
    let marker = unique_marker();
    let _reaper = KillOnDrop(vec![marker.clone()]);
    let acp = acp().display().to_string();
    // An agent that writes 200 000 lines to its stderr (each logged by the server), then
    // serves; the marker, an argument of its own, names it.
    let agent = "seq 200000 >&2; exec \"$0\" agent --quiet --slow-ms \"$1\"";
    let mut server = Command::new(&acp)
        .args(["serve", "--listen", "127.0.0.1:0", "--", "sh", "-c", agent, &acp, &marker])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Reads the log up to the address, then never again.
    let mut log = BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("event=listening") {
        line.clear();
        assert!(log.read_line(&mut line).unwrap() > 0, "the server ended before listening");
    }
    let addr = line[line.find("addr=").unwrap() + 5..].split_whitespace().next().unwrap().to_owned();
    let url = format!("ws://{addr}/acp");
    let mut client = start(&["client", "--deny", "--connect", &url, "-p", "slow"], dir.path(), "", true);
    let client_out = collect(client.stdout.take().unwrap());
    let _client_err = collect(client.stderr.take().unwrap());
    // The agent runs (the server's own arguments hold the marker too), and the log is full
    // (the agent then waits on its stderr, as a slow log slows it down).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let agent = processes_with_arg(&marker).into_iter().any(|p| p != server.id());
        let full = blocked_writing(server.id(), log.get_ref());
        if agent && full {
            break;
        }
        let client_ended = client.try_wait().unwrap();
        assert!(
            Instant::now() < deadline && client_ended.is_none(),
            "agent running: {agent}, log full: {full}, client ended: {client_ended:?}; the client said:\n{}",
            client_out.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&server, rustix::process::Signal::TERM);
    let status = exits_within(&mut server, "acp serve");
    assert_eq!(status.code(), Some(0));
    let _ = exits_within(&mut client, "the client of a stopped server");
    let left: Vec<u32> = survivors(&marker, Duration::from_secs(5));
    assert!(left.is_empty(), "the agent outlived the server: {left:?}");
    drop(log);
}
