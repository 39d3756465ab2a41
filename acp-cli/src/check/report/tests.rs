use super::*;
use crate::sanitize;

static MUST: Requirement = Requirement { id: "t.must", level: Level::Must, title: "must", cite: "here" };
static SHOULD: Requirement = Requirement { id: "t.should", level: Level::Should, title: "should", cite: "there" };
static CAPABILITY: Requirement = Requirement { id: "t.cap", level: Level::Capability, title: "cap", cite: "where" };

fn line() -> WireLine {
    WireLine { dir: Dir::C2a, at: Duration::from_millis(3), line: "{}".into() }
}

fn report(findings: Vec<Finding>) -> Report {
    let mut report = Report::new("agent", 1, "agent: x".into());
    report.findings = findings;
    report
}

fn auth_gate() -> Gate {
    let method = |id: &str, name: &str| AuthMethod { id: id.into(), name: name.into(), kind: "agent".into() };
    Gate::Auth {
        methods: vec![method("oauth", "Log in"), method("api-key", "")],
        detail: "session/new answered -32000".into(),
    }
}

#[test]
fn only_a_failed_must_fails_the_run() {
    let mut report = report(vec![]);
    report.findings.push(Finding::new(&SHOULD, Outcome::Fail("no".into()), vec![line()]));
    report.findings.push(Finding::new(&MUST, Outcome::Skip("n/a".into()), vec![line()]));
    report.findings.push(Finding::new(&CAPABILITY, Outcome::Skip("not advertised".into()), vec![]));
    assert!(report.passed());
    assert_eq!(report.exit_code(), 0);
    let mut advertised = report.clone();
    advertised.findings.push(Finding::new(&CAPABILITY, Outcome::Fail("served wrong".into()), vec![]));
    assert!(!advertised.passed(), "an advertised capability that fails fails the run");
    report.findings.push(Finding::new(&MUST, Outcome::Fail("broken".into()), vec![line()]));
    assert!(!report.passed());
    assert_eq!(report.exit_code(), 1);
    assert_eq!(report.counts(), Counts { pass: 0, fail: 2, skip: 2, blocked: 0 });
}

#[test]
fn a_gate_exits_3_unless_a_must_failed_and_says_what_the_agent_offers() {
    let mut report = report(vec![
        Finding::new(&MUST, Outcome::Pass, vec![]),
        Finding::new(&MUST, Outcome::Blocked("gated by authentication".into()), vec![line()]),
    ]);
    report.gate = Some(auth_gate());
    assert_eq!((report.exit_code(), report.verdict()), (3, "gated"));
    let text = report.to_text();
    assert!(text.contains("gate MUST       t.must  must\n     gated by authentication\n"), "{text}");
    assert!(text.contains("it offers: oauth (Log in), api-key. Run again with --auth METHOD_ID"), "{text}");
    assert!(text.ends_with("GATED: 1 passed, 0 failed, 0 skipped, 1 blocked\n"), "{text}");
    let json = report.to_json();
    assert_eq!((json["exit"].as_u64(), json["verdict"].as_str()), (Some(3), Some("gated")));
    assert_eq!(json["gate"]["kind"], "auth");
    assert_eq!(json["gate"]["methods"][1]["id"], "api-key");
    assert_eq!(json["findings"][1]["verdict"], "blocked");
    assert_eq!(json["findings"][1]["transcript"], serde_json::json!([]), "no transcript unless it failed");
    assert_eq!(json["levels"]["MUST"]["blocked"], 1);
    report.findings.push(Finding::new(&MUST, Outcome::Fail("broken".into()), vec![]));
    assert_eq!((report.exit_code(), report.verdict()), (1, "failed"), "a MUST failure wins over the gate");
    report.findings.pop();
    report.gate = Some(Gate::NotStarted("no such file".into()));
    assert_eq!((report.exit_code(), report.verdict()), (3, "not-started"));
    assert!(report.to_text().ends_with("NOT STARTED: 1 passed, 0 failed, 0 skipped, 1 blocked\n"));
}

#[test]
fn the_peers_text_in_the_report_is_inert_and_cannot_forge_the_verdict() {
    let forged = "\x1b]0;owned\x07\x1b[2J\x1b[H\rPASSED: 9 passed, 0 failed, 0 skipped\nPASSED";
    let mut line = line();
    line.line = forged.to_owned();
    let report = report(vec![Finding::new(&MUST, Outcome::Fail(format!("the agent said {forged}")), vec![line])]);
    let text = report.to_text();
    assert!(!text.chars().any(|c| c != '\n' && (c.is_control() || sanitize::is_unsafe(c))), "{text:?}");
    assert!(text.contains("\\x1b]0;owned\\x07\\x1b[2J"), "the attempt is shown, defused: {text}");
    let verdicts: Vec<&str> = text.lines().filter(|l| l.starts_with("PASSED") || l.starts_with("FAILED")).collect();
    assert_eq!(verdicts, ["FAILED: 0 passed, 1 failed, 0 skipped"], "{text}");
    assert_eq!(report.to_json()["findings"][0]["transcript"][0]["line"], forged, "JSON keeps the line exact");
    let junit = report.to_junit();
    assert!(!junit.chars().any(|c| c != '\n' && c.is_control()), "{junit:?}");
    assert!(!junit.contains("<failure message=\"the agent said \x1b"), "{junit}");
}

#[test]
fn transcripts_are_kept_for_failures_only_and_printed() {
    let report = report(vec![
        Finding::new(&MUST, Outcome::Pass, vec![line()]),
        Finding::new(&MUST, Outcome::Fail("broken".into()), vec![line()]),
    ]);
    assert!(report.findings[0].transcript.is_empty());
    let text = report.to_text();
    assert!(text.contains("FAIL MUST       t.must  must\n     broken\n     see: here\n"), "{text}");
    assert!(text.contains("c2a {}"), "{text}");
    assert!(text.ends_with("FAILED: 1 passed, 1 failed, 0 skipped\n"), "{text}");
    let json = report.to_json();
    assert_eq!((json["schema"].as_str(), json["version"].as_u64()), (Some("acp-check-report"), Some(1)));
    assert_eq!(json["passed"], false);
    assert_eq!(json["findings"][1]["transcript"][0]["dir"], "c2a");
    assert_eq!(json["findings"][1]["outcome"], json["findings"][1]["verdict"]);
}

#[test]
fn junit_fails_binding_requirements_only_and_escapes_markup() {
    let mut report = report(vec![
        Finding::new(&MUST, Outcome::Pass, vec![]),
        Finding::new(&MUST, Outcome::Fail("answered <b>\"x\" & y</b>".into()), vec![line()]),
        Finding::new(&SHOULD, Outcome::Fail("no agentInfo".into()), vec![]),
        Finding::new(&CAPABILITY, Outcome::Skip("not advertised".into()), vec![]),
        Finding::new(&MUST, Outcome::Blocked("gated".into()), vec![]),
    ]);
    report.gate = Some(auth_gate());
    let junit = report.to_junit();
    assert!(junit.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"), "{junit}");
    assert!(junit.contains("tests=\"5\" failures=\"1\" errors=\"0\" skipped=\"3\""), "{junit}");
    assert!(junit.contains("<testcase classname=\"t.must\" name=\"t.must [MUST]\"/>"), "{junit}");
    assert!(
        junit.contains("<failure message=\"answered &lt;b&gt;&quot;x&quot; &amp; y&lt;/b&gt;\" type=\"MUST\">"),
        "{junit}"
    );
    assert!(junit.contains("<skipped message=\"not binding (SHOULD): no agentInfo\"/>"), "{junit}");
    assert!(junit.contains("<skipped message=\"blocked: gated\"/>"), "{junit}");
    assert!(junit.contains("<system-out>the agent requires authentication"), "{junit}");
    assert_eq!(junit.matches("<testcase").count(), 5);
    assert!(junit.ends_with("  </testsuite>\n</testsuites>\n"), "{junit}");
}
