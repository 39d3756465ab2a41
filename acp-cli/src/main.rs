//! `acp`: the Agent Client Protocol from a terminal. See the `acp_cli` crate docs.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use acp_cli::agent::{AgentConfig, ReferenceAgent};
use acp_cli::client::{self, ClientConfig, Policy};
use acp_cli::demo::{self, DemoConfig};
use acp_cli::serve::{self, ServeConfig};
use clap::{Args, Parser, Subcommand};

/// The Agent Client Protocol (ACP) from a terminal: a reference agent, a client for any ACP
/// agent, and a demo of both.
#[derive(Debug, Parser)]
#[command(name = "acp", version, propagate_version = true)]
#[command(after_help = "Start with `acp demo`.\n\nExit codes of `client` and `demo`: 0 end_turn (or a normal quit), \
1 local failure, 2 usage, 3 cancelled, 4 refusal, 5 max_tokens/max_turn_requests, 6 protocol error, \
7 agent died, 8 authentication required, 9 the agent did not answer initialize/authenticate/session/new \
within --connect-timeout, 130 quit with Ctrl-C (or SIGTERM/SIGHUP).")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the reference agent on stdin/stdout (deterministic, offline; logs to stderr).
    Agent(AgentArgs),
    /// Spawn an ACP agent and talk to it: one prompt (-p) or an interactive loop.
    Client(ClientArgs),
    /// Run the client against the built-in agent, with a sample prompt and a file to read.
    Demo(DemoArgs),
    /// Serve a stdio agent to remote clients over WebSocket (one agent process per connection).
    Serve(ServeArgs),
    /// Internal: how the client starts its agent, so that the agent dies with the client.
    #[command(name = "__exec-child", hide = true)]
    ExecChild(ExecChildArgs),
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

#[derive(Debug, Args)]
struct AgentArgs {
    /// How long a prompt containing the word `slow` keeps its turn open, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    slow_ms: u64,
    /// How many sessions may be open at once; `session/new` beyond is refused (close one
    /// with `session/close`).
    #[arg(long, value_name = "N", default_value_t = 1024)]
    max_sessions: usize,
    /// Do not log requests to stderr.
    #[arg(long)]
    quiet: bool,
}

/// How permission requests are answered.
#[derive(Debug, Args)]
#[group(multiple = false)]
struct PolicyArgs {
    /// Allow every permission request (picks an allow option).
    #[arg(long)]
    allow: bool,
    /// Reject every permission request (picks a reject option).
    #[arg(long)]
    deny: bool,
    /// Ask for each one (reads the answers from stdin when it is not a terminal). The default
    /// on a terminal; otherwise the default is --deny.
    #[arg(long)]
    ask: bool,
}

impl PolicyArgs {
    fn policy(&self) -> Option<Policy> {
        match (self.allow, self.deny, self.ask) {
            (true, _, _) => Some(Policy::Allow),
            (_, true, _) => Some(Policy::Deny),
            (_, _, true) => Some(Policy::Ask),
            _ => None,
        }
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  acp client -- acp agent\n  acp client --allow -p 'read /etc/hostname' -- acp agent\n  \
acp client --root . --root /tmp -- npx @zed-industries/claude-code-acp\n\n\
Ctrl-C cancels the running turn (session/cancel); a second Ctrl-C quits. SIGTERM and SIGHUP count as \
Ctrl-C (one quits an idle client). No process started for the agent outlives the client.\n\n\
Under --deny the agent may read files in the roots but not write them nor run commands (neither is \
advertised); under --ask each write or command is asked first unless it belongs to a tool call the user \
just allowed."
)]
struct ClientArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// A directory the agent may read and write files and run commands in (repeatable;
    /// default: the working directory).
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Run this one prompt, then exit with its stop reason, instead of the interactive loop.
    #[arg(short = 'p', long = "prompt", value_name = "TEXT")]
    prompt: Option<String>,
    /// Show the agent's stderr as it is written (otherwise only its tail, if it dies).
    #[arg(long)]
    show_stderr: bool,
    /// The session's working directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Authenticate with this method (one of the agent's authMethods) before the session.
    #[arg(long, value_name = "METHOD_ID")]
    auth: Option<String>,
    /// Answer the agent's forms (elicitation/create, form mode) from this JSON object of field
    /// names to values; without it forms are declined and not advertised.
    #[arg(long, value_name = "FILE.json")]
    elicit: Option<PathBuf>,
    /// How long the agent gets to answer each of initialize, authenticate and session/new
    /// (exit code 9 past it).
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    connect_timeout: u64,
    /// Offer terminals to the agent even when the kernel cannot confine them to the roots
    /// (Landlock); without it such a client does not offer terminals.
    #[arg(long)]
    unconfined_terminals: bool,
    /// Talk to a remote agent at this URL instead of spawning AGENT_CMD: ws://HOST:PORT/acp
    /// (WebSocket) or http://HOST:PORT/acp (Streamable HTTP), e.g. one served by `acp serve`.
    #[arg(long, value_name = "URL", conflicts_with = "agent", required_unless_present = "agent")]
    connect: Option<String>,
    /// With --connect: a file holding the bearer token the server requires.
    #[arg(long, value_name = "FILE", requires = "connect")]
    token_file: Option<PathBuf>,
    /// The agent's command line, after `--`.
    #[arg(last = true, value_name = "AGENT_CMD")]
    agent: Vec<OsString>,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  acp serve --listen 127.0.0.1:8765 -- acp agent\n  \
acp serve --listen 0.0.0.0:8765 --token-file /etc/acp/token -- npx @zed-industries/claude-code-acp\n  \
acp client --connect ws://127.0.0.1:8765/acp\n  \
acp client --connect http://127.0.0.1:8765/acp\n\n\
Endpoint /acp: a WebSocket upgrade (one JSON-RPC message per text frame) or Streamable HTTP \
(POST each message, GET the SSE streams, DELETE to end); health check /healthz. TLS: terminate it in front (e.g. nginx). SIGTERM, SIGINT or SIGHUP: stop accepting, end every \
agent's input, wait for them, exit.")]
struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
    listen: std::net::SocketAddr,
    /// A file holding the bearer token every client must send (required to listen on
    /// anything but loopback).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Connections served at once (one more gets 503).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_connections: u64,
    /// Start every connection id with this name (`NAME-…`), so that a load balancer can route
    /// by the Acp-Connection-Id header to the instance that holds the connection.
    #[arg(long, value_name = "NAME", value_parser = node_id)]
    node_id: Option<String>,
    /// Close a connection on which nothing moved for this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    /// The agent's command line, after `--`.
    #[arg(last = true, required = true, value_name = "AGENT_CMD")]
    agent: Vec<OsString>,
}

/// A node id: letters, digits, `_` (it becomes part of a header value and a routing key).
fn node_id(text: &str) -> Result<String, String> {
    let ok = !text.is_empty() && text.len() <= 32 && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok { Ok(text.to_owned()) } else { Err("1 to 32 letters, digits or _".to_owned()) }
}

/// Reads a token file: its first line, trimmed; an empty token is refused.
fn read_token(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_owned();
    if token.is_empty() { Err(format!("{} holds no token", path.display())) } else { Ok(token) }
}

#[derive(Debug, Args)]
struct DemoArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// Show the agent's stderr.
    #[arg(long)]
    show_stderr: bool,
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Agent(args) => {
            let mut config = AgentConfig::default();
            config.slow_delay = Duration::from_millis(args.slow_ms);
            config.log = !args.quiet;
            config.max_sessions = args.max_sessions;
            match ReferenceAgent::with_config(config).serve_stdio() {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("acp agent: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Client(args) => {
            let mut config = ClientConfig::new(args.agent);
            config.policy = args.policy.policy();
            config.roots = args.roots;
            config.cwd = args.cwd;
            config.prompt = args.prompt;
            config.show_stderr = args.show_stderr;
            config.auth = args.auth;
            config.elicit = args.elicit;
            config.connect_timeout = Duration::from_secs(args.connect_timeout);
            config.unconfined_terminals = args.unconfined_terminals;
            config.die_with_client = true;
            config.connect = args.connect;
            if let Some(path) = &args.token_file {
                match read_token(path) {
                    Ok(token) => config.token = Some(token),
                    Err(e) => {
                        eprintln!("acp client: {e}");
                        return ExitCode::from(2);
                    }
                }
            }
            client::run(config).into()
        }
        Command::Demo(args) => {
            let mut config = DemoConfig::default();
            config.policy = args.policy.policy();
            config.show_stderr = args.show_stderr;
            demo::run(config).into()
        }
        Command::Serve(args) => {
            let mut config = ServeConfig::new(args.listen, args.agent);
            if let Some(path) = &args.token_file {
                match read_token(path) {
                    Ok(token) => config.token = Some(token),
                    Err(e) => {
                        eprintln!("acp serve: {e}");
                        return ExitCode::from(2);
                    }
                }
            }
            config.options.max_connections = usize::try_from(args.max_connections).unwrap_or(usize::MAX);
            config.options.idle_timeout = Some(Duration::from_secs(args.idle_timeout));
            config.options.node_id = args.node_id;
            match serve::run(config) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("acp serve: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::ExecChild(args) => client::exec_child(args.parent_pid, &args.command).into(),
    }
}
