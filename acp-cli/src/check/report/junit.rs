//! `--format junit`: the report as JUnit XML, the format CI systems show as test results. One
//! `<testsuite>` per run, one `<testcase>` per requirement (`classname` the id's first two
//! parts, `name` the id and its level):
//!
//! | verdict | in JUnit |
//! |---|---|
//! | pass | a plain `<testcase>` |
//! | fail of a MUST (or an advertised capability) | `<failure>` with the reason, the transcript as its text |
//! | fail of a SHOULD or INFO | `<skipped message="not binding (SHOULD): …">`: reported, not failing |
//! | skip | `<skipped message="…">` |
//! | blocked | `<skipped message="blocked: …">`; the gate is also the suite's `<system-out>` |
//!
//! Everything the peer wrote is made inert (`sanitize::clean_line`) and XML-escaped.

use std::fmt::Write as _;

use super::{Finding, Outcome, Report};
use crate::sanitize::clean_line;

impl Report {
    /// The report as a JUnit XML document (see the [module docs](self)).
    pub fn to_junit(&self) -> String {
        let counts = self.counts();
        let failures = self.findings.iter().filter(|f| is_failure(f)).count();
        let skipped = self.findings.len() - counts.pass - failures;
        let suite = format!("acp check {} (protocol {})", self.subject, self.protocol);
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites name=\"acp check\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">",
            self.findings.len()
        );
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">",
            attr(&suite),
            self.findings.len()
        );
        for finding in &self.findings {
            testcase(&mut out, finding);
        }
        if let Some(gate) = &self.gate {
            let _ = writeln!(out, "    <system-out>{}</system-out>", text(&gate.describe()));
        }
        out.push_str("  </testsuite>\n</testsuites>\n");
        out
    }
}

fn is_failure(finding: &Finding) -> bool {
    finding.requirement.level.binding() && matches!(finding.outcome, Outcome::Fail(_))
}

fn testcase(out: &mut String, finding: &Finding) {
    let req = finding.requirement;
    let classname: Vec<&str> = req.id.splitn(3, '.').take(2).collect();
    let _ = write!(
        out,
        "    <testcase classname=\"{}\" name=\"{} [{}]\"",
        attr(&classname.join(".")),
        attr(req.id),
        req.level.as_str()
    );
    let level = req.level.as_str();
    match &finding.outcome {
        Outcome::Pass => out.push_str("/>\n"),
        Outcome::Fail(why) if is_failure(finding) => {
            let _ = writeln!(out, ">\n      <failure message=\"{}\" type=\"{level}\">", attr(why));
            let _ = writeln!(out, "see: {}", text(req.cite));
            for line in &finding.transcript {
                let at = line.at.as_secs_f64() * 1e3;
                let _ = writeln!(out, "{at:>8.1}ms {} {}", line.dir.as_str(), text(&line.line));
            }
            out.push_str("      </failure>\n    </testcase>\n");
        }
        Outcome::Fail(why) => skipped(out, &format!("not binding ({level}): {why}")),
        Outcome::Skip(why) => skipped(out, why),
        Outcome::Blocked(why) => skipped(out, &format!("blocked: {why}")),
    }
}

fn skipped(out: &mut String, why: &str) {
    let _ = writeln!(out, ">\n      <skipped message=\"{}\"/>\n    </testcase>", attr(why));
}

/// Peer text as XML character data: inert (no control characters), `&` and `<` escaped.
fn text(raw: &str) -> String {
    let clean = clean_line(raw);
    let mut out = String::with_capacity(clean.len());
    for c in clean.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // Not characters of XML 1.0 (JSON can carry them; clean_line keeps them).
            '\u{fffe}' | '\u{ffff}' => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            _ => out.push(c),
        }
    }
    out
}

/// Peer text as an XML attribute value (double-quoted).
fn attr(raw: &str) -> String {
    text(raw).replace('"', "&quot;")
}
