//! The agent subprocess: spawned in its own process group, its stderr drained line by line,
//! ended gracefully.
//!
//! WORKAROUND(acp-blocking): `ClientConnection::spawn` keeps the agent's stderr only as a tail
//! (`stderr_tail`) and offers no way to see it while the agent runs, which `--show-stderr`
//! needs. So `acp client` spawns the agent itself and connects over the child's pipes with
//! `ClientConnection::connect`, doing here what `spawn` would otherwise do: a new process
//! group (so the terminal's Ctrl-C reaches only the client, which decides what to cancel), a
//! drained stderr, and on exit stdin closed, a grace period, then `SIGTERM` and `SIGKILL` to
//! the whole group.
//!
//! With `die_with_client`, the agent is started through `acp __exec-child` (see
//! [`super::exec_child`]), so that it is killed by the kernel even if the client is killed
//! with `SIGKILL`. Its stderr is read with bounded memory ([`super::stderr`]).

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use super::UiEvent;
use super::exec_child::{EXEC_CHILD, resolve_program};
use super::stderr::{Tail, drain};

/// How long `SIGTERM` gets before `SIGKILL`.
const TERM_GRACE: Duration = Duration::from_secs(1);
const POLL: Duration = Duration::from_millis(10);

/// A running agent process.
#[derive(Debug)]
pub(crate) struct AgentProcess {
    child: Child,
    tail: Arc<Mutex<Tail>>,
    /// The stderr reader, finished at the end of the agent's stderr.
    reader: thread::JoinHandle<()>,
    status: Option<ExitStatus>,
}

impl AgentProcess {
    /// Spawns `argv` with piped stdin and stdout. Each stderr line goes to `ui` as
    /// [`UiEvent::Stderr`] when `show` is set, and into the kept tail either way. With
    /// `die_with_client`, the agent is started through `acp __exec-child` (call this from the
    /// main thread: the kernel's death signal follows the spawning thread).
    pub(crate) fn spawn(
        argv: &[OsString],
        show: bool,
        die_with_client: bool,
        ui: SyncSender<UiEvent>,
    ) -> io::Result<(AgentProcess, ChildStdin, ChildStdout)> {
        let (program, args) =
            argv.split_first().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no agent command given"))?;
        let mut command = if die_with_client {
            let resolved = resolve_program(Path::new(program))?;
            let mut command = Command::new(std::env::current_exe()?);
            command.arg(EXEC_CHILD).arg("--parent-pid").arg(std::process::id().to_string()).arg("--");
            command.arg(resolved).args(args);
            command
        } else {
            let mut command = Command::new(program);
            command.args(args);
            command
        };
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("all three were piped")
        };
        let tail = Arc::new(Mutex::new(Tail::default()));
        let kept = tail.clone();
        let reader =
            thread::Builder::new().name("acp-agent-stderr".into()).spawn(move || drain(stderr, kept, show, ui))?;
        Ok((AgentProcess { child, tail, reader, status: None }, stdin, stdout))
    }

    /// The agent's process id.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Whether the agent's stderr was read to its end.
    pub(crate) fn stderr_ended(&self) -> bool {
        self.reader.is_finished()
    }

    /// The last lines the agent wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.tail.lock().unwrap_or_else(PoisonError::into_inner).lines()
    }

    /// The exit status, if the agent has exited.
    pub(crate) fn try_status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    fn wait_until(&mut self, deadline: Instant, poll: &mut impl FnMut()) -> Option<ExitStatus> {
        loop {
            if let Some(status) = self.try_status() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            poll();
            thread::sleep(POLL);
        }
    }

    /// Ends the agent, whose stdin must already be closed: waits up to `grace` for it to exit,
    /// then terminates its process group, then kills it. Returns the exit status. `poll` runs
    /// while waiting (the UI drains its queue there, so that a stderr line does not block the
    /// agent's exit).
    pub(crate) fn terminate(&mut self, grace: Duration, mut poll: impl FnMut()) -> Option<ExitStatus> {
        if let Some(status) = self.wait_until(Instant::now() + grace, &mut poll) {
            return Some(status);
        }
        self.signal(false);
        if let Some(status) = self.wait_until(Instant::now() + TERM_GRACE, &mut poll) {
            return Some(status);
        }
        self.signal(true);
        self.status = self.child.wait().ok();
        self.status
    }

    fn signal(&mut self, kill: bool) {
        #[cfg(unix)]
        {
            use rustix::process::{Pid, Signal, kill_process_group};
            let signal = if kill { Signal::KILL } else { Signal::TERM };
            if kill_process_group(Pid::from_child(&self.child), signal).is_ok() {
                return;
            }
        }
        if kill {
            let _ = self.child.kill();
        }
    }
}

impl Drop for AgentProcess {
    /// Never leaves the agent running or a zombie behind.
    fn drop(&mut self) {
        if self.try_status().is_none() {
            self.signal(true);
            let _ = self.child.wait();
        }
    }
}

/// A readable description of how a process ended.
pub(crate) fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => status.to_string(),
    }
}
