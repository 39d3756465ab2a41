//! `SIGINT`, `SIGTERM` and `SIGHUP`, told apart, for the commands that act on each its own
//! way: `acp client` (Ctrl-C cancels a turn, `SIGTERM` and `SIGHUP` end the client), `acp
//! record` (each passed on to the agent as itself), `acp check` (each ends the check and what
//! it started).
//!
//! tokio's signal streams, on a current-thread runtime of their own on a thread of its own:
//! tokio is already here (the remote transports), its handlers only note that a signal came
//! (the callback runs on that thread, never in a signal handler, so it may lock and write),
//! and it needs no `unsafe`. Once a signal is listened for, its default action (ending the
//! process) no longer applies, for the rest of the process's life: the callback decides.

/// A signal number as the kernel names it.
pub(crate) type SignalNo = i32;

/// `SIGINT` (Ctrl-C).
#[cfg(unix)]
pub(crate) const SIGINT: SignalNo = rustix::process::Signal::INT.as_raw();
/// `SIGTERM`.
#[cfg(unix)]
pub(crate) const SIGTERM: SignalNo = rustix::process::Signal::TERM.as_raw();
/// `SIGHUP`.
#[cfg(unix)]
pub(crate) const SIGHUP: SignalNo = rustix::process::Signal::HUP.as_raw();
/// `SIGINT` (Ctrl-C).
#[cfg(not(unix))]
pub(crate) const SIGINT: SignalNo = 2;
/// `SIGTERM`.
#[cfg(not(unix))]
pub(crate) const SIGTERM: SignalNo = 15;
/// `SIGHUP`.
#[cfg(not(unix))]
pub(crate) const SIGHUP: SignalNo = 1;

/// The conventional name of a signal this module listens for.
pub(crate) fn name(number: SignalNo) -> &'static str {
    match number {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Listening for the three signals; dropping it stops the listening thread (the signals'
/// default actions do not come back).
#[derive(Debug)]
pub(crate) struct Listening {
    #[cfg(unix)]
    stop: tokio::sync::mpsc::Sender<Option<SignalNo>>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        // A full queue: the thread is busy with signals and sees the sender gone later.
        #[cfg(unix)]
        let _ = self.stop.try_send(None);
    }
}

/// Starts listening for `SIGINT`, `SIGTERM` and `SIGHUP`: `on_signal` is called with each
/// signal received, in order, on the listening thread. `Err` when the handlers cannot be
/// installed (the signals then keep their default actions).
#[cfg(unix)]
pub(crate) fn listen(mut on_signal: impl FnMut(SignalNo) + Send + 'static) -> Result<Listening, String> {
    use std::sync::mpsc;
    use tokio::signal::unix::{SignalKind, signal};
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Option<SignalNo>>(16);
    let stop = tx.clone();
    let (ready_tx, ready_rx) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("acp-signals".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                    return;
                }
            };
            let _guard = runtime.enter();
            let kinds =
                [(SignalKind::interrupt(), SIGINT), (SignalKind::terminate(), SIGTERM), (SignalKind::hangup(), SIGHUP)];
            for (kind, number) in kinds {
                let mut stream = match signal(kind) {
                    Ok(stream) => stream,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let tx = tx.clone();
                runtime.spawn(async move {
                    while stream.recv().await.is_some() {
                        if tx.send(Some(number)).await.is_err() {
                            return;
                        }
                    }
                });
            }
            drop(tx);
            let _ = ready_tx.send(Ok(()));
            runtime.block_on(async move {
                while let Some(Some(number)) = rx.recv().await {
                    on_signal(number);
                }
            });
        })
        .map_err(|e| e.to_string())?;
    ready_rx.recv().map_err(|e| e.to_string())??;
    Ok(Listening { stop })
}

/// Elsewhere than on Unix the signals are not told apart.
#[cfg(not(unix))]
pub(crate) fn listen(_on_signal: impl FnMut(SignalNo) + Send + 'static) -> Result<Listening, String> {
    Err("signals are not handled on this platform".into())
}

/// Elsewhere than on Unix there are no process groups.
#[cfg(not(unix))]
pub(crate) fn send_to_group(_pid: u32, _number: SignalNo) -> bool {
    false
}

/// Sends signal `number` to the process group led by `pid`; whether it could.
#[cfg(unix)]
pub(crate) fn send_to_group(pid: u32, number: SignalNo) -> bool {
    use rustix::process::{Pid, Signal, kill_process_group};
    let Some(pid) = i32::try_from(pid).ok().filter(|&p| p > 1).and_then(Pid::from_raw) else { return false };
    let Some(signal) = Signal::from_named_raw(number) else { return false };
    kill_process_group(pid, signal).is_ok()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_three_signals_have_their_numbers_and_names() {
        assert_eq!((SIGINT, SIGTERM, SIGHUP), (2, 15, 1));
        assert_eq!((name(SIGINT), name(SIGTERM), name(SIGHUP)), ("SIGINT", "SIGTERM", "SIGHUP"));
    }
}
