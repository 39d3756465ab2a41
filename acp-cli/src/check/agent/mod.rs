//! `acp check agent -- AGENT_CMD...`: drives an agent through scripted scenarios and judges
//! what it does against the ACP v1 docs and JSON-RPC 2.0.
//!
//! Each scenario spawns a fresh agent process (supervised by [`acp_runtime::process`], so
//! nothing is left behind), speaks raw newline-delimited JSON-RPC to it as a small client
//! (see `peer`), and yields one outcome per requirement it checks (see `requirements` for the
//! list, with levels and citations). A failure keeps the scenario's wire transcript.

mod cancel;
mod handshake;
mod methods;
mod peer;
mod requirements;
mod rpc;
mod turn;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::report::{Finding, Outcome, Report, Requirement, WireLine};
use peer::Peer;

/// What `acp check agent` runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentCheckConfig {
    /// The agent's command line.
    pub command: Vec<OsString>,
    /// How long any one answer may take.
    pub timeout: Duration,
    /// How much longer the first answer of each agent process may take (its start).
    pub startup: Duration,
    /// Only the requirements whose id starts with this.
    pub only: Option<String>,
    /// How many scenarios run at once (each with its own agent process).
    pub jobs: usize,
}

impl AgentCheckConfig {
    /// Checks `command` with a 10 s timeout (60 s more for the agent to start).
    pub fn new(command: Vec<OsString>) -> AgentCheckConfig {
        AgentCheckConfig {
            command,
            timeout: Duration::from_secs(10),
            startup: Duration::from_secs(60),
            only: None,
            jobs: 4,
        }
    }
}

/// What a scenario runs with.
#[derive(Debug)]
pub(crate) struct Ctx {
    command: Vec<OsString>,
    timeout: Duration,
    startup: Duration,
    /// The file offered to `fs/read_text_file`: its absolute path and text.
    file: (String, String),
}

/// What a scenario found: one outcome per requirement.
type Checks = Vec<(&'static Requirement, Outcome)>;

/// A scenario: the requirements it checks, and how.
struct Scenario {
    checks: &'static [&'static Requirement],
    run: fn(&mut Peer) -> Checks,
}

const SCENARIOS: &[Scenario] = &[
    handshake::HANDSHAKE,
    handshake::FUTURE_VERSION,
    handshake::BEFORE_INITIALIZE,
    turn::FULL_TURN,
    turn::CAPABILITY_NEGATIVES,
    turn::CONCURRENCY,
    cancel::MID_TURN,
    cancel::DURING_PERMISSION,
    cancel::CANCEL_REQUEST,
    rpc::ROBUSTNESS,
    rpc::EOF,
    methods::ADVERTISED,
];

/// Runs every scenario (those with a requirement matching `only`) against the agent.
pub fn run(config: &AgentCheckConfig) -> Report {
    let dir = scratch_dir();
    let path = dir.join("acp-check-notes.txt");
    let text = "acp check was here\n".to_owned();
    let _ = std::fs::write(&path, &text);
    let ctx = Ctx {
        command: config.command.clone(),
        timeout: config.timeout,
        startup: config.startup,
        file: (path.display().to_string(), text),
    };
    let wanted = |req: &Requirement| config.only.as_deref().is_none_or(|prefix| req.id.starts_with(prefix));
    let subject = config.command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let mut report = Report { subject: format!("agent: {subject}"), findings: Vec::new() };
    let mut dirty_stdout: Option<(usize, Vec<WireLine>)> = None;
    let scenarios: Vec<&Scenario> = SCENARIOS.iter().filter(|s| s.checks.iter().any(|r| wanted(r))).collect();
    for (checks, transcript, not_json) in run_all(&ctx, &scenarios, config.jobs.max(1)) {
        if not_json > 0 && dirty_stdout.is_none() {
            dirty_stdout = Some((not_json, transcript.clone()));
        }
        for (req, outcome) in checks.into_iter().filter(|(r, _)| wanted(r)) {
            report.findings.push(Finding::new(req, outcome, transcript.clone()));
        }
    }
    if wanted(&requirements::CLEAN_STDOUT) {
        let finding = match dirty_stdout {
            None => Finding::new(&requirements::CLEAN_STDOUT, Outcome::Pass, Vec::new()),
            Some((n, transcript)) => {
                let why = format!("{n} line(s) of stdout were not JSON (first scenario with one shown)");
                Finding::new(&requirements::CLEAN_STDOUT, Outcome::Fail(why), transcript)
            }
        };
        report.findings.push(finding);
    }
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(&dir);
    report
}

/// Runs `scenarios`, `jobs` at a time; their results in order.
fn run_all(ctx: &Ctx, scenarios: &[&Scenario], jobs: usize) -> Vec<(Checks, Vec<WireLine>, usize)> {
    let mut results = Vec::with_capacity(scenarios.len());
    for batch in scenarios.chunks(jobs) {
        std::thread::scope(|scope| {
            let running: Vec<_> = batch.iter().map(|s| scope.spawn(|| run_scenario(ctx, s))).collect();
            for (handle, scenario) in running.into_iter().zip(batch) {
                let result = handle.join().unwrap_or_else(|_| {
                    let why = Outcome::Fail("the check itself failed (a bug of acp check)".to_owned());
                    (scenario.checks.iter().map(|r| (*r, why.clone())).collect(), Vec::new(), 0)
                });
                results.push(result);
            }
        });
    }
    results
}

/// Spawns a fresh agent for `scenario` and runs it; its checks, transcript and how many
/// stdout lines were not JSON.
fn run_scenario(ctx: &Ctx, scenario: &Scenario) -> (Checks, Vec<WireLine>, usize) {
    match Peer::spawn(ctx) {
        Ok(mut peer) => {
            let checks = (scenario.run)(&mut peer);
            let transcript = peer.transcript();
            let not_json = peer.not_json;
            drop(peer);
            (checks, transcript, not_json)
        }
        Err(e) => {
            let why = format!("cannot start the agent: {e}");
            (scenario.checks.iter().map(|r| (*r, Outcome::Fail(why.clone()))).collect(), Vec::new(), 0)
        }
    }
}

/// A fresh directory for the file the checks offer to read.
fn scratch_dir() -> PathBuf {
    let base = std::env::temp_dir().join(format!("acp-check-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&base);
    base.canonicalize().unwrap_or(base)
}

/// Every requirement of `reqs` skipped for `why` (a scenario's setup failed).
fn skip_all(reqs: &[&'static Requirement], why: &str) -> Checks {
    reqs.iter().map(|r| (*r, Outcome::Skip(format!("setup failed: {why}")))).collect()
}

/// Pass when `ok`, otherwise fail with `why`.
fn judge(ok: bool, why: impl FnOnce() -> String) -> Outcome {
    if ok { Outcome::Pass } else { Outcome::Fail(why()) }
}
