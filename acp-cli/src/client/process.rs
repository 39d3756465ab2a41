//! The agent subprocess, supervised by acp-runtime's [`Supervisor`] like every adapter's
//! agents: its own process group (so the terminal's Ctrl-C reaches only the client, which
//! decides what to cancel), stderr drained line by line with bounded memory (each line goes
//! to the UI as [`UiEvent::Stderr`] when shown, the tail is kept for the report when the
//! agent dies), and the close sequence (stdin closed, a grace period, `SIGTERM` and `SIGKILL`
//! to the group, the reap).
//!
//! `acp client` connects over the supervisor's pipes with `ClientConnection::connect` rather
//! than `ClientConnection::spawn`, because it drains its UI queue while the agent is closing
//! (a stderr line waiting for the UI must not hold the agent's exit back).
//!
//! With `die_with_client`, the agent is started through `acp __exec-child` (see
//! [`super::exec_child`]), so that it is killed by the kernel even if the client is killed
//! with `SIGKILL`.

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, ExitStatus};
use std::sync::mpsc::SyncSender;
use std::time::Duration;

use acp_runtime::process::{Supervisor, SupervisorOptions};

use super::event::UiEvent;

/// How long `SIGTERM` gets before `SIGKILL`.
const TERM_GRACE: Duration = Duration::from_secs(1);
/// Lines of stderr kept for the report when the agent dies.
pub(crate) const TAIL_LINES: usize = 40;
/// Bytes of stderr kept for that report.
pub(crate) const TAIL_BYTES: usize = 16 * 1024;

/// Where the agent process runs: extra environment variables and its working directory.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Place<'a> {
    pub(crate) env: &'a [(OsString, OsString)],
    pub(crate) cwd: Option<&'a Path>,
}

/// The agent: a local process, or a remote one behind a WebSocket.
#[derive(Debug)]
pub(crate) struct AgentProcess {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Local(Supervisor),
    Remote(super::remote::RemoteAgent),
}

impl AgentProcess {
    /// Spawns `argv` with piped stdin and stdout. Each stderr line goes to `ui` as
    /// [`UiEvent::Stderr`] when `show` is set (blocking while the UI queue is full, which slows
    /// the agent down rather than growing a queue), and into the kept tail either way. With
    /// `die_with_client`, the agent is started through `acp __exec-child` (call this from the
    /// main thread: the kernel's death signal follows the spawning thread). `place` adds
    /// environment variables and sets the working directory.
    pub(crate) fn spawn(
        argv: &[OsString],
        place: Place<'_>,
        show: bool,
        die_with_client: bool,
        ui: SyncSender<UiEvent>,
    ) -> io::Result<(AgentProcess, ChildStdin, ChildStdout)> {
        let mut command = super::exec_child::command(argv, die_with_client)?;
        command.envs(place.env.iter().map(|(k, v)| (k, v)));
        if let Some(cwd) = place.cwd {
            command.current_dir(cwd);
        }
        let mut options = SupervisorOptions::default().with_stderr_capacity(TAIL_BYTES);
        if show {
            let mut ui = Some(ui);
            options = options.with_stderr_lines(move |line| {
                if let Some(sender) = &ui
                    && sender.send(UiEvent::Stderr(line)).is_err()
                {
                    ui = None;
                }
            });
        }
        let options = options.with_close_graces(Duration::from_secs(1), TERM_GRACE);
        let (supervisor, stdin, stdout) = Supervisor::spawn(command, options)?;
        Ok((AgentProcess { kind: Kind::Local(supervisor) }, stdin, stdout))
    }

    /// A remote agent, reached through `link`.
    pub(crate) fn remote(link: super::remote::RemoteAgent) -> AgentProcess {
        AgentProcess { kind: Kind::Remote(link) }
    }

    /// With `--attach`: the answer to `session/attach` (see [`super::shared`]).
    pub(crate) fn attached(
        &self,
        timeout: Duration,
    ) -> Option<Result<acp_tokio::acp_proto::attach::AttachAnswer, acp_tokio::acp_proto::RpcError>> {
        match &self.kind {
            Kind::Remote(link) => link.attached(timeout),
            Kind::Local(_) => None,
        }
    }

    /// The agent's process id (none for a remote agent).
    pub(crate) fn id(&self) -> Option<u32> {
        match &self.kind {
            Kind::Local(supervisor) => Some(supervisor.id()),
            Kind::Remote(_) => None,
        }
    }

    /// Whether the agent's stderr was read to its end (a remote agent's is not ours to read).
    pub(crate) fn stderr_ended(&self) -> bool {
        match &self.kind {
            Kind::Local(supervisor) => supervisor.stderr_ended(),
            Kind::Remote(_) => true,
        }
    }

    /// The last lines the agent wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        match &self.kind {
            Kind::Local(supervisor) => supervisor.stderr_lines(TAIL_LINES),
            Kind::Remote(_) => Vec::new(),
        }
    }

    /// How the agent ended, if it has: its exit status, or the remote connection's end.
    pub(crate) fn try_end(&mut self) -> Option<String> {
        match &mut self.kind {
            Kind::Local(supervisor) => supervisor.try_status().map(describe),
            Kind::Remote(link) => link.ended(),
        }
    }

    /// Ends the agent, whose stdin must already be closed: waits up to `grace` for it to exit,
    /// then terminates its process group, then kills it. `poll` runs while waiting (the UI
    /// drains its queue there, so that a stderr line does not block the agent's exit). A
    /// remote agent: waits up to `grace` for the WebSocket to close.
    pub(crate) fn terminate(&mut self, grace: Duration, poll: impl FnMut()) {
        match &mut self.kind {
            Kind::Local(supervisor) => {
                let _ = supervisor.close_with_grace(grace, poll);
            }
            Kind::Remote(link) => link.close(grace, poll),
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
