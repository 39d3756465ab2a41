//! How `acp client` combines its flags with the config file and the session database:
//! `--agent NAME`, `--resume ID`, `--continue`. Flags given on the command line win over the
//! named agent's entry, which wins over `[defaults]`. `--resume ID` without an agent reuses the
//! session's (its name, or its command line), and without `--cwd` its project directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::Exit;
use crate::client::{ClientConfig, Policy, Resume};
use crate::config::{AgentEntry, Loaded};
use crate::manage::project_of;
use crate::store::{AgentRef, Store};

/// What the command line says about the agent and the session.
#[derive(Debug, Default)]
pub struct Choice {
    /// `--agent NAME`.
    pub name: Option<String>,
    /// `--resume ID`.
    pub resume: Option<String>,
    /// `--continue`.
    pub continue_last: bool,
    /// A policy flag was given.
    pub policy: Option<Policy>,
    /// `--connect-timeout`, if given.
    pub connect_timeout: Option<u64>,
    /// `--root`s given.
    pub roots: Vec<PathBuf>,
    /// `--protocol`, if given (else v1, or the reopened session's version).
    pub protocol: Option<crate::Protocol>,
}

/// A failure: what to say and the exit status.
pub type Refusal = (String, Exit);

/// Fills `config` (whose `agent` holds the command after `--`, maybe empty) from `choice`, the
/// config file and, for `--resume`/`--continue`, the session database.
pub fn apply(config: &mut ClientConfig, choice: Choice, loaded: &Loaded) -> Result<(), Refusal> {
    let usage = |e: String| (e, Exit::Usage);
    let remote = config.connect.is_some();
    let mut name = choice.name.clone();
    let mut found_resume = None;
    if let Some(key) = &choice.resume {
        let store = Store::open_default().map_err(|e| (e, Exit::Failure))?;
        let record = store.find(key).map_err(|e| (e, Exit::NoResume))?;
        if config.agent.is_empty() && name.is_none() && !remote {
            match &record.agent {
                AgentRef::Named(n) => name = Some(n.clone()),
                AgentRef::Command(argv) => config.agent = argv.iter().map(OsString::from).collect(),
            }
        }
        // The session belongs to its project: reopened there unless --cwd says otherwise.
        if config.cwd.is_none() && Path::new(&record.project).is_dir() {
            config.cwd = Some(PathBuf::from(&record.project));
        }
        found_resume = Some(resume_of(record)?);
    }
    let entry = match &name {
        Some(n) => Some(loaded.config.agent(n, &loaded.path).map_err(usage)?.clone()),
        None => None,
    };
    if let Some(entry) = &entry {
        if let Some(cwd) = entry.cwd.as_ref().filter(|cwd| !cwd.is_dir()) {
            let name = name.as_deref().unwrap_or_default();
            return Err((format!("agent `{name}`: its cwd {} is not a directory", cwd.display()), Exit::Failure));
        }
        config.agent = entry.command.iter().map(OsString::from).collect();
        config.agent_env = entry.env.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect();
        config.agent_cwd = entry.cwd.clone();
    }
    if config.agent.is_empty() && !remote {
        return Err(usage("no agent: give --agent NAME, --connect URL or the agent's command after `--`".to_owned()));
    }
    let agent_ref = match &name {
        Some(n) => AgentRef::Named(n.clone()),
        None => AgentRef::Command(config.agent.iter().map(|a| a.to_string_lossy().into_owned()).collect()),
    };
    if choice.continue_last {
        found_resume = Some(latest(config, &agent_ref, choice.protocol)?);
    }
    config.protocol = match (&found_resume, choice.protocol) {
        (Some(resume), Some(asked)) if asked != resume.protocol => {
            let (was, local) = (resume.protocol.number(), resume.local_id);
            return Err(usage(format!(
                "session {local} was spoken in ACP v{was}: reopen it with --protocol {was}, or drop --protocol"
            )));
        }
        (Some(resume), _) => resume.protocol,
        (None, asked) => asked.unwrap_or_default(),
    };
    config.resume = found_resume;
    if !remote {
        config.record = Some(agent_ref);
    }
    settings(config, choice, entry.as_ref(), loaded);
    Ok(())
}

/// The latest open session of the project with `agent` (`--continue`).
/// With `--protocol`, the latest of that version; in a build that speaks v1 only, the latest of
/// v1.
fn latest(config: &ClientConfig, agent: &AgentRef, asked: Option<crate::Protocol>) -> Result<Resume, Refusal> {
    let cwd = config.cwd.clone().map_or_else(std::env::current_dir, Ok).map_err(|e| (e.to_string(), Exit::Failure))?;
    let store = Store::open_default().map_err(|e| (e, Exit::Failure))?;
    let project = project_of(&cwd);
    let spoken = crate::Protocol::V2.available().is_ok();
    let version = asked.or((!spoken).then_some(crate::Protocol::V1)).map(crate::Protocol::number);
    let found = store.latest_open(&project, agent, version).map_err(|e| (e, Exit::Failure))?;
    let record = found.ok_or_else(|| {
        // The version is named when it was asked for (a build without v2 has only v1's).
        let of = asked.map(|v| format!(" in ACP v{}", v.number())).unwrap_or_default();
        let why = format!("no open session{of} of `{}` in {project} to continue (acp sessions list)", agent.label());
        (why, Exit::NoResume)
    })?;
    resume_of(record)
}

/// The session `record` remembers, to reopen in the version it was spoken in.
fn resume_of(record: crate::store::Record) -> Result<Resume, Refusal> {
    let spoken = crate::Protocol::from_number(record.protocol).filter(|p| p.available().is_ok());
    let protocol = spoken.ok_or_else(|| {
        let (local, version) = (record.id, record.protocol);
        let why = match version {
            2 => format!(
                "session {local} was spoken in ACP v2, which this build of acp does not speak (rebuild it with the \
                 feature unstable_protocol_v2)"
            ),
            _ => format!("session {local} was spoken in ACP v{version}, which this acp does not speak"),
        };
        (why, Exit::NoResume)
    })?;
    Ok(Resume { local_id: record.id, session_id: record.session_id, protocol })
}

/// The policy, roots and connect timeout: flags, else the agent's entry, else `[defaults]`.
fn settings(config: &mut ClientConfig, choice: Choice, entry: Option<&AgentEntry>, loaded: &Loaded) {
    let defaults = &loaded.config.defaults;
    let configured =
        entry.and_then(|e| e.policy.map(|p| (p, "the agent's entry"))).or(defaults.policy.map(|p| (p, "[defaults]")));
    config.policy = choice.policy;
    if choice.policy.is_none()
        && let Some((policy, from)) = configured
    {
        config.policy = Some(policy.policy());
        config.policy_note = Some(format!("policy = \"{}\" in {from} of {}", policy.as_str(), loaded.path.display()));
    }
    config.roots = choice.roots;
    if config.roots.is_empty()
        && let Some(entry) = entry
    {
        config.roots = entry.roots.clone();
    }
    let secs = choice.connect_timeout.or(defaults.connect_timeout).unwrap_or(crate::client::CONNECT_TIMEOUT.as_secs());
    config.connect_timeout = Duration::from_secs(secs.max(1));
}
