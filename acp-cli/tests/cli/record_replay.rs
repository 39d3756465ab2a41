//! `acp record` and `acp replay`, driven as a user would: `acp client` talks to `acp agent`
//! through the recording proxy; the transcript is then replayed, summarized and checked, and
//! hand-edited copies of it must fail the check at the right lines.

use crate::common;

use std::time::Duration;

use common::{
    KillOnDrop, TempDir, acp, collect, finish, interop_dir, run, signal, start, survivors, typescript_sdk_available,
};
use serde_json::{Value, json};

/// Records `acp client --allow -p PROMPT` against `acp agent --quiet` through `acp record`
/// (with `tee`s on both sides of the agent as an independent witness of what crossed);
/// returns the client's run, the transcript's records, and the witnessed lines (c2a, a2c).
fn record(dir: &TempDir, prompt: &str) -> (common::Run, Vec<Value>, Vec<String>, Vec<String>) {
    let acp = acp().display().to_string();
    let [t, c2a, a2c] = ["t.ndjson", "c2a.log", "a2c.log"].map(|n| dir.path().join(n).display().to_string());
    let agent = format!("tee {c2a} | {acp} agent --quiet | tee {a2c}");
    let args = ["client", "--allow", "-p", prompt, "--", &acp, "record", "--out", &t, "--", "sh", "-c", &agent];
    let run = run(&args, dir.path(), "");
    let records = std::fs::read_to_string(&t).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let lines = |path: &str| std::fs::read_to_string(path).unwrap().lines().map(str::to_owned).collect();
    (run, records, lines(&c2a), lines(&a2c))
}

fn recorded(records: &[Value], dir: &str) -> Vec<String> {
    records.iter().filter(|r| r["dir"] == dir).map(|r| r["line"].as_str().unwrap().to_owned()).collect()
}

fn write_transcript(dir: &TempDir, name: &str, records: &[Value]) -> String {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    dir.file(name, &text)
}

#[test]
fn a_recorded_session_is_what_crossed_and_replays_summarizes_and_checks() {
    let dir = TempDir::new("record");
    let (through, records, c2a, a2c) = record(&dir, "hello there");
    let acp_path = acp().display().to_string();
    let direct = run(&common::client_args(&acp_path, &["--allow", "-p", "hello there"]), dir.path(), "");
    assert_eq!((through.code(), direct.code()), (0, 0), "{}", through.stderr);
    // Each run is a new session in the session database, so only its local number differs.
    let shown = |out: &str| -> String {
        out.lines().filter(|l| !l.starts_with("recorded as session ")).map(|l| format!("{l}\n")).collect()
    };
    assert!(direct.stdout.contains("recorded as session "), "{}", direct.stdout);
    assert_eq!(shown(&through.stdout), shown(&direct.stdout), "the proxy changes nothing the client shows");

    assert_eq!(records[0]["acp_record"], 1);
    assert_eq!(records[0]["argv"][0], "sh");
    assert_eq!(records.last().unwrap()["exit"], json!({ "code": 0 }));
    assert_eq!(recorded(&records, "c2a"), c2a, "client to agent, line for line");
    assert_eq!(recorded(&records, "a2c"), a2c, "agent to client, line for line");
    assert!(c2a.len() >= 4 && a2c.len() >= 5, "{c2a:?} {a2c:?}");
    let times: Vec<u64> = records[1..].iter().map(|r| r["t_ms"].as_u64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "monotonic times: {times:?}");

    let t = dir.path().join("t.ndjson").display().to_string();
    let replay = run(&["replay", &t], dir.path(), "");
    assert_eq!(replay.code(), 0, "{}", replay.stderr);
    assert!(replay.stdout.contains("> hello there\necho: hello there\n"), "{}", replay.stdout);
    assert!(replay.stdout.contains("  → Allow once (the client's answer)\n"), "{}", replay.stdout);
    assert!(replay.stdout.contains("— end of turn\n"), "{}", replay.stdout);

    let summary = run(&["replay", "--summary", &t], dir.path(), "");
    assert_eq!(summary.code(), 0);
    assert!(summary.stdout.contains("sessions: 1\n  sess-1: 1 turn\n    turn 1: end_turn ("), "{}", summary.stdout);
    let prompt_line = summary.stdout.lines().find(|l| l.contains("c2a session/prompt")).unwrap();
    assert!(prompt_line.contains("1 sent, median"), "{prompt_line}");

    let check = run(&["replay", "--check", &t], dir.path(), "");
    assert_eq!(check.code(), 0, "{}", check.stdout);
    assert_eq!(check.stdout, format!("no violations in {} lines\n", c2a.len() + a2c.len()));
}

#[test]
fn hand_edited_transcripts_fail_the_check_at_the_right_lines() {
    let dir = TempDir::new("record-check");
    let (_, mut records, _, _) = record(&dir, "hi");
    let line = |dir: &str, message: Value| json!({ "t_ms": 1, "dir": dir, "line": message.to_string() });
    // Transcript lines count from 1, the header being line 1.
    records.insert(
        1,
        line(
            "c2a",
            json!({"jsonrpc": "2.0", "id": 40, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
        ),
    );
    records.insert(2, line("a2c", json!({"jsonrpc": "2.0", "id": 40, "error": {"code": -32600, "message": "no"}})));
    records.insert(5, json!({ "t_ms": 2, "dir": "c2a", "line": "{\"jsonrpc\":\"2.0\",\"id\":" }));
    records.insert(
        6,
        line("a2c", json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})),
    );
    records.insert(8, line("a2c", json!({"jsonrpc": "2.0", "id": 99, "result": {}})));
    let t = write_transcript(&dir, "edited.ndjson", &records);
    let check = run(&["replay", "--check", &t], dir.path(), "");
    assert_eq!(check.code(), 1, "{}", check.stdout);
    let found: Vec<&str> = check.stdout.lines().collect();
    assert_eq!(found.len(), 4, "{}", check.stdout);
    assert!(found[0].starts_with("line 2 (c2a): client: session/new: the initialize handshake"), "{}", found[0]);
    assert!(found[1].starts_with("line 6 (c2a): client: a frame that is not JSON"), "{}", found[1]);
    assert_eq!(found[2], "line 9 (a2c): agent: a response to id 99, which no request awaiting an answer used");
    assert!(found[3].starts_with("3 violations in "), "{}", found[3]);
}

#[test]
fn a_permission_answer_not_offered_and_a_prompt_left_open_are_violations() {
    let dir = TempDir::new("record-check2");
    let (_, records, _, _) = record(&dir, "hi");
    let mut edited = Vec::new();
    let mut prompt_at = 0;
    for record in records {
        let text = record["line"].as_str().unwrap_or("").to_owned();
        if text.contains("\"stopReason\"") {
            continue; // the turn never ends
        }
        if text.contains("\"session/prompt\"") {
            prompt_at = edited.len() + 1;
        }
        let mut record = record;
        if text.contains("\"optionId\":\"allow-once\"}}") {
            record["line"] = Value::from(text.replace("allow-once", "allow-forever"));
        }
        edited.push(record);
    }
    let t = write_transcript(&dir, "edited.ndjson", &edited);
    let check = run(&["replay", "--check", &t], dir.path(), "");
    assert_eq!(check.code(), 1, "{}", check.stdout);
    let expected = format!("line {prompt_at} (c2a): agent: session/prompt (id 3): a prompt still open at the end");
    assert!(check.stdout.contains(&expected), "{expected}\n{}", check.stdout);
    assert!(check.stdout.contains("(c2a): client: option `allow-forever` was not offered"), "{}", check.stdout);
}

#[test]
fn sigterm_to_the_recorder_is_passed_on_and_leaves_no_agent() {
    let dir = TempDir::new("record-term");
    // A unique argument, to find the agent's process and nothing else.
    let marker = format!("7{}", common::unique_marker());
    let _guard = KillOnDrop(vec![marker.clone()]);
    let (acp, t) = (acp().display().to_string(), dir.path().join("t.ndjson").display().to_string());
    let mut child = start(&["record", "--out", &t, "--", &acp, "agent", "--slow-ms", &marker], dir.path(), "", true);
    let (stdout, stderr) = (collect(child.stdout.take().unwrap()), collect(child.stderr.take().unwrap()));
    // The recorder's own arguments hold the marker too: the agent is the other process.
    let agents = || common::processes_with_arg(&marker).into_iter().filter(|p| *p != child.id()).collect::<Vec<_>>();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while agents().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the agent did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let agent = agents();
    assert_eq!(agent.len(), 1, "{agent:?}");
    signal(&child, rustix::process::Signal::TERM);
    let run = finish(child, stdout, stderr, Duration::from_secs(10));
    assert_eq!(run.code(), 128 + 15, "the agent's end (SIGTERM) is the proxy's: {}", run.stderr);
    assert_eq!(survivors(&marker, Duration::from_secs(2)), Vec::<u32>::new());
    assert!(!std::path::Path::new(&format!("/proc/{}", agent[0])).exists(), "agent pid {} is gone", agent[0]);
    let last: Value = serde_json::from_str(std::fs::read_to_string(&t).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(last["exit"], json!({ "signal": 15 }));
}

#[test]
fn bytes_pass_whole_over_long_lines_are_recorded_cut_and_the_exit_code_is_the_agents() {
    let dir = TempDir::new("record-long");
    let t = dir.path().join("t.ndjson").display().to_string();
    // The agent echoes its input (until our stdin ends), then writes a 1.5 MB line and exits 3.
    let agent = "cat; head -c 1500000 /dev/zero | tr '\\0' x; echo; exit 3";
    let run = run(&["record", "--out", &t, "--", "sh", "-c", agent], dir.path(), "one\ntwo\n");
    assert_eq!(run.code(), 3, "{}", run.stderr);
    assert_eq!(run.stdout.len(), "one\ntwo\n".len() + 1_500_001, "forwarded whole");
    assert!(run.stdout.starts_with("one\ntwo\nxxx") && run.stdout.ends_with("x\n"));
    let records: Vec<Value> =
        std::fs::read_to_string(&t).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let lines: Vec<(&str, usize)> = records[1..records.len() - 1]
        .iter()
        .map(|r| (r["dir"].as_str().unwrap(), r["line"].as_str().unwrap().len()))
        .collect();
    assert_eq!(lines, [("c2a", 3), ("c2a", 3), ("a2c", 3), ("a2c", 3), ("a2c", 1 << 20)]);
    let long = &records[records.len() - 2];
    assert_eq!(
        (long["truncated"].clone(), long["len"].clone(), long["cap"].clone()),
        (json!(true), json!(1_500_000), json!(1 << 20))
    );
    assert_eq!(records.last().unwrap()["exit"], json!({ "code": 3 }));
}

#[test]
fn sessions_with_the_typescript_sdk_check_clean_but_for_its_deliberate_unknown_method() {
    if !typescript_sdk_available() {
        return;
    }
    let dir = TempDir::new("record-sdk");
    let interop = interop_dir();
    let (acp, [agent_js, client_js]) =
        (acp().display().to_string(), ["agent.mjs", "client.mjs"].map(|n| interop.join(n).display().to_string()));
    let file = dir.file("notes.txt", "served\n");
    let t = dir.path().join("agent.ndjson").display().to_string();
    let prompt = format!("read {file}");
    let args = ["client", "--allow", "-p", &prompt, "--", &acp, "record", "--out", &t, "--", "node", &agent_js];
    assert_eq!(run(&args, dir.path(), "").code(), 0);
    let check = run(&["replay", "--check", &t], dir.path(), "");
    assert_eq!((check.code(), check.stdout.lines().count()), (0, 1), "{}", check.stdout);
    assert!(run(&["replay", &t], dir.path(), "").stdout.contains("    │ served\n"));

    // The SDK's client drives `acp agent` through the recorder; among its scenarios it calls
    // `session/teleport`, a method no ACP schema has, which the check names.
    let t = dir.path().join("client.ndjson").display().to_string();
    let dir_arg = dir.path().display().to_string();
    let status = std::process::Command::new("node")
        .args([&client_js, "--dir", &dir_arg, "--file", &file, "--", &acp, "record", "--out", &t, "--", &acp, "agent"])
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let check = run(&["replay", "--check", &t], dir.path(), "");
    let found: Vec<&str> = check.stdout.lines().collect();
    assert_eq!(found.len(), 2, "{}", check.stdout);
    assert!(
        found[0].ends_with("(c2a): client: the agent role refuses this request: -32601 Method not found"),
        "{}",
        found[0]
    );
    let lineno: usize = found[0]["line ".len()..].split(' ').next().unwrap().parse().unwrap();
    let line = std::fs::read_to_string(&t).unwrap().lines().nth(lineno - 1).unwrap().to_owned();
    assert!(line.contains("session/teleport"), "{line}");
}

/// `--summary` reads sessions and turns through the core's observer: a v2 turn (its prompt
/// only acknowledged) ends at the agent's `idle`, with the stop reason the idle gave, and a
/// prompt never answered is a turn that never ended.
#[test]
fn the_summary_ends_a_v2_turn_at_the_agents_idle_and_counts_a_turn_left_open() {
    let dir = TempDir::new("summary-v2");
    let line = |t_ms: u64, dir: &str, message: Value| json!({ "t_ms": t_ms, "dir": dir, "line": message.to_string() });
    let update = |state: Value| {
        json!({"jsonrpc": "2.0", "method": "session/update",
               "params": {"sessionId": "s2", "update": state}})
    };
    let records = vec![
        json!({"acp_record": 1, "argv": ["agent"], "started": "2026-12-06T00:00:00Z"}),
        line(0, "c2a", json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}})),
        line(1, "a2c", json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}})),
        line(2, "c2a", json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}})),
        line(3, "a2c", json!({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s2"}})),
        line(
            10,
            "c2a",
            json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                               "params": {"sessionId": "s2", "prompt": []}}),
        ),
        line(11, "a2c", json!({"jsonrpc": "2.0", "id": 2, "result": {"messageId": "m1"}})),
        line(12, "a2c", update(json!({"sessionUpdate": "state_update", "state": "running"}))),
        line(40, "a2c", update(json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))),
        line(
            50,
            "c2a",
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                               "params": {"sessionId": "s2", "prompt": []}}),
        ),
        json!({"t_ms": 60, "exit": {"code": 0}}),
    ];
    let t = write_transcript(&dir, "v2.ndjson", &records);
    let summary = run(&["replay", "--summary", &t], dir.path(), "");
    assert_eq!(summary.code(), 0, "{}", summary.stderr);
    assert!(summary.stdout.contains("sessions: 1\n  s2: 1 turn\n    turn 1: end_turn (30 ms)\n"), "{}", summary.stdout);
    assert!(summary.stdout.contains("  1 turn(s) never ended\n"), "{}", summary.stdout);
}
