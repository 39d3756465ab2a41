//! How application threads, handlers and the transport threads reach the driver: an `mpsc`
//! channel of [`Input`]s, plus, when the driver waits in `poll(2)` rather than on the channel,
//! a wake-up descriptor signalled after each send.

use std::sync::Arc;
#[cfg(unix)]
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;

use crate::driver::{Input, Poke};

/// The driver ended: nothing takes inputs any more.
#[derive(Debug)]
pub(crate) struct DriverGone;

/// The sending side of the driver's inputs. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Mailbox {
    tx: Sender<Input>,
    #[cfg(unix)]
    wake: Option<Arc<WakeFd>>,
    /// Who drives: a parked driver thread is kicked after a send (see `driver::lead`).
    lead: Option<Arc<dyn Poke>>,
}

impl Mailbox {
    /// Queues `input` for the driver and wakes it.
    pub(crate) fn send(&self, input: Input) -> Result<(), DriverGone> {
        self.tx.send(input).map_err(|_| DriverGone)?;
        #[cfg(unix)]
        if let Some(wake) = &self.wake {
            wake.wake();
        }
        if let Some(lead) = &self.lead {
            lead.poke();
        }
        Ok(())
    }

    /// This mailbox, kicking `lead`'s parked driver thread after each send.
    pub(crate) fn with_lead(self, lead: Arc<dyn Poke>) -> Mailbox {
        Mailbox { lead: Some(lead), ..self }
    }

    /// A mailbox whose sends also signal `wake`.
    #[cfg(unix)]
    pub(crate) fn with_wake(tx: Sender<Input>, wake: Arc<WakeFd>) -> Mailbox {
        Mailbox { tx, wake: Some(wake), lead: None }
    }
}

impl From<Sender<Input>> for Mailbox {
    /// A mailbox for a driver that waits on the channel itself.
    fn from(tx: Sender<Input>) -> Mailbox {
        Mailbox {
            tx,
            #[cfg(unix)]
            wake: None,
            lead: None,
        }
    }
}

/// A descriptor that polls readable once signalled, until the driver resets it: an `eventfd`
/// on Linux and Android, the read end of a pipe elsewhere.
///
/// A signal is written only when none is pending since the driver's last reset, so a burst of
/// sends costs one system call. No wake-up is lost: the driver resets the descriptor *before*
/// it clears `pending`, and drains the channel after both; a sender that saw `pending` set
/// queued its input before the driver's clear, so the drain that follows finds it.
#[cfg(unix)]
#[derive(Debug)]
pub(crate) struct WakeFd {
    read: std::os::fd::OwnedFd,
    /// The same descriptor as `read` for an eventfd; the pipe's write end otherwise.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    write: std::os::fd::OwnedFd,
    pending: AtomicBool,
}

#[cfg(unix)]
impl WakeFd {
    /// A descriptor, not signalled.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(crate) fn new() -> std::io::Result<WakeFd> {
        use rustix::event::{EventfdFlags, eventfd};
        let read = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(WakeFd { read, pending: AtomicBool::new(false) })
    }

    /// A descriptor, not signalled.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub(crate) fn new() -> std::io::Result<WakeFd> {
        use rustix::pipe::{PipeFlags, pipe_with};
        let (read, write) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
        Ok(WakeFd { read, write, pending: AtomicBool::new(false) })
    }

    /// The descriptor to poll for readability.
    pub(crate) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(&self.read)
    }

    /// Signals the driver, unless a signal is already pending.
    pub(crate) fn wake(&self) {
        if self.pending.swap(true, Ordering::AcqRel) {
            return;
        }
        // A full counter or pipe (EAGAIN) is signalled already; nothing else can fail here.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let _ = rustix::io::write(&self.read, &1u64.to_ne_bytes());
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let _ = rustix::io::write(&self.write, &[1]);
    }

    /// Takes the signal (driver only); the driver then drains its channel.
    pub(crate) fn reset(&self) {
        let mut buf = [0u8; 64];
        while let Ok(n) = rustix::io::read(&self.read, &mut buf) {
            // An eventfd resets in one read; a pipe is read until empty.
            if n < buf.len() || cfg!(any(target_os = "linux", target_os = "android")) {
                break;
            }
        }
        self.pending.store(false, Ordering::Release);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::sync::mpsc;
    use std::thread;

    use rustix::event::{PollFd, PollFlags, Timespec, poll};

    use super::*;

    fn signalled(wake: &WakeFd) -> bool {
        let mut fds = [PollFd::from_borrowed_fd(wake.fd(), PollFlags::IN)];
        poll(&mut fds, Some(&Timespec { tv_sec: 0, tv_nsec: 0 })).expect("poll") == 1
    }

    #[test]
    fn a_wake_signals_until_reset_and_a_burst_writes_once() {
        let wake = WakeFd::new().expect("wake fd");
        assert!(!signalled(&wake));
        wake.wake();
        wake.wake();
        assert!(signalled(&wake));
        wake.reset();
        assert!(!signalled(&wake), "one read took the whole burst");
        wake.wake();
        assert!(signalled(&wake), "a wake after the reset signals again");
    }

    /// Many threads send while the driver side waits only on the descriptor: every input
    /// arrives, none is stranded behind a wake-up that was skipped.
    #[test]
    fn wake_ups_from_many_threads_lose_no_input() {
        const THREADS: usize = 8;
        const EACH: usize = 2000;
        let wake = Arc::new(WakeFd::new().expect("wake fd"));
        let (tx, rx) = mpsc::channel();
        let mailbox = Mailbox::with_wake(tx, wake.clone());
        let senders: Vec<_> = (0..THREADS)
            .map(|_| {
                let mailbox = mailbox.clone();
                thread::spawn(move || {
                    for _ in 0..EACH {
                        mailbox.send(Input::Wake).expect("driver alive");
                    }
                })
            })
            .collect();
        drop(mailbox);
        let mut received = 0;
        while received < THREADS * EACH {
            let mut fds = [PollFd::from_borrowed_fd(wake.fd(), PollFlags::IN)];
            // Blocks for good if a wake-up were lost (the test would hang, then time out).
            let ready = poll(&mut fds, Some(&Timespec { tv_sec: 10, tv_nsec: 0 })).expect("poll");
            assert_eq!(ready, 1, "no wake-up within 10 s with {received} of {} received", THREADS * EACH);
            wake.reset();
            while rx.try_recv().is_ok() {
                received += 1;
            }
        }
        for sender in senders {
            sender.join().expect("sender");
        }
        assert_eq!(received, THREADS * EACH);
    }
}
