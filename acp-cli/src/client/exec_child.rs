//! `acp __exec-child --parent-pid PID -- AGENT_CMD...`: the tiny wrapper the client spawns
//! its agent and its terminal commands through, so that they die with the client even when
//! the client is killed with `SIGKILL` (which no handler sees).
//!
//! The wrapper asks the kernel for `SIGKILL` when its parent dies (`PR_SET_PDEATHSIG`),
//! checks that the parent is still the client (else the client died before the request took
//! effect, and the wrapper exits), then replaces itself with the agent (`exec`), which keeps
//! the death signal, the pid and the process group. The workspace forbids `unsafe`, so
//! `Command::pre_exec` (which would do the same in the child before `exec`) is not available.
//!
//! The death signal fires when the *thread* that spawned the wrapper exits, so the client
//! spawns the agent from its main thread, and terminal commands from the terminals' spawner
//! thread (`acp_services`' `TerminalConfig::launcher`), both of which live as long as the
//! client. Only the command itself gets the signal: what it started, and a command that
//! forks away (`setsid`), outlive a `SIGKILL`ed client (every other way of ending the client
//! kills them).

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Exit;

/// The hidden subcommand's name.
pub const EXEC_CHILD: &str = "__exec-child";

/// Runs the wrapper: only returns if the agent could not be started (the exit status to use).
pub fn exec_child(parent_pid: u32, argv: &[OsString]) -> Exit {
    let Some((program, args)) = argv.split_first() else {
        eprintln!("acp {EXEC_CHILD}: no command given");
        return Exit::Usage;
    };
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{Signal, getppid, set_parent_process_death_signal};
        if let Err(e) = set_parent_process_death_signal(Some(Signal::KILL)) {
            eprintln!("acp {EXEC_CHILD}: cannot ask to die with the client: {e}");
            return Exit::Failure;
        }
        if getppid().map(|p| p.as_raw_nonzero().get()) != i32::try_from(parent_pid).ok() {
            // The client is already gone.
            return Exit::Failure;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent_pid;
    let error = exec(Command::new(program).args(args));
    eprintln!("acp {EXEC_CHILD}: cannot run `{}`: {error}", program.to_string_lossy());
    Exit::Failure
}

#[cfg(unix)]
fn exec(command: &mut Command) -> io::Error {
    std::os::unix::process::CommandExt::exec(command)
}

#[cfg(not(unix))]
fn exec(command: &mut Command) -> io::Error {
    match command.status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(e) => e,
    }
}

/// The command that starts `argv` (program and arguments): through `acp __exec-child` when
/// `die_with_parent` (this executable must be `acp`, and the caller must spawn it from a thread
/// that lives as long as the child: see the module's docs), else as it is. A program that is
/// not found is reported here, not by the wrapper.
pub(crate) fn command(argv: &[OsString], die_with_parent: bool) -> io::Result<Command> {
    let (program, args) =
        argv.split_first().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
    if !die_with_parent {
        let mut command = Command::new(program);
        command.args(args);
        return Ok(command);
    }
    let resolved = resolve_program(Path::new(program))?;
    let mut command = Command::new(std::env::current_exe()?);
    command.arg(EXEC_CHILD).arg("--parent-pid").arg(std::process::id().to_string()).arg("--");
    command.arg(resolved).args(args);
    Ok(command)
}

/// Where `program` would be found by `exec` (a name without `/` is looked up in `PATH`), so
/// that a missing agent is reported by the client itself and not by the wrapper.
fn resolve_program(program: &Path) -> io::Result<PathBuf> {
    let not_found = || io::Error::new(io::ErrorKind::NotFound, "no such file");
    if program.components().count() > 1 || program.is_absolute() {
        return if program.is_file() { Ok(program.to_path_buf()) } else { Err(not_found()) };
    }
    let path = std::env::var_os("PATH").ok_or_else(not_found)?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(not_found)
}

fn is_executable(path: &Path) -> bool {
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
