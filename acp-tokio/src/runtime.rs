//! The runtime-specific part of the adapter: a clock, a resettable timer and two ways to spawn a
//! task (a `Send` one for handlers on a multi-thread runtime, a local one for `!Send` handlers).
//!
//! Everything else (the driver, the handler plumbing, the child-process supervision) is written
//! once against [`Runtime`]. Supporting another executor (smol, say) means implementing these
//! six functions, wrapping its I/O types in [`crate::io`] and adding entry points like those of
//! the `async_std` module.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// What the driver needs from an executor.
pub(crate) trait Runtime: Clone + Send + Sync + Unpin + 'static {
    /// A timer that completes at a deadline and can be re-armed.
    type Timer: Future<Output = ()> + Send + Unpin + 'static;

    /// The runtime's clock (tokio's is virtual under `start_paused`).
    fn now(&self) -> Instant;
    /// A timer for `deadline`.
    fn timer(&self, deadline: Instant) -> Self::Timer;
    /// Re-arms `timer` for `deadline`.
    fn reset(&self, timer: &mut Self::Timer, deadline: Instant);
    /// Spawns a `Send` task, detached.
    fn spawn(&self, future: impl Future<Output = ()> + Send + 'static);
    /// Spawns a task on the current thread's local executor, detached.
    fn spawn_local(&self, future: impl Future<Output = ()> + 'static);
    /// Whether [`spawn`](Self::spawn) works here (tokio: inside a runtime).
    fn in_context(&self) -> bool;
}

/// The tokio runtime (the default).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tokio;

impl Runtime for Tokio {
    type Timer = Pin<Box<tokio::time::Sleep>>;

    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn timer(&self, deadline: Instant) -> Self::Timer {
        Box::pin(tokio::time::sleep_until(deadline.into()))
    }

    fn reset(&self, timer: &mut Self::Timer, deadline: Instant) {
        timer.as_mut().reset(deadline.into());
    }

    fn spawn(&self, future: impl Future<Output = ()> + Send + 'static) {
        drop(tokio::spawn(future));
    }

    fn spawn_local(&self, future: impl Future<Output = ()> + 'static) {
        drop(tokio::task::spawn_local(future));
    }

    fn in_context(&self) -> bool {
        tokio::runtime::Handle::try_current().is_ok()
    }
}

/// async-std (deprecated upstream in favour of smol; kept behind the `async-std` feature).
#[cfg(feature = "async-std")]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AsyncStd;

#[cfg(feature = "async-std")]
impl Runtime for AsyncStd {
    type Timer = Pin<Box<dyn Future<Output = ()> + Send>>;

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn timer(&self, deadline: Instant) -> Self::Timer {
        Box::pin(async_std::task::sleep(deadline.saturating_duration_since(Instant::now())))
    }

    fn reset(&self, timer: &mut Self::Timer, deadline: Instant) {
        *timer = self.timer(deadline);
    }

    fn spawn(&self, future: impl Future<Output = ()> + Send + 'static) {
        // Dropping an async-std `JoinHandle` detaches the task.
        drop(async_std::task::spawn(future));
    }

    fn spawn_local(&self, future: impl Future<Output = ()> + 'static) {
        drop(async_std::task::spawn_local(future));
    }

    fn in_context(&self) -> bool {
        true
    }
}

/// Sleeps for `duration` on `rt`'s clock.
pub(crate) fn sleep<Rt: Runtime>(rt: &Rt, duration: Duration) -> Rt::Timer {
    rt.timer(rt.now() + duration)
}

/// Runs `future` until it completes or `duration` passes, whichever is first.
pub(crate) async fn timeout<Rt: Runtime, F: Future>(rt: &Rt, duration: Duration, future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut timer = sleep(rt, duration);
    std::future::poll_fn(move |cx: &mut Context<'_>| {
        if let Poll::Ready(v) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        Pin::new(&mut timer).poll(cx).map(|()| None)
    })
    .await
}
