//! The permission policy of `acp client`: questions are queued and each answered after it
//! was shown; the policy governs the `fs/*` writes and the terminals it serves. Scripted
//! agents in `sh`, as in `tests/cli/client.rs`; each logs the client's answers to a file.
#![cfg(unix)]

use crate::common;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use common::*;

/// `sh` sending one JSON-RPC message from the agent.
fn send(json: &str) -> String {
    format!("echo '{json}'; ")
}

/// `sh` reading the client's next message into `log`.
fn log_reply(log: &Path) -> String {
    format!("read r; printf '%s\\n' \"$r\" >> {}; ", log.display())
}

fn permission_request(id: u32, call: &str, title: &str) -> String {
    send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/request_permission","params":{{"sessionId":"s1","toolCall":{{"toolCallId":"{call}","title":"{title}"}},"options":[{{"optionId":"one","name":"First","kind":"allow_once"}},{{"optionId":"two","name":"Second","kind":"reject_once"}}]}}}}"#
    ))
}

fn write_request(id: u32, path: &str) -> String {
    send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"fs/write_text_file","params":{{"sessionId":"s1","path":"{path}","content":"written"}}}}"#
    ))
}

fn read_request(id: u32, path: &str) -> String {
    send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"fs/read_text_file","params":{{"sessionId":"s1","path":"{path}"}}}}"#
    ))
}

fn touch_request(id: u32, path: &str) -> String {
    send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"terminal/create","params":{{"sessionId":"s1","command":"touch","args":["{path}"]}}}}"#
    ))
}

/// `sh` waiting for the exit of the terminal whose creation was the last reply read (the
/// reply goes into `log`).
fn wait_for_exit(id: u32, log: &Path) -> String {
    let tid = "tid=${r#*\\\"terminalId\\\":\\\"}; tid=${tid%%\\\"*}; ";
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"terminal/wait_for_exit","params":{{"sessionId":"s1","terminalId":"'"$tid"'"}}}}"#
    );
    format!("{tid}{}{}", send(&request), log_reply(log))
}

fn completed(call: &str) -> String {
    send(&format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"tool_call_update","toolCallId":"{call}","status":"completed"}}}}}}"#
    ))
}

/// The agent's log: the client's replies, one per line.
fn replies(log: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn reply_to(replies: &[serde_json::Value], id: u64) -> &serde_json::Value {
    replies.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no reply to {id}: {replies:?}"))
}

#[test]
fn permission_questions_are_queued_and_each_answered_after_it_was_shown() {
    let dir = TempDir::new("queued-asks");
    let log = dir.path().join("replies.log");
    let sent = dir.path().join("sent");
    // Two questions at once, before reading any answer.
    let script = format!(
        "{HANDSHAKE}{}{}touch {}; {}{}{END_TURN}while read l; do :; done",
        permission_request(10, "ta", "question A"),
        permission_request(11, "tb", "question B"),
        sent.display(),
        log_reply(&log),
        log_reply(&log),
    );
    let mut child = start_interactive(&["client", "--ask", "-p", "two asks", "--", "sh", "-c", &script], dir.path());
    let mut stdin = child.stdin.take().unwrap();
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    wait_for(&stdout, "? permission: question", Duration::from_secs(10));
    wait_for_file(&sent);
    // Both asks are sent; give the second time to reach the client: it must wait its turn.
    std::thread::sleep(Duration::from_millis(300));
    let first = if stdout.lock().unwrap().contains("question A") { "question A" } else { "question B" };
    let second = if first == "question A" { "question B" } else { "question A" };
    assert!(
        !stdout.lock().unwrap().contains(second),
        "shown before the first was answered:\n{}",
        stdout.lock().unwrap()
    );
    stdin.write_all(b"1\n").unwrap();
    wait_for(&stdout, &format!("? permission: {second}"), Duration::from_secs(10));
    stdin.write_all(b"2\n").unwrap();
    let out = finish(child, stdout, stderr, Duration::from_secs(10));
    drop(stdin);
    assert_eq!(out.code(), 0, "{out:?}");
    let replies = replies(&log);
    let (first_id, second_id) = if first == "question A" { (10, 11) } else { (11, 10) };
    let option = |id| reply_to(&replies, id)["result"]["outcome"]["optionId"].as_str().map(str::to_owned);
    assert_eq!(option(first_id).as_deref(), Some("one"), "{replies:?}");
    assert_eq!(option(second_id).as_deref(), Some("two"), "{replies:?}");
    // In the transcript: question, answer, question, answer.
    let at = |needle: &str| out.stdout.find(needle).unwrap_or_else(|| panic!("no {needle:?} in\n{}", out.stdout));
    assert!(at(first) < at("→ First (your answer)"), "{}", out.stdout);
    assert!(at("→ First (your answer)") < at(second), "{}", out.stdout);
    assert!(at(second) < at("→ Second (your answer)"), "{}", out.stdout);
}

fn wait_for_file(path: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !path.exists() {
        assert!(std::time::Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn deny_serves_reads_but_neither_writes_nor_commands() {
    let dir = TempDir::new("policy-deny");
    let log = dir.path().join("replies.log");
    let init = dir.path().join("init.json");
    let readable = dir.file("readable.txt", "readable text");
    let target = dir.path().join("written.txt").display().to_string();
    let ran = dir.path().join("ran").display().to_string();
    let script = format!(
        "read l; printf '%s\\n' \"$l\" > {init}; {}{}{}{}{}{}{}{END_TURN}while read l; do :; done",
        HANDSHAKE.trim_start_matches("read l; "),
        write_request(10, &target),
        log_reply(&log),
        touch_request(11, &ran),
        log_reply(&log),
        read_request(12, &readable),
        log_reply(&log),
        init = init.display(),
    );
    let args = ["client", "--deny", "--unconfined-terminals", "-p", "try", "--", "sh", "-c", &script];
    let out = run(&args, dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(!Path::new(&target).exists(), "nothing is written under --deny");
    assert!(!Path::new(&ran).exists(), "nothing is run under --deny");
    let replies = replies(&log);
    assert!(reply_to(&replies, 10).get("error").is_some(), "{replies:?}");
    assert!(reply_to(&replies, 11).get("error").is_some(), "{replies:?}");
    assert_eq!(reply_to(&replies, 12)["result"]["content"], "readable text", "reads stay allowed");
    // What is refused is not advertised, and the header says so.
    let init: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&init).unwrap()).unwrap();
    let caps = &init["params"]["clientCapabilities"];
    assert_eq!(caps["fs"]["readTextFile"], true, "{caps}");
    assert_eq!(caps["fs"]["writeTextFile"], false, "{caps}");
    assert_eq!(caps["terminal"], false, "{caps}");
    assert!(out.stdout.contains("fs: read-only in"), "{}", out.stdout);
    assert!(out.stdout.contains("terminals: not offered (--deny)"), "{}", out.stdout);
}

#[test]
fn ask_asks_before_a_write_or_a_command_the_user_did_not_approve() {
    let dir = TempDir::new("policy-ask");
    let log = dir.path().join("replies.log");
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (a, b, c, ran) = (path("a.txt"), path("b.txt"), path("c.txt"), path("ran"));
    let script = format!(
        "{HANDSHAKE}{}{}{}{}{}{}{}{}{}{}{}{}{END_TURN}while read l; do :; done",
        // Not approved: asked, answered no.
        write_request(10, &a),
        log_reply(&log),
        // The agent asks for tool call t1, answered yes: its write is not asked again.
        permission_request(11, "t1", "edit files"),
        log_reply(&log),
        write_request(12, &b),
        log_reply(&log),
        // Once t1 is completed, a write is asked again (answered yes).
        completed("t1"),
        write_request(13, &c),
        log_reply(&log),
        // A command nobody approved: asked, answered no.
        touch_request(14, &ran),
        log_reply(&log),
        "",
    );
    let args = ["client", "--ask", "--unconfined-terminals", "-p", "edit", "--", "sh", "-c", &script];
    let out = run(&args, dir.path(), "n\ny\ny\nn\n");
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(!Path::new(&a).exists(), "refused by the user: {}", out.stdout);
    assert_eq!(std::fs::read_to_string(&b).ok().as_deref(), Some("written"), "{}", out.stdout);
    assert_eq!(std::fs::read_to_string(&c).ok().as_deref(), Some("written"), "{}", out.stdout);
    assert!(!Path::new(&ran).exists(), "refused by the user: {}", out.stdout);
    assert!(out.stdout.contains(&format!("the agent asks to write {a}")), "{}", out.stdout);
    assert!(!out.stdout.contains(&format!("the agent asks to write {b}")), "{}", out.stdout);
    assert!(out.stdout.contains(&format!("the agent asks to write {c}")), "{}", out.stdout);
    assert!(out.stdout.contains(&format!("the agent asks to run `touch {ran}`")), "{}", out.stdout);
    assert!(out.stdout.contains("(asks before writing)"), "{}", out.stdout);
    let replies = replies(&log);
    for (id, refused) in [(10, true), (12, false), (13, false), (14, true)] {
        assert_eq!(reply_to(&replies, id).get("error").is_some(), refused, "{id}: {replies:?}");
    }
}

#[test]
fn allow_serves_writes_and_terminals_are_offered_only_when_confined_or_unconfined_is_asked() {
    let dir = TempDir::new("policy-allow");
    let log = dir.path().join("replies.log");
    let init = dir.path().join("init.json");
    let target = dir.path().join("written.txt").display().to_string();
    let ran = dir.path().join("ran").display().to_string();
    let script = format!(
        "read l; printf '%s\\n' \"$l\" > {init}; {}{}{}{}{}{}{END_TURN}while read l; do :; done",
        HANDSHAKE.trim_start_matches("read l; "),
        write_request(10, &target),
        log_reply(&log),
        touch_request(11, &ran),
        log_reply(&log),
        // The command ends before the turn does (the client's shutdown kills what still runs).
        wait_for_exit(12, &log),
        init = init.display(),
    );
    let out =
        run(&["client", "--allow", "--unconfined-terminals", "-p", "go", "--", "sh", "-c", &script], dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    assert_eq!(std::fs::read_to_string(&target).ok().as_deref(), Some("written"));
    assert!(Path::new(&ran).exists(), "the command ran: {}", out.stdout);
    assert_eq!(reply_to(&replies(&log), 12)["result"]["exitCode"], 0, "{}", out.stdout);
    assert!(out.stdout.contains("fs: read/write in"), "{}", out.stdout);
    assert!(out.stdout.contains("terminals: "), "{}", out.stdout);

    // Without --unconfined-terminals, terminals are offered only if they are confined, and
    // the header and the capabilities agree.
    std::fs::remove_file(&ran).unwrap();
    std::fs::remove_file(&log).unwrap();
    let out = run(&["client", "--allow", "-p", "go", "--", "sh", "-c", &script], dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    let init: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&init).unwrap()).unwrap();
    let offered = init["params"]["clientCapabilities"]["terminal"] == true;
    let line = out.stdout.lines().find(|l| l.contains("terminals: ")).unwrap_or_else(|| panic!("{}", out.stdout));
    if offered {
        assert!(line.contains("confined") && !line.contains("NOT confined"), "{line}");
    } else {
        assert!(line.contains("not offered") && line.contains("--unconfined-terminals"), "{line}");
        assert!(reply_to(&replies(&log), 11).get("error").is_some());
        assert!(!Path::new(&ran).exists());
    }
}
