//! What `acp check` starts (the agents under test, the clients under test) ends with it,
//! however it ends.
//!
//! Each process is spawned through [`Children::spawn`]: supervised by acp-runtime's
//! [`Supervisor`] (a process group of its own, stderr drained, the close sequence), as `acp
//! client` supervises its agent, and, when the check is the `acp` command, started through
//! `acp __exec-child` so that the kernel kills it if the check dies, even by `SIGKILL`. A
//! scenario ends its processes when it is done (the supervisor's close, or its drop).
//!
//! When the check is the `acp` command it also listens for `SIGINT`, `SIGTERM` and `SIGHUP`
//! ([`Children::end_on_signals`]): the first one ends every process still running (each
//! supervisor's close sequence with a short grace, all at once), removes the scratch
//! directories, and exits with 128 + the signal; the check's own threads see their processes
//! end, and wait there ([`Children::hold_if_ending`]) rather than print a report of a check
//! cut short. Before, the check died of the signal and left its agents running in their
//! process groups. From the signal on nothing more is spawned.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, ChildStdout, Command};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use acp_runtime::process::{Supervisor, SupervisorOptions};

use crate::signals::{self, SignalNo};

/// How long a process gets to exit by itself after a signal ended the check, before its group
/// is sent `SIGTERM` (then `SIGKILL`, after the supervisor's own grace).
const SIGNAL_GRACE: Duration = Duration::from_millis(100);

/// The processes and scratch directories of one check.
#[derive(Debug, Default)]
pub(crate) struct Children {
    state: Mutex<State>,
    /// Start processes through `acp __exec-child` (the check is the `acp` command).
    die_with_check: bool,
}

#[derive(Debug, Default)]
struct State {
    /// A signal is ending the check: nothing more is spawned.
    ending: bool,
    /// The processes spawned (those whose scenario dropped them are gone).
    live: Vec<Weak<Supervisor>>,
    /// Scratch directories, removed when a signal ends the check.
    dirs: Vec<PathBuf>,
}

impl Children {
    /// The children of a check; with `die_with_check`, processes start through `acp
    /// __exec-child` (the current executable must be `acp`).
    pub(crate) fn new(die_with_check: bool) -> Arc<Children> {
        Arc::new(Children { state: Mutex::default(), die_with_check })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Spawns `argv` supervised with `options`; `configure` adds to the command (arguments,
    /// environment). Call it from the thread that ends the process (the kernel's death
    /// signal follows the spawning thread). Refused once a signal is ending the check.
    pub(crate) fn spawn(
        &self,
        argv: &[std::ffi::OsString],
        configure: impl FnOnce(&mut Command),
        options: SupervisorOptions,
    ) -> io::Result<(Arc<Supervisor>, ChildStdin, ChildStdout)> {
        let mut command = crate::client::exec_child_command(argv, self.die_with_check)?;
        configure(&mut command);
        // Under the lock: a signal's ending sees every process spawned before it, and none
        // after it.
        let mut state = self.lock();
        if state.ending {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "acp check is ending"));
        }
        let (supervisor, stdin, stdout) = Supervisor::spawn(command, options)?;
        let supervisor = Arc::new(supervisor);
        state.live.retain(|child| child.strong_count() > 0);
        state.live.push(Arc::downgrade(&supervisor));
        Ok((supervisor, stdin, stdout))
    }

    /// Notes a scratch directory to remove if a signal ends the check.
    pub(crate) fn scratch(&self, dir: PathBuf) {
        self.lock().dirs.push(dir);
    }

    /// The scratch directory was removed (or is no longer the check's).
    pub(crate) fn scratch_gone(&self, dir: &std::path::Path) {
        self.lock().dirs.retain(|d| d != dir);
    }

    /// When a signal is ending the check, waits for it to end the process (a check cut short
    /// prints no report): called before the report is made.
    pub(crate) fn hold_if_ending(&self) {
        if self.lock().ending {
            loop {
                std::thread::park();
            }
        }
    }

    /// Ends every process still running, at once (each supervisor's close sequence), and
    /// removes the scratch directories; nothing is spawned after it. Returns how many
    /// processes it ended.
    pub(crate) fn end_all(&self) -> usize {
        let (live, dirs) = {
            let mut state = self.lock();
            state.ending = true;
            let live: Vec<Arc<Supervisor>> = state.live.drain(..).filter_map(|child| child.upgrade()).collect();
            (live, std::mem::take(&mut state.dirs))
        };
        std::thread::scope(|scope| {
            for child in &live {
                scope.spawn(move || {
                    let _ = child.close_with_grace(SIGNAL_GRACE, || {});
                });
            }
        });
        for dir in dirs {
            let _ = std::fs::remove_dir_all(dir);
        }
        live.len()
    }

    /// Listens for `SIGINT`, `SIGTERM` and `SIGHUP`: the first ends every child
    /// ([`end_all`](Self::end_all)), then the process, with 128 + the signal. `None` (after
    /// a warning on stderr) when the signals cannot be listened for. `what` names the check
    /// in the messages.
    pub(crate) fn end_on_signals(self: &Arc<Self>, what: &'static str) -> Option<signals::Listening> {
        let children = self.clone();
        let listening = signals::listen(move |number: SignalNo| {
            // The messages must not wait on a stderr nobody reads.
            crate::outlet::signalled();
            let ended = children.end_all();
            let _ = writeln!(
                crate::outlet::stderr(),
                "{what}: stopped by {}; the {ended} process(es) it had running are ended",
                signals::name(number)
            );
            crate::outlet::drain();
            std::process::exit(128 + number);
        });
        match listening {
            Ok(listening) => Some(listening),
            Err(e) => {
                eprintln!(
                    "{what}: warning: signals are not handled ({e}): one may leave what the check started running"
                );
                None
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn end_all_ends_every_live_process_and_refuses_more() {
        let children = Children::new(false);
        let options = || SupervisorOptions::default().with_close_graces(Duration::from_secs(5), Duration::from_secs(1));
        let argv = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        // Ignores its stdin's end: only the close sequence's signals end it.
        let (first, _in1, _out1) = children.spawn(&argv(&["sleep", "1000"]), |_| {}, options()).unwrap();
        let (second, _in2, _out2) = children.spawn(&argv(&["sleep", "1000"]), |_| {}, options()).unwrap();
        // A scenario that is done dropped its process: not ended twice.
        let (third, _in3, _out3) = children.spawn(&argv(&["sleep", "1000"]), |_| {}, options()).unwrap();
        drop(third);
        let dir = std::env::temp_dir().join(format!("acp-check-children-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        children.scratch(dir.clone());
        assert_eq!(children.end_all(), 2);
        assert!(first.try_status().is_some() && second.try_status().is_some());
        assert!(!dir.exists());
        let refused = children.spawn(&argv(&["sleep", "1000"]), |_| {}, options()).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::Interrupted);
    }
}
