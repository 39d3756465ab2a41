//! Interop with the official TypeScript SDK (`@agentclientprotocol/sdk` 2.4.0, pinned in
//! `interop/package.json`): the SDK client (`interop/client.mjs`) against `acp agent`, and
//! `acp client` (and the acp-blocking client stack under it) against the SDK agent
//! (`interop/agent.mjs`).
//!
//! Needs `node` and `interop/node_modules` (`npm ci` in `interop/`). Without them each test
//! prints a skip notice and passes, unless `ACP_REQUIRE_INTEROP=1` (set by CI), which makes
//! their absence a failure.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::Duration;

use acp_blocking::acp_proto::types::*;
use acp_blocking::{ClientConnection, ClientOptions};
use acp_services::FsSandbox;
use common::*;
use serde_json::{Value, json};

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("interop")
}

/// Whether the SDK can be used; panics when it is required and missing.
fn sdk_available() -> bool {
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    let manifest = interop_dir().join("node_modules/@agentclientprotocol/sdk/package.json");
    let why = if !node {
        Some("`node` is not on PATH".to_owned())
    } else if !manifest.exists() {
        Some(format!("{} is missing (run `npm ci` in interop/)", manifest.display()))
    } else {
        let version: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
        (version["version"] != json!("2.4.0"))
            .then(|| format!("the installed SDK is {}, not 2.4.0", version["version"]))
    };
    match why {
        None => true,
        Some(why) if std::env::var("ACP_REQUIRE_INTEROP").is_ok_and(|v| v == "1") => {
            panic!("ACP_REQUIRE_INTEROP=1 but {why}")
        }
        Some(why) => {
            eprintln!("SKIPPED: interop test needs the TypeScript SDK: {why}");
            false
        }
    }
}

fn script(name: &str) -> String {
    interop_dir().join(name).display().to_string()
}

#[test]
fn the_sdk_client_drives_acp_agent() {
    if !sdk_available() {
        return;
    }
    let dir = TempDir::new("interop-sdk-client");
    let file = dir.file("notes.txt", "read by the SDK client\n");
    let dir_arg = dir.path().display().to_string();
    let acp = acp().display().to_string();
    let output = Command::new("node")
        .args([&script("client.mjs"), "--dir", &dir_arg, "--file", &file, "--", &acp, "agent", "--quiet"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let results: HashMap<String, Value> = stdout
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            (value["scenario"].as_str().unwrap().to_owned(), value)
        })
        .collect();

    let handshake = &results["handshake"];
    assert_eq!(handshake["protocolVersion"], json!(1));
    assert_eq!(handshake["authMethods"], json!([]));
    assert_eq!(handshake["agentCapabilities"]["loadSession"], json!(false));
    assert_eq!(
        handshake["agentCapabilities"]["promptCapabilities"],
        json!({"image": true, "audio": false, "embeddedContext": true})
    );
    assert_eq!(handshake["agentInfo"]["name"], json!("acp-reference-agent"));

    let prompt = &results["prompt"];
    assert_eq!(prompt["stopReason"], json!("end_turn"));
    assert_eq!(
        prompt["kinds"],
        json!([
            "agent_message_chunk",
            "agent_thought_chunk",
            "plan",
            "tool_call",
            "tool_call_update",
            "tool_call_update",
            "agent_message_chunk"
        ])
    );
    assert_eq!(prompt["echo"], json!(format!("echo: read {file}")));
    assert_eq!(prompt["last"], json!("done"));
    assert_eq!(prompt["toolCall"]["kind"], json!("read"));
    assert_eq!(prompt["toolCall"]["locations"], json!([{"path": file}]));
    assert_eq!(prompt["permissions"].as_array().unwrap().len(), 1);
    assert_eq!(
        prompt["permissions"][0]["options"],
        json!([["allow-once", "allow_once"], ["reject-once", "reject_once"]])
    );
    assert_eq!(prompt["reads"], json!([file]));
    assert_eq!(prompt["completedText"], json!("read by the SDK client\n"));

    let reject = &results["reject"];
    assert_eq!((&reject["stopReason"], &reject["lastStatus"]), (&json!("end_turn"), &json!("failed")));
    assert_eq!(reject["reads"], json!([]));

    let cancel = &results["cancel_slow"];
    assert_eq!(cancel["stopReason"], json!("cancelled"));
    assert_eq!(cancel["kinds"], json!(["agent_message_chunk"]));
    assert!(cancel["elapsedMs"].as_u64().unwrap() < 2000, "{cancel}");
    let cancel = &results["cancel_permission"];
    assert_eq!(cancel["stopReason"], json!("cancelled"));
    assert_eq!(cancel["reads"], json!([]));
    assert_eq!(cancel["kinds"].as_array().unwrap().last(), Some(&json!("tool_call")));

    let errors = &results["errors"];
    assert_eq!(errors["unknownMethod"], json!(-32601));
    assert_eq!(errors["unknownExtension"], json!(-32601));
    assert_eq!(errors["echoMatches"], json!(true));
    assert_eq!(errors["relativeCwd"], json!(-32602));
    assert_eq!(errors["unknownSession"], json!(-32002));

    let concurrent = &results["concurrent"];
    assert_eq!(
        (&concurrent["sessions"], &concurrent["distinct"], &concurrent["reads"]),
        (&json!(4), &json!(4), &json!(4))
    );
    assert_eq!(concurrent["stopReasons"], json!(["end_turn", "end_turn", "end_turn", "end_turn"]));
    let echoes: Vec<String> = (0..4).map(|i| format!("echo: turn {i} {file}")).collect();
    assert_eq!(concurrent["echoes"], json!(echoes), "each session got its own updates");

    let exit = &results["exit"];
    assert_eq!(exit["exit"]["code"], json!(0));
    assert!(exit["elapsedMs"].as_u64().unwrap() < 1000, "{exit}");
}

fn sdk_agent_client(args: &[&str], cwd: &Path, stdin: &str) -> Run {
    let agent = script("agent.mjs");
    let mut all = vec!["client"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", "node", &agent]);
    run(&all, cwd, stdin)
}

#[test]
fn acp_client_drives_the_sdk_agent() {
    if !sdk_available() {
        return;
    }
    let dir = TempDir::new("interop-acp-client");
    let path = dir.file("notes.txt", "served by acp client\n");
    let prompt = format!("read {path}");

    let out = sdk_agent_client(&["--allow", "-p", &prompt], dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    for part in [
        "connected to sdk-interop-agent 1.0.0 (ACP protocol v1)".to_owned(),
        format!("echo: read {path}"),
        "thinking: thinking about it".to_owned(),
        format!("▸ Read {path}  [read · pending]"),
        "→ Allow once (--allow)".to_owned(),
        format!("· read {path} (21 bytes)"),
        format!("✓ Read {path}: completed\n    │ served by acp client"),
        "done\n— end of turn".to_owned(),
    ] {
        assert!(out.stdout.contains(&part), "missing {part:?} in:\n{}", out.stdout);
    }

    let out = sdk_agent_client(&["--ask", "-p", &prompt], dir.path(), "2\n");
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("→ Reject (your answer)") && out.stdout.contains(": failed"), "{}", out.stdout);
    assert!(!out.stdout.contains("· read"), "{}", out.stdout);

    // Outside the sandbox: the SDK agent gets our refusal as an error.
    let outside = TempDir::new("interop-outside");
    let secret = outside.file("secret.txt", "never shown");
    let out = sdk_agent_client(&["--allow", "-p", &format!("read {secret}")], dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("the client refused") && out.stdout.contains("(-32602)"), "{}", out.stdout);
    assert!(!out.stdout.contains("never shown"));
}

#[cfg(unix)]
#[test]
fn ctrl_c_cancels_a_turn_of_the_sdk_agent() {
    use rustix::process::{Pid, Signal, kill_process};
    if !sdk_available() {
        return;
    }
    let dir = TempDir::new("interop-sigint");
    let agent = script("agent.mjs");
    let mut child = start(&["client", "--allow", "-p", "be slow", "--", "node", &agent], dir.path(), "", false);
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    wait_for(&stdout, "echo: be slow", Duration::from_secs(15));
    kill_process(Pid::from_child(&child), Signal::INT).unwrap();
    let out = finish(child, stdout, stderr, Duration::from_secs(5));
    assert_eq!(out.code(), 3, "{out:?}");
    assert!(out.stdout.contains("⏹ turn cancelled"), "{}", out.stdout);
}

#[test]
fn the_rust_client_stack_against_the_sdk_agent() {
    if !sdk_available() {
        return;
    }
    let dir = TempDir::new("interop-stack");
    let path = dir.file("notes.txt", "concurrent\n");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Seen::default()));
    let recorder = Recorder {
        answer: Answer::Pick("allow-once"),
        fs: Some(FsSandbox::new([dir.path()]).unwrap()),
        seen: seen.clone(),
    };
    let mut command = Command::new("node");
    command.arg(script("agent.mjs"));
    let conn = ClientConnection::spawn(recorder, command, ClientOptions::default()).unwrap();
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.fs.read_text_file = true;
    let response = conn.with_timeout(Duration::from_secs(15)).initialize(init).unwrap();
    assert_eq!(response.protocol_version, ProtocolVersion::V1);
    assert_eq!(response.agent_info.unwrap().name, "sdk-interop-agent");

    let params = json!({"deep": {"list": [1, null, "x"]}});
    assert_eq!(conn.ext_method("_test/echo", params.clone()).unwrap(), params);
    assert_eq!(conn.ext_method("_nobody/knows", json!({})).unwrap_err().rpc_code(), Some(-32601));
    let relative = conn.new_session(NewSessionRequest::new("relative", vec![])).unwrap_err();
    assert_eq!(relative.rpc_code(), Some(-32602));
    let unknown = conn.prompt(PromptRequest::new("nope", vec!["hi".into()])).unwrap().finish().unwrap_err();
    assert_eq!(unknown.rpc_code(), Some(-32002));

    let sessions: Vec<SessionId> = (0..4).map(|_| new_session(&conn, dir.path())).collect();
    let echoes: Vec<(StopReason, String)> = thread::scope(|s| {
        let handles: Vec<_> = sessions
            .iter()
            .enumerate()
            .map(|(i, session)| {
                let (conn, path) = (&conn, &path);
                s.spawn(move || {
                    let mut first = None;
                    let request = PromptRequest::new(session.clone(), vec![format!("turn {i} {path}").into()]);
                    let stop = conn
                        .prompt_with(request, |u| {
                            if let (None, SessionUpdate::AgentMessageChunk(c)) = (&first, &u) {
                                first = Some(text_of(&c.content).to_owned());
                            }
                        })
                        .unwrap();
                    (stop, first.unwrap())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, (stop, echo)) in echoes.iter().enumerate() {
        assert_eq!((stop, echo.as_str()), (&StopReason::EndTurn, format!("echo: turn {i} {path}").as_str()));
    }
    assert_eq!(seen.lock().unwrap().reads.len(), 4);

    // Cancel mid-turn (slow wait), through the core's session/cancel.
    let mut turn = conn.prompt(PromptRequest::new(sessions[0].clone(), vec!["slow".into()])).unwrap();
    assert!(matches!(turn.next_update(), Some(SessionUpdate::AgentMessageChunk(_))));
    turn.cancel().unwrap();
    assert_eq!(turn.finish().unwrap(), StopReason::Cancelled);
    let status = conn.close().unwrap().unwrap();
    assert!(status.success(), "the SDK agent exits on stdin EOF: {status}");
}

#[test]
fn acp_client_serves_terminals_and_writes_with_diffs_to_the_sdk_agent() {
    if !sdk_available() {
        return;
    }
    let dir = TempDir::new("interop-services");
    let out = sdk_agent_client(&["--allow", "-p", "run printf hello-from-a-terminal"], dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    for part in [
        "· run printf hello-from-a-terminal (terminal term-1)",
        "▣ terminal term-1",
        "· exit of term-1 (exit code 0)",
        "✓ Run printf hello-from-a-terminal: completed\n    │ hello-from-a-terminal[exit code 0]",
    ] {
        assert!(out.stdout.contains(part), "missing {part:?} in:\n{}", out.stdout);
    }

    let path = dir.file("list.txt", "one\ntwo\n");
    let out = sdk_agent_client(&["--allow", "-p", &format!("append {path} three")], dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    for part in [
        format!("diff {path}\n      one\n      two\n    + three"),
        format!("· write {path} (14 bytes)"),
        format!("✓ Append to {path}: completed"),
    ] {
        assert!(out.stdout.contains(&part), "missing {part:?} in:\n{}", out.stdout);
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\nthree\n");
}
