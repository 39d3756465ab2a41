//! The reference agent's session modes, config options and slash command.
//!
//! Every session starts in mode `default` with model `ref-small`. The modes and the models do
//! not change the scripted turn: the agent only records them and reports them when asked
//! with the `/status` command. `session/new` answers `modes` and `configOptions` (a `mode`
//! select of category `mode`, kept in sync with the modes, and a `model` select of category
//! `model`). `session/set_mode` and a change of the `mode` option send `current_mode_update`
//! and `config_option_update`; `session/set_config_option` answers every option.
//!
//! The agent advertises its one command, `status`, with an `available_commands_update` in a
//! turn whose prompt contains the word `commands` (not after `session/new`, where an
//! unrequested update would change what existing peers observe).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use acp_blocking::RequestContext;
use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;

/// The modes: id, name, description.
pub const MODES: [(&str, &str, &str); 2] = [
    ("default", "Default", "The scripted turn"),
    ("plan", "Plan", "The same scripted turn; the mode is recorded and reported by /status"),
];
/// The models: value and name.
pub const MODELS: [(&str, &str); 2] = [("ref-small", "Reference small"), ("ref-large", "Reference large")];
/// The command the agent advertises: `/status` answers the session's mode and model.
pub const STATUS_COMMAND: &str = "status";
/// The config option ids.
const MODE_OPTION: &str = "mode";
const MODEL_OPTION: &str = "model";

/// Whether `text` contains the word `commands` (any case, delimited by non-alphanumerics).
pub fn is_commands(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|w| w.eq_ignore_ascii_case("commands"))
}

/// A session's mode and model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Choice {
    mode: String,
    model: String,
}

impl Default for Choice {
    fn default() -> Choice {
        Choice { mode: MODES[0].0.to_owned(), model: MODELS[0].0.to_owned() }
    }
}

impl Choice {
    /// The `modes` of a `session/new` answer.
    pub(super) fn modes(&self) -> SessionModeState {
        let modes = MODES
            .iter()
            .map(|(id, name, what)| {
                let mut mode = SessionMode::new(*id, *name);
                mode.description = Some((*what).to_owned());
                mode
            })
            .collect();
        SessionModeState::new(self.mode.as_str(), modes)
    }

    /// Every config option with its current value.
    pub(super) fn options(&self) -> Vec<SessionConfigOption> {
        let modes: Vec<_> = MODES.iter().map(|(id, name, _)| SessionConfigSelectOption::new(*id, *name)).collect();
        let models: Vec<_> = MODELS.iter().map(|(id, name)| SessionConfigSelectOption::new(*id, *name)).collect();
        let mut mode = SessionConfigOption::select(MODE_OPTION, "Mode", self.mode.as_str(), modes.into());
        mode.category = Some(SessionConfigOptionCategory::Mode);
        let mut model = SessionConfigOption::select(MODEL_OPTION, "Model", self.model.as_str(), models.into());
        model.category = Some(SessionConfigOptionCategory::Model);
        vec![mode, model]
    }

    /// What `/status` answers.
    pub(super) fn status(&self) -> String {
        format!("\nstatus: mode {}, model {}\n", self.mode, self.model)
    }
}

/// The `available_commands_update` the agent sends for the word `commands`.
pub(super) fn commands_update() -> SessionUpdate {
    let status = AvailableCommand::new(STATUS_COMMAND, "Report the session's mode and model");
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(vec![status]))
}

/// Tells the client the session's new mode: `current_mode_update`, then the options in sync
/// (`config_option_update`). A client that went away is not an error of the request.
pub(super) fn announce_mode(cx: &RequestContext, session: &SessionId, choice: &Choice) {
    let mode = CurrentModeUpdate::new(choice.mode.as_str());
    let _ = cx.send_session_update(session.clone(), SessionUpdate::CurrentModeUpdate(mode));
    let options = ConfigOptionUpdate::new(choice.options());
    let _ = cx.send_session_update(session.clone(), SessionUpdate::ConfigOptionUpdate(options));
}

/// Whether the prompt is the `/status` command.
pub(super) fn is_status(text: &str) -> bool {
    text.trim_start().strip_prefix('/').and_then(|t| t.split_whitespace().next()) == Some(STATUS_COMMAND)
}

/// The open sessions' choices (an entry per session the agent opened, dropped at close).
#[derive(Debug, Default)]
pub(super) struct Choices {
    map: Mutex<HashMap<SessionId, Choice>>,
}

impl Choices {
    fn lock(&self) -> MutexGuard<'_, HashMap<SessionId, Choice>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new session's defaults.
    pub(super) fn open(&self, id: &SessionId) -> Choice {
        let choice = Choice::default();
        self.lock().insert(id.clone(), choice.clone());
        choice
    }

    /// A session opened again (`session/load`, `session/resume`): its choice if this agent
    /// still has it, else the defaults, kept from now on.
    pub(super) fn reopen(&self, id: &SessionId) -> Choice {
        self.lock().entry(id.clone()).or_default().clone()
    }

    pub(super) fn close(&self, id: &SessionId) {
        self.lock().remove(id);
    }

    /// The session's choice (the defaults for a session this table does not know).
    pub(super) fn get(&self, id: &SessionId) -> Choice {
        self.lock().get(id).cloned().unwrap_or_default()
    }

    /// The update a command prompt sends: the status for `/status`, the commands for the word
    /// `commands`; `None` for any other prompt.
    pub(super) fn command(&self, text: &str, session: &SessionId) -> Option<SessionUpdate> {
        if is_status(text) {
            let status = ContentChunk::new(ContentBlock::text(self.get(session).status()));
            return Some(SessionUpdate::AgentMessageChunk(status));
        }
        is_commands(text).then(commands_update)
    }

    /// Switches the mode; `-32602` for an unknown mode.
    pub(super) fn set_mode(&self, id: &SessionId, mode: &str) -> Result<Choice, RpcError> {
        if !MODES.iter().any(|(m, _, _)| *m == mode) {
            return Err(RpcError::invalid_params(format!("unknown mode `{mode}`")));
        }
        let mut map = self.lock();
        let choice = map.entry(id.clone()).or_default();
        choice.mode = mode.to_owned();
        Ok(choice.clone())
    }

    /// Sets a config option; the new choice and whether the mode changed. `-32602` for an
    /// unknown option or value, or a boolean value.
    pub(super) fn set_option(&self, request: &SetSessionConfigOptionRequest) -> Result<(Choice, bool), RpcError> {
        let SessionConfigOptionValue::ValueId(value) = &request.value else {
            return Err(RpcError::invalid_params(format!("`{}` is not a boolean option", request.config_id)));
        };
        let value = value.as_str();
        match request.config_id.as_str() {
            MODE_OPTION => self.set_mode(&request.session_id, value).map(|c| (c, true)),
            MODEL_OPTION if MODELS.iter().any(|(m, _)| *m == value) => {
                let mut map = self.lock();
                let choice = map.entry(request.session_id.clone()).or_default();
                choice.model = value.to_owned();
                Ok((choice.clone(), false))
            }
            MODEL_OPTION => Err(RpcError::invalid_params(format!("unknown model `{value}`"))),
            other => Err(RpcError::invalid_params(format!("unknown config option `{other}`"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_options_stay_in_sync() {
        let choices = Choices::default();
        let id = SessionId::from("sess-1");
        assert_eq!(choices.open(&id).status(), "\nstatus: mode default, model ref-small\n");
        let (choice, mode_changed) =
            choices.set_option(&SetSessionConfigOptionRequest::new(id.clone(), "mode", "plan")).unwrap();
        assert!(mode_changed);
        assert_eq!(choice.modes().current_mode_id.as_str(), "plan");
        choices.set_option(&SetSessionConfigOptionRequest::new(id.clone(), "model", "ref-large")).unwrap();
        assert_eq!(choices.get(&id).status(), "\nstatus: mode plan, model ref-large\n");
        assert!(choices.set_mode(&id, "nope").is_err());
        assert!(choices.set_option(&SetSessionConfigOptionRequest::new(id.clone(), "model", "gpt")).is_err());
        assert!(choices.set_option(&SetSessionConfigOptionRequest::new(id.clone(), "model", true)).is_err());
        assert!(is_status(" /status now") && !is_status("/statusx") && !is_status("status"));
        assert!(is_commands("list commands please") && !is_commands("commandsx"));
    }
}
