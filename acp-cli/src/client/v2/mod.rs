//! `acp client --protocol 2 -- AGENT_CMD...`: the terminal client speaking ACP v2 (Preview;
//! feature `unstable_protocol_v2`) over acp-tokio's
//! [`ClientConnection`](acp_tokio::v2::ClientConnection).
//!
//! It offers version 2 in `initialize`; an agent that answers 1 is reported with what to do
//! (`rerun without --protocol 2`) and the client exits 6 (protocol). It does not fall back to
//! v1 by itself: whoever asks for v2 is testing v2, and a silent v1 session would hide that
//! the agent does not speak it.
//!
//! Then it opens a session in the working directory and runs one prompt (`-p`) or a prompt per
//! line of stdin, as the v1 client does, drawing with the same renderer: in v2 `session/prompt`
//! is only acknowledged and the turn is its `session/update`s, drawn by id (`upsert`), until
//! the agent's `idle` `state_update`, whose stop reason gives the exit status as in v1 (0
//! `end_turn`, 3 `cancelled`, 4 `refusal`, 5 `max_tokens`/`max_turn_requests`, 6 an `error`
//! stop or a refused prompt, 7 the agent died). Permission asks use the v1 client's policies
//! and question (`--allow`, `--deny`, `--ask`). Ctrl-C (or a `/cancel` line) sends
//! `session/cancel`, after which the turn ends when the agent says `idle`; a second Ctrl-C
//! quits (130).
//!
//! `--connect URL` reaches a remote agent (WebSocket or Streamable HTTP, as in v1: `acp serve`
//! hosts an agent of either version) instead of starting one.
//!
//! Not in v2 yet: `--resume`/`--continue`, `--format json`, `--quiet`,
//! `--image`, `--elicit`, `--auth` (each is a usage error with `--protocol 2`), the line
//! editor and slash commands other than `/cancel` and `/quit`, and recording in the session
//! database. v2 has no `fs/*` or `terminal/*`, so `--root` serves nothing.

mod handler;
mod ui;
mod upsert;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use acp_blocking::acp_proto::types::StopReason;
use acp_proto::v2::SessionId;
use acp_tokio::v2::ClientConnection;

use super::interrupt::Interrupts;
use super::process::{AgentProcess, Place};
use super::remote::{HalfCloser, RemoteIo};
use super::render::Renderer;
use super::{ClientConfig, Output, Style, UI_QUEUE, policy_note};
use crate::Exit;
use handler::CliClient;
use ui::Ui;
use upsert::Upserts;

/// A v2 event for the UI thread.
#[derive(Debug)]
pub(crate) enum Event {
    /// The handshake and `session/new` succeeded.
    Ready(SessionId),
    /// The handshake failed: what to say, and the exit status.
    Failed(String, Exit),
    /// The running turn ended.
    TurnEnded(Ended),
    /// A prompt typed during the running turn joined it (the agent acknowledged it), or could
    /// not: its text, and the error.
    Joined(String, Option<String>),
}

/// How a v2 turn ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// The agent said `idle` with this stop reason (or the session closed: `cancelled`).
    Stopped(StopReason),
    /// The prompt was refused, or the turn ended in an error: what to say, the exit status.
    Failed(String, Exit),
    /// The connection closed with the turn open.
    Died,
}

/// The options the v2 client does not support yet, by flag.
fn unsupported(config: &ClientConfig) -> Option<&'static str> {
    [
        (config.resume.is_some(), "--resume/--continue"),
        (config.output == Output::Json, "--format json"),
        (config.output == Output::Quiet, "--quiet"),
        (!config.images.is_empty(), "--image"),
        (config.elicit.is_some(), "--elicit"),
        (config.auth.is_some(), "--auth"),
    ]
    .into_iter()
    .find_map(|(set, flag)| set.then_some(flag))
}

/// The agent (its process, or the remote link), the v2 connection to it, and (remote) the
/// link's writing socket, kept until the end (see [`start`]).
type Started = (AgentProcess, ClientConnection, Option<HalfCloser>);

/// Starts the agent's process, or connects to the remote agent (`--connect`), and the v2
/// connection over its I/O; `None` after reporting why not.
fn start(
    config: &ClientConfig,
    render: &mut Renderer,
    tx: &mpsc::SyncSender<super::UiEvent>,
    runtime: &tokio::runtime::Runtime,
    client: CliClient,
) -> Option<Started> {
    let _entered = runtime.enter();
    if let Some(url) = &config.connect {
        let (link, RemoteIo { reader, writer }) = super::connect_remote(url, config, render)?;
        let stream = reader.set_nonblocking(true).and_then(|()| tokio::net::UnixStream::from_std(reader));
        return match stream {
            // The reading end and `writer` are the same socket: the connection's write half
            // shuts its writing down when the connection ends (the link's end, as a closed
            // stdin is a process's), so `writer` is only kept, never written.
            Ok(stream) => {
                let (reader, writer_half) = stream.into_split();
                let conn = ClientConnection::connect(client, reader, writer_half, Default::default());
                Some((AgentProcess::remote(link), conn, Some(writer)))
            }
            Err(e) => {
                render.error(&format!("cannot use the remote link: {e}"));
                None
            }
        };
    }
    // On the main thread: the agent's death signal follows the thread that spawned it.
    let place = Place { env: &config.agent_env, cwd: config.agent_cwd.as_deref() };
    let (process, stdin, stdout) =
        match AgentProcess::spawn(&config.agent, place, config.show_stderr, config.die_with_client, tx.clone()) {
            Ok(started) => started,
            Err(e) => {
                let command: Vec<String> = config.agent.iter().map(|a| a.to_string_lossy().into_owned()).collect();
                render.error(&format!("could not start the agent `{}`: {e}", command.join(" ")));
                return None;
            }
        };
    let pipes = tokio::process::ChildStdin::from_std(stdin)
        .and_then(|stdin| Ok((stdin, tokio::process::ChildStdout::from_std(stdout)?)));
    match pipes {
        Ok((stdin, stdout)) => {
            Some((process, ClientConnection::connect(client, stdout, stdin, Default::default()), None))
        }
        Err(e) => {
            render.error(&format!("cannot use the agent's pipes: {e}"));
            None
        }
    }
}

/// Runs the v2 client; returns the exit status.
pub(crate) fn run(config: &ClientConfig) -> Exit {
    let style = config.style.unwrap_or_else(Style::detect);
    let mut render = Renderer::new(Box::new(crate::outlet::stdout()), Box::new(crate::outlet::stderr()), style);
    if let Some(flag) = unsupported(config) {
        render.error(&format!("{flag} is not supported with --protocol 2 (ACP v2 Preview) yet; drop one of them"));
        return Exit::Usage;
    }
    let Some(super::Prepared { cwd, stdin_tty, policy }) = super::prepare(config, &mut render) else {
        return Exit::Failure;
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            render.error(&format!("cannot start the async runtime: {e}"));
            return Exit::Failure;
        }
    };
    let (tx, rx) = mpsc::sync_channel(UI_QUEUE);
    let (interrupts, installed) = Interrupts::install(tx.clone());
    if let Err(e) = installed {
        render.warn(&format!("Ctrl-C will not cancel turns: {e}"));
    }
    let upserts = Arc::new(Mutex::new(Upserts::default()));
    let client = CliClient { ui: tx.clone(), upserts: upserts.clone() };
    let Some((process, conn, _link_writer)) = start(config, &mut render, &tx, &runtime, client) else {
        return Exit::Failure;
    };
    let settings = ui::Settings {
        policy,
        note: policy_note(config, policy, stdin_tty),
        prompt: config.prompt.clone(),
        cwd,
        connect_timeout: config.connect_timeout,
        stdin_tty,
    };
    let mut ui = Ui::new(render, (tx, rx), interrupts, process, runtime, conn, upserts, settings);
    let exit = ui.run();
    ui.shutdown(exit);
    exit
}
