//! Kernel confinement of terminal processes (Linux Landlock).
//!
//! Landlock restricts a *thread* and everything it starts afterwards; the restriction can
//! never be lifted. The workspace forbids `unsafe`, so `Command::pre_exec` (the usual place
//! to restrict a child between `fork` and `exec`) is out of reach. Instead each confined
//! [`Terminals`](super::Terminals) owns one long-lived **spawner thread** that restricts
//! itself once, at construction, then performs every `Command::spawn` of that instance: the
//! children inherit its Landlock domain and its `no_new_privs`. The caller's threads (and
//! the reader and waiter threads of each terminal) stay unconfined.
//!
//! The ruleset handles every filesystem access right the running kernel knows
//! (`AccessFs::from_all` of its ABI), so anything not granted below is denied:
//!
//! * the roots: every right (read, write, create, remove, execute...);
//! * each entry of [`TerminalConfig::system_paths`](super::TerminalConfig::system_paths)
//!   with its [`PathAccess`] (default: [`default_system_paths`]).
//!
//! From Landlock ABI 6 on, the domain is also *scoped*: a terminal process cannot signal,
//! nor connect to an abstract Unix socket of, a process outside its domain (the client,
//! the agent, the rest of the system). Signals from the client to the terminals still work.
//!
//! The spawner also sets `no_new_privs` (Landlock requires it): set-user-ID programs such as
//! `sudo` or `su` gain no privileges in a confined terminal.

use std::io;
use std::path::PathBuf;
use std::process::{Child, Command};

/// What a configured system path grants terminal processes beneath it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PathAccess {
    /// Read files, list directories, execute programs.
    Read,
    /// Everything: read, write, create, remove, execute.
    ReadWrite,
}

/// The system paths a confined terminal may use by default: read and execute beneath
/// `/usr`, `/bin`, `/sbin`, `/lib`, `/lib32`, `/lib64`, `/libx32`, `/opt` (programs and their
/// libraries), `/etc` (the loader cache, users, name service, certificates, git's system
/// config) and `/proc` (`/proc/self`, `ps`); read and write of `/dev/null`, `/dev/zero`,
/// `/dev/full`, `/dev/random`, `/dev/urandom` and `/dev/tty`; read of git's user
/// configuration, `$HOME/.gitconfig` and `$HOME/.config/git` (git refuses to run when it
/// exists but cannot be read). Missing entries are skipped.
///
/// Not in the list, on purpose: `/tmp` (shared with every other program: a command could
/// leave or pick up files there; add it, or better a directory of your own, if your
/// commands need a scratch space), the home directory (dotfiles, keys, tool caches such as
/// `~/.cargo`), `/run` and `/var`, `/sys`. Add what your commands need to
/// [`TerminalConfig::system_paths`](super::TerminalConfig::system_paths).
pub fn default_system_paths() -> Vec<(PathBuf, PathAccess)> {
    const READ: [&str; 10] = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc", "/proc"];
    const READ_WRITE: [&str; 6] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];
    let mut paths: Vec<(PathBuf, PathAccess)> = READ.iter().map(|p| (PathBuf::from(p), PathAccess::Read)).collect();
    paths.extend(READ_WRITE.iter().map(|p| (PathBuf::from(p), PathAccess::ReadWrite)));
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
        && home.is_absolute()
    {
        paths.extend([home.join(".gitconfig"), home.join(".config/git")].map(|p| (p, PathAccess::Read)));
    }
    paths
}

/// Whether this machine can confine terminals: `Ok(abi)`, the Landlock ABI version used,
/// or `Err` with a description of why not (no Landlock in the kernel, disabled at boot, not
/// Linux).
///
/// A client whose kernel cannot confine terminals must not advertise the `terminal`
/// capability unless its user opted into unconfined terminals
/// ([`TerminalConfig::confine`](super::TerminalConfig::confine) `= false`).
///
/// ```
/// match acp_services::terminal::landlock_status() {
///     Ok(abi) => println!("terminals are confined with Landlock ABI {abi}"),
///     Err(why) => println!("terminals cannot be confined here: {why}"),
/// }
/// ```
pub fn landlock_status() -> Result<u32, String> {
    imp::status()
}

/// The confined spawner thread of one [`Terminals`](super::Terminals).
#[derive(Debug)]
pub(crate) struct Spawner {
    jobs: Option<std::sync::mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// A command to start, and where to send the started child.
type Job = (Command, std::sync::mpsc::SyncSender<io::Result<Child>>);

/// What the spawner thread confines itself to.
#[derive(Debug)]
pub(crate) struct Rules {
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) system: Vec<(PathBuf, PathAccess)>,
    pub(crate) allow_partial: bool,
}

impl Spawner {
    /// Starts the thread and waits until it is confined to `rules` (`None`: not confined);
    /// fails if it cannot be (fully, unless `rules.allow_partial`).
    ///
    /// Unconfined terminals are started from a spawner thread too: a launcher that asks for
    /// a parent-death signal (`PR_SET_PDEATHSIG`) gets it when the *thread* that spawned it
    /// ends, so every command must come from one thread that lives as long as the terminals.
    pub(crate) fn start(rules: Option<Rules>) -> io::Result<Spawner> {
        let (jobs, inbox) = std::sync::mpsc::channel::<Job>();
        let (ready_tx, ready) = std::sync::mpsc::sync_channel(1);
        let thread =
            std::thread::Builder::new().name("acp-term-spawner".into()).stack_size(256 * 1024).spawn(move || {
                let confined = rules.as_ref().map_or(Ok(()), imp::restrict_current_thread);
                let ok = confined.is_ok();
                let _ = ready_tx.send(confined);
                if ok {
                    for (mut command, reply) in inbox {
                        let child = command.spawn();
                        // It holds the parent's copies of the output pipe: close them now.
                        drop(command);
                        let _ = reply.send(child);
                    }
                }
            })?;
        let confined = ready.recv().unwrap_or_else(|_| Err("the spawner thread died".into()));
        match confined {
            Ok(()) => Ok(Spawner { jobs: Some(jobs), thread: Some(thread) }),
            Err(why) => {
                let _ = thread.join();
                Err(io::Error::new(io::ErrorKind::Unsupported, format!("cannot confine terminals: {why}")))
            }
        }
    }

    /// Spawns `command` on the confined thread.
    pub(crate) fn spawn(&self, command: Command) -> io::Result<Child> {
        let gone = || io::Error::other("the confined spawner thread is gone");
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        self.jobs.as_ref().ok_or_else(gone)?.send((command, reply)).map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())?
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop.
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{PathAccess, Rules};
    use landlock::{
        ABI, Access, AccessFs, BitFlags, LandlockStatus, PathBeneath, PathFd, RestrictSelf, Ruleset, RulesetAttr,
        RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
    };

    /// The kernel's Landlock ABI, as far as the `landlock` crate knows it.
    fn abi() -> Result<ABI, String> {
        // Without flags and with `no_new_privs` off, `apply` only probes the kernel.
        let probe = RestrictSelf::default().no_new_privs(false).apply().map_err(|e| e.to_string())?;
        match probe.landlock {
            LandlockStatus::Available { effective_abi, .. } => Ok(effective_abi),
            LandlockStatus::NotEnabled => Err("Landlock is built into the kernel but not enabled at boot".into()),
            LandlockStatus::NotImplemented => Err("the kernel has no Landlock support".into()),
        }
    }

    pub(super) fn status() -> Result<u32, String> {
        match abi()? {
            ABI::Unsupported => Err("the kernel has no Landlock support".into()),
            abi => Ok(abi as u32),
        }
    }

    /// Confines the calling thread (and what it spawns from now on) to `rules`.
    pub(super) fn restrict_current_thread(rules: &Rules) -> Result<(), String> {
        let abi = abi()?;
        if abi == ABI::Unsupported {
            return Err("the kernel has no Landlock support".into());
        }
        let all = AccessFs::from_all(abi);
        let text = |e: landlock::RulesetError| e.to_string();
        let mut ruleset = Ruleset::default().handle_access(all).map_err(text)?;
        let scopes = Scope::from_all(abi);
        if !scopes.is_empty() {
            ruleset = ruleset.scope(scopes).map_err(text)?;
        }
        let mut created = ruleset.create().map_err(text)?;
        for root in &rules.roots {
            let fd = PathFd::new(root).map_err(|e| format!("root `{}`: {e}", root.display()))?;
            created = add(created, fd, all, abi)?;
        }
        for (path, access) in &rules.system {
            let granted = match access {
                PathAccess::Read => AccessFs::from_read(abi),
                PathAccess::ReadWrite => all,
            };
            // A missing system path grants nothing: skipping it is the safe side.
            if let Ok(fd) = PathFd::new(path) {
                created = add(created, fd, granted, abi)?;
            }
        }
        let status = created.restrict_self().map_err(text)?;
        match status.ruleset {
            RulesetStatus::FullyEnforced => {}
            RulesetStatus::PartiallyEnforced if rules.allow_partial => {}
            RulesetStatus::PartiallyEnforced => return Err("the kernel enforces the ruleset only partially".into()),
            RulesetStatus::NotEnforced => return Err("the kernel does not enforce the ruleset".into()),
        }
        if !status.no_new_privs {
            return Err("`no_new_privs` could not be set".into());
        }
        Ok(())
    }

    /// Adds a `PathBeneath` rule, keeping only the file rights when `fd` is not a directory
    /// (the kernel rejects directory rights on a file).
    fn add(
        created: RulesetCreated,
        fd: PathFd,
        access: BitFlags<AccessFs>,
        abi: ABI,
    ) -> Result<RulesetCreated, String> {
        let is_dir = rustix::fs::fstat(&fd).is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir());
        let access = if is_dir { access } else { access & AccessFs::from_file(abi) };
        created.add_rule(PathBeneath::new(fd, access)).map_err(|e| e.to_string())
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Rules;

    pub(super) fn status() -> Result<u32, String> {
        Err("Landlock exists only on Linux".into())
    }

    pub(super) fn restrict_current_thread(_: &Rules) -> Result<(), String> {
        Err("Landlock exists only on Linux".into())
    }
}
