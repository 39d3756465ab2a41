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
//!
//! Memory stays bounded whatever the transcript: records are read one at a time, findings are
//! written as they are found (those about requests never answered once the transcript ended),
//! and the requests awaiting answers are tracked within the bounds of [`super::open`]: a line
//! whose requests would pass [`MAX_OPEN`] requests (or [`MAX_OPEN_BYTES`]) unanswered one way
//! is a violation and is not judged, and after one, a response that matches no tracked
//! request is noted and not judged (it may answer one that was not tracked). The machines'
//! own limits ([`mirror`]) are set at or above those bounds. [`WireCheck`] bounds what it
//! remembers of the rest (the ids answered in full, the sessions announced: see its module
//! docs, and the violations its caps report). What does grow is what the machines keep per
//! session announced (`acp_proto::connection`), a few dozen bytes each.

mod mirror;

use std::io::{self, Write};

use acp_blocking::acp_proto::jsonrpc::RequestId;
use acp_blocking::acp_proto::wire_check::WireCheck;
use acp_blocking::acp_proto::{Instant, Side};

use super::open::{LineIds, MAX_OPEN, MAX_OPEN_BYTES, OpenRequests};
use super::read::{Kind, Record};
use crate::record::transcript::Dir;
use crate::sanitize::clean_line;
use acp_blocking::acp_proto::role;
use mirror::Mirror;

/// What the check found, in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) violations: u64,
    pub(crate) lines: u64,
}

/// The judges and what they remember.
struct Check<'a> {
    /// `wire[0]` watches the client (emits c2a), `wire[1]` the agent (emits a2c).
    wire: [WireCheck; 2],
    /// The machines playing the client and the agent.
    client: Mirror<role::Client>,
    agent: Mirror<role::Agent>,
    /// The requests not answered yet, each with its line number.
    open: OpenRequests<usize>,
    out: &'a mut dyn Write,
    violations: u64,
    lines: u64,
}

/// Judges `records`, writing each finding to `out` as it is found (those about requests never
/// answered at the end, in line order), then the verdict.
pub(crate) fn check(records: impl Iterator<Item = Record>, out: &mut dyn Write) -> io::Result<Verdict> {
    let mut check = Check {
        wire: [WireCheck::new(Side::Client, usize::MAX / 2), WireCheck::new(Side::Agent, usize::MAX / 2)],
        client: Mirror::new(),
        agent: Mirror::new(),
        open: OpenRequests::default(),
        out,
        violations: 0,
        lines: 0,
    };
    for record in records {
        let now = Instant::from_millis(record.t_ms);
        match &record.kind {
            Kind::Line { dir, truncated: true, .. } => {
                check.note(record.lineno, Some(*dir), "recorded truncated: not checked")?
            }
            Kind::Line { dir, text, .. } => check.line(record.lineno, now, *dir, text)?,
            Kind::Dropped { dir, n } => {
                check.note(record.lineno, Some(*dir), &format!("{n} lines were not recorded here: not checked"))?
            }
            Kind::Bad(why) => check.note(record.lineno, None, &format!("not a transcript record ({why})"))?,
            Kind::Header { .. } | Kind::Exit(_) => {}
        }
    }
    check.finish()?;
    let verdict = Verdict { violations: check.violations, lines: check.lines };
    let Verdict { violations, lines } = verdict;
    if violations == 0 {
        writeln!(check.out, "no violations in {lines} lines")?;
    } else {
        writeln!(check.out, "{violations} violation{} in {lines} lines", if violations == 1 { "" } else { "s" })?;
    }
    Ok(verdict)
}

/// Index of the sender of a line going `dir` (0: client, 1: agent).
fn sender(dir: Dir) -> usize {
    dir.index()
}

fn name(index: usize) -> &'static str {
    ["client", "agent"][index]
}

impl Check<'_> {
    /// One finding: `line N (dir): [note: ]message`, the message made inert.
    fn write(&mut self, lineno: usize, dir: Option<Dir>, violation: bool, message: &str) -> io::Result<()> {
        let dir = dir.map(|d| format!(" ({})", d.as_str())).unwrap_or_default();
        let kind = if violation { "" } else { "note: " };
        self.violations += u64::from(violation);
        writeln!(self.out, "line {lineno}{dir}: {kind}{}", clean_line(message))
    }

    fn note(&mut self, lineno: usize, dir: Option<Dir>, message: &str) -> io::Result<()> {
        self.write(lineno, dir, false, message)
    }

    fn violation(&mut self, lineno: usize, dir: Dir, message: &str) -> io::Result<()> {
        self.write(lineno, Some(dir), true, message)
    }

    fn line(&mut self, lineno: usize, now: Instant, dir: Dir, text: &str) -> io::Result<()> {
        self.lines += 1;
        let (from, to) = (sender(dir), 1 - sender(dir));
        if !self.track(lineno, dir, text)? {
            return Ok(());
        }
        let framed = format!("{text}\n");
        let wire = self.wire[from].emitted(framed.as_bytes(), &mut |_| {});
        self.wire[to].consumed(framed.as_bytes());
        let faulted = !wire.is_empty();
        for v in wire {
            self.violation(lineno, dir, &format!("{}: {v}", name(from)))?;
        }
        // The sender's own rules first; the receiver's refusal of the same line would restate it.
        let (mut verdicts, refusals) = match from {
            0 => (self.client.own(now, text), self.agent.input(now, text)),
            _ => (self.agent.own(now, text), self.client.input(now, text)),
        };
        if verdicts.is_empty() {
            verdicts = refusals;
        }
        if !faulted {
            for v in verdicts {
                self.violation(lineno, dir, &format!("{}: {v}", name(from)))?;
            }
        }
        Ok(())
    }

    /// Tracks the line's requests and answers; `false` when the line is not to be judged: its
    /// requests are over the bound (a violation), or it answers what may be a request that was
    /// not tracked (a note).
    fn track(&mut self, lineno: usize, dir: Dir, text: &str) -> io::Result<bool> {
        let ids = LineIds::of(text);
        if !self.open.fits(dir, &ids) {
            let open = self.open.len(dir);
            let message = format!(
                "{}: more than {MAX_OPEN} requests (or {} MiB of them) unanswered at once, with {open} open: the \
                 replay tracks no more (as a peer bounds its requests in flight); this line is not checked",
                name(sender(dir)),
                MAX_OPEN_BYTES >> 20
            );
            self.violation(lineno, dir, &message)?;
            return Ok(false);
        }
        let asker = dir.reverse();
        if self.open.untracked(asker) > 0 && ids.responses.iter().any(|id| !self.open.contains(asker, id)) {
            self.note(lineno, Some(dir), "answers a request that may not have been tracked: not checked")?;
            return Ok(false);
        }
        for id in &ids.responses {
            self.open.answer(asker, id);
        }
        for (id, bytes) in ids.requests {
            self.open.insert(dir, id, bytes, lineno);
        }
        Ok(true)
    }

    /// The end of the transcript: every request still unanswered, in line order.
    fn finish(&mut self) -> io::Result<()> {
        let mut lines = std::mem::take(&mut self.open);
        let mut found: Vec<(usize, Dir, String)> = Vec::new();
        for (to, wire) in self.wire.iter_mut().enumerate() {
            wire.consumed_eof();
            let from = 1 - to;
            let dir = if from == 0 { Dir::C2a } else { Dir::A2c };
            let open: Vec<(RequestId, String)> =
                wire.open_requests().map(|(id, m)| (id.clone(), m.to_owned())).collect();
            for (id, method) in open {
                let lineno = lines.answer(dir, &id).unwrap_or(0);
                let what = if method == "session/prompt" { "a prompt still open at the end" } else { "never answered" };
                found.push((lineno, dir, format!("{}: {method} (id {id}): {what}", name(to))));
            }
        }
        found.sort_by_key(|f| f.0);
        for (lineno, dir, message) in found {
            self.violation(lineno, dir, &message)?;
        }
        Ok(())
    }
}
