//! Where handler code runs, written once for every handler trait.
//!
//! Each handler trait (v1 and v2, agent and client, `Send` and local) has its dispatch generated
//! from the method tables (`generated/{v1,v2}/{agent,client}.rs`): a `Send` trait's as
//! [`Dispatch`], a local trait's as [`LocalDispatch`]. What the driver needs from handlers
//! ([`Handlers`], [`DriverTask`]) is the same for all of them but for where a task runs, so it is
//! written here twice, once per kind of task: [`SendHandlers`] spawns on the runtime (in parallel
//! on a multi-thread one), [`LocalHandlers`] spawns local tasks of the current thread.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use acp_proto::InboundRequest;
use acp_proto::role::Role;
use tokio::sync::oneshot;

use crate::context::HandlerContext;
use crate::driver::{DriverTask, Handlers};
use crate::handle::Done;
use crate::runtime::Runtime;
use crate::sync::QueueReceiver;
use crate::version::{Inbound, Version};

/// What a request's handler waits for before it starts (see `TurnItem::Gate`); `None`: nothing.
pub(crate) type Gate = Option<oneshot::Receiver<()>>;

/// The generated dispatch of a handler trait whose futures are `Send`: side `R` of version `P`.
pub(crate) trait Dispatch<P: Version, R: Role>: Send + Sync + 'static {
    /// Runs the handler of one inbound request once `gate` opens, and reports its answer (or
    /// its panic, as `-32603`) through `done`.
    fn handle(
        &self,
        request: InboundRequest<P>,
        cx: HandlerContext<P, R>,
        done: Done<P, R>,
        gate: Gate,
    ) -> impl Future<Output = ()> + Send;

    /// Calls the handler of one inbound notification (or of the core's other news for the
    /// application); a panic loses that item only.
    fn notify(&self, item: Inbound<P>) -> impl Future<Output = ()> + Send;
}

/// [`Dispatch`] for a handler trait whose futures need not be `Send`.
pub(crate) trait LocalDispatch<P: Version, R: Role>: 'static {
    /// See [`Dispatch::handle`].
    fn handle(
        &self,
        request: InboundRequest<P>,
        cx: HandlerContext<P, R>,
        done: Done<P, R>,
        gate: Gate,
    ) -> impl Future<Output = ()>;

    /// See [`Dispatch::notify`].
    fn notify(&self, item: Inbound<P>) -> impl Future<Output = ()>;
}

/// The handlers of a `Send` handler trait's implementation: its requests run as tasks of the
/// runtime, its notifications in order on one task, the client's driver on a task of its own.
pub(crate) struct SendHandlers<H>(Arc<H>);

impl<H> SendHandlers<H> {
    /// The handlers of `handler`.
    pub(crate) fn new(handler: H) -> Self {
        SendHandlers(Arc::new(handler))
    }
}

impl<P: Version, R: Role, H: Dispatch<P, R>> Handlers<P, R> for SendHandlers<H> {
    fn spawn_request<Rt: Runtime>(
        &self,
        rt: &Rt,
        request: InboundRequest<P>,
        cx: HandlerContext<P, R>,
        done: Done<P, R>,
        gate: Gate,
    ) {
        let handler = Arc::clone(&self.0);
        // Boxed: the task's future holds the handler's, as large as the largest handler future
        // (kBs), and a task's future is moved several times as it is spawned and again when it
        // completes; a box is moved instead.
        rt.spawn(Box::pin(async move { handler.handle(request, cx, done, gate).await }));
    }

    fn spawn_notifications<Rt: Runtime>(&self, rt: &Rt, mut queue: QueueReceiver<Inbound<P>>) {
        let handler = Arc::clone(&self.0);
        rt.spawn(async move {
            while let Some(item) = queue.pop().await {
                handler.notify(item).await;
            }
        });
    }
}

impl<H: Send + Sync + 'static, D: Future + Send + 'static> DriverTask<D> for SendHandlers<H> {
    fn spawn_driver<Rt: Runtime>(rt: &Rt, driver: D) {
        rt.spawn(async move {
            let _ = driver.await;
        });
    }
}

/// The handlers of a local handler trait's implementation: [`SendHandlers`], on local tasks of
/// the current thread (inside a `tokio::task::LocalSet`).
pub(crate) struct LocalHandlers<H>(Rc<H>);

impl<H> LocalHandlers<H> {
    /// The handlers of `handler`.
    pub(crate) fn new(handler: H) -> Self {
        LocalHandlers(Rc::new(handler))
    }
}

impl<P: Version, R: Role, H: LocalDispatch<P, R>> Handlers<P, R> for LocalHandlers<H> {
    fn spawn_request<Rt: Runtime>(
        &self,
        rt: &Rt,
        request: InboundRequest<P>,
        cx: HandlerContext<P, R>,
        done: Done<P, R>,
        gate: Gate,
    ) {
        let handler = Rc::clone(&self.0);
        // Boxed, as [`SendHandlers`]'s.
        rt.spawn_local(Box::pin(async move { handler.handle(request, cx, done, gate).await }));
    }

    fn spawn_notifications<Rt: Runtime>(&self, rt: &Rt, mut queue: QueueReceiver<Inbound<P>>) {
        let handler = Rc::clone(&self.0);
        rt.spawn_local(async move {
            while let Some(item) = queue.pop().await {
                handler.notify(item).await;
            }
        });
    }
}

impl<H: 'static, D: Future + 'static> DriverTask<D> for LocalHandlers<H> {
    fn spawn_driver<Rt: Runtime>(rt: &Rt, driver: D) {
        rt.spawn_local(async move {
            let _ = driver.await;
        });
    }
}
