//! `/mode`, `/model` and `/config`: the session's modes (`session/set_mode`) and config
//! options (`session/set_config_option`; `/model` is the first option of the `model` category).

use acp_blocking::acp_proto::types::*;

use super::Session;
use crate::Exit;
use crate::client::render::config_options::{current, describe, values};

/// The value to send for `option` from the user's text.
fn value_for(option: &SessionConfigOption, text: &str) -> Result<SessionConfigOptionValue, String> {
    match &option.kind {
        SessionConfigKind::Boolean(_) => match text {
            "true" | "on" | "yes" => Ok(SessionConfigOptionValue::Boolean(true)),
            "false" | "off" | "no" => Ok(SessionConfigOptionValue::Boolean(false)),
            _ => Err(format!("`{}` takes true or false", option.id)),
        },
        _ => {
            let known = values(option);
            if known.is_empty() || known.iter().any(|v| v.value.as_ref() == text) {
                Ok(SessionConfigOptionValue::ValueId(text.into()))
            } else {
                let names: Vec<&str> = known.iter().map(|v| v.value.as_ref()).collect();
                Err(format!("`{}` has no value `{text}`; values: {}", option.id, names.join(", ")))
            }
        }
    }
}

impl Session {
    /// Under a listing: where it came from, when not from the agent.
    fn recorded_note(&mut self) {
        if self.control.state.recorded {
            self.render.info("  (as recorded when the session was last used: the agent did not say them on reopening)");
        }
    }

    /// `/mode`: lists the modes, or switches with `session/set_mode`.
    pub(super) fn mode(&mut self, id: Option<String>) -> Result<(), Exit> {
        let Some(modes) = self.control.state.modes.clone() else {
            self.render.info("the agent offers no modes for this session");
            return Ok(());
        };
        let Some(id) = id else {
            self.render.info("modes (/mode ID switches):");
            self.recorded_note();
            for mode in &modes.available_modes {
                let mark = if mode.id == modes.current_mode_id { "*" } else { " " };
                let what = mode.description.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
                self.render.info(&format!("{mark} {} ({}){what}", mode.id, mode.name));
            }
            return Ok(());
        };
        if !modes.available_modes.is_empty() && !modes.available_modes.iter().any(|m| m.id.as_ref() == id) {
            let ids: Vec<&str> = modes.available_modes.iter().map(|m| m.id.as_ref()).collect();
            self.render.error(&format!("no mode `{id}`; modes: {}", ids.join(", ")));
            return Ok(());
        }
        let Some(session) = self.session.clone() else { return Ok(()) };
        let (link, limit) = (self.link(), self.settings.connect_timeout);
        let request = SetSessionModeRequest::new(session, id.as_str());
        match self.call("switching mode…", move || link.set_mode(request, limit))? {
            Ok(_) => {
                if let Some(modes) = &mut self.control.state.modes {
                    modes.current_mode_id = id.as_str().into();
                }
                self.render.info(&format!("mode set to `{id}`"));
                Ok(())
            }
            Err(e) => self.control_failed("session/set_mode", e),
        }
    }

    /// `/model`: the first config option of the `model` category, listed or set.
    pub(super) fn model(&mut self, id: Option<String>) -> Result<(), Exit> {
        let options = &self.control.state.options;
        let found = options.iter().find(|o| o.category == Some(SessionConfigOptionCategory::Model)).cloned();
        let Some(option) = found else {
            self.render.info("the agent offers no model choice (no config option of the `model` category)");
            return Ok(());
        };
        match id {
            Some(value) => self.set_option(&option, &value),
            None => {
                self.render.info(&format!("models (/model ID picks one), option `{}`:", option.id));
                self.recorded_note();
                for value in values(&option) {
                    let mark = if current(&option) == value.value.as_ref() { "*" } else { " " };
                    self.render.info(&format!("{mark} {} ({})", value.value, value.name));
                }
                Ok(())
            }
        }
    }

    /// `/config`: lists the options, shows one, or sets one.
    pub(super) fn config(&mut self, id: Option<String>, value: Option<String>) -> Result<(), Exit> {
        let options = self.control.state.options.clone();
        if options.is_empty() {
            self.render.info("the agent offers no config options for this session");
            return Ok(());
        }
        let Some(id) = id else {
            self.render.info("config options (/config ID VALUE sets one):");
            self.recorded_note();
            for option in &options {
                self.render.info(&describe(option));
            }
            return Ok(());
        };
        let Some(option) = options.iter().find(|o| o.id.as_ref() == id) else {
            let ids: Vec<&str> = options.iter().map(|o| o.id.as_ref()).collect();
            self.render.error(&format!("no config option `{id}`; options: {}", ids.join(", ")));
            return Ok(());
        };
        match value {
            Some(value) => self.set_option(option, &value),
            None => {
                self.render.info(&describe(option));
                Ok(())
            }
        }
    }

    /// `session/set_config_option`; the answer (all options) becomes the state.
    fn set_option(&mut self, option: &SessionConfigOption, text: &str) -> Result<(), Exit> {
        let value = match value_for(option, text) {
            Ok(value) => value,
            Err(why) => {
                self.render.error(&why);
                return Ok(());
            }
        };
        let Some(session) = self.session.clone() else { return Ok(()) };
        let (link, limit) = (self.link(), self.settings.connect_timeout);
        let request = SetSessionConfigOptionRequest::new(session, option.id.clone(), value);
        match self.call("setting the option…", move || link.set_config_option(request, limit))? {
            Ok(response) => {
                self.control.state.options = response.config_options;
                let now = self.control.state.options.iter().find(|o| o.id == option.id).map(current);
                let shown = now.unwrap_or_else(|| text.to_owned());
                self.render.info(&format!("{} = {shown}", option.id));
                Ok(())
            }
            Err(e) => self.control_failed("session/set_config_option", e),
        }
    }
}
