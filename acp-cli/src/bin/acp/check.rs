//! The arguments of `acp check agent`, `acp check client` and `acp check --coverage`, and how
//! they run.

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use acp_cli::Protocol;
use acp_cli::check::report::Report;
use acp_cli::config::Loaded;
use clap::{Args, Subcommand};

/// Exit status: usage error.
const USAGE: u8 = 2;

#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Exit status of agent and client: 0 no MUST requirement failed, 1 one did, 2 usage error, \
3 the run was gated (the agent requires authentication: --auth METHOD_ID; or it speaks another protocol \
version) or the peer could not be started.\n\n`acp check --coverage` prints which clauses of the spec \
(every MUST, SHOULD and MAY of the v1.21.0 pages and schema, and the v2 pages) the requirements check."
)]
pub(crate) struct CheckArgs {
    /// Print the coverage of the spec's clauses by the requirements, by level and by page.
    #[arg(long)]
    coverage: bool,
    /// How --coverage is printed.
    #[arg(long, value_enum, default_value = "text", requires = "coverage")]
    format: CoverageFormat,
    #[command(subcommand)]
    what: Option<CheckCommand>,
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
    /// One JSON document (schema "acp-check-report", version 1; see the README).
    Json,
    /// JUnit XML, for CI systems: a failed MUST is a failure, the rest skipped or passed.
    Junit,
}

/// How `acp check --coverage` prints its table.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum CoverageFormat {
    /// Tables by level and by page.
    Text,
    /// Every clause with its status, and the totals.
    Json,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  acp check agent -- acp agent\n  acp check agent --only agent.cancel -- node agent.mjs\n  \
acp check agent --auth gemini-api-key -- gemini --acp\n  acp check agent --agent claude      # a named agent of the config file\n\n\
Exit status: 0 no MUST failed, 1 a MUST failed, 2 usage error, 3 gated (the agent requires authentication \
first and --auth was not given or refused; with --protocol 2, the agent negotiated version 1) or the agent could not be started; 128 + N when signal N \
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
    /// Authenticate with this method of the agent's authMethods right after initialize (as
    /// `acp client --auth` does), before any session is opened.
    #[arg(long, value_name = "METHOD_ID")]
    auth: Option<String>,
    /// A named agent of the config file (its command, env and cwd), instead of AGENT_CMD.
    #[arg(long = "agent", value_name = "NAME")]
    agent_name: Option<String>,
    /// The ACP version checked: 1, or 2 (the v2 Preview; needs a build with the feature
    /// unstable_protocol_v2).
    #[arg(long, value_enum, value_name = "VERSION", default_value = "1")]
    protocol: Protocol,
    /// The agent's command line, after `--`.
    #[arg(last = true, value_name = "AGENT_CMD")]
    agent: Vec<OsString>,
}

/// Seconds, more than 0 and at most a day.
fn positive_secs(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= 86_400.0 => Ok(secs),
        _ => Err("a number of seconds above 0 (at most 86400)".to_owned()),
    }
}

/// Runs `acp check`; `load` reads the config file (for `--agent NAME`).
pub(crate) fn check(args: CheckArgs, load: impl FnOnce() -> Result<Loaded, String>) -> ExitCode {
    match (args.coverage, args.what) {
        (true, _) => coverage(args.format),
        (false, Some(CheckCommand::Agent(args))) => check_agent(args, load),
        (false, Some(CheckCommand::Client(args))) => check_client(args),
        (false, None) => {
            eprintln!(
                "acp check: say what to check: `acp check agent -- AGENT_CMD`, `acp check client -- CLIENT_CMD`, or `acp check --coverage`"
            );
            ExitCode::from(USAGE)
        }
    }
}

fn coverage(format: CoverageFormat) -> ExitCode {
    let ledger = acp_cli::check::coverage::Ledger::committed();
    match format {
        CoverageFormat::Text => print!("{}", ledger.to_text()),
        CoverageFormat::Json => println!("{}", ledger.to_json()),
    }
    ExitCode::SUCCESS
}

fn usage(what: &str, e: &str) -> ExitCode {
    eprintln!("acp check {what}: {e}");
    ExitCode::from(USAGE)
}

fn check_agent(args: CheckAgentArgs, load: impl FnOnce() -> Result<Loaded, String>) -> ExitCode {
    if let Err(e) = args.protocol.available() {
        return usage("agent", &e);
    }
    let mut config = acp_cli::check::agent::AgentCheckConfig::new(args.agent);
    match (&args.agent_name, config.command.is_empty()) {
        (Some(_), false) => return usage("agent", "give --agent NAME or AGENT_CMD after --, not both"),
        (None, true) => return usage("agent", "no agent to check: give its command after -- (or --agent NAME)"),
        (Some(name), true) => {
            let loaded = match load() {
                Ok(loaded) => loaded,
                Err(e) => return usage("agent", &e),
            };
            let entry = match loaded.config.agent(name, &loaded.path) {
                Ok(entry) => entry,
                Err(e) => return usage("agent", &e),
            };
            config.command = entry.command.iter().map(OsString::from).collect();
            config.env = entry.env.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect();
            config.dir = entry.cwd.clone();
        }
        (None, false) => {}
    }
    config.timeout = Duration::from_secs_f64(args.timeout);
    config.startup = Duration::from_secs_f64(args.startup_timeout);
    config.only = args.only;
    config.jobs = usize::try_from(args.jobs).unwrap_or(1);
    config.auth = args.auth;
    config.own_process = true;
    let report = match args.protocol {
        Protocol::V1 => acp_cli::check::agent::run(&config),
        #[cfg(feature = "unstable_protocol_v2")]
        Protocol::V2 => acp_cli::check::v2::agent::run(&config),
        #[cfg(not(feature = "unstable_protocol_v2"))]
        Protocol::V2 => return usage("agent", "--protocol 2 is not in this build"),
    };
    print_report(&report, args.format)
}

fn print_report(report: &Report, format: CheckFormat) -> ExitCode {
    match format {
        CheckFormat::Text => print!("{}", report.to_text()),
        CheckFormat::Json => println!("{}", report.to_json()),
        CheckFormat::Junit => print!("{}", report.to_junit()),
    }
    ExitCode::from(report.exit_code())
}

#[derive(Debug, Args)]
#[command(after_help = "{agent} in CLIENT_CMD becomes the command line of the scripted agent; a client that takes \
its agent from the environment finds it in ACP_CHECK_AGENT (a JSON array). The client must send its prompt by \
itself (e.g. -p). Examples:\n  \
acp check client -- acp client --allow -p hi -- {agent}\n  \
acp check client --format json -- node my-client.mjs {agent}\n\n\
Scenarios (each runs the client once, all at once): every session/update kind with unknown requests and \
notifications, a permission ask, fs/* and terminal/* calls; each stop reason; SIGINT during a permission ask \
(a client that cancels is judged on it); the agent dying mid-turn. With --protocol 2 the v2 scenarios. Exit 0 iff \
no MUST requirement failed, 1 otherwise, 2 usage, 3 the client could not be started; 128 + N when signal N (SIGINT, SIGTERM, \
SIGHUP) stopped the check, once every client it started is ended.")]
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
    /// The ACP version the scripted agent speaks: 1, or 2 (the v2 Preview; needs a build with
    /// the feature unstable_protocol_v2).
    #[arg(long, value_enum, value_name = "VERSION", default_value = "1")]
    protocol: Protocol,
    /// The client's command line, after `--`, with {agent} where the agent command goes.
    #[arg(last = true, required = true, value_name = "CLIENT_CMD")]
    command: Vec<OsString>,
}

fn check_client(args: CheckClientArgs) -> ExitCode {
    use acp_cli::check::client::{AGENT_ENV, CheckClientConfig, PLACEHOLDER};
    if let Err(e) = args.protocol.available() {
        return usage("client", &e);
    }
    if !args.command.iter().any(|a| a.to_string_lossy().contains(PLACEHOLDER)) {
        eprintln!(
            "acp check client: note: CLIENT_CMD has no {PLACEHOLDER}; the client must take the agent from ${AGENT_ENV}"
        );
    }
    let mut config = CheckClientConfig::new(args.command);
    config.timeout = Duration::from_secs(args.timeout);
    config.start_timeout = Duration::from_secs(args.start_timeout);
    config.own_process = true;
    let report = match args.protocol {
        Protocol::V1 => acp_cli::check::client::run(&config),
        #[cfg(feature = "unstable_protocol_v2")]
        Protocol::V2 => acp_cli::check::v2::client::run(&config),
        #[cfg(not(feature = "unstable_protocol_v2"))]
        Protocol::V2 => return usage("client", "--protocol 2 is not in this build"),
    };
    print_report(&report, args.format)
}
