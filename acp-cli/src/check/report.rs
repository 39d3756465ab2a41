//! What `acp check` reports: requirements, their outcomes, and the wire transcript of each
//! failure, as text for people or JSON for scripts.
//!
//! Every check names a [`Requirement`]: a stable id (`agent.handshake.initialize`), a
//! [`Level`], a one-line title and the spec text it comes from. A run yields one [`Finding`]
//! per requirement checked; the exit status is 0 exactly when no `MUST` failed, counting a
//! capability-dependent requirement as a `MUST` of a peer that advertised the capability
//! ([`Report::passed`]).

use std::fmt::Write as _;
use std::time::Duration;

use crate::sanitize::clean_line;

/// How binding a requirement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The spec says MUST (or the JSON-RPC 2.0 base protocol requires it): a failure fails the run.
    Must,
    /// Required only when the peer advertised the capability it depends on (checked only
    /// then, and then as binding as `Must`).
    Capability,
    /// The spec says SHOULD: a failure is reported, the run still passes.
    Should,
    /// Informational: what the peer does, with no requirement attached.
    Info,
}

impl Level {
    /// The level as the report prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Capability => "CAPABILITY",
            Level::Should => "SHOULD",
            Level::Info => "INFO",
        }
    }
}

/// One requirement a peer is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement {
    /// A stable, dotted id (`agent.cancel.session-cancel-mid-turn`).
    pub id: &'static str,
    /// How binding it is.
    pub level: Level,
    /// What the peer must do, in one line.
    pub title: &'static str,
    /// Where the requirement comes from: a spec page and section, or the JSON-RPC 2.0 spec.
    pub cite: &'static str,
}

pub use crate::wire_dir::Dir;

/// One line that crossed the wire, as it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireLine {
    /// Who sent it.
    pub dir: Dir,
    /// When, since the scenario started.
    pub at: Duration,
    /// The line without its newline (lossily decoded if it was not UTF-8).
    pub line: String,
}

/// The result of checking one requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The peer did what the requirement says.
    Pass,
    /// It did not; why, in one sentence.
    Fail(String),
    /// Not checked; why (e.g. a capability the peer did not advertise).
    Skip(String),
}

/// One requirement checked, with the wire transcript of its scenario (kept for failures).
#[derive(Debug, Clone)]
pub struct Finding {
    /// What was checked.
    pub requirement: &'static Requirement,
    /// What happened.
    pub outcome: Outcome,
    /// The scenario's frames, both ways (empty when it passed or was skipped).
    pub transcript: Vec<WireLine>,
}

impl Finding {
    /// A finding; the transcript is dropped unless the requirement failed.
    pub fn new(requirement: &'static Requirement, outcome: Outcome, transcript: Vec<WireLine>) -> Finding {
        let transcript = if matches!(outcome, Outcome::Fail(_)) { transcript } else { Vec::new() };
        Finding { requirement, outcome, transcript }
    }
}

/// Every finding of one `acp check` run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// What was checked (`agent: node agent.mjs`).
    pub subject: String,
    /// The findings in the order they were checked.
    pub findings: Vec<Finding>,
}

impl Report {
    /// True when no `MUST` requirement failed, nor a capability-dependent one (which is
    /// checked only when the capability was advertised); the exit status is 0 exactly then.
    pub fn passed(&self) -> bool {
        !self.findings.iter().any(|f| {
            matches!(f.requirement.level, Level::Must | Level::Capability) && matches!(f.outcome, Outcome::Fail(_))
        })
    }

    /// How many findings passed, failed and were skipped.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut counts = (0, 0, 0);
        for finding in &self.findings {
            match finding.outcome {
                Outcome::Pass => counts.0 += 1,
                Outcome::Fail(_) => counts.1 += 1,
                Outcome::Skip(_) => counts.2 += 1,
            }
        }
        counts
    }

    /// The report for people: one line per requirement, failures with their transcript. What
    /// the peer wrote (its lines, and the reasons that quote it) is made inert and kept on its
    /// line (`sanitize::clean_line`): a peer cannot retitle or clear the terminal, or
    /// overwrite the verdict.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "acp check {}", clean_line(&self.subject));
        for finding in &self.findings {
            let req = finding.requirement;
            let (mark, why) = match &finding.outcome {
                Outcome::Pass => ("pass", None),
                Outcome::Fail(why) => ("FAIL", Some(why)),
                Outcome::Skip(why) => ("skip", Some(why)),
            };
            let _ = writeln!(out, "{mark} {:<10} {}  {}", req.level.as_str(), req.id, req.title);
            if let Some(why) = why {
                let _ = writeln!(out, "     {}", clean_line(why));
            }
            if !finding.transcript.is_empty() {
                let _ = writeln!(out, "     see: {}", req.cite);
                for line in &finding.transcript {
                    let _ = writeln!(
                        out,
                        "     {:>8.1}ms {} {}",
                        line.at.as_secs_f64() * 1e3,
                        line.dir.as_str(),
                        clean_line(&line.line)
                    );
                }
            }
        }
        let (pass, fail, skip) = self.counts();
        let verdict = if self.passed() { "PASSED" } else { "FAILED" };
        let _ = writeln!(out, "{verdict}: {pass} passed, {fail} failed, {skip} skipped");
        out
    }

    /// The report for scripts: one JSON document.
    pub fn to_json(&self) -> serde_json::Value {
        let findings: Vec<serde_json::Value> = self.findings.iter().map(finding_json).collect();
        let (pass, fail, skip) = self.counts();
        serde_json::json!({
            "subject": self.subject,
            "passed": self.passed(),
            "counts": { "pass": pass, "fail": fail, "skip": skip },
            "findings": findings,
        })
    }
}

fn finding_json(finding: &Finding) -> serde_json::Value {
    let req = finding.requirement;
    let (outcome, reason) = match &finding.outcome {
        Outcome::Pass => ("pass", None),
        Outcome::Fail(why) => ("fail", Some(why.as_str())),
        Outcome::Skip(why) => ("skip", Some(why.as_str())),
    };
    let transcript: Vec<serde_json::Value> = finding
        .transcript
        .iter()
        .map(|l| serde_json::json!({ "dir": l.dir.as_str(), "t_ms": l.at.as_secs_f64() * 1e3, "line": l.line }))
        .collect();
    serde_json::json!({
        "id": req.id,
        "level": req.level.as_str(),
        "title": req.title,
        "cite": req.cite,
        "outcome": outcome,
        "reason": reason,
        "transcript": transcript,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sanitize;

    static MUST: Requirement = Requirement { id: "t.must", level: Level::Must, title: "must", cite: "here" };
    static SHOULD: Requirement = Requirement { id: "t.should", level: Level::Should, title: "should", cite: "there" };
    static CAPABILITY: Requirement = Requirement { id: "t.cap", level: Level::Capability, title: "cap", cite: "where" };

    fn line() -> WireLine {
        WireLine { dir: Dir::C2a, at: Duration::from_millis(3), line: "{}".into() }
    }

    #[test]
    fn only_a_failed_must_fails_the_run() {
        let mut report = Report { subject: "agent: x".into(), findings: vec![] };
        report.findings.push(Finding::new(&SHOULD, Outcome::Fail("no".into()), vec![line()]));
        report.findings.push(Finding::new(&MUST, Outcome::Skip("n/a".into()), vec![line()]));
        report.findings.push(Finding::new(&CAPABILITY, Outcome::Skip("not advertised".into()), vec![]));
        assert!(report.passed());
        let mut advertised = report.clone();
        advertised.findings.push(Finding::new(&CAPABILITY, Outcome::Fail("served wrong".into()), vec![]));
        assert!(!advertised.passed(), "an advertised capability that fails fails the run");
        report.findings.push(Finding::new(&MUST, Outcome::Fail("broken".into()), vec![line()]));
        assert!(!report.passed());
        assert_eq!(report.counts(), (0, 2, 2));
    }

    #[test]
    fn the_peers_text_in_the_report_is_inert_and_cannot_forge_the_verdict() {
        let forged = "\x1b]0;owned\x07\x1b[2J\x1b[H\rPASSED: 9 passed, 0 failed, 0 skipped\nPASSED";
        let mut line = line();
        line.line = forged.to_owned();
        let report = Report {
            subject: "agent: x".into(),
            findings: vec![Finding::new(&MUST, Outcome::Fail(format!("the agent said {forged}")), vec![line])],
        };
        let text = report.to_text();
        assert!(!text.chars().any(|c| c != '\n' && (c.is_control() || sanitize::is_unsafe(c))), "{text:?}");
        assert!(text.contains("\\x1b]0;owned\\x07\\x1b[2J"), "the attempt is shown, defused: {text}");
        let verdicts: Vec<&str> = text.lines().filter(|l| l.starts_with("PASSED") || l.starts_with("FAILED")).collect();
        assert_eq!(verdicts, ["FAILED: 0 passed, 1 failed, 0 skipped"], "{text}");
        assert_eq!(report.to_json()["findings"][0]["transcript"][0]["line"], forged, "JSON keeps the line exact");
    }

    #[test]
    fn transcripts_are_kept_for_failures_only_and_printed() {
        let report = Report {
            subject: "agent: x".into(),
            findings: vec![
                Finding::new(&MUST, Outcome::Pass, vec![line()]),
                Finding::new(&MUST, Outcome::Fail("broken".into()), vec![line()]),
            ],
        };
        assert!(report.findings[0].transcript.is_empty());
        let text = report.to_text();
        assert!(text.contains("FAIL MUST       t.must  must\n     broken\n     see: here\n"), "{text}");
        assert!(text.contains("c2a {}"), "{text}");
        assert!(text.ends_with("FAILED: 1 passed, 1 failed, 0 skipped\n"), "{text}");
        let json = report.to_json();
        assert_eq!(json["passed"], false);
        assert_eq!(json["findings"][1]["transcript"][0]["dir"], "c2a");
    }
}
