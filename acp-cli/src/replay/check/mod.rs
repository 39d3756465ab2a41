//! `acp replay --check FILE`: every protocol violation in a transcript, with its line number.
//!
//! Two kinds of judges run over the recorded lines, in order, on a virtual clock (each
//! line's `t_ms`):
//!
//! * the wire-level invariants of the two-peer simulation
//!   ([`acp_proto::wire_check::WireCheck`], one per peer): frames that are not JSON-RPC,
//!   responses to ids never read (or answered twice), updates for sessions never announced,
//!   `fs/*` and `terminal/*` requests the client did not advertise, requests never answered;
//! * two `acp_proto` machines, an agent-role one fed the client's lines and a client-role one
//!   fed the agent's ([`mirror`]): requests before `initialize`, methods a role does not handle
//!   or did not advertise, invalid params, a prompt while a turn runs, a permission answer
//!   naming an option that was not offered.
//!
//! A line the wire checks already faulted is not judged again by the machines (they would
//! only restate it). Lines recorded truncated are not checked.

mod mirror;

use std::collections::HashMap;

use acp_blocking::acp_proto::jsonrpc::{Incoming, RequestId, parse};
use acp_blocking::acp_proto::wire_check::WireCheck;
use acp_blocking::acp_proto::{Instant, Side};

use super::read::{Kind, Record};
use crate::record::transcript::Dir;
use mirror::Mirror;

/// A finding: a violation, or a note that does not fail the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The transcript's line number (from 1).
    pub(crate) lineno: usize,
    /// Which way the line went, if it is a recorded line.
    pub(crate) dir: Option<Dir>,
    pub(crate) message: String,
    pub(crate) violation: bool,
}

/// The judges and what they remember.
struct Check {
    /// `wire[0]` watches the client (emits c2a), `wire[1]` the agent (emits a2c).
    wire: [WireCheck; 2],
    /// `machines[0]` plays the client, `machines[1]` the agent.
    machines: [Mirror; 2],
    /// Where each request was recorded: (the direction it went, its id) → line number.
    request_lines: HashMap<(usize, RequestId), usize>,
    findings: Vec<Finding>,
    lines: usize,
}

/// Judges `records`; the findings in line order.
pub(crate) fn check(records: &[Record]) -> (Vec<Finding>, usize) {
    let mut check = Check {
        wire: [WireCheck::new(Side::Client, usize::MAX / 2), WireCheck::new(Side::Agent, usize::MAX / 2)],
        machines: [Mirror::new(Side::Client), Mirror::new(Side::Agent)],
        request_lines: HashMap::new(),
        findings: Vec::new(),
        lines: 0,
    };
    for record in records {
        let now = Instant::from_millis(record.t_ms);
        match &record.kind {
            Kind::Line { dir, truncated: true, .. } => {
                check.note(record.lineno, Some(*dir), "recorded truncated: not checked")
            }
            Kind::Line { dir, text, .. } => check.line(record.lineno, now, *dir, text),
            Kind::Dropped { dir, n } => {
                check.note(record.lineno, Some(*dir), &format!("{n} lines were not recorded here: not checked"))
            }
            Kind::Bad(why) => check.note(record.lineno, None, &format!("not a transcript record ({why})")),
            Kind::Header { .. } | Kind::Exit(_) => {}
        }
    }
    check.finish();
    let mut findings = check.findings;
    findings.sort_by_key(|f| f.lineno);
    (findings, check.lines)
}

/// Index of the sender of a line going `dir` (0: client, 1: agent).
fn sender(dir: Dir) -> usize {
    dir.index()
}

fn name(index: usize) -> &'static str {
    ["client", "agent"][index]
}

impl Check {
    fn note(&mut self, lineno: usize, dir: Option<Dir>, message: &str) {
        self.findings.push(Finding { lineno, dir, message: message.to_owned(), violation: false });
    }

    fn violation(&mut self, lineno: usize, dir: Dir, message: String) {
        self.findings.push(Finding { lineno, dir: Some(dir), message, violation: true });
    }

    fn line(&mut self, lineno: usize, now: Instant, dir: Dir, text: &str) {
        self.lines += 1;
        let (from, to) = (sender(dir), 1 - sender(dir));
        if let Incoming::Request { id, .. } = parse(text.as_bytes()) {
            self.request_lines.insert((from, id), lineno);
        }
        let framed = format!("{text}\n");
        let wire = self.wire[from].emitted(framed.as_bytes(), &mut |_| {});
        self.wire[to].consumed(framed.as_bytes());
        let faulted = !wire.is_empty();
        for v in wire {
            self.violation(lineno, dir, format!("{}: {v}", name(from)));
        }
        // The sender's own rules first; the receiver's refusal of the same line would restate it.
        let mut verdicts = self.machines[from].own(now, text);
        let refusals = self.machines[to].input(now, text);
        if verdicts.is_empty() {
            verdicts = refusals;
        }
        if !faulted {
            for v in verdicts {
                self.violation(lineno, dir, format!("{}: {v}", name(from)));
            }
        }
    }

    /// The end of the transcript: every request still unanswered.
    fn finish(&mut self) {
        for (to, wire) in self.wire.iter_mut().enumerate() {
            wire.consumed_eof();
            let from = 1 - to;
            let open: Vec<(RequestId, String)> =
                wire.open_requests().map(|(id, m)| (id.clone(), m.to_owned())).collect();
            for (id, method) in open {
                let lineno = self.request_lines.get(&(from, id.clone())).copied().unwrap_or(0);
                let what = if method == "session/prompt" { "a prompt still open at the end" } else { "never answered" };
                let dir = if from == 0 { Dir::C2a } else { Dir::A2c };
                let message = format!("{}: {method} (id {id}): {what}", name(to));
                self.findings.push(Finding { lineno, dir: Some(dir), message, violation: true });
            }
        }
    }
}

/// The report: one line per finding, then the verdict.
pub(crate) fn report(findings: &[Finding], lines: usize) -> String {
    let mut out = String::new();
    for f in findings {
        let dir = f.dir.map(|d| format!(" ({})", d.as_str())).unwrap_or_default();
        let kind = if f.violation { "" } else { "note: " };
        out.push_str(&format!("line {}{dir}: {kind}{}\n", f.lineno, f.message));
    }
    let violations = findings.iter().filter(|f| f.violation).count();
    if violations == 0 {
        out.push_str(&format!("no violations in {lines} lines\n"));
    } else {
        out.push_str(&format!("{violations} violation{} in {lines} lines\n", if violations == 1 { "" } else { "s" }));
    }
    out
}
