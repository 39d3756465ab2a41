//! `acp client` and `acp demo` end to end: the built binary as the client, `acp agent` (or a
//! scripted fake agent) as the agent.

use crate::common;

use std::time::Duration;

use common::*;

/// A fake agent in `sh` that answers `initialize`, `session/new` and `session/prompt` (ids 1,
/// 2, 3: the client's first ids) with the given `result` or `error` JSON members.
fn scripted(init: &str, new: &str, prompt: &str) -> String {
    format!(
        "read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":1,{init}}}'; \
         read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":2,{new}}}'; \
         read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":3,{prompt}}}'; \
         while read l; do :; done"
    )
}

const INIT_OK: &str = r#""result":{"protocolVersion":1}"#;
const NEW_OK: &str = r#""result":{"sessionId":"s1"}"#;

fn fake(script: &str, args: &[&str]) -> Run {
    let dir = TempDir::new("fake");
    let mut all = vec!["client"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-p", "hi", "--", "sh", "-c", script]);
    run(&all, dir.path(), "")
}

#[test]
fn allow_policy_runs_the_whole_turn_and_exits_0() {
    let dir = TempDir::new("client-allow");
    let path = dir.file("notes.txt", "the secret text\n");
    let acp = acp().display().to_string();
    let prompt = format!("read {path}");
    let out = run(&client_args(&acp, &["--allow", "-p", &prompt]), dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    let expected = [
        "connected to acp-rs reference agent".to_owned(),
        format!("> read {path}"),
        format!("echo: read {path}"),
        "thinking: ".to_owned(),
        "Plan\n  [~] Read".to_owned(),
        format!("▸ Read {path}  [read · pending]"),
        format!("    ↳ {path}"),
        "→ Allow once (--allow)".to_owned(),
        format!("Read {path}: in progress"),
        format!("· read {path} (16 bytes)"),
        format!("✓ Read {path}: completed\n    │ the secret text"),
        "done\n— end of turn".to_owned(),
    ];
    let mut from = 0;
    for part in expected {
        let at = out.stdout[from..]
            .find(&part)
            .unwrap_or_else(|| panic!("missing {part:?} after {from} in:\n{}", out.stdout));
        from += at + part.len();
    }
    assert!(!out.stdout.contains('\x1b'), "no escapes when stdout is not a terminal");
}

#[test]
fn deny_policy_fails_the_tool_call_without_reading_on_each_version() {
    for &version in versions() {
        let dir = TempDir::new("client-deny");
        let path = dir.file("notes.txt", "the secret text\n");
        let acp = acp().display().to_string();
        let prompt = format!("read {path}");
        let out = run(&client_args_in(version, &acp, &["--deny", "-p", &prompt]), dir.path(), "");
        assert_eq!(out.code(), 0, "v{version}: the turn still ends end_turn: {out:?}");
        assert!(out.stdout.contains("→ Reject (--deny)"), "v{version}: {}", out.stdout);
        assert!(out.stdout.contains(&format!("✗ Read {path}: failed")), "v{version}: {}", out.stdout);
        assert!(!out.stdout.contains("· read") && !out.stdout.contains("the secret text"), "{}", out.stdout);
    }
}

#[test]
fn off_a_terminal_the_default_is_to_reject_on_each_version() {
    for &version in versions() {
        let dir = TempDir::new("client-default");
        let path = dir.file("notes.txt", "x");
        let acp = acp().display().to_string();
        let prompt = format!("read {path}");
        let out = run(&client_args_in(version, &acp, &["-p", &prompt]), dir.path(), "");
        assert_eq!(out.code(), 0, "v{version}: {out:?}");
        assert!(out.stdout.contains("→ Reject (stdin is not a terminal"), "v{version}: {}", out.stdout);
    }
}

#[test]
fn ask_policy_takes_the_answers_from_stdin_on_each_version() {
    for &version in versions() {
        let dir = TempDir::new("client-ask");
        let path = dir.file("notes.txt", "asked and read\n");
        let acp = acp().display().to_string();
        let prompt = format!("read {path}");
        let out = run(&client_args_in(version, &acp, &["--ask", "-p", &prompt]), dir.path(), "maybe\n1\n");
        assert_eq!(out.code(), 0, "v{version}: {out:?}");
        assert!(out.stdout.contains("[1] Allow once   [2] Reject"), "v{version}: {}", out.stdout);
        assert!(out.stdout.contains("`maybe` is not one of the options"), "v{version}: {}", out.stdout);
        assert!(out.stdout.contains("→ Allow once (your answer)"), "v{version}: {}", out.stdout);
        // v2 has no fs/*: its agent reads nothing.
        let read = if version == "1" { "│ asked and read" } else { "│ Not read: ACP v2 has no client file system" };
        assert!(out.stdout.contains(read), "v{version}: {}", out.stdout);
        // No answer at all: the end of input rejects.
        let out = run(&client_args_in(version, &acp, &["--ask", "-p", &prompt]), dir.path(), "");
        assert_eq!(out.code(), 0, "v{version}: {out:?}");
        assert!(out.stdout.contains("→ Reject (end of input)"), "v{version}: {}", out.stdout);
    }
}

#[test]
fn the_sandbox_refuses_files_outside_the_roots() {
    let root = TempDir::new("client-root");
    let outside = TempDir::new("client-outside");
    let path = outside.file("secret.txt", "never shown");
    let acp = acp().display().to_string();
    let prompt = format!("read {path}");
    let root_arg = root.path().display().to_string();
    let out = run(&client_args(&acp, &["--allow", "--root", &root_arg, "-p", &prompt]), root.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains(&format!("· read {path} refused:")), "{}", out.stdout);
    assert!(out.stdout.contains("outside_roots, -32602"), "{}", out.stdout);
    assert!(out.stdout.contains(&format!("✗ Read {path}: failed")), "{}", out.stdout);
    assert!(out.stdout.contains("The client refused to read"), "the agent got the error: {}", out.stdout);
    assert!(!out.stdout.contains("never shown"));
}

#[test]
fn the_interactive_loop_runs_one_turn_per_line_on_each_version() {
    for &version in versions() {
        let dir = TempDir::new("client-loop");
        let acp = acp().display().to_string();
        let args = client_args_in(version, &acp, &["--deny"]);
        let out = run(&args, dir.path(), "first prompt\n\nsecond prompt\n");
        assert_eq!(out.code(), 0, "v{version}: {out:?}");
        // v2's agent says what it took as a `user_message` first.
        let echo =
            |p: &str| if version == "1" { format!("> {p}\necho: {p}") } else { format!("> {p}\nyou: {p}\necho: {p}") };
        assert!(out.stdout.contains(&echo("first prompt")), "v{version}: {}", out.stdout);
        assert!(out.stdout.contains(&echo("second prompt")), "v{version}: {}", out.stdout);
        assert_eq!(out.stdout.matches("— end of turn").count(), 2, "v{version}: {}", out.stdout);
        let out = run(&args, dir.path(), "/quit\nnever sent\n");
        assert_eq!(out.code(), 0, "v{version}: {out:?}");
        assert!(!out.stdout.contains("never sent"), "v{version}: {}", out.stdout);
    }
}

#[test]
fn show_stderr_streams_the_agents_log() {
    let dir = TempDir::new("client-stderr");
    let acp = acp().display().to_string();
    let args = ["client", "--deny", "--show-stderr", "-p", "hi", "--", &acp, "agent"];
    let out = run(&args, dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stderr.contains("agent stderr │ acp agent: initialize from acp-cli"), "{}", out.stderr);
    assert!(out.stderr.contains("agent stderr │ acp agent: turn on sess-1 ended end_turn"), "{}", out.stderr);
}

#[test]
fn exit_codes_follow_the_stop_reason_and_the_failure() {
    let cases: [(&str, String, i32); 7] = [
        ("refusal", scripted(INIT_OK, NEW_OK, r#""result":{"stopReason":"refusal"}"#), 4),
        ("max_tokens", scripted(INIT_OK, NEW_OK, r#""result":{"stopReason":"max_tokens"}"#), 5),
        ("cancelled", scripted(INIT_OK, NEW_OK, r#""result":{"stopReason":"cancelled"}"#), 3),
        ("prompt error", scripted(INIT_OK, NEW_OK, r#""error":{"code":-32603,"message":"boom"}"#), 6),
        (
            "auth",
            scripted(
                r#""result":{"protocolVersion":1,"authMethods":[{"id":"login","name":"Log in"}]}"#,
                r#""error":{"code":-32000,"message":"Authentication required"}"#,
                "",
            ),
            8,
        ),
        ("bad version", scripted(r#""result":{"protocolVersion":2}"#, NEW_OK, ""), 6),
        ("died", "read l; echo 'agent failing on purpose' >&2; exit 3".to_owned(), 7),
    ];
    for (name, script, code) in cases {
        let out = fake(&script, &["--deny"]);
        assert_eq!(out.code(), code, "{name}: {out:?}");
        match name {
            "auth" => assert!(out.stdout.contains("login  Log in") && out.stdout.contains("--auth"), "{}", out.stdout),
            "died" => {
                assert!(out.stdout.contains("the agent died during initialize (exit code 3)"), "{}", out.stdout);
                assert!(out.stdout.contains("agent failing on purpose"), "the stderr tail is shown: {}", out.stdout);
            }
            "prompt error" => assert!(out.stdout.contains("boom (-32603)"), "{}", out.stdout),
            _ => {}
        }
    }
    let dir = TempDir::new("client-spawn");
    let out = run(&["client", "-p", "hi", "--", "/nonexistent/acp-agent"], dir.path(), "");
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stdout.contains("could not start the agent `/nonexistent/acp-agent`"), "{}", out.stdout);
    let out = run(&["client", "-p", "hi"], dir.path(), "");
    assert_eq!(out.code(), 2, "usage error without an agent command: {out:?}");
}

#[cfg(unix)]
fn interrupt(child: &std::process::Child) {
    use rustix::process::{Pid, Signal, kill_process};
    kill_process(Pid::from_child(child), Signal::INT).unwrap();
}

#[cfg(unix)]
#[test]
fn ctrl_c_cancels_the_turn_on_each_version() {
    for &version in versions() {
        let dir = TempDir::new("client-sigint");
        let acp = acp().display().to_string();
        let args = client_args_in(version, &acp, &["--allow", "-p", "a slow one"]);
        let mut child = start(&args, dir.path(), "", false);
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        wait_for(&stdout, "echo: a slow one", Duration::from_secs(10));
        interrupt(&child);
        let out = finish(child, stdout, stderr, Duration::from_secs(5));
        assert_eq!(out.code(), 3, "v{version}: cancelled: {out:?}");
        let said = out.stdout.contains("⏹ cancelling the turn") && out.stdout.contains("⏹ turn cancelled");
        assert!(said, "v{version}: {}", out.stdout);
        assert!(!out.stdout.contains("thinking:"), "v{version}: the agent stopped at once: {}", out.stdout);
    }
}

#[cfg(unix)]
#[test]
fn a_second_ctrl_c_quits() {
    // An agent that never answers the prompt, even when cancelled.
    let dir = TempDir::new("client-sigint2");
    let script = scripted(INIT_OK, NEW_OK, r#""method":"nothing""#)
        .replace("echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nothing\"}';", "");
    let mut child = start(&["client", "--deny", "-p", "hang", "--", "sh", "-c", &script], dir.path(), "", false);
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    wait_for(&stdout, "> hang", Duration::from_secs(10));
    interrupt(&child);
    wait_for(&stdout, "cancelling the turn", Duration::from_secs(5));
    interrupt(&child);
    let out = finish(child, stdout, stderr, Duration::from_secs(5));
    assert_eq!(out.code(), 130, "{out:?}");
    assert!(out.stdout.contains("quitting"), "{}", out.stdout);

    // Idle at the interactive prompt, one Ctrl-C quits.
    let acp = acp().display().to_string();
    let mut child = start(&client_args(&acp, &[]), dir.path(), "", true);
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    wait_for(&stdout, "> ", Duration::from_secs(10));
    interrupt(&child);
    let out = finish(child, stdout, stderr, Duration::from_secs(5));
    assert_eq!(out.code(), 130, "{out:?}");
}

#[test]
fn the_demo_runs_to_completion() {
    let dir = TempDir::new("demo");
    let out = run(&["demo"], dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    for part in [
        "acp demo:",
        "connected to acp-rs reference agent",
        "echo: Please read ",
        "thinking: ",
        "Plan",
        "[read · pending]",
        "? permission: Read ",
        "→ Allow once (stdin is not a terminal, so the demo allows; `acp demo --ask` asks)",
        "Read /",
        ": completed",
        "│ # Notes for the ACP demo",
        "done",
        "— end of turn",
    ] {
        assert!(out.stdout.contains(part), "missing {part:?} in:\n{}", out.stdout);
    }
    // The temporary directory is gone afterwards.
    let line = out.stdout.lines().find(|l| l.starts_with("session ")).unwrap();
    let tmp = line.split("cwd ").nth(1).unwrap();
    assert!(!std::path::Path::new(tmp).exists(), "{tmp} was left behind");
}

/// Without the feature `unstable_protocol_v2`, `--protocol 2` says how to get it.
#[cfg(not(feature = "unstable_protocol_v2"))]
#[test]
fn protocol_2_without_the_feature_is_a_usage_error_saying_how_to_rebuild() {
    let dir = TempDir::new("client-no-v2");
    let acp = acp().display().to_string();
    for args in [
        vec!["client", "--protocol", "2", "-p", "hi", "--", &acp, "agent"],
        vec!["agent", "--protocol", "2"],
        vec!["demo", "--protocol", "2"],
    ] {
        let out = run(&args, dir.path(), "");
        assert_eq!(out.code(), 2, "{args:?}: {out:?}");
        assert!(out.stderr.contains("--features unstable_protocol_v2"), "{args:?}: {}", out.stderr);
    }
}
