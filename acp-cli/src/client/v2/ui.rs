//! The v2 client's UI thread: the handshake, the prompts, each turn's updates and permission
//! questions, Ctrl-C and `/cancel`, `SIGTERM` and `SIGHUP` (see `interrupt`), the shutdown.
//! Every other thread (the turn reader, the handlers, stdin, the agent's stderr, the signals)
//! sends it a [`UiEvent`], so questions never interleave with streamed text.

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use acp_blocking::acp_proto::types::{RequestPermissionOutcome, StopReason};
use acp_proto::v2::{self, SessionId};
use acp_proto::{TurnEndReason, types::IdleStopReason};
use acp_tokio::Error;
use acp_tokio::v2 as tokio_v2;

use super::super::guard::PermissionAsk;
use super::super::interrupt::{Interrupts, termination_note};
use super::super::process::AgentProcess;
use super::super::questions::answer_by_policy;
use super::super::render::Renderer;
use super::super::session::exit_for;
use super::super::{UiEvent, children};
use super::upsert::Upserts;
use super::{Ended, Event};
use crate::Exit;
use crate::permission::{Policy, parse_answer};

/// How often the spinner moves and the agent's life is checked.
const TICK: Duration = Duration::from_millis(80);
/// How long the agent gets to exit after its input closes.
const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// The same after a signal: the user quit with Ctrl-C, or `SIGTERM` or `SIGHUP` came.
const QUIT_GRACE: Duration = Duration::from_millis(300);

/// The session's settings.
pub(super) struct Settings {
    pub(super) policy: Policy,
    pub(super) note: String,
    pub(super) prompt: Option<String>,
    pub(super) cwd: PathBuf,
    pub(super) connect_timeout: Duration,
    /// Whether stdin is a terminal: there a plain line typed during a turn joins it.
    pub(super) stdin_tty: bool,
}

/// Where the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Connecting,
    Idle,
    InTurn { cancelling: bool },
}

/// The UI thread's state.
pub(super) struct Ui {
    render: Renderer,
    tx: SyncSender<UiEvent>,
    rx: Receiver<UiEvent>,
    interrupts: Arc<Interrupts>,
    process: AgentProcess,
    runtime: tokio::runtime::Runtime,
    conn: tokio_v2::ClientConnection,
    upserts: Arc<Mutex<Upserts>>,
    settings: Settings,
    phase: Phase,
    session: Option<SessionId>,
    /// Lines read from stdin and not used yet.
    lines: VecDeque<String>,
    input_started: bool,
    input_ended: bool,
    /// Permission questions in the order they came; the front one is on screen when `asked`.
    asks: VecDeque<PermissionAsk>,
    asked: bool,
    /// The one prompt (`-p`) was sent.
    prompted: bool,
    /// The last prompt sent to join the running turn: the next one goes out after it, so the
    /// agent takes them in the order they were typed.
    last_join: Option<tokio::task::JoinHandle<()>>,
}

impl Ui {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        render: Renderer,
        (tx, rx): (SyncSender<UiEvent>, Receiver<UiEvent>),
        interrupts: Arc<Interrupts>,
        process: AgentProcess,
        runtime: tokio::runtime::Runtime,
        conn: tokio_v2::ClientConnection,
        upserts: Arc<Mutex<Upserts>>,
        settings: Settings,
    ) -> Ui {
        Ui {
            render,
            tx,
            rx,
            interrupts,
            process,
            runtime,
            conn,
            upserts,
            settings,
            phase: Phase::Connecting,
            session: None,
            lines: VecDeque::new(),
            input_started: false,
            input_ended: false,
            asks: VecDeque::new(),
            asked: false,
            last_join: None,
            prompted: false,
        }
    }

    /// The handshake, then the prompts; returns the exit status.
    pub(super) fn run(&mut self) -> Exit {
        self.connect();
        self.render.waiting(Some("connecting (ACP v2)…"));
        loop {
            if let Some(exit) = self.interrupts.termination() {
                return self.terminate(exit);
            }
            if self.interrupts.take()
                && let Some(exit) = self.interrupt()
            {
                return exit;
            }
            let event = match self.rx.recv_timeout(TICK) {
                Ok(event) => event,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    if let Some(how) = self.process.try_end() {
                        return self.died(&how);
                    }
                    self.render.tick();
                    continue;
                }
            };
            if let Some(exit) = self.event(event) {
                return exit;
            }
            if self.phase == Phase::Idle
                && let Some(exit) = self.next_prompt()
            {
                return exit;
            }
        }
    }

    /// Handles one event; `Some` ends the session with that status.
    fn event(&mut self, event: UiEvent) -> Option<Exit> {
        match event {
            UiEvent::Stderr(line) => self.render.stderr_line(&line),
            UiEvent::Update(update) => self.render.update(&update),
            UiEvent::Outside(notification) => self.render.update(&notification.update),
            UiEvent::Permission(ask) => self.permission(ask),
            UiEvent::Line(line) if line.trim() == "/cancel" && self.phase == (Phase::InTurn { cancelling: false }) => {
                // With a question on screen it is the question's (which cancels the same way).
                if self.asks.is_empty() {
                    self.cancel()
                } else {
                    self.lines.push_back(line)
                }
                self.answer_questions();
            }
            UiEvent::Line(line) if self.joining(&line).is_some() => {
                let text = self.joining(&line).unwrap_or_default().to_owned();
                self.join(text);
            }
            UiEvent::Line(line) => {
                self.lines.push_back(line);
                self.answer_questions();
            }
            UiEvent::InputEnd => {
                self.input_ended = true;
                self.answer_questions();
            }
            UiEvent::V2(event) => return self.v2_event(*event),
            _ => {}
        }
        None
    }

    fn v2_event(&mut self, event: Event) -> Option<Exit> {
        match event {
            Event::Ready(session) => {
                self.render.waiting(None);
                self.render.info(&format!("session {session} (ACP v2)"));
                self.session = Some(session);
                self.phase = Phase::Idle;
                None
            }
            Event::Failed(message, exit) => {
                self.render.waiting(None);
                self.render.error(&message);
                Some(exit)
            }
            Event::TurnEnded(ended) => self.turn_ended(ended),
            Event::Joined(text, None) => {
                self.render.info(&format!("joined the running turn: {text}"));
                None
            }
            Event::Joined(text, Some(why)) => {
                self.render.warn(&format!("could not join the running turn ({why}): {text}"));
                None
            }
        }
    }

    /// What of `line` joins the running turn, if it does: a v2 prompt sent while a turn runs
    /// becomes part of it (the protocol's way to steer). `/steer TEXT`, or on a terminal a plain
    /// line, with no question waiting for it (as v1's steering: piped lines wait, so that a
    /// script's answers stay answers). Another slash command keeps its meaning.
    fn joining<'l>(&self, line: &'l str) -> Option<&'l str> {
        if self.phase != (Phase::InTurn { cancelling: false })
            || self.settings.prompt.is_some()
            || !self.asks.is_empty()
        {
            return None;
        }
        let text = line.trim();
        let text = match text.strip_prefix("/steer") {
            Some(rest) if rest.is_empty() || rest.starts_with(' ') => rest.trim(),
            _ if self.settings.stdin_tty && !text.starts_with('/') => text,
            _ => return None,
        };
        (!text.is_empty()).then_some(text)
    }

    /// Sends `text` as a `session/prompt` of the running turn's session, without opening a
    /// turn of its own: its updates arrive in the running turn. The acknowledgement (or the
    /// refusal) is told when it comes.
    fn join(&mut self, text: String) {
        let Some(session) = self.session.clone() else { return };
        let prompt = vec![v2::ContentBlock::Text(v2::TextContent::new(text.as_str()))];
        let request = v2::PromptRequest { session_id: session, prompt, idempotency_key: None, meta: None };
        let (conn, tx, previous) = (self.conn.clone(), self.tx.clone(), self.last_join.take());
        self.last_join = Some(self.runtime.spawn(async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            let why = conn.request(request, None).await.err().map(|e| e.to_string());
            super::handler::post(&tx, UiEvent::V2(Box::new(Event::Joined(text, why)))).await;
        }));
    }

    /// Sends `initialize` (offering 2) and `session/new` on the runtime.
    fn connect(&mut self) {
        let (conn, tx) = (self.conn.clone(), self.tx.clone());
        let (cwd, limit) = (self.settings.cwd.to_string_lossy().into_owned(), self.settings.connect_timeout);
        self.runtime.spawn(async move {
            let event = match tokio::time::timeout(limit, handshake(&conn, cwd)).await {
                Ok(Ok(session)) => Event::Ready(session),
                Ok(Err((message, exit))) => Event::Failed(message, exit),
                Err(_) => Event::Failed(
                    format!("the agent did not answer initialize and session/new within {limit:?}"),
                    Exit::ConnectTimeout,
                ),
            };
            super::handler::post(&tx, UiEvent::V2(Box::new(event))).await;
        });
    }

    /// Ctrl-C: cancels the turn, or quits (a second one, or outside a turn).
    fn interrupt(&mut self) -> Option<Exit> {
        match self.phase {
            Phase::InTurn { cancelling: false } => {
                self.cancel();
                None
            }
            _ => {
                self.render.waiting(None);
                self.render.warn("interrupted");
                Some(Exit::Interrupted)
            }
        }
    }

    /// `SIGTERM` or `SIGHUP`: the running turn is cancelled (the agent is then closed), and the
    /// client ends with `exit`.
    fn terminate(&mut self, exit: Exit) -> Exit {
        if self.phase == (Phase::InTurn { cancelling: false }) {
            self.cancel();
        }
        self.render.waiting(None);
        self.render.warn(termination_note(exit));
        exit
    }

    /// `session/cancel`, then the questions are dropped (answered `cancelled`, after the cancel
    /// on the wire, as in v1); the turn ends when the agent says `idle`.
    fn cancel(&mut self) {
        let Some(session) = self.session.clone() else { return };
        self.phase = Phase::InTurn { cancelling: true };
        self.render.cancelling();
        let conn = self.conn.clone();
        // Bounded: an agent that reads nothing does not hold the UI (nor a termination) up.
        let sent = self.runtime.block_on(async move { tokio::time::timeout(CLOSE_GRACE, conn.cancel(&session)).await });
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(e)) => self.render.warn(&format!("could not send session/cancel: {e}")),
            Err(_) => self.render.warn("could not send session/cancel: the agent reads nothing"),
        }
        self.asks.clear();
        self.asked = false;
    }

    /// Starts the next prompt when idle: the one `-p`, else the next line; `Some` when there is
    /// nothing more to do.
    fn next_prompt(&mut self) -> Option<Exit> {
        let text = match &self.settings.prompt {
            Some(_) if self.prompted => return Some(Exit::Ok),
            Some(text) => {
                self.prompted = true;
                text.clone()
            }
            None => {
                self.ensure_input();
                match self.lines.pop_front() {
                    Some(line) if line.trim() == "/quit" => return Some(Exit::Ok),
                    Some(line) if line.trim().is_empty() || line.trim() == "/cancel" => return None,
                    Some(line) => line,
                    None if self.input_ended => return Some(Exit::Ok),
                    None => {
                        if self.asks.is_empty() {
                            self.render.prompt();
                        }
                        return None;
                    }
                }
            }
        };
        self.start_turn(text)
    }

    /// Sends the prompt, then reads its turn on a thread of its own; `Some` when the prompt
    /// could not be sent and that ends the session. The prompt goes out from here, before the
    /// UI looks at interrupts again: a `session/cancel` for a Ctrl-C (or `SIGTERM`) that came
    /// meanwhile follows it, rather than overtaking a prompt still to be sent by the reader
    /// (the agent would ignore the cancel, then run the turn).
    fn start_turn(&mut self, text: String) -> Option<Exit> {
        let session = self.session.clone()?;
        self.render.heading(&format!("> {text}"));
        self.render.begin_turn();
        self.upserts.lock().unwrap_or_else(PoisonError::into_inner).begin_turn();
        self.phase = Phase::InTurn { cancelling: false };
        let prompt = vec![v2::ContentBlock::Text(v2::TextContent::new(text))];
        let request = v2::PromptRequest { session_id: session, prompt, idempotency_key: None, meta: None };
        let conn = self.conn.clone();
        let turn = match self.runtime.block_on(async move { conn.prompt(request).await }) {
            Ok(turn) => turn,
            Err(e) => return self.turn_ended(ended_by_error(e)),
        };
        let (tx, upserts) = (self.tx.clone(), self.upserts.clone());
        let handle = self.runtime.handle().clone();
        let spawned = thread::Builder::new().name("acp-turn-v2".into()).spawn(move || {
            let reader = Reader { tx: &tx, upserts: &upserts };
            let ended = handle.block_on(reader.forward(turn));
            let _ = tx.send(UiEvent::V2(Box::new(Event::TurnEnded(ended))));
        });
        match spawned {
            Ok(_) => None,
            Err(e) => self.turn_ended(Ended::Failed(format!("cannot start a thread: {e}"), Exit::Failure)),
        }
    }

    /// The turn ended. Its questions stay, as in v1 (see `questions`): the agent still waits
    /// for them, and an ask sent right after `idle` may reach the UI before the turn's end.
    fn turn_ended(&mut self, ended: Ended) -> Option<Exit> {
        self.phase = Phase::Idle;
        let exit = match ended {
            Ended::Stopped(stop) => {
                self.render.end_turn(&stop);
                exit_for(&stop)
            }
            Ended::Failed(message, exit) => {
                self.render.waiting(None);
                self.render.error(&message);
                exit
            }
            Ended::Died => return Some(self.died("its output ended")),
        };
        // One prompt: its stop reason is the exit status. The loop goes on whatever the turn did.
        if self.settings.prompt.is_some() {
            return Some(exit);
        }
        if let Some(ask) = self.asks.front().filter(|_| self.asked) {
            self.render.ask_again(ask.request.options.len());
        }
        None
    }

    /// The agent is gone: says so with the tail of its stderr.
    fn died(&mut self, how: &str) -> Exit {
        self.render.waiting(None);
        // As v1's client: up to 500 ms for its exit status and the rest of its stderr (its
        // output may end before the drain read its last lines).
        let deadline = std::time::Instant::now() + Duration::from_millis(500);
        let status = loop {
            let status = self.process.try_end();
            if (status.is_some() && self.process.stderr_ended()) || std::time::Instant::now() >= deadline {
                break status;
            }
            thread::sleep(Duration::from_millis(10));
        };
        let how = status.unwrap_or_else(|| how.to_owned());
        self.render.error(&format!("the agent died ({how})"));
        for line in self.process.stderr_tail() {
            self.render.stderr_line(&line);
        }
        Exit::AgentDied
    }

    /// Reads stdin on a thread (once), a line per event.
    fn ensure_input(&mut self) {
        if std::mem::replace(&mut self.input_started, true) {
            return;
        }
        let tx = self.tx.clone();
        let _ = thread::Builder::new().name("acp-stdin".into()).spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(UiEvent::Line(line)).is_err() {
                    return;
                }
            }
            let _ = tx.send(UiEvent::InputEnd);
        });
    }

    /// A permission ask: answered by the policy, or queued and asked.
    fn permission(&mut self, ask: PermissionAsk) {
        if matches!(self.phase, Phase::InTurn { cancelling: true }) {
            return;
        }
        if self.settings.policy == Policy::Ask {
            self.asks.push_back(ask);
            self.ensure_input();
            self.answer_questions();
            return;
        }
        let _ = answer_by_policy(&mut self.render, &ask, self.settings.policy, &self.settings.note);
    }

    /// Shows the front question and answers it with the lines read after it was shown.
    fn answer_questions(&mut self) {
        loop {
            while self.asks.front().is_some_and(PermissionAsk::is_abandoned) {
                self.asks.pop_front();
                self.asked = false;
            }
            let Some(ask) = self.asks.front() else { return };
            if !self.asked {
                self.render.permission_question(&ask.request, true);
                self.asked = true;
                // Only lines typed after the question answer it.
                self.lines.clear();
            }
            if self.lines.front().is_some_and(|l| l.trim() == "/cancel") {
                self.lines.pop_front();
                if self.phase == Phase::Idle {
                    // Between turns: no turn to cancel, only the questions.
                    self.asks.clear();
                    self.asked = false;
                    return self.render.info("questions cancelled (no turn is running)");
                }
                return self.cancel();
            }
            let Some(line) = self.lines.pop_front() else {
                if self.input_ended {
                    self.asks.pop_front();
                    self.asked = false;
                    self.render.permission_decided("cancelled", "end of input");
                    continue;
                }
                return;
            };
            let Some(ask) = self.asks.front() else { return };
            match parse_answer(&ask.request.options, &line) {
                Some(option) => {
                    let (id, name) = (option.option_id.clone(), option.name.clone());
                    let _ = ask.reply.send(RequestPermissionOutcome::selected(id));
                    self.render.permission_decided(&name, "your answer");
                    self.asks.pop_front();
                    self.asked = false;
                }
                None => self.render.ask_again(ask.request.options.len()),
            }
        }
    }

    /// Closes the connection (the agent's stdin), ends the agent and what it left behind.
    pub(super) fn shutdown(&mut self, exit: Exit) {
        self.render.waiting(None);
        self.asks.clear();
        let conn = self.conn.clone();
        let _ = self.runtime.block_on(async move { tokio::time::timeout(CLOSE_GRACE, conn.close()).await });
        let (rx, render) = (&self.rx, &mut self.render);
        let grace = if exit.by_signal() { QUIT_GRACE } else { CLOSE_GRACE };
        self.process.terminate(grace, || {
            while let Ok(event) = rx.try_recv() {
                if let UiEvent::Stderr(line) = event {
                    render.stderr_line(&line);
                }
            }
        });
        children::end_orphans(self.process.id());
        self.render.finish();
    }
}

/// `initialize` offering 2, then `session/new` in `cwd`.
async fn handshake(conn: &tokio_v2::ClientConnection, cwd: String) -> Result<SessionId, (String, Exit)> {
    let init: v2::InitializeRequest = serde_json::from_value(serde_json::json!({
        "protocolVersion": 2,
        "info": { "name": "acp-client", "title": "acp client (v2)", "version": env!("CARGO_PKG_VERSION") },
        "capabilities": {},
    }))
    .map_err(|e| (format!("cannot build initialize: {e}"), Exit::Failure))?;
    match conn.initialize(init).await {
        Ok(_) => {}
        Err(Error::UnsupportedProtocolVersion(version)) => {
            let message = format!(
                "the agent speaks ACP v{} (it answered protocolVersion {}), not v2: rerun without --protocol 2",
                version.0, version.0
            );
            return Err((message, Exit::Protocol));
        }
        Err(e) => return Err(failed("initialize", e)),
    }
    let new = v2::NewSessionRequest {
        cwd: v2::AbsolutePath(cwd),
        additional_directories: None,
        mcp_servers: None,
        system_prompt: None,
        meta: None,
    };
    conn.new_session(new).await.map(|r| r.session_id).map_err(|e| failed("session/new", e))
}

/// What to say when `what` failed, and the exit status.
fn failed(what: &str, e: Error) -> (String, Exit) {
    match e {
        Error::ConnectionClosed => (format!("the agent closed the connection during {what}"), Exit::AgentDied),
        e => (format!("{what} failed: {e}"), Exit::Protocol),
    }
}

/// A turn's reader: forwards its updates, drawn by id, to the UI thread. Each update is queued
/// for the UI before the agent's requests that came after it reach their handlers (acp-tokio's
/// ordering gate, [`tokio_v2::PromptTurn::next_update_then`]), so a permission question comes after
/// the tool call it is about.
struct Reader<'a> {
    tx: &'a SyncSender<UiEvent>,
    upserts: &'a Mutex<Upserts>,
}

impl Reader<'_> {
    /// Forwards an update; `false` once the UI is gone. Blocks while the UI queue is full: the
    /// turn's buffer then fills and the connection stops reading, which slows the agent down.
    fn update(&self, update: &v2::SessionUpdate) -> bool {
        let update = self.upserts.lock().unwrap_or_else(PoisonError::into_inner).map(update);
        update.is_none_or(|update| self.tx.send(UiEvent::Update(update)).is_ok())
    }

    /// Forwards the turn's updates, and says how it ended.
    async fn forward(&self, mut turn: tokio_v2::PromptTurn) -> Ended {
        let mut idle_error = None;
        loop {
            let forwarded = turn.next_update_then(|notification| {
                if let v2::SessionUpdate::StateUpdate(v2::StateUpdate::Idle(idle)) = &notification.update {
                    idle_error = idle.error.as_ref().map(|e| e.message.clone());
                }
                self.update(&notification.update)
            });
            if forwarded.await != Some(true) {
                break;
            }
        }
        turn_end(turn.finish().await, idle_error)
    }
}

/// How a turn ended, from its `finish` and the error of its idle update.
fn turn_end(finished: Result<TurnEndReason, Error>, idle_error: Option<String>) -> Ended {
    match finished {
        Ok(TurnEndReason::Idle { stop_reason }) => match stop_reason.unwrap_or(IdleStopReason::EndTurn) {
            IdleStopReason::EndTurn => Ended::Stopped(StopReason::EndTurn),
            IdleStopReason::Cancelled => Ended::Stopped(StopReason::Cancelled),
            IdleStopReason::Refusal => Ended::Stopped(StopReason::Refusal),
            IdleStopReason::MaxTokens => Ended::Stopped(StopReason::MaxTokens),
            IdleStopReason::MaxTurnRequests => Ended::Stopped(StopReason::MaxTurnRequests),
            IdleStopReason::Error => {
                let why = idle_error.unwrap_or_else(|| "no error given".to_owned());
                Ended::Failed(format!("the agent's turn ended with an error: {why}"), Exit::Protocol)
            }
            other => Ended::Failed(format!("the agent stopped with an unknown reason {other:?}"), Exit::Protocol),
        },
        Ok(TurnEndReason::SessionClosed) => Ended::Stopped(StopReason::Cancelled),
        Ok(other) => Ended::Failed(format!("the turn ended without idle: {other:?}"), Exit::Protocol),
        Err(e) => ended_by_error(e),
    }
}

fn ended_by_error(e: Error) -> Ended {
    match e {
        Error::ConnectionClosed => Ended::Died,
        Error::Rpc(e) => Ended::Failed(format!("the agent refused the prompt: {e}"), Exit::Protocol),
        e => Ended::Failed(format!("the prompt failed: {e}"), Exit::Protocol),
    }
}
