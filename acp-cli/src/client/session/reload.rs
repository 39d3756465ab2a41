//! Reloading the session over a new connection after the remote agent was lost (see
//! [`crate::client::reload`]).

use super::Session;
use crate::client::config::ClientConfig;
use acp_blocking::acp_proto::types::{LoadSessionRequest, ResumeSessionRequest};
use std::time::{Duration, Instant};

/// How long the replay of `session/load` may take to stop coming after its answer.
const REPLAY_QUIET: Duration = Duration::from_millis(100);
const REPLAY_WAIT: Duration = Duration::from_secs(2);

impl Session {
    /// After the remote agent was lost: connects again and reopens the session; `true` once
    /// the session goes on over the new connection.
    pub(super) fn reload(&mut self, config: &ClientConfig) -> bool {
        let Some(id) = self.session.clone() else { return false };
        let caps = self.control.caps.clone();
        let by_resume = caps.session_capabilities.resume.is_some();
        if !by_resume && !caps.supports_load_session() {
            self.render.info("the agent can neither resume nor load sessions: the session cannot be reloaded");
            return false;
        }
        let Some(redial) = self.redial.as_mut() else { return false };
        self.render.warn("could not resume the connection: connecting again to reload the session from the agent");
        let Some((conn, process)) = redial(&mut self.render) else { return false };
        let mut lost = std::mem::replace(&mut self.process, process);
        lost.terminate(Duration::ZERO, || {});
        let lost = std::mem::replace(&mut self.conn, conn);
        drop(lost);
        let timeout = self.settings.connect_timeout;
        let init = self.initialize_request(config);
        let (link, limit) = (self.link(), timeout);
        match self.call("connecting again…", move || link.initialize(init, limit)) {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                self.render.error(&format!("could not reload the session: initialize failed: {e}"));
                return false;
            }
            Err(_) => return false,
        }
        let (link, limit) = (self.link(), timeout);
        let cwd = self.control.cwd.clone();
        let (method, answered) = if by_resume {
            let request = ResumeSessionRequest::new(id.clone(), cwd);
            let answer = self.call("resuming the session…", move || link.resume_session(request, limit));
            ("session/resume", answer.map(|a| a.map(|r| (r.modes, r.config_options))))
        } else {
            let request = LoadSessionRequest::new(id.clone(), cwd, vec![]);
            self.skipping_replay = true;
            let answer = self.call("loading the session…", move || link.load_session(request, limit));
            self.skip_replay();
            self.skipping_replay = false;
            ("session/load", answer.map(|a| a.map(|r| (r.modes, r.config_options))))
        };
        let (modes, options) = match answered {
            Ok(Ok(state)) => state,
            Ok(Err(e)) => {
                self.render.error(&format!("could not reload the session: {method} failed: {e}"));
                return false;
            }
            Err(_) => return false,
        };
        self.adopt(id.clone(), modes, options);
        self.render.warn(&format!(
            "reloaded session {id} from the agent with {method} over a new connection; the turn that was running \
             (if one was) is lost"
        ));
        true
    }

    /// Drops the rest of what `session/load` replayed (updates outside a turn reach the UI on
    /// another thread: until none came for [`REPLAY_QUIET`], at most [`REPLAY_WAIT`]);
    /// anything else is handled as usual.
    fn skip_replay(&mut self) {
        let end = Instant::now() + REPLAY_WAIT;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.rx.recv_timeout(left.min(REPLAY_QUIET)) {
                Ok(event) => self.background(event),
                Err(_) => break,
            }
        }
    }
}
