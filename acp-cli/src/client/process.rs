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

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use super::UiEvent;

/// Lines of stderr kept for the report when the agent dies.
const TAIL_LINES: usize = 40;
/// How long `SIGTERM` gets before `SIGKILL`.
const TERM_GRACE: Duration = Duration::from_secs(1);
const POLL: Duration = Duration::from_millis(10);

/// A running agent process.
#[derive(Debug)]
pub(crate) struct AgentProcess {
    child: Child,
    tail: Arc<Mutex<VecDeque<String>>>,
    status: Option<ExitStatus>,
}

impl AgentProcess {
    /// Spawns `argv` with piped stdin and stdout. Each stderr line goes to `ui` as
    /// [`UiEvent::Stderr`] when `show` is set, and into the kept tail either way.
    pub(crate) fn spawn(
        argv: &[OsString],
        show: bool,
        ui: Sender<UiEvent>,
    ) -> io::Result<(AgentProcess, ChildStdin, ChildStdout)> {
        let (program, args) =
            argv.split_first().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no agent command given"))?;
        let mut command = Command::new(program);
        command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("all three were piped")
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let kept = tail.clone();
        thread::Builder::new().name("acp-agent-stderr".into()).spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let text = String::from_utf8_lossy(&line).trim_end_matches(['\n', '\r']).to_owned();
                {
                    let mut tail = kept.lock().unwrap_or_else(PoisonError::into_inner);
                    if tail.len() == TAIL_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(text.clone());
                }
                if show {
                    let _ = ui.send(UiEvent::Stderr(text));
                }
            }
        })?;
        Ok((AgentProcess { child, tail, status: None }, stdin, stdout))
    }

    /// The last lines the agent wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.tail.lock().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect()
    }

    /// The exit status, if the agent has exited.
    pub(crate) fn try_status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    fn wait_until(&mut self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            if let Some(status) = self.try_status() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(POLL);
        }
    }

    /// Ends the agent, whose stdin must already be closed: waits up to `grace` for it to exit,
    /// then terminates its process group, then kills it. Returns the exit status.
    pub(crate) fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.wait_until(Instant::now() + grace) {
            return Some(status);
        }
        self.signal(false);
        if let Some(status) = self.wait_until(Instant::now() + TERM_GRACE) {
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
