//! `acp`: the Agent Client Protocol from a terminal. See the `acp_cli` crate docs.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use acp_cli::agent::{AgentConfig, ReferenceAgent};
use acp_cli::client::{self, ClientConfig, Output, Policy};
use acp_cli::demo::{self, DemoConfig};
use acp_cli::record::{self, RecordConfig};
use acp_cli::replay::{self, ReplayConfig, ReplayMode};
use acp_cli::serve::{self, ServeConfig};
use acp_cli::{Exit, Protocol, manage, setup};
use clap::{Args, Parser, Subcommand, ValueEnum};

mod check_cli;

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
    Agent(AgentArgs),
    /// Spawn an ACP agent and talk to it: one prompt (-p) or an interactive loop.
    Client(ClientArgs),
    /// Run the client against the built-in agent, with a sample prompt and a file to read.
    Demo(DemoArgs),
    /// Serve a stdio agent to remote clients over WebSocket (one agent process per connection).
    Serve(ServeArgs),
    /// List the named agents of the config file.
    Agents,
    /// Show the config file: `acp config show` (the effective config) or `acp config path`.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// The sessions `acp client` recorded: list (default), show, close, prune.
    Sessions {
        #[command(subcommand)]
        action: Option<SessionsAction>,
    },
    /// Check an agent (or a client) against the protocol: scripted scenarios, a report with a
    /// spec citation per requirement; exit 0 iff no MUST failed.
    Check(check_cli::CheckArgs),
    /// Record a session: a stdio proxy to launch in place of an agent, writing a transcript.
    Record(RecordArgs),
    /// Show a recorded transcript again: as the client drew it, summarized, or checked.
    Replay(ReplayArgs),
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

#[derive(Debug, Subcommand)]
enum ConfigAction {
    /// Print the config file's path and the effective config (TOML).
    Show,
    /// Print the config file's path.
    Path,
}

#[derive(Debug, Subcommand)]
enum SessionsAction {
    /// The sessions of this project (the working directory), the latest first.
    List {
        /// Every project's sessions.
        #[arg(long)]
        all: bool,
        /// Also show this named agent's own session list (session/list), when it has one.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
    /// A session's record and transcript.
    Show {
        /// The local id (or the agent's session id, if only one session has it).
        id: String,
    },
    /// Mark a session closed (`--continue` skips it).
    Close {
        /// The local id (or the agent's session id).
        id: String,
    },
    /// Forget the sessions not updated for some days, with their transcripts.
    Prune {
        /// Sessions not updated for this many days.
        #[arg(long, value_name = "DAYS", default_value_t = 30)]
        older_than: u64,
    },
}

#[derive(Debug, Args)]
#[command(after_help = "Example (an editor's agent command, or any client's):\n  \
acp client -p 'hello' -- acp record --out session.ndjson -- acp agent\n\n\
Bytes pass unchanged both ways; the transcript holds one JSON object per line: a header, \
{\"t_ms\",\"dir\":\"c2a\"|\"a2c\",\"line\"} per line that crossed, and the agent's exit. \
Exit code: the agent's (128 + N if signal N ended it). SIGTERM, SIGINT and SIGHUP are passed to the agent.")]
struct RecordArgs {
    /// Where to write the transcript (NDJSON; created or truncated).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// The agent's command line, after `--`.
    #[arg(last = true, required = true, value_name = "AGENT_CMD")]
    agent: Vec<OsString>,
}

#[derive(Debug, Args)]
#[command(after_help = "Exit code: 0; with --check, 1 when a violation was found (or the file cannot be read).")]
struct ReplayArgs {
    /// Sessions, turns with their stop reasons, request counts and latencies per method.
    #[arg(long, conflicts_with = "check")]
    summary: bool,
    /// Report every protocol violation with its transcript line number.
    #[arg(long)]
    check: bool,
    /// The transcript written by `acp record`.
    #[arg(value_name = "FILE")]
    file: PathBuf,
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
    /// Keep sessions in this directory: advertises and serves session/load, session/resume
    /// and session/list, which find them after a restart.
    #[arg(long, value_name = "DIR")]
    history: Option<PathBuf>,
    /// With --history: do not advertise session/resume (clients must use session/load).
    #[arg(long, requires = "history")]
    no_resume: bool,
    /// Do not advertise or serve the `_session/steering` extension (a client then queues what
    /// is typed during a turn).
    #[arg(long)]
    no_steering: bool,
    /// With --history: answer session/load and session/resume without the session's modes and
    /// config options, as some agents do (a client then shows what it remembered).
    #[arg(long, requires = "history")]
    bare_reopen: bool,
    /// The ACP version to speak: 1, or 2 (the v2 Preview; needs a build with the feature
    /// unstable_protocol_v2; a v2 agent refuses a client that offers only 1).
    #[arg(long, value_enum, value_name = "VERSION", default_value = "1", conflicts_with = "history")]
    protocol: Protocol,
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
Ctrl-C cancels the running turn (session/cancel); a second Ctrl-C quits (one quits an idle client). \
SIGTERM or SIGHUP ends the client wherever it is: the turn is cancelled and the agent closed. No process \
started for the agent outlives the client.\n\n\
Under --deny the agent may read files in the roots but not write them nor run commands (neither is \
advertised); under --ask each write or command is asked first unless it belongs to a tool call the user \
just allowed.\n\n\
Elicitations (the agent asks for input): on a terminal (and without --elicit) a form is filled field \
by field (typed and checked against its schema; Enter takes a default or skips an optional field) and \
then accepted (a), declined (d) or cancelled (c, or Ctrl-C); a URL is shown, inert, and accepted (y, \
once opened) or declined (n). /cancel typed at a form's field or at a permission question is not an \
answer: it cancels the turn (the questions are answered cancelled, then session/cancel). Not on a terminal: forms are answered from --elicit FILE.json (else not advertised), \
and URLs are declined.\n\n\
Scripting (one prompt: -p TEXT, -p - for stdin, or --file PATH):\n  \
acp client --format json -p 'summarize @README.md' -- acp agent | jq -c 'select(.type==\"summary\")'\n  \
git diff | acp client --quiet -p - -- acp agent\n\n\
A word @PATH attaches that file (inside the roots): embedded when the agent advertises \
embeddedContext (at most 1 MiB), a resource_link otherwise. --image needs an agent that advertises images.\n\n\
Exit codes:\n  \
0    end_turn (interactive: the user quit)\n  \
1    local failure (bad arguments, the agent could not start, a missing file, I/O)\n  \
2    usage error\n  \
3    cancelled\n  \
4    refusal\n  \
5    max_tokens or max_turn_requests\n  \
6    protocol error (the agent answered with an error or something invalid)\n  \
7    the agent died\n  \
8    authentication required (--auth METHOD_ID)\n  \
9    no answer to initialize/authenticate/session/new within --connect-timeout\n  \
10   --resume/--continue: no such session, or the agent can reopen none\n  \
129  ended by SIGHUP (the turn cancelled, the agent closed)\n  \
130  quit with Ctrl-C\n  \
143  ended by SIGTERM (the turn cancelled, the agent closed)\n\n\
Without -p, each line is a prompt; /help lists the commands (/cancel, /mode, /model, /config, /sessions, \
/new, /load, /quit) and the agent's own; //text sends /text. On a terminal lines are edited with history \
($ACP_STATE_DIR, else $XDG_STATE_HOME/acp, else ~/.local/state/acp) and Tab completes commands."
)]
struct ClientArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// A directory the agent may read and write files and run commands in (repeatable;
    /// default: the working directory).
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Run this one prompt, then exit with its stop reason, instead of the interactive loop
    /// (`-` reads the prompt from stdin). Words `@PATH` attach files.
    #[arg(short = 'p', long = "prompt", value_name = "TEXT")]
    prompt: Option<String>,
    /// Run the prompt in this file (like -p).
    #[arg(long, value_name = "PATH", conflicts_with = "prompt")]
    file: Option<PathBuf>,
    /// Send this image with the prompt (png, jpeg, gif or webp; repeatable); the agent must
    /// advertise images.
    #[arg(long = "image", value_name = "FILE")]
    images: Vec<PathBuf>,
    /// What stdout carries: the session drawn (text) or every frame as NDJSON and a final
    /// summary record (json; one prompt only).
    /// Default: `[defaults] format` of the config file for one prompt, else text.
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<Format>,
    /// Print only the agent's final message (its text after the turn's last tool call) on
    /// stdout (one prompt only; errors and questions on stderr).
    #[arg(short = 'q', long, conflicts_with = "format")]
    quiet: bool,
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
    /// names to values; without it forms are asked on the terminal, or, without a terminal,
    /// not advertised.
    #[arg(long, value_name = "FILE.json")]
    elicit: Option<PathBuf>,
    /// How long the agent gets to answer each of initialize, authenticate and session/new
    /// (exit code 9 past it; default: the config's connect_timeout, else 30).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    connect_timeout: Option<u64>,
    /// Offer terminals to the agent even when the kernel cannot confine them to the roots
    /// (Landlock); without it such a client does not offer terminals.
    #[arg(long)]
    unconfined_terminals: bool,
    /// Talk to a remote agent at this URL instead of spawning AGENT_CMD: ws://HOST:PORT/acp
    /// (WebSocket; wss:// with TLS) or http://HOST:PORT/acp (Streamable HTTP; https:// with
    /// TLS, HTTP/2 when the server offers it), e.g. one served by `acp serve`.
    #[arg(long, value_name = "URL", conflicts_with_all = ["agent", "agent_name"])]
    connect: Option<String>,
    /// With --connect to an `acp serve --share` server: join the live session ID that another
    /// client holds (its id as that client shows it) instead of opening one: see its updates,
    /// prompt in it, answer its permission asks (the first answer wins). Needs the credential
    /// (--token-file) that opened the session's connection. Unstable (the draft RFD
    /// "multi-client session attach").
    #[arg(long, value_name = "ID", requires = "connect", conflicts_with_all = ["resume", "continue_last"])]
    attach: Option<String>,
    /// With --attach: watch only (prompts, cancels and permission answers are refused).
    #[arg(long, requires = "attach", conflicts_with = "prompt")]
    observe: bool,
    /// Run the named agent of the config file (`[agents.NAME]`) instead of AGENT_CMD.
    #[arg(long = "agent", value_name = "NAME", conflicts_with = "agent")]
    agent_name: Option<String>,
    /// Reopen a recorded session (its id in `acp sessions`) with session/resume or
    /// session/load; exit code 10 if the agent supports neither.
    #[arg(long, value_name = "ID", conflicts_with_all = ["continue_last", "connect"])]
    resume: Option<String>,
    /// Reopen the latest open session of this project with the same agent (as --resume).
    #[arg(long = "continue", conflicts_with = "connect")]
    continue_last: bool,
    /// With --connect: a file holding the bearer token the server requires.
    #[arg(long, value_name = "FILE", requires = "connect")]
    token_file: Option<PathBuf>,
    /// With --connect wss://… or https://…: trust only the CA certificates in this PEM file (a private CA)
    /// instead of the system's roots.
    #[arg(long, value_name = "PEM", requires = "connect")]
    ca_file: Option<PathBuf>,
    /// The ACP version to offer: 1, or 2 (the v2 Preview; needs a build with the feature
    /// unstable_protocol_v2; an agent that answers 1 is an error, exit code 6).
    #[arg(long, value_enum, value_name = "VERSION", default_value = "1")]
    protocol: Protocol,
    /// The agent's command line, after `--`.
    #[arg(last = true, value_name = "AGENT_CMD")]
    agent: Vec<OsString>,
}

/// What `acp client` writes on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The session drawn for a person.
    Text,
    /// NDJSON: one record per frame, then a summary.
    Json,
}

/// The one prompt of `acp client`, from -p, stdin or --file; checks that json, quiet and images
/// have one.
fn client_prompt(args: &ClientArgs) -> Result<Option<String>, String> {
    let prompt = match (&args.prompt, &args.file) {
        (Some(text), _) if text == "-" => Some(client::read_prompt(std::path::Path::new("-"))?),
        (Some(text), _) => Some(text.clone()),
        (None, Some(path)) => Some(client::read_prompt(path)?),
        (None, None) => None,
    };
    if prompt.is_none() {
        let needs = if args.quiet {
            Some("--quiet")
        } else if args.format == Some(Format::Json) {
            Some("--format json")
        } else {
            (!args.images.is_empty()).then_some("--image")
        };
        if let Some(flag) = needs {
            return Err(format!("{flag} needs one prompt (-p TEXT, -p - or --file PATH), not the interactive loop"));
        }
    }
    if args.prompt.as_deref() == Some("-") && args.policy.ask {
        return Err("-p - reads the prompt from stdin, so --ask cannot read answers there".to_owned());
    }
    Ok(prompt)
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  acp serve --listen 127.0.0.1:8765 -- acp agent\n  \
acp serve --listen 0.0.0.0:8765 --token-file /etc/acp/token -- npx @zed-industries/claude-code-acp\n  \
acp serve --listen 0.0.0.0:8443 --token-file /etc/acp/token --tls-cert cert.pem --tls-key key.pem -- acp agent\n  \
acp client --connect ws://127.0.0.1:8765/acp\n  \
acp client --connect http://127.0.0.1:8765/acp\n  \
acp client --connect wss://acp.example.com:8443/acp --token-file token --ca-file ca.pem\n  \
acp client --connect https://acp.example.com:8443/acp --token-file token --ca-file ca.pem\n\n\
Endpoint /acp: a WebSocket upgrade (one JSON-RPC message per text frame) or Streamable HTTP \
(POST each message, GET the SSE streams, DELETE to end); health check /healthz. With --tls-cert and --tls-key \
the same endpoint is served over TLS only (https://, wss://; ALPN h2 and http/1.1). SIGTERM, SIGINT or SIGHUP: \
stop accepting, send session/cancel for every prompt turn in flight, wait for the answers (up to 5 s), end every \
agent's input, reap the agents, exit.")]
struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
    listen: std::net::SocketAddr,
    /// A file holding the bearer token every client must send (required to listen on
    /// anything but loopback); one token per line for several, each a credential of its own
    /// (a Streamable HTTP connection answers only the token that opened it).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Serve TLS with this certificate chain (PEM, leaf first); needs --tls-key.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
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
    /// Close a TCP connection that has not sent a complete request head this many seconds
    /// after it opened (or after the first byte of a later one).
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout: u64,
    /// Answer 408 to a POST whose body has not arrived whole after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    body_timeout: u64,
    /// Close a TCP connection with no request in flight for this many seconds (at most
    /// --idle-timeout; an open stream or WebSocket is a request in flight).
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    keep_alive_timeout: u64,
    /// TCP connections held that have not sent an accepted token yet (without --token-file:
    /// no complete request yet); one more closes the oldest of them.
    #[arg(long, value_name = "N", default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_unauthenticated: u64,
    /// Resumable streams (Streamable HTTP and WebSocket): how long a connection whose stream
    /// no client reads keeps its agent and its turn, waiting for the client to resume it (then
    /// it ends as on DELETE).
    #[cfg(feature = "unstable_resumable_transport")]
    #[arg(long, value_name = "SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    resume_grace: u64,
    /// Let a client of another connection join a live session (`acp client --attach ID`)
    /// as an observer or a controller, when it holds the credential that opened the
    /// session's connection (the same --token-file line; without tokens, anyone who can reach
    /// the loopback address). Unstable (the draft RFD "multi-client session attach").
    #[arg(long)]
    share: bool,
    /// The agent's command line, after `--`.
    #[arg(last = true, required = true, value_name = "AGENT_CMD")]
    agent: Vec<OsString>,
}

/// A node id: letters, digits, `_` (it becomes part of a header value and a routing key).
fn node_id(text: &str) -> Result<String, String> {
    let ok = !text.is_empty() && text.len() <= 32 && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok { Ok(text.to_owned()) } else { Err("1 to 32 letters, digits or _".to_owned()) }
}

/// `acp sessions …`.
fn sessions(action: Option<SessionsAction>, load: impl FnOnce() -> Result<acp_cli::config::Loaded, String>) -> Exit {
    match action.unwrap_or(SessionsAction::List { all: false, agent: None }) {
        SessionsAction::List { all, agent: None } => manage::sessions_list(all, None),
        SessionsAction::List { all, agent: Some(name) } => {
            let loaded = match load() {
                Ok(loaded) => loaded,
                Err(e) => return manage::fail(&e),
            };
            match loaded.config.agent(&name, &loaded.path) {
                Ok(entry) => manage::sessions_list(all, Some((&name, entry))),
                Err(e) => manage::fail(&e),
            }
        }
        SessionsAction::Show { id } => manage::sessions_show(&id),
        SessionsAction::Close { id } => manage::sessions_close(&id),
        SessionsAction::Prune { older_than } => manage::sessions_prune(older_than),
    }
}

#[derive(Debug, Args)]
struct DemoArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// Show the agent's stderr.
    #[arg(long)]
    show_stderr: bool,
    /// The ACP version the demo's client and agent speak: 1, or 2 (the v2 Preview; needs a
    /// build with the feature unstable_protocol_v2).
    #[arg(long, value_enum, value_name = "VERSION", default_value = "1")]
    protocol: Protocol,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let explicit = cli.config;
    let load = || acp_cli::config::load(explicit.as_deref());
    match cli.command {
        Command::Agents => match load() {
            Ok(loaded) => manage::agents(&loaded).into(),
            Err(e) => manage::fail(&e).into(),
        },
        Command::Config { action } => match (load(), action) {
            (Ok(loaded), ConfigAction::Show) => manage::config_show(&loaded).into(),
            (Ok(loaded), ConfigAction::Path) => {
                println!("{}", loaded.path.display());
                ExitCode::SUCCESS
            }
            (Err(e), _) => manage::fail(&e).into(),
        },
        Command::Sessions { action } => sessions(action, load).into(),
        Command::Agent(args) => {
            if let Err(e) = args.protocol.available() {
                eprintln!("acp agent: {e}");
                return ExitCode::from(2);
            }
            let mut config = AgentConfig::default();
            config.slow_delay = Duration::from_millis(args.slow_ms);
            config.log = !args.quiet;
            config.max_sessions = args.max_sessions;
            config.history = args.history;
            config.history_resume = !args.no_resume;
            config.reopen_state = !args.bare_reopen;
            config.steering = !args.no_steering;
            #[cfg(feature = "unstable_protocol_v2")]
            let served = match args.protocol {
                Protocol::V2 => acp_cli::agent::v2::ReferenceAgentV2::with_config(config).serve_stdio(),
                Protocol::V1 => ReferenceAgent::with_config(config).serve_stdio(),
            };
            #[cfg(not(feature = "unstable_protocol_v2"))]
            let served = ReferenceAgent::with_config(config).serve_stdio();
            match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("acp agent: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Client(args) => {
            let prompt = match client_prompt(&args) {
                Ok(prompt) => prompt,
                Err(e) => {
                    eprintln!("acp client: {e}");
                    return ExitCode::from(2);
                }
            };
            let mut config = ClientConfig::new(args.agent);
            config.cwd = args.cwd;
            config.connect = args.connect;
            if let Some(session) = args.attach {
                if args.protocol != Protocol::V1 {
                    eprintln!("acp client: --attach speaks ACP v1 only; drop --protocol 2");
                    return ExitCode::from(2);
                }
                config.attach = Some(acp_cli::client::Attach { session, observe: args.observe });
            }
            let choice = setup::Choice {
                name: args.agent_name,
                resume: args.resume,
                continue_last: args.continue_last,
                policy: args.policy.policy(),
                connect_timeout: args.connect_timeout,
                roots: args.roots,
            };
            let loaded = match load() {
                Ok(loaded) => loaded,
                Err(e) => {
                    eprintln!("acp client: {e}");
                    return Exit::Failure.into();
                }
            };
            if let Err((e, exit)) = setup::apply(&mut config, choice, &loaded) {
                eprintln!("acp client: {e}");
                return exit.into();
            }
            // `[defaults] format` applies to one-prompt runs when --format is not given.
            let configured_json = loaded.config.defaults.format == Some(acp_cli::config::Format::Json);
            let format =
                args.format.unwrap_or(if configured_json && prompt.is_some() { Format::Json } else { Format::Text });
            config.prompt = prompt;
            config.images = args.images;
            config.output = match (args.quiet, format) {
                (true, _) => Output::Quiet,
                (false, Format::Json) => Output::Json,
                (false, Format::Text) => Output::Text,
            };
            config.show_stderr = args.show_stderr;
            config.auth = args.auth;
            config.elicit = args.elicit;
            config.unconfined_terminals = args.unconfined_terminals;
            config.die_with_client = true;
            config.ca_file = args.ca_file;
            config.protocol = args.protocol;
            if let Some(path) = &args.token_file {
                match acp_cli::files::read_token(path) {
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
            config.protocol = args.protocol;
            demo::run(config).into()
        }
        Command::Serve(args) => {
            let mut config = ServeConfig::new(args.listen, args.agent);
            if let Some(path) = &args.token_file {
                match acp_cli::files::read_tokens(path) {
                    Ok(tokens) => config.tokens = tokens,
                    Err(e) => {
                        eprintln!("acp serve: {e}");
                        return ExitCode::from(2);
                    }
                }
            }
            config.options.max_connections = usize::try_from(args.max_connections).unwrap_or(usize::MAX);
            config.options.idle_timeout = Some(Duration::from_secs(args.idle_timeout));
            config.options.header_timeout = Duration::from_secs(args.header_timeout);
            config.options.body_timeout = Duration::from_secs(args.body_timeout);
            config.options.keep_alive_timeout = Duration::from_secs(args.keep_alive_timeout);
            config.options.max_unauthenticated = usize::try_from(args.max_unauthenticated).unwrap_or(usize::MAX);
            config.options.node_id = args.node_id;
            config.options.share_sessions = args.share;
            #[cfg(feature = "unstable_resumable_transport")]
            if let Some(resumable) = config.options.resumable.as_mut() {
                resumable.grace = Duration::from_secs(args.resume_grace);
            }
            if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
                let pem = |path: &std::path::Path| {
                    acp_cli::files::check_regular(path, acp_cli::files::MAX_PEM_BYTES)
                        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display())))
                };
                match pem(cert)
                    .and_then(|()| pem(key))
                    .and_then(|()| acp_tokio::remote::TlsServer::from_pem_files(cert, key))
                {
                    Ok(tls) => config.options.tls = Some(tls),
                    Err(e) => {
                        eprintln!("acp serve: {e}");
                        return ExitCode::from(2);
                    }
                }
            }
            match serve::run(config) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("acp serve: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Check(args) => check_cli::check(args, load),
        Command::Record(args) => ExitCode::from(record::run(&RecordConfig::new(args.out, args.agent))),
        Command::Replay(args) => {
            let mode = match (args.summary, args.check) {
                (true, _) => ReplayMode::Summary,
                (_, true) => ReplayMode::Check,
                _ => ReplayMode::Render,
            };
            ExitCode::from(replay::run(&ReplayConfig::new(args.file, mode)))
        }
        Command::ExecChild(args) => client::exec_child(args.parent_pid, &args.command).into(),
        Command::CheckRelay { socket } => ExitCode::from(acp_cli::check::client::relay::run(&socket)),
    }
}
