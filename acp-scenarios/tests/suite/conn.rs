//! The client API the scenarios speak: [`Conn`] and [`Turn`], a vocabulary small enough for
//! both protocol versions, implemented by both adapters' clients. acp-tokio's
//! `ClientConnection` and `PromptTurn` implement them directly; acp-blocking's run each blocking call on a thread of its own (a turn on one
//! worker thread), so a scenario awaits them like the async ones and several run at once.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use acp_scenarios::{chunk_text, init_with_caps, prompt};
use acp_tokio::Error;
use acp_tokio::acp_proto::types::*;
use serde_json::Value;
use tokio::sync::oneshot;

/// How a turn ended, in words both protocol versions have (v1's `StopReason`, v2's idle
/// `stopReason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    EndTurn,
    Cancelled,
    /// Any other reason, as the version names it.
    Other(String),
}

/// What `initialize` told the client: the version the agent answered and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentInfo {
    pub(crate) version: u16,
    pub(crate) name: Option<String>,
}

/// A client connection, as the scenarios use it: a small vocabulary both protocol versions
/// can speak (a session is its id, a prompt is a text, a turn yields texts and a [`Stop`]),
/// so that one scenario text can run on either version's client.
#[allow(async_fn_in_trait)]
pub(crate) trait Conn {
    /// A running prompt turn.
    type Turn: Turn;
    /// The protocol version this client speaks.
    const VERSION: u16;
    /// What the echo agent reports when a prompt's turn is cancelled: v1's handler sees its
    /// token fire (`SessionCancelled`); v2's turn is told by `session/cancel` itself.
    const PROMPT_CANCELLED: &'static str;
    /// `initialize`; with `services`, advertising the client's `fs.readTextFile` and `terminal`.
    async fn initialize(&self, services: bool) -> Result<AgentInfo, Error>;
    /// `session/new` (in `/tmp`, no MCP servers): the new session's id.
    async fn new_session(&self) -> Result<String, Error>;
    /// A turn of `session`, prompted with `text`.
    async fn prompt(&self, session: &str, text: &str) -> Result<Self::Turn, Error>;
    async fn cancel(&self, session: &str) -> Result<(), Error>;
    /// `session/cancel` sent as a notification (`notify`), not with `cancel`.
    async fn notify_cancel(&self, session: &str) -> Result<(), Error>;
    /// Dropping the future before it resolves cancels the request (`$/cancel_request`) on the
    /// async adapter; a blocking call cannot be abandoned (see
    /// `dropped_request_cancels_on_the_agent`).
    async fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error>;
    async fn ext_method_within(&self, timeout: Duration, method: &str, params: Value) -> Result<Value, Error>;
    async fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error>;
    fn negotiated_version(&self) -> Option<u16>;
    async fn close(&self) -> Result<(), Error>;
}

/// A running prompt turn, as the scenarios use it: its updates as texts (an agent message
/// chunk's text; any other update as its debug form, which no scenario expects). Dropping it
/// cancels the turn.
#[allow(async_fn_in_trait)]
pub(crate) trait Turn {
    async fn next_update(&mut self) -> Option<String>;
    /// The next update's text, handled by `handle` before the turn's reader takes another
    /// (the agent's requests that follow it wait for that).
    async fn next_update_then<R: Send + 'static>(
        &mut self,
        handle: impl FnOnce(String) -> R + Send + 'static,
    ) -> Option<R>;
    async fn cancel(&self) -> Result<(), Error>;
    async fn finish(self) -> Result<Stop, Error>;
}

const V1_PROMPT_CANCELLED: &str = "cancelled prompt Some(SessionCancelled)";

/// A v1 update as the scenarios read it: its text.
fn v1_text(update: &SessionUpdate) -> String {
    chunk_text(update).map_or_else(|| format!("non-text update {update:?}"), str::to_owned)
}

/// A v1 stop reason in the scenarios' words.
fn v1_stop(stop: StopReason) -> Stop {
    match stop {
        StopReason::EndTurn => Stop::EndTurn,
        StopReason::Cancelled => Stop::Cancelled,
        other => Stop::Other(format!("{other:?}")),
    }
}

/// v1's `initialize` request (`init_with_caps` with `services`).
fn v1_init(services: bool) -> InitializeRequest {
    if services { init_with_caps() } else { InitializeRequest::new(ProtocolVersion::V1) }
}

/// v1's answer to `initialize` in the scenarios' words.
fn v1_info(init: InitializeResponse) -> AgentInfo {
    AgentInfo { version: init.protocol_version.0, name: init.agent_info.map(|i| i.name) }
}

fn v1_new_session() -> NewSessionRequest {
    NewSessionRequest::new("/tmp", Vec::new())
}

impl Conn for acp_tokio::ClientConnection {
    type Turn = acp_tokio::PromptTurn;
    const VERSION: u16 = 1;
    const PROMPT_CANCELLED: &'static str = V1_PROMPT_CANCELLED;

    async fn initialize(&self, services: bool) -> Result<AgentInfo, Error> {
        acp_tokio::ClientConnection::initialize(self, v1_init(services)).await.map(v1_info)
    }

    async fn new_session(&self) -> Result<String, Error> {
        let session = acp_tokio::ClientConnection::new_session(self, v1_new_session()).await?;
        Ok(session.session_id.to_string())
    }

    async fn prompt(&self, session: &str, text: &str) -> Result<Self::Turn, Error> {
        acp_tokio::ClientConnection::prompt(self, prompt(&SessionId::new(session), text)).await
    }

    async fn cancel(&self, session: &str) -> Result<(), Error> {
        acp_tokio::ClientConnection::cancel(self, &SessionId::new(session)).await
    }

    async fn notify_cancel(&self, session: &str) -> Result<(), Error> {
        acp_tokio::ClientConnection::notify(self, CancelNotification::new(SessionId::new(session))).await
    }

    async fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error> {
        acp_tokio::ClientConnection::ext_method(self, method, params).await
    }

    async fn ext_method_within(&self, timeout: Duration, method: &str, params: Value) -> Result<Value, Error> {
        self.with_timeout(timeout).ext_method(method, params).await
    }

    async fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        acp_tokio::ClientConnection::ext_notification(self, method, params).await
    }

    fn negotiated_version(&self) -> Option<u16> {
        self.negotiated().map(|n| n.protocol_version.0)
    }

    async fn close(&self) -> Result<(), Error> {
        acp_tokio::ClientConnection::close(self).await.map(drop)
    }
}

impl Turn for acp_tokio::PromptTurn {
    async fn next_update(&mut self) -> Option<String> {
        acp_tokio::PromptTurn::next_update(self).await.as_ref().map(v1_text)
    }

    async fn next_update_then<R: Send + 'static>(
        &mut self,
        handle: impl FnOnce(String) -> R + Send + 'static,
    ) -> Option<R> {
        acp_tokio::PromptTurn::next_update_then(self, move |update| handle(v1_text(&update))).await
    }

    async fn cancel(&self) -> Result<(), Error> {
        acp_tokio::PromptTurn::cancel(self).await
    }

    async fn finish(self) -> Result<Stop, Error> {
        acp_tokio::PromptTurn::finish(self).await.map(v1_stop)
    }
}

/// Runs a blocking call on a thread of its own and awaits its result (on any executor).
pub(crate) async fn off_thread<T: Send + 'static>(call: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(call());
    });
    rx.await.expect("the blocking call's thread panicked (its message is above)")
}

/// acp-blocking's client connection, shared with the threads its calls run on.
pub(crate) struct BlockingConn(pub(crate) Arc<acp_blocking::ClientConnection>);

impl BlockingConn {
    /// The connection's requester, to move to a call's thread.
    fn requester(&self) -> acp_blocking::Requester {
        (*self.0).clone()
    }
}

impl Conn for BlockingConn {
    type Turn = BlockingTurn<acp_blocking::PromptTurn>;
    const VERSION: u16 = 1;
    const PROMPT_CANCELLED: &'static str = V1_PROMPT_CANCELLED;

    async fn initialize(&self, services: bool) -> Result<AgentInfo, Error> {
        let requester = self.requester();
        off_thread(move || requester.initialize(v1_init(services)).map(v1_info)).await
    }

    async fn new_session(&self) -> Result<String, Error> {
        let requester = self.requester();
        off_thread(move || requester.new_session(v1_new_session()).map(|s| s.session_id.to_string())).await
    }

    async fn prompt(&self, session: &str, text: &str) -> Result<Self::Turn, Error> {
        let requester = self.requester();
        let (session, request) = (SessionId::new(session), prompt(&SessionId::new(session), text));
        let turn = off_thread(move || requester.prompt(request)).await?;
        let requester = self.requester();
        Ok(BlockingTurn::start(turn, Arc::new(move || requester.cancel(&session))))
    }

    async fn cancel(&self, session: &str) -> Result<(), Error> {
        let (requester, session) = (self.requester(), SessionId::new(session));
        off_thread(move || requester.cancel(&session)).await
    }

    async fn notify_cancel(&self, session: &str) -> Result<(), Error> {
        let (requester, session) = (self.requester(), SessionId::new(session));
        off_thread(move || requester.notify(CancelNotification::new(session))).await
    }

    async fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error> {
        let (requester, method) = (self.requester(), method.to_owned());
        off_thread(move || requester.ext_method(&method, params)).await
    }

    async fn ext_method_within(&self, timeout: Duration, method: &str, params: Value) -> Result<Value, Error> {
        let (requester, method) = (self.requester().with_timeout(timeout), method.to_owned());
        off_thread(move || requester.ext_method(&method, params)).await
    }

    async fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        let (requester, method) = (self.requester(), method.to_owned());
        off_thread(move || requester.ext_notification(&method, params)).await
    }

    fn negotiated_version(&self) -> Option<u16> {
        self.0.negotiated().map(|n| n.protocol_version.0)
    }

    async fn close(&self) -> Result<(), Error> {
        let conn = self.0.clone();
        off_thread(move || conn.close().map(drop)).await
    }
}

/// A blocking prompt turn of either version, as [`BlockingTurn`] drives it.
pub(crate) trait BlockingPromptTurn: Send + 'static {
    fn next_text(&mut self) -> Option<String>;
    fn next_text_then<R>(&mut self, handle: impl FnOnce(String) -> R) -> Option<R>;
    fn finish_stop(self) -> Result<Stop, Error>;
}

impl BlockingPromptTurn for acp_blocking::PromptTurn {
    fn next_text(&mut self) -> Option<String> {
        self.next_update().as_ref().map(v1_text)
    }

    fn next_text_then<R>(&mut self, handle: impl FnOnce(String) -> R) -> Option<R> {
        self.next_update_then(move |u| handle(v1_text(&u)))
    }

    fn finish_stop(self) -> Result<Stop, Error> {
        self.finish().map(v1_stop)
    }
}

/// A blocking turn's `session/cancel` (through the connection: the turn's worker may be
/// blocked in `next_update`).
pub(crate) type CancelTurn = Arc<dyn Fn() -> Result<(), Error> + Send + Sync>;

/// A job for a blocking turn's worker thread.
type Job<T> = Box<dyn FnOnce(&mut Option<T>) + Send>;

/// acp-blocking's prompt turn (of either version), owned by a worker thread that runs the
/// calls sent to it in order. Dropping this drops the turn on that thread (which cancels it,
/// as on acp-tokio).
pub(crate) struct BlockingTurn<T> {
    jobs: mpsc::Sender<Job<T>>,
    cancel: CancelTurn,
}

impl<T: BlockingPromptTurn> BlockingTurn<T> {
    pub(crate) fn start(turn: T, cancel: CancelTurn) -> BlockingTurn<T> {
        let (jobs, queue) = mpsc::channel::<Job<T>>();
        std::thread::spawn(move || {
            let mut turn = Some(turn);
            while let Ok(job) = queue.recv() {
                job(&mut turn);
            }
        });
        BlockingTurn { jobs, cancel }
    }

    async fn run<R: Send + 'static>(&self, job: impl FnOnce(&mut Option<T>) -> R + Send + 'static) -> R {
        let (tx, rx) = oneshot::channel();
        let job: Job<T> = Box::new(move |turn| {
            let _ = tx.send(job(turn));
        });
        self.jobs.send(job).expect("the turn's thread");
        rx.await.expect("the turn's thread panicked (its message is above)")
    }
}

impl<T: BlockingPromptTurn> Turn for BlockingTurn<T> {
    async fn next_update(&mut self) -> Option<String> {
        self.run(|turn| turn.as_mut().and_then(T::next_text)).await
    }

    async fn next_update_then<R: Send + 'static>(
        &mut self,
        handle: impl FnOnce(String) -> R + Send + 'static,
    ) -> Option<R> {
        self.run(move |turn| turn.as_mut().and_then(|turn| turn.next_text_then(handle))).await
    }

    /// The turn's `session/cancel`, through the connection: the worker may be blocked in
    /// `next_update`.
    async fn cancel(&self) -> Result<(), Error> {
        let cancel = self.cancel.clone();
        off_thread(move || cancel()).await
    }

    async fn finish(self) -> Result<Stop, Error> {
        self.run(|turn| turn.take().expect("a turn not finished yet").finish_stop()).await
    }
}
