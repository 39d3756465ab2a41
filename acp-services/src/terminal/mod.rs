//! `terminal/*`: commands run as child processes, their combined output captured.
//!
//! ## Design
//!
//! Each terminal is one child process and two threads:
//!
//! * a **reader** drains the single pipe the child's stdout *and* stderr both write to (so the
//!   output is interleaved as the process wrote it), decoding UTF-8 incrementally into an
//!   `OutputBuffer` that keeps the newest `outputByteLimit` bytes, cut at a character
//!   boundary. It reads until end of file whatever the limit, so a chatty process never
//!   blocks on a full pipe;
//! * a **waiter** learns that the child exited (on Linux with `waitid(WNOWAIT)`, which leaves
//!   it unreaped; elsewhere by polling `try_wait`), reaps it under the state lock, then gives
//!   the reader up to [`TerminalConfig::exit_drain_grace`] to reach end of file, so that
//!   output written just before the exit is in `terminal/output` by the time `exitStatus` is.
//!   Only a descendant that outlives the command and keeps the pipe open makes it wait the
//!   whole grace; the exit status is then published and the reader goes on collecting.
//!
//! Both threads share a mutex-protected state and a condition variable; `wait_for_exit` waits
//! on it. The child leads its own process group (Unix), and a kill sends `SIGKILL` to the
//! whole group, so `sh -c 'make & …'` dies with everything it started. Because the child is
//! reaped under the same lock the kill takes, a kill never signals a recycled pid. After the
//! child itself is gone, a kill (or release) still signals its group as long as the pipe is
//! open, the sign that some of the group survives.
//!
//! A released terminal is killed, its output dropped, and forgotten: its id answers `-32002`
//! from then on. Its threads finish by themselves once the process is dead (a descendant that
//! escaped the group and keeps the pipe open keeps the reader alive, draining into
//! nothing); [`Terminals`]' `Drop` kills every process still running, released or not, and
//! waits (up to a few seconds) to reap them.
//!
//! ## Confinement
//!
//! By default ([`TerminalConfig::confine`]) every command runs under Landlock, confined to
//! the roots and [`TerminalConfig::system_paths`]; see [`confine`] for how (a dedicated
//! spawner thread, as `unsafe` is forbidden) and what is allowed. The request's `env` may not
//! set the dynamic loader's variables (`LD_*`, `GLIBC_TUNABLES`, macOS' `DYLD_*`):
//! `forbidden_env`.
//!
//! ## Ending everything
//!
//! A `terminal/wait_for_exit` blocked forever keeps the services alive, so `Drop` alone is
//! not enough. [`Terminals::shutdown`] kills every process (group), live or released, reaps
//! them, makes every pending and later wait return at once (the exit status if it was
//! published, else `shut_down`) and refuses every later `create` (`shut_down`). A command
//! that calls `setsid` leaves the process group, so no group kill reaches it: a client that
//! makes itself a child subreaper collects such orphans and ends them with
//! [`kill_orphans`] (Linux).

mod config;
pub mod confine;
#[cfg(target_os = "linux")]
mod orphans;
mod output;
mod sys;

pub use config::TerminalConfig;
pub use confine::{PathAccess, default_system_paths, landlock_status};
#[cfg(target_os = "linux")]
pub use orphans::kill_orphans;

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use acp_proto::RpcError;
use acp_proto::types::{
    CreateTerminalRequest, CreateTerminalResponse, KillTerminalRequest, KillTerminalResponse, ReleaseTerminalRequest,
    ReleaseTerminalResponse, SessionId, TerminalExitStatus, TerminalId, TerminalOutputRequest, TerminalOutputResponse,
    WaitForTerminalExitRequest, WaitForTerminalExitResponse,
};

use crate::error::{ErrorKind, Failure};
use crate::path::Roots;
use confine::Spawner;
use output::OutputBuffer;

/// How long `Drop` waits for killed processes to be reaped before leaving them to the OS.
const DROP_REAP_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the waiter polls for the exit where it cannot block (not Linux).
const POLL_INTERVAL: Duration = Duration::from_millis(10);
/// Stack size of the reader and waiter threads (the reader holds an 8 KiB buffer).
const THREAD_STACK: usize = 128 * 1024;
/// How often [`Terminals::wait_for_exit_until`] asks whether to give up.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// The `terminal/*` methods: runs commands as child processes and keeps their output.
///
/// All methods take `&self`; `Terminals` is `Send + Sync`, so one instance can serve every
/// handler thread. A terminal belongs to the session that created it: the other sessions
/// (and everyone, after `terminal/release`) get `-32002` for its id. Ids are `term-<n>`,
/// never reused within the process.
///
/// [`Terminals::wait_for_exit`] blocks; async adapters call it from a blocking pool, or use
/// [`Terminals::wait_for_exit_timeout`] / [`Terminals::try_wait_for_exit`]; a client that
/// must be able to give up a wait uses [`Terminals::wait_for_exit_until`]. When the client
/// goes away, call [`Terminals::shutdown`].
#[derive(Debug)]
pub struct Terminals {
    config: TerminalConfig,
    roots: Roots,
    default_cwd: Option<PathBuf>,
    registry: Mutex<Registry>,
    /// The thread that starts the commands (confined unless the config says otherwise).
    spawner: Spawner,
}

#[derive(Debug, Default)]
struct Registry {
    live: HashMap<TerminalId, Entry>,
    /// Released terminals whose waiter has not finished yet.
    retired: Vec<Entry>,
    /// Creations between the cap check and their insertion.
    starting: usize,
    /// [`Terminals::shutdown`] was called: no more terminals.
    shut_down: bool,
}

#[derive(Debug)]
struct Entry {
    session: SessionId,
    proc: Arc<Proc>,
    waiter: Option<JoinHandle<()>>,
}

/// What the threads and the methods share about one process.
#[derive(Debug)]
struct Proc {
    pid: u32,
    state: Mutex<ProcState>,
    changed: Condvar,
}

#[derive(Debug)]
struct ProcState {
    output: OutputBuffer,
    /// The child until it is reaped.
    child: Option<Child>,
    reader_done: bool,
    /// Released: the reader keeps draining the pipe (a survivor must not block on it) but
    /// keeps nothing.
    released: bool,
    /// Published once the child is reaped and its output drained (or the grace is over).
    exit: Option<TerminalExitStatus>,
    /// [`Terminals::shutdown`] was called: waits return at once.
    shut_down: bool,
}

/// How a wait for the exit ended.
enum Waited {
    Exited(TerminalExitStatus),
    ShutDown,
    /// The deadline passed first.
    Running,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Proc {
    fn kill(&self) {
        let mut st = lock(&self.state);
        if st.child.is_some() {
            sys::kill(self.pid, st.child.as_mut());
        } else if !st.reader_done {
            // The command is gone but something it started still holds the pipe.
            sys::kill(self.pid, None);
        }
    }

    /// Kills the command and drops its output, for good.
    fn release(&self) {
        self.kill();
        let mut st = lock(&self.state);
        st.released = true;
        st.output = OutputBuffer::new(0);
    }

    /// Waits until `done` holds or `deadline` passes (`None`: forever); returns the state,
    /// locked.
    fn wait_until(&self, deadline: Option<Instant>, done: impl Fn(&ProcState) -> bool) -> MutexGuard<'_, ProcState> {
        let mut st = lock(&self.state);
        while !done(&st) {
            st = match deadline {
                None => self.changed.wait(st).unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
                        break;
                    };
                    self.changed.wait_timeout(st, left).unwrap_or_else(PoisonError::into_inner).0
                }
            };
        }
        st
    }

    /// Waits until the exit is published, the terminals are shut down, or `deadline` passes.
    fn wait_exit(&self, deadline: Option<Instant>) -> Waited {
        let st = self.wait_until(deadline, |st| st.exit.is_some() || st.shut_down);
        match (&st.exit, st.shut_down) {
            (Some(exit), _) => Waited::Exited(exit.clone()),
            (None, true) => Waited::ShutDown,
            (None, false) => Waited::Running,
        }
    }

    /// Wakes every wait for good (after the kill of [`Terminals::shutdown`]).
    fn shut_down(&self) {
        lock(&self.state).shut_down = true;
        self.changed.notify_all();
    }
}

impl Waited {
    /// The `wait_for_exit` answer: `Ok(None)` while the command runs.
    fn answer(self) -> Result<Option<WaitForTerminalExitResponse>, RpcError> {
        match self {
            Waited::Exited(exit) => Ok(Some(wait_response(exit))),
            Waited::ShutDown => Err(shut_down_error()),
            Waited::Running => Ok(None),
        }
    }
}

impl Terminals {
    /// Terminals with the given settings. Fails when a root or the default working
    /// directory is not an absolute path to an existing directory, and (error kind
    /// `Unsupported`) when [`TerminalConfig::confine`] is set but the kernel cannot enforce
    /// the confinement (fully, unless [`TerminalConfig::allow_partial_confinement`]): see
    /// [`landlock_status`]. Such a client must not advertise terminals, unless its user opted
    /// into unconfined ones.
    pub fn new(config: TerminalConfig) -> io::Result<Terminals> {
        let roots = Roots::new(&config.roots, config.max_symlink_hops)?;
        let default_cwd = match &config.default_cwd {
            Some(dir) => {
                let dir = std::fs::canonicalize(dir)?;
                if !dir.is_dir() {
                    return Err(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("default working directory `{}` is not a directory", dir.display()),
                    ));
                }
                Some(dir)
            }
            None => None,
        };
        let spawner = Spawner::start(config.confine.then(|| {
            let mut system = config.system_paths.clone();
            if let Some(launcher) = config.launcher.first() {
                system.push((PathBuf::from(launcher), PathAccess::Read));
            }
            confine::Rules { roots: config.roots.clone(), system, allow_partial: config.allow_partial_confinement }
        }))?;
        Ok(Terminals { config, roots, default_cwd, registry: Mutex::default(), spawner })
    }

    /// The settings.
    pub fn config(&self) -> &TerminalConfig {
        &self.config
    }

    /// How many terminals are live (created and not released).
    pub fn live(&self) -> usize {
        lock(&self.registry).live.len()
    }

    /// Serves `terminal/create`: validates the request, then starts the command and returns
    /// its new id without waiting for it.
    pub fn create(&self, request: &CreateTerminalRequest) -> Result<CreateTerminalResponse, RpcError> {
        let args = request.args.as_deref().unwrap_or_default();
        check_command(&request.command, args)?;
        let env: Vec<(&str, &str)> =
            request.env.iter().flatten().map(|v| (v.name.as_str(), v.value.as_str())).collect();
        check_env(&env)?;
        let cwd = self.working_directory(request.cwd.as_deref())?;
        let limit = request
            .output_byte_limit
            .map_or(self.config.default_output_byte_limit, |l| usize::try_from(l).unwrap_or(usize::MAX))
            .min(self.config.max_output_byte_limit);

        let _slot = self.reserve()?;
        let mut command = if self.config.shell {
            sys::shell(&request.command, args)
        } else {
            let mut c = Command::new(&request.command);
            c.args(args);
            c
        };
        if let Some(launched) = self.launch(&command, &cwd, &env)? {
            command = launched;
        }
        command.current_dir(&cwd);
        if !self.config.inherit_env {
            command.env_clear();
        }
        command.envs(env);
        let (proc, reader) = spawn(command, limit, &request.command, &self.spawner)?;
        let waiter = match start_threads(&proc, reader, self.config.exit_drain_grace) {
            Ok(waiter) => waiter,
            Err(e) => {
                // Without threads nobody would reap it: kill and reap it here.
                let mut st = lock(&proc.state);
                sys::kill(proc.pid, st.child.as_mut());
                if let Some(mut child) = st.child.take() {
                    let _ = child.wait();
                }
                return Err(Failure::new(ErrorKind::SpawnFailed, format!("cannot start a thread: {e}")).into());
            }
        };
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let id = TerminalId::from(format!("term-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed)));
        let entry = Entry { session: request.session_id.clone(), proc, waiter: Some(waiter) };
        let mut reg = lock(&self.registry);
        if reg.shut_down {
            // Shut down while it started: it must not outlive the others.
            entry.proc.kill();
            entry.proc.shut_down();
            reg.retired.push(entry);
            return Err(shut_down_error());
        }
        reg.live.insert(id.clone(), entry);
        Ok(CreateTerminalResponse::new(id))
    }

    /// Serves `terminal/output`: the output so far, and the exit status once published.
    pub fn output(&self, request: &TerminalOutputRequest) -> Result<TerminalOutputResponse, RpcError> {
        let proc = self.find(&request.session_id, &request.terminal_id)?;
        let st = lock(&proc.state);
        let mut response = TerminalOutputResponse::new(st.output.text(), st.output.truncated());
        response.exit_status = st.exit.clone();
        Ok(response)
    }

    /// Serves `terminal/wait_for_exit`: blocks until the command has exited, or until
    /// [`Self::shutdown`] (then the exit status if it was already published, else an error
    /// of kind `shut_down`).
    pub fn wait_for_exit(&self, request: &WaitForTerminalExitRequest) -> Result<WaitForTerminalExitResponse, RpcError> {
        let proc = self.find(&request.session_id, &request.terminal_id)?;
        Ok(proc.wait_exit(None).answer()?.unwrap_or_default())
    }

    /// `terminal/wait_for_exit` giving up after `timeout`: `Ok(None)` if the command is still
    /// running then. Ends early, like [`Self::wait_for_exit`], at [`Self::shutdown`].
    pub fn wait_for_exit_timeout(
        &self,
        request: &WaitForTerminalExitRequest,
        timeout: Duration,
    ) -> Result<Option<WaitForTerminalExitResponse>, RpcError> {
        let proc = self.find(&request.session_id, &request.terminal_id)?;
        // A deadline beyond what `Instant` can hold is no deadline.
        proc.wait_exit(Instant::now().checked_add(timeout)).answer()
    }

    /// `terminal/wait_for_exit` that the caller can give up: `cancelled` is asked every few
    /// milliseconds, and once it answers `true` the wait ends with `Ok(None)` (the command
    /// keeps running). Ends early, like [`Self::wait_for_exit`], at [`Self::shutdown`].
    ///
    /// ```
    /// # use acp_proto::types::*;
    /// # use acp_services::{TerminalConfig, Terminals};
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// # let dir = std::env::temp_dir();
    /// # let mut config = TerminalConfig::new([&dir]);
    /// # config.confine = acp_services::terminal::landlock_status().is_ok();
    /// let terminals = Terminals::new(config).unwrap();
    /// # #[cfg(unix)] {
    /// let mut create = CreateTerminalRequest::new("s", "sleep");
    /// create.args = Some(vec!["1000".into()]);
    /// let id = terminals.create(&create).unwrap().terminal_id;
    /// let cancel = AtomicBool::new(true); // set by, say, `session/cancel`
    /// let wait = WaitForTerminalExitRequest::new("s", id.clone());
    /// let answer = terminals.wait_for_exit_until(&wait, &|| cancel.load(Ordering::Relaxed));
    /// assert_eq!(answer.unwrap(), None);
    /// terminals.release(&ReleaseTerminalRequest::new("s", id)).unwrap();
    /// # }
    /// ```
    pub fn wait_for_exit_until(
        &self,
        request: &WaitForTerminalExitRequest,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Option<WaitForTerminalExitResponse>, RpcError> {
        let proc = self.find(&request.session_id, &request.terminal_id)?;
        loop {
            match proc.wait_exit(Instant::now().checked_add(CANCEL_POLL)) {
                Waited::Running if !cancelled() => continue,
                waited => return waited.answer(),
            }
        }
    }

    /// `terminal/wait_for_exit` without blocking: `Ok(None)` while the command runs
    /// (`shut_down` after [`Self::shutdown`] if it never published an exit status).
    pub fn try_wait_for_exit(
        &self,
        request: &WaitForTerminalExitRequest,
    ) -> Result<Option<WaitForTerminalExitResponse>, RpcError> {
        let proc = self.find(&request.session_id, &request.terminal_id)?;
        proc.wait_exit(Some(Instant::now())).answer()
    }

    /// Serves `terminal/kill`: kills the command (and its process group) but keeps the
    /// terminal, its output and, soon, its exit status. Killing an exited command is a no-op.
    pub fn kill(&self, request: &KillTerminalRequest) -> Result<KillTerminalResponse, RpcError> {
        self.find(&request.session_id, &request.terminal_id)?.kill();
        Ok(KillTerminalResponse::default())
    }

    /// Serves `terminal/release`: kills the command if it still runs, drops its output and
    /// forgets the terminal; its id answers `-32002` from then on. A `wait_for_exit` already
    /// blocked on it returns the kill's exit status. Returns without waiting for the process
    /// to be reaped (its waiter thread does that; `Drop` waits for it).
    pub fn release(&self, request: &ReleaseTerminalRequest) -> Result<ReleaseTerminalResponse, RpcError> {
        let mut reg = lock(&self.registry);
        match reg.live.get(&request.terminal_id) {
            Some(entry) if entry.session == request.session_id => {}
            _ => return Err(unknown(&request.terminal_id)),
        }
        if let Some(entry) = reg.live.remove(&request.terminal_id) {
            entry.proc.release();
            reg.retired.push(entry);
        }
        prune(&mut reg.retired);
        Ok(ReleaseTerminalResponse::default())
    }

    /// Releases every terminal of `session` (for `session/close` and the like); returns how
    /// many there were.
    pub fn release_session(&self, session: &SessionId) -> usize {
        let mut reg = lock(&self.registry);
        let ids: Vec<TerminalId> =
            reg.live.iter().filter(|(_, e)| &e.session == session).map(|(id, _)| id.clone()).collect();
        for id in &ids {
            if let Some(entry) = reg.live.remove(id) {
                entry.proc.release();
                reg.retired.push(entry);
            }
        }
        prune(&mut reg.retired);
        ids.len()
    }

    /// Ends everything, for a client that is going away: kills every process (group), live
    /// or released, and waits (a few seconds at most) until they are reaped; every pending
    /// and later `wait_for_exit` returns at once (the exit status if it was published, else
    /// an error of kind `shut_down`), and every later `create` is refused (`shut_down`).
    /// `output`, `kill` and `release` keep working. Calling it again does no harm.
    ///
    /// A descendant that left the process group (`setsid`) is out of reach here: see
    /// [`kill_orphans`].
    pub fn shutdown(&self) {
        let procs: Vec<Arc<Proc>> = {
            let mut reg = lock(&self.registry);
            reg.shut_down = true;
            reg.live.values().chain(reg.retired.iter()).map(|e| e.proc.clone()).collect()
        };
        for proc in &procs {
            proc.kill();
            proc.shut_down();
        }
        let deadline = Instant::now() + DROP_REAP_TIMEOUT;
        for proc in &procs {
            drop(proc.wait_until(Some(deadline), |st| st.child.is_none()));
        }
    }

    fn find(&self, session: &SessionId, id: &TerminalId) -> Result<Arc<Proc>, RpcError> {
        match lock(&self.registry).live.get(id) {
            Some(entry) if &entry.session == session => Ok(entry.proc.clone()),
            _ => Err(unknown(id)),
        }
    }

    fn working_directory(&self, cwd: Option<&str>) -> Result<PathBuf, Failure> {
        let Some(raw) = cwd else {
            return self.default_cwd.clone().ok_or_else(|| {
                Failure::new(ErrorKind::NoWorkingDirectory, "no `cwd` given and no default working directory")
            });
        };
        let resolved = self.roots.resolve(raw)?;
        match resolved.meta {
            Some(meta) if meta.is_dir() => Ok(resolved.path),
            Some(_) => Err(Failure::at(ErrorKind::NotADirectory, raw, format!("`{raw}` is not a directory"))),
            None => Err(Failure::at(ErrorKind::NotFound, raw, format!("working directory `{raw}` does not exist"))),
        }
    }

    /// `command` started through [`TerminalConfig::launcher`], if one is set. The program is
    /// looked up first, as `exec` will (in the request's `PATH`, else ours; a relative path
    /// from `cwd`), so that a missing command is refused here and not reported by the
    /// launcher as an exit status.
    fn launch(&self, command: &Command, cwd: &Path, env: &[(&str, &str)]) -> Result<Option<Command>, Failure> {
        let Some((launcher, first_args)) = self.config.launcher.split_first() else {
            return Ok(None);
        };
        let program = Path::new(command.get_program());
        let search = env.iter().rev().find(|(k, _)| *k == "PATH").map(|(_, v)| OsString::from(v));
        let search = search.or_else(|| if self.config.inherit_env { std::env::var_os("PATH") } else { None });
        if !sys::findable(program, cwd, search.as_deref()) {
            let shown = program.display();
            return Err(Failure::new(ErrorKind::CommandNotFound, format!("cannot run `{shown}`: no such command")));
        }
        let mut launched = Command::new(launcher);
        launched.args(first_args).arg(program).args(command.get_args());
        Ok(Some(launched))
    }

    /// Takes one of the `max_terminals` slots until the returned guard is dropped.
    fn reserve(&self) -> Result<Slot<'_>, Failure> {
        let mut reg = lock(&self.registry);
        if reg.shut_down {
            return Err(shut_down_failure());
        }
        prune(&mut reg.retired);
        let max = self.config.max_terminals;
        if reg.live.len() + reg.starting >= max {
            return Err(Failure::new(
                ErrorKind::TooManyTerminals,
                format!("too many terminals: {max} are live; release one first"),
            ));
        }
        reg.starting += 1;
        Ok(Slot(&self.registry))
    }
}

impl Drop for Terminals {
    /// Kills every process still running (released ones too) and reaps them, waiting at most
    /// a few seconds in all.
    fn drop(&mut self) {
        let entries: Vec<Entry> = {
            let mut reg = lock(&self.registry);
            let live: Vec<Entry> = reg.live.drain().map(|(_, e)| e).collect();
            live.into_iter().chain(reg.retired.drain(..)).collect()
        };
        for entry in &entries {
            entry.proc.kill();
        }
        let deadline = Instant::now() + DROP_REAP_TIMEOUT;
        for mut entry in entries {
            if entry.proc.wait_until(Some(deadline), |st| st.exit.is_some()).exit.is_some()
                && let Some(waiter) = entry.waiter.take()
            {
                let _ = waiter.join();
            }
        }
    }
}

/// A reserved terminal slot.
struct Slot<'a>(&'a Mutex<Registry>);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        lock(self.0).starting -= 1;
    }
}

/// Joins the waiters of released terminals that are done.
fn prune(retired: &mut Vec<Entry>) {
    retired.retain_mut(|entry| match entry.waiter.take_if(|w| w.is_finished()) {
        Some(waiter) => {
            let _ = waiter.join();
            false
        }
        None => entry.waiter.is_some(),
    });
}

fn unknown(id: &TerminalId) -> RpcError {
    Failure::new(ErrorKind::UnknownTerminal, format!("unknown terminal `{id}`")).into()
}

fn shut_down_failure() -> Failure {
    Failure::new(ErrorKind::ShutDown, "the terminals are shut down")
}

fn shut_down_error() -> RpcError {
    shut_down_failure().into()
}

fn wait_response(exit: TerminalExitStatus) -> WaitForTerminalExitResponse {
    WaitForTerminalExitResponse { exit_code: exit.exit_code, signal: exit.signal, meta: None }
}

fn check_command(command: &str, args: &[String]) -> Result<(), Failure> {
    if command.trim().is_empty() {
        return Err(Failure::new(ErrorKind::InvalidCommand, "the command is empty"));
    }
    if command.contains('\0') || args.iter().any(|a| a.contains('\0')) {
        return Err(Failure::new(ErrorKind::InvalidCommand, "the command or an argument contains a NUL byte"));
    }
    Ok(())
}

fn check_env(env: &[(&str, &str)]) -> Result<(), Failure> {
    for (name, value) in env {
        if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
            return Err(Failure::new(ErrorKind::InvalidEnv, format!("invalid environment variable `{name}`")));
        }
        if loader_variable(name) {
            return Err(Failure::new(
                ErrorKind::ForbiddenEnv,
                format!("`{name}` steers the dynamic loader; terminals do not take it from the agent"),
            ));
        }
    }
    Ok(())
}

/// Whether `name` changes what the dynamic loader loads or how (`LD_PRELOAD`,
/// `LD_LIBRARY_PATH`, `LD_AUDIT` and every other `LD_*`, `GLIBC_TUNABLES`, macOS' `DYLD_*`).
fn loader_variable(name: &str) -> bool {
    name.starts_with("LD_") || name.starts_with("DYLD_") || name == "GLIBC_TUNABLES"
}

/// Starts `command` (on the confined `spawner` if any) with stdin closed and stdout and
/// stderr on one new pipe.
fn spawn(
    mut command: Command,
    limit: usize,
    program: &str,
    spawner: &Spawner,
) -> Result<(Arc<Proc>, io::PipeReader), Failure> {
    let fail = |e: io::Error| {
        let kind = match e.kind() {
            io::ErrorKind::NotFound => ErrorKind::CommandNotFound,
            io::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
            _ => ErrorKind::SpawnFailed,
        };
        Failure::new(kind, format!("cannot run `{program}`: {e}"))
    };
    let (reader, writer) = io::pipe().map_err(fail)?;
    command.stdin(Stdio::null()).stdout(writer.try_clone().map_err(fail)?).stderr(writer);
    sys::prepare(&mut command);
    // `command` holds the parent's copies of the write end: the spawner drops it, or the
    // reader would never see end of file.
    let child = spawner.spawn(command).map_err(fail)?;
    let state = ProcState {
        output: OutputBuffer::new(limit),
        child: Some(child),
        reader_done: false,
        released: false,
        exit: None,
        shut_down: false,
    };
    let pid = state.child.as_ref().map_or(0, Child::id);
    Ok((Arc::new(Proc { pid, state: Mutex::new(state), changed: Condvar::new() }), reader))
}

/// Starts the reader and the waiter; returns the waiter's handle (the reader is detached: it
/// ends when the last holder of the pipe does).
fn start_threads(proc: &Arc<Proc>, reader: io::PipeReader, grace: Duration) -> io::Result<JoinHandle<()>> {
    let p = proc.clone();
    thread::Builder::new()
        .name(format!("acp-term-{}-out", proc.pid))
        .stack_size(THREAD_STACK)
        .spawn(move || drain(&p, reader))?;
    let p = proc.clone();
    thread::Builder::new().name(format!("acp-term-{}-wait", proc.pid)).stack_size(THREAD_STACK).spawn(move || {
        let status = reap(&p);
        publish_exit(&p, status, grace);
    })
}

/// The reader thread: everything the process writes goes into the buffer.
fn drain(proc: &Proc, mut pipe: io::PipeReader) {
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let mut st = lock(&proc.state);
                if !st.released {
                    st.output.push(&buf[..n]);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let mut st = lock(&proc.state);
    st.output.finish();
    st.reader_done = true;
    proc.changed.notify_all();
}

/// The waiter thread, part 1: waits for the exit and reaps the child under the lock.
fn reap(proc: &Proc) -> Option<ExitStatus> {
    // After a blocking wait the child is a zombie and the first `try_wait` reaps it.
    let pause = if sys::wait_exited(proc.pid) { Duration::from_millis(1) } else { POLL_INTERVAL };
    loop {
        let mut st = lock(&proc.state);
        let child = st.child.as_mut()?;
        match child.try_wait() {
            Ok(Some(status)) => {
                st.child = None;
                proc.changed.notify_all();
                return Some(status);
            }
            Ok(None) => {}
            Err(_) => {
                st.child = None;
                proc.changed.notify_all();
                return None;
            }
        }
        drop(st);
        thread::sleep(pause);
    }
}

/// The waiter thread, part 2: lets the reader catch up, then publishes the exit status.
fn publish_exit(proc: &Proc, status: Option<ExitStatus>, grace: Duration) {
    // A grace too long for `Instant` means waiting for the pipe to close, however long.
    let deadline = Instant::now().checked_add(grace);
    let mut st = lock(&proc.state);
    while !st.reader_done {
        st = match deadline {
            None => proc.changed.wait(st).unwrap_or_else(PoisonError::into_inner),
            Some(deadline) => {
                let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
                    break;
                };
                proc.changed.wait_timeout(st, left).unwrap_or_else(PoisonError::into_inner).0
            }
        };
    }
    let mut exit = TerminalExitStatus::default();
    if let Some(status) = status {
        // Windows exit codes are `u32`s that `ExitStatus` hands out as `i32`: keep the bits.
        exit.exit_code = status.code().map(|c| c as u32);
        exit.signal = sys::signal_name(&status);
    }
    st.exit = Some(exit);
    proc.changed.notify_all();
}

#[cfg(test)]
mod tests;
