//! `acp check agent -- AGENT_CMD...`: drives an agent through scripted scenarios and judges
//! what it does against the ACP v1 docs and JSON-RPC 2.0 (with `--protocol 2`, the v2
//! scenarios of [`super::v2`]).
//!
//! Each scenario spawns a fresh agent process (supervised by [`acp_runtime::process`], so
//! nothing is left behind: see `children`, also for a check ended by a signal), speaks raw newline-delimited JSON-RPC to it as a small client
//! (see `peer`), and yields one outcome per requirement it checks (see `requirements` for the
//! list, with levels and citations). A failure keeps the scenario's wire transcript. Some
//! requirements are judged over every scenario's wire (see `wide`).
//!
//! A run can be gated: an agent that answers `session/new` with `auth_required` after
//! advertising `authMethods` is authenticated with `--auth METHOD_ID` or not at all, and then
//! what needs a session is blocked (not failed); an agent that cannot be started blocks
//! everything. The report carries the [`Gate`] and the exit status is 3.

mod cancel;
pub(crate) mod handshake;
mod methods;
pub(crate) mod peer;
mod reopen;
pub(crate) mod requirements;
mod rpc;
mod track;
mod turn;
mod wide;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::children::Children;
use super::report::{Finding, Gate, Outcome, Report, Requirement, WireLine};
use peer::{Peer, Setup};

/// What `acp check agent` runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentCheckConfig {
    /// The agent's command line.
    pub command: Vec<OsString>,
    /// Environment variables set for the agent (a named agent's `env`).
    pub env: Vec<(OsString, OsString)>,
    /// Where the agent process starts (a named agent's `cwd`; default: here).
    pub dir: Option<PathBuf>,
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
    /// `authenticate` with this method after `initialize` (`--auth`).
    pub auth: Option<String>,
}

impl AgentCheckConfig {
    /// Checks `command` with a 10 s timeout (60 s more for the agent to start).
    pub fn new(command: Vec<OsString>) -> AgentCheckConfig {
        AgentCheckConfig {
            command,
            env: Vec::new(),
            dir: None,
            timeout: Duration::from_secs(10),
            startup: Duration::from_secs(60),
            only: None,
            jobs: 4,
            own_process: false,
            auth: None,
        }
    }
}

/// What a scenario runs with.
#[derive(Debug)]
pub(crate) struct Ctx {
    command: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    dir: Option<PathBuf>,
    timeout: Duration,
    startup: Duration,
    auth: Option<String>,
    /// The file offered to `fs/read_text_file`: its absolute path and text.
    file: (String, String),
    /// What the check started, ended with it.
    children: Arc<Children>,
}

/// What a scenario found: one outcome per requirement.
pub(crate) type Checks = Vec<(&'static Requirement, Outcome)>;

/// A scenario: the requirements it checks, and how.
pub(crate) struct Scenario {
    pub(crate) checks: &'static [&'static Requirement],
    pub(crate) run: fn(&mut Peer) -> Checks,
}

const SCENARIOS: &[Scenario] = &[
    handshake::HANDSHAKE,
    handshake::FUTURE_VERSION,
    handshake::BEFORE_INITIALIZE,
    turn::FULL_TURN,
    turn::REFUSED,
    turn::CAPABILITY_NEGATIVES,
    turn::CONCURRENCY,
    cancel::MID_TURN,
    cancel::DURING_PERMISSION,
    cancel::CANCEL_REQUEST,
    rpc::ROBUSTNESS,
    rpc::EOF,
    methods::ADVERTISED,
    reopen::REOPEN,
];

/// Runs every scenario (those with a requirement matching `only`) against the agent.
pub fn run(config: &AgentCheckConfig) -> Report {
    run_scenarios(config, SCENARIOS, 1)
}

/// Runs `scenarios` (those with a requirement matching `only`) against the agent, checking
/// protocol version `protocol`; the run-wide requirements are judged too.
pub(crate) fn run_scenarios(config: &AgentCheckConfig, scenarios: &[Scenario], protocol: u8) -> Report {
    let children = Children::new(config.own_process);
    let _signals = if config.own_process { children.end_on_signals("acp check agent") } else { None };
    let dir = scratch_dir();
    children.scratch(dir.clone());
    let path = dir.join("acp-check-notes.txt");
    let text = "acp check was here\n".to_owned();
    let _ = std::fs::write(&path, &text);
    let ctx = Ctx {
        command: config.command.clone(),
        env: config.env.clone(),
        dir: config.dir.clone(),
        timeout: config.timeout,
        startup: config.startup,
        auth: config.auth.clone(),
        file: (path.display().to_string(), text),
        children: children.clone(),
    };
    let wanted = |req: &Requirement| config.only.as_deref().is_none_or(|prefix| req.id.starts_with(prefix));
    let subject = config.command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let mut report = Report::new("agent", protocol, format!("agent: {subject}"));
    // A requirement judged over every scenario needs them all.
    let all = wide::wide(protocol).iter().any(|r| wanted(r));
    let scenarios: Vec<&Scenario> = scenarios.iter().filter(|s| all || s.checks.iter().any(|r| wanted(r))).collect();
    let ran = run_all(&ctx, &scenarios, config.jobs.max(1));
    children.hold_if_ending();
    report.gate = first_gate(&ran);
    // An agent that could not start shows nothing in any scenario where it wrote nothing.
    let not_started = report.gate.as_ref().filter(|g| matches!(g, Gate::NotStarted(_))).map(Gate::reason);
    for scenario in &ran {
        for (req, outcome) in scenario.checks.iter().filter(|(r, _)| wanted(r)) {
            let outcome = match &not_started {
                Some(why) if !scenario.heard => Outcome::Blocked(why.clone()),
                _ => across_scenarios(req, outcome, &ran),
            };
            let failed = matches!(outcome, Outcome::Fail(_));
            let transcript = if failed { scenario.transcript.clone() } else { Vec::new() };
            report.findings.push(Finding::new(req, outcome, transcript));
        }
    }
    let judged = wide::judge(&ran, report.gate.as_ref(), protocol);
    report.findings.extend(judged.into_iter().filter(|f| wanted(f.requirement)));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(&dir);
    children.scratch_gone(&dir);
    report
}

/// The gate of the run: not started wins (nothing could run), then the version, then
/// authentication.
fn first_gate(ran: &[Ran]) -> Option<Gate> {
    let gates = || ran.iter().filter_map(|r| r.gate.as_ref());
    let first = gates().find(|g| g.kind() == "not-started").or_else(|| gates().find(|g| g.kind() == "version"));
    first.or_else(|| gates().next()).cloned()
}

/// What one scenario found, with what the whole run judges across scenarios.
pub(crate) struct Ran {
    checks: Checks,
    pub(crate) transcript: Vec<WireLine>,
    /// Lines of stdout that were not JSON.
    pub(crate) not_json: usize,
    /// `fs/*` and `terminal/*` calls the client had not advertised.
    violations: Vec<String>,
    /// What the wire told of sessions, turns and tool calls.
    pub(crate) track: track::Tracker,
    /// What stopped it short.
    pub(crate) gate: Option<Gate>,
    /// Whether the agent wrote anything.
    heard: bool,
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

/// Runs `scenarios`, `jobs` at a time; their results in order.
fn run_all(ctx: &Ctx, scenarios: &[&Scenario], jobs: usize) -> Vec<Ran> {
    let mut results = Vec::with_capacity(scenarios.len());
    for batch in scenarios.chunks(jobs) {
        std::thread::scope(|scope| {
            let running: Vec<_> = batch.iter().map(|s| scope.spawn(|| run_scenario(ctx, s))).collect();
            for (handle, scenario) in running.into_iter().zip(batch) {
                let result = handle.join().unwrap_or_else(|_| {
                    failed(scenario, &Setup::Failed("the check itself failed (a bug of acp check)".into()))
                });
                results.push(result);
            }
        });
    }
    results
}

/// Every requirement of `scenario` failed (or blocked, for a gate) for `why`.
fn failed(scenario: &Scenario, why: &Setup) -> Ran {
    let (outcome, gate) = match why {
        Setup::Failed(why) => (Outcome::Fail(why.clone()), None),
        Setup::Gated(gate) => (Outcome::Blocked(why.to_string()), Some(gate.clone())),
    };
    let checks = scenario.checks.iter().map(|r| (*r, outcome.clone())).collect();
    let (transcript, violations, track) = (Vec::new(), Vec::new(), Default::default());
    Ran { checks, transcript, not_json: 0, violations, track, gate, heard: false }
}

/// Spawns a fresh agent for `scenario` and runs it.
fn run_scenario(ctx: &Ctx, scenario: &Scenario) -> Ran {
    match Peer::spawn(ctx) {
        Ok(mut peer) => {
            let checks = (scenario.run)(&mut peer);
            let transcript = peer.transcript();
            let (not_json, violations) = (peer.not_json, std::mem::take(&mut peer.violations));
            let (track, gate, heard) = (std::mem::take(&mut peer.track), peer.gate.take(), peer.heard);
            drop(peer);
            Ran { checks, transcript, not_json, violations, track, gate, heard }
        }
        Err(e) => {
            let command = ctx.command.first().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
            failed(scenario, &Setup::Gated(Gate::NotStarted(format!("cannot run {command}: {e}"))))
        }
    }
}

/// A fresh directory for the file the checks offer to read.
fn scratch_dir() -> PathBuf {
    let base = std::env::temp_dir().join(format!("acp-check-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&base);
    base.canonicalize().unwrap_or(base)
}

/// Every requirement of `reqs` skipped (setup failed) or blocked (a gate) for `why`.
pub(crate) fn skip_all(reqs: &[&'static Requirement], why: &Setup) -> Checks {
    let outcome = setup_outcome(why);
    reqs.iter().map(|r| (*r, outcome.clone())).collect()
}

/// What a failed setup makes of a requirement: skipped, or blocked by a gate.
fn setup_outcome(why: &Setup) -> Outcome {
    match why {
        Setup::Failed(why) => Outcome::Skip(format!("setup failed: {why}")),
        Setup::Gated(_) => Outcome::Blocked(why.to_string()),
    }
}

/// Pass when `ok`, otherwise fail with `why`.
pub(crate) fn judge(ok: bool, why: impl FnOnce() -> String) -> Outcome {
    if ok { Outcome::Pass } else { Outcome::Fail(why()) }
}
