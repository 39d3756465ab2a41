//! `acp agents`, `acp config` and `acp sessions`: what the config file and the session store hold.

use std::process::ExitCode;

use acp_cli::config::Loaded;
use acp_cli::{Exit, manage};
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigAction {
    /// Print the config file's path and the effective config (TOML).
    Show,
    /// Print the config file's path.
    Path,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsAction {
    /// The sessions of this project (the working directory), the latest first.
    List {
        /// Every project's sessions.
        #[arg(long)]
        all: bool,
        /// Also show this named agent's own session list (session/list), when it has one.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
    /// A session's record and transcript.
    Show {
        /// The local id (or the agent's session id, if only one session has it).
        id: String,
    },
    /// Mark a session closed (`--continue` skips it).
    Close {
        /// The local id (or the agent's session id).
        id: String,
    },
    /// Forget the sessions not updated for some days, with their transcripts.
    Prune {
        /// Sessions not updated for this many days.
        #[arg(long, value_name = "DAYS", default_value_t = 30)]
        older_than: u64,
    },
}

/// `acp agents`: the named agents of the config file.
pub(crate) fn agents(load: impl FnOnce() -> Result<Loaded, String>) -> ExitCode {
    match load() {
        Ok(loaded) => manage::agents(&loaded).into(),
        Err(e) => manage::fail(&e).into(),
    }
}

/// `acp config show|path`.
pub(crate) fn config(action: ConfigAction, load: impl FnOnce() -> Result<Loaded, String>) -> ExitCode {
    match (load(), action) {
        (Ok(loaded), ConfigAction::Show) => manage::config_show(&loaded).into(),
        (Ok(loaded), ConfigAction::Path) => {
            println!("{}", loaded.path.display());
            ExitCode::SUCCESS
        }
        (Err(e), _) => manage::fail(&e).into(),
    }
}

/// `acp sessions …`.
pub(crate) fn sessions(action: Option<SessionsAction>, load: impl FnOnce() -> Result<Loaded, String>) -> ExitCode {
    sessions_exit(action, load).into()
}

fn sessions_exit(action: Option<SessionsAction>, load: impl FnOnce() -> Result<Loaded, String>) -> Exit {
    match action.unwrap_or(SessionsAction::List { all: false, agent: None }) {
        SessionsAction::List { all, agent: None } => manage::sessions_list(all, None),
        SessionsAction::List { all, agent: Some(name) } => {
            let loaded = match load() {
                Ok(loaded) => loaded,
                Err(e) => return manage::fail(&e),
            };
            match loaded.config.agent(&name, &loaded.path) {
                Ok(entry) => manage::sessions_list(all, Some((&name, entry))),
                Err(e) => manage::fail(&e),
            }
        }
        SessionsAction::Show { id } => manage::sessions_show(&id),
        SessionsAction::Close { id } => manage::sessions_close(&id),
        SessionsAction::Prune { older_than } => manage::sessions_prune(older_than),
    }
}
