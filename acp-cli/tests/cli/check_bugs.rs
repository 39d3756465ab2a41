//! `acp check agent` on the bugs users file most, and on agents that require authentication:
//! each new requirement passes on `acp agent` (the reference agent, with `--history` where it
//! needs `session/load`) and on the fixture `tests/fixtures/flawed_agent.py` as it is, and
//! fails on the fixture with exactly that bug (`--flaw NAME`). An agent that advertises
//! `authMethods` and answers `auth_required` is reported gated (exit 3, its methods listed, no
//! MUST failed); `--auth` gets it past the gate. The fixture needs `python3` (no SDK); without
//! it the tests print a skip notice, unless `ACP_REQUIRE_INTEROP=1`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join("flawed_agent.py")
}

/// Whether `python3` runs; panics when it is required (`ACP_REQUIRE_INTEROP=1`).
fn python3() -> bool {
    if Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    assert!(!std::env::var("ACP_REQUIRE_INTEROP").is_ok_and(|v| v == "1"), "ACP_REQUIRE_INTEROP=1 but no python3");
    eprintln!("SKIPPED: python3 is needed for tests/fixtures/flawed_agent.py");
    false
}

/// `acp check agent ARGS -- AGENT...` with `--format FORMAT`: exit code and stdout.
fn check_as(format: &str, args: &[&str], agent: &[&str]) -> (i32, String) {
    let out = Command::new(acp())
        .args(["check", "agent", "--format", format, "--timeout", "10", "--startup-timeout", "300"])
        .args(args)
        .arg("--")
        .args(agent)
        .stdin(Stdio::null())
        .output()
        .expect("run acp check");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `acp check agent --format json`: exit code and report.
fn check(args: &[&str], agent: &[&str]) -> (i32, Value) {
    let (code, out) = check_as("json", args, agent);
    let report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    (code, report)
}

/// The verdict of requirement `id` in `report`.
fn verdict<'a>(report: &'a Value, id: &str) -> &'a str {
    let findings = report["findings"].as_array().expect("findings");
    let finding = findings.iter().find(|f| f["id"] == id).unwrap_or_else(|| panic!("no {id}: {report:#}"));
    finding["verdict"].as_str().expect("a verdict")
}

/// The ids that failed.
fn failed(report: &Value) -> Vec<&str> {
    let findings = report["findings"].as_array().expect("findings");
    findings.iter().filter(|f| f["verdict"] == "fail").map(|f| f["id"].as_str().unwrap()).collect()
}

/// Each bug: the fixture's flaw, the requirement that catches it, and whether it is a MUST
/// (exit status 1) or a SHOULD (reported, exit status 0).
const BUGS: &[(&str, &str, bool)] = &[
    ("update-before-new", "agent.session.id-before-updates", true),
    ("late-update", "agent.turn.no-late-updates", true),
    ("ask-unannounced", "agent.turn.tool-call-announced", false),
    ("refused-stays-pending", "agent.turn.refused-tool-call-settles", true),
    ("replay-after-load", "agent.load.replay-before-answer", true),
    ("load-forgets-state", "agent.load.state-again", false),
    ("load-forgets-state", "agent.resume.state-again", false),
];

#[test]
fn each_bug_passes_on_the_reference_agent() {
    let history = TempDir::new("check-bugs-history");
    let acp = acp();
    let agent = [acp.to_str().unwrap(), "agent", "--quiet", "--history", history.path().to_str().unwrap()];
    // Everything at once: the run-wide requirements need every scenario anyway.
    let (code, report) = check(&[], &agent);
    assert_eq!((code, failed(&report)), (0, vec![]), "{report:#}");
    for (_, id, _) in BUGS {
        assert_eq!(verdict(&report, id), "pass", "{id}: {report:#}");
    }
}

#[test]
fn each_bug_fails_on_an_agent_that_has_it_and_only_there() {
    if !python3() {
        return;
    }
    let script = fixture();
    let script = script.to_str().unwrap();
    let (code, report) = check(&[], &["python3", script]);
    assert_eq!((code, failed(&report)), (0, vec![]), "the fixture without a flaw passes: {report:#}");
    for (_, id, _) in BUGS {
        assert_eq!(verdict(&report, id), "pass", "{id}: {report:#}");
    }
    for (flaw, id, must) in BUGS {
        let (code, report) = check(&["--only", id], &["python3", script, "--flaw", flaw]);
        assert_eq!(verdict(&report, id), "fail", "--flaw {flaw}: {report:#}");
        assert_eq!(code, if *must { 1 } else { 0 }, "--flaw {flaw}: {report:#}");
        let finding = report["findings"].as_array().unwrap().iter().find(|f| f["id"] == *id).unwrap();
        assert!(!finding["transcript"].as_array().unwrap().is_empty(), "a failure shows its wire: {finding:#}");
    }
}

#[test]
fn an_agent_that_requires_authentication_is_gated_not_failed() {
    if !python3() {
        return;
    }
    let script = fixture();
    let agent = ["python3", script.to_str().unwrap(), "--auth-gate"];
    let (code, report) = check(&[], &agent);
    assert_eq!(code, 3, "{report:#}");
    assert_eq!((report["verdict"].as_str(), report["exit"].as_u64()), (Some("gated"), Some(3)));
    assert_eq!(failed(&report), Vec::<&str>::new(), "{report:#}");
    let methods: Vec<&str> =
        report["gate"]["methods"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(methods, ["oauth-personal", "gemini-api-key", "vertex-ai", "gateway"]);
    assert_eq!(report["gate"]["kind"], "auth");
    assert_eq!(verdict(&report, "agent.session.new"), "blocked");
    assert_eq!(verdict(&report, "agent.auth.advertised"), "pass");
    assert_eq!(verdict(&report, "agent.init.answer"), "pass");
    assert!(report["counts"]["blocked"].as_u64().unwrap() > 20, "{report:#}");
    // The text says so, with the methods and what to do.
    let (code, text) = check_as("text", &["--only", "agent.session.new"], &agent);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("gate MUST       agent.session.new"), "{text}");
    assert!(text.contains("it offers: oauth-personal (Log in with Google), gemini-api-key (Gemini API key)"), "{text}");
    assert!(text.contains("Run again with --auth METHOD_ID"), "{text}");
    assert!(text.ends_with("GATED: 0 passed, 0 failed, 0 skipped, 1 blocked\n"), "{text}");
    // With --auth the agent is checked in full.
    let (code, report) = check(&["--auth", "gemini-api-key"], &agent);
    assert_eq!((code, failed(&report)), (0, vec![]), "{report:#}");
    assert_eq!(report["gate"], Value::Null);
    assert_eq!(verdict(&report, "agent.auth.authenticate"), "pass");
    assert_eq!(verdict(&report, "agent.session.new"), "pass");
    // A method it refuses keeps the gate, saying why.
    let (code, report) = check(&["--auth", "no-such-method"], &agent);
    assert_eq!((code, report["gate"]["kind"].as_str()), (3, Some("auth")), "{report:#}");
    assert!(report["gate"]["detail"].as_str().unwrap().contains("authenticate with method \"no-such-method\""));
}

#[test]
fn a_named_agent_runs_with_its_config_env_and_usage_errors_exit_2() {
    if !python3() {
        return;
    }
    let dir = TempDir::new("check-named-agent");
    let script = fixture();
    let config = format!(
        "[agents.gated]\ncommand = [\"python3\", {script:?}, \"--auth-gate\"]\n\n\
         [agents.keyed]\ncommand = [\"python3\", {script:?}, \"--auth-gate\"]\nenv = {{ FLAWED_AGENT_API_KEY = \"k\" }}\n"
    );
    let path = dir.file("config.toml", &config);
    let run = |name: &str| {
        let out = Command::new(acp())
            .args(["--config", &path, "check", "agent", "--format", "json", "--only", "agent.session.new"])
            .args(["--agent", name])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), report)
    };
    let (code, report) = run("gated");
    assert_eq!((code, report["gate"]["kind"].as_str()), (Some(3), Some("auth")), "{report:#}");
    // The same agent with its credentials in the config's env is checked in full.
    let (code, report) = run("keyed");
    assert_eq!((code, verdict(&report, "agent.session.new")), (Some(0), "pass"), "{report:#}");
    let (code, _) = run("nobody");
    assert_eq!(code, Some(2), "an unknown agent name is a usage error");
    let both = Command::new(acp()).args(["--config", &path, "check", "agent", "--agent", "gated", "--", "x"]).output();
    assert_eq!(both.unwrap().status.code(), Some(2), "--agent and AGENT_CMD at once");
    assert_eq!(Command::new(acp()).arg("check").output().unwrap().status.code(), Some(2), "nothing to check");
}

#[test]
fn auth_required_without_auth_methods_is_a_failure() {
    // An agent that refuses sessions for authentication but offers no way to authenticate.
    let script = r#"
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m: continue
    if m["method"] == "initialize":
        r = {"result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}}
    else:
        r = {"error": {"code": -32000, "message": "Authentication required"}}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], **r}), flush=True)
"#;
    if !python3() {
        return;
    }
    let (code, report) = check(&["--only", "agent.session.new"], &["python3", "-c", script]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["gate"], Value::Null);
    assert_eq!(verdict(&report, "agent.session.new"), "fail");
    let (_, report) = check(&["--only", "agent.auth"], &["python3", "-c", script]);
    assert_eq!(verdict(&report, "agent.auth.advertised"), "fail", "{report:#}");
}

#[test]
fn an_agent_that_cannot_start_exits_3() {
    let (code, report) = check(&[], &["/nonexistent/acp-check-agent"]);
    assert_eq!((code, report["verdict"].as_str()), (3, Some("not-started")), "{report:#}");
    assert_eq!(report["counts"]["pass"], 0);
    assert_eq!(report["counts"]["fail"], 0);
    assert!(report["gate"]["detail"].as_str().unwrap().to_lowercase().contains("no such file"), "{report:#}");
    // One that exits at once, saying why on stderr.
    let (code, report) = check(&[], &["sh", "-c", "echo 'missing API key' >&2; exit 1"]);
    assert_eq!((code, report["verdict"].as_str()), (3, Some("not-started")), "{report:#}");
    assert!(report["gate"]["detail"].as_str().unwrap().contains("missing API key"), "{report:#}");
    assert_eq!(report["counts"]["fail"], 0, "{report:#}");
}

#[test]
fn the_json_report_has_its_schema_and_junit_is_xml() {
    let acp = acp();
    let agent = [acp.to_str().unwrap(), "agent", "--quiet"];
    let (code, report) = check(&["--only", "agent.init"], &agent);
    assert_eq!(code, 0);
    assert_eq!((report["schema"].as_str(), report["version"].as_u64()), (Some("acp-check-report"), Some(1)));
    assert_eq!((report["role"].as_str(), report["protocol"].as_u64()), (Some("agent"), Some(1)));
    assert_eq!((report["verdict"].as_str(), report["exit"].as_u64()), (Some("passed"), Some(0)));
    for level in ["MUST", "CAPABILITY", "SHOULD", "INFO"] {
        for verdict in ["pass", "fail", "skip", "blocked"] {
            assert!(report["levels"][level][verdict].is_u64(), "{level}/{verdict}: {report:#}");
        }
    }
    let finding = &report["findings"][0];
    for key in ["id", "level", "title", "cite", "verdict", "reason", "transcript"] {
        assert!(finding.get(key).is_some(), "{key}: {finding:#}");
    }
    let (code, xml) = check_as("junit", &["--only", "agent.init"], &agent);
    assert_eq!(code, 0);
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"), "{xml}");
    let cases = report["findings"].as_array().unwrap().len();
    assert_eq!(xml.matches("<testcase ").count(), cases, "{xml}");
    assert!(xml.contains("failures=\"0\""), "{xml}");
}
