//! Agent subprocesses: spawning with piped stdio, draining stderr into a bounded ring buffer,
//! and ending them (grace period, then the process group is terminated, killed and reaped).

use std::collections::VecDeque;
use std::io::{self, Read};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::sync::lock;

/// How long a process gets between `SIGTERM` and `SIGKILL`.
const TERM_GRACE: Duration = Duration::from_secs(1);
/// How often a waiting close checks whether the process exited.
const POLL: Duration = Duration::from_millis(5);
/// How long a close waits, once the process has exited, for its stderr to be read to the end.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// The last bytes a process wrote to stderr.
#[derive(Debug)]
pub(crate) struct Ring {
    bytes: VecDeque<u8>,
    capacity: usize,
}

impl Ring {
    pub(crate) fn new(capacity: usize) -> Ring {
        Ring { bytes: VecDeque::new(), capacity }
    }

    /// Appends, dropping the oldest bytes beyond the capacity.
    pub(crate) fn push(&mut self, data: &[u8]) {
        let data = &data[data.len().saturating_sub(self.capacity)..];
        let over = (self.bytes.len() + data.len()).saturating_sub(self.capacity);
        self.bytes.drain(..over);
        self.bytes.extend(data);
    }

    /// The kept bytes as text (invalid UTF-8, e.g. a character cut at the start, is replaced).
    pub(crate) fn text(&self) -> String {
        let (a, b) = self.bytes.as_slices();
        String::from_utf8_lossy(&[a, b].concat()).into_owned()
    }
}

/// A spawned agent process.
#[derive(Debug)]
pub(crate) struct ChildProcess {
    pid: u32,
    /// `None` once reaped.
    child: Mutex<Option<Child>>,
    status: Mutex<Option<ExitStatus>>,
    stderr: Arc<Mutex<Ring>>,
    /// Set by the stderr reader once it has read the pipe to its end.
    stderr_done: Arc<(Mutex<bool>, Condvar)>,
}

/// Spawns `command` with stdin and stdout piped for the connection and stderr drained into a
/// ring buffer of `stderr_capacity` bytes. On unix the process leads a new process group, so
/// that closing can end whatever it started too.
pub(crate) fn spawn(
    mut command: Command,
    stderr_capacity: usize,
) -> io::Result<(ChildProcess, ChildStdin, ChildStdout)> {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn()?;
    let (stdin, stdout, stderr) = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
        (Some(i), Some(o), Some(e)) => (i, o, e),
        _ => unreachable!("all three were piped"),
    };
    let ring = Arc::new(Mutex::new(Ring::new(stderr_capacity)));
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let process = ChildProcess {
        pid: child.id(),
        child: Mutex::new(Some(child)),
        status: Mutex::new(None),
        stderr: ring.clone(),
        stderr_done: done.clone(),
    };
    thread::Builder::new().name("acp-stderr".into()).spawn(move || {
        drain(stderr, &ring);
        *lock(&done.0) = true;
        done.1.notify_all();
    })?;
    Ok((process, stdin, stdout))
}

/// Keeps reading so the process never blocks on a full stderr pipe.
fn drain(mut stderr: impl Read, ring: &Mutex<Ring>) {
    let mut buf = [0u8; 8192];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => lock(ring).push(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        thread::sleep(POLL);
    }
}

/// Signals the process group (unix), or kills the process (elsewhere, or if the group is gone).
fn signal(child: &mut Child, kill: bool) {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal, kill_process_group};
        let sig = if kill { Signal::KILL } else { Signal::TERM };
        if kill_process_group(Pid::from_child(child), sig).is_ok() {
            return;
        }
    }
    if kill {
        let _ = child.kill();
    }
}

impl ChildProcess {
    pub(crate) fn id(&self) -> u32 {
        self.pid
    }

    pub(crate) fn stderr_tail(&self) -> String {
        lock(&self.stderr).text()
    }

    /// Waits up to `grace` for the process to exit by itself (its stdin is closed by now),
    /// then terminates its process group, then kills it, and reaps it. Returns the exit
    /// status; later calls return the same.
    pub(crate) fn terminate(&self, grace: Duration) -> io::Result<ExitStatus> {
        let mut slot = lock(&self.child);
        let Some(child) = slot.as_mut() else {
            return lock(&self.status).ok_or_else(|| io::Error::other("the agent process was not reaped"));
        };
        let status = match wait_until(child, Instant::now() + grace)? {
            Some(status) => status,
            None => {
                signal(child, false);
                match wait_until(child, Instant::now() + TERM_GRACE)? {
                    Some(status) => status,
                    None => {
                        signal(child, true);
                        child.wait()?
                    }
                }
            }
        };
        *slot = None;
        *lock(&self.status) = Some(status);
        drop(slot);
        self.await_stderr(STDERR_GRACE);
        Ok(status)
    }

    /// Waits up to `limit` for the stderr reader to reach the pipe's end, so that the tail
    /// holds the agent's last words once it has exited (a process it left behind may keep the
    /// pipe open: then the tail is what was read by then).
    fn await_stderr(&self, limit: Duration) {
        let (done, ended) = &*self.stderr_done;
        let deadline = Instant::now() + limit;
        let mut finished = lock(done);
        while !*finished {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            finished = ended.wait_timeout(finished, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

impl Drop for ChildProcess {
    /// A process that was never closed properly is killed and reaped, never left a zombie.
    fn drop(&mut self) {
        if let Some(mut child) = lock(&self.child).take() {
            if matches!(child.try_wait(), Ok(None)) {
                signal(&mut child, true);
            }
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_last_bytes() {
        let mut ring = Ring::new(8);
        ring.push(b"hello ");
        ring.push(b"world");
        assert_eq!(ring.text(), "lo world");
        ring.push(b"0123456789abc");
        assert_eq!(ring.text(), "56789abc");
    }
}
