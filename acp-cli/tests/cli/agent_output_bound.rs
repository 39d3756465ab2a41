//! Issue 13, item 1: a peer that keeps sending requests while never reading its input cannot
//! grow `acp agent`'s memory: the agent takes on no new work while its output is full, and
//! answers everything once the peer reads.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Resident memory of `pid` in KiB, from `/proc`.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the agent's /proc status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("a VmRSS line");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("a number")
}

#[test]
fn an_echo_flood_with_stdout_unread_keeps_the_agent_small_and_everything_is_answered() {
    const REQUESTS: usize = 300;
    const PAYLOAD: usize = 1 << 20;
    let mut agent = Command::new(env!("CARGO_BIN_EXE_acp"))
        .args(["agent", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("acp agent starts");
    let pid = agent.id();
    let mut stdin = agent.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(agent.stdout.take().expect("stdout"));
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":1}}}}"#).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the initialize answer");
    assert!(line.contains(r#""id":0"#) && line.contains("protocolVersion"), "{line}");

    // 300 MiB of echo requests, written while nobody reads the agent's output.
    let writer = std::thread::spawn(move || {
        let payload = "e".repeat(PAYLOAD);
        for id in 1..=REQUESTS {
            let request = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"_test/echo\",\"params\":{{\"p\":\"{payload}\"}}}}\n"
            );
            if stdin.write_all(request.as_bytes()).is_err() {
                return None;
            }
        }
        // Input stays open until the answers are read (its end closes the connection).
        Some(stdin)
    });
    // Let the agent take what it will while its stdout is unread.
    std::thread::sleep(Duration::from_secs(3));
    let peak = rss_kib(pid);
    assert!(!writer.is_finished(), "the agent stopped reading: the writer must still be blocked");
    assert!(peak < 96 * 1024, "the agent grew to {peak} KiB with its output unread");

    // The peer reads: every request gets its answer, the echo of its payload.
    let mut answered = 0;
    for _ in 0..REQUESTS {
        line.clear();
        stdout.read_line(&mut line).expect("an answer");
        assert!(line.contains(r#""result":{"p":"eee"#), "answer {answered}: {}", &line[..line.len().min(300)]);
        answered += 1;
    }
    let stdin = writer.join().expect("the writer").expect("every request was written");
    drop(stdin);
    assert_eq!(answered, REQUESTS);
    let status = agent.wait().expect("the agent exits at the end of its input");
    assert!(status.success(), "{status}");
}
