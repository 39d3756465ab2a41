//! `acp check client`, run the way a user runs it: against `acp client`, against a client
//! written with the official TypeScript SDK (`interop/prompt_client.mjs`), and against a
//! deliberately broken client without an SDK (`interop/python/broken_client.py`), which must
//! fail exactly the two requirements it breaks.
//!
//! The SDK test needs `node` and `interop/node_modules`, the broken client `python3`: without
//! them a test prints a skip notice and passes, unless `ACP_REQUIRE_INTEROP=1` (set by CI).

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::Value;

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("interop")
}

/// Whether `program --version` runs; panics when it is required and missing.
fn available(program: &str, extra: Option<PathBuf>) -> bool {
    let runs = Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success());
    let why = if !runs {
        Some(format!("`{program}` is not on PATH"))
    } else {
        extra.filter(|path| !path.exists()).map(|path| format!("{} is missing (npm ci in interop/)", path.display()))
    };
    match why {
        None => true,
        Some(why) if std::env::var("ACP_REQUIRE_INTEROP").is_ok_and(|v| v == "1") => {
            panic!("ACP_REQUIRE_INTEROP=1 but {why}")
        }
        Some(why) => {
            eprintln!("SKIPPED: {why}");
            false
        }
    }
}

struct Checked {
    code: i32,
    report: Value,
    stderr: String,
}

impl Checked {
    fn outcome(&self, id: &str) -> String {
        let finding = self.report["findings"].as_array().unwrap().iter().find(|f| f["id"] == id);
        let finding = finding.unwrap_or_else(|| panic!("no finding {id}"));
        finding["outcome"].as_str().unwrap().to_owned()
    }

    /// The requirements that failed, but the informational ones.
    fn failed(&self) -> BTreeSet<String> {
        let findings = self.report["findings"].as_array().unwrap().iter();
        let failed = findings.filter(|f| f["outcome"] == "fail" && f["level"] != "INFO");
        failed.map(|f| f["id"].as_str().unwrap().to_owned()).collect()
    }
}

/// Runs `acp check client --format json` in a fresh directory (also its TMPDIR, where the
/// relay sockets go); checks that nothing it started is left, nor any file it made.
fn check(timeout: &str, client: &[&str]) -> Checked {
    let dir = TempDir::new("check-client");
    let acp = acp();
    // Interpreters can take long to start on a loaded machine: only a client that never
    // starts the agent waits out --start-timeout.
    let mut args = vec!["check", "client", "--format", "json", "--timeout", timeout, "--start-timeout", "90", "--"];
    args.extend_from_slice(client);
    let out = Command::new(&acp).args(&args).current_dir(dir.path()).env("TMPDIR", dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    let prefix = dir.path().display().to_string();
    let left: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(left.is_empty(), "left behind in the directory: {left:?}");
    let relays = survivors_under(&prefix);
    assert!(relays.is_empty(), "relay processes left: {relays:?}");
    Checked { code: out.status.code().unwrap_or(-1), report, stderr }
}

/// Processes with an argument under `prefix` (the relays of one check).
fn survivors_under(prefix: &str) -> Vec<u32> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<u32> = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| {
                let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let zombie = stat[stat.rfind(')')? + 1..].split_whitespace().next()? == "Z";
                let ours = cmdline.split(|&b| b == 0).any(|a| a.starts_with(prefix.as_bytes()));
                (!zombie && ours).then_some(pid)
            })
            .collect();
        if left.is_empty() || std::time::Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn acp_client_passes_every_requirement() {
    let acp = acp().display().to_string();
    let run = check("20", &[&acp, "client", "--allow", "-p", "hi", "--", "{agent}"]);
    assert_eq!(run.code, 0, "{:#}\n{}", run.report, run.stderr);
    assert_eq!(run.report["passed"], true);
    assert_eq!(run.report["counts"]["fail"], 0, "{:#}", run.report);
    for id in [
        "client.init.first",
        "client.methods.advertised-only",
        "client.permission.offered-option",
        "client.updates.every-kind",
        "client.unknown-method",
        "client.fs.read-text-file.served",
        "client.fs.write-text-file.served",
        "client.cancel.notification",
        "client.stop-reason.refusal",
        "client.agent-dies",
    ] {
        assert_eq!(run.outcome(id), "pass", "{id}: {:#}", run.report);
    }
    // --allow advertises fs writes, so the refusal of an unadvertised write is not judged.
    assert_eq!(run.outcome("client.fs.write-text-file.refused"), "skip");
}

#[test]
fn acp_client_under_deny_refuses_what_it_does_not_advertise() {
    let acp = acp().display().to_string();
    let run = check("20", &[&acp, "client", "--deny", "-p", "hi", "--", "{agent}"]);
    assert_eq!(run.code, 0, "{:#}\n{}", run.report, run.stderr);
    assert_eq!(run.outcome("client.fs.write-text-file.refused"), "pass");
    assert_eq!(run.outcome("client.terminal.refused"), "pass");
    assert_eq!(run.outcome("client.fs.read-text-file.served"), "pass");
}

#[test]
fn the_typescript_sdk_client_passes_and_cancels_a_pending_ask() {
    let modules = interop_dir().join("node_modules/@agentclientprotocol/sdk/package.json");
    if !available("node", Some(modules)) {
        return;
    }
    let script = interop_dir().join("prompt_client.mjs").display().to_string();
    // --hold-permissions: asks wait for a user who never answers, until the turn is cancelled.
    let run = check("15", &["node", &script, "--hold-permissions", "--", "{agent}"]);
    assert_eq!(run.code, 0, "{:#}\n{}", run.report, run.stderr);
    assert_eq!(run.report["counts"]["fail"], 0, "{:#}", run.report);
    for id in [
        "client.cancel.notification",
        "client.cancel.pending-permission",
        "client.permission.offered-option",
        "client.fs.read-text-file.served",
        "client.fs.write-text-file.served",
        "client.terminal.refused",
        "client.unknown-method",
    ] {
        assert_eq!(run.outcome(id), "pass", "{id}: {:#}", run.report);
    }
}

#[test]
fn a_broken_client_fails_exactly_what_it_breaks() {
    if !available("python3", None) {
        return;
    }
    let script = interop_dir().join("python").join("broken_client.py").display().to_string();
    // No {agent}: this client takes the agent's command line from $ACP_CHECK_AGENT.
    let run = check("20", &["python3", &script]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    assert_eq!(run.report["passed"], false);
    let expected: BTreeSet<String> =
        ["client.methods.advertised-only", "client.permission.offered-option"].map(String::from).into();
    assert_eq!(run.failed(), expected, "{:#}", run.report);
    let findings = run.report["findings"].as_array().unwrap();
    let load = findings.iter().find(|f| f["id"] == "client.methods.advertised-only").unwrap();
    assert!(load["reason"].as_str().unwrap().contains("session/load"), "{load:#}");
    let transcript = load["transcript"].as_array().unwrap();
    assert!(transcript.iter().any(|l| l["dir"] == "c2a" && l["line"].as_str().unwrap().contains("\"session/load\"")));
    assert!(run.stderr.contains("ACP_CHECK_AGENT"), "{}", run.stderr);
}

#[test]
fn a_client_that_never_starts_the_agent_fails_the_launch() {
    let run = check("2", &["true", "{agent}"]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    assert_eq!(run.failed(), BTreeSet::from(["client.launch".to_owned()]));
    assert_eq!(run.outcome("client.init.first"), "skip");
}

/// The interpreter of `interop/python/.venv` with the official Python SDK, if it is there.
fn sdk_python() -> Option<PathBuf> {
    common::sdk_python(
        "import importlib.metadata as m; assert m.version('agent-client-protocol') == '0.12.1'",
        "agent-client-protocol 0.12.1",
        "the Python SDK client needs interop/python/.venv (see requirements.txt)",
    )
}

#[test]
fn the_python_sdk_client_answers_an_unadvertised_terminal_with_null() {
    let Some(python) = sdk_python() else { return };
    let script = interop_dir().join("python").join("prompt_client.py").display().to_string();
    let python = python.display().to_string();
    let run = check("20", &[&python, &script, "--", "{agent}"]);
    // agent-client-protocol 0.12.1 routes terminal/* as optional: a client that does not
    // implement them (and does not advertise terminals) answers terminal/create `null`
    // instead of an error. Everything else passes.
    assert_eq!(run.failed(), BTreeSet::from(["client.terminal.refused".to_owned()]), "{:#}", run.report);
    assert_eq!(run.code, 1);
    let findings = run.report["findings"].as_array().unwrap();
    let terminal = findings.iter().find(|f| f["id"] == "client.terminal.refused").unwrap();
    assert!(terminal["reason"].as_str().unwrap().contains("\"result\":null"), "{terminal:#}");
    for id in ["client.permission.offered-option", "client.fs.read-text-file.served", "client.unknown-method"] {
        assert_eq!(run.outcome(id), "pass", "{id}: {:#}", run.report);
    }
}

#[test]
fn a_client_that_hangs_is_ended_and_fails_for_saying_nothing() {
    if !available("python3", None) {
        return;
    }
    // Starts the agent from $ACP_CHECK_AGENT, then sleeps without a word.
    let hang = "import subprocess, json, os, time\n\
                agent = subprocess.Popen(json.loads(os.environ['ACP_CHECK_AGENT']), stdin=subprocess.PIPE)\n\
                time.sleep(1000)";
    let marker = unique_marker();
    let run = check("1", &["python3", "-c", hang, &marker]);
    assert_eq!(survivors(&marker, Duration::from_secs(5)), Vec::<u32>::new(), "the client was left running");
    assert_eq!(run.code, 1, "{:#}", run.report);
    assert!(run.failed().contains("client.init.first"), "{:#}", run.report);
    assert_eq!(run.outcome("client.launch"), "pass");
}
