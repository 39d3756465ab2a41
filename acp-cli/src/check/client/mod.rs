//! `acp check client -- CLIENT_CMD...`: a scripted agent that the client under test is
//! pointed at, and the judgment of what the client does.
//!
//! The client launches its agent by command line, so `CLIENT_CMD` holds the placeholder
//! `{agent}`, replaced by the command line of a relay (`acp __check-relay SOCKET`, see
//! [`relay`]) that joins its stdin and stdout to the checker's Unix socket; the same command
//! line is exported as a JSON array in `ACP_CHECK_AGENT`. Each scenario runs the client once
//! (a fresh process in its own process group, ended at the scenario's end or its timeout, or
//! when a signal ends the check: see `children`)
//! with the scripted agent behaving one way, and keeps every line as the transcript:
//!
//! * `full`: every `session/update` kind, unknown requests and notifications, a permission
//!   ask, `fs/*` and `terminal/*` calls (served or refused as the client advertised), `end_turn`;
//! * `stop-max_tokens`, `stop-max_turn_requests`, `stop-refusal`, `stop-cancelled`: a turn
//!   ending with that stop reason;
//! * `cancel`: a permission ask, then `SIGINT` to the client as a user's Ctrl-C; a client
//!   that cancels is judged on its `session/cancel` and its answer to the ask;
//! * `agent-dies`: the agent's connection ends mid-turn (informational).
//!
//! The agent advertises nothing optional (no authMethods, no loadSession, no modes, no
//! session capabilities), so any such call of the client is out of bounds. The findings are
//! judged over all scenarios together.

mod agent;
mod judge;
pub(crate) mod launch;
pub mod relay;
pub(crate) mod requirements;
mod turn;
pub(crate) mod wire;

use std::ffi::OsString;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use launch::{AGENT_ENV, PLACEHOLDER};

use self::agent::{Agent, Observed, Script};
use self::launch::Launched;
use self::wire::{Log, Wire};
use super::children::Children;
use super::report::{Gate, Outcome, Report};

/// What `acp check client` runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckClientConfig {
    /// The client's command line, with `{agent}` where the agent's goes.
    pub command: Vec<OsString>,
    /// How long a scenario may take once the client started the agent; a third of it is
    /// how long each answer of the client is waited for.
    pub timeout: Duration,
    /// How long the client may take to start the agent (an interpreter under load can take
    /// seconds).
    pub start_timeout: Duration,
    /// The check is the process's own (the `acp` command; default off): the clients start
    /// through `acp __exec-child`, so that the kernel kills them if the check dies, and
    /// `SIGINT`, `SIGTERM` and `SIGHUP` end every client running, then the process (128 + the
    /// signal).
    pub own_process: bool,
}

impl CheckClientConfig {
    /// A configuration with the default timeouts (10 s per scenario, 30 s to start).
    pub fn new(command: Vec<OsString>) -> CheckClientConfig {
        CheckClientConfig {
            command,
            timeout: Duration::from_secs(10),
            start_timeout: Duration::from_secs(30),
            own_process: false,
        }
    }
}

/// One run of the client under test.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) name: &'static str,
    pub(crate) script: Script,
    /// Why the client could not be run or never connected.
    pub(crate) failed_start: Option<String>,
    /// The client's command could not be run at all (no such program, …).
    pub(crate) not_started: bool,
    pub(crate) log: Log,
    pub(crate) observed: Observed,
    /// The client's exit status (None: it could not be reaped).
    pub(crate) status: Option<ExitStatus>,
    /// Whether it was still running at the scenario's end and had to be ended.
    pub(crate) ended_by_checker: bool,
    /// How long after the agent's death it exited on its own, within the scenario (`agent-dies`).
    pub(crate) exited_after_death: Option<Duration>,
    /// The tail of its stderr.
    pub(crate) stderr: String,
}

impl Run {
    fn new(name: &'static str, script: Script, failed: &str) -> Run {
        Run {
            name,
            script,
            failed_start: Some(failed.to_owned()),
            not_started: false,
            log: Log::default(),
            observed: Observed::default(),
            status: None,
            ended_by_checker: false,
            exited_after_death: None,
            stderr: String::new(),
        }
    }
}

const SCENARIOS: [(&str, Script); 7] = [
    ("full", Script::Full),
    ("stop-max_tokens", Script::Stop("max_tokens")),
    ("stop-max_turn_requests", Script::Stop("max_turn_requests")),
    ("stop-refusal", Script::Stop("refusal")),
    ("stop-cancelled", Script::Stop("cancelled")),
    ("cancel", Script::Cancel),
    ("agent-dies", Script::Die),
];

/// Runs every scenario against the client and judges it.
pub fn run(config: &CheckClientConfig) -> Report {
    let children = Children::new(config.own_process);
    let _signals = if config.own_process { children.end_on_signals("acp check client") } else { None };
    let children = &children;
    // The scenarios are independent (a socket, a client process and files of their own), so
    // they run at once: a client that takes seconds to start costs those seconds once.
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = SCENARIOS
            .iter()
            .map(|&(name, script)| (name, script, scope.spawn(move || run_one(config, children, name, script))))
            .collect();
        handles
            .into_iter()
            .map(|(name, script, handle)| {
                handle.join().unwrap_or_else(|_| Run::new(name, script, "the checker failed"))
            })
            .collect()
    });
    children.hold_if_ending();
    let subject: Vec<String> = config.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut report = Report::new("client", 1, format!("client: {}", subject.join(" ")));
    report.findings = judge::judge(&runs);
    // A client that cannot be run at all shows nothing: every requirement is blocked.
    if let Some(run) = runs.iter().find(|r| r.not_started)
        && runs.iter().all(|r| r.not_started)
    {
        let gate = Gate::NotStarted(run.failed_start.clone().unwrap_or_default());
        for finding in &mut report.findings {
            finding.outcome = Outcome::Blocked(gate.describe());
            finding.transcript.clear();
        }
        report.gate = Some(gate);
    }
    report
}

fn run_one(config: &CheckClientConfig, children: &Arc<Children>, name: &'static str, script: Script) -> Run {
    let start = Instant::now();
    let mut run = Run::new(name, script, "");
    run.failed_start = None;
    let launched = match Launched::start(&config.command, children) {
        Ok(launched) => launched,
        Err(e) => {
            run.failed_start = Some(e.to_string());
            run.not_started = true;
            return run;
        }
    };
    let Some(stream) = launched.accept(start + config.start_timeout) else {
        let why = match launched.status() {
            Some(status) => format!("the client exited ({status}) without starting the agent"),
            None => format!("the client did not start the agent within {:?}", config.start_timeout),
        };
        run.failed_start = Some(why);
        (run.status, run.ended_by_checker) = launched.finish();
        return run;
    };
    // The client gets `start_timeout` to start the agent, then `timeout` for the scenario.
    let deadline = Instant::now() + config.timeout;
    let step = (config.timeout / 3).max(Duration::from_millis(500));
    // Transcript times count from the connection (not from the interpreter's start-up).
    match Wire::new(stream, Instant::now()) {
        Ok(wire) => {
            let mut agent = Agent::new(wire, &launched, script, step, deadline);
            agent.serve(Duration::from_millis(1500));
            if script == Script::Die {
                let died = agent.wire.elapsed();
                // Until the scenario's end (no fixed window: a loaded machine is slow to exit).
                if launched.wait_exit(deadline).is_some() {
                    run.exited_after_death = Some(agent.wire.elapsed().saturating_sub(died));
                }
            }
            run.log = agent.wire.log();
            run.observed = agent.observed;
        }
        Err(e) => run.failed_start = Some(format!("cannot read the socket: {e}")),
    }
    run.stderr = launched.stderr_tail();
    (run.status, run.ended_by_checker) = launched.finish();
    run
}
