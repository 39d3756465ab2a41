//! `acp agent`: the reference agent on stdin/stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use acp_cli::Protocol;
use acp_cli::agent::{AgentConfig, ReferenceAgent};
use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct AgentArgs {
    /// How long a prompt containing the word `slow` keeps its turn open, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    slow_ms: u64,
    /// How many sessions may be open at once; `session/new` beyond is refused (close one
    /// with `session/close`).
    #[arg(long, value_name = "N", default_value_t = 1024)]
    max_sessions: usize,
    /// Do not log requests to stderr.
    #[arg(long)]
    quiet: bool,
    /// Keep sessions in this directory: advertises and serves session/load, session/resume
    /// and session/list, which find them after a restart.
    #[arg(long, value_name = "DIR")]
    history: Option<PathBuf>,
    /// With --history: do not advertise session/resume (clients must use session/load).
    #[arg(long, requires = "history")]
    no_resume: bool,
    /// Do not advertise or serve the `_session/steering` extension (a client then queues what
    /// is typed during a turn).
    #[arg(long)]
    no_steering: bool,
    /// With --history: answer session/load and session/resume without the session's modes and
    /// config options, as some agents do (a client then shows what it remembered).
    #[arg(long, requires = "history")]
    bare_reopen: bool,
    /// The ACP version to speak: 1, or 2 (the v2 Preview; needs a build with the feature
    /// unstable_protocol_v2; a v2 agent refuses a client that offers only 1).
    #[arg(long, value_enum, value_name = "VERSION", default_value = "1", conflicts_with = "history")]
    protocol: Protocol,
}

impl AgentArgs {
    /// The agent's settings these arguments ask for.
    fn config(&self) -> AgentConfig {
        let mut config = AgentConfig::default();
        config.slow_delay = Duration::from_millis(self.slow_ms);
        config.log = !self.quiet;
        config.max_sessions = self.max_sessions;
        config.history = self.history.clone();
        config.history_resume = !self.no_resume;
        config.reopen_state = !self.bare_reopen;
        config.steering = !self.no_steering;
        config
    }
}

/// Serves the agent of the version asked for until stdin ends.
pub(crate) fn run(args: AgentArgs) -> ExitCode {
    if let Err(e) = args.protocol.available() {
        eprintln!("acp agent: {e}");
        return ExitCode::from(2);
    }
    let config = args.config();
    #[cfg(feature = "unstable_protocol_v2")]
    let served = match args.protocol {
        Protocol::V2 => acp_cli::agent::v2::ReferenceAgent::with_config(config).serve_stdio(),
        Protocol::V1 => ReferenceAgent::with_config(config).serve_stdio(),
    };
    #[cfg(not(feature = "unstable_protocol_v2"))]
    let served = ReferenceAgent::with_config(config).serve_stdio();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp agent: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Command, parse};

    fn config(args: &[&str]) -> AgentConfig {
        match parse(&[&["agent"], args].concat()) {
            Command::Agent(args) => args.config(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_flags_become_the_agents_settings() {
        let defaults = config(&[]);
        assert_eq!(defaults.slow_delay, Duration::from_millis(5000));
        assert!(defaults.log && defaults.steering && defaults.reopen_state && defaults.history.is_none());
        let c = config(&["--slow-ms", "10", "--max-sessions", "3", "--quiet", "--no-steering"]);
        assert_eq!((c.slow_delay, c.max_sessions), (Duration::from_millis(10), 3));
        assert!(!c.log && !c.steering);
        let c = config(&["--history", "/tmp/h", "--no-resume", "--bare-reopen"]);
        assert_eq!(c.history.as_deref(), Some(std::path::Path::new("/tmp/h")));
        assert!(!c.history_resume && !c.reopen_state);
    }
}
