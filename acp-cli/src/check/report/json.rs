//! `--format json`: the report as one JSON document, version [`SCHEMA_VERSION`] of the schema
//! the README documents ("The JSON report"). Fields are only ever added within a version;
//! a change that removes or renames one bumps it.
//!
//! ```json
//! {
//!   "schema": "acp-check-report", "version": 1,
//!   "role": "agent", "protocol": 1, "subject": "agent: acp agent",
//!   "verdict": "passed" | "failed" | "gated" | "not-started", "exit": 0 | 1 | 3,
//!   "passed": true,
//!   "gate": null | {"kind": "auth" | "not-started" | "version", "detail": "…",
//!                   "methods": [{"id": "…", "name": "…", "type": "agent"}]},
//!   "counts": {"pass": 0, "fail": 0, "skip": 0, "blocked": 0},
//!   "levels": {"MUST": {"pass": 0, "fail": 0, "skip": 0, "blocked": 0}, "CAPABILITY": …, "SHOULD": …, "INFO": …},
//!   "findings": [{"id": "agent.init.answer", "level": "MUST", "title": "…", "cite": "…",
//!                 "verdict": "pass" | "fail" | "skip" | "blocked", "outcome": (= verdict),
//!                 "reason": null | "…", "transcript": [{"dir": "c2a", "t_ms": 0.4, "line": "…"}]}]
//! }
//! ```

use serde_json::{Value, json};

use super::{Counts, Finding, Gate, Level, Report};

/// The name in the document's `schema` field.
pub const SCHEMA: &str = "acp-check-report";
/// The version of the document's shape.
pub const SCHEMA_VERSION: u64 = 1;

impl Report {
    /// The report for scripts: one JSON document (see the [module docs](self)). Strings are
    /// exactly what the peer sent (JSON escapes them; nothing is sanitized away).
    pub fn to_json(&self) -> Value {
        let findings: Vec<Value> = self.findings.iter().map(finding_json).collect();
        let levels: serde_json::Map<String, Value> =
            Level::ALL.iter().map(|l| (l.as_str().to_owned(), counts_json(self.counts_at(*l)))).collect();
        json!({
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            "role": self.role,
            "protocol": self.protocol,
            "subject": self.subject,
            "verdict": self.verdict(),
            "exit": self.exit_code(),
            "passed": self.passed(),
            "gate": self.gate.as_ref().map(gate_json),
            "counts": counts_json(self.counts()),
            "levels": levels,
            "findings": findings,
        })
    }
}

fn counts_json(counts: Counts) -> Value {
    json!({ "pass": counts.pass, "fail": counts.fail, "skip": counts.skip, "blocked": counts.blocked })
}

fn gate_json(gate: &Gate) -> Value {
    let mut value = json!({ "kind": gate.kind(), "detail": gate.describe() });
    if let Gate::Auth { methods, .. } = gate {
        let methods: Vec<Value> =
            methods.iter().map(|m| json!({ "id": m.id, "name": m.name, "type": m.kind })).collect();
        value["methods"] = Value::Array(methods);
    }
    value
}

fn finding_json(finding: &Finding) -> Value {
    let req = finding.requirement;
    let transcript: Vec<Value> = finding
        .transcript
        .iter()
        .map(|l| json!({ "dir": l.dir.as_str(), "t_ms": l.at.as_secs_f64() * 1e3, "line": l.line }))
        .collect();
    let verdict = finding.outcome.verdict();
    json!({
        "id": req.id,
        "level": req.level.as_str(),
        "title": req.title,
        "cite": req.cite,
        "verdict": verdict,
        "outcome": verdict,
        "reason": finding.outcome.reason(),
        "transcript": transcript,
    })
}
