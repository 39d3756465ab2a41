//! Platform specifics: process groups, killing, waiting without reaping, signal names, shells.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};

pub(crate) use imp::*;

#[cfg_attr(not(unix), allow(dead_code))]
/// Quotes `arg` for a POSIX shell: `'…'` with each `'` written as `'\''`.
pub(crate) fn sh_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// Whether `exec` would find `program`: a path with a separator from `cwd`, a bare name in
/// `search` (a `PATH` value). Unix also wants it executable.
pub(crate) fn findable(program: &Path, cwd: &Path, search: Option<&OsStr>) -> bool {
    if program.components().count() > 1 || program.is_absolute() {
        return runnable(&cwd.join(program));
    }
    search.is_some_and(|dirs| std::env::split_paths(dirs).any(|dir| runnable(&cwd.join(dir).join(program))))
}

fn runnable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(unix)]
mod imp {
    use super::*;
    use std::os::unix::process::{CommandExt, ExitStatusExt};

    use rustix::process::{Pid, Signal};

    /// Starts the command as the leader of a new process group, so that killing the group
    /// reaches everything it spawned (unless a descendant moved to another group or session).
    pub(crate) fn prepare(command: &mut Command) {
        command.process_group(0);
    }

    /// `sh -c 'command args…'`: the command is a shell snippet and each argument is appended
    /// as one quoted word.
    pub(crate) fn shell(command: &str, args: &[String]) -> Command {
        let mut script = command.to_owned();
        for arg in args {
            script.push(' ');
            script.push_str(&sh_quote(arg));
        }
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    /// Sends `SIGKILL` to the process group led by `pid`; falls back to the child alone.
    pub(crate) fn kill(pid: u32, child: Option<&mut Child>) {
        let group = i32::try_from(pid).ok().and_then(Pid::from_raw);
        let sent = group.is_some_and(|g| rustix::process::kill_process_group(g, Signal::KILL).is_ok());
        if !sent && let Some(child) = child {
            let _ = child.kill();
        }
    }

    /// Blocks until the child `pid` has exited, leaving it unreaped (a zombie) so that its pid
    /// cannot be reused before [`Child::try_wait`] reaps it under the state lock: a concurrent
    /// kill then never signals a stranger. Returns `false` at once where `waitid` is not
    /// available, or if it failed (the caller then polls).
    pub(crate) fn wait_exited(pid: u32) -> bool {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use rustix::io::Errno;
            use rustix::process::{WaitId, WaitIdOptions, waitid};
            let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else { return false };
            loop {
                match waitid(WaitId::Pid(pid), WaitIdOptions::EXITED | WaitIdOptions::NOWAIT) {
                    Err(Errno::INTR) => continue,
                    result => return result.is_ok(),
                }
            }
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            let _ = pid;
            false
        }
    }

    /// `SIGKILL` and friends, by the names `kill -l` prints.
    const SIGNALS: [(Signal, &str); 15] = [
        (Signal::HUP, "SIGHUP"),
        (Signal::INT, "SIGINT"),
        (Signal::QUIT, "SIGQUIT"),
        (Signal::ILL, "SIGILL"),
        (Signal::TRAP, "SIGTRAP"),
        (Signal::ABORT, "SIGABRT"),
        (Signal::BUS, "SIGBUS"),
        (Signal::FPE, "SIGFPE"),
        (Signal::KILL, "SIGKILL"),
        (Signal::USR1, "SIGUSR1"),
        (Signal::SEGV, "SIGSEGV"),
        (Signal::USR2, "SIGUSR2"),
        (Signal::PIPE, "SIGPIPE"),
        (Signal::ALARM, "SIGALRM"),
        (Signal::TERM, "SIGTERM"),
    ];

    /// The signal that ended the process, by name (`SIG<n>` for the unnamed ones).
    pub(crate) fn signal_name(status: &ExitStatus) -> Option<String> {
        let raw = status.signal()?;
        Some(match SIGNALS.iter().find(|(s, _)| s.as_raw() == raw) {
            Some((_, name)) => (*name).to_owned(),
            None => format!("SIG{raw}"),
        })
    }
}

#[cfg(not(unix))]
mod imp {
    use super::*;

    /// No process groups: only the command itself is killed.
    pub(crate) fn prepare(_: &mut Command) {}

    /// `cmd /C command args…`.
    pub(crate) fn shell(command: &str, args: &[String]) -> Command {
        let mut c = Command::new("cmd");
        c.arg("/C").arg(command).args(args);
        c
    }

    pub(crate) fn kill(_: u32, child: Option<&mut Child>) {
        if let Some(child) = child {
            let _ = child.kill();
        }
    }

    pub(crate) fn wait_exited(_: u32) -> bool {
        false
    }

    pub(crate) fn signal_name(_: &ExitStatus) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_a_shell() {
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
        assert_eq!(sh_quote(""), "''");
    }

    #[cfg(unix)]
    #[test]
    fn signal_names() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(signal_name(&ExitStatus::from_raw(9)).as_deref(), Some("SIGKILL"));
        assert_eq!(signal_name(&ExitStatus::from_raw(15)).as_deref(), Some("SIGTERM"));
        assert_eq!(signal_name(&ExitStatus::from_raw(0)), None);
        // Exit code 1 (status word 0x100) is not a signal.
        assert_eq!(signal_name(&ExitStatus::from_raw(0x100)), None);
    }
}
