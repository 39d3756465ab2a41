//! `acp check agent -- AGENT_CMD...` against independent agents: `acp agent`, the official
//! TypeScript SDK's agent (`interop/agent.mjs`), a Python agent written with the official
//! Python SDK (`interop/python/check_agent.py`) — all pass — and a deliberately broken
//! agent without an SDK (`interop/python/broken_agent.py`), which fails exactly the checks it
//! breaks.
//!
//! The SDK runs need `node` with `interop/node_modules`, and the venv
//! `interop/python/.venv`; without them those tests print a skip notice and pass, unless
//! `ACP_REQUIRE_INTEROP=1` (set by CI), which makes their absence a failure.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::Value;

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("interop")
}

/// Skips (or, under `ACP_REQUIRE_INTEROP=1`, fails) for `why`.
fn unavailable(why: &str) -> bool {
    if std::env::var("ACP_REQUIRE_INTEROP").is_ok_and(|v| v == "1") {
        panic!("ACP_REQUIRE_INTEROP=1 but {why}");
    }
    eprintln!("SKIPPED: {why}");
    false
}

/// Whether `program ARGS` runs and succeeds.
fn runs(program: &Path, args: &[&str]) -> bool {
    Command::new(program).args(args).output().is_ok_and(|o| o.status.success())
}

/// `acp check agent --format json ARGS -- AGENT...`: its exit code and report.
fn check(args: &[&str], agent: &[&str]) -> (i32, Value) {
    let out = Command::new(acp())
        .args(["check", "agent", "--format", "json"])
        .args(args)
        .arg("--")
        .args(agent)
        .stdin(Stdio::null())
        .output()
        .expect("run acp check");
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code().unwrap_or(-1), report)
}

/// The ids of the findings with this outcome.
fn ids(report: &Value, outcome: &str) -> BTreeSet<String> {
    let findings = report["findings"].as_array().expect("findings");
    findings.iter().filter(|f| f["outcome"] == outcome).map(|f| f["id"].as_str().unwrap().to_owned()).collect()
}

/// The failures that fail the run (MUST).
fn must_failures(report: &Value) -> Vec<&Value> {
    let findings = report["findings"].as_array().expect("findings");
    findings.iter().filter(|f| f["outcome"] == "fail" && f["level"] == "MUST").collect()
}

/// The checks every agent that asks permission and reads the offered file must pass (not skip).
const CORE: &[&str] = &[
    "agent.init.answer",
    "agent.init.version",
    "agent.init.future-version",
    "agent.session.new",
    "agent.session.relative-cwd",
    "agent.turn.stop-reason",
    "agent.turn.updates",
    "agent.turn.permission-asks",
    "agent.capability.fs",
    "agent.concurrency.two-sessions",
    "agent.cancel.mid-turn",
    "agent.cancel.during-permission",
    "agent.cancel.cancel-request",
    "agent.rpc.unknown-method",
    "agent.rpc.malformed-survives",
    "agent.stdio.clean-stdout",
    "agent.stdio.exit-on-eof",
];

fn assert_passes(code: i32, report: &Value, also: &[&str]) {
    assert!(must_failures(report).is_empty(), "MUST failures: {:#?}", must_failures(report));
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["passed"], true);
    let passed = ids(report, "pass");
    for id in CORE.iter().chain(also) {
        assert!(passed.contains(*id), "{id} did not pass: {report:#}");
    }
}

#[test]
fn acp_agent_passes() {
    let acp = acp();
    let (code, report) =
        check(&["--timeout", "10", "--startup-timeout", "300"], &[acp.to_str().unwrap(), "agent", "--quiet"]);
    assert_passes(code, &report, &["agent.cancel.cancel-request-honored", "agent.methods.session-close"]);
    assert_eq!(ids(&report, "fail"), BTreeSet::new(), "{report:#}");
}

#[test]
fn the_typescript_sdk_agent_passes() {
    let manifest = interop_dir().join("node_modules/@agentclientprotocol/sdk/package.json");
    if !runs(Path::new("node"), &["--version"]) || !manifest.exists() {
        unavailable("`node` and interop/node_modules (npm ci in interop/) are needed");
        return;
    }
    let script = interop_dir().join("agent.mjs");
    let (code, report) = check(&["--timeout", "10", "--startup-timeout", "300"], &["node", script.to_str().unwrap()]);
    assert_passes(code, &report, &[]);
    // The SDK does not end a running session/prompt on $/cancel_request (optional): reported,
    // not failed; session/cancel then ends it.
    let failed = ids(&report, "fail");
    assert_eq!(failed, BTreeSet::from(["agent.cancel.cancel-request-honored".to_owned()]), "{report:#}");
}

#[test]
fn the_python_sdk_agent_passes() {
    let python = std::env::var_os("ACP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| interop_dir().join("python").join(".venv").join("bin").join("python"));
    if !runs(&python, &["-c", "import acp"]) {
        unavailable("the venv interop/python/.venv with agent-client-protocol is needed");
        return;
    }
    let script = interop_dir().join("python").join("check_agent.py");
    let (code, report) =
        check(&["--timeout", "10", "--startup-timeout", "300"], &[python.to_str().unwrap(), script.to_str().unwrap()]);
    let methods = [
        "agent.methods.session-list",
        "agent.methods.session-resume",
        "agent.methods.set-mode",
        "agent.methods.session-close",
    ];
    assert_passes(code, &report, &methods);
    // The SDK creates a session before initialize (informational), and does not end a
    // running prompt on $/cancel_request (optional).
    let failed = ids(&report, "fail");
    let expected = ["agent.init.before-initialize-refused", "agent.cancel.cancel-request-honored"];
    assert_eq!(failed, expected.iter().map(|s| s.to_string()).collect(), "{report:#}");
}

#[test]
fn a_broken_agent_fails_exactly_what_it_breaks_and_leaves_nothing_behind() {
    if !runs(Path::new("python3"), &["--version"]) {
        unavailable("`python3` is needed for interop/python/broken_agent.py");
        return;
    }
    let marker = unique_marker();
    let script = interop_dir().join("python").join("broken_agent.py");
    let (code, report) =
        check(&["--timeout", "5", "--startup-timeout", "300"], &["python3", script.to_str().unwrap(), &marker]);
    let expected = [
        "agent.init.future-version",
        "agent.session.relative-cwd",
        "agent.cancel.mid-turn",
        "agent.stdio.clean-stdout",
        "agent.capability.fs",
        "agent.rpc.unknown-method",
    ];
    assert_eq!(ids(&report, "fail"), expected.iter().map(|s| s.to_string()).collect(), "{report:#}");
    assert_eq!(code, 1);
    assert_eq!(report["passed"], false);
    // Each failure carries its scenario's transcript, both directions.
    let failures = must_failures(&report);
    let unknown = failures.iter().find(|f| f["id"] == "agent.rpc.unknown-method").unwrap();
    let dirs: BTreeSet<&str> =
        unknown["transcript"].as_array().unwrap().iter().map(|l| l["dir"].as_str().unwrap()).collect();
    assert_eq!(dirs, BTreeSet::from(["a2c", "c2a"]));
    assert!(unknown["cite"].as_str().unwrap().contains("JSON-RPC 2.0"));
    assert_eq!(survivors(&marker, Duration::from_secs(5)), Vec::<u32>::new(), "an agent process was left running");
}

#[test]
fn only_filters_and_text_is_the_default() {
    let acp = acp();
    let out = Command::new(self::acp())
        .args(["check", "agent", "--only", "agent.cancel.mid", "--", acp.to_str().unwrap(), "agent", "--quiet"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("pass MUST       agent.cancel.mid-turn  "), "{text}");
    assert!(!text.contains("agent.init"), "{text}");
    assert!(text.ends_with("PASSED: 1 passed, 0 failed, 0 skipped\n"), "{text}");
    let usage = Command::new(self::acp()).args(["check", "agent"]).output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
}
