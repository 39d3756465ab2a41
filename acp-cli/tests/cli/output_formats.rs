//! Output for scripts: `acp client --format json` (every frame as NDJSON, then a summary),
//! `--quiet`, prompts from stdin and files, `@path` attachments and `--image`, run as a user
//! would against `acp agent` (which advertises images and embedded context) and against the
//! official TypeScript SDK's agent `interop/agent.mjs` (which advertises neither).

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};

/// Every line of stdout as JSON (panics on a line that is not).
fn records(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}\n{}", run.stderr)))
        .collect()
}

/// The `msg` of the first c2a frame calling `method`.
fn sent(records: &[Value], method: &str) -> Option<Value> {
    records.iter().find(|r| r["dir"] == "c2a" && r["msg"]["method"] == method).map(|r| r["msg"].clone())
}

/// `acp client ARGS -- acp agent --quiet` in `dir`, with `stdin`.
fn client(dir: &Path, args: &[&str], stdin: &str) -> Run {
    client_in("1", dir, args, stdin)
}

/// [`client`] in ACP `version`.
fn client_in(version: &str, dir: &Path, args: &[&str], stdin: &str) -> Run {
    let acp = acp();
    run(&client_args_in(version, acp.to_str().unwrap(), args), dir, stdin)
}

#[test]
fn json_is_every_frame_in_wire_order_then_a_summary() {
    let dir = TempDir::new("json-frames");
    let path = dir.file("notes.txt", "hello from a file\n");
    let run = client(dir.path(), &["--format", "json", "--allow", "-p", &format!("read {path}")], "");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let records = records(&run);
    let (first, second) = (&records[0], &records[1]);
    assert_eq!(
        (&first["type"], &first["dir"], &first["msg"]["method"]),
        (&json!("frame"), &json!("c2a"), &json!("initialize"))
    );
    assert_eq!((&second["dir"], &second["msg"]["id"]), (&json!("a2c"), &first["msg"]["id"]));
    assert!(second["msg"]["result"]["protocolVersion"].is_number());
    // Time only goes forward; every answer comes after its request, in its direction.
    let times: Vec<f64> = records.iter().filter_map(|r| r["t_ms"].as_f64()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    for (i, r) in records.iter().enumerate() {
        let msg = &r["msg"];
        if msg.get("method").is_none() && msg.get("id").is_some() {
            let asked = records[..i]
                .iter()
                .any(|q| q["dir"] != r["dir"] && q["msg"]["id"] == msg["id"] && q["msg"]["method"].is_string());
            assert!(asked, "an answer before its request: {r}");
        }
    }
    // The file read went both ways.
    assert!(records.iter().any(|r| r["dir"] == "a2c" && r["msg"]["method"] == "fs/read_text_file"));
    let summary = records.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["stopReason"], "end_turn");
    assert_eq!(summary["text"], "done", "the final message, after the tool call");
    assert_eq!(summary["exit"], 0);
    assert_eq!(summary["toolCalls"][0]["status"], "completed");
    assert_eq!(summary["toolCalls"][0]["kind"], "read");
    let ask = &summary["permissions"][0];
    assert_eq!((&ask["chosen"], &ask["outcome"]), (&json!("allow-once"), &json!("selected")));
    assert_eq!(ask["toolCallId"], summary["toolCalls"][0]["id"]);
    assert_eq!(ask["options"].as_array().unwrap().len(), 2);
    assert_eq!(records.iter().filter(|r| r["type"] == "summary").count(), 1);
    // Nothing drawn for a person reached stdout or stderr.
    assert!(!run.stderr.contains("connected to"), "{}", run.stderr);
}

#[test]
fn json_records_a_rejection_and_quiet_prints_only_the_final_text_on_each_version() {
    for &version in versions() {
        let dir = TempDir::new("json-deny");
        let path = dir.file("notes.txt", "secret\n");
        let run = client_in(version, dir.path(), &["--format", "json", "--deny", "-p", &format!("read {path}")], "");
        assert_eq!(run.code(), 0, "v{version}: {}", run.stderr);
        let records = records(&run);
        let summary = records.last().unwrap();
        assert_eq!(summary["permissions"][0]["chosen"], "reject-once", "v{version}: {summary}");
        assert_eq!(summary["toolCalls"][0]["status"], "failed", "v{version}: {summary}");
        assert_eq!(summary["permissions"][0]["toolCallId"], summary["toolCalls"][0]["id"], "v{version}: {summary}");

        let run = client_in(version, dir.path(), &["--quiet", "--allow", "-p", &format!("read {path}")], "");
        assert_eq!(run.code(), 0, "v{version}: {}", run.stderr);
        assert_eq!(run.stdout, "done\n", "v{version}");
    }
}

#[test]
fn a_cancelled_turn_is_summed_up_with_its_stop_reason_and_exit_code_on_each_version() {
    for &version in versions() {
        let dir = TempDir::new("json-cancel");
        let acp = acp().display().to_string();
        let args = client_args_in(version, &acp, &["--format", "json", "-p", "a slow one"]);
        let mut child = start(&args, dir.path(), "", false);
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        wait_for(&stdout, "echo: a slow one", Duration::from_secs(10));
        signal(&child, rustix::process::Signal::INT);
        let run = finish(child, stdout, stderr, Duration::from_secs(10));
        assert_eq!(run.code(), 3, "v{version}: {}", run.stderr);
        let records = records(&run);
        assert!(sent(&records, "session/cancel").is_some(), "v{version}: the cancel is on the wire");
        let summary = records.last().unwrap();
        assert_eq!((&summary["stopReason"], &summary["exit"]), (&json!("cancelled"), &json!(3)), "v{version}");
        assert_eq!(summary["text"], "echo: a slow one", "v{version}");
    }
}

#[test]
fn the_prompt_comes_from_stdin_or_a_file_on_each_version() {
    for &version in versions() {
        let dir = TempDir::new("prompt-sources");
        let run = client_in(version, dir.path(), &["--format", "json", "-p", "-"], "a prompt\nfrom stdin\n");
        assert_eq!(run.code(), 0, "v{version}: {}", run.stderr);
        let prompt = sent(&records(&run), "session/prompt").expect("a prompt")["params"]["prompt"].clone();
        assert_eq!(prompt, json!([{"type": "text", "text": "a prompt\nfrom stdin"}]), "v{version}");

        let file = dir.file("prompt.md", "from a file\n");
        let run = client_in(version, dir.path(), &["--quiet", "--file", &file], "");
        assert_eq!(run.code(), 0, "v{version}: {}", run.stderr);
        // No file to read, so no tool call: the whole message.
        assert_eq!(run.stdout, "echo: from a file\n", "v{version}");

        // The interactive loop has no single answer to print.
        let run = client_in(version, dir.path(), &["--format", "json"], "hello\n");
        assert_eq!(run.code(), 2, "v{version}");
        assert!(run.stderr.contains("--format json needs one prompt"), "v{version}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "v{version}");
    }
}

#[test]
fn at_paths_are_embedded_for_acp_agent_and_must_be_inside_the_roots() {
    let dir = TempDir::new("at-embed");
    let sub = dir.path().join("work");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("spec.md"), "# Spec\nline two\n").unwrap();
    dir.file("outside.txt", "not shared\n");
    let run = client(&sub, &["--format", "json", "-p", "summarize @spec.md."], "");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let records = records(&run);
    let prompt = sent(&records, "session/prompt").expect("a prompt")["params"]["prompt"].clone();
    let uri = format!("file://{}/spec.md", sub.display());
    assert_eq!(prompt[0], json!({"type": "text", "text": "summarize @spec.md."}));
    assert_eq!(
        prompt[1],
        json!({"type": "resource", "resource": {"uri": uri, "text": "# Spec\nline two\n", "mimeType": "text/markdown"}})
    );

    let run = client(&sub, &["--format", "json", "-p", "compare @../outside.txt"], "");
    assert_eq!(run.code(), 1);
    assert!(run.stderr.contains("outside the roots"), "{}", run.stderr);
    let records = self::records(&run);
    assert_eq!(records.len(), 1, "checked before the agent started: {records:?}");
    assert_eq!(records[0]["exit"], 1);

    let big = "x".repeat(usize::try_from(acp_cli::client::MAX_EMBED).unwrap() + 1);
    std::fs::write(sub.join("big.txt"), big).unwrap();
    let run = client(&sub, &["--quiet", "-p", "@big.txt"], "");
    assert_eq!(run.code(), 1);
    assert!(run.stderr.contains("limited to 1048576 bytes"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

#[test]
fn images_go_to_an_agent_that_advertises_them() {
    let dir = TempDir::new("image");
    std::fs::write(dir.path().join("dot.png"), b"\x89PNG\r\n\x1a\nxyz").unwrap();
    let run = client(dir.path(), &["--format", "json", "--image", "dot.png", "-p", "look"], "");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let prompt = sent(&records(&run), "session/prompt").expect("a prompt")["params"]["prompt"].clone();
    assert_eq!(prompt[1]["type"], "image");
    assert_eq!(prompt[1]["mimeType"], "image/png");
    assert_eq!(prompt[1]["data"], "iVBORw0KGgp4eXo=");

    // In text mode errors are drawn in the transcript, on stdout.
    let run = client(dir.path(), &["--image", "notes.bmp", "-p", "look"], "");
    assert_eq!(run.code(), 1);
    assert!(run.stdout.contains("not a png, jpeg, gif or webp"), "{}", run.stdout);
}

#[test]
fn json_works_over_connect_too_on_each_version() {
    for &version in versions() {
        let dir = TempDir::new("json-connect");
        let acp = acp();
        let marker = unique_marker();
        let agent = [acp.to_str().unwrap(), "agent", "--protocol", version, "--quiet", "--slow-ms", &marker];
        let args: Vec<&str> = ["serve", "--listen", "127.0.0.1:0", "--"].into_iter().chain(agent).collect();
        let _reaper = KillOnDrop(vec![marker.clone()]);
        let Serving { child: mut server, addr, .. } = start_serving(&args, dir.path());
        let url = format!("ws://{addr}/acp");
        let client = ["client", "--protocol", version, "--connect", &url, "--format", "json", "-p", "hi"];
        let run = run(&client, dir.path(), "");
        let _ = server.kill();
        let _ = server.wait();
        assert_eq!(run.code(), 0, "v{version}: {}", run.stderr);
        let records = records(&run);
        assert_eq!(records[0]["msg"]["method"], "initialize", "v{version}");
        assert_eq!(records[0]["msg"]["params"]["protocolVersion"], json!(version.parse::<u16>().unwrap()));
        assert_eq!(records.last().unwrap()["stopReason"], "end_turn", "v{version}");
    }
}

#[test]
fn help_lists_the_exit_codes() {
    let run = run(&["client", "--help"], &std::env::temp_dir(), "");
    assert_eq!(run.code(), 0);
    for line in [
        "Exit codes:",
        "3    cancelled",
        "7    the agent died",
        "130  quit with Ctrl-C",
        "--format <FORMAT>",
        "--quiet",
    ] {
        assert!(run.stdout.contains(line), "{line:?} in:\n{}", run.stdout);
    }
}

#[test]
fn the_typescript_sdk_agent_gets_links_and_no_images() {
    if !typescript_sdk_available() {
        return;
    }
    let dir = TempDir::new("sdk-output");
    let path = dir.file("notes.txt", "read by the SDK agent\n");
    let agent = interop_dir().join("agent.mjs").display().to_string();
    let prompt = format!("read {path} and @notes.txt");
    let args = ["client", "--format", "json", "--allow", "-p", &prompt, "--", "node", &agent];
    let run = run(&args, dir.path(), "");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let records = records(&run);
    let init = &records[1]["msg"]["result"]["agentCapabilities"]["promptCapabilities"];
    assert_eq!(init["embeddedContext"], false);
    let prompt = sent(&records, "session/prompt").expect("a prompt")["params"]["prompt"].clone();
    assert_eq!(prompt[1]["type"], "resource_link");
    assert_eq!(prompt[1]["uri"], format!("file://{path}"));
    assert_eq!(prompt[1]["name"], "notes.txt");
    let summary = records.last().unwrap();
    assert_eq!((&summary["stopReason"], &summary["text"]), (&json!("end_turn"), &json!("done")));
    assert_eq!(summary["permissions"][0]["chosen"], "allow-once");
    assert_eq!(summary["toolCalls"][0]["status"], "completed");

    std::fs::write(dir.path().join("dot.png"), b"\x89PNG").unwrap();
    let args = ["client", "--format", "json", "--image", "dot.png", "-p", "look", "--", "node", &agent];
    let run = self::run(&args, dir.path(), "");
    assert_eq!(run.code(), 1);
    assert!(run.stderr.contains("does not accept images"), "{}", run.stderr);
    let records = self::records(&run);
    assert!(sent(&records, "session/prompt").is_none(), "refused before the prompt was sent");
    assert_eq!(records.last().unwrap()["exit"], 1);
}
