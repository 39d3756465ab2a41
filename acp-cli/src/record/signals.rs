//! `SIGTERM`, `SIGINT` and `SIGHUP` to the proxy, told apart (each is passed on to the agent
//! as itself), on a small runtime thread of their own.

use std::sync::mpsc::Receiver;

/// A signal number as the kernel names it.
pub(crate) type SignalNo = i32;

/// Starts listening; each signal received arrives on the receiver. `Err` when the handlers
/// cannot be installed.
#[cfg(unix)]
pub(crate) fn listen() -> Result<Receiver<SignalNo>, String> {
    use std::sync::mpsc;
    use std::thread;
    let (tx, rx) = mpsc::channel();
    let (ready_tx, ready_rx) = mpsc::sync_channel(1);
    thread::Builder::new()
        .name("acp-record-signals".into())
        .spawn(move || {
            use tokio::signal::unix::{SignalKind, signal};
            let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                    return;
                }
            };
            let kinds = [
                (SignalKind::terminate(), rustix::process::Signal::TERM),
                (SignalKind::interrupt(), rustix::process::Signal::INT),
                (SignalKind::hangup(), rustix::process::Signal::HUP),
            ];
            let _guard = runtime.enter();
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
                        if tx.send(number.as_raw()).is_err() {
                            return;
                        }
                    }
                });
            }
            let _ = ready_tx.send(Ok(()));
            runtime.block_on(std::future::pending::<()>());
        })
        .map_err(|e| e.to_string())?;
    ready_rx.recv().map_err(|e| e.to_string())??;
    Ok(rx)
}

/// Elsewhere than on Unix the signals are not passed on.
#[cfg(not(unix))]
pub(crate) fn listen() -> Result<Receiver<SignalNo>, String> {
    Err("signals are not passed on to the agent on this platform".into())
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
