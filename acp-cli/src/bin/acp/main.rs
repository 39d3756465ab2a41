//! `acp`: the Agent Client Protocol from a terminal. See the `acp_cli` crate docs.
//!
//! One module per subcommand: its arguments (clap) and their conversion into the settings of
//! the library's module that runs it (`AgentArgs` into `acp_cli::agent::AgentConfig`, …), then
//! the run. `main` only parses and dispatches.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod agent;
mod check;
mod client;
mod demo;
mod manage;
mod policy;
mod record;
mod replay;
mod serve;

/// The Agent Client Protocol (ACP) from a terminal: a reference agent, a client for any ACP
/// agent, and a demo of both.
#[derive(Debug, Parser)]
#[command(name = "acp", version, propagate_version = true)]
#[command(after_help = "Start with `acp demo`.\n\nExit codes of `client` and `demo`: 0 end_turn (or a normal quit), \
1 local failure, 2 usage, 3 cancelled, 4 refusal, 5 max_tokens/max_turn_requests, 6 protocol error, \
7 agent died, 8 authentication required, 9 the agent did not answer initialize/authenticate/session/new \
within --connect-timeout, 10 --resume/--continue found no session or an agent that can reopen none, \
129 ended by SIGHUP, 130 quit with Ctrl-C, 143 ended by SIGTERM.\n\n\
Named agents and defaults: the config file (acp config show). Sessions of acp client are recorded \
(acp sessions) in $ACP_STATE_DIR, else $XDG_STATE_HOME/acp, else ~/.local/state/acp.")]
struct Cli {
    /// The config file (default: $ACP_CONFIG, else $XDG_CONFIG_HOME/acp/config.toml, else
    /// ~/.config/acp/config.toml).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the reference agent on stdin/stdout (deterministic, offline; logs to stderr).
    Agent(agent::AgentArgs),
    /// Spawn an ACP agent and talk to it: one prompt (-p) or an interactive loop.
    Client(client::ClientArgs),
    /// Run the client against the built-in agent, with a sample prompt and a file to read.
    Demo(demo::DemoArgs),
    /// Serve a stdio agent to remote clients over WebSocket (one agent process per connection).
    Serve(serve::ServeArgs),
    /// List the named agents of the config file.
    Agents,
    /// Show the config file: `acp config show` (the effective config) or `acp config path`.
    Config {
        #[command(subcommand)]
        action: manage::ConfigAction,
    },
    /// The sessions `acp client` recorded: list (default), show, close, prune.
    Sessions {
        #[command(subcommand)]
        action: Option<manage::SessionsAction>,
    },
    /// Check an agent (or a client) against the protocol: scripted scenarios, a report with a
    /// spec citation per requirement; exit 0 iff no MUST failed.
    Check(check::CheckArgs),
    /// Record a session: a stdio proxy to launch in place of an agent, writing a transcript.
    Record(record::RecordArgs),
    /// Show a recorded transcript again: as the client drew it, summarized, or checked.
    Replay(replay::ReplayArgs),
    /// Internal: how the client starts its agent, so that the agent dies with the client.
    #[command(name = "__exec-child", hide = true)]
    ExecChild(ExecChildArgs),
    /// Internal: the agent `acp check client` gives the client under test (joins stdio to SOCKET).
    #[command(name = "__check-relay", hide = true)]
    CheckRelay {
        /// The checker's Unix socket.
        socket: PathBuf,
    },
}

#[derive(Debug, Args)]
struct ExecChildArgs {
    /// The client's process id; the wrapper exits if its parent is no longer this process.
    #[arg(long, value_name = "PID")]
    parent_pid: u32,
    /// The agent's command line.
    #[arg(last = true, required = true)]
    command: Vec<OsString>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let explicit = cli.config;
    let load = || acp_cli::config::load(explicit.as_deref());
    match cli.command {
        Command::Agents => manage::agents(load),
        Command::Config { action } => manage::config(action, load),
        Command::Sessions { action } => manage::sessions(action, load),
        Command::Agent(args) => agent::run(args),
        Command::Client(args) => client::run(args, load),
        Command::Demo(args) => demo::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Check(args) => check::check(args, load),
        Command::Record(args) => record::run(args),
        Command::Replay(args) => replay::run(args),
        Command::ExecChild(args) => acp_cli::client::exec_child(args.parent_pid, &args.command).into(),
        Command::CheckRelay { socket } => ExitCode::from(acp_cli::check::client::relay::run(&socket)),
    }
}

/// Parses a command line as `acp` does (for the subcommands' tests).
#[cfg(test)]
fn parse(args: &[&str]) -> Command {
    let argv = std::iter::once("acp").chain(args.iter().copied());
    Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?} does not parse: {e}")).command
}
