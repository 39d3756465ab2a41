//! `acp record --out FILE -- AGENT_CMD...`: a transparent stdio proxy that an editor launches
//! in place of its agent, writing a transcript of what crossed (see [`transcript`] for the
//! format; `acp replay` reads it).
//!
//! Bytes go through unchanged and at once both ways: our stdin to the agent's stdin, the
//! agent's stdout to our stdout; the agent's stderr goes to our stderr line by line, made
//! inert (`sanitize`: it reaches a terminal or a log, not a protocol peer). Each
//! line is also handed to the transcript's writer thread through a queue bounded in bytes
//! (a full queue drops the line from the transcript, never slows the forwarding). The end of
//! our stdin closes the agent's stdin; the agent's exit ends the proxy with the agent's exit
//! code (128 + the signal, if a signal ended it). `SIGTERM`, `SIGINT` and `SIGHUP` are passed
//! to the agent's process group; if the agent has not exited [`KILL_AFTER`] later, the group
//! is killed. The agent runs under `acp __exec-child` like `acp client`'s agents, so the
//! kernel kills it even if the proxy is killed with `SIGKILL`.

mod pump;
pub mod transcript;

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use acp_runtime::process::{Supervisor, SupervisorOptions, signal_group};

use crate::signals::{self, SignalNo};
use transcript::{Dir, Item, Queue};

/// How long the agent gets to exit after a signal was passed on, before its group is killed.
pub const KILL_AFTER: Duration = Duration::from_secs(2);
/// How often the proxy looks whether the agent exited.
const POLL: Duration = Duration::from_millis(10);
/// How long the agent's output gets to end after it exited (a process it left behind may
/// hold the pipe open).
const OUTPUT_GRACE: Duration = Duration::from_millis(500);

/// What `acp record` runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecordConfig {
    /// Where the transcript goes (created or truncated).
    pub out: PathBuf,
    /// The agent's command line.
    pub agent: Vec<OsString>,
}

impl RecordConfig {
    /// Records `agent` into `out`.
    pub fn new(out: PathBuf, agent: Vec<OsString>) -> RecordConfig {
        RecordConfig { out, agent }
    }
}

/// Runs the proxy; returns the exit code (the agent's, or 1 when it could not be started).
pub fn run(config: &RecordConfig) -> u8 {
    match Recording::start(config) {
        Ok(recording) => {
            let code = recording.finish();
            crate::outlet::drain();
            code
        }
        Err(e) => {
            eprintln!("acp record: {e}");
            1
        }
    }
}

/// A running recording.
struct Recording {
    start: Instant,
    supervisor: Supervisor,
    queue: Arc<Queue>,
    writer: JoinHandle<io::Result<BufWriter<File>>>,
    output_done: mpsc::Receiver<()>,
    /// The signals received (passed on to the agent), while `_listening` lasts.
    signals: Option<mpsc::Receiver<SignalNo>>,
    _listening: Option<signals::Listening>,
}

impl Recording {
    fn start(config: &RecordConfig) -> Result<Recording, String> {
        let start = Instant::now();
        let mut file = BufWriter::new(
            File::create(&config.out).map_err(|e| format!("cannot create {}: {e}", config.out.display()))?,
        );
        let argv: Vec<String> = config.agent.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        transcript::write_record(&mut file, &transcript::header(&argv))
            .and_then(|()| file.flush())
            .map_err(|e| format!("cannot write {}: {e}", config.out.display()))?;
        let (signal_tx, signal_rx) = mpsc::channel();
        let (signals, listening) = match signals::listen(move |number| {
            let _ = signal_tx.send(number);
        }) {
            Ok(listening) => (Some(signal_rx), Some(listening)),
            Err(e) => {
                eprintln!("acp record: signals will not be passed to the agent: {e}");
                (None, None)
            }
        };
        let (supervisor, stdin, stdout) =
            spawn_agent(&config.agent).map_err(|e| format!("could not start the agent `{}`: {e}", argv.join(" ")))?;
        let queue = Arc::new(Queue::default());
        let writer = spawn_named("acp-record-writer", {
            let queue = queue.clone();
            move || write_transcript(file, &queue, start)
        })?;
        let to_agent = queue.clone();
        spawn_named("acp-record-c2a", move || {
            // The agent's stdin closes when this thread ends (end of our stdin, or the agent gone).
            let _ = pump::pump(io::stdin().lock(), stdin, Dir::C2a, start, &to_agent, true);
        })?;
        let (done_tx, output_done) = mpsc::channel();
        let from_agent = queue.clone();
        spawn_named("acp-record-a2c", move || {
            let _ = pump::pump(stdout, io::stdout().lock(), Dir::A2c, start, &from_agent, false);
            let _ = done_tx.send(());
        })?;
        Ok(Recording { start, supervisor, queue, writer, output_done, signals, _listening: listening })
    }

    /// Waits for the agent's exit (passing signals on), then completes the transcript.
    fn finish(self) -> u8 {
        let status = self.wait_agent();
        let _ = self.output_done.recv_timeout(OUTPUT_GRACE);
        // What the agent left behind in its group ends with it, as with `acp client`.
        signal_group(self.supervisor.id(), true);
        self.queue.close();
        let t_ms = pump::millis(self.start);
        let written = match self.writer.join() {
            Ok(Ok(mut file)) => {
                let record = transcript::exit_record(t_ms, status.and_then(|s| s.code()), status.and_then(signal_of));
                transcript::write_record(&mut file, &record).and_then(|()| file.flush())
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(io::Error::other("the transcript writer panicked")),
        };
        if let Err(e) = written {
            eprintln!("acp record: the transcript is incomplete: {e}");
        }
        match status {
            Some(status) => exit_code(status),
            None => 1,
        }
    }

    fn wait_agent(&self) -> Option<ExitStatus> {
        let mut kill_at: Option<Instant> = None;
        loop {
            if let Some(status) = self.supervisor.try_status() {
                return Some(status);
            }
            if let Some(signals) = &self.signals {
                while let Ok(number) = signals.try_recv() {
                    crate::outlet::signalled();
                    signals::send_to_group(self.supervisor.id(), number);
                    kill_at.get_or_insert_with(|| Instant::now() + KILL_AFTER);
                }
            }
            if kill_at.is_some_and(|at| Instant::now() >= at) {
                return self.supervisor.close_with_grace(Duration::ZERO, || {}).ok();
            }
            thread::sleep(POLL);
        }
    }
}

fn spawn_named<T: Send + 'static>(name: &str, f: impl FnOnce() -> T + Send + 'static) -> Result<JoinHandle<T>, String> {
    thread::Builder::new().name(name.into()).spawn(f).map_err(|e| format!("cannot start a thread: {e}"))
}

/// Spawns the agent under `acp __exec-child` (from the main thread: the kernel's death signal
/// follows the thread that spawned it), its stderr passed on to ours line by line.
fn spawn_agent(argv: &[OsString]) -> io::Result<(Supervisor, std::process::ChildStdin, std::process::ChildStdout)> {
    let command = crate::client::exec_child_command(argv, true)?;
    // The agent's stderr reaches a terminal or a log: inert, like every peer text we print.
    // Through the stderr outlet: once a signal came, a stderr nobody reads holds nothing up.
    let options = SupervisorOptions::default().with_stderr_capacity(4096).with_stderr_lines(|line| {
        let line = format!("{}\n", crate::sanitize::clean_line(&line));
        let _ = crate::outlet::stderr().write_all(line.as_bytes());
    });
    Supervisor::spawn(command, options)
}

/// The writer thread: records from the queue to the file, flushed whenever the queue is empty
/// (so the transcript is readable while the session runs).
fn write_transcript(mut file: BufWriter<File>, queue: &Queue, start: Instant) -> io::Result<BufWriter<File>> {
    let mut failed: Option<io::Error> = None;
    while let Some(item) = queue.pop(|| {
        if failed.is_none()
            && let Err(e) = file.flush()
        {
            failed = Some(e);
        }
    }) {
        if failed.is_some() {
            continue; // keep draining, so that nothing waits on a broken transcript
        }
        let record = match item {
            Item::Line(line) => transcript::line_record(&line),
            Item::Dropped(dir, n) => transcript::dropped_record(pump::millis(start), dir, n),
        };
        if let Err(e) = transcript::write_record(&mut file, &record) {
            failed = Some(e);
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(file),
    }
}

/// The signal that ended the process, if one did.
fn signal_of(status: ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        std::os::unix::process::ExitStatusExt::signal(&status)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}

/// The proxy's exit code: the agent's, or 128 + the signal that ended it.
fn exit_code(status: ExitStatus) -> u8 {
    match (status.code(), signal_of(status)) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1),
        (None, Some(signal)) => u8::try_from((128 + signal) & 0xff).unwrap_or(1),
        (None, None) => 1,
    }
}
