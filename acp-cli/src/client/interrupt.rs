//! Ctrl-C, `SIGTERM` and `SIGHUP`, counted without ever blocking the signal handler.
//!
//! `ctrlc` (with its `termination` feature) delivers all three to one handler and does not
//! say which it was, so the client treats each as an **interrupt**: during a turn the first
//! one cancels it and a second one quits; anywhere else (connecting, idle at the prompt) one
//! quits. So a `SIGTERM` to an idle client quits at once, one to a busy client cancels its
//! turn, and a second quits.
//!
//! The handler must not block on the bounded UI queue (the UI thread may itself be blocked
//! writing to a slow terminal): it counts the interrupt in an atomic and only *tries* to
//! wake the UI thread. The UI thread takes the count after every event and every tick, so an
//! interrupt whose wake-up did not fit in the queue is seen on the next one. The handler also
//! tells the outputs ([`crate::outlet::signalled`]) to stop holding the UI thread: a write to
//! a stdout nobody reads gives up within half a second, so the UI thread gets to the interrupt.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::SyncSender;

use super::UiEvent;

/// Interrupts received and not handled yet.
#[derive(Debug, Default)]
pub(crate) struct Interrupts {
    count: AtomicUsize,
}

impl Interrupts {
    /// Installs the process's handler; `Err` when it cannot be installed.
    pub(crate) fn install(ui: SyncSender<UiEvent>) -> (Arc<Interrupts>, Result<(), String>) {
        let interrupts = Arc::new(Interrupts::default());
        let counted = interrupts.clone();
        let installed = ctrlc::set_handler(move || {
            counted.count.fetch_add(1, Ordering::SeqCst);
            // From now on no write waits long for an output that does not move: the UI thread
            // gets to the interrupt whatever stdout does.
            crate::outlet::signalled();
            let _ = ui.try_send(UiEvent::Interrupt);
        });
        (interrupts, installed.map_err(|e| e.to_string()))
    }

    /// Counts an interrupt that did not come as a signal (Ctrl-C read by the line editor).
    pub(crate) fn raise(&self, ui: &SyncSender<UiEvent>) {
        self.count.fetch_add(1, Ordering::SeqCst);
        let _ = ui.try_send(UiEvent::Interrupt);
    }

    /// Takes one pending interrupt, if any.
    pub(crate) fn take(&self) -> bool {
        self.count.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
    }
}
