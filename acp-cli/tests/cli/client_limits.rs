//! `acp client` with hostile or broken agents: deadlines on the handshake, bounded memory for
//! a flood of updates and for an endless stderr line. Linux only (memory is read from
//! `/proc`); scripted agents in `sh`, as in `tests/cli/client.rs`.
#![cfg(target_os = "linux")]

use crate::common;

use std::io::Read;
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use common::*;

/// The client's memory must stay under this while an agent pushes hundreds of MiB at it.
const RSS_BOUND_KIB: u64 = 64 * 1024;

fn fake(script: &str, args: &[&str], cwd: &std::path::Path) -> Run {
    let mut all = vec!["client"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-p", "hi", "--", "sh", "-c", script]);
    run(&all, cwd, "")
}

#[test]
fn an_agent_that_never_answers_the_handshake_meets_the_deadline() {
    let dir = TempDir::new("connect-timeout");
    // Reads everything, answers nothing.
    let out = fake("while read l; do :; done", &["--deny", "--connect-timeout", "1"], dir.path());
    assert_eq!(out.code(), 9, "{out:?}");
    assert!(out.stdout.contains("the agent did not answer initialize within 1 s"), "{}", out.stdout);
    // Answers initialize, then nothing.
    let script = "read l; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1}}'; \
                  while read l; do :; done";
    let out = fake(script, &["--deny", "--connect-timeout", "1"], dir.path());
    assert_eq!(out.code(), 9, "{out:?}");
    assert!(out.stdout.contains("the agent did not answer session/new within 1 s"), "{}", out.stdout);
    // The deadline and its exit code are documented.
    let help = run(&["client", "--help"], dir.path(), "");
    assert!(help.stdout.contains("--connect-timeout <SECS>"), "{}", help.stdout);
    let help = run(&["--help"], dir.path(), "");
    assert!(help.stdout.contains("9 the agent did not answer initialize"), "{}", help.stdout);
}

#[test]
fn an_endless_stderr_line_costs_bounded_memory() {
    let dir = TempDir::new("stderr-line");
    // 256 MiB of `x` on one stderr line, then the agent dies during initialize.
    let script = "head -c 268435456 /dev/zero | tr '\\0' x >&2; echo >&2; read l; exit 3";
    let args = ["client", "--deny", "-p", "hi", "--", "sh", "-c", script];
    let mut child = start(&args, dir.path(), "", false);
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    let pid = child.id();
    let done = Arc::new(AtomicBool::new(false));
    let max = sample_until_exit(pid, &done);
    let out = finish(child, stdout, stderr, Duration::from_secs(60));
    done.store(true, Ordering::SeqCst);
    let max = max.join().unwrap();
    assert_eq!(out.code(), 7, "{}", &out.stdout[..out.stdout.len().min(2000)]);
    assert!(max < RSS_BOUND_KIB, "the client grew to {max} KiB");
    let cut = 268_435_456 - 8 * 1024;
    assert!(out.stdout.contains(&format!("… ({cut} bytes cut)")), "the tail shows the cut");
    assert!(out.stdout.len() < 64 * 1024, "the tail is bounded: {} bytes", out.stdout.len());
}

/// Samples the RSS of `pid` on a thread until it exits or `done` is set.
fn sample_until_exit(pid: u32, done: &Arc<AtomicBool>) -> thread::JoinHandle<u64> {
    let done = done.clone();
    thread::spawn(move || max_rss_while(pid, || done.load(Ordering::SeqCst) || rss_kib(pid).is_none()))
}

/// Reads a pipe to its end, counting the bytes and keeping the last 4 KiB.
fn count(mut pipe: impl Read + Send + 'static) -> (Arc<AtomicU64>, Arc<Mutex<Vec<u8>>>, thread::JoinHandle<()>) {
    let total = Arc::new(AtomicU64::new(0));
    let tail = Arc::new(Mutex::new(Vec::new()));
    let (t, k) = (total.clone(), tail.clone());
    let reader = thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            t.fetch_add(n as u64, Ordering::SeqCst);
            let mut kept = k.lock().unwrap();
            kept.extend_from_slice(&buf[..n]);
            let excess = kept.len().saturating_sub(4096);
            kept.drain(..excess);
        }
    });
    (total, tail, reader)
}

fn wait_exit(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the client did not finish the flooded turn");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_slow_terminal_slows_the_agent_down_instead_of_growing_the_client() {
    let dir = TempDir::new("flood");
    // 12800 chunks of 16 KiB of text: 200 MiB of updates.
    let script = format!(
        "{HANDSHAKE}x=x; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do x=$x$x; done; \
         u=\"{{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"method\\\":\\\"session/update\\\",\\\"params\\\":{{\\\"sessionId\\\":\\\"s1\\\",\
\\\"update\\\":{{\\\"sessionUpdate\\\":\\\"agent_message_chunk\\\",\\\"content\\\":{{\\\"type\\\":\\\"text\\\",\\\"text\\\":\\\"$x\\\"}}}}}}}}\"; \
         i=0; while [ $i -lt 12800 ]; do printf '%s\\n' \"$u\"; i=$((i+1)); done; {END_TURN}while read l; do :; done"
    );
    let args = ["client", "--deny", "-p", "flood", "--", "sh", "-c", &script];
    let mut child = start(&args, dir.path(), "", false);
    let pid = child.id();
    let stderr = collect(child.stderr.take().unwrap());
    // First its stdout is not read at all (a paused terminal) for a while: the client must
    // stop taking updates instead of queueing them.
    let mut samples = 0;
    let paused = max_rss_while(pid, || {
        samples += 1;
        samples > 300
    });
    assert!(paused < RSS_BOUND_KIB, "while its output was not read the client grew to {paused} KiB");
    // Then everything is read: the whole turn arrives, and memory stays bounded.
    let (total, tail, reader) = count(child.stdout.take().unwrap());
    let done = Arc::new(AtomicBool::new(false));
    let max = sample_until_exit(pid, &done);
    let status = wait_exit(&mut child, Duration::from_secs(300));
    done.store(true, Ordering::SeqCst);
    reader.join().unwrap();
    let max = max.join().unwrap();
    let tail = String::from_utf8_lossy(&tail.lock().unwrap()).into_owned();
    assert_eq!(status.code(), Some(0), "{tail}\nstderr: {}", stderr.lock().unwrap());
    assert!(tail.contains("— end of turn"), "{tail}");
    let total = total.load(Ordering::SeqCst);
    assert!(total >= 200 * 1024 * 1024, "all the text was shown: {total} bytes");
    assert!(max < RSS_BOUND_KIB, "while its output was read the client grew to {max} KiB");
}
