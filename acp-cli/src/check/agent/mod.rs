//! `acp check agent -- AGENT_CMD...`: drives an agent through scripted scenarios and judges
//! what it does against the ACP v1 docs and JSON-RPC 2.0.
//!
//! Each scenario spawns a fresh agent process (supervised by [`acp_runtime::process`], so
//! nothing is left behind: see `children`, also for a check ended by a signal), speaks raw newline-delimited JSON-RPC to it as a small client
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
use std::sync::Arc;
use std::time::Duration;

use super::children::Children;
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
    /// The check is the process's own (the `acp` command; default off): the agents start
    /// through `acp __exec-child`, so that the kernel kills them if the check dies, and
    /// `SIGINT`, `SIGTERM` and `SIGHUP` end every agent running, then the process (128 + the
    /// signal).
    pub own_process: bool,
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
            own_process: false,
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
    /// What the check started, ended with it.
    children: Arc<Children>,
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
    let children = Children::new(config.own_process);
    let _signals = if config.own_process { children.end_on_signals("acp check agent") } else { None };
    let dir = scratch_dir();
    children.scratch(dir.clone());
    let path = dir.join("acp-check-notes.txt");
    let text = "acp check was here\n".to_owned();
    let _ = std::fs::write(&path, &text);
    let ctx = Ctx {
        command: config.command.clone(),
        timeout: config.timeout,
        startup: config.startup,
        file: (path.display().to_string(), text),
        children: children.clone(),
    };
    let wanted = |req: &Requirement| config.only.as_deref().is_none_or(|prefix| req.id.starts_with(prefix));
    let subject = config.command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let mut report = Report { subject: format!("agent: {subject}"), findings: Vec::new() };
    let scenarios: Vec<&Scenario> = SCENARIOS.iter().filter(|s| s.checks.iter().any(|r| wanted(r))).collect();
    let ran = run_all(&ctx, &scenarios, config.jobs.max(1));
    children.hold_if_ending();
    for scenario in &ran {
        for (req, outcome) in scenario.checks.iter().filter(|(r, _)| wanted(r)) {
            let outcome = across_scenarios(req, outcome, &ran);
            let failed = matches!(outcome, Outcome::Fail(_));
            let transcript = if failed { scenario.transcript.clone() } else { Vec::new() };
            report.findings.push(Finding::new(req, outcome, transcript));
        }
    }
    if wanted(&requirements::CLEAN_STDOUT) {
        report.findings.push(clean_stdout(&ran));
    }
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(&dir);
    children.scratch_gone(&dir);
    report
}

/// What one scenario found, with what the whole run judges across scenarios.
struct Ran {
    checks: Checks,
    transcript: Vec<WireLine>,
    /// Lines of stdout that were not JSON.
    not_json: usize,
    /// `fs/*` and `terminal/*` calls the client had not advertised.
    violations: Vec<String>,
}

/// The capability checks also fail on a call that was not advertised in any other scenario
/// (terminals and file writes are never advertised).
fn across_scenarios(req: &'static Requirement, outcome: &Outcome, ran: &[Ran]) -> Outcome {
    let prefix = match req.id {
        id if id == requirements::CAP_FS.id => "fs/",
        id if id == requirements::CAP_TERMINAL.id => "terminal/",
        _ => return outcome.clone(),
    };
    if matches!(outcome, Outcome::Fail(_)) {
        return outcome.clone();
    }
    let calls: Vec<&String> = ran.iter().flat_map(|r| &r.violations).filter(|m| m.starts_with(prefix)).collect();
    if calls.is_empty() {
        outcome.clone()
    } else {
        Outcome::Fail(format!("called {calls:?} unadvertised (answered -32601)"))
    }
}

/// `agent.stdio.clean-stdout`, judged over every scenario.
fn clean_stdout(ran: &[Ran]) -> Finding {
    match ran.iter().find(|r| r.not_json > 0) {
        None => Finding::new(&requirements::CLEAN_STDOUT, Outcome::Pass, Vec::new()),
        Some(first) => {
            let total: usize = ran.iter().map(|r| r.not_json).sum();
            let why = format!("{total} line(s) of stdout were not JSON (the first scenario with one shown)");
            Finding::new(&requirements::CLEAN_STDOUT, Outcome::Fail(why), first.transcript.clone())
        }
    }
}

/// Runs `scenarios`, `jobs` at a time; their results in order.
fn run_all(ctx: &Ctx, scenarios: &[&Scenario], jobs: usize) -> Vec<Ran> {
    let mut results = Vec::with_capacity(scenarios.len());
    for batch in scenarios.chunks(jobs) {
        std::thread::scope(|scope| {
            let running: Vec<_> = batch.iter().map(|s| scope.spawn(|| run_scenario(ctx, s))).collect();
            for (handle, scenario) in running.into_iter().zip(batch) {
                let result =
                    handle.join().unwrap_or_else(|_| failed(scenario, "the check itself failed (a bug of acp check)"));
                results.push(result);
            }
        });
    }
    results
}

/// Every requirement of `scenario` failed for `why`.
fn failed(scenario: &Scenario, why: &str) -> Ran {
    let checks = scenario.checks.iter().map(|r| (*r, Outcome::Fail(why.to_owned()))).collect();
    Ran { checks, transcript: Vec::new(), not_json: 0, violations: Vec::new() }
}

/// Spawns a fresh agent for `scenario` and runs it.
fn run_scenario(ctx: &Ctx, scenario: &Scenario) -> Ran {
    match Peer::spawn(ctx) {
        Ok(mut peer) => {
            let checks = (scenario.run)(&mut peer);
            let transcript = peer.transcript();
            let (not_json, violations) = (peer.not_json, std::mem::take(&mut peer.violations));
            drop(peer);
            Ran { checks, transcript, not_json, violations }
        }
        Err(e) => failed(scenario, &format!("cannot start the agent: {e}")),
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
