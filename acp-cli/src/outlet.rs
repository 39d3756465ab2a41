//! stdout and stderr written by threads of their own, so that no thread that must act on a
//! termination signal sits in `write(2)` on an output nobody reads.
//!
//! [`stdout`] and [`stderr`] hand out writers whose bytes go into a buffer of [`BUFFER`] bytes
//! that a writer thread empties into the descriptor (a copy of it: nothing else of the process
//! holds a lock on it). A write waits while the buffer is full, and `flush` waits until what
//! was written before it is out, so a slow terminal still slows its writer down, as a plain
//! write did. But once [`signalled`] was called (by `acp client`'s signal handler, by `acp
//! serve` on its shutdown signal, by `acp record` when it passes a signal on to its agent),
//! neither waits more than [`STALL`] for the output to get
//! anywhere: past it the output is *stalled*, and what does not fit is dropped until the
//! writer thread gets through again. So a signal is acted on within about a second
//! whatever stdout does, and an exit that flushes never waits on output nobody reads; what
//! nobody reads is lost. An output whose write failed (a closed pipe) fails every write after.

use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// Bytes buffered for one output; a write waits (or, stalled, drops) past it.
pub(crate) const BUFFER: usize = 64 << 10;
/// Once [`signalled`], how long a write or flush waits for the output to make progress.
pub(crate) const STALL: Duration = Duration::from_millis(500);

static SIGNALLED: AtomicBool = AtomicBool::new(false);
static OUTLETS: [OnceLock<Arc<Outlet>>; 2] = [OnceLock::new(), OnceLock::new()];

/// A writer to stdout through its outlet.
pub(crate) fn stdout() -> Writer {
    Writer(outlet(0))
}

/// A writer to stderr through its outlet.
pub(crate) fn stderr() -> Writer {
    Writer(outlet(1))
}

/// From now on writes and flushes wait at most [`STALL`] for a blocked output (see the
/// [module docs](self)). Never blocks for long: safe from a signal handler's thread.
pub(crate) fn signalled() {
    SIGNALLED.store(true, Ordering::SeqCst);
    for outlet in OUTLETS.iter().filter_map(OnceLock::get) {
        // Under the lock, so that a waiter that saw the flag unset is already waiting.
        let _state = outlet.lock();
        outlet.changed.notify_all();
    }
}

/// Waits until both outputs wrote what they were given (at most [`STALL`] each once
/// [`signalled`]).
pub(crate) fn drain() {
    for outlet in OUTLETS.iter().filter_map(OnceLock::get) {
        let _ = outlet.flush();
    }
}

fn outlet(index: usize) -> Arc<Outlet> {
    OUTLETS[index].get_or_init(|| Outlet::start(index)).clone()
}

/// A `Write` to stdout or stderr through its outlet (cheap to clone).
#[derive(Clone)]
pub(crate) struct Writer(Arc<Outlet>);

impl Write for Writer {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.0.write(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[derive(Default)]
struct State {
    /// Bytes waiting for the writer thread.
    buf: Vec<u8>,
    /// Bytes given to the outlet, and bytes written out (or lost to a failure), since it started.
    taken: u64,
    done: u64,
    /// How many times the writer thread came out of `write(2)`.
    progress: u64,
    /// No progress for [`STALL`] after [`signalled`]: writes are dropped until the next.
    stalled: bool,
    failed: Option<io::ErrorKind>,
}

struct Outlet {
    state: Mutex<State>,
    /// Notified when bytes come or go, and when [`signalled`] is called.
    changed: Condvar,
}

/// When a wait for progress began, and the progress then.
type Since = Option<(Instant, u64)>;

impl Outlet {
    fn start(index: usize) -> Arc<Outlet> {
        let outlet = Arc::new(Outlet { state: Mutex::new(State::default()), changed: Condvar::new() });
        let target = match descriptor(index) {
            Ok(file) => file,
            Err(e) => {
                outlet.lock().failed = Some(e.kind());
                return outlet;
            }
        };
        let drained = outlet.clone();
        let name = if index == 0 { "acp-stdout" } else { "acp-stderr" };
        if let Err(e) = thread::Builder::new().name(name.into()).spawn(move || drained.run(target)) {
            outlet.lock().failed = Some(e.kind());
        }
        outlet
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The writer thread: whatever is buffered, written out, until the output fails.
    fn run(&self, mut target: File) {
        let mut chunk = Vec::new();
        loop {
            {
                let mut state = self.lock();
                while state.buf.is_empty() {
                    state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
                }
                std::mem::swap(&mut chunk, &mut state.buf);
                // Room again: writers fill the buffer while this thread writes.
                self.changed.notify_all();
            }
            let written = target.write_all(&chunk).and_then(|()| target.flush());
            let mut state = self.lock();
            state.done += chunk.len() as u64;
            state.progress += 1;
            state.stalled = false;
            chunk.clear();
            self.changed.notify_all();
            if let Err(e) = written {
                state.failed = Some(e.kind());
                state.done = state.taken;
                state.buf = Vec::new();
                return;
            }
        }
    }

    /// Takes `data` whole when it fits in the buffer (so that a line written at once is never
    /// split around another thread's), in parts when it is longer than the buffer.
    fn write(&self, data: &[u8]) -> io::Result<usize> {
        let mut state = self.lock();
        let mut since = None;
        loop {
            if let Some(kind) = state.failed {
                return Err(io::Error::from(kind));
            }
            let room = BUFFER.saturating_sub(state.buf.len());
            if room >= data.len() || (data.len() > BUFFER && room > 0) {
                let n = room.min(data.len());
                state.buf.extend_from_slice(&data[..n]);
                state.taken += n as u64;
                self.changed.notify_all();
                return Ok(n);
            }
            if state.stalled {
                return Ok(data.len());
            }
            state = self.wait(state, &mut since);
        }
    }

    fn flush(&self) -> io::Result<()> {
        let mut state = self.lock();
        let (target, mut since) = (state.taken, None);
        loop {
            if let Some(kind) = state.failed {
                return Err(io::Error::from(kind));
            }
            if state.done >= target || state.stalled {
                return Ok(());
            }
            state = self.wait(state, &mut since);
        }
    }

    /// Waits for a change. Once [`signalled`], at most until the output made no progress for
    /// [`STALL`] since `since` (set at the first wait, moved on with each progress): then it is
    /// marked stalled.
    fn wait<'a>(&'a self, mut state: MutexGuard<'a, State>, since: &mut Since) -> MutexGuard<'a, State> {
        if !SIGNALLED.load(Ordering::SeqCst) {
            return self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        let (started, progress) = *since.get_or_insert((Instant::now(), state.progress));
        if state.progress != progress {
            *since = Some((Instant::now(), state.progress));
            return state;
        }
        let left = STALL.saturating_sub(started.elapsed());
        if left.is_zero() {
            state.stalled = true;
            return state;
        }
        self.changed.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0
    }
}

/// A copy of descriptor 1 or 2, written without the standard library's lock or buffer.
fn descriptor(index: usize) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = if index == 0 {
            io::stdout().as_fd().try_clone_to_owned()
        } else {
            io::stderr().as_fd().try_clone_to_owned()
        };
        Ok(File::from(fd?))
    }
    #[cfg(not(unix))]
    {
        let _ = index;
        Err(io::Error::new(io::ErrorKind::Unsupported, "outlets need a Unix descriptor"))
    }
}
