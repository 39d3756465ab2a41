//! The slash commands on the session: what a line asks for, and modes, config options and the
//! agent's commands kept up to date from its updates; the state is in [`crate::client::control`].

use super::Session;
use crate::Exit;
use crate::client::commands::{BUILTIN, Command, parse, unknown_message};
use crate::client::control::{Act, State};
use acp_blocking::Error;
use acp_blocking::acp_proto::types::*;

impl Session {
    /// Keeps the state current with an update of `session`.
    pub(super) fn observe(&mut self, session: &SessionId, update: &SessionUpdate) {
        let control = &mut self.control;
        if self.session.as_ref() == Some(session) {
            if control.state.apply(update) {
                control.completions.set_agent(&control.state.commands);
            }
            return;
        }
        match &mut control.early {
            Some((id, state)) if id == session => {
                state.apply(update);
            }
            early => {
                let mut state = State::default();
                state.apply(update);
                *early = Some((session.clone(), state));
            }
        }
    }

    /// Makes `id` the current session, with the modes and options of its `session/new` or
    /// `session/load` answer and what came for it before.
    pub(super) fn adopt(
        &mut self,
        id: SessionId,
        modes: Option<SessionModeState>,
        options: Option<Vec<SessionConfigOption>>,
    ) {
        let control = &mut self.control;
        let mut state = match control.early.take() {
            Some((early, state)) if early == id => state,
            _ => State::default(),
        };
        state.modes = modes.or(state.modes);
        if let Some(options) = options {
            state.options = options;
        }
        control.completions.set_agent(&state.commands);
        control.state = state;
        self.session = Some(id);
    }

    /// Whether the line at the front of the input is `/cancel`. A question on screen leaves
    /// it there instead of taking it as its answer: in a turn, [`Self::take_cancel_line`]
    /// then cancels the turn (which answers the questions `cancelled`); between turns,
    /// [`Self::command`] cancels the questions.
    pub(super) fn cancel_line_waits(&self) -> bool {
        self.lines.front().is_some_and(|l| l.trim() == "/cancel")
    }

    /// Takes a `/cancel` waiting at the front of the input, a question being asked or not.
    pub(super) fn take_cancel_line(&mut self) -> bool {
        if !self.cancel_line_waits() {
            return false;
        }
        if let Some(line) = self.lines.pop_front() {
            self.render.input_read(&line, self.settings.stdin_tty);
        }
        true
    }

    /// Runs one line of the interactive loop: a slash command here, or a prompt to send.
    pub(super) fn command(&mut self, line: &str) -> Act {
        let agent = self.control.completions.agent();
        let result = match parse(line, |name| agent.iter().any(|a| a == name)) {
            Command::Prompt(text) => return Act::Prompt(text),
            Command::Nothing => Ok(()),
            Command::Quit => return Act::Exit(Exit::Ok),
            Command::Help => self.help(),
            Command::Cancel if !self.asks.is_empty() => {
                self.drop_questions();
                self.say("questions cancelled (no turn is running)")
            }
            Command::Cancel => self.say("no turn is running"),
            Command::Steer(text) if !text.is_empty() => {
                self.render.info("no turn is running: sent as a prompt");
                return Act::Prompt(text);
            }
            Command::Steer(_) => self.complain("/steer takes the text to add to the running turn"),
            Command::Queue => self.say("nothing is queued (no turn is running)"),
            Command::Mode(id) => self.mode(id),
            Command::Model(id) => self.model(id),
            Command::Config(id, value) => self.config(id, value),
            Command::Sessions => self.list_sessions(),
            Command::New => self.new_session(),
            Command::Load(id) => self.load(id),
            Command::Unknown(name) => self.complain(&unknown_message(&name, &agent)),
        };
        match result {
            Ok(()) => Act::Done,
            Err(exit) => Act::Exit(exit),
        }
    }

    fn say(&mut self, text: &str) -> Result<(), Exit> {
        self.render.info(text);
        Ok(())
    }

    fn complain(&mut self, text: &str) -> Result<(), Exit> {
        self.render.error(text);
        Ok(())
    }

    fn help(&mut self) -> Result<(), Exit> {
        self.render.info("commands:");
        for (name, args, what) in BUILTIN {
            let usage = if args.is_empty() { format!("/{name}") } else { format!("/{name} {args}") };
            self.render.info(&format!("  {usage:<22} {what}"));
        }
        let agent = self.control.state.commands.clone();
        if !agent.is_empty() {
            self.render.info("the agent's commands (sent as prompts):");
        }
        for command in agent {
            let hint = match &command.input {
                Some(AvailableCommandInput::Unstructured(input)) => format!(" <{}>", input.hint),
                _ => String::new(),
            };
            self.render.info(&format!("  {:<22} {}", format!("/{}{hint}", command.name), command.description));
        }
        self.say("//text sends /text as a prompt; Tab completes command names")
    }

    /// Reports a failed control request; only a dead agent ends the loop.
    pub(super) fn control_failed(&mut self, method: &str, error: Error) -> Result<(), Exit> {
        match self.failed(method, error) {
            Exit::AgentDied => Err(Exit::AgentDied),
            _ => Ok(()),
        }
    }
}
