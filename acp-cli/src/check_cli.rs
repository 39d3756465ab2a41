//! The arguments of `acp check agent` and `acp check client`, and how they run.

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    #[command(subcommand)]
    what: CheckCommand,
}

#[derive(Debug, Subcommand)]
enum CheckCommand {
    /// Drive an agent through scripted scenarios, each with a fresh agent process.
    Agent(CheckAgentArgs),
    /// Play a scripted agent to an ACP client and judge what the client does.
    Client(CheckClientArgs),
}

/// How `acp check` prints its report.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum CheckFormat {
    /// One line per requirement, failures with their wire transcript.
    Text,
    /// One JSON document.
    Json,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  acp check agent -- acp agent\n  acp check agent --only agent.cancel -- node agent.mjs\n\n\
Exit status: 0 when no MUST requirement failed, 1 when one did, 2 on a usage error; 128 + N when signal N \
(SIGINT, SIGTERM, SIGHUP) stopped the check, once every agent it started is ended."
)]
struct CheckAgentArgs {
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    format: CheckFormat,
    /// How long any one answer of the agent may take, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = positive_secs)]
    timeout: f64,
    /// How much longer the first answer of each agent process may take (its start), in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = positive_secs)]
    startup_timeout: f64,
    /// Only the requirements whose id starts with this (e.g. `agent.cancel`).
    #[arg(long, value_name = "ID_PREFIX")]
    only: Option<String>,
    /// How many scenarios run at once, each with its own agent process.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    jobs: u64,
    /// The agent's command line, after `--`.
    #[arg(last = true, required = true, value_name = "AGENT_CMD")]
    agent: Vec<OsString>,
}

/// Seconds, more than 0 and at most a day.
fn positive_secs(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= 86_400.0 => Ok(secs),
        _ => Err("a number of seconds above 0 (at most 86400)".to_owned()),
    }
}

pub(crate) fn check(args: CheckArgs) -> ExitCode {
    match args.what {
        CheckCommand::Agent(args) => {
            let mut config = acp_cli::check::agent::AgentCheckConfig::new(args.agent);
            config.timeout = Duration::from_secs_f64(args.timeout);
            config.startup = Duration::from_secs_f64(args.startup_timeout);
            config.only = args.only;
            config.jobs = usize::try_from(args.jobs).unwrap_or(1);
            config.own_process = true;
            let report = acp_cli::check::agent::run(&config);
            match args.format {
                CheckFormat::Text => print!("{}", report.to_text()),
                CheckFormat::Json => println!("{}", report.to_json()),
            }
            if report.passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        CheckCommand::Client(args) => check_client(args),
    }
}

#[derive(Debug, Args)]
#[command(after_help = "{agent} in CLIENT_CMD becomes the command line of the scripted agent; a client that takes \
its agent from the environment finds it in ACP_CHECK_AGENT (a JSON array). The client must send its prompt by \
itself (e.g. -p). Examples:\n  \
acp check client -- acp client --allow -p hi -- {agent}\n  \
acp check client --format json -- node my-client.mjs {agent}\n\n\
Scenarios (each runs the client once, all at once): every session/update kind with unknown requests and \
notifications, a permission ask, fs/* and terminal/* calls; each stop reason; SIGINT during a permission ask \
(a client that cancels is judged on it); the agent dying mid-turn. Exit 0 iff no MUST requirement failed, \
1 otherwise, 2 usage; 128 + N when signal N (SIGINT, SIGTERM, SIGHUP) stopped the check, once every client \
it started is ended.")]
struct CheckClientArgs {
    /// How the report is printed.
    #[arg(long, value_enum, default_value = "text")]
    format: CheckFormat,
    /// Seconds each scenario may take once the client started the agent (a third of it for
    /// each answer of the client).
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
    /// Seconds the client may take to start the agent.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    start_timeout: u64,
    /// The client's command line, after `--`, with {agent} where the agent command goes.
    #[arg(last = true, required = true, value_name = "CLIENT_CMD")]
    command: Vec<OsString>,
}

fn check_client(args: CheckClientArgs) -> ExitCode {
    use acp_cli::check::client::{AGENT_ENV, CheckClientConfig, PLACEHOLDER, run};
    if !args.command.iter().any(|a| a.to_string_lossy().contains(PLACEHOLDER)) {
        eprintln!(
            "acp check client: note: CLIENT_CMD has no {PLACEHOLDER}; the client must take the agent from ${AGENT_ENV}"
        );
    }
    let mut config = CheckClientConfig::new(args.command);
    config.timeout = Duration::from_secs(args.timeout);
    config.start_timeout = Duration::from_secs(args.start_timeout);
    config.own_process = true;
    let report = run(&config);
    match args.format {
        CheckFormat::Text => print!("{}", report.to_text()),
        CheckFormat::Json => println!("{}", report.to_json()),
    }
    if report.passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
