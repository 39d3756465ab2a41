//! What `acp check` reports: requirements, their outcomes, and the wire transcript of each
//! failure, as text for people, JSON for scripts ([`json`]) or JUnit XML for CI systems
//! ([`junit`]).
//!
//! Every check names a [`Requirement`]: a stable id (`agent.init.answer`), a [`Level`], a
//! one-line title and the spec text it comes from. A run yields one [`Finding`] per
//! requirement checked, with a verdict: pass, fail, skip (not applicable, e.g. a capability
//! the peer did not advertise) or blocked (the run could not reach it: the agent requires
//! authentication first, could not be started, or does not speak the version checked; the
//! report's [`Gate`] says which). The exit status ([`Report::exit_code`]) is 1 when a `MUST`
//! failed (a capability-dependent requirement counts as a `MUST` of a peer that advertised
//! the capability), else 3 when the run was gated, else 0.

pub mod json;
pub mod junit;

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
    /// Every level, most binding first.
    pub const ALL: [Level; 4] = [Level::Must, Level::Capability, Level::Should, Level::Info];

    /// The level as the report prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Capability => "CAPABILITY",
            Level::Should => "SHOULD",
            Level::Info => "INFO",
        }
    }

    /// Whether a failure at this level fails the run.
    pub fn binding(self) -> bool {
        matches!(self, Level::Must | Level::Capability)
    }
}

/// One requirement a peer is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement {
    /// A stable, dotted id (`agent.cancel.mid-turn`). Ids are public: they never change.
    pub id: &'static str,
    /// How binding it is.
    pub level: Level,
    /// What the peer must do, in one line.
    pub title: &'static str,
    /// Where the requirement comes from: a spec page and section, or the JSON-RPC 2.0 spec.
    pub cite: &'static str,
}

pub use crate::wire_dir::Dir;

/// `req!(NAME, "dotted.id", Must, "title", "cite")`: a requirement as a `static` of the
/// requirement lists (`check/*/requirements.rs`), one line of data each.
macro_rules! req {
    ($name:ident, $id:literal, $level:ident, $title:literal, $cite:literal) => {
        pub(crate) static $name: Requirement =
            Requirement { id: $id, level: Level::$level, title: $title, cite: $cite };
    };
}
pub(crate) use req;

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
    /// Not applicable; why (e.g. a capability the peer did not advertise).
    Skip(String),
    /// Not reached: the run was stopped before it by a [`Gate`]; why.
    Blocked(String),
}

impl Outcome {
    /// `pass`, `fail`, `skip` or `blocked`: the verdict as the JSON report names it.
    pub fn verdict(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail(_) => "fail",
            Outcome::Skip(_) => "skip",
            Outcome::Blocked(_) => "blocked",
        }
    }

    /// Why it failed, was skipped or blocked (none for a pass).
    pub fn reason(&self) -> Option<&str> {
        match self {
            Outcome::Pass => None,
            Outcome::Fail(why) | Outcome::Skip(why) | Outcome::Blocked(why) => Some(why),
        }
    }
}

/// One requirement checked, with the wire transcript of its scenario (kept for failures).
#[derive(Debug, Clone)]
pub struct Finding {
    /// What was checked.
    pub requirement: &'static Requirement,
    /// What happened.
    pub outcome: Outcome,
    /// The scenario's frames, both ways (empty unless it failed).
    pub transcript: Vec<WireLine>,
}

impl Finding {
    /// A finding; the transcript is dropped unless the requirement failed.
    pub fn new(requirement: &'static Requirement, outcome: Outcome, transcript: Vec<WireLine>) -> Finding {
        let transcript = if matches!(outcome, Outcome::Fail(_)) { transcript } else { Vec::new() };
        Finding { requirement, outcome, transcript }
    }
}

/// An authentication method an agent offers (`initialize`'s `authMethods`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthMethod {
    /// Its id, what `--auth` takes.
    pub id: String,
    /// Its name, for people.
    pub name: String,
    /// Its type: `agent` (the default), `terminal`, `env_var`, or what the agent wrote.
    pub kind: String,
}

/// Why a run could not check everything: the requirements it could not reach are blocked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// The agent requires authentication before it opens a session (it answered
    /// `auth_required`, `-32000`): conformant, but nothing past the handshake can be checked
    /// until a method is used (`--auth METHOD_ID`).
    Auth {
        /// What it offers.
        methods: Vec<AuthMethod>,
        /// What happened, in one sentence (the answer, or the `authenticate` that failed).
        detail: String,
    },
    /// The peer could not be started, or ended before it wrote anything.
    NotStarted(String),
    /// The peer does not speak the protocol version checked (`--protocol 2` against an agent
    /// that negotiated 1).
    Version(String),
}

impl Gate {
    /// `auth`, `not-started` or `version`.
    pub fn kind(&self) -> &'static str {
        match self {
            Gate::Auth { .. } => "auth",
            Gate::NotStarted(_) => "not-started",
            Gate::Version(_) => "version",
        }
    }

    /// Why a requirement it blocked was not reached, in short.
    pub fn reason(&self) -> String {
        match self {
            Gate::Auth { detail, .. } => format!("gated by authentication: {detail}"),
            other => other.describe(),
        }
    }

    /// The gate in one sentence, for people.
    pub fn describe(&self) -> String {
        match self {
            Gate::Auth { methods, detail } => {
                let offered: Vec<String> = methods
                    .iter()
                    .map(|m| if m.name.is_empty() { m.id.clone() } else { format!("{} ({})", m.id, m.name) })
                    .collect();
                let offered = if offered.is_empty() { "no method".to_owned() } else { offered.join(", ") };
                format!(
                    "the agent requires authentication before a session ({detail}); it offers: {offered}. \
                     Run again with --auth METHOD_ID, or give the agent its credentials in its environment"
                )
            }
            Gate::NotStarted(why) => format!("the command could not be started: {why}"),
            Gate::Version(why) => format!("the peer does not speak the version checked: {why}"),
        }
    }
}

/// How many findings have each verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Passed.
    pub pass: usize,
    /// Failed.
    pub fail: usize,
    /// Skipped (not applicable).
    pub skip: usize,
    /// Blocked by a gate.
    pub blocked: usize,
}

impl Counts {
    fn add(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Pass => self.pass += 1,
            Outcome::Fail(_) => self.fail += 1,
            Outcome::Skip(_) => self.skip += 1,
            Outcome::Blocked(_) => self.blocked += 1,
        }
    }
}

/// Every finding of one `acp check` run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// What was checked (`agent: node agent.mjs`).
    pub subject: String,
    /// `agent` or `client`.
    pub role: &'static str,
    /// The protocol version checked (1 or 2).
    pub protocol: u8,
    /// The findings in the order they were checked.
    pub findings: Vec<Finding>,
    /// What stopped the run short, if anything did.
    pub gate: Option<Gate>,
}

impl Report {
    /// An empty report of `role` (`agent`, `client`) at `protocol`.
    pub fn new(role: &'static str, protocol: u8, subject: String) -> Report {
        Report { subject, role, protocol, findings: Vec::new(), gate: None }
    }

    /// True when no `MUST` requirement failed, nor a capability-dependent one (which is
    /// checked only when the capability was advertised).
    pub fn passed(&self) -> bool {
        !self.findings.iter().any(|f| f.requirement.level.binding() && matches!(f.outcome, Outcome::Fail(_)))
    }

    /// The exit status: 1 when a `MUST` failed, else 3 when a [`Gate`] stopped the run, else 0.
    pub fn exit_code(&self) -> u8 {
        match (self.passed(), &self.gate) {
            (false, _) => 1,
            (true, Some(_)) => 3,
            (true, None) => 0,
        }
    }

    /// `passed`, `failed`, `gated` (auth or version) or `not-started`.
    pub fn verdict(&self) -> &'static str {
        match (self.passed(), &self.gate) {
            (false, _) => "failed",
            (true, Some(Gate::NotStarted(_))) => "not-started",
            (true, Some(_)) => "gated",
            (true, None) => "passed",
        }
    }

    /// How many findings have each verdict.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for finding in &self.findings {
            counts.add(&finding.outcome);
        }
        counts
    }

    /// The counts of the findings at `level`.
    pub fn counts_at(&self, level: Level) -> Counts {
        let mut counts = Counts::default();
        for finding in self.findings.iter().filter(|f| f.requirement.level == level) {
            counts.add(&finding.outcome);
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
            let mark = match &finding.outcome {
                Outcome::Pass => "pass",
                Outcome::Fail(_) => "FAIL",
                Outcome::Skip(_) => "skip",
                Outcome::Blocked(_) => "gate",
            };
            let _ = writeln!(out, "{mark} {:<10} {}  {}", req.level.as_str(), req.id, req.title);
            if let Some(why) = finding.outcome.reason() {
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
        let counts = self.counts();
        let verdict = match self.verdict() {
            "failed" => "FAILED",
            "passed" => "PASSED",
            "not-started" => "NOT STARTED",
            _ => "GATED",
        };
        if let Some(gate) = &self.gate {
            let _ = writeln!(out, "{verdict}: {}", clean_line(&gate.describe()));
        }
        let blocked = if counts.blocked > 0 { format!(", {} blocked", counts.blocked) } else { String::new() };
        let _ = writeln!(
            out,
            "{verdict}: {} passed, {} failed, {} skipped{blocked}",
            counts.pass, counts.fail, counts.skip
        );
        out
    }
}

#[cfg(test)]
mod tests;
