//! `/sessions` (the agent's `session/list`), `/new` (`session/new` in the same working
//! directory) and `/load ID` (`session/load`, or `session/resume` from an agent that has only
//! that, as every v2 agent): each only when the agent advertises it.

use acp_blocking::acp_proto::types::*;

use super::Session;
use crate::Exit;

/// Sessions of one `session/list` page shown (the rest is counted).
const MAX_LISTED: usize = 50;

impl Session {
    /// `/sessions`: the first page of the agent's `session/list`.
    pub(super) fn list_sessions(&mut self) -> Result<(), Exit> {
        if !self.control.caps.supports_list_sessions() {
            self.render.info("the agent does not advertise session/list (sessionCapabilities.list)");
            return Ok(());
        }
        let (link, limit) = (self.link(), self.settings.connect_timeout);
        let response =
            match self.call("listing sessions…", move || link.list_sessions(ListSessionsRequest::default(), limit))? {
                Ok(response) => response,
                Err(e) => return self.control_failed("session/list", e),
            };
        if response.sessions.is_empty() {
            self.render.info("the agent lists no sessions");
        } else {
            self.render.info("the agent's sessions (/load ID reopens one):");
        }
        for info in response.sessions.iter().take(MAX_LISTED) {
            let mark = if self.session.as_ref() == Some(&info.session_id) { "*" } else { " " };
            let title = info.title.as_deref().map(|t| format!(" \"{t}\"")).unwrap_or_default();
            let updated = info.updated_at.as_deref().map(|u| format!(" · {u}")).unwrap_or_default();
            self.render.info(&format!("{mark} {}{title} · {}{updated}", info.session_id, info.cwd));
        }
        let more = response.sessions.len().saturating_sub(MAX_LISTED);
        if more > 0 || response.next_cursor.is_some() {
            self.render
                .info(&format!("  … {more} more on this page, and more pages: {}", response.next_cursor.is_some()));
        }
        Ok(())
    }

    /// `/new`: a new session in the same working directory becomes the current one.
    pub(super) fn new_session(&mut self) -> Result<(), Exit> {
        let (link, limit) = (self.link(), self.settings.connect_timeout);
        let request = NewSessionRequest::new(self.control.cwd.clone(), vec![]);
        let response = match self.call("opening a session…", move || link.new_session(request, limit))? {
            Ok(response) => response,
            Err(e) => return self.control_failed("session/new", e),
        };
        let id = response.session_id.clone();
        self.adopt(response.session_id, response.modes, response.config_options);
        self.render.info(&format!("session {id} · cwd {}", self.control.cwd));
        self.journal_follows(id.as_ref(), true);
        Ok(())
    }

    /// `/load ID`: `session/load` (the agent replays the conversation), or `session/resume`
    /// when the agent advertises only that (nothing is replayed), then ID is current.
    pub(super) fn load(&mut self, id: Option<String>) -> Result<(), Exit> {
        let Some(id) = id else {
            self.render.error("/load needs a session id (/sessions lists them)");
            return Ok(());
        };
        let caps = &self.control.caps;
        let (loads, resumes) = (caps.supports_load_session(), caps.supports_resume_session());
        if !loads && !resumes {
            self.render.error(&format!(
                "the agent does not advertise session/load (loadSession), so session {id} cannot be reopened"
            ));
            return Ok(());
        }
        let (modes, options, how) = if loads {
            // The replayed conversation reaches the UI on another thread: drawn before "loaded".
            match self.load_drawn(id.as_str().into(), self.control.cwd.clone())? {
                Ok(response) => (response.modes, response.config_options, "loaded"),
                Err(e) => return self.control_failed("session/load", e),
            }
        } else {
            let (link, limit) = (self.link(), self.settings.connect_timeout);
            let request = ResumeSessionRequest::new(id.as_str(), self.control.cwd.clone());
            match self.call("resuming the session…", move || link.resume_session(request, limit))? {
                Ok(response) => (response.modes, response.config_options, "resumed (session/resume)"),
                Err(e) => return self.control_failed("session/resume", e),
            }
        };
        let mut reopened = super::resume::Reopened { id: id.as_str().into(), modes, options };
        let recorded = self.recorded_controls_of(&id, &mut reopened);
        self.adopt(reopened.id, reopened.modes, reopened.options);
        self.control.state.recorded = recorded;
        self.render.info(&format!("session {id} {how} · cwd {}", self.control.cwd));
        self.journal_follows(&id, false);
        Ok(())
    }

    /// The REPL went on in the agent's session `id` (`/new`: `fresh`, `/load`): the
    /// transcript goes on in that session's record (see [`crate::client::journal::Journal::follow`]).
    fn journal_follows(&mut self, id: &str, fresh: bool) {
        let Some(journal) = &mut self.journal else { return };
        match journal.follow(id, fresh) {
            Ok(crate::client::journal::Followed::New(local)) => {
                self.render.info(&format!("recorded as session {local} (acp sessions show {local})"));
            }
            Ok(crate::client::journal::Followed::Known(local)) => {
                self.render.info(&format!("recorded with session {local} (acp sessions show {local})"));
            }
            Err(e) => {
                self.render.warn(&format!("this session is not recorded: {e}"));
                self.journal = None;
            }
        }
    }
}
