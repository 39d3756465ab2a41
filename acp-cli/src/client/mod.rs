//! `acp client -- AGENT_CMD...`: a terminal client for any ACP agent.
//!
//! [`run`] spawns the agent, initializes (advertising `fs.readTextFile`, `fs.writeTextFile`
//! and `terminal`, served by [`acp_services`] inside the `--root` directories), opens a
//! session in the working directory, then runs one prompt (`-p`) or an interactive loop.
//!
//! All terminal output happens on the calling thread, which owns the renderer: every other
//! thread (the turn's update reader, the connection's handlers, the agent's stderr drain,
//! stdin, Ctrl-C) sends it an event. So a permission question never interleaves with
//! streamed text, and Ctrl-C is handled in the same place: it cancels the running turn
//! (`session/cancel`, which also answers a pending permission question `cancelled`), and a
//! second Ctrl-C quits.

mod diff;
mod handler;
mod permission;
mod process;
mod render;
mod sanitize;
mod session;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;

use acp_blocking::acp_proto::types::{PromptResponse, SessionNotification, SessionUpdate};
use acp_blocking::{ClientConnection, ClientOptions};
use acp_services::{ClientServices, FsSandbox, TerminalConfig, Terminals};

pub use permission::Policy;
pub use render::Style;

use crate::Exit;
use handler::{Activity, CliClient, PermissionAsk};
use process::AgentProcess;
use render::Renderer;
use session::{Session, Settings};

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
    /// Lines printed before connecting (the demo's introduction).
    pub banner: Vec<String>,
    /// How to draw; `None`: [`Style::detect`].
    pub style: Option<Style>,
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
            banner: Vec::new(),
            style: None,
        }
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
    /// The client served (or refused) an `fs/*` or `terminal/*` request.
    Activity(Activity),
    /// A line of the agent's stderr.
    Stderr(String),
    /// A line of stdin.
    Line(String),
    /// The end of stdin.
    InputEnd,
    /// Ctrl-C.
    Interrupt,
    /// A background call finished.
    Wake,
}

/// Runs `acp client`; returns the exit status ([`Exit`]).
pub fn run(config: ClientConfig) -> Exit {
    let style = config.style.unwrap_or_else(Style::detect);
    let mut render = Renderer::new(Box::new(std::io::stdout()), Box::new(std::io::stderr()), style);
    for line in &config.banner {
        render.info(line);
    }

    let cwd = match config.cwd.clone().map_or_else(std::env::current_dir, Ok).and_then(std::path::absolute) {
        Ok(cwd) => cwd,
        Err(e) => {
            render.error(&format!("cannot determine the working directory: {e}"));
            return Exit::Failure;
        }
    };
    let roots: Vec<PathBuf> = if config.roots.is_empty() { vec![cwd.clone()] } else { config.roots.clone() };
    let services = match services(&roots, &cwd) {
        Ok(services) => Arc::new(services),
        Err(e) => {
            render.error(&e);
            return Exit::Failure;
        }
    };

    let (tx, rx) = mpsc::channel();
    let interrupt = tx.clone();
    if let Err(e) = ctrlc::set_handler(move || {
        let _ = interrupt.send(UiEvent::Interrupt);
    }) {
        render.warn(&format!("Ctrl-C will not cancel turns: {e}"));
    }

    let (process, stdin, stdout) = match AgentProcess::spawn(&config.agent, config.show_stderr, tx.clone()) {
        Ok(spawned) => spawned,
        Err(e) => {
            let command: Vec<String> = config.agent.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            render.error(&format!("could not start the agent `{}`: {e}", command.join(" ")));
            return Exit::Failure;
        }
    };
    let client = CliClient::new(services.clone(), tx.clone());
    let conn = match ClientConnection::connect(client, stdout, stdin, ClientOptions::default()) {
        Ok(conn) => conn,
        Err(e) => {
            render.error(&format!("could not start the connection: {e}"));
            return Exit::Failure;
        }
    };

    let stdin_tty = std::io::stdin().is_terminal();
    let policy = config.policy.unwrap_or(if stdin_tty { Policy::Ask } else { Policy::Deny });
    let defaulted = config.policy.is_none() && !stdin_tty;
    let note = match (&config.policy_note, policy) {
        (Some(note), _) => note.clone(),
        (None, Policy::Deny) if defaulted => {
            "stdin is not a terminal: rejected; use --allow or --ask to change that".into()
        }
        (None, Policy::Deny) => "--deny".into(),
        (None, Policy::Allow) => "--allow".into(),
        (None, Policy::Ask) => "--ask".into(),
    };
    let settings = Settings { policy, note, stdin_tty, show_stderr: config.show_stderr };
    let mut session = Session::new(render, (tx, rx), conn, process, services, settings);
    let exit = session.run(&config, &cwd, &roots);
    session.shutdown(exit);
    exit
}

/// The sandbox and terminals confined to `roots`; commands run in `cwd` by default.
fn services(roots: &[PathBuf], cwd: &std::path::Path) -> Result<ClientServices, String> {
    let mut absolute = Vec::new();
    for root in roots {
        let path = std::path::absolute(root).map_err(|e| format!("--root {}: {e}", root.display()))?;
        if !path.is_dir() {
            return Err(format!("--root {}: not a directory", root.display()));
        }
        absolute.push(path);
    }
    let fs = FsSandbox::new(&absolute).map_err(|e| format!("file sandbox: {e}"))?;
    let mut terminal = TerminalConfig::new(&absolute);
    terminal.default_cwd = Some(cwd.to_path_buf());
    let terminals = Terminals::new(terminal).map_err(|e| format!("terminals: {e}"))?;
    Ok(ClientServices::new().with_fs(fs).with_terminals(terminals))
}
