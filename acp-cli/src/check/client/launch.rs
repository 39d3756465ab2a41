//! Starting the client under test for one scenario: a fresh Unix socket, `{agent}` replaced
//! by the relay's command line, the client in a process group of its own (acp-runtime's
//! [`Supervisor`]), and at the end the close sequence (stdin closed, a grace period,
//! `SIGTERM`, `SIGKILL` to the group) so that nothing is left behind.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::process::{ChildStdin, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use acp_runtime::process::{Supervisor, SupervisorOptions};

use super::super::children::Children;
use super::relay::RELAY;

/// The placeholder in the client's command line that becomes the agent's.
pub const PLACEHOLDER: &str = "{agent}";
/// The environment variable that carries the agent's command line as a JSON array.
pub const AGENT_ENV: &str = "ACP_CHECK_AGENT";
/// Bytes of the client's stderr kept for the report.
const STDERR_TAIL: usize = 8 * 1024;

static SCENARIO: AtomicUsize = AtomicUsize::new(0);

/// The client under test, started for one scenario.
pub(crate) struct Launched {
    supervisor: Arc<Supervisor>,
    stdin: Option<ChildStdin>,
    listener: UnixListener,
    dir: PathBuf,
    children: Arc<Children>,
}

/// Replaces `{agent}` in `argv`: an argument that is exactly the placeholder becomes the relay's
/// arguments; inside a longer argument it becomes them joined with spaces (shell-quoted).
pub(crate) fn substitute(argv: &[OsString], relay: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::with_capacity(argv.len() + relay.len());
    for arg in argv {
        if arg == PLACEHOLDER {
            out.extend(relay.iter().cloned());
        } else if let Some(text) = arg.to_str()
            && text.contains(PLACEHOLDER)
        {
            let joined: Vec<String> = relay.iter().map(|a| shell_quote(&a.to_string_lossy())).collect();
            out.push(text.replace(PLACEHOLDER, &joined.join(" ")).into());
        } else {
            out.push(arg.clone());
        }
    }
    out
}

fn shell_quote(text: &str) -> String {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b)) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

impl Launched {
    /// Makes the socket and starts `argv` (with `{agent}` replaced), one of `children` (from
    /// the scenario's thread, which ends it).
    pub(crate) fn start(argv: &[OsString], children: &Arc<Children>) -> io::Result<Launched> {
        let n = SCENARIO.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("acp-check-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        children.scratch(dir.clone());
        let started = Launched::spawn(argv, children, &dir);
        if started.is_err() {
            let _ = std::fs::remove_dir_all(&dir);
            children.scratch_gone(&dir);
        }
        started
    }

    fn spawn(argv: &[OsString], children: &Arc<Children>, dir: &std::path::Path) -> io::Result<Launched> {
        let socket = dir.join("agent.sock");
        let listener = UnixListener::bind(&socket)?;
        listener.set_nonblocking(true)?;
        let relay: Vec<OsString> = vec![std::env::current_exe()?.into(), RELAY.into(), socket.clone().into()];
        let argv = substitute(argv, &relay);
        let program = argv.first().ok_or_else(|| io::Error::other("no client command given"))?;
        let json: Vec<String> = relay.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        let json = serde_json::to_string(&json).unwrap_or_default();
        let options = SupervisorOptions::default()
            .with_stderr_capacity(STDERR_TAIL)
            .with_close_graces(Duration::from_millis(1500), Duration::from_millis(500));
        let (supervisor, stdin, stdout) = children
            .spawn(
                &argv,
                |command| {
                    command.env(AGENT_ENV, json);
                },
                options,
            )
            .map_err(|e| io::Error::new(e.kind(), format!("cannot start {}: {e}", OsStr::to_string_lossy(program))))?;
        // The client's stdout is not judged; it is drained so that the client never blocks.
        thread::Builder::new().name("check-client-stdout".into()).spawn(move || {
            let mut stdout = stdout;
            let mut sink = [0u8; 16 * 1024];
            while matches!(stdout.read(&mut sink), Ok(n) if n > 0) {}
        })?;
        Ok(Launched { supervisor, stdin: Some(stdin), listener, dir: dir.to_path_buf(), children: children.clone() })
    }

    /// Waits for the client to start the relay and the relay to connect, until `until`;
    /// `None` if the client exited first or time ran out.
    pub(crate) fn accept(&self, until: Instant) -> Option<UnixStream> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => return stream.set_nonblocking(false).ok().map(|()| stream),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return None,
            }
            if Instant::now() >= until || self.supervisor.try_status().is_some() {
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// The exit status, if the client has exited.
    pub(crate) fn status(&self) -> Option<ExitStatus> {
        self.supervisor.try_status()
    }

    /// Waits until the client exits or `until`; returns its status if it exited.
    pub(crate) fn wait_exit(&self, until: Instant) -> Option<ExitStatus> {
        loop {
            if let Some(status) = self.status() {
                return Some(status);
            }
            if Instant::now() >= until {
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Sends `SIGINT` to the client (as a user's Ctrl-C would); false if it could not.
    pub(crate) fn interrupt(&self) -> bool {
        use rustix::process::{Pid, Signal, kill_process};
        let Some(pid) = i32::try_from(self.supervisor.id()).ok().filter(|&p| p > 1).and_then(Pid::from_raw) else {
            return false;
        };
        kill_process(pid, Signal::INT).is_ok()
    }

    /// The last lines the client wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> String {
        self.supervisor.stderr_tail()
    }

    /// Ends the client: its stdin closed, a grace period, then `SIGTERM` and `SIGKILL` to its
    /// process group. Returns its exit status and whether it had to be signalled.
    pub(crate) fn finish(mut self) -> (Option<ExitStatus>, bool) {
        let exited = self.status();
        drop(self.stdin.take());
        let status = self.supervisor.close_with_grace(Duration::from_millis(300), || {}).ok();
        (status, exited.is_none())
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.supervisor.close(|| {});
        let _ = std::fs::remove_dir_all(&self.dir);
        self.children.scratch_gone(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_placeholder_becomes_the_relay_command() {
        let argv: Vec<OsString> = ["client", "--", "{agent}", "x={agent}"].iter().map(OsString::from).collect();
        let relay: Vec<OsString> = ["/bin/acp", "__check-relay", "/tmp/a b"].iter().map(OsString::from).collect();
        let out = substitute(&argv, &relay);
        let out: Vec<&str> = out.iter().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            out,
            ["client", "--", "/bin/acp", "__check-relay", "/tmp/a b", "x=/bin/acp __check-relay '/tmp/a b'"]
        );
    }
}
