//! Issue 28 §5: `acp replay`'s memory stays bounded whatever the transcript. A transcript of
//! 400 000 prompts nobody answers (about 70 MB) once cost `--check` over a gigabyte (300 000
//! cost 540 MiB to 840 MiB), `--summary` and the drawing hundreds of megabytes: every record
//! was read into memory and every open request tracked. Now records are read one at a time
//! and the requests awaiting answers are tracked up to a bound, past which `--check` reports
//! a violation per line it does not track. And the wire checks of `--check` forget what was
//! answered (past a window of the last ids): they kept a count per request id ever read, about
//! 130 bytes each, so that a transcript of answered prompts grew `--check` without a bound.
#![cfg(target_os = "linux")]

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::*;

/// Prompts in the transcript, none answered.
const PROMPTS: usize = 400_000;
/// The most any mode may take, in KiB: far below what the transcript would cost held whole.
const MAX_RSS_KIB: u64 = 100 * 1024;

/// Prompts in the transcript of answered ones.
const ANSWERED: usize = 150_000;
/// The most `--check` of those may take, in KiB: it took about 37 MiB when every id was
/// remembered (debug build), and takes about 18.
const MAX_ANSWERED_RSS_KIB: u64 = 28 * 1024;

/// A transcript: the handshake, then `PROMPTS` prompts that are never answered.
fn unanswered_prompts(dir: &TempDir) -> String {
    transcript(dir, PROMPTS, false)
}

/// A transcript: the handshake, then `prompts` prompts, each answered when `answered`.
fn transcript(dir: &TempDir, prompts: usize, answered: bool) -> String {
    let path = dir.path().join("flood.ndjson");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(out, r#"{{"acp_record":1,"argv":["agent"],"started":"2025-01-01T00:00:00Z"}}"#).unwrap();
    let mut line = |t: usize, dir: &str, message: &str| {
        writeln!(out, "{}", serde_json::json!({ "t_ms": t, "dir": dir, "line": message })).unwrap();
    };
    line(
        0,
        "c2a",
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
    );
    line(1, "a2c", r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}"#);
    line(2, "c2a", r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#);
    line(3, "a2c", r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
    for i in 0..prompts {
        let prompt = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"session/prompt","params":{{"sessionId":"s1","prompt":[{{"type":"text","text":"hi"}}]}}}}"#,
            100 + i
        );
        line(10 + i, "c2a", &prompt);
        if answered {
            let answer = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"stopReason":"end_turn"}}}}"#, 100 + i);
            line(10 + i, "a2c", &answer);
        }
    }
    out.flush().unwrap();
    path.display().to_string()
}

/// Runs `acp replay ARGS`; its exit code, stdout and peak resident set size (KiB).
fn replay(dir: &TempDir, args: &[&str]) -> (i32, String, u64) {
    let mut child = Command::new(acp())
        .arg("replay")
        .args(args)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Read to its end on a thread joined below (a fixed wait for the last bytes lost the end
    // of `--summary` on a loaded machine).
    let mut pipe = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut pipe, &mut out).unwrap();
        out
    });
    let pid = child.id();
    let mut status = None;
    let peak = max_rss_while(pid, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let code = status.and_then(|s| s.code()).unwrap_or(-1);
    let out = stdout.join().unwrap();
    (code, out, peak)
}

#[test]
fn check_summary_and_drawing_stay_bounded_on_a_flood_of_unanswered_prompts() {
    let dir = TempDir::new("replay-bounds");
    let t = unanswered_prompts(&dir);

    let (code, out, peak) = replay(&dir, &["--check", &t]);
    assert_eq!(code, 1, "{}", &out[out.len().saturating_sub(2000)..]);
    assert!(peak < MAX_RSS_KIB, "--check peaked at {peak} KiB");
    let untracked = out.lines().filter(|l| l.ends_with("this line is not checked")).count();
    assert!(untracked > PROMPTS / 2, "the excess is reported as violations: {untracked}");
    assert!(out.contains("a prompt still open at the end"), "the tracked ones are reported at the end");
    assert!(out.ends_with(&format!(" violations in {} lines\n", PROMPTS + 4)), "{}", &out[out.len() - 200..]);

    let (code, out, peak) = replay(&dir, &["--summary", &t]);
    assert_eq!(code, 0, "{out}");
    assert!(peak < MAX_RSS_KIB, "--summary peaked at {peak} KiB");
    assert!(out.contains(&format!("c2a session/prompt               {PROMPTS} sent, {PROMPTS} unanswered")), "{out}");
    assert!(out.contains("request(s) not tracked"), "{out}");

    let (code, _, peak) = replay(&dir, &[&t]);
    assert_eq!(code, 0);
    assert!(peak < MAX_RSS_KIB, "the drawing peaked at {peak} KiB");
}

#[test]
fn check_stays_bounded_on_a_transcript_of_answered_prompts() {
    let dir = TempDir::new("replay-answered");
    let t = transcript(&dir, ANSWERED, true);
    let (code, out, peak) = replay(&dir, &["--check", &t]);
    assert_eq!(code, 0, "{}", &out[out.len().saturating_sub(2000)..]);
    assert_eq!(out, format!("no violations in {} lines\n", 2 * ANSWERED + 4));
    assert!(peak < MAX_ANSWERED_RSS_KIB, "--check peaked at {peak} KiB");
}
