//! Ctrl-C, `SIGTERM` and `SIGHUP`, told apart (see [`crate::signals`]), noted without ever
//! blocking the thread that receives them.
//!
//! * Ctrl-C (`SIGINT`, or the key read by the line editor) is an **interrupt**: during a
//!   turn the first one cancels it and a second one quits; anywhere else (connecting, idle at
//!   the prompt) one quits, with [`Exit::Interrupted`].
//! * `SIGTERM` and `SIGHUP` are a **termination**: wherever the client is, it cancels the
//!   running turn, ends the agent (the usual close sequence, with the short grace of a quit)
//!   and every process it started, and exits with 128 + the signal ([`Exit::Terminated`],
//!   [`Exit::HungUp`]). The first one counts; a termination is never undone.
//!
//! The receiving thread must not block on the bounded UI queue (the UI thread may itself be
//! blocked writing to a slow terminal): it notes the signal in an atomic and only *tries* to
//! wake the UI thread, which looks at the notes after every event and every tick, so a signal
//! whose wake-up did not fit in the queue is seen on the next one. It also tells the outputs
//! ([`crate::outlet::signalled`]) to stop holding the UI thread: a write to a stdout nobody
//! reads gives up within half a second, so the UI thread gets to the signal.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::mpsc::SyncSender;

use super::event::UiEvent;
use crate::Exit;
use crate::signals::{self, SIGHUP, SIGINT, SIGTERM, SignalNo};

/// Interrupts received and not handled yet, and the termination signal, once one came.
#[derive(Debug)]
pub(crate) struct Interrupts {
    noted: Arc<Noted>,
    /// The signals are listened for while this lasts.
    _listening: Option<signals::Listening>,
}

#[derive(Debug, Default)]
struct Noted {
    count: AtomicUsize,
    /// The first `SIGTERM` or `SIGHUP` received; 0 before.
    termination: AtomicI32,
}

impl Noted {
    fn signal(&self, number: SignalNo) {
        if number == SIGINT {
            self.count.fetch_add(1, Ordering::SeqCst);
        } else {
            let _ = self.termination.compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst);
        }
    }
}

impl Interrupts {
    /// Listens for the process's signals; `Err` when they cannot be listened for.
    pub(crate) fn install(ui: SyncSender<UiEvent>) -> (Arc<Interrupts>, Result<(), String>) {
        let noted = Arc::new(Noted::default());
        let receiver = noted.clone();
        let listening = signals::listen(move |number| {
            receiver.signal(number);
            // From now on no write waits long for an output that does not move: the UI thread
            // gets to the signal whatever stdout does.
            crate::outlet::signalled();
            let _ = ui.try_send(UiEvent::Interrupt);
        });
        let (listening, installed) = match listening {
            Ok(listening) => (Some(listening), Ok(())),
            Err(e) => (None, Err(e)),
        };
        (Arc::new(Interrupts { noted, _listening: listening }), installed)
    }

    /// Counts an interrupt that did not come as a signal (Ctrl-C read by the line editor).
    pub(crate) fn raise(&self, ui: &SyncSender<UiEvent>) {
        self.noted.count.fetch_add(1, Ordering::SeqCst);
        let _ = ui.try_send(UiEvent::Interrupt);
    }

    /// Takes one pending interrupt, if any.
    pub(crate) fn take(&self) -> bool {
        self.noted.count.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
    }

    /// The exit status a termination signal asks for, once one came (it stays).
    pub(crate) fn termination(&self) -> Option<Exit> {
        match self.noted.termination.load(Ordering::SeqCst) {
            SIGTERM => Some(Exit::Terminated),
            SIGHUP => Some(Exit::HungUp),
            _ => None,
        }
    }
}

/// What the client says when a termination signal ends it.
pub(crate) fn termination_note(exit: Exit) -> &'static str {
    match exit {
        Exit::HungUp => "SIGHUP: ending the agent and the client",
        _ => "SIGTERM: ending the agent and the client",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigint_counts_an_interrupt_and_sigterm_or_sighup_a_termination_that_stays() {
        let noted = Arc::new(Noted::default());
        let interrupts = Interrupts { noted: noted.clone(), _listening: None };
        noted.signal(SIGINT);
        assert_eq!(interrupts.termination(), None);
        assert!(interrupts.take());
        assert!(!interrupts.take());
        noted.signal(SIGHUP);
        noted.signal(SIGTERM);
        assert!(!interrupts.take(), "a termination is no interrupt");
        assert_eq!(interrupts.termination(), Some(Exit::HungUp), "the first one counts");
        assert_eq!(interrupts.termination(), Some(Exit::HungUp), "and stays");
    }
}
