//! Agent processes, supervised the same way by every adapter and by `acp client`.
//!
//! An agent is spawned with its three streams piped and, on Unix, as the leader of a process
//! group of its own, so that the terminal's Ctrl-C reaches only the client and closing can end
//! whatever the agent started ([`prepare`]). Its stderr is drained continuously (the agent
//! never blocks on a full pipe) into a bounded [`StderrTail`], and line by line, each line cut
//! at [`LINE_MAX`] bytes, to an optional callback. Closing follows one [`CloseSequence`]: the
//! caller closes stdin, the agent gets a grace period to exit, then `SIGTERM` goes to its
//! group, then `SIGKILL`, and it is reaped; its exit status is kept.
//!
//! [`Supervisor`] runs all of this on plain threads (acp-blocking, `acp client`); acp-tokio
//! drives the same [`CloseSequence`] and [`StderrTail`] from its runtime's tasks.

mod close;
mod stderr;

use std::io::{self, Read};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

pub use close::{CloseSequence, CloseStep};
pub use stderr::{LINE_MAX, LineCutter, StderrTail};

/// How often a waiting close looks whether the process exited.
const POLL: Duration = Duration::from_millis(5);
/// How long a close waits, once the process has exited, for its stderr to be read to the end.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// Pipes the three streams of `command` and, on Unix, makes the process the leader of a new
/// process group.
pub fn prepare(command: &mut Command) {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
}

/// Sends `SIGTERM` (or `SIGKILL` when `kill`) to the process group that `pid` leads; returns
/// whether it could (never to pid 0 or 1, which would name our own group or every process).
/// Elsewhere than on Unix there are no groups: it returns false.
pub fn signal_group(pid: u32, kill: bool) -> bool {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal, kill_process_group};
        let Some(pid) = i32::try_from(pid).ok().filter(|&p| p > 1).and_then(Pid::from_raw) else { return false };
        kill_process_group(pid, if kill { Signal::KILL } else { Signal::TERM }).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = (pid, kill);
        false
    }
}

/// A line of the agent's stderr, as it is read (at most [`LINE_MAX`] bytes).
pub type StderrLine = Box<dyn FnMut(String) + Send>;

/// How a [`Supervisor`] spawns and ends an agent.
#[non_exhaustive]
pub struct SupervisorOptions {
    /// Bytes of the agent's stderr kept: its last lines (always the newest line, cut at
    /// [`LINE_MAX`]). Default 64 KiB.
    pub stderr_capacity: usize,
    /// Called with each line of the agent's stderr, in order, on the stderr thread (a slow
    /// callback slows the agent's stderr down, never grows a queue). Default none.
    pub on_stderr_line: Option<StderrLine>,
    /// How long the agent gets to exit by itself once its stdin is closed. Default 1 s.
    pub close_grace: Duration,
    /// How long it gets after `SIGTERM` before `SIGKILL`. Default 1 s.
    pub term_grace: Duration,
}

impl Default for SupervisorOptions {
    fn default() -> Self {
        SupervisorOptions {
            stderr_capacity: 64 * 1024,
            on_stderr_line: None,
            close_grace: Duration::from_secs(1),
            term_grace: Duration::from_secs(1),
        }
    }
}

impl SupervisorOptions {
    /// Keeps the last `bytes` of stderr.
    pub fn with_stderr_capacity(mut self, bytes: usize) -> Self {
        self.stderr_capacity = bytes;
        self
    }

    /// Calls `line` with each stderr line as it is read.
    pub fn with_stderr_lines(mut self, line: impl FnMut(String) + Send + 'static) -> Self {
        self.on_stderr_line = Some(Box::new(line));
        self
    }

    /// The grace periods of the close sequence: before `SIGTERM`, and before `SIGKILL`.
    pub fn with_close_graces(mut self, close_grace: Duration, term_grace: Duration) -> Self {
        self.close_grace = close_grace;
        self.term_grace = term_grace;
        self
    }
}

impl std::fmt::Debug for SupervisorOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SupervisorOptions")
            .field("stderr_capacity", &self.stderr_capacity)
            .field("on_stderr_line", &self.on_stderr_line.is_some())
            .field("close_grace", &self.close_grace)
            .field("term_grace", &self.term_grace)
            .finish()
    }
}

/// What the stderr thread shares with the supervisor.
#[derive(Debug)]
struct Stderr {
    tail: Mutex<StderrTail>,
    ended: Mutex<bool>,
    ended_cv: Condvar,
}

/// A spawned agent process on plain threads: its stderr drained, its close sequence, its exit
/// status. Dropping it before [`close`](Self::close) kills the process group and reaps the
/// process, so no agent is left running or a zombie.
///
/// ```
/// # #[cfg(unix)] {
/// use std::io::Write;
/// use acp_runtime::process::{Supervisor, SupervisorOptions};
///
/// let mut command = std::process::Command::new("sh");
/// command.args(["-c", "echo started >&2; cat >/dev/null; echo bye >&2"]);
/// let (agent, stdin, _stdout) = Supervisor::spawn(command, SupervisorOptions::default()).unwrap();
/// drop(stdin); // end of input: the agent leaves by itself, within the grace period
/// let status = agent.close(|| {}).unwrap();
/// assert!(status.success());
/// assert_eq!(agent.stderr_tail(), "started\nbye\n");
/// # }
/// ```
#[derive(Debug)]
pub struct Supervisor {
    pid: u32,
    child: Mutex<Option<Child>>,
    status: Mutex<Option<ExitStatus>>,
    stderr: Arc<Stderr>,
    close_grace: Duration,
    term_grace: Duration,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Supervisor {
    /// Spawns `command` (see [`prepare`]) and starts draining its stderr on a thread of its
    /// own. Returns the supervisor and the agent's stdin and stdout for the connection.
    pub fn spawn(
        mut command: Command,
        options: SupervisorOptions,
    ) -> io::Result<(Supervisor, ChildStdin, ChildStdout)> {
        prepare(&mut command);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the agent's streams were not piped"));
        };
        let shared = Arc::new(Stderr {
            tail: Mutex::new(StderrTail::new(options.stderr_capacity)),
            ended: Mutex::new(false),
            ended_cv: Condvar::new(),
        });
        let supervisor = Supervisor {
            pid: child.id(),
            child: Mutex::new(Some(child)),
            status: Mutex::new(None),
            stderr: shared.clone(),
            close_grace: options.close_grace,
            term_grace: options.term_grace,
        };
        let on_line = options.on_stderr_line;
        thread::Builder::new().name("acp-agent-stderr".into()).spawn(move || drain(stderr, &shared, on_line))?;
        Ok((supervisor, stdin, stdout))
    }

    /// The agent's process id.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// The last lines the agent wrote to stderr, as text (see [`StderrTail::text`]).
    pub fn stderr_tail(&self) -> String {
        lock(&self.stderr.tail).text()
    }

    /// The last `max` lines the agent wrote to stderr.
    pub fn stderr_lines(&self, max: usize) -> Vec<String> {
        lock(&self.stderr.tail).lines(max)
    }

    /// Whether the agent's stderr was read to its end.
    pub fn stderr_ended(&self) -> bool {
        *lock(&self.stderr.ended)
    }

    /// The exit status, once the agent has exited (it is reaped then).
    pub fn try_status(&self) -> Option<ExitStatus> {
        if let Some(status) = *lock(&self.status) {
            return Some(status);
        }
        let mut slot = lock(&self.child);
        let status = slot.as_mut()?.try_wait().ok().flatten()?;
        *slot = None;
        *lock(&self.status) = Some(status);
        Some(status)
    }

    /// Runs the close sequence (the caller has closed the agent's stdin): the grace period,
    /// `SIGTERM` to the group, the second grace period, `SIGKILL`, the reap. `poll` runs while
    /// waiting (a UI can drain its queue there). Returns the exit status; later calls return
    /// the same. Before it returns, the agent's stderr is read to its end (for at most
    /// 500 ms more: a process the agent left behind may hold the pipe open).
    pub fn close(&self, poll: impl FnMut()) -> io::Result<ExitStatus> {
        self.close_with_grace(self.close_grace, poll)
    }

    /// [`close`](Self::close) with another grace period before `SIGTERM` (e.g. a shorter one
    /// when the user asked to quit).
    pub fn close_with_grace(&self, grace: Duration, mut poll: impl FnMut()) -> io::Result<ExitStatus> {
        let mut sequence = CloseSequence::new(Instant::now(), grace, self.term_grace);
        let status = loop {
            let status = self.try_status();
            match sequence.next(Instant::now(), status.is_some()) {
                CloseStep::Done => break status,
                CloseStep::Wait(Some(until)) => {
                    poll();
                    thread::sleep(POLL.min(until.saturating_duration_since(Instant::now())));
                }
                CloseStep::Wait(None) => {
                    let mut slot = lock(&self.child);
                    let Some(child) = slot.as_mut() else { continue };
                    let status = child.wait()?;
                    *slot = None;
                    *lock(&self.status) = Some(status);
                }
                CloseStep::Terminate => {
                    signal_group(self.pid, false);
                }
                CloseStep::Kill => {
                    if !signal_group(self.pid, true)
                        && let Some(child) = lock(&self.child).as_mut()
                    {
                        let _ = child.kill();
                    }
                }
            }
        };
        let status = status.ok_or_else(|| io::Error::other("the agent process was not reaped"))?;
        self.await_stderr(STDERR_GRACE);
        Ok(status)
    }

    /// Waits up to `limit` for the stderr thread to reach the pipe's end; returns whether it
    /// did. An agent whose stdout has just ended may still have its last stderr lines in the
    /// pipe: wait for them before reporting its [`stderr_tail`](Self::stderr_tail).
    pub fn await_stderr(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut ended = lock(&self.stderr.ended);
        while !*ended {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            ended = self.stderr.ended_cv.wait_timeout(ended, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        true
    }
}

impl Drop for Supervisor {
    /// An agent that was never closed is killed (its whole group) and reaped.
    fn drop(&mut self) {
        if let Some(mut child) = lock(&self.child).take() {
            if matches!(child.try_wait(), Ok(None)) && !signal_group(self.pid, true) {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

/// Reads `stderr` to its end into the tail, and line by line into `on_line`.
fn drain(mut stderr: impl Read, shared: &Stderr, mut on_line: Option<StderrLine>) {
    let mut cutter = LineCutter::default();
    let mut buf = vec![0u8; 8192];
    let mut emit = |line: String| {
        if let Some(callback) = on_line.as_mut() {
            callback(line);
        }
    };
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                lock(&shared.tail).push(&buf[..n]);
                cutter.feed(&buf[..n], &mut emit);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    cutter.end(&mut emit);
    lock(&shared.tail).end();
    *lock(&shared.ended) = true;
    shared.ended_cv.notify_all();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str, options: SupervisorOptions) -> (Supervisor, ChildStdin, ChildStdout) {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        Supervisor::spawn(command, options).expect("spawn sh")
    }

    #[test]
    fn an_agent_that_leaves_at_the_end_of_its_input_is_not_signalled() {
        let (agent, stdin, _out) = sh("cat >/dev/null; echo done >&2", SupervisorOptions::default());
        drop(stdin);
        let status = agent.close(|| {}).expect("close");
        assert!(status.success(), "{status:?}");
        assert_eq!(agent.stderr_tail(), "done\n");
        assert_eq!(agent.close(|| {}).expect("again").code(), status.code());
    }

    #[test]
    fn an_agent_ignoring_its_input_gets_sigterm_then_sigkill() {
        use std::os::unix::process::ExitStatusExt;
        let fast = SupervisorOptions::default().with_close_graces(Duration::from_millis(50), Duration::from_millis(50));
        // Ignores the end of its input and SIGTERM: only SIGKILL ends it.
        let (agent, stdin, _out) = sh("trap '' TERM; while :; do sleep 1; done", fast);
        drop(stdin);
        let status = agent.close(|| {}).expect("close");
        assert_eq!(status.signal(), Some(9), "{status:?}");
        let fast = SupervisorOptions::default().with_close_graces(Duration::from_millis(50), Duration::from_secs(5));
        let (agent, stdin, _out) = sh("while :; do sleep 1; done", fast);
        drop(stdin);
        assert_eq!(agent.close(|| {}).expect("close").signal(), Some(15));
    }

    #[test]
    fn stderr_lines_reach_the_callback_cut_at_line_max() {
        let (tx, rx) = std::sync::mpsc::channel();
        let options = SupervisorOptions::default().with_stderr_lines(move |line| drop(tx.send(line)));
        let script = format!("echo one >&2; head -c {} /dev/zero | tr '\\0' x >&2; echo >&2", LINE_MAX + 10);
        let (agent, stdin, _out) = sh(&script, options);
        drop(stdin);
        agent.close(|| {}).expect("close");
        let lines: Vec<String> = rx.iter().collect();
        assert_eq!(lines.len(), 2, "{:?}", lines.iter().map(String::len).collect::<Vec<_>>());
        assert_eq!(lines[0], "one");
        assert!(lines[1].ends_with("… (10 bytes cut)"));
        assert!(agent.stderr_ended());
    }

    #[test]
    fn await_stderr_waits_for_the_lines_written_after_stdout_ended() {
        use std::io::Read;
        // Closes its stdout first, then says why it gives up on stderr, a little later.
        let (agent, _stdin, mut out) =
            sh("exec 1>&-; sleep 0.3; echo 'missing API key' >&2", SupervisorOptions::default());
        let mut rest = Vec::new();
        assert_eq!(out.read_to_end(&mut rest).expect("stdout"), 0);
        assert!(agent.await_stderr(Duration::from_secs(10)), "stderr ended");
        assert_eq!(agent.stderr_tail(), "missing API key\n");
        // A pipe held open (here by a child left behind) bounds the wait instead.
        let (agent, _stdin, _out) = sh("sleep 5 & exit 0", SupervisorOptions::default());
        assert!(!agent.await_stderr(Duration::from_millis(50)));
    }

    #[test]
    fn dropping_an_unclosed_supervisor_kills_and_reaps_the_agent() {
        let (agent, _stdin, _out) = sh("while :; do sleep 1; done", SupervisorOptions::default());
        let pid = agent.id();
        drop(agent);
        // Reaped: no zombie is left under this pid.
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }
}
