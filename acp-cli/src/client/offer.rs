//! What the client serves to its agent, decided by the permission policy, and how it is
//! confined; the session header says it in words.
//!
//! | policy | `fs/read_text_file` | `fs/write_text_file` | `terminal/*` |
//! |---|---|---|---|
//! | `--allow` | in the roots | in the roots | offered if confined (or `--unconfined-terminals`) |
//! | `--ask` | in the roots | in the roots, asked first unless approved | same, `terminal/create` asked first unless approved |
//! | `--deny` | in the roots | not advertised, refused | not advertised, refused |
//!
//! `--deny` does not advertise what it would refuse anyway: an agent then knows not to try.
//! "Approved" is defined in [`super::guard`].

use std::path::{Path, PathBuf};

use acp_blocking::acp_proto::types::{
    ClientCapabilities, ClientSessionCapabilities, CompactionCapabilities, ElicitationCapabilities,
    ElicitationFormCapabilities, ElicitationUrlCapabilities, NoticeCapabilities, PlanCapabilities,
    SubagentCapabilities,
};
use acp_services::{ClientServices, FsConfig, FsSandbox, TerminalConfig, Terminals};

use super::exec_child::EXEC_CHILD;
use crate::permission::Policy;

/// How terminals are confined to the roots (Landlock, checked on this kernel), or why they
/// cannot be.
pub(crate) fn terminal_confinement(config: &TerminalConfig) -> Result<String, String> {
    let abi = acp_services::terminal::landlock_status()?;
    Ok(format!(
        "confined by Landlock (ABI {abi}): read/write in {}, read/execute of the system directories",
        absolute_list(&config.roots)
    ))
}

/// What is served, for the header.
#[derive(Debug, Clone)]
pub(crate) struct Offer {
    /// The roots, absolute.
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) policy: Policy,
    /// `Ok(how they are confined)` when terminals are offered, `Err(why not)` otherwise.
    pub(crate) terminals: Result<String, String>,
}

impl Offer {
    /// The header's lines about `fs/*` and terminals.
    pub(crate) fn describe(&self) -> [String; 2] {
        let roots: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
        let roots = roots.join(", ");
        let fs = match self.policy {
            Policy::Allow => format!("  fs: read/write in {roots}"),
            Policy::Ask => format!("  fs: read/write in {roots} (asks before writing)"),
            Policy::Deny => format!("  fs: read-only in {roots} (writes not offered: --deny)"),
        };
        let asks = if self.policy == Policy::Ask { " (asks before running a command)" } else { "" };
        let terminals = match &self.terminals {
            Ok(how) => format!("  terminals: {how}{asks}"),
            Err(why) => format!("  terminals: not offered ({why})"),
        };
        [fs, terminals]
    }
}

/// The sandbox and the terminals confined to `roots` as `policy` allows; commands run in
/// `cwd` by default. With `die_with_client`, commands are started through `acp
/// __exec-child`, so that the kernel kills them if the client is killed.
pub(crate) fn services(
    roots: &[PathBuf],
    cwd: &Path,
    policy: Policy,
    unconfined_terminals: bool,
    die_with_client: bool,
) -> Result<(ClientServices, Offer), String> {
    let mut absolute = Vec::new();
    for root in roots {
        let path = std::path::absolute(root).map_err(|e| format!("--root {}: {e}", root.display()))?;
        if !path.is_dir() {
            return Err(format!("--root {}: not a directory", root.display()));
        }
        absolute.push(path);
    }
    let mut fs_config = FsConfig::default();
    fs_config.writable = policy != Policy::Deny;
    let fs = FsSandbox::with_config(&absolute, fs_config).map_err(|e| format!("file sandbox: {e}"))?;
    let mut services = ClientServices::new().with_fs(fs);
    let mut terminal = TerminalConfig::new(&absolute);
    terminal.default_cwd = Some(cwd.to_path_buf());
    if die_with_client {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find the acp executable: {e}"))?;
        terminal.launcher = vec![
            exe.into(),
            EXEC_CHILD.into(),
            "--parent-pid".into(),
            std::process::id().to_string().into(),
            "--".into(),
        ];
    }
    let offered = match (policy, terminal_confinement(&terminal)) {
        (Policy::Deny, _) => Err("--deny".to_owned()),
        (_, Ok(how)) => Ok(how),
        (_, Err(why)) if unconfined_terminals => {
            terminal.confine = false;
            Ok(format!("run in {} but NOT confined ({why}; --unconfined-terminals)", absolute_list(&absolute)))
        }
        (_, Err(why)) => Err(format!("{why}; --unconfined-terminals offers them anyway")),
    };
    if offered.is_ok() {
        let terminals = Terminals::new(terminal).map_err(|e| format!("terminals: {e}"))?;
        services = services.with_terminals(terminals);
    }
    Ok((services, Offer { roots: absolute, policy, terminals: offered }))
}

fn absolute_list(roots: &[PathBuf]) -> String {
    roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// What the client advertises in `initialize`: the services' `fs`/`terminal`, plus exactly the
/// session updates the renderer draws beyond the base set: `plan` (`plan_update`,
/// `plan_removed`), `subagents` (`subagent_update`, `session_message`,
/// `session_message_chunk`), `session.notices` and `session.compaction`; and the elicitations
/// it answers (see [`super::elicit`]): `elicitation.url` always, `elicitation.form` when
/// `forms` (`--elicit`, or a terminal); `auth.terminal` when `terminal_auth` (an agent the
/// client spawns, see [`super::terminal_auth`]).
pub(crate) fn advertised(services: ClientCapabilities, forms: bool, terminal_auth: bool) -> ClientCapabilities {
    let mut caps = services;
    caps.auth.terminal = terminal_auth;
    caps.elicitation = Some(ElicitationCapabilities {
        form: forms.then(ElicitationFormCapabilities::default),
        url: Some(ElicitationUrlCapabilities::default()),
        meta: None,
    });
    caps.plan = Some(PlanCapabilities::default());
    caps.subagents = Some(SubagentCapabilities::default());
    let session = caps.session.get_or_insert_with(ClientSessionCapabilities::default);
    session.notices = Some(NoticeCapabilities::default());
    session.compaction = Some(CompactionCapabilities::default());
    caps
}
