//! Reopening a remembered session (`--resume ID`, `--continue`), and recording the session in
//! the session database.
//!
//! A session is reopened with `session/resume` when the agent advertises
//! `sessionCapabilities.resume`, else with `session/load` when it advertises `loadSession`
//! (the history it replays is rendered as it comes); an agent that advertises neither ends the
//! client with [`Exit::NoResume`] and no session is opened: never a silent new one.

use std::path::Path;
use std::time::{Duration, Instant};

use acp_blocking::acp_proto::types::{
    AgentCapabilities, LoadSessionRequest, LoadSessionResponse, ResumeSessionRequest, SessionConfigOption, SessionId,
    SessionModeState,
};

use super::Session;
use crate::Exit;
use crate::client::journal::{Controls, Journal};
use crate::client::{ClientConfig, Resume};
use crate::store::Store;

/// How long no replayed update must come for the replay to count as drawn.
const REPLAY_QUIET: Duration = Duration::from_millis(100);
/// The longest the client waits for that.
const REPLAY_WAIT: Duration = Duration::from_secs(2);

/// The session `--resume`/`--continue` (or `session/new`) opened, with the modes and config
/// options its answer carried.
pub(super) struct Reopened {
    pub(super) id: SessionId,
    pub(super) modes: Option<SessionModeState>,
    pub(super) options: Option<Vec<SessionConfigOption>>,
}

impl Session {
    /// Reopens `resume` through `session/resume` or `session/load`, whichever the agent
    /// advertises (resume first: it replays nothing).
    pub(super) fn reopen(&mut self, resume: &Resume, cwd: &Path, caps: &AgentCapabilities) -> Result<Reopened, Exit> {
        let (link, limit) = (self.link(), self.settings.connect_timeout);
        let id = SessionId::from(resume.session_id.clone());
        let cwd_text = cwd.display().to_string();
        let local = resume.local_id;
        if caps.session_capabilities.resume.is_some() {
            let request = ResumeSessionRequest::new(id.clone(), cwd_text);
            let answer = match self.call("resuming the session…", move || link.resume_session(request, limit))? {
                Ok(answer) => answer,
                Err(e) => return Err(self.failed("session/resume", e)),
            };
            self.render.info(&format!("resumed session {local} ({id}) with session/resume"));
            return Ok(Reopened { id, modes: answer.modes, options: answer.config_options });
        }
        if caps.supports_load_session() {
            let answer = match self.load_drawn(id.clone(), cwd_text)? {
                Ok(answer) => answer,
                Err(e) => return Err(self.failed("session/load", e)),
            };
            self.render.info(&format!("loaded session {local} ({id}) with session/load; its history is above"));
            return Ok(Reopened { id, modes: answer.modes, options: answer.config_options });
        }
        self.render.error(&format!(
            "cannot resume session {local} ({id}): the agent advertises neither sessionCapabilities.resume nor \
             loadSession, so no session was opened (run without --resume/--continue for a new session)"
        ));
        Err(Exit::NoResume)
    }

    /// `session/load` of `id` in `cwd` (`--resume` and `/load`); when the agent answers, the
    /// history it replayed is drawn first ([`Session::drain_background`]).
    pub(super) fn load_drawn(
        &mut self,
        id: SessionId,
        cwd: String,
    ) -> Result<Result<LoadSessionResponse, acp_blocking::Error>, Exit> {
        let (link, limit) = (self.link(), self.settings.connect_timeout);
        let request = LoadSessionRequest::new(id, cwd, vec![]);
        let answer = self.call("loading the session…", move || link.load_session(request, limit))?;
        if answer.is_ok() {
            self.drain_background();
        }
        Ok(answer)
    }

    /// Renders the history `session/load` replayed. The agent sent it before its answer, but
    /// the connection hands updates to the UI on another thread: wait until none came for
    /// [`REPLAY_QUIET`] (at most [`REPLAY_WAIT`]), so that the history is drawn before what
    /// follows. Updates later than that are still drawn, only later.
    pub(super) fn drain_background(&mut self) {
        let end = Instant::now() + REPLAY_WAIT;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.rx.recv_timeout(left.min(REPLAY_QUIET)) {
                Ok(event) => self.background(event),
                Err(_) => break,
            }
        }
    }

    /// Fills in what the answer reopening recorded session `local_id` lacked (its modes, its
    /// config options) from the session database, saying so; whether it did. The agent's
    /// answer wins where it carries them.
    pub(super) fn recorded_controls(&mut self, local_id: i64, reopened: &mut Reopened) -> bool {
        if reopened.modes.is_some() && reopened.options.is_some() {
            return false;
        }
        let Ok(Some(json)) = Store::open_default().and_then(|store| store.controls(local_id)) else {
            return false;
        };
        let Ok(recorded) = serde_json::from_str::<Controls>(&json) else { return false };
        let mut used = Vec::new();
        if reopened.modes.is_none() && recorded.modes.is_some() {
            reopened.modes = recorded.modes;
            used.push("modes");
        }
        if reopened.options.is_none() && !recorded.config_options.is_empty() {
            reopened.options = Some(recorded.config_options);
            used.push("config options");
        }
        if used.is_empty() {
            return false;
        }
        self.render.info(&format!(
            "the agent's answer carried no {}: showing those recorded with session {} (as they were then)",
            used.join(" or "),
            local_id
        ));
        true
    }

    /// [`Session::recorded_controls`] for `/load ID`: the recorded session whose agent
    /// session id is `id` (when this client records, and the database names one session so),
    /// else nothing.
    pub(super) fn recorded_controls_of(&mut self, id: &str, reopened: &mut Reopened) -> bool {
        if self.journal.is_none() {
            return false;
        }
        let Ok(record) = Store::open_default().and_then(|store| store.find(id)) else { return false };
        self.recorded_controls(record.id, reopened)
    }

    /// Starts recording the session `id` (a new row, or the resumed one), if the client
    /// records; a database that cannot be opened is a warning, not a failure.
    pub(super) fn start_journal(&mut self, config: &ClientConfig, cwd: &Path, id: &SessionId) {
        let Some(agent) = &config.record else { return };
        let project = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf()).display().to_string();
        let opened = Store::open_default().and_then(|mut store| {
            let local = match &config.resume {
                Some(resume) => resume.local_id,
                None => store.insert(id.as_ref(), agent, &project, config.protocol.number())?,
            };
            Ok(Journal::new(store, local, id.as_ref(), agent.clone(), project, config.protocol.number()))
        });
        match opened {
            Ok(journal) => {
                if config.resume.is_none() {
                    self.render.info(&format!(
                        "recorded as session {} (acp sessions show {})",
                        journal.id(),
                        journal.id()
                    ));
                }
                self.journal = Some(journal);
            }
            Err(e) => self.render.warn(&format!("this session is not recorded: {e}")),
        }
    }

    /// Writes what the journal holds, reporting a failure as a warning.
    pub(super) fn journal_write(&mut self, stop: Option<Option<&acp_blocking::acp_proto::types::StopReason>>) {
        let Some(journal) = &mut self.journal else { return };
        journal.controls(self.control.state.modes.as_ref(), &self.control.state.options);
        let written = match stop {
            Some(stop) => journal.end_turn(stop),
            None => journal.write(),
        };
        if let Err(e) = written {
            self.render.warn(&format!("could not record the turn: {e}"));
        }
    }
}
