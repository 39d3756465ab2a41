//! What the interactive loop knows about its session (modes, config options, the agent's
//! commands), kept current from the `session/new` (or `session/load`) answer and the
//! `current_mode_update`, `config_option_update` and `available_commands_update`
//! notifications, and the slash commands that act on it (see [`super::commands`]).

use acp_blocking::acp_proto::types::*;

use super::commands::{Completions, MAX_AGENT_COMMANDS};
use crate::Exit;

/// What the agent told us about the current session.
#[derive(Debug, Clone, Default)]
pub(crate) struct State {
    pub(crate) modes: Option<SessionModeState>,
    pub(crate) options: Vec<SessionConfigOption>,
    pub(crate) commands: Vec<AvailableCommand>,
    /// The modes or options came from the session database, not from the agent (a reopen
    /// whose answer carried none): the listings say so.
    pub(crate) recorded: bool,
}

impl State {
    /// Applies one update; whether it changed the agent's commands.
    pub(crate) fn apply(&mut self, update: &SessionUpdate) -> bool {
        match update {
            SessionUpdate::CurrentModeUpdate(m) => match &mut self.modes {
                Some(modes) => modes.current_mode_id = m.current_mode_id.clone(),
                None => self.modes = Some(SessionModeState::new(m.current_mode_id.clone(), Vec::new())),
            },
            SessionUpdate::ConfigOptionUpdate(c) => self.options = c.config_options.clone(),
            SessionUpdate::AvailableCommandsUpdate(c) => {
                self.commands = c.available_commands.iter().take(MAX_AGENT_COMMANDS).cloned().collect();
                return true;
            }
            _ => {}
        }
        false
    }
}

/// The session controls' state: the agent's capabilities, the working directory, the
/// current session's [`State`] and the completions fed from it.
#[derive(Debug, Default)]
pub(crate) struct Control {
    pub(crate) caps: AgentCapabilities,
    pub(crate) cwd: String,
    pub(crate) state: State,
    pub(crate) completions: Completions,
    /// Updates of another session (one being opened or loaded, whose id is not current yet):
    /// only the latest such session is kept.
    pub(crate) early: Option<(SessionId, State)>,
}

/// What the interactive loop does after a line.
pub(crate) enum Act {
    /// Run a prompt turn with this text.
    Prompt(String),
    /// Read the next line.
    Done,
    /// Leave with this status.
    Exit(Exit),
}
