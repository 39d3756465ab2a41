//! `acp client -- AGENT_CMD...`: a terminal client for any ACP agent.
//!
//! [`run`] spawns the agent, initializes (advertising what the permission policy lets it
//! serve: `fs.readTextFile`, and unless `--deny` `fs.writeTextFile` and `terminal`, served by
//! [`acp_services`] inside the `--root` directories), opens a session in the working
//! directory, then runs one prompt (`-p`) or an interactive loop, whose slash commands
//! (`commands`, `control`, `options`, `reopen`) act on the session and which edits lines on a
//! terminal (`editor`). `initialize`,
//! `authenticate` and `session/new` each have a deadline ([`ClientConfig::connect_timeout`]).
//!
//! Both protocol versions run this one client: the session loop speaks to its agent through a
//! `link` chosen once by [`ClientConfig::protocol`] (v1 passes the session's requests through;
//! v2 maps them and its answers and upserts into the v1 shapes the session draws), so every
//! option, slash command and question works the same on either.
//!
//! All terminal output happens on the calling thread, which owns the renderer: every other
//! thread (the turn's update reader, the connection's handlers, the agent's stderr drain,
//! stdin, Ctrl-C) sends it an event. So a permission question never interleaves with
//! streamed text, and Ctrl-C is handled in the same place: it cancels the running turn
//! (`session/cancel`, which also answers a pending permission question `cancelled`), and a
//! second Ctrl-C quits. `SIGTERM` and `SIGHUP` end the client wherever it is: the running turn
//! is cancelled, the agent closed and every process the client started ended, and the exit
//! status is 128 + the signal (see `interrupt`).
//!
//! Every queue between the agent and the screen is bounded: the UI queue holds
//! [`UI_QUEUE`] events and the connection buffers at most [`MAX_BUFFERED`] updates, so a slow
//! terminal slows the agent down instead of growing the client's memory.
//!
//! For scripts ([`Output`]), `--format json` taps the byte streams to the agent and writes every
//! frame and a summary as NDJSON (`tap`, `summary`), and `--quiet` prints the final message
//! alone; `@path` words and `--image` files become the prompt's attachments (`attach`).
//!
//! No process outlives the client: the agent dies with it (`acp __exec-child`, see
//! [`exec_child`]), and at shutdown terminals and orphans are killed (see `children`).
//!
//! stdout and stderr are written by threads of their own (`outlet`): a terminal
//! that is slow (or paused, or a pipe nobody reads) slows the UI thread down, but once a
//! signal came (Ctrl-C, `SIGTERM`, `SIGHUP`), no write waits more than half a second for an
//! output that does not move, so the signal is acted on (the turn cancelled, or the client
//! ended with its agent) whatever stdout does, and the exit does not wait on output nobody
//! reads.

mod attach;
mod children;
mod commands;
mod connect;
mod control;
mod diff;
mod editor;
mod elicit;
mod exec_child;
mod form;
mod guard;
mod handler;
mod interrupt;
mod journal;
mod link;
mod offer;
mod options;
mod output;
mod process;
mod questions;
#[cfg(feature = "unstable_resumable_transport")]
mod reload;
mod remote;
mod render;
mod reopen;
mod resume;
mod session;
mod shared;
mod steer;
mod summary;
mod tap;
mod terminal_auth;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

use acp_blocking::acp_proto::types::{PromptResponse, SessionNotification, SessionUpdate};

pub use crate::permission::Policy;
pub use attach::{MAX_ATTACHMENTS, MAX_EMBED, MAX_IMAGE, MAX_INLINE_TOTAL, MAX_PROMPT, read_prompt};
pub use exec_child::{EXEC_CHILD, exec_child};
pub use output::Output;
pub use render::Style;
pub use shared::Attach;
// For `acp record` and `acp check` (spawning what dies with them) and `acp replay` (drawing a
// transcript).
pub(crate) use exec_child::command as exec_child_command;
pub(crate) use render::Renderer;

use crate::{Exit, outlet};
use guard::Approvals;
use guard::{ElicitAsk, PermissionAsk};
use handler::{Activity, CliClient};
use interrupt::Interrupts;
use process::AgentProcess;
use session::{Session, Settings};

/// Events the UI queue holds; a sender blocks while it is full (Ctrl-C and wake-ups only try).
pub const UI_QUEUE: usize = 64;
/// Turn updates and notifications the connection buffers before it stops reading from the
/// agent ([`acp_blocking::ClientOptions::max_buffered`]).
pub const MAX_BUFFERED: usize = 256;
/// The default deadline of `initialize`, `authenticate` and `session/new`.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// What `acp client` runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// The agent's command line (program and arguments).
    pub agent: Vec<OsString>,
    /// How permission requests are answered; `None`: ask when stdin is a terminal, reject
    /// otherwise.
    pub policy: Option<Policy>,
    /// The directories the agent may read, write and run commands in; empty: the session's
    /// working directory.
    pub roots: Vec<PathBuf>,
    /// The session's working directory; `None`: the current directory.
    pub cwd: Option<PathBuf>,
    /// One prompt to run (then exit with its stop reason); `None`: the interactive loop.
    pub prompt: Option<String>,
    /// Show the agent's stderr as it is written (otherwise only its tail, if it dies).
    pub show_stderr: bool,
    /// Why the policy applies, shown with each automatic answer (default: the flag's name).
    pub policy_note: Option<String>,
    /// The authentication method to use before opening the session.
    pub auth: Option<String>,
    /// A JSON object of field names to values that answers the agent's forms
    /// (`elicitation/create`, form mode); without it forms are filled on the terminal, or,
    /// when there is none, declined and not advertised.
    pub elicit: Option<PathBuf>,
    /// Lines printed before connecting (the demo's introduction).
    pub banner: Vec<String>,
    /// How to draw; `None`: [`Style::detect`].
    pub style: Option<Style>,
    /// How long the agent gets to answer each of `initialize`, `authenticate` and
    /// `session/new` (default [`CONNECT_TIMEOUT`]); past it the client exits with
    /// [`Exit::ConnectTimeout`].
    pub connect_timeout: Duration,
    /// Offer terminals even when the kernel cannot confine them to the roots (default off:
    /// such a client does not advertise `terminal`).
    pub unconfined_terminals: bool,
    /// Start the agent through `acp __exec-child` so that the kernel kills it if the client
    /// dies, even by `SIGKILL` (default off; needs the current executable to be `acp`, as it
    /// is for the `acp` command and its demo).
    pub die_with_client: bool,
    /// A remote agent's URL (`ws://host:port/acp`, or `http://…` for Streamable HTTP), instead
    /// of `agent`'s command.
    pub connect: Option<String>,
    /// Sent as `Authorization: Bearer TOKEN` to the remote agent.
    pub token: Option<String>,
    /// For `wss://`: trust only the CAs of this PEM file instead of the platform's roots.
    pub ca_file: Option<PathBuf>,
    /// What goes to stdout (default [`Output::Text`]); json and quiet need a `prompt`.
    pub output: Output,
    /// Images to send with the prompt (`--image`; the agent must advertise images).
    pub images: Vec<PathBuf>,
    /// Environment variables set for the agent process (a named agent's `env`).
    pub agent_env: Vec<(OsString, OsString)>,
    /// The agent process's working directory (a named agent's `cwd`); `None`: the client's.
    pub agent_cwd: Option<PathBuf>,
    /// Record the session in the session database ([`crate::store`]) under this agent.
    pub record: Option<crate::store::AgentRef>,
    /// Reopen this remembered session instead of opening a new one.
    pub resume: Option<Resume>,
    /// With `connect`: join this session of another client instead of opening one (see
    /// [`Attach`]).
    pub attach: Option<Attach>,
    /// The ACP version to speak (default v1); v2 needs the feature `unstable_protocol_v2`.
    /// Both run the same session, over the version's link (`link`).
    pub protocol: crate::Protocol,
}

/// A remembered session to reopen (`--resume`, `--continue`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    /// Its local id in the session database.
    pub local_id: i64,
    /// The agent's session id.
    pub session_id: String,
    /// The ACP version it was spoken in, which reopens it.
    pub protocol: crate::Protocol,
}

impl ClientConfig {
    /// A client for the agent command line `agent`, with the defaults.
    pub fn new(agent: Vec<OsString>) -> ClientConfig {
        ClientConfig {
            agent,
            policy: None,
            roots: Vec::new(),
            cwd: None,
            prompt: None,
            show_stderr: false,
            policy_note: None,
            auth: None,
            elicit: None,
            banner: Vec::new(),
            style: None,
            connect_timeout: CONNECT_TIMEOUT,
            unconfined_terminals: false,
            die_with_client: false,
            connect: None,
            token: None,
            output: Output::Text,
            images: Vec::new(),
            agent_env: Vec::new(),
            agent_cwd: None,
            record: None,
            resume: None,
            attach: None,
            ca_file: None,
            protocol: crate::Protocol::V1,
        }
    }

    /// A client for the remote agent at `url` (`ws://host:port/acp` or `http://host:port/acp`).
    pub fn remote(url: impl Into<String>) -> ClientConfig {
        ClientConfig { connect: Some(url.into()), ..ClientConfig::new(Vec::new()) }
    }
}

/// What the UI thread is told.
#[derive(Debug)]
pub(crate) enum UiEvent {
    /// An update of the running turn.
    Update(SessionUpdate),
    /// The running turn ended.
    TurnEnded(Result<PromptResponse, acp_blocking::Error>),
    /// An update outside a turn.
    Outside(SessionNotification),
    /// The agent asks for permission.
    Permission(PermissionAsk),
    /// The agent asks for input, to be asked on the terminal.
    Elicit(ElicitAsk),
    /// An elicitation was answered (or a URL one completed).
    Elicitation(elicit::ElicitNote),
    /// The client served (or refused) an `fs/*` or `terminal/*` request.
    Activity(Activity),
    /// A line of the agent's stderr.
    Stderr(String),
    /// A line of stdin.
    Line(String),
    /// The end of stdin.
    InputEnd,
    /// Ctrl-C, `SIGTERM` or `SIGHUP` (a wake-up: the signal is noted in `Interrupts`).
    Interrupt,
    /// A background call finished.
    Wake,
    /// The answer to a steering request (`steer.rs`): the text, and the answer or the error.
    Steered {
        /// What was steered.
        text: String,
        /// The agent's outcome (`injected` when it was added), or the error in words.
        answer: Result<String, String>,
    },
}

/// Runs `acp client`; returns the exit status ([`Exit`]). With [`Output::Json`] the summary
/// record ends stdout whatever happened; with [`Output::Quiet`] the final text is printed.
pub fn run(config: ClientConfig) -> Exit {
    if let Err(e) = config.protocol.available() {
        eprintln!("acp client: {e}");
        return Exit::Usage;
    }
    let tap = config.output.tap();
    let exit = run_session(&config, tap.as_ref());
    config.output.finish(tap.as_ref(), exit.code());
    // What is still buffered goes out; after a signal, at most a short wait for an output
    // nobody reads (see `outlet`).
    outlet::drain();
    exit
}

/// What the client settles before it starts the agent.
struct Prepared {
    /// The session's working directory, absolute.
    cwd: PathBuf,
    /// Whether stdin is a terminal (questions are asked there).
    stdin_tty: bool,
    /// How permission requests are answered.
    policy: Policy,
}

/// Prints the banner, makes this process the subreaper of the agent's orphans, and settles the
/// working directory and the permission policy; `None` after reporting why not.
fn prepare(config: &ClientConfig, render: &mut Renderer) -> Option<Prepared> {
    for line in &config.banner {
        render.info(line);
    }
    if let Err(e) = children::become_subreaper() {
        render.warn(&format!("processes that leave the agent's process group may outlive the client: {e}"));
    }
    let cwd = match config.cwd.clone().map_or_else(std::env::current_dir, Ok).and_then(std::path::absolute) {
        Ok(cwd) => cwd,
        Err(e) => {
            render.error(&format!("cannot determine the working directory: {e}"));
            return None;
        }
    };
    let stdin_tty = std::io::stdin().is_terminal();
    let policy = config.policy.unwrap_or(if stdin_tty { Policy::Ask } else { Policy::Deny });
    Some(Prepared { cwd, stdin_tty, policy })
}

fn run_session(config: &ClientConfig, tap: Option<&tap::Tap>) -> Exit {
    let style = config.style.unwrap_or_else(Style::detect);
    let mut render = Renderer::new(Box::new(outlet::stdout()), Box::new(outlet::stderr()), style);
    if config.output != Output::Text {
        render.diagnostics_only();
    }
    let Some(Prepared { cwd, stdin_tty, policy }) = prepare(config, &mut render) else {
        return Exit::Failure;
    };
    let roots: Vec<PathBuf> = if config.roots.is_empty() { vec![cwd.clone()] } else { config.roots.clone() };
    let (services, offer) =
        match offer::services(&roots, &cwd, policy, config.unconfined_terminals, config.die_with_client) {
            Ok((services, offer)) => (Arc::new(services), offer),
            Err(e) => {
                render.error(&e);
                return Exit::Failure;
            }
        };

    let prepared = match config.prompt.as_deref().map(|text| attach::prepare(text, &config.images, &roots, &cwd)) {
        Some(Ok(prepared)) => Some(prepared),
        Some(Err(e)) => {
            render.error(&e);
            return Exit::Failure;
        }
        None => None,
    };

    let answers = match config.elicit.as_deref().map(elicit::load_answers).transpose() {
        Ok(answers) => answers.map(Arc::new),
        Err(e) => {
            render.error(&e);
            return Exit::Failure;
        }
    };

    let (tx, rx) = mpsc::sync_channel(UI_QUEUE);
    let (interrupts, installed) = Interrupts::install(tx.clone());
    if let Err(e) = installed {
        render.warn(&format!("Ctrl-C will not cancel turns: {e}"));
    }

    let Some((process, stdin, stdout)) = start_agent(config, &mut render, tx.clone()) else {
        return Exit::Failure;
    };
    let approvals = Arc::new(Approvals::default());
    let shutdown = Arc::new(AtomicBool::new(false));
    // A user at a terminal answers elicitations there (forms only without `--elicit`).
    let on_terminal = stdin_tty && (std::io::stdout().is_terminal() || std::io::stderr().is_terminal());
    let forms = answers.is_some() || on_terminal;
    let elicit = (answers, on_terminal);
    #[cfg(feature = "unstable_resumable_transport")]
    let make_client = {
        let (services, tx, approvals, shutdown, elicit) =
            (services.clone(), tx.clone(), approvals.clone(), shutdown.clone(), elicit.clone());
        move || {
            CliClient::new(services.clone(), tx.clone(), policy, approvals.clone(), shutdown.clone(), elicit.clone())
        }
    };
    let client = CliClient::new(services.clone(), tx.clone(), policy, approvals.clone(), shutdown.clone(), elicit);
    let (stdin, stdout) = match tap {
        Some(tap) => {
            let (writer, reader) = tap.wrap(stdin, stdout, acp_blocking::acp_proto::Config::default().max_frame_len);
            (Box::new(writer) as Box<dyn std::io::Write + Send>, Box::new(reader) as Box<dyn std::io::Read + Send>)
        }
        None => (stdin, stdout),
    };
    let conn = match link::open(config.protocol, client, stdout, stdin) {
        Ok(conn) => conn,
        Err(e) => {
            render.error(&format!("could not start the connection: {e}"));
            return Exit::Failure;
        }
    };

    let settings = Settings {
        policy,
        note: policy_note(config, policy, stdin_tty),
        stdin_tty,
        show_stderr: config.show_stderr,
        connect_timeout: config.connect_timeout,
        offer,
        forms,
    };
    let shared = session::Shared { interrupts, approvals, shutdown, eliciting: Arc::default() };
    let mut session = Session::new(render, (tx, rx), conn, process, services, settings, shared);
    session.prepared = prepared;
    #[cfg(feature = "unstable_resumable_transport")]
    if tap.is_none() && config.connect.is_some() {
        session.redial = Some(reload::redial(config.clone(), make_client));
    }
    let exit = session.run(config, &cwd);
    session.shutdown(exit);
    exit
}

/// The agent's input and output, as the connection sees them.
type AgentIo = (AgentProcess, Box<dyn std::io::Write + Send>, Box<dyn std::io::Read + Send>);

/// Starts the agent's process, or connects to the remote agent; `None` after reporting why not.
fn start_agent(config: &ClientConfig, render: &mut Renderer, ui: mpsc::SyncSender<UiEvent>) -> Option<AgentIo> {
    if let Some(url) = &config.connect {
        let (link, io) = connect_remote(url, config, render)?;
        return Some((AgentProcess::remote(link), Box::new(io.writer), Box::new(io.reader)));
    }
    // On the main thread: the agent's death signal follows the thread that spawned it.
    let place = process::Place { env: &config.agent_env, cwd: config.agent_cwd.as_deref() };
    match AgentProcess::spawn(&config.agent, place, config.show_stderr, config.die_with_client, ui) {
        Ok((process, stdin, stdout)) => Some((process, Box::new(stdin), Box::new(stdout))),
        Err(e) => {
            let command: Vec<String> = config.agent.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            render.error(&format!("could not start the agent `{}`: {e}", command.join(" ")));
            None
        }
    }
}

/// Opens the link to the remote agent at `url` (`--connect`) and says so; `None` after
/// reporting why not. Both protocol versions' clients connect through here.
fn connect_remote(
    url: &str,
    config: &ClientConfig,
    render: &mut Renderer,
) -> Option<(remote::RemoteAgent, remote::RemoteIo)> {
    let (token, timeout, ca_file) = (config.token.clone(), config.connect_timeout, config.ca_file.as_deref());
    match remote::RemoteAgent::connect(url, token, timeout, ca_file, config.attach.clone()) {
        Ok((link, io, info)) => {
            match info.connection_id.as_deref() {
                Some(id) => render.info(&format!("connected to {url} (connection {id})")),
                // Streamable HTTP: the server names the connection when it answers initialize.
                None => render.info(&format!("connected to {url}")),
            }
            Some((link, io))
        }
        Err(e) => {
            render.error(&format!("could not connect: {e}"));
            None
        }
    }
}

/// Why the policy applies, shown with each automatic answer.
fn policy_note(config: &ClientConfig, policy: Policy, stdin_tty: bool) -> String {
    let defaulted = config.policy.is_none() && !stdin_tty;
    match (&config.policy_note, policy) {
        (Some(note), _) => note.clone(),
        (None, Policy::Deny) if defaulted => {
            "stdin is not a terminal: rejected; use --allow or --ask to change that".into()
        }
        (None, Policy::Deny) => "--deny".into(),
        (None, Policy::Allow) => "--allow".into(),
        (None, Policy::Ask) => "--ask".into(),
    }
}
