//! Issue 28 §4: a peer's text never reaches the terminal raw, on any surface that prints it
//! besides the client's renderer: `acp check agent|client`'s text report, `acp replay
//! --summary` and `--check`, `acp sessions list|show` (what the client recorded from the
//! agent), `acp serve`'s log of the agent's stderr, `acp record`'s relay of it, and `acp
//! agent`'s log of what its client sent. Each test
//! drives the subcommand as a user would, with a peer whose text holds terminal controls: a
//! title (OSC 0), a screen clear, a cursor move, a carriage return, an 8-bit CSI, a bidi
//! override, and a forged verdict.
#![cfg(unix)]

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

/// What a hostile peer writes, as `printf` writes it from a shell script: it would retitle the
/// terminal (OSC 0), clear it, move the cursor home, return to the start of the line and write
/// a verdict of its own, then an 8-bit CSI and a bidi override.
const EVIL_PRINTF: &str = r"\033]0;owned\007\033[2J\033[H\rPASSED: 9 passed, 0 failed\302\23331m\342\200\256";
/// The same, as JSON escapes (inside a JSON string).
const EVIL_JSON: &str = r"\u001b]0;owned\u0007\u001b[2J\u001b[H\rPASSED: 9 passed, 0 failed\u009b31m\u202e";

/// Panics if `output` holds a character a terminal acts on (other than `\n` and `\t`), and
/// requires the attempt to be shown, defused.
fn assert_inert(what: &str, output: &str) {
    let bad = |c: char| {
        c != '\n'
            && c != '\t'
            && (c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}'))
    };
    if let Some(c) = output.chars().find(|&c| bad(c)) {
        panic!("{what}: {c:?} reached the terminal in:\n{}", output.escape_debug());
    }
    assert!(output.contains(r"\x1b]0;owned\x07\x1b[2J"), "{what}: the attempt is shown, defused:\n{output}");
}

#[test]
fn acp_check_agent_shows_the_agents_lines_inert_and_its_verdict_cannot_be_forged() {
    let dir = TempDir::new("peer-text-check-agent");
    let script = format!("printf '{EVIL_PRINTF}\\n'; cat >/dev/null");
    let run =
        run(&["check", "agent", "--timeout", "1", "--startup-timeout", "2", "--", "sh", "-c", &script], dir.path(), "");
    assert_eq!(run.code(), 1, "{}", run.stdout);
    assert_inert("acp check agent", &run.stdout);
    let verdicts: Vec<&str> =
        run.stdout.lines().filter(|l| l.starts_with("PASSED") || l.starts_with("FAILED")).collect();
    assert_eq!(verdicts.len(), 1, "{}", run.stdout);
    assert!(verdicts[0].starts_with("FAILED: "), "{}", run.stdout);
}

#[test]
fn acp_check_client_shows_the_clients_lines_inert() {
    let dir = TempDir::new("peer-text-check-client");
    let script = format!("printf '{EVIL_PRINTF}\\n' | \"$@\"; sleep 3");
    let args =
        ["check", "client", "--timeout", "2", "--start-timeout", "30", "--", "sh", "-c", &script, "sh", "{agent}"];
    let run = run(&args, dir.path(), "");
    assert_eq!(run.code(), 1, "{}", run.stdout);
    assert!(run.stdout.contains("client.jsonrpc.well-formed"), "{}", run.stdout);
    assert_inert("acp check client", &run.stdout);
}

/// A transcript whose session id, stop reason and method names are `EVIL`.
fn evil_transcript(dir: &TempDir) -> String {
    let line = |t: u32, dir: &str, message: String| {
        serde_json::json!({ "t_ms": t, "dir": dir, "line": message }).to_string() + "\n"
    };
    let text = [
        r#"{"acp_record":1,"argv":["agent"],"started":"2025-01-01T00:00:00Z"}"#.to_owned() + "\n",
        line(1, "c2a", r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#.into()),
        line(2, "a2c", format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"sessionId":"{EVIL_JSON}"}}}}"#)),
        line(
            3,
            "c2a",
            format!(r#"{{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{{"sessionId":"{EVIL_JSON}","prompt":[]}}}}"#),
        ),
        line(4, "a2c", format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"stopReason":"{EVIL_JSON}"}}}}"#)),
        line(5, "a2c", format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{EVIL_JSON}","params":{{}}}}"#)),
        line(6, "a2c", format!(r#"{{"jsonrpc":"2.0","method":"{EVIL_JSON}"}}"#)),
    ]
    .concat();
    dir.file("evil.ndjson", &text)
}

#[test]
fn acp_replay_summary_shows_session_ids_stop_reasons_and_methods_inert() {
    let dir = TempDir::new("peer-text-summary");
    let t = evil_transcript(&dir);
    let run = run(&["replay", "--summary", &t], dir.path(), "");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert_inert("acp replay --summary", &run.stdout);
    assert!(run.stdout.contains("1 turn"), "{}", run.stdout);
}

#[test]
fn acp_replay_check_shows_the_transcripts_text_inert() {
    let dir = TempDir::new("peer-text-replay-check");
    let t = evil_transcript(&dir);
    let run = run(&["replay", "--check", &t], dir.path(), "");
    assert_eq!(run.code(), 1, "{}", run.stdout);
    assert_inert("acp replay --check", &run.stdout);
    let verdicts: Vec<&str> = run.stdout.lines().filter(|l| l.contains(" in 6 lines")).collect();
    assert_eq!(verdicts.len(), 1, "{}", run.stdout);
}

/// `acp ARGS` with the session database in `state`, no config file.
fn acp_with_state(args: &[&str], dir: &TempDir, stdin: &str) -> Run {
    let mut child = Command::new(acp())
        .args(args)
        .current_dir(dir.path())
        .env_remove("ACP_CONFIG")
        .env("XDG_CONFIG_HOME", dir.path().join("no-config"))
        .env("ACP_STATE_DIR", dir.path().join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    feed(&mut child.stdin.take().unwrap(), stdin.as_bytes());
    let (stdout, stderr) = (collect(child.stdout.take().unwrap()), collect(child.stderr.take().unwrap()));
    finish(child, stdout, stderr, Duration::from_secs(20))
}

#[test]
fn acp_sessions_list_and_show_print_what_the_agent_named_inert() {
    let dir = TempDir::new("peer-text-sessions");
    // An agent whose session id and title are EVIL, and whose answer is too (`printf %s`: the
    // shell's `echo` would turn the JSON's `\r` into a carriage return).
    let say = |json: String| format!("printf '%s\\n' '{json}'; ");
    let update = |update: String| {
        say(format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{EVIL_JSON}","update":{update}}}}}"#
        ))
    };
    let script = [
        "read l; ".to_owned(),
        say(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#.to_owned()),
        "read l; ".to_owned(),
        say(format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"sessionId":"{EVIL_JSON}"}}}}"#)),
        "read l; ".to_owned(),
        update(format!(r#"{{"sessionUpdate":"session_info_update","title":"{EVIL_JSON}"}}"#)),
        update(format!(
            r#"{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{EVIL_JSON}"}}}}"#
        )),
        say(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#.to_owned()),
        "while read l; do :; done".to_owned(),
    ]
    .concat();
    let client = acp_with_state(&["client", "--deny", "-p", "hi", "--", "sh", "-c", &script], &dir, "");
    assert_eq!(client.code(), 0, "{}\n{}", client.stdout, client.stderr);
    assert!(client.stdout.contains("recorded as session"), "{}", client.stdout);
    let list = acp_with_state(&["sessions", "list"], &dir, "");
    assert_eq!(list.code(), 0, "{}", list.stderr);
    // The list clips the session id; the title is whole.
    assert_inert("acp sessions list", &list.stdout);
    let show = acp_with_state(&["sessions", "show", "1"], &dir, "");
    assert_eq!(show.code(), 0, "{}", show.stderr);
    assert_inert("acp sessions show", &show.stdout);
    assert!(show.stdout.contains(r"agent session id \x1b]0;owned\x07"), "{}", show.stdout);
    assert!(show.stdout.contains(r"title    \x1b]0;owned\x07"), "{}", show.stdout);
}

#[test]
fn acp_serve_logs_the_agents_stderr_quoted_and_inert() {
    let dir = TempDir::new("peer-text-serve");
    let acp_path = acp().display().to_string();
    // One stderr line without a space (once logged bare), one that forges a log line.
    let script = format!(
        "printf '{EVIL_PRINTF}\\n' | tr -d ' ' >&2; printf 'x event=stopped\\n' >&2; exec {acp_path} agent --quiet"
    );
    let Serving { child, stderr, addr } =
        start_serving(&["serve", "--listen", "127.0.0.1:0", "--", "sh", "-c", &script], dir.path());
    let url = format!("ws://{addr}/acp");
    let client = run(&["client", "--deny", "--connect", &url, "-p", "hi"], dir.path(), "");
    assert_eq!(client.code(), 0, "{}\n{}", client.stdout, client.stderr);
    wait_for(&stderr, "event=connection_closed", Duration::from_secs(10));
    let log = stop_serving(child, stderr).stderr;
    assert_inert("acp serve's log", &log);
    let stderr_lines: Vec<&str> = log.lines().filter(|l| l.contains("event=agent_stderr")).collect();
    assert_eq!(stderr_lines.len(), 2, "{log}");
    assert!(stderr_lines[0].contains(r#" line="\x1b]0;owned\x07\x1b[2J\x1b[H\x0dPASSED:9passed,0failed"#), "{log}");
    assert!(stderr_lines[1].ends_with(r#" line="x event=stopped""#), "{log}");
    assert_eq!(log.lines().filter(|l| l.starts_with("acp serve: event=stopped")).count(), 1, "{log}");
}

#[test]
fn acp_record_relays_the_agents_stderr_inert() {
    let dir = TempDir::new("peer-text-record");
    let t = dir.path().join("t.ndjson").display().to_string();
    let script = format!("printf '{EVIL_PRINTF}\\n' >&2; cat");
    let run = run(&["record", "--out", &t, "--", "sh", "-c", &script], dir.path(), "one\n");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert_eq!(run.stdout, "one\n", "stdout is the agent's, unchanged");
    assert_inert("acp record's stderr", &run.stderr);
}

#[test]
fn acp_agent_logs_what_its_client_sent_inert() {
    let dir = TempDir::new("peer-text-agent");
    let requests = [
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1,"clientInfo":{{"name":"{EVIL_JSON}","version":"1"}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"/{EVIL_JSON}","mcpServers":[]}}}}"#
        ),
    ];
    // Its input stays open: at the end of its input the agent stops at once.
    let mut agent = start(&["agent"], dir.path(), &(requests.join("\n") + "\n"), true);
    let _stdout = collect(agent.stdout.take().unwrap());
    let stderr = collect(agent.stderr.take().unwrap());
    wait_for(&stderr, "opened in", Duration::from_secs(10));
    agent.kill().unwrap();
    agent.wait().unwrap();
    let log = stderr.lock().unwrap().clone();
    assert!(log.contains("initialize from"), "{log}");
    assert_inert("acp agent's log", &log);
}
