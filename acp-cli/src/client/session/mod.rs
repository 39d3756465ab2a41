//! The UI thread: the session's main loops (one prompt, the interactive loop, a turn), the
//! events that may come at any time, Ctrl-C and the termination signals (see `interrupt`),
//! and the shutdown. The handshake is in `connect`, permission questions in `questions`.
//!
//! The session's rooms are this module's children, each an aspect of [`Session`] (`connect`,
//! `control`, `questions`, `steer`, …). What a room keeps between events (the steering state,
//! the question queue, the modes and options) lives in the client module of the same name,
//! which knows nothing of the session: the imports go one way, from here down.

mod attach;
mod connect;
mod control;
mod options;
mod questions;
#[cfg(feature = "unstable_resumable_transport")]
mod reload;
mod reopen;
mod resume;
mod steer;

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::thread;
use std::time::Duration;

use acp_blocking::Error;
use acp_blocking::acp_proto::types::*;
use acp_services::ClientServices;

use crate::Exit;
use crate::client::children::end_all_processes;
use crate::client::config::ClientConfig;
use crate::client::control::{Act, Control};
use crate::client::event::UiEvent;
use crate::client::guard::Approvals;
use crate::client::interrupt::{Interrupts, termination_note};
use crate::client::link::Link;
use crate::client::offer::Offer;
use crate::client::process::AgentProcess;
use crate::client::questions::Question;
use crate::client::render::Renderer;
use crate::permission::Policy;

/// How often the spinner moves (and the idle loop checks that the agent lives).
const TICK: Duration = Duration::from_millis(80);
/// How long the agent gets to exit after its stdin is closed, before it is terminated.
const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// The same after a signal: the user quit with Ctrl-C, or `SIGTERM` or `SIGHUP` came.
const QUIT_GRACE: Duration = Duration::from_millis(300);

/// How a prompt turn ended.
enum Turn {
    Stopped(StopReason),
    /// The agent answered with an error or something invalid (the exit status to use).
    Failed(Exit),
    Died,
    /// The user quit (a second Ctrl-C) or a termination signal came: the exit status.
    Quit(Exit),
}

/// The exit status for a stop reason.
pub(crate) fn exit_for(stop: &StopReason) -> Exit {
    match stop {
        StopReason::EndTurn => Exit::Ok,
        StopReason::Cancelled => Exit::Cancelled,
        StopReason::Refusal => Exit::Refusal,
        StopReason::MaxTokens | StopReason::MaxTurnRequests => Exit::Incomplete,
        _ => Exit::Protocol,
    }
}

/// The settings a session runs with.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) policy: Policy,
    /// Why the policy applies, shown with each automatic answer.
    pub(crate) note: String,
    pub(crate) stdin_tty: bool,
    pub(crate) show_stderr: bool,
    /// The deadline of each handshake request.
    pub(crate) connect_timeout: Duration,
    /// What is served to the agent, for the header.
    pub(crate) offer: Offer,
    /// Forms are answered (`--elicit`, or on the terminal), so `elicitation.form` is advertised.
    pub(crate) forms: bool,
}

/// What the UI thread shares with the signal handler and the request handlers.
pub(crate) struct Shared {
    pub(crate) interrupts: Arc<Interrupts>,
    pub(crate) approvals: Arc<Approvals>,
    /// Set at shutdown: waiting handlers return.
    pub(crate) shutdown: Arc<AtomicBool>,
    /// Set while an elicitation is on screen: the editor keeps the answers out of the history.
    pub(crate) eliciting: Arc<AtomicBool>,
}

/// What the UI thread waits for next.
enum Next {
    Event(UiEvent),
    Interrupt,
    /// `SIGTERM` or `SIGHUP` came: the client ends with this status (see `interrupt`).
    Terminate(Exit),
    /// Nothing within a tick.
    Idle,
}

/// The UI thread's state.
pub(crate) struct Session {
    pub(super) render: Renderer,
    pub(super) tx: SyncSender<UiEvent>,
    pub(super) rx: Receiver<UiEvent>,
    pub(super) conn: Arc<dyn Link>,
    pub(super) process: AgentProcess,
    pub(super) services: Arc<ClientServices>,
    pub(super) settings: Settings,
    pub(super) shared: Shared,
    pub(super) input_started: bool,
    pub(super) input_ended: bool,
    /// Lines read from stdin and not used yet.
    pub(super) lines: VecDeque<String>,
    /// Questions (permissions, elicitations) in the order they came; the front one is on screen when `asked`.
    pub(super) asks: VecDeque<Question>,
    pub(super) asked: bool,
    /// The running turn was cancelled (Ctrl-C once).
    pub(super) cancelling: bool,
    pub(super) session: Option<SessionId>,
    pub(super) auth_methods: Vec<AuthMethod>,
    /// What the agent's prompts may carry (from `initialize`).
    pub(super) prompt_caps: PromptCapabilities,
    /// The one prompt's attachments, checked before the agent started.
    pub(super) prepared: Option<crate::client::attach::Prepared>,
    /// The session database's record of this session, when it is recorded.
    pub(super) journal: Option<crate::client::journal::Journal>,
    /// The session's modes, options and commands, for the slash commands.
    pub(super) control: Control,
    /// Steering and queued prompts (`steer.rs`).
    pub(super) steering: crate::client::steer::Steering,
    /// The terminal's line editor, when it reads stdin (see `editor`).
    pub(super) editor: Option<crate::client::editor::Running>,
    /// Connects to the remote agent again, when a lost connection could not be resumed
    /// (`reload.rs`).
    #[cfg(feature = "unstable_resumable_transport")]
    pub(crate) redial: Option<crate::client::reload::Redial>,
    /// A reloaded session's `session/load` replays what is on the screen already.
    #[cfg(feature = "unstable_resumable_transport")]
    pub(super) skipping_replay: bool,
}

impl Session {
    pub(crate) fn new(
        render: Renderer,
        (tx, rx): (SyncSender<UiEvent>, Receiver<UiEvent>),
        conn: Arc<dyn Link>,
        process: AgentProcess,
        services: Arc<ClientServices>,
        settings: Settings,
        shared: Shared,
    ) -> Session {
        Session {
            render,
            tx,
            rx,
            conn,
            process,
            services,
            settings,
            shared,
            input_started: false,
            input_ended: false,
            lines: VecDeque::new(),
            asks: VecDeque::new(),
            asked: false,
            cancelling: false,
            session: None,
            auth_methods: Vec::new(),
            prompt_caps: PromptCapabilities::default(),
            prepared: None,
            journal: None,
            control: Control::default(),
            steering: crate::client::steer::Steering::default(),
            editor: None,
            #[cfg(feature = "unstable_resumable_transport")]
            redial: None,
            #[cfg(feature = "unstable_resumable_transport")]
            skipping_replay: false,
        }
    }

    /// The connection, for a call on a helper thread.
    pub(super) fn link(&self) -> Arc<dyn Link> {
        self.conn.clone()
    }

    /// The next event, signal or tick. A termination comes first, and again on every call.
    fn next(&mut self) -> Next {
        if let Some(signal) = self.signalled() {
            return signal;
        }
        match self.rx.recv_timeout(TICK) {
            // A wake-up: the signal was noted.
            Ok(UiEvent::Interrupt) | Ok(UiEvent::Wake) | Err(RecvTimeoutError::Timeout) => {
                self.signalled().unwrap_or(Next::Idle)
            }
            Ok(event) => Next::Event(event),
            // The session holds a sender: never disconnected.
            Err(RecvTimeoutError::Disconnected) => Next::Idle,
        }
    }

    /// A termination, else an interrupt, if one was noted.
    fn signalled(&self) -> Option<Next> {
        match self.shared.interrupts.termination() {
            Some(exit) => Some(Next::Terminate(exit)),
            None => self.shared.interrupts.take().then_some(Next::Interrupt),
        }
    }

    /// The handshake, the session, then one prompt or the interactive loop.
    pub(crate) fn run(&mut self, config: &ClientConfig, cwd: &Path) -> Exit {
        if let Err(exit) = self.connect(config, cwd) {
            return exit;
        }
        match &config.prompt {
            Some(text) => {
                let line = format!("> {text}");
                self.render.heading(&line);
                let prompt = match self.prompt_blocks(text) {
                    Ok(prompt) => prompt,
                    Err(exit) => return exit,
                };
                match self.turn_with(prompt) {
                    Turn::Stopped(stop) => exit_for(&stop),
                    Turn::Failed(exit) => exit,
                    Turn::Died => Exit::AgentDied,
                    Turn::Quit(exit) => exit,
                }
            }
            None => self.interactive(config),
        }
    }

    /// Closes the connection (the agent's stdin), ends the agent, then every other process
    /// the client started (terminals and what they left behind).
    pub(crate) fn shutdown(&mut self, exit: Exit) {
        self.render.waiting(None);
        self.shared.shutdown.store(true, Ordering::SeqCst);
        self.drop_questions();
        self.drain_stderr();
        self.journal_write(None);
        self.conn.close();
        let grace = if exit.by_signal() { QUIT_GRACE } else { CLOSE_GRACE };
        let (rx, render) = (&self.rx, &mut self.render);
        self.process.terminate(grace, || {
            while let Ok(event) = rx.try_recv() {
                if let UiEvent::Stderr(line) = event {
                    render.stderr_line(&line);
                }
            }
        });
        end_all_processes(&self.services, self.process.id());
        self.drain_stderr();
        self.render.finish();
        if let Some(editor) = &self.editor {
            editor.restore();
        }
    }

    /// Shows the stderr lines queued (and drops the other events).
    fn drain_stderr(&mut self) {
        while let Ok(event) = self.rx.try_recv() {
            if let UiEvent::Stderr(line) = event {
                self.render.stderr_line(&line);
            }
        }
    }

    /// Runs a blocking call on a helper thread while the UI keeps drawing and listening.
    pub(super) fn call<T: Send + 'static>(
        &mut self,
        label: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Exit> {
        let (done, result) = mpsc::sync_channel(1);
        let wake = self.tx.clone();
        let spawned = thread::Builder::new().name("acp-call".into()).spawn(move || {
            let _ = done.send(f());
            // Never blocks: when the queue is full the UI wakes up anyway.
            let _ = wake.try_send(UiEvent::Wake);
        });
        if let Err(e) = spawned {
            self.render.error(&format!("cannot start a thread: {e}"));
            return Err(Exit::Failure);
        }
        self.render.waiting(Some(label));
        loop {
            if let Ok(value) = result.try_recv() {
                self.render.waiting(None);
                return Ok(value);
            }
            match self.next() {
                Next::Interrupt if self.cancel_elicitation() => {}
                Next::Interrupt => {
                    self.render.waiting(None);
                    self.render.warn("interrupted");
                    return Err(Exit::Interrupted);
                }
                Next::Terminate(exit) => {
                    self.render.waiting(None);
                    self.render.warn(termination_note(exit));
                    return Err(exit);
                }
                Next::Event(event) => self.background(event),
                Next::Idle => self.render.tick(),
            }
        }
    }

    /// Events that may come at any time.
    pub(super) fn background(&mut self, event: UiEvent) {
        match event {
            UiEvent::Stderr(line) => self.render.stderr_line(&line),
            UiEvent::Activity(activity) => self.render.activity(&activity),
            // A reloaded session's replay: on the screen already (`reload.rs`).
            #[cfg(feature = "unstable_resumable_transport")]
            UiEvent::Outside(_) if self.skipping_replay => {}
            UiEvent::Outside(notification) => {
                if let (Some(journal), SessionUpdate::SessionInfoUpdate(_)) = (&mut self.journal, &notification.update)
                {
                    journal.update(&notification.update);
                }
                self.observe(&notification.session_id, &notification.update);
                self.render.update(&notification.update);
            }
            UiEvent::Permission(ask) => self.permission(ask),
            UiEvent::Elicit(ask) => self.elicit(ask),
            UiEvent::Elicitation(note) => self.render.elicitation(&note),
            UiEvent::Line(line) => {
                self.line_arrived(&line);
                self.lines.push_back(line);
                self.answer_questions();
            }
            UiEvent::InputEnd => {
                self.input_ended = true;
                self.answer_questions();
            }
            // Late items of an earlier turn; interrupts are counted in `Interrupts`.
            UiEvent::Update(_) | UiEvent::TurnEnded(_) | UiEvent::Interrupt | UiEvent::Wake => {}
            UiEvent::Steered { text, answer } => self.steered(text, answer),
        }
    }

    /// One prompt turn of text.
    fn turn(&mut self, text: &str) -> Turn {
        self.turn_with(vec![ContentBlock::text(text)])
    }

    /// One prompt turn, from `session/prompt` to its stop reason.
    fn turn_with(&mut self, prompt: Vec<ContentBlock>) -> Turn {
        let Some(session) = self.session.clone() else { return Turn::Failed(Exit::Failure) };
        if let Some(journal) = &mut self.journal {
            let text: Vec<&str> = prompt
                .iter()
                .filter_map(|b| if let ContentBlock::Text(t) = b { Some(t.text.as_str()) } else { None })
                .collect();
            journal.prompt(&text.join("\n"));
        }
        let link = self.link();
        let turn = match link.prompt(PromptRequest::new(session.clone(), prompt)) {
            Ok(turn) => turn,
            Err(e) => return self.turn_failed(e),
        };
        let tx = self.tx.clone();
        let approvals = self.shared.approvals.clone();
        // Blocks while the UI queue is full: the connection then stops reading from the agent.
        let spawned = thread::Builder::new().name("acp-turn".into()).spawn(move || {
            let mut turn = turn;
            // `next_update_then`: the agent's requests that came after an update reach their
            // handlers only once it is queued for the UI, so the UI sees them in wire order.
            let mut forward = |update: SessionUpdate| {
                // Here rather than on the UI thread, which may be behind: an approval ends
                // as soon as possible after its tool call is reported over.
                approvals.observe(&update);
                tx.send(UiEvent::Update(update)).is_ok()
            };
            while let Some(forwarded) = turn.next_update_then(&mut forward) {
                if !forwarded {
                    return;
                }
            }
            let _ = tx.send(UiEvent::TurnEnded(turn.response()));
        });
        if let Err(e) = spawned {
            self.render.error(&format!("cannot start a thread: {e}"));
            return Turn::Failed(Exit::Failure);
        }
        self.render.begin_turn();
        self.cancelling = false;
        self.steering_begins();
        // acp-blocking starts an agent request of this session only once the turn's reader has
        // handled (here: queued) the updates that preceded it on the wire, so the channel
        // receives them in order.
        loop {
            if !self.cancelling && self.take_cancel_line() {
                self.cancel_turn(&link, &session);
                continue;
            }
            if !self.cancelling && self.steer_front(&link, &session) {
                continue;
            }
            match self.next() {
                Next::Event(UiEvent::Update(update)) => {
                    if let Some(journal) = &mut self.journal {
                        journal.update(&update);
                    }
                    self.observe(&session, &update);
                    self.render.update(&update);
                }
                Next::Event(UiEvent::TurnEnded(result)) => {
                    self.steering_ends();
                    self.journal_write(Some(result.as_ref().ok().map(|r| &r.stop_reason)));
                    self.shared.approvals.clear();
                    self.cancelling = false;
                    // The questions stay: the turn's end does not answer them (see `questions`).
                    return match result {
                        Ok(response) => {
                            self.render.end_turn(&response.stop_reason);
                            Turn::Stopped(response.stop_reason)
                        }
                        Err(e) => self.turn_failed(e),
                    };
                }
                Next::Interrupt if self.cancel_elicitation() => {}
                Next::Interrupt if self.cancelling => {
                    self.render.warn("quitting");
                    return Turn::Quit(Exit::Interrupted);
                }
                Next::Interrupt => self.cancel_turn(&link, &session),
                // The turn is cancelled on the way out (the agent is then closed).
                Next::Terminate(exit) => {
                    if !self.cancelling {
                        self.cancel_turn(&link, &session);
                    }
                    self.render.waiting(None);
                    self.render.warn(termination_note(exit));
                    return Turn::Quit(exit);
                }
                Next::Event(event) => self.background(event),
                Next::Idle => self.render.tick(),
            }
        }
    }

    /// Cancels the running turn (`session/cancel`), for Ctrl-C or `/cancel`. `session/cancel`
    /// goes out before the questions' answers (`cancelled`, `cancel`), as the spec orders it:
    /// an agent that read a form's `cancel` first could end its turn `end_turn` before it saw
    /// the cancel.
    fn cancel_turn(&mut self, link: &Arc<dyn Link>, session: &SessionId) {
        self.cancelling = true;
        self.shared.approvals.clear();
        // Returns once the connection queued it: answers sent after it follow it on the wire.
        if let Err(e) = link.cancel(session) {
            self.render.error(&format!("could not cancel: {e}"));
        }
        self.drop_questions();
        self.render.cancelling();
        self.render.waiting(Some("waiting for the agent to stop…"));
    }

    fn turn_failed(&mut self, error: Error) -> Turn {
        self.render.waiting(None);
        match self.failed("session/prompt", error) {
            Exit::AgentDied => Turn::Died,
            exit => Turn::Failed(exit),
        }
    }

    /// The interactive loop: a prompt per line until end of input, `/quit` or Ctrl-C.
    fn interactive(&mut self, config: &ClientConfig) -> Exit {
        self.render.info(
            "Type a prompt and press Enter. Ctrl-C or /cancel cancels a running turn; /help lists commands; Ctrl-D \
             or /quit leaves.",
        );
        self.ensure_input();
        loop {
            // What came while the last line ran (a notification that trailed an answer).
            while let Ok(event) = self.rx.try_recv() {
                self.background(event);
            }
            if self.asks.is_empty() {
                self.render.prompt();
            }
            let line = loop {
                if let Some(line) = self.lines.pop_front() {
                    break line;
                }
                if self.input_ended {
                    return Exit::Ok;
                }
                match self.next() {
                    Next::Interrupt if self.cancel_elicitation() => {}
                    Next::Interrupt => return Exit::Interrupted,
                    Next::Terminate(exit) => {
                        self.render.warn(termination_note(exit));
                        return exit;
                    }
                    Next::Event(event) => {
                        self.background(event);
                        if self.render.at_line_start() && self.asks.is_empty() {
                            self.render.prompt();
                        }
                    }
                    Next::Idle => {
                        if self.process.try_end().is_some() {
                            self.died("while idle");
                            if !self.reloaded(config) {
                                return Exit::AgentDied;
                            }
                        }
                    }
                }
            };
            self.render.input_read(&line, self.settings.stdin_tty);
            let text = match self.command(&line) {
                Act::Prompt(text) => text,
                Act::Done => continue,
                Act::Exit(exit) => return exit,
            };
            match self.turn(&text) {
                Turn::Stopped(_) | Turn::Failed(_) => self.ask_again_after_turn(),
                Turn::Died if self.reloaded(config) => {}
                Turn::Died => return Exit::AgentDied,
                Turn::Quit(exit) => return exit,
            }
        }
    }

    /// Whether a lost remote agent's session goes on over a new connection (`reload.rs`).
    fn reloaded(&mut self, config: &ClientConfig) -> bool {
        #[cfg(feature = "unstable_resumable_transport")]
        return self.reload(config);
        #[cfg(not(feature = "unstable_resumable_transport"))]
        {
            let _ = config;
            false
        }
    }
}
