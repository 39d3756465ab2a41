//! `acp check client --protocol 2 -- CLIENT_CMD...`: a scripted v2 agent (see `script`)
//! that the client under test is pointed at, launched as for v1 (`{agent}`, the relay, a
//! fresh client per scenario; `check::client::launch`), and the judgment of what it does:
//!
//! * `turn`: the prompt acknowledged at once, then the user message, `running`, output, tool
//!   calls (one advertising `capabilities.cancel`), a batch of a notification and a request,
//!   an unknown request, a permission ask, and `idle` `end_turn`;
//! * `cancel`: a permission ask, then `SIGINT` to the client; a client that cancels is judged
//!   on its `session/cancel`, its answer to the ask and any `tool_call/cancel`;
//! * `v1-agent`: the agent answers `initialize` with version 1 (a v1-only agent).

mod judge;
mod script;

use std::sync::Arc;
use std::time::{Duration, Instant};

use self::script::{Agent, Observed, Script};
use crate::check::children::Children;
use crate::check::client::CheckClientConfig;
use crate::check::client::launch::Launched;
use crate::check::client::wire::{Log, Wire};
use crate::check::report::{Gate, Outcome, Report};

/// One run of the client under test.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) name: &'static str,
    pub(crate) script: Script,
    /// Why the client could not be run or never connected.
    pub(crate) failed_start: Option<String>,
    /// The client's command could not be run at all.
    pub(crate) not_started: bool,
    pub(crate) log: Log,
    pub(crate) observed: Observed,
}

const SCENARIOS: [(&str, Script); 3] =
    [("turn", Script::Turn), ("cancel", Script::Cancel), ("v1-agent", Script::V1Agent)];

/// Runs every scenario against the client and judges it.
pub fn run(config: &CheckClientConfig) -> Report {
    let children = Children::new(config.own_process);
    let _signals = if config.own_process { children.end_on_signals("acp check client") } else { None };
    let children = &children;
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = SCENARIOS
            .iter()
            .map(|&(name, script)| scope.spawn(move || run_one(config, children, name, script)))
            .collect();
        SCENARIOS
            .iter()
            .zip(handles)
            .map(|(&(name, script), handle)| {
                handle.join().unwrap_or_else(|_| Run::failed(name, script, "the checker failed"))
            })
            .collect()
    });
    children.hold_if_ending();
    let subject: Vec<String> = config.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut report = Report::new("client", 2, format!("client: {}", subject.join(" ")));
    report.findings = judge::judge(&runs);
    report.gate = gate(&runs);
    if let Some(gate) = &report.gate {
        for finding in report.findings.iter_mut().filter(|f| matches!(f.outcome, Outcome::Skip(_))) {
            finding.outcome = Outcome::Blocked(gate.reason());
        }
    }
    report
}

/// A client that cannot be run, or that offers version 1 only, shows nothing of v2.
fn gate(runs: &[Run]) -> Option<Gate> {
    if let Some(run) = runs.iter().find(|r| r.not_started)
        && runs.iter().all(|r| r.not_started)
    {
        return Some(Gate::NotStarted(run.failed_start.clone().unwrap_or_default()));
    }
    let offered = runs.iter().find_map(|r| r.observed.init.as_ref()?.get("protocolVersion")?.as_u64());
    match offered {
        Some(v) if v < 2 => Some(Gate::Version(format!(
            "the client offered protocol version {v}: it speaks v1 only (check it without --protocol 2)"
        ))),
        _ => None,
    }
}

impl Run {
    fn failed(name: &'static str, script: Script, why: &str) -> Run {
        Run {
            name,
            script,
            failed_start: Some(why.to_owned()),
            not_started: false,
            log: Log::default(),
            observed: Observed::default(),
        }
    }
}

fn run_one(config: &CheckClientConfig, children: &Arc<Children>, name: &'static str, script: Script) -> Run {
    let start = Instant::now();
    let launched = match Launched::start(&config.command, children) {
        Ok(launched) => launched,
        Err(e) => {
            let mut run = Run::failed(name, script, &e.to_string());
            run.not_started = true;
            return run;
        }
    };
    let Some(stream) = launched.accept(start + config.start_timeout) else {
        let why = match launched.status() {
            Some(status) => format!("the client exited ({status}) without starting the agent"),
            None => format!("the client did not start the agent within {:?}", config.start_timeout),
        };
        let _ = launched.finish();
        return Run::failed(name, script, &why);
    };
    let mut run = Run::failed(name, script, "");
    run.failed_start = None;
    let deadline = Instant::now() + config.timeout;
    let step = (config.timeout / 3).max(Duration::from_millis(500));
    match Wire::with_batches(stream, Instant::now(), true) {
        Ok(wire) => {
            let mut agent = Agent::new(wire, &launched, script, step, deadline);
            agent.serve(Duration::from_millis(1500));
            run.log = agent.wire.log();
            run.observed = agent.observed;
        }
        Err(e) => run.failed_start = Some(format!("cannot read the socket: {e}")),
    }
    let _ = launched.finish();
    run
}
