//! The UI thread: the handshake, the session, prompt turns, permission questions, Ctrl-C.

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use acp_blocking::acp_proto::types::*;
use acp_blocking::{ClientConnection, Error, Requester};
use acp_services::ClientServices;

use super::handler::{PermissionAsk, describe_error};
use super::permission::{Policy, allow_option, parse_answer, reject_option};
use super::process::{AgentProcess, describe};
use super::render::Renderer;
use super::{ClientConfig, UiEvent};
use crate::Exit;

/// How often the spinner moves (and the idle loop checks that the agent lives).
const TICK: Duration = Duration::from_millis(80);
/// How long the agent gets to exit after its stdin is closed, before it is terminated.
const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// The same after the user quit with Ctrl-C.
const QUIT_GRACE: Duration = Duration::from_millis(300);
/// JSON-RPC `auth_required`.
const AUTH_REQUIRED: i32 = -32000;

/// How a prompt turn ended.
enum Turn {
    Stopped(StopReason),
    /// The agent answered with an error or something invalid (the exit status to use).
    Failed(Exit),
    Died,
    Quit,
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
}

/// The UI thread's state.
pub(crate) struct Session {
    render: Renderer,
    tx: Sender<UiEvent>,
    rx: Receiver<UiEvent>,
    conn: ClientConnection,
    process: AgentProcess,
    services: Arc<ClientServices>,
    settings: Settings,
    input_started: bool,
    input_ended: bool,
    /// Lines read from stdin and not used yet.
    lines: VecDeque<String>,
    /// The permission question waiting for a typed answer.
    pending: Option<PermissionAsk>,
    /// The running turn was cancelled (Ctrl-C once).
    cancelling: bool,
    session: Option<SessionId>,
    auth_methods: Vec<AuthMethod>,
}

impl Session {
    pub(crate) fn new(
        render: Renderer,
        (tx, rx): (Sender<UiEvent>, Receiver<UiEvent>),
        conn: ClientConnection,
        process: AgentProcess,
        services: Arc<ClientServices>,
        settings: Settings,
    ) -> Session {
        Session {
            render,
            tx,
            rx,
            conn,
            process,
            services,
            settings,
            input_started: false,
            input_ended: false,
            lines: VecDeque::new(),
            pending: None,
            cancelling: false,
            session: None,
            auth_methods: Vec::new(),
        }
    }

    fn requester(&self) -> Requester {
        (*self.conn).clone()
    }

    /// The handshake, the session, then one prompt or the interactive loop.
    pub(crate) fn run(&mut self, config: &ClientConfig, cwd: &Path, roots: &[PathBuf]) -> Exit {
        if let Err(exit) = self.connect(config, cwd, roots) {
            return exit;
        }
        match &config.prompt {
            Some(text) => {
                let line = format!("> {text}");
                self.render.heading(&line);
                match self.turn(text) {
                    Turn::Stopped(stop) => exit_for(&stop),
                    Turn::Failed(exit) => exit,
                    Turn::Died => Exit::AgentDied,
                    Turn::Quit => Exit::Interrupted,
                }
            }
            None => self.interactive(),
        }
    }

    /// Closes the connection (the agent's stdin) and ends the agent.
    pub(crate) fn shutdown(&mut self, exit: Exit) {
        self.render.waiting(None);
        self.pending = None;
        let _ = self.conn.close();
        let grace = if exit == Exit::Interrupted { QUIT_GRACE } else { CLOSE_GRACE };
        self.process.terminate(grace);
        while let Ok(event) = self.rx.try_recv() {
            if let UiEvent::Stderr(line) = event {
                self.render.stderr_line(&line);
            }
        }
        self.render.finish();
    }

    fn connect(&mut self, config: &ClientConfig, cwd: &Path, roots: &[PathBuf]) -> Result<(), Exit> {
        let mut init = InitializeRequest::new(ProtocolVersion::V1);
        init.client_capabilities = self.services.capabilities();
        let mut info = Implementation::new("acp-cli", env!("CARGO_PKG_VERSION"));
        info.title = Some("acp client".to_owned());
        init.client_info = Some(info);
        let requester = self.requester();
        let response = match self.call("starting the agent…", move || requester.initialize(init))? {
            Ok(response) => response,
            Err(e) => return Err(self.failed("initialize", e)),
        };
        self.header(&response, roots);
        self.auth_methods = response.auth_methods;

        if let Some(method) = &config.auth {
            let requester = self.requester();
            let request = AuthenticateRequest::new(method.as_str());
            if let Err(e) = self.call("authenticating…", move || requester.authenticate(request))? {
                return Err(self.failed("authenticate", e));
            }
            self.render.info(&format!("authenticated with `{method}`"));
        }

        let requester = self.requester();
        let request = NewSessionRequest::new(cwd.display().to_string(), vec![]);
        let session = match self.call("opening a session…", move || requester.new_session(request))? {
            Ok(session) => session.session_id,
            Err(e) => return Err(self.failed("session/new", e)),
        };
        self.render.info(&format!("session {session} · cwd {}", cwd.display()));
        self.session = Some(session);
        Ok(())
    }

    fn header(&mut self, response: &InitializeResponse, roots: &[PathBuf]) {
        let name = response.agent_info.as_ref().map_or_else(
            || "an unnamed agent".to_owned(),
            |i| format!("{} {}", i.title.as_deref().unwrap_or(&i.name), i.version),
        );
        self.render.heading(&format!("connected to {name} (ACP protocol v{})", response.protocol_version.0));
        let caps = &response.agent_capabilities;
        let mut offers = vec!["text"];
        offers.extend(caps.supports_image().then_some("images"));
        offers.extend(caps.supports_audio().then_some("audio"));
        offers.extend(caps.supports_embedded_context().then_some("embedded context"));
        offers.extend(caps.supports_load_session().then_some("session/load"));
        self.render.info(&format!("  prompts: {}", offers.join(", ")));
        let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        self.render.info(&format!("  serving fs read/write and terminals in {}", roots.join(", ")));
        if !response.auth_methods.is_empty() {
            let ids: Vec<&str> = response.auth_methods.iter().filter_map(AuthMethod::id).collect();
            self.render.info(&format!("  authentication methods: {}", ids.join(", ")));
        }
    }

    /// Runs a blocking call on a helper thread while the UI keeps drawing and listening.
    fn call<T: Send + 'static>(&mut self, label: &str, f: impl FnOnce() -> T + Send + 'static) -> Result<T, Exit> {
        let (done, result) = mpsc::sync_channel(1);
        let wake = self.tx.clone();
        let spawned = thread::Builder::new().name("acp-call".into()).spawn(move || {
            let _ = done.send(f());
            let _ = wake.send(UiEvent::Wake);
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
            match self.rx.recv_timeout(TICK) {
                Ok(UiEvent::Interrupt) => {
                    self.render.waiting(None);
                    self.render.warn("interrupted");
                    return Err(Exit::Interrupted);
                }
                Ok(event) => self.background(event),
                Err(_) => self.render.tick(),
            }
        }
    }

    /// Reports a failed request and picks the exit status.
    fn failed(&mut self, what: &str, error: Error) -> Exit {
        match error {
            Error::ConnectionClosed => {
                self.died(&format!("during {what}"));
                Exit::AgentDied
            }
            Error::Rpc(e) if e.code.0 == AUTH_REQUIRED => {
                self.render.error(&format!("the agent requires authentication ({what}: {})", describe_error(&e)));
                if self.auth_methods.is_empty() {
                    self.render.info("it offers no authentication method; log in with the agent's own tool first");
                } else {
                    self.render.info("it offers:");
                    for method in self.auth_methods.clone() {
                        let name = serde_json::to_value(&method)
                            .ok()
                            .and_then(|v| {
                                let name = v.get("name")?.as_str()?.to_owned();
                                let description = v.get("description").and_then(|d| d.as_str());
                                Some(description.map_or(name.clone(), |d| format!("{name}: {d}")))
                            })
                            .unwrap_or_default();
                        self.render.info(&format!("  {}  {name}", method.id().unwrap_or("?")));
                    }
                    self.render.info("run again with --auth METHOD_ID");
                }
                Exit::AuthRequired
            }
            Error::Rpc(e) => {
                self.render.error(&format!("the agent answered {what} with an error: {}", describe_error(&e)));
                Exit::Protocol
            }
            other => {
                self.render.error(&format!("{what} failed: {other}"));
                Exit::Protocol
            }
        }
    }

    /// Reports that the agent is gone, with its exit status and the tail of its stderr.
    fn died(&mut self, when: &str) {
        let deadline = Instant::now() + Duration::from_millis(500);
        let status = loop {
            if let Some(status) = self.process.try_status() {
                break Some(status);
            }
            if Instant::now() >= deadline {
                break None;
            }
            thread::sleep(Duration::from_millis(10));
        };
        while let Ok(event) = self.rx.try_recv() {
            self.background(event);
        }
        let how = status.map_or_else(|| "its output ended".to_owned(), describe);
        self.render.error(&format!("the agent died {when} ({how})"));
        let tail = self.process.stderr_tail();
        if !self.settings.show_stderr && !tail.is_empty() {
            self.render.info("last lines of its stderr:");
            for line in tail {
                self.render.info(&format!("  {line}"));
            }
        }
    }

    /// Events that may come at any time.
    fn background(&mut self, event: UiEvent) {
        match event {
            UiEvent::Stderr(line) => self.render.stderr_line(&line),
            UiEvent::Activity(activity) => self.render.activity(&activity),
            UiEvent::Outside(notification) => self.render.update(&notification.update),
            UiEvent::Permission(ask) => self.permission(ask),
            UiEvent::Line(line) => {
                self.lines.push_back(line);
                self.answer_pending();
            }
            UiEvent::InputEnd => {
                self.input_ended = true;
                self.answer_pending();
            }
            // Late items of an earlier turn; an interrupt is handled by the loops.
            UiEvent::Update(_) | UiEvent::TurnEnded(_) | UiEvent::Interrupt | UiEvent::Wake => {}
        }
    }

    fn ensure_input(&mut self) {
        if self.input_started {
            return;
        }
        self.input_started = true;
        let tx = self.tx.clone();
        let spawned = thread::Builder::new().name("acp-stdin".into()).spawn(move || {
            let stdin = std::io::stdin();
            let mut line = String::new();
            loop {
                line.clear();
                match stdin.lock().read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(UiEvent::InputEnd);
                        return;
                    }
                    Ok(_) => {
                        if tx.send(UiEvent::Line(line.trim_end_matches(['\n', '\r']).to_owned())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        if spawned.is_err() {
            self.input_ended = true;
        }
    }

    /// A permission request: answered by the policy, or asked.
    fn permission(&mut self, ask: PermissionAsk) {
        if self.cancelling {
            // The core already answered `cancelled`; dropping the ask says the same.
            return;
        }
        let options = &ask.request.options;
        let choice = match self.settings.policy {
            Policy::Ask => {
                self.render.permission_question(&ask.request, true);
                self.pending = Some(ask);
                self.ensure_input();
                self.answer_pending();
                return;
            }
            Policy::Allow => allow_option(options),
            Policy::Deny => reject_option(options),
        };
        let why = self.settings.note.as_str();
        self.render.permission_question(&ask.request, false);
        match choice {
            Some(option) => {
                let _ = ask.reply.send(RequestPermissionOutcome::selected(option.option_id.clone()));
                self.render.permission_decided(&option.name, why);
            }
            None => self.render.permission_decided("cancelled", &format!("{why}, but no such option was offered")),
        }
    }

    /// Answers the pending question from the lines read, or rejects it at the end of input.
    fn answer_pending(&mut self) {
        while let Some(ask) = self.pending.take() {
            if let Some(line) = self.lines.pop_front() {
                self.render.input_read(&line, self.settings.stdin_tty);
                match parse_answer(&ask.request.options, &line) {
                    Some(option) => {
                        let _ = ask.reply.send(RequestPermissionOutcome::selected(option.option_id.clone()));
                        self.render.permission_decided(&option.name, "your answer");
                    }
                    None => {
                        self.render.warn(&format!("`{}` is not one of the options", line.trim()));
                        self.render.ask_again(ask.request.options.len());
                        self.pending = Some(ask);
                    }
                }
            } else if self.input_ended {
                match reject_option(&ask.request.options) {
                    Some(option) => {
                        let _ = ask.reply.send(RequestPermissionOutcome::selected(option.option_id.clone()));
                        self.render.permission_decided(&option.name, "end of input");
                    }
                    None => self.render.permission_decided("cancelled", "end of input"),
                }
            } else {
                self.pending = Some(ask);
                return;
            }
        }
    }

    /// One prompt turn, from `session/prompt` to its stop reason.
    fn turn(&mut self, text: &str) -> Turn {
        let Some(session) = self.session.clone() else { return Turn::Failed(Exit::Failure) };
        let requester = self.requester();
        let turn = match requester.prompt(PromptRequest::new(session.clone(), vec![ContentBlock::text(text)])) {
            Ok(turn) => turn,
            Err(e) => return self.turn_failed(e),
        };
        let tx = self.tx.clone();
        let spawned = thread::Builder::new().name("acp-turn".into()).spawn(move || {
            let mut turn = turn;
            while let Some(update) = turn.next_update() {
                if tx.send(UiEvent::Update(update)).is_err() {
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
        // acp-blocking starts an agent request of this session only after the turn's reader has
        // taken the updates that preceded it on the wire, so the channel receives them in order.
        loop {
            let wait = TICK;
            match self.rx.recv_timeout(wait) {
                Ok(UiEvent::Update(update)) => self.render.update(&update),
                Ok(UiEvent::TurnEnded(result)) => {
                    self.pending = None;
                    self.cancelling = false;
                    return match result {
                        Ok(response) => {
                            self.render.end_turn(&response.stop_reason);
                            Turn::Stopped(response.stop_reason)
                        }
                        Err(e) => self.turn_failed(e),
                    };
                }
                Ok(UiEvent::Interrupt) if self.cancelling => {
                    self.render.warn("quitting");
                    return Turn::Quit;
                }
                Ok(UiEvent::Interrupt) => {
                    self.cancelling = true;
                    self.pending = None;
                    if let Err(e) = requester.cancel(&session) {
                        self.render.error(&format!("could not cancel: {e}"));
                    }
                    self.render.cancelling();
                    self.render.waiting(Some("waiting for the agent to stop…"));
                }
                Ok(event) => self.background(event),
                Err(RecvTimeoutError::Timeout) => self.render.tick(),
                Err(RecvTimeoutError::Disconnected) => return Turn::Died,
            }
        }
    }

    fn turn_failed(&mut self, error: Error) -> Turn {
        self.render.waiting(None);
        match self.failed("session/prompt", error) {
            Exit::AgentDied => Turn::Died,
            exit => Turn::Failed(exit),
        }
    }

    /// The interactive loop: a prompt per line until end of input, `/quit` or Ctrl-C.
    fn interactive(&mut self) -> Exit {
        self.render.info("Type a prompt and press Enter. Ctrl-C cancels a running turn; Ctrl-D or /quit leaves.");
        self.ensure_input();
        loop {
            self.render.prompt();
            let line = loop {
                if let Some(line) = self.lines.pop_front() {
                    break line;
                }
                if self.input_ended {
                    return Exit::Ok;
                }
                match self.rx.recv_timeout(TICK) {
                    Ok(UiEvent::Interrupt) => return Exit::Interrupted,
                    Ok(event) => {
                        self.background(event);
                        if self.render.at_line_start() && self.pending.is_none() {
                            self.render.prompt();
                        }
                    }
                    Err(_) => {
                        if self.process.try_status().is_some() {
                            self.died("while idle");
                            return Exit::AgentDied;
                        }
                    }
                }
            };
            self.render.input_read(&line, self.settings.stdin_tty);
            match line.trim() {
                "" => {}
                "/quit" | "/exit" => return Exit::Ok,
                text => match self.turn(text) {
                    Turn::Stopped(_) | Turn::Failed(_) => {}
                    Turn::Died => return Exit::AgentDied,
                    Turn::Quit => return Exit::Interrupted,
                },
            }
        }
    }
}
