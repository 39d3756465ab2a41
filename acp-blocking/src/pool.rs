//! The bounded pool of worker threads that runs request handlers, and the single ordered
//! thread that runs notification handlers.
//!
//! Threads are started on demand up to the bound and leave after a while without work. Jobs
//! beyond the bound wait in the pool's queue, which the core bounds (`Config::max_inbound`
//! requests in flight). Pushing a job never blocks, so the driver never waits for a handler.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use crate::sync::{InboxReceiver, lock};

/// A unit of work.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// How long an idle worker waits for work before it leaves.
const IDLE_EXIT: Duration = Duration::from_secs(10);

#[derive(Default)]
struct PoolState {
    jobs: VecDeque<Job>,
    threads: usize,
    idle: usize,
    closed: bool,
}

struct PoolShared {
    state: Mutex<PoolState>,
    work: Condvar,
    max: usize,
    name: &'static str,
}

/// A pool of at most `max` worker threads.
pub(crate) struct Pool {
    shared: Arc<PoolShared>,
}

impl Pool {
    pub(crate) fn new(max: usize, name: &'static str) -> Pool {
        let shared =
            PoolShared { state: Mutex::new(PoolState::default()), work: Condvar::new(), max: max.max(1), name };
        Pool { shared: Arc::new(shared) }
    }

    /// Queues a job, starting a worker when none is idle and the bound allows.
    pub(crate) fn execute(&self, job: Job) {
        let mut state = lock(&self.shared.state);
        state.jobs.push_back(job);
        let start = state.jobs.len() > state.idle && state.threads < self.shared.max;
        if start {
            state.threads += 1;
        }
        // A busy worker takes the job when it is done; only a sleeping one needs the (system
        // call of a) notify.
        let wake = state.idle > 0;
        drop(state);
        if wake {
            self.shared.work.notify_one();
        }
        if start {
            let shared = self.shared.clone();
            let spawned = thread::Builder::new().name(self.shared.name.to_owned()).spawn(move || worker(&shared));
            if spawned.is_err() {
                // No thread now: the job waits for a running worker (or for the next start).
                lock(&self.shared.state).threads -= 1;
            }
        }
    }

    /// Threads started and not yet gone.
    #[cfg(test)]
    fn threads(&self) -> usize {
        lock(&self.shared.state).threads
    }
}

impl Drop for Pool {
    /// Workers finish the queued jobs, then leave.
    fn drop(&mut self) {
        lock(&self.shared.state).closed = true;
        self.shared.work.notify_all();
    }
}

fn worker(shared: &PoolShared) {
    let mut state = lock(&shared.state);
    loop {
        if let Some(job) = state.jobs.pop_front() {
            drop(state);
            // A job catches its handler's panic itself; this only keeps the worker alive.
            let _ = catch_unwind(AssertUnwindSafe(job));
            state = lock(&shared.state);
            continue;
        }
        if state.closed {
            break;
        }
        state.idle += 1;
        let (next, timeout) = shared.work.wait_timeout(state, IDLE_EXIT).unwrap_or_else(PoisonError::into_inner);
        state = next;
        state.idle -= 1;
        if timeout.timed_out() && state.jobs.is_empty() {
            break;
        }
    }
    state.threads -= 1;
}

/// Starts the thread that runs notification jobs one at a time, in the order they were queued.
/// It ends when the sending side of `jobs` is dropped and the queue is empty.
pub(crate) fn spawn_ordered(jobs: InboxReceiver<Job>, name: &'static str) -> std::io::Result<()> {
    thread::Builder::new().name(name.to_owned()).spawn(move || {
        while let Some(job) = jobs.recv() {
            let _ = catch_unwind(AssertUnwindSafe(job));
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    use super::*;

    #[test]
    fn never_runs_more_than_max_jobs_at_once_and_runs_them_all() {
        let pool = Pool::new(3, "test-worker");
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (done_tx, done_rx) = mpsc::channel();
        for _ in 0..12 {
            let (running, peak, done_tx) = (running.clone(), peak.clone(), done_tx.clone());
            pool.execute(Box::new(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                thread::sleep(Duration::from_millis(5));
                running.fetch_sub(1, Ordering::SeqCst);
                done_tx.send(()).unwrap();
            }));
        }
        for _ in 0..12 {
            done_rx.recv_timeout(Duration::from_secs(10)).expect("every job runs");
        }
        assert!(peak.load(Ordering::SeqCst) <= 3, "peak {}", peak.load(Ordering::SeqCst));
        assert!(pool.threads() <= 3);
    }

    #[test]
    fn a_panicking_job_does_not_kill_its_worker() {
        let pool = Pool::new(1, "test-worker");
        pool.execute(Box::new(|| panic!("boom (expected by the test)")));
        let (tx, rx) = mpsc::channel();
        pool.execute(Box::new(move || tx.send(thread::current().name().map(str::to_owned)).unwrap()));
        let name = rx.recv_timeout(Duration::from_secs(10)).expect("the next job runs");
        assert_eq!(name.as_deref(), Some("test-worker"));
        assert_eq!(pool.threads(), 1);
    }
}
