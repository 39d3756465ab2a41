//! Running `acp client`: the agent started (or the remote one reached), the connection made
//! over the link of the version asked for, and the session run to its end.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;

use super::config::{ClientConfig, UI_QUEUE};
use super::event::UiEvent;
use super::guard::Approvals;
use super::handler::CliClient;
use super::interrupt::Interrupts;
use super::output::Output;
use super::process::{self, AgentProcess};
#[cfg(feature = "unstable_resumable_transport")]
use super::reload;
use super::render::{Renderer, Style};
use super::session::{self, Session, Settings};
use super::{attach, children, elicit, link, offer, remote, tap};
use crate::permission::Policy;
use crate::{Exit, outlet};

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
        let (link, io) = remote::connect_remote(url, config, render)?;
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
