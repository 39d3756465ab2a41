//! Agent child processes, supervised as acp-runtime's [`process`](acp_runtime::process)
//! says for every adapter: spawned with piped stdio in a process group of their own
//! ([`prepare`]), stderr drained into a bounded [`StderrTail`], and the one [`CloseSequence`]
//! (stdin closed, grace period, `SIGTERM` to the group, grace period, `SIGKILL` to the group,
//! reap), here driven by the runtime's timers instead of threads.
//!
//! Written once against [`Runtime`] and [`ChildHandle`]; each runtime contributes only its
//! `spawn_*` function and a `ChildHandle` impl.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
#[cfg(feature = "async-std")]
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp_runtime::process::{CloseSequence, CloseStep, StderrTail, prepare, signal_group};

use crate::ClientOptions;
use crate::handle::Shared;
use crate::io::ReadBytes;
use crate::runtime::{Runtime, timeout};
use crate::sync::{Signal, lock};

/// How long a close waits, once the process has exited, for its stderr to be read to the end.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// What the supervision needs from a runtime's child handle.
pub(crate) trait ChildHandle: Send + 'static {
    /// Waits for the process to exit and reaps it.
    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>>;
    /// Kills the process itself (where process groups are not available).
    fn kill(&mut self) -> io::Result<()>;
}

/// A spawned agent process, as the client connection keeps it.
pub(crate) trait ProcessControl: Send + Sync {
    fn pid(&self) -> Option<u32>;
    fn stderr_tail(&self) -> String;
    /// The close sequence; every call gets the same exit status.
    fn close(&self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>>;
}

/// A freshly spawned process, its id and its three pipes.
pub(crate) struct Spawned<C, I, O, E> {
    pub(crate) child: C,
    pub(crate) pid: Option<u32>,
    pub(crate) stdin: I,
    pub(crate) stdout: O,
    pub(crate) stderr: E,
}

fn missing(what: &str) -> io::Error {
    io::Error::other(format!("the child's {what} was not piped"))
}

/// Spawns `command` with tokio.
pub(crate) fn spawn_tokio(
    mut command: std::process::Command,
) -> io::Result<
    Spawned<
        tokio::process::Child,
        tokio::process::ChildStdin,
        tokio::process::ChildStdout,
        tokio::process::ChildStderr,
    >,
> {
    prepare(&mut command);
    let mut child = tokio::process::Command::from(command).spawn()?;
    Ok(Spawned {
        stdin: child.stdin.take().ok_or_else(|| missing("stdin"))?,
        stdout: child.stdout.take().ok_or_else(|| missing("stdout"))?,
        stderr: child.stderr.take().ok_or_else(|| missing("stderr"))?,
        pid: child.id(),
        child,
    })
}

impl ChildHandle for tokio::process::Child {
    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(tokio::process::Child::wait(self))
    }

    fn kill(&mut self) -> io::Result<()> {
        self.start_kill()
    }
}

/// Spawns `command` with async-std.
#[cfg(feature = "async-std")]
pub(crate) fn spawn_async_std(
    mut command: std::process::Command,
) -> io::Result<
    Spawned<
        ::async_std::process::Child,
        ::async_std::process::ChildStdin,
        ::async_std::process::ChildStdout,
        ::async_std::process::ChildStderr,
    >,
> {
    prepare(&mut command);
    // async-process pipes only what is set on its own `Command` (the std settings are not seen).
    let mut command = ::async_std::process::Command::from(command);
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn()?;
    Ok(Spawned {
        stdin: child.stdin.take().ok_or_else(|| missing("stdin"))?,
        stdout: child.stdout.take().ok_or_else(|| missing("stdout"))?,
        stderr: child.stderr.take().ok_or_else(|| missing("stderr"))?,
        pid: Some(child.id()),
        child,
    })
}

#[cfg(feature = "async-std")]
impl ChildHandle for ::async_std::process::Child {
    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(self.status())
    }

    fn kill(&mut self) -> io::Result<()> {
        ::async_std::process::Child::kill(self)
    }
}

struct Process<Rt: Runtime, C: ChildHandle> {
    rt: Rt,
    pid: Option<u32>,
    state: tokio::sync::Mutex<State<C>>,
    stderr: Arc<Mutex<StderrTail>>,
    /// Set once the stderr task has read the pipe to its end.
    stderr_done: Arc<Signal>,
    close_grace: Duration,
    kill_grace: Duration,
    shared: Arc<Shared>,
}

struct State<C> {
    child: Option<C>,
    status: Option<ExitStatus>,
}

/// Starts draining `stderr` and returns the process's control.
pub(crate) fn supervise<Rt: Runtime, C: ChildHandle>(
    rt: Rt,
    child: C,
    pid: Option<u32>,
    mut stderr: impl ReadBytes + Send,
    shared: Arc<Shared>,
    options: &ClientOptions,
) -> Arc<dyn ProcessControl> {
    let ring = Arc::new(Mutex::new(StderrTail::new(options.stderr_buffer)));
    let sink = ring.clone();
    let stderr_done = Arc::new(Signal::default());
    let done = stderr_done.clone();
    rt.spawn(async move {
        let mut buf = vec![0; 4096];
        loop {
            match std::future::poll_fn(|cx| stderr.poll_read_bytes(cx, &mut buf)).await {
                Ok(0) => break,
                Ok(n) => lock(&sink).push(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        lock(&sink).end();
        done.set();
    });
    Arc::new(Process {
        rt,
        pid,
        state: tokio::sync::Mutex::new(State { child: Some(child), status: None }),
        stderr: ring,
        stderr_done,
        close_grace: options.close_grace,
        kill_grace: options.kill_grace,
        shared,
    })
}

/// Sends `SIGTERM` (or `SIGKILL`) to the process group `pid` leads; where there is no group,
/// a kill goes to the child itself.
fn signal<C: ChildHandle>(pid: Option<u32>, child: &mut C, kill: bool) {
    if !pid.is_some_and(|pid| signal_group(pid, kill)) && kill {
        let _ = child.kill();
    }
}

/// Runs the close sequence on the runtime's timers.
async fn close_child<Rt: Runtime, C: ChildHandle>(
    rt: &Rt,
    child: &mut C,
    pid: Option<u32>,
    grace: Duration,
    kill_grace: Duration,
) -> io::Result<ExitStatus> {
    let mut sequence = CloseSequence::new(Instant::now(), grace, kill_grace);
    let mut status = None;
    loop {
        match sequence.next(Instant::now(), status.is_some()) {
            CloseStep::Done => return status.unwrap_or_else(|| Err(io::Error::other("no exit status"))),
            CloseStep::Wait(Some(until)) => {
                let left = until.saturating_duration_since(Instant::now());
                status = timeout(rt, left, child.wait()).await;
            }
            CloseStep::Wait(None) => status = Some(child.wait().await),
            CloseStep::Terminate => signal(pid, child, false),
            CloseStep::Kill => signal(pid, child, true),
        }
    }
}

impl<Rt: Runtime, C: ChildHandle> ProcessControl for Process<Rt, C> {
    fn pid(&self) -> Option<u32> {
        self.pid
    }

    fn stderr_tail(&self) -> String {
        lock(&self.stderr).text()
    }

    fn close(&self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(async move {
            let mut state = self.state.lock().await;
            if let Some(status) = state.status {
                return Ok(status);
            }
            let Some(child) = state.child.as_mut() else {
                return Err(io::Error::other("the agent process is gone"));
            };
            let status = close_child(&self.rt, child, self.pid, self.close_grace, self.kill_grace).await?;
            state.status = Some(status);
            state.child = None;
            // The pipes are closed now, so the driver ends at once.
            let _ = timeout(&self.rt, Duration::from_secs(1), self.shared.finished.wait()).await;
            // The tail then holds the agent's last words (a process it left behind may keep the
            // pipe open: then the tail is what was read by now).
            let _ = timeout(&self.rt, STDERR_GRACE, self.stderr_done.wait()).await;
            Ok(status)
        })
    }
}

impl<Rt: Runtime, C: ChildHandle> Drop for Process<Rt, C> {
    fn drop(&mut self) {
        // The last handle went away without `close`: the driver closes the agent's stdin, and
        // the same close sequence runs in the background.
        // Outside the runtime (it is shutting down) nothing can wait: kill the group at once.
        let Some(mut child) = self.state.get_mut().child.take() else { return };
        let (rt, pid, grace, kill_grace) = (self.rt.clone(), self.pid, self.close_grace, self.kill_grace);
        if !rt.in_context() {
            signal(pid, &mut child, true);
            return;
        }
        let task_rt = rt.clone();
        rt.spawn(async move {
            let _ = close_child(&task_rt, &mut child, pid, grace, kill_grace).await;
        });
    }
}
