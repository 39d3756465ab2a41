//! Issue 13, item 1, the client's side: an agent that asks for a big file over and over while
//! never reading its stdin cannot grow `acp client`'s memory: the client takes on no new work
//! while its output to the agent is full, and answers everything once the agent reads.
//!
//! The test plays the agent through two FIFOs: the agent process is `cat FROM & cat > TO`,
//! so the test writes what the agent says into `FROM` and reads what the client sends from
//! `TO`, and stops reading `TO` to stall the client's output. Linux only (`/proc`, `mkfifo`).
#![cfg(target_os = "linux")]

use crate::common;

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

const REQUESTS: u64 = 150;
const FILE_BYTES: usize = 8 << 20;
/// The client's memory must stay under this while 1.2 GiB of answers are asked for (it grew
/// linearly to ~1.5 GB before). What the client may hold: the connection's output bound
/// (1 MiB) plus one frame, and one answer per running handler (16 handlers, each answer at
/// most the sandbox's 8 MiB read cap), with room for the allocator (3 copies per handler) and
/// the process itself (64 MiB). It does not grow with the number of requests: 450 of them
/// peaked at 185 MiB, 150 at 185 to 285 MiB.
const RSS_BOUND_KIB: u64 = (16 * 3 * 8 + 64) * 1024;

fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// The next message from the client.
fn next(from_client: &mut BufReader<File>) -> Value {
    let mut line = String::new();
    let n = from_client.read_line(&mut line).expect("a line from the client");
    assert!(n > 0, "the client closed its output");
    serde_json::from_str(&line).expect("JSON from the client")
}

/// Reads the client's next request, which must be `method`, and answers it with `result`.
fn answer(from_client: &mut BufReader<File>, to_client: &mut File, method: &str, result: Value) -> Value {
    let request = next(from_client);
    assert_eq!(request["method"], method, "{request}");
    let response = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
    writeln!(to_client, "{response}").unwrap();
    request
}

#[test]
fn a_flood_of_big_reads_with_the_agent_not_reading_keeps_the_client_small_and_everything_is_answered() {
    let dir = TempDir::new("client-read-flood");
    let big = dir.path().join("big.txt");
    std::fs::write(&big, "x".repeat(FILE_BYTES - 1) + "\n").unwrap();
    let (from_agent, to_agent) = (dir.path().join("from-agent"), dir.path().join("to-agent"));
    mkfifo(&from_agent);
    mkfifo(&to_agent);
    let agent = format!("cat '{}' & exec cat > '{}'", from_agent.display(), to_agent.display());
    let mut child = start(&["client", "--allow", "-p", "read it", "--", "sh", "-c", &agent], dir.path(), "", false);
    let pid = child.id();
    let (stdout, stderr) = (collect(child.stdout.take().unwrap()), collect(child.stderr.take().unwrap()));
    let mut from_client = BufReader::new(File::open(&to_agent).unwrap());
    let mut to_client = OpenOptions::new().write(true).open(&from_agent).unwrap();

    answer(&mut from_client, &mut to_client, "initialize", json!({"protocolVersion": 1}));
    answer(&mut from_client, &mut to_client, "session/new", json!({"sessionId": "s1"}));
    let prompt = next(&mut from_client);
    assert_eq!(prompt["method"], "session/prompt", "{prompt}");

    // 150 reads of the 8 MiB file, sent at once; then the agent reads nothing for 3 s.
    let path = big.to_str().unwrap();
    for id in 0..REQUESTS {
        let params = json!({"sessionId": "s1", "path": path});
        let request = json!({"jsonrpc": "2.0", "id": 1000 + id, "method": "fs/read_text_file", "params": params});
        writeln!(to_client, "{request}").unwrap();
    }
    let stalled_until = Instant::now() + Duration::from_secs(3);
    let peak = max_rss_while(pid, || Instant::now() >= stalled_until);
    assert!(peak < RSS_BOUND_KIB, "the client grew to {peak} KiB while the agent did not read");

    // The agent reads: every request gets the whole file.
    let mut answered = std::collections::BTreeSet::new();
    let mut line = String::new();
    while answered.len() < REQUESTS as usize {
        line.clear();
        assert!(from_client.read_line(&mut line).unwrap() > 0, "the client closed its output");
        // Parsed by hand: 1.2 GiB of JSON through serde_json's `Value` is slow in a debug build.
        let (head, rest) = line.split_once(r#","result":{"content":""#).unwrap_or_else(|| panic!("{line:.300}"));
        let id: u64 = head.strip_prefix(r#"{"jsonrpc":"2.0","id":"#).and_then(|id| id.parse().ok()).expect(head);
        let content = rest.split('"').next().unwrap_or_default();
        assert_eq!(content.len(), FILE_BYTES + 1, "answer {id}: the whole file, its newline escaped");
        assert!(answered.insert(id), "answer {id} came twice");
    }
    assert_eq!(answered.iter().copied().collect::<Vec<_>>(), (1000..1000 + REQUESTS).collect::<Vec<_>>());

    let end = json!({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": "end_turn"}});
    writeln!(to_client, "{end}").unwrap();
    drop(to_client);
    let out = finish(child, stdout, stderr, Duration::from_secs(20));
    assert_eq!(out.code(), 0, "{out:?}");
    eprintln!("client peak RSS while stalled: {peak} KiB");
}
